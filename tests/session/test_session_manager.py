"""The session registry: identity, isolation and bounds."""

from __future__ import annotations

import pytest

from votr_mcp.errors import ConfigError, SessionError
from votr_mcp.session import GuardSettings, ManualClock, SessionManager, SessionSettings


def make_manager(clock: ManualClock, **settings: object) -> SessionManager:
    return SessionManager(SessionSettings(**settings), clock=clock)  # type: ignore[arg-type]


def test_session_ids_are_long_random_and_never_repeat() -> None:
    manager = make_manager(ManualClock())
    ids = {manager.resolve().id for _ in range(2000)}
    assert len(ids) == 2000
    assert min(len(i) for i in ids) >= 32  # 24 random bytes, URL-safe base64


def test_a_session_id_brings_back_the_same_session() -> None:
    manager = make_manager(ManualClock())
    first = manager.resolve()
    first.after_search(["a__x"])
    assert manager.resolve(session_id=first.id) is first


def test_two_sessions_never_share_bindings_or_guard_state() -> None:
    clock = ManualClock()
    manager = SessionManager(SessionSettings(guard=GuardSettings(max_repeats=3)), clock=clock)
    one, two = manager.resolve(), manager.resolve()
    one.after_search(["web__fetch"])
    for _ in range(4):
        one.admit("web__fetch")
        one.after_call("web__fetch", {"url": "u"})
    with pytest.raises(SessionError):
        one.admit("web__fetch")
    two.admit("web__fetch")  # the other session's loop does not touch this one
    assert two.after_call("web__fetch", {"url": "u"}) is None
    assert one.bound() == [] and two.bound() == ["web__fetch"]


def test_an_unknown_session_id_is_refused_without_echoing_it() -> None:
    manager = make_manager(ManualClock())
    with pytest.raises(SessionError, match="unknown or expired session_id") as refused:
        manager.resolve(session_id="guessed-secret-value")
    assert "guessed-secret-value" not in str(refused.value)
    assert "Omit session_id" in str(refused.value)


@pytest.mark.parametrize("bad", ["", "x" * 500, 42])
def test_a_malformed_session_id_gets_a_clear_error(bad: object) -> None:
    manager = make_manager(ManualClock())
    with pytest.raises(SessionError, match="session_id must be the string that search_tools returned"):
        manager.resolve(session_id=bad)  # type: ignore[arg-type]


def test_one_transport_keeps_one_session_and_another_transport_gets_its_own() -> None:
    manager = make_manager(ManualClock())
    a1 = manager.resolve(transport_key="conn-a")
    a2 = manager.resolve(transport_key="conn-a")
    b = manager.resolve(transport_key="conn-b")
    assert a1 is a2 and a1 is not b


def test_a_stateless_client_continues_its_session_with_the_returned_id_from_any_request() -> None:
    manager = make_manager(ManualClock())
    first = manager.resolve()  # stateless HTTP: no connection identity
    assert manager.resolve(session_id=first.id) is first
    assert manager.resolve(session_id=first.id, transport_key="conn-b") is first


def test_a_session_started_on_a_connection_cannot_be_used_from_another() -> None:
    manager = make_manager(ManualClock())
    mine = manager.resolve(transport_key="conn-a")
    assert manager.resolve(session_id=mine.id, transport_key="conn-a") is mine
    for other in ("conn-b", None):
        with pytest.raises(SessionError, match="belongs to another connection"):
            manager.resolve(session_id=mine.id, transport_key=other)


def test_closing_a_transport_ends_its_session() -> None:
    manager = make_manager(ManualClock())
    session = manager.resolve(transport_key="conn")
    manager.close_transport("conn")
    with pytest.raises(SessionError):
        manager.get(session.id)
    assert manager.resolve(transport_key="conn") is not session


def test_idle_sessions_are_collected_and_active_ones_kept() -> None:
    clock = ManualClock()
    manager = make_manager(clock, idle_seconds=100)
    idle, active = manager.resolve(), manager.resolve()
    clock.advance(60)
    manager.resolve(session_id=active.id)
    clock.advance(60)
    assert manager.collect() == 1
    with pytest.raises(SessionError):
        manager.get(idle.id)
    assert manager.get(active.id) is active


def test_sessions_older_than_the_maximum_age_are_collected_even_when_busy() -> None:
    clock = ManualClock()
    manager = make_manager(clock, idle_seconds=100, max_age_seconds=250)
    busy = manager.resolve()
    for _ in range(4):
        clock.advance(60)
        manager.resolve(session_id=busy.id)  # never idle for long
    clock.advance(20)  # 260 s old
    with pytest.raises(SessionError, match="expired"):
        manager.resolve(session_id=busy.id)
    assert len(manager) == 0


def test_at_the_session_limit_the_least_recently_used_session_makes_room() -> None:
    clock = ManualClock()
    manager = make_manager(clock, max_sessions=3)
    first, second, third = (manager.resolve(transport_key=k) for k in ("1", "2", "3"))
    clock.advance(1)
    manager.resolve(session_id=first.id, transport_key="1")
    fourth = manager.resolve()
    assert len(manager) == 3
    with pytest.raises(SessionError):
        manager.get(second.id)
    for kept in (first, third, fourth):
        assert manager.get(kept.id) is kept
    # The dropped session's transport gets a fresh session, not a dangling one.
    assert manager.resolve(transport_key="2") is not second


def test_a_flood_of_one_off_sessions_does_not_push_out_a_session_in_use() -> None:
    clock = ManualClock()
    manager = make_manager(clock, max_sessions=10)
    working = manager.resolve()
    manager.resolve(session_id=working.id)  # the agent came back: a session in use
    for _ in range(1000):  # stateless requests that never pass their id back
        manager.resolve()
        clock.advance(1)
    assert len(manager) == 10
    assert manager.get(working.id) is working


def test_when_every_session_is_in_use_the_least_recently_used_one_makes_room() -> None:
    clock = ManualClock()
    manager = make_manager(clock, max_sessions=2)
    a, b = manager.resolve(transport_key="a"), manager.resolve(transport_key="b")
    clock.advance(1)
    manager.resolve(transport_key="b")
    clock.advance(1)
    manager.resolve(transport_key="a")
    manager.resolve()
    assert manager.get(a.id) is a
    with pytest.raises(SessionError):
        manager.get(b.id)


def test_pins_can_be_replaced_while_sessions_live() -> None:
    manager = make_manager(ManualClock())
    session = manager.resolve()
    assert session.after_search(["core__time"]).already_bound == frozenset()
    manager.set_pinned(["core__time", "core__echo"])
    assert session.after_search(["core__echo"]).already_bound == {"core__echo"}


def test_churn_leaves_no_sessions_or_transport_mappings_behind() -> None:
    clock = ManualClock()
    manager = make_manager(clock, idle_seconds=10, max_sessions=500)
    for i in range(5000):
        session = manager.resolve(transport_key=f"conn-{i}")
        session.after_search([f"s__tool{i % 50}", "s__common"])
        clock.advance(0.01)
    assert len(manager) <= 500
    clock.advance(11)
    manager.collect()
    assert len(manager) == 0
    assert manager._by_transport == {} and manager._by_birth == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_sessions": 0}, "sessions.max_sessions must be greater than 0"),
        ({"idle_seconds": "10"}, "sessions.idle_seconds must be a number"),
    ],
)
def test_bad_session_settings_name_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SessionSettings(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_repeats": 0}, "guard.max_repeats must be greater than 0"),
        ({"polling_max_repeats": 2, "max_repeats": 3}, "polling tools must tolerate"),
        ({"call_window": 3}, r"guard.call_window \(3\) is smaller"),
        ({"max_in_call_window": 1}, "a single call is never a loop"),
        ({"polling_burst_seconds": 90}, r"polling_burst_seconds \(90\) is longer than guard.window_seconds \(60\)"),
    ],
)
def test_bad_guard_settings_name_the_field_and_the_fix(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GuardSettings(**kwargs)


def test_guard_window_sizes_follow_max_repeats_when_not_set() -> None:
    assert GuardSettings(max_repeats=3).call_window_limit == 4
    assert GuardSettings(max_repeats=3).call_window_size == 10
    assert GuardSettings(max_repeats=20).call_window_size == 42


def test_exemptions_and_hints_set_at_run_time_reach_live_sessions() -> None:
    clock = ManualClock()
    manager = SessionManager(SessionSettings(guard=GuardSettings(max_repeats=3, polling_max_repeats=10)), clock=clock)
    session = manager.resolve()
    manager.set_exempt(["jobs__wait"])
    manager.set_hints({"web__fetch": "The site rate-limits; wait a minute or ask the user."})
    for _ in range(10):
        session.admit("jobs__wait")
        assert session.after_call("jobs__wait", {"id": 1}) is None
        clock.advance(4)
    notes = [session.after_call("web__fetch", {"url": "u"}) for _ in range(4)]
    assert notes[3] is not None and "The site rate-limits" in notes[3]
