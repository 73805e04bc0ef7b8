"""Make tests/core/reference_modern.npz: modern attention (grouped-query heads, RoPE, QK-norm, ALiBi, sliding windows,
soft-capping) as PyTorch and transformers compute it, in float64, stored with its inputs so that
tests/core/test_modern_reference.py checks attn_core.modern_attention (and the key/value cache, the online softmax)
without torch.

Run from the repository's root once, when the cases below change (the test suite itself needs no torch)::

    /tmp/torchenv/bin/python -m tests.core.make_modern_reference     # torch 2.13 CPU, transformers 5.24

Each case (CASES: name -> options of attn_core.modern_attention) is computed twice, independently of attn_core:

1. **fused**: the kernels. ``torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)`` when the case
   has neither soft-cap, ALiBi nor window (``is_causal`` for causal); otherwise ``flex_attention`` (it runs on CPU,
   unfused, in float64) with a ``score_mod`` (the score it gets is already scaled: soft-cap ``cap · tanh(s / cap)``,
   then + ALiBi's ``m_h · (kv_idx − q_idx)``) and a ``block_mask`` made from transformers' own mask functions
   (``masking_utils.causal_mask_function``, ``sliding_window_causal_mask_function(window)``, and for a
   non-causal window ``sliding_window_bidirectional_mask_function(window − 1)``: its ``|i − j| <= w`` is attn_core's
   ``|i − j| < w + 1``), ``enable_gqa=True``, ``return_lse=True``.
2. **eager**: the weights, written with transformers' helpers: ``repeat_kv`` (query head h reads key/value head
   h // (n_heads / n_kv_heads)), scores ``q kᵀ · scale``, the same soft-cap, ALiBi and mask as an additive float
   mask, ``torch.softmax`` in float64.

Both share the steps before the scores: Q, K, V by ``x @ w``; heads by ``view(n, heads, d_k).transpose``; QK-norm by
``torch.nn.functional.rms_norm`` over head_dim (Qwen 3's q_norm / k_norm; transformers' Qwen3RMSNorm computes in
float32, rms_norm in the input's float64); RoPE "half" by transformers' ``apply_rotary_pos_emb`` with float64
cos/sin of LlamaRotaryEmbedding's formula, "interleaved" by Meta's ``torch.view_as_complex`` rotation; ALiBi's slopes
by the paper's ``get_slopes`` (ofirpress/attention_with_linear_biases), in Python floats.

Stored per case ``c``: ``c__x``, ``c__w_q``, ``c__w_k``, ``c__w_v``, ``c__w_o`` (and ``c__q_norm_weight``,
``c__k_norm_weight`` with QK-norm), ``c__output`` [n, d_out] (fused, then @ W_O), ``c__eager_output``,
``c__weights`` [n_heads, n, n] (eager), ``c__lse`` [n_heads, n] (flex cases only). And for ALiBi's convention:
``bloom__weights`` [n_heads, n, n], the same scores with BLOOM's ``build_alibi_tensor`` (m_h · j) as the bias.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().with_name("reference_modern.npz")
N_SEQ, D_MODEL, D_K, D_V = 6, 8, 4, 3

#: name -> options of attn_core.modern_attention (rope as (base, layout)); n_heads, n_kv_heads fix the weights' widths
CASES = {
    "mha": dict(n_heads=2),
    "gqa_causal": dict(n_heads=4, n_kv_heads=2, causal=True),
    "mqa": dict(n_heads=4, n_kv_heads=1),
    "rope_gqa_causal": dict(n_heads=4, n_kv_heads=2, causal=True, rope=(10000.0, "half")),
    "llama_mistral": dict(n_heads=4, n_kv_heads=2, causal=True, rope=(10000.0, "half"), window=3),
    "qwen3": dict(n_heads=4, n_kv_heads=2, causal=True, rope=(1000000.0, "half"), qk_norm=True),
    "gemma2": dict(n_heads=4, n_kv_heads=2, causal=True, rope=(10000.0, "half"), window=2, softcap=2.0, scale=3.0),
    "bloom": dict(n_heads=4, causal=True, alibi=True),
    "interleaved": dict(n_heads=2, causal=True, rope=(100.0, "interleaved")),
    "window_bidirectional": dict(n_heads=2, window=2),
    "softcap_alibi_mqa": dict(n_heads=3, n_kv_heads=1, causal=True, alibi=True, softcap=1.5),
}


def paper_slopes(n):
    """ALiBi's slopes as the paper's code writes them (ofirpress/attention_with_linear_biases, fairseq
    transformer.py, get_slopes)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + paper_slopes(2 * closest_power_of_2)[0::2][
        : n - closest_power_of_2]


def weights_of(name, opts, rng):
    n_heads = opts["n_heads"]
    n_kv = opts.get("n_kv_heads", n_heads)
    x = rng.standard_normal((N_SEQ, D_MODEL))
    w_q = rng.standard_normal((D_MODEL, n_heads * D_K)) / math.sqrt(D_MODEL) * 2
    w_k = rng.standard_normal((D_MODEL, n_kv * D_K)) / math.sqrt(D_MODEL) * 2
    w_v = rng.standard_normal((D_MODEL, n_kv * D_V)) / math.sqrt(D_MODEL)
    w_o = rng.standard_normal((n_heads * D_V, D_MODEL)) / math.sqrt(n_heads * D_V)
    arrays = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o}
    if opts.get("qk_norm"):
        arrays["q_norm_weight"] = 1 + 0.3 * rng.standard_normal(D_K)
        arrays["k_norm_weight"] = 1 + 0.3 * rng.standard_normal(D_K)
    return arrays


def heads_before_scores(a, opts):
    """q [1, n_heads, n, d_k], k [1, n_kv, n, d_k], v [1, n_kv, n, d_v]: projected, QK-normed, rotated."""
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    n_heads = opts["n_heads"]
    n_kv = opts.get("n_kv_heads", n_heads)
    x = torch.from_numpy(a["x"])
    q = (x @ torch.from_numpy(a["w_q"])).view(N_SEQ, n_heads, D_K).transpose(0, 1)[None]
    k = (x @ torch.from_numpy(a["w_k"])).view(N_SEQ, n_kv, D_K).transpose(0, 1)[None]
    v = (x @ torch.from_numpy(a["w_v"])).view(N_SEQ, n_kv, D_V).transpose(0, 1)[None]
    if opts.get("qk_norm"):
        q = torch.nn.functional.rms_norm(q, (D_K,), torch.from_numpy(a["q_norm_weight"]), eps=1e-6)
        k = torch.nn.functional.rms_norm(k, (D_K,), torch.from_numpy(a["k_norm_weight"]), eps=1e-6)
    if opts.get("rope"):
        base, layout = opts["rope"]
        positions = torch.arange(N_SEQ, dtype=torch.float64)
        inv_freq = 1.0 / (base ** (torch.arange(0, D_K, 2, dtype=torch.int64).to(torch.float64) / D_K))
        freqs = positions[:, None] * inv_freq[None, :]  # [n, d_k/2]
        if layout == "half":
            emb = torch.cat((freqs, freqs), dim=-1)
            q, k = apply_rotary_pos_emb(q, k, emb.cos()[None], emb.sin()[None])
        else:  # Meta's llama/model.py apply_rotary_emb
            freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # [n, d_k/2]

            def turn(t):
                t_ = torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2).contiguous())
                return torch.view_as_real(t_ * freqs_cis).flatten(3)

            q, k = turn(q), turn(k)
    return q, k, v


def mask_function(opts):
    from transformers.masking_utils import (
        causal_mask_function,
        sliding_window_bidirectional_mask_function,
        sliding_window_causal_mask_function,
    )

    window = opts.get("window")
    if window is not None:
        return (sliding_window_causal_mask_function(window) if opts.get("causal")
                else sliding_window_bidirectional_mask_function(window - 1))
    return causal_mask_function if opts.get("causal") else None


def fused(q, k, v, opts):
    """(output [n_heads, n, d_v], lse [n_heads, n] or None) from SDPA or flex_attention."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    n_heads = opts["n_heads"]
    scale = 1.0 / opts.get("scale", math.sqrt(D_K))
    if not (opts.get("softcap") or opts.get("alibi") or opts.get("window")):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(opts.get("causal")),
                                                               scale=scale, enable_gqa=True)
        return out[0].numpy(), None
    slopes = torch.tensor(paper_slopes(n_heads), dtype=torch.float64)
    cap = opts.get("softcap")

    def score_mod(score, b, h, q_idx, kv_idx):
        if cap is not None:
            score = cap * torch.tanh(score / cap)
        if opts.get("alibi"):
            score = score + slopes[h] * (kv_idx - q_idx)
        return score

    mask_mod = mask_function(opts)
    block_mask = None if mask_mod is None else create_block_mask(mask_mod, 1, None, N_SEQ, N_SEQ, device="cpu")
    out, lse = flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=scale, enable_gqa=True,
                              return_lse=True)
    return out[0].numpy(), lse[0].numpy()


def eager(q, k, v, opts, alibi=None):
    """(output [n_heads, n, d_v], weights [n_heads, n, n]) written out with transformers' repeat_kv."""
    import torch
    from transformers.models.llama.modeling_llama import repeat_kv

    n_heads = opts["n_heads"]
    groups = n_heads // opts.get("n_kv_heads", n_heads)
    k, v = repeat_kv(k, groups), repeat_kv(v, groups)
    s = (q @ k.transpose(2, 3)) / opts.get("scale", math.sqrt(D_K))
    if opts.get("softcap"):
        s = opts["softcap"] * torch.tanh(s / opts["softcap"])
    i, j = torch.arange(N_SEQ)[:, None], torch.arange(N_SEQ)[None, :]
    if alibi is not None:
        s = s + alibi
    elif opts.get("alibi"):
        s = s + torch.tensor(paper_slopes(n_heads), dtype=torch.float64)[:, None, None] * (j - i)
    allowed = torch.ones(N_SEQ, N_SEQ, dtype=torch.bool)
    if opts.get("causal"):
        allowed &= j <= i
    if opts.get("window"):
        allowed &= (j > i - opts["window"]) if opts.get("causal") else ((i - j).abs() < opts["window"])
    s = s + torch.zeros(N_SEQ, N_SEQ, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return (w @ v)[0].numpy(), w[0].numpy()


def bloom_weights(q, k, v, opts):
    """The bloom case's weights with BLOOM's own bias: build_alibi_tensor's m_h · j (slopes in float32: exact for 4
    heads, powers of two)."""
    import torch
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    alibi = build_alibi_tensor(torch.ones(1, N_SEQ), opts["n_heads"], torch.float64)  # [n_heads, 1, n]
    return eager(q, k, v, opts, alibi=alibi[None])[1]


def main():
    import warnings

    warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
    rng = np.random.default_rng(3838)
    arrays = {}
    for name, opts in CASES.items():
        a = weights_of(name, opts, rng)
        q, k, v = heads_before_scores(a, opts)
        out, lse = fused(q, k, v, opts)
        eager_out, weights = eager(q, k, v, opts)
        concat = lambda o: o.transpose(1, 0, 2).reshape(N_SEQ, -1)  # noqa: E731  [n_heads, n, d_v] -> [n, n_heads·d_v]
        a["output"] = concat(out) @ a["w_o"]
        a["eager_output"] = concat(eager_out) @ a["w_o"]
        a["weights"] = weights
        assert np.abs(a["output"] - a["eager_output"]).max() < 1e-13, name  # the two torch paths agree
        if lse is not None:
            a["lse"] = lse
        if name == "bloom":
            arrays["bloom__weights"] = bloom_weights(q, k, v, opts)
        arrays.update({f"{name}__{key}": value for key, value in a.items()})
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({len(arrays)} arrays)")


if __name__ == "__main__":
    main()
