"""Per-tool features read by the head rerank, and a ranked list with what calibration reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool
from votr_mcp.retrieval.intent import tool_bulk
from votr_mcp.retrieval.rerank import ToolView

__all__ = ["ToolFeatures", "Ranking"]


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """Per-tool views the head rerank reads, computed once per tool and reused across swaps."""

    views: list[ToolView]
    bulk: NDArray[np.int8]

    @classmethod
    def of(cls, tools: Sequence[Tool]) -> "ToolFeatures":
        return cls([ToolView.of(t.name, t.server) for t in tools],
                   np.fromiter((tool_bulk(t.name) for t in tools), dtype=np.int8, count=len(tools)))

    def restack(self, tools: Sequence[Tool], rows: Sequence[int | None]) -> "ToolFeatures":
        """Features for ``tools``, where ``rows[i]`` is tool i's old position (None: a new tool)."""
        fresh = iter(ToolFeatures.of([t for t, r in zip(tools, rows) if r is None]).views)
        views = [self.views[r] if r is not None else next(fresh) for r in rows]
        bulk = np.fromiter((self.bulk[r] if r is not None else tool_bulk(t.name) for t, r in zip(tools, rows)),
                           dtype=np.int8, count=len(tools))
        return ToolFeatures(views, bulk)


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # catalog positions, best first
    fused: NDArray[np.float64]  # fused (and reranked) score of each ranked position
    cosines: NDArray[np.float64]  # raw query-tool cosine of each, 0 without dense
    lexical: NDArray[np.float64]  # TF-IDF cosine of each (abstention evidence besides the dense cosine)
