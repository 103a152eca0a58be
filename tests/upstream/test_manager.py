"""Upstreams bookkeeping that needs no server process: empty and disabled configs, names, layering."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest

from votr_mcp.errors import UpstreamError
from votr_mcp.upstream import Upstreams, harvest
from votr_mcp.upstream.config import parse_upstreams

pytestmark = pytest.mark.anyio


async def test_no_upstreams_start_and_stop_at_once() -> None:
    with anyio.fail_after(5):
        async with Upstreams([]) as upstreams:
            assert await upstreams.wait_started() == {}
            assert upstreams.tools() == ()
        result = await harvest([])
    assert (result.tools, dict(result.statuses), result.failed) == ((), {}, ())


async def test_a_disabled_upstream_is_never_started_and_says_how_to_enable_it() -> None:
    config = parse_upstreams({"mcpServers": {"off": {"command": "votr-no-such-server-binary", "disabled": True}}})
    with anyio.fail_after(5):
        async with Upstreams(config) as upstreams:
            statuses = await upstreams.wait_started()
            with pytest.raises(UpstreamError, match=r"upstream 'off' is disabled in the config; remove \"disabled\""):
                await upstreams.call("off", "anything", {})
    assert (statuses["off"].state, statuses["off"].attempts, statuses["off"].pid) == ("disabled", 0, None)
    assert not upstreams.available("off")


def test_two_upstreams_may_not_share_a_name() -> None:
    config = parse_upstreams({"mcpServers": {"a": {"command": "x"}}})
    with pytest.raises(UpstreamError, match="upstream names must be unique"):
        Upstreams([*config.servers, *config.servers])


def test_the_upstream_layer_imports_nothing_above_it() -> None:
    # Imports flow errors -> config -> catalog -> upstream -> server -> cli; never back.
    code = "import sys, votr_mcp.upstream; print(sorted(m for m in sys.modules if m.startswith('votr_mcp.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "votr_mcp.upstream" in loaded
    for above in ("votr_mcp.server", "votr_mcp.cli", "votr_mcp.retrieval", "votr_mcp.index", "votr_mcp.store", "votr_mcp.session"):
        assert f"'{above}" not in loaded


async def test_an_upstream_that_never_starts_is_given_up_after_a_bounded_number_of_starts() -> None:
    from votr_mcp.upstream import Backoff

    config = parse_upstreams({"mcpServers": {"broken": {"command": "votr-no-such-server-binary"}}})
    backoff = Backoff(initial=0.01, maximum=0.02, jitter=0.0, give_up_after=3)
    with anyio.fail_after(10):
        async with Upstreams(config, backoff=backoff) as upstreams:
            await upstreams.wait_started()
            while (status := upstreams.statuses()["broken"]).state != "failed":
                await anyio.sleep(0.01)
            await anyio.sleep(0.2)  # no further attempt after giving up
            assert upstreams.statuses()["broken"].attempts == status.attempts == 3
            with pytest.raises(UpstreamError, match="given up after 3 failed starts"):
                await upstreams.call("broken", "anything", {})
