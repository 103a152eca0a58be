"""The MCP surface: ``search_tools`` and ``call_tool`` over a live index and upstream servers.

``hub`` holds the two tools as plain async methods; ``app`` turns them into an MCP server
with a fixed tool list; ``transports`` serves it over stdio, streamable HTTP and SSE;
``runtime`` starts everything for ``votr-mcp serve``. ``hooks`` are the seams for sessions
and change control.
"""

from votr_mcp.server.app import CALL_TOOL, SEARCH_TOOL, build_server
from votr_mcp.server.hooks import ChangeControl, NoChangeControl, NoSessions, SearchedTool, SearchNotes, SessionHooks
from votr_mcp.server.hub import Hub, SearchAnswer, Upstreams
from votr_mcp.server.live_index import LiveIndex, Snapshot

__all__ = [
    "CALL_TOOL",
    "SEARCH_TOOL",
    "ChangeControl",
    "Hub",
    "LiveIndex",
    "NoChangeControl",
    "NoSessions",
    "SearchAnswer",
    "SearchNotes",
    "SearchedTool",
    "SessionHooks",
    "Snapshot",
    "Upstreams",
    "build_server",
]
