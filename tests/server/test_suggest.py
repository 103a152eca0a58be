"""When nothing connected serves a request, search names a known server that would, with its entry."""

from __future__ import annotations

import functools
import os
from collections.abc import Collection
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest

from votr_mcp.catalog import Catalog, Tool, load_catalog, setup_entries
from votr_mcp.catalog.embedded import default_registry_path
from votr_mcp.cli._paths import cache_dir
from votr_mcp.policy import Governance
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex
from votr_mcp.server.suggest import Suggester, default_suggester

pytestmark = pytest.mark.anyio


CONNECTED = ("time", "calculator", "memory", "sqlite")


class Connected:
    def __init__(self, servers: Collection[str] = CONNECTED) -> None:
        self.servers = set(servers)

    def configured(self, server: str) -> bool:
        return server in self.servers

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
              suggester=Suggester(registry, setup_entries(default_registry_path())))
    hub.ready.set()
    with anyio.fail_after(120):
        answer = await hub.search("what changed in my working tree since the last commit")
        hub.governance = Governance(data={"rules": [{"deny": {"servers": "git"}}]})
        governed = await hub.search("what changed in my working tree since the last commit")
        time = await hub.search("what time is it in Tokyo")
    suggested = answer.structured["suggestions"][0]
    assert suggested["server"] == "git" and suggested["mcpServers"]["git"]["command"] == "uvx"
    assert "Not connected: the MCP server 'git'" in answer.text
    assert "'git'" not in governed.text and all(s["server"] != "git" for s in governed.structured.get("suggestions", []))
    assert "suggestions" not in time.structured  # a request the connected server serves suggests nothing


@pytest.mark.slow
async def test_a_service_the_default_catalog_lacks_is_suggested_from_the_known_servers_with_its_entry_and_credentials() -> None:
    # Every server of the default catalog is connected; GitHub and Slack are only in known-servers/.
    # The models and the cache are serve's: the known servers' ~650 tool vectors are kept in the user's
    # embedding cache, so only the first run on a machine (a test or serve) embeds them.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index.models import default_embedder

    registry = load_catalog(default_registry_path()).catalog
    hub = Hub(LiveIndex(registry, Retriever.build(registry, embedder=default_embedder())), Connected(registry.servers),
              suggester=default_suggester(cache_dir(None)))
    hub.ready.set()
    with anyio.fail_after(300):  # the first run on a machine embeds the known tools (some 25 s on one core)
        issue = await hub.search("create a GitHub issue in my repo")
        slack = await hub.search("post a message to the #general channel on Slack")
        commit = await hub.search("what changed in my working tree since the last commit")
    # The connected git server's tools are still listed (they look confident); GitHub is named, not connected.
    assert issue.structured["tools"] and issue.structured["suggestions"] == [issue.structured["suggestions"][0]]
    github = issue.structured["suggestions"][0]
    assert github["server"] == "github" and github["tool"] == "create_issue"
    entry = github["mcpServers"]["github"]
    assert entry["command"] == "npx" and "@modelcontextprotocol/server-github" in entry["args"]
    assert entry["env"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "<your GitHub personal access token>"}
    assert "Not connected: the MCP server 'github' (tool create_issue)" in issue.text
    assert slack.structured["abstained"] and slack.structured["suggestions"][0]["server"] == "slack"
    assert "SLACK_BOT_TOKEN" in slack.structured["suggestions"][0]["mcpServers"]["slack"]["env"]
    assert "suggestions" not in commit.structured  # the connected git server serves it


def test_a_named_service_is_suggested_only_when_not_connected_and_no_tool_found_mentions_it() -> None:
    suggester = Suggester(Catalog([Tool("github", "create_issue"), Tool("google-maps", "maps_directions")]),
                          {"github": {"command": "npx"}, "google-maps": {"command": "npx"}})
    git = Tool("git", "git_status", "Shows the working tree status")
    assert suggester.named("Create a GitHub issue", (), [git]) == {"github"}
    assert suggester.named("directions with Google Maps, please", (), []) == {"google-maps"}
    assert suggester.named("create a GitHub issue", {"github"}, [git]) == set()  # connected
    # A connected server under another name that serves GitHub mentions it: nothing to suggest.
    gh = Tool("gh", "create_issue", "Create a new issue in a GitHub repository")
    assert suggester.named("create a GitHub issue", (), [gh]) == set()
    assert suggester.named("push to my git repo", (), [git]) == set()  # 'git' is not 'github'


class Stoppable:
    """The real model, counting the texts it encodes; it can be told to fail (a process stopped midway)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.texts = 0
        self.fail_after_calls: int | None = None

    def encode(self, texts: Any) -> Any:
        if self.fail_after_calls is not None:
            if self.fail_after_calls == 0:
                raise RuntimeError("stopped")
            self.fail_after_calls -= 1
        self.texts += len(texts)
        return self.inner.encode(texts)


def test_the_known_servers_are_indexed_in_cached_parts_so_an_interrupted_warm_up_is_not_lost(tmp_path: Any) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import FileEmbeddingCache, MiniLMEmbedder

    registry = load_catalog(default_registry_path()).catalog
    hints = setup_entries(default_registry_path())
    model = Stoppable(MiniLMEmbedder())
    like = Retriever.build(Catalog(t for t in registry if t.server == "time"), embedder=model)
    model.texts, model.fail_after_calls = 0, 1  # the first part is embedded and cached, then the process "stops"
    with pytest.raises(RuntimeError, match="stopped"):
        Suggester(registry, hints, FileEmbeddingCache(tmp_path)).warm(like, part=40)
    first_part, model.fail_after_calls = model.texts, None
    Suggester(registry, hints, FileEmbeddingCache(tmp_path)).warm(like, part=40)  # the next process
    rest = model.texts - first_part
    assert first_part > 0 and rest > 0
    model.texts = 0
    Suggester(registry, hints, FileEmbeddingCache(tmp_path)).warm(like, part=40)
    assert model.texts == 0  # everything is cached now: a restart embeds nothing
    model.texts = 0
    Suggester(registry, hints, FileEmbeddingCache(tmp_path / "fresh")).warm(like, part=40)
    assert first_part + rest == model.texts  # the stopped process's part was not embedded again


async def test_a_search_while_the_known_servers_are_being_indexed_suggests_nothing_instead_of_waiting() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import MiniLMEmbedder

    registry = load_catalog(default_registry_path()).catalog
    model = MiniLMEmbedder()
    like = Retriever.build(Catalog(t for t in registry if t.server == "time"), embedder=model)
    suggester = Suggester(Catalog(t for t in registry if t.server == "git"), setup_entries(default_registry_path()))
    request = functools.partial(suggester.suggest, "show the last 3 commits of my repository", like, ())
    with suggester._lock:  # what warm() holds while it builds
        with anyio.fail_after(5):
            assert await anyio.to_thread.run_sync(request, abandon_on_cancel=True) == []
    with anyio.fail_after(60):
        assert [s.server for s in await anyio.to_thread.run_sync(request)] == ["git"]
