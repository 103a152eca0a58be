"""When nothing connected serves a request, search names a known server that would, with its entry."""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
import pytest

from votr_mcp.catalog import Catalog, load_catalog
from votr_mcp.catalog.embedded import default_registry_path
from votr_mcp.policy import Governance
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex
from votr_mcp.server.runtime import registry_setup_hints
from votr_mcp.server.suggest import Suggester

pytestmark = pytest.mark.anyio


CONNECTED = ("time", "calculator", "memory", "sqlite")


class Connected:
    def configured(self, server: str) -> bool:
        return server in CONNECTED

    def unavailable(self, server: str) -> str | None:
        return None

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        raise AssertionError("no call expected")


async def test_a_request_only_an_unconnected_known_server_serves_names_it_with_its_mcpservers_entry() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import MiniLMEmbedder

    registry = load_catalog(default_registry_path()).catalog
    connected = Catalog(t for t in registry if t.server in CONNECTED)
    hub = Hub(LiveIndex(connected, Retriever.build(connected, embedder=MiniLMEmbedder())), Connected(),
              suggester=Suggester(registry, registry_setup_hints(default_registry_path())))
    hub.ready.set()
    with anyio.fail_after(120):
        answer = await hub.search("stage my changes and commit them")
        hub.governance = Governance(data={"rules": [{"deny": {"servers": "git"}}]})
        governed = await hub.search("stage my changes and commit them")
        time = await hub.search("what time is it in Tokyo")
    suggested = answer.structured["suggestions"][0]
    assert suggested["server"] == "git" and suggested["mcpServers"]["git"]["command"] == "uvx"
    assert "Not connected: the MCP server 'git'" in answer.text
    assert "'git'" not in governed.text and all(s["server"] != "git" for s in governed.structured.get("suggestions", []))
    assert "suggestions" not in time.structured  # a request the connected server serves suggests nothing
