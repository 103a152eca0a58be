"""Fit the tool-request model (retrieval/tool_request.py) on hand-written requests.

Two kinds of text: requests that ask for a tool (act on files, mail, code, the world) and requests
that do not (chat, knowledge, advice, writing help on pasted text). They are read from plain files,
one request per line (``#`` lines are comments), or from a JSON file of example requests per server
and tool (scripts/registry_examples.json); none comes from an evaluation set, so the dev rows the
calibration then fits its weights on, and the test rows, stay out of this model's training data.

The model is an L2-regularised logistic regression (IRLS, :func:`fit_logistic`) over the requests'
unit-length vectors of one embedding model (USE v3, multilingual), each class weighted to equal
total weight. ``cross_validate`` scores held-out folds by hash, to choose the penalty.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import CatalogError
from votr_mcp.index.dense import Embedder
from votr_mcp.retrieval.abstention_fit import fit_logistic
from votr_mcp.retrieval.tool_request import RequestModel

__all__ = ["cross_validate", "fit_request_model", "read_requests"]

FOLDS = 5


def read_requests(path: Path) -> list[str]:
    """The requests of a text file (one per line) or of a JSON ``{server: {tool: [request, ...]}}`` file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"cannot read {path} ({exc})") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
            out = [r for tools in data.values() for requests in tools.values() for r in requests]
        except (ValueError, AttributeError, TypeError) as exc:
            raise CatalogError(f"{path} is not a JSON object of servers -> tools -> lists of requests ({exc})") from exc
        if not all(isinstance(r, str) for r in out):
            raise CatalogError(f"{path}: every example request must be a string")
    else:
        out = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not out:
        raise CatalogError(f"{path} holds no requests")
    return list(dict.fromkeys(out))


def _design(embedder: Embedder, tool: Sequence[str], chat: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(embedder.encode([*tool, *chat]), dtype=np.float64)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    y = np.r_[np.ones(len(tool)), np.zeros(len(chat))]
    w = np.r_[np.full(len(tool), 0.5 / len(tool)), np.full(len(chat), 0.5 / len(chat))] * len(y)
    return x, y, w


def _fit(x: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], l2: float) -> NDArray[np.float64]:
    return fit_logistic(x, y, w, l2=l2, iterations=100, nonnegative=False)


def fit_request_model(embedder: Embedder, tool: Sequence[str], chat: Sequence[str], *, l2: float,
                      source: str) -> RequestModel:
    """One model over all the given requests."""
    if not tool or not chat:
        raise CatalogError("fitting the tool-request model needs requests of both kinds")
    beta = _fit(*_design(embedder, tool, chat), l2)
    return RequestModel(embedder.model_id, beta[1:], float(beta[0]), source)


def _fold(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % FOLDS


def cross_validate(embedder: Embedder, tool: Sequence[str], chat: Sequence[str],
                   penalties: Sequence[float]) -> dict[float, dict[str, float]]:
    """Per penalty, on held-out folds: balanced accuracy at 0.5, AUC, and the share of chat scored
    below the 3rd percentile of tool requests (what abstention at 3% false refusals could catch)."""
    x, y, w = _design(embedder, tool, chat)
    folds = np.array([_fold(t) for t in [*tool, *chat]])
    out: dict[float, dict[str, float]] = {}
    for l2 in penalties:
        p = np.zeros(len(y))
        for k in range(FOLDS):
            held = folds == k
            beta = _fit(x[~held], y[~held], w[~held], l2)
            p[held] = 1.0 / (1.0 + np.exp(-(x[held] @ beta[1:] + beta[0])))
        pos, neg = p[y == 1], p[y == 0]
        auc = float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())
        floor = float(np.quantile(pos, 0.03))
        out[l2] = {"balanced_accuracy": float(((pos >= 0.5).mean() + (neg < 0.5).mean()) / 2), "auc": auc,
                   "chat_below_tool_p3": float((neg < floor).mean())}
    return out
