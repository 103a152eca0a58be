"""Fit the learned head rerank on the dev split of one or more benchmark sets.

Only dev rows are read, and only answerable rows searched on their own (a whole-task query's
head mixes its needs). Each set is searched with its own catalog, the fusion's head and its
feature rows are collected with the rerank switched off, and the pooled rows go to the pure
:func:`votr_mcp.retrieval.rerank.fit_rerank`, which weighs every set equally.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.evaluation.adapter import PipelineFactory
from votr_mcp.evaluation.data import load_queries, select_split
from votr_mcp.evaluation.harness import build_units, cap_per_kind
from votr_mcp.retrieval.rerank import SHIPPED_RERANK, RerankModel, fit_rerank

__all__ = ["fit_rerank_on", "rerank_rows"]

Progress = Callable[[str, int, int], None]
Rows = list[tuple[NDArray[np.float64], NDArray[np.bool_], str]]


def rerank_rows(data: Path, factory: PipelineFactory, limit: int | None, head: int,
                progress: Progress | None = None) -> Rows:
    """(feature rows, gold mask, set name) for each answerable dev query of one set."""
    rows = cap_per_kind(select_split(load_queries(data / "queries.jsonl"), "dev"), limit)
    units = [u for u in build_units(rows) if not u.whole_task and u.steps and any(u.steps)]
    vectors = factory.embed(units)
    out: Rows = []
    for done, (unit, prepared) in enumerate(zip(units, vectors), start=1):
        keys, x = factory.retriever.rerank_candidates(unit.query, query_vectors=prepared, size=head)
        gold = {key for step in unit.steps for key in step}
        out.append((x, np.array([k in gold for k in keys], dtype=bool), data.name))
        if progress is not None and (done % 100 == 0 or done == len(units)):
            progress(data.name, done, len(units))
    return out


def fit_rerank_on(datas: Sequence[Path], *, limit: int | None = None, l2: float = 1e-2, head: int = 20,
                  out: Path | None = None, cache_dir: Path | None = None,
                  progress: Progress | None = None) -> tuple[RerankModel, Path, dict[str, int]]:
    """Fit on the dev rows of every set in ``datas`` and save; returns (model, path, queries per set)."""
    rows: Rows = []
    counts: dict[str, int] = {}
    for data in datas:
        factory = PipelineFactory.from_data(data, calibration=None, cache_dir=cache_dir)
        found = rerank_rows(data, factory, limit, head, progress)
        rows += found
        counts[data.name] = len(found)
    source = (f"votr-mcp fit-rerank on the dev split of {'+'.join(d.name for d in datas)}"
              + (f", at most {limit} tasks per kind" if limit else "") + f", l2 {l2}, head {head}"
              + f", {time.strftime('%Y-%m-%d', time.gmtime())}")
    model = fit_rerank(rows, l2=l2, head=head, source=source)
    target = out or SHIPPED_RERANK
    target.parent.mkdir(parents=True, exist_ok=True)
    model.save(target)
    return model, target, counts
