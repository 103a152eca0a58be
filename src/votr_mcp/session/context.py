"""The tools a session has discovered: an LRU with a capacity and a time-to-live.

Search binds the tools it returns; calling a tool touches it. A tool unused for
``ttl_seconds`` expires; past ``capacity`` the least recently used tool goes. Pinned
tools (global and per-server always-include tools) are checked through a predicate, are
never stored here, never evicted and never counted toward the capacity.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from votr_mcp.session.settings import ContextSettings

__all__ = ["Binding", "ToolContext"]


@dataclass(slots=True)
class Binding:
    """One bound tool: when it was found, last used, and how often it was called."""

    bound_at: float
    last_used: float
    uses: int = 0


class ToolContext:
    """A session's working set of tool call names."""

    __slots__ = ("_settings", "_is_pinned", "_entries")

    def __init__(self, settings: ContextSettings, is_pinned: Callable[[str], bool]) -> None:
        self._settings = settings
        self._is_pinned = is_pinned
        # Least recently used first; move_to_end on every touch keeps eviction O(1).
        self._entries: OrderedDict[str, Binding] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def names(self, now: float) -> list[str]:
        """Bound (not pinned) tools, least recently used first, after expiring stale ones."""
        self.expire(now)
        return list(self._entries)

    def get(self, name: str, now: float) -> Binding | None:
        self.expire(now)
        return self._entries.get(name)

    def is_available(self, name: str, now: float) -> bool:
        """True when ``name`` is pinned or bound and not expired."""
        return self._is_pinned(name) or self.get(name, now) is not None

    def bind(self, names: Iterable[str], now: float) -> list[str]:
        """Bind (or refresh) these tools; returns the tools evicted to make room.

        The tools bound by one call are all kept when they fit; when a single search returns
        more tools than the capacity, the later (lower-ranked) ones are the ones kept out.
        """
        self.expire(now)
        fresh = [n for n in dict.fromkeys(names) if not self._is_pinned(n)]
        # Bind in reverse rank order so the best result ends most recently used.
        for name in reversed(fresh[: self._settings.capacity]):
            entry = self._entries.get(name)
            if entry is None:
                self._entries[name] = Binding(bound_at=now, last_used=now)
            else:
                entry.last_used = now
                self._entries.move_to_end(name)
        return self._shrink()

    def touch(self, name: str, now: float, *, bind: bool = False) -> None:
        """Record a call of ``name``; with ``bind`` an unbound tool becomes bound."""
        if self._is_pinned(name):
            return
        self.expire(now)
        entry = self._entries.get(name)
        if entry is None:
            if not bind:
                return
            entry = self._entries[name] = Binding(bound_at=now, last_used=now)
            self._shrink()
        entry.last_used = now
        entry.uses += 1
        self._entries.move_to_end(name)

    def unbind(self, name: str) -> bool:
        """Remove ``name``; True when it was bound."""
        return self._entries.pop(name, None) is not None

    def expire(self, now: float) -> list[str]:
        """Drop tools unused for longer than the TTL; returns their names."""
        gone: list[str] = []
        limit = now - self._settings.ttl_seconds
        while self._entries:
            name, entry = next(iter(self._entries.items()))
            if entry.last_used > limit:
                break
            del self._entries[name]
            gone.append(name)
        return gone

    def _shrink(self) -> list[str]:
        gone: list[str] = []
        while len(self._entries) > self._settings.capacity:
            name, _ = self._entries.popitem(last=False)
            gone.append(name)
        return gone
