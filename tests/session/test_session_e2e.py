"""Sessions end to end: a real MCP client, a real ``votr-mcp serve``, real upstream servers.

The upstreams are the reference servers ``server-everything`` (whose ``echo`` is annotated
read-only, so it exercises the burst rule) and ``server-memory`` (whose ``add_observations``
is a plain write). Retrieval is lexical (``--no-dense``) to keep start-up in seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from upstream_servers import require_servers
from votr_serving import NODE_BIN, http_server, votr_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ECHO = "everything__echo"
OBSERVE = "memory__add_observations"


@pytest.fixture
def upstreams(tmp_path: Path) -> Path:
    require_servers(("everything", "memory"))
    memory = tmp_path / "memory.jsonl"
    config = {
        "mcpServers": {
            "everything": {"command": str(NODE_BIN / "mcp-server-everything"), "args": ["stdio"]},
            "memory": {"command": str(NODE_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(memory)}},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def serve_args(config: Path, *extra: str) -> tuple[str, ...]:
    return ("--config", str(config), "--no-dense", "--guard-max-repeats", "3", *extra)


def texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def search(client: Client, query: str, session_id: str | None = None) -> tuple[list[str], dict[str, Any]]:
    args: dict[str, Any] = {"query": query, "max_results": 5}
    if session_id:
        args["session_id"] = session_id
    result = await client.call_tool("search_tools", args)
    assert not result.is_error, texts(result)
    structured = result.structured_content
    return [t["name"] for t in structured["tools"]], structured


async def call(client: Client, name: str, arguments: dict[str, Any], session_id: str | None = None) -> Any:
    args: dict[str, Any] = {"name": name, "arguments": arguments}
    if session_id:
        args["session_id"] = session_id
    return await client.call_tool("call_tool", args)


async def run_contract(client: Client, tool: str, query: str, arguments: dict[str, Any], expected: str, sid: str | None) -> None:
    """The issue's contract: 4th identical call -> result + note; 5th refused; re-search -> callable.

    ``sid`` None: rely on the connection's own session (stdio), passing no session_id at all.
    """
    found, _ = await search(client, query, sid)
    assert tool in found, found
    for _ in range(3):
        result = await call(client, tool, arguments, sid)
        assert not result.is_error and len(texts(result)) == 1 and expected in texts(result)[0], texts(result)
    fourth = await call(client, tool, arguments, sid)
    assert not fourth.is_error
    body, *notes = texts(fourth)
    assert expected in body  # the real result is still returned...
    assert len(notes) == 1 and "loop guard" in notes[0] and "search_tools" in notes[0]  # ...plus the guidance note
    refused = await call(client, tool, arguments, sid)
    assert refused.is_error and "search_tools" in texts(refused)[0], texts(refused)
    found, _ = await search(client, query, sid)
    assert tool in found, found
    again = await call(client, tool, arguments, sid)
    assert not again.is_error and texts(again) and expected in texts(again)[0], texts(again)


@pytest.mark.parametrize("transport", ["stdio", "sse"])
async def test_on_one_connection_the_fourth_identical_call_gets_a_note_then_a_refusal_until_searched_again(
    upstreams: Path, transport: str
) -> None:
    with anyio.fail_after(120):
        async with votr_client(transport, *serve_args(upstreams)) as client:
            # No session_id: one stdio stream (2026-07-28) or one SSE connection (handshake era) is one session.
            await run_contract(client, ECHO, "echo a message back", {"message": "hi"}, "Echo: hi", None)


async def test_over_streamable_http_the_contract_holds_for_a_write_tool_with_the_returned_session_id(upstreams: Path) -> None:
    with anyio.fail_after(120):
        async with votr_client("http", *serve_args(upstreams)) as client:
            _, structured = await search(client, "create entities in the knowledge graph memory")
            sid = structured["session_id"]
            created = await call(client, "memory__create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}, sid)
            assert not created.is_error, texts(created)
            await run_contract(
                client, OBSERVE, "add observations to an entity in the knowledge graph memory",
                {"observations": [{"entityName": "Ada", "contents": ["wrote the first program"]}]}, "Ada", sid,
            )


async def test_two_http_sessions_at_once_never_see_each_others_bindings_or_evictions(upstreams: Path) -> None:
    with anyio.fail_after(150):
        async with http_server("http", serve_args(upstreams)) as (url, _lines):
            async with Client(url) as alice, Client(url) as bob:
                found_a, a = await search(alice, "echo a message back")
                found_b, b = await search(bob, "echo a message back")
                assert a["session_id"] != b["session_id"]
                assert ECHO in found_a and ECHO in found_b
                assert not any(t["bound"] for t in b["tools"])  # alice's search bound nothing for bob
                results: dict[str, list[Any]] = {"alice": [], "bob": []}

                async def loop(who: str, client: Client, sid: str, times: int) -> None:
                    for _ in range(times):
                        results[who].append(await call(client, ECHO, {"message": who}, sid))

                async with anyio.create_task_group() as tg:  # both sessions call at the same time
                    tg.start_soon(loop, "alice", alice, a["session_id"], 4)
                    tg.start_soon(loop, "bob", bob, b["session_id"], 2)
                assert len(texts(results["alice"][3])) == 2  # alice tripped the guard
                assert all(len(texts(r)) == 1 for r in results["bob"])
                refused = await call(alice, ECHO, {"message": "alice"}, a["session_id"])
                assert refused.is_error and "search_tools" in texts(refused)[0]
                still = await call(bob, ECHO, {"message": "bob"}, b["session_id"])
                assert not still.is_error and texts(still) == ["Echo: bob"]  # bob's tool was not evicted
                _, again = await search(bob, "echo a message back", b["session_id"])
                assert any(t["name"] == ECHO and t["bound"] for t in again["tools"])
                assert any("already returned by a recent search" in n for n in again["notes"])  # redundant search
                assert not any("already returned" in n for n in a["notes"])
                # Open mode: a wrong id runs the call in a new session, says so, and names no other session.
                forged = await call(bob, ECHO, {"message": "x"}, a["session_id"][:-2] + "xx")
                body, note = texts(forged)
                assert not forged.is_error and body == "Echo: x"
                assert "unknown or expired session_id" in note and "new session" in note
                assert a["session_id"] not in note and b["session_id"] not in note


async def test_a_stale_session_id_starts_a_fresh_session_in_open_mode_and_is_refused_in_strict_mode(upstreams: Path) -> None:
    # An id from a votr-mcp that has since restarted (or from another stdio process, as the Inspector CLI makes).
    with anyio.fail_after(120):
        async with votr_client("stdio", *serve_args(upstreams)) as client:
            _, before = await search(client, "echo a message back")
        async with votr_client("stdio", *serve_args(upstreams)) as client:
            result = await call(client, ECHO, {"message": "hi"}, before["session_id"])
            assert not result.is_error and texts(result)[0] == "Echo: hi"
            assert "unknown or expired session_id" in texts(result)[1] and "this connection's session" in texts(result)[1]
            found, after = await search(client, "echo a message back", before["session_id"])
            assert ECHO in found and any("was not used" in n for n in after["notes"])
        async with votr_client("stdio", *serve_args(upstreams, "--binding-mode", "strict")) as client:
            refused = await call(client, ECHO, {"message": "hi"}, before["session_id"])
            assert refused.is_error and "unknown or expired session_id" in texts(refused)[0]


async def test_another_connections_session_id_acts_in_nothing_of_that_session(upstreams: Path) -> None:
    with anyio.fail_after(120):
        async with http_server("sse", serve_args(upstreams)) as (url, _lines):
            async with Client(sse_client(url)) as alice, Client(sse_client(url)) as bob:
                _, a = await search(alice, "echo a message back")
                for _ in range(3):
                    assert not (await call(alice, ECHO, {"message": "a"})).is_error
                # Bob presents alice's id: his call must not count in alice's session (her 4th call
                # would draw the loop guard's note) and must say it ran in bob's own session.
                borrowed = await call(bob, ECHO, {"message": "a"}, a["session_id"])
                assert not borrowed.is_error and "belongs to another connection" in texts(borrowed)[-1]
                assert a["session_id"] not in texts(borrowed)[-1]
                fourth = await call(alice, ECHO, {"message": "a"})
                assert len(texts(fourth)) == 2 and "loop guard" in texts(fourth)[1]


async def test_strict_binding_refuses_a_tool_until_a_search_returns_it(upstreams: Path) -> None:
    with anyio.fail_after(120):
        async with votr_client("stdio", *serve_args(upstreams, "--binding-mode", "strict")) as client:
            refused = await call(client, ECHO, {"message": "hi"})
            assert refused.is_error and "search_tools" in texts(refused)[0] and "strict" in texts(refused)[0]
            found, _ = await search(client, "echo a message back")
            assert ECHO in found
            allowed = await call(client, ECHO, {"message": "hi"})
            assert not allowed.is_error and texts(allowed) == ["Echo: hi"]



async def test_a_loop_hint_from_the_config_file_is_added_to_the_guard_note(tmp_path: Path, upstreams: Path) -> None:
    # Exemptions travel the same path (config -> call names -> SessionManager); their effect is
    # timing (polling pace), which the clock-driven traces cover.
    config = json.loads(upstreams.read_text(encoding="utf-8"))
    config["mcpServers"]["memory"]["votr"] = {
        "trust": "auto",
        "polling": ["read_graph"],
        "loop_hints": {"create_entities": "An entity that exists already is left as it is: use add_observations."},
    }
    configured = tmp_path / "configured.json"
    configured.write_text(json.dumps(config), encoding="utf-8")
    entity = {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}
    with anyio.fail_after(120):
        async with votr_client("stdio", *serve_args(configured)) as client:
            created = [await call(client, "memory__create_entities", entity) for _ in range(4)]
    assert all(len(texts(r)) == 1 for r in created[:3])
    note = texts(created[3])[-1]
    assert "loop guard" in note and "An entity that exists already is left as it is: use add_observations." in note


async def test_a_pinned_tool_is_in_every_search_answer_even_one_that_finds_nothing_else(tmp_path: Path) -> None:
    require_servers(("everything", "memory"))
    config = {
        "mcpServers": {
            "everything": {"command": str(NODE_BIN / "mcp-server-everything"), "args": ["stdio"]},
            "memory": {"command": str(NODE_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")},
                       "votr": {"pinned": ["read_graph"]}},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    with anyio.fail_after(90):
        async with votr_client("stdio", *serve_args(path)) as client:
            names, structured = await search(client, "echo a message back")
            pinned = [t for t in structured["tools"] if t["name"] == "memory__read_graph"]
            assert names[0] == ECHO and len(pinned) == 1 and pinned[0]["tier"] == "pinned"
            names, structured = await search(client, "zzqx vvbn")  # shares no word with any tool
            assert names == ["memory__read_graph"] and structured["abstained"] is True


async def test_calls_refused_while_their_server_restarts_do_not_count_as_a_loop(tmp_path: Path) -> None:
    import os
    import secrets
    import signal

    require_servers(("everything",))
    marker = secrets.token_hex(8)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {
        "command": str(NODE_BIN / "mcp-server-everything"), "args": ["stdio"], "env": {"VOTR_TEST_MARKER": marker}}}}))

    def upstream_pids() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and f"VOTR_TEST_MARKER={marker}".encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    with anyio.fail_after(120):
        async with votr_client("stdio", *serve_args(config)) as client:
            found, _ = await search(client, "echo a message back")
            assert ECHO in found and upstream_pids()
            for pid in upstream_pids():
                os.kill(pid, signal.SIGKILL)
            refused = []
            while len(refused) < 6:  # the agent retries the same call, as the refusal tells it to
                result = await call(client, ECHO, {"message": "hi"})
                if not result.is_error:
                    break
                refused.append(texts(result)[0])
                await anyio.sleep(0.05)
            assert any("cannot run now" in r for r in refused), refused
            assert not any("loop guard" in r for r in refused), refused
            while (result := await call(client, ECHO, {"message": "hi"})).is_error:
                assert "loop guard" not in texts(result)[0], texts(result)
                await anyio.sleep(0.2)
            assert texts(result) == ["Echo: hi"]
