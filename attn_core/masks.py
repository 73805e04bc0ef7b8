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


def _whole(value: object, name: str, least: int) -> int:
    """``value`` as an int, or AttentionInputError naming ``name`` unless it is a whole number of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise AttentionInputError(N_("{name}: must be a whole number of at least {least}, got {value!r}."), name=name,
                                  least=least, value=value)
    return int(value)


def sliding_window_mask(n_q: int, n_k: int, window: int, *, causal: bool = True,
                        q_offset: int = 0) -> np.ndarray:  # -> bool [n_q, n_k]
    """Each query sees only the ``window`` keys nearest to it (Mistral's, Gemma 2's local layers' sliding window).

    Query row r sits at position i = r + ``q_offset`` (with a key/value cache the new token's position), key j at
    position j. The rule, inclusive of the query's own position:

    - ``causal=True``: i − window < j ≤ i, i.e. the ``window`` keys ending at the query itself. This is transformers'
      ``sliding_window_causal_mask_function`` (``kv_idx > q_idx - sliding_window`` and ``kv_idx <= q_idx``): a query
      sees ``sliding_window`` keys counting itself, as Mistral's ``sliding_window`` config says.
    - ``causal=False``: |i − j| < window, the same reach on both sides (2·window − 1 keys). transformers'
      bidirectional overlay counts one further (``abs(q_idx - kv_idx) <= sliding_window``): its window w is this one's
      w + 1.

    Examples
    --------
    >>> sliding_window_mask(4, 4, 2).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    >>> sliding_window_mask(3, 3, 2, causal=False).astype(int).tolist()
    [[1, 1, 0], [1, 1, 1], [0, 1, 1]]
    """
    n_q, n_k = _whole(n_q, "n_q", 1), _whole(n_k, "n_k", 1)
    window, q_offset = _whole(window, "window", 1), _whole(q_offset, "q_offset", 0)
    i = np.arange(n_q)[:, None] + q_offset  # [n_q, 1]: the queries' positions
    j = np.arange(n_k)[None, :]  # [1, n_k]: the keys' positions
    if causal:
        return (j > i - window) & (j <= i)  # [n_q, n_k]
    return np.abs(i - j) < window  # [n_q, n_k]
