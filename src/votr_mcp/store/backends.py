"""Open the store a ``--store`` value names: a SQLite file (the embedded default) or, for several
replicas, a PostgreSQL database (``postgresql://…``). Both offer the same interface: ``registry``,
``vectors``, ``begin_run``/``finish_run``, ``data_version`` and ``close``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["is_url", "open_store"]


def is_url(target: str | Path) -> bool:
    """True for a PostgreSQL URL (``postgresql://`` or ``postgres://``), False for a file path."""
    return str(target).startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path) -> Any:
    """The store at ``target``: ``PgStore`` for a PostgreSQL URL, else the SQLite ``Store``."""
    if is_url(target):
        from votr_mcp.store.postgres import PgStore

        return PgStore.open(str(target))
    from votr_mcp.store.store import Store

    return Store.open(target)
