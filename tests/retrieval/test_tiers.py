"""Tiers read from how far a search clears its catalog's abstention bar (retrieval/tiers.py)."""

import numpy as np

from votr_mcp.retrieval.tiers import HIGH_CONFIDENCE, fit_tier_margins, tier_of


def test_a_hit_is_high_only_when_its_search_clears_the_high_margin_and_it_stands_out():
    margins = (3.0, 1.5)
    assert tier_of(3.2, 0.9, margins) == "high"
    assert tier_of(3.2, HIGH_CONFIDENCE - 0.01, margins) == "medium"  # a strong search, but this hit is one of several
    assert tier_of(2.0, 0.9, margins) == "medium"
    assert tier_of(0.4, 0.9, margins) == "low"


def test_fitted_margins_are_the_least_that_reach_each_precision_in_every_set():
    rng = np.random.default_rng(0)
    margins, correct, sets = [], [], []
    for name, shift in (("easy", 2.0), ("hard", 0.0)):
        m = rng.uniform(0, 6, 400)
        p = np.clip((m + shift) / 6.0, 0, 1)  # the first tool is right more often as the margin grows
        margins += list(m)
        correct += list(rng.random(400) < p)
        sets += [name] * 400
    high, medium = fit_tier_margins(np.array(margins), np.array(correct), sets)
    assert 0.0 <= medium < high <= 8.0
    margins, correct, names = np.array(margins), np.array(correct), np.array(sets)
    above = margins >= high
    shares = [correct[above & (names == s)].mean() for s in ("easy", "hard")]
    assert min(shares) >= 0.85  # the hard set too, not only the two sets' mean
    # The easy set alone would have allowed a lower bar: the hard set holds it up.
    easy = names == "easy"
    alone, _ = fit_tier_margins(margins[easy], correct[easy], ["easy"] * int(easy.sum()))
    assert alone < high


def test_with_no_search_answered_nothing_is_ever_high():
    high, medium = fit_tier_margins(np.zeros(0), np.zeros(0, dtype=bool), [])
    assert high == 8.0 and tier_of(7.9, 1.0, (high, medium)) != "high"
