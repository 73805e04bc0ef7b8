"""Make tests/core/reference_cross_attention.npz: PyTorch's ``nn.MultiheadAttention`` (float64, no bias, kdim =
vdim ≠ embed_dim) on a query sequence Y and a key/value sequence X, with and without a key padding mask: an
implementation independent of attn_core, stored with the inputs it was given, so that tests/core/
test_cross_attention.py checks attn_core against it without torch.

Run from the repository's root once, when the cases below change (the test suite itself does not need torch)::

    .venv/bin/pip install torch==2.13.0          # a CPU build
    .venv/bin/python -m tests.core.make_cross_reference

The file holds, case i being N_HEADS[i] heads: ``n_heads`` [3]; the inputs ``y`` [3, L, E] and ``x`` [3, S, kdim];
PyTorch's weights as it stores them, ``q_proj`` [3, E, E], ``k_proj`` [3, E, kdim], ``v_proj`` [3, E, vdim],
``out_proj`` [3, E, E]; ``key_padding`` [len(PADS), S] (True = ignore, PyTorch's convention; a row of only False
is no mask); PyTorch's ``out`` [3, len(PADS), L, E] and ``weights_{n}`` [len(PADS), n, L, S] for n heads.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().with_name("reference_cross_attention.npz")
N_HEADS = (1, 2, 3)
#: key padding of X's 5 tokens (True = ignore): none, two tokens, the first token
PADS = [None, [False, False, True, False, True], [True, False, False, False, False]]


def pytorch_case(seed, n_heads, e=6, kdim=4, length=3, source=5):
    """Y [L, E] (the query sequence), X [S, kdim] (key and value), PyTorch's weights as stored."""
    rng = np.random.default_rng(seed)
    y, x = rng.standard_normal((length, e)), rng.standard_normal((source, kdim))
    q_proj, k_proj, v_proj = (rng.standard_normal((e, d)) / math.sqrt(d) for d in (e, kdim, kdim))
    out_proj = rng.standard_normal((e, e)) / math.sqrt(e)
    return y, x, q_proj, k_proj, v_proj, out_proj


def pytorch_forward(y, x, q_proj, k_proj, v_proj, out_proj, n_heads, pads=None):
    """``nn.MultiheadAttention(embed_dim=E, num_heads=n_heads, kdim=vdim=kdim, bias=False)`` in float64 on query Y
    and key = value = X (a batch of one); pads: X's key padding (True = ignore) or None.
    Returns (output [L, E], weights [n_heads, L, S]) as numpy arrays."""
    import torch  # here: importing this module (pytest's doctest collection, the tests) needs no torch

    e, kdim = y.shape[1], x.shape[1]
    mha = torch.nn.MultiheadAttention(embed_dim=e, num_heads=n_heads, kdim=kdim, vdim=kdim, bias=False,
                                      batch_first=True).double()
    assert mha.in_proj_weight is None  # kdim ≠ embed_dim: separate q, k, v projection weights
    with torch.no_grad():
        for param, value in ((mha.q_proj_weight, q_proj), (mha.k_proj_weight, k_proj), (mha.v_proj_weight, v_proj),
                             (mha.out_proj.weight, out_proj)):
            assert tuple(param.shape) == value.shape
            param.copy_(torch.from_numpy(value))
        key = torch.from_numpy(x)[None]  # [1, S, kdim]
        key_padding = None if pads is None else torch.tensor([list(pads)])  # [1, S], True = ignore
        out, weights = mha(torch.from_numpy(y)[None], key, key, key_padding_mask=key_padding, need_weights=True,
                           average_attn_weights=False)  # [1, L, E], [1, n_heads, L, S]
    return out[0].numpy(), weights[0].numpy()


def main() -> None:
    import torch

    cases = [pytorch_case(n, n) for n in N_HEADS]
    names = ("y", "x", "q_proj", "k_proj", "v_proj", "out_proj")
    arrays = {name: np.stack(values) for name, values in zip(names, zip(*cases, strict=True), strict=True)}
    arrays["n_heads"] = np.array(N_HEADS)
    arrays["key_padding"] = np.array([p or [False] * 5 for p in PADS])  # [len(PADS), S]
    outs = []
    for n, case in zip(N_HEADS, cases, strict=True):
        forwards = [pytorch_forward(*case, n_heads=n, pads=pads) for pads in PADS]
        outs.append([out for out, _ in forwards])
        arrays[f"weights_{n}"] = np.array([weights for _, weights in forwards])  # [len(PADS), n, L, S]
    arrays["out"] = np.array(outs)  # [3, len(PADS), L, E]
    arrays["versions"] = np.array(f"torch {torch.__version__}, numpy {np.__version__}")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes): {len(N_HEADS) * len(PADS)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
