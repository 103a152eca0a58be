"""Per-tool features read by the head rerank, and a ranked list with what calibration reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool
from votr_mcp.retrieval.intent import is_identifier, pair_bulk
from votr_mcp.retrieval.rerank import ToolView

__all__ = ["ToolFeatures", "Ranking"]


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """Per-tool views the head rerank reads, each tool's place in a singular/bulk pair
    (:func:`pair_bulk`), and the tools by the identifier names a request may quote."""

    views: list[ToolView]
    bulk: NDArray[np.int8]
    names: dict[str, list[int]]

    @classmethod
    def of(cls, tools: Sequence[Tool], views: list[ToolView] | None = None) -> "ToolFeatures":
        names: dict[str, list[int]] = {}
        for i, t in enumerate(tools):
            if is_identifier(t.name):
                names.setdefault(t.name.lower(), []).append(i)
        bulk = np.array(pair_bulk([(t.server, t.name) for t in tools]), dtype=np.int8)
        return cls(views if views is not None else [ToolView.of(t.name, t.server, t.description) for t in tools], bulk, names)

    def restack(self, tools: Sequence[Tool], rows: Sequence[int | None]) -> "ToolFeatures":
        """Features for ``tools``, where ``rows[i]`` is tool i's old position (None: a new tool).
        Views are reused; pairs and names are recomputed (a new tool may complete a pair)."""
        fresh = iter([ToolView.of(t.name, t.server, t.description) for t, r in zip(tools, rows) if r is None])
        return ToolFeatures.of(tools, [self.views[r] if r is not None else next(fresh) for r in rows])


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # catalog positions, best first
    fused: NDArray[np.float64]  # fused (and reranked) score of each ranked position
    cosines: NDArray[np.float64]  # raw query-tool cosine of each, 0 without dense
    lexical: NDArray[np.float64]  # TF-IDF cosine of each
    evidence: Mapping[str, float] = field(default_factory=dict)  # query-level features abstention reads (evidence.py)
