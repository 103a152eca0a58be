"""What the observer records and what the agent is told about down servers, in process: a real Hub,
sessions and MCP server over the SDK's in-memory client; only the upstream connections are faked
(the I/O edge), with one server up and one ('dies') that keeps failing to start."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families
from votr_serving import CATALOG

from votr_mcp.catalog import load_catalog
from votr_mcp.server import Hub, LiveIndex, build_server
from votr_mcp.server.dashboard.charts import heatmap, rate_chart
from votr_mcp.server.observability import observe
from votr_mcp.server.runtime import ServeOptions, build_searcher, session_hooks
from votr_mcp.upstream import UpstreamStatus

pytestmark = pytest.mark.anyio


class FakeUpstreams:
    """The I/O edge: 'github' and 'notes' are up, 'calendar' retries, 'dies' never started."""

    UP = ("github", "notes", "weather")

    def __init__(self) -> None:
        self.calls: list[str] = []

    def statuses(self) -> dict[str, UpstreamStatus]:
        out = {name: UpstreamStatus(name, "ready", tool_count=2, attempts=1) for name in self.UP}
        out["calendar"] = UpstreamStatus("calendar", "retrying", error="connection closed", attempts=3, retry_in=4.0)
        out["dies"] = UpstreamStatus("dies", "retrying", error="process exited with code 3", attempts=2, retry_in=2.0)
        return out

    def configured(self, server: str) -> bool:
        return server in self.statuses()

    def unavailable(self, server: str) -> str | None:
        status = self.statuses().get(server)
        return None if status is None or status.available else f"server '{server}' is {status.describe()}"

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        self.calls.append(f"{server}/{tool}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"ran {tool}")])


def make_hub() -> tuple[Hub, Any]:
    catalog = load_catalog(CATALOG).catalog
    sessions = session_hooks(ServeOptions(guard_max_repeats=2))
    hub = Hub(LiveIndex(catalog, build_searcher(catalog)), FakeUpstreams(), sessions)
    hub.ready.set()
    return hub, sessions


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def samples(exposition: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(exposition.decode()) for s in family.samples}


async def test_searches_calls_hits_and_ranks_are_counted_and_parse_as_prometheus_text() -> None:
    hub, sessions = make_hub()
    observer = observe(hub, sessions)
    with anyio.fail_after(30):
        async with Client(build_server(hub, observer=observer)) as client:
            found = await client.call_tool("search_tools", {"query": "list pull requests of a github repository"})
            first, sid = found.structured_content["tools"][0]["name"], found.structured_content["session_id"]
            called = await client.call_tool("call_tool", {"name": first, "arguments": {"owner": "a", "repo": "b"}, "session_id": sid})
            unknown = await client.call_tool("call_tool", {"name": "github__no_such_tool", "arguments": {}})
    assert not called.is_error and unknown.is_error
    values = samples(observer.metrics.exposition())
    assert values[("votr_searches_total", (("outcome", "answered"),))] == 1
    assert values[("votr_search_hits_total", ())] == 1
    assert values[("votr_calls_total", (("outcome", "ok"), ("server", "github")))] == 1
    assert values[("votr_calls_total", (("outcome", "unknown"), ("server", "unknown")))] == 1
    # Cumulative buckets: the unknown name was in no search (rank 0); the first tool returned was called (rank 1).
    assert (values[("votr_called_rank_bucket", (("le", "0.0"),))], values[("votr_called_rank_bucket", (("le", "1.0"),))]) == (1, 2)
    assert values[("votr_upstream_up", (("server", "dies"),))] == 0
    assert values[("votr_upstream_restarts_total", (("server", "calendar"),))] == 2
    assert values[("votr_stage_seconds_count", (("stage", "retrieval"),))] == 1
    assert values[("votr_stage_seconds_count", (("stage", "upstream"),))] == 1
    assert values[("votr_sessions", ())] >= 1
    record = observer.recent[-1]
    assert record.returned[0] == first and [(c.name, c.outcome, c.rank) for c in record.calls][0] == (first, "ok", 1)


async def test_the_iteration_guard_tripping_is_counted() -> None:
    hub, sessions = make_hub()
    observer = observe(hub, sessions)
    with anyio.fail_after(30):
        async with Client(build_server(hub, observer=observer)) as client:
            found = await client.call_tool("search_tools", {"query": "write a note"})
            sid = found.structured_content["session_id"]
            for _ in range(3):
                await client.call_tool("call_tool", {"name": "notes__write_note", "arguments": {"text": "same"}, "session_id": sid})
    assert observer.metrics.value("votr_guard_trips_total") == 1


async def test_a_call_of_a_down_server_s_unknown_tool_says_the_server_is_down_and_why() -> None:
    hub, _ = make_hub()
    with anyio.fail_after(30):
        async with Client(build_server(hub)) as client:
            result = await client.call_tool("call_tool", {"name": "dies__x", "arguments": {}})
            other = await client.call_tool("call_tool", {"name": "nowhere__x", "arguments": {}})
    assert result.is_error
    assert "Unknown tool" not in text(result)
    assert "server 'dies' is not connected (process exited with code 3)" in text(result)
    assert "Unknown tool 'nowhere__x'" in text(other)  # a server nobody configured stays an unknown name


async def test_a_search_naming_a_down_server_says_so_instead_of_silently_offering_another() -> None:
    hub, _ = make_hub()
    with anyio.fail_after(30):
        async with Client(build_server(hub)) as client:
            dies = await client.call_tool("search_tools", {"query": "do the thing", "server_intent": "dies"})
            calendar = await client.call_tool("search_tools", {"query": "list my calendar events", "server_intent": "calendar"})
    assert any("The server you asked for is down" in n and "exited with code 3" in n for n in dies.structured_content["notes"])
    assert "Any tools listed belong to other servers" in text(dies)
    # Its tools are indexed: they are returned, marked unavailable, with the note.
    listed = calendar.structured_content["tools"]
    assert listed and all(not t["available"] for t in listed if t["server"] == "calendar")
    assert "UNAVAILABLE" in text(calendar) and "Its tools are marked UNAVAILABLE" in text(calendar)


async def test_the_status_resource_lists_servers_health_and_tool_counts() -> None:
    hub, _ = make_hub()
    with anyio.fail_after(30):
        async with Client(build_server(hub)) as client:
            listed = await client.list_resources()
            read = await client.read_resource("votr://status")
    assert [str(r.uri) for r in listed.resources] == ["votr://status"]
    document = json.loads(read.contents[0].text)
    by_name = {s["name"]: s for s in document["servers"]}
    assert by_name["github"]["available"] and by_name["github"]["indexed_tools"] == 3
    assert not by_name["dies"]["available"] and "exited with code 3" in by_name["dies"]["reason"]
    assert by_name["dies"]["indexed_tools"] == 0 and by_name["calendar"]["restarts"] == 2
    assert document["ready"] is True


async def test_hit_rate_timeline_usage_and_drift_follow_the_recorded_events() -> None:
    hub, _ = make_hub()
    clock = [1_800_000_000.0]
    from votr_mcp.server.observer import Observer

    observer = Observer(hub, clock=lambda: clock[0])
    answer = {"tools": [{"name": "github__create_issue", "tier": "high"}, {"name": "notes__write_note", "tier": "high"}],
              "abstained": False, "session_id": "s"}
    for i in range(20):
        observer.searched(["s"], "file a bug", None, answer, 0.01)
        if i < 10:  # called every time at first, never later: the tool drifted
            observer.called(["s"], "github__create_issue", "ok", 0.02)
        clock[0] += 1
    observer.searched(["s"], "nothing fits", None, {"tools": [], "abstained": True}, 0.01)
    minute, searches, abstained, hits = observer.timeline(5)[-1]
    assert (searches, abstained, hits) == (21, 1, 10)
    assert observer.hourly(3)[-1][1:] == (21, 1, 10) and observer.hourly(3)[0][1:] == (0, 0, 0)
    hours, rows = observer.usage(24)
    assert rows == [("github__create_issue", [0] * 23 + [10])]
    drift = observer.drift()
    assert [(name, before, after) for name, before, after, *_ in drift] == [("github__create_issue", 1.0, 0.0)]


def test_charts_escape_names_and_leave_gaps_where_nothing_was_measured() -> None:
    svg = rate_chart("t", ["a", "b", "c", "d"], [("<b>", [0.5, None, 1.0, 1.0])])
    assert "&lt;b&gt;" in svg and "<b>" not in svg
    assert svg.count("<polyline") == 1 and svg.count("<circle") == 1  # one run of two points, one lone point
    table = heatmap(["00", "01"], [("<script>x</script>", [0, 3])])
    assert "<script>" not in table and "&lt;script&gt;" in table and ">3<" in table


async def test_a_wrong_token_in_the_sign_in_form_is_refused_and_the_right_one_sets_a_strict_cookie_for_ui() -> None:
    import httpx2

    from votr_mcp.server.observability import web_routes
    from votr_mcp.server.transports import HttpOptions, http_app

    hub, sessions = make_hub()
    observer = observe(hub, sessions)
    options = HttpOptions(token="t0k")
    app = http_app(build_server(hub, observer=observer), "http", options, web_routes(observer, options))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
        wrong = await http.post("/ui/login", data={"token": "nope"})
        right = await http.post("/ui/login", data={"token": "t0k"})
        cookie_value = right.cookies["votr_ui"]
        page = await http.get("/ui", headers={"Cookie": f"votr_ui={cookie_value}"})
        raw_token = await http.get("/ui", headers={"Cookie": "votr_ui=t0k"})
        not_for_metrics = await http.get("/metrics", headers={"Cookie": f"votr_ui={cookie_value}"})
    assert wrong.status_code == 401 and "not the server" in wrong.text
    assert right.status_code == 303 and right.headers["location"] == "/ui"
    cookie = right.headers["set-cookie"].lower()
    assert cookie_value and "t0k" not in cookie_value  # the cookie is not the bearer token
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    assert page.status_code == 200 and "operator: decisions enabled" in page.text
    assert raw_token.status_code == 401
    assert not_for_metrics.status_code == 401  # the cookie stands in for the header under /ui only


async def test_health_is_503_with_the_failing_checks_until_the_upstreams_are_harvested_and_the_model_loaded() -> None:
    import httpx2

    from votr_mcp.server.observability import web_routes
    from votr_mcp.server.transports import HttpOptions, http_app

    hub, sessions = make_hub()
    hub.upstreams_started = anyio.Event()
    hub.dense_pending = True
    observer = observe(hub, sessions)
    app = http_app(build_server(hub, observer=observer), "http", HttpOptions(token="t"), web_routes(observer, HttpOptions(token="t")))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
        starting = await http.get("/health")
        hub.upstreams_started.set()
        hub.dense_pending = False
        ready = await http.get("/health")
        live = await http.get("/health/live")
        gauge = (await http.get("/metrics", headers={"Authorization": "Bearer t"})).text
    assert starting.status_code == 503 and starting.json() == {
        "status": "starting", "checks": {"index": True, "upstreams_harvested": False, "model_loaded": False}}
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert live.status_code == 200
    assert "votr_ready 1.0" in gauge
