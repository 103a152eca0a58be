"""Helpers for the upstream tests: configs that start toy_server.py, and process checks.

Imported by name (pytest puts this folder on sys.path); the name is unique across tests/."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio

from votr_mcp.upstream import Backoff
from votr_mcp.upstream.config import UpstreamConfig, parse_upstreams

TOY = Path(__file__).resolve().parent / "toy_server.py"

# Retry fast so that restart tests finish quickly; the policy itself is tested in test_status.py.
FAST = Backoff(initial=0.05, maximum=0.5, jitter=0.0)


def toy_entry(*flags: str, **votr: Any) -> dict[str, Any]:
    """An mcpServers entry that starts the toy server with ``flags`` and votr settings."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(TOY), *flags]}
    if votr:
        entry["votr"] = votr
    return entry


def toy(name: str = "toy", *flags: str, **votr: Any) -> UpstreamConfig:
    config = parse_upstreams({"mcpServers": {name: toy_entry(*flags, **votr)}})
    assert not config.problems, config.problems
    return config.servers[0]


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of ``pid`` ('R', 'S', 'Z', ...), or None when it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


async def wait_gone(*pids: int, within: float = 10.0) -> None:
    """Wait until every pid is gone or a zombie (dead, only not yet reaped by init).

    Polled: a process's death is not an event this process can wait on unless it is its parent.
    """
    with anyio.fail_after(within):
        while any(process_state(pid) not in (None, "Z", "X") for pid in pids):
            await anyio.sleep(0.05)


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes whose session id is ``sid``: a stdio server and all it started."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members
