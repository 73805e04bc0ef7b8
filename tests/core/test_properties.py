"""Properties of attention that hold for every input, checked by hypothesis on small random cases."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_core import (
    apply_mask,
    merge_heads,
    multi_head_attention,
    scale_scores,
    scaled_dot_product_attention,
    self_attention,
    softmax,
    split_heads,
)

FAST = settings(max_examples=100, deadline=None)
VALUES = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def matrix(rows, cols, elements=VALUES):
    return arrays(np.float64, (rows, cols), elements=elements)


@st.composite
def qkv_and_mask(draw, with_mask=True):
    """Q [n_q, d_k], K [n_k, d_k], V [n_k, d_v] and a boolean mask [n_q, n_k] (or None)."""
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    q, k, v = draw(matrix(n_q, d_k)), draw(matrix(n_k, d_k)), draw(matrix(n_k, d_v))
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_k))) if with_mask else None
    return q, k, v, mask


@st.composite
def self_attention_inputs(draw):
    """X [n_seq, d_model] and W_Q, W_K [d_model, d_k], W_V [d_model, d_v]."""
    n, d_model = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    elems = st.floats(-3, 3, allow_nan=False)
    return (draw(matrix(n, d_model, elems)), draw(matrix(d_model, d_k, elems)),
            draw(matrix(d_model, d_k, elems)), draw(matrix(d_model, d_v, elems)))


@FAST
@given(qkv_and_mask())
def test_weight_rows_sum_to_one_or_are_zero_when_fully_masked(case):
    q, k, v, mask = case
    t = scaled_dot_product_attention(q, k, v, mask=mask)
    allowed_any = np.ones(q.shape[0], dtype=bool) if mask is None else mask.any(axis=1)
    sums = t.weights.sum(axis=1)
    np.testing.assert_allclose(sums[allowed_any], 1.0, rtol=1e-12)
    assert (t.weights[~allowed_any] == 0).all()
    assert (t.output[~allowed_any] == 0).all()
    assert t.fully_masked_rows == tuple(int(i) for i in range(q.shape[0]) if not allowed_any[i])
    assert (t.weights >= 0).all() and (t.weights <= 1).all()


@FAST
@given(qkv_and_mask())
def test_masked_weights_are_exactly_zero(case):
    q, k, v, mask = case
    t = scaled_dot_product_attention(q, k, v, mask=mask)
    if mask is None:
        assert t.mask is None
        np.testing.assert_array_equal(t.masked, t.scaled)
    else:
        assert (t.weights[~mask] == 0.0).all()
        assert np.isneginf(t.masked[~mask]).all()
        np.testing.assert_array_equal(t.masked[mask], t.scaled[mask])


@FAST
@given(st.integers(1, 6), st.integers(1, 5), st.integers(1, 5), st.data())
def test_split_then_merge_heads_is_the_identity(n, n_heads, d, data):
    m = data.draw(matrix(n, n_heads * d))
    heads = split_heads(m, n_heads)
    assert len(heads) == n_heads
    for h, part in enumerate(heads):
        np.testing.assert_array_equal(part, m[:, h * d:(h + 1) * d])  # head h: columns h·d ... (h+1)·d - 1
    np.testing.assert_array_equal(merge_heads(heads), m)


@FAST
@given(self_attention_inputs(), st.sampled_from(["sqrt_dk", "none", 0.5, 3.0]), st.booleans())
def test_one_head_with_identity_w_o_equals_self_attention(inputs, scale, causal):
    x, w_q, w_k, w_v = inputs
    mask = np.tri(x.shape[0], dtype=bool) if causal else None
    single = self_attention(x, w_q, w_k, w_v, scale=scale, mask=mask)
    multi = multi_head_attention(x, w_q, w_k, w_v, np.eye(w_v.shape[1]), 1, scale=scale, mask=mask)
    head = multi.heads[0]
    np.testing.assert_allclose(head.weights, single.weights, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(multi.concat, single.output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(multi.output, single.output, rtol=1e-12, atol=1e-12)
    assert head.divisor == single.divisor


@FAST
@given(qkv_and_mask())
def test_output_rows_are_convex_combinations_of_the_allowed_value_rows(case):
    q, k, v, mask = case
    t = scaled_dot_product_attention(q, k, v, mask=mask)
    allowed = np.ones((q.shape[0], k.shape[0]), dtype=bool) if mask is None else mask
    tol = 1e-9 * (1 + np.abs(v).max())
    for i in range(q.shape[0]):
        if not allowed[i].any():
            continue
        rows = v[allowed[i]]  # [n_allowed, d_v]
        assert (t.output[i] >= rows.min(axis=0) - tol).all()
        assert (t.output[i] <= rows.max(axis=0) + tol).all()


@FAST
@given(self_attention_inputs(), st.data())
def test_permuting_tokens_permutes_the_outputs(inputs, data):
    x, w_q, w_k, w_v = inputs
    perm = np.array(data.draw(st.permutations(range(x.shape[0]))))
    base = self_attention(x, w_q, w_k, w_v)
    moved = self_attention(x[perm], w_q, w_k, w_v)
    np.testing.assert_allclose(moved.output, base.output[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(moved.weights, base.weights[perm][:, perm], rtol=1e-9, atol=1e-12)


@FAST
@given(st.integers(1, 5), st.integers(1, 6), st.data())
def test_softmax_ignores_a_constant_added_to_each_row(n, m, data):
    a = data.draw(matrix(n, m))
    c = data.draw(arrays(np.float64, (n, 1), elements=st.floats(-50, 50)))
    ref = np.exp(a - a.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax(a), ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(softmax(a + c), softmax(a), rtol=1e-9, atol=1e-12)


def test_softmax_of_an_all_minus_inf_row_is_zero_and_leaves_its_input_alone():
    a = np.array([[-np.inf, -np.inf], [0.0, np.log(3.0)]])
    before = a.copy()
    np.testing.assert_allclose(softmax(a), [[0.0, 0.0], [0.25, 0.75]], rtol=1e-15)
    np.testing.assert_array_equal(a, before)
    np.testing.assert_allclose(softmax(np.array([[1.0], [2.0]]), axis=0), [[1 / (1 + np.e)], [np.e / (1 + np.e)]])


@FAST
@given(qkv_and_mask(), st.floats(0.01, 100))
def test_the_stages_in_place_equal_the_stages_on_new_arrays_bit_for_bit(case, divisor):
    q, k, v, mask = case
    s = q @ k.T  # [n_q, n_k]
    scaled = scale_scores(s, divisor)  # [n_q, n_k]
    masked = apply_mask(scaled, mask)  # [n_q, n_k]
    weights = softmax(masked)  # [n_q, n_k]
    buf = np.empty_like(s)  # [n_q, n_k]: one buffer, each stage written over the one before
    assert scale_scores(s, divisor, out=buf) is buf and buf.tobytes() == scaled.tobytes()
    assert apply_mask(buf, mask, out=buf) is buf and buf.tobytes() == masked.tobytes()
    assert softmax(buf, out=buf) is buf and buf.tobytes() == weights.tobytes()
    other = np.empty_like(s)  # [n_q, n_k]: out= a different array leaves the input alone
    assert apply_mask(scaled, mask, out=other).tobytes() == masked.tobytes()
    assert softmax(masked, out=other).tobytes() == weights.tobytes()
    np.testing.assert_array_equal(masked, apply_mask(scaled, mask))


@FAST
@given(qkv_and_mask(), st.sampled_from(["sqrt_dk", "none", 0.3, 7.0]))
def test_the_trace_rebuilds_scaled_and_masked_exactly_as_the_weights_came_from_them(case, scale):
    q, k, v, mask = case
    t = scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
    assert t.scaled.tobytes() == (t.scores / t.divisor).tobytes()
    assert softmax(t.masked).tobytes() == t.weights.tobytes()
    assert (t.weights @ t.v).tobytes() == t.output.tobytes()


@FAST
@given(qkv_and_mask())
def test_scale_none_equals_divisor_one(case):
    q, k, v, mask = case
    a = scaled_dot_product_attention(q, k, v, scale="none", mask=mask)
    b = scaled_dot_product_attention(q, k, v, scale=1.0, mask=mask)
    assert a.divisor == b.divisor == 1.0
    np.testing.assert_array_equal(a.scaled, a.scores)
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.output, b.output)


@FAST
@given(qkv_and_mask(), st.floats(0.01, 100))
def test_divisor_divides_every_score(case, divisor):
    q, k, v, mask = case
    t = scaled_dot_product_attention(q, k, v, scale=divisor, mask=mask)
    sq = scaled_dot_product_attention(q, k, v, mask=mask)
    assert t.divisor == divisor
    assert sq.divisor == np.sqrt(q.shape[1])
    np.testing.assert_allclose(t.scaled, (q @ k.T) / divisor, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sq.scaled, (q @ k.T) / np.sqrt(q.shape[1]), rtol=1e-12, atol=1e-12)


EXTREMES = st.sampled_from([1e30, -1e30, 1e-30, -1e-30, 0.0, 1.0, -1.0])


@FAST
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 4), st.data())
def test_extreme_but_finite_inputs_give_finite_weights(n, d_k, d_v, data):
    q, k = data.draw(matrix(n, d_k, EXTREMES)), data.draw(matrix(n, d_k, EXTREMES))
    v = data.draw(matrix(n, d_v, EXTREMES))
    mask = data.draw(st.none() | arrays(np.bool_, (n, n)))
    t = scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.isfinite(t.weights).all()
    assert np.isfinite(t.output).all()
    rows = t.weights.sum(axis=1)
    full = set(t.fully_masked_rows)
    for i in range(n):
        assert rows[i] == 0 if i in full else abs(rows[i] - 1) < 1e-12


@FAST
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_extreme_inputs_through_the_projections(n, d, data):
    x = data.draw(matrix(n, d, EXTREMES))
    w = [data.draw(matrix(d, d, EXTREMES)) for _ in range(3)]
    t = self_attention(x, *w)
    assert np.isfinite(t.weights).all() and np.isfinite(t.output).all()
    assert np.isfinite(t.scores).all()
