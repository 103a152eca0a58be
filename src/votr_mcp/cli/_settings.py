"""``--set FIELD=VALUE``: retrieval settings from the command line, for measuring a variant on your own data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING

from votr_mcp.errors import CatalogError

if TYPE_CHECKING:
    from votr_mcp.retrieval import RetrievalConfig

__all__ = ["SET_HELP", "retrieval_config"]

SET_HELP = ("change one retrieval setting, e.g. --set rerank=false --set max_needs=5 (repeatable; any field of "
            "votr_mcp.retrieval.RetrievalConfig)")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def retrieval_config(settings: Sequence[str] | None) -> "RetrievalConfig | None":
    """The default config with each ``FIELD=VALUE`` applied, typed like the field's default (None: no settings)."""
    if not settings:
        return None
    from votr_mcp.retrieval import RetrievalConfig  # the retrieval core loads only when a command runs

    base = RetrievalConfig()
    known = {f.name: type(getattr(base, f.name)) for f in fields(base)}
    changes: dict[str, object] = {}
    for setting in settings:
        name, sep, raw = setting.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or name not in known:
            raise CatalogError(f"--set {setting!r}: expected FIELD=VALUE with FIELD one of {', '.join(sorted(known))}")
        kind = known[name]
        try:
            if kind is bool:
                if raw.lower() not in _TRUE | _FALSE:
                    raise ValueError("use true or false")
                changes[name] = raw.lower() in _TRUE
            else:
                changes[name] = kind(raw)
        except ValueError as exc:
            raise CatalogError(f"--set {setting!r}: {name} takes {kind.__name__} values ({exc})") from exc
    try:
        return base.with_(**changes)
    except ValueError as exc:
        raise CatalogError(f"--set: {exc}") from exc
