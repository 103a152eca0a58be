"""The Inspector CLI (an independent TypeScript client) drives votr-mcp over stdio, SSE and
streamable HTTP through ``upstream_servers.inspect_votr``: list, search, call, error."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import upstream_servers as us

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from votr_serving import http_server  # noqa: E402  (S2's helper: votr-mcp serve on a free port)

pytestmark = pytest.mark.slow

# Lexical retrieval only and no store: these tests are about the transport, not ranking quality.
FAST = ["--no-dense", "--store", "none"]
QUERY = {"query": "what is the current time in Tokyo"}
CALL = {"name": "time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}


def _found(result: us.InspectorResult) -> list[str]:
    assert result.returncode == 0 and not result.is_error, result.stderr[-2000:]
    return [tool["name"] for tool in result.structured["tools"]]


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    us.require_servers(["time", "memory"], inspector=True)
    return us.write_config(tmp_path / "upstreams.json", us.servers_config(tmp_path, ["time", "memory"]))


def test_over_stdio_the_inspector_finds_the_time_tool_and_calls_it(config_file: Path) -> None:
    args = ["--config", str(config_file), *FAST]  # each request starts a fresh votr-mcp + upstreams
    assert "time__get_current_time" in _found(us.inspect_votr("tools/call", args, tool_name="search_tools", arguments=QUERY))
    called = us.inspect_votr("tools/call", args, tool_name="call_tool", arguments=CALL)
    assert called.returncode == 0 and not called.is_error, called.stderr[-2000:]
    assert "Asia/Tokyo" in called.text()


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_over_a_url_the_inspector_searches_and_calls_through_a_running_votr_mcp(transport: str, config_file: Path) -> None:
    async with http_server(transport, ["--config", str(config_file), *FAST]) as (url, _log):
        ask = functools.partial(us.inspect_votr, url=url, timeout=120)
        with anyio.fail_after(300):
            listed = await anyio.to_thread.run_sync(functools.partial(ask, "tools/list"))
            found = await anyio.to_thread.run_sync(functools.partial(ask, "tools/call", tool_name="search_tools", arguments=QUERY))
            called = await anyio.to_thread.run_sync(functools.partial(ask, "tools/call", tool_name="call_tool", arguments=CALL))
            wrong = await anyio.to_thread.run_sync(functools.partial(
                ask, "tools/call", tool_name="call_tool", arguments={"name": "time__no_such_tool", "arguments": {}}))
    assert sorted(tool["name"] for tool in listed.output["tools"]) == ["call_tool", "search_tools"]
    assert "time__get_current_time" in _found(found)
    assert called.returncode == 0 and "Asia/Tokyo" in called.text(), called.stderr[-2000:]
    assert wrong.is_error and wrong.returncode != 0
    assert "time__no_such_tool" in wrong.text()
    assert "time__get_current_time" in wrong.text()  # nothing alike: the named server's tools are offered
