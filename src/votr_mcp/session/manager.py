"""The session registry: finds or creates the session of each request, and bounds them.

Identity. A request belongs to the session of its transport (one stdio connection, one
streamable-HTTP session) when the server passes a ``transport_key``; a client that opens a
new connection per request passes back the ``session_id`` that ``search_tools`` returned.
A session started on a connection is bound to it: its id presented on another connection
acts in nothing.
Session ids come from ``secrets`` (192 bits), so they cannot be guessed: holding one is
what lets a request see a session, and no request reaches a session by any other path.

Bounds. Sessions idle for ``idle_seconds`` or older than ``max_age_seconds`` are collected
on every lookup, in time proportional to the number collected (insertion-ordered maps by
last use and by birth). When ``max_sessions`` are live, one is dropped to make room rather
than a new agent being refused service: first the least recently used *fresh* session (one
never returned to since it was created, as a stateless client that never passes its id
back makes on every request), and only when there is none, the least recently used
session. So a flood of one-off requests churns among itself and does not push out agents
that are working.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping

from votr_mcp.errors import SessionError
from votr_mcp.session.policy import ToolPolicy
from votr_mcp.session.settings import SessionSettings
from votr_mcp.session.state import Session

__all__ = ["SessionManager"]

log = logging.getLogger(__name__)

_ID_BYTES = 24
_ID_MAX_CHARS = 128


class SessionManager:
    """All live sessions of one server process. Thread-safe for lookups and collection."""

    def __init__(
        self,
        settings: SessionSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        pinned: Iterable[str] = (),
    ) -> None:
        self.settings = settings or SessionSettings()
        self._clock = clock
        # Shared by every session; GuardSettings' static exempt/hints (from flags) are the start.
        self.policy = ToolPolicy(pinned, self.settings.guard.exempt, self.settings.guard.hints)
        self._lock = threading.Lock()
        # Least recently used first. Sessions start in _fresh and move to _by_use the first
        # time a request comes back to them; capacity evictions take fresh ones first.
        self._fresh: OrderedDict[str, Session] = OrderedDict()
        self._by_use: OrderedDict[str, Session] = OrderedDict()
        self._by_birth: OrderedDict[str, Session] = OrderedDict()  # oldest first, never reordered
        self._by_transport: dict[Hashable, str] = {}
        self._high_water = 0  # most sessions held since the maps were last rebuilt
        self.collected = 0  # sessions removed by expiry or capacity since start

    # -- pins -----------------------------------------------------------------------------

    def set_pinned(self, names: Iterable[str]) -> None:
        """Replace the pinned tool call names (global and per-server always-include tools)."""
        self.policy.set_pinned(names)

    def set_exempt(self, names: Iterable[str]) -> None:
        """Replace the call names of tools allowed to poll (plus those in ``GuardSettings.exempt``)."""
        self.policy.set_exempt([*self.settings.guard.exempt, *names])

    def set_hints(self, hints: Mapping[str, str]) -> None:
        """Replace the per-tool advice added to loop-guard notes (call name -> text)."""
        self.policy.set_hints({**self.settings.guard.hints, **hints})

    def is_pinned(self, name: str) -> bool:
        return self.policy.is_pinned(name)

    # -- lookup ---------------------------------------------------------------------------

    def resolve(self, session_id: str | None = None, transport_key: Hashable | None = None) -> Session:
        """The session for this request.

        ``session_id`` wins when given and must be live; a session made on a connection
        (``transport_key``) is used on that connection only, so another connection's id acts in
        nothing (``SessionError``). Otherwise the transport's session is used (created on first
        use), and without either a new session is created: the caller must hand its ``id`` back
        to the client.
        """
        with self._lock:
            now = self._clock()
            self._collect(now)
            if session_id is not None:
                session = self._lookup(session_id)
                if session.transport_key is not None and session.transport_key != transport_key:
                    raise SessionError("that session_id belongs to another connection; a session started on a "
                                       "connection is only used on that connection. Omit session_id on this one.")
            elif transport_key is not None and transport_key in self._by_transport:
                session = self._lookup(self._by_transport[transport_key])
            else:
                return self._create(now, transport_key)
            session.last_seen = now
            if self._fresh.pop(session.id, None) is not None:
                self._by_use[session.id] = session  # came back: no longer fresh
            else:
                self._by_use.move_to_end(session.id)
            return session

    def get(self, session_id: str) -> Session:
        """The live session with this id, or ``SessionError``."""
        with self._lock:
            self._collect(self._clock())
            return self._lookup(session_id)

    def close_transport(self, transport_key: Hashable) -> None:
        """Drop the session of a transport that disconnected (its id stops working too)."""
        with self._lock:
            session_id = self._by_transport.pop(transport_key, None)
            if session_id is not None:
                self._remove(session_id)

    def collect(self) -> int:
        """Remove expired sessions now; returns how many were removed."""
        with self._lock:
            return self._collect(self._clock())

    def __len__(self) -> int:
        return len(self._fresh) + len(self._by_use)

    # -- internals (lock held) ------------------------------------------------------------

    def _lookup(self, session_id: str) -> Session:
        if not isinstance(session_id, str) or not session_id or len(session_id) > _ID_MAX_CHARS:
            raise SessionError(
                "session_id must be the string that search_tools returned; "
                "omit it to start a new session"
            )
        session = self._by_use.get(session_id) or self._fresh.get(session_id)
        if session is None:
            # Never echo the id back: it may be someone's mistyped secret.
            raise SessionError(
                "unknown or expired session_id; sessions end after "
                f"{self.settings.idle_seconds:g} s idle or {self.settings.max_age_seconds:g} s in total. "
                "Omit session_id (or call search_tools without it) to start a new session."
            )
        return session

    def _create(self, now: float, transport_key: Hashable | None) -> Session:
        while len(self) >= self.settings.max_sessions:
            victims = self._fresh or self._by_use
            log.debug("session limit %d reached: dropping the least recently used session", self.settings.max_sessions)
            self._remove(next(iter(victims)))
        session_id = secrets.token_urlsafe(_ID_BYTES)
        while session_id in self._by_birth:  # astronomically unlikely; never reuse an id
            session_id = secrets.token_urlsafe(_ID_BYTES)
        session = Session(session_id, self.settings, self._clock, self.policy, transport_key)
        self._fresh[session_id] = session
        self._by_birth[session_id] = session
        if transport_key is not None:
            self._by_transport[transport_key] = session_id
        self._high_water = max(self._high_water, len(self))
        return session

    def _remove(self, session_id: str) -> None:
        session = self._by_use.pop(session_id, None) or self._fresh.pop(session_id, None)
        self._by_birth.pop(session_id, None)
        if session is not None:
            self.collected += 1
            if session.transport_key is not None and self._by_transport.get(session.transport_key) == session_id:
                del self._by_transport[session.transport_key]

    def _collect(self, now: float) -> int:
        before = self.collected
        idle_horizon = now - self.settings.idle_seconds
        for by_use in (self._fresh, self._by_use):
            while by_use:
                session = next(iter(by_use.values()))
                if session.last_seen > idle_horizon:
                    break
                self._remove(session.id)
        age_horizon = now - self.settings.max_age_seconds
        while self._by_birth:
            session = next(iter(self._by_birth.values()))
            if session.created > age_horizon:
                break
            self._remove(session.id)
        self._compact()
        return self.collected - before

    def _compact(self) -> None:
        # Python dicts never shrink when emptied: after a burst of sessions is collected the
        # maps would keep their peak-sized tables. Rebuild them once they are mostly empty.
        if self._high_water > 64 and len(self) * 4 < self._high_water:
            self._fresh = OrderedDict(self._fresh)
            self._by_use = OrderedDict(self._by_use)
            self._by_birth = OrderedDict(self._by_birth)
            self._by_transport = dict(self._by_transport)
            self._high_water = len(self)
