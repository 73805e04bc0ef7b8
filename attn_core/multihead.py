"""Multi-head attention: cut the projections into column slices, attend per head, concatenate, project.

Layout (PyTorch's ``nn.MultiheadAttention`` with its in-projection weights transposed):
w_q is [d_model, n_heads·d_k] and head h uses columns h·d_k:(h+1)·d_k (likewise w_k, w_v);
w_o is [n_heads·d_v, d_out].

The score functions' weights follow the same rule, one column slice per head: "general"'s W_a is
[d_q, n_heads·d_k] (head h's W_a is its [d_q, d_k] slice); "additive"'s W_1 [d_q, n_heads·d_a], W_2
[d_k, n_heads·d_a] and v_a [n_heads·d_a] give head h columns h·d_a:(h+1)·d_a (d_q, d_k per head).

:func:`multi_head_cross_attention` projects, then hands Q, K, V to :func:`projected_multi_head_attention`, which a
key/value cache calls on its own (a new token's queries over the keys and values kept so far).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import DOT, AttentionTrace, Scale, ScoreFunction, _attend, as_score, project_all
from .errors import N_, AttentionInputError
from .validation import as_matrix, check_dim, check_overflow


def split_heads(m: np.ndarray, n_heads: int) -> list[np.ndarray]:  # [n, n_heads·d] -> n_heads × [n, d]
    """Cut the columns of ``m`` into ``n_heads`` equal consecutive slices.

    Examples
    --------
    >>> [h.tolist() for h in split_heads(np.arange(4.0).reshape(1, 4), 2)]
    [[[0.0, 1.0]], [[2.0, 3.0]]]
    """
    d = m.shape[1] // n_heads
    return [m[:, h * d:(h + 1) * d] for h in range(n_heads)]


def merge_heads(heads: list[np.ndarray]) -> np.ndarray:  # n_heads × [n, d] -> [n, n_heads·d]
    """Lay head outputs side by side, in order (the inverse of :func:`split_heads`)."""
    return np.concatenate(heads, axis=1)


def head_slice(h: int, width: int) -> slice:
    """Columns of head ``h`` when each head is ``width`` wide."""
    return slice(h * width, (h + 1) * width)


@dataclass(frozen=True, eq=False)
class MultiHeadTrace:
    """Every intermediate of multi-head attention.

    Attributes
    ----------
    heads : tuple of AttentionTrace
        One per head, in order; head h's q is [n_seq, d_k], its output [n_seq, d_v].
    concat : ndarray of shape (n_seq, n_heads·d_v)
        The head outputs side by side.
    w_o : ndarray of shape (n_heads·d_v, d_out)
    output : ndarray of shape (n_seq, d_out)
        ``concat @ w_o``.
    """

    heads: tuple[AttentionTrace, ...]
    concat: np.ndarray
    w_o: np.ndarray
    output: np.ndarray

    @property
    def n_heads(self) -> int:
        return len(self.heads)

    @property
    def fully_masked_rows(self) -> tuple[int, ...]:
        return self.heads[0].fully_masked_rows


def check_heads(n_heads: object, d_qk: int, d_v: int, d_k: int | None = None) -> int:
    """Return ``n_heads`` as an int, or raise unless it divides the projected widths (W_Q's and W_K's ``d_qk``, or
    W_Q's ``d_qk`` and W_K's ``d_k`` when they differ; W_V's ``d_v``)."""
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise AttentionInputError(N_("n_heads: must be a whole number of at least 1, got {n_heads!r}."),
                                  n_heads=n_heads)
    n_heads = int(n_heads)
    widths = ((None, d_qk),) if d_k in (None, d_qk) else (("W_Q", d_qk), ("W_K", d_k))  # None: W_Q and W_K
    for name, width in (*widths, ("W_V", d_v)):
        if width % n_heads:
            options = ", ".join(str(d) for d in valid_head_counts(d_qk, d_v, d_k or d_qk))
            if name is None:
                raise AttentionInputError(
                    N_("n_heads: {n_heads} heads do not divide the {width} columns of W_Q and W_K; choose one of "
                       "{options}, or change the widths."),
                    n_heads=n_heads, width=width, options=options, matrix="W_Q",
                )
            raise AttentionInputError(
                N_("n_heads: {n_heads} heads do not divide the {width} columns of {name}; choose one of {options}, "
                   "or change the widths."),
                n_heads=n_heads, width=width, name=name, options=options, matrix=name,
            )
    return n_heads


def check_kv_heads(n_kv_heads: object, n_heads: int) -> int:
    """``n_kv_heads`` as an int, or AttentionInputError naming n_kv_heads and n_heads unless it is a whole number of
    at least 1 that divides ``n_heads`` (each key/value head serves the same number of query heads)."""
    if isinstance(n_kv_heads, bool) or not isinstance(n_kv_heads, (int, np.integer)) or n_kv_heads < 1:
        raise AttentionInputError(N_("n_kv_heads: must be a whole number of at least 1, got {n_kv_heads!r}."),
                                  n_kv_heads=n_kv_heads)
    if n_heads % n_kv_heads:
        options = ", ".join(str(g) for g in range(1, n_heads + 1) if n_heads % g == 0)
        raise AttentionInputError(
            N_("n_kv_heads: {n_kv_heads} key/value heads do not divide the {n_heads} query heads (n_heads); each "
               "key/value head serves the same number of query heads: choose one of {options}."),
            n_kv_heads=n_kv_heads, n_heads=n_heads, options=options)
    return int(n_kv_heads)


def kv_head_of(h: int, n_heads: int, n_kv_heads: int) -> int:
    """The key/value head that query head ``h`` reads in grouped-query attention: ``h // (n_heads // n_kv_heads)``.

    Consecutive query heads share a key/value head (transformers' ``repeat_kv``, PyTorch's ``repeat_interleave`` in
    ``scaled_dot_product_attention(enable_gqa=True)``). n_kv_heads = n_heads is multi-head attention (head h reads
    head h), n_kv_heads = 1 multi-query attention (every head reads head 0).

    Examples
    --------
    >>> [kv_head_of(h, 8, 2) for h in range(8)]
    [0, 0, 0, 0, 1, 1, 1, 1]
    >>> kv_head_of(1, 6, 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: n_kv_heads: 4 key/value heads do not divide the 6 query heads ...
    """
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise AttentionInputError(N_("n_heads: must be a whole number of at least 1, got {n_heads!r}."),
                                  n_heads=n_heads)
    n_kv_heads = check_kv_heads(n_kv_heads, int(n_heads))
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 0 <= h < n_heads:
        raise AttentionInputError(N_("head: {h!r} is not a head; heads are counted 0 to {last}."), h=h,
                                  last=n_heads - 1)
    return int(h) // (int(n_heads) // n_kv_heads)


def valid_head_counts(d_qk: int, d_v: int, *more: int) -> list[int]:
    """Every head count that divides every width given."""
    widths = (d_qk, d_v, *more)
    return [h for h in range(1, min(widths) + 1) if all(w % h == 0 for w in widths)]


def head_score(score: ScoreFunction, h: int, n_heads: int) -> ScoreFunction:
    """Head ``h``'s score function: its column slice of W_a, or of W_1, W_2 and v_a (see the module's layout)."""
    if score.kind == "general":
        return ScoreFunction("general", w_a=score.w_a[:, head_slice(h, score.w_a.shape[1] // n_heads)])
    if score.kind == "additive":
        cols = head_slice(h, score.w_1.shape[1] // n_heads)  # d_a columns
        return ScoreFunction("additive", w_1=score.w_1[:, cols], w_2=score.w_2[:, cols], v_a=score.v_a[cols])
    return DOT


def head_biases(bias: object, n_heads: int, n_q: int, n_k: int) -> list[np.ndarray | None]:
    """Each head's score bias [n_q, n_k] (or None) from one bias for all heads [n_q, n_k] or one per head
    [n_heads, n_q, n_k]; AttentionInputError naming the head and cell for a cell that is not a finite number.

    >>> [b.tolist() for b in head_biases(np.array([[[1.0]], [[2.0]]]), 2, 1, 1)]
    [[[1.0]], [[2.0]]]
    >>> head_biases(None, 2, 1, 1)
    [None, None]
    """
    if bias is None:
        return [None] * n_heads
    arr = np.asarray(bias) if isinstance(bias, np.ndarray) else np.array(bias, dtype=object)
    if arr.ndim == 3:
        if arr.shape[0] != n_heads:
            raise AttentionInputError(N_("score bias: {got} matrices for {n_heads} heads; give one per head, or one "
                                         "for every head."), got=arr.shape[0], n_heads=n_heads, matrix="score bias")
        return [as_matrix(f"score bias (head {h})", arr[h]) for h in range(n_heads)]
    one = as_matrix("score bias", arr)
    return [one] * n_heads


def check_score_heads(score: ScoreFunction, n_heads: int, d_q: int, d_k: int) -> None:
    """Raise AttentionInputError unless the score function's weights fit ``n_heads`` heads of widths d_q, d_k."""
    if score.kind == "general":
        check_dim("W_a", score.w_a.shape[0], "W_Q", d_q,  # W_a [d_q, n_heads·d_k]
                  N_("{name}: has {size} rows but each head's queries are {other_size} wide (columns of {other} ÷ "
                     "heads)."))
        check_dim("W_a", score.w_a.shape[1], "W_K", d_k * n_heads,
                  N_("{name}: has {size} columns but {other} has {other_size}; each head uses its slice of both."))
    elif score.kind == "additive":
        check_dim("W_1", score.w_1.shape[0], "W_Q", d_q,  # W_1 [d_q, n_heads·d_a]
                  N_("{name}: has {size} rows but each head's queries are {other_size} wide (columns of {other} ÷ "
                     "heads)."))
        check_dim("W_2", score.w_2.shape[0], "W_K", d_k,  # W_2 [d_k, n_heads·d_a]
                  N_("{name}: has {size} rows but each head's keys are {other_size} wide (columns of {other} ÷ "
                     "heads)."))
        check_dim("W_2", score.w_2.shape[1], "W_1", score.w_1.shape[1],
                  N_("{name}: has {size} columns but {other} has {other_size}; both make features of width d_a."))
        check_dim("v_a", score.v_a.shape[0], "W_1", score.w_1.shape[1],
                  N_("{name}: has {size} numbers but {other} has {other_size} columns; they must match."))
        if score.w_1.shape[1] % n_heads:
            raise AttentionInputError(
                N_("W_1: its {width} columns do not split into {n_heads} heads; give each head the same number d_a of "
                   "columns."), width=score.w_1.shape[1], n_heads=n_heads, matrix="W_1")


def multi_head_attention(
    x: object,
    w_q: object,
    w_k: object,
    w_v: object,
    w_o: object,
    n_heads: int,
    *,
    scale: Scale = "sqrt_dk",
    mask: object = None,
    score: ScoreFunction | None = None,
    bias: object = None,
) -> MultiHeadTrace:  # [n_seq, d_model], ..., [n_heads·d_v, d_out] -> output [n_seq, d_out]
    """Attention per head on column slices of the projections, heads concatenated, then ``@ w_o``.

    Parameters
    ----------
    x : array_like of shape (n_seq, d_model)
    w_q, w_k : array_like of shape (d_model, n_heads·d_k)
    w_v : array_like of shape (d_model, n_heads·d_v)
    w_o : array_like of shape (n_heads·d_v, d_out)
    n_heads : int
        Must divide the widths of w_q/w_k and of w_v.
    scale, mask
        As in :func:`scaled_dot_product_attention`; applied to every head (√d_k is the per-head width).
    score : ScoreFunction, optional
        The score function; its weights hold one column slice per head (see the module's layout).
    bias : array_like of shape (n_heads, n_seq, n_seq) or (n_seq, n_seq), optional
        The additive score bias, one matrix per head or one for every head (T5's relative positions: a learned
        number per head and distance); added to each head's scaled scores before the mask.

    Returns
    -------
    MultiHeadTrace

    Examples
    --------
    >>> x = np.eye(2)
    >>> t = multi_head_attention(x, np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2)
    >>> t.concat.shape, t.output.shape
    ((2, 2), (2, 2))
    """
    return multi_head_cross_attention(x, x, w_q, w_k, w_v, w_o, n_heads, scale=scale, mask=mask, score=score,
                                      bias=bias)


def multi_head_cross_attention(
    y: object,
    x: object,
    w_q: object,
    w_k: object,
    w_v: object,
    w_o: object,
    n_heads: int,
    *,
    scale: Scale = "sqrt_dk",
    mask: object = None,
    score: ScoreFunction | None = None,
    bias: object = None,
) -> MultiHeadTrace:  # [n_y, d_model], [n_x, d_model], ..., [n_heads·d_v, d_out] -> output [n_y, d_out]
    """Multi-head cross-attention: queries from ``y``, keys and values from ``x``; otherwise as
    :func:`multi_head_attention` (which is the case y = x). The mask is [n_y, n_x], the bias [n_heads, n_y, n_x]
    or [n_y, n_x].

    Examples
    --------
    >>> t = multi_head_cross_attention(np.ones((1, 2)), np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2)
    >>> t.heads[0].weights.shape, t.output.shape
    ((1, 2), (1, 2))
    """
    score = as_score(score)
    q, k, v = project_all(y, x, w_q, w_k, w_v, same=y is x, same_width=score.kind == "dot")  # [n_y, n_heads·d_q],
    return _heads(q, k, v, w_o, n_heads, scale, mask, score, bias)  # ... [n_x, n_heads·d_k], [n_x, n_heads·d_v]


def projected_multi_head_attention(
    q: object,
    k: object,
    v: object,
    w_o: object,
    n_heads: int,
    *,
    scale: Scale = "sqrt_dk",
    mask: object = None,
    score: ScoreFunction | None = None,
    bias: object = None,
) -> MultiHeadTrace:  # [n_q, n_heads·d_k], [n_k, n_heads·d_k], [n_k, n_heads·d_v], [n_heads·d_v, d_out] -> [n_q, d_out]
    """Multi-head attention of queries, keys and values already projected: each head's column slice of Q, K and V
    through :func:`scaled_dot_product_attention`'s stages, the heads concatenated, then ``@ w_o``.

    :func:`multi_head_cross_attention` is this after Q = Y W_Q, K = X W_K, V = X W_V. A key/value cache calls it
    directly: a new token's queries [1, n_heads·d_k] over the keys and values of every token so far, kept from the
    steps before, so its attention row is the last row of the whole text's attention.

    Parameters
    ----------
    q : array_like of shape (n_q, n_heads·d_k)
    k : array_like of shape (n_k, n_heads·d_k)
        d_q ≠ d_k only with an additive score.
    v : array_like of shape (n_k, n_heads·d_v)
    w_o : array_like of shape (n_heads·d_v, d_out)
    n_heads : int
    scale, mask, score, bias
        As in :func:`multi_head_cross_attention`; the mask and each head's bias are [n_q, n_k].

    Returns
    -------
    MultiHeadTrace

    Examples
    --------
    The last query of a causal self-attention, alone over every key, is the whole attention's last row:

    >>> rng = np.random.default_rng(0)
    >>> x, w = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    >>> whole = multi_head_attention(x, w, w, w, np.eye(4), 2, mask=np.tri(4, dtype=bool))
    >>> last = projected_multi_head_attention(x[-1:] @ w, x @ w, x @ w, np.eye(4), 2)
    >>> bool(np.allclose(last.output, whole.output[-1:])), last.heads[1].weights.shape
    (True, (1, 4))
    """
    q, k, v = as_matrix("Q", q), as_matrix("K", k), as_matrix("V", v)
    return _heads(q, k, v, w_o, n_heads, scale, mask, as_score(score), bias)


def _heads(q: np.ndarray, k: np.ndarray, v: np.ndarray, w_o: object, n_heads: object, scale: Scale, mask: object,
           score: ScoreFunction, bias: object) -> MultiHeadTrace:
    """Every head on its column slice of the projections (valid float64 matrices), concatenated, ``@ w_o``."""
    w_o = as_matrix("W_O", w_o)  # [n_heads·d_v, d_out]
    check_dim("W_O", w_o.shape[0], "W_V", v.shape[1],  # W_O [n_heads·d_v, d_out], W_V [d_model, n_heads·d_v]
              N_("{name}: has {size} rows but the heads concatenate to {other_size} columns (n_heads · d_v); they "
                 "must match."))
    n_heads = check_heads(n_heads, q.shape[1], v.shape[1], k.shape[1])
    check_score_heads(score, n_heads, q.shape[1] // n_heads, k.shape[1] // n_heads)
    q_h, k_h, v_h = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    n_q, n_k = q.shape[0], k.shape[0]
    biases = head_biases(bias, n_heads, n_q, n_k)  # n_heads × ([n_q, n_k] or None)
    # every head's scores and weights live in one block each (large blocks get huge pages: far fewer page faults)
    s_all, w_all = np.empty((n_heads, n_q, n_k)), np.empty((n_heads, n_q, n_k))  # [n_heads, n_q, n_k]
    heads = tuple(
        _attend(q_h[h], k_h[h], v_h[h], scale, mask, (f"Q (head {h})", f"K (head {h})", f"V (head {h})"),
                out=(s_all[h], w_all[h]), score=head_score(score, h, n_heads), bias=biases[h])
        for h in range(n_heads)
    )  # each: q [n_q, d_q], output [n_q, d_v]
    concat = merge_heads([t.output for t in heads])  # [n_q, n_heads·d_v]
    output = concat @ w_o  # [n_q, d_out]
    check_overflow(N_("output"), output, "W_O")
    return MultiHeadTrace(heads, concat, w_o, output)
