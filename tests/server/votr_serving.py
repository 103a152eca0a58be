"""Helpers: run the real ``votr-mcp serve`` in a subprocess and connect a real client over each transport."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).parent
CATALOG = HERE / "catalog.json"
SERVE = [sys.executable, "-m", "votr_mcp.cli", "serve"]
TRANSPORTS = ("stdio", "sse", "http")
_LISTENING = re.compile(r"serving .* at (http://\S+)")


def serve_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    env.update(extra or {})
    return env


@asynccontextmanager
async def http_server(transport: str, args: Sequence[str], env: dict[str, str] | None = None) -> AsyncIterator[tuple[str, list[str]]]:
    """Start ``votr-mcp serve --transport sse|http --port 0``; yield (URL from its log, its stderr lines)."""
    command = [*SERVE, "--transport", transport, "--port", "0", *args]
    lines: list[str] = []
    process: Process = await anyio.open_process(command, env=serve_env(env), stdin=None, stdout=None)
    url = anyio.Event()
    found: dict[str, str] = {}

    async def read_stderr() -> None:
        assert process.stderr is not None
        buffered = ""
        async for chunk in process.stderr:
            buffered += chunk.decode(errors="replace")
            *complete, buffered = buffered.split("\n")
            for line in complete:
                lines.append(line)
                match = _LISTENING.search(line)
                if match and not url.is_set():
                    found["url"] = match.group(1)
                    url.set()
        url.set()  # stderr closed: the process ended before (or after) listening

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stderr)
            with anyio.fail_after(60):
                await url.wait()
            if "url" not in found:
                raise AssertionError("votr-mcp serve exited before listening:\n" + "\n".join(lines))
            yield found["url"], lines
            tg.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
        await process.aclose()


@asynccontextmanager
async def votr_client(transport: str, *args: str, env: dict[str, str] | None = None, **client_options: Any) -> AsyncIterator[Client]:
    """A Python SDK client connected to a fresh ``votr-mcp serve *args`` over ``transport``."""
    if transport == "stdio":
        params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], env=serve_env(env))
        async with Client(params, **client_options) as client:
            yield client
        return
    async with http_server(transport, args, env) as (url, _lines):
        target: Any = url if transport == "http" else sse_client(url)
        async with Client(target, **client_options) as client:
            yield client
