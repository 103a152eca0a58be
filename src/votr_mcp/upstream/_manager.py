"""All configured upstreams together: start them concurrently, route calls, report status."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TextIO

import anyio
import mcp_types as types

from votr_mcp.catalog import Tool
from votr_mcp.errors import UpstreamError
from votr_mcp.upstream._connection import StatusCallback, ToolsCallback, Upstream
from votr_mcp.upstream._status import Backoff, UpstreamStatus
from votr_mcp.upstream.config import UpstreamConfig, UpstreamsConfig

__all__ = ["HarvestResult", "Upstreams", "harvest"]

logger = logging.getLogger("votr_mcp.upstream")


class Upstreams:
    """Connections to every configured upstream, used as an async context manager.

    Entering starts one supervisor per enabled upstream and returns at once; use
    :meth:`wait_started` to wait for the first harvests. A server that fails to start,
    dies or hangs is retried with backoff and never raises out of here; :meth:`call`
    raises :class:`~votr_mcp.errors.UpstreamError` for it instead. Leaving stops every
    connection and the processes of stdio servers.
    """

    def __init__(
        self,
        config: UpstreamsConfig | Iterable[UpstreamConfig],
        *,
        on_tools: ToolsCallback | None = None,
        on_status: StatusCallback | None = None,
        backoff: Backoff | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        servers = config.servers if isinstance(config, UpstreamsConfig) else tuple(config)
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise UpstreamError(f"upstream names must be unique, got {names}")
        self._upstreams: dict[str, Upstream] = {
            s.name: Upstream(s, backoff=backoff or Backoff(), on_tools=on_tools, on_status=on_status, errlog=errlog)
            for s in servers
        }
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> Upstreams:
        if self._stack is not None:
            raise RuntimeError("Upstreams is already running; it cannot be entered twice")
        async with AsyncExitStack() as stack:
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)  # runs before the group exits: stop every supervisor
            for upstream in self._upstreams.values():
                if not upstream.config.disabled:
                    group.start_soon(upstream.run, name=f"upstream {upstream.name}")
            self._stack = stack.pop_all()
        enabled = sum(not u.config.disabled for u in self._upstreams.values())
        logger.info("starting %d upstream servers (%d disabled)", enabled, len(self._upstreams) - enabled)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        try:
            return await stack.__aexit__(exc_type, exc, tb)
        except BaseException as raised:
            # The task group wraps an error of the caller's own block in an exception group;
            # hand the caller back the error it raised, not a wrapper around it.
            inner = getattr(raised, "exceptions", None)
            if exc is not None and isinstance(inner, tuple) and len(inner) == 1 and inner[0] is exc:
                raise exc from None
            raise

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._upstreams)

    async def wait_started(self, timeout: float | None = None) -> dict[str, UpstreamStatus]:
        """Wait until every upstream connected once or failed its first attempt (or ``timeout``)."""
        with anyio.move_on_after(timeout if timeout is not None else float("inf")):
            for upstream in self._upstreams.values():
                await upstream.wait_started()
        return self.statuses()

    def statuses(self) -> dict[str, UpstreamStatus]:
        return {name: u.status() for name, u in self._upstreams.items()}

    def status(self, name: str) -> UpstreamStatus:
        return self._get(name).status()

    def available(self, name: str) -> bool:
        upstream = self._upstreams.get(name)
        return upstream is not None and upstream.status().available

    def tools(self, name: str | None = None) -> tuple[Tool, ...]:
        """The last good harvest of one upstream, or of all in config order."""
        if name is not None:
            return self._get(name).tools
        return tuple(tool for u in self._upstreams.values() for tool in u.tools)

    async def call(
        self, server: str, tool: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> types.CallToolResult:
        """Forward ``tools/call`` to ``server``; see :meth:`Upstream.call`."""
        return await self._get(server).call(tool, dict(arguments) if arguments is not None else None, timeout)

    async def refresh(self, name: str) -> tuple[Tool, ...]:
        return await self._get(name).refresh()

    def _get(self, name: str) -> Upstream:
        upstream = self._upstreams.get(name)
        if upstream is None:
            known = ", ".join(sorted(self._upstreams)) or "none"
            raise UpstreamError(f"no upstream named '{name}' is configured (configured: {known}); add it to the mcpServers config")
        return upstream


@dataclass(frozen=True, slots=True)
class HarvestResult:
    """Tools of every upstream that answered, and the status of each."""

    tools: tuple[Tool, ...]
    statuses: Mapping[str, UpstreamStatus]

    @property
    def failed(self) -> tuple[UpstreamStatus, ...]:
        return tuple(s for s in self.statuses.values() if s.state not in ("ready", "disabled"))


async def harvest(
    config: UpstreamsConfig | Iterable[UpstreamConfig], *, timeout: float | None = None, errlog: TextIO | None = None
) -> HarvestResult:
    """Connect to every enabled upstream once, harvest its tools, and disconnect.

    ``timeout`` bounds the whole harvest; by default each server's own ``startup_timeout``
    applies and a server that fails is reported, not retried.
    """
    async with Upstreams(config, errlog=errlog) as upstreams:
        statuses = await upstreams.wait_started(timeout)
        tools = upstreams.tools()
    for status in statuses.values():
        if status.state == "ready":
            logger.info("harvested %s: %d tools", status.name, status.tool_count)
        elif status.state != "disabled":
            logger.warning("could not harvest %s: %s", status.name, status.error or status.state)
    return HarvestResult(tools, statuses)
