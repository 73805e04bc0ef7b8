"""Rotary position embeddings (RoPE, Su et al. 2021): each pair of a query's or key's features is turned by an angle
proportional to the token's position, so that q_m · k_n depends on the positions only through m − n.

For a vector of width d (even) and a token at position p, pair i (i = 0 … d/2 − 1) turns by the angle
p · θ_i with θ_i = base^(−2i/d) (``rope_frequencies``; base 10000 in the paper and in Llama 2). Which features form
pair i is the layout:

- ``"half"``: features (i, i + d/2), transformers' ``rotate_half`` convention (Llama, Mistral, Qwen, Gemma in
  ``modeling_llama.py``: ``q * cos + rotate_half(q) * sin`` with ``cos = cat(cos θ, cos θ)``);
- ``"interleaved"``: features (2i, 2i + 1), the RoFormer paper's and Meta's reference Llama (its
  ``torch.view_as_complex`` of consecutive pairs, times e^{i p θ_i}).

Both turn each pair (a, b) into (a cos φ − b sin φ, a sin φ + b cos φ): the same rotation on a different pairing, so a
checkpoint's W_Q and W_K must be read in the layout it was trained with.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .errors import N_, AttentionInputError
from .tokens import positional_encoding_at
from .validation import as_matrix

ROPE_LAYOUTS = ("half", "interleaved")


def check_base(base: object) -> float:
    """``base`` as a float, or AttentionInputError naming it unless it is a finite number above 1."""
    if isinstance(base, numbers.Real) and not isinstance(base, (bool, np.bool_)) and np.isfinite(base) and base > 1:
        return float(base)
    raise AttentionInputError(N_("RoPE base: must be a finite number above 1, got {base!r}."), base=base)


def check_layout(layout: object) -> str:
    """``layout`` if it is one of ROPE_LAYOUTS, else AttentionInputError naming it."""
    if layout not in ROPE_LAYOUTS:
        raise AttentionInputError(N_("RoPE layout: {layout!r} is not one of {layouts}."), layout=layout,
                                  layouts=", ".join(ROPE_LAYOUTS))
    return str(layout)


def check_even(d: object, name: str = "d") -> int:
    """``d`` as an int, or AttentionInputError (naming ``name``) unless it is an even whole number of at least 2."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2 or d % 2:
        raise AttentionInputError(N_("{name}: RoPE turns pairs of features, so the width must be even (and at least "
                                     "2), got {d}."), name=name, d=d, matrix=name)
    return int(d)


def as_positions(positions: object, n: int | None = None) -> np.ndarray:
    """The token positions as an int64 vector [n] (whole numbers, at least 0), or AttentionInputError naming the
    position at fault; ``n``, if given, is how many there must be (one per row).

    >>> as_positions([0, 1, 5]).tolist()
    [0, 1, 5]
    """
    arr = np.asarray(positions, dtype=object) if not isinstance(positions, np.ndarray) else positions
    if arr.ndim != 1 or arr.size == 0:
        raise AttentionInputError(N_("positions: expects one whole number per token, got shape {shape}."),
                                  shape=arr.shape, matrix="positions")
    for i, p in enumerate(arr.tolist()):
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) and not (
                isinstance(p, float) and p.is_integer()) or p < 0:
            raise AttentionInputError(N_("positions: entry {i} is {p!r}, not a whole number of at least 0."), i=i, p=p,
                                      matrix="positions", cell=(0, i))
    if n is not None and arr.size != n:
        raise AttentionInputError(N_("positions: {got} positions for {n} rows; give one per row."), got=arr.size, n=n,
                                  matrix="positions")
    return np.array([int(p) for p in arr.tolist()], dtype=np.int64)


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:  # -> [d/2]
    """θ_i = base^(−2i/d) for i = 0 … d/2 − 1: the angle pair i turns by per position (transformers' ``inv_freq``).

    Examples
    --------
    >>> rope_frequencies(4, base=100.0).tolist()
    [1.0, 0.1]
    """
    d, base = check_even(d), check_base(base)
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)  # [d/2]


def rotation_angles(positions: object, d: int, base: float = 10000.0) -> np.ndarray:  # [n] -> [n, d/2]
    """Every position's angle for every pair, p · θ_i, in radians (not wrapped to a turn).

    Examples
    --------
    >>> rotation_angles([0, 1, 2], 4, base=100.0).tolist()
    [[0.0, 0.0], [1.0, 0.1], [2.0, 0.2]]
    """
    theta = rope_frequencies(d, base)  # [d/2]
    return as_positions(positions).astype(np.float64)[:, None] * theta[None, :]  # [n, 1] * [1, d/2] -> [n, d/2]


def rope_angles(positions: object, d: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's angle for every pair: p · θ_i (:func:`rotation_angles`).

    Parameters
    ----------
    positions : array_like of int, shape (n,)
        The tokens' positions (0 for the first; with a key/value cache the new token's is the number before it).
    d : int
        The width of a query or key (one head's d_k), even.
    base : float

    Returns
    -------
    cos, sin : ndarrays of shape (n, d/2)
        Column i is pair i's, whatever the layout (transformers repeats them to [n, d]: ``cat(cos, cos)``).

    Examples
    --------
    >>> cos, sin = rope_angles([0, 1], 2)
    >>> np.round(cos, 4).tolist(), np.round(sin, 4).tolist()
    ([[1.0], [0.5403]], [[0.0], [0.8415]])
    """
    angles = rotation_angles(positions, d, base)  # [n, d/2]
    return np.cos(angles), np.sin(angles)


def apply_rope(x: object, positions: object, *, base: float = 10000.0, layout: str = "half",
               name: str = "X") -> np.ndarray:  # [n, d], [n] -> [n, d]
    """Turn each pair of features of each row of ``x`` by its position's angle (see the module for the layouts).

    Row r, pair i with features (a, b) becomes (a cos φ − b sin φ, a sin φ + b cos φ), φ = positions[r] · θ_i.

    Parameters
    ----------
    x : array_like of shape (n, d), d even
        Queries or keys of one head.
    positions : array_like of int, shape (n,)
    base : float
    layout : "half" or "interleaved"
    name : str
        What the learner calls ``x`` in a message ("Q (head 0)").

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    Position 1 turns the pair (1, 0) by one radian (θ_0 = 1); position 0 leaves a row as it is:

    >>> np.round(apply_rope([[1.0, 0.0], [1.0, 0.0]], [0, 1]), 4).tolist()
    [[1.0, 0.0], [0.5403, 0.8415]]
    """
    x = as_matrix(name, x)
    layout = check_layout(layout)
    d = check_even(x.shape[1], name)
    positions = as_positions(positions, x.shape[0])
    cos, sin = rope_angles(positions, d, base)  # [n, d/2] each
    if layout == "half":
        a, b = x[:, :d // 2], x[:, d // 2:]  # [n, d/2] each: pair i is (i, i + d/2)
    else:
        a, b = x[:, 0::2], x[:, 1::2]  # [n, d/2] each: pair i is (2i, 2i + 1)
    turned_a = a * cos - b * sin  # [n, d/2]
    turned_b = a * sin + b * cos  # [n, d/2]
    out = np.empty_like(x)  # [n, d]
    if layout == "half":
        out[:, :d // 2], out[:, d // 2:] = turned_a, turned_b
    else:
        out[:, 0::2], out[:, 1::2] = turned_a, turned_b
    return out


@dataclass(frozen=True)
class ShiftCheck:
    """q_m · k_n with RoPE at positions (m, n) and at (m + s, n + s), and the same with the original Transformer's
    sinusoidal positions added to X instead (absolute positions): RoPE's two agree to float64 rounding, the
    absolute ones in general do not."""

    rope_at: float
    rope_shifted: float
    abs_at: float
    abs_shifted: float

    @property
    def rope_change(self) -> float:
        """|rope_at − rope_shifted|: only m − n counts with RoPE, so this is float64 rounding."""
        return abs(self.rope_at - self.rope_shifted)

    @property
    def abs_change(self) -> float:
        """|abs_at − abs_shifted|: what the shift changed with absolute positions."""
        return abs(self.abs_at - self.abs_shifted)


def shift_check(q_row: np.ndarray, k_row: np.ndarray, m: int, n: int, s: int, x_m: np.ndarray, x_n: np.ndarray,
                w_q: np.ndarray, w_k: np.ndarray, *, base: float = 10000.0, layout: str = "half") -> ShiftCheck:
    """One query and one key scored at positions (m, n) and at (m + s, n + s), with RoPE and with absolute positions.

    Parameters
    ----------
    q_row, k_row : ndarray of shape (d_k,), d_k even
        One query and one key as RoPE receives them (after QK-norm, if on), turned here by their positions.
    m, n, s : int
        The query's and the key's positions, and the shift added to both (whole numbers, at least 0).
    x_m, x_n : ndarray of shape (d_model,)
        The two tokens' rows of X, for the absolute positions: (x + PE[p]) W, PE :func:`attn_core.positional_encoding`.
    w_q, w_k : ndarray of shape (d_model, d_k)
        The head's weights, for the absolute positions.
    base, layout
        RoPE's, as in :func:`apply_rope`.

    Returns
    -------
    ShiftCheck

    Examples
    --------
    >>> c = shift_check(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 2, 0, 3, np.array([1.0, 0.0]),
    ...                 np.array([0.0, 1.0]), np.eye(2), np.eye(2))
    >>> round(c.rope_at, 4), round(c.rope_shifted, 4), round(c.abs_at, 4), round(c.abs_shifted, 4)
    (0.9093, 0.9093, -0.8323, 0.0086)
    """
    def turned(v: np.ndarray, p: int) -> np.ndarray:  # [d_k] -> [d_k]
        return apply_rope(v[None, :], [p], base=base, layout=layout)[0]

    pe_m, pe_n, pe_ms, pe_ns = positional_encoding_at([m, n, m + s, n + s], x_m.shape[0])  # 4 × [d_model]

    def absolute(at_m: np.ndarray, at_n: np.ndarray) -> float:
        return float(((x_m + at_m) @ w_q) @ ((x_n + at_n) @ w_k))  # [d_k] · [d_k]

    return ShiftCheck(float(turned(q_row, m) @ turned(k_row, n)), float(turned(q_row, m + s) @ turned(k_row, n + s)),
                      absolute(pe_m, pe_n), absolute(pe_ms, pe_ns))
