"""The retry policy and the status line an agent sees for an upstream that is down."""

from __future__ import annotations

from votr_mcp.upstream import Backoff, UpstreamStatus


def test_backoff_doubles_from_its_initial_delay_up_to_its_maximum() -> None:
    backoff = Backoff(initial=1.0, factor=2.0, maximum=60.0, jitter=0.0)
    assert [backoff.delay(n) for n in (1, 2, 3, 4, 7, 8, 50)] == [1.0, 2.0, 4.0, 8.0, 60.0, 60.0, 60.0]


def test_backoff_jitter_stays_within_its_band() -> None:
    backoff = Backoff(initial=10.0, jitter=0.2)
    delays = [backoff.delay(1) for _ in range(200)]
    assert all(8.0 <= d <= 12.0 for d in delays)
    assert len(set(delays)) > 1


def test_a_retrying_status_says_why_and_when_the_next_attempt_is() -> None:
    status = UpstreamStatus(name="git", state="retrying", error="cannot start 'uvx': command not found", retry_in=4.2)
    assert not status.available
    assert status.describe() == "not connected (cannot start 'uvx': command not found); next attempt in 4s"
    assert UpstreamStatus(name="git", state="ready", tool_count=12).describe() == "ready, 12 tools"
