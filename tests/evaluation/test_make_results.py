"""eval/make_results.py assembles RESULTS.md only from evaluation reports: check the assembly."""

import importlib.util
import sys
from pathlib import Path

from votr_mcp.evaluation.metrics import Outcome, summarize, summarize_groups

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "make_results.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_results", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def fake_report(name: str, split: str, hit: bool) -> dict:
    key = ("s", "a")
    outcome = Outcome("1", "single", (frozenset({key}),), ((key if hit else ("s", "b")),), (key,), groups=("level:1",))
    overall = summarize([outcome])
    return {"set": name, "split": split, "queries": f"{name}/queries.jsonl", "limit_per_kind": None,
            "counts": {"rows": 1, "searches": 1, "whole_task_queries": 0, "no_tool": 0},
            "overall": overall, "groups": summarize_groups([outcome]),
            "ablation": {"full": overall, "naive hybrid": summarize([outcome])}}


def test_targets_are_judged_from_the_reports_of_the_test_split() -> None:
    mr = load_script()
    reports = [fake_report("mscbench", "dev", hit=False), fake_report("mscbench", "test", hit=True),
               fake_report("mcpzero", "test", hit=False)]
    table = mr.targets_table(reports)
    # One row each: the interval says how little one row shows.
    assert "| MSC-Bench L1 top-1 | ≥ 0.98 | 1.000 | 0.207–1.000 (n 1) | yes |" in table
    assert "| MCP-Zero tasks top-1 | ≥ 0.85 | 0.000 | 0.000–0.793 (n 1) | **no** |" in table
    assert "| MetaTool no-tool abstain | ≥ 0.9 | – | – | – |" in table
    assert mr.interval_text({"mean_k": 1.0, "counts": {"rows_scored": 5}}, "mean_k") == "–"  # not a share


def test_the_results_page_states_command_split_rule_and_every_ablation() -> None:
    mr = load_script()
    reports = [fake_report("mscbench", "dev", hit=False), fake_report("mscbench", "test", hit=True)]
    meta = {"command": mr.COMMAND, "date": "2026-11-23 08:00 UTC", "machine": "x86_64, 2 CPUs", "seconds": 60.0,
            "pipeline": "stages on: all"}
    page = mr.write_markdown(reports, meta)
    assert page.startswith("# Retrieval results")
    assert "`python eval/make_results.py`" in page and "SHA-256" in page
    assert "### mscbench, dev split" in page and "### mscbench, test split" in page
    assert "| mscbench | naive hybrid |" in page


def test_stage_verdicts_come_from_the_ablation_figures() -> None:
    mr = load_script()
    full = {"mrr10": 0.80, "handoff": 0.90, "task_recall10": None, "abstain_no_tool": None}
    report = {"set": "s", "split": "dev", "overall": full, "ablation": {
        "full": full,
        "- a": {**full, "mrr10": 0.70},      # switching a off costs 0.05 on the mean: a helps
        "- b": {**full, "mrr10": 0.803},     # within noise
        "- c": {**full, "handoff": 0.96},    # the pipeline is better without c
        "+ d": {**full, "mrr10": 0.60},      # d is off, and switching it on costs 0.1: rightly off
    }}
    assert mr.verdicts_table([report]).splitlines()[-1] == "| s | dev | a +0.050 | b | c -0.030, d (off) -0.100 |"


def test_the_rerank_is_judged_by_its_ranking_not_by_thresholds_fit_on_its_scores() -> None:
    mr = load_script()
    full = {"mrr10": 0.80, "handoff": 0.80, "task_recall10": None, "abstain_no_tool": None}
    # Without the rerank the thresholds hand off far more tools (hand-off up) while the ranking is worse.
    report = {"set": "s", "split": "dev", "overall": full, "ablation": {
        "full": full, "- rerank": {**full, "mrr10": 0.75, "handoff": 0.95}}}
    assert mr.verdicts_table([report]).splitlines()[-1] == "| s | dev | rerank +0.050 | – | – |"


def test_coverage_is_held_against_the_calibrations_nominal_level() -> None:
    mr = load_script()
    report = fake_report("mscbench", "test", hit=True)  # returned set holds the gold tool: coverage 1.0
    report["nominal_coverage"] = 0.95
    assert "| mscbench coverage vs nominal 0.95 | ± 0.02 | 1.000 | 0.207–1.000 (n 1) | **no** |" in mr.targets_table([report])


def test_the_plots_of_the_tables_are_drawn_as_pngs_and_linked_from_the_markdown(tmp_path: Path) -> None:
    mr = load_script()
    reports = [fake_report("mscbench", "dev", hit=False), fake_report("mscbench", "test", hit=True),
               fake_report("mcpzero", "test", hit=False)]
    reports[1]["overall"]["latency_ms"] = {"p50": 4.0, "p95": 9.0}
    drawn = mr.result_plots.draw(reports, tmp_path / "plots", "python eval/make_results.py")
    assert set(drawn) == {"quality_test", "quality_dev", "ablation_test", "latency"}
    from matplotlib.image import imread

    for path in drawn.values():
        pixels = imread(path)
        assert pixels.shape[0] > 200 and pixels.shape[1] > 200 and pixels[..., :3].std() > 0.01, path
    plots = {name: str(path.relative_to(tmp_path)) for name, path in drawn.items()}
    assert mr.plot_lines({"plots": plots}, ("quality_test", "latency")) == [
        "![quality per set, test split](plots/quality_test.png)", "", "![search latency per set](plots/latency.png)", ""]
    assert mr.plot_lines({}, ("quality_test",)) == []


def test_the_tiers_table_shows_each_sets_precision_per_tier_beside_its_size() -> None:
    mr = load_script()
    key = ("s", "a")
    outcomes = [Outcome("1", "single", (frozenset({key}),), (key,), (key,), tier="high"),
                Outcome("2", "no_tool", (), (key,), (), tier="none")]
    report = {"set": "reg", "split": "all", "tools": 132, "overall": summarize(outcomes)}
    dev = {**report, "split": "dev"}  # dev rows are where margins were fit: not shown
    table = mr.tiers_table([report, dev]).splitlines()
    assert len(table) == 3
    assert table[-1] == "| reg | 132 | 1.000 (1) | – | – | 1.000 (1) |"


def test_the_personal_catalog_table_gives_refusals_by_what_was_asked_and_the_answered_rows() -> None:
    mr = load_script()
    key = ("s", "a")
    outcomes = [Outcome("1", "single", (frozenset({key}),), (key,), (key,), groups=("style:paraphrase",)),
                Outcome("2", "no_tool", (), (), (), groups=("style:not_installed",)),
                Outcome("3", "no_tool", (), (key,), (key,), groups=("style:not_installed",))]
    report = {"set": "human-personal", "split": "test", "overall": summarize(outcomes), "groups": summarize_groups(outcomes)}
    table = mr.personal_table([report]).splitlines()
    assert table[2] == "| tool not installed | 0.500 (2) |"
    assert table[-1].startswith("| answerable: top-1 1.000") and table[-1].endswith("| 0.000 (1) |")
    assert mr.personal_table([{**report, "split": "dev"}]) == "(human-personal was not run)"
