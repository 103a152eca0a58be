"""The one module that imports a SQLite driver: apsw, with sqlite-vec loaded.

Why apsw: the stock ``sqlite3`` module of many Pythons (the default ``python3`` here, macOS
system Python) is built without ``enable_load_extension``, so it cannot load sqlite-vec.
apsw ships its own SQLite with extension loading on every platform. Keeping the driver in
one module means no process ever holds two SQLite libraries, and every connection is
prepared the same way (WAL, busy timeout, foreign keys, sqlite-vec).

A store file is used through a :class:`Database`: one writer connection behind a lock for
every write, and reader connections of their own for every read, so a search or a call check
on one thread sees only what is committed, never a harvest in progress on another (the
habit of datasette: one writer, readers apart, every connection prepared here).

Every apsw error is mapped to :class:`~votr_mcp.errors.StoreError` here or in the callers
of :func:`write` / :func:`guard`, so nothing outside ``votr_mcp.store`` sees apsw.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from votr_mcp.errors import StoreError

__all__ = ["MEMORY", "Connection", "Database", "connect", "guard", "rows", "vec_version", "write"]

log = logging.getLogger(__name__)

Connection = apsw.Connection
MEMORY = ":memory:"
# Long enough for a writer to finish one indexing batch; readers never wait in WAL mode.
BUSY_TIMEOUT_MS = 10_000
# One writer per connection: a server may write from a worker thread while another thread
# reads, and SQLite would refuse a second BEGIN on a connection already in a transaction.
_WRITERS: weakref.WeakKeyDictionary[apsw.Connection, _Writer] = weakref.WeakKeyDictionary()
_WRITERS_GUARD = threading.Lock()


class _Writer:
    """The lock of one writer connection, and which thread holds it (a read on that thread,
    inside its own write, must see its own uncommitted rows)."""

    __slots__ = ("__weakref__", "lock", "owner")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: int | None = None


def _writer_of(conn: apsw.Connection) -> _Writer:
    with _WRITERS_GUARD:
        return _WRITERS.setdefault(conn, _Writer())


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
    writer = _writer_of(conn)
    if writer.owner == threading.get_ident():
        raise StoreError("a store write was started on a thread already using the writer connection (inside a write, "
                         "or a read of an in-memory store); finish that first")
    with writer.lock:
        writer.owner = threading.get_ident()
        try:
            yield from _transaction(conn)
        finally:
            writer.owner = None


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


def rows(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` run with ``params``.

    apsw types each value as any SQLite value (``int | float | Buffer | str | None``); the
    query's columns say which one it is, so the rows are handed back with ``Any`` values for
    the caller to use as the columns it selected. Works the same on the PostgreSQL adapter
    (``store/postgres/_pg.py``), whose ``execute`` takes the same arguments.
    """
    return conn.execute(sql, params).fetchall()


def vec_version(conn: apsw.Connection) -> str:
    """The loaded sqlite-vec version, e.g. ``v0.1.9``."""
    return str(rows(conn, "SELECT vec_version()")[0][0])



class Database:
    """One store file: every write on one writer connection, every read on a reader of its own.

    :meth:`write` is :func:`write` on the writer connection (its lock queues the writers of
    this process, ``BEGIN IMMEDIATE`` those of other processes). :meth:`read` lends a reader
    connection from a small pool for one read transaction: in WAL mode it sees the state of the
    last commit, all its queries the same one, and never waits for a writer. Readers are opened
    read-only, on first need, and reused by whichever thread reads next.

    A ``":memory:"`` database exists only in its one connection, so there a read takes the
    writer's lock instead (waiting at most the busy timeout): it waits for a write in progress
    rather than see it. A read on the thread that is writing uses the writer connection, so a
    writer reads its own rows.
    """

    def __init__(self, writer: apsw.Connection) -> None:
        self.writer = writer
        # apsw names the file of a connection; an in-memory or temporary database has none, and
        # neither has the PostgreSQL adapter (store/postgres/_pg.py), whose one connection is then
        # shared the in-memory way: a read waits for a write in progress instead of seeing it.
        self.path = getattr(writer, "filename", None) or None
        self._idle: list[apsw.Connection] = []
        self._pool = threading.Lock()
        self._closed = False
        self._watch: apsw.Connection | None = None
        self._watch_lock = threading.Lock()

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """One write transaction on the writer connection (see :func:`write`)."""
        with write(self.writer) as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """A connection for reading, inside one read transaction of committed data."""
        writer = _writer_of(self.writer)
        if writer.owner == threading.get_ident():
            yield self.writer
            return
        if self.path is None:
            if not writer.lock.acquire(timeout=BUSY_TIMEOUT_MS / 1000):
                raise StoreError(f"the in-memory store stayed busy with a write for {BUSY_TIMEOUT_MS / 1000:g} s; try again")
            writer.owner = threading.get_ident()  # a write nested in this read fails clearly, not deadlocks
            try:
                yield self.writer
            finally:
                writer.owner = None
                writer.lock.release()
            return
        conn = self._lend()
        try:
            yield from _snapshot(conn)
        finally:
            self._give_back(conn)

    def data_version(self) -> int:
        """A number that changes whenever a commit reaches the file, from this process or another.

        Read on a connection of its own: ``PRAGMA data_version`` counts the commits of other
        connections only, and its values are comparable only on one connection.
        """
        if self.path is None:
            return 0  # nothing but the writer can change an in-memory database; callers count its writes
        with self._watch_lock:
            if self._watch is None:
                self._watch = connect(self.path, readonly=True)
            return int(rows(self._watch, "PRAGMA data_version")[0][0])

    def close(self) -> None:
        """Close every connection; a reader still lent out closes when it comes back."""
        with self._pool:
            self._closed = True
            idle, self._idle = self._idle, []
        with self._watch_lock:
            watch, self._watch = self._watch, None
        for conn in [*idle, *([watch] if watch is not None else [])]:
            conn.close()
        self.writer.close()

    def _lend(self) -> apsw.Connection:
        with self._pool:
            if self._closed:
                raise StoreError("the store is closed; open it again to read")
            if self._idle:
                return self._idle.pop()
        assert self.path is not None
        return connect(self.path, readonly=True)

    def _give_back(self, conn: apsw.Connection) -> None:
        with self._pool:
            if not self._closed and not conn.in_transaction:
                self._idle.append(conn)
                return
        conn.close()


def _snapshot(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """A read transaction: every query in it sees the same committed state."""
    try:
        conn.execute("BEGIN DEFERRED")
    except apsw.Error as exc:
        raise StoreError(f"cannot start a read of the store: {exc}") from exc
    try:
        yield conn
    finally:
        if conn.in_transaction:
            try:
                conn.execute("COMMIT")
            except apsw.Error:
                conn.execute("ROLLBACK")
