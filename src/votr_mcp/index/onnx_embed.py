"""MiniLM on ONNX Runtime: the same vectors as sentence-transformers at less than half the latency.

On this 2-core box one short query took ~6 ms p50 / 7.5 ms p95 idle vs ~14.7 / 23 ms for
``SentenceTransformer.encode``; the mcpzero queries at load 1-3 p50 ~10 vs ~20 ms (eval/bench_embed.py). The pipeline is sentence-transformers' own, step by step: the model's
``tokenizer.json`` truncated at ``max_seq_length`` from ``sentence_bert_config.json`` (256; the
file's own 128-token truncation and fixed padding are overridden), the BERT encoder as an ONNX
graph, masked mean pooling and L2 normalisation. Vectors agree with sentence-transformers to <1e-4
(tests/index/test_onnx_embed.py), so both share one model id and one embedding cache.

The ONNX file is made once per machine by :mod:`votr_mcp.index.onnx_export` in a subprocess and
kept under ``<cache dir>/onnx/`` named by the SHA-256 of the weights (~0.1 s to hash 90 MB), so a
new model version gets a new file. A file ONNX Runtime cannot load is re-exported once.

Threads: one intra-op thread unless told (``MiniLMEmbedder`` asks for 2; figures for 1 vs 2
threads in its docstring), worker spinning off. ``threads=None`` lets ONNX Runtime pick the count.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import l2_normalise

__all__ = ["Exporter", "OnnxMiniLM", "default_onnx_dir", "length_batches", "onnx_file_for"]

log = logging.getLogger(__name__)
# A text joins a batch only if at least this share of the batch's width is its own tokens.
PADDING_FILL = 0.75
# How long a starting process waits for another one's export (~10 s idle) before giving up on ONNX.
EXPORT_WAIT_S = 300

# Bump when the export recipe changes, so old files are not reused.
RECIPE = "bert-last-hidden-opset17-v1"

Exporter = Callable[[Path, Path], None]
"""Writes the ONNX graph of the model folder (first argument) to the path (second), or raises."""


def default_onnx_dir() -> Path:
    """``$VOTR_CACHE_DIR/onnx``, else ``<user cache dir>/votr-mcp/onnx`` (the rule of cli/_paths.py)."""
    if os.environ.get("VOTR_CACHE_DIR"):
        return Path(os.environ["VOTR_CACHE_DIR"]) / "onnx"
    import platformdirs

    return Path(platformdirs.user_cache_dir("votr-mcp")) / "onnx"


def onnx_file_for(model_dir: Path, onnx_dir: Path) -> Path:
    """The cached graph for these weights: named by SHA-256 of the weights, config and export recipe."""
    digest = hashlib.sha256(RECIPE.encode())
    for name in ("config.json", "model.safetensors"):
        try:
            digest.update(_file_sha256(model_dir / name))
        except OSError as exc:
            raise RetrievalError(f"cannot read {model_dir / name} ({exc}); is {model_dir} a sentence-transformers model folder?") from exc
    return onnx_dir / f"minilm-{digest.hexdigest()[:24]}.onnx"


def _file_sha256(path: Path) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.digest()


def _default_exporter(model_dir: Path, out: Path) -> None:
    from votr_mcp.index.onnx_export import export_in_subprocess

    export_in_subprocess(model_dir, out)


def length_batches(lengths: Sequence[int], batch_size: int, min_fill: float = PADDING_FILL) -> list[list[int]]:
    """Indices of texts grouped into batches, longest first, none padded much past its own length.

    A batch is padded to its longest text, and the encoder spends as much on padding as on words.
    Sorting by length (as sentence-transformers does) makes a big corpus's batches nearly even,
    but a handful of query texts of mixed length (a whole task's needs: 5 to 60 words) in one
    batch cost more than encoding them one by one: measured on 40 MSC-Bench L3/L4 tasks' needs,
    one padded batch took p50 19.9 / p95 61.7 ms against 20.3 / 32.0 ms one at a time (1 thread).
    So a new batch starts when a text is shorter than ``min_fill`` of its batch's longest.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        batch = batches[-1] if batches else None
        if batch is None or len(batch) >= batch_size or lengths[i] < min_fill * lengths[batch[0]]:
            batches.append([i])
        else:
            batch.append(i)
    return batches


class OnnxMiniLM:
    """Tokenizer + ONNX Runtime session + pooling for one sentence-transformers BERT model folder."""

    def __init__(self, model_dir: str | Path, *, onnx_dir: str | Path | None = None, threads: int | None = 1,
                 batch_size: int = 64, exporter: Exporter | None = None) -> None:
        """Find or export the graph and open it; raise :class:`RetrievalError` when that is impossible."""
        self.model_dir = Path(model_dir)
        self._batch_size = batch_size
        self._threads = threads
        self._tokenizer = self._open_tokenizer()
        try:
            import onnxruntime
        except ImportError as exc:
            raise RetrievalError(f"onnxruntime is not installed ({exc}); pip install onnxruntime") from exc
        self._ort = onnxruntime
        self.path = onnx_file_for(self.model_dir, Path(onnx_dir) if onnx_dir is not None else default_onnx_dir())
        self._session = self._open_session(exporter or _default_exporter)

    def _open_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            st_config = json.loads((self.model_dir / "sentence_bert_config.json").read_text())
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise RetrievalError(f"cannot read the tokenizer of {self.model_dir} ({exc})") from exc
        self._lower = bool(st_config.get("do_lower_case", False))
        # sentence-transformers truncates at max_seq_length and pads each batch to its longest text
        # itself; tokenizer.json's own settings (128 tokens, fixed padding) are not what it uses.
        tokenizer.enable_truncation(max_length=int(st_config["max_seq_length"]))
        self._pad_id = int((tokenizer.padding or {}).get("pad_id", 0))
        tokenizer.no_padding()
        return tokenizer

    def _open_session(self, exporter: Exporter) -> Any:
        exported = False
        if not self.path.is_file():
            self._export(exporter)
            exported = True
        try:
            return self._session_for(self.path)
        except Exception as exc:  # onnxruntime raises its own unrelated classes (InvalidProtobuf, Fail, ...)
            if exported:
                raise RetrievalError(f"ONNX Runtime cannot load the freshly exported {self.path}: {exc}") from exc
            log.warning("cached ONNX model %s does not load (%s); exporting it again", self.path, str(exc).splitlines()[0])
        self.path.unlink(missing_ok=True)
        self._export(exporter)
        try:
            return self._session_for(self.path)
        except Exception as exc:
            raise RetrievalError(f"ONNX Runtime cannot load the re-exported {self.path}: {exc}") from exc

    def _export(self, exporter: Exporter) -> None:
        """Export under a lock file beside the graph, so servers starting together export once:
        whoever waited finds the file already there and uses it (the export itself is atomic)."""
        from filelock import FileLock, Timeout

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=EXPORT_WAIT_S):
                if self.path.is_file():
                    log.info("another process exported %s meanwhile; using it", self.path)
                    return
                log.info("exporting %s to ONNX at %s (once per machine)", self.model_dir, self.path)
                exporter(self.model_dir, self.path)
        except Timeout as exc:
            raise RetrievalError(f"waited {EXPORT_WAIT_S} s for another process exporting {self.path}; "
                                 f"if none is running, delete {exc.lock_file}") from exc
        except (OSError, RuntimeError) as exc:
            raise RetrievalError(f"cannot export the embedding model to ONNX at {self.path}: {exc}") from exc
        if not self.path.is_file():
            raise RetrievalError(f"the ONNX exporter wrote nothing at {self.path}")

    def _session_for(self, path: Path) -> Any:
        ort = self._ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads or 0
        options.inter_op_num_threads = 1
        # Idle workers sleep instead of spinning: with spinning, 2 threads were ~2x slower than 1 on
        # a loaded box; without it they were no slower than 1 even at load ~8 (see MiniLMEmbedder).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only; its warnings would reach our stderr on every start
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """L2-normalised mean-pooled vectors, one row per text, in order."""
        if self._lower:
            texts = [t.lower() for t in texts]
        encodings = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(encodings), 0), dtype=np.float32)
        for rows in length_batches([len(e.ids) for e in encodings], self._batch_size):
            vectors = self._encode_batch([encodings[i] for i in rows])
            if out.shape[1] == 0:
                out = np.zeros((len(encodings), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out

    def _encode_batch(self, encodings: Sequence[Any]) -> NDArray[np.float32]:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = e.ids, e.type_ids, e.attention_mask
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        weights = mask[..., None].astype(np.float32)
        return l2_normalise((hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None))
