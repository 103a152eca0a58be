"""Adaptive k by split-conformal prediction, and abstention, fit on a calibration split.

Each ranked candidate i gets a confidence p_i = softmax_i(z_i / T) over the ranked list, with
z_i = mix · (fused_i / fused_1) + (1 − mix) · cos_i: both terms are scale-free (a ratio and a
cosine), so thresholds carry over to catalogs never seen here. The non-conformity of a
calibration row is s = 1 − p(gold), the best-placed gold tool (s = 1 when no gold tool is ranked).
With n reachable calibration rows (answerable, a gold tool in the top 5 ranked) and coverage
1 − α, q̂ is the ⌈(n+1)(1 − α)⌉-th smallest s (Vovk et al. 2005; Angelopoulos & Bates 2021). The
prediction set is {i : p_i ≥ 1 − q̂}; k is its size rounded up to the next allowed value in
{1, 3, 5}. The guarantee is conditional: ≥ 1 − α of new rows whose gold the ranker places in the
top 5 are covered; marginal coverage is that times the ranker's top-5 recall (the harness reports it).

Abstention reads a logistic score over the query-level evidence of :mod:`votr_mcp.retrieval.evidence`
(:data:`ABSTAIN_FEATURES`: the best cosines of each dense model, the best cosine in standard
deviations above the catalog's mean for the query, the best learned-sparse cosine, how many channels
agree on the first tool, whether its action matches the request's), each oriented so that more means
"a tool fits". The weights start from L2-regularised logistic regression (IRLS) on answerable against
no-tool rows, each set's rows and each class weighted equally so no set or class dominates; a weight
that comes out negative is dropped. Where null requests are scored (every catalog served), the weights
are then retuned for the point abstention works at: one weight at a time is moved while that raises
the share of no-tool dev rows refused at the null quantile refit for it, from the logistic weights and
from a few seeded rescalings of them (abstention_fit.py, ``_tune_for_refusals``). Only the
direction of the weights matters, the threshold comes after: a lower bound that keeps false
abstention on answerable rows at most ``false_abstain``. In a catalog with null requests that bar is
their ``null_quantile``, and at least ``abstain_floor``, a score fitted with it (abstention_fit.py,
``_fit_floor``): a small catalog's null requests match nothing, score low and set a low bar, while
answerable requests score there about as they do anywhere. With
``abstain_confidence`` c (0.9 as shipped) it holds with probability c over the calibration draw, not
only on average: the r-th smallest of n scores has a true miss rate F ~ Beta(r, n + 1 − r), so r is
the largest rank with P(Binomial(n, false_abstain) ≤ r − 1) ≤ 1 − c (training-conditional conformal;
Vovk 2012, Bates et al. 2021). The plain conformal rank ⌊(n+1)·false_abstain⌋ (c = 0) holds only in
expectation. The bound is taken PER SET and then the lowest of them, so it holds on every set
fitted (catalogs of 132 tools and of 2,800 alike), not only on the pool. A set with too few
answerable rows for its own bound (rank 0) only counts in the pool. A file without fitted weights
abstains on the top cosine alone.

One refusal the score cannot express is made apart from it: a request none of whose top tools
does what it asks (:func:`action_unsupported`) and whose score clears the bar by less than
``action_gate`` is refused too (the action gate, fit by calibration_fit._fit_action_gate to refuse
the most no-tool dev rows while adding at most ``gate_false_abstain`` of each set's answerable rows
to false abstention). Fit on dev with a 1% budget and read on the test rows of eval/RESULTS.md (margin
1.0): near-misses refused .220 -> .268 on human-registry, .318 -> .364 on human-mcpzero, .286 ->
.314 on human-mscbench and .305 -> .439 in the 30-tool personal catalog, chat .667 -> .731 and
.680 -> .720, for false abstention +.004, +.003, +.000 and +.014 there (MetaTool +.004, MSC-Bench
+.004).

``temperature`` and ``mix`` are chosen by two-fold cross-fitting: q̂ from one half of the
reachable rows, mean k measured on the other, averaged over both ways round; the pair with the
smallest mean k wins and q̂ is then computed on all reachable rows. Choosing on one half and
computing q̂ on the other (as before) kept the choice out of the quantile but made it unstable:
refit on halves of the MSC-Bench + MCP-Zero dev rows (6 random splits), it picked 8 different
pairs and handed off a mean k of up to 3.8 on the held-out half (mean 2.25); cross-fitted, the
mean k on the held-out half stayed at most 2.1 (mean 1.8) with the same coverage. Choosing one of
35 pairs on the rows that also set q̂ makes the coverage slightly optimistic; the harness reports
the coverage reached on test rows.

This module holds the fitted model and how search reads it; fitting it is
:mod:`votr_mcp.retrieval.calibration_fit` (abstention: :mod:`votr_mcp.retrieval.abstention_fit`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, field
from pathlib import Path
from typing import Annotated, Any, Protocol

import numpy as np
from numpy.typing import NDArray
from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic.dataclasses import dataclass

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.evidence import EVIDENCE, no_evidence
from votr_mcp.retrieval.formulas import softmax
from votr_mcp.retrieval.null_model import null_threshold
from votr_mcp.settings import describe

Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]

__all__ = [
    "ALLOWED_K",
    "Calibration",
    "Scored",
    "confidences",
    "conformal_quantile",
    "lower_quantile",
    "check_levels",
    "ABSTAIN_FEATURES",
    "abstain_features",
    "abstain_reason",
    "action_unsupported",
    "abstain_score",
    "bounded_rank",
    "catalog_bar",
    "choose_k",
    "shipped_calibration",
    "SHIPPED_PATH",
]

ALLOWED_K = (1, 3, 5)
SHIPPED_PATH = Path(__file__).with_name("calibration.json")
# Below 0.05 the runner-up's p falls to ~1e-13, and a threshold that small turns on float noise
# (ONNX and torch vectors differ by 1e-4); with the query adapter, 0.03 and 0.05 gave the same k.
ABSTAIN_FEATURES = EVIDENCE
_BIAS = "bias"


class Scored(Protocol):
    """What calibration reads from a search result (SearchResult satisfies it)."""

    @property
    def ranked_keys(self) -> Sequence[ToolKey]: ...
    @property
    def cosines(self) -> NDArray[np.float64]: ...
    @property
    def relative(self) -> NDArray[np.float64]: ...
    @property
    def lexical(self) -> NDArray[np.float64]: ...
    @property
    def evidence(self) -> Mapping[str, float]: ...


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class Calibration:
    """Fitted thresholds for adaptive k and abstention, with how they were obtained. A pydantic
    dataclass: a calibration file with an unknown field, a share outside [0, 1], a non-finite
    number or a weight for an unknown feature is refused, saying which."""

    coverage: Share = 0.97
    temperature: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] = 0.05
    mix: Share = 0.5
    set_threshold: Finite = 0.5
    abstain_threshold: Finite = 0.0
    # Abstain below this quantile of the null requests' scores in the catalog searched (null_model.py);
    # None: below abstain_threshold, whatever the catalog.
    null_quantile: Share | None = None
    # ... and below this score in any catalog, where it is the higher bar (a small catalog, whose null
    # requests match nothing and set a low one); None: the null quantile alone.
    abstain_floor: Finite | None = None
    # Abstention weights by feature name (plus "bias"): logistic, retuned for refusals; empty: the top cosine alone.
    abstain_weights: dict[str, Finite] = field(default_factory=dict)
    false_abstain: Share = 0.03
    # Probability that false abstention stays within false_abstain (0: only in expectation; older files).
    abstain_confidence: Share = 0.0
    n_rows: Annotated[int, Field(ge=0)] = 0
    model_id: str = ""
    source: str = "defaults (not fitted)"
    measured: dict[str, float] = field(default_factory=dict)
    # (high, medium): the abstention-score margins over the catalog's threshold that the tiers
    # read (tiers.py); None (older files): tiers from the ranked list's confidences alone.
    tier_margins: tuple[Finite, Finite] | None = None
    # A request whose action no ranked tool does (:func:`action_unsupported`) and whose score clears
    # the catalog's bar by less than this is refused (:meth:`action_gated`); None (older files): never.
    action_gate: Finite | None = None
    # What the action gate may add to false abstention: the share of each fitted set's answerable dev
    # rows (the human-style sets counted together, as for the bar).
    gate_false_abstain: Share = 0.0

    @field_validator("abstain_weights")
    @classmethod
    def _known_features(cls, weights: dict[str, float]) -> dict[str, float]:
        bad = set(weights) - {*ABSTAIN_FEATURES, _BIAS}
        if bad:
            raise ValueError(f"unknown features {sorted(bad)} (known: {', '.join(ABSTAIN_FEATURES)}, {_BIAS})")
        return weights


    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Calibration:
        if not isinstance(data, Mapping):
            raise RetrievalError(f"a calibration is a JSON object, got {type(data).__name__}; refit it with `votr-mcp calibrate`")
        try:
            return cls(**{k: v for k, v in data.items() if k not in _RETIRED})
        except ValidationError as exc:
            raise RetrievalError(f"bad calibration: {describe(exc)}; refit it with `votr-mcp calibrate`") from None

    def abstain_score(self, evidence: Mapping[str, float]) -> float:
        """The score abstention compares with ``abstain_threshold`` (abstain when below); without
        fitted weights, the top cosine alone."""
        features = abstain_features(evidence)
        if self.abstain_weights:
            return abstain_score(features, self.abstain_weights)
        return features["top_cosine"]

    def action_gated(self, evidence: Mapping[str, float], margin: float) -> bool:
        """Whether a request that clears the bar by ``margin`` is still refused: no ranked tool does
        what it asks (:func:`action_unsupported`) and it clears the bar by less than the gate."""
        return self.action_gate is not None and margin < self.action_gate and action_unsupported(evidence)

    def abstains(self, evidence: Mapping[str, float]) -> bool:
        return self.abstain_score(evidence) < self.abstain_threshold

    def bar(self, null_scores: NDArray[np.floating] | None = None) -> float:
        """The abstention score a request must reach in a catalog whose null requests score
        ``null_scores`` (:func:`catalog_bar`)."""
        return catalog_bar(null_scores, self.null_quantile, self.abstain_threshold, self.abstain_floor)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            return cls.from_mapping(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, TypeError) as exc:
            raise RetrievalError(f"cannot read calibration '{path}': {exc}; refit it with `votr-mcp calibrate`") from exc


def shipped_calibration() -> Calibration | None:
    """The calibration shipped with the package, or None when absent."""
    return Calibration.load(SHIPPED_PATH) if SHIPPED_PATH.is_file() else None


def catalog_bar(null_scores: NDArray[np.floating] | None, null_quantile: float | None, fixed: float,
                floor: float | None) -> float:
    """The abstention bar of one catalog: the ``null_quantile`` of its null requests' scores
    (null_model.py; ``fixed`` without a quantile or without scores), and at least ``floor``."""
    bar = fixed if null_quantile is None or null_scores is None else null_threshold(null_scores, null_quantile)
    return bar if floor is None else max(bar, floor)


def confidences(cosines: NDArray[np.floating], relative: NDArray[np.floating], temperature: float, mix: float) -> NDArray[np.float64]:
    """p_i over a ranked list (see the module docstring)."""
    z = mix * np.asarray(relative, dtype=np.float64) + (1.0 - mix) * np.asarray(cosines, dtype=np.float64)
    return softmax(z, temperature)


def conformal_quantile(scores: NDArray[np.floating], coverage: float) -> float:
    """Split-conformal q̂: the ⌈(n+1)·coverage⌉-th smallest non-conformity score (1.0 if beyond n)."""
    s = np.sort(np.asarray(scores, dtype=np.float64))
    n = len(s)
    if n == 0:
        raise RetrievalError("cannot calibrate on zero rows; the calibration split has no answerable queries")
    rank = math.ceil((n + 1) * coverage)
    return 1.0 if rank > n else float(s[rank - 1])


def check_levels(coverage: float, false_abstain: float, abstain_confidence: float) -> None:
    """Raise RetrievalError unless coverage is in (0, 1) and the other two in [0, 1)."""
    if not 0 < coverage < 1 or not 0 <= false_abstain < 1 or not 0 <= abstain_confidence < 1:
        raise RetrievalError(f"coverage must be in (0, 1), false_abstain and abstain_confidence in [0, 1); "
                             f"got {coverage}, {false_abstain} and {abstain_confidence}")


def lower_quantile(values: NDArray[np.floating], rate: float, confidence: float = 0.0) -> float:
    """A threshold under which at most ``rate`` of new rows fall: the ⌊(n+1)·rate⌋-th smallest value
    (in expectation over the rows drawn), or with ``confidence`` c > 0 the largest rank r with
    P(Binomial(n, rate) ≤ r − 1) ≤ 1 − c (with probability c over the rows drawn). −inf when the
    rank is 0, i.e. too few rows to abstain safely."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    rank = bounded_rank(len(v), rate, confidence)
    return float("-inf") if rank < 1 else float(v[rank - 1])


def bounded_rank(n: int, rate: float, confidence: float = 0.0) -> int:
    """The rank r of :func:`lower_quantile` among ``n`` rows (0: too few rows): at most r − 1 rows fall
    under the r-th smallest, which keeps the miss rate of new rows at most ``rate`` (in expectation,
    or with probability ``confidence`` over the rows drawn)."""
    if confidence > 0:
        from scipy.stats import binom

        ranks = np.arange(1, n + 1)
        ok = ranks[binom.cdf(ranks - 1, n, rate) <= 1.0 - confidence]
        return int(ok[-1]) if len(ok) else 0
    return math.floor((n + 1) * rate)


def choose_k(p: NDArray[np.floating], set_threshold: float, allowed: Sequence[int] = ALLOWED_K) -> int:
    """Size of {i : p_i ≥ set_threshold}, rounded up to an allowed k (at least the smallest)."""
    size = int(np.count_nonzero(np.asarray(p) >= set_threshold))
    for k in allowed:
        if size <= k:
            return k
    return allowed[-1]


# Fields older files carry that nothing reads any more (the lexical term of the abstention score
# before its logistic weights).
_RETIRED = frozenset({"abstain_lexical"})


def abstain_features(evidence: Mapping[str, float]) -> dict[str, float]:
    """The query-level evidence abstention reads, by name (see ABSTAIN_FEATURES and
    :mod:`votr_mcp.retrieval.evidence`); nothing ranked reads as no evidence."""
    base = no_evidence()
    return {name: float(evidence.get(name, base[name])) for name in ABSTAIN_FEATURES}


def action_unsupported(evidence: Mapping[str, float]) -> bool:
    """Whether the evidence says no ranked tool does the request's action: none of the first five
    says it does the verb the request leads with ("squash my last 4 commits"), the service it names
    has no tool that does it ("delete the Heroku app" where Heroku's tools list and read: evidence
    server_supported, added 2026-11-28 with the shipped gate of 4.0 kept; eval/RESULTS.md at bcff3d5:
    near-miss requests refused .540 -> .578 on the human test rows, pooled false abstention unchanged),
    or the tools that do it act on something else and either the first tool's action is another
    one ("put a password on budget.xlsx" where the spreadsheet tools set, but settings and layouts)
    or the request names what it acts on outright ("delete /tmp/old_report.pdf" where they delete
    sheets and images: evidence.object_given)."""
    return evidence.get("action_supported", 1.0) == 0.0 or evidence.get("server_supported", 1.0) == 0.0 or (
        evidence.get("object_supported", 1.0) == 0.0 and (
            evidence.get("action_fit", 1.0) == 0.0 or evidence.get("object_given", 0.0) == 1.0))


def abstain_score(features: dict[str, float], weights: dict[str, float]) -> float:
    """bias + Σ w_f · x_f: how much evidence the query has a fitting tool (a log-odds before the
    weights are retuned for refusals; only its order against the catalog's threshold matters)."""
    return weights.get(_BIAS, 0.0) + sum(w * features[name] for name, w in weights.items() if name != _BIAS)


def abstain_reason(score: float, threshold: float, features: dict[str, float], nearest: Sequence[str],
                   gated: bool = False) -> str:
    """Why a search abstained, naming the nearest tools as a low-confidence hint (never handed off:
    the agent should rephrase or name the service rather than call a guess). ``gated``: the action
    gate refused it (:meth:`Calibration.action_gated`), its score clearing the threshold."""
    shown = ", ".join(f"{name.replace('_', ' ')} {value:.2f}" for name, value in features.items())
    if gated:
        why = (f"no tool here does what it asks: the nearest ones do other actions or act on other things (score "
               f"{score:.2f}, only just over the bar {threshold:.2f}" + (f"; {shown})" if shown else ")"))
    else:
        why = f"no tool fits well (score {score:.2f} < {threshold:.2f}" + (f"; {shown})" if shown else ")")
    return why + (f". Nearest, low confidence: {', '.join(nearest)}" if nearest else "")
