"""Seeded, reproducible weight initialisers (the distributions seed 004 names)."""

from __future__ import annotations

import numpy as np

from .errors import N_, AttentionInputError

#: name -> what the learner sees (in English, marked for the catalogs: show it with ``_(INITIALIZERS[name])``)
INITIALIZERS: dict[str, str] = {
    "gaussian": N_("Gaussian N(0, std²)"),
    "xavier_uniform": N_("Xavier/Glorot uniform"),
    "xavier_normal": N_("Xavier/Glorot normal"),
    "kaiming_uniform": N_("Kaiming/He uniform"),
    "kaiming_normal": N_("Kaiming/He normal"),
    "zeros": N_("zeros"),
    "ones": N_("ones"),
    "identity": N_("identity (ones on the diagonal)"),
}


def initialize(name: str, shape: tuple[int, int], seed: int = 0, std: float = 1.0) -> np.ndarray:  # -> [rows, cols]
    """A [rows, cols] matrix from a named initialiser; the same seed gives the same numbers.

    For a weight [fan_in, fan_out] used as ``x @ w``: Xavier uses both fans, Kaiming (for ReLU
    nets, gain √2) uses fan_in. ``identity`` puts ones on the main diagonal (a true identity when
    square, and a rectangular "eye" otherwise).

    Parameters
    ----------
    name : str
        One of :data:`INITIALIZERS`.
    shape : (int, int)
    seed : int
    std : float
        Standard deviation for "gaussian" only.

    Examples
    --------
    >>> initialize("identity", (2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> bool((initialize("xavier_uniform", (4, 3), seed=1) == initialize("xavier_uniform", (4, 3), seed=1)).all())
    True
    """
    rows, cols = (int(s) for s in shape)
    if rows < 1 or cols < 1:
        raise AttentionInputError(N_("initialiser: shape must be at least 1 × 1, got {rows} × {cols}."), rows=rows,
                                  cols=cols)
    return _draw(name, rows, cols, np.random.default_rng(int(seed)), std)


def initialize_heads(name: str, shape: tuple[int, int], n_heads: int, seed: int = 0,
                     std: float = 1.0) -> np.ndarray:  # -> [rows, n_heads·cols]
    """``n_heads`` blocks side by side, each drawn as :func:`initialize` draws a [rows, cols] matrix (its fans one
    head's, so the numbers' size does not shrink with the head count), one after the other from one seeded stream.
    With one head it is ``initialize(name, shape, seed, std)`` itself; "identity" gives every head the identity.

    Examples
    --------
    >>> initialize_heads("identity", (2, 4), 2).tolist()
    [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> bool((initialize_heads("xavier_uniform", (3, 2), 1, seed=5) == initialize("xavier_uniform", (3, 2), 5)).all())
    True
    """
    rows, width = (int(s) for s in shape)
    if n_heads < 1 or width % n_heads:
        raise AttentionInputError(N_("initialiser: {n_heads} heads do not divide {width} columns."), n_heads=n_heads,
                                  width=width)
    initialize(name, (rows, width // n_heads), seed, std)  # checks the name, the shape and std
    rng = np.random.default_rng(int(seed))
    return np.hstack([_draw(name, rows, width // n_heads, rng, std) for _ in range(n_heads)])


def _draw(name: str, rows: int, cols: int, rng: np.random.Generator, std: float) -> np.ndarray:  # -> [rows, cols]
    fan_in, fan_out = rows, cols
    if name == "gaussian":
        if not (np.isfinite(std) and std >= 0):
            raise AttentionInputError(N_("initialiser: std must be a finite number ≥ 0, got {std!r}."), std=std)
        return rng.normal(0.0, std, (rows, cols))
    if name == "xavier_uniform":
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, (rows, cols))
    if name == "xavier_normal":
        return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), (rows, cols))
    if name == "kaiming_uniform":
        limit = np.sqrt(6.0 / fan_in)
        return rng.uniform(-limit, limit, (rows, cols))
    if name == "kaiming_normal":
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), (rows, cols))
    if name == "zeros":
        return np.zeros((rows, cols))
    if name == "ones":
        return np.ones((rows, cols))
    if name == "identity":
        return np.eye(rows, cols)
    raise AttentionInputError(N_("initialiser: unknown name {name!r}; choose one of {names}."), name=name,
                              names=", ".join(INITIALIZERS))


#: how a score function's weights start (attn_ui says so where they are shown): matrix -> (initialiser, seed),
#: drawn per head (:func:`initialize_heads`). Not the identity for W_a (that would give the dot product's weights
#: back, and "general" would look like no change at all); v_a Kaiming uniform (its fan_in is 1: numbers up to √6 in
#: size), so the additive scores are not all near 0 and the weights not all near uniform.
SCORE_STARTS: dict[str, tuple[str, int]] = {
    "w_a": ("xavier_uniform", 0), "w_1": ("xavier_uniform", 1), "w_2": ("xavier_uniform", 2),
    "v_a": ("kaiming_uniform", 3),
}


def score_weights(kind: str, d_q: int, d_k: int, n_heads: int, d_a: int | None = None) -> dict[str, np.ndarray]:
    """The weights a score function starts with (:data:`SCORE_STARTS`): for "general" W_a [d_q, n_heads·d_k]; for
    "additive" W_1 [d_q, n_heads·d_a], W_2 [d_k, n_heads·d_a] and v_a [1, n_heads·d_a] (``d_a`` default d_k); for
    "dot" none.

    >>> {name: w.shape for name, w in score_weights("additive", 3, 3, 2, d_a=4).items()}
    {'w_1': (3, 8), 'w_2': (3, 8), 'v_a': (1, 8)}
    """
    d_a = d_a or d_k
    shapes = {"dot": {}, "general": {"w_a": (d_q, d_k)},
              "additive": {"w_1": (d_q, d_a), "w_2": (d_k, d_a), "v_a": (1, d_a)}}[kind]  # one head's block
    return {name: initialize_heads(SCORE_STARTS[name][0], (rows, n_heads * cols), n_heads, SCORE_STARTS[name][1])
            for name, (rows, cols) in shapes.items()}


def resize(a: np.ndarray, shape: tuple[int, int], fill: np.ndarray) -> np.ndarray:  # [r, c] -> [rows, cols]
    """Keep every value of ``a`` that still fits in ``shape``; the other cells come from ``fill``.

    Examples
    --------
    >>> resize(np.ones((2, 2)), (3, 1), np.zeros((3, 1))).tolist()
    [[1.0], [1.0], [0.0]]
    """
    out = np.array(fill, dtype=np.float64, copy=True).reshape(shape)
    r, c = min(a.shape[0], shape[0]), min(a.shape[1], shape[1])
    out[:r, :c] = a[:r, :c]
    return out
