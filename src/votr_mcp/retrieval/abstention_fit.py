"""Fitting abstention (:mod:`votr_mcp.retrieval.calibration`, whose docstring gives the method): the
logistic weights of the evidence, their retuning to refuse the most no-tool rows at the null quantile,
the null quantile and the floor under it, and the fixed threshold of a catalog without null
requests. Pure functions of search evidence and gold tools; :func:`fit_abstention` is what
calibration_fit.fit calls."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.retrieval.calibration import (
    _BIAS,
    ABSTAIN_FEATURES,
    Scored,
    abstain_features,
    abstain_score,
    bounded_rank,
    lower_quantile,
)

__all__ = ["FLOOR_STEP", "NULL_QUANTILES", "Abstention", "fit_abstention", "fit_logistic"]


class Abstention(NamedTuple):
    """What the abstention fit gives a calibration (the fields of the same names)."""

    weights: dict[str, float]
    null_quantile: float | None  # None: no null requests were scored
    floor: float | None
    threshold: float  # the fixed one, for a catalog without null requests


def fit_abstention(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
                   null_evidence: Mapping[str, Sequence[Mapping[str, float]]] | None, cells: Sequence[str] | None,
                   false_abstain: float, confidence: float, bounded_with: Mapping[str, str],
                   warm_start: Mapping[str, float] | None = None) -> Abstention:
    """The abstention weights, null quantile, floor and fixed threshold (calibration_fit.fit's
    arguments of the same names say what each input is)."""
    weights = _logistic_weights(results, golds, groups)
    null_quantile = floor = None
    if null_evidence:
        rows = _AbstentionRows.of(results, golds, groups, null_evidence, cells)
        weights = _tune_for_refusals(rows, weights, false_abstain, confidence, bounded_with, warm_start)
        null_quantile, floor = _fit_floor(rows, _vector(weights), false_abstain, confidence, bounded_with)
        if floor is not None:
            floor += weights[_BIAS]  # the scores above leave the bias out; a calibration's include it
    return Abstention(weights, null_quantile, floor, _fixed_threshold(results, golds, groups, weights, false_abstain, confidence))


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


NULL_QUANTILES = tuple(round(0.01 * i, 2) for i in range(100, -1, -1))
"""Quantiles of the null requests' scores tried as thresholds, highest (most refusing) first."""
_SCALES = (0.0, 0.5, 0.75, 1.33, 2.0)
"""What a weight is multiplied by, one weight at a time, while tuning (see _tune_for_refusals)."""
_SHARES = (0.1, 0.25, 0.5)
"""A weight set afresh (a feature the logistic fit dropped, say) spreads scores by this share of what
the strongest feature spreads them (weight times the feature's standard deviation over the rows)."""
_ROUNDS = 4
_STARTS = 4  # random rescalings of the logistic weights that the climb also starts from
_GAIN = 1e-3  # a change must lift the mean refused share by more than this to be kept
# ... and another start must beat the calibration a refit replaces by this much: about twice the noise
# of the difference between two optima's mean refused share over resampled no-tool dev rows (bootstrap
# SD .014 between the shipped weights and another start's, 2026-11-27, the .0044 it gained there).
_START_GAIN = 0.03


class _AbstentionRows:
    """The abstention fit's rows as matrices over ABSTAIN_FEATURES: each searched row's features,
    whether it is answerable, its set and its cell (fit's ``cells``); per set the null requests' features."""

    def __init__(self, x: NDArray[np.float64], answerable: NDArray[np.bool_], ranked: NDArray[np.bool_],
                 sets: NDArray[np.str_], cells: NDArray[np.str_], nulls: Mapping[str, NDArray[np.float64]]) -> None:
        self.x, self.answerable, self.ranked, self.sets, self.cells = x, answerable, ranked, sets, cells
        self.nulls = dict(nulls)

    @classmethod
    def of(cls, results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
           null_evidence: Mapping[str, Sequence[Mapping[str, float]]], cells: Sequence[str] | None = None) -> _AbstentionRows:
        names = np.array(list(groups) if groups is not None else [""] * len(results), dtype=str)
        return cls(_features([r.evidence for r in results]), np.array([bool(g) for g in golds], dtype=bool),
                   np.array([len(r.ranked_keys) > 0 for r in results], dtype=bool), names,
                   np.array(list(cells), dtype=str) if cells is not None else names,
                   {n: _features(ev) for n, ev in null_evidence.items() if len(ev)})

    def null_quantile(self, w: NDArray[np.float64], false_abstain: float, confidence: float,
                      bounded_with: Mapping[str, str], floor: float = float("-inf")) -> float | None:
        """The highest null quantile whose per-catalog threshold (at least ``floor``) keeps false
        abstention at most ``false_abstain`` with probability ``confidence`` (:func:`bounded_rank`, the
        rule of the fixed threshold) on the answerable rows of their pool and of every group of sets
        (``bounded_with``; else each set) with enough rows for that bound (fewer rows, e.g. 41, cannot
        tell 3% from 0% and count only in the pool). None when none does (the floor alone refuses too many)."""
        scores = self.x @ w
        own = {n: np.sort(scores[self.answerable & self.ranked & (self.sets == n)]) for n in self.nulls}
        members: dict[str, list[str]] = {}
        for n, mine in own.items():
            if len(mine):
                members.setdefault(bounded_with.get(n, n), []).append(n)
        # How many of a group's answerable rows may fall under the bar (bounded_rank: with probability
        # ``confidence``, not only on average; a group too small for any bound counts in the pool only).
        allowed = {b: bounded_rank(sum(len(own[n]) for n in ns), false_abstain, confidence) - 1 for b, ns in members.items()}
        pool = max(0, bounded_rank(sum(len(v) for v in own.values()), false_abstain, confidence) - 1)
        # Answerable rows under each quantile's threshold, per set: one row per quantile, highest first.
        under = {n: np.searchsorted(own[n], np.maximum(np.quantile(self.nulls[n] @ w, NULL_QUANTILES), floor))
                 for ns in members.values() for n in ns}
        for i, q in enumerate(NULL_QUANTILES):
            if sum(int(c[i]) for c in under.values()) > pool:
                continue
            if all(sum(int(under[n][i]) for n in ns) <= allowed[b] for b, ns in members.items() if allowed[b] >= 0):
                return q
        return None

    def refused(self, w: NDArray[np.float64], q: float, floor: float = float("-inf")) -> float:
        """The mean over cells of the share of their no-tool rows refused at null quantile ``q`` (and
        at least ``floor``)."""
        scores = self.x @ w
        under = np.zeros(len(scores), dtype=bool)
        for n, m in self.nulls.items():
            mine = self.sets == n
            under[mine] = scores[mine] < max(float(np.quantile(m @ w, q)), floor)
        no_tool = ~self.answerable & np.isin(self.sets, list(self.nulls))
        shares = [float((under | ~self.ranked)[no_tool & (self.cells == c)].mean()) for c in np.unique(self.cells[no_tool])]
        return float(np.mean(shares)) if shares else 0.0


def _features(evidence: Sequence[Mapping[str, float]]) -> NDArray[np.float64]:
    rows = [abstain_features(e) for e in evidence]
    return np.array([[f[name] for name in ABSTAIN_FEATURES] for f in rows], dtype=np.float64).reshape(len(rows), -1)


def _vector(weights: Mapping[str, float]) -> NDArray[np.float64]:
    """The weights in ABSTAIN_FEATURES order, without the bias (which no threshold here depends on)."""
    return np.array([weights.get(name, 0.0) for name in ABSTAIN_FEATURES], dtype=np.float64)


def _tune_for_refusals(rows: _AbstentionRows, weights: dict[str, float], false_abstain: float, confidence: float,
                       bounded_with: Mapping[str, str], warm_start: Mapping[str, float] | None = None) -> dict[str, float]:
    """The logistic weights retuned for the point abstention works at.

    The logistic fit separates every answerable row from every no-tool row; abstention refuses
    below a quantile of the null requests, fit so that only the lowest few percent of answerable
    rows fall under it. The direction that fits the whole distribution best is not the one that
    refuses most at that point: refit with 180 more human-style dev rows, it let the null quantile
    fall from .73 to .56. So the weights climb (:func:`_climb`) the mean share of no-tool rows
    refused over the cells, at the null quantile refit for each trial (so false abstention stays
    bounded), from the logistic weights and from :data:`_STARTS` random rescalings of them (seeded:
    the same rows give the same weights); the best climb wins. Tuned on a random half of the dev
    rows and read on the other half (4 draws, the quantile fit on the tuning half too), the refused
    share went from .02-.22 with the logistic weights to .37-.49 climbing from them alone and to
    .42-.53 from the best of five starts, with false abstention on the other half .008-.023.

    Several climbs end at about the same mean with different trades between cells, and which one is
    best can change with a tiny change of the rows: a rerank refit that moved its weights by 2e-5 once
    swapped two optima .0003 apart, moving the registry's chat refusals on dev .77 -> .60 and
    MetaTool's .44 -> .57. Averaging the best climbs, breaking near-ties by false abstention and more
    starts each read no better on held-out halves, so a refit's single-set figures carry that noise.

    So a refit also climbs from ``warm_start`` (the weights of the calibration it replaces), and another
    start wins only by beating it by more than :data:`_START_GAIN`, about twice the noise of that
    comparison: after a reading fix moved 3 dev rows (2026-11-27), a random start beat the shipped
    weights by .0044 (bootstrap SD .014) by trading chat refusals for near-misses (on dev, registry
    chat refused .714 -> .554 and the personal catalog's .857 -> .643, for human-mcpzero's
    near-misses .60 -> .72). A small change
    of the rows (a reading fix that moved a few rows' evidence) then keeps the optimum it had, moved
    as far as the change asks, instead of landing on another one as good. Refit from the logistic
    weights alone after the leading-verb readings of 2026-11-27 moved 49 of 2,432 dev rows' evidence,
    the climb's best start changed: registry chat refused on dev .70 -> .57 while its near-misses
    went .23 -> .42, the mean over cells unchanged (.497 -> .496). Warm-started, the same refit (after
    the rerank's) gave two features the logistic fit had dropped small weights (action_supported 0 ->
    .71, mean_cosine_10 0 -> 1.16) and moved the others by 5-20%, most of it a common rescaling.

    The climb from the replaced weights must clear the same :data:`_START_GAIN` to replace them: its
    steps each pass :data:`_GAIN`, and after readings that moved 16 dev rows' evidence (2026-11-27,
    questions of meaning) they added up to .0014 of mean refused share (.5519 -> .5533) by halving
    mean_cosine_10's weight, which took the registry's chat refused on dev .911 -> .804 and the
    personal catalog's no-tool refused .534 -> .466 for human-mcpzero's chat .85 -> .90. Kept, the
    weights moved nothing on dev but what the readings moved, and the quantile and floor are refit."""
    w0 = _vector(weights)
    rng = np.random.default_rng(0)
    starts = [w0] + [w0 * np.exp(rng.normal(0.0, 0.5, len(w0))) for _ in range(_STARTS)]

    def value(v: NDArray[np.float64]) -> float:
        return rows.refused(v, rows.null_quantile(v, false_abstain, confidence, bounded_with) or 0.0)

    best_value, best = -1.0, w0
    for start in starts:
        got, w = _climb(value, start, rows.x.std(axis=0))
        if got > best_value + _GAIN:
            best_value, best = got, w
    if warm_start:
        warm = _vector(warm_start)
        kept_value, kept = _climb(value, warm, rows.x.std(axis=0))
        if best_value <= kept_value + _START_GAIN:
            # The climb from the replaced weights is held to the same bar: its small steps each pass
            # _GAIN, and together they can trade one cell for another within the noise.
            best = kept if kept_value > value(warm) + _START_GAIN else warm
    # Only the order of the scores counts for refusing; their scale is the tiers' unit (margins are
    # fitted on a fixed grid of score margins, tiers.py): keep the logistic scores' spread.
    spread = float((rows.x @ best).std())
    scale = float((rows.x @ w0).std()) / spread if spread > 0 else 1.0
    if abs(scale - 1.0) > 1e-9:  # (weights kept from a warm start on the same rows are kept to the last digit)
        best = best * scale
    return {_BIAS: weights[_BIAS], **{name: float(v) for name, v in zip(ABSTAIN_FEATURES, best)}}


FLOOR_STEP = 0.05
"""Floors tried: every multiple of this (in score units) from the lowest answerable row's score up.
Fixed values, not quantiles of the answerable rows' scores (0.5%, 1%, … as before 2026-11-28): a
quantile rose with any answerable row that scored better, so answering a request better could raise
a floor over the bound and flip the fit to another optimum (one dev row doing so took human-registry's
chat refusals .946 -> .839). On a fixed grid a row scoring better only adds floors that keep the bound."""


def _fit_floor(rows: _AbstentionRows, w: NDArray[np.float64], false_abstain: float, confidence: float,
               bounded_with: Mapping[str, str]) -> tuple[float, float | None]:
    """The null quantile and the floor under it: (q, None) when no floor refuses more.

    A catalog's null requests set its bar (null_model.py), and in a small catalog they match nothing,
    score low, and set a low one: on a 30-tool personal catalog (registry/'s filesystem, git, time,
    fetch and calculator; eval/queries/human-personal) no answerable dev request fell under it while
    it refused 16% of the requests for tools not installed and 70% of chat. Answerable requests score
    about alike in every catalog (under the weights of 2026-11-26 their 3rd percentile was 3.0-3.6 on
    the human-style sets of 132 to 2,800 tools), so a bar on the score itself serves there. Each floor
    of the grid is tried with the highest null quantile that still keeps false abstention
    bounded under ``max(quantile, floor)``, from the lowest up (:data:`FLOOR_STEP`: no answerable row
    scoring better can take a floor away); the floor is kept when it raises the mean refused share over
    the cells by more than :data:`_GAIN`. Fit on a random half of the dev rows of eight sets and read on
    the other half (6 draws; the weights tuned on that half as shipped, then the quantile alone or with
    a floor): refused .440 -> .458, the personal catalog's chat .63 -> .73, tools not installed .20 ->
    .28, near-misses .34 -> .39, false abstention on every set as it was (personal .000 -> .003). Refit as shipped (the
    weights tuned with the personal catalog's cells too), its dev rows: chat .70 -> .77, tools not
    installed .16 -> .25, near-misses .31 -> .38, false abstention .000 -> .000."""
    q = rows.null_quantile(w, false_abstain, confidence, bounded_with) or 0.0
    best_value = rows.refused(w, q)
    best: tuple[float, float | None] = (q, None)
    answered = (rows.x @ w)[rows.answerable & rows.ranked]
    if not len(answered):
        return best
    for step in range(int(np.floor(answered.min() / FLOOR_STEP)), int(np.ceil(answered.max() / FLOOR_STEP)) + 1):
        floor = step * FLOOR_STEP
        qf = rows.null_quantile(w, false_abstain, confidence, bounded_with, floor)
        if qf is None:
            break  # a higher floor refuses more answerable rows still
        got = rows.refused(w, qf, floor)
        if got > best_value + _GAIN:
            best_value, best = got, (qf, floor)
    return best


def _climb(value: Callable[[NDArray[np.float64]], float], w: NDArray[np.float64],
           spread: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Coordinate ascent of ``value``: each weight in turn is tried at other values (scaled by
    :data:`_SCALES`, or set afresh to spread scores by a :data:`_SHARES` of what the strongest
    feature spreads them, ``spread`` being each feature's standard deviation) and a change that
    raises ``value`` by more than :data:`_GAIN` is kept; rounds repeat until none does."""
    best = value(w)
    for _ in range(_ROUNDS):
        changed = False
        for j in range(len(w)):
            if spread[j] <= 0:
                continue  # a feature that never varies here moves no score
            strongest = float(np.max(np.abs(w) * spread))
            for candidate in sorted({w[j] * s for s in _SCALES} | {share * strongest / spread[j] for share in _SHARES}):
                if candidate == w[j]:
                    continue
                trial = w.copy()
                trial[j] = candidate
                got = value(trial)
                if got > best + _GAIN:
                    best, w, changed = got, trial, True
        if not changed:
            break
    return best, w


def _logistic_weights(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]],
                      groups: Sequence[str] | None) -> dict[str, float]:
    """The weights of the logistic abstention score (calibration.py's docstring)."""
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
    return {_BIAS: float(beta[0]), **{name: float(b) for name, b in zip(ABSTAIN_FEATURES, beta[1:])}}


def _fixed_threshold(results: Sequence[Scored], golds: Sequence[Collection[ToolKey]], groups: Sequence[str] | None,
                     weights: dict[str, float], false_abstain: float, confidence: float) -> float:
    """The threshold of a catalog without null requests: the lowest of the lower bounds, over the pool
    and over each set, that keep false abstention on answerable rows at most ``false_abstain``."""
    names = list(groups) if groups is not None else [""] * len(results)
    kept = [(abstain_score(abstain_features(r.evidence), weights), n) for r, g, n in zip(results, golds, names)
            if g and len(r.ranked_keys)]
    scores = np.array([s for s, _ in kept])
    sets = np.array([n for _, n in kept])
    bounds = [lower_quantile(scores, false_abstain, confidence)]
    for name in np.unique(sets):
        bound = lower_quantile(scores[sets == name], false_abstain, confidence)
        if math.isfinite(bound):
            bounds.append(bound)
    return min(bounds)
