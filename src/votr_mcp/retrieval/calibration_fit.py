"""Fitting the calibration (:mod:`votr_mcp.retrieval.calibration`, whose docstring gives the method):
adaptive k by cross-fitted split-conformal prediction, the abstention model and its per-catalog
null quantile, and the tier margins (:mod:`votr_mcp.retrieval.tiers`). Pure functions of search
results and gold tools: ``votr-mcp calibrate`` (evaluation/calibration.py) runs the searches."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.calibration import (
    _BIAS,
    ABSTAIN_FEATURES,
    ALLOWED_K,
    Calibration,
    Scored,
    abstain_features,
    abstain_score,
    check_levels,
    choose_k,
    confidences,
    conformal_quantile,
    lower_quantile,
)
from votr_mcp.retrieval.null_model import null_threshold
from votr_mcp.retrieval.tiers import HIGH_CONFIDENCE, fit_tier_margins

__all__ = ["NULL_QUANTILES", "fit", "fit_logistic"]

_TEMPERATURES = (0.05, 0.08, 0.12, 0.2, 0.3)
_MIXES = (0.0, 0.25, 0.5, 0.75, 1.0)


def fit_logistic(x: NDArray[np.floating], y: NDArray[np.floating], weights: NDArray[np.floating] | None = None,
                 l2: float = 1e-2, iterations: int = 50, nonnegative: bool = True) -> NDArray[np.float64]:
    """Weighted L2-regularised logistic regression by Newton's method (IRLS; Hastie et al., ESL §4.4.1).

    Returns [bias, w_1, ..., w_d]; the bias is not penalised. ``y`` is 1 for the positive class.
    With ``nonnegative`` a feature whose weight comes out negative is dropped (weight 0) and the
    rest refit, until none is negative: evidence of fit must never count against a tool. (The two
    cosine features are collinear; unconstrained, one refit gave top cosine a negative weight, so a
    query matching one tool strongly and nothing else would have been refused.)
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    w = np.ones(len(ys)) if weights is None else np.asarray(weights, dtype=np.float64)
    active = list(range(xs.shape[1]))
    while True:
        beta = _irls(xs[:, active], ys, w, l2, iterations)
        if not nonnegative or not active or float(beta[1:].min()) >= 0:
            break
        active.pop(int(np.argmin(beta[1:])))
    full = np.zeros(xs.shape[1] + 1)
    full[0] = beta[0]
    full[[1 + j for j in active]] = beta[1:]
    return full


def _irls(x: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], l2: float,
          iterations: int) -> NDArray[np.float64]:
    design = np.column_stack([np.ones(len(x)), x])
    penalty = l2 * np.diag(np.r_[0.0, np.ones(design.shape[1] - 1)])
    beta = np.zeros(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -30, 30)))
        gradient = design.T @ (w * (y - p)) - penalty @ beta
        hessian = (design * (w * p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        beta = beta + step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return beta


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
) -> Calibration:
    """Fit adaptive-k and abstention thresholds on calibration rows.

    ``results[i]`` is the search result for a row and ``golds[i]`` its gold tools (empty for a
    no-tool row). Only answerable rows (non-empty gold) set the thresholds. ``k_rows`` (one flag
    per row, default all) picks the rows that set adaptive k; abstention always reads every row, so
    k can be fit on the sets whose query style it serves while the abstention pool spans all
    styles. ``groups`` (one set name per row, default one set) weighs the abstention model's rows
    and bounds false abstention on each set. ``null_evidence`` (per set name, the evidence of the
    null requests searched in that set's catalog) fits ``null_quantile``: the highest quantile of the
    null requests' scores that, as each set's threshold, refuses at most ``false_abstain`` of its
    answerable rows. ``bounded_with`` maps a set to the group whose false abstention is bounded
    together (sets of one style, each too small to bound alone: our three human-style sets);
    a set not in it is its own group. Pure: reads nothing else, returns a new Calibration.
    """
    if len(results) != len(golds):
        raise RetrievalError(f"fit got {len(results)} results but {len(golds)} gold sets; pass one gold set per result")
    check_levels(coverage, false_abstain, abstain_confidence)
    if k_rows is not None and len(k_rows) != len(results):
        raise RetrievalError(f"fit got {len(k_rows)} k_rows flags for {len(results)} results; pass one flag per result")
    if groups is not None and len(groups) != len(results):
        raise RetrievalError(f"fit got {len(groups)} group names for {len(results)} results; pass one name per result")
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
    weights, abstain_threshold = _fit_abstention(results, golds, groups, false_abstain, abstain_confidence)
    null_quantile = None if not null_evidence else _fit_null_quantile(results, golds, groups, null_evidence, weights,
                                                                     false_abstain, abstain_confidence, bounded_with or {})
    tier_margins = _fit_tiers(results, golds, groups, null_evidence, weights, null_quantile, abstain_threshold,
                              temperature, mix)
    return Calibration(
        coverage=coverage,
        temperature=temperature,
        mix=mix,
        set_threshold=_set_threshold(q_hat),
        # −inf (too few rows to bound) is not JSON: a score far below any the model gives.
        abstain_threshold=abstain_threshold if math.isfinite(abstain_threshold) else -1e9,
        abstain_weights=weights,
        null_quantile=null_quantile,
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
               mix: float) -> tuple[float, float]:
    """The tier margins (tiers.py) on every row a search answers: its margin over its set's threshold."""
    names = list(groups) if groups is not None else [""] * len(results)
    thresholds: dict[str, float] = {}
    for name in set(names):
        evidence = (null_evidence or {}).get(name)
        if null_quantile is not None and evidence:
            nulls = np.array([abstain_score(abstain_features(e), weights) for e in evidence])
            thresholds[name] = null_threshold(nulls, null_quantile)
        else:
            thresholds[name] = abstain_threshold
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


NULL_QUANTILES = tuple(round(0.01 * i, 2) for i in range(100, -1, -1))
"""Quantiles of the null requests' scores tried as thresholds, highest (most refusing) first."""
def _fit_null_quantile(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
                       null_evidence: Mapping[str, Sequence[Mapping[str, float]]], weights: dict[str, float],
                       false_abstain: float, confidence: float, bounded_with: Mapping[str, str]) -> float:
    """The highest null quantile whose per-catalog threshold refuses at most ``false_abstain`` of
    the answerable rows of their pool and of every group of sets (``bounded_with``; else each set)
    with enough rows to bound that rate at ``confidence`` (the rule of the fixed threshold: fewer
    rows, e.g. 41, cannot tell 3% from 0% and count only in the pool)."""
    names = list(groups) if groups is not None else [""] * len(results)
    scores: dict[str, list[float]] = {}
    for r, g, n in zip(results, golds, names):
        if g and len(r.ranked_keys) and n in null_evidence:
            scores.setdefault(n, []).append(abstain_score(abstain_features(r.evidence), weights))
    nulls = {n: np.array([abstain_score(abstain_features(e), weights) for e in ev]) for n, ev in null_evidence.items()}
    members: dict[str, list[str]] = {}
    for n in scores:
        members.setdefault(bounded_with.get(n, n), []).append(n)
    sizes = {b: sum(len(scores[n]) for n in ns) for b, ns in members.items()}
    binds = {b: math.isfinite(lower_quantile(np.concatenate([scores[n] for n in ns]), false_abstain, confidence))
             for b, ns in members.items()}
    for q in NULL_QUANTILES:
        refused = {n: int((np.array(s) < np.quantile(nulls[n], q)).sum()) for n, s in scores.items() if len(nulls[n])}
        pooled = sum(refused.values()) / max(1, sum(len(scores[n]) for n in refused))
        per_group = all(sum(refused.get(n, 0) for n in ns) <= false_abstain * sizes[b]
                        for b, ns in members.items() if binds[b])
        if per_group and pooled <= false_abstain:
            return q
    return 0.0


def _fit_abstention(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
                    false_abstain: float, confidence: float) -> tuple[dict[str, float], float]:
    """(weights, threshold) of the logistic abstention score (see the module docstring)."""
    names = list(groups) if groups is not None else [""] * len(results)
    rows = [(abstain_features(r.evidence), bool(g), n) for r, g, n in zip(results, golds, names) if len(r.ranked_keys)]
    x = np.array([[f[name] for name in ABSTAIN_FEATURES] for f, _, _ in rows])
    y = np.array([a for _, a, _ in rows], dtype=np.float64)
    sets = np.array([n for _, _, n in rows])
    if y.all():
        # No no-tool rows: nothing to learn a direction from; the top cosine alone is the evidence.
        beta = np.r_[0.0, 1.0, np.zeros(len(ABSTAIN_FEATURES) - 1)]
    else:
        # Every (set, class) cell weighs the same within its class and both classes weigh the same,
        # so neither the biggest set nor the far more numerous answerable rows set the direction.
        w = np.zeros(len(y))
        for name in np.unique(sets):
            for label in (0.0, 1.0):
                cell = (sets == name) & (y == label)
                if cell.any():
                    w[cell] = 1.0 / cell.sum()
        for label in (0.0, 1.0):
            w[y == label] *= 0.5 / w[y == label].sum()
        beta = fit_logistic(x, y, w * len(y))
    weights = {_BIAS: float(beta[0]), **{name: float(b) for name, b in zip(ABSTAIN_FEATURES, beta[1:])}}
    scores = np.array([abstain_score(f, weights) for f, _, _ in rows])
    answerable = y == 1
    bounds = [lower_quantile(scores[answerable], false_abstain, confidence)]
    for name in np.unique(sets):
        bound = lower_quantile(scores[answerable & (sets == name)], false_abstain, confidence)
        if math.isfinite(bound):
            bounds.append(bound)
    return weights, min(bounds)
