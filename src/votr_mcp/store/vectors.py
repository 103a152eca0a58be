"""Embedding vectors in the store: the ``EmbeddingCache`` protocol (:mod:`votr_mcp.index.dense`) over SQLite + sqlite-vec.

Vectors are keyed by (model id, text hash): the SHA-256 of the exact text the model read
(``votr_mcp.index.dense.text_hash``), so an unchanged tool is never re-embedded and a
changed one is. Each vector lives twice, in one transaction: as a float32 blob in
``embeddings`` (the source of truth, read back in bulk at start-up) and in a sqlite-vec
``vec0`` table per model (rowid = embeddings.id) for KNN inside SQLite. eval/KNN.md
compares that KNN with numpy over the matrix in memory; the server searches in memory.

Every :meth:`VectorStore.put_many` commits, so an index run killed part way keeps the
batches it finished and the next run embeds only the rest. Reads run on reader connections
of their own (``Database.read``): a search never sees a batch that is not committed yet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

import numpy as np
from numpy.typing import NDArray

from votr_mcp.errors import StoreError
from votr_mcp.store import _sqlite
from votr_mcp.store._sqlite import Connection, Database

__all__ = ["VectorStore"]


class VectorStore:
    """Vectors by (model id, text hash); implements ``votr_mcp.index.dense.EmbeddingCache``."""

    def __init__(self, conn: Connection | Database) -> None:
        self._db = conn if isinstance(conn, Database) else Database(conn)
        self.conn = self._db.writer  # writes only; reads go through self._db.read()
        self._tables: dict[str, tuple[str, int]] = {}

    def get_many(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Stored vectors for the given hashes; missing ones are absent from the answer."""
        if not text_hashes:
            return {}
        with _sqlite.guard("reading embeddings"), self._db.read() as conn:
            rows = _sqlite.rows(conn,
                "SELECT key, dim, vector FROM embeddings WHERE model_id = ? AND key IN (SELECT value FROM json_each(?))",
                (model_id, json.dumps(list(text_hashes))),
            )
        return {key: np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32, copy=False) for key, dim, blob in rows}

    def put_many(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None:
        """Store vectors (keys already stored are kept as they are), in one committed transaction."""
        if not vectors:
            return
        items = [(key, np.ascontiguousarray(vec, dtype="<f4").reshape(-1)) for key, vec in vectors.items()]
        dim = int(items[0][1].shape[0])
        if any(vec.shape[0] != dim for _, vec in items):
            raise StoreError(f"vectors for model '{model_id}' differ in dimension; an embedder must return one dimension")
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with _sqlite.guard("storing embeddings"), _sqlite.write(self.conn):
            table = self._table(self.conn, model_id, dim, create=True)
            for key, vec in items:
                blob = vec.tobytes()
                self.conn.execute(
                    "INSERT INTO embeddings (key, model_id, dim, vector, created_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (key, model_id) DO NOTHING", (key, model_id, dim, blob, now))
                if self.conn.changes():
                    self.conn.execute(f"INSERT INTO {table} (rowid, embedding) VALUES (?, ?)", (self.conn.last_insert_rowid(), blob))

    def count(self, model_id: str) -> int:
        """How many vectors the store holds for ``model_id``."""
        with _sqlite.guard("counting embeddings"), self._db.read() as conn:
            return int(_sqlite.rows(conn, "SELECT count(*) FROM embeddings WHERE model_id = ?", (model_id,))[0][0])

    def matrix(self, model_id: str, text_hashes: Sequence[str] | None = None) -> tuple[list[str], NDArray[np.float32]]:
        """(keys, matrix with one row per key) for all stored vectors of the model, or for
        ``text_hashes`` in that order (all must be stored)."""
        if text_hashes is not None:
            found = self.get_many(model_id, text_hashes)
            missing = [h for h in text_hashes if h not in found]
            if missing:
                raise StoreError(f"{len(missing)} vectors are not in the store for model '{model_id}'; run `votr-mcp index` first")
            keys = list(text_hashes)
            rows = [found[h] for h in keys]
            return keys, np.stack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, 0), dtype=np.float32)
        # One read transaction: the count and the rows come from the same commit.
        with _sqlite.guard("reading embeddings"), self._db.read() as conn:
            n, dim = _sqlite.rows(conn, "SELECT count(*), max(dim) FROM embeddings WHERE model_id = ?", (model_id,))[0]
            # Filled in place: stacking 100k separate row arrays would double the peak memory.
            out = np.empty((n, dim or 0), dtype=np.float32)
            keys = []
            for i, (key, blob) in enumerate(conn.execute(
                    "SELECT key, vector FROM embeddings WHERE model_id = ? ORDER BY id", (model_id,))):
                out[i] = np.frombuffer(blob, dtype="<f4")
                keys.append(key)
        return keys, out

    def knn(self, model_id: str, query: NDArray[np.float32], k: int) -> list[tuple[str, float]]:
        """The ``k`` stored vectors nearest to ``query`` by cosine distance, via sqlite-vec."""
        with _sqlite.guard("searching embeddings"), self._db.read() as conn:
            table = self._table(conn, model_id, int(np.asarray(query).shape[-1]), create=False)
            if table is None:
                return []
            rows = _sqlite.rows(conn,
                f"SELECT e.key, v.distance FROM (SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ?) v "
                "JOIN embeddings e ON e.id = v.rowid ORDER BY v.distance",
                (np.ascontiguousarray(query, dtype="<f4").tobytes(), int(k)),
            )
        return [(key, float(d)) for key, d in rows]

    def _table(self, conn: Connection, model_id: str, dim: int, *, create: bool) -> str | None:
        """The vec0 table of a model, read on ``conn`` (created inside the caller's write
        transaction when asked)."""
        if model_id not in self._tables:
            found = _sqlite.rows(conn, "SELECT table_name, dim FROM vector_tables WHERE model_id = ?", (model_id,))
            if found:
                self._tables[model_id] = (str(found[0][0]), int(found[0][1]))
            elif create:
                number = int(_sqlite.rows(conn, "SELECT count(*) FROM vector_tables")[0][0]) + 1
                name = f"vec_model_{number}"
                conn.execute(f"CREATE VIRTUAL TABLE {name} USING vec0(embedding float[{dim}] distance_metric=cosine)")
                conn.execute("INSERT INTO vector_tables (model_id, dim, table_name) VALUES (?, ?, ?)", (model_id, dim, name))
                # Not cached until commit: a rolled-back transaction must not leave a stale name here.
                return name
            else:
                return None
        name, stored_dim = self._tables[model_id]
        if stored_dim != dim:
            raise StoreError(f"model '{model_id}' has {stored_dim}-dimensional vectors in the store, got {dim}")
        return name
