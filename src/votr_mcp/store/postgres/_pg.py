"""The one module that imports the PostgreSQL driver (psycopg 3), and the connection adapter.

The registry's change control (``votr_mcp.store.registry``) is plain SQL over a connection with
apsw's few calls: ``execute(sql, params)`` with ``?`` placeholders returning rows,
``changes()``, ``last_insert_rowid()``, ``in_transaction`` and ``BEGIN IMMEDIATE`` / ``COMMIT``
/ ``ROLLBACK`` (see ``store/_sqlite.py``'s ``write``). :class:`PgConnection` offers exactly those
over PostgreSQL, so the same registry code, the rules against rug pulls above all, runs on both
stores instead of being written twice:

- ``?`` becomes ``%s`` (the registry's SQL has no ``?`` or ``%`` in literals);
- ``BEGIN IMMEDIATE`` becomes ``BEGIN`` plus a transaction-scoped advisory lock, so writers of
  every replica queue as SQLite's writers do, instead of failing on conflicts half way;
- ``last_insert_rowid()`` is ``lastval()`` (the id sequences of the tables);
- every driver error becomes :class:`~votr_mcp.errors.StoreError` naming what failed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from votr_mcp.errors import StoreError

__all__ = ["PgConnection", "connect_raw", "WRITER_LOCK"]

WRITER_LOCK = 0x766F7472  # "votr": the advisory lock every writer of the store takes


def connect_raw(url: str, *, autocommit: bool = True) -> Any:
    """A psycopg connection to ``url``, or StoreError saying how to fix it."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise StoreError("--store postgresql://… needs psycopg: pip install 'psycopg[binary]'") from exc
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to the PostgreSQL store {safe_url(url)}: {exc}; check that the server "
                         "runs and the URL (postgresql://user:password@host:port/database) is right") from exc


def safe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        credentials, host = rest.rsplit("@", 1)
        return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"
    return url


class _Rows:
    """What ``execute`` returns: the rows of a SELECT (empty for other statements)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def __iter__(self) -> Any:
        return iter(self._rows)


class PgConnection:
    """apsw's connection calls that the registry uses, over one psycopg connection (autocommit
    outside explicit transactions). Thread-safe: statements run one at a time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.raw = connect_raw(url)
        self._lock = threading.RLock()
        self._changes = 0

    def execute(self, sql: str, params: Sequence[Any] | Iterable[Any] = ()) -> _Rows:
        import psycopg

        statement = sql.strip()
        try:
            with self._lock:
                if statement == "BEGIN IMMEDIATE":
                    self.raw.execute("BEGIN")
                    self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
                    return _Rows([])
                cursor = self.raw.execute(statement.replace("%", "%%").replace("?", "%s"), tuple(params) or None)
                self._changes = max(cursor.rowcount, 0)
                return _Rows(cursor.fetchall() if cursor.description is not None else [])
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store error: {exc}".strip()) from exc

    def changes(self) -> int:
        return self._changes

    def last_insert_rowid(self) -> int:
        return int(self.execute("SELECT lastval()").fetchall()[0][0])

    @property
    def in_transaction(self) -> bool:
        import psycopg

        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()
