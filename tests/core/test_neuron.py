"""The neuron view (attn_core.neuron): one query and one key of a head, feature by feature, against numpy written out
here, against the trace's own cells, and with RoPE against the rotation written out here (transformers'
rotate_half layout) rather than attn_core.rope."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    RoPE,
    causal_mask,
    head_neuron,
    modern_attention,
    multi_head_attention,
    multi_head_cross_attention,
    neuron_view,
)

RNG = np.random.default_rng(39)


def softmax_row(row: np.ndarray) -> np.ndarray:
    e = np.exp(row - row[np.isfinite(row)].max())
    return e / e.sum()


def test_the_arithmetic_written_out():
    q, k = RNG.normal(size=(4, 6)), RNG.normal(size=(5, 6))
    v = neuron_view(q, k, 2, 3, divisor=np.sqrt(6))
    np.testing.assert_array_equal(v.q_i, q[2])
    np.testing.assert_array_equal(v.k_j, k[3])
    np.testing.assert_array_equal(v.product, [q[2, d] * k[3, d] for d in range(6)])
    assert v.score == pytest.approx(sum(q[2, d] * k[3, d] for d in range(6)), abs=1e-12)
    assert v.scaled == v.score / np.sqrt(6)
    assert v.bias is None and v.biased == v.scaled and v.allowed
    row = np.array([sum(q[2, d] * k[m, d] for d in range(6)) for m in range(5)]) / np.sqrt(6)
    assert v.weight == pytest.approx(softmax_row(row)[3], abs=1e-12)
    assert v.d_k == 6 and v.q_before is None and v.score_before is None


def test_bias_and_mask_are_the_steps_they_are():
    q, k = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    bias = RNG.normal(size=(3, 3))
    mask = causal_mask(3)
    v = neuron_view(q, k, 1, 0, divisor=1.0, bias=bias, mask=mask)
    assert v.scaled == v.score and v.bias == bias[1, 0] and v.biased == v.score + bias[1, 0]
    row = q[1] @ k.T + bias[1]
    row[2] = -np.inf
    assert v.weight == pytest.approx(softmax_row(row)[0], abs=1e-12)
    hidden = neuron_view(q, k, 1, 2, divisor=1.0, bias=bias, mask=mask)
    assert not hidden.allowed and hidden.weight == 0.0
    assert np.isfinite(hidden.score)  # the score itself is still the dot product


def test_largest_products_first():
    v = neuron_view([[1.0, -4.0, 2.0, 0.5]], [[1.0, 1.0, -3.0, 1.0]], 0, 0, divisor=1.0)
    assert v.largest(3).tolist() == [2, 1, 0] and v.largest(99).tolist() == [2, 1, 0, 3] and v.largest(0).size == 0


@pytest.mark.parametrize("n_heads", [1, 3])
def test_every_cell_of_a_trace(n_heads):
    """The sum equals the trace's score cell within 1e-12, scaled and weights its cells, for every query and key."""
    x = RNG.normal(size=(5, 6))
    w = [RNG.normal(size=(6, 3 * n_heads)) for _ in range(3)]
    t = multi_head_attention(x, *w, np.eye(3 * n_heads), n_heads, mask=causal_mask(5))
    for h in range(n_heads):
        head = t.heads[h]
        for i in range(5):
            for j in range(5):
                v = head_neuron(t, h, i, j)
                assert abs(v.score - head.scores[i, j]) <= 1e-12
                assert abs(v.scaled - head.scaled[i, j]) <= 1e-12
                assert abs(v.weight - head.weights[i, j]) <= 1e-12
                assert v.allowed == (j <= i) and v.divisor == head.divisor


def test_a_score_bias_and_cross_attention():
    y, x = RNG.normal(size=(2, 4)), RNG.normal(size=(3, 4))
    w = [RNG.normal(size=(4, 4)) for _ in range(3)]
    bias = RNG.normal(size=(2, 2, 3))
    t = multi_head_cross_attention(y, x, *w, np.eye(4), 2, scale="none", bias=bias)
    v = head_neuron(t, 1, 1, 2)
    assert v.divisor == 1.0 and v.bias == bias[1, 1, 2]
    assert abs(v.biased - t.heads[1].biased[1, 2]) <= 1e-12 and abs(v.weight - t.heads[1].weights[1, 2]) <= 1e-12


def rotate_half_written_out(m: np.ndarray, base: float) -> np.ndarray:  # [n, d] -> [n, d], row p turned by p θ
    """transformers' apply_rotary_pos_emb: x·cos + rotate_half(x)·sin, θ_i = base^(−2i/d), emb = cat(θ, θ)."""
    n, d = m.shape
    theta = 1.0 / base ** (np.arange(0, d, 2) / d)  # [d/2]
    angles = np.arange(n)[:, None] * np.concatenate([theta, theta])[None, :]  # [n, d]
    rotated_half = np.concatenate([-m[:, d // 2:], m[:, :d // 2]], axis=1)
    return m * np.cos(angles) + rotated_half * np.sin(angles)


def test_rope_heads_show_q_and_k_after_and_before_the_rotation():
    n, d_model, d_k = 6, 8, 4
    x = RNG.normal(size=(n, d_model))
    w_q, w_k, w_v = RNG.normal(size=(d_model, 4 * d_k)), RNG.normal(size=(d_model, 2 * d_k)), RNG.normal(
        size=(d_model, 2 * d_k))
    t = modern_attention(x, w_q, w_k, w_v, np.eye(4 * d_k), n_heads=4, n_kv_heads=2, rope=RoPE(500.0), causal=True)
    h, g = 3, 1  # query head 3 reads key/value head 1
    q_raw, k_raw = (x @ w_q)[:, h * d_k:(h + 1) * d_k], (x @ w_k)[:, g * d_k:(g + 1) * d_k]
    q_rot, k_rot = rotate_half_written_out(q_raw, 500.0), rotate_half_written_out(k_raw, 500.0)
    v = head_neuron(t, h, 4, 2)
    np.testing.assert_allclose(v.q_i, q_rot[4], rtol=0, atol=1e-12)
    np.testing.assert_allclose(v.k_j, k_rot[2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(v.q_before, q_raw[4], rtol=0, atol=1e-12)
    np.testing.assert_allclose(v.k_before, k_raw[2], rtol=0, atol=1e-12)
    assert abs(v.score - q_rot[4] @ k_rot[2]) <= 1e-12 and abs(v.score_before - q_raw[4] @ k_raw[2]) <= 1e-12
    assert abs(v.score - t.heads[h].scores[4, 2]) <= 1e-12 and abs(v.weight - t.heads[h].weights[4, 2]) <= 1e-12
    # RoPE's score depends on the offset only: the same q and k rows at positions (5, 3) and (3, 1) score alike
    same = rotate_half_written_out(np.vstack([np.zeros((1, d_k)), np.tile(q_raw[4], (5, 1))]), 500.0)
    keys = rotate_half_written_out(np.vstack([np.zeros((1, d_k)), np.tile(k_raw[2], (5, 1))]), 500.0)
    assert neuron_view(same, keys, 5, 3, divisor=2.0).score == pytest.approx(
        neuron_view(same, keys, 3, 1, divisor=2.0).score, abs=1e-12)


@pytest.mark.parametrize(("call", "words"), [
    (lambda: neuron_view([[1.0, 2.0]], [[1.0]], 0, 0, divisor=1.0), "K: has 1 columns but Q has 2"),
    (lambda: neuron_view([[1.0]], [[1.0]], 1, 0, divisor=1.0), "Q: the query must be a row from 0 to 0, got 1"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, True, divisor=1.0), "K: the key must be a row from 0 to 0, got True"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, "a", divisor=1.0), "K: the key must be a row from 0 to 0, got 'a'"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, 0, divisor=0.0), "the divisor must be a finite number above 0"),
    (lambda: neuron_view([[np.nan]], [[1.0]], 0, 0, divisor=1.0), "Q: cell (0, 0) is NaN"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, 0, divisor=1.0, bias=[[1.0, 2.0]]),
     "bias: shape (1, 2) does not match the scores' shape (1, 1)"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, 0, divisor=1.0, mask=[[1]]), "mask: must be boolean"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, 0, divisor=1.0, q_before=[[1.0]]), "give both or neither"),
    (lambda: neuron_view([[1.0]], [[1.0]], 0, 0, divisor=1.0, q_before=[[1.0]], k_before=[[1.0, 2.0]]),
     "K before RoPE: shape (1, 2) does not match"),
    (lambda: head_neuron(multi_head_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2), 2, 0, 0),
     "head: must be a whole number from 0 to 1, got 2"),
])
def test_bad_input_is_named(call, words):
    with pytest.raises(AttentionInputError) as err:
        call()
    assert words in str(err.value)
