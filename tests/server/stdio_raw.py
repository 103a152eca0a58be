"""Talking to a real ``votr-mcp serve`` over raw stdio pipes (tests/server and eval/reliability_checks):

- malformed lines, each with the answer JSON-RPC 2.0 §5 requires, and an exchange that checks
  every answer;
- the time of one large tool result, read without the SDK's client.

The expected answer of each line is fixed by how the line was made, not by reading it again:
an id of its own (``"f17"``) when the id can be read, else null, and the error codes allowed.
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from votr_serving import SERVE, serve_env

from votr_mcp.upstream._stdio import LineSplitter

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
OK = 0  # a result, not an error: the line was a valid request after all


@dataclass(frozen=True)
class Case:
    """One line to send. ``answer_id`` is the id the answer must carry (None: ``"id": null``);
    ``codes`` the codes it may have; no codes means no answer is due (notifications, responses, blank)."""

    kind: str
    line: bytes
    answer_id: Any = None
    codes: frozenset[int] = frozenset()


def _request(request_id: Any, method: str = "ping", **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _case(kind: str, value: Any, answer_id: Any = None, *codes: int) -> Case:
    return Case(kind, value if isinstance(value, bytes) else dump(value), answer_id, frozenset(codes))


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def make_case(rng: random.Random, i: int) -> Case:
    """The i-th case: a kind picked by ``rng``, with id ``f{i}`` where the line has a readable one."""
    rid = f"f{i}"
    kind = rng.choice(KINDS)
    junk = bytes(b for b in rng.randbytes(rng.randint(1, 200)) if b != 10)  # no newline: one line
    if kind == "random bytes":
        return _case(kind, b"@" + junk, None, PARSE_ERROR)
    if kind == "invalid UTF-8":
        return _case(kind, b"\xff\xfe" + junk, None, PARSE_ERROR)
    if kind == "truncated JSON":
        whole = dump(_request(rid, "tools/call", params={"name": "search_tools", "arguments": {"query": "read a file"}}))
        return _case(kind, whole[: rng.randint(1, len(whole) - 1)], None, PARSE_ERROR)
    if kind == "not an object":
        value = rng.choice([5, -1.5, "ping", None, True, [], [_request(rid)], [1, 2], "{}"])
        return _case(kind, value, None, INVALID_REQUEST)
    if kind == "wrong jsonrpc":
        version = rng.choice(["1.0", "2", 2.0, 2, None, ""])
        base = _request(rid)
        return _case(kind, _without(base, "jsonrpc") if rng.random() < 0.2 else {**base, "jsonrpc": version}, rid, INVALID_REQUEST)
    if kind == "bad method":
        base = _request(rid)
        return _case(kind, _without(base, "method") if rng.random() < 0.2 else {**base, "method": rng.choice([5, None, [], {}, True])}, rid, INVALID_REQUEST)
    if kind == "bad id type":
        return _case(kind, _request(rng.choice([1.5, True, False, None, {}, [], [rid], -0.0])), None, INVALID_REQUEST)
    if kind == "bad params":
        return _case(kind, _request(rid, params=rng.choice([[1], "x", 5, True, [{"a": 1}]])), rid, INVALID_REQUEST)
    if kind == "invalid notification":
        return _case(kind, {"jsonrpc": rng.choice(["1.0", 2]), "method": rng.choice(["ping", 5])}, None, INVALID_REQUEST)
    if kind == "notification":
        return _case(kind, {"jsonrpc": "2.0", "method": rng.choice(["notifications/nope", "x/y"]), "params": rng.choice([{}, [1]])})
    if kind == "unknown method":
        return _case(kind, _request(rid, rng.choice(["nope", "tools/nope", "", "ping/"])), rid, METHOD_NOT_FOUND)
    if kind == "huge id":
        big: Any = rng.choice([10**30 + i, -(10**25) - i, rid + "x" * rng.randint(10_000, 100_000)])
        return _case(kind, _request(big), big, OK)
    if kind == "deeply nested":
        depth = rng.choice([300, 500, 100_000])
        line = dump(_request(rid))[:-1] + b',"params":{"a":' + b"[" * depth + b"]" * depth + b"}}"
        # Past the parser's depth the id cannot be read at all.
        return _case(kind, line, None, PARSE_ERROR) if depth > 10_000 else _case(kind, line, rid, INVALID_REQUEST)
    if kind == "invalid UTF-8 in a string":
        return _case(kind, dump(_request(rid, params={"a": "~"})).replace(b"~", b"\xff\xc3("), rid, OK)  # read as U+FFFD
    if kind == "control character in a string":
        return _case(kind, dump(_request(rid, params={"a": "~"})).replace(b"~", bytes([rng.randint(0, 31)]).replace(b"\n", b"\x00")), None, PARSE_ERROR)
    if kind == "malformed response":
        return _case(kind, rng.choice([{"jsonrpc": "2.0", "id": rid, "result": 5}, {"jsonrpc": "2.0", "id": rid, "error": "x"}]))
    if kind == "blank":
        return _case(kind, rng.choice([b"", b" ", b"\t", b"\r"]))
    raise AssertionError(kind)


KINDS = (
    "random bytes", "invalid UTF-8", "truncated JSON", "not an object", "wrong jsonrpc", "bad method", "bad id type",
    "bad params", "invalid notification", "notification", "unknown method", "huge id", "deeply nested",
    "invalid UTF-8 in a string", "control character in a string", "malformed response", "blank",
)


def make_cases(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    return [make_case(rng, i) for i in range(n)]


@dataclass
class Outcome:
    """What came back: how many cases were answered as required, and every departure from it."""

    due: int = 0
    answered: int = 0
    problems: list[str] = field(default_factory=list)
    tools_after: list[str] = field(default_factory=list)  # tool names of a tools/list sent after the fuzz


INITIALIZE = _request("init", "initialize", params={"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}})
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
FINAL = _request("final", "tools/list")


async def exchange(cases: Sequence[Case], args: Sequence[str], *, timeout: float = 60.0) -> Outcome:
    """Send ``cases`` as raw lines to a fresh ``votr-mcp serve *args`` (after initializing), then a
    tools/list; read until every due answer and the tools/list answer came, or ``timeout``."""
    by_id = {json.dumps(c.answer_id): c for c in cases if c.codes and c.answer_id is not None}
    null_due = Counter(code for c in cases if c.codes and c.answer_id is None for code in c.codes)
    outcome = Outcome(due=sum(1 for c in cases if c.codes))
    seen_ids: Counter[str] = Counter()
    null_seen: Counter[int] = Counter()
    final = anyio.Event()
    process = await anyio.open_process([*SERVE, *args], env=serve_env(), stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout

    def settled() -> bool:
        return final.is_set() and len(seen_ids) >= len(by_id) and sum(null_seen.values()) >= sum(null_due.values())

    async def read() -> None:
        split = LineSplitter()
        async for chunk in stdout:
            for raw in split.feed(chunk):
                note(raw)
            if settled():
                return

    def note(raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            outcome.problems.append(f"not JSON on stdout: {raw[:120]!r}")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or ("result" in message) == ("error" in message):
            outcome.problems.append(f"not a JSON-RPC response: {raw[:120]!r}")
            return
        code = message["error"]["code"] if "error" in message else OK
        if "error" in message and not isinstance(message["error"].get("message"), str):
            outcome.problems.append(f"error without a message: {raw[:120]!r}")
        key = json.dumps(message.get("id"))
        if message.get("id") in ("init",):
            return
        if message.get("id") == "final":
            outcome.tools_after = [t["name"] for t in message.get("result", {}).get("tools", [])]
            final.set()
        elif message.get("id") is None:
            null_seen[code] += 1
        elif key not in by_id:
            outcome.problems.append(f"answer to an id never sent: {raw[:120]!r}")
        else:
            seen_ids[key] += 1
            case = by_id[key]
            if seen_ids[key] > 1:
                outcome.problems.append(f"{case.kind}: answered {seen_ids[key]} times")
            elif code not in case.codes:
                outcome.problems.append(f"{case.kind}: code {code}, expected {sorted(case.codes)}: {case.line[:80]!r}")
            else:
                outcome.answered += 1

    async def write() -> None:
        stdin = process.stdin
        assert stdin is not None
        for value in (INITIALIZE, INITIALIZED):
            await stdin.send(dump(value) + b"\n")
        for case in cases:
            await stdin.send(case.line + b"\n")
        await stdin.send(dump(FINAL) + b"\n")

    try:
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                await read()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)
    for code, due in null_due.items():
        got = null_seen.get(code, 0)
        outcome.answered += min(got, due)
        if got != due:
            outcome.problems.append(f"{got} answers with id null and code {code}, expected {due}")
    for code in set(null_seen) - set(null_due):
        outcome.problems.append(f"{null_seen[code]} unexpected answers with id null and code {code}")
    missing = [by_id[k] for k in by_id if k not in seen_ids]
    outcome.problems += [f"{c.kind}: no answer: {c.line[:80]!r}" for c in missing[:20]]
    if missing[20:]:
        outcome.problems.append(f"... and {len(missing) - 20} more unanswered")
    if not final.is_set():
        outcome.problems.append("tools/list after the fuzz was never answered")
    return outcome


async def _stop(process: anyio.abc.Process) -> None:
    if process.stdin is not None:
        await process.stdin.aclose()
    with anyio.move_on_after(10):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
    await process.aclose()


async def time_big_call(args: list[str], size: int) -> float:
    """Seconds for one call_tool of ``big__blob(size)`` through ``votr-mcp serve *args`` over raw stdio pipes
    (not the SDK's client, whose reader is itself quadratic in the line length)."""
    with tempfile.TemporaryDirectory(prefix="votr-test-data-") as home:
        process = await anyio.open_process([*SERVE, *args], env=serve_env(data_home=home), stderr=subprocess.DEVNULL)
        try:
            with anyio.fail_after(60):
                return await _call_big(process, size)
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)


async def _call_big(process: anyio.abc.Process, size: int) -> float:
    assert process.stdin is not None and process.stdout is not None
    split, ready = LineSplitter(), []

    async def rpc(request_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await process.stdin.send(dump({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + b"\n")  # type: ignore[union-attr]
        while True:
            while not ready:
                ready.extend(split.feed(await process.stdout.receive()))  # type: ignore[union-attr]
            message = json.loads(ready.pop(0))
            if message.get("id") == request_id:
                return message

    await rpc("init", "initialize", INITIALIZE["params"])
    await process.stdin.send(dump(INITIALIZED) + b"\n")
    blob = {"name": "call_tool", "arguments": {"name": "big__blob", "arguments": {"size": 10}}}
    while (await rpc("warm", "tools/call", blob))["result"].get("isError"):  # the upstream is still starting
        await anyio.sleep(0.1)
    blob["arguments"]["arguments"]["size"] = size  # type: ignore[index]
    started = time.perf_counter()
    message = await rpc("big", "tools/call", blob)
    seconds = time.perf_counter() - started
    assert len(message["result"]["content"][0]["text"]) == size
    return seconds
