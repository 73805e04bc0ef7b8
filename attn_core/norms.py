"""Root-mean-square normalisation (Zhang & Sennrich 2019), as Llama's ``LlamaRMSNorm`` computes it, and QK-norm.

``rms_norm(x)`` = x / sqrt(mean(x²) + eps) · weight, the mean over each row's features; no mean subtracted, no bias
(unlike LayerNorm). transformers computes it in float32 and casts back; here it is float64 throughout.

QK-norm normalises the queries and keys before their dot product so the scores cannot grow without bound. Two
conventions:

- Qwen 3 (``Qwen3Attention.q_norm`` / ``k_norm``): per head, over head_dim — each head's q [n, d_k] and k [n, d_k]
  through ``rms_norm`` with a weight of d_k numbers shared by the heads; then RoPE. This is what attn_core's
  pipeline (``modern_attention(qk_norm=True)``) does.
- OLMo 2 (``Olmo2Attention.q_norm``): over the whole projection, Q [n, n_heads·d_k] at once (a weight of
  n_heads·d_k numbers) before it is cut into heads; the mean then runs over every head's features together.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import N_, AttentionInputError
from .validation import as_matrix, check_dim


def rms_norm(x: object, weight: object = None, eps: float = 1e-6, *,
             name: str = "X") -> np.ndarray:  # [n, d], [d] -> [n, d]
    """Each row divided by its root mean square, times ``weight``: x / sqrt(mean(x²) + eps) · weight.

    Parameters
    ----------
    x : array_like of shape (n, d)
    weight : array_like of shape (d,), optional
        The learned gain per feature (ones when None).
    eps : float
        Added to the mean square (a finite number of at least 0): keeps a row of zeros at zero. Llama uses 1e-6
        (``rms_norm_eps``).
    name : str
        What the learner calls ``x`` in a message ("Q (head 0)").

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> np.round(rms_norm([[3.0, 4.0], [0.0, 0.0]], eps=1e-12), 4).tolist()
    [[0.8485, 1.1314], [0.0, 0.0]]
    """
    x = as_matrix(name, x)
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not np.isfinite(eps) or eps < 0:
        raise AttentionInputError(N_("RMSNorm eps: must be a finite number of at least 0, got {eps!r}."), eps=eps)
    with np.errstate(over="ignore"):
        root = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + float(eps))  # [n, 1]
    big = ~np.isfinite(root[:, 0])  # rows whose squares overflow float64 (|x| > 1e154): eps is nothing beside them
    if big.any():  # scaled by their largest |x| first: the same root mean square, no overflow
        top = np.max(np.abs(x[big]), axis=-1, keepdims=True)  # [n_big, 1]
        root[big] = top * np.sqrt(np.mean((x[big] / top) ** 2, axis=-1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = x / root  # [n, d]
    normed[~np.isfinite(normed)] = 0.0  # eps = 0 and a row of zeros: 0 / 0, taken as 0
    if weight is None:
        return normed
    w = as_matrix(f"{name} norm weight", np.asarray(weight, dtype=object).reshape(1, -1)
                  if not isinstance(weight, np.ndarray) else np.atleast_2d(weight))  # [1, d]
    check_dim(f"{name} norm weight", w.shape[1], name, x.shape[1],
              N_("{name}: has {size} numbers but {other} has width {other_size}; one gain per feature."))
    return normed * w[0]  # [n, d] * [d]
