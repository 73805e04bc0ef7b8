"""Measurements behind the Scaling, Masking and Modern attention pages.

Why the scores are divided by √d_k (variances of Q, K, QKᵀ and QKᵀ/√d_k, measured and swept over
d_k), what the divisor does to softmax (largest weight and entropy of each row), and why softmax
subtracts the row maximum (the naive ``exp`` overflows float64 above e^709.78; the stable log-sum-exp
the online softmax is checked against). Then what the Modern attention page states of two traces:
the largest difference between two sets of rows (where a row may have no key left), what a soft cap
changed, the keys a window hides, and where ALiBi's bias penalises and favours most.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import apply_mask, scores, softmax
from .errors import N_, AttentionInputError

#: ln of the largest float64 (≈ 709.78): exp of anything larger is +inf
MAX_EXP = float(np.log(np.finfo(np.float64).max))
#: the range of divisors (temperatures) the pages offer
DIVISOR_RANGE = (0.01, 1000.0)
#: :func:`saturation` exponentiates this many scores at once (one array of 2 MB of float64): several divisors of a small
#: matrix in one numpy call (at seed 000 all 101 of the curves' divisors: one call instead of 101), one at a time of a
#: large one
SATURATION_CELLS = 2**18
#: the key widths of the variance sweep: 1, 2, 4, ..., 512
SWEEP_D_K = tuple(2**i for i in range(10))


# ---- why √d_k: variances --------------------------------------------------------------------


@dataclass(frozen=True)
class VarianceStats:
    """Variances over all entries (``np.var``, as seed 002 measures them).

    Attributes
    ----------
    var_q, var_k : float
        Of Q and K.
    var_scores : float
        Of QKᵀ.
    var_scaled : float
        Of QKᵀ / √d_k.
    d_k : int
    """

    var_q: float
    var_k: float
    var_scores: float
    var_scaled: float
    d_k: int


def variance_stats(q: np.ndarray, k: np.ndarray) -> VarianceStats:  # [n_q, d_k], [n_k, d_k]
    """var(Q), var(K), var(QKᵀ) and var(QKᵀ/√d_k).

    Parameters
    ----------
    q : ndarray of shape (n_q, d_k)
    k : ndarray of shape (n_k, d_k)

    Returns
    -------
    VarianceStats

    Examples
    --------
    >>> v = variance_stats(np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([[1.0, 1.0], [-1.0, -1.0]]))
    >>> v.var_q, v.var_scores
    (1.0, 0.0)
    """
    d_k = q.shape[1]
    s = scores(q, k)  # [n_q, n_k]
    with np.errstate(over="ignore", invalid="ignore"):  # entries near ±1e154 or more: a variance beyond float64
        return VarianceStats(float(q.var()), float(k.var()), float(s.var()), float((s / np.sqrt(d_k)).var()), d_k)


@dataclass(frozen=True)
class VarianceSweep:
    """Variance of raw and scaled scores of random unit-variance Q, K, for each d_k.

    Attributes
    ----------
    d_k : ndarray of int, shape (n_d,)
    raw : ndarray of shape (n_d,)
        var(QKᵀ): grows like d_k.
    scaled : ndarray of shape (n_d,)
        var(QKᵀ / √d_k): stays near 1.
    """

    d_k: np.ndarray
    raw: np.ndarray
    scaled: np.ndarray


def variance_sweep(
    d_ks: tuple[int, ...] = SWEEP_D_K, *, n_samples: int = 300, n_seq: int = 8, seed: int = 0
) -> VarianceSweep:  # -> arrays of shape (len(d_ks),)
    """For each d_k, draw ``n_samples`` pairs of standard-normal Q, K of shape [n_seq, d_k] and measure.

    Each score is a sum of d_k products of independent unit-variance numbers, so its variance is
    d_k; dividing by √d_k brings it back to 1.

    Parameters
    ----------
    d_ks : tuple of int
        Key widths to try.
    n_samples : int
        Random (Q, K) pairs per width.
    n_seq : int
        Rows of each Q and K.
    seed : int
        The sweep is reproducible.

    Returns
    -------
    VarianceSweep

    Examples
    --------
    >>> sw = variance_sweep((1, 64))
    >>> bool(sw.raw[1] > 50), bool(abs(sw.scaled[1] - 1) < 0.1)
    (True, True)
    """
    rng = np.random.default_rng(seed)
    raw, scaled = [], []
    for d_k in d_ks:
        q = rng.standard_normal((n_samples, n_seq, d_k))  # [n_samples, n_seq, d_k]
        k = rng.standard_normal((n_samples, n_seq, d_k))  # [n_samples, n_seq, d_k]
        s = q @ k.transpose(0, 2, 1)  # [n_samples, n_seq, n_seq]
        raw.append(s.var())
        scaled.append((s / np.sqrt(d_k)).var())
    return VarianceSweep(np.array(d_ks), np.array(raw), np.array(scaled))


# ---- what the divisor does to softmax ----------------------------------------------------------


def log_grid(lo: float, hi: float, per_decade: int, *, digits: int | None = None) -> np.ndarray:  # -> [n]
    """Log-spaced values from ``lo`` to ``hi``, ``per_decade`` steps per factor of 10.

    ``digits`` rounds each value to that many significant digits (for slider stops).

    Examples
    --------
    >>> log_grid(0.1, 10, 2, digits=2).tolist()
    [0.1, 0.32, 1.0, 3.2, 10.0]
    """
    n = int(round(per_decade * np.log10(hi / lo))) + 1
    grid = np.geomspace(lo, hi, n)  # [n]
    if digits is not None:
        grid = np.unique([float(f"{v:.{digits}g}") for v in grid])
    return grid


def row_entropy(weights: np.ndarray) -> np.ndarray:  # [..., n_k] -> [...]
    """Entropy in nats of each row of weights, with 0·ln 0 = 0.

    0 for a one-hot row, ln n_k for a uniform row, 0 for a row of zeros (every key masked).

    Examples
    --------
    >>> np.round(row_entropy(np.array([[1.0, 0.0], [0.5, 0.5]])), 4).tolist()
    [0.0, 0.6931]
    """
    w = np.asarray(weights, dtype=np.float64)
    positive = w > 0
    return 0.0 - np.sum(np.where(positive, w * np.log(np.where(positive, w, 1.0)), 0.0), axis=-1)  # no -0.0


def saturation(
    s: np.ndarray, divisors: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:  # [n_q, n_k], [n_div], bool [n_q, n_k] -> [n_div, n_q], [n_div, n_q]
    """Largest weight and entropy of each query row of softmax(mask(s / d)), for each divisor d.

    A small divisor sharpens every row towards one-hot (largest weight → 1, entropy → 0); a large one
    flattens it towards uniform. The row maximum is subtracted before dividing, so no divisor
    overflows; a row with every key masked has weights of zeros (largest 0, entropy 0).

    The weights themselves are never formed: with x = (s − max) / d, e = exp(x) and Z = Σ e over a row,
    the largest weight is exp(0) / Z = 1 / Z and the entropy −Σ (e / Z) ln(e / Z) = ln Z − Σ e·x / Z,
    one exp per score and divisor (tests/core/test_analysis.py checks both against softmax's weights).

    Parameters
    ----------
    s : ndarray of shape (n_q, n_k)
        Unscaled scores QKᵀ.
    divisors : ndarray of shape (n_div,)
        Positive divisors (temperatures).
    mask : ndarray of bool, shape (n_q, n_k), optional
        True = may attend.

    Returns
    -------
    max_weight, entropy : ndarray of shape (n_div, n_q)

    Examples
    --------
    >>> top, ent = saturation(np.array([[0.0, 1.0]]), np.array([0.01, 1.0, 1000.0]))
    >>> np.round(top[:, 0], 4).tolist()
    [1.0, 0.7311, 0.5002]
    """
    d = np.asarray(divisors, dtype=np.float64)
    if d.ndim != 1 or not np.all(np.isfinite(d) & (d > 0)):
        raise AttentionInputError(N_("divisors: every divisor must be a positive finite number."))
    masked = apply_mask(np.asarray(s, dtype=np.float64), mask)  # [n_q, n_k], -inf where masked
    top = masked.max(axis=-1, keepdims=True)  # [n_q, 1]
    top = np.where(np.isneginf(top), 0.0, top)  # a fully masked row stays all -inf
    with np.errstate(over="ignore"):
        shifted = masked - top  # [n_q, n_k], <= 0; -inf where masked (or where the gap overflows)
    finite = np.where(np.isfinite(shifted), shifted, 0.0)  # [n_q, n_k]: where e is 0, any finite factor
    max_weight = np.empty((d.size, masked.shape[0]))  # [n_div, n_q]
    entropy = np.empty_like(max_weight)  # [n_div, n_q]
    per_chunk = max(1, SATURATION_CELLS // max(masked.size, 1))  # divisors at once
    for i in range(0, d.size, per_chunk):  # [c, n_q, n_k] at a time: never the whole [n_div, n_q, n_k] array
        part = d[i:i + per_chunk, None]  # [c, 1]
        with np.errstate(over="ignore"):  # a gap that overflows is -inf: e = 0, weight 0, the limit
            e = shifted / part[:, :, None]  # [c, n_q, n_k]: x
            np.exp(e, out=e)  # e, in x's place
        z = e.sum(axis=-1)  # [c, n_q]: >= 1 (the largest score's e is 1), 0 where every key is masked
        ex = np.multiply(e, finite, out=e).sum(axis=-1)  # [c, n_q]: Σ e·(s − max), <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            max_weight[i:i + per_chunk] = np.where(z > 0, 1.0 / z, 0.0)
            entropy[i:i + per_chunk] = np.where(z > 0, np.log(z) - ex / (part * z), 0.0)
    return max_weight, entropy


# ---- why softmax subtracts the maximum ------------------------------------------------------


def naive_softmax(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # [..., n] -> [..., n], bool [..., n]
    """``exp(a) / sum(exp(a))`` along the last axis, without subtracting the maximum (seed 002's softmax).

    Returns the weights and which entries overflowed (a finite score above ln(float64 max) ≈ 709.78,
    whose exp is +inf). A row with an overflow gets NaN (inf / inf) there and 0 elsewhere; a row of
    all -inf gets NaN everywhere (0 / 0). Compare :func:`attn_core.softmax`.

    Examples
    --------
    >>> w, over = naive_softmax(np.array([1000.0, 0.0]))
    >>> w.tolist(), over.tolist()
    ([nan, 0.0], [True, False])
    """
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(a)  # [..., n], +inf above MAX_EXP
        weights = e / np.sum(e, axis=-1, keepdims=True)  # [..., n]
    return weights, np.isposinf(e) & np.isfinite(a)


@dataclass(frozen=True)
class SoftmaxComparison:
    """One row through the naive and the stable softmax, every intermediate kept.

    Attributes
    ----------
    scores : ndarray of shape (n,)
    naive_exp : ndarray of shape (n,)
        ``exp(scores)``; +inf where it overflowed.
    naive_weights : ndarray of shape (n,)
        ``naive_exp / sum``; NaN where inf / inf or 0 / 0.
    overflow : ndarray of bool, shape (n,)
    shifted : ndarray of shape (n,)
        ``scores - max`` (the max taken as 0 if every entry is -inf): all <= 0.
    stable_exp : ndarray of shape (n,)
        ``exp(shifted)``, between 0 and 1.
    stable_weights : ndarray of shape (n,)
        :func:`attn_core.softmax` of ``scores``.
    """

    scores: np.ndarray
    naive_exp: np.ndarray
    naive_weights: np.ndarray
    overflow: np.ndarray
    shifted: np.ndarray
    stable_exp: np.ndarray
    stable_weights: np.ndarray

    @property
    def naive_nan(self) -> np.ndarray:  # -> bool [n]
        return np.isnan(self.naive_weights)


def compare_softmax(row: np.ndarray) -> SoftmaxComparison:  # [n] -> arrays of shape [n]
    """The naive and the stable softmax of one row of scores (finite or -inf for masked keys).

    Examples
    --------
    >>> c = compare_softmax(np.array([1000.0, 1001.0]))
    >>> c.overflow.tolist(), np.round(c.stable_weights, 4).tolist()
    ([True, True], [0.2689, 0.7311])
    """
    row = np.asarray(row, dtype=np.float64)
    if row.ndim != 1 or row.size == 0:
        raise AttentionInputError(N_("softmax row: expects a non-empty row of scores."))
    bad = np.flatnonzero(np.isnan(row) | np.isposinf(row))
    if bad.size:
        raise AttentionInputError(
            N_("softmax row: entry {index} is {value}; scores must be finite, or -inf where masked."),
            index=int(bad[0]), value=row[bad[0]],
        )
    with np.errstate(over="ignore"):
        naive_exp = np.exp(row)  # [n]
    naive_weights, overflow = naive_softmax(row)
    top = row.max()
    shifted = row - (0.0 if np.isneginf(top) else top)  # [n]
    return SoftmaxComparison(row, naive_exp, naive_weights, overflow, shifted, np.exp(shifted), softmax(row))


def logsumexp(masked: np.ndarray) -> np.ndarray:  # [..., n_k] (−inf where masked) -> [...]
    """log Σ_j exp(s_j) along the last axis, the stable way: the row max m taken out, m + log Σ_j exp(s_j − m).

    A row masked everywhere (all −inf) gives −inf, never NaN; a row of scores above ln(float64 max) does not
    overflow. The online softmax's m + log l (:attr:`attn_core.OnlineTrace.logsumexp`) is checked against it.

    Examples
    --------
    >>> logsumexp(np.array([[0.0, 0.0], [1000.0, 1000.0], [-np.inf, -np.inf]])).round(4).tolist()
    [0.6931, 1000.6931, -inf]
    """
    masked = np.asarray(masked, dtype=np.float64)
    m = masked.max(axis=-1)  # [...]
    safe = np.where(np.isneginf(m), 0.0, m)  # [...]: a row masked everywhere keeps exp(−inf − 0) = 0
    with np.errstate(divide="ignore"):  # log 0 = −inf for that row
        return safe + np.log(np.exp(masked - safe[..., None]).sum(axis=-1))


# ---- comparing weights when a row may have no key left ---------------------------------------------------------


def rows_with_keys(mask: np.ndarray | None, n_q: int) -> np.ndarray:  # bool [n_q, n_k] or None -> bool [n_q]
    """Which query rows keep at least one key (``mask``: True = may attend; None: every key).

    >>> rows_with_keys(np.array([[True, False], [False, False]]), 2).tolist(), rows_with_keys(None, 2).tolist()
    ([True, False], [True, True])
    """
    return np.ones(n_q, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).any(axis=-1)


@dataclass(frozen=True)
class RowsComparison:
    """The largest |a − b| over the rows both keep, and where; the rows left out (no key in one of them).

    ``largest`` and ``at`` are None when no row is left to compare (every query has lost its keys).
    """

    largest: float | None
    at: tuple[int, ...] | None
    left_out: tuple[int, ...]


def compare_rows(a: np.ndarray, b: np.ndarray, keep: np.ndarray) -> RowsComparison:
    """|a − b| over the rows ``keep`` marks (bool [n_q]); ``a``, ``b`` [n_q, ...] or [n_q]. A row whose query has
    no key left has no weights to compare (all zeros by definition), so it is left out, not counted as equal.

    >>> c = compare_rows(np.array([[0.5, 0.5], [0.0, 0.0]]), np.array([[0.25, 0.75], [0.5, 0.5]]),
    ...                  np.array([True, False]))
    >>> c.largest, c.at, c.left_out
    (0.25, (0, 0), (1,))
    >>> compare_rows(np.zeros((2, 2)), np.zeros((2, 2)), np.array([False, False])).largest is None
    True
    """
    a, b, keep = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), np.asarray(keep, dtype=bool)
    rows = np.flatnonzero(keep)  # the rows compared (a row left out may hold −inf on both sides: never subtracted)
    left_out = tuple(int(i) for i in np.flatnonzero(~keep))
    if rows.size == 0 or a[rows].size == 0:
        return RowsComparison(None, None, left_out)
    diff = np.abs(a[rows] - b[rows])  # [n_compared, ...]
    at = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return RowsComparison(float(diff[at]), (int(rows[at[0]]), *(int(i) for i in at[1:])), left_out)


@dataclass(frozen=True)
class CapSummary:
    """What a soft cap did to the scores: the largest |scaled − capped| and where (query, key), and the largest
    |capped score| (at most the cap)."""

    largest_change: float
    at: tuple[int, int]
    largest_capped: float


def cap_summary(scaled: np.ndarray, capped: np.ndarray) -> CapSummary:  # [n_q, n_k], [n_q, n_k]
    """The largest change a soft cap made (:func:`compare_rows` over every row) and the largest |capped score|.

    >>> s = np.array([[0.5, -4.0], [2.0, 0.0]])
    >>> c = cap_summary(s, 2.0 * np.tanh(s / 2.0))
    >>> round(c.largest_change, 4), c.at, round(c.largest_capped, 4)
    (2.0719, (0, 1), 1.9281)
    """
    change = compare_rows(scaled, capped, rows_with_keys(None, np.shape(scaled)[0]))
    return CapSummary(change.largest, change.at, float(np.abs(capped).max()))


def hidden_by_window(before: np.ndarray | None, after: np.ndarray, weights_before: np.ndarray
                     ) -> list[tuple[int, list[tuple[int, float]]]]:  # bool [n_q, n_k] or None, bool, [n_q, n_k]
    """For each query, the keys the window hides that the mask without it allowed, with the weight each had.

    ``before`` bool [n_q, n_k] or None (nothing masked): the mask without the window; ``after`` bool [n_q, n_k]: with
    it (True = may attend); ``weights_before`` [n_q, n_k]: the weights without the window. Returns one (query,
    [(key, weight), ...]) per query, in order, the list empty where the window hides nothing more.

    >>> hidden_by_window(np.tril(np.ones((3, 3), bool)), np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool),
    ...                  np.array([[1, 0, 0], [.5, .5, 0], [.2, .3, .5]]))
    [(0, []), (1, []), (2, [(0, 0.2)])]
    """
    allowed = np.ones(after.shape, dtype=bool) if before is None else before  # [n_q, n_k]
    gone = allowed & ~after  # [n_q, n_k]
    return [(i, [(int(j), float(weights_before[i, j])) for j in np.flatnonzero(gone[i])])
            for i in range(after.shape[0])]


@dataclass(frozen=True)
class BiasReach:
    """The most negative and the most positive bias on a key a query sees: (value, query, key), or None."""

    penalty: tuple[float, int, int] | None
    bonus: tuple[float, int, int] | None


def bias_reach(bias: np.ndarray, mask: np.ndarray | None) -> BiasReach:  # [n_q, n_k], bool [n_q, n_k] or None
    """Where an additive score bias (ALiBi's −m·(i − j)) penalises most and favours most, among the keys each query
    may attend to: with the causal mask no later key is seen, so nothing is favoured.

    >>> b = -0.5 * (np.arange(3)[:, None] - np.arange(3)[None, :])
    >>> bias_reach(b, None)
    BiasReach(penalty=(-1.0, 2, 0), bonus=(1.0, 0, 2))
    >>> bias_reach(b, np.tril(np.ones((3, 3), bool))).bonus is None
    True
    """
    bias = np.asarray(bias, dtype=np.float64)
    seen = np.ones(bias.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)

    def most(values: np.ndarray) -> tuple[float, int, int] | None:  # values: the bias where counted, else 0
        if not (values != 0).any():
            return None
        i, j = np.unravel_index(int(np.argmax(np.abs(values))), values.shape)
        return float(bias[i, j]), int(i), int(j)

    return BiasReach(most(np.where(seen & (bias < 0), bias, 0.0)), most(np.where(seen & (bias > 0), bias, 0.0)))
