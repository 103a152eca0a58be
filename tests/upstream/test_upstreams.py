"""Upstreams against a real MCP server process (tests/upstream/toy_server.py) that misbehaves on request."""

from __future__ import annotations

import io
import logging
import os
import sys

import anyio
import anyio.to_thread
import pytest
from toy_upstreams import FAST, toy, toy_entry, wait_gone

from votr_mcp.catalog import Tool
from votr_mcp.errors import UpstreamError, UpstreamTimeout
from votr_mcp.upstream import Backoff, Upstreams, UpstreamStatus, kill_all_process_groups
from votr_mcp.upstream.config import parse_upstreams

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each test starts real server processes

START = 60  # seconds: a Python MCP server takes seconds to import on a loaded 2-core machine


async def test_every_page_of_tools_list_is_harvested_into_catalog_tools(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="votr_mcp.upstream")
    published: list[tuple[str, tuple[Tool, ...]]] = []
    config = toy("toy", "--page-size", "2", "--fillers", "5")
    async with Upstreams([config], on_tools=lambda server, tools: published.append((server, tools))) as upstreams:
        with anyio.fail_after(START):
            statuses = await upstreams.wait_started()
        tools = upstreams.tools("toy")
    assert statuses["toy"].state == "ready"
    assert statuses["toy"].protocol_version == "2026-07-28"
    assert [t.name for t in tools] == ["echo", "whoami", "wait_forever", "cancellations", "add_tool", "crash", "freeze", "header"] + [f"filler_{i}" for i in range(5)]
    echo = tools[0]
    assert (echo.server, echo.description) == ("toy", "Echo the given text back.")
    assert echo.input_schema == {"type": "object", "properties": {"text": {"type": "string"}}}
    assert (echo.server_description, echo.server_summary) == ("A test server with controllable failures.", "Use echo to test.")
    assert published == [("toy", tools)]
    # Progress goes to the log (stderr in the CLI), never stdout.
    assert any(r.getMessage().startswith(f"upstream 'toy': ready, {len(tools)} tools in ") for r in caplog.records)


@pytest.mark.parametrize("flags", [(), ("--noisy",)], ids=["clean", "banner-on-stdout"])
async def test_a_call_returns_the_upstream_result_unchanged(flags: tuple[str, ...]) -> None:
    async with Upstreams([toy("toy", *flags)]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            result = await upstreams.call("toy", "echo", {"text": "héllo"})
    assert result.is_error is False
    assert result.content[0].text == "héllo"
    assert result.structured_content == {"text": "héllo"}


async def test_concurrent_calls_share_one_connection_and_each_gets_its_own_answer() -> None:
    answers: dict[int, str] = {}
    async with Upstreams([toy()]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()

            async def one(i: int) -> None:
                answers[i] = (await upstreams.call("toy", "echo", {"text": f"call {i}"})).content[0].text

            async with anyio.create_task_group() as group:
                for i in range(20):
                    group.start_soon(one, i)
    assert answers == {i: f"call {i}" for i in range(20)}


async def test_a_call_past_its_deadline_raises_upstream_timeout_and_is_cancelled_upstream() -> None:
    async with Upstreams([toy()]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            with pytest.raises(UpstreamTimeout, match=r"upstream 'toy' tool 'wait_forever' timed out: no answer within 0.5s; the request was cancelled upstream"):
                await upstreams.call("toy", "wait_forever", timeout=0.5)
            # The server saw notifications/cancelled: its handler was cancelled, and it still serves.
            counted = await upstreams.call("toy", "cancellations", {"at_least": 1})
    assert counted.content[0].text == "1"


@pytest.mark.parametrize("flags", [(), ("--legacy",)], ids=["protocol-2026", "protocol-2025"])
async def test_cancelling_the_caller_forwards_the_cancellation_upstream(flags: tuple[str, ...]) -> None:
    async with Upstreams([toy("toy", *flags)]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            with anyio.move_on_after(0.5) as scope:
                await upstreams.call("toy", "wait_forever", timeout=30)
            assert scope.cancelled_caught
            counted = await upstreams.call("toy", "cancellations", {"at_least": 1})
    assert counted.content[0].text == "1"


async def test_an_upstream_killed_mid_call_fails_the_call_and_is_restarted(linux_proc: None) -> None:
    back = anyio.Event()

    def watch(status: UpstreamStatus) -> None:
        if status.state == "ready" and status.attempts >= 2:
            back.set()

    async with Upstreams([toy()], on_status=watch, backoff=FAST) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            first = upstreams.status("toy").pid
            with pytest.raises(UpstreamError, match=r"upstream 'toy' tool 'crash': the server went away during the call"):
                await upstreams.call("toy", "crash")
            assert not upstreams.available("toy")
            with pytest.raises(UpstreamError, match="not connected"):
                await upstreams.call("toy", "echo", {"text": "too soon"})
            await back.wait()
            result = await upstreams.call("toy", "echo", {"text": "again"})
            second = upstreams.status("toy").pid
    assert result.content[0].text == "again"
    assert first is not None and second is not None and first != second
    await wait_gone(first, second)


async def test_an_upstream_that_never_answers_is_stopped_at_its_startup_deadline_and_retried(linux_proc: None) -> None:
    async with Upstreams([toy("mute", "--silent", startup_timeout=1)], backoff=FAST) as upstreams:
        with anyio.fail_after(START):
            statuses = await upstreams.wait_started()
        status = statuses["mute"]
        assert status.state == "retrying"
        assert status.error == "did not start within 1s (no answer to the handshake or tools/list); it was stopped"
        assert status.pid is not None
        # Status is readable off the event loop too (the store and index work in threads).
        assert (await anyio.to_thread.run_sync(upstreams.status, "mute")).state == "retrying"
        await wait_gone(status.pid)
        with pytest.raises(UpstreamError, match=r"upstream 'mute' is not connected \(did not start within 1s"):
            await upstreams.call("mute", "echo", {})


@pytest.mark.parametrize("flags", [(), ("--legacy",)], ids=["subscription-2026", "notification-2025"])
async def test_list_changed_reharvests_the_server_and_reports_its_new_tools(flags: tuple[str, ...]) -> None:
    grown = anyio.Event()
    published: list[tuple[str, ...]] = []

    def on_tools(server: str, tools: tuple[Tool, ...]) -> None:
        published.append(tuple(t.name for t in tools))
        if "brand_new" in published[-1]:
            grown.set()

    async with Upstreams([toy("toy", *flags)], on_tools=on_tools) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            assert upstreams.status("toy").protocol_version == ("2025-11-25" if flags else "2026-07-28")
            await upstreams.call("toy", "add_tool", {"name": "brand_new"})
            await grown.wait()
        assert "brand_new" in [t.name for t in upstreams.tools("toy")]
    assert "brand_new" not in published[0]
    assert upstreams.status("toy").tool_count == len(published[-1])


async def test_a_bad_entry_and_a_missing_command_do_not_stop_the_good_upstream() -> None:
    config = parse_upstreams({"mcpServers": {
        "good": toy_entry(),
        "typo": {"command": "votr-no-such-server-binary"},
        "broken": {"command": ["not", "a", "string"]},
    }})
    assert [str(p) for p in config.errors] == ["mcpServers.broken.command: must be a non-empty string, got ['not', 'a', 'string']; this server was skipped"]
    async with Upstreams(config, backoff=FAST) as upstreams:
        with anyio.fail_after(START):
            statuses = await upstreams.wait_started()
            result = await upstreams.call("good", "echo", {"text": "still here"})
        assert result.content[0].text == "still here"
        assert statuses["good"].state == "ready"
        assert statuses["typo"].state == "retrying"
        assert statuses["typo"].error == "cannot start 'votr-no-such-server-binary': command not found; check 'command' and PATH"
        with pytest.raises(UpstreamError, match="upstream 'typo' is not connected .cannot start 'votr-no-such-server-binary'"):
            await upstreams.call("typo", "anything", {})
        with pytest.raises(UpstreamError, match=r"no upstream named 'broken' is configured \(configured: good, typo\)"):
            await upstreams.call("broken", "anything", {})


async def test_an_error_answer_from_the_upstream_is_raised_with_its_message() -> None:
    async with Upstreams([toy()]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            with pytest.raises(UpstreamError, match=r"refused the call: unknown tool nope \(JSON-RPC error -32602\)"):
                await upstreams.call("toy", "nope", {})


async def test_closing_stops_the_server_and_everything_it_started(linux_proc: None) -> None:
    async with Upstreams([toy("toy", "--grandchild")]) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            pids = (await upstreams.call("toy", "whoami")).structured_content
    assert pids is not None and pids["pid"] == upstreams.status("toy").pid
    assert upstreams.status("toy").state == "stopped"
    await wait_gone(pids["pid"], pids["grandchild"])
    assert os.getpid() not in (pids["pid"], pids["grandchild"])


async def test_a_server_that_exits_at_start_is_reported_with_its_exit_code_and_last_stderr_line() -> None:
    script = "import sys; print('Error: cannot find module foo', file=sys.stderr); sys.exit(7)"
    config = parse_upstreams({"mcpServers": {"broken": {"command": sys.executable, "args": ["-c", script]}}})
    async with Upstreams(config, errlog=io.StringIO()) as upstreams:
        with anyio.fail_after(START):
            statuses = await upstreams.wait_started()
    assert statuses["broken"].error == (
        "the server exited or closed the connection during the handshake; the process exited with code 7: Error: cannot find module foo"
    )


async def test_an_error_in_the_callers_own_block_comes_out_unwrapped() -> None:
    with pytest.raises(KeyError, match="mine"):
        async with Upstreams([toy("mute", "--silent", startup_timeout=30)]):
            raise KeyError("mine")


async def test_a_server_that_hangs_after_starting_is_found_out_by_its_next_timeout_and_restarted(linux_proc: None) -> None:
    back = anyio.Event()

    def watch(status: UpstreamStatus) -> None:
        if status.state == "ready" and status.attempts >= 2:
            back.set()

    async with Upstreams([toy("toy", timeout=1)], on_status=watch, backoff=FAST) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            frozen = upstreams.status("toy").pid
            with pytest.raises(UpstreamTimeout, match="tool 'freeze' timed out: no answer within 1s"):
                await upstreams.call("toy", "freeze")
            # The timeout triggers a tools/list probe; it times out too, so the server is restarted.
            await back.wait()
            result = await upstreams.call("toy", "echo", {"text": "thawed"})
    assert result.content[0].text == "thawed"
    assert frozen is not None
    await wait_gone(frozen)


async def test_the_exit_safety_net_kills_every_server_process_group_still_running(linux_proc: None) -> None:
    # What atexit runs when the process exits without closing Upstreams (e.g. sys.exit on SIGTERM).
    async with Upstreams([toy("toy", "--grandchild")], backoff=Backoff(initial=30)) as upstreams:
        with anyio.fail_after(START):
            await upstreams.wait_started()
            pids = (await upstreams.call("toy", "whoami")).structured_content
            assert pids is not None
            assert kill_all_process_groups() >= 1
            await wait_gone(pids["pid"], pids["grandchild"])
