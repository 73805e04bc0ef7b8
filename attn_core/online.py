"""Online softmax: attention over the keys a block at a time, as FlashAttention tiles it (Dao et al. 2022, Algorithm 1),
with its names m (running row max), l (running sum of exponentials) and O (running unnormalised output).

Seed 001's stable softmax subtracts the row max before ``exp``; that is the first step here too, except that the max
is only known for the keys read so far. When a block brings a larger score, everything summed so far was computed
against a max that was too small, and is brought up to date by one factor per row, exp(m_old − m_new):

    S_b   = Q K_bᵀ / s  (−inf where masked)             the block's scores         [n_q, B]
    m_new = max(m_old, rowmax(S_b))                                                 [n_q]
    P_b   = exp(S_b − m_new)                                                        [n_q, B]
    l_new = exp(m_old − m_new) · l_old + rowsum(P_b)                                [n_q]
    O_new = exp(m_old − m_new) · O_old + P_b V_b                                    [n_q, d_v]

After the last block, O / l is softmax(Q Kᵀ / s) V and m + log l is each row's log-sum-exp, without the whole
[n_q, n_k] row of weights ever existing at once. A row with every key so far masked has m = −inf and l = 0; its
factor is taken as 1 (nothing summed yet to bring up to date), and a row masked everywhere ends with output 0, as
:func:`attn_core.softmax` gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import Scale, apply_mask, scale_scores, scores
from .errors import N_, AttentionInputError
from .validation import as_mask, as_matrix, check_dim, check_overflow, divisor_for


@dataclass(frozen=True, eq=False)
class OnlineTile:
    """One block of keys and the running state before and after it.

    Attributes
    ----------
    start, stop : int
        The keys of this block: ``k[start:stop]``.
    scores : ndarray of shape (n_q, stop − start)
        The block's scaled scores, −inf where masked.
    m_old, m_new : ndarrays of shape (n_q,)
        The running row max before and after the block (−inf: no key allowed yet).
    rescale : ndarray of shape (n_q,)
        exp(m_old − m_new): what the sum and the output so far are multiplied by (1 where m_new is still −inf).
    p : ndarray of shape (n_q, stop − start)
        exp(scores − m_new): the block's unnormalised weights.
    l_old, l_new : ndarrays of shape (n_q,)
        The running sum of exponentials before and after.
    o_old, o_new : ndarrays of shape (n_q, d_v)
        The running unnormalised output before and after.
    """

    start: int
    stop: int
    scores: np.ndarray
    m_old: np.ndarray
    m_new: np.ndarray
    rescale: np.ndarray
    p: np.ndarray
    l_old: np.ndarray
    l_new: np.ndarray
    o_old: np.ndarray
    o_new: np.ndarray


@dataclass(frozen=True, eq=False)
class OnlineTrace:
    """Every tile of an online-softmax attention, and the result.

    Attributes
    ----------
    q, k, v : ndarrays of shapes (n_q, d_k), (n_k, d_k), (n_k, d_v)
    block : int
        Keys per tile (the last may hold fewer).
    divisor : float
    mask : ndarray of bool, shape (n_q, n_k), or None
    tiles : tuple of OnlineTile
    m, l : ndarrays of shape (n_q,)
        The final row max and sum of exponentials.
    output : ndarray of shape (n_q, d_v)
        O / l (rows with l = 0, masked everywhere: 0).
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    block: int
    divisor: float
    mask: np.ndarray | None
    tiles: tuple[OnlineTile, ...]
    m: np.ndarray
    l: np.ndarray  # noqa: E741 (FlashAttention's name)
    output: np.ndarray

    @property
    def logsumexp(self) -> np.ndarray:  # -> [n_q]
        """m + log l: log Σ_j exp(score_ij), each row's log-sum-exp (−inf for a row masked everywhere)."""
        with np.errstate(divide="ignore"):
            return self.m + np.log(self.l)

    def rises(self, i: int) -> list[tuple[int, float, float, float]]:
        """The tiles after the first where row ``i``'s running max rose: (tile index, m_old, m_new, rescale) each.

        The first tile always sets m (from −inf), and a row with no key allowed so far has nothing to rescale: neither
        counts. A row masked everywhere has no rises.

        >>> t = online_softmax_attention(np.array([[1.0]]), np.array([[1.0], [3.0], [2.0]]), np.eye(3), block=1,
        ...                              scale="none")
        >>> [(k, m0, m1, round(f, 4)) for k, m0, m1, f in t.rises(0)]
        [(1, 1.0, 3.0, 0.1353)]
        """
        return [(t, float(tile.m_old[i]), float(tile.m_new[i]), float(tile.rescale[i]))
                for t, tile in enumerate(self.tiles)
                if t > 0 and np.isfinite(tile.m_old[i]) and tile.m_new[i] > tile.m_old[i]]


def online_tile(s_b: np.ndarray, v_b: np.ndarray, m_old: np.ndarray, l_old: np.ndarray,
                o_old: np.ndarray) -> tuple[np.ndarray, ...]:
    """One step of the online softmax: the state (m, l, O) after the block's scores ``s_b`` [n_q, B] (−inf where
    masked) and values ``v_b`` [B, d_v]. Returns (m_new [n_q], rescale [n_q], p [n_q, B], l_new [n_q], o_new
    [n_q, d_v]).

    >>> m, r, p, l_, o = online_tile(np.array([[0.0, 1.0]]), np.eye(2), np.array([2.0]), np.array([1.0]),
    ...                              np.zeros((1, 2)))
    >>> m.tolist(), r.tolist()   # the old max 2 stays: nothing to rescale
    ([2.0], [1.0])
    """
    m_new = np.maximum(m_old, np.max(s_b, axis=1))  # [n_q]
    m_safe = np.where(np.isneginf(m_new), 0.0, m_new)  # [n_q]: no −inf − (−inf) for a row with no key yet
    rescale = np.exp(np.where(np.isneginf(m_new), 0.0, m_old - m_safe))  # [n_q]: exp(m_old − m_new), 1 if none yet
    p = np.exp(s_b - m_safe[:, None])  # [n_q, B]: masked keys give exp(−inf) = 0
    l_new = rescale * l_old + p.sum(axis=1)  # [n_q]
    o_new = rescale[:, None] * o_old + p @ v_b  # [n_q, d_v]
    return m_new, rescale, p, l_new, o_new


def online_softmax_attention(q: object, k: object, v: object, *, block: int, scale: Scale = "sqrt_dk",
                             mask: object = None) -> OnlineTrace:  # [n_q, d_k], [n_k, d_k], [n_k, d_v] -> [n_q, d_v]
    """softmax(mask(Q Kᵀ / s)) V computed a block of ``block`` keys at a time (see the module), every tile kept.

    Parameters
    ----------
    q : array_like of shape (n_q, d_k)
    k : array_like of shape (n_k, d_k)
    v : array_like of shape (n_k, d_v)
    block : int
        Keys per tile, at least 1.
    scale : "sqrt_dk", "none" or float
    mask : ndarray of bool, shape (n_q, n_k), optional
        True = may attend; a tile may be masked entirely for a row.

    Returns
    -------
    OnlineTrace

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(2, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    >>> t = online_softmax_attention(q, k, v, block=2)
    >>> from attn_core import scaled_dot_product_attention
    >>> len(t.tiles), bool(np.allclose(t.output, scaled_dot_product_attention(q, k, v).output, rtol=0, atol=1e-14))
    (3, True)
    """
    q, k, v = as_matrix("Q", q), as_matrix("K", k), as_matrix("V", v)
    check_dim("K", k.shape[1], "Q", q.shape[1],
              N_("{name}: has width {size} but {other} has width {other_size}; queries and keys need the same width "
                 "d_k."))
    check_dim("V", v.shape[0], "K", k.shape[0],
              N_("{name}: has {size} rows but {other} has {other_size}; every key needs one value row."))
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise AttentionInputError(N_("block: keys per tile must be a whole number of at least 1, got {block!r}."),
                                  block=block)
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[1]
    divisor = divisor_for(scale, k.shape[1])
    mask = None if mask is None else as_mask(mask, n_q, n_k)
    m, l, o = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))  # noqa: E741 [n_q], [n_q], [n_q, d_v]
    tiles = []
    for start in range(0, n_k, int(block)):
        stop = min(start + int(block), n_k)
        s_b = scale_scores(scores(q, k[start:stop]), divisor)  # [n_q, B]
        check_overflow(N_("scaled scores"), s_b, "Q", "K")
        s_b = apply_mask(s_b, None if mask is None else mask[:, start:stop])  # [n_q, B]: −inf where not allowed
        m_new, rescale, p, l_new, o_new = online_tile(s_b, v[start:stop], m, l, o)
        tiles.append(OnlineTile(start, stop, s_b, m, m_new, rescale, p, l, l_new, o, o_new))
        m, l, o = m_new, l_new, o_new  # noqa: E741 (FlashAttention's names)
    output = o / np.where(l > 0, l, 1.0)[:, None]  # [n_q, d_v]: a row masked everywhere stays 0
    return OnlineTrace(q, k, v, int(block), divisor, mask, tuple(tiles), m, l, output)
