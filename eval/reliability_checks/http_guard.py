"""DNS rebinding and the bearer token: hostile ``Host``/``Origin`` headers and bad credentials
against a real ``votr-mcp serve --transport http|sse``.

A request is *accepted* when it is served (2xx). Every hostile request is a well-formed MCP
request that a local client would have served, so any 2xx is a request the guard let through.
Hostile values come in two groups: what a browser can send for a page that is not local (the
DNS-rebinding and cross-site attacks: foreign names, other IPs, other spellings of loopback,
an empty Host), and spellings no browser can produce (a Host with text after the port, no Host
at all, two Host headers), which only a local non-browser program can send.
"""

from __future__ import annotations

import base64
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable

import anyio
import httpx2 as httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from . import Finding
from ._http_wire import (
    HANDSHAKE,
    POST_HEADERS,
    http_server,
    initialize,
    modern,
    raw_status,
    serve_catalog,
)

Target = Callable[[dict[str, str]], Awaitable[int | None]]


def browser_hosts(port: str) -> list[str]:
    """Host values a browser sends for a page that is not this server's loopback address."""
    return [
        f"evil.com:{port}", "evil.com", f"localhost.evil.com:{port}", "localhost.evil.com", f"127.0.0.1.nip.io:{port}",
        f"attacker.example:{port}", f"10.0.0.1:{port}", f"192.168.1.20:{port}", f"0.0.0.0:{port}", f"127.0.0.2:{port}",
        f"[fe80::1]:{port}", f"[::ffff:127.0.0.1]:{port}", f"[0:0:0:0:0:0:0:1]:{port}", f"[::]:{port}",
        f"2130706433:{port}", f"0x7f000001:{port}", f"127.1:{port}", f"LOCALHOST:{port}", f"LocalHost:{port}",
        f"sub.localhost:{port}", f"localhost.:{port}", f"127.0.0.1.:{port}", "",
    ]


def browser_origins(port: str) -> list[str]:
    """Origin values of pages that are not local (or not this machine's plain-HTTP loopback)."""
    return [
        "http://evil.com", f"http://evil.com:{port}", "https://evil.com", "http://localhost.evil.com",
        f"http://localhost.evil.com:{port}", f"https://localhost.evil.com:{port}", "null", "file://",
        f"http://127.0.0.1.nip.io:{port}", f"http://10.0.0.1:{port}", f"http://0.0.0.0:{port}", f"http://127.0.0.2:{port}",
        f"http://[::ffff:7f00:1]:{port}", f"http://[fe80::1]:{port}", f"http://sub.localhost:{port}", "http://2130706433",
        "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "ws://evil.com", f"HTTP://LOCALHOST:{port}",
        f"http://evil.com/http://localhost:{port}",
    ]


def odd_hosts(port: str) -> list[str]:
    """Host values with text after a loopback name's colon: no browser builds these from a URL."""
    return [f"localhost:{port}.evil.com", f"127.0.0.1:{port}@evil.com", "localhost:evil.com", "localhost:", f"[::1]:{port}.evil.com"]


def odd_origins(port: str) -> list[str]:
    return [f"http://localhost:{port}.evil.com", f"http://127.0.0.1:{port}@evil.com", "http://localhost:evil.com"]


def local_pairs(port: str) -> list[dict[str, str]]:
    """Host/Origin pairs of local clients: a loopback Host, with no Origin or a loopback one
    (the MCP Inspector's web UI runs on another local port)."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    origins = [None, f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}", "http://localhost:6274"]
    return [{"Host": h, **({"Origin": o} if o else {})} for h in hosts for o in origins]


def hostile_pairs(hosts: list[str], origins: list[str], port: str) -> list[dict[str, str]]:
    local_host, local_origin = f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"
    pairs = [{"Host": h} for h in hosts] + [{"Host": h, "Origin": local_origin} for h in hosts]
    return pairs + [{"Host": local_host, "Origin": o} for o in origins]


async def send(request: Awaitable[httpx.Response]) -> int | None:
    try:
        return (await request).status_code
    except httpx.HTTPError:
        return None


async def stream_status(client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str]) -> int | None:
    """The status of a request whose answer is an event stream, without waiting for the stream."""
    try:
        async with client.stream(method, url, headers=headers) as response:
            return response.status_code
    except httpx.HTTPError:
        return None


def tally(statuses: list[int | None]) -> tuple[int, str]:
    accepted = sum(1 for s in statuses if s is not None and 200 <= s < 300)
    shown = ", ".join(f"{n}x {s if s is not None else 'no answer'}" for s, n in sorted(Counter(statuses).items(), key=lambda kv: -kv[1]))
    return accepted, shown


async def run_pairs(targets: dict[str, Target], pairs: list[dict[str, str]],
                    renew: Callable[[], Awaitable[None]] | None = None) -> list[int | None]:
    """Each pair against each target; ``renew`` opens a fresh live session before each pair (a
    DELETE the guard let through would otherwise end it and skew the rest)."""
    statuses: list[int | None] = []
    for pair in pairs:
        if renew is not None:
            await renew()
        for target in targets.values():
            statuses.append(await target(pair))
    return statuses


def findings(transport: str, targets: dict[str, Target], hostile: list[int | None], odd: list[int | None], local: list[int | None],
             raw: list[int | None]) -> list[Finding]:
    kinds = ", ".join(targets)
    h_acc, h_shown = tally(hostile)
    o_acc, o_shown = tally(odd + raw)
    l_acc, l_shown = tally(local)
    return [
        Finding(f"{transport}: no request with a Host/Origin a non-local page's browser can send is served ({kinds})",
                f"{h_acc} of {len(hostile)} hostile requests accepted ({h_shown})", h_acc == 0),
        Finding(f"{transport}: no request with a malformed Host/Origin no browser sends (text after the port such as "
                f"'localhost:evil.com'{', no Host, two Hosts' if raw else ''}) is served",
                f"{o_acc} of {len(odd) + len(raw)} accepted ({o_shown})", o_acc == 0),
        Finding(f"{transport}: local clients (loopback Host, no or loopback Origin) are served",
                f"{l_acc} of {len(local)} accepted ({l_shown})", l_acc == len(local)),
    ]


async def http_rebinding() -> list[Finding]:
    with anyio.fail_after(50):
        async with http_server("http", serve_catalog()) as (url, _lines), httpx.AsyncClient(timeout=5) as client:
            port = url.rsplit(":", 1)[1].split("/")[0]
            live: dict[str, str] = {}

            async def renew() -> None:
                opened = await client.post(url, json=initialize(), headers=POST_HEADERS)
                live.clear()
                live.update({**POST_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE})
                await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=live)

            body, modern_headers = modern("tools/list")
            posts: dict[str, Target] = {
                "POST initialize": lambda h: send(client.post(url, json=initialize(), headers={**POST_HEADERS, **h})),
                "POST 2026-07-28 tools/list": lambda h: send(client.post(url, json=body, headers={**modern_headers, **h})),
                "POST tools/list in a live session": lambda h: send(
                    client.post(url, json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, headers={**live, **h})),
            }
            targets: dict[str, Target] = {
                **posts,
                "GET a live session's stream": lambda h: stream_status(client, "GET", url, {"Accept": "text/event-stream", **live, **h}),
                "DELETE a live session": lambda h: send(client.delete(url, headers={**live, **h})),
            }
            hostile = await run_pairs(targets, hostile_pairs(browser_hosts(port), browser_origins(port), port), renew)
            odd = await run_pairs(targets, hostile_pairs(odd_hosts(port), odd_origins(port), port), renew)
            raw = await raw_posts(url, port)
            local = await run_pairs(posts, local_pairs(port), renew)
            return findings("http", targets, hostile, odd, local, raw)


async def raw_posts(url: str, port: str) -> list[int | None]:
    """An initialize with no Host (HTTP/1.1 and 1.0) and with two Host headers, either order."""
    body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"clientInfo":{"name":"r","version":"0"}}}')
    path = "/" + url.split("/", 3)[3]
    common = f"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close"
    heads = [
        f"POST {path} HTTP/1.1\r\n{common}",
        f"POST {path} HTTP/1.0\r\n{common}",
        f"POST {path} HTTP/1.1\r\nHost: evil.com:{port}\r\nHost: 127.0.0.1:{port}\r\n{common}",
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.com:{port}\r\n{common}",
        f"POST http://evil.com:{port}{path} HTTP/1.1\r\nHost: evil.com:{port}\r\n{common}",
    ]
    return [await raw_status(url, head, body) for head in heads]


async def sse_rebinding() -> list[Finding]:
    with anyio.fail_after(50):
        async with http_server("sse", serve_catalog()) as (url, _lines), httpx.AsyncClient(timeout=5) as client:
            port = url.rsplit(":", 1)[1].split("/")[0]
            base = url.rsplit("/", 1)[0]
            async with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as events:
                lines = events.aiter_lines()
                endpoint = ""
                async for line in lines:
                    if line.startswith("data:"):
                        endpoint = line.removeprefix("data:").strip()
                        break
                post_url = base + endpoint

                async def drain() -> None:  # answers arrive on the stream; keep it flowing
                    async for _ in lines:
                        pass

                async with anyio.create_task_group() as tg:
                    tg.start_soon(drain)
                    await client.post(post_url, json=initialize(), headers=POST_HEADERS)
                    await client.post(post_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=POST_HEADERS)
                    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
                    posts: dict[str, Target] = {
                        "POST to a live session": lambda h: send(client.post(post_url, json=ping, headers={**POST_HEADERS, **h})),
                    }
                    targets: dict[str, Target] = {
                        "GET /sse": lambda h: stream_status(client, "GET", url, {"Accept": "text/event-stream", **h}),
                        **posts,
                    }
                    hostile = await run_pairs(targets, hostile_pairs(browser_hosts(port), browser_origins(port), port))
                    odd = await run_pairs(targets, hostile_pairs(odd_hosts(port), odd_origins(port), port))
                    local = await run_pairs(targets, local_pairs(port))
                    tg.cancel_scope.cancel()
            return findings("sse", targets, hostile, odd, local, [])


def bad_credentials(token: str) -> list[dict[str, str | bytes]]:
    """Authorization (or other) headers that do not carry exactly ``Bearer <token>``."""
    b64 = lambda s: base64.b64encode(s.encode()).decode()
    wrong = [
        "", "Bearer", "Bearer wrong", f"Bearer {token[:-1]}", f"Bearer {token}x", f"Bearer {token[:8]}",
        f"Bearer {token[1:]}", f"Bearer {token.swapcase()}", f"Bearer {token[:-1]}{chr(ord(token[-1]) ^ 1)}",
        f"Basic {b64('user:' + token)}", f"Basic {b64(token + ':')}", f"Basic {b64(token)}", f"Basic {token}",
        f"Token {token}", token, f"Bearer {b64(token)}", f"Bearer  {token}", f"Bearer {token} {token}",
        f"Bearer {token},Bearer {token}", f"Bearer\t{token}", f"Bearer{token}", f"Digest {token}", f"Bearer {'A' * 4096}",
    ]
    headers: list[dict[str, str | bytes]] = [{"Authorization": w} for w in wrong]
    headers.append({"Authorization": f"Bearer {token}\u00e9".encode()})  # UTF-8 bytes after the token
    headers += [{"X-Api-Key": token}, {"Cookie": f"token={token}"}, {"Proxy-Authorization": f"Bearer {token}"},
                {"X-Authorization": f"Bearer {token}"}, {}]
    return headers


async def token_guard() -> list[Finding]:
    token = secrets.token_urlsafe(24)
    with anyio.fail_after(50):
        async with http_server("http", serve_catalog(), env={"VOTR_MCP_TOKEN": token}) as (url, _lines), \
                httpx.AsyncClient(timeout=5) as client:
            base = url.rsplit("/", 1)[0]
            port = url.rsplit(":", 1)[1].split("/")[0]
            body, modern_headers = modern("tools/list")
            requests: list[Callable[[dict[str, str]], Awaitable[int | None]]] = [
                lambda h: send(client.post(url, json=initialize(), headers={**POST_HEADERS, **h})),
                lambda h: send(client.post(url, json=body, headers={**modern_headers, **h})),
                lambda h: send(client.post(url + f"?access_token={token}&token={token}", json=body, headers={**modern_headers, **h})),
                lambda h: stream_status(client, "GET", url, {"Accept": "text/event-stream", **h}),
                lambda h: send(client.delete(url, headers=h)),
                lambda h: send(client.get(base + "/", headers=h)),
                lambda h: send(client.post(url + "/", json=body, headers={**modern_headers, **h})),
                lambda h: send(client.options(url, headers={**h, "Access-Control-Request-Method": "POST", "Origin": base})),
            ]
            refused: list[int | None] = []
            for headers in bad_credentials(token):
                for request in requests:
                    refused.append(await request(headers))
            # The right token does not open the door to a foreign Host or Origin.
            right = {"Authorization": f"Bearer {token}"}
            foreign = [await requests[0]({**right, "Host": f"evil.com:{port}"}),
                       await requests[0]({**right, "Origin": "http://evil.com"})]
            served = [await requests[0](right), await requests[1](right)]
            async with httpx.AsyncClient(headers=right, timeout=10) as authorized, \
                    Client(streamable_http_client(url, http_client=authorized)) as mcp_client:
                listed = {t.name for t in (await mcp_client.list_tools()).tools}
        async with http_server("sse", serve_catalog(), env={"VOTR_MCP_TOKEN": token}) as (url, _lines), \
                httpx.AsyncClient(timeout=5) as client:
            post_url = url.rsplit("/", 1)[0] + "/messages/?session_id=" + "0" * 32
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            for headers in bad_credentials(token):
                refused.append(await stream_status(client, "GET", url, {"Accept": "text/event-stream", **headers}))
                refused.append(await send(client.post(post_url, json=ping, headers={**POST_HEADERS, **headers})))
            served.append(await stream_status(client, "GET", url, {"Accept": "text/event-stream", **right}))
    passed = sum(1 for s in refused if s is not None and s != 401)
    _, shown = tally(refused)
    f_acc, f_shown = tally(foreign)
    s_acc, s_shown = tally(served)
    client_ok = listed == {"search_tools", "call_tool"}
    return [
        Finding("http and sse + VOTR_MCP_TOKEN: a request without exactly 'Authorization: Bearer <token>' is refused with 401 "
                "(missing, wrong, truncated, extended, Basic, other schemes and headers, token in the query)",
                f"{passed} of {len(refused)} passed the token check ({shown})", passed == 0),
        Finding("http + VOTR_MCP_TOKEN: the right token with a foreign Host or Origin is still refused",
                f"{f_acc} of {len(foreign)} accepted ({f_shown})", f_acc == 0),
        Finding("http and sse + VOTR_MCP_TOKEN: the right token is served (raw initialize, tools/list, GET /sse; an MCP client lists the tools)",
                f"{s_acc} of {len(served)} raw requests accepted ({s_shown}); MCP client listed {sorted(listed)}",
                s_acc == len(served) and client_ok),
    ]


def check_http_rebinding() -> list[Finding]:
    return anyio.run(http_rebinding)


def check_sse_rebinding() -> list[Finding]:
    return anyio.run(sse_rebinding)


def check_bearer_token() -> list[Finding]:
    return anyio.run(token_guard)


CHECKS = [check_http_rebinding, check_sse_rebinding, check_bearer_token]
