"""Sessions in Redis, so any replica serves any request of any session (``serve --sessions redis://``).

Same interface as :class:`~votr_mcp.session.manager.SessionManager` (``resolve``, ``get``,
``close_transport``, the pinned/exempt/hint policy), so the server's session hooks do not know
which one they hold. The differences:

- a session lives in Redis as one JSON value (``session/snapshot.py``), keyed by the SHA-256 of
  its id (whoever lists the keys learns no usable id), with a TTL of ``idle_seconds`` capped by
  what is left of ``max_age_seconds``: Redis's expiry is the garbage collector, and the number of
  sessions is bounded by Redis's memory policy rather than ``max_sessions``;
- each change of a session (after a search, before and after a call) is one optimistic
  transaction (WATCH, read, change, MULTI/SET): two replicas changing one session at once never
  lose each other's change; the loser re-reads and applies its change again;
- times are wall clock (``time.time``): the next request of a session may reach another machine.

Identity needs no sticky routing: the server mints the session id (192 random bits) and the
client echoes it (``session_id``), which is all the 2026-07-28 MCP revision leaves, since it has
no protocol sessions. A connection's own session (stdio, a handshake-era HTTP connection) is
found through a second key by connection, as in one process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from votr_mcp.errors import SessionError
from votr_mcp.session.policy import ToolPolicy
from votr_mcp.session.settings import SessionSettings
from votr_mcp.session.snapshot import dump_session, load_session
from votr_mcp.session.state import Session

__all__ = ["RedisSessions"]

log = logging.getLogger(__name__)

T = TypeVar("T")
_ID_BYTES = 24
_ID_MAX_CHARS = 128
_RETRIES = 20


class RedisSessions:
    """All sessions of every replica, in one Redis. Thread-safe (redis-py's pool is)."""

    def __init__(self, client: Any, settings: SessionSettings | None = None, *, prefix: str = "votr:",
                 clock: Callable[[], float] = time.time, url: str = "redis") -> None:
        self.settings = settings or SessionSettings()
        self.policy = ToolPolicy((), self.settings.guard.exempt, self.settings.guard.hints)
        self._redis = client
        self._prefix = prefix
        self._clock = clock
        self._url = url

    @classmethod
    def from_url(cls, url: str, settings: SessionSettings | None = None, **kwargs: Any) -> RedisSessions:
        """Connect to ``redis://host:port/db`` (checked now: a wrong URL fails at start, not at the first call)."""
        try:
            import redis
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise SessionError("--sessions redis://… needs the 'redis' package: pip install redis") from exc
        client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30)
        store = cls(client, settings, url=_safe(url), **kwargs)
        store._call(client.ping)
        return store

    # -- policy (the same calls as SessionManager's) ---------------------------------------

    def set_pinned(self, names: Iterable[str]) -> None:
        self.policy.set_pinned(names)

    def set_exempt(self, names: Iterable[str]) -> None:
        self.policy.set_exempt([*self.settings.guard.exempt, *names])

    def set_hints(self, hints: Mapping[str, str]) -> None:
        self.policy.set_hints({**self.settings.guard.hints, **hints})

    def is_pinned(self, name: str) -> bool:
        return self.policy.is_pinned(name)

    # -- lookup -----------------------------------------------------------------------------

    def resolve(self, session_id: str | None = None, transport_key: Hashable | None = None) -> Session:
        """The session for this request (see ``SessionManager.resolve``); its last use is recorded."""
        if session_id is None:
            if transport_key is None:
                return self._create(None)
            found = self._call(self._redis.get, self._transport(transport_key))
            if found is None:
                return self._create(transport_key)
            session_id = found.decode() if isinstance(found, bytes) else str(found)
        _check_id(session_id)
        caller = str(transport_key) if transport_key is not None else None

        def touch(session: Session, owner: str | None) -> Session:
            if owner is not None and owner != caller:
                raise SessionError("that session_id belongs to another connection; a session started on a "
                                   "connection is only used on that connection. Omit session_id on this one.")
            session.last_seen = self._clock()
            return session

        return self._update(session_id, touch)

    def get(self, session_id: str) -> _StoredSession:
        """A handle whose ``after_search``/``admit``/``after_call`` change the stored session."""
        _check_id(session_id)
        return _StoredSession(self, session_id)

    def close_transport(self, transport_key: Hashable) -> None:
        """Drop the session of a connection that closed (its id stops working too)."""
        key = self._transport(transport_key)
        session_id = self._call(self._redis.get, key)
        if session_id is not None:
            sid = session_id.decode() if isinstance(session_id, bytes) else str(session_id)
            self._call(self._redis.delete, key, self._key(sid))

    def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Apply ``change`` to the stored session atomically; returns what it returned."""
        return self._update(session_id, lambda session, _owner: change(session))

    # -- internals --------------------------------------------------------------------------

    def _key(self, session_id: str) -> str:
        return f"{self._prefix}session:{hashlib.sha256(session_id.encode()).hexdigest()}"

    def _transport(self, transport_key: Hashable) -> str:
        return f"{self._prefix}connection:{hashlib.sha256(str(transport_key).encode()).hexdigest()}"

    def _ttl(self, session: Session, now: float) -> int:
        left = self.settings.max_age_seconds - (now - session.created)
        return max(1, int(min(self.settings.idle_seconds, left) + 0.999))

    def _create(self, transport_key: Hashable | None) -> Session:
        now = self._clock()
        session_id = secrets.token_urlsafe(_ID_BYTES)
        session = Session(session_id, self.settings, self._clock, self.policy)
        value = {"owner": str(transport_key) if transport_key is not None else None, "session": dump_session(session)}
        ttl = self._ttl(session, now)
        # NX: never overwrite (192-bit ids do not collide; this makes sure of it).
        if not self._call(self._redis.set, self._key(session_id), json.dumps(value), ex=ttl, nx=True):
            return self._create(transport_key)
        if transport_key is not None:
            self._call(self._redis.set, self._transport(transport_key), session_id, ex=ttl)
        return session

    def _update(self, session_id: str, change: Callable[[Session, str | None], T]) -> T:
        import redis

        key = self._key(session_id)
        for _ in range(_RETRIES):
            try:
                with self._redis.pipeline() as pipe:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    value = json.loads(raw) if raw is not None else None
                    session = load_session(value["session"], self.settings, self._clock, self.policy) if value else None
                    now = self._clock()
                    if value is None or session is None or now - session.created > self.settings.max_age_seconds:
                        raise _unknown(self.settings)
                    result = change(session, value.get("owner"))
                    value["session"] = dump_session(session)
                    pipe.multi()
                    pipe.set(key, json.dumps(value), ex=self._ttl(session, now))
                    pipe.execute()
                    return result
            except redis.WatchError:
                continue  # another replica changed this session meanwhile: read it again
            except redis.RedisError as exc:
                raise self._unreachable(exc) from exc
        raise SessionError("this session is being changed by many requests at once; retry the call")

    def _call(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        import redis

        try:
            return method(*args, **kwargs)
        except redis.RedisError as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: Exception) -> SessionError:
        return SessionError(f"the session store ({self._url}) did not answer ({exc}); the server's operator must check "
                            "that Redis is running and reachable (votr-mcp serve --sessions)")


class _StoredSession:
    """What ``SessionManager.get`` returns, for a session kept in Redis: each hook is one transaction."""

    __slots__ = ("_store", "id")

    def __init__(self, store: RedisSessions, session_id: str) -> None:
        self._store = store
        self.id = session_id

    def after_search(self, names: Any) -> Any:
        return self._store.update(self.id, lambda s: s.after_search(names))

    def admit(self, name: str) -> None:
        self._store.update(self.id, lambda s: s.admit(name))

    def after_call(self, name: str, arguments: Mapping[str, Any] | None, *, tolerant: bool = False) -> str | None:
        return self._store.update(self.id, lambda s: s.after_call(name, arguments, tolerant=tolerant))

    def bound(self) -> list[str]:
        return self._store.update(self.id, lambda s: s.bound())

    def is_evicted(self, name: str) -> bool:
        return self._store.update(self.id, lambda s: s.is_evicted(name))


def _check_id(session_id: Any) -> None:
    if not isinstance(session_id, str) or not session_id or len(session_id) > _ID_MAX_CHARS:
        raise SessionError("session_id must be the string that search_tools returned; omit it to start a new session")


def _unknown(settings: SessionSettings) -> SessionError:
    # Never echo the id back: it may be someone's mistyped secret.
    return SessionError("unknown or expired session_id; sessions end after "
                        f"{settings.idle_seconds:g} s idle or {settings.max_age_seconds:g} s in total. "
                        "Omit session_id (or call search_tools without it) to start a new session.")


def _safe(url: str) -> str:
    """The URL without its password, for messages and logs."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://…@{rest.split('@', 1)[1]}"
    return url
