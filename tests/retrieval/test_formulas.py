import math

import numpy as np
import pytest

from votr_mcp.retrieval.calibration import choose_k, conformal_quantile, lower_quantile
from votr_mcp.retrieval.formulas import dice, rrf, server_rrf, softmax, top_k


def test_rrf_gives_weight_over_k_plus_rank_to_listed_documents_only():
    out = rrf(np.array([2, 0]), 2.0, 4, k=60)
    assert out.tolist() == pytest.approx([2.0 / 62, 0.0, 2.0 / 61, 0.0])


def test_server_rrf_credits_each_server_with_its_best_ranked_tool_only():
    server_of = np.array([0, 0, 1, 2])  # tools 0 and 1 belong to server 0
    out = server_rrf(np.array([1, 2, 0]), 1.0, server_of, 3, k=1)
    assert out.tolist() == pytest.approx([1.0 / 2, 1.0 / 3, 0.0])  # tool 0 at rank 3 adds nothing to server 0


def test_dice_is_twice_the_overlap_over_the_sizes():
    assert dice({"a", "b", "c"}, {"b", "c", "d", "e"}) == pytest.approx(2 * 2 / 7)
    assert dice(set(), set()) == 0.0


def test_top_k_returns_the_best_indices_in_order():
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.2])
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 4, 0]


def test_softmax_sums_to_one_and_sharpens_with_low_temperature():
    p = softmax(np.array([1.0, 0.5]), 0.1)
    assert p.sum() == pytest.approx(1.0) and p[0] > softmax(np.array([1.0, 0.5]), 1.0)[0]


def test_conformal_quantile_takes_the_ceil_n_plus_1_times_coverage_smallest_score():
    scores = np.arange(1, 20) / 20.0  # n = 19
    assert conformal_quantile(scores, 0.9) == pytest.approx(scores[math.ceil(20 * 0.9) - 1])
    assert conformal_quantile(scores[:5], 0.95) == 1.0  # too few rows for 95%: the set takes everything


def test_lower_quantile_bounds_false_abstention():
    values = np.arange(100, dtype=float)
    assert lower_quantile(values, 0.03) == 2.0  # floor(101 * 0.03) = 3rd smallest
    assert lower_quantile(values[:10], 0.03) == float("-inf")


def test_choose_k_rounds_the_set_size_up_to_an_allowed_k():
    p = np.array([0.6, 0.2, 0.1, 0.05, 0.05])
    assert choose_k(p, 0.5) == 1
    assert choose_k(p, 0.15) == 3
    assert choose_k(p, 0.04) == 5
    assert choose_k(p, 0.99) == 1
