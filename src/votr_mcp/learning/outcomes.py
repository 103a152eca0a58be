"""The outcome log: every search, what it returned, and which returned tool the agent then called.

A search is remembered per session until the session's next search (the agent acts on the last
answer it read); a call of a tool that answer listed is its outcome. Each finished outcome goes to
the learner (:mod:`votr_mcp.learning.learner`) and, when a sink is given, to storage. Retention is
bounded in memory (sessions, events) and in the sink (``max_events``). With ``keep_queries`` off,
no query text is kept anywhere: the outcome still counts for the bandit, but no example is learned.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from votr_mcp.catalog.models import ToolKey

__all__ = ["Returned", "SearchEvent", "CallEvent", "EventSink", "OutcomeLog", "context_of"]


@dataclass(frozen=True, slots=True)
class Returned:
    """One tool a search handed off: its key, call name, 1-based rank and score."""

    key: ToolKey
    call_name: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """One search: the query (None when query texts are off), what it returned, its context."""

    session: str
    query: str | None
    returned: tuple[Returned, ...]
    context: str
    abstained: bool
    at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class CallEvent:
    """One call. ``search`` is the session's last search when it listed the tool (else None);
    ``after`` that last search in any case (None: the session searched nothing yet). ``answered``:
    the tool ran and answered (False: its server timed out or failed before answering)."""

    session: str
    key: ToolKey
    call_name: str
    success: bool
    search: SearchEvent | None
    at: float = field(default_factory=time.time)
    after: SearchEvent | None = None
    answered: bool = True

    @property
    def rank(self) -> int | None:
        """The called tool's rank in that search (None: the search did not list it)."""
        if self.search is None:
            return None
        return next((r.rank for r in self.search.returned if r.key == self.key), None)


class EventSink(Protocol):
    """Where events are kept beyond the process (``votr_mcp.store.events.EventStore``)."""

    def add_search(self, event: SearchEvent) -> None: ...

    def add_call(self, event: CallEvent) -> None: ...

    def add_follow(self, before: ToolKey, after: ToolKey) -> None:
        """``after`` was called successfully right after ``before`` in one session."""
        ...


def context_of(servers: Sequence[str], depth: int = 5) -> str:
    """The bandit's context of a ranking: the server most of its first ``depth`` tools belong to
    (the neighbourhood the request falls in; ties go to the better ranked server)."""
    head = list(servers[:depth])
    if not head:
        return ""
    return max(dict.fromkeys(head), key=lambda s: (head.count(s), -head.index(s)))


class OutcomeLog:
    """Searches and calls of every session, linked into outcomes (thread-safe enough for one event loop)."""

    def __init__(self, *, keep_queries: bool = True, max_sessions: int = 10_000,
                 sink: EventSink | None = None, listeners: Sequence[Callable[[CallEvent], None]] = ()) -> None:
        self.keep_queries = keep_queries
        self.max_sessions = max_sessions
        self.sink = sink
        self._last: OrderedDict[str, SearchEvent] = OrderedDict()
        self._listeners = list(listeners)

    def listen(self, listener: Callable[[CallEvent], None]) -> None:
        """Call ``listener`` with every call event (the learner's entry)."""
        self._listeners.append(listener)

    def searched(self, session: str, query: str, returned: Sequence[Returned], context: str, abstained: bool) -> SearchEvent:
        event = SearchEvent(session, query if self.keep_queries else None, tuple(returned), context, abstained)
        self._last[session] = event
        self._last.move_to_end(session)
        while len(self._last) > self.max_sessions:
            self._last.popitem(last=False)
        if self.sink is not None:
            self.sink.add_search(event)
        return event

    def called(self, session: str, key: ToolKey, call_name: str, success: bool, answered: bool = True) -> CallEvent:
        last = self._last.get(session)
        search = last if last is not None and any(r.key == key for r in last.returned) else None
        event = CallEvent(session, key, call_name, success, search, after=last, answered=answered)
        if self.sink is not None:
            self.sink.add_call(event)
        for listener in self._listeners:
            listener(event)
        return event
