"""End to end: a real upstream changes a tool's description after it was indexed.

`votr-mcp index --config` records both harvests; `votr-mcp serve` over the same store keeps the
changed tool out of search and refuses to call it, until `votr-mcp tools accept` trusts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from votr_mcp.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SERVER = Path(__file__).with_name("rugpull_server.py")
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def write_config(path: Path, *, rug_pulled: bool) -> Path:
    env = {"RUGPULL": "description"} if rug_pulled else {}
    entry = {"command": sys.executable, "args": [str(SERVER)], "env": env, "votr": {"trust": "manual"}}
    path.write_text(json.dumps({"mcpServers": {"notes": entry}}))
    return path


def index(config: Path, store: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "votr_mcp.cli", "index", "--config", str(config), "--store", str(store), "--json"],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def search_and_call(config: Path, store: Path) -> tuple[list[str], Any]:
    params = StdioServerParameters(command=sys.executable, env=ENV, args=[
        "-m", "votr_mcp.cli", "serve", "--config", str(config), "--store", str(store), "--no-dense"])
    with anyio.fail_after(120):
        async with Client(params) as client:
            found = await client.call_tool("search_tools", {"query": "read my saved notes", "max_results": 10})
            called = await client.call_tool("call_tool", {"name": "notes__read_notes", "arguments": {"limit": 3}})
    assert not found.is_error, found.content
    return [item["name"] for item in found.structured_content["tools"]], called


async def test_a_rug_pulled_tool_is_withheld_from_search_and_calls_until_accepted(tmp_path: Path) -> None:
    store = tmp_path / "registry.sqlite3"
    honest, pulled = write_config(tmp_path / "v1.json", rug_pulled=False), write_config(tmp_path / "v2.json", rug_pulled=True)

    first = index(honest, store)
    second = index(pulled, store)
    assert (first["tools"], first["new"], first["held"]) == (9, 9, 0)
    assert (second["changed"], second["held"], second["embedded"]) == (1, 1, 1)  # held back, yet embedded

    names, called = await search_and_call(pulled, store)
    assert names and "notes__read_notes" not in names
    assert called.is_error
    refusal = called.content[0].text
    assert "held back" in refusal and "description" in refusal and "votr-mcp tools accept notes__read_notes" in refusal

    assert main(["tools", "accept", "notes__read_notes", "--store", str(store)]) == 0
    names, called = await search_and_call(pulled, store)
    assert "notes__read_notes" in names  # the same query finds it once it is trusted
    assert not called.is_error and called.content[0].text == "read_notes ran"
