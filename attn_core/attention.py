"""Scaled dot-product attention, one function per stage a learner can see.

The stages, in order: ``project`` (Q, K, V), ``scores`` (Q Kᵀ), ``scale_scores`` (÷ divisor),
``apply_mask`` (-inf where not allowed), ``softmax`` (the weights) and ``weighted_sum`` (weights V).

The score stage takes a score function (:class:`ScoreFunction`): ``dot`` (q · k, the Transformer's; with the
scale "sqrt_dk" it is scaled dot product), ``general`` (Luong: q W_a kᵀ, :func:`general_scores`) or ``additive``
(Bahdanau, "concat": v_aᵀ tanh(q W_1 + k W_2), :func:`additive_scores`; queries and keys may differ in width).
Queries may come from another sequence than keys and values (cross-attention, :func:`cross_attention`).

Masking is represented in one way only: a boolean matrix [n_q, n_k] with True = may attend.
``apply_mask`` turns the disallowed scores into -inf; ``softmax`` maps a row that is all -inf to
all zeros (no key to attend to), so a fully masked query row has zero weights and a zero output.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import N_, AttentionInputError
from .validation import as_mask, as_matrix, check_dim, check_finite, check_inner, check_overflow, divisor_for

Scale = str | float  # "sqrt_dk", "none" or a positive divisor
SCORE_FUNCTIONS = ("dot", "general", "additive")
#: each score function's word in a message ("the {score} score function"), marked for the catalogs
SCORE_WORDS = {"dot": N_("dot"), "general": N_("general"), "additive": N_("additive")}
ADDITIVE_BLOCK = 2**20  # most numbers of one block of additive features [rows, n_k, d_a] held at a time


@dataclass(frozen=True, eq=False)
class ScoreFunction:
    """How a query and a key make a score, with the weights it needs.

    Attributes
    ----------
    kind : "dot", "general" or "additive"
    w_a : ndarray of shape (d_q, d_k), for "general": score = (q W_a) · k
    w_1 : ndarray of shape (d_q, d_a), for "additive": score = v_a · tanh(q W_1 + k W_2)
    w_2 : ndarray of shape (d_k, d_a), for "additive"
    v_a : ndarray of shape (d_a,), for "additive"

    Examples
    --------
    >>> ScoreFunction("general", w_a=np.eye(2)).kind
    'general'
    """

    kind: str = "dot"
    w_a: np.ndarray | None = None
    w_1: np.ndarray | None = None
    w_2: np.ndarray | None = None
    v_a: np.ndarray | None = None


DOT = ScoreFunction()


def as_score(score: object) -> ScoreFunction:
    """A ScoreFunction with float64, finite weights (v_a one-dimensional), or AttentionInputError naming the
    matrix. ``None`` is the dot product.

    >>> as_score(ScoreFunction("additive", w_1=[[1]], w_2=[[2]], v_a=[[3]])).v_a.tolist()
    [3.0]
    """
    if score is None:
        return DOT
    if not isinstance(score, ScoreFunction) or score.kind not in SCORE_FUNCTIONS:
        kind = getattr(score, "kind", score)
        raise AttentionInputError(N_("score function: {kind!r} is not one of {kinds}."), kind=kind,
                                  kinds=", ".join(SCORE_FUNCTIONS))
    if score.kind == "general":
        return ScoreFunction("general", w_a=as_matrix("W_a", score.w_a))
    if score.kind == "additive":
        v_a = as_matrix("v_a", np.atleast_2d(np.asarray(score.v_a, dtype=object)) if score.v_a is not None else None)
        if v_a.shape[0] != 1:
            raise AttentionInputError(N_("v_a: must be one row of d_a numbers, got {rows} rows."), rows=v_a.shape[0],
                                      matrix="v_a")
        return ScoreFunction("additive", w_1=as_matrix("W_1", score.w_1), w_2=as_matrix("W_2", score.w_2),
                             v_a=v_a[0])
    return DOT


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


def general_scores(q: np.ndarray, k: np.ndarray, w_a: np.ndarray,
                   out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Luong's "general" score of every query with every key: ``(q @ w_a) @ k.T``.

    [n_q, d_q], [n_k, d_k], [d_q, d_k] -> (q W_a [n_q, d_k], scores [n_q, n_k]).

    Examples
    --------
    >>> swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> qa, s = general_scores(np.array([[1.0, 2.0]]), np.eye(2), swap)
    >>> qa.tolist(), s.tolist()
    ([[2.0, 1.0]], [[2.0, 1.0]])
    """
    q_a = project(q, w_a)  # [n_q, d_k]
    return q_a, scores(q_a, k, out=out)


def additive_features(q: np.ndarray, k: np.ndarray, w_1: np.ndarray,
                      w_2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # -> [n_q, d_a], [n_k, d_a]
    """The two halves of Bahdanau's additive score before they meet: ``q @ w_1`` and ``k @ w_2``."""
    return project(q, w_1), project(k, w_2)


def additive_scores(q_1: np.ndarray, k_2: np.ndarray, v_a: np.ndarray,
                    out: np.ndarray | None = None) -> np.ndarray:  # [n_q, d_a], [n_k, d_a], [d_a] -> [n_q, n_k]
    """Bahdanau's additive score of every query with every key: ``v_a · tanh(q_1[i] + k_2[j])``.

    Computed a block of queries and keys at a time, so no [n_q, n_k, d_a] array above ADDITIVE_BLOCK numbers is
    held (beyond one [1, 1, d_a] row when d_a alone is larger).

    Examples
    --------
    >>> additive_scores(np.array([[0.0], [100.0]]), np.array([[0.0], [-100.0]]), np.array([2.0])).tolist()
    [[0.0, -2.0], [2.0, 0.0]]
    """
    n_q, n_k, d_a = q_1.shape[0], k_2.shape[0], k_2.shape[1]
    out = np.empty((n_q, n_k)) if out is None else out
    keys = n_k if n_k * d_a <= ADDITIVE_BLOCK else max(1, ADDITIVE_BLOCK // max(1, d_a))  # keys per block
    rows = max(1, ADDITIVE_BLOCK // max(1, keys * d_a))  # queries per block
    with np.errstate(over="ignore", invalid="ignore"):
        for k0 in range(0, n_k, keys):
            for q0 in range(0, n_q, rows):
                block = np.tanh(q_1[q0:q0 + rows, None, :] + k_2[None, k0:k0 + keys, :])  # [rows, keys, d_a]
                np.matmul(block, v_a, out=out[q0:q0 + rows, k0:k0 + keys])  # [rows, keys]
    return out


def scale_scores(s: np.ndarray, divisor: float, *, out: np.ndarray | None = None) -> np.ndarray:  # -> [n_q, n_k]
    """Divide the scores by the divisor (√d_k unless chosen otherwise): ``s / divisor``.

    ``out``, if given, is an [n_q, n_k] array to write the scaled scores into (it may be ``s`` itself).

    Examples
    --------
    >>> scale_scores(np.array([[2.0, 4.0]]), 2.0).tolist()
    [[1.0, 2.0]]
    """
    return np.divide(s, divisor, out=out)


def soft_cap(s: np.ndarray, cap: float, *, out: np.ndarray | None = None) -> np.ndarray:  # -> [n_q, n_k]
    """Squash the scaled scores into [−cap, cap]: ``cap · tanh(s / cap)`` (Gemma 2's ``attn_logit_softcapping``).

    Near 0 a score passes almost unchanged (tanh(z) ≈ z); a large one is held under ``cap`` (at it once tanh rounds to
    1 in float64, beyond about 19·cap), so no single key can take every weight. In the pipeline it comes after the
    scaling and before the bias and the mask, as in transformers' Gemma 2 eager attention (``matmul(q, kᵀ) *
    scaling``, then ``/ softcap``, ``tanh``, ``* softcap``, then ``+ attention_mask``). ``out``, if given, is an
    [n_q, n_k] array to write into (it may be ``s`` itself).

    Examples
    --------
    >>> np.round(soft_cap(np.array([[0.1, 50.0, -1e6]]), 10.0), 4).tolist()
    [[0.1, 9.9991, -10.0]]
    """
    with np.errstate(over="ignore"):  # a tiny cap: s / cap beyond float64 is ±inf, and tanh(±inf) = ±1
        out = np.divide(s, cap, out=out)  # [n_q, n_k]
    np.tanh(out, out=out)  # in (−1, 1)
    return np.multiply(out, cap, out=out)  # in (−cap, cap)


def check_softcap(cap: object) -> float | None:
    """``cap`` as a float (None, no soft cap, stays None), or AttentionInputError unless it is a finite number above 0.
    The refusal says that None is the way to have no cap: the text "none", which ``scale`` takes, is refused here.

    >>> check_softcap(None), check_softcap(30)
    (None, 30.0)
    >>> check_softcap("none")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: softcap: must be a finite number above 0, or None for no soft cap; got 'none'.
    """
    if cap is None:
        return None
    if isinstance(cap, numbers.Real) and not isinstance(cap, (bool, np.bool_)) and np.isfinite(cap) and cap > 0:
        return float(cap)
    raise AttentionInputError(N_("softcap: must be a finite number above 0, or None for no soft cap; got {cap!r}."),
                              cap=cap)


def add_bias(s: np.ndarray, bias: np.ndarray | None, *, out: np.ndarray | None = None) -> np.ndarray:  # -> [n_q, n_k]
    """Add the score bias to the scaled scores: ``s + bias`` (``s`` itself when there is no bias).

    A bias is the mask's finite sibling: where a mask adds -inf (a key is never attended to), a bias adds a finite
    number (a key is favoured or penalised): T5's learned relative positions, ALiBi's distance penalty.
    ``out``, if given, is an [n_q, n_k] array to write the sum into (it may be ``s`` itself).

    Examples
    --------
    >>> add_bias(np.array([[1.0, 2.0]]), np.array([[0.5, -2.0]])).tolist()
    [[1.5, 0.0]]
    """
    if bias is None:
        if out is None or out is s:
            return s
        np.copyto(out, s)
        return out
    with np.errstate(over="ignore"):  # a sum beyond float64 is named by the caller (check_finite)
        return np.add(s, bias, out=out)


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
    capped : ndarray of shape (n_q, n_k)
        ``softcap · tanh(scaled / softcap)`` (``scaled`` itself without a soft cap; computed on first use, then kept).
    biased : ndarray of shape (n_q, n_k)
        ``capped + bias`` (``capped`` itself without a bias; computed on first use, then kept).
    masked : ndarray of shape (n_q, n_k)
        ``biased`` with disallowed cells at -inf (the same array as ``biased`` without a mask;
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
    score_fn : "dot", "general" or "additive"
        How the scores were made (:class:`ScoreFunction`).
    q_a : ndarray of shape (n_q, d_k) or None
        "general": ``q @ w_a``, whose dot products with the keys are the scores.
    q_1, k_2 : ndarrays of shape (n_q, d_a) and (n_k, d_a), or None
        "additive": ``q @ w_1`` and ``k @ w_2``.
    v_a : ndarray of shape (d_a,) or None
        "additive": the vector that weighs the tanh features into a score.
    bias : ndarray of shape (n_q, n_k) or None
        The additive score bias: a finite number added to each scaled score before the mask (T5's relative
        positions, ALiBi); the mask is its infinite sibling, adding -inf.
    softcap : float or None
        Gemma 2's logit soft-capping: the scaled scores squashed into (−softcap, softcap) before the bias and the
        mask (:func:`soft_cap`).
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
    score_fn: str = "dot"
    q_a: np.ndarray | None = None
    q_1: np.ndarray | None = None
    k_2: np.ndarray | None = None
    v_a: np.ndarray | None = None
    bias: np.ndarray | None = None
    softcap: float | None = None

    # scaled and masked are rebuilt from scores on first use (bit for bit what the weights came from):
    # holding one [n_q, n_k] array per head fewer (two with a mask) keeps a full trace near bare numpy (bench/core.py).
    @cached_property
    def scaled(self) -> np.ndarray:  # [n_q, n_k]
        """``scores / divisor``."""
        return scale_scores(self.scores, self.divisor)

    @cached_property
    def capped(self) -> np.ndarray:  # [n_q, n_k]
        """``softcap · tanh(scaled / softcap)`` (``scaled`` without a soft cap)."""
        return self.scaled if self.softcap is None else soft_cap(self.scaled, self.softcap)

    @cached_property
    def biased(self) -> np.ndarray:  # [n_q, n_k]
        """``capped + bias`` (``capped`` without a bias)."""
        return self.capped if self.bias is None else add_bias(self.capped, self.bias)

    @cached_property
    def masked(self) -> np.ndarray:  # [n_q, n_k]
        """``biased`` with the disallowed cells at -inf."""
        return apply_mask(self.biased, self.mask)

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

    def features(self, i: int) -> np.ndarray:  # -> [n_k, d_a]
        """Additive attention: the tanh features ``tanh(q_1[i] + k_2[j])`` of query ``i`` with every key ``j``;
        ``features(i) @ v_a`` is its row of scores. Computed on demand for one query.

        Examples
        --------
        >>> sf = ScoreFunction("additive", w_1=np.eye(2), w_2=np.eye(2), v_a=np.ones(2))
        >>> t = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), scale="none", score=sf)
        >>> bool(np.allclose(t.features(0) @ t.v_a, t.scores[0]))
        True
        """
        if self.q_1 is None:
            raise ValueError(f"features exist for additive attention only; these scores are {self.score_fn}")
        with np.errstate(over="ignore", invalid="ignore"):
            return np.tanh(self.q_1[i] + self.k_2)  # [d_a] + [n_k, d_a] -> [n_k, d_a]


def _attend(q, k, v, scale, mask, names, out=None, score: ScoreFunction = DOT, bias=None,
            softcap: float | None = None) -> AttentionTrace:
    """The shared pipeline once the inputs are valid float64 matrices: one line per stage a learner sees.

    ``names``: what the learner calls q, k and v ("Q", or "Q (head 0)" in multi-head).
    ``score``: the score function and its weights (valid float64, checked against q and k here).
    ``bias``: None or a finite float64 [n_q, n_k] added to the scaled scores (checked here against the shape).
    ``softcap``: None or a positive float (checked): the scaled scores soft-capped before the bias and the mask.
    ``out``: optional (scores, weights) [n_q, n_k] buffers to fill; multi-head passes slices of one
    [n_heads, n_q, n_k] block per kind, so large traces come from two allocations instead of 2·n_heads.
    ``scaled``, ``masked`` and ``weights`` are one buffer, each stage written over the one before; the trace
    keeps ``scores`` and ``weights`` and rebuilds ``scaled`` and ``masked`` from ``scores`` when asked.
    """
    q_name, k_name, v_name = names
    softcap = check_softcap(softcap)
    _check_score_shapes(score, q, k, q_name, k_name)
    check_dim(v_name, v.shape[0], k_name, k.shape[0],  # n_k: V [n_k, d_v], K [n_k, d_k]
              N_("{name}: has {size} rows but {other} has {other_size}; every key needs one value row."))
    n_q, n_k, d_k = q.shape[0], k.shape[0], k.shape[1]
    divisor = divisor_for(scale, d_k)
    mask = None if mask is None else as_mask(mask, n_q, n_k)  # bool [n_q, n_k] or None
    if bias is not None:
        check_bias_shape(bias, n_q, n_k, q_name, k_name)
    s_buf, w_buf = (None, None) if out is None else out  # [n_q, n_k] each, or None: new arrays
    q_a = q_1 = k_2 = None

    if score.kind == "general":
        q_a, s = general_scores(q, k, score.w_a, out=s_buf)  # [n_q, d_k], [n_q, n_k]: (Q W_a) Kᵀ
        check_overflow("Q W_a", q_a, q_name, "W_a")
    elif score.kind == "additive":
        q_1, k_2 = additive_features(q, k, score.w_1, score.w_2)  # [n_q, d_a], [n_k, d_a]
        check_overflow("Q W_1", q_1, q_name, "W_1")
        check_overflow("K W_2", k_2, k_name, "W_2")
        s = additive_scores(q_1, k_2, score.v_a, out=s_buf)  # [n_q, n_k]: v_a · tanh(Q W_1 + K W_2)
    else:
        s = scores(q, k, out=s_buf)  # [n_q, n_k]: Q Kᵀ
    check_overflow(SCORE_NAMES[score.kind], s, q_name, k_name)
    scaled = scale_scores(s, divisor, out=w_buf)  # [n_q, n_k]: scores / divisor
    if divisor < 1:  # finite scores divided by 1 or more stay finite
        check_finite(N_("scaled scores"), scaled, hint=N_("it overflowed float64 (beyond ±1.8e308): raise the divisor"))
    if softcap is not None:
        soft_cap(scaled, softcap, out=scaled)  # [n_q, n_k]: softcap · tanh(scaled / softcap), in place
    if bias is not None:
        add_bias(scaled, bias, out=scaled)  # [n_q, n_k]: + the score bias, in place
        check_finite(N_("scaled scores + bias"), scaled, hint=N_("it overflowed float64 (beyond ±1.8e308)"))
    masked = apply_mask(scaled, mask, out=scaled)  # [n_q, n_k]: -inf where a key is not allowed, in place
    weights = softmax(masked, out=masked)  # [n_q, n_k]: rows sum to 1 (0 if fully masked), in place
    output = weighted_sum(weights, v)  # [n_q, d_v]
    check_overflow(N_("output"), output, v_name)
    fully = () if mask is None else tuple(int(i) for i in np.flatnonzero(~mask.any(axis=1)))
    return AttentionTrace(q, k, v, s, weights, output, divisor, mask, fully, score.kind, q_a, q_1, k_2, score.v_a,
                          bias, softcap)


def check_bias_shape(bias: np.ndarray, n_q: int, n_k: int, q_name: str = "Q", k_name: str = "K") -> None:
    """Raise AttentionInputError unless the score bias is [n_q, n_k]: a number per query (rows of ``q_name``) and key
    (rows of ``k_name``)."""
    if bias.shape != (n_q, n_k):
        raise AttentionInputError(
            N_("score bias: shape {shape} does not fit the scores, which are {n_q} × {n_k} (rows of {q_name} × rows "
               "of {k_name})."), shape=" × ".join(str(n) for n in bias.shape), n_q=n_q, n_k=n_k, q_name=q_name,
            k_name=k_name, matrix="score bias")


#: the scores of each score function, as a message names them (marked for the catalogs)
SCORE_NAMES = {"dot": N_("scores QKᵀ"), "general": N_("scores (Q W_a) Kᵀ"),
               "additive": N_("scores v_a · tanh(Q W_1 + K W_2)")}


def _check_score_shapes(score: ScoreFunction, q: np.ndarray, k: np.ndarray, q_name: str, k_name: str) -> None:
    """Raise AttentionInputError unless the score function's weights fit the widths of q [n_q, d_q], k [n_k, d_k]."""
    if score.kind not in SCORE_FUNCTIONS:
        raise AttentionInputError(N_("score function: {kind!r} is not one of {kinds}."), kind=score.kind,
                                  kinds=", ".join(SCORE_FUNCTIONS))
    d_q, d_k = q.shape[1], k.shape[1]
    if score.kind == "dot":
        check_dim(k_name, d_k, q_name, d_q,  # d_k: K [n_k, d_k], Q [n_q, d_k]
                  N_("{name}: has width {size} but {other} has width {other_size}; queries and keys need the same "
                     "width d_k."))
    elif score.kind == "general":
        check_dim("W_a", score.w_a.shape[0], q_name, d_q,  # W_a [d_q, d_k]
                  N_("{name}: has {size} rows but {other} has width {other_size}; they must match."))
        check_dim("W_a", score.w_a.shape[1], k_name, d_k,
                  N_("{name}: has {size} columns but {other} has width {other_size}; they must match."))
    else:
        check_dim("W_1", score.w_1.shape[0], q_name, d_q,  # W_1 [d_q, d_a]
                  N_("{name}: has {size} rows but {other} has width {other_size}; they must match."))
        check_dim("W_2", score.w_2.shape[0], k_name, d_k,  # W_2 [d_k, d_a]
                  N_("{name}: has {size} rows but {other} has width {other_size}; they must match."))
        check_dim("W_2", score.w_2.shape[1], "W_1", score.w_1.shape[1],
                  N_("{name}: has {size} columns but {other} has {other_size}; both make features of width d_a."))
        check_dim("v_a", score.v_a.shape[0], "W_1", score.w_1.shape[1],
                  N_("{name}: has {size} numbers but {other} has {other_size} columns (d_a); they must match."))


def scaled_dot_product_attention(
    q: object, k: object, v: object, *, scale: Scale = "sqrt_dk", mask: object = None,
    score: ScoreFunction | None = None, bias: object = None, softcap: float | None = None,
) -> AttentionTrace:  # [n_q, d_k], [n_k, d_k], [n_k, d_v] -> trace with output [n_q, d_v]
    """softmax(mask(Q Kᵀ / s + B)) V, keeping every intermediate (another score function than Q Kᵀ if given; B = 0
    without a bias).

    Parameters
    ----------
    q : array_like of shape (n_q, d_k)
    k : array_like of shape (n_k, d_k)
    v : array_like of shape (n_k, d_v)
    scale : "sqrt_dk", "none" or float
        Divide the scores by √d_k, by 1, or by this positive number.
    mask : ndarray of bool, shape (n_q, n_k), optional
        True = may attend.
    score : ScoreFunction, optional
        How a query and a key make a score; the dot product by default. "additive" allows d_q ≠ d_k.
    bias : array_like of shape (n_q, n_k), optional
        A finite number added to each scaled score before the mask (the mask's finite sibling: T5's relative
        positions, ALiBi).
    softcap : float, optional
        Soft-cap the scaled scores to (−softcap, softcap) before the bias and the mask (Gemma 2, :func:`soft_cap`).

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
    >>> b = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]], scale="none",
    ...                                  bias=[[-1.0, 0.0]])   # the first key's score 1 - 1 = 0 ties the second's
    >>> b.biased.tolist(), np.round(b.weights, 4).tolist()
    ([[0.0, 0.0]], [[0.5, 0.5]])
    """
    q, k, v = as_matrix("Q", q), as_matrix("K", k), as_matrix("V", v)
    return _attend(q, k, v, scale, mask, ("Q", "K", "V"), score=as_score(score), bias=as_bias(bias), softcap=softcap)


def self_attention(
    x: object, w_q: object, w_k: object, w_v: object, *, scale: Scale = "sqrt_dk", mask: object = None,
    score: ScoreFunction | None = None, bias: object = None,
) -> AttentionTrace:  # [n_seq, d_model], [d_model, d_k] x2, [d_model, d_v] -> trace with output [n_seq, d_v]
    """Self-attention of the rows of ``x``: Q = X W_Q, K = X W_K, V = X W_V, then attention.

    Parameters
    ----------
    x : array_like of shape (n_seq, d_model)
    w_q, w_k : array_like of shape (d_model, d_k)
    w_v : array_like of shape (d_model, d_v)
    scale, mask, score, bias
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
    return cross_attention(x, x, w_q, w_k, w_v, scale=scale, mask=mask, score=score, bias=bias)


def cross_attention(
    y: object, x: object, w_q: object, w_k: object, w_v: object, *, scale: Scale = "sqrt_dk", mask: object = None,
    score: ScoreFunction | None = None, bias: object = None,
) -> AttentionTrace:  # [n_y, d_model], [n_x, d_model], weights -> trace with weights [n_y, n_x], output [n_y, d_v]
    """Cross-attention: the queries come from ``y``, the keys and values from ``x``: Q = Y W_Q, K = X W_K,
    V = X W_V, then attention. Self-attention is the case y = x (:func:`self_attention`).

    Parameters
    ----------
    y : array_like of shape (n_y, d_model)
        The sequence that asks (e.g. a decoder's target sentence).
    x : array_like of shape (n_x, d_model)
        The sequence that is read (e.g. the encoder's source sentence).
    w_q : array_like of shape (d_model, d_q)
    w_k : array_like of shape (d_model, d_k)
        d_q = d_k, except with an additive score.
    w_v : array_like of shape (d_model, d_v)
    scale, mask, score, bias
        As in :func:`scaled_dot_product_attention`; the mask and the bias are [n_y, n_x].

    Returns
    -------
    AttentionTrace

    Examples
    --------
    >>> t = cross_attention(np.eye(2)[:1], np.eye(2), np.eye(2), np.eye(2), np.eye(2), scale="none")
    >>> t.weights.shape, np.round(t.weights, 4).tolist()
    ((1, 2), [[0.7311, 0.2689]])
    """
    score = as_score(score)
    q, k, v = project_all(y, x, w_q, w_k, w_v, same=y is x, same_width=score.kind == "dot")
    return _attend(q, k, v, scale, mask, ("Q", "K", "V"), score=score, bias=as_bias(bias))


def as_bias(bias: object) -> np.ndarray | None:
    """The score bias as a finite float64 matrix (None stays None), or AttentionInputError naming the cell."""
    return None if bias is None else as_matrix("score bias", bias)


def project_all(y: object, x: object, w_q: object, w_k: object, w_v: object, *, same: bool,
                same_width: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = Y W_Q, K = X W_K, V = X W_V after the checks that name the matrices (Y is X when ``same``; W_Q and W_K
    as wide when ``same_width``)."""
    x = as_matrix("X", x)
    y = x if same else as_matrix("Y", y)
    y_name = "X" if same else "Y"
    w_q, w_k, w_v = as_matrix("W_Q", w_q), as_matrix("W_K", w_k), as_matrix("W_V", w_v)
    check_inner(y_name, y, "W_Q", w_q)
    for name, w in (("W_K", w_k), ("W_V", w_v)):
        check_inner("X", x, name, w)
    if same_width:
        check_dim("W_K", w_k.shape[1], "W_Q", w_q.shape[1],  # d_k: W_K [d_model, d_k], W_Q [d_model, d_k]
                  N_("{name}: has {size} columns but {other} has {other_size}; queries and keys need the same width "
                     "d_k."))
    q = project(y, w_q)  # [n_y, d_q]
    k = project(x, w_k)  # [n_x, d_k]
    v = project(x, w_v)  # [n_x, d_v]
    for name, m, src, w_name in (("Q", q, y_name, "W_Q"), ("K", k, "X", "W_K"), ("V", v, "X", "W_V")):
        check_overflow(name, m, src, w_name)
    return q, k, v
