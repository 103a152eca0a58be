"""What happened: every search and call, as metrics, spans, and a bounded memory for the dashboard.

``app.py`` reports each finished request here (:meth:`Observer.searched`, :meth:`Observer.called`);
the runtime reports forwarded upstream calls and the session layer guard trips. Nothing here
changes an answer. The memory is bounded three ways: the last :data:`RECENT` searches (what was
returned, and what the agent then called), per-minute counts for a day (hit rate and abstention
over time), per-hour call counts per tool for a day (the usage heatmap).

A search is a *hit* when the agent then calls one of the tools it returned, in the same session,
before its next search; the rank of the called tool in that search is recorded (0: not in it).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from votr_mcp.server import status
from votr_mcp.server.metrics import Live, Metrics, UpstreamLive
from votr_mcp.server.tracing import Tracing

if TYPE_CHECKING:
    from votr_mcp.server.hub import Hub

__all__ = ["CallRecord", "Observer", "SearchRecord", "RECENT"]

log = logging.getLogger(__name__)

RECENT = 500  # searches kept for the dashboard and drift
_SESSIONS = 10_000  # sessions whose last search is remembered (for the rank of a call)
_MINUTES = 24 * 60
_HOURS = 24
_QUERY_CHARS = 300


@dataclass(slots=True)
class CallRecord:
    """One call_tool request as the dashboard shows it."""

    at: float
    name: str
    server: str
    outcome: str
    seconds: float
    rank: int  # 1-based rank in the session's last search; 0 when not in it (or no search)


@dataclass(slots=True)
class SearchRecord:
    """One search_tools answer, and the calls that followed it in its session."""

    id: int
    at: float
    query: str
    server_intent: str | None
    returned: list[str]
    tiers: list[str | None]
    abstained: bool
    seconds: float
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def hit(self) -> bool:
        return any(c.rank > 0 for c in self.calls)


class Observer:
    """Metrics, spans and recent history of one server; ``hub`` is read for live state only."""

    def __init__(self, hub: Hub, *, clock: Callable[[], float] = time.time, tracing: Tracing | None = None) -> None:
        self.hub = hub
        self.clock = clock
        self.tracing = tracing or Tracing()
        self.metrics = Metrics(self.live)
        self.recent: deque[SearchRecord] = deque(maxlen=RECENT)
        self._last: OrderedDict[str, SearchRecord] = OrderedDict()
        self._minutes: OrderedDict[int, list[int]] = OrderedDict()  # minute -> [searches, abstained, hits]
        self._usage: Counter[tuple[str, int]] = Counter()  # (call name, hour) -> calls
        self._ids = 0
        self.sessions: Callable[[], int] | None = None

    # -- events -----------------------------------------------------------------------------

    def searched(self, keys: Sequence[str | None], query: str, server_intent: str | None, structured: Mapping[str, Any],
                 seconds: float, retrieval_seconds: float | None = None) -> SearchRecord:
        """A search_tools answer was sent (``structured`` is its structured content)."""
        tools = [t for t in structured.get("tools", ()) if t.get("tier") != "pinned"]
        abstained = bool(structured.get("abstained")) and not tools
        m = self.metrics
        m.searches.labels("abstained" if abstained else "answered").inc()
        if abstained:
            m.abstentions.inc()
        m.returned.observe(len(tools))
        m.tiers.labels(str(tools[0].get("tier") or "unknown") if tools else "none").inc()
        m.stage_seconds.labels("search").observe(seconds)
        if retrieval_seconds is not None:
            m.stage_seconds.labels("retrieval").observe(retrieval_seconds)
        now = self.clock()
        self._ids += 1
        record = SearchRecord(self._ids, now, query[:_QUERY_CHARS], server_intent, [t["name"] for t in tools],
                              [t.get("tier") for t in tools], abstained, seconds)
        self.recent.append(record)
        for key in dict.fromkeys(k for k in keys if k):
            self._last[key] = record
            self._last.move_to_end(key)
        while len(self._last) > _SESSIONS:
            self._last.popitem(last=False)
        bucket = self._minute(now)
        bucket[0] += 1
        bucket[1] += abstained
        tier = tools[0].get("tier") if tools else None
        self.tracing.search(query_chars=len(query), k=len(tools), tier=tier, abstained=abstained, seconds=seconds)
        return record

    def search_failed(self, seconds: float) -> None:
        self.metrics.searches.labels("error").inc()
        self.metrics.stage_seconds.labels("search").observe(seconds)

    def called(self, keys: Sequence[str | None], name: str, outcome: str, seconds: float) -> CallRecord:
        """A call_tool request finished with ``outcome`` (one of metrics.CALL_OUTCOMES)."""
        tool = self.hub.index.current.by_name.get(name)
        server = tool.server if tool is not None else "unknown"
        last = next((self._last[k] for k in keys if k and k in self._last), None)
        rank = last.returned.index(name) + 1 if last is not None and name in last.returned else 0
        now = self.clock()
        record = CallRecord(now, name, server, outcome, seconds, rank)
        m = self.metrics
        m.calls.labels(server, outcome).inc()
        m.stage_seconds.labels("call").observe(seconds)
        m.called_rank.observe(rank)
        if last is not None and len(last.calls) < 50:
            was_hit = last.hit
            last.calls.append(record)
            if last.hit and not was_hit:
                m.hits.inc()
                self._minute(last.at)[2] += 1
        if tool is not None:
            hour = int(now // 3600)
            self._usage[(name, hour)] += 1
            if len(self._usage) > 20_000:
                self._prune_usage(hour)
        self.tracing.call(server=server, outcome=outcome, rank=rank, seconds=seconds)
        return record

    def upstream_call(self, server: str, seconds: float) -> None:
        """One call forwarded to an upstream finished (whatever its outcome)."""
        self.metrics.stage_seconds.labels("upstream").observe(seconds)

    def guard_trip(self, call_name: str) -> None:
        self.metrics.guard_trips.inc()
        log.info("iteration guard evicted %s", call_name)

    # -- reading ----------------------------------------------------------------------------

    def live(self) -> Live:
        hub = self.hub
        checks = status.readiness(hub)
        get = getattr(hub.upstreams, "statuses", None)
        upstreams = tuple(UpstreamLive(s.name, s.state, s.tool_count, s.attempts) for s in get().values()) if get else ()
        sessions = self.sessions() if self.sessions is not None else None
        searcher = hub.index.current.searcher
        dense = bool(getattr(searcher, "dense_ready", False))
        return Live(all(checks.values()), dense, len(hub.index.current.catalog), len(hub.change_control.withheld()),
                    sessions, upstreams)

    def timeline(self, minutes: int = 60) -> list[tuple[int, int, int, int]]:
        """(minute, searches, abstained, hits) for the last ``minutes`` minutes, oldest first, zeros included."""
        end = int(self.clock() // 60)
        return [(m, *self._minutes.get(m, (0, 0, 0))) for m in range(end - minutes + 1, end + 1)]

    def hourly(self, hours: int = 24) -> list[tuple[int, int, int, int]]:
        """(hour, searches, abstained, hits) for the last ``hours`` hours, summed from the minutes kept."""
        end = int(self.clock() // 3600)
        sums = {h: [0, 0, 0] for h in range(end - hours + 1, end + 1)}
        for minute, counts in self._minutes.items():
            row = sums.get(minute // 60)
            if row is not None:
                for i in range(3):
                    row[i] += counts[i]
        return [(h, *row) for h, row in sums.items()]  # type: ignore[misc]

    def usage(self, hours: int = 24, top: int = 15) -> tuple[list[int], list[tuple[str, list[int]]]]:
        """The heatmap: the last ``hours`` hours, and the ``top`` most called tools with calls per hour."""
        end = int(self.clock() // 3600)
        span = list(range(end - hours + 1, end + 1))
        totals: Counter[str] = Counter()
        for (name, hour), n in self._usage.items():
            if hour >= span[0]:
                totals[name] += n
        rows = [(name, [self._usage.get((name, h), 0) for h in span]) for name, _ in totals.most_common(top)]
        return span, rows

    def drift(self, min_returns: int = 5, min_drop: float = 0.2) -> list[tuple[str, float, float, int, int]]:
        """Tools whose hit rate fell: (call name, earlier rate, recent rate, earlier returns, recent returns), worst first.

        The remembered searches are split in two halves by time; a tool's hit rate in a half is the
        share of the searches returning it after which the agent called it."""
        searches = list(self.recent)
        if len(searches) < 2:
            return []
        half = len(searches) // 2
        rates = [self._rates(searches[:half]), self._rates(searches[half:])]
        out = []
        for name, (before_called, before_n) in rates[0].items():
            after_called, after_n = rates[1].get(name, (0, 0))
            if before_n < min_returns or after_n < min_returns:
                continue
            before, after = before_called / before_n, after_called / after_n
            if before - after >= min_drop:
                out.append((name, before, after, before_n, after_n))
        return sorted(out, key=lambda row: row[2] - row[1])

    # -- internals --------------------------------------------------------------------------

    @staticmethod
    def _rates(searches: Sequence[SearchRecord]) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {}
        for s in searches:
            called = {c.name for c in s.calls}
            for name in s.returned:
                row = counts.setdefault(name, [0, 0])
                row[0] += name in called
                row[1] += 1
        return {name: (c, n) for name, (c, n) in counts.items()}

    def _minute(self, at: float) -> list[int]:
        minute = int(at // 60)
        bucket = self._minutes.get(minute)
        if bucket is None:
            bucket = self._minutes[minute] = [0, 0, 0]
            while len(self._minutes) > _MINUTES:
                self._minutes.popitem(last=False)
        return bucket

    def _prune_usage(self, hour: int) -> None:
        for key in [k for k in self._usage if k[1] <= hour - _HOURS]:
            del self._usage[key]
