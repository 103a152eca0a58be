"""A learned low-rank correction of query vectors (an embedding adapter), fit on dev rows.

MiniLM places a request and the description of the tool that serves it apart in ways that repeat
across catalogs: a request names an outcome ("what's the weather in Oslo"), a description names
an operation ("Get current conditions for a city"). A query vector q becomes
q' = normalise(q + q·U·V), with U (d × r) and V (r × d) fit so that q' lands nearest its gold
tool among all tools of its catalog (softmax cross-entropy at temperature τ, each set weighed
equally, L2 on U·V so the map stays near the identity). Tool vectors are untouched, so the
embedding cache and every stored vector stay valid, and the cost per search is two small matrix
products (d × r, r = 16).

The shipped map is fit on our human-style dev rows (eval/queries/human-registry, -mcpzero,
-mscbench, -metatool, -smithery; ``votr-mcp fit-adapter``, recipe in the file) on the joint
MiniLM+USE vectors (d = 896). Fit on four of those sets and scored dense-only on the fifth's dev rows
(``--cv``), top-1 went human-registry .697 -> .657, human-mcpzero .317 -> .371, human-mscbench .488 ->
.562, human-metatool .652 -> .712, human-smithery .510 -> .510: it carries to most catalogs it never
saw, least to the registry, whose tools' texts are long and exact.

The pipeline reads the map where it was fit, and nowhere else (ranking.py, pipeline.py; the figures
below were measured with the map fit on the first three sets):
- a request searched as one need is ranked by its adapted vector; a task's need fragments ("then
  email it to Bob") and their mean are ranked unadapted (adapted, human-mcpzero's dev chains went
  .714 -> .571, MSC-Bench's .775 -> .754);
- abstention's evidence reads the cosines of the vector before the map: the map moves answerable
  requests toward their tools, and read from it, no-tool requests no longer scored as the
  calibration's null requests did (dev rows, rerank and calibration refit each time; map off /
  evidence read adapted / unadapted: MetaTool no-tool abstention .377 / .298 / .518, MSC-Bench
  level 5 .364 / .273 / .364).
So switched on, with the rerank refit, held-out top-1 on dev (``fit-rerank --cv 3``, each row
adapted by the fit that left its fold out) went human-registry .791 -> .818, human-mcpzero .495 ->
.571, human-mscbench .640 -> .706, the benchmark sets about as they were (MSC-Bench .923 -> .930,
MCP-Zero .847 -> .843, MetaTool .641 -> .636). eval/RESULTS.md reports the test rows.

Fitting the rerank and the calibration on dev rows that also fit the adapter would read cosines
better than any new query gets. A shipped adapter therefore carries ``held_out`` companions, one
per fold of the fitting texts (fold = SHA-256 of the text), each fit without that fold;
:meth:`QueryAdapter.cross_fitted` adapts each text with the companion that never saw it.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import RetrievalError

__all__ = ["FOLDS", "Adapts", "CrossFitted", "QueryAdapter", "SHIPPED_ADAPTER", "fold_of", "shipped_adapter"]

SHIPPED_ADAPTER = Path(__file__).with_name("query_adapter.npz")
FOLDS = 5


def fold_of(text: str, folds: int = FOLDS) -> int:
    """The fold a query text belongs to, the same on every machine."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % folds


class Adapts(Protocol):
    """What the pipeline calls on each query vector."""

    @property
    def model_id(self) -> str: ...  # read only: the adapters are frozen dataclasses

    def adapt(self, text: str, vector: NDArray[np.float32]) -> NDArray[np.float32]: ...


@dataclass(frozen=True, slots=True, eq=False)
class QueryAdapter:
    """q' = normalise(q + q·U·V); ``held_out[f]`` is the same fit without fold f (may be empty)."""

    u: NDArray[np.float32]
    v: NDArray[np.float32]
    model_id: str
    source: str = ""
    held_out: tuple[QueryAdapter, ...] = ()

    def __post_init__(self) -> None:
        if self.u.ndim != 2 or self.v.ndim != 2 or self.u.shape[1] != self.v.shape[0] or self.u.shape[0] != self.v.shape[1]:
            raise RetrievalError(f"query adapter factors have shapes {self.u.shape} and {self.v.shape}; they must be "
                                 "(d, r) and (r, d): refit it with `votr-mcp fit-adapter`")
        if len(self.held_out) == 1:
            raise RetrievalError("query adapter has 1 held-out fit; cross-fitting needs at least 2: refit it")

    @property
    def dim(self) -> int:
        return int(self.u.shape[0])

    def adapt(self, text: str, vector: NDArray[np.float32]) -> NDArray[np.float32]:
        out = vector + (vector @ self.u) @ self.v
        norm = float(np.linalg.norm(out))
        return (out / norm).astype(np.float32) if norm > 0 else vector

    def cross_fitted(self) -> CrossFitted:
        """This adapter for fitting on its own dev rows: each text adapted by a fit that never saw it."""
        if not self.held_out:
            raise RetrievalError("this query adapter has no held-out fits; refit it with `votr-mcp fit-adapter`")
        return CrossFitted(self.model_id, self.held_out)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, NDArray[np.float32]] = {"u": self.u, "v": self.v}
        for f, part in enumerate(self.held_out):
            arrays[f"u{f}"], arrays[f"v{f}"] = part.u, part.v
        meta = json.dumps({"model_id": self.model_id, "source": self.source, "folds": len(self.held_out)})
        buffer = io.BytesIO()
        # No object arrays here, so no pickling (load() refuses it too); naming allow_pickle also keeps
        # **arrays from standing for that keyword.
        np.savez_compressed(buffer, allow_pickle=False, meta=np.array(meta), **arrays)
        Path(path).write_bytes(buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> QueryAdapter:
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                folds = int(meta.get("folds", 0))
                held = tuple(cls(data[f"u{f}"].astype(np.float32), data[f"v{f}"].astype(np.float32), meta["model_id"])
                             for f in range(folds))
                return cls(data["u"].astype(np.float32), data["v"].astype(np.float32), meta["model_id"],
                           meta.get("source", ""), held)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RetrievalError(f"cannot read query adapter '{path}': {exc}; refit it with `votr-mcp fit-adapter`") from exc


@dataclass(frozen=True, slots=True)
class CrossFitted:
    """Adapts each text with the held-out fit of its fold (for fitting the rerank and calibration)."""

    model_id: str
    parts: tuple[QueryAdapter, ...]

    def adapt(self, text: str, vector: NDArray[np.float32]) -> NDArray[np.float32]:
        return self.parts[fold_of(text, len(self.parts))].adapt(text, vector)


def shipped_adapter() -> QueryAdapter | None:
    """The adapter shipped with the package, or None when absent."""
    return QueryAdapter.load(SHIPPED_ADAPTER) if SHIPPED_ADAPTER.is_file() else None
