"""What a search returns: the tools handed off, the ranked list behind them, and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool, ToolKey
from votr_mcp.retrieval.render import count_tokens, signature

__all__ = ["Hit", "Need", "SearchResult"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One tool in a result: its score over the best score of its own list (1 = that list's best, so
    whole-query and per-need hits read alike), calibrated confidence and tier, and the need it serves."""

    tool: Tool
    call_name: str
    score: float
    confidence: float | None = None
    tier: str = "unknown"
    need: int | None = None

    @property
    def key(self) -> ToolKey:
        return self.tool.key

    @property
    def signature(self) -> str:
        """``[server: S] name(p: type, q?: type) → description``."""
        return signature(self.tool)


@dataclass(frozen=True, slots=True)
class Need:
    """One need of a whole-task query and the tools chosen for it."""

    text: str
    hits: tuple[Hit, ...]
    ranked: tuple[Hit, ...]
    abstained: bool = False


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of one search.

    ``hits`` is what is handed to the agent (k tools, possibly none); ``ranked`` is the ranked
    list behind it (at least 10 when the catalog allows) for measuring top-n. For a query that
    names several needs, ``needs`` holds one group per need and ``ranked`` merges them.
    ``cosines``/``relative`` are per ranked tool: the raw query-tool cosine and the fused score
    over the best fused score, ``lexical`` the TF-IDF cosine (what calibration reads).
    """

    query: str
    hits: tuple[Hit, ...]
    ranked: tuple[Hit, ...]
    k: int
    tier: str
    abstained: bool
    reason: str
    dense_used: bool
    needs: tuple[Need, ...] = ()
    cosines: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    relative: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    lexical: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    evidence: Mapping[str, float] = field(default_factory=dict)  # what abstention read (retrieval/evidence.py)

    @property
    def ranked_keys(self) -> list[ToolKey]:
        return [h.key for h in self.ranked]

    @property
    def hit_keys(self) -> list[ToolKey]:
        return [h.key for h in self.hits]

    def lines(self) -> list[str]:
        """One signature line per handed-off tool (the compact text an agent reads)."""
        return [h.signature for h in self.hits]

    def text(self) -> str:
        """The handed-off tools as text, or the abstention reason when there are none."""
        return "\n".join(self.lines()) if self.hits else f"No tool fits: {self.reason}"

    def tokens(self) -> int:
        """Exact cl100k_base token count of :meth:`text`."""
        return count_tokens(self.text())


