"""Settings of the session layer, with their documented defaults.

Every threshold lives here, so ``votr-mcp serve`` flags and the config file map onto one
place and the rest of the package receives plain values. Bad values raise ``ConfigError``
naming the field, the value and the fix.

Defaults and why:

- ``GuardSettings.max_repeats = 3`` within ``window_seconds = 60``: the 4th identical call
  (same tool, same normalized arguments) inside a minute trips the guard. Three tries cover a
  transient failure and one retry with a fix; a fourth identical try is a loop.
- ``max_in_call_window = max_repeats + 1`` occurrences among the last ``call_window`` calls
  (default ``max(10, 2 * max_in_call_window)``): the same call appearing that often among the
  recent calls trips the guard however slowly they come, which catches A→B→A→B loops whose
  steps are too slow for the time window.
- ``polling_max_repeats = 30`` per window for read-only / idempotent tools and the ``exempt``
  list, whose call-window detector is off: polling a status endpoint is legitimate, but
  thirty identical polls a minute is still a loop. Polling waits between polls, so these
  tools still trip on a burst: more than ``max_repeats`` identical calls within
  ``polling_burst_seconds = 10`` (a poll every 3.4 s or slower never does).
- ``ContextSettings.capacity = 20`` bound tools (pins not counted), ``ttl_seconds = 1800``
  since last use; ``mode = "open"``, so clients that reconnect per request keep working.
- ``SessionSettings.max_sessions = 10_000``, ``idle_seconds = 1800``, ``max_age_seconds =
  86_400``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from votr_mcp.errors import ConfigError

__all__ = ["BindingMode", "GuardSettings", "ContextSettings", "SearchSettings", "SessionSettings"]

BindingMode = Literal["open", "strict"]
_MODES = ("open", "strict")


def _positive(owner: str, name: str, value: float, *, integer: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"{owner}.{name} must be {kind}, got {value!r}")
    if value <= 0:
        raise ConfigError(f"{owner}.{name} must be greater than 0, got {value!r}; use a positive value")


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """Thresholds of the iteration guard (see the module docstring for the defaults)."""

    max_repeats: int = 3
    window_seconds: float = 60.0
    call_window: int | None = None  # None: max(10, 2 * call_window_limit)
    max_in_call_window: int | None = None  # None: max_repeats + 1
    polling_max_repeats: int = 30
    polling_burst_seconds: float = 10.0
    exempt: frozenset[str] = frozenset()
    hints: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True

    def __post_init__(self) -> None:
        _positive("guard", "max_repeats", self.max_repeats)
        _positive("guard", "window_seconds", self.window_seconds, integer=False)
        if self.call_window is not None:
            _positive("guard", "call_window", self.call_window)
        _positive("guard", "polling_max_repeats", self.polling_max_repeats)
        _positive("guard", "polling_burst_seconds", self.polling_burst_seconds, integer=False)
        if self.polling_burst_seconds > self.window_seconds:
            raise ConfigError(
                f"guard.polling_burst_seconds ({self.polling_burst_seconds:g}) is longer than guard.window_seconds "
                f"({self.window_seconds:g}); a burst is a part of the window, so make it shorter"
            )
        if self.max_in_call_window is not None:
            _positive("guard", "max_in_call_window", self.max_in_call_window)
            if self.max_in_call_window < 2:
                raise ConfigError(
                    f"guard.max_in_call_window must be at least 2, got {self.max_in_call_window}; "
                    "a single call is never a loop"
                )
        if self.call_window is not None and self.call_window < self.call_window_limit:
            raise ConfigError(
                f"guard.call_window ({self.call_window}) is smaller than the occurrences that trip it "
                f"({self.call_window_limit}); make the window larger or leave it unset"
            )
        if self.polling_max_repeats < self.max_repeats:
            raise ConfigError(
                f"guard.polling_max_repeats ({self.polling_max_repeats}) is below guard.max_repeats "
                f"({self.max_repeats}); polling tools must tolerate at least as many repeats"
            )
        object.__setattr__(self, "exempt", frozenset(self.exempt))
        object.__setattr__(self, "hints", dict(self.hints))

    @property
    def call_window_limit(self) -> int:
        """Occurrences of one call among the last ``call_window`` calls that trip the guard."""
        return self.max_in_call_window if self.max_in_call_window is not None else self.max_repeats + 1

    @property
    def call_window_size(self) -> int:
        """How many recent calls the call-window detector looks at."""
        return self.call_window if self.call_window is not None else max(10, 2 * self.call_window_limit)


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """The per-session working set of bound tools."""

    capacity: int = 20
    ttl_seconds: float = 1800.0
    mode: BindingMode = "open"

    def __post_init__(self) -> None:
        _positive("context", "capacity", self.capacity)
        _positive("context", "ttl_seconds", self.ttl_seconds, integer=False)
        if self.mode not in _MODES:
            raise ConfigError(f"context.mode must be one of {', '.join(_MODES)}, got {self.mode!r}")


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Redundant-search detection: a search repeating a recent one gets a note."""

    window_seconds: float = 300.0
    remember: int = 5
    overlap: float = 0.8

    def __post_init__(self) -> None:
        _positive("search", "window_seconds", self.window_seconds, integer=False)
        _positive("search", "remember", self.remember)
        if not 0.0 < self.overlap <= 1.0:
            raise ConfigError(f"search.overlap must be in (0, 1], got {self.overlap!r}; 0.8 means 80% of results repeat")


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """Everything the session layer needs; ``votr-mcp serve`` builds one from flags and config."""

    guard: GuardSettings = field(default_factory=GuardSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    max_sessions: int = 10_000
    idle_seconds: float = 1800.0
    max_age_seconds: float = 86_400.0

    def __post_init__(self) -> None:
        _positive("sessions", "max_sessions", self.max_sessions)
        _positive("sessions", "idle_seconds", self.idle_seconds, integer=False)
        _positive("sessions", "max_age_seconds", self.max_age_seconds, integer=False)
