"""Confidence tiers that mean the same in every catalog: how far a search clears its abstention bar.

A tier read from the ranked list alone (how far the first tool's softmax share stands above the
others) says only that one tool beats the rest of *this* catalog: on 132 terse tools a vague request
still has a clear winner. What carries across catalogs is the abstention score's margin over the
catalog's own threshold (calibration.py, null_model.py): the threshold is set per catalog from how
chat scores there, so a margin of 3 means as much evidence on 30 tools as on 3,000.

The calibration fits two margins on dev rows: ``high`` is the least margin above which the first
tool is right in at least :data:`HIGH_PRECISION` of searches, ``medium`` the least for
:data:`MEDIUM_PRECISION`, in every fitted set with at least :data:`MIN_ROWS` searches above it (a
tier must mean the same on benchmark phrasing and on how people ask: with the sets' mean precision as
the rule, "high" was right .95 of the time on MSC-Bench test rows and .71 on human-registry's). A
hit is ``high`` when its search clears the high margin and the hit stands out in its list
(confidence at least :data:`HIGH_CONFIDENCE`), ``medium`` above the medium margin, else ``low``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["HIGH_CONFIDENCE", "HIGH_PRECISION", "MEDIUM_PRECISION", "fit_tier_margins", "tier_of"]

HIGH_PRECISION = 0.85
MEDIUM_PRECISION = 0.7
HIGH_CONFIDENCE = 0.5
MIN_ROWS = 10  # a set counts toward a margin's precision only with this many searches above it
_GRID = np.round(np.arange(0.0, 8.01, 0.25), 2)


def tier_of(margin: float, confidence: float, margins: Sequence[float]) -> str:
    """``high``, ``medium`` or ``low`` for a hit with this confidence in a search with this margin."""
    high, medium = margins
    if margin >= high and confidence >= HIGH_CONFIDENCE:
        return "high"
    return "medium" if margin >= medium else "low"


def fit_tier_margins(margins: NDArray[np.floating], correct: NDArray[np.bool_], sets: Sequence[str],
                     confident: NDArray[np.bool_] | None = None) -> tuple[float, float]:
    """(high, medium): the least margins whose searches' first tool is right often enough (see the
    module docstring). ``correct`` is per search (a no-tool row is never correct); ``confident``
    marks searches whose first hit stands out (the high tier needs it too)."""
    margins = np.asarray(margins, dtype=np.float64)
    correct = np.asarray(correct, dtype=bool)
    names = np.asarray(list(sets))
    stands_out = np.ones(len(margins), dtype=bool) if confident is None else np.asarray(confident, dtype=bool)

    def least(target: float, extra: NDArray[np.bool_]) -> float:
        for m in _GRID:
            above = (margins >= m) & extra
            shares = [float(correct[above & (names == s)].mean()) for s in np.unique(names)
                      if int((above & (names == s)).sum()) >= MIN_ROWS]
            if shares and min(shares) >= target:  # every set, not their mean
                return float(m)
        return float(_GRID[-1])

    medium = least(MEDIUM_PRECISION, np.ones(len(margins), dtype=bool))
    return max(least(HIGH_PRECISION, stands_out), medium), medium
