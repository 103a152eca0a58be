"""Clocks for the session layer: monotonic time in production, a hand-driven one for traces.

Every session component takes ``clock: Callable[[], float]`` (seconds) instead of reading
time itself, so a scripted agent trace can step through minutes of time in microseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "ManualClock", "monotonic"]

Clock = Callable[[], float]
monotonic: Clock = time.monotonic


class ManualClock:
    """A clock that moves only when told to; it never goes backwards."""

    __slots__ = ("now",)

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (must be >= 0) and return the new time."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards (asked to advance by {seconds})")
        self.now += seconds
        return self.now
