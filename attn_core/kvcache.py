"""Decoding one token at a time with a key/value cache, every step kept.

A causal model's token t changes nothing before it: its attention row over tokens 0 … t is row t of the whole text's.
So each step computes only the new token's q, k and v (its row through W_Q, W_K, W_V; QK-normed and rotated at its
position t), appends k and v to the cache, and scores its one query against the t + 1 keys: n_heads · (t + 1) dot
products, where the whole text's forward pass computes n_heads · (t + 1)² of them again. The cache holds the keys as
they are scored (after QK-norm and RoPE, as transformers' caches do), so an earlier key is never rotated again.

attn_models.kv.KVCache keeps a model's keys and values across a generation and hands them to
:func:`attn_core.projected_multi_head_attention`; :func:`decode_step` is the same step for the explorer, with the
modern options (:func:`attn_core.modern_attention`: grouped-query heads, RoPE, QK-norm, ALiBi, window, soft-cap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import DOT, Scale, project
from .errors import N_, AttentionInputError
from .modern import ModernTrace, RoPE, _modern, head_counts
from .multihead import merge_heads
from .validation import as_matrix, check_dim, check_inner, check_overflow


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One token's step.

    Attributes
    ----------
    position : int
        The token's position t (the number of tokens before it).
    k_cached, v_cached : ndarrays of shape (t, n_kv_heads·d_k) and (t, n_kv_heads·d_v), or None at t = 0
        What was taken from the cache: the keys (normed and rotated at their own positions) and values of the tokens
        before.
    k_cache, v_cache : ndarrays of shape (t + 1, ·)
        The cache after this step: ``k_cached`` with the new token's key row appended (likewise the values).
    trace : ModernTrace
        The new token's attention: ``trace.q``, ``trace.k``, ``trace.v`` its own projections [1, ·], then per head
        one query over t + 1 keys (``trace.heads[h].scores`` is [1, t + 1]), and its output row ``trace.output``.
    """

    position: int
    k_cached: np.ndarray | None
    v_cached: np.ndarray | None
    k_cache: np.ndarray
    v_cache: np.ndarray
    trace: ModernTrace

    @property
    def dot_products(self) -> int:
        """Query-key dot products this step computed: one row of t + 1 scores per query head."""
        return self.trace.n_heads * (self.position + 1)

    @property
    def dot_products_without_cache(self) -> int:
        """Query-key dot products one forward pass over the t + 1 tokens computes without a cache: t + 1 queries
        against t + 1 keys per query head."""
        return self.trace.n_heads * (self.position + 1) ** 2


@dataclass(frozen=True, eq=False)
class DecodeTrace:
    """Every step of :func:`cached_decode`; ``output`` [n_seq, d_out] is their output rows stacked."""

    steps: tuple[DecodeStep, ...]
    output: np.ndarray

    def dot_products_so_far(self) -> tuple[list[int], list[int]]:  # -> [n_steps], [n_steps]
        """After each step, the dot products computed so far with the cache, and without one (every step a whole
        forward pass over the tokens so far).

        >>> rng = np.random.default_rng(1)
        >>> x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
        >>> cached_decode(x, w, w, w, n_heads=2).dot_products_so_far()
        ([2, 6, 12], [2, 10, 28])
        """
        with_cache = np.cumsum([s.dot_products for s in self.steps]).tolist()
        without = np.cumsum([s.dot_products_without_cache for s in self.steps]).tolist()
        return with_cache, without


def decode_step(
    x_t: object, k_cache: object, v_cache: object, w_q: object, w_k: object, w_v: object, w_o: object = None, *,
    n_heads: int, n_kv_heads: int | None = None, rope: RoPE | None = None, qk_norm: bool = False,
    qk_norm_eps: float = 1e-6, q_norm_weight: object = None, k_norm_weight: object = None, alibi: bool = False,
    window: int | None = None, softcap: float | None = None, scale: Scale = "sqrt_dk",
) -> DecodeStep:  # [1, d_model], [t, n_kv·d_k], [t, n_kv·d_v] -> output [1, d_out]
    """The next token's causal attention over the cached keys and values and its own (see the module).

    Parameters
    ----------
    x_t : array_like of shape (1, d_model)
        The new token's row of X.
    k_cache, v_cache : array_like of shapes (t, n_kv_heads·d_k), (t, n_kv_heads·d_v), or None (the first token)
        The keys (as scored: normed and rotated) and values of the t tokens before; the new token sits at position t.
    w_q, w_k, w_v, w_o, n_heads, n_kv_heads, rope, qk_norm, qk_norm_eps, q_norm_weight, k_norm_weight, alibi, window,
    softcap, scale
        As in :func:`attn_core.modern_attention` (always causal).

    Returns
    -------
    DecodeStep

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    >>> first = decode_step(x[:1], None, None, w, w, w, n_heads=2)
    >>> second = decode_step(x[1:2], first.k_cache, first.v_cache, w, w, w, n_heads=2)
    >>> second.position, second.trace.heads[0].scores.shape, second.dot_products
    (1, (1, 2), 4)
    """
    x_t = as_matrix("X", x_t)
    if x_t.shape[0] != 1:
        raise AttentionInputError(N_("X: a decoding step takes one token's row, got {rows} rows."),
                                  rows=x_t.shape[0], matrix="X")
    w_q, w_k, w_v = as_matrix("W_Q", w_q), as_matrix("W_K", w_k), as_matrix("W_V", w_v)
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        check_inner("X", x_t, name, w)
    n_heads, n_kv = head_counts(n_heads, n_kv_heads, w_q.shape[1], w_k.shape[1], w_v.shape[1])
    k_cached, v_cached = _cached(k_cache, v_cache, w_k.shape[1], w_v.shape[1])
    position = 0 if k_cached is None else k_cached.shape[0]
    q, k, v = project(x_t, w_q), project(x_t, w_k), project(x_t, w_v)  # [1, n_heads·d_k], [1, n_kv·d_k], [1, n_kv·d_v]
    for name, m, w_name in (("Q", q, "W_Q"), ("K", k, "W_K"), ("V", v, "W_V")):
        check_overflow(name, m, "X", w_name)
    w_o = np.eye(w_v.shape[1] // n_kv * n_heads) if w_o is None else w_o
    trace = _modern(x_t, q, k, v, w_o, n_heads, n_kv, np.array([position]), np.arange(position + 1), rope=rope,
                    qk_norm=qk_norm, qk_norm_eps=qk_norm_eps, q_norm_weight=q_norm_weight,
                    k_norm_weight=k_norm_weight, alibi=alibi, window=window, causal=True, softcap=softcap, scale=scale,
                    mask=None, bias=None, score=DOT, k_ready=k_cached,
                    v_ready=v_cached)
    first = [trace.kv_heads.index(g) for g in range(n_kv)]  # a query head reading each key/value head
    k_all = merge_heads([trace.heads[h].k for h in first])  # [t + 1, n_kv·d_k]: the keys as scored
    v_all = merge_heads([trace.heads[h].v for h in first])  # [t + 1, n_kv·d_v]
    return DecodeStep(position, k_cached, v_cached, k_all, v_all, trace)


def _cached(k_cache: object, v_cache: object, width_k: int,
            width_v: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The cache as float64 matrices whose widths fit W_K's and W_V's and whose rows agree (None: empty)."""
    if k_cache is None and v_cache is None:
        return None, None
    if k_cache is None or v_cache is None:
        raise AttentionInputError(N_("key/value cache: keys and values come together; got only one of them."),
                                  matrix="K cache")
    k_c, v_c = as_matrix("K cache", k_cache), as_matrix("V cache", v_cache)
    check_dim("K cache", k_c.shape[1], "W_K", width_k,
              N_("{name}: has {size} columns but {other} has {other_size}; the cache holds rows of K."))
    check_dim("V cache", v_c.shape[1], "W_V", width_v,
              N_("{name}: has {size} columns but {other} has {other_size}; the cache holds rows of V."))
    check_dim("V cache", v_c.shape[0], "K cache", k_c.shape[0],
              N_("{name}: has {size} rows but {other} has {other_size}; one value row per cached key."))
    return k_c, v_c


def cached_decode(x: object, w_q: object, w_k: object, w_v: object, w_o: object = None,
                  **options: object) -> DecodeTrace:  # [n_seq, d_model] -> output [n_seq, d_out]
    """Every row of ``x`` decoded in turn with :func:`decode_step`, the cache growing by a row a step; equal to
    ``modern_attention(..., causal=True)`` with the same options, row for row.

    >>> rng = np.random.default_rng(2)
    >>> x, w = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    >>> from attn_core import modern_attention
    >>> whole = modern_attention(x, w, w, w, n_heads=2, causal=True, rope=RoPE())
    >>> bool(np.allclose(cached_decode(x, w, w, w, n_heads=2, rope=RoPE()).output, whole.output, rtol=0, atol=1e-12))
    True
    """
    x = as_matrix("X", x)
    steps, k_cache, v_cache = [], None, None
    for t in range(x.shape[0]):
        step = decode_step(x[t:t + 1], k_cache, v_cache, w_q, w_k, w_v, w_o, **options)
        steps.append(step)
        k_cache, v_cache = step.k_cache, step.v_cache
    return DecodeTrace(tuple(steps), np.concatenate([s.trace.output for s in steps]))
