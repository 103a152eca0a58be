"""One agent session: its bound tools, recent searches, and the iteration guard.

The server calls three hooks, in this order:

- ``after_search(names)`` once ``search_tools`` has ranked its results: reports which were
  already bound, binds them, re-admits tools the guard had evicted, and returns a note when
  the results mostly repeat a recent search;
- ``admit(name)`` before forwarding ``call_tool``: raises ``SessionError`` (its message names
  ``search_tools``) when the tool was evicted by the guard, or is unbound in strict mode;
- ``after_call(name, arguments)`` after the upstream call returned: counts the call and, on
  a loop, evicts the tool and returns a guidance note for the result.

Pinned tools are always available and are never evicted: a loop on one still gets a note.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from votr_mcp.errors import SessionError
from votr_mcp.session.clock import Clock
from votr_mcp.session.context import ToolContext
from votr_mcp.session.guard import MAX_EVICTIONS, IterationGuard, Trip
from votr_mcp.session.policy import ToolPolicy
from votr_mcp.session.settings import SessionSettings

__all__ = ["SearchView", "Session"]


@dataclass(frozen=True, slots=True)
class SearchView:
    """What the session adds to a search result."""

    already_bound: frozenset[str]  # results the agent could already call (bound or pinned)
    readmitted: frozenset[str]  # results the guard had evicted, callable again now
    note: str | None  # set when the results mostly repeat a recent search


class Session:
    """State of one agent session. Use it from one event loop (no locking inside)."""

    __slots__ = (
        "id", "created", "last_seen", "transport_key",
        "_settings", "_clock", "_policy", "context", "guard", "_searches", "_evicted",
    )

    def __init__(
        self,
        session_id: str,
        settings: SessionSettings,
        clock: Clock,
        policy: ToolPolicy | None = None,
        transport_key: object = None,
    ) -> None:
        self.id = session_id
        self.created = self.last_seen = clock()
        self.transport_key = transport_key
        self._settings = settings
        self._clock = clock
        self._policy = policy = policy or ToolPolicy()
        self.context = ToolContext(settings.context, policy.is_pinned)
        self.guard = IterationGuard(settings.guard)
        # Recent searches, oldest first: (time, result names). Tuples and a short list keep a
        # session small (the soak benchmark counts bytes per session).
        self._searches: list[tuple[float, tuple[str, ...]]] = []
        # Tools the guard evicted and that no search has returned since (name -> evictions).
        self._evicted: OrderedDict[str, int] = OrderedDict()

    def bound(self) -> list[str]:
        """Bound tool names, least recently used first (pinned tools are not listed)."""
        return self.context.names(self._clock())

    def is_evicted(self, name: str) -> bool:
        """True while ``name`` waits for a search to return it after a guard eviction."""
        return name in self._evicted

    # -- search_tools -------------------------------------------------------------------

    def after_search(self, names: Sequence[str]) -> SearchView:
        """Bind the tools a search returned (rank order) and describe them relative to the session."""
        now = self._clock()
        ranked = list(dict.fromkeys(names))
        already = frozenset(n for n in ranked if n not in self._evicted and self.context.is_available(n, now))
        readmitted = frozenset(n for n in ranked if n in self._evicted)
        # Searching again for an evicted tool is what the guard asked for: no redundancy note.
        note = None if readmitted else self._redundancy_note(ranked, now)
        if ranked:
            self._searches.append((now, tuple(ranked)))
            if len(self._searches) > self._settings.search.remember:
                del self._searches[0]
        for name in readmitted:
            del self._evicted[name]
            self.guard.reset(name)
        self.context.bind(ranked, now)
        return SearchView(already, readmitted, note)

    def _redundancy_note(self, ranked: list[str], now: float) -> str | None:
        s = self._settings.search
        if not ranked:
            return None
        current = set(ranked)
        horizon = now - s.window_seconds
        best = 0.0
        for when, seen in self._searches:
            if when > horizon:
                best = max(best, len(current.intersection(seen)) / len(current))
        if best < s.overlap:
            return None
        listed = ", ".join(ranked[:5])
        return (
            f"These tools were already returned by a recent search and are still available to call: {listed}. "
            "Call one of them; if you need something different, search again with a more specific query "
            "that names the service and the action."
        )

    # -- call_tool ----------------------------------------------------------------------

    def admit(self, name: str) -> None:
        """Allow a call of ``name`` or raise ``SessionError`` saying how to get it back."""
        now = self._clock()
        if name in self._evicted:
            raise SessionError(
                f"'{name}' was removed from this session by the loop guard after repeated identical calls. "
                f"Do not repeat the same call: call search_tools for what you need; if it returns '{name}' again, "
                "you can call it with changed arguments."
            )
        if self._settings.context.mode == "strict" and not self.context.is_available(name, now):
            raise SessionError(
                f"'{name}' is not bound to this session (binding mode is strict, and tools expire when unused). "
                "Call search_tools to find it first, then call it by the name the search returns "
                "(and pass the session_id that search_tools returned, unless your client keeps one connection open)."
            )
        # In open mode a tool called without a search joins the working set.
        self.context.touch(name, now, bind=True)

    def after_call(self, name: str, arguments: Mapping[str, Any] | None, *, tolerant: bool = False) -> str | None:
        """Count a finished call; on a loop evict the tool and return the guidance note."""
        now = self._clock()
        tolerant = tolerant or self._policy.is_exempt(name)
        trip = self.guard.record(name, arguments, now, tolerant=tolerant)
        if trip is None:
            return None
        pinned = self._policy.is_pinned(name)
        if not pinned:
            self.context.unbind(name)
            self._evicted[name] = trip.evictions
            self._evicted.move_to_end(name)
            if len(self._evicted) > MAX_EVICTIONS:
                self._evicted.popitem(last=False)
        return self._guard_note(trip, pinned)

    def _guard_note(self, trip: Trip, pinned: bool) -> str:
        if trip.detector in ("repeats", "burst"):
            seen = f"{trip.count} times with the same arguments within {trip.span:g} s"
        else:
            seen = f"{trip.count} times with the same arguments in your last {int(trip.span)} tool calls"
        hint = self._policy.hint(trip.tool) or self._settings.guard.hints.get(trip.tool)
        tail = f" Hint for this tool: {hint}" if hint else ""
        head = f"[votr-mcp loop guard] You called '{trip.tool}' {seen}."
        if pinned:
            return (
                f"{head} The result above is real, but repeating the call will not change it. "
                f"Use the result, change the arguments, or try a different approach.{tail}"
            )
        if trip.evictions == 1:
            return (
                f"{head} The result above is real; the tool has now been removed from this session. "
                "Read the result and change your approach: different arguments or a different tool. "
                f"To use '{trip.tool}' again, call search_tools for it first.{tail}"
            )
        return (
            f"{head} This is loop number {trip.evictions} with this tool in this session, and it has been "
            "removed again. Stop retrying it: tell the user what is failing and why, or call search_tools "
            f"for a different tool that does what you need.{tail}"
        )
