"""Multi-head attention: cut the projections into column slices, attend per head, concatenate, project.

Layout (PyTorch's ``nn.MultiheadAttention`` with its in-projection weights transposed):
w_q is [d_model, n_heads·d_k] and head h uses columns h·d_k:(h+1)·d_k (likewise w_k, w_v);
w_o is [n_heads·d_v, d_out].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import AttentionTrace, Scale, _attend, project
from .errors import AttentionInputError
from .validation import as_matrix, check_dim, check_inner, check_overflow


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


def check_heads(n_heads: object, d_qk: int, d_v: int) -> int:
    """Return ``n_heads`` as an int, or raise unless it divides both projected widths."""
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise AttentionInputError(f"n_heads: must be a whole number of at least 1, got {n_heads!r}.")
    n_heads = int(n_heads)
    for name, width in (("W_Q and W_K", d_qk), ("W_V", d_v)):
        if width % n_heads:
            options = ", ".join(str(d) for d in valid_head_counts(d_qk, d_v))
            raise AttentionInputError(
                f"n_heads: {n_heads} heads do not divide the {width} columns of {name}; "
                f"choose one of {options}, or change the widths.",
                matrix=name.split()[0],
            )
    return n_heads


def valid_head_counts(d_qk: int, d_v: int) -> list[int]:
    """Every head count that divides both widths."""
    return [h for h in range(1, min(d_qk, d_v) + 1) if d_qk % h == 0 and d_v % h == 0]


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
    x = as_matrix("X", x)
    w_q, w_k, w_v = as_matrix("W_Q", w_q), as_matrix("W_K", w_k), as_matrix("W_V", w_v)
    w_o = as_matrix("W_O", w_o)
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        check_inner("X", x, name, w)
    check_dim("W_K", w_k.shape[1], "W_Q", w_q.shape[1],  # n_heads·d_k: W_K, W_Q [d_model, n_heads·d_k]
              "has {size} columns but {other} has {other_size}; they must match.")
    check_dim("W_O", w_o.shape[0], "W_V", w_v.shape[1],  # W_O [n_heads·d_v, d_out], W_V [d_model, n_heads·d_v]
              "has {size} rows but the heads concatenate to {other_size} columns (n_heads · d_v); they must match.")
    n_heads = check_heads(n_heads, w_q.shape[1], w_v.shape[1])

    q = project(x, w_q)  # [n_seq, n_heads·d_k]
    k = project(x, w_k)  # [n_seq, n_heads·d_k]
    v = project(x, w_v)  # [n_seq, n_heads·d_v]
    for name, m, src in (("Q", q, "X and W_Q"), ("K", k, "X and W_K"), ("V", v, "X and W_V")):
        check_overflow(name, m, src)
    q_h, k_h, v_h = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    n_seq = x.shape[0]
    # every head's scores and weights live in one block each (large blocks get huge pages: far fewer page faults)
    s_all, w_all = np.empty((n_heads, n_seq, n_seq)), np.empty((n_heads, n_seq, n_seq))  # [n_heads, n_seq, n_seq]
    heads = tuple(
        _attend(q_h[h], k_h[h], v_h[h], scale, mask, (f"Q (head {h})", f"K (head {h})", f"V (head {h})"),
                out=(s_all[h], w_all[h]))
        for h in range(n_heads)
    )  # each: q [n_seq, d_k], output [n_seq, d_v]
    concat = merge_heads([t.output for t in heads])  # [n_seq, n_heads·d_v]
    output = concat @ w_o  # [n_seq, d_out]
    check_overflow("output", output, "W_O")
    return MultiHeadTrace(heads, concat, w_o, output)
