"""Fit the query adapter on the dev split of one or more benchmark sets.

Only dev rows are read: answerable rows searched on their own (one step; whole tasks are left
out, their text names several tools). Each set contributes its query vectors, its gold tools'
rows and its own catalog's tool vectors (the softmax runs over the whole catalog, so every other
tool is a negative). The loss of each set is averaged over its rows and the sets are weighed
equally, so MetaTool's thousands of rows do not decide alone. The optimisation is full-batch
L-BFGS over analytic gradients in numpy from a seeded start (deterministic on one machine); it
was Adam on torch until setup stopped installing torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.evaluation.adapter import PipelineFactory
from votr_mcp.evaluation.data import fit_source, load_queries, queries_of, select_split
from votr_mcp.evaluation.harness import build_units, cap_per_kind
from votr_mcp.retrieval.query_adapter import FOLDS, SHIPPED_ADAPTER, QueryAdapter, fold_of

__all__ = ["AdapterRows", "adapter_rows", "collect_adapter_rows", "fit_adapter", "fit_adapter_on", "leave_one_set_out"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class AdapterRows:
    """One set's fitting material: query texts and vectors, each query's gold rows, the catalog's tool vectors."""

    name: str
    texts: list[str]
    queries: NDArray[np.float32]
    gold: list[list[int]]
    tools: NDArray[np.float32]
    model_id: str  # the embedding model of the vectors (an adapter acts only on its model's)

    def subset(self, keep: Sequence[bool]) -> AdapterRows:
        idx = [i for i, k in enumerate(keep) if k]
        return AdapterRows(self.name, [self.texts[i] for i in idx], self.queries[idx], [self.gold[i] for i in idx], self.tools,
                           self.model_id)


def adapter_rows(data: Path, factory: PipelineFactory, limit: int | None) -> AdapterRows:
    """The single answerable dev rows of one set whose gold tool is in its catalog."""
    retriever = factory.retriever
    if retriever.embedder is None or retriever.tool_vectors is None:
        raise RuntimeError("fitting the query adapter needs the embedding model; the retriever has none")
    rows = cap_per_kind(select_split(load_queries(queries_of(data)), "dev"), limit)
    units = [u for u in build_units(rows) if not u.whole_task and len(u.steps) == 1 and u.steps[0]]
    gold = [sorted(p for k in u.steps[0] if (p := retriever.catalog.position(k)) is not None) for u in units]
    units, gold = [u for u, g in zip(units, gold) if g], [g for g in gold if g]
    texts = [u.query for u in units]
    by_text = retriever.request_vectors(texts, factory.cache)
    queries = np.stack([by_text[t] for t in texts]).astype(np.float32) if texts else np.zeros((0, 0), dtype=np.float32)
    return AdapterRows(data.name, texts, queries, gold, np.asarray(retriever.tool_vectors, dtype=np.float32),
                       retriever.embedder.model_id)


def collect_adapter_rows(datas: Sequence[Path], *, limit: int | None, cache_dir: Path | None = None,
                         progress: Progress | None = None) -> list[AdapterRows]:
    out = []
    for done, data in enumerate(datas, start=1):
        # Raw query vectors and the tool matrix are all it reads: no shipped adapter (nor its file) is needed.
        factory = PipelineFactory.from_data(data, calibration=None, cache_dir=cache_dir, adapter=None)
        out.append(adapter_rows(data, factory, limit))
        if progress is not None:
            progress("sets", done, len(datas))
    return out


def fit_adapter(sets: Sequence[AdapterRows], *, rank: int = 16, l2: float = 0.01, temperature: float = 0.05,
                steps: int = 200, seed: int = 0, source: str = "") -> QueryAdapter:
    """U, V minimising each set's mean softmax cross-entropy of its gold tools (any-of) over its
    catalog, sets weighed equally, plus ``l2``·‖U·V‖²; V starts at zero, so the fit starts at the identity.

    numpy with analytic gradients and scipy's L-BFGS (at most ``steps`` iterations): no torch."""
    from scipy.optimize import minimize

    sets = [s for s in sets if s.gold]
    if not sets:
        raise ValueError("no answerable dev rows to fit the query adapter on")
    if len({s.model_id for s in sets}) > 1:
        raise ValueError(f"the sets were embedded by different models ({sorted({s.model_id for s in sets})}); fit on one model's vectors")
    dim = sets[0].queries.shape[1]
    rng = np.random.default_rng(seed)
    start = np.concatenate([(rng.standard_normal((dim, rank)) * 0.01).ravel(), np.zeros(rank * dim)])
    batches = []
    for s in sets:
        mask = np.zeros((len(s.gold), len(s.tools)), dtype=bool)
        for i, rows in enumerate(s.gold):
            mask[i, rows] = True
        batches.append((np.asarray(s.queries, dtype=np.float64), np.asarray(s.tools, dtype=np.float64), mask))

    def loss_and_grad(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        u, v = x[: dim * rank].reshape(dim, rank), x[dim * rank :].reshape(rank, dim)
        w = u @ v
        loss = l2 * float((w * w).sum())
        grad_w = 2 * l2 * w
        for q, tools, mask in batches:
            z = q + q @ w
            norm = np.linalg.norm(z, axis=1, keepdims=True)
            a = z / norm
            logits = a @ tools.T / temperature
            p_all = _softmax(logits)
            p_gold = _softmax(np.where(mask, logits, -np.inf))
            loss += float(np.mean(_logsumexp(logits) - _logsumexp(np.where(mask, logits, -np.inf)))) / len(batches)
            g_a = (p_all - p_gold) @ tools / (temperature * len(q) * len(batches))
            g_z = (g_a - (g_a * a).sum(axis=1, keepdims=True) * a) / norm
            grad_w += q.T @ g_z
        return loss, np.concatenate([(grad_w @ v.T).ravel(), (u.T @ grad_w).ravel()])

    found = minimize(loss_and_grad, start, jac=True, method="L-BFGS-B", options={"maxiter": steps})
    u, v = found.x[: dim * rank].reshape(dim, rank), found.x[dim * rank :].reshape(rank, dim)
    return QueryAdapter(u.astype(np.float32), v.astype(np.float32), sets[0].model_id, source)


def _logsumexp(x: NDArray[np.float64]) -> NDArray[np.float64]:
    top = x.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(x - top).sum(axis=1, keepdims=True))).ravel()


def _softmax(x: NDArray[np.float64]) -> NDArray[np.float64]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _top(adapter: QueryAdapter | None, s: AdapterRows) -> tuple[float, float]:
    """Dense-only top-1 and top-5 of a set's rows, with or without the adapter."""
    q = s.queries if adapter is None else np.stack([adapter.adapt(t, v) for t, v in zip(s.texts, s.queries)])
    best = np.argsort(-(q @ s.tools.T), axis=1)[:, :5]
    top1 = float(np.mean([b[0] in g for b, g in zip(best, s.gold)]))
    top5 = float(np.mean([bool(set(b.tolist()) & set(g)) for b, g in zip(best, s.gold)]))
    return top1, top5


def leave_one_set_out(sets: Sequence[AdapterRows], **options: object) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """Per set: dense-only (top-1, top-5) on its dev rows without the adapter, and with an adapter
    fit on the OTHER sets only: whether the map carries over to a set it never saw."""
    out = {}
    for held in sets:
        if len(sets) < 2:
            break
        adapter = fit_adapter([s for s in sets if s is not held], **options)  # type: ignore[arg-type]
        out[held.name] = (_top(None, held), _top(adapter, held))
    return out


def fit_adapter_on(datas: Sequence[Path], *, limit: int | None = None, rank: int = 16, l2: float = 0.01, folds: int = FOLDS,
                   out: Path | None = None, cache_dir: Path | None = None, progress: Progress | None = None,
                   collected: list[AdapterRows] | None = None) -> tuple[QueryAdapter, Path, dict[str, int]]:
    """Fit on the dev rows of every set in ``datas``, plus one held-out fit per fold for cross-fitting, and save."""
    sets = collected if collected is not None else collect_adapter_rows(datas, limit=limit, cache_dir=cache_dir,
                                                                        progress=progress)
    source = fit_source("fit-adapter", datas, limit, f"rank {rank}", f"l2 {l2}")
    held = tuple(fit_adapter([s.subset([fold_of(t, folds) != f for t in s.texts]) for s in sets], rank=rank, l2=l2)
                 for f in range(folds))
    full = fit_adapter(sets, rank=rank, l2=l2)
    adapter = QueryAdapter(full.u, full.v, full.model_id, source, held)
    target = out or SHIPPED_ADAPTER
    target.parent.mkdir(parents=True, exist_ok=True)
    adapter.save(target)
    return adapter, target, {s.name: len(s.gold) for s in sets}
