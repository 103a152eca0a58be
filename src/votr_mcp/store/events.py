"""The outcome log on disk: searches and calls in ``selection_events`` (migration m003), and how
often each tool followed another in ``tool_successors`` (m005).

Rows (``detail`` is JSON):

    search  session_id, query (NULL when query texts are off), detail {returned: [[server, tool,
            rank, score], ...], context, abstained}
    call    session_id, query of the search that listed the tool (or NULL), tool_id (when the
            registry knows the tool), rank in that search (NULL: none listed it), success,
            detail {server, tool, context, passed_over: [[server, tool], ...], answered (only when
            false: the server timed out or failed before the tool answered)}

Writes are buffered and flushed together (:meth:`EventStore.flush`, from a worker thread), so a
search never waits for the disk. ``selection_events`` keeps the newest ``max_events`` rows;
``tool_successors`` keeps one counter per (tool, tool called right after it), so the "usually called
next" hints outlive the events they were counted from (and add up over replicas sharing a store).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from votr_mcp.store import _sqlite
from votr_mcp.store.store import Store

__all__ = ["EventStore", "StoredCall", "DEFAULT_MAX_EVENTS"]

Key = tuple[str, str]

log = logging.getLogger(__name__)

DEFAULT_MAX_EVENTS = 200_000
"""Rows kept (about 60 MB at a few hundred bytes a row); the oldest go first."""


@dataclass(frozen=True, slots=True)
class StoredCall:
    """A call as the log kept it, for rebuilding what was learned after a restart."""

    server: str
    tool: str
    success: bool
    rank: int | None
    query: str | None
    context: str
    passed_over: tuple[tuple[str, str], ...]
    answered: bool = True  # False: the server timed out or failed before the tool answered


class EventStore:
    """The :class:`votr_mcp.learning.EventSink` over a store."""

    def __init__(self, store: Store, *, max_events: int = DEFAULT_MAX_EVENTS, flush_every: int = 64) -> None:
        self._store = store
        self.max_events = max_events
        self.flush_every = flush_every
        self._pending: list[tuple[Any, ...]] = []
        self._follows: dict[tuple[Key, Key], int] = {}  # (tool, tool called right after it) -> times, not yet written
        self._lock = threading.Lock()

    def add_search(self, event: Any) -> None:
        returned = [[r.key[0], r.key[1], r.rank, round(r.score, 4)] for r in event.returned]
        detail = {"returned": returned, "context": event.context, "abstained": event.abstained}
        self._add(("search", event.session, event.query, None, None, None, None, detail, event.at))

    def add_call(self, event: Any) -> None:
        search = event.search
        rank = event.rank
        passed = [[r.key[0], r.key[1]] for r in search.returned if rank is not None and r.rank < rank] if search else []
        detail = {"server": event.key[0], "tool": event.key[1], "context": search.context if search else "", "passed_over": passed}
        if not getattr(event, "answered", True):
            detail["answered"] = False
        query = search.query if search is not None else None
        self._add(("call", event.session, query, event.key, rank, None, int(event.success), detail, event.at))

    def add_follow(self, before: Key, after: Key) -> None:
        """``after`` was called successfully right after ``before`` in a session."""
        with self._lock:
            self._follows[(before, after)] = self._follows.get((before, after), 0) + 1
            due = sum(self._follows.values()) >= self.flush_every
        if due:
            self.flush()

    def _add(self, row: tuple[Any, ...]) -> None:
        with self._lock:
            self._pending.append(row)
            due = len(self._pending) >= self.flush_every
        if due:
            self.flush()

    def flush(self) -> int:
        """Write what is buffered; returns how many rows."""
        with self._lock:
            rows, self._pending = self._pending, []
            follows, self._follows = self._follows, {}
        if not rows and not follows:
            return 0
        conn = self._store.conn
        with _sqlite.guard("recording search outcomes"), _sqlite.write(conn):
            at_now = _iso(time.time())
            for (before, after), times in follows.items():
                conn.execute("INSERT INTO tool_successors (before_server, before_tool, after_server, after_tool, count, updated_at) "
                             "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (before_server, before_tool, after_server, after_tool) "
                             "DO UPDATE SET count = tool_successors.count + excluded.count, updated_at = excluded.updated_at",
                             (before[0], before[1], after[0], after[1], times, at_now))
            for kind, session, query, key, rank, score, success, detail, at in rows:
                tool_id = None
                if key is not None:
                    found = conn.execute("SELECT t.id FROM tools t JOIN servers s ON s.id = t.server_id "
                                         "WHERE s.name = ? AND t.name = ?", key).fetchall()
                    tool_id = found[0][0] if found else None
                conn.execute("INSERT INTO selection_events (at, kind, session_id, query, tool_id, rank, score, success, detail) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (_iso(at), kind, session, query, tool_id, rank, score, success, json.dumps(detail)))
            if rows:
                newest = int(conn.execute("SELECT max(id) FROM selection_events").fetchall()[0][0] or 0)
                conn.execute("DELETE FROM selection_events WHERE id <= ?", (newest - self.max_events,))
        return len(rows) + len(follows)

    def calls(self, limit: int | None = None) -> Iterator[StoredCall]:
        """Stored calls, oldest first (the newest ``limit`` when given)."""
        sql = "SELECT query, rank, success, detail FROM selection_events WHERE kind = 'call' ORDER BY id DESC"
        with _sqlite.guard("reading search outcomes"):
            rows = self._store.conn.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        for query, rank, success, detail in reversed(rows):
            d = json.loads(detail)
            yield StoredCall(d.get("server", ""), d.get("tool", ""), bool(success), rank, query, d.get("context", ""),
                             tuple((p[0], p[1]) for p in d.get("passed_over", [])), bool(d.get("answered", True)))

    def successors(self) -> Iterator[tuple[Key, Key, int]]:
        """(tool, tool called successfully right after it, how many times) of every pair counted."""
        sql = ("SELECT before_server, before_tool, after_server, after_tool, count FROM tool_successors "
               "ORDER BY before_server, before_tool, after_server, after_tool")
        with _sqlite.guard("reading tool successors"):
            rows = _sqlite.rows(self._store.conn, sql)
        for before_server, before_tool, after_server, after_tool, count in rows:
            yield (str(before_server), str(before_tool)), (str(after_server), str(after_tool)), int(count)

    def searches(self) -> Iterator[tuple[str | None, bool, list[list[Any]]]]:
        """(query, abstained, returned rows) of every stored search, oldest first."""
        with _sqlite.guard("reading search outcomes"):
            rows = self._store.conn.execute("SELECT query, detail FROM selection_events WHERE kind = 'search' ORDER BY id").fetchall()
        for query, detail in rows:
            d = json.loads(str(detail))
            yield (str(query) if query is not None else None), bool(d.get("abstained")), list(d.get("returned", []))


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds")
