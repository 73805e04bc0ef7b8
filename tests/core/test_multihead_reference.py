"""multi_head_attention against PyTorch's formulation, written out in numpy here.

``torch.nn.functional.multi_head_attention_forward`` (self-attention, no biases, no dropout) computes, with
its in-projection weight W_in [3·E, E] and out-projection W_out [E_out, n_heads·d_v]:

    q, k, v = x W_in_qᵀ, x W_in_kᵀ, x W_in_vᵀ                 each split into heads along the features
    attn_h  = softmax(q_h k_hᵀ / √d_k + attn_mask_additive) v_h
    out     = concat_h(attn_h) W_outᵀ

attn_core takes the transposed layout: w_q = W_in_qᵀ [d_model, n_heads·d_k] and w_o = W_outᵀ. PyTorch's boolean
``attn_mask`` / ``key_padding_mask`` mean True = NOT allowed, so the reference below builds the additive mask
from the opposite boolean (attn_core's True = may attend), exactly as PyTorch turns its mask into -inf.
"""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import causal_mask, multi_head_attention, padding_mask


def torch_style_reference(x, in_proj_weight, out_proj_weight, n_heads, torch_attn_mask=None):
    """PyTorch's multi-head attention (batch of one, no bias) in plain numpy.

    x [L, E]; in_proj_weight [3·E_qkv, E] stacked (q, k, v) as in nn.MultiheadAttention; out_proj_weight
    [E_out, E_qkv]; torch_attn_mask bool [L, L] with True = NOT allowed (PyTorch's convention).
    """
    e = in_proj_weight.shape[0] // 3
    w_in_q, w_in_k, w_in_v = in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:]
    q, k, v = x @ w_in_q.T, x @ w_in_k.T, x @ w_in_v.T  # [L, E] each (F.linear)
    length, head_dim = x.shape[0], e // n_heads
    # PyTorch: q.view(L, n_heads, head_dim).transpose(0, 1) -> [n_heads, L, head_dim]
    qh = q.reshape(length, n_heads, head_dim).transpose(1, 0, 2)
    kh = k.reshape(length, n_heads, head_dim).transpose(1, 0, 2)
    vh = v.reshape(length, n_heads, head_dim).transpose(1, 0, 2)
    additive = np.zeros((length, length))
    if torch_attn_mask is not None:
        additive = np.where(torch_attn_mask, -np.inf, 0.0)  # masked_fill(mask, float("-inf"))
    logits = qh @ kh.transpose(0, 2, 1) / np.sqrt(head_dim) + additive  # [n_heads, L, L]
    row_max = logits.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)
    ex = np.exp(logits - row_max)
    totals = ex.sum(axis=-1, keepdims=True)
    weights = np.zeros_like(ex)
    np.divide(ex, totals, out=weights, where=totals > 0)  # PyTorch would give NaN for a fully masked row
    attn = weights @ vh  # [n_heads, L, head_dim]
    concat = attn.transpose(1, 0, 2).reshape(length, n_heads * head_dim)  # [L, E]
    return concat @ out_proj_weight.T, concat, weights


def random_weights(rng, d_model, width, d_out):
    in_proj = rng.standard_normal((3 * width, d_model)) / np.sqrt(d_model)  # PyTorch's [3E, E] layout
    out_proj = rng.standard_normal((d_out, width)) / np.sqrt(width)
    return in_proj, out_proj


def core(x, in_proj, out_proj, n_heads, mask=None):
    width = in_proj.shape[0] // 3
    w_q, w_k, w_v = in_proj[:width].T, in_proj[width:2 * width].T, in_proj[2 * width:].T  # [d_model, width]
    return multi_head_attention(x, w_q, w_k, w_v, out_proj.T, n_heads, mask=mask)


CASES = [(n_seq, n_heads, d_head) for n_seq in (1, 3, 7) for n_heads in (1, 2, 3, 4, 8) for d_head in (1, 4)]


@pytest.mark.parametrize(("n_seq", "n_heads", "d_head"), CASES)
def test_no_mask(n_seq, n_heads, d_head):
    rng = np.random.default_rng(1000 * n_seq + 10 * n_heads + d_head)
    width = n_heads * d_head
    x = rng.standard_normal((n_seq, 6))
    in_proj, out_proj = random_weights(rng, 6, width, 5)
    out, concat, weights = torch_style_reference(x, in_proj, out_proj, n_heads)
    t = core(x, in_proj, out_proj, n_heads)
    assert t.n_heads == n_heads
    assert t.concat.shape == (n_seq, width) and t.output.shape == (n_seq, 5)
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.concat, concat, rtol=1e-10, atol=1e-12)
    for h in range(n_heads):
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=1e-10, atol=1e-14)
        assert t.heads[h].divisor == pytest.approx(np.sqrt(d_head))


@pytest.mark.parametrize(("n_seq", "n_heads", "d_head"), CASES)
def test_causal_mask(n_seq, n_heads, d_head):
    rng = np.random.default_rng(2000 * n_seq + 10 * n_heads + d_head)
    width = n_heads * d_head
    x = rng.standard_normal((n_seq, 5))
    in_proj, out_proj = random_weights(rng, 5, width, width)
    # PyTorch's causal mask: True above the diagonal (nn.Transformer.generate_square_subsequent_mask as bool)
    torch_mask = np.triu(np.ones((n_seq, n_seq), dtype=bool), k=1)
    out, concat, weights = torch_style_reference(x, in_proj, out_proj, n_heads, torch_mask)
    t = core(x, in_proj, out_proj, n_heads, mask=causal_mask(n_seq))
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.concat, concat, rtol=1e-10, atol=1e-12)
    for h in range(n_heads):
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=1e-10, atol=1e-14)
        assert (t.heads[h].weights[torch_mask] == 0).all()
    # the first token sees only itself: its concatenated row is its own value row x[0] W_in_vᵀ
    np.testing.assert_allclose(t.concat[0], x[0] @ in_proj[2 * width:].T, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
@pytest.mark.parametrize("pads", [(False, False, False, True), (True, False, False, False), (False, True, True, False)])
def test_padding_mask(n_heads, pads):
    rng = np.random.default_rng(n_heads)
    width = n_heads * 3
    x = rng.standard_normal((4, 6))
    in_proj, out_proj = random_weights(rng, 6, width, 6)
    # PyTorch's key_padding_mask [batch, L], True = padding, broadcast to every query row
    key_padding = np.array(pads)
    torch_mask = np.broadcast_to(key_padding, (4, 4))
    out, concat, weights = torch_style_reference(x, in_proj, out_proj, n_heads, torch_mask)
    t = core(x, in_proj, out_proj, n_heads, mask=padding_mask(list(pads)))
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.concat, concat, rtol=1e-10, atol=1e-12)
    for h in range(n_heads):
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=1e-10, atol=1e-14)
        assert (t.heads[h].weights[:, key_padding] == 0).all()
    assert t.fully_masked_rows == ()


def test_fully_masked_rows_give_zero_rows_in_every_head():
    """Where PyTorch would return NaN, attn_core returns zeros and says which rows."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4))
    in_proj, out_proj = random_weights(rng, 4, 4, 4)
    allowed = np.array([[True, True, False], [False, False, False], [True, False, True]])
    out, concat, weights = torch_style_reference(x, in_proj, out_proj, 2, ~allowed)
    t = core(x, in_proj, out_proj, 2, mask=allowed)
    assert t.fully_masked_rows == (1,)
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)
    assert (t.concat[1] == 0).all() and (t.output[1] == 0).all()
    for h in range(2):
        assert (t.heads[h].weights[1] == 0).all()
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=1e-10, atol=1e-14)


def test_seed003_shape_eight_heads_of_64():
    """Seed 003 steps 8-10: 3 tokens, 8 heads of width 64, concatenated to 3 × 512."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    in_proj, out_proj = random_weights(rng, 4, 512, 4)
    out, concat, _ = torch_style_reference(x, in_proj, out_proj, 8)
    t = core(x, in_proj, out_proj, 8)
    assert [h.output.shape for h in t.heads] == [(3, 64)] * 8
    assert t.concat.shape == (3, 512)
    # step 10's np.hstack of the eight head outputs, in order
    np.testing.assert_array_equal(t.concat, np.hstack([h.output for h in t.heads]))
    np.testing.assert_allclose(t.concat, concat, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)
