"""Scaled dot-product attention, one function per stage a learner can see.

The stages, in order: ``project`` (Q, K, V), ``scores`` (Q Kᵀ), ``scale_scores`` (÷ divisor),
``apply_mask`` (-inf where not allowed), ``softmax`` (the weights) and ``weighted_sum`` (weights V).

Masking is represented in one way only: a boolean matrix [n_q, n_k] with True = may attend.
``apply_mask`` turns the disallowed scores into -inf; ``softmax`` maps a row that is all -inf to
all zeros (no key to attend to), so a fully masked query row has zero weights and a zero output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .validation import as_mask, as_matrix, check_dim, check_finite, check_inner, check_overflow, divisor_for

Scale = str | float  # "sqrt_dk", "none" or a positive divisor


# ---- the stages -------------------------------------------------------------------------


def project(x: np.ndarray, w: np.ndarray) -> np.ndarray:  # [n_seq, d_model], [d_model, d] -> [n_seq, d]
    """Project the inputs with a weight matrix: ``x @ w``.

    Examples
    --------
    >>> project(np.array([[1.0, 0.0, 1.0, 0.0]]), np.eye(4)[:, :3]).tolist()
    [[1.0, 0.0, 1.0]]
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by the caller (check_overflow)
        return x @ w


def scores(q: np.ndarray, k: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:  # -> [n_q, n_k]
    """Dot product of every query with every key: ``q @ k.T`` ([n_q, d_k], [n_k, d_k] -> [n_q, n_k]).

    ``out``, if given, is an [n_q, n_k] array to write the scores into.

    Examples
    --------
    >>> scores(np.array([[1.0, 0.0, 2.0]]), np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 0.0]])).tolist()
    [[2.0, 4.0]]
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by the caller (check_overflow)
        return np.matmul(q, k.T, out=out)


def scale_scores(s: np.ndarray, divisor: float, *, out: np.ndarray | None = None) -> np.ndarray:  # -> [n_q, n_k]
    """Divide the scores by the divisor (√d_k unless chosen otherwise): ``s / divisor``.

    ``out``, if given, is an [n_q, n_k] array to write the scaled scores into (it may be ``s`` itself).

    Examples
    --------
    >>> scale_scores(np.array([[2.0, 4.0]]), 2.0).tolist()
    [[1.0, 2.0]]
    """
    return np.divide(s, divisor, out=out)


def apply_mask(
    s: np.ndarray, mask: np.ndarray | None, *, out: np.ndarray | None = None
) -> np.ndarray:  # [n_q, n_k], bool [n_q, n_k] -> [n_q, n_k]
    """Set the scores a query may not attend to to -inf (``mask`` True = may attend).

    Without ``out`` the result is a new array, or ``s`` itself when there is no mask. ``out``, if given,
    is an [n_q, n_k] array to write the masked scores into; ``out=s`` masks in place.

    Examples
    --------
    >>> apply_mask(np.ones((2, 2)), np.array([[True, False], [True, True]])).tolist()
    [[1.0, -inf], [1.0, 1.0]]
    """
    if out is None:
        return s if mask is None else np.where(mask, s, -np.inf)
    if out is not s:
        np.copyto(out, s)
    if mask is not None:
        np.copyto(out, -np.inf, where=~mask)  # ~mask: bool [n_q, n_k], True where a key is not allowed
    return out


def softmax(a: np.ndarray, axis: int = -1, *, out: np.ndarray | None = None) -> np.ndarray:  # [..., n] -> [..., n]
    """Numerically stable softmax along ``axis``.

    The largest entry is subtracted before ``exp`` so nothing overflows; a slice that is all
    -inf (every key masked) gives all zeros instead of NaN.

    Parameters
    ----------
    a : ndarray
        Finite numbers or -inf.
    axis : int
    out : ndarray of float64, optional
        Where to write the result; ``out=a`` softmaxes in place, with no temporary as large as ``a``
        (it matters at n_seq = 1024). By default a new array, and ``a`` stays as it was.

    Returns
    -------
    ndarray of the same shape; each slice sums to 1, or is all 0 where ``a`` was all -inf.

    Examples
    --------
    >>> softmax(np.array([[0.0, 0.0], [-np.inf, -np.inf]])).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    if out is None:
        out = np.array(a, dtype=np.float64)  # [..., n]: a copy
    elif out is not a:
        np.copyto(out, a)
    m = np.max(out, axis=axis, keepdims=True)  # [..., 1]
    m[np.isneginf(m)] = 0.0  # all-masked slice: exp(-inf - 0) = 0, no inf - inf
    with np.errstate(over="ignore", invalid="ignore"):
        out -= m  # [..., n]: <= 0 everywhere
        np.exp(out, out=out)  # [..., n]: <= 1 everywhere
    total = np.sum(out, axis=axis, keepdims=True)  # [..., 1]: >= 1, or 0 for an all-masked slice
    out /= np.where(total > 0, total, 1.0)  # [..., n]: an all-masked slice stays 0 / 1 = 0
    return out


def weighted_sum(weights: np.ndarray, v: np.ndarray) -> np.ndarray:  # [n_q, n_k], [n_k, d_v] -> [n_q, d_v]
    """Each output row is the weights of its query times the value rows: ``weights @ v``."""
    return weights @ v


# ---- the trace ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every intermediate of one scaled dot-product attention.

    Attributes
    ----------
    q : ndarray of shape (n_q, d_k)
    k : ndarray of shape (n_k, d_k)
    v : ndarray of shape (n_k, d_v)
    scores : ndarray of shape (n_q, n_k)
        ``q @ k.T``.
    scaled : ndarray of shape (n_q, n_k)
        ``scores / divisor`` (computed on first use, then kept).
    masked : ndarray of shape (n_q, n_k)
        ``scaled`` with disallowed cells at -inf (the same array as ``scaled`` without a mask;
        computed on first use, then kept).
    weights : ndarray of shape (n_q, n_k)
        Row-wise softmax of ``masked``.
    output : ndarray of shape (n_q, d_v)
        ``weights @ v``.
    divisor : float
        What the scores were divided by.
    mask : ndarray of bool, shape (n_q, n_k), or None
        True = may attend.
    fully_masked_rows : tuple of int
        Queries with no key allowed; their weights and output rows are zero.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    divisor: float
    mask: np.ndarray | None = None
    fully_masked_rows: tuple[int, ...] = field(default=())

    # scaled and masked are rebuilt from scores on first use (bit for bit what the weights came from):
    # holding one [n_q, n_k] array per head fewer (two with a mask) keeps a full trace near bare numpy (bench/core.py).
    @cached_property
    def scaled(self) -> np.ndarray:  # [n_q, n_k]
        """``scores / divisor``."""
        return scale_scores(self.scores, self.divisor)

    @cached_property
    def masked(self) -> np.ndarray:  # [n_q, n_k]
        """``scaled`` with the disallowed cells at -inf."""
        return apply_mask(self.scaled, self.mask)

    def contributions(self, i: int) -> np.ndarray:  # -> [n_k, d_v]
        """The weighted value rows ``weights[i, j] * v[j]`` for query ``i``; they sum to ``output[i]``.

        Seed 004 calls these the alignment vectors. Computed on demand for one query, so no
        [n_q, n_k, d_v] array is ever held.

        Examples
        --------
        >>> t = scaled_dot_product_attention(np.eye(2), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> np.allclose(t.contributions(0).sum(axis=0), t.output[0])
        True
        """
        return self.weights[i][:, None] * self.v  # [n_k, 1] * [n_k, d_v] -> [n_k, d_v]


def _attend(q, k, v, scale, mask, names, out=None) -> AttentionTrace:
    """The shared pipeline once the inputs are valid float64 matrices: one line per stage a learner sees.

    ``names``: what the learner calls q, k and v ("Q", or "Q (head 0)" in multi-head).
    ``out``: optional (scores, weights) [n_q, n_k] buffers to fill; multi-head passes slices of one
    [n_heads, n_q, n_k] block per kind, so large traces come from two allocations instead of 2·n_heads.
    ``scaled``, ``masked`` and ``weights`` are one buffer, each stage written over the one before; the trace
    keeps ``scores`` and ``weights`` and rebuilds ``scaled`` and ``masked`` from ``scores`` when asked.
    """
    q_name, k_name, v_name = names
    check_dim(k_name, k.shape[1], q_name, q.shape[1],  # d_k: K [n_k, d_k], Q [n_q, d_k]
              "has width {size} but {other} has width {other_size}; queries and keys need the same width d_k.")
    check_dim(v_name, v.shape[0], k_name, k.shape[0],  # n_k: V [n_k, d_v], K [n_k, d_k]
              "has {size} rows but {other} has {other_size}; every key needs one value row.")
    n_q, d_k = q.shape
    n_k = k.shape[0]
    divisor = divisor_for(scale, d_k)
    mask = None if mask is None else as_mask(mask, n_q, n_k)  # bool [n_q, n_k] or None
    s_buf, w_buf = (None, None) if out is None else out  # [n_q, n_k] each, or None: new arrays

    s = scores(q, k, out=s_buf)  # [n_q, n_k]: Q Kᵀ
    check_overflow("scores QKᵀ", s, f"{q_name} and {k_name}")
    scaled = scale_scores(s, divisor, out=w_buf)  # [n_q, n_k]: scores / divisor
    if divisor < 1:  # finite scores divided by 1 or more stay finite
        check_finite("scaled scores", scaled, hint="it overflowed float64 (beyond ±1.8e308): raise the divisor")
    masked = apply_mask(scaled, mask, out=scaled)  # [n_q, n_k]: -inf where a key is not allowed, in place
    weights = softmax(masked, out=masked)  # [n_q, n_k]: rows sum to 1 (0 if fully masked), in place
    output = weighted_sum(weights, v)  # [n_q, d_v]
    check_overflow("output", output, v_name)
    fully = () if mask is None else tuple(int(i) for i in np.flatnonzero(~mask.any(axis=1)))
    return AttentionTrace(q, k, v, s, weights, output, divisor, mask, fully)


def scaled_dot_product_attention(
    q: object, k: object, v: object, *, scale: Scale = "sqrt_dk", mask: object = None
) -> AttentionTrace:  # [n_q, d_k], [n_k, d_k], [n_k, d_v] -> trace with output [n_q, d_v]
    """softmax(mask(Q Kᵀ / s)) V, keeping every intermediate.

    Parameters
    ----------
    q : array_like of shape (n_q, d_k)
    k : array_like of shape (n_k, d_k)
    v : array_like of shape (n_k, d_v)
    scale : "sqrt_dk", "none" or float
        Divide the scores by √d_k, by 1, or by this positive number.
    mask : ndarray of bool, shape (n_q, n_k), optional
        True = may attend.

    Returns
    -------
    AttentionTrace

    Raises
    ------
    AttentionInputError
        Shapes that do not fit, a non-finite cell, an empty matrix, a bad mask or divisor.

    Examples
    --------
    >>> t = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]], scale="none")
    >>> np.round(t.weights, 4).tolist()
    [[0.7311, 0.2689]]
    """
    q, k, v = as_matrix("Q", q), as_matrix("K", k), as_matrix("V", v)
    return _attend(q, k, v, scale, mask, ("Q", "K", "V"))


def self_attention(
    x: object, w_q: object, w_k: object, w_v: object, *, scale: Scale = "sqrt_dk", mask: object = None
) -> AttentionTrace:  # [n_seq, d_model], [d_model, d_k] x2, [d_model, d_v] -> trace with output [n_seq, d_v]
    """Self-attention of the rows of ``x``: Q = X W_Q, K = X W_K, V = X W_V, then attention.

    Parameters
    ----------
    x : array_like of shape (n_seq, d_model)
    w_q, w_k : array_like of shape (d_model, d_k)
    w_v : array_like of shape (d_model, d_v)
    scale, mask
        As in :func:`scaled_dot_product_attention`.

    Returns
    -------
    AttentionTrace

    Examples
    --------
    Seed 000's example (3 inputs, d_model = 4):

    >>> x = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
    >>> w_q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
    >>> w_k = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
    >>> w_v = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]
    >>> np.round(self_attention(x, w_q, w_k, w_v).output[0], 4).tolist()
    [1.8639, 6.3194, 1.7042]
    """
    x = as_matrix("X", x)
    w_q, w_k, w_v = as_matrix("W_Q", w_q), as_matrix("W_K", w_k), as_matrix("W_V", w_v)
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        check_inner("X", x, name, w)
    q = project(x, w_q)  # [n_seq, d_k]
    k = project(x, w_k)  # [n_seq, d_k]
    v = project(x, w_v)  # [n_seq, d_v]
    for name, m, src in (("Q", q, "X and W_Q"), ("K", k, "X and W_K"), ("V", v, "X and W_V")):
        check_overflow(name, m, src)
    check_dim("W_K", w_k.shape[1], "W_Q", w_q.shape[1],  # d_k: W_K [d_model, d_k], W_Q [d_model, d_k]
              "has {size} columns but {other} has {other_size}; queries and keys need the same width d_k.")
    return _attend(q, k, v, scale, mask, ("Q", "K", "V"))
