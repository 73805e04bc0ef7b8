"""Attention across layers and tokens: several queries' weights summed, and attention rollout.

Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers") follows attention down
through the layers: each layer's weights are averaged over its heads, the residual connection is counted as an extra
weight of 1 on the token itself (A + I, each row divided by its sum, so rows sum to 1 again), and the layers are
multiplied, the last on the left: joint[0] = aug[0], joint[i] = aug[i] @ joint[i - 1]. Row q of joint[i] says how
much of token q's state after layer i comes from each input token, if attention alone mixed the tokens.
:func:`attention_rollout` is the paper's ``compute_joint_attention`` (github.com/samiraabnar/attention_flow,
attention_graph_util.py) operation for operation; tests/core/test_rollout.py holds that function and compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from .errors import N_, AttentionInputError

ROW_SUM_TOLERANCE = 1e-6  # a row of weights sums to 1 (or to 0: every key masked) within this
HOW = ("sum", "mean")  # how summed_attention combines the chosen queries' rows


def head_mean(attentions: np.ndarray) -> np.ndarray:  # [..., n_heads, n_q, n_k] -> [..., n_q, n_k]
    """The weights averaged over the heads as the paper's code does it (run_bert_sv.py): the sum over heads / n_heads.

    >>> head_mean(np.array([[[1.0, 0.0]], [[0.0, 1.0]]])).tolist()  # two heads of one query row
    [[0.5, 0.5]]
    """
    a = np.asarray(attentions, dtype=np.float64)
    return a.sum(axis=-3) / a.shape[-3]


def attention_rollout(attentions: np.ndarray, *, residual: bool = True,
                      is_pad: np.ndarray | None = None) -> np.ndarray:  # [L, H, n, n], bool [n] -> [L, n, n]
    """The joint attention after each layer (Abnar & Zuidema 2020's attention rollout).

    Parameters
    ----------
    attentions : ndarray of shape (n_layers, n_heads, n, n)
        Every layer's attention weights, row = query, column = key; each row sums to 1, or to 0 where every key
        is masked.
    residual : bool
        Count the residual connection: A + I, each row divided by its sum (the paper's ``add_residual``). Without
        it the layers' head means are multiplied as they are.
    is_pad : ndarray of bool, shape (n,), optional
        Padding tokens. The rollout is computed over the real tokens only; the pad tokens' rows and columns are 0.
        As the padding mask gives a pad key weight 0 from every real query, the real tokens' rows equal those of
        the rollout over all n tokens (to rounding): pad tokens never feed a real one.

    Returns
    -------
    joint : ndarray of shape (n_layers, n, n)
        ``joint[i][q]``: how much of token q after layer i comes from each input token. With ``residual`` each
        row of a real token sums to 1.

    Examples
    --------
    >>> a = np.array([[[[1.0, 0.0], [1.0, 0.0]]], [[[0.0, 1.0], [0.0, 1.0]]]])  # 2 layers, 1 head, 2 tokens
    >>> attention_rollout(a, residual=False)[-1].tolist()  # layer 1 reads token 1, which had read token 0
    [[1.0, 0.0], [1.0, 0.0]]
    >>> attention_rollout(a)[-1].tolist()  # with the residual, each token also keeps part of itself
    [[0.75, 0.25], [0.5, 0.5]]
    """
    a = _checked_attentions(attentions)
    n = a.shape[-1]
    mean = head_mean(a)  # [L, n, n]: the heads averaged before anything is sliced (no copy of [L, H, n, n])
    if is_pad is None:
        return _joint(mean, residual)
    pad = _checked_pad(is_pad, n)
    real = np.flatnonzero(~pad)  # [n_real]
    joint = np.zeros((a.shape[0], n, n))  # [L, n, n]
    joint[:, real[:, None], real] = _joint(mean[:, real[:, None], real], residual)
    return joint


def rollout_row(attentions: np.ndarray, query: int, *, residual: bool = True,
                is_pad: np.ndarray | None = None) -> np.ndarray:  # [L, H, n, n], bool [n] -> [n]
    """Row ``query`` of ``attention_rollout(attentions, ...)[-1]``: one token's rollout after the last layer given.

    The same product read from the left, one vector at a time: e_q · aug[L-1] · … · aug[0], n² work a layer
    instead of n³ (a page shows one token's row: at 256 tokens that is what keeps a rerun quick). Equal to the
    whole rollout's row to rounding (1e-12 in tests/core/test_rollout.py). Parameters as
    :func:`attention_rollout`; ``query`` a real token's position.

    >>> a = np.array([[[[1.0, 0.0], [1.0, 0.0]]], [[[0.0, 1.0], [0.0, 1.0]]]])
    >>> rollout_row(a, 0).tolist()
    [0.75, 0.25]
    """
    a = _checked_attentions(attentions)
    n = a.shape[-1]
    real = np.arange(n) if is_pad is None else np.flatnonzero(~_checked_pad(is_pad, n))  # [n_real]
    if isinstance(query, (bool, np.bool_)) or not isinstance(query, (int, np.integer)) or query not in real:
        raise AttentionInputError(N_("query: {value} is not the position of a token (0 … {last}, not padding)."),
                                  value=repr(query)[:40], last=n - 1)
    aug = _augmented(head_mean(a)[:, real[:, None], real], residual)  # [L, n_real, n_real]
    row = aug[-1][int(np.searchsorted(real, query))]  # [n_real]
    for i in range(aug.shape[0] - 2, -1, -1):
        row = row @ aug[i]
    out = np.zeros(n)
    out[real] = row
    return out


def _augmented(att_mat: np.ndarray, residual: bool) -> np.ndarray:  # [L, n, n] -> [L, n, n]
    """compute_joint_attention's first step: with the residual, + I, then each row divided by its sum."""
    if not residual:
        return att_mat
    aug = att_mat + np.eye(att_mat.shape[1])[None, ...]  # [L, n, n]
    return aug / aug.sum(axis=-1)[..., None]


def _joint(att_mat: np.ndarray, residual: bool) -> np.ndarray:  # [L, n, n] -> [L, n, n]
    """compute_joint_attention's arithmetic, in its order: + I, / row sums, then aug[i] @ joint[i - 1]."""
    aug = _augmented(att_mat, residual)
    joint = np.zeros(aug.shape)
    joint[0] = aug[0]
    for i in range(1, aug.shape[0]):
        joint[i] = aug[i].dot(joint[i - 1])
    return joint


def summed_attention(weights: np.ndarray, queries: Sequence[int],
                     how: Literal["sum", "mean"] = "sum") -> np.ndarray:  # [..., n_q, n_k] -> [..., n_k]
    """The rows of several queries added up (``"sum"``) or averaged (``"mean"``): where those tokens look together.

    Parameters
    ----------
    weights : ndarray of shape (..., n_q, n_k)
        Attention weights (e.g. one layer's [n_heads, n_q, n_k]).
    queries : sequence of int
        Distinct query rows, at least one, each in 0 … n_q − 1.
    how : "sum" or "mean"

    Examples
    --------
    >>> w = np.array([[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]])
    >>> summed_attention(w, [0, 1]).tolist(), summed_attention(w, [1, 2], "mean").tolist()
    ([0.75, 1.25], [0.625, 0.375])
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim < 2 or 0 in w.shape[-2:]:
        raise AttentionInputError(N_("weights: expected at least 2 dimensions (…, queries, keys), none empty; got "
                                     "shape {shape}."), shape=w.shape, matrix="weights")
    if how not in HOW:
        raise AttentionInputError(N_("how: must be “sum” or “mean”, got {value}."), value=repr(how)[:40])
    rows = _checked_queries(queries, w.shape[-2])
    picked = w[..., rows, :]  # [..., n_picked, n_k]
    return picked.sum(axis=-2) if how == "sum" else picked.mean(axis=-2)


def _checked_queries(queries: object, n_q: int) -> list[int]:
    """``queries`` as a list of distinct rows in range(n_q), or AttentionInputError naming what is wrong."""
    if isinstance(queries, (str, bytes)) or not isinstance(queries, (Sequence, np.ndarray)):
        raise AttentionInputError(N_("queries: expected a list of query rows, got {value}."), value=repr(queries)[:40])
    rows = list(queries)
    if not rows:
        raise AttentionInputError(N_("queries: choose at least one query token."))
    for q in rows:
        if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)):
            raise AttentionInputError(N_("queries: {value} is not a whole number (a query's row)."),
                                      value=repr(q)[:40])
        if not 0 <= q < n_q:
            raise AttentionInputError(N_("queries: row {q} is outside 0 … {last} (there are {n} queries)."), q=int(q),
                                      last=n_q - 1, n=n_q)
    if len(set(map(int, rows))) < len(rows):
        twice = next(q for i, q in enumerate(rows) if q in rows[:i])
        raise AttentionInputError(N_("queries: row {q} is chosen twice; each query counts once."), q=int(twice))
    return [int(q) for q in rows]


def _checked_attentions(attentions: object) -> np.ndarray:  # -> [L, H, n, n] float64
    """Every layer's weights as float64 [n_layers, n_heads, n, n], finite, each row summing to 1 or 0; or raise."""
    a = np.asarray(attentions, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2] or 0 in a.shape:
        raise AttentionInputError(N_("attentions: expected shape (layers, heads, n, n) with n queries and n keys, "
                                     "none empty; got {shape}."), shape=a.shape, matrix="attentions")
    sums = a.sum(axis=-1)  # [L, H, n]: NaN or ±inf where a row holds one (checked here, not on every cell)
    if not np.isfinite(sums).all():
        layer, head, i = (int(t) for t in np.argwhere(~np.isfinite(sums))[0])
        j = int(np.argwhere(~np.isfinite(a[layer, head, i]))[0, 0])
        raise AttentionInputError(N_("attentions: layer {layer}, head {head}, cell ({i}, {j}) is not a finite "
                                     "number."), layer=layer, head=head, i=i, j=j, matrix="attentions")
    bad = (np.abs(sums - 1) > ROW_SUM_TOLERANCE) & (np.abs(sums) > ROW_SUM_TOLERANCE)  # [L, H, n]
    if a.min() < 0:  # a reduction: no [L, H, n, n] temporary unless there is a negative weight to find
        bad |= (a < 0).any(axis=-1)
    if bad.any():
        layer, head, i = (int(t) for t in np.argwhere(bad)[0])
        raise AttentionInputError(N_("attentions: layer {layer}, head {head}, row {i} sums to {total:.6g} (or has a "
                                     "negative weight); attention weights are ≥ 0 and each row sums to 1, or to 0 "
                                     "when every key is masked."), layer=layer, head=head, i=i,
                                  total=float(sums[layer, head, i]), matrix="attentions")
    return a


def _checked_pad(is_pad: object, n: int) -> np.ndarray:  # -> bool [n]
    """``is_pad`` as bool [n] with at least one real token, or AttentionInputError."""
    pad = np.asarray(is_pad)
    if pad.dtype != np.bool_ or pad.shape != (n,):
        raise AttentionInputError(N_("is_pad: expected {n} true/false values, one per token; got dtype {dtype} and "
                                     "shape {shape}."), n=n, dtype=pad.dtype, shape=pad.shape, matrix="is_pad")
    if pad.all():
        raise AttentionInputError(N_("is_pad: every token is padding; rollout needs at least one real token."),
                                  matrix="is_pad")
    return pad
