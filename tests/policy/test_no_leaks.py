"""A hidden tool is never returned, named in an abstention hint or a "did you mean", or called:
1,000 random searches over the embedded registry by three principals, through Hub."""

from __future__ import annotations

import os
import random
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from votr_mcp.catalog import load_catalog
from votr_mcp.catalog.embedded import default_registry_path
from votr_mcp.policy import Governance
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex

POLICY = {
    "principals": {"local": {"user": "alice", "roles": ["admin"]},
                   "tokens": {"bob-token": {"user": "bob", "roles": ["viewer"]},
                              "carol-token": {"user": "carol", "roles": ["dev"], "org": "acme"}}},
    "rules": [{"deny": {"roles": ["viewer"], "annotations": {"destructiveHint": True}}},
              {"allow": {"orgs": ["acme"], "servers": ["git", "time", "fetch"]}},
              {"deny": {"orgs": ["acme"]}},
              {"deny": {"users": ["alice"], "servers": "memory"}}],
    "disabled": ["filesystem__write_file", "github/*delete*"],
}
CALLERS = [{"bearer": None, "over_http": False}, {"bearer": "bob-token", "over_http": True},
           {"bearer": "carol-token", "over_http": True}]


CHAT = ["tell me a joke about cats", "how are you today", "what is the meaning of life", "write me a poem about the sea",
        "thanks, that was helpful", "who won the football world cup in 1998", "good morning!", "I feel tired"]


class Upstreams:
    def configured(self, server: str) -> bool:
        return True

    def unavailable(self, server: str) -> str | None:
        return None

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


@pytest.fixture(scope="module")
def hub() -> Hub:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import MiniLMEmbedder

    catalog = load_catalog(default_registry_path()).catalog
    retriever = Retriever.build(catalog, embedder=MiniLMEmbedder())
    hub = Hub(LiveIndex(catalog, retriever), Upstreams(), governance=Governance(data=POLICY))
    hub.ready.set()
    return hub


def hidden_names(hub: Hub, caller: dict[str, Any]) -> set[str]:
    gov = hub.governance
    assert gov is not None
    p = gov.principal(caller["bearer"], caller["over_http"])
    return {name for name, tool in hub.index.current.by_name.items() if not gov.visible(p, tool)}


def requests(hub: Hub, rng: random.Random, n: int) -> list[str]:
    """Requests for hidden and visible tools alike: examples, descriptions, names, and noise."""
    tools = list(hub.index.current.catalog)
    words = [w for t in tools for w in t.description.split()[:12]]
    out = []
    for _ in range(n):
        tool = rng.choice(tools)
        kind = rng.random()
        if kind < 0.4 and tool.examples:
            out.append(rng.choice(tool.examples))
        elif kind < 0.6:
            out.append(tool.description[:120] or tool.name)
        elif kind < 0.75:
            out.append(f"use {tool.name} on {tool.server}")  # names the tool outright
        elif kind < 0.85:
            out.append(rng.choice(CHAT))  # no tool fits: the abstention's hint names the nearest tools
        else:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))))
    return out


@pytest.mark.anyio
async def test_a_thousand_random_searches_by_three_principals_never_show_a_hidden_tool(hub: Hub) -> None:
    rng = random.Random(18)
    hidden = [hidden_names(hub, c) for c in CALLERS]
    assert all(hidden) and len({frozenset(h) for h in hidden}) == 3  # three different views, none empty
    leaks: list[tuple[int, str, str]] = []
    abstained = returned = 0
    with anyio.fail_after(240):
        for query in requests(hub, rng, 1_000):
            who = rng.randrange(3)
            servers = rng.choice([None, None, None, ["git"], ["filesystem", "git*"]])
            try:
                answer = await hub.search(query, servers=servers, **CALLERS[who])
            except ToolError as exc:  # a servers filter that leaves nothing: the refusal must not leak either
                text = str(exc)
            else:
                text = answer.text + repr(answer.structured)
                abstained += answer.structured["abstained"]
                returned += len(answer.structured["tools"])
            leaks += [(who, query, name) for name in hidden[who] if name in text]
    assert leaks == []
    assert returned > 1_000 and abstained > 0  # the searches did return tools, and some abstained


@pytest.mark.anyio
async def test_calls_of_hidden_tools_are_refused_naming_the_rule_and_did_you_mean_names_none(hub: Hub) -> None:
    with anyio.fail_after(30):
        for caller, hidden in ((c, hidden_names(hub, c)) for c in CALLERS):
            for name in sorted(hidden)[:10]:
                with pytest.raises(ToolError, match=r"refused by (rule \d|'.*' under \"disabled\")") as refused:
                    await hub.call(name, {}, **caller)
                assert "not available to" in str(refused.value)
                with pytest.raises(ToolError, match="Unknown tool") as unknown:
                    await hub.call(name + "x", {}, **caller)
                suggestions = str(unknown.value).replace(f"'{name}x'", "")  # less the name the agent sent
                assert not [h for h in hidden if h in suggestions]


@pytest.mark.anyio
async def test_an_unknown_bearer_token_is_refused_before_anything_is_searched(hub: Hub) -> None:
    with pytest.raises(ToolError, match="token is missing or unknown"):
        await hub.search("read a file", bearer="nope", over_http=True)


@pytest.mark.anyio
async def test_pinned_tools_a_principal_may_not_see_are_left_out_of_its_answers(hub: Hub) -> None:
    from votr_mcp.server.hooks import NoSessions

    class PinEverything(NoSessions):
        def pinned(self) -> list[str]:
            return sorted(hub.index.current.by_name)

    pinned = Hub(hub.index, Upstreams(), PinEverything(), governance=hub.governance)
    pinned.ready.set()
    with anyio.fail_after(30):
        for caller in CALLERS:
            answer = await pinned.search("read a file", **caller)
            names = {t["name"] for t in answer.structured["tools"]}
            assert names and not names & hidden_names(hub, caller)
