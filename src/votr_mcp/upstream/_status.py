"""What the rest of votr-mcp may know about an upstream: its state, and the retry policy."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

__all__ = ["Backoff", "State", "UpstreamStatus"]

State = Literal["starting", "ready", "retrying", "failed", "disabled", "stopped"]


@dataclass(frozen=True, slots=True)
class UpstreamStatus:
    """A snapshot of one upstream.

    ``ready`` is the only state in which calls go through. ``retrying`` carries the last
    ``error`` and ``retry_in`` (seconds until the next attempt, from the snapshot time).
    ``failed``: it failed :attr:`Backoff.give_up_after` starts in a row and is no longer retried.
    """

    name: str
    state: State
    tool_count: int = 0
    error: str | None = None
    attempts: int = 0
    retry_in: float | None = None
    server_info: str | None = None
    protocol_version: str | None = None
    pid: int | None = None
    """The process id of the current (or, when not ready, the last) stdio server process."""

    @property
    def available(self) -> bool:
        return self.state == "ready"

    def describe(self) -> str:
        """One line for logs and for error messages shown to an agent."""
        if self.state == "ready":
            return f"ready, {self.tool_count} tools"
        if self.state == "retrying":
            wait = f"; next attempt in {self.retry_in:.0f}s" if self.retry_in is not None else ""
            return f"not connected ({self.error or 'unknown error'}){wait}"
        if self.state == "failed":
            return (f"given up after {self.attempts} failed starts ({self.error or 'unknown error'}); fix its "
                    "entry, then restart votr-mcp (votr-mcp upstreams --config FILE tests it)")
        if self.state == "starting":
            return "still starting"
        return self.state


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with jitter between attempts to (re)start an upstream.

    ``healthy_after``: a connection that stayed up this long counts as a success, so a
    server that crashes once a day is retried at once rather than after the maximum delay.
    """

    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 60.0
    jitter: float = 0.2
    healthy_after: float = 30.0
    # Consecutive failed starts after which the server is left alone ("failed"): an entry that can
    # never start (or that starts votr-mcp again) must not be relaunched forever. About 8 minutes
    # at the defaults (1 + 2 + 4 + ... capped at 60 s).
    give_up_after: int = 12

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` consecutive failures (1 = the first)."""
        base = min(self.maximum, self.initial * self.factor ** max(0, failures - 1))
        # Jitter keeps many votr-mcp replicas from hammering a recovering server in step.
        return base * (1.0 + random.uniform(-self.jitter, self.jitter))
