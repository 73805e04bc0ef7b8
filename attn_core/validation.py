"""Checks that run before any arithmetic. Every failure is an AttentionInputError."""

from __future__ import annotations

import numbers

import numpy as np

from .errors import AttentionInputError


def as_matrix(name: str, a: object) -> np.ndarray:
    """Return ``a`` as a finite float64 matrix, or raise naming ``name`` and the bad cell.

    Parameters
    ----------
    name : str
        How the learner knows the matrix ("X", "W_Q", ...).
    a : array_like of shape (rows, cols)

    Returns
    -------
    ndarray of shape (rows, cols), dtype float64

    Examples
    --------
    >>> as_matrix("X", [[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> as_matrix("X", [[1, float("nan")]])
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: X: cell (0, 1) is NaN; every cell must be a finite number.
    """
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.array(a, dtype=object)
        except ValueError:  # numpy refuses some ragged nestings outright
            arr = None
        if arr is None or (arr.ndim == 1 and arr.size and all(isinstance(r, (list, tuple, np.ndarray)) for r in arr)):
            raise AttentionInputError(f"{name}: rows of different lengths; a matrix needs equal rows.", matrix=name)
    if arr.ndim != 2:
        raise AttentionInputError(f"{name}: expected a matrix (2 dimensions), got {arr.ndim}.", matrix=name)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise AttentionInputError(f"{name}: the matrix is empty (shape {arr.shape[0]} × {arr.shape[1]}).", matrix=name)
    if arr.dtype.kind in "iuf":  # not "b": True/False are not numbers, as for the cells of a list
        out = arr.astype(np.float64, copy=False)
    elif arr.dtype.kind == "O":
        out = np.empty(arr.shape, dtype=np.float64)
        for (i, j), v in np.ndenumerate(arr):
            if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
                try:
                    out[i, j] = float(v)
                except OverflowError:  # a Python int beyond float64
                    raise AttentionInputError(
                        f"{name}: cell ({i}, {j}) is beyond ±1.8e308, too large for a float64.",
                        matrix=name,
                        cell=(i, j),
                    ) from None
            else:
                raise AttentionInputError(
                    f"{name}: cell ({i}, {j}) is {v!r}, not a number.", matrix=name, cell=(i, j)
                )
    else:
        raise AttentionInputError(f"{name}: cells must be numbers, got dtype {arr.dtype}.", matrix=name)
    check_finite(name, out)
    return out


def check_finite(name: str, a: np.ndarray, *, hint: str = "every cell must be a finite number") -> None:
    """Raise naming the first non-finite cell of ``a`` (row-major order)."""
    if np.isfinite(a).all():  # the common case, checked in one pass
        return
    i, j = (int(t) for t in np.argwhere(~np.isfinite(a))[0])
    v = a[i, j]
    what = "NaN" if np.isnan(v) else ("+inf" if v > 0 else "-inf")
    raise AttentionInputError(f"{name}: cell ({i}, {j}) is {what}; {hint}.", matrix=name, cell=(i, j))


def check_overflow(name: str, a: np.ndarray, sources: str) -> None:
    """Raise if an intermediate overflowed float64 (|value| > 1.8e308)."""
    check_finite(
        name,
        a,
        hint=f"it overflowed float64 (beyond ±1.8e308): make the entries of {sources} smaller",
    )


def check_dim(name: str, size: int, other: str, other_size: int, detail: str) -> None:
    """Raise unless a size of matrix ``name`` equals a size of matrix ``other``; ``name`` is the one at fault.

    Every shape check that compares two matrices goes through here, so each message starts with the
    matrix to change and ``err.matrix`` names it.

    Parameters
    ----------
    name : str
        The matrix the learner should change ("W_K", "V", "K (head 0)", ...).
    size : int
        Its rows or columns being checked.
    other : str
        The matrix it must agree with.
    other_size : int
        The rows or columns of ``other`` that ``size`` must equal.
    detail : str
        The message after "name: ", with ``{name}``, ``{size}``, ``{other}`` and ``{other_size}`` filled in.

    Raises
    ------
    AttentionInputError
        If ``size != other_size``, with ``matrix=name``.

    Examples
    --------
    >>> k, v = np.ones((3, 2)), np.ones((2, 4))  # K [n_k, d_k] with n_k = 3; V [2, d_v]: one value row short
    >>> check_dim("V", v.shape[0], "K", k.shape[0], "has {size} rows but {other} has {other_size}; one value per key.")
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: V: has 2 rows but K has 3; one value per key.
    """
    if size != other_size:
        message = detail.format(name=name, size=size, other=other, other_size=other_size)
        raise AttentionInputError(f"{name}: {message}", matrix=name)


def check_inner(left: str, a: np.ndarray, right: str, b: np.ndarray) -> None:
    """Raise unless ``a @ b`` is defined: a [m, n], b [n, p]; ``right`` is named as the matrix at fault.

    Examples
    --------
    >>> check_inner("X", np.ones((3, 4)), "W_Q", np.ones((2, 3)))  # X [3, 4] @ W_Q [2, 3]: 4 columns, 2 rows
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: W_Q: has 2 rows but X has 4 columns; X @ W_Q needs them equal.
    """
    check_dim(right, b.shape[0], left, a.shape[1],
              "has {size} rows but {other} has {other_size} columns; {other} @ {name} needs them equal.")


def as_mask(mask: object, n_q: int, n_k: int) -> np.ndarray:
    """Return the boolean mask [n_q, n_k] (True = may attend), or raise."""
    try:
        arr = np.asarray(mask)
    except ValueError:  # numpy refuses ragged nestings
        raise AttentionInputError("mask: rows of different lengths; a mask needs equal rows.", matrix="mask") from None
    if arr.dtype != np.bool_:
        raise AttentionInputError(
            f"mask: must be boolean (True = may attend), got dtype {arr.dtype}; "
            "for a 0/1 matrix use mask.astype(bool).",
            matrix="mask",
        )
    if arr.shape != (n_q, n_k):
        raise AttentionInputError(
            f"mask: shape {arr.shape} does not match the scores' shape ({n_q}, {n_k}).", matrix="mask"
        )
    return arr


def divisor_for(scale: object, d_k: int) -> float:
    """The number the scores are divided by: √d_k, 1, or a given positive number."""
    if isinstance(scale, str):
        if scale == "sqrt_dk":
            return float(np.sqrt(d_k))
        if scale == "none":
            return 1.0
        raise AttentionInputError(f'scale: "{scale}" is not one of "sqrt_dk", "none" or a positive number.')
    if isinstance(scale, numbers.Real) and not isinstance(scale, (bool, np.bool_)):
        s = float(scale)
        if np.isfinite(s) and s > 0:
            return s
    raise AttentionInputError(f"scale: the divisor must be a finite number above 0, got {scale!r}.")
