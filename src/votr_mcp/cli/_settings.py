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


def retrieval_config(settings: Sequence[str] | None) -> RetrievalConfig | None:
    """The default config with each ``FIELD=VALUE`` applied (None: no settings). The values are
    strings; the config's own pydantic check reads each as its field's type and bounds it."""
    if not settings:
        return None
    from votr_mcp.retrieval import RetrievalConfig  # the retrieval core loads only when a command runs

    base = RetrievalConfig()
    known = {f.name for f in fields(base)}
    changes: dict[str, object] = {}
    for setting in settings:
        name, sep, raw = setting.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or name not in known:
            raise CatalogError(f"--set {setting!r}: expected FIELD=VALUE with FIELD one of {', '.join(sorted(known))}")
        changes[name] = raw
    try:
        return base.with_(**changes)
    except ValueError as exc:
        raise CatalogError(f"--set: {exc}") from exc
