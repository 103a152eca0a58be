"""The contract again, through an independent client: the MCP Inspector CLI (TypeScript SDK),
over stdio, legacy SSE and streamable HTTP."""

from __future__ import annotations

import anyio
import pytest
from votr_serving import CATALOG, inspector, inspector_target

pytestmark = pytest.mark.anyio

SERVE_CATALOG = ("--catalog", str(CATALOG), "--no-dense")


async def test_the_inspector_sees_two_tools_finds_one_and_gets_errors_as_errors(transport: str) -> None:
    with anyio.fail_after(120):
        async with inspector_target(transport, *SERVE_CATALOG) as target:
            listed = await inspector(target, "--method", "tools/list")
            found = await inspector(target, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=weather forecast for Oslo")
            wrong = await inspector(target, "--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=weather__get_forcast", "arguments={}")
            invalid = await inspector(target, "--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=weather__get_forecast", 'arguments={"days": "x"}')
    assert sorted(tool["name"] for tool in listed["tools"]) == ["call_tool", "search_tools"]
    assert found["structuredContent"]["tools"][0]["name"] == "weather__get_forecast"
    assert "weather__get_forecast" in found["content"][0]["text"]
    assert wrong["isError"] is True and "'weather__get_forecast'" in wrong["content"][0]["text"]
    assert invalid["isError"] is True and "missing required 'city'" in invalid["content"][0]["text"]
