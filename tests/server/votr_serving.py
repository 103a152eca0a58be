"""Helpers: run the real ``votr-mcp serve`` in a subprocess and connect a real client over each transport."""

from __future__ import annotations

import os
import re
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).parent
CATALOG = HERE / "catalog.json"
SERVE = [sys.executable, "-m", "votr_mcp.cli", "serve"]
TRANSPORTS = ("stdio", "sse", "http")
_LISTENING = re.compile(r"serving .* at (http://\S+)")


def serve_env(extra: dict[str, str] | None = None, data_home: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    if data_home is not None:
        # A fresh user data dir per server: the default registry store never leaks between tests.
        env["XDG_DATA_HOME"] = data_home
    env.update(extra or {})
    return env


@asynccontextmanager
async def http_server(transport: str, args: Sequence[str], env: dict[str, str] | None = None) -> AsyncIterator[tuple[str, list[str]]]:
    """Start ``votr-mcp serve --transport sse|http --port 0 *args``; yield (its URL, its stderr lines).

    The cleanup survives the caller's deadline: in a cancelled scope the wait after SIGTERM would
    raise at once, and a server busy on the CPU would never get its SIGKILL and outlive the test.
    So the server leads its own process group, the cleanup is shielded, and the group (upstream
    servers too) is killed after 10 s."""
    lines: list[str] = []
    home = tempfile.TemporaryDirectory(prefix="votr-test-data-")
    process = await anyio.open_process([*SERVE, "--transport", transport, "--port", "0", *args], env=serve_env(env, home.name),
                                       stdin=None, stdout=None, start_new_session=True)
    found: dict[str, str] = {}
    listening = anyio.Event()

    async def read_stderr() -> None:
        assert process.stderr is not None
        buffered = ""
        async for chunk in process.stderr:
            buffered += chunk.decode(errors="replace")
            *complete, buffered = buffered.split("\n")
            for line in complete:
                lines.append(line)
                match = _LISTENING.search(line)
                if match and not listening.is_set():
                    found["url"] = match.group(1)
                    listening.set()
        listening.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stderr)
            with anyio.fail_after(60):
                await listening.wait()
            if "url" not in found:
                raise RuntimeError("votr-mcp serve exited before listening:\n" + "\n".join(lines[-30:]))
            try:
                yield found["url"], lines
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(10):
                    await process.wait()
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # what is left of the group: a stuck server, its upstreams
            with anyio.move_on_after(5):
                await process.wait()
            await process.aclose()
        home.cleanup()


@asynccontextmanager
async def votr_client(transport: str, *args: str, env: dict[str, str] | None = None, **client_options: Any) -> AsyncIterator[Client]:
    """A Python SDK client connected to a fresh ``votr-mcp serve *args`` over ``transport``."""
    if transport == "stdio":
        with tempfile.TemporaryDirectory(prefix="votr-test-data-") as home:
            params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], env=serve_env(env, home))
            async with Client(params, **client_options) as client:
                yield client
        return
    async with http_server(transport, args, env) as (url, _lines):
        target: Any = url if transport == "http" else sse_client(url)
        async with Client(target, **client_options) as client:
            yield client


ROOT = HERE.parent.parent
NODE_BIN = ROOT / "tests" / "servers" / "node_modules" / ".bin"
PY_BIN = ROOT / "tests" / "servers" / ".venv" / "bin"


def real_servers_config(tmp: Path) -> dict[str, Any]:
    """An ``mcpServers`` config of the five real reference servers, each confined to ``tmp``
    (C's shared table in tests/upstream_servers.py: filesystem rooted at a folder holding
    hello.txt, git on a one-commit repository, time in UTC). Skips the calling test when the
    servers are not installed (fails in CI, which must install them)."""
    from upstream_servers import CORE, servers_config

    return servers_config(tmp, CORE)


INSPECTOR = ROOT / "tests" / "servers" / "node_modules" / ".bin" / "mcp-inspector"


async def inspector(target: Sequence[str], *cli_args: str) -> dict[str, Any]:
    """Run the MCP Inspector CLI (the TypeScript SDK's client) once against ``target`` (a URL,
    or a command after ``--``) and return its JSON answer."""
    import json

    from upstream_servers import require_servers

    require_servers((), inspector=True)
    if target and target[0].startswith("http"):
        command = [str(INSPECTOR), "--cli", target[0], *cli_args]
    else:
        command = [str(INSPECTOR), "--cli", *cli_args, "--", *target]
    done = await anyio.run_process(command, env=serve_env(), check=False)
    out = done.stdout.decode()
    try:
        return json.loads(out)
    except ValueError:
        raise AssertionError(f"inspector exited {done.returncode}; stdout:\n{out}\nstderr:\n{done.stderr.decode()[-3000:]}") from None


@asynccontextmanager
async def inspector_target(transport: str, *args: str) -> AsyncIterator[list[str]]:
    """What to hand the Inspector for ``votr-mcp serve *args`` over ``transport``: a command
    (stdio; the Inspector starts it) or the URL of a server started here."""
    if transport == "stdio":
        yield [*SERVE, *args]
        return
    async with http_server(transport, args) as (url, _lines):
        yield [url]
