"""The store: one SQLite file holding the registry and its vectors, opened in one place.

``Store.open(path)`` connects (WAL, sqlite-vec), applies missing migrations and exposes the
:class:`~votr_mcp.store.registry.Registry` (servers, tools, history, change control) and the
:class:`~votr_mcp.store.vectors.VectorStore` (embedding cache). One process writes at a time
(``BEGIN IMMEDIATE``) on the store's one writer connection; every read runs on a reader
connection of its own (:class:`~votr_mcp.store._sqlite.Database`), so readers on other threads
or in other processes see only committed data and never wait, thanks to WAL.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from votr_mcp.catalog import ToolKey
from votr_mcp.store import _sqlite
from votr_mcp.store.migrations import LATEST, migrate
from votr_mcp.store.registry import Registry
from votr_mcp.store.vectors import VectorStore

__all__ = ["Store", "StoreChangeControl", "default_store_path", "MEMORY"]

log = logging.getLogger(__name__)

MEMORY = _sqlite.MEMORY
STORE_FILENAME = "registry.sqlite3"


def default_store_path() -> Path:
    """``<user data dir>/votr-mcp/registry.sqlite3`` (platformdirs), e.g. ~/.local/share on Linux."""
    import platformdirs

    return Path(platformdirs.user_data_dir("votr-mcp", appauthor=False)) / STORE_FILENAME


class Store:
    """An open store. Use as a context manager or call :meth:`close`."""

    def __init__(self, conn: _sqlite.Connection, path: str) -> None:
        self.db = _sqlite.Database(conn)
        self.conn = conn  # the writer connection; read through self.db.read()
        self.path = path
        self.registry = Registry(self.db)
        self.vectors = VectorStore(self.db)

    @classmethod
    def open(cls, path: str | Path, *, upto: int = LATEST) -> Store:
        """Open or create the store at ``path`` (``":memory:"`` for tests), migrated to ``upto``."""
        conn = _sqlite.connect(path)
        try:
            migrate(conn, upto=upto)
        except BaseException:
            conn.close()
            raise
        return cls(conn, str(path))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def begin_run(self, source: str) -> int:
        """Record the start of an index run; returns its id."""
        with _sqlite.guard("recording an index run"), _sqlite.write(self.conn):
            self.conn.execute("INSERT INTO index_runs (started_at, source) VALUES (?, ?)", (_now(), source))
            return int(self.conn.last_insert_rowid())

    def finish_run(self, run_id: int, *, tools: int, embedded: int) -> None:
        with _sqlite.guard("recording an index run"), _sqlite.write(self.conn):
            self.conn.execute("UPDATE index_runs SET finished_at = ?, tools = ?, embedded = ? WHERE id = ?",
                              (_now(), tools, embedded, run_id))

    def interrupted_runs(self) -> int:
        """How many index runs started and never finished (killed, crashed)."""
        with _sqlite.guard("reading index runs"), self.db.read() as conn:
            return int(_sqlite.rows(conn, "SELECT count(*) FROM index_runs WHERE finished_at IS NULL")[0][0])

    def data_version(self) -> int:
        """Changes whenever a commit reaches the file from another process or this store's
        writer (SQLite ``PRAGMA data_version`` on a connection kept for it); an in-memory
        store answers 0: count its writes with ``registry.generation``."""
        with _sqlite.guard("reading the store's version"):
            return self.db.data_version()


class StoreChangeControl:
    """The server's change-control hook (``votr_mcp.server.hooks.ChangeControl``) over a store.

    ``withheld()`` runs on every search, so the held set is kept in memory and re-read only
    when the file changed (an index run or `tools accept` in another process), which SQLite
    reports through ``PRAGMA data_version`` at the cost of one tiny query.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        # (version, held set) in one tuple: threads checking at once swap it whole, so a held
        # set is never paired with a newer version than the one it was read at.
        self._cache: tuple[tuple[int, int], frozenset[ToolKey]] | None = None

    @property
    def store(self) -> Store:
        """The store (the dashboard reads held tools' history and records decisions through it)."""
        return self._store

    def withheld(self) -> Collection[ToolKey]:
        # The version is taken before the read, so the set read is at least that recent.
        version = (self._store.data_version(), self._store.registry.generation)
        cache = self._cache
        if cache is None or cache[0] != version:
            cache = (version, self._store.registry.withheld())
            self._cache = cache
        return cache[1]

    def refusal(self, key: ToolKey) -> str | None:
        if key not in self.withheld():
            return None
        return self._store.registry.refusal(key)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
