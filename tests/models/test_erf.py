"""GELU's erf (attn_models.ops.erf, issue 37's degree-5 polynomial on 1/256 steps): within one unit in the last place
of erf correctly rounded (mpmath's, stored in reference_erf.npz by make_erf_reference.py) and within 1.2e-16 of
``math.erf`` on a dense sweep; odd bit for bit; ±0, ±inf and NaN as erf's own; the same numbers a block at a time as
one by one; gelu the formula ``x * 0.5 * (1 + erf(x * √½))`` bit for bit, in place too."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from attn_models import ops

REFERENCE = Path(__file__).resolve().parent / "reference_erf.npz"


def test_erf_is_within_one_ulp_of_the_correctly_rounded_erf():
    ref = np.load(REFERENCE)
    x, exact = np.concatenate([ref["x"], -ref["x"]]), np.concatenate([ref["erf"], -ref["erf"]])
    got = ops.erf(x)
    assert (np.abs(got - exact) <= np.spacing(np.abs(exact))).all()
    assert np.abs(got - exact).max() <= 1.2e-16


def test_erf_is_within_math_erf_on_a_dense_sweep():
    rng = np.random.default_rng(7)
    x = np.concatenate([np.linspace(-6.5, 6.5, 200_001), rng.uniform(-6.5, 6.5, 100_000),
                        10.0 ** rng.uniform(-323, 2, 20_000) * rng.choice([-1.0, 1.0], 20_000),
                        [5.92, 5.93, 5.998, 6.0, 6.002, 1e300, -1e300, 1.7e308, 5e-324, -5e-324, 2.2e-308]])
    assert np.abs(ops.erf(x) - [math.erf(v) for v in x]).max() <= 1.2e-16


def test_erf_is_odd_and_keeps_erfs_own_values_at_the_edges():
    x = np.random.default_rng(3).normal(size=50_000) * 3
    assert np.array_equal(ops.erf(-x), -ops.erf(x))
    got = ops.erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    assert got[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.signbit(got[:2]).tolist() == [False, True]
    assert np.isnan(got[4])  # NaN in, NaN out (not an index out of range)


@pytest.mark.parametrize("shape", [(0,), (), (3,), (7, ops.ERF_BLOCK // 3 + 5)])
def test_erf_in_blocks_is_erf_one_by_one(shape):
    x = np.random.default_rng(1).normal(size=shape) * 4
    got = ops.erf(x)
    assert got.shape == np.shape(x) and got.dtype == np.float64
    flat = np.reshape(x, -1)
    assert np.array_equal(got.reshape(-1), np.concatenate([ops.erf(p) for p in np.array_split(flat, 37)]))
    assert np.array_equal(got.reshape(-1)[:300], [ops.erf(np.array([v]))[0] for v in flat[:300]])


def test_gelu_is_its_formula_bit_for_bit_in_place_too():
    x = np.random.default_rng(2).normal(size=(5, ops.ERF_BLOCK // 4 + 3)) * 4  # more than one block
    formula = x * 0.5 * (1.0 + ops.erf(x * math.sqrt(0.5)))
    assert np.array_equal(ops.gelu(x), formula)
    inner = x.copy()
    assert ops.gelu(inner, out=inner) is inner and np.array_equal(inner, formula)
    with pytest.raises(ValueError, match="C-contiguous"):
        ops.gelu(x, out=np.empty_like(x).T.copy().T)
