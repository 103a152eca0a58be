"""The harness over the real pipeline and the real MiniLM model, on a small catalog kept in tests/."""

import json
from pathlib import Path

import numpy as np
import pytest

from votr_mcp.cli import main
from votr_mcp.errors import RetrievalError
from votr_mcp.evaluation.adapter import FULL, NAIVE, PipelineFactory
from votr_mcp.evaluation.calibration import calibrate_on
from votr_mcp.evaluation.metrics import METRIC_KEYS
from votr_mcp.evaluation.rerank_fit import cross_validate
from votr_mcp.evaluation.suite import EvalSpec, evaluate
from votr_mcp.retrieval.query_adapter import QueryAdapter, fold_of
from votr_mcp.retrieval.rerank import FEATURES

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> PipelineFactory:
    return PipelineFactory.from_data(DATA, calibration=None, cache_dir=tmp_path_factory.mktemp("vectors"), ablation=True)


@pytest.fixture(scope="module")
def report(factory: PipelineFactory) -> dict:
    return evaluate(EvalSpec(data=DATA, split="all", latency_samples=25, ablation=True), factory)


def test_every_required_metric_is_reported_overall_and_per_group(report: dict) -> None:
    assert set(METRIC_KEYS) <= set(report["overall"])
    assert {"kind:single", "kind:no_tool", "kind:multi_step", "task:whole", "level:1", "level:3"} <= set(report["groups"])
    for summary in report["groups"].values():
        assert set(METRIC_KEYS) <= set(summary)
    json.dumps(report)  # everything must be plain JSON


def test_a_whole_task_query_is_searched_once_and_a_stepwise_chain_row_by_row(report: dict) -> None:
    counts = report["counts"]
    assert counts["rows"] == 30 and counts["searches"] == 29 and counts["whole_task_queries"] == 1
    assert report["groups"]["task:whole"]["searches"] == 1
    assert report["groups"]["task:whole"]["task_recall5"] is not None
    assert report["groups"]["level:2"]["chain_success"] is not None


def test_plain_queries_over_a_small_catalog_find_their_tool_first(report: dict) -> None:
    single = report["groups"]["kind:single"]
    assert single["top1"] >= 0.8 and single["top5"] >= 0.95
    assert report["groups"]["task:whole"]["task_recall5"] == 1.0


def test_latency_and_tokens_are_measured_not_assumed(report: dict) -> None:
    latency = report["overall"]["latency_ms"]
    assert latency["samples"] == 25 and 0 < latency["p50"] <= latency["p95"]
    for summary in report["groups"].values():  # small groups are timed whole, not left blank
        assert summary["latency_ms"]["p50"] is not None
    assert report["overall"]["tokens_per_search"] > 10


def test_the_ablation_covers_each_stage_and_the_naive_hybrid(report: dict, factory: PipelineFactory) -> None:
    variants = report["ablation"]
    assert list(variants)[0] == FULL and NAIVE in variants and "- dense" in variants and "- bm25" in variants
    assert variants[FULL] is report["overall"]
    # Without the model the lexical stages alone must still rank, but not identically to the full pipeline.
    assert variants["- dense"]["top5"] is not None
    assert any(variants[v]["mrr10"] != variants[FULL]["mrr10"] for v in variants if v != FULL)


def test_calibrating_on_too_few_dev_rows_says_so(tmp_path: Path) -> None:
    with pytest.raises(RetrievalError, match="answerable rows"):
        calibrate_on([DATA], out=tmp_path / "cal.json", cache_dir=tmp_path / "vectors")
    assert not (tmp_path / "cal.json").exists()


def test_the_calibrate_command_refuses_a_level_out_of_range_before_searching(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--data", str(DATA), "--abstain-confidence", "1.5", "--out", str(out)]) == 1
    assert "abstain_confidence in [0, 1); got 0.97, 0.03 and 1.5" in capsys.readouterr().err
    assert not out.exists()


def test_the_eval_command_prints_tables_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    code = main(["eval", "--data", str(DATA), "--split", "all", "--latency-samples", "0", "--json", str(out),
                 "--cache-dir", str(tmp_path / "vectors")])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| **all** | 30 | 29 |" in printed
    written = json.loads(out.read_text())
    assert written["split"] == "all" and set(METRIC_KEYS) <= set(written["overall"])
    assert written["overall"]["latency_ms"]["p50"] is None


def test_dev_rows_are_searched_with_the_adapters_fit_that_left_their_fold_out(tmp_path: Path,
                                                                            factory: PipelineFactory) -> None:
    shipped = factory.retriever.adapter
    assert isinstance(shipped, QueryAdapter) and shipped.held_out
    crossed = factory.cross_fitted()
    assert crossed.retriever.adapter is not shipped and factory.retriever.adapter is shipped  # the factory stays
    assert crossed.cache is factory.cache and crossed.configs == factory.configs
    vector = factory.retriever.request_vectors(["list the open pull requests"], factory.cache)["list the open pull requests"]
    own = shipped.held_out[fold_of("list the open pull requests", len(shipped.held_out))]
    assert np.allclose(crossed.retriever.adapter.adapt("list the open pull requests", vector),
                       own.adapt("list the open pull requests", vector))
    plain = PipelineFactory(factory.retriever.with_adapter(None))
    assert plain.cross_fitted() is plain
    for split, said in (("dev", True), ("test", False)):
        out = tmp_path / f"{split}.json"
        assert main(["eval", "--data", str(DATA), "--split", split, "--latency-samples", "0", "--json", str(out),
                     "--cache-dir", str(tmp_path / "vectors")]) == 0
        assert ("left the text's fold out" in json.loads(out.read_text())["pipeline"]) is said


def test_the_eval_command_measures_a_variant_given_by_set(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = main(["eval", "--data", str(DATA), "--split", "all", "--latency-samples", "0", "--json", str(out),
                 "--cache-dir", str(tmp_path / "vectors"), "--set", "rerank=false", "--set", "dense=false"])
    assert code == 0
    written = json.loads(out.read_text())
    assert "off: dense, splade, rerank" in written["pipeline"]
    assert "stages on: multilingual, route_language, query_adapter, bm25" in written["pipeline"]


def test_distractor_tools_join_the_search_but_never_count_as_gold(tmp_path: Path) -> None:
    extra = tmp_path / "lookalikes"
    extra.mkdir()
    # Copies of every tool under another server: each query now has an equally good distractor.
    copies = [json.loads(line) | {"server": "mirror"} for line in (DATA / "tools.jsonl").read_text().splitlines() if line]
    (extra / "tools.jsonl").write_text("".join(json.dumps(c) + "\n" for c in copies))
    plain = evaluate(EvalSpec(data=DATA, split="all", latency_samples=0),
                     PipelineFactory.from_data(DATA, cache_dir=tmp_path / "vectors"))
    factory = PipelineFactory.from_data(DATA, distractors=[extra], cache_dir=tmp_path / "vectors")
    crowded = evaluate(EvalSpec(data=DATA, split="all", latency_samples=0, distractors=(extra,)), factory)
    assert len(factory.retriever.catalog) == 2 * len(copies)
    assert crowded["set"] == f"{DATA.name} + lookalikes" and crowded["overall"]["n"] == plain["overall"]["n"]
    assert crowded["overall"]["top5"] < plain["overall"]["top5"] or crowded["overall"]["top1"] < plain["overall"]["top1"]


def test_the_eval_command_refuses_a_missing_distractor_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--data", str(DATA), "--distractors", str(tmp_path / "nowhere")]) == 1
    assert "--distractors" in capsys.readouterr().err


def test_the_eval_command_refuses_an_unwritable_json_path_before_searching(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--data", str(DATA), "--json", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "is a folder" in err and "searching" not in err


def test_the_eval_command_names_gold_tools_the_catalog_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(line) for line in (DATA / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    first = next(r for r in rows if r["gold"])
    first["gold"] = [{"server": "Nowhere", "name": "no_such_tool"}]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert main(["eval", "--data", str(DATA), "--queries", str(queries), "--split", "all"]) == 1
    assert f"the catalog lacks 1 gold tool ({first['id']} -> Nowhere/no_such_tool)" in capsys.readouterr().err


def test_the_eval_command_rejects_a_folder_without_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--data", str(tmp_path)]) == 1
    assert "tools.jsonl" in capsys.readouterr().err


def test_an_ablation_on_a_capped_subset_measures_its_own_full_row(factory: PipelineFactory) -> None:
    capped = evaluate(EvalSpec(data=DATA, split="all", latency_samples=0, ablation=True, ablation_limit=3), factory)
    assert capped["ablation_counts"]["searches"] < capped["counts"]["searches"]
    assert capped["ablation"][FULL]["searches"] == capped["ablation_counts"]["searches"]
    assert capped["overall"]["searches"] == capped["counts"]["searches"]
    # No tool here has example queries and no calibration is loaded: those stages cannot act.
    assert set(capped["not_ablated"]) == {"tool2vec", "adaptive_k", "action_gate"} and "- tool2vec" not in capped["ablation"]


def test_eval_reads_a_folder_of_captured_tools_lists_when_queries_are_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    by_server: dict[str, list[dict]] = {}
    for line in (DATA / "tools.jsonl").read_text().splitlines():
        tool = json.loads(line)
        by_server.setdefault(tool["server"], []).append(
            {"name": tool["name"], "description": tool["description"], "inputSchema": tool["input_schema"]})
    for server, tools in by_server.items():
        (catalog / f"{server}.json").write_text(json.dumps({"server": server, "tools": tools}))
    code = main(["eval", "--data", str(catalog), "--queries", str(DATA / "queries.jsonl"), "--split", "all",
                 "--latency-samples", "0", "--cache-dir", str(tmp_path / "vectors")])
    assert code == 0
    assert "| **all** | 30 | 29 |" in capsys.readouterr().out


@pytest.mark.parametrize("args,expected", [
    (["--limit", "0"], "--limit must be a positive"),
    (["--head", "1"], "--head must be at least 2"),
    (["--cv", "-1"], "--cv takes a number of rounds"),
])
def test_the_fit_rerank_command_refuses_bad_options(args: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit-rerank", "--data", str(DATA), *args]) == 1
    assert expected in capsys.readouterr().err


def test_the_fit_rerank_command_rejects_a_folder_without_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit-rerank", "--data", str(tmp_path)]) == 1
    assert "tools.jsonl" in capsys.readouterr().err


def test_cross_validation_scores_each_set_on_rows_its_fit_never_saw() -> None:
    rng = np.random.default_rng(5)
    mention = FEATURES.index("name_mention")
    rows = []
    for q in range(120):
        x = rng.normal(size=(6, len(FEATURES)))
        x[:, mention] = 0.0
        gold = int(rng.integers(1, 6))  # never the fusion's first: the fusion alone always misses
        x[gold, mention] = 1.0
        x[:, 0] = np.linspace(1.0, 0.5, 6)
        rows.append((x, np.arange(6) == gold, "a" if q % 3 else "b"))
    figures = cross_validate(rows, l2=1e-3, head=6, repeats=2)
    assert set(figures) == {"a", "b"}
    for reranked, fused in figures.values():
        assert reranked > 0.95 and fused == 0.0
