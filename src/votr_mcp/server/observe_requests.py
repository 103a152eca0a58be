"""The seams between the MCP surface and the :class:`~votr_mcp.server.observer.Observer`.

``app.py`` wraps each search and call in :func:`watch_search` / :func:`watch_call`, which time it,
classify its outcome and report it; :class:`ObservedUpstreams` wraps the hub's upstream view to
time forwarded calls and tell an upstream failure from a refusal of votr's own. The
``votr://status`` resource lives here too: the agent's view of the same facts.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from votr_mcp.errors import UpstreamError, UpstreamTimeout
from votr_mcp.server import status

if TYPE_CHECKING:
    from votr_mcp.server.hub import Hub
    from votr_mcp.server.observer import Observer

__all__ = ["ObservedUpstreams", "StatusResource", "STATUS_URI", "watch_call", "watch_search"]

STATUS_URI = "votr://status"


@dataclass
class _Seen:
    answer: Any = None
    result: Any = None
    upstream: str | None = None  # "failed" / "timeout" when the forwarded call raised


_CURRENT: contextvars.ContextVar[_Seen | None] = contextvars.ContextVar("votr_current_call", default=None)


@contextmanager
def watch_search(observer: Observer | None, transport_key: str | None, args: Mapping[str, Any]) -> Iterator[_Seen]:
    seen = _Seen()
    started = time.perf_counter()
    try:
        yield seen
    except BaseException:
        if observer is not None:
            observer.search_failed(time.perf_counter() - started)
        raise
    if observer is None or seen.answer is None:
        return
    structured = seen.answer.structured
    query, intent = args.get("query"), args.get("server_intent")
    timings = getattr(seen.answer, "timings", None) or {}
    observer.searched([structured.get("session_id"), transport_key, _str(args.get("session_id"))],
                      query.strip() if isinstance(query, str) else "", intent if isinstance(intent, str) else None,
                      structured, time.perf_counter() - started, timings.get("retrieval"))


@contextmanager
def watch_call(observer: Observer | None, hub: Hub, transport_key: str | None, name: Any, session_id: Any) -> Iterator[_Seen]:
    seen = _Seen()
    token = _CURRENT.set(seen)
    started = time.perf_counter()
    outcome = "internal"
    try:
        yield seen
        outcome = "tool_error" if seen.result is not None and seen.result.is_error else "ok"
    except ToolError:
        outcome = seen.upstream or _refusal_kind(hub, name)
        raise
    except anyio.get_cancelled_exc_class():
        outcome = "cancelled"
        raise
    finally:
        _CURRENT.reset(token)
        if observer is not None:
            key = name.strip() if isinstance(name, str) else ""
            observer.called([_str(session_id), transport_key], key, outcome, time.perf_counter() - started)


def _refusal_kind(hub: Hub, name: Any) -> str:
    """Why votr refused a call it did not forward: unknown, held, unavailable, or refused (arguments, guard, strict mode)."""
    tool = hub.index.current.by_name.get(name.strip()) if isinstance(name, str) else None
    if tool is None:
        return "unknown"
    if hub.change_control.refusal(tool.key):
        return "held"
    if hub.upstreams is None or not hub.upstreams.configured(tool.server) or hub.upstreams.unavailable(tool.server):
        return "unavailable"
    return "refused"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class ObservedUpstreams:
    """The hub's upstream view, timing each forwarded call and noting an upstream failure."""

    def __init__(self, inner: Any, observer: Observer) -> None:
        self._inner = inner
        self._observer = observer

    def configured(self, server: str) -> bool:
        return bool(self._inner.configured(server))

    def unavailable(self, server: str) -> str | None:
        return self._inner.unavailable(server)

    def statuses(self) -> Mapping[str, Any]:
        return self._inner.statuses()

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        started = time.perf_counter()
        seen = _CURRENT.get()
        try:
            return await self._inner.call(server, tool, arguments)
        except UpstreamTimeout:
            if seen is not None:
                seen.upstream = "timeout"
            raise
        except UpstreamError:
            if seen is not None:
                seen.upstream = "failed"
            raise
        finally:
            self._observer.upstream_call(server, time.perf_counter() - started)


class StatusResource:
    """``votr://status``: the servers behind votr-mcp, their health and tool counts, as JSON."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.resource = types.Resource(
            uri=STATUS_URI, name="status", title="votr-mcp status", mime_type="application/json",
            description="Which MCP servers votr-mcp is connected to, whether each is up (and why not), and how many "
                        "of their tools are indexed and withheld.")

    async def list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[self.resource])

    async def read(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != STATUS_URI:
            raise MCPError(INVALID_PARAMS, f"unknown resource {str(params.uri)!r}; votr-mcp serves only {STATUS_URI}")
        text = json.dumps(status.status_document(self.hub), indent=2)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=STATUS_URI, mime_type="application/json", text=text)])
