"""Does a request ask for a tool at all? A linear model on the request's multilingual USE vector.

Everyday chat ("explain recursion like I'm five", "rewrite this sentence to sound polite") matches
some tool in any catalog: its words or topic meet a tool's description, and every similarity the
ranked list reads is relative to that catalog. Whether a request asks to *act* on data or on the
world (read, send, list, book, remember) or only to *talk* (explain, advise, write, chat) is a
property of the request alone, the same in every catalog. This module reads it with a logistic
regression over the USE v3 vector, whose 16 languages share one space, so a German question reads
like an English one. Its log-odds, not its probability, is the feature the abstention evidence
reads (evidence.py): the calibration's logistic then adds it to the catalog's evidence on the
same scale, so a request the model is sure is chat counts as much as that certainty, where a
probability (0.04 against 0.2) would hardly move the score.

The weights ship in ``tool_request.npz``, fit by ``votr-mcp fit-request`` on hand-written requests
that are in no evaluation set (eval/queries/request_classifier/), so the dev rows the calibration
fits on, and the test rows, are never in its training data.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import Embedder, JointEmbedder

__all__ = ["LOGIT_BOUND", "NEUTRAL", "SHIPPED_REQUEST_MODEL", "RequestModel", "request_log_odds", "shipped_request_model"]

log = logging.getLogger(__name__)

SHIPPED_REQUEST_MODEL = Path(__file__).with_name("tool_request.npz")
NEUTRAL = 0.0
"""The feature's value (a log-odds) when no model reads the request (no USE vector, or no model shipped)."""
LOGIT_BOUND = 8.0
"""Log-odds are clipped to ±this: beyond it the model is sure, and one feature must not outvote the rest."""


@dataclass(frozen=True, slots=True)
class RequestModel:
    """p(the request asks for a tool) = σ(w·u + b) for the unit-length USE vector u of the request."""

    model_id: str
    """The embedding model whose vectors ``weights`` read (a part of the joint embedder)."""
    weights: NDArray[np.float64]
    bias: float
    source: str = ""
    """How it was fit (command, data, date), kept with the weights."""

    def __post_init__(self) -> None:
        if self.weights.ndim != 1 or not np.all(np.isfinite(self.weights)) or not np.isfinite(self.bias):
            raise RetrievalError("a request model needs one finite weight per vector dimension and a finite bias")

    def log_odds(self, vectors: NDArray[np.floating]) -> NDArray[np.float64]:
        """w·u + b per row of ``vectors`` (rows are normalised to unit length first), clipped to ±LOGIT_BOUND."""
        v = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
        if v.shape[1] != len(self.weights):
            raise RetrievalError(f"the request model reads {len(self.weights)}-dimensional vectors, got {v.shape[1]}")
        norms = np.linalg.norm(v, axis=1)
        v = v / np.where(norms > 0, norms, 1.0)[:, None]
        return np.clip(v @ self.weights + self.bias, -LOGIT_BOUND, LOGIT_BOUND)

    def probability(self, vectors: NDArray[np.floating]) -> NDArray[np.float64]:
        """One probability per row of ``vectors``: σ(:meth:`log_odds`)."""
        return 1.0 / (1.0 + np.exp(-self.log_odds(vectors)))

    def save(self, path: str | Path) -> None:
        np.savez(Path(path), weights=self.weights, bias=np.float64(self.bias),
                 meta=np.array(json.dumps({"model_id": self.model_id, "source": self.source})))

    @classmethod
    def load(cls, path: str | Path) -> RequestModel:
        try:
            with np.load(Path(path)) as data:
                meta = json.loads(str(data["meta"]))
                return cls(str(meta["model_id"]), np.asarray(data["weights"], dtype=np.float64), float(data["bias"]),
                           str(meta.get("source", "")))
        except (OSError, KeyError, ValueError) as exc:
            raise RetrievalError(f"cannot read the request model {path} ({exc}); refit it with votr-mcp fit-request") from exc


@cache
def shipped_request_model() -> RequestModel | None:
    """The packaged model, or None (with one warning) when it is missing or unreadable."""
    if not SHIPPED_REQUEST_MODEL.is_file():
        return None
    try:
        return RequestModel.load(SHIPPED_REQUEST_MODEL)
    except RetrievalError as exc:
        log.warning("abstention runs without the tool-request model: %s", exc)
        return None


def request_log_odds(model: RequestModel | None, embedder: Embedder | None, vec: NDArray[np.float32]) -> float:
    """The model's log-odds for a request vector made by ``embedder``, read from the slice of the
    model it was fit on (a joint vector's USE part); :data:`NEUTRAL` when no such part exists."""
    if model is None or embedder is None:
        return NEUTRAL
    if isinstance(embedder, JointEmbedder):
        for part, columns in zip(embedder.parts, embedder.slices):
            if part.model_id == model.model_id:
                return float(model.log_odds(vec[columns])[0])
    elif embedder.model_id == model.model_id:
        return float(model.log_odds(vec)[0])
    return NEUTRAL
