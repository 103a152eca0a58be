"""Open the MCP transport an upstream config asks for, and notice when it ends.

The SDK's client session ends its read loop silently when a server's stdout closes or an
HTTP stream drops; requests in flight then fail, but an idle connection that died would
go unnoticed until the next call. Wrapping the read stream (and, for stdio, watching the
process) lets the supervisor learn of the end at once and restart the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Generic, TextIO, TypeVar

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from votr_mcp.upstream._stdio import ChildProcess, open_stdio
from votr_mcp.upstream.config import NESTING_ENV, UpstreamConfig, nesting

__all__ = ["open_transport"]

T = TypeVar("T")

_SSE_IDLE = 3600.0


class _WatchedReadStream(Generic[T]):
    """A read stream that calls ``on_end`` once when the stream ends or is closed."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end
        self._ended = False

    @property
    def last_context(self) -> Any:
        # The dispatcher reads this duck-typed attribute to run handlers in the sender's context.
        return getattr(self._inner, "last_context", None)

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._on_end()

    async def receive(self) -> T:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._end()
            raise

    def __aiter__(self) -> _WatchedReadStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._end()
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream[T]:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def open_transport(
    config: UpstreamConfig,
    on_end: Callable[[], None],
    child: ChildProcess | None = None,
    errlog: TextIO | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Yield ``(read, write)`` streams to the upstream; ``on_end`` fires when the link ends.

    For stdio, ``child`` receives the process id, exit code and stderr tail, and the whole
    process group is stopped when this context exits for any reason.
    """
    if config.transport == "stdio":
        assert config.command is not None
        # The child learns how deep it is, so a votr-mcp started by this config through a wrapper stops the chain.
        env = {**config.env, NESTING_ENV: str(nesting() + 1)}
        params = StdioServerParameters(command=config.command, args=list(config.args), env=env, cwd=config.cwd)
        async with open_stdio(params, child or ChildProcess(), on_end, label=config.name, errlog=errlog) as (read, write):
            yield _WatchedReadStream[SessionMessage | Exception](read, on_end), write
    elif config.transport == "sse":
        assert config.url is not None
        # An idle SSE stream is dropped after sse_read_timeout without an event; an hour keeps
        # quiet servers from reconnecting every few minutes, while calls keep their own deadline.
        async with sse_client(
            config.url, headers=dict(config.headers) or None, timeout=min(config.startup_timeout, 30.0), sse_read_timeout=_SSE_IDLE
        ) as (read, write):
            yield _WatchedReadStream[SessionMessage | Exception](read, on_end), write
    else:
        assert config.url is not None
        # The SDK's documented way to send headers; a long read timeout because the server may hold a stream open.
        timeout = httpx2.Timeout(min(config.startup_timeout, 30.0), read=max(config.timeout, 300.0))
        async with httpx2.AsyncClient(headers=dict(config.headers) or None, timeout=timeout) as http:
            async with streamable_http_client(config.url, http_client=http) as (read, write):
                yield _WatchedReadStream[SessionMessage | Exception](read, on_end), write
