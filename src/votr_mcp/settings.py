"""The one way settings are checked: pydantic models, and their errors said in one line.

Every settings surface (the retrieval config, the calibration and rerank files, the upstream
config entries) is a pydantic model or dataclass whose fields carry their constraints (types,
bounds, finite numbers, known names, no unknown keys). :func:`describe` turns pydantic's
:class:`ValidationError` into the project's style: each failing field, what it must be, and the
value it got; the caller raises its own error type with the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, ValidationError

__all__ = ["Count", "NonNegative", "Weight", "describe"]

Count = Annotated[int, Field(ge=1)]
"""How many tools or needs: a whole number, at least 1."""
NonNegative = Annotated[int, Field(ge=0)]
"""A whole number, at least 0."""
Weight = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
"""A weight or share: a finite number, at least 0."""


def describe(exc: ValidationError, *, prefix: str = "") -> str:
    """``field: what it must be (got value); ...`` for every error pydantic found."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error.get("loc", ())) or "value"
        message = str(error.get("msg", "invalid")).replace("Input should be", "must be").replace("Value error, ", "")
        got = error.get("input")
        shown = "" if error.get("type") == "missing" or isinstance(got, Mapping) else f" (got {_short(got)})"
        parts.append(f"{prefix}{where}: {message}{shown}")
    return "; ".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
