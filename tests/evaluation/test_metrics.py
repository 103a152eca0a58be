import pytest

from votr_mcp.evaluation.metrics import (
    METRIC_KEYS,
    SHARE_OF,
    Outcome,
    distinct_steps,
    first_gold_rank,
    hit_at,
    percentile,
    reciprocal_rank,
    step_recall,
    summarize,
    summarize_groups,
    timed_percentiles,
    wilson_interval,
)

A, B, C, D, E = ("s", "a"), ("s", "b"), ("s", "c"), ("t", "d"), ("t", "e")


def gold(*keys: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset(keys)


def test_first_gold_rank_counts_from_one_and_takes_any_of_the_gold_tools() -> None:
    assert first_gold_rank([A, B, C], gold(C, B)) == 2
    assert first_gold_rank([A, B, C], gold(D)) is None


def test_hit_at_k_looks_only_at_the_first_k_tools() -> None:
    assert hit_at([A, B, C], gold(C), 3)
    assert not hit_at([A, B, C], gold(C), 2)


def test_reciprocal_rank_is_zero_beyond_the_cutoff() -> None:
    ranked = [("x", str(i)) for i in range(12)]
    assert reciprocal_rank(ranked, gold(("x", "3")), 10) == pytest.approx(0.25)
    assert reciprocal_rank(ranked, gold(("x", "10")), 10) == 0.0


def test_step_recall_is_the_share_of_steps_found_in_the_head() -> None:
    assert step_recall([A, B, C, D], [gold(A), gold(D), gold(E)], 4) == pytest.approx(2 / 3)
    assert step_recall([A, B, C, D], [gold(A), gold(D), gold(E)], 1) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="no-tool"):
        step_recall([A], [], 5)


def test_distinct_steps_merges_a_tool_used_twice_and_keeps_order() -> None:
    assert distinct_steps([[B], [A], [B], [A, C]]) == (gold(B), gold(A), gold(A, C))


def test_percentile_interpolates_and_is_none_without_values() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([], 95) is None


def single(id: str, g: frozenset, ranked: list, returned: list, **kw) -> Outcome:
    return Outcome(id=id, kind="single", steps=(g,), ranked=tuple(ranked), returned=tuple(returned), **kw)


def test_summary_separates_ranking_from_what_search_handed_off() -> None:
    outcomes = [
        single("1", gold(A), [A, B, C], [A]),          # top1, handed off
        single("2", gold(B), [A, B, C], [A]),          # top3 but not handed off at k=1
        single("3", gold(E), [A, B, C], []),           # missed and abstained
        Outcome("4", "no_tool", (), (A, B), ()),        # abstained correctly
        Outcome("5", "no_tool", (), (A, B), (A,)),      # answered a no-tool query
    ]
    m = summarize(outcomes)
    assert set(METRIC_KEYS) <= set(m)
    assert m["n"] == 5 and m["searches"] == 5
    assert m["top1"] == pytest.approx(1 / 3)
    assert m["top3"] == pytest.approx(2 / 3)
    assert m["mrr10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert m["handoff"] == pytest.approx(1 / 3)
    assert m["coverage"] == pytest.approx(1 / 3)
    assert m["mean_k"] == pytest.approx(3 / 5)
    assert m["abstain_no_tool"] == pytest.approx(0.5)
    assert m["false_abstain"] == pytest.approx(1 / 3)
    assert m["task_recall5"] is None and m["chain_success"] is None
    assert m["counts"] == {"rows_scored": 3, "steps": 3, "no_tool": 2, "answerable": 3, "tasks": 0, "chains": 0}
    for metric, count in SHARE_OF.items():  # every share is a whole number of its count
        if m[metric] is not None:
            assert m[metric] * m["counts"][count] == pytest.approx(round(m[metric] * m["counts"][count]))


def test_a_whole_task_query_is_scored_by_its_distinct_steps() -> None:
    ranked = (A, B, C, D, E, ("x", "1"), ("x", "2"), ("x", "3"), ("x", "4"), ("x", "5"), ("y", "z"))
    task = Outcome("c1", "multi_step", (gold(A), gold(E), gold(("y", "z"))), ranked, (A, E), whole_task=True, rows=4)
    m = summarize([task])
    assert m["n"] == 4 and m["searches"] == 1
    assert m["task_recall5"] == pytest.approx(2 / 3)
    assert m["task_recall10"] == pytest.approx(2 / 3)
    assert m["handoff"] == pytest.approx(2 / 3)
    assert m["chain_success"] == 0.0
    assert m["top1"] is None and m["coverage"] is None


def test_chain_success_needs_every_step_of_a_chain_handed_off() -> None:
    outcomes = [
        Outcome("c1#0", "multi_step", (gold(A),), (A,), (A,), chain="c1"),
        Outcome("c1#1", "multi_step", (gold(B),), (B,), (B,), chain="c1"),
        Outcome("c2#0", "multi_step", (gold(A),), (A,), (A,), chain="c2"),
        Outcome("c2#1", "multi_step", (gold(B),), (A, B), (A,), chain="c2"),
    ]
    m = summarize(outcomes)
    assert m["chain_success"] == pytest.approx(0.5)
    assert m["top1"] == pytest.approx(3 / 4)


def test_false_abstention_counts_every_row_a_whole_task_query_answers() -> None:
    task = Outcome("c1", "multi_step", (gold(A), gold(B)), (C,), (), whole_task=True, rows=3)
    answered = single("1", gold(A), [A], [A])
    m = summarize([task, answered])
    assert m["false_abstain"] == pytest.approx(3 / 4)
    assert m["counts"]["answerable"] == 4


def test_latency_percentiles_need_enough_timed_searches() -> None:
    few = [single(str(i), gold(A), [A], [A], latency_ms=float(i) if i < 5 else None) for i in range(30)]
    latency = summarize(few)["latency_ms"]
    assert (latency["p50"], latency["p95"], latency["samples"]) == (None, None, 5)
    small_group = few[:5]  # a group this small is timed whole: its figures are printed
    assert summarize(small_group)["latency_ms"]["p50"] == pytest.approx(2.0)
    assert timed_percentiles(few, only={"0", "1"})["samples"] == 2
    many = [single(str(i), gold(A), [A], [A], latency_ms=float(i)) for i in range(1, 101)]
    lat = summarize(many)["latency_ms"]
    assert lat["p50"] == pytest.approx(50.5) and lat["p95"] == pytest.approx(95.05)
    assert lat["no_embed_p50"] is None


def test_search_time_without_embedding_is_summarized_over_every_search() -> None:
    outcomes = [single(str(i), gold(A), [A], [A], search_ms=float(i)) for i in range(1, 41)]
    lat = summarize(outcomes)["latency_ms"]
    assert lat["no_embed_p50"] == pytest.approx(20.5) and lat["p50"] is None


def test_groups_are_summarized_separately() -> None:
    outcomes = [
        single("1", gold(A), [A], [A], groups=("kind:single", "level:1")),
        single("2", gold(B), [A], [A], groups=("kind:single", "level:2")),
    ]
    groups = summarize_groups(outcomes)
    assert list(groups) == ["kind:single", "level:1", "level:2"]
    assert groups["level:1"]["top1"] == 1.0 and groups["level:2"]["top1"] == 0.0
    assert groups["kind:single"]["top1"] == 0.5


def test_wilson_interval_matches_the_formula_and_stays_inside_zero_one() -> None:
    lo, hi = wilson_interval(0.5, 100)
    assert (lo, hi) == (pytest.approx(0.40383, abs=1e-5), pytest.approx(0.59617, abs=1e-5))
    lo, hi = wilson_interval(0.0, 20)  # no successes: the upper end is z²/n / (1 + z²/n), not 0
    assert lo == 0.0 and hi == pytest.approx(1.96**2 / 20 / (1 + 1.96**2 / 20))
    lo, hi = wilson_interval(1.0, 340)
    assert hi == 1.0 and 0.98 < lo < 1.0
    widths = [hi - lo for lo, hi in (wilson_interval(0.8, 100), wilson_interval(0.8, 1000))]
    assert widths[1] < widths[0]
    with pytest.raises(ValueError, match="at least one trial"):
        wilson_interval(0.5, 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        wilson_interval(1.2, 10)


def test_tier_precision_is_the_share_of_first_tools_that_serve_per_tier() -> None:
    outcomes = [
        Outcome("1", "single", (gold(A),), (A, B), (A,), tier="high"),       # right
        Outcome("2", "single", (gold(B),), (A, B), (A, B), tier="high"),     # first tool wrong, gold second
        Outcome("3", "single", (gold(C),), (C,), (C,), tier="low"),          # right
        Outcome("4", "no_tool", (), (A,), (A,), tier="medium"),             # a tool for a no-tool row: wrong
        Outcome("5", "no_tool", (), (A,), (), tier="none"),                  # abstained rightly
        Outcome("6", "single", (gold(D),), (D,), (), tier="none"),           # abstained wrongly
        Outcome("7", "single", (gold(E),), (E,), (E,)),                      # a searcher without tiers: not counted
    ]
    tiers = summarize(outcomes)["tiers"]
    assert tiers["high"] == {"n": 2, "precision": 0.5}
    assert tiers["medium"] == {"n": 1, "precision": 0.0}
    assert tiers["low"] == {"n": 1, "precision": 1.0}
    assert tiers["none"] == {"n": 2, "precision": 0.5}
