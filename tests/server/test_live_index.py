"""The live index: a rebuild runs beside searches and swaps in whole; updates never lose each other.

In process, with R1's real (lexical) Retriever and the SDK's in-memory client; the rebuild is
held at a gate so the test controls exactly when the swap happens.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client

from votr_mcp.catalog import Catalog, load_catalog, tool_from_mapping
from votr_mcp.server import Hub, LiveIndex, build_server
from votr_mcp.server.runtime import build_searcher, reindex

pytestmark = pytest.mark.anyio

CATALOG = Path(__file__).parent / "catalog.json"


def rocket_tool(server: str = "space") -> object:
    return tool_from_mapping({"server": server, "name": "launch_rocket", "description": "Launch the rocket after a countdown.",
                              "input_schema": {"type": "object", "properties": {"seconds": {"type": "integer"}}}})


def names(result: object) -> list[str]:
    return [tool["name"] for tool in result.structured_content["tools"]]  # type: ignore[attr-defined]


async def test_searches_keep_answering_from_the_old_index_until_the_new_one_swaps_in() -> None:
    catalog = load_catalog(CATALOG).catalog
    gate, entered = threading.Event(), threading.Event()

    def gated_reindex(searcher: object, new: Catalog) -> object:
        entered.set()
        gate.wait(30)  # the rebuild is "slow" until the test opens the gate
        return reindex(searcher, new)

    index = LiveIndex(catalog, build_searcher(catalog), reindex=gated_reindex)
    hub = Hub(index)
    hub.ready.set()
    with anyio.fail_after(30):
        async with Client(build_server(hub)) as client, anyio.create_task_group() as tg:
            tg.start_soon(index.rebuild, Catalog([*catalog, rocket_tool()]))
            await anyio.to_thread.run_sync(entered.wait, 30)
            during = await client.call_tool("search_tools", {"query": "launch the rocket countdown"})
            version_during = index.current.version
            gate.set()
        after = None
        async with Client(build_server(hub)) as client:
            after = await client.call_tool("search_tools", {"query": "launch the rocket countdown"})
    assert version_during == 0 and "space__launch_rocket" not in names(during)
    assert index.current.version == 1 and names(after)[0] == "space__launch_rocket"


async def test_concurrent_server_updates_are_applied_one_after_the_other_and_none_is_lost() -> None:
    catalog = load_catalog(CATALOG).catalog
    index = LiveIndex(catalog, build_searcher(catalog), reindex=reindex)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(index.replace_server, "space", [rocket_tool("space")])
            tg.start_soon(index.replace_server, "moon", [rocket_tool("moon")])
            tg.start_soon(index.replace_server, "weather", [])
    servers = set(index.current.catalog.servers)
    assert {"space", "moon"} <= servers and "weather" not in servers
    assert index.current.version == 3
    assert index.current.by_name["moon__launch_rocket"].server == "moon"


async def test_an_index_emptied_by_its_upstreams_abstains_instead_of_failing() -> None:
    catalog = load_catalog(CATALOG).catalog
    index = LiveIndex(catalog, build_searcher(catalog), reindex=reindex)
    hub = Hub(index)
    hub.ready.set()
    await index.rebuild(Catalog([]))
    answer = await hub.search("weather in Oslo")
    assert answer.structured["tools"] == [] and answer.structured["abstained"] is True
    assert "no tools are indexed" in answer.text


async def test_a_server_update_patches_the_changed_rows_first_then_rebuilds_behind_them() -> None:
    from votr_mcp.server.runtime import patch

    catalog = load_catalog(CATALOG).catalog
    seen: list[int] = []
    index = LiveIndex(catalog, build_searcher(catalog), reindex=reindex, patch=patch)
    index.on_swap(lambda snap: seen.append(len(snap.catalog)))
    weather = [t for t in catalog if t.server == "weather"]
    with anyio.fail_after(30):
        await index.replace_server("weather", [*weather, rocket_tool("weather")])
    hub = Hub(index)
    hub.ready.set()
    answer = await hub.search("launch the rocket after a countdown")
    assert seen == [11, 11] and index.current.version == 2  # the patch, then the full rebuild
    assert answer.structured["tools"][0]["name"] == "weather__launch_rocket"
