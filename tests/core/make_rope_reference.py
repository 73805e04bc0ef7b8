"""Make tests/core/reference_rope.npz: rotary position embeddings and RMSNorm as PyTorch and transformers compute
them, stored with their inputs, so that tests/core/test_rope.py checks attn_core without torch.

Run from the repository's root once, when the cases below change (the test suite itself needs no torch)::

    /tmp/torchenv/bin/python -m tests.core.make_rope_reference     # torch 2.13 CPU, transformers 5.24

What is stored, case c being CASES[c] = (d, base, positions):

- ``x_c`` [n, d]: the input rows.
- ``half_c`` [n, d]: transformers' ``apply_rotary_pos_emb`` (``modeling_llama``: ``q * cos + rotate_half(q) * sin``)
  on ``x_c`` as queries and keys, with cos, sin [n, d] made in float64 by the formula of
  ``LlamaRotaryEmbedding`` (default rope_type): ``inv_freq = 1 / base ** (arange(0, d, 2) / d)``,
  ``emb = cat(freqs, freqs)``. transformers itself computes the angles in float32 (its ``forward`` casts
  ``inv_freq`` and the positions with ``.float()``), so
- ``hf_cos_c``, ``hf_sin_c`` [n, d]: ``LlamaRotaryEmbedding(config)(x, position_ids)`` as it is, float32: the test
  checks our angles against them to float32's precision and the layout (``cat(cos, cos)``) exactly.
- ``interleaved_c`` [n, d]: Meta's reference Llama (``precompute_freqs_cis`` + ``apply_rotary_emb``): consecutive
  pairs viewed as complex numbers (``torch.view_as_complex``) times ``torch.polar(1, positions ⊗ freqs)``, float64.
- RMSNorm: ``norm_x`` [4, 6], ``norm_w`` [6], ``rms_norm`` = ``torch.nn.functional.rms_norm(x, (6,), w, eps=1e-6)``
  in float64, and ``llama_rms_norm`` = ``LlamaRMSNorm(6, eps=1e-6)`` with that weight on float64 input (it computes in
  float32 inside, then casts back).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().with_name("reference_rope.npz")
#: (d, base, positions): Llama 2's base, Llama 3's 500000, a large position (a long context), positions that skip
CASES = [
    (2, 10000.0, [0, 1, 2, 3]),
    (8, 10000.0, [0, 1, 2, 3, 4, 5]),
    (16, 500000.0, [3, 7, 8, 100, 4095]),
    (6, 100.0, [10, 0, 5]),
]


def half(x, positions, d, base):
    """transformers' apply_rotary_pos_emb with float64 cos/sin (LlamaRotaryEmbedding's formula, in float64)."""
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(torch.float64) / d))  # [d/2]
    freqs = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [n, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)  # [n, d]
    cos, sin = emb.cos()[None], emb.sin()[None]  # [1, n, d]
    q = torch.from_numpy(x)[None, None]  # [1, 1, n, d]: batch, heads, seq, head_dim
    q_embed, k_embed = apply_rotary_pos_emb(q, q.clone(), cos, sin)
    assert torch.equal(q_embed, k_embed)
    return q_embed[0, 0].numpy()


def hf_angles(positions, d, base):
    """LlamaRotaryEmbedding's own cos, sin [n, d] (float32 inside, as transformers computes them)."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=d * 2, num_attention_heads=2, head_dim=d,
                         rope_parameters={"rope_type": "default", "rope_theta": base})
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros((1, len(positions), d), dtype=torch.float64)
    cos, sin = rotary(x, torch.tensor([positions]))
    return cos[0].numpy(), sin[0].numpy()


def interleaved(x, positions, d, base):
    """Meta's llama/model.py: precompute_freqs_cis and apply_rotary_emb, in float64."""
    import torch

    freqs = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64)[: (d // 2)] / d))  # [d/2]
    t = torch.tensor(positions, dtype=torch.float64)
    freqs_cis = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64), torch.outer(t, freqs))  # [n, d/2]
    xq = torch.from_numpy(x)
    xq_ = torch.view_as_complex(xq.reshape(*xq.shape[:-1], -1, 2))  # [n, d/2] complex: (x_2i, x_2i+1)
    return torch.view_as_real(xq_ * freqs_cis).flatten(1).numpy()  # [n, d]


def norms(x, w):
    import torch
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    xt, wt = torch.from_numpy(x), torch.from_numpy(w)
    exact = torch.nn.functional.rms_norm(xt, (x.shape[1],), wt, eps=1e-6)
    llama = LlamaRMSNorm(x.shape[1], eps=1e-6).double()
    with torch.no_grad():
        llama.weight.copy_(wt)
        hf = llama(xt)
    return exact.numpy(), hf.detach().numpy()


def main():
    rng = np.random.default_rng(38)
    arrays = {}
    for c, (d, base, positions) in enumerate(CASES):
        x = rng.standard_normal((len(positions), d))
        arrays[f"x_{c}"] = x
        arrays[f"half_{c}"] = half(x, positions, d, base)
        arrays[f"hf_cos_{c}"], arrays[f"hf_sin_{c}"] = hf_angles(positions, d, base)
        arrays[f"interleaved_{c}"] = interleaved(x, positions, d, base)
    x, w = rng.standard_normal((4, 6)) * 3.0, rng.standard_normal(6)
    x[2] = 0.0  # a row of zeros: eps keeps it at zero
    arrays["norm_x"], arrays["norm_w"] = x, w
    arrays["rms_norm"], arrays["llama_rms_norm"] = norms(x, w)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({len(arrays)} arrays)")


if __name__ == "__main__":
    main()
