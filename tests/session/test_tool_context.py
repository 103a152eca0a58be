"""The per-session working set: LRU order, TTL expiry, pins, binding modes, search notes."""

from __future__ import annotations

import pytest

from votr_mcp.errors import ConfigError, SessionError
from votr_mcp.session import ContextSettings, ManualClock, SearchSettings, Session, SessionSettings, ToolContext, ToolPolicy


def make_session(clock: ManualClock, pinned: frozenset[str] = frozenset(), **context: object) -> Session:
    settings = SessionSettings(context=ContextSettings(**context))  # type: ignore[arg-type]
    return Session("s-test", settings, clock, ToolPolicy(pinned))


def test_the_least_recently_used_tool_is_evicted_first() -> None:
    clock = ManualClock()
    context = ToolContext(ContextSettings(capacity=3), lambda name: False)
    context.bind(["a", "b", "c"], clock())  # a ranked best, so it ends most recent
    clock.advance(1)
    context.touch("c", clock())
    clock.advance(1)
    evicted = context.bind(["d"], clock())
    assert evicted == ["b"]
    assert context.names(clock()) == ["a", "c", "d"]


def test_a_search_bigger_than_the_capacity_keeps_its_best_ranked_tools() -> None:
    clock = ManualClock()
    context = ToolContext(ContextSettings(capacity=2), lambda name: False)
    context.bind(["best", "second", "third"], clock())
    assert set(context.names(clock())) == {"best", "second"}


def test_tools_unused_past_the_ttl_expire_and_used_ones_stay() -> None:
    clock = ManualClock()
    context = ToolContext(ContextSettings(ttl_seconds=100), lambda name: False)
    context.bind(["used", "idle"], clock())
    clock.advance(60)
    context.touch("used", clock())
    clock.advance(60)
    assert context.names(clock()) == ["used"]
    clock.advance(100)
    assert context.names(clock()) == []


def test_pinned_tools_survive_eviction_and_do_not_count_toward_capacity() -> None:
    clock = ManualClock()
    session = make_session(clock, pinned=frozenset({"core__time"}), capacity=2, ttl_seconds=10)
    session.after_search(["core__time", "a", "b"])
    assert sorted(session.bound()) == ["a", "b"]  # the pin took no slot
    session.after_search(["c", "d"])
    clock.advance(3600)
    assert session.bound() == []
    session.admit("core__time")  # still available long after everything else expired
    assert session.after_search(["core__time"]).already_bound == {"core__time"}


def test_strict_mode_refuses_unbound_tools_and_says_to_search() -> None:
    clock = ManualClock()
    session = make_session(clock, mode="strict")
    with pytest.raises(SessionError, match="search_tools") as refused:
        session.admit("github__create_issue")
    assert "strict" in str(refused.value)
    session.after_search(["github__create_issue"])
    session.admit("github__create_issue")


def test_strict_mode_refuses_a_tool_whose_binding_expired() -> None:
    clock = ManualClock()
    session = make_session(clock, mode="strict", ttl_seconds=60)
    session.after_search(["github__create_issue"])
    clock.advance(61)
    with pytest.raises(SessionError, match="search_tools"):
        session.admit("github__create_issue")


def test_open_mode_allows_any_tool_and_binds_it_on_use() -> None:
    clock = ManualClock()
    session = make_session(clock)
    session.admit("github__create_issue")
    assert session.bound() == ["github__create_issue"]


def test_search_results_mark_the_tools_already_bound() -> None:
    clock = ManualClock()
    session = make_session(clock)
    assert session.after_search(["a", "b"]).already_bound == frozenset()
    view = session.after_search(["b", "c"])
    assert view.already_bound == {"b"}


def test_a_search_mostly_repeating_a_recent_one_gets_a_note() -> None:
    clock = ManualClock()
    session = Session("s", SessionSettings(search=SearchSettings(window_seconds=300, overlap=0.8)), clock)
    assert session.after_search(["a", "b", "c", "d", "e"]).note is None
    clock.advance(30)
    note = session.after_search(["b", "a", "c", "d", "x"]).note  # 4 of 5 repeat
    assert note is not None and "more specific query" in note and "already returned" in note
    clock.advance(30)
    assert session.after_search(["x", "y", "z", "a", "q"]).note is None  # mostly new


def test_a_repeat_of_an_old_search_outside_the_window_gets_no_note() -> None:
    clock = ManualClock()
    session = Session("s", SessionSettings(search=SearchSettings(window_seconds=300)), clock)
    session.after_search(["a", "b"])
    clock.advance(301)
    assert session.after_search(["a", "b"]).note is None


def test_an_empty_search_result_gets_no_redundancy_note() -> None:
    clock = ManualClock()
    session = make_session(clock)
    session.after_search([])
    assert session.after_search([]).note is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"capacity": 0}, "context.capacity must be greater than 0"),
        ({"capacity": 2.5}, "context.capacity must be an integer"),
        ({"mode": "lenient"}, "context.mode must be one of open, strict"),
        ({"ttl_seconds": -1}, "context.ttl_seconds must be greater than 0"),
    ],
)
def test_bad_context_settings_name_the_field_and_the_value(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ContextSettings(**kwargs)
