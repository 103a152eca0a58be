"""Thompson sampling over outcomes, to reorder near-ties of a ranking and nothing more.

Each (tool, context) pair keeps a Beta(1 + successes, 1 + failures) posterior; per search each
tool in the head with evidence draws θ from it (numpy's Beta sampler) and its score moves by
``bound · (2θ − 1)``, at most ``bound`` times the head's best score either way. So a tool can pass
only tools scoring within ``2 · bound`` of it: a near-tie is settled by use, a clear gap never.
Tools with no evidence are not moved (no exploration noise on requests nobody has made yet).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey

__all__ = ["Bandit", "DEFAULT_BOUND"]

DEFAULT_BOUND = 0.1
"""The largest move of a score, as a share of the head's best (rerank scores are (0, 1], best 1)."""

GLOBAL_SHARE = 0.25
"""How much a tool's evidence in other contexts counts in this one (a quarter of a use)."""


class Bandit:
    """Success and failure counts per (tool, context), and the bounded Thompson adjustment."""

    def __init__(self, *, bound: float = DEFAULT_BOUND, seed: int | None = None) -> None:
        if not 0 <= bound <= 0.5:
            raise ValueError(f"bandit bound must be between 0 and 0.5 of the best score, got {bound}")
        self.bound = bound
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._counts: dict[tuple[ToolKey, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._totals: dict[ToolKey, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def record(self, key: ToolKey, context: str, success: bool, weight: float = 1.0) -> None:
        with self._lock:
            self._counts[(key, context)][0 if success else 1] += weight
            self._totals[key][0 if success else 1] += weight

    def evidence(self, key: ToolKey, context: str) -> tuple[float, float]:
        """(successes, failures) of ``key`` here, plus a share of its evidence elsewhere."""
        here = self._counts.get((key, context), (0.0, 0.0))
        total = self._totals.get(key, (0.0, 0.0))
        return (here[0] + GLOBAL_SHARE * (total[0] - here[0]), here[1] + GLOBAL_SHARE * (total[1] - here[1]))

    def adjust(self, keys: Sequence[ToolKey], context: str, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """``scores`` with each evidenced tool moved by at most ``bound`` × the best score."""
        if self.bound == 0 or not self._totals or len(scores) == 0:
            return scores
        ab = np.array([self.evidence(k, context) for k in keys], dtype=np.float64)
        has = ab.sum(axis=1) > 0
        if not has.any():
            return scores
        with self._lock:
            theta = self._rng.beta(1.0 + ab[has, 0], 1.0 + ab[has, 1])
        out = np.array(scores, dtype=np.float64, copy=True)
        out[has] += self.bound * float(np.max(scores)) * (2.0 * theta - 1.0)
        return out

    def counts(self) -> Mapping[tuple[ToolKey, str], tuple[float, float]]:
        with self._lock:
            return {k: (v[0], v[1]) for k, v in self._counts.items()}
