"""Over streamable HTTP, each bearer token is its own principal, and a policy change applies at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from votr_serving import CATALOG, http_server

pytestmark = pytest.mark.anyio

POLICY = {"principals": {"tokens": {"${ALICE_TOKEN}": {"user": "alice"}, "bob-token": {"user": "bob", "roles": ["viewer"]}}},
          "rules": [{"deny": {"roles": ["viewer"], "servers": "weather"}}]}


async def test_each_token_sees_its_own_tools_and_an_edited_policy_applies_without_a_restart(tmp_path: Path) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    query = {"query": "weather forecast for Paris"}

    async def search(url: str, token: str) -> tuple[list[str], str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                found = await client.call_tool("search_tools", query)
                call = await client.call_tool("call_tool", {"name": "weather__get_forecast", "arguments": {"city": "Paris"}})
        return [t["name"] for t in (found.structured_content or {}).get("tools", [])], call.content[0].text

    with anyio.fail_after(90):
        async with http_server("http", ("--catalog", str(CATALOG), "--no-dense", "--policy", str(policy)),
                               env={"ALICE_TOKEN": "alice-token"}) as (url, _lines):
            alice, _ = await search(url, "alice-token")
            bob, bob_call = await search(url, "bob-token")
            stranger, stranger_call = await search(url, "guess")
            policy.write_text(json.dumps({**POLICY, "rules": []}))
            os.utime(policy, ns=(1, 10**18))
            bob_after, _ = await search(url, "bob-token")
    assert "weather__get_forecast" in alice
    assert not [n for n in bob if n.startswith("weather__")]
    assert "refused by rule 1 (deny: roles viewer; servers weather)" in bob_call
    assert stranger == [] and "token is missing or unknown" in stranger_call
    assert "weather__get_forecast" in bob_after
