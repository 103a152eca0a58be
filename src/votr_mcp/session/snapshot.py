"""A session as plain JSON data and back, so a shared store (Redis) can hold it between requests.

Everything a later request needs travels: the bound tools (with their LRU order and times), the
recent searches, the guard's call history and eviction counts, and the tools it evicted. Times
are wall-clock seconds (``time.time``): another replica reads them, and monotonic clocks of two
machines have nothing in common. Settings and the pinned/exempt policy are the server's, not the
session's: the reader supplies them.

The format is versioned (``"v"``); a snapshot of another version is treated as no session, which
costs the agent one new search, never a wrong answer.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from votr_mcp.session.clock import Clock
from votr_mcp.session.context import Binding
from votr_mcp.session.guard import _Track
from votr_mcp.session.policy import ToolPolicy
from votr_mcp.session.settings import SessionSettings
from votr_mcp.session.state import Session

__all__ = ["FORMAT", "dump_session", "load_session"]

FORMAT = 1


def dump_session(session: Session) -> dict[str, Any]:
    """The session's state as JSON-ready data (lists keep every ordered map's order)."""
    guard = session.guard
    return {
        "v": FORMAT,
        "id": session.id,
        "created": session.created,
        "last_seen": session.last_seen,
        "bound": [[name, b.bound_at, b.last_used, b.uses] for name, b in session.context._entries.items()],
        "searches": [[when, list(names)] for when, names in session._searches],
        "evicted": [[name, count] for name, count in session._evicted.items()],
        "tracks": [[key, t.tool, list(t.times)] for key, t in guard._tracks.items()],
        "recent": list(guard._recent),
        "evictions": [[tool, count] for tool, count in guard._evictions.items()],
    }


def load_session(data: dict[str, Any], settings: SessionSettings, clock: Clock, policy: ToolPolicy) -> Session | None:
    """The session a :func:`dump_session` made, or None when ``data`` is not one this version reads."""
    if not isinstance(data, dict) or data.get("v") != FORMAT:
        return None
    try:
        session = Session(str(data["id"]), settings, clock, policy)
        session.created = float(data["created"])
        session.last_seen = float(data["last_seen"])
        session.context._entries = OrderedDict(
            (str(name), Binding(float(at), float(used), int(uses))) for name, at, used, uses in data["bound"])
        session._searches = [(float(when), tuple(str(n) for n in names)) for when, names in data["searches"]]
        session._evicted = OrderedDict((str(name), int(count)) for name, count in data["evicted"])
        guard = session.guard
        guard._tracks = OrderedDict((str(key), _Track(str(tool), [float(t) for t in times])) for key, tool, times in data["tracks"])
        guard._recent = [str(k) for k in data["recent"]]
        guard._evictions = OrderedDict((str(tool), int(count)) for tool, count in data["evictions"])
    except (KeyError, TypeError, ValueError):
        return None
    return session
