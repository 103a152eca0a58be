"""Per-tool features read by the head rerank and by the request's outright signals, and a ranked list
with what calibration reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool
from votr_mcp.index.text import parameter_text
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.intent import is_identifier, named_tools, pair_bulk, query_bulk
from votr_mcp.retrieval.rerank import ToolView

__all__ = ["ToolFeatures", "Ranking", "by_request"]


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """Per-tool views the head rerank reads, each tool's place in a singular/bulk pair
    (:func:`pair_bulk`), and the tools by the identifier names a request may quote."""

    views: list[ToolView]
    bulk: NDArray[np.int8]
    names: dict[str, list[int]]

    @classmethod
    def of(cls, tools: Sequence[Tool], views: list[ToolView] | None = None) -> ToolFeatures:
        names: dict[str, list[int]] = {}
        for i, t in enumerate(tools):
            if is_identifier(t.name):
                names.setdefault(t.name.lower(), []).append(i)
        bulk = np.array(pair_bulk([(t.server, t.name) for t in tools]), dtype=np.int8)
        return cls(views if views is not None else [_view(t) for t in tools], bulk, names)

    def restack(self, tools: Sequence[Tool], rows: Sequence[int | None]) -> ToolFeatures:
        """Features for ``tools``, where ``rows[i]`` is tool i's old position (None: a new tool).
        Views are reused; pairs and names are recomputed (a new tool may complete a pair)."""
        fresh = iter([_view(t) for t, r in zip(tools, rows) if r is None])
        return ToolFeatures.of(tools, [self.views[r] if r is not None else next(fresh) for r in rows])


def _view(tool: Tool) -> ToolView:
    return ToolView.of(tool.name, tool.server, tool.description, parameter_text(tool))


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # catalog positions, best first
    fused: NDArray[np.float64]  # fused (and reranked) score of each ranked position
    cosines: NDArray[np.float64]  # raw query-tool cosine of each, 0 without dense
    lexical: NDArray[np.float64]  # TF-IDF cosine of each
    evidence: Mapping[str, float] = field(default_factory=dict)  # query-level features abstention reads (evidence.py)


def by_request(text: str, ranked: NDArray[np.intp], features: ToolFeatures, server_of: NDArray[np.intp],
               cfg: RetrievalConfig, allowed: NDArray[np.bool_] | None) -> NDArray[np.intp]:
    """The ranked list reordered by what the request says outright: a tool it names as an identifier
    comes first (``exact_names``); when it asks for many at once (or for one) and a tool of a
    singular/bulk pair leads, its sibling on the same server that matches the count goes before it
    (``intent``). Moving a tool that does the request's leading verb to the top lost top-1 on every
    dev set (window 3: human-registry .654 -> .636, MetaTool .650 -> .607), so that is not done."""
    out = [int(i) for i in ranked]
    if cfg.exact_names:
        named = [i for i in named_tools(text, features.names) if allowed is None or allowed[i]]
        if named:
            out = named + [i for i in out if i not in named]
    want = query_bulk(text) if cfg.intent else 0
    if want:
        window = out[: cfg.intent_window]
        for a, i in enumerate(window):
            if features.bulk[i] != -want:
                continue
            sibling = next((j for j in window[a + 1:] if features.bulk[j] == want and server_of[j] == server_of[i]), None)
            if sibling is not None:
                out.remove(sibling)
                out.insert(a, sibling)
            break
    return np.array(out[: max(cfg.ranked_size, len(ranked))], dtype=np.intp)
