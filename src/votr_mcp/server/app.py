"""The MCP server object: a fixed tool list, and calls dispatched to the :class:`Hub`.

This and ``transports.py`` are the only modules that import ``mcp.server``. The tool list
is fixed for the life of the process (the 2026-07-28 revision forbids per-connection tool
lists): ``search_tools`` and ``call_tool``, plus, with ``expose_all``, every upstream tool
under its call name as it stood after the first harvest.
"""

from __future__ import annotations

import logging
import secrets
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import NotifyOnlyOutbound
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

import votr_mcp
from votr_mcp.errors import VotrError
from votr_mcp.server.hub import MAX_RESULTS_CAP, Hub
from votr_mcp.server.observe_requests import StatusResource, watch_call, watch_search
from votr_mcp.server.observer import Observer
from votr_mcp.server.render import SEARCH_OUTPUT_SCHEMA

__all__ = ["build_server", "SEARCH_TOOL", "CALL_TOOL", "INSTRUCTIONS"]

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "votr-mcp gives you access to many MCP servers' tools through two tools. "
    "First call search_tools with what you want to do; it returns the few tools that fit, each with a call name "
    "and a one-line signature (or none, with a reason, when nothing fits). Then call call_tool with that call name "
    "and the tool's arguments. Search again whenever you need a different capability. "
    "The resource votr://status lists the servers behind votr-mcp and whether each is up."
)

_SESSION_ID = {
    "type": "string",
    "description": "Only for clients without a persistent connection: the session_id an earlier search_tools returned.",
}

SEARCH_TOOL = types.Tool(
    name="search_tools",
    title="Search tools",
    description=(
        "Find the tools that can do a task, among all connected MCP servers. Describe the task in plain words. "
        "Returns up to a few tools as one-line signatures with their call names (use them with call_tool), "
        "or no tool with a reason when nothing fits."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do, e.g. 'list open pull requests in a repo'."},
            "server_intent": {"type": "string", "description": "Optional: the service or server you have in mind, e.g. 'github'."},
            "tool_intent": {"type": "string", "description": "Optional: the action you have in mind, e.g. 'list pull requests'."},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS_CAP, "description": "Optional cap on how many tools to return."},
            "servers": {"type": "array", "items": {"type": "string"},
                        "description": "Optional: search only these servers (names or globs, e.g. ['github'])."},
            "categories": {"type": "array", "items": {"type": "string"},
                           "description": "Optional: search only servers of these categories (as the operator tagged them)."},
            "session_id": _SESSION_ID,
        },
        "required": ["query"],
    },
    output_schema=SEARCH_OUTPUT_SCHEMA,
    annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
)

CALL_TOOL = types.Tool(
    name="call_tool",
    title="Call a tool",
    description=(
        "Run a tool that search_tools returned. 'name' is its call name exactly as search_tools gave it; "
        "'arguments' is an object matching its signature. The tool's own result is returned unchanged."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The call name from search_tools, e.g. 'filesystem__read_file'."},
            "arguments": {"type": "object", "description": "The tool's arguments.", "additionalProperties": True},
            "session_id": _SESSION_ID,
        },
        "required": ["name"],
    },
    # The upstream tool may do anything: no read-only or idempotence promise.
    annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True),
)

_META_TOOLS = {SEARCH_TOOL.name: SEARCH_TOOL, CALL_TOOL.name: CALL_TOOL}


def build_server(
    hub: Hub,
    *,
    expose_all: bool = False,
    name: str = "votr-mcp",
    on_disconnect: Callable[[str], None] | None = None,
    observer: Observer | None = None,
) -> Server[Any]:
    """The low-level MCP server for ``hub``; ``on_disconnect(transport_key)`` runs when a client connection
    closes; ``observer`` is told of every search and call (metrics, traces, the dashboard)."""
    exposed: dict[str, types.Tool] = {}

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if expose_all and not exposed:
            await hub.wait_ready()
            exposed.update(_upstream_tools(hub))
        return types.ListToolsResult(tools=[*_META_TOOLS.values(), *exposed.values()])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args: Mapping[str, Any] = params.arguments or {}
        started = time.perf_counter()
        try:
            return await _dispatch(ctx, params, args)
        finally:
            log.debug("%s handled in %.2f ms", params.name, (time.perf_counter() - started) * 1000)

    async def _dispatch(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, args: Mapping[str, Any]) -> types.CallToolResult:
        key = _transport_key(ctx, on_disconnect)
        try:
            if params.name == SEARCH_TOOL.name:
                with watch_search(observer, key, args) as seen:
                    answer = await hub.search(
                        args.get("query"),
                        server_intent=args.get("server_intent"),
                        tool_intent=args.get("tool_intent"),
                        max_results=args.get("max_results"),
                        session_id=args.get("session_id"),
                        transport_key=key,
                        servers=args.get("servers"),
                        categories=args.get("categories"),
                        **_caller(ctx),
                    )
                    seen.answer = answer
                return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)], structured_content=answer.structured)
            if params.name == CALL_TOOL.name:
                with watch_call(observer, hub, key, args.get("name"), args.get("session_id")) as seen:
                    seen.result = await hub.call(args.get("name"), args.get("arguments"), session_id=args.get("session_id"),
                                                 transport_key=key, **_caller(ctx))
                return seen.result
            if expose_all:
                with watch_call(observer, hub, key, params.name, None) as seen:
                    seen.result = await hub.call(params.name, dict(args), transport_key=key, **_caller(ctx))
                return seen.result
            raise ToolError(f"Unknown tool '{params.name}': this server has only search_tools and call_tool.")
        except ToolError as exc:
            log.info("%s refused: %s", params.name, str(exc).splitlines()[0])
            return _error(str(exc))
        except VotrError as exc:
            log.warning("%s failed: %s", params.name, exc)
            return _error(str(exc))
        except anyio.get_cancelled_exc_class():
            log.info("%s cancelled by the client", params.name)
            raise
        except Exception as exc:
            # A bug of ours: the traceback goes to the log, the model gets tool text (the SDK
            # would send a JSON-RPC error with code 0 and the traceback).
            log.exception("%s failed unexpectedly", params.name)
            return _error(f"votr-mcp hit an internal error ({type(exc).__name__}) handling {params.name}; the details are in its log. "
                          "Retry once, or search_tools for another tool.")

    def input_schema(tool_name: str) -> Mapping[str, Any] | None:
        tool = _META_TOOLS.get(tool_name) or exposed.get(tool_name)
        return None if tool is None else tool.input_schema

    resources = StatusResource(hub)
    server = Server(
        name,
        version=votr_mcp.__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=resources.list,
        on_read_resource=resources.read,
        get_tool_input_schema=input_schema,
    )
    return server


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _upstream_tools(hub: Hub) -> dict[str, types.Tool]:
    snap = hub.index.current
    withheld = hub.change_control.withheld()  # held tools are not shown, as in search: their text is unreviewed
    tools: dict[str, types.Tool] = {}
    for tool in snap.catalog:
        call_name = snap.names[tool.key]
        if call_name in _META_TOOLS or tool.key in withheld:
            continue
        annotations = None
        if tool.annotations:
            try:
                annotations = types.ToolAnnotations.model_validate(dict(tool.annotations))
            except ValueError:
                annotations = None
        tools[call_name] = types.Tool(
            name=call_name,
            title=tool.title,
            description=f"[server: {tool.server}] {tool.description}".strip(),
            input_schema=dict(tool.input_schema) or {"type": "object"},
            output_schema=dict(tool.output_schema) if tool.output_schema else None,
            annotations=annotations,
        )
    return tools


def _caller(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    """Who sent a request, for the policy: its bearer token when it came over HTTP."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return {"bearer": None, "over_http": False}
    auth = str(headers.get("authorization") or "")
    return {"bearer": auth[7:].strip() if auth.lower().startswith("bearer ") else None, "over_http": True}


def _transport_key(ctx: ServerRequestContext[Any], on_disconnect: Callable[[str], None] | None) -> str | None:
    """A stable, unguessable key for the client connection this request came on; None when the
    request has no connection identity (stateless HTTP: the client passes session_id instead)."""
    connection = getattr(ctx.session, "_connection", None)
    if connection is None:
        return None
    if connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
        # 2026-07-28: every request carries its own envelope and gets a fresh Connection. On a
        # stream (stdio) the requests share one NotifyOnlyOutbound channel: key on it. Modern
        # HTTP requests get a shared placeholder channel, which identifies nobody.
        channel = connection.outbound
        if type(channel) is not NotifyOnlyOutbound:
            return None
        key = _CHANNEL_KEYS.get(channel)
        if key is None:
            key = _CHANNEL_KEYS[channel] = "conn-" + secrets.token_urlsafe(16)
        return key
    # Handshake era: one Connection per client connection; its exit stack runs on close.
    key = connection.state.get("votr.transport_key")
    if key is None:
        key = connection.state["votr.transport_key"] = "conn-" + secrets.token_urlsafe(16)
        if on_disconnect is not None:
            connection.exit_stack.callback(on_disconnect, key)
    return key


_CHANNEL_KEYS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
