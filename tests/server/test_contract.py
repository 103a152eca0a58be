"""The MCP contract of ``votr-mcp serve``, checked with the Python SDK client over every transport.

The server runs as a real subprocess over a small catalog with no upstreams behind it
(lexical retrieval, so no model load): what an agent sees, whatever the transport.
"""

from __future__ import annotations

import json

import anyio
import pytest
from votr_serving import CATALOG, votr_client

pytestmark = pytest.mark.anyio

SERVE_CATALOG = ("--catalog", str(CATALOG), "--no-dense")


async def test_the_tool_list_is_exactly_search_tools_and_call_tool(transport: str) -> None:
    with anyio.fail_after(60):
        async with votr_client(transport, *SERVE_CATALOG) as client:
            listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert sorted(tools) == ["call_tool", "search_tools"]
    assert tools["search_tools"].input_schema["required"] == ["query"]
    assert set(tools["search_tools"].input_schema["properties"]) >= {"query", "server_intent", "tool_intent", "max_results", "session_id"}
    assert tools["call_tool"].input_schema["required"] == ["name"]
    assert set(tools["call_tool"].input_schema["properties"]) >= {"name", "arguments", "session_id"}


async def test_search_tools_puts_the_call_name_of_each_tool_in_its_structured_content(transport: str) -> None:
    with anyio.fail_after(60):
        async with votr_client(transport, *SERVE_CATALOG) as client:
            result = await client.call_tool("search_tools", {"query": "list the open pull requests of a github repository"})
    assert not result.is_error
    found = result.structured_content["tools"]
    assert found, result.content
    assert found[0]["name"] == "github__list_pull_requests"
    text = result.content[0].text
    for item in found:
        assert item["name"] in text
        assert set(item) >= {"name", "server", "tool", "score", "tier", "signature", "available"}
        assert item["available"] is False  # no upstream configured behind this catalog
    session_id = result.structured_content["session_id"]
    # Streamable HTTP (2026-07-28) requests carry no connection identity: the id is also in the text.
    assert (f"session_id: {session_id}" in text) is (transport == "http")


async def test_a_request_of_several_steps_groups_its_tools_by_need_in_text_and_structured_content() -> None:
    with anyio.fail_after(60):
        async with votr_client("stdio", *SERVE_CATALOG) as client:
            result = await client.call_tool("search_tools", {
                "query": "list the open pull requests of a github repository, then create an issue about the login bug"})
    assert not result.is_error
    found = result.structured_content["tools"]
    first, second = "list the open pull requests of a github repository", "create an issue about the login bug"
    needs = [item["need"] for item in found if item["need"] is not None]
    assert needs == sorted(needs, key=[first, second].index) and set(needs) == {first, second}
    by_need = {item["name"]: item["need"] for item in found}
    assert by_need["github__list_pull_requests"] == first
    text = result.content[0].text
    assert text.index(f"For: {first}") < text.index("github__list_pull_requests") < text.index(f"For: {second}")
    assert text.count("For: ") == 2


async def test_call_tool_without_upstreams_names_the_server_and_shows_how_to_configure_it(transport: str) -> None:
    with anyio.fail_after(60):
        async with votr_client(transport, *SERVE_CATALOG) as client:
            result = await client.call_tool("call_tool", {"name": "github__create_issue", "arguments": {"owner": "o", "repo": "r", "title": "t"}})
    assert result.is_error
    text = result.content[0].text
    assert "'github'" in text and "--config" in text
    snippet = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert snippet == {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@example/github-mcp"]}}}


async def test_an_unknown_tool_name_gets_the_nearest_call_names(transport: str) -> None:
    with anyio.fail_after(60):
        async with votr_client(transport, *SERVE_CATALOG) as client:
            typo = await client.call_tool("call_tool", {"name": "github__list_pull_request", "arguments": {}})
            bare = await client.call_tool("call_tool", {"name": "get_forecast", "arguments": {"city": "Oslo"}})
    assert typo.is_error and "'github__list_pull_requests'" in typo.content[0].text
    assert "search_tools" in typo.content[0].text
    assert bare.is_error and "'weather__get_forecast'" in bare.content[0].text


async def test_arguments_that_break_the_input_schema_come_back_with_what_was_expected_where() -> None:
    with anyio.fail_after(60):
        async with votr_client("stdio", *SERVE_CATALOG) as client:
            result = await client.call_tool("call_tool", {"name": "weather__get_forecast", "arguments": {"days": "three"}})
    assert result.is_error
    text = result.content[0].text
    assert "missing required 'city'" in text and "days: expected integer, got string" in text
    # Names and types, not the schema: its descriptions are upstream text (issue 16).
    assert "city: string (required)" in text and "{" not in text


async def test_bad_requests_to_search_tools_say_what_to_send() -> None:
    with anyio.fail_after(60):
        async with votr_client("stdio", *SERVE_CATALOG) as client:
            empty = await client.call_tool("search_tools", {"query": "  "})
            too_many = await client.call_tool("search_tools", {"query": "weather", "max_results": 500})
    assert empty.is_error and "needs 'query'" in empty.content[0].text
    assert too_many.is_error and "'max_results' must be a whole number from 1 to 20" in too_many.content[0].text


async def test_expose_all_lists_every_catalog_tool_under_its_call_name() -> None:
    with anyio.fail_after(60):
        async with votr_client("stdio", *SERVE_CATALOG, "--expose", "all") as client:
            listed = await client.list_tools()
            direct = await client.call_tool("weather__get_forecast", {"city": "Oslo"})
    names = {tool.name for tool in listed.tools}
    assert {"search_tools", "call_tool", "github__list_pull_requests", "notes__search_notes"} <= names
    assert len(names) == 2 + 10
    assert direct.is_error and "'weather'" in direct.content[0].text


@pytest.mark.parametrize("transport_name", ["http", "sse"])
async def test_http_transports_refuse_a_foreign_origin_or_host(transport_name: str) -> None:
    import httpx2
    from votr_serving import http_server

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    with anyio.fail_after(60):
        async with http_server(transport_name, SERVE_CATALOG) as (url, _lines):
            post_url = url if transport_name == "http" else url.replace("/sse", "/messages/?session_id=00000000000000000000000000000000")
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            async with httpx2.AsyncClient(timeout=10) as http:
                evil_origin = await http.post(post_url, json=initialize, headers={**headers, "Origin": "http://evil.example.com"})
                evil_host = await http.post(post_url, json=initialize, headers={**headers, "Host": "evil.example.com"})
                local = await http.post(post_url, json=initialize, headers={**headers, "Origin": url.rsplit("/", 1)[0]})
    assert evil_origin.status_code == 403
    assert evil_host.status_code == 421
    # The same request from a local origin passes the check (SSE then wants a live session id).
    assert local.status_code in (200, 404)


async def test_a_bearer_token_guards_the_http_transport_when_set() -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from votr_serving import http_server

    with anyio.fail_after(60):
        async with http_server("http", SERVE_CATALOG, env={"VOTR_MCP_TOKEN": "s3cret-token"}) as (url, _lines):
            async with httpx2.AsyncClient(timeout=10) as http:
                refused = await http.post(url, json={}, headers={"Authorization": "Bearer wrong"})
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}, timeout=30) as authorized:
                async with Client(streamable_http_client(url, http_client=authorized)) as client:
                    listed = await client.list_tools()
    assert refused.status_code == 401
    assert {t.name for t in listed.tools} == {"search_tools", "call_tool"}


async def test_with_no_config_the_embedded_registry_is_searchable_and_calls_say_what_to_configure() -> None:
    with anyio.fail_after(60):
        async with votr_client("stdio", "--no-dense") as client:
            found = await client.call_tool("search_tools", {"query": "what time is it in Tokyo"})
            call = await client.call_tool("call_tool", {"name": "time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}})
    assert "time__get_current_time" in [t["name"] for t in found.structured_content["tools"]]
    text = call.content[0].text
    assert call.is_error and "'time'" in text
    assert json.loads(text[text.index("{") : text.rindex("}") + 1]) == {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}
