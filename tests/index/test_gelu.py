"""BERT's GELU against the exact formula with scipy's erf (computed in float64)."""

import math

import numpy as np
import pytest
from scipy.special import erf

from votr_mcp.index.bert import gelu


def exact(x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    return 0.5 * wide * (1.0 + erf(wide / math.sqrt(2.0)))


def test_gelu_equals_the_erf_formula_within_float32_rounding_over_the_range_bert_meets():
    x = np.linspace(-12.0, 12.0, 480_001, dtype=np.float32)
    got = gelu(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.abs(got - exact(x)).max() < 1e-6
    # Far left it is a tiny negative number, never a sign flip or a NaN.
    assert np.all(got[x < -6] <= 0) and np.isfinite(got).all()


def test_gelu_keeps_its_input_and_the_shape_of_a_batch():
    x = np.random.default_rng(0).normal(scale=3.0, size=(2, 7, 1536)).astype(np.float32)
    before = x.copy()
    got = gelu(x)
    assert np.array_equal(x, before)
    assert got.shape == x.shape
    assert np.abs(got - exact(x)).max() < 1e-6
    at = gelu(np.array([0.0, 1.0, -1.0], dtype=np.float32)).tolist()
    assert at == pytest.approx([0.0, 0.8413447, -0.1586553], abs=1e-6)
