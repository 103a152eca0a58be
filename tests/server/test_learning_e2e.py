"""A real `votr-mcp serve` records outcomes in its store, and `votr-mcp stats` reads them back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from votr_serving import real_servers_config, serve_env, votr_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_served_search_and_call_land_in_the_store_and_stats_report_them(tmp_path: Path) -> None:
    config = real_servers_config(tmp_path)
    config["mcpServers"] = {"time": config["mcpServers"]["time"]}
    path = tmp_path / "upstreams.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    store = tmp_path / "store.sqlite3"
    with anyio.fail_after(180):
        async with votr_client("stdio", "--config", str(path), "--store", str(store), "--wait-for-dense") as client:
            found = await client.call_tool("search_tools", {"query": "get the current time in Tokyo"})
            name = found.structured_content["tools"][0]["name"]
            called = await client.call_tool("call_tool", {"name": name, "arguments": {"timezone": "Asia/Tokyo"}})
    assert name == "time__get_current_time" and not called.is_error
    stats = subprocess.run([sys.executable, "-m", "votr_mcp.cli", "stats", "--store", str(store), "--json"],
                           capture_output=True, text=True, timeout=60, env=serve_env())
    figures = json.loads(stats.stdout)
    assert (figures["searches"], figures["calls"], figures["hit_rate"], figures["success_rate"]) == (1, 1, 1.0, 1.0)
    assert figures["top_queries"] == [["get the current time in tokyo", 1]]
