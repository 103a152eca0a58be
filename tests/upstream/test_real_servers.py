"""Upstreams against the five real reference servers (npm and PyPI), as users run them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from toy_upstreams import session_members, wait_gone
from upstream_servers import SERVERS_DIR, require_servers

from votr_mcp.upstream import Upstreams, harvest
from votr_mcp.upstream.config import parse_upstreams

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# One tool each server is known to publish, to prove the harvest read the real listing.
KNOWN = {
    "everything": "echo",
    "filesystem": "read_text_file",
    "memory": "create_entities",
    "time": "get_current_time",
    "git": "git_status",
}


async def test_the_five_real_servers_are_harvested_concurrently(upstream_config: dict[str, Any]) -> None:
    config = parse_upstreams(upstream_config)
    with anyio.fail_after(120):
        result = await harvest(config)
    assert result.failed == ()
    assert set(result.statuses) == set(KNOWN)
    for name, tool in KNOWN.items():
        names = [t.name for t in result.tools if t.server == name]
        assert tool in names, f"{name} did not list {tool}: {names}"
        assert result.statuses[name].tool_count == len(names) > 0
    # Legacy (npm, 2025-11-25) and modern (PyPI, 2026-07-28) servers are both spoken.
    assert {s.protocol_version for s in result.statuses.values()} >= {"2025-11-25"}


async def test_calls_to_real_servers_return_their_results_and_errors_unchanged(upstream_config: dict[str, Any], tmp_path: Path, linux_proc: None) -> None:
    config = parse_upstreams(upstream_config)
    hello = tmp_path / "upstreams" / "filesystem" / "files" / "hello.txt"
    async with Upstreams(config) as upstreams:
        with anyio.fail_after(120):
            statuses = await upstreams.wait_started()
            now = await upstreams.call("time", "get_current_time", {"timezone": "UTC"})
            echo = await upstreams.call("everything", "echo", {"message": "over the proxy"})
            text = await upstreams.call("filesystem", "read_text_file", {"path": str(hello)})
            outside = await upstreams.call("filesystem", "read_text_file", {"path": "/etc/hostname"})
    assert all(s.state == "ready" for s in statuses.values()), statuses
    assert now.is_error is False and now.structured_content is not None and now.structured_content["timezone"] == "UTC"
    assert echo.content[0].text == "Echo: over the proxy"
    assert text.content[0].text.strip() == "hello from the votr-mcp tests"
    assert outside.is_error is True and "denied" in outside.content[0].text.lower()
    # Every server process (npm wrappers and Python entry points alike) is gone after close.
    await wait_gone(*(s.pid for s in statuses.values() if s.pid is not None), within=15)


async def test_a_server_started_through_npx_leaves_no_process_of_its_tree_behind(linux_proc: None, tmp_path: Path) -> None:
    require_servers(["memory"])
    # npx -> sh -> node: the wrapper chain users configure; the whole chain shares one session.
    entry = {"command": "npx", "args": ["--no-install", "mcp-server-memory"], "cwd": str(SERVERS_DIR),
             "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}}
    config = parse_upstreams({"mcpServers": {"memory": entry}})
    async with Upstreams(config) as upstreams:
        with anyio.fail_after(120):
            status = (await upstreams.wait_started())["memory"]
            assert status.state == "ready", status.error
            assert status.pid is not None
            running = session_members(status.pid)
    assert status.pid in running and len(running) >= 2  # npx and the node server it started
    with anyio.fail_after(15):
        while session_members(status.pid):
            await anyio.sleep(0.05)  # polled: these are not our children, so there is no exit event to wait on
