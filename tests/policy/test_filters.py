"""search_tools' 'servers' and 'categories' are hard filters; a name it does not know is refused
with the names it does know (only those the caller may see)."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from votr_mcp.catalog import load_catalog
from votr_mcp.catalog.embedded import default_registry_path
from votr_mcp.policy import Governance
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex


@pytest.fixture(scope="module")
def hub() -> Hub:
    catalog = load_catalog(default_registry_path()).catalog
    hub = Hub(LiveIndex(catalog, Retriever.build(catalog)), categories={"git": ["code"], "filesystem": ["code", "files"]},
              governance=Governance(data={"rules": [{"deny": {"servers": "memory"}}]}))
    hub.ready.set()
    return hub


async def servers_of(hub: Hub, query: str = "show the git log of the repository, then read a file", **filters: object) -> set[str]:
    answer = await hub.search(query, max_results=10, **filters)  # type: ignore[arg-type]
    return {t["server"] for t in answer.structured["tools"]}


@pytest.mark.anyio
async def test_only_the_servers_and_categories_asked_for_are_searched(hub: Hub) -> None:
    assert await servers_of(hub) >= {"filesystem", "git"}  # unfiltered, both answer this request
    assert await servers_of(hub, "what time is it in Tokyo", servers=["time"]) == {"time"}
    assert await servers_of(hub, servers=["file*"]) == {"filesystem"}
    assert await servers_of(hub, categories=["files"]) == {"filesystem"}
    assert await servers_of(hub, categories=["code"], servers=["git"]) == {"git"}


@pytest.mark.anyio
async def test_an_unknown_server_or_category_is_refused_naming_the_known_ones_the_caller_may_see(hub: Hub) -> None:
    with pytest.raises(ToolError, match="names no server") as unknown:
        await hub.search("remember this", servers=["memory"])
    assert "filesystem" in str(unknown.value) and "memory, " not in str(unknown.value) and "'memory'." in str(unknown.value)
    with pytest.raises(ToolError, match="Known categories: code, files"):
        await hub.search("x", categories=["music"])
    with pytest.raises(ToolError, match="must be a list of names"):
        await hub.search("x", servers=[3])
