"""Fitting the calibration (:mod:`votr_mcp.retrieval.calibration`, whose docstring gives the method):
adaptive k by cross-fitted split-conformal prediction, the abstention model with its per-catalog
null quantile and floor (:mod:`votr_mcp.retrieval.abstention_fit`), and the tier margins
(:mod:`votr_mcp.retrieval.tiers`), and the action gate. Pure functions of search results and gold
tools: ``votr-mcp calibrate`` (evaluation/calibration.py) runs the searches."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.abstention_fit import fit_abstention
from votr_mcp.retrieval.calibration import (
    ALLOWED_K,
    Calibration,
    Scored,
    abstain_features,
    abstain_score,
    action_unsupported,
    catalog_bar,
    check_levels,
    choose_k,
    confidences,
    conformal_quantile,
)
from votr_mcp.retrieval.tiers import HIGH_CONFIDENCE, fit_tier_margins

__all__ = ["GATE_FALSE_ABSTAIN", "K_GAIN", "fit"]

GATE_FALSE_ABSTAIN = 0.01
"""What the action gate may add to false abstention: at most this share of each fitted set's answerable
dev rows (the sets bounded together counted as one, as for the bar). The bar spends up to 3% with 90%
confidence and measures about 2% on held-out human-style rows; 1% more keeps the two near the 3% target."""
GATE_MARGINS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
"""Margins over the bar the action gate is tried at (in the abstention score's units, as the tiers' margins)."""

_TEMPERATURES = (0.05, 0.08, 0.12, 0.2, 0.3)
_MIXES = (0.0, 0.25, 0.5, 0.75, 1.0)
K_GAIN = 0.15
"""How much smaller (in tools per search) another temperature and mix must make the mean k than the
calibration being replaced for a refit to take them: about twice the noise of that difference.
Measured on the calibrate recipe's dev rows of 2026-11-27 (1,310 rows that set k): between the
shipped pair (0.08, 0.5) and the best other (0.2, 0.75) the mean k differed by 0.020, and refitting
both on 100 bootstrap resamples of the rows gave differences of mean 0.002 and standard deviation
0.067 (the shipped pair smaller in 48% of them). A tolerance of 0.02 let a swap through on noise,
and the swap handed off fewer tools per search to every set, whole tasks included."""


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
    gate_false_abstain: float = GATE_FALSE_ABSTAIN,
    previous: Calibration | None = None,
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
    tuned to raise, each cell counting the same (a set's chat and its near-misses apart).
    ``gate_false_abstain``: what the action gate may add to false abstention (:func:`_fit_action_gate`;
    0: no gate). ``previous``: the calibration this one replaces (fit for the same model), whose
    abstention weights the retuning climbs from first (abstention_fit._tune_for_refusals) and whose
    temperature and mix are kept unless others make k clearly smaller (:data:`K_GAIN`). Pure: reads
    nothing else, returns a new Calibration.
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
    mean_ks: dict[tuple[float, float], float] = {}
    for temperature in _TEMPERATURES:
        for mix in _MIXES:
            mean_k = 0.0
            for fit_half, use_half in ((0, 1), (1, 0)):
                scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in halves[fit_half]])
                q = conformal_quantile(scores, coverage)
                mean_k += _mean_k([r for r, _ in halves[use_half]], 1.0 - q, temperature, mix) / 2
            mean_ks[(temperature, mix)] = mean_k
    # The smallest mean k (the first pair of the grid among equals), or the replaced calibration's pair
    # when none beats it by K_GAIN.
    best: tuple[float, float] | None = None
    for pair, mean_k in mean_ks.items():
        if best is None or mean_k < mean_ks[best] - 1e-9:
            best = pair
    assert best is not None
    kept = (previous.temperature, previous.mix) if previous is not None else None
    temperature, mix = kept if kept is not None and kept in mean_ks and mean_ks[kept] <= mean_ks[best] + K_GAIN else best
    scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in reachable])
    q_hat = conformal_quantile(scores, coverage)
    abstention = fit_abstention(results, golds, groups, null_evidence, cells, false_abstain, abstain_confidence,
                                bounded_with or {}, previous.abstain_weights if previous is not None else None)
    weights, null_quantile, floor, abstain_threshold = abstention
    names = list(groups) if groups is not None else [""] * len(results)
    bars = _bars(names, null_evidence, weights, null_quantile, abstain_threshold, floor)
    margins = np.array([abstain_score(abstain_features(r.evidence), weights) - bars[n] if len(r.ranked_keys) else -np.inf
                        for r, n in zip(results, names)])
    unsupported = np.array([action_unsupported(r.evidence) for r in results], dtype=bool)
    gate = _fit_action_gate(margins, unsupported, np.array([bool(g) for g in golds], dtype=bool),
                            [(bounded_with or {}).get(n, n) for n in names], list(cells) if cells is not None else names,
                            gate_false_abstain)
    gated = unsupported & (margins >= 0) & (margins < gate) if gate is not None else np.zeros(len(results), dtype=bool)
    tier_margins = _fit_tiers(results, golds, names, margins, gated, temperature, mix)
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
        action_gate=gate,
        gate_false_abstain=gate_false_abstain,
    )


def _bars(names: Sequence[str], null_evidence: Mapping[str, Sequence[Mapping[str, float]]] | None,
          weights: dict[str, float], null_quantile: float | None, abstain_threshold: float,
          floor: float | None) -> dict[str, float]:
    """Each set's abstention bar: the null quantile of its null requests' scores, or the fixed threshold."""
    bars: dict[str, float] = {}
    for name in set(names):
        evidence = (null_evidence or {}).get(name)
        nulls = np.array([abstain_score(abstain_features(e), weights) for e in evidence]) if evidence else None
        bars[name] = catalog_bar(nulls, null_quantile, abstain_threshold, floor)
    return bars


def _fit_action_gate(margins: NDArray[np.float64], unsupported: NDArray[np.bool_], answerable: NDArray[np.bool_],
                     bounded: Sequence[str], cells: Sequence[str], budget: float) -> float | None:
    """The action gate: the margin of :data:`GATE_MARGINS` under which refusing the requests no ranked
    tool does (``unsupported``) refuses the most no-tool rows the bar lets through (each cell counting
    the same, as the weights' tuning counts them) while refusing at most ⌊budget · n⌋ of the n
    answerable rows of each bounded set; None when no margin refuses any no-tool row so.
    ``margins``: each row's score over its set's bar (-inf: nothing ranked); ``bounded``: each row's
    bounded set (fit's ``bounded_with``, else its own set).

    Why a gate and not one more weight: the logistic score adds the evidence up, so a request the
    tools match well in words outweighs the sign that none of them does its action ("squash my last
    4 commits" among git tools that commit, log and reset). Where the score clears the bar only
    narrowly that sign should decide, which a sum cannot say."""
    answered = margins >= 0
    no_tool = ~answerable
    if budget <= 0 or not (answered & no_tool & unsupported).any():
        return None
    groups = np.array(bounded, dtype=str)
    cell = np.array(cells, dtype=str)
    allowed = {g: math.floor(budget * int((answerable & (groups == g)).sum())) for g in np.unique(groups[answerable])}
    sizes = {c: int((no_tool & (cell == c)).sum()) for c in np.unique(cell[no_tool])}
    best: tuple[float, float] | None = None  # (refused share over cells, margin)
    for margin in GATE_MARGINS:
        gated = unsupported & answered & (margins < margin)
        if any(int((gated & answerable & (groups == g)).sum()) > n for g, n in allowed.items()):
            break  # a wider margin refuses these rows too
        value = float(np.mean([(gated & no_tool & (cell == c)).sum() / n for c, n in sizes.items()]))
        if value > 0 and (best is None or value > best[0] + 1e-12):
            best = (value, margin)
    return None if best is None else best[1]


def _fit_tiers(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], names: Sequence[str],
               margins: NDArray[np.float64], gated: NDArray[np.bool_], temperature: float,
               mix: float) -> tuple[float, float]:
    """The tier margins (tiers.py) on every row a search answers (not refused by the bar nor the
    action gate): its margin over its set's bar."""
    kept, correct, confident, sets = [], [], [], []
    for r, g, n, margin, refused in zip(results, golds, names, margins, gated):
        if margin < 0 or refused:
            continue  # abstained: no tier
        kept.append(float(margin))
        correct.append(bool(g) and r.ranked_keys[0] in set(g))
        confident.append(float(confidences(r.cosines, r.relative, temperature, mix)[0]) >= HIGH_CONFIDENCE)
        sets.append(n)
    if not kept:
        return 8.0, 0.0  # nothing answered: no search is ever high
    return fit_tier_margins(np.array(kept), np.array(correct), sets, np.array(confident))
