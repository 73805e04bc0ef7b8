"""ALiBi (Press, Smith & Lewis 2022, "Train Short, Test Long"): no position embeddings; instead each head h adds
−m_h · (i − j) to the score of query i and key j, a penalty growing with the distance, steeper for heads with a larger
slope m_h. In attn_core it is a score bias (:func:`attn_core.add_bias`, one [n_q, n_k] matrix per head), added
after the scaling and before the mask.

Convention: ``alibi_bias`` is −m_h · (i − j), 0 on the diagonal and negative for earlier keys, as the paper draws it.
BLOOM (transformers' ``build_alibi_tensor``) adds m_h · j instead: the two differ by m_h · i, the same number along
a query's row, and softmax is unchanged when a row is shifted, so the weights are equal (the scores are not).
Without a causal mask, keys after the query get a positive bias; the paper defines ALiBi for causal models.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import N_, AttentionInputError
from .masks import _whole


def _heads(n_heads: object) -> int:
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise AttentionInputError(N_("n_heads: must be a whole number of at least 1, got {n_heads!r}."),
                                  n_heads=n_heads)
    return int(n_heads)


def alibi_slopes(n_heads: int) -> np.ndarray:  # -> [n_heads]
    """The heads' slopes m_h: a geometric sequence starting at 2^(−8/n) with ratio 2^(−8/n) for n heads.

    For a head count n that is not a power of two, the paper's code (``get_slopes`` in ofirpress/
    attention_with_linear_biases, also transformers' BLOOM ``_get_alibi_slopes``) takes the slopes of the closest power
    of two below, p, and then every other slope of 2p heads (the 1st, 3rd, …) for the n − p heads left.

    Examples
    --------
    >>> alibi_slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> alibi_slopes(6).tolist()  # 4 heads' slopes, then the 1st and 3rd of 8 heads'
    [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]
    """
    n_heads = _heads(n_heads)
    p = 2 ** math.floor(math.log2(n_heads))  # the closest power of two at or below n_heads
    start = 2.0 ** (-8.0 / p)  # = 2^(-2^-(log2 p - 3)) in the paper's code
    slopes = start ** np.arange(1, p + 1, dtype=np.float64)  # [p]
    if p != n_heads:
        extra = (2.0 ** (-8.0 / (2 * p))) ** np.arange(1, 2 * p + 1, 2, dtype=np.float64)  # [p]: odd powers
        slopes = np.concatenate([slopes, extra[:n_heads - p]])  # [n_heads]
    return slopes


def alibi_bias(n_heads: int, n_q: int, n_k: int, *, q_offset: int = 0) -> np.ndarray:  # -> [n_heads, n_q, n_k]
    """ALiBi's score bias, −m_h · (i − j) for head h, query row r at position i = r + ``q_offset`` and key j.

    ``q_offset``: where the queries start (with a key/value cache, the new token's position n_k − 1).

    Examples
    --------
    >>> alibi_bias(1, 3, 3)[0].tolist()
    [[0.0, 0.00390625, 0.0078125], [-0.00390625, 0.0, 0.00390625], [-0.0078125, -0.00390625, 0.0]]
    """
    n_q, n_k, q_offset = _whole(n_q, "n_q", 1), _whole(n_k, "n_k", 1), _whole(q_offset, "q_offset", 0)
    back = np.arange(n_k)[None, :] - (np.arange(n_q)[:, None] + q_offset)  # [n_q, n_k]: j − i = −(i − j)
    return alibi_slopes(n_heads)[:, None, None] * back[None, :, :]  # [n_heads, 1, 1] * [1, n_q, n_k]
