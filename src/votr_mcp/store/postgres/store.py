"""The store in PostgreSQL (``votr-mcp serve --store postgresql://…``): the SQLite store's interface
(``registry``, ``vectors``, index runs, ``data_version``) shared by every replica.

- ``registry`` is the very :class:`~votr_mcp.store.registry.Registry` of the SQLite store, over
  :class:`~votr_mcp.store.postgres._pg.PgConnection`: one implementation of change control;
- ``vectors`` keeps float32 vectors by (model id, text hash), as the SQLite store does, read in bulk;
- ``data_version()`` changes whenever another connection commits a change of the registry:
  a listener thread counts the ``NOTIFY`` that the schema's triggers send at each commit (the
  SQLite store reads ``PRAGMA data_version`` for the same purpose), so
  :class:`~votr_mcp.store.store.StoreChangeControl` re-reads held tools within a fraction of a
  second of an accept on any replica, without a query per search; ``on_change`` callbacks let the
  server re-read the catalog after another replica's harvest.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from types import TracebackType

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import StoreError
from votr_mcp.store import _sqlite
from votr_mcp.store.postgres._pg import PgConnection, connect_raw, safe_url
from votr_mcp.store.postgres.schema import CHANNEL, migrate
from votr_mcp.store.registry import Registry

__all__ = ["PgStore", "PgVectorStore", "is_postgres_url"]

log = logging.getLogger(__name__)


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class PgVectorStore:
    """Vectors by (model id, text hash); implements ``votr_mcp.index.dense.EmbeddingCache``."""

    def __init__(self, conn: PgConnection) -> None:
        self.conn = conn

    def get_many(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        if not text_hashes:
            return {}
        rows = self.conn.execute("SELECT key, dim, vector FROM embeddings WHERE model_id = ? AND key = ANY(?)",
                                 (model_id, list(text_hashes))).fetchall()
        return {key: np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32, copy=False) for key, dim, blob in rows}

    def put_many(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None:
        if not vectors:
            return
        items = [(key, np.ascontiguousarray(vec, dtype="<f4").reshape(-1)) for key, vec in vectors.items()]
        dim = int(items[0][1].shape[0])
        if any(vec.shape[0] != dim for _, vec in items):
            raise StoreError(f"vectors for model '{model_id}' differ in dimension; an embedder must return one dimension")
        now = _now()
        import psycopg

        try:
            with self.conn._lock, self.conn.raw.transaction(), self.conn.raw.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO embeddings (key, model_id, dim, vector, created_at) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (key, model_id) DO NOTHING", [(key, model_id, dim, vec.tobytes(), now) for key, vec in items])
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store error while storing embeddings: {exc}") from exc

    def count(self, model_id: str) -> int:
        return int(self.conn.execute("SELECT count(*) FROM embeddings WHERE model_id = ?", (model_id,)).fetchall()[0][0])


class PgStore:
    """An open PostgreSQL store. Use as a context manager or call :meth:`close`."""

    def __init__(self, conn: PgConnection, url: str) -> None:
        self.conn = conn
        self.path = safe_url(url)
        self.registry = Registry(conn)  # type: ignore[arg-type]
        self.vectors = PgVectorStore(conn)
        self._version = 0
        self._callbacks: list[Callable[[], None]] = []
        self._stop = threading.Event()
        self._listener = threading.Thread(target=self._listen, args=(url,), name="votr-pg-listen", daemon=True)
        self._listening = threading.Event()

    @classmethod
    def open(cls, url: str) -> PgStore:
        """Connect to ``url``, create or migrate the schema, and start listening for changes."""
        conn = PgConnection(url)
        try:
            migrate(conn)
        except BaseException:
            conn.close()
            raise
        store = cls(conn, url)
        store._listener.start()
        store._listening.wait(10)
        return store

    def close(self) -> None:
        self._stop.set()
        self._listener.join(5)
        self.conn.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (in the listener thread) after each change committed by any connection."""
        self._callbacks.append(callback)

    def begin_run(self, source: str) -> int:
        with _sqlite.write(self.conn):  # type: ignore[arg-type]
            self.conn.execute("INSERT INTO index_runs (started_at, source) VALUES (?, ?)", (_now(), source))
            return self.conn.last_insert_rowid()

    def finish_run(self, run_id: int, *, tools: int, embedded: int) -> None:
        with _sqlite.write(self.conn):  # type: ignore[arg-type]
            self.conn.execute("UPDATE index_runs SET finished_at = ?, tools = ?, embedded = ? WHERE id = ?",
                              (_now(), tools, embedded, run_id))

    def interrupted_runs(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM index_runs WHERE finished_at IS NULL").fetchall()[0][0])

    def data_version(self) -> int:
        """Changes whenever any connection commits a change of servers or tools (no query)."""
        return self._version

    def _listen(self, url: str) -> None:
        try:
            conn = connect_raw(url)
        except StoreError as exc:
            log.error("change notifications off: %s", exc)
            self._listening.set()
            return
        with conn:
            conn.execute(f"LISTEN {CHANNEL}")
            self._listening.set()
            while not self._stop.is_set():
                try:
                    for _ in conn.notifies(timeout=0.25, stop_after=1):
                        self._version += 1
                        for callback in list(self._callbacks):
                            try:
                                callback()
                            except Exception:
                                log.exception("a store change callback failed")
                except Exception as exc:  # noqa: BLE001 - the server goes on; held tools refresh on restart
                    if not self._stop.is_set():
                        log.error("lost the PostgreSQL change notifications (%s); other replicas' changes "
                                  "reach this one only after a restart", exc)
                    return
