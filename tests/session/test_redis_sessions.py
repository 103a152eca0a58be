"""Sessions in a real Redis (``serve --sessions redis://``): two managers stand for two replicas."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from votr_mcp.errors import SessionError
from votr_mcp.session import GuardSettings, ManualClock, SessionManager, SessionSettings
from votr_mcp.session.snapshot import dump_session, load_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services import ServiceMissing, redis_server

redis = pytest.importorskip("redis", reason="the 'redis' client is not installed: pip install redis (make setup does)")


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    try:
        with redis_server() as url:
            yield url
    except ServiceMissing as exc:
        pytest.skip(str(exc))


def replicas(url: str, clock: ManualClock, **settings: object) -> tuple[object, object]:
    from votr_mcp.session.redis_store import RedisSessions

    made = SessionSettings(**settings)  # type: ignore[arg-type]
    return (RedisSessions.from_url(url, made, clock=clock, prefix=f"t{id(clock)}:"),
            RedisSessions.from_url(url, made, clock=clock, prefix=f"t{id(clock)}:"))


def test_a_snapshot_round_trip_keeps_bindings_searches_and_guard_counts() -> None:
    clock = ManualClock()
    manager = SessionManager(SessionSettings(guard=GuardSettings(max_repeats=2)), clock=clock)
    session = manager.resolve()
    session.after_search(["a__x", "b__y"])
    session.admit("a__x")
    session.after_call("a__x", {"q": 1})
    copy = load_session(dump_session(session), manager.settings, clock, manager.policy)
    assert copy is not None
    assert dump_session(copy) == dump_session(session)
    assert copy.bound() == session.bound()


def test_a_snapshot_of_another_format_is_no_session() -> None:
    assert load_session({"v": 999}, SessionSettings(), ManualClock(), None) is None  # type: ignore[arg-type]


def test_a_session_made_on_one_replica_continues_on_the_other_with_its_guard_state(redis_url: str) -> None:
    clock = ManualClock()
    a, b = replicas(redis_url, clock, guard=GuardSettings(max_repeats=2))
    session = a.resolve()  # type: ignore[attr-defined]
    a.get(session.id).after_search(["web__fetch"])  # type: ignore[attr-defined]
    for _ in range(2):  # two identical calls on A: allowed
        a.get(session.id).admit("web__fetch")  # type: ignore[attr-defined]
        assert a.get(session.id).after_call("web__fetch", {"url": "u"}) is None  # type: ignore[attr-defined]
    assert b.resolve(session_id=session.id).bound() == ["web__fetch"]  # type: ignore[attr-defined]
    b.get(session.id).admit("web__fetch")  # type: ignore[attr-defined]
    note = b.get(session.id).after_call("web__fetch", {"url": "u"})  # type: ignore[attr-defined]
    assert note is not None and "loop guard" in note  # B counted A's two calls
    with pytest.raises(SessionError, match="removed from this session by the loop guard"):
        a.get(session.id).admit("web__fetch")  # type: ignore[attr-defined]


def test_an_unknown_id_is_refused_without_echoing_it(redis_url: str) -> None:
    a, _ = replicas(redis_url, ManualClock())
    with pytest.raises(SessionError, match="unknown or expired session_id") as refused:
        a.resolve(session_id="guessed-secret-value")  # type: ignore[attr-defined]
    assert "guessed-secret-value" not in str(refused.value)


def test_redis_expires_an_idle_session_and_keys_hide_the_id(redis_url: str) -> None:
    clock = ManualClock()
    a, _ = replicas(redis_url, clock, idle_seconds=1)
    session = a.resolve()  # type: ignore[attr-defined]
    client = redis.Redis.from_url(redis_url)
    keys = [k.decode() for k in client.scan_iter(f"t{id(clock)}:session:*")]
    assert keys and all(session.id not in k for k in keys)
    ttls = [client.ttl(k) for k in keys]
    client.close()
    assert len(keys) == 1 and 0 < ttls[0] <= 1  # Redis collects it after the idle time


def test_a_connections_session_is_not_used_from_another_connection(redis_url: str) -> None:
    a, b = replicas(redis_url, ManualClock())
    own = a.resolve(transport_key="conn-1")  # type: ignore[attr-defined]
    assert b.resolve(transport_key="conn-1").id == own.id  # type: ignore[attr-defined]
    with pytest.raises(SessionError, match="belongs to another connection"):
        b.resolve(session_id=own.id, transport_key="conn-2")  # type: ignore[attr-defined]


def test_an_unreachable_redis_says_what_to_check() -> None:
    from votr_mcp.session.redis_store import RedisSessions

    with pytest.raises(SessionError, match="check that Redis is running"):
        RedisSessions.from_url("redis://127.0.0.1:1/0")
