from votr_mcp.evaluation.data import QueryRow
from votr_mcp.evaluation.harness import build_units, cap_per_kind, group_top_up, groups_of, latency_sample
from votr_mcp.evaluation.metrics import summarize
from votr_mcp.evaluation.report import ablation_table, fmt, metrics_table


def q(id: str, query: str, gold: list[tuple[str, str]], kind: str = "single", chain: str | None = None,
      step: int | None = None, **meta) -> QueryRow:
    return QueryRow(id=id, query=query, gold=tuple(gold), kind=kind, chain=chain, step=step, meta=meta)


def test_a_chain_sharing_one_text_is_one_whole_task_search_over_its_distinct_steps() -> None:
    rows = [
        q("c#1", "plan a trip", [("maps", "route")], "multi_step", "c", 1, level=3),
        q("c#0", "plan a trip", [("air", "book")], "multi_step", "c", 0, level=3),
        q("c#2", "plan a trip", [("air", "book")], "multi_step", "c", 2, level=3),
    ]
    (unit,) = build_units(rows)
    assert unit.whole_task and unit.rows == 3 and unit.id == "c"
    assert unit.steps == (frozenset({("air", "book")}), frozenset({("maps", "route")}))
    assert "task:whole" in unit.groups and "level:3" in unit.groups


def test_a_chain_whose_steps_have_their_own_text_is_searched_step_by_step() -> None:
    rows = [
        q("c#0", "find the flight", [("air", "search")], "multi_step", "c", 0),
        q("c#1", "book it", [("air", "book")], "multi_step", "c", 1),
        q("s", "weather today", [("wx", "now")]),
        q("n", "tell me a joke", [], "no_tool"),
    ]
    units = build_units(rows)
    assert [u.id for u in units] == ["c#0", "c#1", "s", "n"]
    assert all(not u.whole_task for u in units)
    assert units[0].chain == "c" and units[3].steps == ()


def test_groups_name_kind_level_and_style_fields() -> None:
    row = q("a", "x", [("s", "t")], level=2, flavor="generated_nl_task")
    assert groups_of(row) == ("kind:single", "level:2", "level:2/single", "flavor:generated_nl_task")


def test_capping_keeps_whole_chains_and_the_same_rows_every_time() -> None:
    rows = [q(f"s{i}", f"q{i}", [("s", "t")]) for i in range(50)]
    rows += [q(f"c{i}#{j}", f"c{i}", [("s", str(j))], "multi_step", f"c{i}", j) for i in range(20) for j in range(3)]
    kept = cap_per_kind(rows, 5)
    assert sum(1 for r in kept if r.kind == "single") == 5
    chains = {r.chain for r in kept if r.chain}
    assert len(chains) == 5 and sum(1 for r in kept if r.chain) == 15
    assert cap_per_kind(list(reversed(rows)), 5) == list(reversed(kept))
    assert cap_per_kind(rows, None) == rows


def test_the_latency_sample_is_fixed_by_hash_not_by_input_order() -> None:
    units = build_units([q(f"s{i}", f"q{i}", [("s", "t")]) for i in range(30)])
    assert [u.id for u in latency_sample(units, 7)] == [u.id for u in latency_sample(list(reversed(units)), 7)]


def test_the_timing_is_topped_up_until_every_group_has_enough_searches() -> None:
    rows = [q(f"s{i}", f"q{i}", [("s", "t")], level=1) for i in range(60)]
    rows += [q(f"n{i}", f"joke {i}", [], "no_tool", level=5) for i in range(6)]
    units = build_units(rows)
    sample = latency_sample(units, 10)
    extra = group_top_up(units, sample, 8)
    timed = [*sample, *extra]
    assert len({u.id for u in timed}) == len(timed)
    assert sum(u.kind == "no_tool" for u in timed) == 6  # the whole small group
    assert sum(u.kind == "single" for u in timed) >= 8
    assert group_top_up(units, timed, 8) == []


def test_tables_print_every_group_and_dashes_where_a_metric_does_not_apply() -> None:
    from votr_mcp.evaluation.metrics import Outcome

    o = Outcome("1", "single", (frozenset({("s", "a")}),), (("s", "a"),), (("s", "a"),), groups=("kind:single",))
    table = metrics_table(summarize([o]), {"kind:single": summarize([o])}, drop_empty=False)
    lines = table.splitlines()
    assert lines[0].startswith("| slice | rows |") and len(lines) == 4
    assert "| kind:single | 1 | 1 | 1.000 |" in table and "–" in table
    assert fmt("mean_k", 1.0) == "1.00" and fmt("latency_ms.p50", None) == "–"


def test_the_ablation_table_shows_each_variant_against_the_full_pipeline() -> None:
    full = {"top1": 0.8, "top5": 0.9, "mrr10": 0.85, "handoff": 0.9, "mean_k": 2.0}
    without = {"top1": 0.85, "top5": 0.9, "mrr10": 0.86, "handoff": 0.9, "mean_k": 2.0}
    table = ablation_table({"full": full, "- rerank": without})
    assert "| - rerank | 0.850 (+0.050) |" in table
    assert "| full | 0.800 |" in table
