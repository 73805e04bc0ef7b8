"""The online softmax (FlashAttention's tiling): equal to the whole softmax attention and to numpy written out, its
m + log l the row's log-sum-exp, for every block size, with masked keys and tiles masked whole for a row; each tile's
state before and after kept and consistent."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import AttentionInputError, causal_mask, online_softmax_attention, scaled_dot_product_attention

RNG = np.random.default_rng(8)


def numpy_reference(q, k, v, mask=None):
    s = q @ k.T / np.sqrt(q.shape[1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(s - m)
    total = e.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = np.log(total[:, 0]) + m[:, 0]
    return np.divide(e @ v, total, out=np.zeros((q.shape[0], v.shape[1])), where=total > 0), lse


@pytest.mark.parametrize("block", [1, 2, 3, 7, 8, 50])
def test_online_equals_the_whole_softmax(block):
    q, k, v = RNG.normal(size=(5, 4)) * 3, RNG.normal(size=(7, 4)) * 3, RNG.normal(size=(7, 2))
    t = online_softmax_attention(q, k, v, block=block)
    out, lse = numpy_reference(q, k, v)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.output, scaled_dot_product_attention(q, k, v).output, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.logsumexp, lse, rtol=0, atol=1e-12)
    assert len(t.tiles) == -(-7 // block) and t.tiles[-1].stop == 7


def test_masked_keys_and_a_tile_masked_whole_for_a_row():
    q, k, v = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    mask = causal_mask(6)
    mask[4] = False  # a query that sees nothing: output 0, log-sum-exp −inf
    mask[5, :4] = False  # a query whose first two tiles (block 2) are all masked
    t = online_softmax_attention(q, k, v, block=2, mask=mask)
    out, lse = numpy_reference(q, k, v, mask)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(t.output[4], 0.0)
    assert np.isneginf(t.logsumexp[4]) and t.l[4] == 0
    np.testing.assert_allclose(t.logsumexp[[0, 1, 2, 3, 5]], lse[[0, 1, 2, 3, 5]], rtol=0, atol=1e-12)
    first = t.tiles[0]
    assert np.isneginf(first.m_new[5]) and first.rescale[5] == 1.0 and first.l_new[5] == 0.0  # nothing seen yet
    assert not np.isnan(t.output).any()


def test_each_tile_carries_the_state_forward():
    q, k, v = RNG.normal(size=(3, 4)) * 4, RNG.normal(size=(9, 4)) * 4, RNG.normal(size=(9, 2))
    t = online_softmax_attention(q, k, v, block=4)
    m, l, o = np.full(3, -np.inf), np.zeros(3), np.zeros((3, 2))  # noqa: E741 (FlashAttention's names)
    for tile in t.tiles:
        np.testing.assert_array_equal(tile.m_old, m)
        np.testing.assert_array_equal(tile.l_old, l)
        np.testing.assert_array_equal(tile.o_old, o)
        np.testing.assert_allclose(tile.scores, q @ k[tile.start:tile.stop].T / 2.0, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(tile.m_new, np.maximum(m, tile.scores.max(axis=1)))
        if np.isfinite(m).all():
            np.testing.assert_allclose(tile.rescale, np.exp(m - tile.m_new), rtol=1e-15)
        assert np.all(tile.rescale <= 1.0) and np.all(tile.p <= 1.0)  # the stable softmax's step: nothing above 1
        np.testing.assert_allclose(tile.l_new, tile.rescale * l + tile.p.sum(axis=1), rtol=1e-15)
        m, l, o = tile.m_new, tile.l_new, tile.o_new  # noqa: E741
    np.testing.assert_allclose(t.m, (q @ k.T / 2.0).max(axis=1), rtol=0, atol=1e-14)


@pytest.mark.parametrize("kwargs, words", [
    (dict(block=0), "block: keys per tile must be a whole number of at least 1, got 0"),
    (dict(block=2, mask=np.ones((2, 2), dtype=bool)), "mask: shape (2, 2) does not match"),
])
def test_refusals(kwargs, words):
    with pytest.raises(AttentionInputError) as err:
        online_softmax_attention(np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 1)), **kwargs)
    assert words in str(err.value)


def test_keys_of_another_width_are_named():
    with pytest.raises(AttentionInputError, match="K: has width 3 but Q has width 2") as err:
        online_softmax_attention(np.ones((3, 2)), np.ones((4, 3)), np.ones((4, 1)), block=2)
    assert err.value.matrix == "K"
