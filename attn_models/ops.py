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

_ERF_STEP = 1 / 32  # erf on [0, 6) is a Taylor polynomial of degree _ERF_DEGREE around each step's centre
_ERF_DEGREE = 9
_ERF_TOP = 6.0  # float64 erf(x) rounds to 1 for x >= 5.93
ERF_BLOCK = 8192  # elements of x per step of erf (64 kB each of its temporaries)


def _erf_table() -> tuple[np.ndarray, np.ndarray]:  # -> centres [n_steps], coefficients [degree + 1, n_steps]
    """Taylor coefficients of erf around the centre of each step, highest degree first (for Horner).

    erf⁽ᵏ⁾(c) = (2/√π) (−1)ᵏ⁻¹ Hₖ₋₁(c) e^(−c²), with Hₙ the physicists' Hermite polynomials.
    """
    n = round(_ERF_TOP / _ERF_STEP)
    c = (np.arange(n) + 0.5) * _ERF_STEP  # [n_steps]
    coef = np.empty((_ERF_DEGREE + 1, n))  # [degree + 1, n_steps], lowest degree first while built
    coef[0] = [math.erf(v) for v in c]
    g = 2 / math.sqrt(math.pi) * np.exp(-c * c)
    h_prev, h = np.zeros(n), np.ones(n)  # H₋₁ = 0, H₀ = 1
    factorial = 1.0
    for k in range(1, _ERF_DEGREE + 1):
        factorial *= k
        coef[k] = g * (-1) ** (k - 1) * h / factorial
        h_prev, h = h, 2 * c * h - 2 * (k - 1) * h_prev  # Hₖ = 2c Hₖ₋₁ − 2(k−1) Hₖ₋₂
    return c, coef[::-1].copy()


_ERF_CENTRES, _ERF_COEF = _erf_table()


def erf(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The error function, elementwise, within 2.3e-16 of ``math.erf`` (numpy has none; scipy is not needed).

    A degree-9 Taylor polynomial around the centre of each 1/32-wide step of [0, 6), odd symmetry, and 1 beyond;
    :data:`ERF_BLOCK` elements at a time, so that its ten table look-ups and Horner's steps stay in the processor's
    cache (at once, on a feed-forward's [768, 1536] it took about twice as long: bench/RESULTS.md, issue 37).

    Examples
    --------
    >>> import math
    >>> xs = np.linspace(-7, 7, 1001)
    >>> float(np.abs(erf(xs) - [math.erf(v) for v in xs]).max()) <= 2.3e-16
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size <= ERF_BLOCK:
        return _erf_block(x)
    flat = x.reshape(-1)  # a view when x is contiguous
    out = np.empty(flat.shape)
    for start in range(0, flat.size, ERF_BLOCK):  # elementwise: the same numbers as at once
        out[start:start + ERF_BLOCK] = _erf_block(flat[start:start + ERF_BLOCK])
    return out.reshape(x.shape)


def _erf_block(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """:func:`erf` of a block of elements at once (its temporaries: about 6 arrays of x's size)."""
    a = np.abs(x)
    near = np.minimum(a, _ERF_TOP)  # beyond 6 the result is 1 whatever the polynomial says
    i = np.minimum((near * (1 / _ERF_STEP)).astype(np.intp), len(_ERF_CENTRES) - 1)  # the step of each element
    s = near - _ERF_CENTRES[i]  # offset from the step's centre, |s| <= 1/64
    y = _ERF_COEF[0][i]
    for row in _ERF_COEF[1:]:  # Horner
        y *= s
        y += row[i]
    y[a >= _ERF_TOP] = 1.0
    return np.copysign(y, x)


def gelu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The exact GELU BERT uses: x · ½ · (1 + erf(x / √2)) (not the tanh approximation).

    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.158655, 0.0, 0.841345]
    """
    return x * 0.5 * (1.0 + erf(x * math.sqrt(0.5)))


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
