"""The numerical stages every family shares, in float64 numpy: activations, the two norms, the bias column, the tied
logits and the top words. Each is one small pure function, named as transformers names its stage.

- :func:`gelu`: the exact GELU (BERT's ``hidden_act="gelu"``), through :func:`erf` (numpy has none);
- :func:`gelu_tanh`: the tanh approximation (GPT-2's ``gelu_new``, T5 v1.1's gated-gelu);
- :func:`layer_norm` (BERT, GPT-2) and :func:`rms_norm` (T5's ``T5LayerNorm``);
- :func:`with_bias_column`: X with a constant-1 column, so that a projection's bias is its weight's last row;
- :func:`f64`, :func:`product`: a weight kept in its checkpoint's dtype (float32, float16, bfloat16 as its bits) made
  float64, and ``x @ w`` in float64 without a float64 copy of it;
- :func:`tied_logits`: ``h @ Eᵀ`` with a vocabulary table E kept in its checkpoint's dtype, a chunk of rows at a
  time (BertForMaskedLM's decoder, GPT-2's LM head, T5's);
- :func:`top_words`: the ids of the largest probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .reader import BF16, bf16_to_f32

CHUNK = 4096  # vocabulary rows made float64 at a time (the whole of all-MiniLM's word embedding would be 94 MB)
SLAB_BYTES = 2**20  # a slab of a weight made float64 at a time for a few rows of x: it stays in the processor's cache
FEW_ROWS = 16  # rows of h that meet the vocabulary a slab at a time (a generation's step); more: CHUNK rows


# ---- the exact GELU --------------------------------------------------------------------------------------------

_ERF_STEP = 2.0**-8  # erf on [−6, 6]: a Taylor polynomial of degree _ERF_DEGREE around the nearest multiple of the step
_ERF_DEGREE = 5  # its remainder: below 3e-18 (the 6th derivative's largest value · (step / 2)⁶ / 6!)
_ERF_TOP = 6.0  # float64 erf(x) rounds to 1 for x >= 5.93
_ERF_N = round(_ERF_TOP / _ERF_STEP)  # the grid points k · step, k = −N … N
ERF_BLOCK = 32768  # elements of x per step of erf and gelu (256 kB each of erf's 3 temporaries, gelu's 4)
_ROUNDER = 1.5 * 2.0**52  # u + _ROUNDER is round(u) in the last bits of a float64 (|u| < 2⁵¹), exactly
_ROUNDER_BITS = int(np.array(_ROUNDER).view(np.int64))


def _erf_table() -> list[np.ndarray]:  # -> degree + 1 rows [2N + 1], highest degree first (for Horner)
    """Taylor coefficients of erf around each grid point c = k · step, k = −N … N (row index k + N), in units of the
    step: erf(c + σ · step) ≈ Σⱼ aⱼ σʲ with aⱼ = erf⁽ʲ⁾(c) stepʲ / j! (a power of two: no rounding added), where

        erf⁽ʲ⁾(c) = (2/√π) (−1)ʲ⁻¹ Hⱼ₋₁(c) e^(−c²), Hₙ the physicists' Hermite polynomials; a₀ = math.erf(c).

    Odd: the row of −k is that of k, aⱼ times (−1)ʲ⁺¹ (exact), so erf(−x) is −erf(x) bit for bit; a₀ of 0 is −0.0, so
    that erf(±0) is ±0. At ±6 the row is ±1, 0, 0, …: erf is ±1 in float64 within half a step of it, and so is the
    result for any finite σ (an argument clipped there by :func:`_erf_into`).
    """
    c = np.arange(_ERF_N + 1) * _ERF_STEP  # [N + 1]: 0 … 6
    coef = np.empty((_ERF_DEGREE + 1, _ERF_N + 1))  # [degree + 1, N + 1], lowest degree first while built
    coef[0] = [math.erf(v) for v in c]
    g = 2 / math.sqrt(math.pi) * np.exp(-c * c)
    h_prev, h = np.zeros(_ERF_N + 1), np.ones(_ERF_N + 1)  # H₋₁ = 0, H₀ = 1
    factorial = 1.0
    for k in range(1, _ERF_DEGREE + 1):
        factorial *= k
        coef[k] = g * (-1) ** (k - 1) * h / factorial * _ERF_STEP**k
        h_prev, h = h, 2 * c * h - 2 * (k - 1) * h_prev  # Hₖ = 2c Hₖ₋₁ − 2(k−1) Hₖ₋₂
    coef[1:, -1] = 0.0  # at 6: erf(6 ± step / 2) is 1.0 in float64
    odd = (-1.0) ** (np.arange(_ERF_DEGREE + 1) + 1)  # [degree + 1]: aⱼ(−c) = (−1)ʲ⁺¹ aⱼ(c)
    rows = np.concatenate([coef[:, :0:-1] * odd[:, None], coef], axis=1)  # [degree + 1, 2N + 1]: k = −N … N
    rows[0, _ERF_N] = -0.0
    return [row.copy() for row in rows[::-1]]


_ERF_ROWS = _erf_table()


def erf(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The error function, elementwise, within 2.3e-16 of ``math.erf`` (numpy has none; scipy is not needed).

    A degree-5 Taylor polynomial around the nearest multiple of 1/256 in [−6, 6] (six table look-ups an element), ±1
    beyond; ±0 and ±inf give erf's own values, NaN gives NaN; within one unit in the last place of erf correctly
    rounded (tests/models/test_erf.py). :data:`ERF_BLOCK` elements at a time, so that the look-ups and Horner's steps
    stay in the processor's cache. (It replaced a degree-9 polynomial on 1/32 steps, eleven look-ups an element, in
    issue 37: bench/erf.py, bench/RESULTS.md.)

    Examples
    --------
    >>> import math
    >>> xs = np.linspace(-7, 7, 1001)
    >>> float(np.abs(erf(xs) - [math.erf(v) for v in xs]).max()) <= 2.3e-16
    True
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape)  # [...]
    flat, dest = x.reshape(-1), out.reshape(-1)  # dest: a view of out
    for start in range(0, flat.size, ERF_BLOCK):  # elementwise: the same numbers as at once
        _erf_into(flat[start:start + ERF_BLOCK], dest[start:start + ERF_BLOCK])
    return out


def _erf_into(x: np.ndarray, out: np.ndarray, scale: float = 1.0) -> None:  # [b] -> out [b]
    """``out[:] = erf(x · scale)`` for a block of elements (its 3 temporaries the block's size); ``out`` may be ``x``.

    With ``scale`` other than 1, x · scale is rounded once and then made a count of steps (a power of two: exact), so
    the result is :func:`erf` of ``x * scale`` bit for bit (x · scale not subnormal).
    """
    bound = _ERF_TOP / scale
    u = np.clip(x, -bound, bound)  # ±6 beyond: every erf there is ±1; NaN stays NaN
    u *= scale / _ERF_STEP  # [b]: x · scale in steps
    t = u + _ROUNDER  # round(u) in its last bits
    sigma = t - _ROUNDER  # [b]: k = round(u), the nearest grid point
    np.subtract(u, sigma, out=sigma)  # σ = u − k, exact, |σ| <= ½
    k = t.view(np.int64)
    k -= _ROUNDER_BITS - _ERF_N  # [b]: the row index k + N (clipped below for NaN, whose σ makes the result NaN)
    np.take(_ERF_ROWS[0], k, mode="clip", out=out)
    for row in _ERF_ROWS[1:]:  # Horner
        np.take(row, k, mode="clip", out=u)
        out *= sigma
        out += u


def gelu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:  # [...] -> [...]
    """The exact GELU BERT uses: x · ½ · (1 + erf(x / √2)) (not the tanh approximation), computed as
    ``x * 0.5 * (1.0 + erf(x * math.sqrt(0.5)))`` bit for bit, :data:`ERF_BLOCK` elements at a time (in the
    processor's cache, and without temporaries of x's size). ``out``: a C-contiguous float64 array of x's shape to
    write into (may be x itself); a new one by default.

    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.158655, 0.0, 0.841345]
    """
    x = np.asarray(x, dtype=np.float64)
    if out is None:
        out = np.empty(x.shape)  # [...]
    elif out.shape != x.shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError("gelu's out must be a C-contiguous float64 array of x's shape")
    flat, dest = x.reshape(-1), out.reshape(-1)  # dest: a view of out
    half = np.empty(min(ERF_BLOCK, flat.size))  # [b]
    for start in range(0, flat.size, ERF_BLOCK):
        xb, yb = flat[start:start + ERF_BLOCK], dest[start:start + ERF_BLOCK]
        h = half[:len(xb)]
        np.multiply(xb, 0.5, out=h)  # before yb is written: out may be x
        _erf_into(xb, yb, math.sqrt(0.5))
        yb += 1.0
        yb *= h
    return out


def silu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """x · sigmoid(x) (SiLU, the gate of a Llama's SwiGLU MLP: transformers' ``hidden_act="silu"``).

    >>> silu(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.268941, 0.0, 0.731059]
    """
    with np.errstate(over="ignore"):  # exp(-x) overflows for x < -709: x / inf = -0, the limit
        return x / (1.0 + np.exp(-x))


def gelu_tanh(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The tanh approximation of GELU: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))) (transformers' NewGELU,
    ``gelu_new``: GPT-2's activation, and T5 v1.1's gated-gelu).

    >>> gelu_tanh(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.158808, 0.0, 0.841192]
    """
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * np.power(x, 3.0))))


# ---- norms, the bias column, float64 --------------------------------------------------------------------------


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:  # [n_seq, d] -> [n_seq, d]
    """(x − mean) / √(var + eps) · g + b over each row (biased variance, as torch.nn.LayerNorm).

    >>> layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), 0.0).tolist()
    [[-1.0, 1.0]]
    """
    mean = x.mean(axis=-1, keepdims=True)  # [n_seq, 1]
    centred = x - mean  # [n_seq, d]
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # [n_seq, 1]
    return centred / np.sqrt(var + eps) * g + b


def rms_norm(x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:  # [n, d] -> [n, d]
    """T5's LayerNorm: x / √(mean(x²) + eps) · g, over each row (no mean subtracted, no bias).

    Kept beside attn_core.rms_norm (the same formula, which attn_models.llama uses) because the two round differently:
    this multiplies by 1 / √(…), as transformers' T5LayerNorm (``x * torch.rsqrt(variance + eps)``), where attn_core
    divides by the root (after checking the input and rescaling rows whose squares overflow). Measured on the tiny T5
    (tests/tiny_t5.py): attn_core's gives logits and attentions up to 4e-15 away, not bit for bit; on random rows 23 %
    of the cells differ in the last bit.

    >>> rms_norm(np.array([[3.0, 4.0]]), np.ones(2), 0.0).round(6).tolist()
    [[0.848528, 1.131371]]
    """
    variance = np.mean(x * x, axis=-1, keepdims=True)  # [n, 1]
    return np.asarray(g, dtype=np.float64) * (x * (1.0 / np.sqrt(variance + eps)))


def with_bias_column(x: np.ndarray) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, d_model + 1]
    """X with a constant-1 column appended: ``X₁ @ [W; b] = X @ W + b``, a bias as one more input feature.

    >>> with_bias_column(np.zeros((2, 1))).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    return np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)


def f64(a: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """A weight as float64: exact from float16, bfloat16 (its bits: attn_models.reader.BF16) and float32; no copy
    when it already is.

    >>> f64(np.array([0x3F80, 0x4049], dtype=np.uint16).view(BF16)).tolist()  # 1 and 3.140625 in bfloat16
    [1.0, 3.140625]
    """
    return bf16_to_f32(a).astype(np.float64) if a.dtype == BF16 else np.asarray(a, dtype=np.float64)


def widen_into(out: np.ndarray, a: np.ndarray) -> None:  # [rows, d] -> out [rows, d] float64
    """``out[...] = a`` made float64, exactly (bfloat16 through float32)."""
    np.copyto(out, bf16_to_f32(a) if a.dtype == BF16 else a)


# ---- the vocabulary: tied logits, top words --------------------------------------------------------------------


def product(x: np.ndarray, w: np.ndarray) -> np.ndarray:  # [n, d_in], [d_in, d_out] -> [n, d_out]
    """``x @ w`` in float64, for a weight in its checkpoint's dtype: a float64 ``w`` as it is; any other made float64 a
    slab of rows at a time (about :data:`SLAB_BYTES`, one buffer that stays in the processor's cache) and the slabs'
    products summed in order. The casts are exact and no float64 copy of ``w`` is made: a few rows of x (a key/value
    cache's step) meet a float32 weight about as fast as they would its float64 copy, where casting it whole first
    took 2–2.6 × as long (bench/gpt2.py). The sum over slabs differs from ``x @ f64(w)`` by rounding only.

    >>> w = np.arange(12, dtype=np.float32).reshape(3, 4)
    >>> product(np.array([[1.0, 2.0, 3.0]]), w).tolist(), product(np.ones((1, 3)), w.astype(np.float64)).tolist()
    ([[32.0, 38.0, 44.0, 50.0]], [[12.0, 15.0, 18.0, 21.0]])
    """
    rows = max(1, SLAB_BYTES // (8 * w.shape[1]))  # rows of w in one slab
    if w.dtype == np.float64 or rows >= len(w):
        return x @ f64(w)
    slab = np.empty((rows, w.shape[1]))  # [rows, d_out]: float64, reused
    out, part = np.zeros((len(x), w.shape[1])), np.empty((len(x), w.shape[1]))  # [n, d_out] each
    with np.errstate(over="ignore", invalid="ignore"):  # an edited weight's overflow is named by attn_core
        for r in range(0, len(w), rows):
            piece = slab[:min(rows, len(w) - r)]
            widen_into(piece, w[r:r + rows])  # exact: float32 (or bfloat16) → float64
            np.matmul(x[:, r:r + rows], piece, out=part)
            out += part
    return out


def tied_logits(h: np.ndarray, table: np.ndarray) -> np.ndarray:  # [n, d_model], [vocab, d_model] -> [n, vocab]
    """``h @ tableᵀ`` in float64, the table (a word embedding, or an LM head's own decoder, in its checkpoint's dtype,
    maybe memory-mapped) made float64 a chunk of rows at a time: exact, and never a whole float64 copy of it.

    :data:`CHUNK` rows a chunk for many rows of h; for a few (:data:`FEW_ROWS` or fewer: a generation's step) a slab of
    about :data:`SLAB_BYTES`, cast into one buffer that stays in the processor's cache (2.6 × faster for one row at
    GPT-2's 50,257 × 768). Each logit is one row of h times one row of the table either way.

    >>> tied_logits(np.array([[1.0, 2.0]]), np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)).tolist()
    [[1.0, 2.0, 3.0]]
    """
    rows = CHUNK if len(h) > FEW_ROWS else max(1, SLAB_BYTES // (8 * table.shape[1]))  # table rows a chunk
    logits = np.empty((len(h), len(table)))  # [n, vocab]
    for i, chunk in widened_chunks(table, rows):
        logits[:, i:i + len(chunk)] = h @ chunk.T
    return logits


def block_logits(h: np.ndarray, table: np.ndarray, blocks: list[slice]) -> np.ndarray:  # -> [n, vocab]
    """``h @ tableᵀ`` in float64 (as :func:`tied_logits`) a block of h's rows at a time (``blocks``: slices of h's
    rows, covering them), each :data:`CHUNK` rows of the table made float64 once for every block.

    Each block's logits are one product per table chunk, ``h[block] @ chunkᵀ``: the same numbers, bit for bit, when
    the block is computed alone (``block_logits(h[block], table, [slice(0, len(block))])``), whatever the other
    blocks; a product's last bits depend on how many rows it has, so a caller that must match keeps the blocks.

    >>> table = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    >>> block_logits(np.array([[1.0, 2.0], [3.0, 4.0]]), table, [slice(0, 1), slice(1, 2)]).tolist()
    [[1.0, 2.0, 3.0], [3.0, 4.0, 7.0]]
    """
    logits = np.empty((len(h), len(table)))  # [n, vocab]
    for i, chunk in widened_chunks(table, CHUNK):
        for rows in blocks:
            logits[rows, i:i + len(chunk)] = h[rows] @ chunk.T
    return logits


def widened_chunks(table: np.ndarray, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(i, table[i:i + rows] as float64)`` for i = 0, rows, 2·rows, …: a float64 table's own rows, any other's cast
    (exactly) into one buffer of ``rows`` rows, reused: the chunk is valid until the next one is asked for.

    >>> [(i, c.tolist()) for i, c in widened_chunks(np.arange(3, dtype=np.float32).reshape(3, 1), 2)]
    [(0, [[0.0], [1.0]]), (2, [[2.0]])]
    """
    buf = None if table.dtype == np.float64 else np.empty((min(rows, len(table)), table.shape[1]))  # [rows, d]
    for i in range(0, len(table), rows):
        chunk = table[i:i + rows]  # [rows, d_model] in the table's dtype
        if buf is not None:
            widen_into(buf[:len(chunk)], chunk)  # exact
            chunk = buf[:len(chunk)]
        yield i, chunk


def top_words(probs: np.ndarray, k: int) -> np.ndarray:  # [vocab] -> int [k]
    """The ids of the ``k`` largest probabilities, largest first (a tie: the smaller id first).

    The k-th largest probability found by a partition, then only the ids at least as probable sorted (stably, in id
    order: the smaller id first on a tie): the same ids as a stable sort of the whole vocabulary, in 0.2 ms instead
    of 7 at GPT-2's 50,257 (a generation's every step).

    >>> top_words(np.array([0.1, 0.4, 0.1, 0.4]), 3).tolist()
    [1, 3, 0]
    """
    if k >= len(probs):
        return np.argsort(-probs, kind="stable")[:k]
    kth = np.partition(probs, len(probs) - k)[len(probs) - k]  # the k-th largest probability
    candidates = np.flatnonzero(probs >= kth)  # int [≥ k]: every id at least as probable, ties included, in id order
    return candidates[np.argsort(-probs[candidates], kind="stable")][:k]
