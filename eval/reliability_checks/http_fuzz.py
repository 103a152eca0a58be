"""Fuzz the streamable HTTP endpoint ``/mcp`` of a real ``votr-mcp serve --transport http``.

About 500 seeded requests: bodies that are not JSON, JSON that is not JSON-RPC, JSON-RPC with
wrong types and huge ids, batches, bad arguments to both tools, wrong Content-Type and Accept,
and bodies of a few MB (under and over the SDK's 4 MiB limit), each sent in one of four ways:
with no session (handshake era), in a live handshake-era session, as a 2026-07-28 request, and
with an unknown protocol version. An *answer* is a complete HTTP response within the timeout;
its body is classified (JSON-RPC error, JSON-RPC result, empty 202, plain-text refusal).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2 as httpx

from . import Finding
from ._http_wire import (
    HANDSHAKE,
    MODERN,
    POST_HEADERS,
    http_server,
    initialize,
    modern,
    serve_catalog,
)

SEED = 20260728
TOTAL = 500
TIMEOUT = 10.0  # seconds one request may take before it counts as a hang
LIMIT = 4 * 1024 * 1024  # the SDK's default request body limit


@dataclass(frozen=True, slots=True)
class Case:
    label: str
    body: bytes
    invalid: bool  # not a JSON-RPC message at all: the answer must be a JSON-RPC error
    headers: tuple[tuple[str, str], ...] = ()  # replaces the POST headers when given


def dumps(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


def rpc(method: Any, params: Any = None, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return message


def call(name: Any, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments}, request_id)


def fixed_cases() -> list[Case]:
    """Hand-picked hostile bodies; ``invalid`` marks those that are no JSON-RPC message at all."""
    valid = dumps(rpc("tools/list"))
    not_json = [b"", b"{", b"}", b"[", b"]", b"{\"jsonrpc\":", valid[:-1], valid + b"}", valid + b" trailing", b"\xef\xbb\xbf" + valid,
                b"\xff\xfe{\x00}\x00", b"\x00" * 64, b"{'jsonrpc': '2.0'}", b"{\"a\":1,}", b"/* c */" + valid, b"NaN",
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}", b"[" * 100_000, b"{\"a\":" * 50_000,
                b"{\"id\":" + b"9" * 10_000 + b"}", b"\"\\ud800\"", "{\"m\":\"\u2028\"".encode()]
    not_rpc = [b"null", b"true", b"1", b"-0", b"1e999", b"\"x\"", b"[]", b"{}", b"[1,2,3]", b"[[]]", b"[null]", b"[{}]",
               dumps({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}), dumps({"id": 1, "method": "tools/list"}),
               dumps({"jsonrpc": 2, "id": 1, "method": "tools/list"}), dumps({"jsonrpc": "2.0", "id": 1}),
               dumps(rpc(123)), dumps(rpc(None)), dumps(rpc(["tools/list"])), dumps(rpc({"m": 1})),
               dumps(rpc("tools/list", request_id={"a": 1})), dumps(rpc("tools/list", request_id=[1])),
               dumps(rpc("tools/list", request_id=True)), dumps({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1}}),
               dumps({"jsonrpc": "2.0", "method": "tools/list", "id": 1, "params": "x"})]
    cases = [Case(f"not JSON #{i}", b, True) for i, b in enumerate(not_json)]
    cases += [Case(f"not JSON-RPC #{i}", b, True) for i, b in enumerate(not_rpc)]
    odd = [
        rpc("tools/list", request_id=10**400), rpc("tools/list", request_id=-(2**63)), rpc("tools/list", request_id=1.5),
        rpc("tools/list", request_id=1e308), rpc("tools/list", request_id=""), rpc("tools/list", request_id="x" * 100_000),
        rpc("tools/list", request_id=None), rpc(""), rpc("a" * 10_000), rpc("tools/list\u0000"), rpc("../../etc/passwd"),
        rpc("tools/list", []), rpc("tools/list", 5), rpc("tools/list", {"cursor": {"a": 1}}), rpc("tools/list", {"_meta": 5}),
        rpc("initialize", {"protocolVersion": 5, "capabilities": "x"}), rpc("initialize", {}), rpc("initialize", None),
        rpc("ping", {"x": [[[[[]]]]]}), rpc("resources/read", {"uri": "file:///etc/passwd"}), rpc("prompts/get", {"name": 1}),
        rpc("logging/setLevel", {"level": "everything"}), rpc("completion/complete", {}), rpc("notifications/cancelled", {"requestId": 1}),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"x": 1}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 77, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 78, "error": {"code": -1, "message": "client error"}},
        call(5, {}), call(None, None), call("search_tools", []), call("search_tools", "query"), call("search_tools", {}),
        call("search_tools", {"query": {"a": 1}}), call("search_tools", {"query": ""}), call("search_tools", {"query": "list the files " * 20_000}),
        call("search_tools", {"query": "list files", "max_results": -5}), call("search_tools", {"query": "list files", "max_results": 10**30}),
        call("search_tools", {"query": "list files", "max_results": "5"}), call("search_tools", {"query": "list", "max_results": 1e308}),
        call("search_tools", {"query": "list", "session_id": {"a": 1}}), call("search_tools", {"query": "list", "session_id": "x" * 100_000}),
        call("search_tools", {"query": "\ud800\udfff \u0000 \u202e"}), call("call_tool", {}), call("call_tool", {"name": 5}),
        call("call_tool", {"name": "../../etc/passwd", "arguments": {}}), call("call_tool", {"name": "github__list_pull_requests", "arguments": []}),
        call("call_tool", {"name": "github__list_pull_requests", "arguments": {"owner": 1}}), call("call_tool", {"name": "call_tool", "arguments": {"name": "call_tool"}}),
        call("call_tool", {"name": "search_tools", "arguments": {"query": "x"}}), call("call_tool", {"name": "x" * 100_000}),
        call("nonexistent", {}), call("search_tools", {"query": "deep", "extra": json.loads("[" * 500 + "]" * 500)}),
    ]
    cases += [Case(f"odd JSON-RPC #{i}", dumps(m), False) for i, m in enumerate(odd)]
    batch = [rpc("tools/list", request_id=i) for i in range(2)]
    batches = [batch, [*batch, 1, "x"], [batch], [rpc("ping", request_id=i) for i in range(1000)],
               [initialize(i) for i in range(200)], [{"jsonrpc": "2.0", "method": "notifications/initialized"}] * 50]
    cases += [Case(f"batch #{i}", dumps(b), False) for i, b in enumerate(batches)]
    bad_headers = [
        {"Accept": POST_HEADERS["Accept"]}, {**POST_HEADERS, "Content-Type": "text/plain"},
        {**POST_HEADERS, "Content-Type": "application/x-www-form-urlencoded"}, {**POST_HEADERS, "Content-Type": "multipart/form-data; boundary=x"},
        {**POST_HEADERS, "Content-Type": "application/json; charset=latin-1"}, {**POST_HEADERS, "Content-Type": "APPLICATION/JSON"},
        {**POST_HEADERS, "Content-Type": "application/jsonx"}, {"Content-Type": "application/json"}, {**POST_HEADERS, "Accept": "text/html"},
        {**POST_HEADERS, "Accept": "application/json"}, {**POST_HEADERS, "Accept": "text/event-stream"}, {**POST_HEADERS, "Accept": "*/*"},
        {**POST_HEADERS, "Content-Encoding": "gzip"},
    ]
    cases += [Case(f"headers #{i}", valid, False, tuple(h.items())) for i, h in enumerate(bad_headers)]
    # The bulk rides in an argument the search ignores: a long query is check_long_queries' business.
    big = {mb: dumps(call("search_tools", {"query": "list files", "padding": "y" * (mb * 1024 * 1024)})) for mb in (3, 6)}
    cases += [Case("3 MB body", big[3], False), Case("6 MB body (over the limit)", big[6], False),
              Case("8 MB of spaces", b" " * (8 * 1024 * 1024), True)]
    return cases


def mutated(rng: random.Random, seeds: list[bytes]) -> bytes:
    """A seed body with a few bytes flipped, cut, duplicated or spliced."""
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        op, at = rng.randrange(5), rng.randrange(len(data))
        if op == 0:
            data[at] = rng.randrange(256)
        elif op == 1:
            del data[at:at + rng.randint(1, 8)]
        elif op == 2:
            data[at:at] = data[at:at + rng.randint(1, 32)]
        elif op == 3:
            data[at:at] = rng.choice([b"{", b"}", b"[", b"]", b",", b":", b"\"", b"\\", b"null", b"1e999", b"\x00", b"\xc3("])
        else:
            data = data[:at]
    return bytes(data)


def cases(seed: int = SEED, total: int = TOTAL) -> list[Case]:
    rng = random.Random(seed)
    fixed = fixed_cases()
    seeds = [dumps(m) for m in (rpc("tools/list"), initialize(), call("search_tools", {"query": "list files", "max_results": 3}),
                                call("call_tool", {"name": "github__list_pull_requests", "arguments": {"owner": "a", "repo": "b"}}),
                                [rpc("ping"), rpc("tools/list", request_id=2)])]
    return fixed + [Case(f"mutation #{i}", mutated(rng, seeds), False) for i in range(max(0, total - len(fixed)))]


def enveloped(body: bytes) -> tuple[bytes, dict[str, str]]:
    """``body`` as a 2026-07-28 request that gets past the envelope checks when it is a JSON
    object with a string method and object (or no) params, so the fuzzing reaches the tools."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return body, {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"}
    if not (isinstance(message, dict) and isinstance(message.get("method"), str) and isinstance(message.get("params", {}), dict)):
        return body, {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"}
    params = dict(message.get("params") or {})
    params["_meta"] = {**(params.get("_meta") if isinstance(params.get("_meta"), dict) else {}),
                       "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    _, headers = modern(message["method"], params)
    headers = {k: v for k, v in headers.items() if k not in POST_HEADERS}
    if not isinstance(params.get("name"), str):
        headers.pop("Mcp-Name", None)
    for name in ("Mcp-Name", "Mcp-Method"):  # a header cannot carry what the body can
        if name in headers and not (headers[name].isascii() and headers[name].isprintable()):
            del headers[name]
    return json.dumps({**message, "params": params}, allow_nan=True).encode(), headers


def classify(response: httpx.Response) -> str:
    """What came back: 'jsonrpc-error', 'jsonrpc-result', 'empty-2xx', 'plain-4xx', '5xx' or 'malformed'."""
    if response.status_code >= 500:
        return "5xx"
    text = response.text
    kind = response.headers.get("content-type", "")
    if "text/event-stream" in kind:
        payloads = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    elif "json" in kind:
        payloads = [text]
    else:
        return "empty-2xx" if response.status_code < 300 and not text.strip() else ("plain-4xx" if response.status_code < 500 else "malformed")
    messages: list[Any] = []
    for payload in payloads:
        if not payload:
            continue
        try:
            got = json.loads(payload)
        except ValueError:
            return "malformed"
        messages.extend(got if isinstance(got, list) else [got])
    if not messages:
        return "empty-2xx" if response.status_code < 300 else "malformed"
    if any(isinstance(m, dict) and isinstance(m.get("error"), dict) and isinstance(m["error"].get("code"), int) for m in messages):
        return "jsonrpc-error"
    if all(isinstance(m, dict) and "result" in m for m in messages):
        return "jsonrpc-result"
    return "malformed"


async def fuzz() -> list[Finding]:
    rng = random.Random(SEED + 1)
    plan = cases()
    with anyio.fail_after(55):
        async with http_server("http", serve_catalog()) as (url, lines), \
                httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT)) as client:
            opened = await client.post(url, json=initialize(), headers=POST_HEADERS)
            live = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
            await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**POST_HEADERS, **live})
            eras = {
                "no session": {},
                "live session": live,
                "2026-07-28": {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "search_tools"},
                "unknown version": {"mcp-protocol-version": "9999-01-01"},
            }
            weights = {"no session": 1, "live session": 3, "2026-07-28": 1, "2026-07-28 enveloped": 4, "unknown version": 1}
            kinds: Counter[str] = Counter()
            invalid_as_error = invalid_total = 0
            unanswered: list[str] = []
            not_errors: list[str] = []
            server_errors: list[str] = []
            slowest = (0.0, "")
            started = time.monotonic()
            for case in plan:
                era = rng.choices(list(weights), list(weights.values()))[0]
                if era == "2026-07-28 enveloped" and not case.invalid:
                    body, extra = enveloped(case.body)
                else:  # an invalid body is sent as it is (re-encoding would repair a BOM or a lone surrogate)
                    body, extra = case.body, eras["2026-07-28" if era == "2026-07-28 enveloped" else era]
                headers = {**(dict(case.headers) if case.headers else POST_HEADERS), **extra}
                began = time.perf_counter()
                try:
                    response = await client.post(url, content=body, headers=headers)
                except httpx.LocalProtocolError:  # the client would not send it (a control character in a header)
                    kinds["not sendable"] += 1
                    continue
                except httpx.HTTPError as exc:
                    unanswered.append(f"{case.label} [{era}]: {type(exc).__name__}")
                    kinds["no answer"] += 1
                    continue
                took = time.perf_counter() - began
                slowest = max(slowest, (took, f"{case.label} [{era}]"))
                kind = classify(response)
                kinds[kind] += 1
                if kind == "5xx":
                    server_errors.append(f"{case.label} [{era}]: {response.status_code}")
                if case.invalid and not case.headers and len(case.body) <= LIMIT:
                    invalid_total += 1
                    if kind == "jsonrpc-error":
                        invalid_as_error += 1
                    else:
                        not_errors.append(f"{case.label} [{era}]: {response.status_code} {response.text[:60]!r}")
            elapsed = time.monotonic() - started
            # Afterwards: a fresh 2026-07-28 tools/list and the live session still work.
            body, modern_headers = modern("tools/list")
            fresh = await client.post(url, json=body, headers=modern_headers)
            in_live = await client.post(url, json=rpc("tools/list", request_id=99), headers={**POST_HEADERS, **live})
    tools_after = sorted(t["name"] for t in fresh.json().get("result", {}).get("tools", [])) if fresh.status_code == 200 else []
    live_ok = in_live.status_code == 200 and classify(in_live) == "jsonrpc-result"
    tracebacks = sum(1 for line in lines if "Traceback" in line)
    shown = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    answered = len(plan) - len(unanswered) - kinds["not sendable"]
    return [
        Finding(f"http /mcp: every one of {len(plan)} seeded malformed requests (seed {SEED}) gets a complete HTTP answer within {TIMEOUT:g} s",
                f"{answered} of {len(plan) - kinds['not sendable']} sent answered in {elapsed:.1f} s; slowest {slowest[0] * 1000:.0f} ms ({slowest[1]}); {shown}"
                + (f"; unanswered: {'; '.join(unanswered[:5])}" if unanswered else ""), not unanswered),
        Finding("http /mcp: no malformed request draws a 5xx",
                f"{len(server_errors)} of {len(plan)} answered 5xx" + (f" ({'; '.join(server_errors[:5])})" if server_errors else ""),
                not server_errors),
        Finding("http /mcp: a body that is not JSON or not a JSON-RPC message (right headers, under 4 MiB) is answered with a JSON-RPC error",
                f"{invalid_as_error} of {invalid_total} answered with a JSON-RPC error object"
                + (f"; not: {'; '.join(not_errors[:5])}" if not_errors else ""), invalid_as_error == invalid_total),
        Finding("http /mcp: after the fuzzing the server still lists its tools and the live session still answers",
                f"2026-07-28 tools/list: {fresh.status_code} {tools_after}; live session tools/list: {in_live.status_code}",
                tools_after == ["call_tool", "search_tools"] and live_ok),
        Finding("http /mcp: malformed requests leave no traceback in the server log",
                f"{tracebacks} tracebacks in {len(lines)} log lines", tracebacks == 0),
    ]


async def long_queries() -> list[Finding]:
    """How search_tools time grows with the length of one unbroken token in the query (a pasted
    number, hash or blob), and whether a concurrent request waits for it."""
    sizes = (200, 400, 800)
    timings: dict[str, list[float]] = {"digits": [], "letters x10": []}
    with anyio.fail_after(55):
        async with http_server("http", serve_catalog()) as (url, _lines), \
                httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as client:

            async def search(query: str) -> float:
                body, headers = modern("tools/call", {"name": "search_tools", "arguments": {"query": query}})
                began = time.perf_counter()
                response = await client.post(url, json=body, headers=headers)
                if classify(response) != "jsonrpc-result":
                    raise RuntimeError(f"search of {len(query)} characters answered {response.status_code}: {response.text[:200]}")
                return time.perf_counter() - began

            await search("list files")  # warm
            for n in sizes:
                timings["digits"].append(await search("list files " + "1" * n))
                timings["letters x10"].append(await search("list files " + "y" * (10 * n)))
            waited: list[float] = []

            async def list_tools_meanwhile() -> None:
                await anyio.sleep(0.2)
                body, headers = modern("tools/list")
                began = time.perf_counter()
                await client.post(url, json=body, headers=headers)
                waited.append(time.perf_counter() - began)

            async with anyio.create_task_group() as tg:
                tg.start_soon(list_tools_meanwhile)
                blocking = await search("list files " + "1" * sizes[-1])
    growth = timings["digits"][-1] / max(timings["digits"][-2], 1e-3)
    shown = "; ".join(f"{kind}: " + ", ".join(f"{n * (10 if 'x10' in kind else 1):,} chars {t:.2f} s" for n, t in zip(sizes, ts))
                      for kind, ts in timings.items())
    slowest = max(max(ts) for ts in timings.values())
    return [
        Finding("http search_tools: a query with one long token (800 digits, 8,000 letters) is answered within 1 s",
                f"{shown}; x{growth:.1f} per doubling of the digits", slowest < 1.0),
        Finding("http: one slow search does not hold up another client's tools/list",
                f"tools/list sent 0.2 s into a {blocking:.2f} s search waited {waited[0]:.2f} s" if waited else "tools/list never answered",
                bool(waited) and waited[0] < 0.5),
    ]


def check_http_fuzz() -> list[Finding]:
    return anyio.run(fuzz)


def check_long_queries() -> list[Finding]:
    return anyio.run(long_queries)


CHECKS = [check_http_fuzz, check_long_queries]
