"""Fit the shipped calibration on the dev split of one or more benchmark sets.

Only dev rows are read. Each set is searched with its own catalog; the per-query results of all
sets are pooled and handed to the pipeline's pure ``fit``, so the thresholds are not tuned to one
catalog. Each text is adapted by the query adapter's fit that left its fold out (cross-fitting).
Whole-task queries are left out: the conformal guarantee is per query and need, and a
whole task's returned set is a union over its needs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import CatalogError, RetrievalError
from votr_mcp.evaluation.adapter import PipelineFactory
from votr_mcp.evaluation.data import fit_source, load_queries, queries_of, select_split
from votr_mcp.evaluation.harness import build_units, cap_per_kind
from votr_mcp.retrieval import SHIPPED_PATH, Calibration, SearchResult, fit

__all__ = ["calibrate_on", "dev_results", "warm_start"]

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def dev_results(data: Path, factory: PipelineFactory, limit: int | None,
                progress: Progress | None = None) -> tuple[list[SearchResult], list[frozenset[ToolKey]], list[str]]:
    """Search results, gold sets and styles (``meta.style``, "" without) of a set's dev rows
    (answerable and no-tool, not whole-task)."""
    rows = cap_per_kind(select_split(load_queries(queries_of(data)), "dev"), limit)
    units = [u for u in build_units(rows) if not u.whole_task]
    vectors = factory.embed(units)
    retriever = factory.retriever
    results: list[SearchResult] = []
    for done, (unit, prepared) in enumerate(zip(units, vectors), start=1):
        results.append(retriever.search(unit.query, query_vectors=prepared))
        if progress is not None and (done % 50 == 0 or done == len(units)):
            progress(data.name, done, len(units))
    golds = [frozenset(key for step in u.steps for key in step) for u in units]
    styles = [next((g[len("style:"):] for g in u.groups if g.startswith("style:")), "") for u in units]
    return results, golds, styles


def calibrate_on(datas: Sequence[Path], *, coverage: float = 0.97, false_abstain: float = 0.03,
                 abstain_confidence: float = 0.9, limit: int | None = None,
                 out: Path | None = None, cache_dir: Path | None = None, k_datas: Sequence[Path] | None = None,
                 bound_together: Sequence[Sequence[Path]] = (), fresh: bool = False,
                 progress: Progress | None = None) -> tuple[dict[str, Any], Path, dict[str, int]]:
    """Fit on the dev rows of every set in ``datas`` and save; returns (fitted fields, path, searches per set).

    With ``k_datas`` (a subset of ``datas``) only those sets' rows set adaptive k; every set's rows
    still set abstention, whose false-abstention bound holds on each set separately, or on each
    group of ``bound_together`` as one (sets of one style, each too small to bound alone). Unless
    ``fresh``, the calibration at the target path, when it is one for the same embedding model
    (:func:`warm_start`), is the one replaced: the abstention retuning climbs from its weights first
    and its temperature and mix stay unless others make k clearly smaller (calibration_fit.fit's ``previous``).
    """
    k_names = None if not k_datas else {d.name for d in k_datas}
    if k_names is not None and not k_names <= {d.name for d in datas}:
        raise CatalogError(f"--k-data {sorted(k_names)} must also be given as --data; they are a subset of the sets fitted")
    together = ["+".join(d.name for d in group) for group in bound_together]
    bounded_with = {d.name: name for name, group in zip(together, bound_together) for d in group}
    if not set(bounded_with) <= {d.name for d in datas}:
        raise CatalogError(f"--bound-together {sorted(bounded_with)} must also be given as --data")
    results: list[SearchResult] = []
    golds: list[frozenset[ToolKey]] = []
    k_rows: list[bool] = []
    groups: list[str] = []
    cells: list[str] = []
    counts: dict[str, int] = {}
    null_evidence: dict[str, list[Any]] = {}
    model_id = ""
    for data in datas:
        # No calibration while fitting: the raw ranked lists and cosines are what the fit reads.
        factory = PipelineFactory.from_data(data, calibration=None, cache_dir=cache_dir)
        factory.cross_fit_adapter()
        r, g, styles = dev_results(data, factory, limit, progress)
        results += r
        golds += g
        k_rows += [k_names is None or data.name in k_names] * len(r)
        groups += [data.name] * len(r)
        cells += [f"{data.name}/{style}" if style else data.name for style in styles]
        counts[data.name] = len(r)
        null_evidence[data.name] = factory.retriever.null_evidence()
        model_id = factory.retriever.embedder.model_id if factory.retriever.embedder is not None else model_id
    k_from = [f"k from {'+'.join(d.name for d in k_datas)}"] if k_datas else []
    bound = [f"false abstention bounded together on {' & '.join(together)}"] if together else []
    source = fit_source("calibrate", datas, limit, *k_from, *bound)
    target = out or SHIPPED_PATH
    calibration = fit(results, golds, coverage=coverage, false_abstain=false_abstain,
                      abstain_confidence=abstain_confidence, model_id=model_id, source=source,
                      k_rows=None if k_names is None else k_rows, groups=groups, null_evidence=null_evidence,
                      bounded_with=bounded_with, cells=cells, previous=None if fresh else warm_start(target, model_id))
    target.parent.mkdir(parents=True, exist_ok=True)
    calibration.save(target)
    return asdict(calibration), target, counts


def warm_start(path: Path, model_id: str) -> Calibration | None:
    """The calibration at ``path`` when it is one for ``model_id``, for a refit to start from
    (calibration_fit.fit's ``previous``); None when there is none, it cannot be read (the refit then
    starts afresh, as without one) or it was fit for another model."""
    if not path.is_file():
        return None
    try:
        previous = Calibration.load(path)
    except RetrievalError as exc:
        log.warning("not starting from %s: %s", path, exc)
        return None
    return previous if previous.model_id == model_id else None
