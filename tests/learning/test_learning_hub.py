"""Learning through the server's own path: Hub.search and Hub.call over the embedded registry."""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
import numpy as np
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from votr_mcp.catalog import load_catalog
from votr_mcp.catalog.embedded import default_registry_path
from votr_mcp.errors import UpstreamTimeout
from votr_mcp.learning import Learning
from votr_mcp.learning.learner import REJECT_HALF, nearest_lift, rejected_drop
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex
from votr_mcp.store import Store
from votr_mcp.store.events import EventStore

QUERY = "look at files"


class Upstreams:
    """Every server is up; every call succeeds (the agent is always right here) but of the tools in ``failing``."""

    def __init__(self) -> None:
        self.failing: set[tuple[str, str]] = set()
        self.timing_out: set[tuple[str, str]] = set()

    def configured(self, server: str) -> bool:
        return True

    def unavailable(self, server: str) -> str | None:
        return None

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if (server, tool) in self.timing_out:
            raise UpstreamTimeout(f"{server} did not answer in 1 s")
        if (server, tool) in self.failing:
            return types.CallToolResult(content=[types.TextContent(type="text", text="cannot do that")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


@pytest.fixture(scope="module")
def retriever() -> Retriever:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import MiniLMEmbedder

    catalog = load_catalog(default_registry_path()).catalog
    r = Retriever.build(catalog, embedder=MiniLMEmbedder())
    r.abstain_threshold()
    return r


def hub_of(retriever: Retriever, learning: Learning | None, upstreams: Upstreams | None = None) -> Hub:
    hub = Hub(LiveIndex(retriever.catalog, retriever), upstreams or Upstreams(), learning=learning)
    hub.ready.set()
    return hub


def arguments(hub: Hub, name: str) -> dict[str, Any]:
    """Arguments the tool's schema accepts (the registry's file-system tools take strings)."""
    schema = hub.index.current.by_name[name].input_schema
    return {p: "x" for p in schema.get("required", [])}


async def names(hub: Hub, query: str) -> list[str]:
    answer = await hub.search(query, max_results=5)
    return [t["name"] for t in answer.structured["tools"]]


@pytest.mark.anyio
async def test_a_tool_the_agent_keeps_choosing_below_the_top_comes_first_for_that_request(retriever: Retriever) -> None:
    learning = Learning(seed=0)
    hub = hub_of(retriever, learning)
    with anyio.fail_after(60):
        first = await names(hub, QUERY)
        assert len(first) >= 2, first
        chosen = first[1]
        for _ in range(3):
            await hub.call(chosen, arguments(hub, chosen))
            listed = await names(hub, QUERY)
            if chosen not in listed:
                break
        assert (await names(hub, QUERY))[0] == chosen
        # Learning off, the same request ranks as before.
        assert (await names(hub_of(retriever, None), QUERY))[0] == first[0]


@pytest.mark.anyio
async def test_outcomes_survive_a_restart_through_the_store_and_query_texts_can_be_kept_out(retriever: Retriever, tmp_path: Any) -> None:
    path = tmp_path / "store.sqlite3"
    with Store.open(path) as store:
        learning = Learning(seed=0, sink=EventStore(store))
        hub = hub_of(retriever, learning)
        with anyio.fail_after(60):
            chosen = (await names(hub, QUERY))[1]
            await hub.call(chosen, arguments(hub, chosen))
        learning.flush()
    with Store.open(path) as store:
        events = EventStore(store)
        calls = list(events.calls())
        assert [(c.success, c.rank, c.query) for c in calls] == [(True, 2, QUERY)]
        restored = Learning(seed=0)
        assert restored.restore(calls) == 1
        assert list(restored.examples.snapshot().values()) == [{QUERY: 1.0}]
        assert list(restored.rejected.snapshot().values()) == [{QUERY: 0.5}]  # the tool ranked first, passed over

    private = tmp_path / "private.sqlite3"
    with Store.open(private) as store:
        learning = Learning(seed=0, keep_queries=False, sink=EventStore(store))
        hub = hub_of(retriever, learning)
        with anyio.fail_after(60):
            chosen = (await names(hub, QUERY))[1]
            await hub.call(chosen, arguments(hub, chosen))
        learning.flush()
        texts = store.conn.execute("SELECT count(*) FROM selection_events WHERE query IS NOT NULL").fetchall()[0][0]
        kinds = store.conn.execute("SELECT kind FROM selection_events ORDER BY id").fetchall()
        assert texts == 0 and [k[0] for k in kinds] == ["search", "call"]
        assert len(learning.examples) == 0


def test_the_outcome_log_keeps_only_the_newest_rows(tmp_path: Any) -> None:
    from votr_mcp.learning import Returned, SearchEvent

    with Store.open(tmp_path / "s.sqlite3") as store:
        events = EventStore(store, max_events=10, flush_every=1_000)
        for i in range(25):
            events.add_search(SearchEvent("s", f"q{i}", (Returned(("a", "b"), "a__b", 1, 1.0),), "a", False))
        assert events.flush() == 25
        kept = [q for q, _, _ in events.searches()]
        assert kept == [f"q{i}" for i in range(15, 25)]


@pytest.mark.anyio
async def test_a_tool_shows_the_operators_hint_or_what_is_usually_called_next_when_the_caller_may_see_it(retriever: Retriever) -> None:
    from votr_mcp.policy import Governance

    learning = Learning(seed=0)
    hub = hub_of(retriever, learning)
    first, then = "filesystem__list_directory", "filesystem__read_file"
    with anyio.fail_after(60):
        for _ in range(3):
            await hub.call(first, arguments(hub, first))
            await hub.call(then, arguments(hub, then))
        tools = {t["name"]: t for t in (await hub.search("list the directory", max_results=5)).structured["tools"]}
        assert tools[first]["hint"] == f"usually called next: {then}"
        hub.governance = Governance(data={"disabled": [then]})
        tools = {t["name"]: t for t in (await hub.search("list the directory", max_results=5)).structured["tools"]}
        assert tools[first]["hint"] is None
        hub.hints = {("filesystem", "list_directory"): "paths are relative to the allowed roots"}
        answer = await hub.search("list the directory", max_results=5)
        assert "  hint: paths are relative to the allowed roots" in answer.text


@pytest.mark.anyio
async def test_with_query_texts_off_no_request_text_is_kept_even_in_memory(retriever: Retriever) -> None:
    learning = Learning(seed=0, keep_queries=False)
    hub = hub_of(retriever, learning)
    with anyio.fail_after(60):
        chosen = (await names(hub, QUERY))[1]
        await hub.call(chosen, arguments(hub, chosen))
    assert learning._recent == {} and len(learning.examples) == 0
    assert learning.bandit.evidence((chosen.split("__")[0], chosen.split("__")[1]), "filesystem")[0] > 0  # the outcome still counts


@pytest.mark.anyio
async def test_what_is_usually_called_next_survives_a_restart_and_counts_on_from_there(retriever: Retriever, tmp_path: Any) -> None:
    path = tmp_path / "store.sqlite3"
    first, then = "filesystem__list_directory", "filesystem__read_file"
    key, next_key = ("filesystem", "list_directory"), ("filesystem", "read_file")
    with Store.open(path) as store:
        learning = Learning(seed=0, sink=EventStore(store))
        hub = hub_of(retriever, learning)
        with anyio.fail_after(60):
            for _ in range(2):  # one short of NEXT_MIN: no hint yet
                await hub.call(first, arguments(hub, first))
                await hub.call(then, arguments(hub, then))
        assert learning.usually_next(key) is None
        learning.flush()
    with Store.open(path) as store:  # a restart: a new store object on the same file, a new Learning
        events = EventStore(store)
        assert list(events.successors()) == [(key, next_key, 2), (next_key, key, 1)]
        learning = Learning(seed=0, sink=events)
        assert learning.restore_next(events.successors()) == 2
        hub = hub_of(retriever, learning)
        with anyio.fail_after(60):
            await hub.call(first, arguments(hub, first))
            await hub.call(then, arguments(hub, then))
            assert learning.usually_next(key) == next_key
            tools = {t["name"]: t for t in (await hub.search("list the directory", max_results=5)).structured["tools"]}
        assert tools[first]["hint"] == f"usually called next: {then}"
        learning.flush()
        counts = {(b, a): n for b, a, n in EventStore(store).successors()}
        assert counts[(key, next_key)] == 3


def test_only_the_tool_of_the_nearest_learned_request_is_lifted_as_far_as_the_cosine_passes_the_floor() -> None:
    near = np.array([0.75, 0.95, -1.0, 0.9])
    trust = np.array([1.0, 0.5, 0.0, 1.0])
    lift = nearest_lift(near, trust, floor=0.7)
    assert lift.tolist() == pytest.approx([0.0, 0.5 * (0.25 / 0.3), 0.0, 0.0])
    assert nearest_lift(np.array([0.6, -1.0]), np.array([1.0, 0.0]), floor=0.7).tolist() == [0.0, 0.0]
    assert nearest_lift(np.zeros(0), np.zeros(0), floor=0.7).tolist() == []


def test_every_tool_rejected_for_a_request_like_this_one_sinks_by_how_far_the_cosine_passes_the_floor() -> None:
    near = np.array([1.0, 0.9, 0.8, -1.0])
    count = np.array([1.0, 0.5, 1.0, 0.0])
    drop = rejected_drop(near, count, floor=0.8)
    one, passed = 1 / (1 + REJECT_HALF), 0.5 / (0.5 + REJECT_HALF)
    assert drop.tolist() == pytest.approx([one, 0.5 * passed, 0.0, 0.0])
    assert rejected_drop(np.zeros(0), np.zeros(0), floor=0.8).tolist() == []


def test_a_success_forgets_the_tools_rejections_of_requests_near_it_and_keeps_the_others() -> None:
    from votr_mcp.learning import LearnedExamples

    rejected = LearnedExamples()
    unit = np.eye(3, dtype=np.float32)
    near = np.array([0.95, 0.3122499, 0.0], dtype=np.float32)  # cosine 0.95 with the first axis
    rejected.add(("fs", "read"), "read a.txt", vector=("m", unit[0]))
    rejected.add(("fs", "read"), "delete a.txt", vector=("m", unit[1]))
    rejected.add(("fs", "write"), "read a.txt", vector=("m", unit[0]))
    rejected.discard(("fs", "read"), "read the file a.txt", ("m", near), 0.9)
    assert rejected.of(("fs", "read")) == {"delete a.txt": 1.0}
    assert rejected.of(("fs", "write")) == {"read a.txt": 1.0}  # another tool's rejection stands
    rejected.discard(("fs", "read"), "delete a.txt")  # no vector: the same text only
    assert rejected.of(("fs", "read")) == {} and len(rejected) == 1


@pytest.mark.anyio
async def test_a_tool_that_failed_for_a_request_sinks_for_it_until_it_works_for_it(retriever: Retriever) -> None:
    learning = Learning(seed=0)
    upstreams = Upstreams()
    hub = hub_of(retriever, learning, upstreams)
    other = "read the contents of a file"
    with anyio.fail_after(60):
        elsewhere = await names(hub, other)
        first = await names(hub, QUERY)  # the session's last search: the call below is its outcome
        top = first[0]
        key = (top.split("__")[0], top.split("__")[1])
        upstreams.timing_out.add(key)
        with pytest.raises(ToolError, match="timed out"):
            await hub.call(top, arguments(hub, top))
        assert learning.rejected.of(key) == {}  # its server never answered: nothing said about the request
        upstreams.timing_out.clear()
        upstreams.failing.add(key)
        await hub.call(top, arguments(hub, top))
        assert list(learning.rejected.of(key)) == [QUERY]
        again = await names(hub, QUERY)
        assert again[0] != top and again[0] in first, (first, again)
        assert await names(hub, other) == elsewhere  # a request unlike it ranks as before
        # The tool works for that request after all (it was the arguments, or the upstream was down).
        upstreams.failing.clear()
        await names(hub, QUERY)
        await hub.call(top, arguments(hub, top))
        assert learning.rejected.of(key) == {}
        assert (await names(hub, QUERY))[0] == top


@pytest.mark.anyio
async def test_learned_requests_leave_the_tool_vectors_as_they_are_unless_mixing_is_asked_for(retriever: Retriever) -> None:
    base = retriever.dense_index
    assert base is not None
    for mix, moved in (("off", False), ("centred", True)):
        learning = Learning(seed=0, mix=mix)
        hub = hub_of(retriever, learning)
        with anyio.fail_after(60):
            chosen = (await names(hub, QUERY))[1]
            await hub.call(chosen, arguments(hub, chosen))
        learned = learning.searcher(retriever).dense_index
        assert (learned.tools_t2v is base.tools_t2v) is not moved
        assert bool(np.any(learned.tools_t2v != base.tools_t2v)) is moved
    with pytest.raises(ValueError, match="choose 'off', 'centred' or 'plain'"):
        Learning(seed=0, mix="wild")
