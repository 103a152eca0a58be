"""One evaluation of one query set: load, split, cap, search, score; optionally every ablation variant.

Shared by ``votr-mcp eval`` and eval/make_results.py so that the command line and the results
file can never disagree about how a figure was produced.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import CatalogError
from votr_mcp.evaluation.data import DEV_SHARE, Split, check_gold, load_queries, queries_of, select_split
from votr_mcp.evaluation.harness import (
    Searcher,
    Unit,
    build_units,
    cap_per_kind,
    describe_units,
    group_top_up,
    latency_sample,
    run_units,
    time_units,
)
from votr_mcp.evaluation.metrics import MIN_LATENCY_SAMPLES, summarize, summarize_groups, timed_percentiles

__all__ = ["EvalSpec", "SearcherFactory", "evaluate", "load_average", "machine", "SPLIT_RULE"]

log = logging.getLogger(__name__)

SPLIT_RULE = (
    f"dev = tasks (a chain, or a row without one) whose SHA-256(task id) first 8 hex digits mod 100 < {DEV_SHARE}; "
    "test = the rest. Every threshold, weight and calibration is fit on dev; figures are reported on test."
)


@dataclass(frozen=True, slots=True)
class EvalSpec:
    """What to evaluate: a set folder, an optional other query file, the split and how much."""

    data: Path
    queries: Path | None = None
    split: Split = "test"
    limit: int | None = None
    latency_samples: int = 200
    ablation: bool = False
    ablation_limit: int | None = None
    """Run the ablation on at most this many tasks per kind (hash-chosen); the full pipeline's
    own figures still cover every selected row, and the ablation has its own 'full' row."""
    distractors: tuple[Path, ...] = ()
    """Catalogs whose tools join the search as distractors (named in the report's set name)."""

    @property
    def query_file(self) -> Path:
        return self.queries or queries_of(self.data)

    @property
    def name(self) -> str:
        suffix = "" if self.queries is None or self.queries.stem in ("queries", self.data.name) else f" ({self.queries.stem})"
        return self.data.name + suffix + "".join(f" + {d.name}" for d in self.distractors)


class SearcherFactory(Protocol):
    """Builds a searcher per pipeline variant over one catalog (sharing its indexes)."""

    def variants(self) -> list[str]:
        """Ablation variant names; the first is the full pipeline."""
        ...

    def searcher(self, variant: str) -> Searcher: ...

    def embed(self, units: Sequence[Unit]) -> list[Mapping[str, NDArray[np.float32]]]:
        """Every query text any variant embeds for each unit, in one batch (cached)."""
        ...

    def describe(self) -> str:
        """The pipeline and calibration in one line, for the report."""
        ...

    def has_tool(self, key: ToolKey) -> bool:
        """Whether the catalog holds this (server, name): every gold tool must be searchable."""
        ...

    def tool_count(self) -> int:
        """How many tools the searched catalog holds."""
        ...

    def nominal_coverage(self) -> float | None:
        """The calibration's stated coverage level, to hold the measured coverage against."""
        ...

    def not_ablated(self) -> dict[str, str]:
        """Stages left out of the ablation because they cannot act here, with the reason."""
        ...


Progress = Callable[[str, int, int], None]


def machine() -> str:
    """Where figures were measured: they are only comparable on the same machine."""
    return f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def load_average() -> float | None:
    """The 1-minute load average: timings on a shared machine mean little without it."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def evaluate(spec: EvalSpec, factory: SearcherFactory, progress: Progress | None = None) -> dict[str, Any]:
    """Metrics (overall and per group) for ``spec``, plus the ablation when asked."""
    rows = select_split(load_queries(spec.query_file), spec.split)
    rows = cap_per_kind(rows, spec.limit)
    units = build_units(rows)
    if not units:
        hint = "it has no rows" if spec.split == "all" else "try --split all"
        raise CatalogError(f"no query rows in the {spec.split} split of {spec.query_file}; {hint}")
    check_gold(rows, factory.has_tool, spec.query_file)
    report: dict[str, Any] = {
        "set": spec.name,
        "queries": str(spec.query_file),
        "split": spec.split,
        "limit_per_kind": spec.limit,
        "counts": describe_units(units),
        "nominal_coverage": factory.nominal_coverage(),
        "tools": factory.tool_count(),
    }
    full = factory.searcher(factory.variants()[0])

    def step(label: str) -> Callable[[int, int], None] | None:
        return None if progress is None else (lambda done, total: progress(label, done, total))

    # Timed searches embed their query texts live (no vectors passed, no cache consulted), as a
    # user's search would; they run first so the batch pass cannot disturb them.
    sample = latency_sample(units, spec.latency_samples)
    top_up = group_top_up(units, sample, MIN_LATENCY_SAMPLES) if sample else []
    load_before = load_average()
    timings = time_units(full, [*sample, *top_up], step("timing"))
    report["load_average"] = {"before_timing": load_before, "after_timing": load_average()}
    started = time.perf_counter()
    vectors = factory.embed(units)
    log.info("embedded %d queries in %.1f s", len(units), time.perf_counter() - started)
    outcomes = run_units(full, units, vectors, timings=timings, progress=step("searching"))
    report["overall"] = summarize(outcomes)
    # The overall figure stays on the fixed sample; the top-ups only serve small groups.
    report["overall"]["latency_ms"].update(timed_percentiles(outcomes, only={u.id for u in sample}))
    report["groups"] = summarize_groups(outcomes)
    if spec.ablation:
        subset = units
        if spec.ablation_limit is not None:
            keep = {row.task for row in cap_per_kind(rows, spec.ablation_limit)}
            subset = [u for u in units if (u.chain or u.id) in keep]
        index = {u.id: i for i, u in enumerate(units)}
        subset_vectors = [vectors[index[u.id]] for u in subset]
        variants: dict[str, Any] = {}
        for name in factory.variants():
            if name == factory.variants()[0] and subset is units:
                variants[name] = report["overall"]
                continue
            results = run_units(factory.searcher(name), subset, subset_vectors, progress=step(name))
            variants[name] = summarize(results)
        report["ablation"] = variants
        report["ablation_counts"] = describe_units(subset)
        report["ablation_limit_per_kind"] = spec.ablation_limit
        report["not_ablated"] = factory.not_ablated()
    return report

