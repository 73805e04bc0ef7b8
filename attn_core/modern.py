"""Modern attention in one pipeline: what Llama, Mistral, Qwen 3, Gemma 2 and BLOOM add to the Transformer's, each
step kept, in the order the models run them:

    Q = X W_Q   K = X W_K   V = X W_V                  W_K, W_V of n_kv_heads heads (grouped-query)
    per head: q, k → QK-norm (rms_norm over d_k; Qwen 3) → RoPE (the token's position; Llama)
    scores = q kᵀ → scaled (÷ s) → soft-capped (Gemma 2) → + bias (ALiBi; BLOOM) → masked (causal ∧ window; Mistral)
    weights = softmax → per-head output = weights v → concat → @ W_O

Query head h reads key/value head kv_head_of(h). The stages after the scores are
:func:`attn_core.multi_head_attention`'s (its per-head traces; :class:`ModernTrace` is a :class:`MultiHeadTrace`);
what comes before them (the projections, the normed and rotated heads) and what was asked (positions, RoPE, the
ALiBi bias, the mask) is kept beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .alibi import alibi_bias
from .attention import Scale, ScoreFunction, as_score, check_softcap, project_all
from .errors import N_, AttentionInputError
from .masks import _whole, causal_mask, sliding_window_mask
from .multihead import (
    MultiHeadTrace,
    _heads,
    check_grouped_heads,
    check_heads,
    head_biases,
    merge_heads,
    split_heads,
)
from .norms import rms_norm
from .rope import apply_rope, check_base, check_layout
from .validation import as_mask, as_matrix


@dataclass(frozen=True)
class RoPE:
    """Rotary position embeddings as a pipeline option: ``base`` (θ_i = base^(−2i/d)) and ``layout``, "half"
    (transformers' rotate_half: Llama, Mistral, Qwen) or "interleaved" (RoFormer, Meta's reference Llama).

    >>> RoPE(), RoPE(500000.0, "interleaved").layout
    (RoPE(base=10000.0, layout='half'), 'interleaved')
    """

    base: float = 10000.0
    layout: str = "half"

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", check_base(self.base))
        object.__setattr__(self, "layout", check_layout(self.layout))


@dataclass(frozen=True, eq=False)
class ModernTrace(MultiHeadTrace):
    """Every step of :func:`modern_attention`: a MultiHeadTrace (``heads[h]`` holds head h's q and k as they were
    scored, i.e. normed and rotated, its scores, scaled, capped, biased, masked, weights and output; ``concat``,
    ``output``) and what came before the scores.

    Attributes
    ----------
    x : ndarray of shape (n_seq, d_model)
    q : ndarray of shape (n_seq, n_heads·d_k)
        X W_Q, before any norm or rotation (likewise ``k`` [n_seq, n_kv_heads·d_k] and ``v`` [n_seq, n_kv_heads·d_v]).
    k, v : ndarrays
    positions : ndarray of int, shape (n_seq,)
        Each query's and key's position (RoPE's angle, the mask's and ALiBi's distances).
    q_normed, k_normed : tuple of ndarrays (one per query head, one per key/value head), or None
        After QK-norm (None without it).
    q_rotated, k_rotated : tuple of ndarrays, or None
        After RoPE (None without it). What each head scored is ``heads[h].q`` and ``heads[h].k``.
    rope : RoPE or None
    qk_norm_eps : float or None
    alibi : ndarray of shape (n_heads, n_q, n_k), or None
        ALiBi's part of each head's score bias (``heads[h].bias`` is it plus any bias given).
    causal : bool
    window : int or None
    mask : ndarray of bool, shape (n_q, n_k), or None
        The mask every head used: the given one ∧ causal ∧ the sliding window (True = may attend).
    softcap : float or None
    """

    x: np.ndarray | None = None
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    positions: np.ndarray | None = None
    q_normed: tuple[np.ndarray, ...] | None = None
    k_normed: tuple[np.ndarray, ...] | None = None
    q_rotated: tuple[np.ndarray, ...] | None = None
    k_rotated: tuple[np.ndarray, ...] | None = None
    rope: RoPE | None = None
    qk_norm_eps: float | None = None
    alibi: np.ndarray | None = None
    causal: bool = False
    window: int | None = None
    mask: np.ndarray | None = None
    softcap: float | None = None


def head_counts(n_heads: object, n_kv_heads: object, d_q: int, d_k: int, d_v: int,
                score: ScoreFunction | None = None) -> tuple[int, int]:
    """(n_heads, n_kv_heads) as ints after the checks that name the width or count at fault (n_kv_heads None:
    n_heads)."""
    if n_kv_heads is None or (isinstance(n_heads, (int, np.integer)) and n_kv_heads == n_heads):
        n_heads = check_heads(n_heads, d_q, d_v, d_k)
        return n_heads, n_heads
    return check_grouped_heads(n_heads, n_kv_heads, d_q, d_k, d_v, as_score(score))


def prepare_heads(m: np.ndarray, n: int, name: str, positions: np.ndarray, rope: RoPE | None, qk_norm: bool,
                  eps: float, weight: object = None) -> tuple[tuple | None, tuple | None, np.ndarray]:
    """Cut ``m`` [n_rows, n·d] ("Q" or "K") into ``n`` heads; QK-norm each over its d features (rms_norm, ``weight``
    [d] shared by the heads, as Qwen 3's q_norm / k_norm), then rotate each by the rows' positions. Returns (normed
    heads or None, rotated heads or None, the heads side by side as they will be scored [n_rows, n·d])."""
    heads = split_heads(m, n)  # n × [n_rows, d]
    normed = rotated = None
    if qk_norm:
        normed = tuple(rms_norm(hm, weight, eps, name=f"{name} (head {h})") for h, hm in enumerate(heads))
        heads = list(normed)
    if rope is not None:
        rotated = tuple(apply_rope(hm, positions, base=rope.base, layout=rope.layout, name=f"{name} (head {h})")
                        for h, hm in enumerate(heads))
        heads = list(rotated)
    return normed, rotated, merge_heads(heads)  # ..., [n_rows, n·d]


def modern_mask(n_q: int, n_k: int, *, mask: object = None, causal: bool = False, window: int | None = None,
                q_offset: int = 0) -> np.ndarray | None:  # -> bool [n_q, n_k] or None
    """The given mask ∧ causal ∧ the sliding window (:func:`attn_core.sliding_window_mask`, causal or not), query row
    r at position r + ``q_offset``; None when nothing is masked by any of them."""
    parts = []
    if mask is not None:
        parts.append(as_mask(mask, n_q, n_k))
    if window is not None:
        parts.append(sliding_window_mask(n_q, n_k, window, causal=bool(causal), q_offset=q_offset))
    elif causal:
        parts.append(causal_mask(max(n_q + q_offset, n_k))[q_offset:q_offset + n_q, :n_k])
    return None if not parts else np.logical_and.reduce(parts)


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise AttentionInputError(N_("{name}: must be True or False, got {value!r}."), name=name, value=value)
    return bool(value)


def modern_attention(
    x: object,
    w_q: object,
    w_k: object,
    w_v: object,
    w_o: object = None,
    *,
    n_heads: int,
    n_kv_heads: int | None = None,
    rope: RoPE | None = None,
    qk_norm: bool = False,
    qk_norm_eps: float = 1e-6,
    q_norm_weight: object = None,
    k_norm_weight: object = None,
    alibi: bool = False,
    window: int | None = None,
    causal: bool = False,
    softcap: float | None = None,
    scale: Scale = "sqrt_dk",
    mask: object = None,
    bias: object = None,
    score: ScoreFunction | None = None,
) -> ModernTrace:  # [n_seq, d_model], [d_model, n_heads·d_k], [d_model, n_kv·d_k], ... -> [n_seq, d_out]
    """Self-attention of the rows of ``x`` with the modern options (see the module for the order of the steps).

    Parameters
    ----------
    x : array_like of shape (n_seq, d_model)
    w_q : array_like of shape (d_model, n_heads·d_k)
    w_k : array_like of shape (d_model, n_kv_heads·d_k)
    w_v : array_like of shape (d_model, n_kv_heads·d_v)
    w_o : array_like of shape (n_heads·d_v, d_out), optional
        The identity when None.
    n_heads : int
    n_kv_heads : int, optional
        Key/value heads (grouped-query attention; must divide n_heads): None is n_heads (multi-head), 1 multi-query.
    rope : RoPE, optional
        Rotate each head's queries and keys by their positions 0 … n_seq − 1 (d_k even).
    qk_norm : bool
        RMS-normalise each head's queries and keys over d_k before RoPE (Qwen 3's q_norm / k_norm), with
        ``qk_norm_eps`` and the optional gains ``q_norm_weight``, ``k_norm_weight`` [d_k] (ones when None).
    alibi : bool
        Add ALiBi's bias −m_h · (i − j) to head h's scores (:func:`attn_core.alibi_bias`).
    window : int, optional
        A sliding window of ``window`` keys (:func:`attn_core.sliding_window_mask`, causal when ``causal``).
    causal : bool
        Each query sees itself and the keys before it.
    softcap : float, optional
        Soft-cap the scaled scores: softcap · tanh(s / softcap), before the bias and the mask (Gemma 2).
    scale : "sqrt_dk", "none" or float
    mask : ndarray of bool, shape (n_seq, n_seq), optional
        A further mask (True = may attend), combined with causal and the window by "and".
    bias : array_like of shape (n_heads, n_seq, n_seq) or (n_seq, n_seq), optional
        A further score bias, added with ALiBi's.
    score : ScoreFunction, optional
        The score function (the dot product by default; grouped-query attention needs it).

    Returns
    -------
    ModernTrace

    Examples
    --------
    Llama-like: RoPE, 4 query heads sharing 2 key/value heads, causal:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(3, 8))
    >>> t = modern_attention(x, rng.normal(size=(8, 8)), rng.normal(size=(8, 4)), rng.normal(size=(8, 4)),
    ...                      n_heads=4, n_kv_heads=2, rope=RoPE(), causal=True)
    >>> t.kv_heads, t.heads[3].k is t.heads[2].k, t.output.shape
    ((0, 0, 1, 1), True, (3, 8))
    """
    score = as_score(score)
    grouped = n_kv_heads is not None and n_kv_heads != n_heads
    q_in, k_in, v_in = project_all(x, x, w_q, w_k, w_v, same=True, same_width=score.kind == "dot" and not grouped)
    x = as_matrix("X", x)
    n_heads, n_kv = head_counts(n_heads, n_kv_heads, q_in.shape[1], k_in.shape[1], v_in.shape[1], score)
    w_o = np.eye(v_in.shape[1] // n_kv * n_heads) if w_o is None else w_o  # [n_heads·d_v, n_heads·d_v]
    positions = np.arange(x.shape[0])  # [n_seq]
    return _modern(x, q_in, k_in, v_in, w_o, n_heads, n_kv, positions, positions, rope=rope, qk_norm=qk_norm,
                   qk_norm_eps=qk_norm_eps, q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight, alibi=alibi,
                   window=window, causal=causal, softcap=softcap, scale=scale, mask=mask, bias=bias, score=score)


def _modern(x, q_in, k_in, v_in, w_o, n_heads, n_kv, q_positions, k_positions, *, rope, qk_norm, qk_norm_eps,
            q_norm_weight, k_norm_weight, alibi, window, causal, softcap, scale, mask, bias, score,
            k_ready=None, v_ready=None) -> ModernTrace:
    """The pipeline once Q, K, V are projected (valid float64) and the head counts checked. ``k_ready`` (a key/value
    cache): the keys of earlier positions already normed and rotated [n_past, n_kv·d_k], before this call's
    ``k_in`` rows (``v_ready``: their values, before ``v_in``); the queries sit at ``q_positions`` (contiguous), the
    keys at ``k_positions``."""
    if rope is not None and not isinstance(rope, RoPE):
        raise AttentionInputError(N_("rope: must be RoPE(base, layout) or none, got {rope!r}."), rope=rope)
    qk_norm, alibi, causal = _flag(qk_norm, "qk_norm"), _flag(alibi, "alibi"), _flag(causal, "causal")
    window = None if window is None else _whole(window, "window", 1)
    softcap = check_softcap(softcap)
    q_normed, q_rotated, q_scored = prepare_heads(q_in, n_heads, "Q", q_positions, rope, qk_norm, qk_norm_eps,
                                                  q_norm_weight)  # ..., [n_q, n_heads·d_k]
    k_normed, k_rotated, k_new = prepare_heads(k_in, n_kv, "K", k_positions[-k_in.shape[0]:], rope, qk_norm,
                                               qk_norm_eps, k_norm_weight)  # ..., [n_new, n_kv·d_k]
    k_scored = k_new if k_ready is None else np.concatenate([k_ready, k_new])  # [n_k, n_kv·d_k]
    v_all = v_in if v_ready is None else np.concatenate([v_ready, v_in])  # [n_k, n_kv·d_v]
    n_q, n_k = q_scored.shape[0], k_scored.shape[0]
    q_offset = int(q_positions[0]) - int(k_positions[0])  # the first query's distance from the first key
    full_mask = modern_mask(n_q, n_k, mask=mask, causal=causal, window=window, q_offset=q_offset)
    ali = alibi_bias(n_heads, n_q, n_k, q_offset=q_offset) if alibi else None  # [n_heads, n_q, n_k]
    biases = head_biases(bias, n_heads, n_q, n_k)  # n_heads × ([n_q, n_k] or None)
    if ali is not None:
        biases = [ali[h] if b is None else b + ali[h] for h, b in enumerate(biases)]
    all_bias = None if biases[0] is None else np.stack(biases)  # [n_heads, n_q, n_k]
    base = _heads(q_scored, k_scored, v_all, w_o, n_heads, scale, full_mask, score, all_bias,
                  n_kv if n_kv != n_heads else None, softcap)
    return ModernTrace(base.heads, base.concat, base.w_o, base.output, base.n_kv_heads, x, q_in, k_in, v_in,
                       np.asarray(q_positions), q_normed, k_normed, q_rotated, k_rotated, rope,
                       qk_norm_eps if qk_norm else None, ali, causal, window, full_mask, softcap)

