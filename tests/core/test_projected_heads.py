"""projected_multi_head_attention (queries, keys and values already projected: what a key/value cache calls) against
multi-head attention written out in numpy here, and the identity a cache rests on: a query alone over every key so
far is its row of the whole causal attention."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    causal_mask,
    multi_head_attention,
    multi_head_cross_attention,
    projected_multi_head_attention,
)


def written_out(q, k, v, w_o, n_heads, divisor, bias=None, mask=None):
    """softmax(mask(Q_h K_hᵀ / divisor + B_h)) V_h per head, side by side, @ W_O: output [n_q, d_out] and the
    weights [n_heads, n_q, n_k]."""
    d_k, d_v = q.shape[1] // n_heads, v.shape[1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):
        s = q[:, h * d_k:(h + 1) * d_k] @ k[:, h * d_k:(h + 1) * d_k].T / divisor  # [n_q, n_k]
        if bias is not None:
            s = s + bias[h]
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)  # [n_q, n_k]
        weights.append(a)
        outs.append(a @ v[:, h * d_v:(h + 1) * d_v])  # [n_q, d_v]
    return np.concatenate(outs, axis=1) @ w_o, np.stack(weights)


@pytest.mark.parametrize("n_q, n_k, n_heads, d_k, d_v", [(1, 1, 1, 3, 2), (1, 9, 4, 5, 3), (3, 7, 2, 4, 4)])
def test_it_is_multi_head_attention_written_out(n_q, n_k, n_heads, d_k, d_v):
    rng = np.random.default_rng(n_q * 100 + n_k)
    q, k = rng.standard_normal((n_q, n_heads * d_k)), rng.standard_normal((n_k, n_heads * d_k))
    v, w_o = rng.standard_normal((n_k, n_heads * d_v)), rng.standard_normal((n_heads * d_v, 6))
    bias = rng.standard_normal((n_heads, n_q, n_k))
    t = projected_multi_head_attention(q, k, v, w_o, n_heads, bias=bias)
    out, weights = written_out(q, k, v, w_o, n_heads, np.sqrt(d_k), bias)
    assert np.abs(t.output - out).max() < 1e-12
    assert np.abs(np.stack([h.weights for h in t.heads]) - weights).max() < 1e-15
    unscaled = projected_multi_head_attention(q, k, v, w_o, n_heads, scale="none")
    assert np.abs(unscaled.output - written_out(q, k, v, w_o, n_heads, 1.0)[0]).max() < 1e-12


def test_multi_head_cross_attention_is_the_projections_then_this_bit_for_bit():
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal((3, 8)), rng.standard_normal((5, 8))
    w_q, w_k, w_v, w_o = (rng.standard_normal((8, 8)) for _ in range(4))
    whole = multi_head_cross_attention(y, x, w_q, w_k, w_v, w_o, 4, mask=np.ones((3, 5), bool))
    part = projected_multi_head_attention(y @ w_q, x @ w_k, x @ w_v, w_o, 4, mask=np.ones((3, 5), bool))
    assert np.array_equal(whole.output, part.output) and np.array_equal(whole.concat, part.concat)


def test_each_new_query_over_the_keys_so_far_is_its_row_of_the_causal_attention():
    """A key/value cache, step by step: token t's query over the keys and values of tokens 0 … t."""
    rng = np.random.default_rng(7)
    n, d, n_heads = 6, 12, 3
    x = rng.standard_normal((n, d))
    w_q, w_k, w_v, w_o = (rng.standard_normal((d, d)) for _ in range(4))
    whole = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, mask=causal_mask(n))
    keys, values = np.empty((0, d)), np.empty((0, d))  # [t, d]: what a cache holds before token t
    for t in range(n):
        keys, values = np.vstack([keys, x[t:t + 1] @ w_k]), np.vstack([values, x[t:t + 1] @ w_v])
        step = projected_multi_head_attention(x[t:t + 1] @ w_q, keys, values, w_o, n_heads)
        assert np.abs(step.output[0] - whole.output[t]).max() < 1e-12
        for h in range(n_heads):
            assert np.abs(step.heads[h].weights[0] - whole.heads[h].weights[t, :t + 1]).max() < 1e-14


def test_projections_that_do_not_fit_are_named():
    with pytest.raises(AttentionInputError, match="K.*width"):
        projected_multi_head_attention(np.ones((1, 4)), np.ones((2, 6)), np.ones((2, 4)), np.eye(4), 2)
    with pytest.raises(AttentionInputError, match="Q: cell \\(0, 1\\) is NaN"):
        projected_multi_head_attention([[1.0, np.nan]], np.ones((2, 2)), np.ones((2, 2)), np.eye(2), 1)
