"""Retrieval metrics: one small pure function per formula, and the summary the harness reports.

The unit of scoring is an :class:`Outcome`: what one search returned for one thing the agent
asked. That is a query row (a single-step row, a no-tool row, or one step of a chain whose steps
have their own text), or a whole-task query (a chain whose rows all share one text, searched
once). Gold is any-of: a step is served when any of its gold tools is present.

Definitions (also printed at the top of eval/RESULTS.md):

* ``top1/top3/top5``: a gold tool is within the first 1/3/5 of the ranked list; ``mrr10`` is
  1/rank of the first gold tool within 10 (else 0). Over answerable rows scored one by one.
* ``handoff``: a gold tool is in what search actually returned at its adaptive k. Over every
  answerable step, counting each distinct step of a whole-task query against that query's
  returned tools.
* ``coverage``: handoff over answerable rows scored one by one; the figure to hold against the
  calibration's nominal level (its guarantee is per query, not per step of a task).
* ``mean_k``: tools returned per search. ``abstain_no_tool``: share of no-tool rows that got
  zero tools. ``false_abstain``: share of answerable rows that got zero tools (every row of a
  whole-task query counts, since its one search answers them all).
* ``task_recall5/10``: for whole-task queries, the share of the task's distinct gold steps found
  in the first 5/10 of the ranked list, averaged over tasks.
* ``chain_success``: share of chains whose every step was handed off (for a whole-task query,
  every distinct step is in its returned tools).
* ``latency_ms``: p50/p95 of end-to-end search time (query embedding included) on a fixed sample,
  topped up so that each group has at least 20 timed searches (all of them in a smaller group);
  the overall figure uses the fixed sample alone;
  ``no_embed_p50/p95``: the same over every search with its query vectors precomputed (the
  pipeline's own cost). ``tokens_per_search``: mean exact cl100k tokens of what search returns.
* ``tiers``: per confidence tier of the first tool handed off (high, medium, low; none when search
  abstained), over rows scored one by one and no-tool rows: how many searches and the share whose
  first tool serves the request (for none: the share that had no tool to find).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from votr_mcp.catalog.models import ToolKey

__all__ = [
    "METRIC_KEYS",
    "MIN_LATENCY_SAMPLES",
    "Outcome",
    "distinct_steps",
    "first_gold_rank",
    "hit_at",
    "reciprocal_rank",
    "step_recall",
    "percentile",
    "summarize",
    "summarize_groups",
    "SHARE_OF",
    "timed_percentiles",
    "wilson_interval",
]

METRIC_KEYS = (
    "n", "searches", "top1", "top3", "top5", "mrr10", "handoff", "mean_k", "abstain_no_tool",
    "false_abstain", "coverage", "task_recall5", "task_recall10", "chain_success", "latency_ms",
    "tokens_per_search",
)

Gold = frozenset[ToolKey]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one search returned for one unit, and what would have served it.

    ``steps`` holds one gold set per distinct step: one for a single row or a chain step, several
    for a whole-task query, none for a no-tool row. ``chain`` names the chain a per-step row
    belongs to (None otherwise). ``rows`` is how many query rows this search stands for.
    """

    id: str
    kind: str
    steps: tuple[Gold, ...]
    ranked: tuple[ToolKey, ...]
    returned: tuple[ToolKey, ...]
    groups: tuple[str, ...] = ()
    whole_task: bool = False
    chain: str | None = None
    rows: int = 1
    latency_ms: float | None = None
    tokens: int | None = None
    search_ms: float | None = None
    tier: str | None = None  # the first handed-off tool's confidence tier, "none" when nothing was handed off

    @property
    def answerable(self) -> bool:
        return bool(self.steps)


def first_gold_rank(ranked: Sequence[ToolKey], gold: Gold) -> int | None:
    """1-based position of the first gold tool in ``ranked``, or None when absent."""
    for position, key in enumerate(ranked, start=1):
        if key in gold:
            return position
    return None


def hit_at(ranked: Sequence[ToolKey], gold: Gold, k: int) -> bool:
    """Whether any gold tool is among the first ``k`` ranked tools (Hit@k / Success@k)."""
    rank = first_gold_rank(ranked[:k], gold)
    return rank is not None


def reciprocal_rank(ranked: Sequence[ToolKey], gold: Gold, cutoff: int = 10) -> float:
    """1/rank of the first gold tool within ``cutoff`` (MRR@cutoff's per-query term), else 0."""
    rank = first_gold_rank(ranked[:cutoff], gold)
    return 0.0 if rank is None else 1.0 / rank


def step_recall(ranked: Sequence[ToolKey], steps: Sequence[Gold], k: int) -> float:
    """Share of ``steps`` with a gold tool among the first ``k`` of ``ranked``."""
    if not steps:
        raise ValueError("step_recall needs at least one gold step; no-tool queries have none")
    head = set(ranked[:k])
    return sum(1 for gold in steps if head & gold) / len(steps)


def distinct_steps(golds: Iterable[Iterable[ToolKey]]) -> tuple[Gold, ...]:
    """The distinct gold sets of a chain, first seen first (a chain may use one tool twice)."""
    seen: dict[Gold, None] = {}
    for gold in golds:
        seen.setdefault(frozenset(gold), None)
    return tuple(g for g in seen if g)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation), or None for no values."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def _row_share(outcomes: Sequence[Outcome], test: Any) -> float | None:
    """The share of the rows behind ``outcomes`` whose search passes ``test`` (a whole-task query
    stands for each of its rows)."""
    rows = sum(o.rows for o in outcomes)
    return sum(o.rows for o in outcomes if test(o)) / rows if rows else None


# Fewer timed searches than this in a group give a percentile too noisy to print.
MIN_LATENCY_SAMPLES = 20


def timed_percentiles(outcomes: Sequence[Outcome], only: Collection[str] | None = None) -> dict[str, Any]:
    """p50/p95 of the end-to-end timings among ``outcomes`` (those whose id is in ``only``, if given),
    and how many there were; None when fewer than MIN_LATENCY_SAMPLES were timed, unless every
    outcome was (a small group)."""
    timed = [o.latency_ms for o in outcomes if o.latency_ms is not None and (only is None or o.id in only)]
    enough = len(timed) >= MIN_LATENCY_SAMPLES or (bool(timed) and len(timed) == len(outcomes))
    return {"p50": percentile(timed, 50) if enough else None, "p95": percentile(timed, 95) if enough else None,
            "samples": len(timed)}


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Every metric over ``outcomes``; None where a metric does not apply to them."""
    per_row = [o for o in outcomes if o.answerable and not o.whole_task]
    tasks = [o for o in outcomes if o.whole_task and o.answerable]
    no_tool = [o for o in outcomes if not o.answerable]
    answerable = [o for o in outcomes if o.answerable]

    def share(items: Sequence[Outcome], test: Any) -> float | None:
        return _mean([1.0 if test(o) else 0.0 for o in items])

    # One entry per answerable step: served when a gold tool is in that search's returned set.
    served = [bool(set(o.returned) & gold) for o in answerable for gold in o.steps]

    chains: dict[str, list[Outcome]] = {}
    for o in per_row:
        if o.chain is not None:
            chains.setdefault(o.chain, []).append(o)
    chain_ok = [all(set(o.returned) & o.steps[0] for o in members) for members in chains.values()]
    chain_ok += [all(set(o.returned) & gold for gold in o.steps) for o in tasks]

    ranking = [o.search_ms for o in outcomes if o.search_ms is not None]
    ranking_enough = len(ranking) >= MIN_LATENCY_SAMPLES
    counted = [float(o.tokens) for o in outcomes if o.tokens is not None]
    return {
        "n": sum(o.rows for o in outcomes),
        "searches": len(outcomes),
        "top1": share(per_row, lambda o: hit_at(o.ranked, o.steps[0], 1)),
        "top3": share(per_row, lambda o: hit_at(o.ranked, o.steps[0], 3)),
        "top5": share(per_row, lambda o: hit_at(o.ranked, o.steps[0], 5)),
        "mrr10": _mean([reciprocal_rank(o.ranked, o.steps[0], 10) for o in per_row]),
        "handoff": _mean([1.0 if s else 0.0 for s in served]),
        "mean_k": _mean([float(len(o.returned)) for o in outcomes]),
        "abstain_no_tool": share(no_tool, lambda o: not o.returned),
        "false_abstain": _row_share(answerable, lambda o: not o.returned),
        "coverage": share(per_row, lambda o: bool(set(o.returned) & o.steps[0])),
        "task_recall5": _mean([step_recall(o.ranked, o.steps, 5) for o in tasks]),
        "task_recall10": _mean([step_recall(o.ranked, o.steps, 10) for o in tasks]),
        "chain_success": _mean([1.0 if ok else 0.0 for ok in chain_ok]),
        "latency_ms": {
            **timed_percentiles(outcomes),
            # Every search of the accuracy pass, query vectors precomputed: the pipeline's own cost.
            "no_embed_p50": percentile(ranking, 50) if ranking_enough else None,
            "no_embed_p95": percentile(ranking, 95) if ranking_enough else None,
        },
        "tokens_per_search": _mean(counted),
        "tiers": tier_precision([*per_row, *no_tool]),
        # What each share above counts, for intervals: top-k, MRR and coverage count rows scored one by
        # one; hand-off counts answerable steps; the abstention shares count no-tool searches and answerable rows.
        "counts": {"rows_scored": len(per_row), "steps": len(served), "no_tool": len(no_tool),
                   "answerable": sum(o.rows for o in answerable), "tasks": len(tasks), "chains": len(chain_ok)},
    }


TIERS = ("high", "medium", "low", "none")


def tier_precision(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float | int | None]]:
    """Per confidence tier of the first tool handed off: how many searches got it (``n``) and the
    share whose first tool serves the request (``precision``; a no-tool row's tool never does). For
    "none" (nothing handed off) ``precision`` is the share of no-tool rows: abstention that was right."""
    out: dict[str, dict[str, float | int | None]] = {}
    for tier in TIERS:
        members = [o for o in outcomes if o.tier == tier]
        if tier == "none":
            right = [not o.answerable for o in members]
        else:
            right = [o.answerable and bool(o.returned) and o.returned[0] in o.steps[0] for o in members]
        out[tier] = {"n": len(members), "precision": _mean([1.0 if r else 0.0 for r in right])}
    return out


# The count each share metric is a share of (keys of a summary's "counts").
SHARE_OF = {"top1": "rows_scored", "top3": "rows_scored", "top5": "rows_scored", "coverage": "rows_scored",
            "handoff": "steps", "abstain_no_tool": "no_tool", "false_abstain": "answerable", "chain_success": "chains"}


def wilson_interval(share: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a binomial share over n trials (95% at z = 1.96; Wilson 1927).

    Unlike share ± z·sqrt(share(1 − share)/n) it stays inside [0, 1] and is not empty at 0 or 1, which
    matters here: several figures are 0.000 or above 0.97 over a few hundred rows."""
    if n <= 0:
        raise ValueError(f"an interval needs at least one trial, got n={n}")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"a share lies in [0, 1], got {share}")
    denominator = 1.0 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1.0 - share) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def summarize_groups(outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """:func:`summarize` per group label, labels in first-seen order."""
    members: dict[str, list[Outcome]] = {}
    for o in outcomes:
        for label in o.groups:
            members.setdefault(label, []).append(o)
    return {label: summarize(items) for label, items in members.items()}
