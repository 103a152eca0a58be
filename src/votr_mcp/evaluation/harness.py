"""The benchmark harness: turn query rows into searches, run them, and score what came back.

A chain whose rows all share one text is one whole-task query and is searched once; any other
row is searched on its own. Accuracy runs on query vectors embedded in one batch (the same
vectors serve every ablation variant); latency is timed separately, end to end with the query
embedded live, on a fixed sample of searches chosen by hash.

The harness sees retrieval through :class:`Searcher`, a narrow protocol; the adapter over the
real pipeline (:mod:`votr_mcp.evaluation.adapter`) embeds query texts and builds the variants.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.evaluation.data import QueryRow
from votr_mcp.evaluation.metrics import Gold, Outcome, distinct_steps

__all__ = [
    "Progress",
    "Returned",
    "Searcher",
    "Unit",
    "build_units",
    "cap_per_kind",
    "describe_units",
    "groups_of",
    "group_top_up",
    "latency_sample",
    "run_units",
    "stable_order",
    "time_units",
]

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Returned:
    """What one search gave back, reduced to what the metrics need."""

    ranked: tuple[ToolKey, ...]
    returned: tuple[ToolKey, ...]
    tokens: int | None = None
    search_ms: float | None = None
    """Time of the search alone, when the searcher measures it (else the harness times the call)."""
    tier: str | None = None
    """The confidence tier of the first tool handed off ("none" when nothing was); None when the searcher has no tiers."""


class Searcher(Protocol):
    """Retrieval as the harness sees it: one pipeline variant over one catalog."""

    def search(self, unit: Unit, vectors: Mapping[str, NDArray[np.float32]] | None) -> Returned:
        """Search for ``unit`` with its precomputed query vectors (by text); with None the query
        is embedded live, as a user's search would be (for timing)."""
        ...


@dataclass(frozen=True, slots=True)
class Unit:
    """One search to run: a query row, or a whole-task chain searched once."""

    id: str
    query: str
    kind: str
    steps: tuple[Gold, ...]
    groups: tuple[str, ...]
    whole_task: bool = False
    chain: str | None = None
    rows: int = 1
    server_intent: str | None = None
    tool_intent: str | None = None


def stable_order(key: str) -> int:
    """A hash rank that is the same on every machine: for sampling and capping by rule."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)


def groups_of(row: QueryRow, *, whole_task: bool = False) -> tuple[str, ...]:
    """Report groups of a row: its kind, its level (alone and by kind) and its style fields."""
    labels = [f"kind:{row.kind}"]
    if whole_task:
        labels.append("task:whole")
    level = row.meta.get("level")
    if level is not None:
        labels += [f"level:{level}", f"level:{level}/{row.kind}"]
    for field in ("flavor", "group", "style"):
        value = row.meta.get(field)
        if isinstance(value, (str, int)):
            labels.append(f"{field}:{value}")
    return tuple(labels)


def cap_per_kind(rows: Sequence[QueryRow], cap: int | None) -> list[QueryRow]:
    """At most ``cap`` tasks of each kind, the tasks chosen by hash; chains stay whole.

    Used for large sets (metatool has 22k rows) and ``--limit``: the same rows every run.
    """
    if cap is None:
        return list(rows)
    if cap < 1:
        raise ValueError(f"cap must be at least 1, got {cap}")
    tasks: dict[str, tuple[str, str]] = {}
    for row in rows:
        tasks.setdefault(row.task, (row.kind, row.task))
    keep: set[str] = set()
    by_kind: dict[str, list[str]] = {}
    for kind, task in tasks.values():
        by_kind.setdefault(kind, []).append(task)
    for members in by_kind.values():
        keep.update(sorted(members, key=stable_order)[:cap])
    return [row for row in rows if row.task in keep]


def build_units(rows: Sequence[QueryRow]) -> list[Unit]:
    """One unit per search, in first-seen order of the rows."""
    chains: dict[str, list[QueryRow]] = {}
    for row in rows:
        if row.chain is not None:
            chains.setdefault(row.chain, []).append(row)
    units: list[Unit] = []
    done: set[str] = set()
    for row in rows:
        chain = row.chain
        members = chains.get(chain) if chain is not None else None
        if chain is not None and members is not None and len({m.query for m in members}) == 1:
            if chain in done:
                continue
            done.add(chain)
            ordered = sorted(members, key=lambda m: (m.step is None, m.step or 0))
            units.append(Unit(
                id=chain, query=row.query, kind=row.kind,
                steps=distinct_steps(m.gold for m in ordered),
                groups=groups_of(row, whole_task=True), whole_task=True, chain=row.chain,
                rows=len(members), server_intent=row.server_intent, tool_intent=row.tool_intent,
            ))
            continue
        units.append(Unit(
            id=row.id, query=row.query, kind=row.kind,
            steps=(frozenset(row.gold),) if row.gold else (), groups=groups_of(row),
            chain=row.chain, server_intent=row.server_intent, tool_intent=row.tool_intent,
        ))
    return units


def latency_sample(units: Sequence[Unit], size: int) -> list[Unit]:
    """The ``size`` units first in hash order: a fixed sample for timing."""
    return sorted(units, key=lambda u: stable_order(u.id))[:size]


def group_top_up(units: Sequence[Unit], sample: Sequence[Unit], least: int) -> list[Unit]:
    """More units to time, in hash order, until every group has ``least`` timed searches (or all of
    its own): a small group (no-tool rows, a level) then gets latency figures too."""
    timed = {u.id for u in sample}
    count = Counter(g for u in sample for g in u.groups)
    extra: list[Unit] = []
    for unit in sorted(units, key=lambda u: stable_order(u.id)):
        if unit.id not in timed and any(count[g] < least for g in unit.groups):
            extra.append(unit)
            timed.add(unit.id)
            count.update(unit.groups)
    return extra


def _outcome(unit: Unit, got: Returned, latency_ms: float | None = None, search_ms: float | None = None) -> Outcome:
    return Outcome(
        id=unit.id, kind=unit.kind, steps=unit.steps, ranked=got.ranked, returned=got.returned,
        groups=unit.groups, whole_task=unit.whole_task,
        chain=None if unit.whole_task else unit.chain, rows=unit.rows,
        latency_ms=latency_ms, tokens=got.tokens, search_ms=search_ms, tier=got.tier,
    )


def time_units(searcher: Searcher, units: Sequence[Unit], progress: Progress | None = None) -> dict[str, float]:
    """End-to-end milliseconds per unit, query embedded live; one untimed warm-up first."""
    if not units:
        return {}
    searcher.search(replace(units[0], query=units[0].query + " (warm-up)"), None)
    timings: dict[str, float] = {}
    for done, unit in enumerate(units, start=1):
        start = time.perf_counter()
        searcher.search(unit, None)
        timings[unit.id] = (time.perf_counter() - start) * 1000.0
        if progress is not None:
            progress(done, len(units))
    return timings


def run_units(
    searcher: Searcher,
    units: Sequence[Unit],
    vectors: Sequence[Mapping[str, NDArray[np.float32]]],
    *,
    timings: Mapping[str, float] | None = None,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Search every unit with its precomputed query vectors; attach timings where measured."""
    if len(vectors) != len(units):
        raise ValueError(f"{len(vectors)} query vector sets for {len(units)} searches; embed every unit's texts once")
    outcomes: list[Outcome] = []
    timings = timings or {}
    for done, (unit, prepared) in enumerate(zip(units, vectors), start=1):
        start = time.perf_counter()
        got = searcher.search(unit, prepared)
        elapsed = (time.perf_counter() - start) * 1000.0
        outcomes.append(_outcome(unit, got, timings.get(unit.id), got.search_ms if got.search_ms is not None else elapsed))
        if progress is not None and (done % 50 == 0 or done == len(units)):
            progress(done, len(units))
    return outcomes


def describe_units(units: Sequence[Unit]) -> dict[str, Any]:
    """Counts that say what was evaluated (printed above the tables)."""
    return {
        "searches": len(units),
        "rows": sum(u.rows for u in units),
        "whole_task_queries": sum(1 for u in units if u.whole_task),
        "no_tool": sum(1 for u in units if not u.steps),
    }
