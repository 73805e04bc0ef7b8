"""The additive score bias (the mask's finite sibling): softmax(mask(S / s + B)) V, checked against numpy written out
here, per head and for every head, with masks, and the messages for a bias that does not fit."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    causal_mask,
    cross_attention,
    multi_head_attention,
    multi_head_cross_attention,
    scaled_dot_product_attention,
    self_attention,
)

RNG = np.random.default_rng(7)


def reference(q, k, v, bias, divisor, mask=None):  # numpy, written out: one head
    s = q @ k.T / divisor + bias
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w, w @ v


def test_bias_is_added_to_the_scaled_scores_before_the_softmax():
    q, k, v = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
    bias = RNG.normal(size=(3, 5))
    t = scaled_dot_product_attention(q, k, v, bias=bias)
    w, out = reference(q, k, v, bias, 2.0)
    np.testing.assert_allclose(t.weights, w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(t.scaled, q @ k.T / 2.0)  # the bias is its own stage
    np.testing.assert_array_equal(t.biased, t.scaled + bias)
    np.testing.assert_array_equal(t.masked, t.biased)  # no mask


def test_no_bias_and_a_zero_bias_give_the_same_weights_bit_for_bit():
    q, k, v = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    plain = scaled_dot_product_attention(q, k, v)
    zero = scaled_dot_product_attention(q, k, v, bias=np.zeros((4, 4)))
    assert plain.weights.tobytes() == zero.weights.tobytes()
    assert plain.bias is None and plain.biased is plain.scaled


def test_a_bias_row_shift_changes_nothing_and_a_large_bias_acts_as_a_mask():
    q, k, v = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))
    plain = scaled_dot_product_attention(q, k, v)
    shifted = scaled_dot_product_attention(q, k, v, bias=np.full((2, 3), 5.0))  # the same number on a whole row
    np.testing.assert_allclose(shifted.weights, plain.weights, rtol=0, atol=1e-15)
    big = np.array([[0.0, -1e4, 0.0], [0.0, -1e4, 0.0]])  # key 1 all but masked
    masked = scaled_dot_product_attention(q, k, v, mask=np.array([[True, False, True]] * 2))
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, bias=big).weights, masked.weights, atol=1e-15)


def test_bias_with_a_causal_mask_and_no_scaling_as_t5_decodes():
    x = RNG.normal(size=(4, 6))
    w_q, w_k, w_v = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3))
    bias = RNG.normal(size=(4, 4))
    t = self_attention(x, w_q, w_k, w_v, scale="none", mask=causal_mask(4), bias=bias)
    w, out = reference(x @ w_q, x @ w_k, x @ w_v, bias, 1.0, causal_mask(4))
    np.testing.assert_allclose(t.weights, w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-14)
    assert np.isneginf(t.masked[0, 1]) and t.weights[0, 1] == 0.0


def test_cross_attention_bias_is_queries_by_keys():
    y, x = RNG.normal(size=(2, 4)), RNG.normal(size=(5, 4))
    w = RNG.normal(size=(4, 4))
    bias = RNG.normal(size=(2, 5))
    t = cross_attention(y, x, w, w, w, bias=bias)
    ref, _ = reference(y @ w, x @ w, x @ w, bias, 2.0)
    np.testing.assert_allclose(t.weights, ref, rtol=0, atol=1e-15)


def test_multi_head_takes_one_bias_per_head_or_one_for_all():
    x = RNG.normal(size=(5, 8))
    w_q, w_k, w_v, w_o = (RNG.normal(size=(8, 8)) for _ in range(4))
    per_head = RNG.normal(size=(2, 5, 5))
    t = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, bias=per_head, scale="none")
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        w, out = reference(x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols], per_head[h], 1.0)
        np.testing.assert_allclose(t.heads[h].weights, w, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(t.heads[h].bias, per_head[h])
    one = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, bias=per_head[0], scale="none")
    np.testing.assert_array_equal(one.heads[1].bias, per_head[0])
    cross = multi_head_cross_attention(x[:2], x, w_q, w_k, w_v, w_o, 2, bias=per_head[:, :2, :])
    assert cross.heads[1].weights.shape == (2, 5)


@pytest.mark.parametrize(("bias", "words"), [
    (np.ones((3, 4)), "score bias: shape 3 × 4 does not fit the scores, which are 2 × 3 (rows of Q × rows of K)."),
    ([[0.0, float("nan"), 0.0], [0.0, 0.0, 0.0]], "score bias: cell (0, 1) is NaN"),
    ([[0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]], "score bias: cell (0, 2) is -inf"),
    ([[0.0, "a", 0.0], [0.0, 0.0, 0.0]], "score bias: cell (0, 1) is 'a', not a number."),
])
def test_a_bias_that_does_not_fit_is_named(bias, words):
    with pytest.raises(AttentionInputError) as err:
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)), bias=bias)
    assert words in str(err.value)


def test_multi_head_bias_errors_name_the_head():
    x = np.ones((2, 4))
    with pytest.raises(AttentionInputError, match=r"score bias: 3 matrices for 2 heads"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=np.zeros((3, 2, 2)))
    bad = np.zeros((2, 2, 2))
    bad[1, 1, 0] = np.inf
    with pytest.raises(AttentionInputError, match=r"score bias \(head 1\): cell \(1, 0\) is \+inf"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=bad)
    with pytest.raises(AttentionInputError, match=r"does not fit the scores, which are 2 × 2 \(rows of Q \(head 0\)"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=np.zeros((2, 3, 2)))


def test_a_bias_that_overflows_the_scores_is_named():
    with pytest.raises(AttentionInputError, match=r"scaled scores \+ bias: cell \(0, 0\) is \+inf"):
        scaled_dot_product_attention([[1e308]], [[1.0]], [[1.0]], scale="none", bias=[[1.7e308]])
