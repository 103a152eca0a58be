"""The session seam filled by ``votr_mcp.session``: tool context and the iteration guard.

A thin adapter: the server speaks :class:`~votr_mcp.server.hooks.SessionHooks`, the session
layer speaks ``SessionManager``/``Session``. A tool's identity in a session is its call name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from votr_mcp.catalog import Tool
from votr_mcp.server.hooks import SearchedTool, SearchNotes
from votr_mcp.session import SessionManager, polling_tolerant

__all__ = ["ManagedSessions"]


class ManagedSessions:
    """:class:`SessionHooks` backed by a ``SessionManager``."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    def resolve(self, transport_key: str | None, session_id: str | None) -> str:
        return self.manager.resolve(session_id=session_id, transport_key=None if session_id else transport_key).id

    def after_search(self, session: str, query: str, tools: Sequence[SearchedTool]) -> SearchNotes:
        view = self.manager.get(session).after_search([t.call_name for t in tools])
        return SearchNotes(bound=frozenset(view.already_bound), note=view.note)

    def pinned(self) -> Sequence[str]:
        return self.manager.policy.pinned()

    def before_call(self, session: str, call_name: str, tool: Tool) -> None:
        self.manager.get(session).admit(call_name)

    def after_call(self, session: str, call_name: str, tool: Tool, arguments: Mapping[str, Any], is_error: bool) -> str | None:
        return self.manager.get(session).after_call(call_name, arguments, tolerant=polling_tolerant(tool.annotations))

    def close_transport(self, transport_key: str) -> None:
        self.manager.close_transport(transport_key)
