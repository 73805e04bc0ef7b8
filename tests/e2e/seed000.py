"""Seed 000's matrices (shared/seeds/000_*.txt; the app opens on them) and attention written out in numpy,
independently of attn_core: the e2e tests' expected numbers."""

from __future__ import annotations

import numpy as np

# 3 tokens, d_model 4, d_k = d_v = 3, scores divided by √3
X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=float)
W_Q = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=float)
W_K = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=float)
W_V = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=float)


def attention(x: np.ndarray = X) -> tuple[np.ndarray, np.ndarray]:  # [3, 4] -> [3, 3] output, [3, 3] weights
    """softmax(QKᵀ/√3)V and the weights."""
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    scores = q @ k.T / np.sqrt(3.0)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return weights @ v, weights
