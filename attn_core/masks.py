"""Boolean masks, True = may attend (as ``np.tril(np.ones(...))`` in seed 002)."""

from __future__ import annotations

import numpy as np

from .errors import N_, AttentionInputError


def causal_mask(n_seq: int) -> np.ndarray:  # -> bool [n_seq, n_seq]
    """Each query attends to itself and the tokens before it (lower triangle).

    Examples
    --------
    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    if isinstance(n_seq, bool) or not isinstance(n_seq, (int, np.integer)) or n_seq < 1:
        raise AttentionInputError(N_("causal mask: n_seq must be at least 1, got {n_seq}."), n_seq=n_seq, matrix="mask")
    return np.tri(int(n_seq), dtype=bool)


def padding_mask(is_pad: object, n_q: int | None = None) -> np.ndarray:  # bool [n_k] -> bool [n_q, n_k]
    """No query attends to a padding token (its column is False in every row); ``n_q`` queries (default: one per
    token, as in self-attention).

    Examples
    --------
    >>> padding_mask([False, False, True]).astype(int).tolist()
    [[1, 1, 0], [1, 1, 0], [1, 1, 0]]
    """
    try:
        pad = np.asarray(is_pad)
    except ValueError:  # ragged nesting
        pad = np.array([], dtype=object)
    if pad.dtype != np.bool_ or pad.ndim != 1 or pad.size == 0:
        raise AttentionInputError(
            N_("padding mask: expects one True/False per token (True = padding)."), matrix="mask"
        )
    return np.broadcast_to(~pad, (pad.size if n_q is None else int(n_q), pad.size)).copy()


def additive_mask(mask: np.ndarray) -> np.ndarray:  # bool [n_q, n_k] -> [n_q, n_k] of 0 / -inf
    """The same mask as numbers to add to the scores: 0 where allowed, -inf where not (seed 002).

    Examples
    --------
    >>> additive_mask(np.array([[True, False]])).tolist()
    [[0.0, -inf]]
    """
    return np.where(mask, 0.0, -np.inf)
