"""Decoding a token at a time with a key/value cache: equal to the whole causal forward, with grouped-query heads,
RoPE (the new token at its position), QK-norm, ALiBi, a window and a soft cap; each step's trace says what came from
the cache and what was computed for the new token."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import AttentionInputError, RoPE, cached_decode, decode_step, modern_attention

RNG = np.random.default_rng(37)
X = RNG.normal(size=(5, 6))
W_Q, W_K, W_V = RNG.normal(size=(6, 8)), RNG.normal(size=(6, 4)), RNG.normal(size=(6, 6))
W_O = RNG.normal(size=(12, 6))

OPTIONS = [
    dict(n_heads=4, n_kv_heads=2),
    dict(n_heads=4, n_kv_heads=2, rope=RoPE()),
    dict(n_heads=4, n_kv_heads=1, rope=RoPE(50.0, "interleaved"), qk_norm=True),
    dict(n_heads=4, n_kv_heads=2, rope=RoPE(), window=2, softcap=3.0, alibi=True),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_cached_decode_equals_the_whole_causal_forward(options):
    n_kv = options["n_kv_heads"]
    w_k, w_v = W_K[:, :2 * n_kv], W_V[:, :3 * n_kv]  # d_k = 2, d_v = 3 per key/value head
    whole = modern_attention(X, W_Q, w_k, w_v, W_O, causal=True, **options)
    decoded = cached_decode(X, W_Q, w_k, w_v, W_O, **options)
    np.testing.assert_allclose(decoded.output, whole.output, rtol=0, atol=1e-12)
    for t, step in enumerate(decoded.steps):
        for h in range(4):  # the step's one row of weights is row t of the whole text's, over keys 0 … t
            np.testing.assert_allclose(step.trace.heads[h].weights[0], whole.heads[h].weights[t, :t + 1], rtol=0,
                                       atol=1e-12)


def test_each_step_says_what_came_from_the_cache_and_what_was_computed():
    options = dict(n_heads=4, n_kv_heads=2, rope=RoPE())
    whole = modern_attention(X, W_Q, W_K, W_V, W_O, causal=True, **options)
    k_scored = np.concatenate([whole.heads[0].k, whole.heads[2].k], axis=1)  # the 2 KV heads, rotated: [5, 4]
    steps = cached_decode(X, W_Q, W_K, W_V, W_O, **options).steps
    assert steps[0].k_cached is None and steps[0].position == 0
    for t, step in enumerate(steps):
        assert step.position == t
        if t:
            np.testing.assert_array_equal(step.k_cached, steps[t - 1].k_cache)  # taken from the cache, not recomputed
            np.testing.assert_allclose(step.v_cached, (X @ W_V)[:t], rtol=0, atol=1e-14)
        np.testing.assert_allclose(step.k_cache, k_scored[:t + 1], rtol=0, atol=1e-14)  # keys kept rotated
        np.testing.assert_allclose(step.trace.q, X[t:t + 1] @ W_Q, rtol=0, atol=1e-14)  # the new token's own q, k, v
        np.testing.assert_allclose(step.trace.k, X[t:t + 1] @ W_K, rtol=0, atol=1e-14)
        np.testing.assert_allclose(step.trace.v, X[t:t + 1] @ W_V, rtol=0, atol=1e-14)
        assert step.trace.heads[1].scores.shape == (1, t + 1)  # one row of t + 1 dot products per query head
        assert step.dot_products == 4 * (t + 1)
        np.testing.assert_array_equal(step.trace.positions, [t])


def test_the_first_token_alone_and_refusals():
    first = decode_step(X[:1], None, None, W_Q, W_K, W_V, W_O, n_heads=4, n_kv_heads=2)
    np.testing.assert_allclose(first.trace.heads[0].weights, [[1.0]])
    with pytest.raises(AttentionInputError, match="X: a decoding step takes one token's row, got 2 rows"):
        decode_step(X[:2], None, None, W_Q, W_K, W_V, n_heads=4, n_kv_heads=2)
    with pytest.raises(AttentionInputError, match="K cache: has 3 columns but W_K has 4") as err:
        decode_step(X[:1], np.ones((2, 3)), np.ones((2, 6)), W_Q, W_K, W_V, n_heads=4, n_kv_heads=2)
    assert err.value.matrix == "K cache"
    with pytest.raises(AttentionInputError, match="V cache: has 1 rows but K cache has 2"):
        decode_step(X[:1], np.ones((2, 4)), np.ones((1, 6)), W_Q, W_K, W_V, n_heads=4, n_kv_heads=2)
    with pytest.raises(AttentionInputError, match="only one of them"):
        decode_step(X[:1], np.ones((2, 4)), None, W_Q, W_K, W_V, n_heads=4, n_kv_heads=2)
