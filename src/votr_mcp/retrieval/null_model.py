"""A catalog's own yardstick for abstention: how requests that no tool serves score in it.

The abstention score (calibration.py) of a request depends on the catalog: on 132 terse tools an
answerable paraphrase scores lower than a chat line does among 2,800 verbose ones. A single
threshold learnt on a few catalogs therefore refused too much in some and too little in others
(dev, 3% false abstention: MSC-Bench no-tool abstention .045 under the pooled bound). Here each
catalog is measured against itself: the ~120 everyday requests of ``null_requests.txt`` (chat,
opinions, knowledge, writing help, in ten languages) are searched in it, and a request is refused
when its score does not beat their ``null_quantile`` (fit on dev rows so that at most the stated
share of answerable requests is refused on every fitted set). The same rule then reads alike on a
few dozen tools and on thousands, without labels from the user; where a small catalog's null
requests match nothing and set a low bar, the calibration's floor (an absolute score, fitted with
the quantile) is the higher one (abstention_fit._fit_floor).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["NULL_REQUESTS", "chat_similarity", "null_requests", "null_threshold"]

NULL_REQUESTS = Path(__file__).with_name("null_requests.txt")


@cache
def null_requests() -> tuple[str, ...]:
    """The shipped requests no tool serves (comment lines and blanks skipped)."""
    lines = NULL_REQUESTS.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def null_threshold(scores: NDArray[np.floating], quantile: float) -> float:
    """The score a request must reach to be answered: the ``quantile`` of the null requests' scores."""
    if len(scores) == 0:
        return float("-inf")
    return float(np.quantile(np.asarray(scores, dtype=np.float64), min(max(quantile, 0.0), 1.0)))


@cache
def _position() -> dict[str, int]:
    return {text: i for i, text in enumerate(null_requests())}


def chat_similarity(bank: NDArray[np.float32], text: str, vec: NDArray[np.float32]) -> float:
    """The best cosine of a request's vector with the null requests' (rows of ``bank``, in file
    order); a null request itself is left out, so the null scores are not flattered by a self-match."""
    sims = bank @ vec
    own = _position().get(text)
    if own is not None:
        sims = sims.copy()
        sims[own] = -1.0
    return float(sims.max())
