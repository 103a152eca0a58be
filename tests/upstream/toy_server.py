"""A small, real MCP server over stdio whose misbehaviour the upstream tests control.

    python toy_server.py [--page-size N] [--fillers N] [--legacy] [--silent] [--grandchild] [--http PORT] [--noisy]

Tools: ``echo``, ``whoami`` (its pid, and its grandchild's), ``wait_forever`` (never returns;
counts the cancellations it receives), ``cancellations`` (waits until that count reaches
``at_least``), ``add_tool`` (registers a tool and announces tools/list_changed), ``crash``
(exits mid-call), ``freeze`` (hangs the whole server), and ``--fillers`` plain tools so that ``tools/list`` spans several pages
of ``--page-size``. ``--legacy`` answers ``server/discover`` with "method not found" so clients fall back to
the 2025 handshake, where list_changed is a plain notification. ``--silent`` reads stdin and
never answers anything. ``--grandchild`` starts a long ``sleep`` child, to check that
cleanup reaches the whole process tree. ``--http PORT`` serves streamable HTTP at ``/mcp``
and SSE at ``/sse`` instead of stdio (``header`` then echoes a request header).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage


def _tool(name: str, description: str, properties: dict[str, object] | None = None) -> types.Tool:
    schema: dict[str, object] = {"type": "object", "properties": properties or {}}
    return types.Tool(name=name, description=description, input_schema=schema)


def build(args: argparse.Namespace) -> Server:
    bus = InMemorySubscriptionBus()
    grandchild = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL) if args.grandchild else None
    tools = [
        _tool("echo", "Echo the given text back.", {"text": {"type": "string"}}),
        _tool("whoami", "Report this server's process id."),
        _tool("wait_forever", "Never return; count cancellations."),
        _tool("cancellations", "Wait until at_least cancellations arrived.", {"at_least": {"type": "integer"}}),
        _tool("add_tool", "Register a new tool and announce it.", {"name": {"type": "string"}}),
        _tool("crash", "Exit the server process in the middle of the call."),
        _tool("freeze", "Block the whole server: it answers nothing from now on."),
        _tool("header", "Return an HTTP request header (HTTP transports only).", {"name": {"type": "string"}}),
    ]
    tools += [_tool(f"filler_{i}", f"Filler tool number {i} for pagination.") for i in range(args.fillers)]
    cancelled = {"count": 0}
    changed = anyio.Event()

    async def list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params and params.cursor else 0
        end = start + args.page_size
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal changed
        arguments = params.arguments or {}
        if params.name == "echo":
            return _text(str(arguments.get("text", "")), structured={"text": arguments.get("text", "")})
        if params.name == "whoami":
            return _text(str(os.getpid()), structured={"pid": os.getpid(), "grandchild": grandchild.pid if grandchild else None})
        if params.name == "wait_forever":
            try:
                await anyio.sleep_forever()
            finally:
                cancelled["count"] += 1
                changed.set()
                changed = anyio.Event()
        if params.name == "cancellations":
            with anyio.fail_after(10):
                while cancelled["count"] < int(arguments.get("at_least", 1)):
                    await changed.wait()
            return _text(str(cancelled["count"]))
        if params.name == "add_tool":
            tools.append(_tool(str(arguments["name"]), "A tool added while running."))
            await bus.publish(ToolsListChanged())
            session = getattr(ctx, "session", None)
            if args.legacy and session is not None:
                await session.send_tool_list_changed()
            return _text("added")
        if params.name == "crash":
            os._exit(3)
        if params.name == "freeze":
            time.sleep(3600)  # blocks the event loop on purpose: a hung server
        if params.name == "header":
            request = getattr(ctx, "request", None)
            value = request.headers.get(str(arguments.get("name"))) if request is not None else None
            return _text(str(value), structured={"value": value})
        if any(t.name == params.name for t in tools):
            return _text(f"{params.name} ran")
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name}")

    server = Server(
        "toy",
        version="1.0",
        description="A test server with controllable failures.",
        instructions="Use echo to test.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    return server


def _text(text: str, structured: dict[str, object] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


async def serve(args: argparse.Namespace) -> None:
    server = build(args)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        if not args.legacy:
            await server.run(read, write, options)
            return
        # A 2025-era server does not know server/discover: answer it here, before the SDK's
        # dual-era loop would take it as the client's choice of the 2026 protocol.
        inner_send, inner_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def filter_discover() -> None:
            async with inner_send:
                async for item in read:
                    message = getattr(item, "message", None)
                    if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                        error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                        await write.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))
                        continue
                    await inner_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(filter_discover)
            await server.run(inner_read, write, options)
            group.cancel_scope.cancel()


def serve_http(args: argparse.Namespace) -> None:
    """Streamable HTTP at /mcp and legacy SSE at /sse on 127.0.0.1:PORT."""
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    server = build(args)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    app = server.streamable_http_app(host="127.0.0.1")
    sse = SseServerTransport("/messages/")

    async def sse_endpoint(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, options)
        return Response()

    app.router.routes.extend([Route("/sse", endpoint=sse_endpoint, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)])
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--page-size", type=int, default=3)
    parser.add_argument("--fillers", type=int, default=4)
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--grandchild", action="store_true")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on this port instead of stdio")
    parser.add_argument("--noisy", action="store_true", help="print a banner on stdout first, as careless servers do")
    args = parser.parse_args()
    if args.noisy:
        os.write(1, b"toy server 1.0 starting up!\n")
    if args.http:
        serve_http(args)
        return
    if args.silent:
        for _ in sys.stdin:  # read and never answer, until stdin closes
            pass
        return
    anyio.run(serve, args)


if __name__ == "__main__":
    main()
