from dataclasses import dataclass, field

import numpy as np
import pytest

from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.calibration import Calibration, abstain_evidence, abstain_reason, choose_k, confidences, fit


@dataclass
class Scored:
    ranked_keys: list
    cosines: np.ndarray
    relative: np.ndarray
    lexical: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _row(rng, gold_rank, top_cos, n=10):
    keys = [("s", f"t{i}") for i in range(n)]
    cos = np.sort(rng.uniform(0.1, top_cos, n))[::-1]
    cos[0] = top_cos
    rel = np.linspace(1.0, 0.3, n)
    return Scored(keys, cos, rel, np.zeros(n)), {keys[gold_rank]} if gold_rank is not None else set()


def test_fit_reaches_the_requested_coverage_on_rows_like_its_own():
    rng = np.random.default_rng(0)
    ranks = rng.choice([0, 0, 0, 0, 0, 0, 1, 2, 3, 6], size=600)
    rows = [_row(rng, int(r), rng.uniform(0.5, 0.9)) for r in ranks]
    cal = fit([r for r, _ in rows], [g for _, g in rows], coverage=0.9, false_abstain=0.02)
    fresh = [_row(rng, int(r), rng.uniform(0.5, 0.9)) for r in rng.choice([0, 0, 0, 0, 0, 0, 1, 2, 3, 6], size=600)]
    covered = []
    for res, gold in fresh:
        k = choose_k(confidences(res.cosines, res.relative, cal.temperature, cal.mix), cal.set_threshold)
        covered.append(bool(gold & set(res.ranked_keys[:k])))
    assert np.mean(covered) >= 0.86  # 0.9 nominal, minus sampling slack


def test_fit_sets_the_abstention_bound_from_answerable_rows_only():
    rng = np.random.default_rng(1)
    answerable = [_row(rng, 0, rng.uniform(0.5, 0.9)) for _ in range(300)]
    no_tool = [_row(rng, None, rng.uniform(0.1, 0.3)) for _ in range(50)]
    rows = answerable + no_tool
    cal = fit([r for r, _ in rows], [g for _, g in rows], false_abstain=0.03)
    tops = np.array([abstain_evidence(r.cosines, r.lexical, cal.abstain_lexical) for r, _ in answerable])
    assert np.mean(tops < cal.abstain_threshold) <= 0.03
    assert all(abstain_evidence(r.cosines, r.lexical, cal.abstain_lexical) < cal.abstain_threshold for r, _ in no_tool)


def test_fit_refuses_too_few_rows_and_mismatched_inputs():
    rng = np.random.default_rng(2)
    rows = [_row(rng, 0, 0.8) for _ in range(5)]
    with pytest.raises(RetrievalError, match="at least 20"):
        fit([r for r, _ in rows], [g for _, g in rows])
    with pytest.raises(RetrievalError, match="one gold set per result"):
        fit([rows[0][0]], [])


def test_calibration_round_trips_through_json_and_rejects_unknown_fields(tmp_path):
    cal = Calibration(temperature=0.07, set_threshold=0.2, abstain_threshold=0.4, source="test")
    cal.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json") == cal
    (tmp_path / "bad.json").write_text('{"nonsense": 1}')
    with pytest.raises(RetrievalError, match="unknown fields"):
        Calibration.load(tmp_path / "bad.json")


def test_fit_sets_k_on_rows_whose_gold_is_reachable_so_unranked_golds_do_not_force_k_to_five():
    rng = np.random.default_rng(3)
    ranks = rng.choice([0, 0, 0, 0, 0, 0, 0, 0, 1, 2], size=400)
    reachable = [_row(rng, int(r), rng.uniform(0.5, 0.9)) for r in ranks]
    # 30% of rows whose gold sits below the top 5 (like MetaTool's unranked golds)
    unreachable = [_row(rng, 8, rng.uniform(0.5, 0.9)) for _ in range(170)]
    rows = reachable + unreachable
    cal = fit([r for r, _ in rows], [g for _, g in rows], coverage=0.9)
    ks = [choose_k(confidences(r.cosines, r.relative, cal.temperature, cal.mix), cal.set_threshold) for r, _ in reachable]
    assert np.mean(ks) < 5
    covered = [bool(g & set(r.ranked_keys[:k])) for (r, g), k in zip(reachable, ks)]
    assert np.mean(covered) >= 0.86


def test_abstention_reason_names_the_nearest_tools_as_a_low_confidence_hint():
    text = abstain_reason(0.28, 0.32, 0.5, ["time__convert_time", "time__get_current_time"])
    assert text.startswith("no tool fits well (cosine + 0.5·word overlap 0.28 < 0.32)")
    assert text.endswith("Nearest, low confidence: time__convert_time, time__get_current_time")
    assert "Nearest" not in abstain_reason(0.1, 0.3, 0.5, [])


def test_fit_reads_k_from_the_flagged_rows_and_abstention_from_all_rows():
    rng = np.random.default_rng(4)
    easy = [_row(rng, 0, rng.uniform(0.6, 0.9)) for _ in range(200)]
    hard = [_row(rng, int(r), rng.uniform(0.3, 0.5)) for r in rng.choice([0, 1, 2, 3, 4], size=200)]
    rows = easy + hard
    results, golds = [r for r, _ in rows], [g for _, g in rows]
    only_easy = fit(results, golds, k_rows=[True] * 200 + [False] * 200)
    pooled = fit(results, golds)
    assert only_easy.set_threshold > pooled.set_threshold
    assert only_easy.abstain_threshold == pooled.abstain_threshold
    with pytest.raises(RetrievalError, match="one flag per result"):
        fit(results, golds, k_rows=[True])
