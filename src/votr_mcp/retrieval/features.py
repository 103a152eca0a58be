"""Per-tool features read by the head reranks, and a ranked list with what calibration reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool
from votr_mcp.index.tokenize import content_tokens, split_identifier
from votr_mcp.retrieval.intent import query_bulk, tool_bulk

__all__ = ["ToolFeatures", "Ranking"]


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """Per-tool tokens the head reranks read, computed once per tool and reused across swaps."""

    name_tokens: list[set[str]]
    server_tokens: list[set[str]]
    bulk: NDArray[np.int8]

    @classmethod
    def of(cls, tools: Sequence[Tool]) -> "ToolFeatures":
        return cls([content_tokens(split_identifier(t.name)) for t in tools], [content_tokens(t.server) for t in tools],
                   np.fromiter((tool_bulk(t.name) for t in tools), dtype=np.int8, count=len(tools)))

    def restack(self, tools: Sequence[Tool], rows: Sequence[int | None]) -> "ToolFeatures":
        fresh = ToolFeatures.of([t for t, r in zip(tools, rows) if r is None])
        it = iter(range(len(fresh.bulk)))
        picks = [(True, r) if r is not None else (False, next(it)) for r in rows]
        return ToolFeatures([self.name_tokens[i] if old else fresh.name_tokens[i] for old, i in picks],
                             [self.server_tokens[i] if old else fresh.server_tokens[i] for old, i in picks],
                             np.array([self.bulk[i] if old else fresh.bulk[i] for old, i in picks], dtype=np.int8))

    def sibling_intent(self, text: str, head: NDArray[np.intp], server_of: NDArray[np.intp]) -> NDArray[np.float64]:
        """+1/−1 for head tools whose bulk-ness matches/contradicts the query's, but only where a
        sibling of the other kind (same server, a shared name word) is also in the head: the rule
        is there to pick between delete_file and delete_all_files, not to rank unrelated tools."""
        out = np.zeros(len(head))
        qb = query_bulk(text)
        if qb == 0:
            return out
        for a, i in enumerate(head):
            bi = self.bulk[i]
            if bi == 0:
                continue
            for j in head:
                if (j != i and self.bulk[j] == -bi and server_of[j] == server_of[i]
                        and self.name_tokens[i] & self.name_tokens[j]):
                    out[a] = 1.0 if bi == qb else -1.0
                    break
        return out


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # catalog positions, best first
    fused: NDArray[np.float64]  # fused (and reranked) score of each ranked position
    cosines: NDArray[np.float64]  # raw query-tool cosine of each, 0 without dense
    lexical: NDArray[np.float64]  # TF-IDF cosine of each (abstention evidence besides the dense cosine)
