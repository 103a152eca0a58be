"""A real MCP server over stdio for the fault checks: it says who it is, shows its environment,
hangs on request, writes a log of what it received, and answers with results of any size.

    python _fault_server.py --name NAME [--record FILE] [--tool-prefix P]

Tools: ``whoami(nonce)`` (its ``--name``, its pid and the nonce, so a misrouted or mixed-up
answer shows), ``environment()`` (its whole ``os.environ``), ``sleep(seconds?)`` (sleeps, forever
without ``seconds``), ``blob(size)`` (a text of ``size`` characters of :func:`pattern`), ``freeze()`` (blocks the
whole process: it answers nothing any more).
With ``--record FILE`` it appends one line per event to FILE: ``call <request id> <tool>`` when a
call starts, ``cancelled <request id>`` for every ``notifications/cancelled`` it reads off the wire
(before the SDK acts on it), so a check can tell what reached the upstream from what votr-mcp did.
``--tool-prefix P`` puts P before every tool name (``P whoami``), to build colliding call names.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def pattern(size: int) -> str:
    """``size`` characters with no long runs, so a dropped or repeated chunk changes the text."""
    whole, rest = divmod(size, len(ALPHABET) + 1)
    line = ALPHABET + "\n"
    return line * whole + line[:rest]


def _tool(name: str, description: str, properties: dict[str, object] | None = None) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema={"type": "object", "properties": properties or {}})


TOOLS = [
    _tool("whoami", "Report this server's name and process id.", {"nonce": {"type": "string"}}),
    _tool("environment", "Report this server's environment variables."),
    _tool("sleep", "Sleep for the given seconds (forever without them).", {"seconds": {"type": "number"}}),
    _tool("blob", "Return a text of the given size.", {"size": {"type": "integer"}}),
    _tool("freeze", "Block the whole server: it answers nothing from now on."),
]


def build(name: str, record: Path | None, prefix: str = "") -> tuple[Server, Callable[[str], None]]:
    def note(line: str) -> None:
        if record is not None:
            with record.open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    tools = [t.model_copy(update={"name": prefix + t.name}) for t in TOOLS]

    async def list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        note(f"call {getattr(ctx, 'request_id', None)} {params.name}")
        tool = params.name.removeprefix(prefix)
        if tool == "whoami":
            return _text(name, {"name": name, "pid": os.getpid(), "nonce": arguments.get("nonce")})
        if tool == "environment":
            return _text(name, {"name": name, "env": dict(os.environ)})
        if tool == "sleep":
            seconds = arguments.get("seconds")
            await (anyio.sleep(float(seconds)) if seconds is not None else anyio.sleep_forever())
            return _text("slept")
        if tool == "blob":
            return _text(pattern(int(arguments.get("size", 0))))
        if tool == "freeze":
            time.sleep(3600)  # noqa: ASYNC251 - blocks the event loop on purpose: the whole server hangs
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name}")

    return Server(name, version="1.0", on_list_tools=list_tools, on_call_tool=call_tool), note


def _text(text: str, structured: dict[str, object] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


async def serve(name: str, record: Path | None, prefix: str) -> None:
    server, note = build(name, record, prefix)
    async with stdio_server() as (read, write):
        inner_send, inner_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def tap() -> None:  # log cancellations as they arrive, whatever the SDK then does
            async with inner_send:
                async for item in read:
                    message = getattr(item, "message", None)
                    if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                        note(f"cancelled {(message.params or {}).get('requestId')}")
                    await inner_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(tap)
            await server.run(inner_read, write, server.create_initialization_options())
            group.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--record", type=Path)
    parser.add_argument("--tool-prefix", default="", help="prefix every tool name (to build colliding call names)")
    args = parser.parse_args()
    anyio.run(serve, args.name, args.record, args.tool_prefix)


if __name__ == "__main__":
    main()
