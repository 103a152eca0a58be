"""What the agent and the operator are told about the servers behind votr-mcp.

One source for the ``votr://status`` resource, ``/health``, the dashboard and ``/metrics``:
each configured server with its state, why it is down, and how many of its tools are indexed
and withheld. It also writes the two messages that keep a down server from looking like a
missing tool: ``call_tool`` of a name on a configured server that is down, and a search whose
``server_intent`` names one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from votr_mcp.catalog.naming import SEPARATOR, slug

if TYPE_CHECKING:
    from votr_mcp.server.hub import Hub

__all__ = ["ServerState", "servers", "readiness", "status_document", "down_server_message", "intent_note"]


@dataclass(frozen=True, slots=True)
class ServerState:
    """One server: ``state`` is the upstream's (ready, starting, retrying, failed, disabled, stopped),
    or ``not configured`` for a catalog served without upstreams."""

    name: str
    state: str
    available: bool
    reason: str | None
    indexed_tools: int
    withheld_tools: int
    attempts: int = 0

    @property
    def restarts(self) -> int:
        return max(0, self.attempts - 1)


def servers(hub: Hub) -> list[ServerState]:
    """Every configured server (or, with no upstreams, every catalog server), in config order."""
    snap = hub.index.current
    indexed = Counter(t.server for t in snap.catalog)
    withheld = Counter(server for server, _ in hub.change_control.withheld())
    statuses = _statuses(hub)
    if statuses is None:
        return [ServerState(name, "not configured", False, f"server '{name}' is not configured", n, withheld[name])
                for name, n in sorted(indexed.items())]
    out = []
    for name, status in statuses.items():
        reason = None if status.available else hub.upstreams.unavailable(name) if hub.upstreams is not None else None
        out.append(ServerState(name, status.state, status.available, reason, indexed[name], withheld[name], status.attempts))
    return out


def readiness(hub: Hub) -> dict[str, bool]:
    """The checks behind ``/health``: all true means ready."""
    return {
        "index": hub.ready.is_set(),
        "upstreams_harvested": hub.upstreams_started.is_set(),
        "model_loaded": not hub.dense_pending,
    }


def status_document(hub: Hub) -> dict[str, Any]:
    """The ``votr://status`` resource: readiness, then each server with its health and tool counts."""
    checks = readiness(hub)
    listed = servers(hub)
    return {
        "ready": all(checks.values()),
        "checks": checks,
        "indexed_tools": len(hub.index.current.catalog),
        "withheld_tools": sum(s.withheld_tools for s in listed),
        "servers": [{**asdict(s), "restarts": s.restarts} for s in listed],
    }


def down_server_message(hub: Hub, name: str) -> str | None:
    """For ``call_tool`` of a name the index lacks: when the name is of a configured server that is
    down, say so and why (its tools are unknown until it has been up once); else None."""
    if SEPARATOR not in name or hub.upstreams is None:
        return None
    server = _server_of_prefix(hub, name.split(SEPARATOR, 1)[0])
    if server is None:
        return None
    reason = hub.upstreams.unavailable(server)
    if reason is None:
        return None
    return (f"'{name}' cannot be checked or run now: {reason}, so votr-mcp does not know its tools yet. "
            "votr-mcp keeps retrying it; try again later, or call search_tools for a tool of another server.")


def intent_note(hub: Hub, server_intent: str | None, servers_found: Iterable[str]) -> str | None:
    """A note for a search whose ``server_intent`` names a configured server that is down: its tools
    are marked unavailable, or missing when it never listed any, and others are not it."""
    if not server_intent or hub.upstreams is None:
        return None
    server = _server_of_prefix(hub, slug(server_intent)) or _server_of_prefix(hub, server_intent)
    if server is None:
        return None
    reason = hub.upstreams.unavailable(server)
    if reason is None:
        return None
    if server in set(servers_found):
        return f"The server you asked for is down: {reason}. Its tools are marked UNAVAILABLE until it is back."
    return (f"The server you asked for is down: {reason}; none of its tools can be offered now. "
            "Any tools listed belong to other servers.")


def _server_of_prefix(hub: Hub, prefix: str) -> str | None:
    """The configured server whose call-name prefix (or name) is ``prefix``."""
    statuses = _statuses(hub)
    if not statuses:
        return None
    wanted = prefix.strip().lower()
    for name in statuses:
        if name.lower() == wanted or slug(name).lower() == wanted:
            return name
    return None


def _statuses(hub: Hub) -> dict[str, Any] | None:
    get = getattr(hub.upstreams, "statuses", None)
    return dict(get()) if get is not None else None
