"""Upstream faults behind a real ``votr-mcp serve --config``: a killed upstream, a hung call, a hung
server, a client's cancellation, and a 50 MB result, each measured through a real SDK client.

Upstreams are ``_fault_server.py``; with ``--record`` it logs each call it starts and each
``notifications/cancelled`` it reads off the wire, so what reached the upstream is counted there.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from . import Finding
from ._fault_server import pattern
from ._proxy import (
    FAULT_SERVER,
    call,
    fault_entry,
    leftover,
    percentile,
    proxy,
    text,
    wait_ready,
)

CLEAR_ERROR_MS = 1000.0  # a call to a dead upstream must say so within this
RESTART_S = 10.0  # backoff starts at 1 s (+-20%); a Python upstream starts in about a second
TIMEOUT_S = 1.0  # the hung upstream's "timeout" in its config entry
TIMEOUT_SLACK_S = 2.5  # votr-mcp allows a 2 s write grace on top of the timeout (upstream/_connection.py)


def records(path: Path, kind: str) -> list[str]:
    """Request ids of the ``kind`` lines (``call`` or ``cancelled``) the fault server wrote."""
    if not path.exists():
        return []
    return [parts[1] for line in path.read_text(encoding="utf-8").splitlines() if (parts := line.split())[0] == kind]


async def wait_records(path: Path, kind: str, count: int, within: float) -> bool:
    """Whether ``count`` ``kind`` lines appeared within ``within`` seconds (polled: a file is no event)."""
    with anyio.move_on_after(within):
        while len(records(path, kind)) < count:
            await anyio.sleep(0.01)
        return True
    return False


def clear(message: str, server: str) -> bool:
    """A clear error names the server and says what happened or what to do."""
    lowered = message.lower()
    return server in message and any(w in lowered for w in ("went away", "not connected", "restart", "retry", "timed out"))


# -- (a) kill -9 -------------------------------------------------------------------------------


async def killed() -> list[Finding]:
    nonces = itertools.count()
    with tempfile.TemporaryDirectory(prefix="votr-rel-") as tmp:
        record = Path(tmp) / "victim.log"
        servers = {"victim": fault_entry("victim", "--record", str(record)), "bystander": fault_entry("bystander")}
        async with proxy(servers) as (client, pids):
            with anyio.fail_after(60):
                await wait_ready(client, servers, pids)
                victim = int((await call(client, "victim__whoami", {"nonce": "pid"})).structured_content["pid"])
                answered: list[tuple[types.CallToolResult, float]] = []

                async def in_flight() -> None:
                    result = await call(client, "victim__sleep", {"seconds": 30})
                    answered.append((result, time.monotonic()))

                async with anyio.create_task_group() as group:
                    group.start_soon(in_flight)
                    calls_before = len(records(record, "call")) + 1
                    if not await wait_records(record, "call", calls_before, 10):
                        raise AssertionError("the sleep call never reached the victim")
                    os.kill(victim, signal.SIGKILL)
                    killed_at = time.monotonic()
                sleep_result, answered_at = answered[0]
                in_flight_ms = (answered_at - killed_at) * 1000
                began = time.monotonic()
                down = await call(client, "victim__whoami", {"nonce": f"down-{next(nonces)}"})
                down_ms = (time.monotonic() - began) * 1000
                bystander = await call(client, "bystander__whoami", {"nonce": "meanwhile"})
                while True:
                    again = await call(client, "victim__whoami", {"nonce": f"again-{next(nonces)}"})
                    if not again.is_error:
                        break
                    await anyio.sleep(0.05)
                restart_s = time.monotonic() - killed_at
                new_pid = int(again.structured_content["pid"])
                pids.add(new_pid)
        left = leftover(pids)
    in_flight_text, down_text = text(sleep_result), text(down)
    return [
        Finding(f"a call in flight when its upstream is killed (-9) fails with a clear error within {CLEAR_ERROR_MS:.0f} ms",
                f"error {'yes' if sleep_result.is_error else 'no'} after {in_flight_ms:.0f} ms: \"{in_flight_text[:140]}\"",
                sleep_result.is_error and in_flight_ms <= CLEAR_ERROR_MS and clear(in_flight_text, "victim")),
        Finding(f"a call to the killed upstream while it is down fails with a clear error within {CLEAR_ERROR_MS:.0f} ms",
                f"error {'yes' if down.is_error else 'no'} after {down_ms:.0f} ms: \"{down_text[:140]}\"",
                down.is_error and down_ms <= CLEAR_ERROR_MS and clear(down_text, "victim")),
        Finding(f"the killed upstream is restarted and callable again within {RESTART_S:.0f} s; the other one never stops",
                f"callable again {restart_s:.1f} s after the kill (new pid {'yes' if new_pid != victim else 'no'}); "
                f"bystander answered meanwhile: {'yes' if not bystander.is_error else 'no'}",
                restart_s <= RESTART_S and new_pid != victim and not bystander.is_error),
        Finding("every upstream process is stopped when votr-mcp exits (after a kill)", f"{left} of {len(pids)} left running", left == 0),
    ]


# -- (b) hung call, hung server --------------------------------------------------------------------


async def hung() -> list[Finding]:
    with tempfile.TemporaryDirectory(prefix="votr-rel-") as tmp:
        record = Path(tmp) / "hung.log"
        servers = {"hung": fault_entry("hung", "--record", str(record), timeout=TIMEOUT_S), "other": fault_entry("other")}
        async with proxy(servers) as (client, pids):
            with anyio.fail_after(60):
                await wait_ready(client, servers, pids)
                meanwhile: dict[str, list[float]] = {"other": [], "hung": []}
                failed: list[str] = []
                done = anyio.Event()

                async def keep_calling(server: str) -> None:
                    for i in itertools.count():
                        began = time.monotonic()
                        result = await call(client, f"{server}__whoami", {"nonce": f"meanwhile-{i}"})
                        meanwhile[server].append(time.monotonic() - began)
                        if result.is_error:
                            failed.append(f"{server}: {text(result)[:100]}")
                        if done.is_set():
                            return
                        await anyio.sleep(0.05)

                async with anyio.create_task_group() as group:
                    group.start_soon(keep_calling, "other")
                    group.start_soon(keep_calling, "hung")  # the same server's other tools are not hung
                    began = time.monotonic()
                    stuck = await call(client, "hung__sleep", {})
                    stuck_s = time.monotonic() - began
                    done.set()
                sleep_ids = [line.split()[1] for line in record.read_text(encoding="utf-8").splitlines() if line.endswith(" sleep")]
                await wait_records(record, "cancelled", 1, 3)
                cancelled_ids = records(record, "cancelled")
                cancelled_upstream = bool(set(sleep_ids) & set(cancelled_ids))

                # Now the whole server hangs: calls time out, and the server must be replaced.
                before = int((await call(client, "hung__whoami", {"nonce": "before-freeze"})).structured_content["pid"])
                began = time.monotonic()
                frozen = await call(client, "hung__freeze", {})
                frozen_s = time.monotonic() - began
                for i in itertools.count():
                    again = await call(client, "hung__whoami", {"nonce": f"after-freeze-{i}"})
                    if not again.is_error and int(again.structured_content["pid"]) != before:
                        break
                    await anyio.sleep(0.1)
                replaced_s = time.monotonic() - began
                pids.add(int(again.structured_content["pid"]))
        left = leftover(pids | {before})
    limit = TIMEOUT_S + TIMEOUT_SLACK_S
    others = meanwhile["other"]
    return [
        Finding(f"a call that never returns fails after its upstream's timeout ({TIMEOUT_S:g} s, at most {limit:g} s) with a clear error",
                f"error {'yes' if stuck.is_error else 'no'} after {stuck_s:.2f} s: \"{text(stuck)[:120]}\"",
                stuck.is_error and TIMEOUT_S <= stuck_s <= limit and clear(text(stuck), "hung")),
        Finding("the timed-out call is cancelled upstream (notifications/cancelled reaches the server)",
                f"{'yes' if cancelled_upstream else 'no'}: cancellations recorded for requests {cancelled_ids}, "
                f"the sleep call was request {sleep_ids}", cancelled_upstream),
        Finding("while one call hangs, the other upstream and the hung server's other tools keep answering",
                f"{len(others)} calls to the other upstream (p50 {percentile(others, 0.5) * 1000:.0f} ms, max "
                f"{max(others, default=0) * 1000:.0f} ms), {len(meanwhile['hung'])} to the hung server's whoami; "
                f"{len(failed)} failed{': ' + failed[0] if failed else ''}",
                len(others) >= 5 and len(meanwhile["hung"]) >= 5 and not failed),
        Finding(f"a server that hangs as a whole: the call fails after about the timeout, and the server is replaced within {RESTART_S:.0f} s",
                f"error {'yes' if frozen.is_error else 'no'} after {frozen_s:.2f} s; a new process answered "
                f"{replaced_s:.1f} s after the call began", frozen.is_error and frozen_s <= limit and replaced_s <= RESTART_S),
        Finding("every upstream process is stopped when votr-mcp exits (after a hang)", f"{left} of {len(pids | {before})} left running",
                left == 0),
    ]


# -- (c) a client's cancellation --------------------------------------------------------------------

CANCELS = 10


async def cancels(transport: str) -> Finding:
    with tempfile.TemporaryDirectory(prefix="votr-rel-") as tmp:
        record = Path(tmp) / "slow.log"
        servers = {"slow": fault_entry("slow", "--record", str(record))}
        async with proxy(servers, transport) as (client, pids):
            with anyio.fail_after(60):
                await wait_ready(client, servers, pids)
                latencies: list[float] = []
                for i in range(CANCELS):
                    async with anyio.create_task_group() as group:
                        # Distinct arguments each time: ten identical calls would trip the loop guard.
                        group.start_soon(call, client, "slow__sleep", {"seconds": 1000 + i})
                        if not await wait_records(record, "call", len(records(record, "call")) + 1, 10):
                            raise AssertionError(f"call {i} never reached the upstream")
                        cancelled_before = len(records(record, "cancelled"))
                        group.cancel_scope.cancel()
                        cancelled_at = time.monotonic()
                    if await wait_records(record, "cancelled", cancelled_before + 1, 3):
                        latencies.append(time.monotonic() - cancelled_at)
                sleeps = [line.split()[1] for line in record.read_text(encoding="utf-8").splitlines() if line.endswith(" sleep")]
                matched = len(set(sleeps) & set(records(record, "cancelled")))
        left = leftover(pids)
    return Finding(f"a client's cancellation of an in-flight call over {transport} reaches the upstream as notifications/cancelled "
                   f"for that request",
                   f"{matched} of {CANCELS} forwarded (p50 {percentile(latencies, 0.5) * 1000:.0f} ms, max "
                   f"{max(latencies, default=0) * 1000:.0f} ms after the client cancelled); {left} upstream processes left",
                   matched == CANCELS and left == 0)


# -- (d) a 50 MB result -----------------------------------------------------------------------------

BIG = 50_000_000


async def large(transport: str) -> Finding:
    async with proxy({"big": fault_entry("big", timeout=120)}, transport) as (client, pids):
        with anyio.fail_after(120):
            await wait_ready(client, ["big"], pids)
            began = time.monotonic()
            result = await call(client, "big__blob", {"size": BIG})
            took = time.monotonic() - began
    left = leftover(pids)
    got = text(result)
    intact = not result.is_error and got == pattern(BIG)
    return Finding(f"a {BIG // 1_000_000} MB tool result comes through call_tool over {transport} intact",
                   f"{len(got):,} of {BIG:,} characters, {'intact' if intact else 'NOT intact'}, in {took:.1f} s"
                   f"{'; error: ' + got[:120] if result.is_error else ''}; {left} upstream processes left",
                   intact and left == 0)


async def direct() -> Finding:
    """The same result from the upstream straight to the SDK's stdio client, without votr-mcp: most of
    the stdio figure is the client's own reading (it re-joins its line buffer with every 64 KB chunk)."""
    params = StdioServerParameters(command=sys.executable, args=[str(FAULT_SERVER), "--name", "direct"])
    with anyio.fail_after(120):
        async with Client(params) as client:
            began = time.monotonic()
            result = await client.call_tool("blob", {"size": BIG})
            took = time.monotonic() - began
    got = text(result)
    intact = not result.is_error and got == pattern(BIG)
    return Finding(f"baseline: the same {BIG // 1_000_000} MB straight from the upstream to the SDK's stdio client, no votr-mcp",
                   f"{len(got):,} characters, {'intact' if intact else 'NOT intact'}, in {took:.1f} s", intact)


def check_killed() -> list[Finding]:
    return anyio.run(killed)


def check_hung() -> list[Finding]:
    return anyio.run(hung)


def check_cancel_stdio() -> Finding:
    return anyio.run(cancels, "stdio")


def check_cancel_http() -> Finding:
    return anyio.run(cancels, "http")


def check_large_stdio() -> Finding:
    return anyio.run(large, "stdio")


def check_large_http() -> Finding:
    return anyio.run(large, "http")


def check_large_direct() -> Finding:
    return anyio.run(direct)


CHECKS = [check_killed, check_hung, check_cancel_stdio, check_cancel_http, check_large_stdio, check_large_http, check_large_direct]
