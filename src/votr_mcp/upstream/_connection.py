"""One upstream MCP server: connect, harvest its tools, forward calls, restart when it fails.

A supervisor task owns the connection for its whole life: it connects (bounded by
``startup_timeout``), harvests ``tools/list`` page by page, then waits until the link ends
(the process exits, the stream drops, or the server stops answering), and reconnects
after an exponential backoff. Calls come from other tasks and use whatever connection is
current; a call on a lost connection fails with a clear message instead of waiting.

Nothing an upstream does escapes this module as a foreign exception: failures become
:class:`~votr_mcp.errors.UpstreamError` / :class:`~votr_mcp.errors.UpstreamTimeout` for
callers and a ``retrying`` status for everyone else.
"""

from __future__ import annotations

import inspect
import logging
import math
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from votr_mcp import __version__
from votr_mcp.catalog import Tool, content_hash, tool_from_mapping
from votr_mcp.errors import UpstreamError, UpstreamTimeout
from votr_mcp.upstream._failures import describe_failure
from votr_mcp.upstream._status import Backoff, State, UpstreamStatus
from votr_mcp.upstream._stdio import ChildProcess
from votr_mcp.upstream._transport import open_transport
from votr_mcp.upstream.config import UpstreamConfig

__all__ = ["Upstream", "ToolsCallback", "StatusCallback"]

logger = logging.getLogger("votr_mcp.upstream")

ToolsCallback = Callable[[str, tuple[Tool, ...]], Awaitable[None] | None]
StatusCallback = Callable[[UpstreamStatus], Awaitable[None] | None]

_MAX_PAGES = 1000  # a server whose cursor never ends must not hang the harvest
_WRITE_GRACE = 2.0  # the SDK's request clock starts after the write; this bounds a blocked write too


class Upstream:
    """The supervisor and call gateway of one configured upstream."""

    def __init__(
        self,
        config: UpstreamConfig,
        *,
        backoff: Backoff,
        on_tools: ToolsCallback | None = None,
        on_status: StatusCallback | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        self.config = config
        self._backoff = backoff
        self._on_tools = on_tools
        self._on_status = on_status
        self._errlog = errlog
        self._client: Client | None = None
        self._state: State = "disabled" if config.disabled else "starting"
        self._error: str | None = None
        self._attempts = 0
        self._retry_at: float | None = None
        self._ready_at: float | None = None
        self._server_info: str | None = None
        self._protocol: str | None = None
        self._tools: tuple[Tool, ...] = ()
        self._published: tuple[tuple[str, str], ...] | None = None
        self._started = anyio.Event()  # set once the first attempt has succeeded or failed
        self._lost = anyio.Event()
        self._lost_reason: str | None = None
        self._child = ChildProcess()
        self._refresh_wanted = anyio.Event()
        self._harvest_lock = anyio.Lock()
        if config.disabled:
            self._started.set()

    # -- what others may read -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The last good harvest (kept while the server is down, so search can mark them)."""
        return self._tools

    def status(self) -> UpstreamStatus:
        """A snapshot; safe to take from any thread (wall-clock free, no event loop needed)."""
        retry_in = None
        if self._state == "retrying" and self._retry_at is not None:
            retry_in = max(0.0, self._retry_at - time.monotonic())
        return UpstreamStatus(
            name=self.name,
            state=self._state,
            tool_count=len(self._tools),
            error=self._error,
            attempts=self._attempts,
            retry_in=retry_in,
            server_info=self._server_info,
            protocol_version=self._protocol,
            pid=self._child.pid,
        )

    async def wait_started(self) -> None:
        await self._started.wait()

    # -- supervisor ----------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, and reconnect with backoff until cancelled. Never raises."""
        failures = 0
        try:
            while True:
                self._attempts += 1
                self._retry_at = None
                self._ready_at = None
                reason = await self._connect_once()
                # A connection that stayed up a while was a success: start the backoff over.
                healthy = self._ready_at is not None and time.monotonic() - self._ready_at >= self._backoff.healthy_after
                failures = 1 if healthy else failures + 1
                if failures >= self._backoff.give_up_after:
                    logger.error("upstream '%s': %s; given up after %d failed starts in a row (fix the entry and restart votr-mcp)",
                                 self.name, reason, failures)
                    await self._set_state("failed", reason)
                    self._started.set()
                    await anyio.sleep_forever()
                delay = self._backoff.delay(failures)
                self._retry_at = time.monotonic() + delay
                level = logging.WARNING if failures <= 3 or failures % 10 == 0 else logging.DEBUG
                logger.log(level, "upstream '%s': %s; retrying in %.1fs (attempt %d)", self.name, reason, delay, self._attempts + 1)
                await self._set_state("retrying", reason)
                self._started.set()
                await anyio.sleep(delay)
        finally:
            self._client = None
            if self._state != "disabled":
                self._state = "stopped"

    async def _connect_once(self) -> str:
        """One connection's life; returns why it ended. Foreign exceptions stop here."""
        self._lost = anyio.Event()
        self._lost_reason = None
        self._refresh_wanted = anyio.Event()
        self._child = child = ChildProcess()
        began = anyio.current_time()
        try:
            with anyio.CancelScope() as startup:
                # A deadline on a scope that encloses the whole connection, not a fail_after
                # around the handshake alone: the SDK opens task groups on connect that must
                # close inside the scope that opened them.
                startup.deadline = began + self.config.startup_timeout
                async with AsyncExitStack() as stack:
                    client = Client(
                        open_transport(self.config, self._transport_ended, child, self._errlog),
                        mode="auto",
                        read_timeout_seconds=self.config.timeout,
                        message_handler=self._on_message,
                        client_info=types.Implementation(name="votr-mcp", version=__version__),
                        cache=None,  # a re-harvest after list_changed must see the server, not a cached listing
                    )
                    logger.info("upstream '%s': starting (%s)", self.name, self.config.describe())
                    await stack.enter_async_context(client)
                    self._note_server(client)
                    group = await stack.enter_async_context(anyio.create_task_group())
                    stack.callback(group.cancel_scope.cancel)  # runs before the group is awaited
                    if self._wants_listen(client):
                        # Subscribe before listing, so a change between the two is not missed.
                        await group.start(self._listener, client)
                    tools = await self._harvest(client)
                    startup.deadline = math.inf
                    self._ready_at = time.monotonic()
                    self._client = client
                    self._tools = tools
                    logger.info(
                        "upstream '%s': ready, %d tools in %.1fs (%s, protocol %s)",
                        self.name, len(tools), anyio.current_time() - began, self._server_info, self._protocol,
                    )
                    await self._set_state("ready", None)
                    self._started.set()
                    await self._publish(tools)
                    group.start_soon(self._refresher, client)
                    await self._lost.wait()
            if startup.cancelled_caught:
                return f"did not start within {self.config.startup_timeout:g}s (no answer to the handshake or tools/list); it was stopped"
            reason = self._lost_reason or "the connection ended"
        except Exception as exc:  # noqa: BLE001 - boundary: one upstream's failure must never reach the server
            reason = describe_failure(self.config, exc)
        finally:
            self._client = None
        if child.returncode is not None and child.exit_summary() not in reason:
            reason = f"{reason}; the process {child.exit_summary()}"
        return reason

    def _transport_ended(self) -> None:
        if self._child.returncode is not None:
            self._mark_lost(f"the server process {self._child.exit_summary()}")
        else:
            self._mark_lost("the server closed the connection")

    def _mark_lost(self, reason: str) -> None:
        """End the current connection; calls fail fast from now on, the supervisor reconnects."""
        if not self._lost.is_set():
            self._lost_reason = reason
            self._lost.set()
            if self._client is not None:
                self._client = None
                self._state, self._error = "retrying", reason

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            logger.info("upstream '%s': tools/list_changed received", self.name)
            self._refresh_wanted.set()
        elif isinstance(message, ValueError):  # a stdout line that is not JSON-RPC (a stray print)
            logger.warning("upstream '%s': ignored output that is not JSON-RPC (servers must log to stderr)", self.name)
        elif isinstance(message, Exception):
            logger.warning("upstream '%s': transport error: %s", self.name, message)

    def _wants_listen(self, client: Client) -> bool:
        tools_cap = client.server_capabilities.tools
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(tools_cap and tools_cap.list_changed)

    async def _listener(self, client: Client, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """On 2026-07-28 connections list_changed arrives only on a subscriptions/listen stream.

        Reports started once the server acknowledged the subscription (or refused it).
        """
        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                started = True
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        logger.info("upstream '%s': tools list changed (subscription)", self.name)
                        self._refresh_wanted.set()
        except Exception as exc:  # noqa: BLE001 - a server that cannot listen still serves calls
            logger.info("upstream '%s': no list_changed subscription: %s", self.name, exc)
        finally:
            if not started:
                task_status.started()

    async def _refresher(self, client: Client) -> None:
        while True:
            await self._refresh_wanted.wait()
            # Replaced before harvesting, so a change announced during the harvest triggers another.
            self._refresh_wanted = anyio.Event()
            try:
                await self._reharvest(client)
            except UpstreamError as exc:
                self._mark_lost(f"re-harvest failed: {exc}")
                return

    async def _reharvest(self, client: Client) -> tuple[Tool, ...]:
        tools = await self._harvest(client)
        self._tools = tools
        await self._set_state(self._state, self._error)
        await self._publish(tools)
        return tools

    async def refresh(self) -> tuple[Tool, ...]:
        """Re-harvest now (also done on list_changed and reconnect)."""
        client = self._require_client()
        try:
            return await self._reharvest(client)
        except UpstreamError as exc:
            self._mark_lost(f"re-harvest failed: {exc}")
            raise

    # -- harvest -------------------------------------------------------------------------

    def _note_server(self, client: Client) -> None:
        info = client.server_info
        self._server_info = f"{info.name} {info.version}".strip() if info else None
        self._protocol = client.protocol_version

    async def _harvest(self, client: Client) -> tuple[Tool, ...]:
        """Every page of tools/list, as catalog Tools; a malformed tool is logged and skipped."""
        info = client.server_info
        description = (info.description or info.title or "") if info else ""
        summary = client.instructions or ""
        raw: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        async with self._harvest_lock:
            for _ in range(_MAX_PAGES):
                try:
                    page = await client.list_tools(cursor=cursor)
                except MCPError as exc:
                    raise UpstreamError(f"upstream '{self.name}' failed tools/list: {exc.error.message} (code {exc.error.code})") from exc
                except ValidationError as exc:
                    raise UpstreamError(f"upstream '{self.name}' sent a malformed tools/list result: {exc.error_count()} errors") from exc
                raw.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools)
                cursor = page.next_cursor
                if cursor is None or cursor in seen:
                    break
                seen.add(cursor)
            else:
                logger.warning("upstream '%s': stopped tools/list after %d pages", self.name, _MAX_PAGES)
        tools: dict[str, Tool] = {}
        for record in raw:
            try:
                tool = tool_from_mapping({"server": self.name, "server_description": description, "server_summary": summary, **record})
            except ValueError as exc:
                logger.warning("upstream '%s': skipped a tool: %s", self.name, exc)
                continue
            if tool.name in tools:
                logger.warning("upstream '%s': lists tool '%s' twice; kept the first", self.name, tool.name)
                continue
            tools[tool.name] = tool
        return tuple(tools.values())

    async def _publish(self, tools: tuple[Tool, ...]) -> None:
        fingerprint = tuple((t.name, content_hash(t)) for t in tools)
        if fingerprint == self._published:
            return
        self._published = fingerprint
        if self._on_tools is not None:
            await _run_callback(self._on_tools, self.name, tools)

    async def _set_state(self, state: State, error: str | None) -> None:
        self._state = state
        self._error = error
        if self._on_status is not None:
            await _run_callback(self._on_status, self.status())

    # -- calls ---------------------------------------------------------------------------

    def _require_client(self) -> Client:
        client = self._client
        if client is not None:
            return client
        status = self.status()
        if status.state == "disabled":
            raise UpstreamError(f"upstream '{self.name}' is disabled in the config; remove \"disabled\" from its entry to use it")
        if status.state == "stopped":
            raise UpstreamError(f"upstream '{self.name}' is stopped: votr-mcp is shutting down its connections")
        if status.state == "failed":
            raise UpstreamError(f"upstream '{self.name}' is not available: {status.describe()}")
        raise UpstreamError(f"upstream '{self.name}' is {status.describe()}; it is retried automatically, try again later")

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float | None = None) -> types.CallToolResult:
        """Forward ``tools/call``; the result comes back unchanged, failures as UpstreamError."""
        client = self._require_client()
        limit = self.config.timeout if timeout is None else timeout
        where = f"upstream '{self.name}' tool '{tool}'"
        try:
            with anyio.fail_after(limit + _WRITE_GRACE):
                return await client.call_tool(tool, arguments, read_timeout_seconds=limit)
        except TimeoutError:
            self._refresh_wanted.set()
            raise UpstreamTimeout(f"{where} timed out: no answer within {limit:g}s; the request was cancelled") from None
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                # A server that answers nothing at all fails this re-harvest too and is restarted.
                self._refresh_wanted.set()
                raise UpstreamTimeout(f"{where} timed out: no answer within {limit:g}s; the request was cancelled upstream") from exc
            if exc.error.code == types.CONNECTION_CLOSED:
                self._mark_lost("the connection closed during a call")
                why = self._lost_reason or "the connection closed"
                raise UpstreamError(f"{where}: the server went away during the call ({why}); it is being restarted, retry shortly") from exc
            raise UpstreamError(f"{where} refused the call: {exc.error.message} (JSON-RPC error {exc.error.code})") from exc
        except ValidationError as exc:
            raise UpstreamError(f"{where} returned a malformed result ({exc.error_count()} validation errors)") from exc
        except RuntimeError as exc:  # the SDK's own checks: output schema mismatch, closed session, input_required
            raise UpstreamError(f"{where}: {exc}") from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._mark_lost(f"the connection broke during a call: {exc!r}")
            raise UpstreamError(f"{where}: the connection broke during the call; it is being restarted") from exc


async def _run_callback(callback: Callable[..., Awaitable[None] | None], *args: Any) -> None:
    try:
        result = callback(*args)
        if inspect.isawaitable(result):
            await result
    except Exception:  # a consumer's bug must not stop the upstream
        logger.exception("upstream callback %r failed", callback)
