"""A tiny real MCP server (stdio) with one tool, ``blob(size)``, answering ``size`` bytes of text:
what a large upstream result costs on its way through votr-mcp."""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(name="blob", description="Return a text of the given size in bytes.",
               input_schema={"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}),
]


async def list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    size = int((params.arguments or {}).get("size", 0))
    return types.CallToolResult(content=[types.TextContent(type="text", text="x" * size)])


async def main() -> None:
    server = Server("big", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
