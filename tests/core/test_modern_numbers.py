"""The numbers the Modern attention page states, from attn_core, checked against numpy written out here: the soft cap's
largest change, the keys a window hides, the log-sum-exp the online softmax is checked against and the tiles where a
row's max rose, RoPE's angles and its shift check, and the KV cache's dot-product counts."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attn_core import (
    RoPE,
    analysis,
    cached_decode,
    causal_mask,
    online_softmax_attention,
    positional_encoding,
    positional_encoding_at,
    rotation_angles,
    shift_check,
    sliding_window_mask,
)

RNG = np.random.default_rng(38)


# ---- soft-cap ------------------------------------------------------------------------------------------------------


def test_cap_summary_is_the_largest_change_and_the_largest_capped_score():
    scaled = RNG.normal(size=(4, 5)) * 3
    cap = 2.0
    capped = cap * np.tanh(scaled / cap)
    best, at, top = -1.0, None, 0.0
    for i in range(4):
        for j in range(5):
            if abs(scaled[i, j] - capped[i, j]) > best:
                best, at = abs(scaled[i, j] - capped[i, j]), (i, j)
            top = max(top, abs(capped[i, j]))
    c = analysis.cap_summary(scaled, capped)
    assert (c.largest_change, c.at, c.largest_capped) == (best, at, top)
    assert c.largest_capped < cap


def test_cap_summary_with_a_huge_cap_changes_nothing_and_a_reached_cap_is_the_cap():
    scaled = np.array([[1.5, -2.0], [0.25, 3.0]])
    huge = 1e300
    c = analysis.cap_summary(scaled, huge * np.tanh(scaled / huge))
    assert c.largest_change <= 1e-15 and c.largest_capped == pytest.approx(3.0, abs=1e-15)
    far = np.array([[1000.0, 0.0], [0.0, -1000.0]])  # |s| / c = 1000: tanh rounds to exactly ±1
    c = analysis.cap_summary(far, 1.0 * np.tanh(far / 1.0))
    assert c.largest_capped == 1.0 and c.largest_change == 999.0 and c.at == (0, 0)


# ---- window ------------------------------------------------------------------------------------------------------


def test_hidden_by_window_lists_the_keys_the_window_hides_with_their_weights():
    n = 6
    before, after = causal_mask(n), sliding_window_mask(n, n, 2, causal=True)
    weights = RNG.random((n, n))
    expected = []
    for i in range(n):
        lost = [(j, float(weights[i, j])) for j in range(n) if before[i, j] and not after[i, j]]
        expected.append((i, lost))
    assert analysis.hidden_by_window(before, after, weights) == expected
    assert expected[5][1] == [(j, float(weights[5, j])) for j in range(4)]  # i − 2 < j ≤ i keeps 4 and 5


def test_hidden_by_window_without_a_mask_and_a_window_that_hides_nothing():
    n = 4
    weights = RNG.random((n, n))
    both_sides = sliding_window_mask(n, n, 2, causal=False)  # |i − j| < 2
    got = analysis.hidden_by_window(None, both_sides, weights)
    assert got == [(i, [(j, float(weights[i, j])) for j in range(n) if abs(i - j) >= 2]) for i in range(n)]
    wide = sliding_window_mask(n, n, n, causal=True)  # W = n_seq: the causal mask itself
    assert analysis.hidden_by_window(causal_mask(n), wide, weights) == [(i, []) for i in range(n)]


# ---- online softmax ------------------------------------------------------------------------------------------------


def test_logsumexp_is_log_of_the_sum_of_exp_and_minus_inf_for_a_row_masked_everywhere():
    s = RNG.normal(size=(5, 6)) * 4
    mask = causal_mask(6)[:5]
    mask[2] = False  # a query that sees nothing
    masked = np.where(mask, s, -np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero or invalid warning on the way
        got = analysis.logsumexp(masked)
    for i in range(5):
        if i == 2:
            assert got[i] == -np.inf
        else:
            expected = math.log(sum(math.exp(s[i, j]) for j in range(6) if mask[i, j]))
            assert got[i] == pytest.approx(expected, rel=0, abs=1e-12)


def test_logsumexp_of_scores_whose_exp_overflows():
    got = analysis.logsumexp(np.array([[1000.0, 1000.0, 1000.0], [800.0, -np.inf, 800.0 - math.log(3.0)]]))
    assert got[0] == pytest.approx(1000.0 + math.log(3.0), rel=0, abs=1e-12)
    assert got[1] == pytest.approx(800.0 + math.log(1.0 + 1.0 / 3.0), rel=0, abs=1e-12)


def running_max_rises(s: np.ndarray, block: int) -> list[tuple[int, float, float, float]]:
    """Row ``s`` [n_k] (−inf where masked) read ``block`` keys at a time: the tiles after the first where the max
    of the keys read so far rose from a finite value, with exp(old − new)."""
    out, m = [], -math.inf
    for t, start in enumerate(range(0, len(s), block)):
        new = max(m, *s[start:start + block])
        if t > 0 and math.isfinite(m) and new > m:
            out.append((t, m, new, math.exp(m - new)))
        m = new
    return out


@pytest.mark.parametrize("block", [1, 2, 3, 7])
def test_rises_are_the_tiles_where_the_running_max_rose(block):
    q, k, v = RNG.normal(size=(4, 3)), RNG.normal(size=(7, 3)), RNG.normal(size=(7, 2))
    mask = np.ones((4, 7), dtype=bool)
    mask[1, :3] = False  # the first tiles masked for a row: m stays −∞ there, not a rise
    mask[3] = False  # a row masked everywhere: no rises
    o = online_softmax_attention(q, k, v, block=block, mask=mask)
    s = np.where(mask, q @ k.T / math.sqrt(3), -np.inf)
    for i in range(4):
        got = o.rises(i)
        expected = running_max_rises(s[i], block)
        assert [t for t, *_rest in got] == [t for t, *_rest in expected]
        np.testing.assert_allclose([r[1:] for r in got], [r[1:] for r in expected], rtol=0, atol=1e-12)
    assert o.rises(3) == []
    if block == 7:  # one tile: nothing after the first
        assert all(o.rises(i) == [] for i in range(4))


def test_rises_of_increasing_scores_one_key_a_tile():
    o = online_softmax_attention(np.array([[1.0]]), np.array([[1.0], [2.0], [4.0], [3.0]]), np.eye(4), block=1,
                                 scale="none")
    # numpy's exp and math's may differ in the last bit (numpy 1.26, the oldest supported)
    assert o.rises(0) == [(1, 1.0, 2.0, pytest.approx(math.exp(-1.0), rel=1e-15, abs=0)),
                          (2, 2.0, 4.0, pytest.approx(math.exp(-2.0), rel=1e-15, abs=0))]


# ---- RoPE ------------------------------------------------------------------------------------------------------------


def test_rotation_angles_are_position_times_theta():
    n, d, base = 5, 6, 500.0
    got = rotation_angles(np.arange(n), d, base)
    assert got.shape == (n, d // 2)
    for p in range(n):
        for i in range(d // 2):
            assert got[p, i] == pytest.approx(p * base ** (-2 * i / d), rel=1e-15, abs=0)
    assert got[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]  # θ_0 = 1: not wrapped past 2π either


def turn(v: np.ndarray, p: int, base: float, layout: str) -> np.ndarray:
    """RoPE written out: pair i is (i, i + d/2) ("half") or (2i, 2i + 1) ("interleaved"), turned by p · base^(−2i/d)."""
    d = len(v)
    out = v.copy()
    for i in range(d // 2):
        a_, b_ = (i, i + d // 2) if layout == "half" else (2 * i, 2 * i + 1)
        phi = p * base ** (-2 * i / d)
        out[a_] = v[a_] * math.cos(phi) - v[b_] * math.sin(phi)
        out[b_] = v[a_] * math.sin(phi) + v[b_] * math.cos(phi)
    return out


def sinusoid(p: int, d_model: int) -> np.ndarray:
    return np.array([math.sin(p / 10000 ** (2 * (i // 2) / d_model)) if i % 2 == 0 else
                     math.cos(p / 10000 ** (2 * (i // 2) / d_model)) for i in range(d_model)])


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("m, n, s", [(3, 1, 5), (0, 4, 17), (2, 2, 0)])
def test_shift_check_against_rotations_and_sinusoids_written_out(layout, m, n, s):
    d_model, d_k, base = 5, 4, 10000.0
    q_row, k_row = RNG.normal(size=d_k), RNG.normal(size=d_k)
    x_m, x_n = RNG.normal(size=d_model), RNG.normal(size=d_model)
    w_q, w_k = RNG.normal(size=(d_model, d_k)), RNG.normal(size=(d_model, d_k))
    c = shift_check(q_row, k_row, m, n, s, x_m, x_n, w_q, w_k, base=base, layout=layout)
    rope_at = turn(q_row, m, base, layout) @ turn(k_row, n, base, layout)
    rope_shifted = turn(q_row, m + s, base, layout) @ turn(k_row, n + s, base, layout)
    abs_at = ((x_m + sinusoid(m, d_model)) @ w_q) @ ((x_n + sinusoid(n, d_model)) @ w_k)
    abs_shifted = ((x_m + sinusoid(m + s, d_model)) @ w_q) @ ((x_n + sinusoid(n + s, d_model)) @ w_k)
    np.testing.assert_allclose([c.rope_at, c.rope_shifted, c.abs_at, c.abs_shifted],
                               [rope_at, rope_shifted, abs_at, abs_shifted], rtol=1e-12, atol=1e-12)
    assert c.rope_change == abs(c.rope_at - c.rope_shifted) < 1e-12  # only m − n counts
    assert c.abs_change == abs(c.abs_at - c.abs_shifted)
    if s == 0:  # no shift: the same computation twice, to the last bit
        assert c.rope_at == c.rope_shifted and c.abs_at == c.abs_shifted and c.rope_change == c.abs_change == 0.0
    else:
        assert c.abs_change > 1e-6  # absolute positions: the score moves with the pair


def test_shift_check_at_the_largest_shift_reads_only_the_four_positions_it_needs():
    """The shift box goes to 100,000: the check built every sinusoid row up to m + s (at d_model 769, 100,256 × 769
    floats: 6.4 s and 2.4 GB a rerun); it reads the four rows it uses, the same numbers."""
    d_model, d_k, m, n, s = 769, 4, 255, 0, 100_000
    q_row, k_row = RNG.normal(size=d_k), RNG.normal(size=d_k)
    x_m, x_n = RNG.normal(size=d_model), RNG.normal(size=d_model)
    w_q, w_k = RNG.normal(size=(d_model, d_k)), RNG.normal(size=(d_model, d_k))
    c = shift_check(q_row, k_row, m, n, s, x_m, x_n, w_q, w_k)
    abs_shifted = ((x_m + sinusoid(m + s, d_model)) @ w_q) @ ((x_n + sinusoid(n + s, d_model)) @ w_k)
    np.testing.assert_allclose(c.abs_shifted, abs_shifted, rtol=1e-9)
    np.testing.assert_allclose(positional_encoding_at([m + s, 3], 6), [sinusoid(m + s, 6), sinusoid(3, 6)],
                               rtol=0, atol=1e-12)
    assert np.array_equal(positional_encoding_at(range(5), 6), positional_encoding(5, 6))


# ---- KV cache --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_heads, n_kv", [(1, 1), (2, 1), (4, 2)])
def test_dot_products_so_far_with_and_without_a_cache(n_heads, n_kv):
    n_seq, d_model = 5, 4
    x = RNG.normal(size=(n_seq, d_model))
    w_q = RNG.normal(size=(d_model, 2 * n_heads))
    w_k, w_v = RNG.normal(size=(d_model, 2 * n_kv)), RNG.normal(size=(d_model, 2 * n_kv))
    dt = cached_decode(x, w_q, w_k, w_v, n_heads=n_heads, n_kv_heads=n_kv, rope=RoPE())
    so_far, without = dt.dot_products_so_far()
    with_cache, again, a, b = [], [], 0, 0
    for t in range(n_seq):
        a += n_heads * (t + 1)  # one query against t + 1 keys, per head
        b += n_heads * (t + 1) * (t + 1)  # t + 1 queries against t + 1 keys, per head
        with_cache.append(a)
        again.append(b)
    assert (so_far, without) == (with_cache, again)
    assert [s.dot_products_without_cache for s in dt.steps] == [n_heads * (t + 1) ** 2 for t in range(n_seq)]
    assert all(isinstance(v, int) for v in so_far + without)
