"""attn_core.analysis: variances, the d_k sweep, softmax saturation, naive vs stable softmax.

References are the seeds' printed numbers and numpy written out here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_core import AttentionInputError, analysis, causal_mask
from attn_core.analysis import (
    MAX_EXP,
    SWEEP_D_K,
    compare_softmax,
    log_grid,
    naive_softmax,
    row_entropy,
    saturation,
    variance_stats,
    variance_sweep,
)
from attn_core.presets import seed_002_qkv

from ..seeds import (
    SEED002_VAR_K,
    SEED002_VAR_Q,
    SEED002_VAR_QKT,
    SEED002_VAR_SCALED,
    SEED004_SCORES,
    SEED004_SOFTMAX,
)

FAST = settings(max_examples=60, deadline=None)
SCORES = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@st.composite
def scores_and_mask(draw):
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    s = draw(arrays(np.float64, (n_q, n_k), elements=SCORES))
    mask = draw(arrays(np.bool_, (n_q, n_k)))
    return s, mask


# ---- variances ---------------------------------------------------------------------------------


def test_variances_of_seed002_are_the_printed_ones():
    q, k, _ = seed_002_qkv()
    v = variance_stats(q, k)
    assert v.d_k == 8
    assert v.var_q == pytest.approx(SEED002_VAR_Q, abs=1e-12)
    assert v.var_k == pytest.approx(SEED002_VAR_K, abs=1e-12)
    assert v.var_scores == pytest.approx(SEED002_VAR_QKT, abs=1e-8)
    assert v.var_scaled == pytest.approx(SEED002_VAR_SCALED, abs=1e-8)


@FAST
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 8), st.integers(0, 2**31))
def test_variances_match_numpy(n_q, n_k, d_k, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k))
    v = variance_stats(q, k)
    s = np.einsum("id,jd->ij", q, k)
    assert (v.var_q, v.var_k) == pytest.approx((np.var(q), np.var(k)))
    assert v.var_scores == pytest.approx(np.mean((s - s.mean()) ** 2))
    assert v.var_scaled == pytest.approx(v.var_scores / d_k)


def test_variances_beyond_float64_are_inf_without_a_warning():
    import warnings

    q = np.array([[1e200, -1e200], [3.0, 1.0]])  # squares of 1e200 overflow float64; the scores do not
    k = np.array([[1e-200, 0.0], [0.0, 1e-200]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = variance_stats(q, k)
    assert v.var_q == np.inf and np.isfinite([v.var_k, v.var_scores, v.var_scaled]).all()


def test_sweep_raw_grows_like_d_k_and_scaled_stays_near_1():
    sw = variance_sweep()
    assert sw.d_k.tolist() == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert np.all(np.diff(sw.raw) > 0)
    assert np.all((sw.raw / sw.d_k > 0.7) & (sw.raw / sw.d_k < 1.3))
    assert np.all((sw.scaled > 0.7) & (sw.scaled < 1.3))
    assert np.allclose(sw.scaled, sw.raw / sw.d_k)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**31))
def test_sweep_holds_for_any_seed(seed):
    sw = variance_sweep(SWEEP_D_K, n_samples=300, seed=seed)
    assert np.all((sw.scaled > 0.7) & (sw.scaled < 1.3))


def test_sweep_is_reproducible():
    a, b = variance_sweep((1, 16), n_samples=50, seed=7), variance_sweep((1, 16), n_samples=50, seed=7)
    assert np.array_equal(a.raw, b.raw) and np.array_equal(a.scaled, b.scaled)


# ---- divisor grid and saturation ---------------------------------------------------------------


def test_log_grid_spans_the_range_with_equal_ratios():
    g = log_grid(0.01, 1000, 20)
    assert g[0] == pytest.approx(0.01) and g[-1] == pytest.approx(1000) and g.size == 101
    assert np.allclose(g[1:] / g[:-1], 10 ** (1 / 20))
    stops = log_grid(0.01, 1000, 10, digits=2)
    assert stops[0] == 0.01 and stops[-1] == 1000 and 1.0 in stops and 10.0 in stops
    assert np.all(np.diff(stops) > 0)


def test_entropy_one_hot_uniform_and_empty():
    assert row_entropy(np.array([0.0, 1.0, 0.0])) == 0.0
    assert row_entropy(np.full(4, 0.25)) == pytest.approx(np.log(4))
    assert row_entropy(np.zeros(3)) == 0.0


@FAST
@given(arrays(np.float64, (3, 5), elements=SCORES))
def test_entropy_between_0_and_ln_n(s):
    h = row_entropy(np_softmax(s))
    assert np.all(h >= -1e-12) and np.all(h <= np.log(5) + 1e-12)


def test_saturation_on_seed004_scores():
    s = np.array(SEED004_SCORES, dtype=float)  # seed 004's QKᵀ
    d = np.array([1.0, np.sqrt(3), 100.0])
    top, ent = saturation(s, d)
    for i, divisor in enumerate(d):
        w = np_softmax(s / divisor)
        assert np.allclose(top[i], w.max(axis=1))
        assert np.allclose(ent[i], -np.sum(w * np.log(w), axis=1))
    assert top[0].tolist() == pytest.approx([max(row) for row in SEED004_SOFTMAX], abs=1e-5)  # seed 004 prints these


@FAST
@given(scores_and_mask(), st.floats(0.01, 1000))
def test_saturation_matches_masked_softmax(case, divisor):
    s, mask = case
    top, ent = saturation(s, np.array([divisor]), mask)
    for i in range(s.shape[0]):
        if not mask[i].any():
            assert top[0, i] == 0.0 and ent[0, i] == 0.0
            continue
        w = np_softmax(s[i, mask[i]] / divisor)
        assert top[0, i] == pytest.approx(w.max())
        assert ent[0, i] == pytest.approx(-np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)), abs=1e-9)


@FAST
@given(arrays(np.float64, (2, 4), elements=SCORES))
def test_smaller_divisor_is_sharper(s):
    top, ent = saturation(s, log_grid(0.01, 1000, 5))
    assert np.all(np.diff(top, axis=0) <= 1e-9)  # largest weight falls as the divisor grows
    assert np.all(np.diff(ent, axis=0) >= -1e-9)  # entropy rises


def test_saturation_limits_and_huge_scores():
    top, ent = saturation(np.array([[0.0, 1.0, 1.0, 3.0]]), np.array([0.01, 1e6]))
    assert top[0, 0] == pytest.approx(1.0) and ent[0, 0] == pytest.approx(0.0, abs=1e-12)
    assert top[1, 0] == pytest.approx(0.25, abs=1e-5) and ent[1, 0] == pytest.approx(np.log(4), abs=1e-5)
    top, ent = saturation(np.array([[1e306, -1e306, 0.0]]), np.array([0.01, 1.0]))
    assert np.isfinite(top).all() and np.isfinite(ent).all() and np.allclose(top, 1.0)


def test_saturation_in_chunks_of_divisors_is_the_one_at_a_time_numbers(monkeypatch):
    import attn_core.analysis as analysis

    rng = np.random.default_rng(37)
    s = rng.normal(size=(5, 7)) * 30
    s[0, 0] = 1e300  # a gap that overflows
    mask = rng.random((5, 7)) > 0.3
    mask[1] = False  # a row with every key masked
    divisors = log_grid(0.01, 1000, 20)
    chunked = saturation(s, divisors, mask)  # all 101 divisors in one [101, 5, 7] softmax
    for cells in (1, 35 * 3, 35 * 64):  # one divisor at a time (as before), 3, 64 at a time
        monkeypatch.setattr(analysis, "SATURATION_CELLS", cells)
        for got, want in zip(saturation(s, divisors, mask), chunked, strict=True):
            np.testing.assert_array_equal(got, want)


def test_saturation_with_causal_mask_and_bad_divisors():
    top, _ = saturation(np.ones((3, 3)), np.array([1.0]), causal_mask(3))
    assert top[0].tolist() == pytest.approx([1.0, 0.5, 1 / 3])
    for bad in ([0.0], [-1.0], [np.inf], [np.nan]):
        with pytest.raises(AttentionInputError):
            saturation(np.ones((2, 2)), np.array(bad))


# ---- naive vs stable softmax ------------------------------------------------------------------


def test_exp_overflows_between_709_and_710():
    assert MAX_EXP == pytest.approx(709.782712893384)
    w, over = naive_softmax(np.array([709.0, 0.0]))
    assert not over.any() and np.isfinite(w).all()
    w, over = naive_softmax(np.array([710.0, 0.0]))
    assert over.tolist() == [True, False]
    assert np.isnan(w[0]) and w[1] == 0.0


@FAST
@given(arrays(np.float64, (3, 4), elements=SCORES))
def test_naive_equals_stable_when_nothing_overflows(s):
    w, over = naive_softmax(s)
    assert not over.any()
    assert np.allclose(w, np_softmax(s))


def test_naive_softmax_of_a_fully_masked_row_is_nan():
    w, over = naive_softmax(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]))
    assert np.isnan(w[0]).all() and w[1].tolist() == [1.0, 0.0] and not over.any()


def test_compare_softmax_of_a_large_row():
    row = np.array([1000.0, 1002.0, -np.inf, 500.0])
    c = compare_softmax(row)
    assert c.overflow.tolist() == [True, True, False, False]
    assert np.isnan(c.naive_weights[:2]).all() and c.naive_weights[2:].tolist() == [0.0, 0.0]
    assert c.naive_nan.tolist() == [True, True, False, False]
    assert c.shifted.tolist() == [-2.0, 0.0, -np.inf, -502.0]
    e = np.exp([-2.0, 0.0])
    assert np.allclose(c.stable_weights, [e[0] / e.sum(), e[1] / e.sum(), 0.0, np.exp(-502) / e.sum()])
    assert np.allclose(c.stable_exp, np.exp(c.shifted))
    assert c.stable_weights.sum() == pytest.approx(1.0)


def test_compare_softmax_of_a_fully_masked_row_gives_zeros_not_nan():
    c = compare_softmax(np.full(3, -np.inf))
    assert c.stable_weights.tolist() == [0.0, 0.0, 0.0]
    assert c.naive_nan.all() and not c.overflow.any()
    assert np.isneginf(c.shifted).all()


@pytest.mark.parametrize("row", [[np.inf, 0.0], [np.nan, 1.0], [], [[1.0]]])
def test_compare_softmax_rejects_what_is_not_a_row_of_scores(row):
    with pytest.raises(AttentionInputError):
        compare_softmax(np.array(row))


@FAST
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-1e4, 1e4)))
def test_stable_side_never_nan_and_sums_to_1(row):
    c = compare_softmax(row)
    assert np.isfinite(c.stable_weights).all() and c.stable_weights.sum() == pytest.approx(1.0)
    assert np.array_equal(c.overflow, row > MAX_EXP)


# ---- comparing weights when a query has no key left (Modern attention) -------------------------------------------

def test_compare_rows_leaves_out_a_row_with_no_key_instead_of_calling_it_equal():
    """A row with no key left is all zeros on both sides: counted, it made "differ by up to 0" on every key masked."""
    a = np.array([[0.0, 0.0], [0.3, 0.7], [1.0, 0.0]])
    b = np.array([[0.0, 0.0], [0.5, 0.5], [0.9, 0.1]])
    c = analysis.compare_rows(a, b, np.array([False, True, True]))
    assert c.left_out == (0,) and c.at == (1, 0) and c.largest == pytest.approx(0.2, abs=1e-15)
    none_left = analysis.rows_with_keys(np.zeros((2, 2), bool), 2)  # every key masked
    nothing = analysis.compare_rows(np.zeros((2, 2)), np.zeros((2, 2)), none_left)
    assert (nothing.largest, nothing.at, nothing.left_out) == (None, None, (0, 1))


def test_compare_rows_never_subtracts_the_minus_infinity_of_a_row_left_out():
    lse = np.array([-np.inf, 1.5])
    with np.errstate(all="raise"):
        c = analysis.compare_rows(lse, np.array([-np.inf, 1.25]), np.array([False, True]))
    assert (c.largest, c.at, c.left_out) == (0.25, (1,), (0,))


def test_bias_reach_penalises_earlier_keys_and_favours_later_ones_only_where_seen():
    m = 0.25
    bias = -m * (np.arange(4)[:, None] - np.arange(4)[None, :])  # ALiBi's −m·(i − j), written out
    both = analysis.bias_reach(bias, None)
    assert both.penalty == (-0.75, 3, 0) and both.bonus == (0.75, 0, 3)
    causal = analysis.bias_reach(bias, np.tril(np.ones((4, 4), bool)))
    assert causal.penalty == (-0.75, 3, 0) and causal.bonus is None
    alone = analysis.bias_reach(bias, np.eye(4, dtype=bool))  # every query sees only itself: bias 0
    assert alone.penalty is None and alone.bonus is None
