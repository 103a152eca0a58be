"""The operator's endpoints of the real ``votr-mcp serve`` (a subprocess): ``/metrics``, ``/health``
and ``/ui`` behind the token, and a configured server that dies, as the agent sees it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families
from votr_serving import CATALOG, ROOT, http_server, votr_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOKEN = "op-token"
SERVE_CATALOG = ("--catalog", str(CATALOG), "--no-dense")


async def wait_ready(http: httpx2.AsyncClient, base: str) -> httpx2.Response:
    with anyio.fail_after(30):
        while True:
            health = await http.get(f"{base}/health")
            if health.status_code == 200:
                return health
            assert health.status_code == 503, health.text
            await anyio.sleep(0.1)


@pytest.mark.parametrize("transport_name", ["http", "sse"])
async def test_metrics_and_ui_need_the_token_and_health_answers_without_it(transport_name: str) -> None:
    with anyio.fail_after(90):
        async with http_server(transport_name, SERVE_CATALOG, env={"VOTR_MCP_TOKEN": TOKEN}) as (url, _lines):
            base = url.rsplit("/", 1)[0]
            async with httpx2.AsyncClient(timeout=10) as http:
                health = await wait_ready(http, base)
                bare = {path: (await http.get(base + path)).status_code for path in ("/metrics", "/ui")}
                wrong = (await http.get(base + "/metrics", headers={"Authorization": "Bearer nope"})).status_code
                auth = {"Authorization": f"Bearer {TOKEN}"}
                metrics = await http.get(base + "/metrics", headers=auth)
                ui = await http.get(base + "/ui", headers=auth)
                ui_bare = await http.get(base + "/ui")
    assert health.json()["status"] == "ready" and all(health.json()["checks"].values())
    assert bare == {"/metrics": 401, "/ui": 401} and wrong == 401
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    families = list(text_string_to_metric_families(metrics.text))
    assert families and all(f.name.startswith("votr_") for f in families)
    assert {"votr_searches", "votr_calls", "votr_ready", "votr_withheld_tools", "votr_stage_seconds"} <= {f.name for f in families}
    assert ui.status_code == 200 and ui.headers["content-type"].startswith("text/html") and "<h2>Servers</h2>" in ui.text
    assert ui_bare.status_code == 401 and 'action="/ui/login"' in ui_bare.text  # a browser gets the sign-in form


async def test_metrics_over_http_count_what_the_agent_did() -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with anyio.fail_after(90):
        async with http_server("http", SERVE_CATALOG, env={"VOTR_MCP_TOKEN": TOKEN}) as (url, _lines):
            async with httpx2.AsyncClient(headers=auth, timeout=30) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    found = await client.call_tool("search_tools", {"query": "list open pull requests in a github repo"})
                    await client.call_tool("search_tools", {"query": "what is the weather in Oslo tomorrow"})
                    name = found.structured_content["tools"][0]["name"]
                    await client.call_tool("call_tool", {"name": name, "arguments": {"owner": "a", "repo": "b"},
                                                         "session_id": found.structured_content["session_id"]})
                text = (await http.get(url.rsplit("/", 1)[0] + "/metrics")).text
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}
    assert sum(v for (n, _), v in values.items() if n == "votr_searches_total") == 2
    # No upstream is configured (a catalog is served): the call is refused as unavailable, in its search's first rank.
    assert values[("votr_calls_total", (("outcome", "unavailable"), ("server", "github")))] == 1
    assert values[("votr_search_hits_total", ())] == 1
    assert values[("votr_stage_seconds_count", (("stage", "search"),))] == 2


async def test_a_configured_server_that_dies_is_reported_down_with_its_reason(tmp_path: Path) -> None:
    toy = ROOT / "tests" / "upstream" / "toy_server.py"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {
        "dies": {"command": sys.executable, "args": ["-c", "import sys; print('cannot start', file=sys.stderr); sys.exit(3)"]},
        "toy": {"command": sys.executable, "args": [str(toy)]},
    }}), encoding="utf-8")
    with anyio.fail_after(90):
        async with votr_client("stdio", "--config", str(config), "--no-dense", "--store", "none") as client:
            called = await client.call_tool("call_tool", {"name": "dies__x", "arguments": {}})
            searched = await client.call_tool("search_tools", {"query": "echo a message", "server_intent": "dies"})
            status = json.loads((await client.read_resource("votr://status")).contents[0].text)
    message = called.content[0].text
    assert called.is_error and "Unknown tool" not in message and "server 'dies' is not connected" in message, message
    notes = searched.structured_content["notes"]
    assert any("The server you asked for is down" in n for n in notes), notes
    assert all(t["server"] != "dies" for t in searched.structured_content["tools"])
    servers = {s["name"]: s for s in status["servers"]}
    assert servers["toy"]["available"] and servers["toy"]["indexed_tools"] > 0
    assert not servers["dies"]["available"] and servers["dies"]["state"] in ("retrying", "failed")
