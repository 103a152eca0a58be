"""A coarse first pass over a large tool matrix: which tools are worth an exact dense score.

At 100k tools the product of a whole task's query rows with the 896-float tool matrix took
about 40 ms of CPU, a fifth of the slowest searches (eval/SCALE.md). Each model's tool vectors
are projected here on their leading principal directions (a quarter of its dimensions): the
product in that space costs a quarter as much and is close to the true cosine (at 100k tools,
median error .009). The tools it places near the top of any query's list are then scored
exactly (votr_mcp.retrieval.dense_scores), as is every tool a search goes on to read; the rest
keep the approximate score, which only the catalog's mean and spread of cosines read. The mean
is kept (the projection is of the centred vectors, the mean added back) and the spread is read
with the variance the projection leaves out (:meth:`CoarsePass.hidden_variance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["COARSE_TOOLS", "KEEP", "CoarsePass", "candidates"]

COARSE_TOOLS = 20_000
"""From this many tools an index gets a coarse pass. Below it the exact product is a few
milliseconds and every score stays exact."""

RANK_SHARE = 4
"""Each model keeps 1/RANK_SHARE of its dimensions (MiniLM 96 of 384, USE 128 of 512)."""

FIT_ROWS = 8_192
"""Tool rows the principal directions are fitted on (evenly spaced; at 100k tools 0.3 s)."""


@dataclass(frozen=True, slots=True)
class CoarsePass:
    """Per model (column slice of the tool matrix): its mean tool vector and leading directions,
    and every tool's centred vector in those directions (``reduced``, the models side by side)."""

    means: tuple[NDArray[np.float32], ...]
    bases: tuple[NDArray[np.float32], ...]  # each (model dimensions x rank)
    reduced: NDArray[np.float32]  # tools x sum of ranks
    hidden: NDArray[np.float32]  # columns x columns: what the directions leave out of a score's variance

    @classmethod
    def fit(cls, matrix: NDArray[np.float32], parts: Sequence[slice]) -> CoarsePass:
        """The pass for ``matrix`` (tools x columns), one projection per model's columns ``parts``."""
        step = max(1, len(matrix) // FIT_ROWS)
        means: list[NDArray[np.float32]] = []
        bases: list[NDArray[np.float32]] = []
        whole: list[NDArray[np.float64]] = []
        kept: list[NDArray[np.float64]] = []
        for sl in parts:
            centred = np.asarray(matrix[::step, sl], dtype=np.float64)
            mean = centred.mean(axis=0)
            centred -= mean
            rank = max(1, centred.shape[1] // RANK_SHARE)
            directions = np.linalg.svd(centred, full_matrices=False)[2][:rank].T
            whole.append(centred)
            kept.append((centred @ directions) @ directions.T)
            means.append(mean.astype(np.float32))
            bases.append(np.ascontiguousarray(directions, dtype=np.float32))
        # A query's scores vary over the tools as q'Cq, C the covariance of the centred vectors; the
        # coarse ones as q'Kq, K that of their kept part. C - K is what the coarse spread lacks, the
        # covariance of one model's kept part with another's left-out part included.
        x, y = np.hstack(whole), np.hstack(kept)
        hidden = ((x.T @ x - y.T @ y) / len(x)).astype(np.float32)
        empty = cls(tuple(means), tuple(bases), np.zeros((0, sum(b.shape[1] for b in bases)), dtype=np.float32), hidden)
        return empty.with_rows(matrix, parts)

    def with_rows(self, matrix: NDArray[np.float32], parts: Sequence[slice]) -> CoarsePass:
        """The same directions over the tools of ``matrix`` (all of them projected anew)."""
        reduced = np.hstack([(matrix[:, sl] - mean) @ basis for sl, mean, basis in zip(parts, self.means, self.bases)])
        return CoarsePass(self.means, self.bases, np.ascontiguousarray(reduced, dtype=np.float32), self.hidden)

    def restacked(self, kept: NDArray[np.intp], matrix: NDArray[np.float32], parts: Sequence[slice]) -> CoarsePass:
        """Over the tools of a new ``matrix`` whose row i was row ``kept[i]`` here (-1: new or changed)."""
        reduced = self.reduced[np.maximum(kept, 0)]
        new = np.flatnonzero(kept < 0)
        if len(new):
            reduced[new] = self.with_rows(matrix[new], parts).reduced
        return CoarsePass(self.means, self.bases, reduced, self.hidden)

    def offsets(self) -> list[slice]:
        """Each model's columns in ``reduced``."""
        out, at = [], 0
        for basis in self.bases:
            out.append(slice(at, at + basis.shape[1]))
            at += basis.shape[1]
        return out

    def query_rows(self, vectors: NDArray[np.float32], parts: Sequence[slice]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """The query vectors in the reduced space (queries x sum of ranks), and per model the part of
        each query's cosine the mean tool vector gives (queries x models)."""
        reduced = np.hstack([vectors[:, sl] @ basis for sl, basis in zip(parts, self.bases)])
        base = np.stack([vectors[:, sl] @ mean for sl, mean in zip(parts, self.means)], axis=1)
        return np.ascontiguousarray(reduced, dtype=np.float32), base.astype(np.float32)

    def hidden_variance(self, vector: NDArray[np.float32], columns: slice = slice(None)) -> float:
        """The variance, over the catalog, of the part of ``vector``'s products (read on ``columns``)
        the directions leave out: what a spread of the approximate scores lacks of the true one."""
        v = vector[columns]
        return float(v @ self.hidden[columns, columns] @ v)

    def fill(self, queries: NDArray[np.float32], base: NDArray[np.float32], out: Sequence[NDArray[np.float32]],
             lo: int, hi: int) -> None:
        """Write the approximate products of tool rows ``lo:hi`` into ``out`` (per model, queries x
        tools), from :meth:`query_rows`' ``queries`` and ``base``."""
        for o, cols, b in zip(out, self.offsets(), base.T):
            o[:, lo:hi] = queries[:, cols] @ self.reduced[lo:hi, cols].T
            o[:, lo:hi] += b[:, None]


KEEP = 600
"""Tools per query scored exactly after the coarse pass: about its 600 best by each model's
cosine and by their sum. At 100k tools 99.4% of a query's 20 best by the joint cosine were among
its 500 best by the coarse one (200 dev queries)."""

SAMPLE = 4_096
"""Scores per query the cut at :data:`KEEP` is read from (a full partition of 100k took a
millisecond per query and model)."""


def candidates(products: Sequence[NDArray[np.float32]], queries: int) -> NDArray[np.intp]:
    """The tool rows worth an exact score: for any of the first ``queries`` rows of the approximate
    per-model ``products``, among about its :data:`KEEP` best by the joint cosine (their sum) or
    by one model's alone (a request in another language is ranked by USE alone; the evidence reads
    each model's best). Each cut is read from :data:`SAMPLE` evenly spaced scores per query."""
    parts = [p[:queries] for p in products]
    lists = parts if len(parts) == 1 else [np.sum(parts, axis=0), *parts]
    n = parts[0].shape[1]
    step = max(1, n // SAMPLE)
    chosen = np.zeros(n, dtype=np.bool_)
    for scores in lists:
        sample = scores[:, ::step]
        at = sample.shape[1] - max(1, min(sample.shape[1], round(KEEP * sample.shape[1] / n)))
        cut = np.partition(sample, at, axis=1)[:, at]
        chosen |= (scores >= cut[:, None]).any(axis=0)
    return np.flatnonzero(chosen)
