"""Session isolation over HTTP against a real ``votr-mcp serve`` proxying real upstream servers.

The upstreams are those of tests/session/test_session_e2e.py: server-everything (whose ``echo``
is read-only) and server-memory. The loop guard is the witness of which session a call counted
in: three identical calls made with a forged id followed by one identical call in the victim's
own session would be the victim's 4th, and draw the guard's note, had they counted there.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
from mcp import Client
from mcp.client.sse import sse_client

from . import Finding
from ._http_wire import (
    HANDSHAKE,
    POST_HEADERS,
    http_server,
    initialize,
    modern,
    percentile,
    upstreams_config,
)

ECHO = "everything__echo"
ECHO_QUERY = "echo a message back"


@asynccontextmanager
async def proxy(transport: str, *extra: str) -> AsyncIterator[str]:
    """A ``votr-mcp serve`` over ``transport`` with the e2e upstreams, once ``echo`` is searchable."""
    with tempfile.TemporaryDirectory(prefix="votr-rel-sessions-") as folder:
        config = upstreams_config(Path(folder))
        args = ["--config", str(config), "--no-dense", "--store", "none", "--guard-max-repeats", "3", *extra]
        async with http_server(transport, args) as (url, _lines):
            async with Client(url if transport == "http" else sse_client(url)) as client:
                with anyio.fail_after(30):  # the upstreams start in the background
                    while ECHO not in [t["name"] for t in (await client.call_tool("search_tools", {"query": ECHO_QUERY})).structured_content["tools"]]:
                        await anyio.sleep(0.2)
            yield url


def texts(result: Any) -> list[str]:
    """The text blocks of a CallToolResult (SDK object) or of a raw ``result`` mapping."""
    content = result.get("content", []) if isinstance(result, dict) else result.content
    return [c["text"] if isinstance(c, dict) else c.text for c in content if (c.get("type") if isinstance(c, dict) else c.type) == "text"]


def is_error(result: Any) -> bool:
    return bool(result.get("isError")) if isinstance(result, dict) else bool(result.is_error)


class Modern:
    """Raw 2026-07-28 ``tools/call`` requests over one httpx client (no handshake, no connection
    identity: the ``session_id`` argument is the only thing that ties calls together)."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client, self.url = client, url

    async def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body, headers = modern("tools/call", {"name": name, "arguments": arguments})
        response = await self.client.post(self.url, json=body, headers=headers)
        if "text/event-stream" in response.headers.get("content-type", ""):
            data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
            messages = [json.loads(d) for d in data if d]
            message = next(m for m in messages if "result" in m or "error" in m)
        else:
            message = response.json()
        if "result" not in message:
            raise RuntimeError(f"{name} answered {response.status_code}: {str(message)[:300]}")
        return message["result"]

    async def search(self, query: str, session_id: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        arguments: dict[str, Any] = {"query": query, "max_results": 5}
        if session_id is not None:
            arguments["session_id"] = session_id
        result = await self.tool("search_tools", arguments)
        return result, result.get("structuredContent") or {}

    async def call(self, name: str, arguments: dict[str, Any], session_id: str | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {"name": name, "arguments": arguments}
        if session_id is not None:
            payload["session_id"] = session_id
        return await self.tool("call_tool", payload)


def forgeries(real: str) -> list[str]:
    """Ids near ``real``: one character changed, cut, grown, re-cased, padded, re-encoded."""
    flip = lambda i: real[:i] + ("A" if real[i] != "A" else "B") + real[i + 1:]
    near = [
        flip(0), flip(len(real) // 2), flip(len(real) - 1), real[:-1], real[1:], real[: len(real) // 2], real + "A", real + real,
        real.swapcase(), real.upper(), real.lower(), f" {real}", f"{real} ", f"{real}\n", f"{real}\x00", real[::-1],
        real.replace("-", "+").replace("_", "/"), real + "==", real[:-1] + "\u0391", "", "null", "*", "%", real[:8],
        "A" * len(real),
    ]
    return list(dict.fromkeys(f for f in near if f != real))  # a re-casing or re-encoding may give back the id itself


def guard_tripped(result: Any) -> bool:
    return any("loop guard" in t for t in texts(result)) or (is_error(result) and any("search_tools" in t for t in texts(result)))


async def forged_over_http() -> list[Finding]:
    with anyio.fail_after(55):
        async with proxy("http") as url, httpx.AsyncClient(timeout=15) as client:
            alice, bob = Modern(client, url), Modern(client, url)
            _, found = await alice.search(ECHO_QUERY)
            sid = found["session_id"]
            acted: list[str] = []
            leaked, answered = 0, Counter[str]()
            for i, forged in enumerate(forgeries(sid)):
                arguments = {"message": f"probe-{i}"}
                for _ in range(3):
                    got = await bob.call(ECHO, arguments, forged)
                    leaked += any(sid in t for t in texts(got))
                    answered["refused" if is_error(got) else "ran, with a note" if len(texts(got)) > 1 else "ran, no note"] += 1
                if guard_tripped(await alice.call(ECHO, arguments, sid)):
                    acted.append(repr(forged[:40]))
                    await alice.search(ECHO_QUERY, sid)  # re-bind, so one probe cannot spoil the next
            # The control: over stateless HTTP the exact id is the session's only credential, so
            # Bob's three calls with it do count there, and the witness must see it.
            for _ in range(3):
                await bob.call(ECHO, {"message": "control"}, sid)
            control = guard_tripped(await alice.call(ECHO, {"message": "control"}, sid))
            transport = await mutated_transport_ids(client, url)
    tried = len(forgeries(sid))
    t_acc, t_total, t_shown = transport
    return [
        Finding("http (2026-07-28, open mode): a session_id one edit away from a live one acts in nothing of that session",
                f"{len(acted)} of {tried} forged ids counted in the live session" + (f" ({', '.join(acted[:5])})" if acted else "")
                + f"; {3 * tried} forged calls: " + ", ".join(f"{n} {k}" for k, n in answered.most_common())
                + f"; control (the exact id, a bearer credential over stateless HTTP) seen by the witness: {'yes' if control else 'NO'}",
                not acted and control),
        Finding("http: no answer to a forged session_id names the session it resembles",
                f"{leaked} of {3 * tried} answers contain the live session_id", leaked == 0),
        Finding("http (handshake era): a mutated Mcp-Session-Id header reaches no session",
                f"{t_acc} of {t_total} requests with a mutated header served ({t_shown})", t_acc == 0),
    ]


async def mutated_transport_ids(client: httpx.AsyncClient, url: str) -> tuple[int, int, str]:
    """tools/call in a handshake-era session under mutations of its ``Mcp-Session-Id``."""
    opened = await client.post(url, json=initialize(), headers=POST_HEADERS)
    real = opened.headers["mcp-session-id"]
    headers = {**POST_HEADERS, "mcp-protocol-version": HANDSHAKE}
    await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**headers, "mcp-session-id": real})
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "call_tool", "arguments": {"name": ECHO, "arguments": {"message": "x"}}}}
    statuses: list[int] = []
    for forged in forgeries(real):
        if forged.strip() == real:  # HTTP drops the spaces around a header value: that is the real id
            continue
        try:
            statuses.append((await client.post(url, json=body, headers={**headers, "mcp-session-id": forged})).status_code)
        except (httpx.LocalProtocolError, UnicodeEncodeError):  # a control or non-ASCII character: not sendable
            continue
    served = sum(1 for s in statuses if 200 <= s < 300)
    return served, len(statuses), ", ".join(f"{n}x {s}" for s, n in Counter(statuses).most_common())


async def forged_over_sse() -> list[Finding]:
    """Handshake-era SSE: sessions belong to their connection, so even the exact id of another
    connection's session must act in nothing of it."""
    with anyio.fail_after(55):
        async with proxy("sse") as url, Client(sse_client(url)) as alice, Client(sse_client(url)) as bob:
            found = await alice.call_tool("search_tools", {"query": ECHO_QUERY, "max_results": 5})
            sid = found.structured_content["session_id"]
            acted: list[str] = []
            leaked, answered = 0, Counter[str]()
            tried = [sid, *forgeries(sid)]
            for i, forged in enumerate(tried):
                arguments = {"message": f"probe-{i}"}
                for _ in range(3):
                    got = await bob.call_tool("call_tool", {"name": ECHO, "arguments": arguments, "session_id": forged})
                    leaked += any(sid in t for t in texts(got))
                    answered["refused" if got.is_error else "ran, with a note" if len(texts(got)) > 1 else "ran, no note"] += 1
                mine = await alice.call_tool("call_tool", {"name": ECHO, "arguments": arguments})  # no id: her connection's session
                if guard_tripped(mine):
                    acted.append(repr(forged[:40]))
                    await alice.call_tool("search_tools", {"query": ECHO_QUERY})
    return [
        Finding("sse (open mode): another connection's session_id, exact or one edit away, acts in nothing of that session",
                f"{len(acted)} of {len(tried)} ids counted in the owner's session" + (f" ({', '.join(acted[:5])})" if acted else "")
                + f"; {3 * len(tried)} calls: " + ", ".join(f"{n} {k}" for k, n in answered.most_common()), not acted),
        Finding("sse: no answer to a borrowed or forged session_id names the owner's session",
                f"{leaked} of {3 * len(tried)} answers contain the owner's session_id", leaked == 0),
    ]


async def forged_strict() -> list[Finding]:
    with anyio.fail_after(55):
        async with proxy("http", "--binding-mode", "strict") as url, httpx.AsyncClient(timeout=15) as client:
            alice, bob = Modern(client, url), Modern(client, url)
            _, found = await alice.search(ECHO_QUERY)
            sid = found["session_id"]
            ran = []
            for i, forged in enumerate(forgeries(sid)):
                got = await bob.call(ECHO, {"message": f"strict-{i}"}, forged)
                if not is_error(got):
                    ran.append(repr(forged[:40]))
            own = await alice.call(ECHO, {"message": "mine"}, sid)
    tried = len(forgeries(sid))
    return [
        Finding("http (strict mode): a call with a forged session_id is refused",
                f"{len(ran)} of {tried} forged calls ran" + (f" ({', '.join(ran[:5])})" if ran else "")
                + f"; the owner's own call: {'ran' if not is_error(own) else 'refused'}", not ran and not is_error(own)),
    ]


async def many_sessions(sessions: int = 50, calls: int = 10) -> list[Finding]:
    latencies: list[float] = []
    errors: list[str] = []
    crossed = 0
    ids: list[str] = []
    with anyio.fail_after(55):
        async with proxy("http") as url, \
                httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=sessions * calls)) as client:
            modern_client = Modern(client, url)

            async def one_session(s: int) -> None:
                nonlocal crossed
                _, found = await modern_client.search(ECHO_QUERY)
                sid = found["session_id"]
                ids.append(sid)

                async def one_call(c: int) -> None:
                    nonlocal crossed
                    message = f"s{s}-c{c}"
                    began = time.perf_counter()
                    try:
                        got = await modern_client.call(ECHO, {"message": message}, sid)
                    except (httpx.HTTPError, RuntimeError, ValueError) as exc:
                        errors.append(f"{message}: {type(exc).__name__}: {str(exc)[:80]}")
                        return
                    latencies.append(time.perf_counter() - began)
                    body = texts(got)
                    if is_error(got) or body[:1] != [f"Echo: {message}"] or len(body) != 1:
                        errors.append(f"{message}: {body[:2]}")
                        crossed += any(t.startswith("Echo: s") and t != f"Echo: {message}" for t in body)

                async with anyio.create_task_group() as calls_group:
                    for c in range(calls):
                        calls_group.start_soon(one_call, c)

            began = time.monotonic()
            async with anyio.create_task_group() as tg:
                for s in range(sessions):
                    tg.start_soon(one_session, s)
            elapsed = time.monotonic() - began
    total = sessions * calls
    return [
        Finding(f"http: {sessions} sessions x {calls} parallel call_tool({ECHO}) each get their own answer, with no note",
                f"{len(errors)} errors of {total} calls, {crossed} with another call's answer, {len(set(ids))} distinct session ids "
                f"of {sessions}; p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p95 {percentile(latencies, 0.95) * 1000:.0f} ms, "
                f"max {max(latencies, default=0) * 1000:.0f} ms; {elapsed:.1f} s in all" + (f"; e.g. {'; '.join(errors[:3])}" if errors else ""),
                not errors and crossed == 0 and len(set(ids)) == sessions),
    ]


async def loop_guard(sessions: int = 10) -> list[Finding]:
    """The README's contract, in several sessions at once: calls 1-3 plain, the 4th returns its
    result with a note, the 5th is refused, a new search re-binds and the 6th runs."""
    steps: dict[str, int] = Counter()
    problems: list[str] = []
    with anyio.fail_after(55):
        async with proxy("http") as url, httpx.AsyncClient(timeout=15) as client:
            agent = Modern(client, url)

            async def one(s: int) -> None:
                _, found = await agent.search(ECHO_QUERY)
                sid = found["session_id"]
                arguments = {"message": f"loop-{s}"}
                expect = f"Echo: loop-{s}"
                checks: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
                    ("calls 1-3 plain", lambda r: not is_error(r) and texts(r) == [expect]),
                    ("calls 1-3 plain", lambda r: not is_error(r) and texts(r) == [expect]),
                    ("calls 1-3 plain", lambda r: not is_error(r) and texts(r) == [expect]),
                    ("4th: result + note", lambda r: not is_error(r) and texts(r)[:1] == [expect] and len(texts(r)) == 2
                     and "loop guard" in texts(r)[1] and "search_tools" in texts(r)[1]),
                    ("5th: refused", lambda r: is_error(r) and "search_tools" in " ".join(texts(r))),
                ]
                for step, ok in checks:
                    got = await agent.call(ECHO, arguments, sid)
                    if ok(got):
                        steps[step] += 1
                    else:
                        problems.append(f"session {s} {step}: {texts(got)[:2]}")
                _, again = await agent.search(ECHO_QUERY, sid)
                got = await agent.call(ECHO, arguments, sid)
                if any(t["name"] == ECHO for t in again.get("tools", [])) and not is_error(got) and texts(got)[:1] == [expect]:
                    steps["after a new search: runs"] += 1
                else:
                    problems.append(f"session {s} after search: {texts(got)[:2]}")

            async with anyio.create_task_group() as tg:
                for s in range(sessions):
                    tg.start_soon(one, s)
    shown = "; ".join(f"{k}: {v} of {sessions * (3 if k.startswith('calls') else 1)}" for k, v in steps.items())
    return [
        Finding(f"http: the loop guard in {sessions} concurrent sessions (4th identical call: result + note; 5th refused; re-search re-binds)",
                shown + (f"; off: {'; '.join(problems[:3])}" if problems else ""), not problems),
    ]


def check_forged_session_ids_http() -> list[Finding]:
    return anyio.run(forged_over_http)


def check_forged_session_ids_sse() -> list[Finding]:
    return anyio.run(forged_over_sse)


def check_forged_session_ids_strict() -> list[Finding]:
    return anyio.run(forged_strict)


def check_many_parallel_sessions() -> list[Finding]:
    return anyio.run(many_sessions)


def check_loop_guard() -> list[Finding]:
    return anyio.run(loop_guard)


CHECKS = [check_forged_session_ids_http, check_forged_session_ids_sse, check_forged_session_ids_strict,
          check_many_parallel_sessions, check_loop_guard]
