"""The neuron view: one query and one key of one head, feature by feature (BertViz's neuron view, for any trace).

A score is a dot product, and a dot product is a sum of d_k products: query i's row times key j's row, feature by
feature. This module writes that cell of the scores out, and the steps after it, as one small value::

    q_i [d_k], k_j [d_k]  →  q_i ⊙ k_j [d_k]  →  score = Σ (q_i ⊙ k_j)  →  scaled = score ÷ divisor
    →  + bias (T5's relative positions; 0 without)  →  masked (−∞ where the key may not be read)
    →  weight = softmax(row i)[j]

:func:`neuron_view` takes the head's q and k (as they were scored: after RoPE, where a model turns them), and what the
head did after the scores; :func:`head_neuron` reads all of it from a head of a trace (a ModernTrace's q and k before
RoPE too, so a page can show what the rotation changed).

>>> import numpy as np
>>> v = neuron_view(np.array([[1.0, 2.0]]), np.array([[3.0, -1.0], [0.0, 1.0]]), 0, 0, divisor=np.sqrt(2))
>>> v.product.tolist(), v.score, round(v.scaled, 6), round(v.weight, 6)
([3.0, -2.0], 1.0, 0.707107, 0.330238)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .attention import add_bias, apply_mask, scale_scores, softmax
from .errors import N_, AttentionInputError
from .multihead import MultiHeadTrace, head_slice
from .validation import as_mask, as_matrix, check_dim, divisor_for


@dataclass(frozen=True, eq=False)
class NeuronView:
    """Query ``i`` and key ``j`` of one head, cell by cell, and what the head made of their dot product.

    Attributes
    ----------
    i, j : int
        The query's row and the key's row.
    q_i, k_j : ndarray of shape (d_k,)
        The rows that were scored (after RoPE, where the head turns them).
    product : ndarray of shape (d_k,)
        ``q_i * k_j``, feature by feature.
    score : float
        ``product.sum()``: the cell (i, j) of Q Kᵀ.
    divisor : float
        What the scores were divided by (√d_k; 1 for a T5).
    scaled : float
        ``score / divisor``.
    bias : float or None
        What the head added to the scaled score (a T5's relative-position bias), None when it adds nothing.
    biased : float
        ``scaled + bias`` (``scaled`` without a bias): what the softmax reads unless the key is masked.
    allowed : bool
        Whether query i may read key j (False: the mask made the score −∞ and the weight 0).
    weight : float
        The cell (i, j) of the weights: softmax of row i (every key's biased, masked score), at j.
    q_before, k_before : ndarray of shape (d_k,) or None
        The rows before RoPE turned them (None when the head does not turn its queries and keys).
    score_before : float or None
        ``(q_before * k_before).sum()``: the score without the rotation.
    """

    i: int
    j: int
    q_i: np.ndarray
    k_j: np.ndarray
    product: np.ndarray
    score: float
    divisor: float
    scaled: float
    bias: float | None
    biased: float
    allowed: bool
    weight: float
    q_before: np.ndarray | None = None
    k_before: np.ndarray | None = None
    score_before: float | None = None

    @property
    def d_k(self) -> int:
        return self.q_i.shape[0]

    def largest(self, n: int) -> np.ndarray:  # -> int [min(n, d_k)]
        """The features whose products are largest in size (|q_i ⊙ k_j|), largest first; ties by feature.

        >>> neuron_view(np.array([[1.0, -3.0, 2.0]]), np.ones((1, 3)), 0, 0, divisor=1.0).largest(2).tolist()
        [1, 2]
        """
        return np.argsort(-np.abs(self.product), kind="stable")[:max(int(n), 0)]


def neuron_view(q: object, k: object, i: object, j: object, *, divisor: object, bias: object = None,
                mask: object = None, q_before: object = None, k_before: object = None) -> NeuronView:
    """Query ``i`` of ``q`` [n_q, d_k] and key ``j`` of ``k`` [n_k, d_k], feature by feature, and the weight the head
    gave key j (``bias`` [n_q, n_k] added to the scaled scores, ``mask`` bool [n_q, n_k], True = may attend, as
    attn_core.scaled_dot_product_attention takes them; ``divisor`` a positive number, as a trace's).

    ``q_before``, ``k_before`` (shaped as q and k): the queries and keys before RoPE turned them, to set beside.

    Raises AttentionInputError naming the matrix, row or number at fault.

    >>> v = neuron_view([[1.0, 0.0]], [[2.0, 5.0], [1.0, 1.0]], 0, 1, divisor=1.0, bias=[[0.0, 3.0]])
    >>> v.score, v.biased, round(v.weight, 4)
    (1.0, 4.0, 0.8808)
    """
    q_m, k_m = as_matrix("Q", q), as_matrix("K", k)  # [n_q, d_k], [n_k, d_k]
    check_dim("K", k_m.shape[1], "Q", q_m.shape[1],
              N_("{name}: has {size} columns but {other} has {other_size}; a query and a key need the same d_k."))
    n_q, n_k = q_m.shape[0], k_m.shape[0]
    i, j = _row(i, n_q, "Q", N_("query")), _row(j, n_k, "K", N_("key"))
    d = divisor_for(divisor, q_m.shape[1])  # a positive number ("sqrt_dk" and "none" as a scale says them)
    b = None if bias is None else _same_shape(as_matrix("bias", bias), "bias", n_q, n_k)
    allowed = None if mask is None else as_mask(mask, n_q, n_k)
    product = q_m[i] * k_m[j]  # [d_k]
    row = q_m[i:i + 1] @ k_m.T  # [1, n_k]: row i of Q Kᵀ, as the trace computes it
    row = apply_mask(add_bias(scale_scores(row, d), None if b is None else b[i:i + 1]),
                     None if allowed is None else allowed[i:i + 1])
    score = float(product.sum())
    scaled = score / d
    before = _before(q_before, k_before, q_m.shape, k_m.shape, i, j)
    return NeuronView(
        i=i, j=j, q_i=q_m[i].copy(), k_j=k_m[j].copy(), product=product, score=score, divisor=d, scaled=scaled,
        bias=None if b is None else float(b[i, j]), biased=scaled if b is None else scaled + float(b[i, j]),
        allowed=True if allowed is None else bool(allowed[i, j]), weight=float(softmax(row)[0, j]),
        q_before=None if before is None else before[0], k_before=None if before is None else before[1],
        score_before=None if before is None else float((before[0] * before[1]).sum()))


def head_neuron(trace: MultiHeadTrace, h: object, i: object, j: object) -> NeuronView:
    """:func:`neuron_view` of head ``h`` of a trace (attn_core.run's, multi_head_attention's or modern_attention's):
    its q and k as scored, its divisor, score bias and mask; for a ModernTrace whose heads RoPE turned, q and k
    before the rotation (after QK-norm, if any) too.

    >>> from attn_core import multi_head_attention
    >>> t = multi_head_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2)
    >>> v = head_neuron(t, 1, 1, 1)
    >>> v.q_i.tolist(), v.score == float(t.heads[1].scores[1, 1])
    ([1.0], True)
    """
    n = trace.n_heads
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Integral) or not 0 <= h < n:
        raise AttentionInputError(N_("head: must be a whole number from 0 to {last}, got {value!r}."),
                                  last=n - 1, value=h if isinstance(h, numbers.Number) else str(h)[:40])
    t = trace.heads[int(h)]
    q_before = k_before = None
    if getattr(trace, "q_rotated", None) is not None:  # a ModernTrace whose heads RoPE turned
        g, d_k = trace.kv_heads[int(h)], t.q.shape[1]
        q_before = trace.q_normed[h] if trace.q_normed is not None else trace.q[:, head_slice(int(h), d_k)]
        k_before = trace.k_normed[g] if trace.k_normed is not None else trace.k[:, head_slice(g, d_k)]
    return neuron_view(t.q, t.k, i, j, divisor=t.divisor, bias=t.bias, mask=t.mask, q_before=q_before,
                       k_before=k_before)


def _row(r: object, n: int, name: str, what: str) -> int:
    """``r`` as a row of a matrix of ``n`` rows, or AttentionInputError naming the matrix."""
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Integral) or not 0 <= r < n:
        raise AttentionInputError(N_("{name}: the {what} must be a row from 0 to {last}, got {value!r}."), name=name,
                                  what=what, last=n - 1, value=r if isinstance(r, numbers.Number) else str(r)[:40],
                                  matrix=name)
    return int(r)


def _same_shape(m: np.ndarray, name: str, n_q: int, n_k: int) -> np.ndarray:
    if m.shape != (n_q, n_k):
        raise AttentionInputError(N_("{name}: shape {shape} does not match the scores' shape ({n_q}, {n_k})."),
                                  name=name, shape=m.shape, n_q=n_q, n_k=n_k, matrix=name)
    return m


def _before(q_before: object, k_before: object, q_shape: tuple, k_shape: tuple, i: int,
            j: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows i of ``q_before`` and j of ``k_before`` (each shaped as the rotated q and k), or None without them."""
    if q_before is None and k_before is None:
        return None
    if q_before is None or k_before is None:
        raise AttentionInputError(N_("q_before and k_before come together: give both or neither."))
    qb = _same_shape(as_matrix("Q before RoPE", q_before), "Q before RoPE", *q_shape)
    kb = _same_shape(as_matrix("K before RoPE", k_before), "K before RoPE", *k_shape)
    return qb[i].copy(), kb[j].copy()
