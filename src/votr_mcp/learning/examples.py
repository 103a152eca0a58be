"""Learned example requests (Tool2Vec from use): requests that led to a successful call of a tool.
(The learner keeps the requests a tool failed or was passed over for in a second store of this kind,
read through :meth:`LearnedView.nearest_counted`: see :mod:`votr_mcp.learning.learner`.)

Per tool the latest ``per_tool`` distinct requests are kept, and ``max_tools`` tools at most (the
least recently used one goes first). How search reads them (:mod:`votr_mcp.learning.learner`): a
request very near one of them lifts that one's tool in the head (``LearnedView.nearest_of``); and
when the catalog runs the nearest-example list (enough tools have examples,
:mod:`votr_mcp.index.catalog_index`), the learned requests join that list.

They can also be mixed into the tools' dense vectors the way a catalog's own examples are (``mix``
"centred" or "plain"): a tool's Tool2Vec vector becomes its vector plus ``w · mean(learned request
vectors)``, ``w = n / (n + EVIDENCE_HALF)`` growing with its successful calls ``n``. That is off by
default: in the replay (eval/REPLAY.md) it moved no paraphrase of a learned request and cost
requests nobody had made about a point of top-1 (a tool drawn towards the requests it served is
drawn towards its server's other requests too).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, ToolKey
from votr_mcp.index.catalog_index import DenseIndex
from votr_mcp.index.dense import l2_normalise

__all__ = ["CONFIG_WEIGHT", "LearnedExamples", "LearnedView", "EVIDENCE_HALF", "MIXES", "check_mix", "mix_weight"]

MIXES = ("off", "centred", "plain")
"""How learned requests may enter the tools' dense vectors (see :meth:`LearnedView.dense`)."""

EVIDENCE_HALF = 3.0
"""Successful calls at which the learned requests weigh half as much as the tool's own vector."""


CONFIG_WEIGHT = 3.0
"""An example request the operator wrote in the config counts as this many successful calls."""


def check_mix(mix: str) -> str:
    if mix not in MIXES:
        raise ValueError(f"unknown learned-request mix {mix!r}; choose 'off', 'centred' or 'plain'")
    return mix


def mix_weight(successes: float) -> float:
    """The learned requests' weight in a tool's vector after ``successes`` successful calls."""
    return successes / (successes + EVIDENCE_HALF) if successes > 0 else 0.0


class LearnedExamples:
    """Requests per tool with their success counts; ``version`` changes whenever they do."""

    def __init__(self, *, per_tool: int = 16, max_tools: int = 5_000) -> None:
        self.per_tool = per_tool
        self.max_tools = max_tools
        self.version = 0
        self._lock = threading.Lock()
        self._by_tool: OrderedDict[ToolKey, OrderedDict[str, float]] = OrderedDict()
        self._vectors: dict[tuple[str, str], NDArray[np.float32]] = {}  # (model id, request) -> its vector

    def add(self, key: ToolKey, request: str, weight: float = 1.0,
            vector: tuple[str, NDArray[np.float32]] | None = None) -> None:
        """Count ``request`` as leading to a successful call of ``key``; ``vector`` is (model id, its
        vector) when the search that served it embedded it already."""
        text = request.strip()
        if not text:
            return
        with self._lock:
            if vector is not None:
                self._vectors[(vector[0], text)] = vector[1]
            own = self._by_tool.setdefault(key, OrderedDict())
            own[text] = own.get(text, 0.0) + weight
            own.move_to_end(text)
            self._by_tool.move_to_end(key)
            while len(own) > self.per_tool:
                own.popitem(last=False)
            while len(self._by_tool) > self.max_tools:
                self._by_tool.popitem(last=False)
            if len(self._vectors) > 2 * self.per_tool * len(self._by_tool) + 64:
                kept = {t for texts in self._by_tool.values() for t in texts}
                self._vectors = {k: v for k, v in self._vectors.items() if k[1] in kept}
            self.version += 1

    def discard(self, key: ToolKey, request: str, vector: tuple[str, NDArray[np.float32]] | None = None,
                near: float = 1.0) -> None:
        """Forget ``request`` for ``key``, and (``vector``: (model id, its vector)) every request of
        ``key`` whose kept vector has cosine ``near`` or more with it."""
        text = request.strip()
        with self._lock:
            own = self._by_tool.get(key)
            if own is None:
                return
            gone = [t for t in own if t == text or (
                vector is not None and (vector[0], t) in self._vectors
                and float(self._vectors[(vector[0], t)] @ vector[1]) >= near)]
            if not gone:
                return
            for t in gone:
                del own[t]
            if not own:
                del self._by_tool[key]
            self.version += 1

    def of(self, key: ToolKey) -> Mapping[str, float]:
        with self._lock:
            return dict(self._by_tool.get(key, {}))

    def snapshot(self) -> dict[ToolKey, dict[str, float]]:
        with self._lock:
            return {k: dict(v) for k, v in self._by_tool.items()}

    def __len__(self) -> int:
        return len(self._by_tool)

    def view(self, catalog: Catalog, model_id: str,
             embed: Callable[[Sequence[str]], Mapping[str, NDArray[np.float32]]]) -> LearnedView:
        """The learned requests of ``catalog``'s tools as vectors (embedding only those never seen)."""
        positions = [(catalog.position(k), v) for k, v in self.snapshot().items()]
        learned = [(row, texts) for row, texts in positions if row is not None]
        vectors = self._vectors_of([t for _, texts in learned for t in texts], model_id, embed)
        rows: list[int] = []
        own: list[NDArray[np.float32]] = []
        weights: list[float] = []
        successes: dict[int, float] = {}
        for row, texts in learned:
            kept = [t for t in texts if t in vectors]
            if kept:
                rows += [row] * len(kept)
                own += [vectors[t] for t in kept]
                weights += [texts[t] for t in kept]
                successes[row] = sum(texts.values())
        matrix = np.stack(own).astype(np.float32) if own else np.zeros((0, 0), dtype=np.float32)
        return LearnedView(matrix, np.asarray(rows, dtype=np.intp), successes, np.asarray(weights, dtype=np.float64))

    def _vectors_of(self, texts: Sequence[str], model_id: str,
                    embed: Callable[[Sequence[str]], Mapping[str, NDArray[np.float32]]]) -> dict[str, NDArray[np.float32]]:
        """The requests' vectors: kept ones, and the others embedded now (and kept)."""
        with self._lock:
            out = {t: self._vectors[(model_id, t)] for t in texts if (model_id, t) in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in out]
        if missing:
            fresh = embed(missing)
            with self._lock:
                for t, v in fresh.items():
                    self._vectors[(model_id, t)] = v
            out.update(fresh)
        return out


class LearnedView:
    """Learned requests as vectors over one catalog: ``rows[j]`` is the tool row of ``vectors[j]``,
    ``counts[j]`` how many outcomes that request counted, ``successes[row]`` its tool's outcomes in
    all, ``weight[row]`` its mix weight (:func:`mix_weight`)."""

    def __init__(self, vectors: NDArray[np.float32], rows: NDArray[np.intp], successes: Mapping[int, float],
                 counts: NDArray[np.float64] | None = None) -> None:
        self.vectors = vectors
        self.rows = rows
        self.counts = counts if counts is not None else np.ones(len(rows))
        self.successes = dict(successes)
        self.weight = {row: mix_weight(n) for row, n in self.successes.items()}

    def __len__(self) -> int:
        return len(self.rows)

    def dense(self, dense: DenseIndex, mix: str = "off", out: NDArray[np.float32] | None = None,
              stale: Sequence[int] = ()) -> DenseIndex:
        """``dense`` with the learned requests in the nearest-example list when the catalog runs it,
        and (``mix`` on) each learned tool's Tool2Vec vector mixed with its learned requests' mean.

        ``mix="centred"`` mixes in the requests' mean less the mean of every learned request: what
        all requests share (they read like requests, not like tool descriptions) would otherwise
        draw every request towards every tool that has learned ones. ``"plain"``: the mean as is;
        ``"off"`` (the default): the vectors stay, uncopied.

        ``out`` is an earlier result's matrix over the same ``dense``, updated in place: only learned
        rows and the ``stale`` rows (learned before, no longer) are written, so an update touches a
        few hundred rows rather than copying the whole matrix (whose reads then miss the CPU cache).
        A search running meanwhile may read one row half written: that tool's score for that search."""
        check_mix(mix)
        if (not len(self) or mix == "off") and out is None:
            return self._with_examples(dense)
        t2v = dense.tool2vec_matrix(copy=True) if out is None else out
        if len(stale):
            rows = np.asarray(stale, dtype=np.intp)
            t2v[rows] = dense.tool2vec_rows(rows)
        if mix != "off" and len(self):
            learned, inverse = np.unique(self.rows, return_inverse=True)
            sums = np.zeros((len(learned), self.vectors.shape[1]), dtype=np.float64)
            np.add.at(sums, inverse, self.vectors)
            means = sums / np.bincount(inverse)[:, None]
            if mix == "centred":
                means -= self.vectors.mean(axis=0)
            weights = np.array([self.weight[int(r)] for r in learned])
            t2v[learned] = l2_normalise(dense.tool2vec_rows(learned) + weights[:, None] * means)
        return self._with_examples(replace(dense, tools_t2v=t2v, t2v_rows=None, t2v_vectors=None))

    def _with_examples(self, dense: DenseIndex) -> DenseIndex:
        """``dense`` with the learned requests in its nearest-example list, when it runs one."""
        if dense.examples is None or dense.example_owner is None or not len(self):
            return dense
        return replace(dense, examples=np.ascontiguousarray(np.concatenate([dense.examples, self.vectors]).astype(np.float32)),
                       example_owner=np.concatenate([dense.example_owner, self.rows]))

    def nearest_of(self, vec: NDArray[np.float32], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        """For each of ``rows``, the best cosine of ``vec`` with that tool's learned requests (-1: none)."""
        return self.nearest_counted(vec, rows)[0]

    def nearest_counted(self, vec: NDArray[np.float32], rows: NDArray[np.intp]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """For each of ``rows``, the best cosine of ``vec`` with that tool's learned requests (-1: none)
        and the count of that nearest request (0: none)."""
        best = np.full(len(rows), -1.0)
        count = np.zeros(len(rows))
        take = np.flatnonzero(np.isin(self.rows, rows))
        if len(take):
            position = {int(r): i for i, r in enumerate(rows)}
            owners = np.fromiter((position[int(r)] for r in self.rows[take]), dtype=np.intp)
            cos = (self.vectors[take] @ vec).astype(np.float64)
            np.maximum.at(best, owners, cos)
            # Each owner's count at its best cosine (ties: the last written; the same text twice is one entry).
            hit = cos >= best[owners]
            count[owners[hit]] = self.counts[take[hit]]
        return best, count
