"""What the upstream fault checks share: a real ``votr-mcp serve --config`` in front of copies of
``_fault_server.py``, a real SDK client on it, and an account of the upstream processes it left.

    async with proxy({"a": fault_entry("a"), "b": fault_entry("b")}) as (client, seen):
        await wait_ready(client, ["a", "b"])
        result = await call(client, "a__whoami", {"nonce": "1"})
    leftover(seen)  # upstream pids still alive after votr-mcp exited (killed here, and counted)
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "server"))  # the runner puts tests/ on sys.path, not tests/server

from votr_serving import votr_client

__all__ = ["FAULT_SERVER", "alive", "call", "fault_entry", "leftover", "percentile", "proxy", "text", "wait_ready"]

FAULT_SERVER = Path(__file__).with_name("_fault_server.py")


def fault_entry(name: str, *flags: str, env: dict[str, str] | None = None, **votr: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry starting ``_fault_server.py --name name *flags``; ``votr`` goes under "votr"."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(FAULT_SERVER), "--name", name, *flags]}
    if env:
        entry["env"] = env
    if votr:
        entry["votr"] = votr
    return entry


@asynccontextmanager
async def proxy(servers: dict[str, dict[str, Any]], transport: str = "stdio", *serve_args: str,
                env: dict[str, str] | None = None) -> AsyncIterator[tuple[Client, set[int]]]:
    """A client on ``votr-mcp serve --config`` (these servers) ``--no-dense`` with a fresh store.

    Yields the client and a set the caller adds the upstream pids it learns to (``whoami``), so that
    :func:`leftover` can tell whether votr-mcp stopped them all on exit.
    """
    seen: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="votr-rel-") as tmp:
        config = Path(tmp) / "upstreams.json"
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        args = ["--config", str(config), "--no-dense", "--store", str(Path(tmp) / "store.sqlite3"), *serve_args]
        async with votr_client(transport, *args, env=env) as client:
            yield client, seen


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    """``call_tool(name, arguments)`` through votr-mcp."""
    return await client.call_tool("call_tool", {"name": name, "arguments": arguments or {}})


def text(result: types.CallToolResult) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def wait_ready(client: Client, names: Iterable[str], seen: set[int] | None = None, within: float = 45.0) -> float:
    """Seconds until ``<name>__whoami`` answers for every name (each upstream connected and indexed)."""
    began = time.monotonic()
    with anyio.fail_after(within):
        for name in names:
            for attempt in itertools.count():
                # A new nonce each time: identical retries would trip the loop guard, which counts refused calls too.
                result = await call(client, f"{name}__whoami", {"nonce": f"ready-{attempt}"})
                if not result.is_error:
                    if seen is not None:
                        seen.add(int(result.structured_content["pid"]))
                    break
                await anyio.sleep(0.1)
    return time.monotonic() - began


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie waiting for its parent)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False


def leftover(pids: Iterable[int], grace: float = 5.0) -> int:
    """How many of ``pids`` outlived votr-mcp by ``grace`` seconds; those are killed here."""
    pids = set(pids)
    deadline = time.monotonic() + grace
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(left)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank rule; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
