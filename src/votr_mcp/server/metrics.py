"""Prometheus metrics of one votr-mcp server, served at ``/metrics`` by the HTTP transports.

Every name starts with ``votr_``. Counters and histograms are updated by the
:class:`~votr_mcp.server.observer.Observer` as requests finish; what describes the present
(upstream health, withheld tools, sessions, readiness) is read at scrape time from the live
objects, so it can never drift from what the server actually does. Each server has its own
registry: two servers in one process (tests) never share numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "CALL_OUTCOMES", "Live", "Metrics", "UpstreamLive"]

# The *_created series double every counter for no use on a dashboard.
prometheus_client.disable_created_metrics()

CONTENT_TYPE = prometheus_client.CONTENT_TYPE_LATEST

# Bounded label values: a label per request id or query would grow without end.
CALL_OUTCOMES = ("ok", "tool_error", "unknown", "held", "unavailable", "refused", "failed", "timeout", "cancelled", "internal")

_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass(frozen=True, slots=True)
class UpstreamLive:
    """One upstream as the scrape sees it."""

    name: str
    state: str
    tools: int
    attempts: int


@dataclass(frozen=True, slots=True)
class Live:
    """The present state, read at scrape time."""

    ready: bool
    dense_ready: bool
    indexed_tools: int
    withheld_tools: int
    sessions: int | None
    upstreams: tuple[UpstreamLive, ...] = field(default=())


class Metrics:
    """The counters and histograms, and a collector of :class:`Live` state."""

    def __init__(self, live: Callable[[], Live]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.searches = Counter("votr_searches", "search_tools requests answered, by outcome (answered, abstained, error)",
                                ["outcome"], registry=r)
        self.abstentions = Counter("votr_search_abstentions", "search_tools answers that returned no tool (abstained)", registry=r)
        self.returned = Histogram("votr_search_returned_tools", "tools returned per search_tools answer (k; pinned excluded)",
                                  buckets=(0, 1, 2, 3, 4, 5, 7, 10, 15, 20), registry=r)
        self.tiers = Counter("votr_search_tier", "search_tools answers by the confidence tier of their first tool", ["tier"], registry=r)
        self.hits = Counter("votr_search_hits", "searches one of whose returned tools the agent then called", registry=r)
        self.stage_seconds = Histogram("votr_stage_seconds", "latency per stage: search (whole search_tools), retrieval, "
                                       "call (whole call_tool), upstream (the forwarded call only)",
                                       ["stage"], buckets=_SECONDS, registry=r)
        self.calls = Counter("votr_calls", f"call_tool requests by server and outcome ({', '.join(CALL_OUTCOMES)})",
                             ["server", "outcome"], registry=r)
        self.called_rank = Histogram("votr_called_rank", "rank of the called tool in its session's last search (0: not in it)",
                                     buckets=(0, 1, 2, 3, 5, 10, 20), registry=r)
        self.guard_trips = Counter("votr_guard_trips", "calls after which the iteration guard evicted the tool", registry=r)
        for outcome in ("answered", "abstained", "error"):
            self.searches.labels(outcome)  # present at 0 from the start, so rates need no absent-series handling
        r.register(_LiveCollector(live))

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return prometheus_client.generate_latest(self.registry)

    def value(self, name: str, labels: Mapping[str, str] | None = None) -> float:
        """One sample's value (0 when absent): for the dashboard, which shows the same numbers."""
        found = self.registry.get_sample_value(name, dict(labels or {}))
        return float(found) if found is not None else 0.0

    def total(self, name: str) -> float:
        """The sum of a metric's samples over all label values."""
        return sum(s.value for family in self.registry.collect() for s in family.samples if s.name == name)


class _LiveCollector(Collector):
    def __init__(self, live: Callable[[], Live]) -> None:
        self._live = live

    def collect(self) -> Iterable[Metric]:
        live = self._live()
        yield _gauge("votr_ready", "1 once the index is built, upstreams were harvested and the model is loaded", int(live.ready))
        yield _gauge("votr_dense_ready", "1 when dense (embedding) retrieval is serving", int(live.dense_ready))
        yield _gauge("votr_indexed_tools", "tools in the live index (withheld ones included)", live.indexed_tools)
        yield _gauge("votr_withheld_tools", "tools held back by change control until accepted", live.withheld_tools)
        if live.sessions is not None:
            yield _gauge("votr_sessions", "live agent sessions", live.sessions)
        up = GaugeMetricFamily("votr_upstream_up", "1 when the upstream server takes calls", labels=["server"])
        state = GaugeMetricFamily("votr_upstream_state", "the upstream's state (1 for the current one)", labels=["server", "state"])
        tools = GaugeMetricFamily("votr_upstream_tools", "tools the upstream listed in its last good harvest", labels=["server"])
        starts = CounterMetricFamily("votr_upstream_starts", "connection attempts to the upstream", labels=["server"])
        restarts = CounterMetricFamily("votr_upstream_restarts", "connection attempts after the first (crashes, retries)",
                                       labels=["server"])
        for u in live.upstreams:
            up.add_metric([u.name], int(u.state == "ready"))
            state.add_metric([u.name, u.state], 1)
            tools.add_metric([u.name], u.tools)
            starts.add_metric([u.name], u.attempts)
            restarts.add_metric([u.name], max(0, u.attempts - 1))
        yield from (up, state, tools, starts, restarts)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)
