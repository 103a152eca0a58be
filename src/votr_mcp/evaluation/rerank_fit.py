"""Fit the learned head rerank on the dev split of one or more benchmark sets.

Only dev rows are read, and only answerable rows searched on their own (a whole-task query's head
mixes its needs). Each set is searched with its own catalog, the fusion's head and its feature rows
are collected with the rerank switched off (each text adapted by the query adapter's fit that left
its fold out, so the rows read cosines no better than a new query's), and the pooled rows go to the
pure :func:`votr_mcp.retrieval.rerank.fit_rerank`, where each set's share grows with the square root
of its size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.evaluation.adapter import PipelineFactory
from votr_mcp.evaluation.data import fit_source, load_queries, queries_of, select_split
from votr_mcp.evaluation.harness import build_units, cap_per_kind
from votr_mcp.retrieval.query_adapter import fold_of
from votr_mcp.retrieval.rerank import SHIPPED_RERANK, RerankModel, fit_rerank

__all__ = ["collect_rows", "cross_validate", "fit_rerank_on", "rerank_rows"]

Progress = Callable[[str, int, int], None]
Rows = list[tuple[NDArray[np.float64], NDArray[np.bool_], str]]


def rerank_rows(data: Path, factory: PipelineFactory, limit: int | None, head: int,
                progress: Progress | None = None) -> Rows:
    """(feature rows, gold mask, set name) for each answerable dev query of one set."""
    rows = cap_per_kind(select_split(load_queries(queries_of(data)), "dev"), limit)
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


def cross_validate(rows: Rows, *, l2: float, head: int, repeats: int = 3) -> dict[str, tuple[float, float]]:
    """Top-1 per set on held-out halves of the dev rows: (rerank fit on the other half, fusion alone).

    Each of ``repeats`` rounds splits the rows in two by SHA-256 of (round, set, position), fits on
    one half and scores the other, then swaps; a set's figure is its mean over every held-out row.
    This is how a change to the fit is judged before it is shipped: the shipped fit sees all dev rows.
    """
    hits: dict[str, list[tuple[float, float]]] = {}
    for round_ in range(repeats):
        fold = [fold_of(f"{round_}:{s}:{i}", 2) for i, (_, _, s) in enumerate(rows)]
        for held in (0, 1):
            model = fit_rerank([r for r, f in zip(rows, fold) if f != held], l2=l2, head=head)
            for (x, gold, name), f in zip(rows, fold):
                if f == held and len(x):
                    hits.setdefault(name, []).append((float(gold[int(np.argmax(model.score(x)))]),
                                                      float(gold[int(np.argmax(x[:, 0]))])))
    return {name: (float(np.mean([h[0] for h in pairs])), float(np.mean([h[1] for h in pairs])))
            for name, pairs in hits.items()}


def collect_rows(datas: Sequence[Path], *, limit: int | None, head: int, cache_dir: Path | None = None,
                 progress: Progress | None = None) -> tuple[Rows, dict[str, int]]:
    """The rerank's training rows of every set in ``datas`` (dev split only), and their count per set."""
    rows: Rows = []
    counts: dict[str, int] = {}
    for data in datas:
        factory = PipelineFactory.from_data(data, calibration=None, cache_dir=cache_dir)
        factory.cross_fit_adapter()
        found = rerank_rows(data, factory, limit, head, progress)
        rows += found
        counts[data.name] = len(found)
    return rows, counts


def fit_rerank_on(datas: Sequence[Path], *, limit: int | None = None, l2: float = 1e-2, head: int = 20,
                  out: Path | None = None, cache_dir: Path | None = None, progress: Progress | None = None,
                  collected: tuple[Rows, dict[str, int]] | None = None) -> tuple[RerankModel, Path, dict[str, int]]:
    """Fit on the dev rows of every set in ``datas`` and save; returns (model, path, queries per set).
    ``collected``: what :func:`collect_rows` already gave for the same sets, limit and head."""
    rows, counts = collected or collect_rows(datas, limit=limit, head=head, cache_dir=cache_dir, progress=progress)
    source = fit_source("fit-rerank", datas, limit, f"l2 {l2}", f"head {head}")
    model = fit_rerank(rows, l2=l2, head=head, source=source)
    target = out or SHIPPED_RERANK
    target.parent.mkdir(parents=True, exist_ok=True)
    model.save(target)
    return model, target, counts
