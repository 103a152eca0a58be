"""Remote upstreams: the toy server over streamable HTTP and legacy SSE, as a separate process."""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator

import anyio
import anyio.abc
import pytest
from toy_upstreams import FAST, TOY

from votr_mcp.errors import UpstreamError, UpstreamTimeout
from votr_mcp.upstream import Upstreams, UpstreamStatus
from votr_mcp.upstream.config import parse_upstreams

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each test starts real server processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def http_toy() -> AsyncIterator[tuple[int, anyio.abc.Process]]:
    port = free_port()
    process = await anyio.open_process([sys.executable, str(TOY), "--http", str(port)], stdout=None, stderr=None)
    try:
        yield port, process
    finally:
        if process.returncode is None:
            process.terminate()
        with anyio.fail_after(10):
            await process.wait()


async def test_streamable_http_and_sse_upstreams_harvest_and_call_with_their_headers(http_toy: tuple[int, anyio.abc.Process]) -> None:
    port, _ = http_toy
    config = parse_upstreams({"mcpServers": {
        "viahttp": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Votr-Test": "http"}},
        "viasse": {"url": f"http://127.0.0.1:{port}/sse", "headers": {"X-Votr-Test": "sse"}},
    }})
    ready: dict[str, anyio.Event] = {"viahttp": anyio.Event(), "viasse": anyio.Event()}

    def on_status(status: UpstreamStatus) -> None:
        if status.available:
            ready[status.name].set()

    # The server may still be starting: the first attempts fail and are retried.
    async with Upstreams(config, on_status=on_status, backoff=FAST) as upstreams:
        with anyio.fail_after(60):
            for event in ready.values():
                await event.wait()
            results = {name: await upstreams.call(name, "echo", {"text": f"over {name}"}) for name in ready}
            headers = {name: await upstreams.call(name, "header", {"name": "x-votr-test"}) for name in ready}
            # A deadline cancels the request upstream over both HTTP transports too.
            for name in ready:
                with pytest.raises(UpstreamTimeout):
                    await upstreams.call(name, "wait_forever", timeout=0.5)
            counted = await upstreams.call("viahttp", "cancellations", {"at_least": 2})
        assert {name: upstreams.status(name).pid for name in ready} == {"viahttp": None, "viasse": None}
        assert len(upstreams.tools("viahttp")) == len(upstreams.tools("viasse")) > 6
    assert {name: r.content[0].text for name, r in results.items()} == {"viahttp": "over viahttp", "viasse": "over viasse"}
    assert headers["viahttp"].structured_content == {"value": "http"}
    assert headers["viasse"].structured_content == {"value": "sse"}
    assert counted.content[0].text == "2"


async def test_a_remote_upstream_that_is_not_listening_is_reported_and_retried() -> None:
    port = free_port()
    config = parse_upstreams({"mcpServers": {"nobody": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}})
    async with Upstreams(config, backoff=FAST) as upstreams:
        with anyio.fail_after(30):
            statuses = await upstreams.wait_started()
        assert statuses["nobody"].state == "retrying"
        assert statuses["nobody"].error is not None and statuses["nobody"].error.startswith(f"cannot reach http://127.0.0.1:{port}/mcp")
        with pytest.raises(UpstreamError, match="upstream 'nobody' is not connected .cannot reach"):
            await upstreams.call("nobody", "echo", {})
