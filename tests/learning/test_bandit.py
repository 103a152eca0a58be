"""The bandit settles near-ties by use and never crosses a clear gap."""

from __future__ import annotations

import numpy as np
import pytest

from votr_mcp.learning import Bandit, context_of

A, B = ("git", "git_log"), ("git", "git_show")


def test_a_tool_that_keeps_failing_loses_a_near_tie_to_one_that_keeps_succeeding() -> None:
    bandit = Bandit(bound=0.1, seed=1)
    for _ in range(30):
        bandit.record(A, "git", False)
        bandit.record(B, "git", True)
    wins = sum(int(np.argmax(bandit.adjust([A, B], "git", np.array([1.0, 0.97])))) == 1 for _ in range(200))
    assert wins > 190


def test_no_evidence_can_lift_a_poor_match_over_a_clear_one() -> None:
    bandit = Bandit(bound=0.1, seed=2)
    for _ in range(1_000):
        bandit.record(A, "git", False)
        bandit.record(B, "git", True)
    for _ in range(200):
        adjusted = bandit.adjust([A, B], "git", np.array([1.0, 0.75]))
        assert adjusted[0] > adjusted[1]
        assert np.all(np.abs(adjusted - [1.0, 0.75]) <= 0.1 + 1e-12)


def test_tools_nobody_used_keep_their_scores_exactly() -> None:
    bandit = Bandit(seed=3)
    bandit.record(A, "git", True)
    scores = np.array([0.9, 1.0])
    assert bandit.adjust([("x", "y"), ("x", "z")], "x", scores).tolist() == scores.tolist()


def test_evidence_counts_most_in_its_own_context() -> None:
    bandit = Bandit(seed=4)
    bandit.record(A, "git", True)
    bandit.record(A, "slack", False)
    assert bandit.evidence(A, "git") == (1.0, 0.25)


def test_a_bound_past_half_the_best_score_is_refused_with_the_allowed_range() -> None:
    with pytest.raises(ValueError, match="between 0 and 0.5"):
        Bandit(bound=0.8)


def test_the_context_is_the_server_most_of_the_head_belongs_to() -> None:
    assert context_of(["a", "b", "b", "a", "b", "a", "a"]) == "b"
    assert context_of(["a", "b"]) == "a"
    assert context_of([]) == ""
