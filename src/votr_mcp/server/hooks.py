"""The seams where sessions (:mod:`votr_mcp.session`) and the store's change control (:mod:`votr_mcp.store`) plug into the server.

The server calls these at fixed points of every request; the defaults do nothing, so the
server works on its own. Nothing here imports ``mcp``: an implementation can live in
``votr_mcp.session`` or ``votr_mcp.store`` without depending on the protocol layer.

    search_tools:  sessions.resolve -> retrieval (minus change_control.withheld())
                   -> sessions.after_search (bind tools, mark bound, redundant-search note)
    call_tool:     sessions.resolve -> change_control.refusal -> sessions.before_call (refuse?)
                   -> upstream call -> sessions.after_call (guard note appended to the result)

A hook refuses by raising :class:`votr_mcp.errors.VotrError` (``SessionError`` for session
rules, ``StoreError`` for held-back tools); its message reaches the agent as the tool error,
so it must say what to do (e.g. "call search_tools to find it again").
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from votr_mcp.catalog import Tool, ToolKey

__all__ = [
    "Resolved",
    "SearchedTool",
    "SearchNotes",
    "SessionHooks",
    "ChangeControl",
    "NoSessions",
    "NoChangeControl",
]


@dataclass(frozen=True, slots=True)
class SearchedTool:
    """One tool a search handed to the agent, as the session layer sees it."""

    call_name: str
    tool: Tool


@dataclass(frozen=True, slots=True)
class SearchNotes:
    """What the session layer adds to a search result.

    ``bound`` names the call names that were already bound to the session before this
    search; ``note`` is a short message for the agent (e.g. a redundant-search warning).
    """

    bound: frozenset[str] = frozenset()
    note: str | None = None


class Resolved(NamedTuple):
    """The session a request runs in, and a note for the agent when it is not the one it asked for."""

    id: str
    note: str | None = None


class SessionHooks(Protocol):
    """Per-session tool context and the iteration guard, as seen by the server."""

    def resolve(self, transport_key: str | None, session_id: str | None) -> Resolved:
        """The session for this request: ``session_id`` when the client passed one, else the
        session of the transport connection ``transport_key`` (created on first use), else
        (stateless request, key None) a new session. An id that is unknown, expired or another
        connection's raises ``SessionError``, or, where the binding mode allows it, gets this
        connection's own session and a note saying so."""
        ...

    def after_search(self, session: str, query: str, tools: Sequence[SearchedTool]) -> SearchNotes:
        """Bind the returned tools to the session; say which were bound already."""
        ...

    def pinned(self) -> Sequence[str]:
        """Call names of the pinned tools, which every search answer includes."""
        ...

    def before_call(self, session: str, call_name: str, tool: Tool) -> None:
        """Raise ``SessionError`` to refuse the call (strict mode, or evicted by the guard)."""
        ...

    def after_call(self, session: str, call_name: str, tool: Tool, arguments: Mapping[str, Any], is_error: bool) -> str | None:
        """Record the call; return a guidance note to append to the result, or None."""
        ...


class ChangeControl(Protocol):
    """Tools held back after their definition changed (rug-pull protection)."""

    def withheld(self) -> Collection[ToolKey]:
        """Keys to exclude from search right now (cheap: called per search)."""
        ...

    def refusal(self, key: ToolKey) -> str | None:
        """Why ``key`` may not be called now (with how to accept it), or None if it may."""
        ...


@dataclass
class NoSessions:
    """Sessions switched off: every request is its own anonymous session."""

    def resolve(self, transport_key: str | None, session_id: str | None) -> Resolved:
        return Resolved(session_id or transport_key or "anonymous")

    def after_search(self, session: str, query: str, tools: Sequence[SearchedTool]) -> SearchNotes:
        return SearchNotes()

    def pinned(self) -> Sequence[str]:
        return ()

    def before_call(self, session: str, call_name: str, tool: Tool) -> None:
        return None

    def after_call(self, session: str, call_name: str, tool: Tool, arguments: Mapping[str, Any], is_error: bool) -> str | None:
        return None


@dataclass
class NoChangeControl:
    """Every harvested tool is trusted as is."""

    _empty: frozenset[ToolKey] = field(default_factory=frozenset)

    def withheld(self) -> Collection[ToolKey]:
        return self._empty

    def refusal(self, key: ToolKey) -> str | None:
        return None
