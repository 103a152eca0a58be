"""The small formulas of the pipeline, one pure function each, named after their source."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from numpy.typing import NDArray

__all__ = ["top_k", "rrf", "server_rrf", "dice", "softmax", "gap_normalised", "near_best"]


def top_k(scores: NDArray[np.floating], k: int) -> NDArray[np.intp]:
    """Indices of the k largest scores, best first (argpartition, then sort only those k)."""
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.intp)
    if k >= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def rrf(ranked: NDArray[np.intp], weight: float, n: int, k: int = 60) -> NDArray[np.float64]:
    """Weighted reciprocal rank fusion contribution (Cormack, Clarke & Büttcher, SIGIR 2009):
    the document at 1-based rank r of this list gets weight / (k + r); unlisted documents 0."""
    out = np.zeros(n, dtype=np.float64)
    out[ranked] = weight / (k + np.arange(1, len(ranked) + 1, dtype=np.float64))
    return out


def server_rrf(ranked: NDArray[np.intp], weight: float, server_of: NDArray[np.intp], n_servers: int,
               k: int = 60) -> NDArray[np.float64]:
    """RRF contribution of one list to servers rather than tools: each server gets the credit of
    its best-ranked tool in the list (weight / (k + r), r 1-based); servers not listed get 0."""
    out = np.zeros(n_servers, dtype=np.float64)
    credit = weight / (k + np.arange(1, len(ranked) + 1, dtype=np.float64))
    np.maximum.at(out, server_of[ranked], credit)
    return out


def dice(a: Collection[str], b: Collection[str]) -> float:
    """Sørensen-Dice coefficient 2|A∩B| / (|A| + |B|) of two token sets (0 when both are empty)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 0.0
    return 2.0 * len(sa & sb) / (len(sa) + len(sb))


def softmax(x: NDArray[np.floating], temperature: float) -> NDArray[np.float64]:
    """exp(x/T) normalised to sum 1, computed stably."""
    z = np.asarray(x, dtype=np.float64) / max(temperature, 1e-9)
    z = z - z.max() if z.size else z
    e = np.exp(z)
    return e / e.sum() if e.size else e


def near_best(scores: NDArray[np.floating], share: float = 0.8) -> NDArray[np.float64]:
    """Scores at least ``share`` of the best kept, others zeroed: a hint votes only for what it names."""
    s = np.asarray(scores, dtype=np.float64)
    best = float(s.max()) if s.size else 0.0
    return np.where(s >= share * best, s, 0.0) if best > 0 else np.zeros_like(s)


def gap_normalised(top: NDArray[np.float64]) -> NDArray[np.float64]:
    """Scores of one list's top entries mapped to (0, 1]: 1 for the best, towards 0 at the cut,
    so a list whose best is far ahead of the rest votes for it more strongly than RRF would."""
    hi, lo = float(top[0]), float(top[-1])
    if hi - lo <= 1e-12:
        return np.ones_like(top)
    return 0.05 + 0.95 * (top - lo) / (hi - lo)
