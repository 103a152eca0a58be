"""Fitting the calibration (:mod:`votr_mcp.retrieval.calibration`, whose docstring gives the method):
adaptive k by cross-fitted split-conformal prediction, the abstention model with its per-catalog
null quantile and floor (:mod:`votr_mcp.retrieval.abstention_fit`), and the tier margins
(:mod:`votr_mcp.retrieval.tiers`). Pure functions of search results and gold tools: ``votr-mcp
calibrate`` (evaluation/calibration.py) runs the searches."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.abstention_fit import fit_abstention
from votr_mcp.retrieval.calibration import (
    ALLOWED_K,
    Calibration,
    Scored,
    abstain_features,
    abstain_score,
    catalog_bar,
    check_levels,
    choose_k,
    confidences,
    conformal_quantile,
)
from votr_mcp.retrieval.tiers import HIGH_CONFIDENCE, fit_tier_margins

__all__ = ["fit"]

_TEMPERATURES = (0.05, 0.08, 0.12, 0.2, 0.3)
_MIXES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _gold_p(result: Scored, gold: Collection[ToolKey], temperature: float, mix: float) -> float:
    p = confidences(result.cosines, result.relative, temperature, mix)
    best = 0.0
    for i, key in enumerate(result.ranked_keys):
        if key in gold:
            best = max(best, float(p[i]))
    return best


def _set_threshold(q_hat: float) -> float:
    """1 − q̂, a hair lower so a p of exactly 1 − q̂ stays in the set (relative: thresholds can be tiny)."""
    return max(0.0, (1.0 - q_hat) * (1.0 - 1e-9))


def _mean_k(results: Sequence[Scored], threshold: float, temperature: float, mix: float) -> float:
    return float(np.mean([choose_k(confidences(r.cosines, r.relative, temperature, mix), threshold) for r in results]))


def fit(
    results: Sequence[Scored],
    golds: Sequence[Collection[ToolKey]],
    *,
    coverage: float = 0.97,
    false_abstain: float = 0.03,
    abstain_confidence: float = 0.9,
    model_id: str = "",
    source: str = "",
    k_rows: Sequence[bool] | None = None,
    groups: Sequence[str] | None = None,
    null_evidence: Mapping[str, Sequence[Mapping[str, float]]] | None = None,
    bounded_with: Mapping[str, str] | None = None,
    cells: Sequence[str] | None = None,
) -> Calibration:
    """Fit adaptive-k and abstention thresholds on calibration rows.

    ``results[i]`` is the search result for a row and ``golds[i]`` its gold tools (empty for a
    no-tool row). Only answerable rows (non-empty gold) set the thresholds. ``k_rows`` (one flag
    per row, default all) picks the rows that set adaptive k; abstention always reads every row, so
    k can be fit on the sets whose query style it serves while the abstention pool spans all
    styles. ``groups`` (one set name per row, default one set) weighs the abstention model's rows
    and bounds false abstention on each set. ``null_evidence`` (per set name, the evidence of the
    null requests searched in that set's catalog) fits ``null_quantile``: the highest quantile of the
    null requests' scores that, as each set's threshold, keeps false abstention on its answerable rows
    at most ``false_abstain`` with probability ``abstain_confidence``. ``bounded_with`` maps a set to
    the group whose false abstention is bounded together (sets of one style, each too small to bound
    alone: our three human-style sets); a set not in it is its own group. ``cells`` (one label per
    row, default its set) groups the no-tool rows whose refused share the abstention weights are
    tuned to raise, each cell counting the same (a set's chat and its near-misses apart). Pure:
    reads nothing else, returns a new Calibration.
    """
    if len(results) != len(golds):
        raise RetrievalError(f"fit got {len(results)} results but {len(golds)} gold sets; pass one gold set per result")
    check_levels(coverage, false_abstain, abstain_confidence)
    if k_rows is not None and len(k_rows) != len(results):
        raise RetrievalError(f"fit got {len(k_rows)} k_rows flags for {len(results)} results; pass one flag per result")
    for name, labels in (("group names", groups), ("cells", cells)):
        if labels is not None and len(labels) != len(results):
            raise RetrievalError(f"fit got {len(labels)} {name} for {len(results)} results; pass one per result")
    flags = list(k_rows) if k_rows is not None else [True] * len(results)
    answerable = [(r, set(g)) for r, g in zip(results, golds) if g and len(r.ranked_keys)]
    for_k = [(r, set(g)) for r, g, f in zip(results, golds, flags) if f and g and len(r.ranked_keys)]
    if len(answerable) < 20:
        raise RetrievalError(f"only {len(answerable)} answerable rows to calibrate on; at least 20 are needed")
    # Adaptive k can only cover a row whose gold tool is within the largest allowed k; rows whose
    # gold the ranker misses (24% of MetaTool's) would push q̂ to 1 and k to 5 for every query
    # without covering anything more. So q̂ is a quantile over reachable rows: coverage 1 − α holds
    # conditionally on the gold being in the top max(ALLOWED_K); abstention still reads all rows.
    reachable = [(r, g) for r, g in for_k if g & set(r.ranked_keys[: ALLOWED_K[-1]])]
    if len(reachable) < 20:
        raise RetrievalError(f"only {len(reachable)} rows have a gold tool in the top {ALLOWED_K[-1]}; at least 20 are needed")
    halves = (reachable[0::2], reachable[1::2])
    best: tuple[float, float, float] | None = None
    for temperature in _TEMPERATURES:
        for mix in _MIXES:
            mean_k = 0.0
            for fit_half, use_half in ((0, 1), (1, 0)):
                scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in halves[fit_half]])
                q = conformal_quantile(scores, coverage)
                mean_k += _mean_k([r for r, _ in halves[use_half]], 1.0 - q, temperature, mix) / 2
            if best is None or mean_k < best[0] - 1e-9:
                best = (mean_k, temperature, mix)
    assert best is not None
    _, temperature, mix = best
    scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in reachable])
    q_hat = conformal_quantile(scores, coverage)
    abstention = fit_abstention(results, golds, groups, null_evidence, cells, false_abstain, abstain_confidence,
                                bounded_with or {})
    weights, null_quantile, floor, abstain_threshold = abstention
    tier_margins = _fit_tiers(results, golds, groups, null_evidence, weights, null_quantile, abstain_threshold,
                              temperature, mix, floor)
    return Calibration(
        coverage=coverage,
        temperature=temperature,
        mix=mix,
        set_threshold=_set_threshold(q_hat),
        # −inf (too few rows to bound) is not JSON: a score far below any the model gives.
        abstain_threshold=abstain_threshold if math.isfinite(abstain_threshold) else -1e9,
        abstain_weights=weights,
        null_quantile=null_quantile,
        abstain_floor=floor,
        false_abstain=false_abstain,
        abstain_confidence=abstain_confidence,
        n_rows=len(answerable),
        model_id=model_id,
        source=source,
        tier_margins=tier_margins,
    )


def _fit_tiers(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
               null_evidence: Mapping[str, Sequence[Mapping[str, float]]] | None, weights: dict[str, float],
               null_quantile: float | None, abstain_threshold: float, temperature: float,
               mix: float, floor: float | None = None) -> tuple[float, float]:
    """The tier margins (tiers.py) on every row a search answers: its margin over its set's threshold."""
    names = list(groups) if groups is not None else [""] * len(results)
    thresholds: dict[str, float] = {}
    for name in set(names):
        evidence = (null_evidence or {}).get(name)
        nulls = np.array([abstain_score(abstain_features(e), weights) for e in evidence]) if evidence else None
        thresholds[name] = catalog_bar(nulls, null_quantile, abstain_threshold, floor)
    margins, correct, confident, sets = [], [], [], []
    for r, g, n in zip(results, golds, names):
        if not len(r.ranked_keys):
            continue
        margin = abstain_score(abstain_features(r.evidence), weights) - thresholds[n]
        if margin < 0:
            continue  # abstained: no tier
        margins.append(margin)
        correct.append(bool(g) and r.ranked_keys[0] in set(g))
        confident.append(float(confidences(r.cosines, r.relative, temperature, mix)[0]) >= HIGH_CONFIDENCE)
        sets.append(n)
    if not margins:
        return 8.0, 0.0  # nothing answered: no search is ever high
    return fit_tier_margins(np.array(margins), np.array(correct), sets, np.array(confident))
