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

Abstention reads the evidence e = max_i (cos_i + λ · lex_i) over the ranked tools, where lex_i is
the TF-IDF cosine: a tool must be close in meaning or share the query's words. Its threshold is
the conformal lower bound that keeps false abstention on answerable rows at most
``false_abstain`` (the ⌊(n+1)·false_abstain⌋-th smallest e), over ALL answerable rows pooled —
so the bound holds for rows exchangeable with that pool, not per set or per query style: the
shipped file pools four sets' dev rows with a per-set cap so that short chat-style queries
(MetaTool) are in the pool, not only long generated ones. Relative scores (top cosine's z-score
or margin over the whole catalog's cosines) separated no-tool rows worse on dev, so e stays absolute. λ is the one choice no-tool rows
inform: among a small grid, the λ that abstains most on the calibration no-tool rows at that
bound (1.0 when there are none).

``temperature`` and ``mix`` are chosen on one half of the calibration rows (smallest mean k at
the target coverage) and q̂ is computed on the other half, so the choice does not eat into the
guarantee.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.formulas import softmax

__all__ = [
    "ALLOWED_K",
    "Calibration",
    "Scored",
    "confidences",
    "conformal_quantile",
    "lower_quantile",
    "abstain_evidence",
    "abstain_reason",
    "choose_k",
    "fit",
    "shipped_calibration",
    "SHIPPED_PATH",
]

ALLOWED_K = (1, 3, 5)
SHIPPED_PATH = Path(__file__).with_name("calibration.json")
_TEMPERATURES = (0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)
_MIXES = (0.0, 0.25, 0.5, 0.75, 1.0)
_LEXICAL_WEIGHTS = (0.0, 0.5, 1.0, 1.5)


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


@dataclass(frozen=True, slots=True)
class Calibration:
    """Fitted thresholds for adaptive k and abstention, with how they were obtained."""

    coverage: float = 0.95
    temperature: float = 0.05
    mix: float = 0.5
    set_threshold: float = 0.5
    abstain_threshold: float = 0.0
    abstain_lexical: float = 1.0
    false_abstain: float = 0.03
    n_rows: int = 0
    model_id: str = ""
    source: str = "defaults (not fitted)"
    measured: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> "Calibration":
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise RetrievalError(f"calibration has unknown fields {sorted(unknown)}; refit it with `votr-mcp calibrate`")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Calibration":
        try:
            return cls.from_mapping(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, TypeError) as exc:
            raise RetrievalError(f"cannot read calibration '{path}': {exc}; refit it with `votr-mcp calibrate`") from exc


def shipped_calibration() -> Calibration | None:
    """The calibration shipped with the package, or None when absent."""
    return Calibration.load(SHIPPED_PATH) if SHIPPED_PATH.is_file() else None


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


def lower_quantile(values: NDArray[np.floating], rate: float) -> float:
    """The ⌊(n+1)·rate⌋-th smallest value: a threshold under which at most ``rate`` of new rows fall
    (−inf when that rank is 0, i.e. too few rows to abstain safely)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    rank = math.floor((len(v) + 1) * rate)
    return float("-inf") if rank < 1 else float(v[rank - 1])


def choose_k(p: NDArray[np.floating], set_threshold: float, allowed: Sequence[int] = ALLOWED_K) -> int:
    """Size of {i : p_i ≥ set_threshold}, rounded up to an allowed k (at least the smallest)."""
    size = int(np.count_nonzero(np.asarray(p) >= set_threshold))
    for k in allowed:
        if size <= k:
            return k
    return allowed[-1]


def abstain_evidence(cosines: NDArray[np.floating], lexical: NDArray[np.floating], weight: float) -> float:
    """max_i (cos_i + weight · lex_i): how well the best-supported ranked tool fits the query."""
    if len(cosines) == 0:
        return float("-inf")
    lex = np.asarray(lexical, dtype=np.float64) if len(lexical) == len(cosines) else np.zeros(len(cosines))
    return float(np.max(np.asarray(cosines, dtype=np.float64) + weight * lex))


def abstain_reason(evidence: float, threshold: float, weight: float, nearest: Sequence[str]) -> str:
    """Why a search abstained, naming the nearest tools as a low-confidence hint (never handed off:
    the agent should rephrase or name the service rather than call a guess)."""
    why = f"no tool fits well (cosine + {weight:g}·word overlap {evidence:.2f} < {threshold:.2f})"
    return why + (f". Nearest, low confidence: {', '.join(nearest)}" if nearest else "")


def _gold_p(result: Scored, gold: Collection[ToolKey], temperature: float, mix: float) -> float:
    p = confidences(result.cosines, result.relative, temperature, mix)
    best = 0.0
    for i, key in enumerate(result.ranked_keys):
        if key in gold:
            best = max(best, float(p[i]))
    return best


def _mean_k(results: Sequence[Scored], threshold: float, temperature: float, mix: float) -> float:
    return float(np.mean([choose_k(confidences(r.cosines, r.relative, temperature, mix), threshold) for r in results]))


def fit(
    results: Sequence[Scored],
    golds: Sequence[Collection[ToolKey]],
    *,
    coverage: float = 0.95,
    false_abstain: float = 0.03,
    model_id: str = "",
    source: str = "",
    k_rows: Sequence[bool] | None = None,
) -> Calibration:
    """Fit adaptive-k and abstention thresholds on calibration rows.

    ``results[i]`` is the search result for a row and ``golds[i]`` its gold tools (empty for a
    no-tool row). Only answerable rows (non-empty gold) set the thresholds. ``k_rows`` (one flag
    per row, default all) picks the rows that set adaptive k; abstention always reads every row, so
    k can be fit on the sets whose query style it serves while the abstention pool spans all
    styles. Pure: reads nothing else, returns a new Calibration.
    """
    if len(results) != len(golds):
        raise RetrievalError(f"fit got {len(results)} results but {len(golds)} gold sets; pass one gold set per result")
    if not 0 < coverage < 1 or not 0 <= false_abstain < 1:
        raise RetrievalError(f"coverage must be in (0, 1) and false_abstain in [0, 1); got {coverage}, {false_abstain}")
    if k_rows is not None and len(k_rows) != len(results):
        raise RetrievalError(f"fit got {len(k_rows)} k_rows flags for {len(results)} results; pass one flag per result")
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
    choose_rows, quantile_rows = reachable[0::2], reachable[1::2]
    best: tuple[float, float, float] | None = None
    for temperature in _TEMPERATURES:
        for mix in _MIXES:
            scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in choose_rows])
            q = conformal_quantile(scores, coverage)
            mean_k = _mean_k([r for r, _ in choose_rows], 1.0 - q, temperature, mix)
            if best is None or mean_k < best[0] - 1e-9:
                best = (mean_k, temperature, mix)
    assert best is not None
    _, temperature, mix = best
    scores = np.array([1.0 - _gold_p(r, g, temperature, mix) for r, g in quantile_rows])
    q_hat = conformal_quantile(scores, coverage)
    no_tool = [r for r, g in zip(results, golds) if not g]
    best_lexical, abstain_threshold, best_rate = 1.0, float("-inf"), -1.0
    for weight in _LEXICAL_WEIGHTS if no_tool else (1.0,):
        threshold = lower_quantile(np.array([abstain_evidence(r.cosines, r.lexical, weight) for r, _ in answerable]), false_abstain)
        rate = float(np.mean([abstain_evidence(r.cosines, r.lexical, weight) < threshold for r in no_tool])) if no_tool else 0.0
        if rate > best_rate + 1e-9:
            best_lexical, abstain_threshold, best_rate = weight, threshold, rate
    return Calibration(
        coverage=coverage,
        temperature=temperature,
        mix=mix,
        # A p of exactly 1 − q̂ must stay in the set; the tiny slack absorbs float rounding.
        set_threshold=max(0.0, 1.0 - q_hat - 1e-12),
        abstain_threshold=abstain_threshold if math.isfinite(abstain_threshold) else -1.0,
        abstain_lexical=best_lexical,
        false_abstain=false_abstain,
        n_rows=len(answerable),
        model_id=model_id,
        source=source,
    )
