"""Per-tool rules shared by every session: pins, guard exemptions, guard hints.

They come from configuration but are keyed by call name, which is only known once the
catalog is indexed (and changes when it is re-harvested), so the server replaces them at
run time; every session sees the change at once. Each setter swaps in a new immutable
value, so a reader never sees a half-updated set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["ToolPolicy"]


class ToolPolicy:
    """Pinned tools (always available, never evicted), polling-exempt tools, loop hints."""

    __slots__ = ("_pinned", "_exempt", "_hints")

    def __init__(
        self,
        pinned: Iterable[str] = (),
        exempt: Iterable[str] = (),
        hints: Mapping[str, str] | None = None,
    ) -> None:
        self._pinned = frozenset(pinned)
        self._exempt = frozenset(exempt)
        self._hints: Mapping[str, str] = dict(hints or {})

    def is_pinned(self, name: str) -> bool:
        return name in self._pinned

    def pinned(self) -> list[str]:
        """The pinned call names, sorted."""
        return sorted(self._pinned)

    def is_exempt(self, name: str) -> bool:
        """True for tools configured as legitimate pollers (treated like read-only tools)."""
        return name in self._exempt

    def hint(self, name: str) -> str | None:
        """The configured advice to add to a loop-guard note for this tool, if any."""
        return self._hints.get(name)

    def set_pinned(self, names: Iterable[str]) -> None:
        self._pinned = frozenset(names)

    def set_exempt(self, names: Iterable[str]) -> None:
        self._exempt = frozenset(names)

    def set_hints(self, hints: Mapping[str, str]) -> None:
        self._hints = dict(hints)
