"""The iteration guard: notices when an agent repeats the same tool call.

It never blocks a call. It counts each call under the fingerprint of (tool, normalized
arguments) with these detectors:

- **repeats**: more than ``max_repeats`` identical calls within ``window_seconds``
  (``polling_max_repeats`` for polling-tolerant calls);
- **call window**: ``call_window_limit`` occurrences among the last ``call_window_size``
  calls, whatever the time between them (catches A→B→A→B loops with slow steps);
  skipped for polling-tolerant calls, whose repeats are expected;
- **burst**, for polling-tolerant calls only: more than ``max_repeats`` identical calls
  within ``polling_burst_seconds``. Real polling waits between polls; back-to-back
  identical reads learn nothing new.

Polling-tolerant calls are those of tools annotated read-only or idempotent and of the
``exempt`` list. What to do on a trip (evict, write a note) is the session's business; the
guard reports it and forgets that call's history, so the next trip needs a fresh run.

Memory is bounded: a fingerprint whose calls all left the time window is dropped, and at
most ``MAX_TRACKED`` fingerprints and ``MAX_EVICTIONS`` eviction counts are kept.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from votr_mcp.session.normalize import fingerprint
from votr_mcp.session.settings import GuardSettings

__all__ = ["Trip", "IterationGuard", "polling_tolerant", "MAX_TRACKED", "MAX_EVICTIONS"]

MAX_TRACKED = 512
MAX_EVICTIONS = 256


def polling_tolerant(annotations: Mapping[str, Any] | None) -> bool:
    """True when MCP tool annotations say the tool is read-only or idempotent."""
    if not annotations:
        return False
    return annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True


@dataclass(frozen=True, slots=True)
class Trip:
    """A detected loop: which tool, which detector, how many calls, and the how-manieth time."""

    tool: str
    detector: Literal["repeats", "burst", "call_window"]
    count: int
    span: float  # seconds for "repeats" and "burst", number of calls for "call_window"
    evictions: int  # 1 on the first trip of this tool in the session


@dataclass(slots=True)
class _Track:
    tool: str
    times: list[float]  # a list, not a deque: an empty deque costs ~600 bytes per fingerprint


class IterationGuard:
    """Per-session loop detector. Not thread-safe: one session is served by one event loop."""

    __slots__ = ("_settings", "_tracks", "_recent", "_evictions")

    def __init__(self, settings: GuardSettings) -> None:
        self._settings = settings
        # Least recently called fingerprint first, so stale ones are swept from the front.
        self._tracks: OrderedDict[str, _Track] = OrderedDict()
        # The last calls' fingerprints, oldest first. A short list: a deque costs ~600 bytes
        # even when nearly empty, and this one never holds more than a few dozen entries.
        self._recent: list[str] = []
        self._evictions: OrderedDict[str, int] = OrderedDict()

    def record(self, tool: str, arguments: Mapping[str, Any] | None, now: float, *, tolerant: bool = False) -> Trip | None:
        """Count one call of ``tool``; a ``Trip`` when this call completes a loop."""
        s = self._settings
        if not s.enabled:
            return None
        self._sweep(now)
        key = fingerprint(tool, arguments)
        track = self._tracks.get(key)
        if track is None:
            track = self._tracks[key] = _Track(tool, [])
            if len(self._tracks) > MAX_TRACKED:
                self._tracks.popitem(last=False)
        else:
            self._tracks.move_to_end(key)
        track.times.append(now)
        self._recent.append(key)
        if len(self._recent) > s.call_window_size:
            del self._recent[0]

        tolerant = tolerant or tool in s.exempt
        limit = s.polling_max_repeats if tolerant else s.max_repeats
        trip: Trip | None = None
        if len(track.times) > limit:
            trip = Trip(tool, "repeats", len(track.times), s.window_seconds, self._count_eviction(tool))
        elif tolerant:
            burst = len(track.times) - bisect_right(track.times, now - s.polling_burst_seconds)
            if burst > s.max_repeats:
                trip = Trip(tool, "burst", burst, s.polling_burst_seconds, self._count_eviction(tool))
        else:
            seen = self._recent.count(key)
            if seen >= s.call_window_limit:
                trip = Trip(tool, "call_window", seen, len(self._recent), self._count_eviction(tool))
        if trip is not None:
            self._forget(key)
        return trip

    def reset(self, tool: str) -> None:
        """Forget the call history of ``tool`` (a search found it again: a fresh start)."""
        keys = {k for k, t in self._tracks.items() if t.tool == tool}
        for key in keys:
            self._forget(key)

    def evictions(self, tool: str) -> int:
        """How often the guard has tripped on ``tool`` in this session."""
        return self._evictions.get(tool, 0)

    def tracked(self) -> int:
        """Fingerprints currently held (for bounds checks)."""
        return len(self._tracks)

    def _count_eviction(self, tool: str) -> int:
        count = self._evictions.pop(tool, 0) + 1
        self._evictions[tool] = count
        if len(self._evictions) > MAX_EVICTIONS:
            self._evictions.popitem(last=False)
        return count

    def _forget(self, key: str) -> None:
        self._tracks.pop(key, None)
        if key in self._recent:
            self._recent = [k for k in self._recent if k != key]

    def _sweep(self, now: float) -> None:
        # Drop timestamps older than the window; a fingerprint left empty is forgotten
        # (its call-window occurrences stay: that detector ignores time on purpose).
        horizon = now - self._settings.window_seconds
        for key in list(self._tracks):
            times = self._tracks[key].times
            if times and times[0] <= horizon:
                del times[: bisect_right(times, horizon)]
            if not times and key not in self._recent:
                del self._tracks[key]
