"""Learning from use: outcomes in, a retriever that ranks by them out.

:class:`Learning` is what the server holds. It records each search and call in the
:class:`~votr_mcp.learning.outcomes.OutcomeLog`, turns each call of a tool the agent's last search
listed into evidence (the bandit's success or failure in that search's context; a success also makes
the request an example of the tool, and the tools ranked above the called one count as passed over),
and hands the server, for each search, the catalog's retriever with that evidence applied through
the retriever's one hook (:meth:`votr_mcp.retrieval.pipeline.Retriever.with_learning`).

Evidence acts per request as well as per tool. A request a tool failed for, or was passed over for,
is kept as a rejected request of that tool: the same request again, or a near-identical one (cosine
from :data:`REJECT_FLOOR`), sinks that tool in the head, so the next candidate surfaces and can be
learned in its turn; a later success of the tool for such a request forgets the rejection. In the
replay (eval/REPLAY.md) this took the same request again from .935 to .954 top-1 (learning off .814)
and its hand-off from .949 to .972; held-back rows, whose tools never failed, keep their top-1.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import ToolKey
from votr_mcp.learning.bandit import Bandit
from votr_mcp.learning.examples import LearnedExamples, LearnedView, check_mix
from votr_mcp.learning.outcomes import CallEvent, EventSink, OutcomeLog, Returned, SearchEvent, context_of

__all__ = ["Learning", "PASSED_OVER"]

log = logging.getLogger(__name__)

PASSED_OVER = 0.5
"""A tool ranked above the one the agent called and used successfully counts as this much of a failure
(the agent read it and chose another; it may still have been right for another reading)."""


NEAR_BONUS = 2.0
"""The most a request's nearness to a learned request adds to its tool's head score (a share of the
best), reached at cosine 1 (the same request again) by a tool with much evidence."""

NEAR_FLOOR = 0.7
"""The cosine with a learned request below which it adds nothing (a request about something else)."""

NEAR_HALF = 1.0
"""Successful calls at which the nearest learned request lifts its tool half as much as it can."""

REJECT_DROP = 2.0
"""The most a request's nearness to one a tool failed (or was passed over) for takes from that tool's
head score (a share of the best, as the lift adds): at cosine 1 after one failure, 2 · 2/3 of the best,
which sinks it under every tool the rerank scored at all."""

REJECT_FLOOR = 0.85
"""The cosine with a rejected request below which it takes nothing: near-identical requests only (a
paraphrase of a request is rarely above 0.7). Chosen on the replay's fitting half of needs (0.6, 0.7
and 0.85 gave the same top-1 there; 0.85 one more hand-off) and reported on the other half."""

REJECT_HALF = 0.5
"""Failures of one request with one tool at which it takes half as much as it can (a tool passed over
counts :data:`PASSED_OVER` of a failure)."""

NEXT_MIN = 3
"""Times a tool must have followed another before it is offered as "usually called next"."""

RECENT_VECTORS = 1024
"""Request vectors kept for learning (about 3.5 KB each with the joint embedder)."""


class Learning:
    """The outcome log, the bandit and the learned examples of one server."""

    def __init__(self, *, learn: bool = True, keep_queries: bool = True, examples: bool = True, bandit: Bandit | None = None,
                 sink: EventSink | None = None, seed: int | None = None,
                 near_bonus: float = NEAR_BONUS, near_floor: float = NEAR_FLOOR, mix: str = "off",
                 near_half: float = NEAR_HALF, reject_drop: float = REJECT_DROP, reject_floor: float = REJECT_FLOOR) -> None:
        self.mix = check_mix(mix)  # "off": learned requests leave the tool vectors as they are (examples.py)
        self.learn = learn  # False: outcomes teach nothing (only examples given in config act)
        self.near_bonus = near_bonus
        self.near_floor = near_floor
        self.near_half = near_half
        self.reject_drop = reject_drop
        self.reject_floor = reject_floor
        self.log = OutcomeLog(keep_queries=keep_queries, sink=sink)
        self.bandit = bandit if bandit is not None else Bandit(seed=seed)
        self.examples = LearnedExamples()
        # Requests a tool failed for, or was passed over for (the agent read it and called another
        # that worked): that tool sinks for requests like them.
        self.rejected = LearnedExamples()
        self.learn_examples = examples
        # The vectors of recent requests, as their searches embedded them: a learned request costs no
        # second embedding. Bounded: older ones are embedded again if ever needed (after a restart).
        self._recent: OrderedDict[str, tuple[str, NDArray[np.float32]]] = OrderedDict()  # request -> (model id, vector)
        self._lock = threading.Lock()
        self._built: _State | None = None
        self._last_success: OrderedDict[str, ToolKey] = OrderedDict()  # session -> its last successful call
        self._next: dict[ToolKey, dict[ToolKey, int]] = {}  # tool -> tools called successfully right after it
        self.log.listen(self._learn)

    # ---- what the server reports ------------------------------------------------------------

    def searched(self, session: str, query: str, returned: Sequence[tuple[ToolKey, str, float]],
                 ranked_servers: Sequence[str], abstained: bool) -> SearchEvent:
        """A search answered: the tools handed off (key, call name, score), in order."""
        items = [Returned(key, name, rank, float(score)) for rank, (key, name, score) in enumerate(returned, 1)]
        return self.log.searched(session, query, items, context_of(ranked_servers), abstained)

    def called(self, session: str, key: ToolKey, call_name: str, success: bool, answered: bool = True) -> CallEvent:
        """A call finished (``success``: the upstream ran it without an error result; ``answered``
        False: its server timed out or failed before answering, which says nothing of the request)."""
        return self.log.called(session, key, call_name, success, answered)

    def restore(self, calls: Iterable[Any]) -> int:
        """Learn again from stored calls (``votr_mcp.store.events.StoredCall``, oldest first) after a
        restart; returns how many counted."""
        n = 0
        for call in calls:
            if call.rank is None:
                continue
            key = (call.server, call.tool)
            self.bandit.record(key, call.context, call.success)
            query = call.query if self.learn_examples and self.log.keep_queries else None
            if call.success:
                for other in call.passed_over:
                    self.bandit.record((other[0], other[1]), call.context, False, PASSED_OVER)
                if query:
                    self._learn_request(key, query, [(other[0], other[1]) for other in call.passed_over], None)
            elif query and call.answered:
                self.rejected.add(key, query)
            n += 1
        return n

    def restore_next(self, follows: Iterable[tuple[ToolKey, ToolKey, int]]) -> int:
        """Count again what was usually called next, from stored (tool, tool right after it, times)
        (``votr_mcp.store.events.EventStore.successors``); returns how many pairs."""
        n = 0
        with self._lock:
            for before, after, times in follows:
                row = self._next.setdefault((before[0], before[1]), {})
                key = (after[0], after[1])
                row[key] = row.get(key, 0) + int(times)
                n += 1
        return n

    def flush(self) -> None:
        """Write buffered events to the sink (blocking: call from a worker thread)."""
        flush = getattr(self.log.sink, "flush", None)
        if flush is not None:
            flush()

    def usually_next(self, key: ToolKey) -> ToolKey | None:
        """The tool most often called successfully right after ``key`` in a session, when it followed
        at least :data:`NEXT_MIN` times and in at least half the cases."""
        with self._lock:
            after = dict(self._next.get(key, {}))
        if not after:
            return None
        best, count = max(after.items(), key=lambda kv: kv[1])
        return best if count >= NEXT_MIN and count * 2 >= sum(after.values()) else None

    def _follow(self, event: CallEvent) -> None:
        with self._lock:
            before = self._last_success.get(event.session)
            self._last_success[event.session] = event.key
            self._last_success.move_to_end(event.session)
            while len(self._last_success) > 10_000:
                self._last_success.popitem(last=False)
            if before is None or before == event.key:
                return
            after = self._next.setdefault(before, {})
            after[event.key] = after.get(event.key, 0) + 1
        if self.log.sink is not None:
            self.log.sink.add_follow(before, event.key)  # buffered: written with the next flush

    def _learn(self, event: CallEvent) -> None:
        if event.success and self.learn:
            self._follow(event)
        search = event.search
        if search is None and event.success and self.learn and self.learn_examples and event.after is not None and event.after.query:
            # A tool the last search did not list (it sank there after failing for that request), called
            # by name and working: what it was rejected for near that request no longer holds.
            with self._lock:
                vector = self._recent.get(event.after.query)
            self.rejected.discard(event.key, event.after.query, vector, self.reject_floor)
        if search is None or not self.learn:
            return  # otherwise, a call of a tool no search of this session listed says nothing about search
        self.bandit.record(event.key, search.context, event.success)
        rank = event.rank or 0
        passed = [r.key for r in search.returned if r.rank < rank] if event.success else []
        for key in passed:
            self.bandit.record(key, search.context, False, PASSED_OVER)
        if not (self.learn_examples and search.query):
            return
        with self._lock:
            vector = self._recent.get(search.query)
        if event.success:
            self._learn_request(event.key, search.query, passed, vector)
        elif event.answered:
            self.rejected.add(event.key, search.query, vector=vector)

    def _learn_request(self, key: ToolKey, query: str, passed: Sequence[ToolKey],
                       vector: tuple[str, NDArray[np.float32]] | None) -> None:
        """``query`` led to a successful call of ``key`` after the agent passed over ``passed``."""
        self.examples.add(key, query, vector=vector)
        # It failed for this request or one like it before (bad arguments, an upstream down), and works now.
        self.rejected.discard(key, query, vector, self.reject_floor)
        for other in passed:
            self.rejected.add(other, query, PASSED_OVER, vector=vector)

    # ---- what the server searches with --------------------------------------------------------

    def search(self, base: Any, query: str, **options: Any) -> Any:
        """Search ``base`` with what was learned applied."""
        return self.searcher(base).search(query, **options)

    def refresh(self, base: Any) -> None:
        """Rebuild what was learned into the index now if it changed (after a call, so the next
        search does not pay for it)."""
        if hasattr(base, "with_learning"):
            self._state(base)
        self.flush()

    def searcher(self, base: Any) -> Any:
        """``base`` (the live index's retriever) with what was learned applied; ``base`` itself when
        it has no learning hook."""
        if not hasattr(base, "with_learning"):
            return base
        return self._state(base).searcher

    def _adjust(self, state: _State) -> Callable[..., NDArray[np.float64]]:
        """The retriever hook over ``state``: the lift of tools whose learned requests are near the
        ranked text, then the bandit's bounded move; it keeps the text's vector for learning."""
        bandit = self.bandit

        def adjust(text: str, vec: NDArray[np.float32] | None, head: NDArray[np.intp],
                   scores: NDArray[np.float64]) -> NDArray[np.float64]:
            if vec is not None and self.log.keep_queries and self.learn_examples:
                with self._lock:
                    self._recent[text] = (state.model_id, vec)
                    self._recent.move_to_end(text)
                    while len(self._recent) > RECENT_VECTORS:
                        self._recent.popitem(last=False)
            best = float(np.max(scores)) if len(scores) else 0.0
            if vec is not None and len(state.rejected) and self.reject_drop > 0:
                near, count = state.rejected.nearest_counted(vec, head)
                scores = scores - self.reject_drop * best * rejected_drop(near, count, self.reject_floor)
            if vec is not None and len(state.view) and self.near_bonus > 0:
                lift = nearest_lift(state.view.nearest_of(vec, head), state.trust[head], self.near_floor)
                scores = scores + self.near_bonus * best * lift
            order = head[np.argsort(-scores, kind="stable")]
            context = context_of([state.servers[i] for i in order])
            return bandit.adjust([state.keys[i] for i in head], context, scores)

        return adjust

    def _state(self, base: Any) -> _State:
        version = (self.examples.version, self.rejected.version)
        with self._lock:
            state = self._built
            if state is not None and state.base is base and state.version == version:
                return state
        catalog = base.catalog
        dense = base.dense_index
        rejected = (self.rejected.view(catalog, dense.model_id, base.embed) if dense is not None and self.learn_examples
                    and len(self.rejected) else _empty_view())
        if state is not None and state.base is base and state.version[0] == version[0]:
            # Only the rejected requests changed (a failure): what was learned from successes stands.
            view, trust, learned, matrix = state.view, state.trust, state.learned, state.matrix
        else:
            view = (self.examples.view(catalog, dense.model_id, base.embed) if dense is not None and self.learn_examples
                    and len(self.examples) else _empty_view())
            trust = np.zeros(len(catalog))
            for row, n in view.successes.items():
                trust[row] = n / (n + self.near_half)
            learned = None
            if dense is not None:
                # Same base: update the learned rows of the matrix built for it in place (see LearnedView.dense).
                same = state is not None and state.base is base and state.matrix is not None
                out = state.matrix if same and state is not None else None
                stale = sorted(set(state.view.weight) - set(view.weight)) if same and state is not None else []
                learned = view.dense(dense, self.mix, out=out, stale=stale)
            # The learned Tool2Vec matrix, owned by this state (None when the tool vectors stay the catalog's).
            matrix = learned.tools_t2v if learned is not None and dense is not None and learned.tools_t2v is not dense.tools_t2v else None
        state = _State(base, version, dense.model_id if dense is not None else "", [t.key for t in catalog],
                       [t.server for t in catalog], view, trust, rejected, matrix, learned)
        state.searcher = base.with_learning((lambda _: learned) if learned is not None else None, self._adjust(state))
        with self._lock:
            self._built = state
        return state


def _empty_view() -> LearnedView:
    return LearnedView(np.zeros((0, 0), np.float32), np.zeros(0, np.intp), {})


def rejected_drop(near: NDArray[np.float64], count: NDArray[np.float64], floor: float) -> NDArray[np.float64]:
    """How far each head tool sinks, in [0, 1): by how far the request's cosine with the nearest request
    that tool was rejected for (``near``, -1 without) passes ``floor``, times ``count/(count + REJECT_HALF)``
    for that request's ``count`` failures. Every rejected tool sinks, not only the nearest one: sinking
    a tool the request does not want hands the place to the others, not to one of them."""
    past = np.clip((near - floor) / (1.0 - floor), 0.0, 1.0)
    return np.asarray(past * count / (count + REJECT_HALF), dtype=np.float64)


def nearest_lift(near: NDArray[np.float64], trust: NDArray[np.float64], floor: float) -> NDArray[np.float64]:
    """The lift of each head tool, in (0, 1]: only the tool of the learned request nearest the request
    (``near``: each tool's best cosine with its learned requests, -1 without) is lifted, by how far
    that cosine passes ``floor`` times its tool's ``trust``. One neighbour, not every tool with a
    learned request somewhat near: a request that reads like several earlier ones of one server
    would otherwise lift them all over the tool it asks for (a tool nobody has called yet)."""
    lift = np.zeros(len(near))
    if len(near) == 0:
        return lift
    j = int(np.argmax(near))
    lift[j] = float(np.clip((near[j] - floor) / (1.0 - floor), 0.0, 1.0)) * float(trust[j])
    return lift


@dataclass
class _State:
    """What was learned, applied to one base retriever at one version of the learned requests."""

    base: Any  # the base retriever (held, so its identity is not reused)
    version: tuple[int, int]
    model_id: str
    keys: list[ToolKey]
    servers: list[str]
    view: LearnedView
    trust: NDArray[np.float64]  # each tool row's n/(n + NEAR_HALF) for n successful calls (0: none)
    rejected: LearnedView  # the requests each tool failed or was passed over for
    matrix: NDArray[np.float32] | None = None  # the learned Tool2Vec matrix (owned: updated in place)
    learned: Any = None  # the dense index with the learned requests in it (None: dense is off)
    searcher: Any = None  # the base retriever with all of it applied
