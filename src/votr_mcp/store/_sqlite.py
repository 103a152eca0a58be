"""The one module that imports a SQLite driver: apsw, with sqlite-vec loaded.

Why apsw: the stock ``sqlite3`` module of many Pythons (the default ``python3`` here, macOS
system Python) is built without ``enable_load_extension``, so it cannot load sqlite-vec.
apsw ships its own SQLite with extension loading on every platform. Keeping the driver in
one module means no process ever holds two SQLite libraries, and every connection is
prepared the same way (WAL, busy timeout, foreign keys, sqlite-vec).

Every apsw error is mapped to :class:`~votr_mcp.errors.StoreError` here or in the callers
of :func:`write` / :func:`guard`, so nothing outside ``votr_mcp.store`` sees apsw.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import sqlite_vec

from votr_mcp.errors import StoreError

__all__ = ["Connection", "connect", "write", "guard", "MEMORY", "vec_version"]

log = logging.getLogger(__name__)

Connection = apsw.Connection
MEMORY = ":memory:"
# Long enough for a writer to finish one indexing batch; readers never wait in WAL mode.
BUSY_TIMEOUT_MS = 10_000
# One writer per connection: a server may write from a worker thread while another thread
# reads, and SQLite would refuse a second BEGIN on a connection already in a transaction.
_WRITE_LOCKS: weakref.WeakKeyDictionary[apsw.Connection, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def connect(path: str | Path, *, readonly: bool = False) -> apsw.Connection:
    """Open (creating if needed) a store file, or ``":memory:"``, ready for use.

    WAL lets readers (searches) run while one writer indexes; ``synchronous=NORMAL`` in
    WAL mode never corrupts the file on a crash and may lose only the last commits on a
    power cut, which the next index run redoes.
    """
    target = str(path)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    if target != MEMORY and not readonly:
        try:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for store '{target}': {exc}; pass --store PATH to a writable place") from exc
    try:
        conn = apsw.Connection(target, flags=flags)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        if target != MEMORY and not readonly:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchall()[0][0]
            if mode != "wal":
                log.warning("store %s is in %s journal mode, not WAL: readers may wait for the writer", target, mode)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except apsw.Error as exc:
        raise StoreError(f"cannot open store '{target}': {exc}; is it a votr-mcp store (SQLite file) you may write?") from exc
    return conn


@contextmanager
def write(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """One write transaction: ``BEGIN IMMEDIATE`` takes the writer lock up front so two
    writers queue instead of failing half way; any error rolls everything back."""
    with _LOCKS_GUARD:
        lock = _WRITE_LOCKS.setdefault(conn, threading.Lock())
    with lock:
        yield from _transaction(conn)


def _transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    try:
        conn.execute("BEGIN IMMEDIATE")
    except apsw.BusyError as exc:
        raise StoreError("the store is locked by another writer (an index run?); try again when it finishes") from exc
    except apsw.Error as exc:
        raise StoreError(f"cannot start a write transaction: {exc}") from exc
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except apsw.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StoreError(f"cannot commit to the store: {exc}") from exc


@contextmanager
def guard(action: str) -> Iterator[None]:
    """Map apsw errors raised inside to StoreError naming the action."""
    try:
        yield
    except apsw.Error as exc:
        raise StoreError(f"store error while {action}: {exc}") from exc


def vec_version(conn: apsw.Connection) -> str:
    """The loaded sqlite-vec version, e.g. ``v0.1.9``."""
    return str(conn.execute("SELECT vec_version()").fetchall()[0][0])

