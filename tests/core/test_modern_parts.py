"""The parts of modern attention one at a time: the sliding window's rule (transformers' convention), soft-capping
(bounded by the cap, Gemma 2's order), ALiBi's bias and slopes, and the options' refusals in modern_attention."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    RoPE,
    alibi_bias,
    alibi_slopes,
    causal_mask,
    modern_attention,
    multi_head_attention,
    scaled_dot_product_attention,
    sliding_window_mask,
    soft_cap,
)

RNG = np.random.default_rng(2)


@pytest.mark.parametrize("window", [1, 2, 3, 5, 9])
def test_causal_window_sees_the_window_keys_ending_at_itself(window):
    m = sliding_window_mask(7, 7, window)
    for i in range(7):
        assert np.flatnonzero(m[i]).tolist() == list(range(max(0, i - window + 1), i + 1))  # i − window < j ≤ i
    assert (m <= causal_mask(7)).all()
    np.testing.assert_array_equal(sliding_window_mask(7, 7, 7), causal_mask(7))  # a window as long as the text


def test_window_without_causal_and_with_an_offset():
    m = sliding_window_mask(5, 5, 2, causal=False)
    i, j = np.indices((5, 5))
    np.testing.assert_array_equal(m, np.abs(i - j) < 2)
    # a key/value cache: one query at position 6 over keys 0 … 6 is the last row of the whole mask
    np.testing.assert_array_equal(sliding_window_mask(1, 7, 3, q_offset=6)[0], sliding_window_mask(7, 7, 3)[6])


@pytest.mark.parametrize("args, words", [((3, 3, 0), "window: must be a whole number of at least 1, got 0"),
                                         ((0, 3, 2), "n_q: must be a whole number of at least 1, got 0")])
def test_window_refusals(args, words):
    with pytest.raises(AttentionInputError) as err:
        sliding_window_mask(*args)
    assert words in str(err.value)


def test_soft_cap_is_bounded_and_keeps_small_scores():
    s = np.array([[-1e300, -50.0, -0.01, 0.0, 0.01, 50.0, 1e300]])
    capped = soft_cap(s, 5.0)
    assert np.all(np.abs(capped) <= 5.0) and np.all(np.abs(capped[:, 2:-2]) < 5.0)  # ±5 once tanh rounds to ±1
    np.testing.assert_allclose(capped, 5.0 * np.tanh(s / 5.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(capped[0, 2:5], s[0, 2:5], rtol=1e-5)  # near 0, tanh(z) ≈ z
    assert np.all(np.diff(capped[0]) >= 0)  # the order of the scores stays


def test_soft_cap_comes_after_the_scaling_and_before_the_mask():
    q, k, v = RNG.normal(size=(3, 4)) * 4, RNG.normal(size=(3, 4)) * 4, RNG.normal(size=(3, 2))
    t = scaled_dot_product_attention(q, k, v, softcap=1.0, mask=causal_mask(3))
    np.testing.assert_allclose(t.capped, np.tanh(q @ k.T / 2.0), rtol=0, atol=1e-15)
    assert t.weights[0, 1] == 0 and t.weights[0, 2] == 0  # masked after the cap: −inf stays −inf, never −cap
    assert np.isneginf(t.masked[0, 1])
    s = np.where(causal_mask(3), np.tanh(q @ k.T / 2.0), -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(t.weights, e / e.sum(axis=1, keepdims=True), rtol=0, atol=1e-15)
    for cap in (0, -1.0, np.inf, "2"):
        with pytest.raises(AttentionInputError, match="softcap: must be a finite number above 0"):
            scaled_dot_product_attention(q, k, v, softcap=cap)


def test_the_soft_caps_refusal_says_what_its_contract_takes():
    """It said "(or none)", which the text "none" (that ``scale`` takes) is not: None is the way to have no cap."""
    q = k = v = np.eye(2)
    t = scaled_dot_product_attention(q, k, v, softcap=None)  # no cap: the scores as scaled
    np.testing.assert_array_equal(t.capped, t.scaled)
    with pytest.raises(AttentionInputError) as err:
        scaled_dot_product_attention(q, k, v, softcap="none")
    assert str(err.value) == "softcap: must be a finite number above 0, or None for no soft cap; got 'none'."


def test_multi_head_soft_cap_reaches_every_head():
    x, w = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4)) * 3
    t = multi_head_attention(x, w, w, w, np.eye(4), 2, softcap=2.0)
    assert all(h.softcap == 2.0 and np.abs(h.capped).max() <= 2.0 for h in t.heads)
    np.testing.assert_allclose(t.heads[1].capped, 2.0 * np.tanh(t.heads[1].scaled / 2.0), rtol=0, atol=1e-15)


def test_alibi_bias_is_minus_slope_times_distance():
    b = alibi_bias(3, 4, 6, q_offset=2)
    i, j = np.indices((4, 6))
    for h, m in enumerate(alibi_slopes(3)):
        np.testing.assert_array_equal(b[h], -m * ((i + 2) - j))
    np.testing.assert_array_equal(alibi_slopes(4), [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8])
    with pytest.raises(AttentionInputError, match="n_heads: must be a whole number of at least 1, got 0"):
        alibi_slopes(0)


def test_alibi_as_the_score_bias_the_core_already_supports():
    x, w = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))
    t = modern_attention(x, w, w, w, n_heads=2, alibi=True, causal=True)
    plain = multi_head_attention(x, w, w, w, np.eye(4), 2, bias=alibi_bias(2, 4, 4), mask=causal_mask(4))
    np.testing.assert_array_equal(t.output, plain.output)
    np.testing.assert_array_equal(t.alibi, alibi_bias(2, 4, 4))


@pytest.mark.parametrize("kwargs, words, matrix", [
    (dict(rope=RoPE()), "Q (head 0): RoPE turns pairs of features, so the width must be even", "Q (head 0)"),
    (dict(rope=(10000, "half")), "rope: must be RoPE(base, layout) or none", None),
    (dict(window=0), "window: must be a whole number of at least 1", None),
    (dict(qk_norm=1), "qk_norm: must be True or False", None),
    (dict(n_kv_heads=2), "n_kv_heads: 2 key/value heads do not divide the 3 query heads", None),
])
def test_modern_attention_refusals(kwargs, words, matrix):
    x, w = np.ones((2, 3)), np.ones((3, 3))  # 3 heads of width 1
    with pytest.raises(AttentionInputError) as err:
        modern_attention(x, w, w, w, n_heads=3, **kwargs)
    assert words in str(err.value)
    assert err.value.matrix == matrix


def test_rope_options_are_checked_when_made():
    with pytest.raises(AttentionInputError, match="RoPE layout: 'zigzag'"):
        RoPE(10000.0, "zigzag")
    with pytest.raises(AttentionInputError, match="RoPE base"):
        RoPE(0.5)
