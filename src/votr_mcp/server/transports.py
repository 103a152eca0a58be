"""Serving the MCP server over stdio, streamable HTTP (``/mcp``) and legacy SSE (``/sse``).

The HTTP transports check the Host and Origin headers of every request (DNS-rebinding
protection, done by the SDK's transport security settings): by default only loopback
names are accepted, matching the default bind address 127.0.0.1. An optional bearer token
guards a shared deployment. The listening socket is bound before the server starts so that
``--port 0`` works and the real address is logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import secrets
import signal
import socket
import stat
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from votr_mcp.server.jsonrpc import Reply, read_line

__all__ = ["HttpOptions", "UI_COOKIE", "serve_stdio", "serve_http", "http_app", "security_settings", "ui_cookie_value"]

log = logging.getLogger(__name__)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class HttpOptions:
    """How to listen. ``allowed_hosts``/``allowed_origins`` extend the loopback defaults
    (``host:*`` patterns allowed, as in the SDK); ``token`` requires ``Authorization: Bearer``."""

    host: str = "127.0.0.1"
    port: int = 8000
    allowed_hosts: Sequence[str] = ()
    allowed_origins: Sequence[str] = ()
    token: str | None = field(default=None, repr=False)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it closes."""
    async with _stdio_pipes() as pipes:
        streams = stdio_server() if pipes is None else _answering_stdio(*pipes)
        async with streams as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


@asynccontextmanager
async def _answering_stdio(lines: _LineReader, out: _PipeWriter) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio loop, except that a line which is not a valid request is answered
    (-32700/-32600, see :mod:`votr_mcp.server.jsonrpc`) instead of dropped, which left the
    client waiting for ever."""
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    answers = write_send.clone()  # the reader's own handle: the writer ends once both are closed

    async def read() -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with read_send, answers:
                async for line in lines:
                    message = read_line(line)
                    if isinstance(message, Reply):
                        await answers.send(SessionMessage(message.error))
                    elif message is not None:
                        await read_send.send(SessionMessage(message))

    async def write() -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            async with write_recv:
                async for message in write_recv:
                    await out.write(message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
                    await out.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        try:
            yield read_recv, write_send
        finally:
            write_send.close()  # the session is over: the writer ends when the reader does


class _LineReader:
    """Lines of a pipe, read on the event loop (the SDK's default reads in a worker thread)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _PipeWriter:
    """Text written to a pipe from the event loop, flushed by draining."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def _stdio_pipes() -> AsyncIterator[tuple[_LineReader, _PipeWriter] | None]:
    """stdin/stdout as event-loop pipes, or None to let the SDK use its threaded files.

    The SDK reads each line and writes each message through a worker thread; on a busy
    machine those thread hops cost milliseconds per request, which a proxy pays on every
    call. Like the SDK, fd 0 and fd 1 are diverted (to /dev/null and stderr) while serving,
    so a stray print from a library can never corrupt the protocol stream.
    """
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    try:
        reader = asyncio.StreamReader(limit=_MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0))
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        try:
            yield _LineReader(reader), _PipeWriter(writer)
        finally:
            read_transport.close()
            write_transport.close()
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


_MAX_LINE = 256 * 1024 * 1024  # one JSON-RPC message per line; tool results can be large


def _is_pipe(fd: int) -> bool:
    """Whether the event loop can read/write ``fd`` directly: a pipe, a socket, or a character
    device that is not a terminal (``/dev/null``). Left to the SDK's threads: regular files and
    terminals (made non-blocking, a terminal would stay so for the shell after us). Only here does
    SIGTERM end serving at once: a thread blocked reading stdin cannot be cancelled."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and not os.isatty(fd))


def security_settings(options: HttpOptions) -> TransportSecuritySettings:
    """Host/Origin allow-lists: loopback names plus the bound host, plus what the user added."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if options.host not in _LOOPBACK and options.host not in ("0.0.0.0", "::"):
        hosts += [f"{options.host}:*", options.host]
        origins += [f"http://{options.host}:*", f"https://{options.host}:*"]
    hosts += list(options.allowed_hosts)
    origins += list(options.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def http_app(server: Server[Any], transport: str, options: HttpOptions, routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The ASGI app for ``transport`` 'http' (streamable HTTP at /mcp) or 'sse' (/sse + /messages/),
    plus ``routes`` (``/metrics``, ``/health``, ``/ui``: votr_mcp.server.observability), all behind
    the same Host check and token; only ``/health`` answers without the token."""
    security = security_settings(options)
    if transport == "http":
        app = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=options.host)
    elif transport == "sse":
        app = _sse_app(server, security)
    else:
        raise ValueError(f"unknown HTTP transport {transport!r}; use 'http' or 'sse'")
    app.router.routes[:0] = list(routes)
    app.add_middleware(_StrictHost, names=allowed_names(options))
    if options.token:
        app.add_middleware(_BearerToken, token=options.token)
    return app


def allowed_names(options: HttpOptions) -> frozenset[str]:
    """The host names a request's Host and Origin may carry (any port): loopback, the bound host,
    and the ``--allow-host`` names (a trailing ``:*`` or port there does not widen the name)."""
    names = {*_LOOPBACK, "[::1]"}
    if options.host not in ("0.0.0.0", "::"):
        names.add(f"[{options.host.lower()}]" if ":" in options.host else options.host.lower())
    for extra in (*options.allowed_hosts, *(_host_of_origin(o) or "" for o in options.allowed_origins)):
        name = _split_host(extra.removesuffix(":*"))
        if name:
            names.add(name)
    return frozenset(names)


def _split_host(value: str) -> str | None:
    """The lower-cased name of a ``Host`` value (``name``, ``name:port``, ``[v6]``, ``[v6]:port``);
    None when it is not one (``localhost:evil.com``, an empty name, a port that is not a number)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[: end + 1], value[end + 1 :]
    else:
        name, _, port = value.partition(":")
        rest = f":{port}" if _ else ""
    if not name or name == "[]" or (rest and not (rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6)):
        return None
    return name


def _host_of_origin(origin: str) -> str | None:
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https") or "/" in rest.rstrip("/"):
        return None
    return _split_host(rest.rstrip("/").removesuffix(":*"))


class _StrictHost:
    """Refuse a request whose ``Host`` (or ``Origin``, when sent) names another machine, port
    included: the SDK's ``localhost:*`` allow-list matches by prefix, so ``localhost:evil.com``
    passed it (eval/reliability_checks/http_guard.py). DNS rebinding protection, done exactly."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            host = _split_host(headers.get(b"host", b"").decode("latin-1"))
            origin = headers.get(b"origin")
            bad = host not in self.names or (origin is not None and _host_of_origin(origin.decode("latin-1")) not in self.names)
            if bad:
                what = "Origin" if host in self.names else "Host"
                response = JSONResponse({"error": f"{what} header not allowed; votr-mcp answers only its own "
                                                  "address (see --allow-host / --allow-origin)"}, status_code=421 if what == "Host" else 403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _sse_app(server: Server[Any], security: TransportSecuritySettings) -> Starlette:
    sse = SseServerTransport("/messages/", security_settings=security)

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return Response()

    return Starlette(routes=[Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)])


OPEN_PATHS = ("/health", "/health/live", "/ui/login")  # answer without the token (probes; the token form)
UI_COOKIE = "votr_ui"  # a browser cannot send a bearer header when it navigates: /ui/login sets this


def ui_cookie_value(token: str) -> str:
    """What the ``votr_ui`` cookie holds: an HMAC of the token, not the token, so a leaked cookie
    opens the dashboard only, never ``/mcp``."""
    return hmac.new(token.encode(), b"votr-mcp dashboard", hashlib.sha256).hexdigest()


class _BearerToken:
    """Refuse HTTP requests without ``Authorization: Bearer <token>`` (constant-time compare).

    Under ``/ui`` the ``votr_ui`` cookie that ``/ui/login`` sets (HttpOnly, SameSite=Strict, path
    /ui, :func:`ui_cookie_value`) stands in for the header. A request that carries the token is the operator's:
    ``scope["votr.operator"]`` is set for the dashboard's actions."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.cookie = ui_cookie_value(token).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            headers = dict(scope.get("headers") or ())
            ok = secrets.compare_digest(headers.get(b"authorization", b""), self.expected)
            if not ok and (path == "/ui" or path.startswith("/ui/")):
                ok = secrets.compare_digest(_cookie(headers.get(b"cookie", b""), UI_COOKIE), self.cookie)
            if ok:
                scope["votr.operator"] = True
            elif path not in OPEN_PATHS:
                response: Response = JSONResponse({"error": "missing or wrong bearer token; send 'Authorization: Bearer <token>'"},
                                                  status_code=401)
                if path == "/ui" or path.startswith("/ui/"):
                    from votr_mcp.server.dashboard.pages import login_page

                    response = login_page()
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _cookie(header: bytes, name: str) -> bytes:
    for part in header.split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == name.encode():
            return value
    return b""


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve_http(server: Server[Any], transport: str, options: HttpOptions, *, ready: anyio.Event | None = None,
                     routes: Sequence[BaseRoute] = ()) -> None:
    """Serve ``transport`` over HTTP until cancelled; logs the URL it listens on."""
    import uvicorn  # only the HTTP transports need it

    app = http_app(server, transport, options, routes)
    sock = bind(options.host, options.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    path = "/mcp" if transport == "http" else "/sse"
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)

    class _Server(uvicorn.Server):
        # uvicorn re-raises a captured SIGTERM after its shutdown, which would kill the process
        # before votr stops its upstream servers; votr handles the signals itself instead.
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    uv = _Server(config)
    log.info("serving %s at http://%s:%d%s", "streamable HTTP" if transport == "http" else "SSE", shown, port, path)
    if options.host not in _LOOPBACK:
        log.warning("listening on %s, not only on this machine: set --token so that only your agents can call tools", options.host)
    if ready is not None:
        ready.set()

    async def stop_on_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
            async for received in signals:
                log.info("received %s: shutting down", signal.Signals(received).name)
                uv.should_exit = True  # graceful: finish open requests, then return
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_on_signals)
        await uv.serve(sockets=[sock])
        tg.cancel_scope.cancel()
