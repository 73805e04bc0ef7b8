"""Grouped-query attention in the multi-head functions (n_kv_heads): equal to multi-head attention with each key/value
head's weights repeated for its query heads (transformers' repeat_kv), its two ends (n_kv_heads = n_heads is
multi-head, 1 multi-query), the trace's key/value head per query head, and the refusals naming what is wrong."""

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

RNG = np.random.default_rng(38)


def weights(n_heads, n_kv, d_model=6, d_k=2, d_v=3):
    return (RNG.normal(size=(4, d_model)), RNG.normal(size=(d_model, n_heads * d_k)),
            RNG.normal(size=(d_model, n_kv * d_k)), RNG.normal(size=(d_model, n_kv * d_v)),
            RNG.normal(size=(n_heads * d_v, d_model)))


def repeat_kv(w, n_heads, n_kv):  # [d_model, n_kv·d] -> [d_model, n_heads·d]: each KV head's columns repeated
    return np.concatenate([h for h in np.split(w, n_kv, axis=1) for _ in range(n_heads // n_kv)], axis=1)


@pytest.mark.parametrize("n_heads, n_kv", [(4, 2), (6, 3), (4, 1), (3, 1), (4, 4)])
def test_grouped_query_is_multi_head_with_the_kv_heads_repeated(n_heads, n_kv):
    x, w_q, w_k, w_v, w_o = weights(n_heads, n_kv)
    mask = causal_mask(4)
    t = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv_heads=n_kv, mask=mask)
    full = multi_head_attention(x, w_q, repeat_kv(w_k, n_heads, n_kv), repeat_kv(w_v, n_heads, n_kv), w_o, n_heads,
                                mask=mask)
    np.testing.assert_allclose(t.output, full.output, rtol=0, atol=1e-13)
    for a, b in zip(t.heads, full.heads, strict=True):
        np.testing.assert_allclose(a.weights, b.weights, rtol=0, atol=1e-15)
    assert t.kv_heads == tuple(h // (n_heads // n_kv) for h in range(n_heads))
    assert t.n_kv_heads == (None if n_kv == n_heads else n_kv)
    for h, head in enumerate(t.heads):  # query head h scored the keys of its KV head: the same array, not a copy
        assert head.k is t.heads[t.kv_heads.index(t.kv_heads[h])].k
        np.testing.assert_array_equal(head.k, (x @ w_k)[:, t.kv_heads[h] * 2:(t.kv_heads[h] + 1) * 2])


def test_the_two_ends():
    x, w_q, w_k, w_v, w_o = weights(4, 4)
    mha = multi_head_attention(x, w_q, w_k, w_v, w_o, 4)
    np.testing.assert_array_equal(multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=4).output, mha.output)
    assert mha.kv_heads == (0, 1, 2, 3)
    x, w_q, w_k, w_v, w_o = weights(4, 1)
    mqa = multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=1)
    assert mqa.kv_heads == (0, 0, 0, 0)
    assert all(h.v is mqa.heads[0].v for h in mqa.heads)  # one key/value head for every query head


def test_cross_and_projected_take_kv_heads_too():
    x, w_q, w_k, w_v, w_o = weights(4, 2)
    y = RNG.normal(size=(2, 6))
    t = multi_head_cross_attention(y, x, w_q, w_k, w_v, w_o, 4, n_kv_heads=2)
    p = projected_multi_head_attention(y @ w_q, x @ w_k, x @ w_v, w_o, 4, n_kv_heads=2)
    np.testing.assert_array_equal(t.output, p.output)
    assert t.heads[3].weights.shape == (2, 4)


@pytest.mark.parametrize("n_heads, n_kv, widths, words, matrix", [
    (4, 3, (8, 6, 9), "n_kv_heads: 3 key/value heads do not divide the 4 query heads (n_heads)", None),
    (4, 2, (8, 6, 6), "W_K: has 6 columns but needs 4: n_kv_heads key/value heads as wide as each query head", "W_K"),
    (4, 2, (8, 4, 5), "W_V: its 5 columns do not split into 2 heads (n_kv_heads)", "W_V"),
    (4, 2, (6, 4, 4), "W_Q: its 6 columns do not split into 4 heads (n_heads)", "W_Q"),
    (4, 0, (8, 4, 4), "n_kv_heads: must be a whole number of at least 1, got 0", None),
])
def test_refusals_name_the_count_or_matrix(n_heads, n_kv, widths, words, matrix):
    d_q, d_k, d_v = widths
    x = np.ones((2, 3))
    with pytest.raises(AttentionInputError) as err:
        multi_head_attention(x, np.ones((3, d_q)), np.ones((3, d_k)), np.ones((3, d_v)), np.eye(8), n_heads,
                             n_kv_heads=n_kv)
    assert words in str(err.value)
    assert err.value.matrix == matrix


def test_w_o_must_have_a_row_per_query_heads_value_column():
    x, w_q, w_k, w_v, _ = weights(4, 2)  # d_v 3: the 4 query heads concatenate to 12 columns
    with pytest.raises(AttentionInputError, match="W_O: has 6 rows but .* concatenate to 12 columns") as err:
        multi_head_attention(x, w_q, w_k, w_v, np.ones((6, 2)), 4, n_kv_heads=2)
    assert err.value.matrix == "W_O"


def test_grouped_query_needs_the_dot_score():
    from attn_core import ScoreFunction

    x, w_q, w_k, w_v, w_o = weights(4, 2)
    with pytest.raises(AttentionInputError, match="dot score only, not general"):
        multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=2, score=ScoreFunction("general", w_a=np.eye(2)))
