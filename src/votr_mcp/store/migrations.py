"""Numbered schema migrations for the registry store.

Each migration is a function ``mNNN_name(conn)`` listed in :data:`MIGRATIONS`, applied once,
in order, each in its own transaction together with its row in the ``migrations`` table,
so a crash between two migrations leaves a store at a well-defined version. A migration is
never edited after release: a schema change is a new migration.

Schema (after all migrations)::

    servers           one row per upstream server; trust policy 'manual' | 'auto'
    tool_versions     immutable history: every definition a tool ever had, with the fields
                      that changed from the previous version (triggers forbid UPDATE/DELETE)
    tools             one row per (server, tool): the definition upstream serves now, its
                      content hash, the accepted version, status 'active' | 'held' | 'removed',
                      and why a held tool is held beyond a changed definition (hold_reasons:
                      a JSON list, e.g. added after its server's first harvest, poisoning)
    tool_decisions    audit trail: trusted on first use, auto-accepted, held, accepted, ...
    embeddings        vectors keyed by (content hash, model id), float32 blobs
    vector_tables     one sqlite-vec vec0 table per model (dimension is fixed per table)
    index_runs        start/finish of every index run, to tell an interrupted one
    selection_events  room for search/call/outcome events logged by later issues
    tool_successors   how often each tool was called successfully right after another in a session
                      (the "usually called next" hints), kept apart from the bounded event log
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone

from votr_mcp.errors import StoreError
from votr_mcp.store import _sqlite
from votr_mcp.store._sqlite import Connection

__all__ = ["MIGRATIONS", "LATEST", "migrate", "applied"]

log = logging.getLogger(__name__)


def m001_registry(conn: Connection) -> None:
    conn.execute(
        """
        CREATE TABLE servers (
            id          INTEGER PRIMARY KEY,
            name        TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL DEFAULT '',
            summary     TEXT NOT NULL DEFAULT '',
            server_hash TEXT NOT NULL,
            trust       TEXT NOT NULL DEFAULT 'manual' CHECK (trust IN ('manual', 'auto')),
            present     INTEGER NOT NULL DEFAULT 1,
            first_seen  TEXT NOT NULL,
            updated_at  TEXT NOT NULL
        );
        CREATE TABLE tool_versions (
            id             INTEGER PRIMARY KEY,
            server_id      INTEGER NOT NULL REFERENCES servers(id),
            name           TEXT NOT NULL,
            version        INTEGER NOT NULL CHECK (version >= 1),
            content_hash   TEXT NOT NULL,
            definition     TEXT NOT NULL,
            changed_fields TEXT NOT NULL,
            seen_at        TEXT NOT NULL,
            UNIQUE (server_id, name, version)
        );
        CREATE INDEX tool_versions_by_hash ON tool_versions (server_id, name, content_hash);
        CREATE TRIGGER tool_versions_no_update BEFORE UPDATE ON tool_versions
            BEGIN SELECT RAISE(ABORT, 'tool history is immutable'); END;
        CREATE TRIGGER tool_versions_no_delete BEFORE DELETE ON tool_versions
            BEGIN SELECT RAISE(ABORT, 'tool history is immutable'); END;
        CREATE TABLE tools (
            id                  INTEGER PRIMARY KEY,
            server_id           INTEGER NOT NULL REFERENCES servers(id),
            name                TEXT NOT NULL,
            content_hash        TEXT NOT NULL,
            definition          TEXT NOT NULL,
            extra               TEXT NOT NULL DEFAULT '{}',
            current_version_id  INTEGER NOT NULL REFERENCES tool_versions(id),
            accepted_version_id INTEGER REFERENCES tool_versions(id),
            status              TEXT NOT NULL CHECK (status IN ('active', 'held', 'removed')),
            updated_at          TEXT NOT NULL,
            UNIQUE (server_id, name)
        );
        CREATE INDEX tools_by_status ON tools (status);
        CREATE TABLE tool_decisions (
            id         INTEGER PRIMARY KEY,
            tool_id    INTEGER NOT NULL REFERENCES tools(id),
            version_id INTEGER REFERENCES tool_versions(id),
            action     TEXT NOT NULL,
            at         TEXT NOT NULL,
            note       TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX tool_decisions_by_tool ON tool_decisions (tool_id);
        """
    )


def m002_embeddings(conn: Connection) -> None:
    conn.execute(
        """
        CREATE TABLE embeddings (
            id         INTEGER PRIMARY KEY,
            key        TEXT NOT NULL,
            model_id   TEXT NOT NULL,
            dim        INTEGER NOT NULL CHECK (dim > 0),
            vector     BLOB NOT NULL CHECK (length(vector) = 4 * dim),
            created_at TEXT NOT NULL,
            UNIQUE (key, model_id)
        );
        CREATE TABLE vector_tables (
            model_id   TEXT PRIMARY KEY,
            dim        INTEGER NOT NULL,
            table_name TEXT NOT NULL UNIQUE
        );
        """
    )


def m003_runs_and_events(conn: Connection) -> None:
    conn.execute(
        """
        CREATE TABLE index_runs (
            id          INTEGER PRIMARY KEY,
            started_at  TEXT NOT NULL,
            finished_at TEXT,
            source      TEXT NOT NULL DEFAULT '',
            tools       INTEGER,
            embedded    INTEGER
        );
        CREATE TABLE selection_events (
            id         INTEGER PRIMARY KEY,
            at         TEXT NOT NULL,
            kind       TEXT NOT NULL CHECK (kind IN ('search', 'call', 'outcome')),
            session_id TEXT,
            query      TEXT,
            tool_id    INTEGER REFERENCES tools(id),
            rank       INTEGER,
            score      REAL,
            success    INTEGER,
            detail     TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX selection_events_by_tool ON selection_events (tool_id, at);
        """
    )


def m004_hold_reasons(conn: Connection) -> None:
    conn.execute("ALTER TABLE tools ADD COLUMN hold_reasons TEXT NOT NULL DEFAULT '[]'")


def m005_tool_successors(conn: Connection) -> None:
    conn.execute(
        """
        CREATE TABLE tool_successors (
            before_server TEXT NOT NULL,
            before_tool   TEXT NOT NULL,
            after_server  TEXT NOT NULL,
            after_tool    TEXT NOT NULL,
            count         INTEGER NOT NULL CHECK (count > 0),
            updated_at    TEXT NOT NULL,
            PRIMARY KEY (before_server, before_tool, after_server, after_tool)
        );
        """
    )


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (m001_registry, m002_embeddings, m003_runs_and_events, m004_hold_reasons,
                                                        m005_tool_successors)
LATEST = len(MIGRATIONS)


def applied(conn: Connection) -> list[int]:
    """Numbers of the migrations this store has, in order."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    return [row[0] for row in conn.execute("SELECT number FROM migrations ORDER BY number")]


def migrate(conn: Connection, *, upto: int = LATEST) -> int:
    """Apply the missing migrations up to ``upto``; return the store's version after."""
    with _sqlite.guard("reading the schema version"):
        done = applied(conn)
    if done and done[-1] > LATEST:
        raise StoreError(
            f"this store is at schema version {done[-1]} but this votr-mcp knows only {LATEST}; "
            "upgrade votr-mcp or point --store at another file"
        )
    expected = list(range(1, len(done) + 1))
    if done != expected:
        raise StoreError(f"store migrations table is damaged (has {done}, expected {expected}); restore a backup or rebuild the store")
    for number in range(len(done) + 1, upto + 1):
        step = MIGRATIONS[number - 1]
        with _sqlite.guard(f"applying migration {step.__name__}"), _sqlite.write(conn):
            step(conn)
            conn.execute(
                "INSERT INTO migrations (number, name, applied_at) VALUES (?, ?, ?)",
                (number, step.__name__, datetime.now(timezone.utc).isoformat(timespec="seconds")),
            )
        log.debug("store migrated to %s", step.__name__)
    return max(len(done), upto)
