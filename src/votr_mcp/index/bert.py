"""BERT's encoder in numpy, for the two BERT models search runs: all-MiniLM-L6-v2 and SPLADE-tiny.

The forward pass is the one of transformers' ``BertModel`` (Devlin et al., 2019), step by step:
word + position + segment embeddings, layer norm, then per layer self-attention with the padding
masked out, a residual and layer norm (post-norm), the feed-forward block with the erf GELU (erf
to float32 precision, not the tanh approximation), a residual and layer norm. Weights come from a
``model.safetensors`` read with ``safetensors.numpy``, so neither torch nor transformers is
needed; both old (``gamma``/``beta``) and new (``weight``/``bias``) layer-norm names are read.
Everything stays float32; the query, key and value projections run as one matrix product.

numpy releases the GIL in its matrix products and ufuncs, so one encoder can serve several threads
at once (MiniLM encodes a big catalog's batches on two threads this way).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError

__all__ = ["BertEncoder", "gelu", "layer_norm", "length_batches", "load_safetensors"]

# A text joins a batch only if at least this share of the batch's width is its own tokens.
PADDING_FILL = 0.75


def load_safetensors(path: Path) -> dict[str, NDArray[Any]]:
    """Every tensor of a safetensors file as a numpy array; :class:`RetrievalError` when unreadable."""
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise RetrievalError(f"cannot read model weights ({exc}); pip install safetensors") from exc
    try:
        return load_file(str(path))
    except Exception as exc:
        raise RetrievalError(f"cannot read the model weights {path} ({exc})") from exc


def layer_norm(x: NDArray[np.float32], gamma: NDArray[np.float32], beta: NDArray[np.float32],
               eps: float) -> NDArray[np.float32]:
    """Layer normalisation over the last axis (Ba et al., 2016), as ``torch.nn.LayerNorm``."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return (centred / np.sqrt(var + np.float32(eps)) * gamma + beta).astype(np.float32, copy=False)


def gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """BERT's exact GELU, x · Φ(x) = x · (1 + erf(x/√2)) / 2 (Hendrycks & Gimpel, 2016).

    erf comes from Abramowitz & Stegun's formula 7.1.26 (absolute error under 1.5e-7, below
    float32's own rounding of a GELU output), not from scipy: scipy's erf has no vectorised
    float32 loop and took 0.79 ms for one 40-token feed-forward block (40 × 1536 values), 1.9 times
    the block's matrix product; this formula, in numpy's vectorised exp and arithmetic, takes
    0.13 ms (timeit on this 2-core machine). tests/index/test_gelu.py holds it to scipy's
    erf within 1e-6 over ±12."""
    z = np.multiply(x, np.float32(1.0 / math.sqrt(2.0)))
    a = np.abs(z)
    t = np.multiply(a, np.float32(0.3275911))
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    p = np.multiply(t, np.float32(1.061405429))
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a                                          # erfc(|z|)
    np.subtract(np.float32(1.0), p, out=p)
    np.copysign(p, z, out=p)                        # erf(z)
    p += np.float32(1.0)
    p *= x
    p *= np.float32(0.5)
    return p


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


class BertEncoder:
    """The embeddings and encoder layers of one BERT checkpoint, ready to run on padded batches.

    ``prefix`` is the checkpoint's name for the BERT body (``"bert."`` in a masked-LM checkpoint,
    ``""`` in a bare ``BertModel`` one). The tensors not under it (a task head) stay in ``extra``.
    """

    def __init__(self, weights: Mapping[str, NDArray[Any]], config: Mapping[str, Any], *, prefix: str = "") -> None:
        def get(name: str) -> NDArray[np.float32]:
            for key in (prefix + name, prefix + name.replace(".weight", ".gamma").replace(".bias", ".beta")):
                if key in weights:
                    return np.ascontiguousarray(weights[key], dtype=np.float32)
            raise RetrievalError(f"the BERT weights lack {prefix + name}; is this a BERT checkpoint?")

        def t(name: str) -> NDArray[np.float32]:  # x @ W.T without a transpose per call
            return np.ascontiguousarray(get(name).T)

        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.heads = int(config["num_attention_heads"])
        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.segment0 = get("embeddings.token_type_embeddings.weight")[0]
        self.embed_norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers: list[dict[str, NDArray[np.float32]]] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            parts = ("query", "key", "value")
            self.layers.append({
                "qkv": np.ascontiguousarray(np.hstack([t(p + f"attention.self.{m}.weight") for m in parts])),
                "qkv_b": np.concatenate([get(p + f"attention.self.{m}.bias") for m in parts]),
                "out": t(p + "attention.output.dense.weight"), "out_b": get(p + "attention.output.dense.bias"),
                "ln1_g": get(p + "attention.output.LayerNorm.weight"), "ln1_b": get(p + "attention.output.LayerNorm.bias"),
                "up": t(p + "intermediate.dense.weight"), "up_b": get(p + "intermediate.dense.bias"),
                "down": t(p + "output.dense.weight"), "down_b": get(p + "output.dense.bias"),
                "ln2_g": get(p + "output.LayerNorm.weight"), "ln2_b": get(p + "output.LayerNorm.bias"),
            })
        self.extra = {k: v for k, v in weights.items() if not k.startswith(prefix)} if prefix else {}
        if self.position.shape[1] % self.heads:
            raise RetrievalError(f"hidden size {self.position.shape[1]} is not a multiple of {self.heads} heads")

    @classmethod
    def from_folder(cls, folder: Path, *, prefix: str = "") -> BertEncoder:
        """The encoder of a Hugging Face model folder (``config.json`` + ``model.safetensors``)."""
        try:
            config = json.loads((folder / "config.json").read_text())
        except (OSError, ValueError) as exc:
            raise RetrievalError(f"cannot read {folder / 'config.json'} ({exc})") from exc
        return cls(load_safetensors(folder / "model.safetensors"), config, prefix=prefix)

    @property
    def max_positions(self) -> int:
        return int(self.position.shape[0])

    def hidden(self, ids: NDArray[np.int64], mask: NDArray[np.bool_]) -> NDArray[np.float32]:
        """The last hidden state (batch × tokens × width) of a padded batch; ``mask`` marks real tokens."""
        b, n = ids.shape
        if n > self.max_positions:
            raise ValueError(f"{n} tokens exceed the model's {self.max_positions} positions; truncate first")
        x = self.word[ids] + self.position[:n] + self.segment0
        x = layer_norm(x, *self.embed_norm, self.eps)
        d = x.shape[-1]
        heads, hd = self.heads, d // self.heads
        scale = np.float32(1.0 / math.sqrt(hd))
        # Padding gets a large negative score before the softmax: exp() makes it exactly 0.
        pad_bias = None if mask.all() else np.where(mask, np.float32(0.0), np.float32(-1e9))[:, None, None, :]
        for w in self.layers:
            qkv = (x @ w["qkv"] + w["qkv_b"]).reshape(b, n, 3, heads, hd)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3) * scale
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k
            if pad_bias is not None:
                scores += pad_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, d)
            x = self._after_attention(w, context, x)
        return x

    def _after_attention(self, w: dict[str, NDArray[np.float32]], context: NDArray[np.float32],
                         x: NDArray[np.float32]) -> NDArray[np.float32]:
        """The rest of a layer once attention has mixed the tokens: output projection, residual and
        layer norm, feed-forward, residual and layer norm. Token by token, so any leading shape."""
        # In place where the result is fresh: big batches spend much of their time allocating.
        attended = context @ w["out"]
        attended += w["out_b"]
        attended += x
        x = layer_norm(attended, w["ln1_g"], w["ln1_b"], self.eps)
        inner = x @ w["up"]
        inner += w["up_b"]
        inner = gelu(inner)
        mixed = inner @ w["down"]
        mixed += w["down_b"]
        mixed += x
        return layer_norm(mixed, w["ln2_g"], w["ln2_b"], self.eps)

    def hidden_packed(self, ids: Sequence[NDArray[np.int64]]) -> NDArray[np.float32]:
        """The last hidden states of several texts laid end to end (total tokens × width), without padding.

        A few short texts (a whole task's needs) cost less this way than in padded batches: every
        token of every text goes through each layer's weights in one matrix product, where a batch
        per length read the layer weights (42 MB for MiniLM, past the caches) once per batch, and
        short texts' batches were bound by that read (measured for MiniLM: 4.3 ms a batch + 0.29 ms
        a token). Only attention is per text, over its own tokens: the same function as
        :meth:`hidden` of each text alone."""
        lengths = [len(t) for t in ids]
        if max(lengths) > self.max_positions:
            raise ValueError(f"{max(lengths)} tokens exceed the model's {self.max_positions} positions; truncate first")
        ends = np.cumsum(lengths)
        spans = [slice(int(e) - n, int(e)) for e, n in zip(ends, lengths)]
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self.word[np.concatenate(ids)] + self.position[positions] + self.segment0
        x = layer_norm(x, *self.embed_norm, self.eps)
        total, d = x.shape
        heads, hd = self.heads, d // self.heads
        scale = np.float32(1.0 / math.sqrt(hd))
        context = np.empty((total, d), dtype=np.float32)
        for w in self.layers:
            qkv = x @ w["qkv"]
            qkv += w["qkv_b"]
            for span, n in zip(spans, lengths):
                part = qkv[span].reshape(n, 3, heads, hd)
                q = part[:, 0].transpose(1, 0, 2) * scale
                scores = q @ part[:, 1].transpose(1, 2, 0)
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[span] = (scores @ part[:, 2].transpose(1, 0, 2)).transpose(1, 0, 2).reshape(n, d)
            x = self._after_attention(w, context, x)
        return x
