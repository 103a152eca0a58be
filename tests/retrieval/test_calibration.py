from dataclasses import dataclass, field

import numpy as np
import pytest

from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.calibration import Calibration, abstain_evidence, choose_k, confidences, fit


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
