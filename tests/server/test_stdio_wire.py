"""What goes over stdio: every line that deserves an answer gets exactly one (JSON-RPC 2.0 §5),
and a large message costs time linear in its size."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from stdio_raw import KINDS, exchange, make_cases, time_big_call
from votr_serving import CATALOG, HERE

from votr_mcp.server.jsonrpc import Reply, read_line

FAST_SERVE = ["--catalog", str(CATALOG), "--no-dense", "--store", "none"]


def answer(line: str) -> dict[str, Any] | None:
    got = read_line(line)
    assert got is None or isinstance(got, Reply), f"{line!r} was taken as a valid message"
    return None if got is None else json.loads(got.error.model_dump_json(by_alias=True, exclude_unset=True))


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        # The examples of JSON-RPC 2.0 §7, one message a line.
        ('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', None, -32700),
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', None, -32600),
        ("[]", None, -32600),
        ("[1]", None, -32600),
        ('[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}]', None, -32600),
        # Made for MCP: the id is read back whenever it is a string or an integer.
        ('{"jsonrpc": "1.0", "id": 7, "method": "ping"}', 7, -32600),
        ('{"jsonrpc": "2.0", "id": "a", "method": ["ping"]}', "a", -32600),
        ('{"jsonrpc": "2.0", "id": "a"}', "a", -32600),
        ('{"jsonrpc": "2.0", "id": "a", "method": "ping", "params": [1]}', "a", -32600),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', None, -32600),
        ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, -32600),
        ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, -32600),
        ('{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": ' + "[" * 300 + "]" * 300 + "}}", 3, -32600),
        ('{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}", None, -32700),
        ("\ufffd\ufffd", None, -32700),
    ],
)
def test_a_line_that_is_not_a_valid_request_is_answered_with_its_id_when_readable(line: str, request_id: Any, code: int) -> None:
    got = answer(line)
    assert got is not None
    assert got["id"] == request_id
    assert got["error"]["code"] == code
    assert got["error"]["message"].startswith(("Parse error: ", "Invalid Request: "))


@pytest.mark.parametrize(
    "line",
    [
        "",
        "  \r\n",
        '{"jsonrpc": "2.0", "method": "notifications/nope", "params": [1]}',  # a notification is never answered
        '{"jsonrpc": "2.0", "id": 4, "result": 5}',  # nor a response, however malformed
        '{"jsonrpc": "2.0", "id": 4, "error": "no"}',
    ],
)
def test_blank_lines_notifications_and_responses_get_no_answer(line: str) -> None:
    assert answer(line) is None


def test_valid_messages_pass_through_even_a_peers_error_response() -> None:
    got = read_line('{"jsonrpc": "2.0", "id": 100000000000000000000000000000, "method": "tools/list"}')
    assert isinstance(got, types.JSONRPCRequest)
    assert got.id == 10**29
    error = read_line('{"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "no"}}')
    assert isinstance(error, types.JSONRPCError)  # the client's answer to a server request: not echoed back


@pytest.mark.slow
@pytest.mark.anyio
async def test_every_malformed_stdio_line_that_deserves_an_answer_gets_exactly_one_and_serving_goes_on() -> None:
    cases = make_cases(500, seed=16)
    assert {c.kind for c in cases} == set(KINDS)
    with anyio.fail_after(60):
        outcome = await exchange(cases, FAST_SERVE, timeout=30)
    assert outcome.problems == []
    assert outcome.answered == outcome.due > 300
    assert outcome.tools_after == ["search_tools", "call_tool"]


BIG = 50_000_000


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_50_mb_upstream_result_crosses_stdio_in_linear_time(tmp_path: Path) -> None:
    # Re-splitting the growing line on each 64 KiB chunk took 13 s for 50 MB; linear reading takes < 1 s.
    config = tmp_path / "upstreams.json"
    config.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": [str(HERE / "big_server.py")]}}}))
    seconds = await time_big_call(["--config", str(config), "--no-dense", "--store", "none"], BIG)
    assert seconds < 5.0, f"a {BIG / 1e6:.0f} MB result took {seconds:.1f} s over stdio"
