"""Scripted agent traces through a real Session with a hand-driven clock."""

from __future__ import annotations

import pytest

from votr_mcp.errors import SessionError
from votr_mcp.session import GuardSettings, ManualClock, Session, SessionSettings, ToolPolicy, polling_tolerant


def make_session(clock: ManualClock, pinned: frozenset[str] = frozenset(), **guard: object) -> Session:
    settings = SessionSettings(guard=GuardSettings(**guard))  # type: ignore[arg-type]
    return Session("s-test", settings, clock, ToolPolicy(pinned))


def call(session: Session, name: str, arguments: dict | None = None, *, tolerant: bool = False) -> str | None:
    """One call_tool as the server does it: admit, (upstream runs), count."""
    session.admit(name)
    return session.after_call(name, arguments or {}, tolerant=tolerant)


def test_fourth_identical_call_within_a_minute_returns_a_note_and_evicts_the_tool() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    session.after_search(["web__fetch", "web__search"])
    notes = []
    for _ in range(4):
        notes.append(call(session, "web__fetch", {"url": "https://example.com"}))
        clock.advance(5)
    assert notes[:3] == [None, None, None]
    assert notes[3] is not None and "search_tools" in notes[3] and "web__fetch" in notes[3]
    assert "web__fetch" not in session.bound()
    with pytest.raises(SessionError, match="search_tools"):
        session.admit("web__fetch")


def test_a_search_that_returns_the_evicted_tool_again_makes_it_callable_with_fresh_counters() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    for _ in range(4):
        call(session, "web__fetch", {"url": "https://example.com"})
    view = session.after_search(["web__fetch"])
    assert view.readmitted == {"web__fetch"}
    assert view.note is None  # re-searching is what the guard asked for
    # Counters were reset: three more identical calls pass without a note.
    assert [call(session, "web__fetch", {"url": "https://example.com"}) for _ in range(3)] == [None] * 3


def test_a_search_that_does_not_return_the_evicted_tool_keeps_it_refused() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    for _ in range(4):
        call(session, "web__fetch", {"url": "https://example.com"})
    session.after_search(["web__search", "files__read"])
    with pytest.raises(SessionError, match="search_tools"):
        session.admit("web__fetch")


def test_calls_spread_beyond_the_time_window_do_not_trip_the_repeat_detector() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, call_window=100, max_in_call_window=50)
    for _ in range(8):
        assert call(session, "db__query", {"sql": "select 1"}) is None
        clock.advance(25)  # at most three calls in any 60 s


def test_an_alternating_loop_too_slow_for_the_time_window_is_caught_by_the_call_window() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    trace = ["a__read", "b__write"] * 4
    notes = []
    for name in trace:
        notes.append((name, call(session, name, {"path": "/tmp/x"})))
        clock.advance(25)  # A recurs every 50 s: never four within a minute
    tripped = [(i, name) for i, (name, note) in enumerate(notes) if note is not None]
    assert tripped[0] == (6, "a__read")  # the 4th A among the last 10 calls
    assert "in your last 7 tool calls" in notes[6][1]


def test_different_arguments_are_different_calls() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    for page in range(10):
        assert call(session, "api__list", {"page": page}) is None


def test_argument_variations_that_normalize_equal_count_as_the_same_call() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    variants = [
        {"url": "https://Example.com/docs/", "query": "open  issues", "limit": 10},
        {"limit": 10.0, "query": " open issues ", "url": "https://example.com/docs"},
        {"query": "open\tissues", "url": "HTTPS://EXAMPLE.COM/docs//", "limit": 10},
        {"url": "https://example.com/docs", "limit": 10, "query": "open issues\n"},
    ]
    notes = [call(session, "web__fetch", v) for v in variants]
    assert notes[:3] == [None, None, None] and notes[3] is not None


def test_read_only_polling_is_tolerated_up_to_its_own_limit() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, polling_max_repeats=10)
    for _ in range(10):
        assert call(session, "ci__status", {"run": 7}, tolerant=True) is None
        clock.advance(5)  # a poll every 5 s: 10 polls within the minute
    note = call(session, "ci__status", {"run": 7}, tolerant=True)
    assert note is not None and "11 times with the same arguments within 60 s" in note


def test_a_burst_of_identical_read_only_calls_still_trips_the_guard() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, polling_max_repeats=30, polling_burst_seconds=10)
    notes = [call(session, "ci__status", {"run": 7}, tolerant=True) for _ in range(4)]
    assert notes[:3] == [None, None, None]
    assert notes[3] is not None and "4 times with the same arguments within 10 s" in notes[3]
    with pytest.raises(SessionError, match="search_tools"):
        session.admit("ci__status")


def test_polling_just_slower_than_the_burst_limit_is_not_a_burst() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, polling_max_repeats=30, polling_burst_seconds=10)
    for _ in range(12):
        assert call(session, "ci__status", {"run": 7}, tolerant=True) is None
        clock.advance(3.4)


def test_slow_polling_of_a_read_only_tool_never_trips_the_call_window() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, polling_max_repeats=10)
    for _ in range(40):
        assert call(session, "ci__status", {"run": 7}, tolerant=True) is None
        clock.advance(10)


def test_exempt_tools_are_treated_like_read_only_ones() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, polling_max_repeats=10, exempt=frozenset({"jobs__wait"}))
    for _ in range(10):
        assert call(session, "jobs__wait", {"id": 1}) is None
        clock.advance(4)
    assert call(session, "jobs__wait", {"id": 1}) is not None


def test_a_second_eviction_of_the_same_tool_gets_a_stronger_note() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3)
    first = [call(session, "web__fetch", {"url": "u"}) for _ in range(4)][-1]
    session.after_search(["web__fetch"])
    second = [call(session, "web__fetch", {"url": "u"}) for _ in range(4)][-1]
    assert first is not None and second is not None
    assert "loop number 2" in second and "tell the user" in second
    assert "loop number" not in first


def test_a_configured_hint_is_added_to_the_note() -> None:
    clock = ManualClock()
    session = make_session(clock, max_repeats=3, hints={"web__fetch": "Pages behind a login return 403; ask the user."})
    note = [call(session, "web__fetch", {"url": "u"}) for _ in range(4)][-1]
    assert note is not None and "Pages behind a login return 403" in note


def test_a_pinned_tool_gets_the_note_but_stays_callable() -> None:
    clock = ManualClock()
    session = make_session(clock, pinned=frozenset({"core__time"}), max_repeats=3)
    note = [call(session, "core__time", {}) for _ in range(4)][-1]
    assert note is not None and "removed" not in note
    session.admit("core__time")  # still allowed


def test_the_guard_can_be_switched_off() -> None:
    clock = ManualClock()
    session = make_session(clock, enabled=False)
    assert [call(session, "web__fetch", {"url": "u"}) for _ in range(20)] == [None] * 20


def test_guard_memory_stays_bounded_under_many_distinct_calls() -> None:
    clock = ManualClock()
    session = make_session(clock)
    for i in range(5000):
        call(session, "api__get", {"id": i})
        clock.advance(0.001)
    assert session.guard.tracked() <= 512
    clock.advance(61)
    call(session, "api__get", {"id": -1})
    assert session.guard.tracked() <= session._settings.guard.call_window_size + 1


@pytest.mark.parametrize(
    ("annotations", "tolerant"),
    [
        ({"readOnlyHint": True}, True),
        ({"idempotentHint": True, "readOnlyHint": False}, True),
        ({"readOnlyHint": False, "destructiveHint": True}, False),
        ({"readOnlyHint": "true"}, False),  # only a real boolean counts
        (None, False),
        ({}, False),
    ],
)
def test_only_read_only_or_idempotent_annotations_make_a_tool_polling_tolerant(annotations: dict | None, tolerant: bool) -> None:
    assert polling_tolerant(annotations) is tolerant


def test_the_manual_clock_refuses_to_go_backwards() -> None:
    clock = ManualClock(5.0)
    with pytest.raises(ValueError, match="cannot go backwards"):
        clock.advance(-1)
    assert clock() == 5.0
