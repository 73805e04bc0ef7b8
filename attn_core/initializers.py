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
    fan_in, fan_out = rows, cols
    rng = np.random.default_rng(int(seed))
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
