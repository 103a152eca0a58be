"""Dense scores: query vectors against every tool's vector, in one pass for a whole search.

A search's texts (the query, or each need of a whole task) are scored together: at 100k tools the
matrix is read from memory at every product, so one product for them all reads it once
(:func:`dense_scores`). From 20k tools that product runs a coarse pass first (index/coarse.py): the
tools near the top of any text's list are scored exactly at once, the others when a search goes
on to read them (:func:`exact_rows`). Server-level cosines are computed only for the rows the
rerank reads (:class:`ServerCosines`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from votr_mcp.index.catalog_index import DenseIndex
from votr_mcp.index.coarse import CoarsePass, candidates
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.language import is_english

__all__ = ["DenseScores", "ServerCosines", "dense_scores", "exact_rows"]


class ServerCosines:
    """One query vector's server-level cosines (per server row: the better of its description's and
    its summary's cosine), computed for the rows read. Only the learned rerank reads them, for the
    servers of its head (about 20 rows), where a product with every server's two vectors cost
    a search 2 x 896 floats per server and text (at 100k tools, 7 ms of a whole task's 7 texts)."""

    __slots__ = ("_dense", "_vector", "_parts", "_scale")

    def __init__(self, dense: DenseIndex, vector: NDArray[np.float32], parts: Sequence[slice], scale: float) -> None:
        self._dense = dense
        self._vector = vector
        self._parts = parts  # the models' columns summed (one model's alone when routed)
        self._scale = np.float32(scale)

    def __getitem__(self, rows: NDArray[np.intp]) -> NDArray[np.float64]:
        rows = np.asarray(rows, dtype=np.intp)
        d = self._dense

        def cosine(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
            return _sum(_by_part(matrix[rows], self._vector, self._parts))

        best = np.maximum(cosine(d.server_description), cosine(d.server_summary))
        return (best * self._scale if self._scale != 1 else best).astype(np.float64)


class DenseScores(NamedTuple):
    """One query vector's dense scores over every tool and server (:func:`dense_scores`)."""

    joint: NDArray[np.float32]  # the cosine the dense list ranks by (one model's alone when ``alone``)
    models: tuple[NDArray[np.float32], ...]  # each model's own cosine (joint vectors), else ()
    server: ServerCosines  # per server row: the better of its description's and summary's cosine
    alone: slice | None = None  # the one model's columns the joint cosine was read from, if any
    approximate: NDArray[np.bool_] | None = None  # tools the coarse pass alone scored (:func:`exact_rows`)
    hidden_variance: float = 0.0  # what their spread lacks of the true one (CoarsePass.hidden_variance)


def dense_scores(dense: DenseIndex, cfg: RetrievalConfig,
                 queries: Sequence[tuple[str, NDArray[np.float32]]]) -> list[DenseScores]:
    """The dense scores of several query vectors (text, vector) in one pass over the tool matrix.

    At 100k tools the matrix (896 floats a tool) is read from memory at every product: one product
    per query with every model's columns at once reads it once for a whole task, where a product
    per text and per model read it three times per text (eval/SCALE.md). Each slice of a joint
    vector is one model's vector over sqrt(models): its own columns' dot product is cos/models, the
    joint cosine their sum, and a model read alone (:func:`_alone`) its own part times models."""
    if not queries:
        return []
    matrix = dense.tools_t2v if cfg.tool2vec else dense.tools
    vectors = np.stack([v for _, v in queries]).astype(np.float32, copy=False)
    parts = dense.slices or (slice(None),)
    tools, approximate = _products(vectors, matrix, parts, dense.coarse if matrix is dense.tools else None)
    if cfg.tool2vec and dense.t2v_rows is not None and len(dense.t2v_rows):
        assert dense.t2v_vectors is not None  # the rows of tools with examples (DenseIndex.tool2vec_matrix)
        for p, sl in zip(tools, parts):
            p[:, dense.t2v_rows] = vectors[:, sl] @ dense.t2v_vectors[:, sl].T
        if approximate is not None:
            approximate[dense.t2v_rows] = False

    def rough(j: int, alone: slice | None = None) -> dict[str, Any]:  # each text's own mask: exact_rows marks it
        if approximate is None or dense.coarse is None:
            return {}
        hidden = dense.coarse.hidden_variance(vectors[j]) if alone is None else (
            len(parts) ** 2 * dense.coarse.hidden_variance(vectors[j], alone))
        return {"approximate": approximate.copy(), "hidden_variance": hidden}

    if not dense.slices:
        return [DenseScores(tools[0][j], (), ServerCosines(dense, vectors[j], parts, 1.0), None, **rough(j))
                for j in range(len(queries))]
    k = len(dense.slices)
    alone = [_alone(dense, cfg, text) for text, _ in queries]
    joint = {j: _sum(p[j] for p in tools) for j, a in enumerate(alone) if a is None}  # before the scaling below
    for p in tools:  # each model's own cosine: its part times the number of models (exact for 2)
        p *= np.float32(k)
    out = []
    for j, a in enumerate(alone):
        models = tuple(p[j] for p in tools)
        if a is None:
            out.append(DenseScores(joint[j], models, ServerCosines(dense, vectors[j], parts, 1.0), None, **rough(j)))
        else:
            i = dense.slices.index(a)
            out.append(DenseScores(models[i], models, ServerCosines(dense, vectors[j], (a,), k), a, **rough(j, a)))
    return out


def exact_rows(dense: DenseIndex, scored: DenseScores, vector: NDArray[np.float32], rows: NDArray[np.intp]) -> None:
    """Give ``rows`` their exact scores in ``scored`` (in place) where the coarse pass alone scored
    them: the tools a search goes on to read (its fused lists' heads) each get their true cosine."""
    if scored.approximate is None:
        return
    rows = rows[scored.approximate[rows]]
    if not len(rows):
        return
    parts = dense.slices or (slice(None),)
    own = _by_part(dense.tools[rows], vector, parts)  # each a model's cosine over the number of models
    if not dense.slices:
        scored.joint[rows] = own[0]
    else:
        k = np.float32(len(parts))
        for model, part in zip(scored.models, own):
            model[rows] = part * k
        if scored.alone is None:  # (read alone, the joint cosine is that model's array, set above)
            scored.joint[rows] = _sum(own)
    scored.approximate[rows] = False


SPLIT_TOOLS = 20_000
"""From this many tools, the product over the tool matrix runs as two halves of its rows at once,
one on the caller's thread and one on :data:`_HALF` (numpy releases the GIL in its matrix products):
after a search's texts are embedded both cores are free, and at 100k tools the product of a
whole task's 7 texts took 25-45 ms of one core. Each tool's scores are the same dot products."""
_HALF = ThreadPoolExecutor(1, thread_name_prefix="votr-dense")
QUERY_ROWS = 4


def _products(vectors: NDArray[np.float32], matrix: NDArray[np.float32], parts: Sequence[slice],
              coarse: CoarsePass | None = None) -> tuple[list[NDArray[np.float32]], NDArray[np.bool_] | None]:
    """Per model (columns ``parts``), the (queries x tools) products: each row a query's scores,
    contiguous for what reads it. With ``coarse`` (a large catalog's, index/coarse.py) the
    products are approximate but for the tools near the top of some query's list, scored exactly;
    the mask returned marks the others (None: all exact).

    Several queries are padded with zero rows to a multiple of 4: OpenBLAS's kernel (Haswell, what
    it runs on this machine's CPU) takes 4 query rows at a time, and the rows left over ran far
    slower. Measured at 100k tools, ms of one core by query rows: 3: 39, 4: 27, 7: 46, 8: 34."""
    m, n = len(vectors), matrix.shape[0]
    if m > 1 and m % QUERY_ROWS:
        vectors = np.vstack([vectors, np.zeros((QUERY_ROWS - m % QUERY_ROWS, vectors.shape[1]), dtype=np.float32)])
    if n < SPLIT_TOOLS:
        return [(vectors[:, sl] @ matrix[:, sl].T)[:m] for sl in parts], None
    out = [np.empty((len(vectors), n), dtype=np.float32) for _ in parts]
    if coarse is not None:
        reduced, base = coarse.query_rows(vectors, parts)

        def rows(lo: int, hi: int) -> None:
            coarse.fill(reduced, base, out, lo, hi)
    else:
        def rows(lo: int, hi: int) -> None:
            for o, sl in zip(out, parts):
                o[:, lo:hi] = vectors[:, sl] @ matrix[lo:hi, sl].T

    half = _HALF.submit(rows, n // 2, n)
    rows(0, n // 2)
    half.result()
    approximate = None
    if coarse is not None:
        keep = candidates(out, m)
        chosen = matrix[keep]
        for o, sl in zip(out, parts):
            o[:, keep] = vectors[:, sl] @ chosen[:, sl].T
        approximate = np.ones(n, dtype=np.bool_)
        approximate[keep] = False
    return [o[:m] for o in out], approximate


def _by_part(picked: NDArray[np.float32], vector: NDArray[np.float32], parts: Sequence[slice]) -> list[NDArray[np.float32]]:
    """Each model's (columns ``parts``) dot products of some rows with one query vector."""
    return [picked[:, sl] @ vector[sl] for sl in parts]


def _sum(rows: Iterable[NDArray[np.float32]]) -> NDArray[np.float32]:
    it = iter(rows)
    total = next(it).copy()
    for r in it:
        total += r
    return total


def _alone(dense: DenseIndex, cfg: RetrievalConfig, text: str) -> slice | None:
    """The one model a joint vector is read with for this text, or None for all of them: MiniLM when
    the config is not multilingual, USE for a request not in English when routing by language."""
    if not dense.slices:
        return None
    if not cfg.multilingual:
        return dense.slices[0]
    if cfg.route_language and len(dense.slices) > 1 and not is_english(text):
        return dense.slices[-1]
    return None
