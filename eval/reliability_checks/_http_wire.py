"""What the HTTP checks share: a served ``votr-mcp``, JSON-RPC bodies of both protocol eras, raw requests.

Two eras reach ``/mcp``: the handshake era (``initialize``, then an ``mcp-session-id`` header on
every request) and the 2026-07-28 era (no handshake; every request carries its envelope in
``params._meta`` and the ``MCP-Protocol-Version``/``Mcp-Method``/``Mcp-Name`` headers).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "server"))  # the runner puts tests/ on sys.path, not tests/server

from votr_serving import CATALOG, NODE_BIN, http_server

__all__ = [
    "CATALOG", "HANDSHAKE", "MODERN", "NODE_BIN", "POST_HEADERS", "http_server", "initialize", "modern",
    "percentile", "raw_status", "serve_catalog", "upstreams_config",
]

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}




def serve_catalog(*extra: str) -> list[str]:
    """``serve`` arguments for the test catalog: no upstreams, no model, no store, up in about a second."""
    return ["--catalog", str(CATALOG), "--no-dense", "--store", "none", *extra]


def initialize(request_id: int | str = 1) -> dict[str, Any]:
    """A handshake-era ``initialize`` request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "reliability", "version": "0"}}}


def modern(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request (body, headers): the envelope in ``_meta`` and the matching headers."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    headers = {**POST_HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = str((params or {}).get("name", ""))
    return body, headers


def upstreams_config(folder: Path) -> Path:
    """The session tests' upstreams (tests/session/test_session_e2e.py): server-everything and
    server-memory, written as an ``mcpServers`` file in ``folder``."""
    for name in ("mcp-server-everything", "mcp-server-memory"):
        if not (NODE_BIN / name).exists():
            raise FileNotFoundError(f"{NODE_BIN / name} is missing; run scripts/install-test-servers.sh")
    config = {"mcpServers": {
        "everything": {"command": str(NODE_BIN / "mcp-server-everything"), "args": ["stdio"]},
        "memory": {"command": str(NODE_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}},
    }}
    path = folder / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def raw_status(url: str, head: str, body: bytes = b"", timeout: float = 5.0) -> int | None:
    """Send ``head`` (request line and headers, CRLF-separated, no blank line) and ``body`` over a
    plain socket, for requests httpx will not make (no Host at all, two Host headers); return
    the status code, or None when the server closed or said nothing in ``timeout`` seconds."""
    hostport = url.split("//", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    with anyio.move_on_after(timeout):
        async with await anyio.connect_tcp(host.strip("[]"), int(port)) as stream:
            await stream.send(head.encode("latin-1") + b"\r\n\r\n" + body)
            got = b""
            while b"\r\n" not in got:
                try:
                    got += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
            parts = got.split(b" ", 2)
            if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
                return int(parts[1])
    return None


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]
