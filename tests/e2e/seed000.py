"""Seed 000's matrices (tests/seeds.py; the app opens on them) as float arrays, and attention written out in
numpy, independently of attn_core: the e2e tests' expected numbers."""

from __future__ import annotations

import numpy as np

from ..seeds import SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X

# 3 tokens, d_model 4, d_k = d_v = 3, scores divided by √3
X, W_Q, W_K, W_V = (np.array(m, dtype=float) for m in (SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V))


def attention(x: np.ndarray = X) -> tuple[np.ndarray, np.ndarray]:  # [3, 4] -> [3, 3] output, [3, 3] weights
    """softmax(QKᵀ/√3)V and the weights."""
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    scores = q @ k.T / np.sqrt(3.0)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return weights @ v, weights
