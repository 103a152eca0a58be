"""The session seam filled by ``votr_mcp.session``: tool context and the iteration guard.

A thin adapter: the server speaks :class:`~votr_mcp.server.hooks.SessionHooks`, the session
layer speaks ``SessionManager``/``Session``. A tool's identity in a session is its call name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from votr_mcp.catalog import Tool
from votr_mcp.errors import SessionError
from votr_mcp.server.hooks import Resolved, SearchedTool, SearchNotes
from votr_mcp.session import SessionManager, polling_tolerant

__all__ = ["ManagedSessions"]


class ManagedSessions:
    """:class:`SessionHooks` backed by a ``SessionManager``."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager
        self.on_trip: Callable[[str], None] | None = None  # told the call name when the guard evicts a tool

    def resolve(self, transport_key: str | None, session_id: str | None) -> Resolved:
        try:
            return Resolved(self.manager.resolve(session_id=session_id, transport_key=transport_key).id)
        except SessionError as exc:
            # Open mode: an id from before a restart or from another process (the Inspector CLI
            # starts one per call) costs nothing to replace, since a fresh session may call any
            # tool as well. Strict mode keeps the refusal: its bindings are what the id stood for.
            if session_id is None or self.manager.settings.context.mode != "open":
                raise
            own = self.manager.resolve(transport_key=transport_key)
            return Resolved(own.id, f"The session_id passed was not used ({exc}). This request ran in "
                                    f"{'this connection' + chr(39) + 's' if transport_key else 'a new'} session, session_id: {own.id}")

    def after_search(self, session: str, query: str, tools: Sequence[SearchedTool]) -> SearchNotes:
        view = self.manager.get(session).after_search([t.call_name for t in tools])
        return SearchNotes(bound=frozenset(view.already_bound), note=view.note)

    def pinned(self) -> Sequence[str]:
        return self.manager.policy.pinned()

    def before_call(self, session: str, call_name: str, tool: Tool) -> None:
        self.manager.get(session).admit(call_name)

    def after_call(self, session: str, call_name: str, tool: Tool, arguments: Mapping[str, Any], is_error: bool) -> str | None:
        note = self.manager.get(session).after_call(call_name, arguments, tolerant=polling_tolerant(tool.annotations))
        if note is not None and self.on_trip is not None:
            self.on_trip(call_name)
        return note

    def close_transport(self, transport_key: str) -> None:
        self.manager.close_transport(transport_key)
