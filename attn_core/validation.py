"""Checks that run before any arithmetic. Every failure is an AttentionInputError."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import N_, AttentionInputError

#: how many bad cells of one matrix an error describes besides the first (``err.more``); ``err.n_more`` counts them all
MORE_CELLS = 10


def as_matrix(name: str, a: object) -> np.ndarray:
    """Return ``a`` as a finite float64 matrix, or raise naming ``name`` and the bad cell.

    The error names the first bad cell in reading order (row by row); every other bad cell is in ``err.more`` (one
    error each, in the same order, up to :data:`MORE_CELLS` of them) and counted in ``err.n_more``.

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
    >>> try:
    ...     as_matrix("X", [["a", 1.0], [2.0, float("inf")]])
    ... except AttentionInputError as err:
    ...     print(err.cell, [e.cell for e in err.more], err.n_more)
    (0, 0) [(1, 1)] 1
    """
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.array(a, dtype=object)
        except ValueError:  # numpy refuses some ragged nestings outright
            arr = None
        if arr is None or (arr.ndim == 1 and arr.size and all(isinstance(r, (list, tuple, np.ndarray)) for r in arr)):
            raise AttentionInputError(N_("{name}: rows of different lengths; a matrix needs equal rows."), name=name,
                                      matrix=name)
    if arr.ndim != 2:
        raise AttentionInputError(N_("{name}: expected a matrix (2 dimensions), got {ndim}."), name=name, ndim=arr.ndim,
                                  matrix=name)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise AttentionInputError(N_("{name}: the matrix is empty (shape {rows} × {cols})."), name=name,
                                  rows=arr.shape[0], cols=arr.shape[1], matrix=name)
    if arr.dtype.kind in "iuf":  # not "b": True/False are not numbers, as for the cells of a list
        out = arr.astype(np.float64, copy=False)
    elif arr.dtype.kind == "O":
        out = _plain_numbers(arr)
    else:
        raise AttentionInputError(N_("{name}: cells must be numbers, got dtype {dtype}."), name=name,
                                  dtype=arr.dtype, matrix=name)
    if out is None:  # some cell is not a Python float or int, or an int beyond float64: named cell by cell
        out = _cell_by_cell(name, arr)
    if not np.isfinite(out).all():  # one pass when every cell is finite, the common case
        cells, total = _non_finite_cells(out, MORE_CELLS + 1)
        raise naming_all([_non_finite_error(name, i, j, what) for i, j, what in cells], total)
    return out


def _cell_by_cell(name: str, arr: np.ndarray) -> np.ndarray:  # object [r, c] -> float64 [r, c]
    """Each cell as ``float(v)``; raise naming every cell that is not a real number, is beyond float64 or is not
    finite, in reading order (:func:`naming_all`)."""
    values, bad, total = [], [], 0
    for k, v in enumerate(arr.ravel().tolist()):
        x = _real(v)
        if x is None or not math.isfinite(x):
            total += 1
            if len(bad) <= MORE_CELLS:  # what is wrong said for the first few only
                bad.append(_cell_error(name, *divmod(k, arr.shape[1]), v))
        values.append(x)
    if bad:
        raise naming_all(bad, total)
    return np.array(values, dtype=np.float64).reshape(arr.shape)


def _is_real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))  # True/False are no numbers here


def _real(v: object) -> float | None:
    """``float(v)`` of a real number, None for any other cell or an int beyond float64."""
    if _is_real(v):
        try:
            return float(v)
        except OverflowError:  # a Python int beyond float64
            return None
    return None


def _cell_error(name: str, i: int, j: int, v: object) -> AttentionInputError:
    """What is wrong with cell (i, j), holding ``v``: no real number, beyond float64, or not finite."""
    if (x := _real(v)) is not None:
        return _non_finite_error(name, i, j, _non_finite_word(x))
    if _is_real(v):
        return AttentionInputError(N_("{name}: cell ({i}, {j}) is beyond ±1.8e308, too large for a float64."),
                                   name=name, i=i, j=j, matrix=name, cell=(i, j))
    return AttentionInputError(N_("{name}: cell ({i}, {j}) is {v!r}, not a number."), name=name, i=i, j=j, v=v,
                               matrix=name, cell=(i, j))


def naming_all(errors: list[AttentionInputError], total: int) -> AttentionInputError:
    """The first of ``errors`` (each about one cell, in reading order) carrying the others (``more``) and how many
    bad cells there are besides it (``n_more``: ``total - 1``, of which ``errors`` holds the first few)."""
    first = errors[0]
    first.more, first.n_more = tuple(errors[1:]), total - 1
    return first


def _non_finite_error(name: str, i: int, j: int, what: str,
                      hint: str = N_("every cell must be a finite number")) -> AttentionInputError:
    return AttentionInputError(N_("{name}: cell ({i}, {j}) is {what}; {hint}."), name=name, i=i, j=j, what=what,
                               hint=hint, matrix=name, cell=(i, j))


def _non_finite_word(v: float) -> str:
    return "NaN" if np.isnan(v) else ("+inf" if v > 0 else "-inf")


def _non_finite_cells(a: np.ndarray, most: int) -> tuple[list[tuple[int, int, str]], int]:  # a [r, c]
    """The first ``most`` non-finite cells of ``a`` in reading order (row, column, "NaN", "+inf" or "-inf") and how
    many there are in all; beside ``a``, a mask of it and at most a row's positions at a time are held."""
    bad = ~np.isfinite(a)  # bool [r, c]
    cells = []
    for i in np.flatnonzero(bad.any(axis=1)).tolist():  # the rows with a non-finite cell
        for j in np.flatnonzero(bad[i]).tolist()[:most - len(cells)]:
            cells.append((i, j, _non_finite_word(a[i, j])))
        if len(cells) == most:
            break
    return cells, int(np.count_nonzero(bad))


def _plain_numbers(arr: np.ndarray) -> np.ndarray | None:  # object [r, c] -> float64 [r, c], or None
    """An object matrix whose every cell is a Python float or int (a grid's cells as the editor reads them) as
    float64 in one conversion, the same values ``float(v)`` gives cell by cell; None for any other cell (a bool,
    a text, None, a numpy scalar) or an int beyond float64, which the caller names cell by cell."""
    cells = arr.ravel().tolist()
    if not set(map(type, cells)) <= {float, int}:
        return None
    try:
        return np.array(cells, dtype=np.float64).reshape(arr.shape)
    except OverflowError:
        return None


def _first_non_finite(a: np.ndarray) -> tuple[int, int, str] | None:
    """Row, column and "NaN", "+inf" or "-inf" of the first non-finite cell of ``a`` (row-major), or None."""
    if np.isfinite(a).all():  # the common case, checked in one pass
        return None
    return _non_finite_cells(a, 1)[0][0]


def check_finite(name: str, a: np.ndarray, *, hint: str = N_("every cell must be a finite number")) -> None:
    """Raise naming the first non-finite cell of ``a`` (row-major order); ``hint`` (marked with N_) says what to do.

    >>> check_finite("X", np.array([[1.0, np.inf]]))
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: X: cell (0, 1) is +inf; every cell must be a finite number.
    """
    bad = _first_non_finite(a)
    if bad is not None:
        raise _non_finite_error(name, *bad, hint=hint)


def check_overflow(name: str, a: np.ndarray, first: str, second: str | None = None) -> None:
    """Raise if an intermediate overflowed float64 (|value| > 1.8e308), naming the one or two matrices it came from.

    >>> check_overflow("Q", np.array([[np.inf]]), "X", "W_Q")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: Q: cell (0, 0) is +inf; ...: make the entries of X and W_Q smaller.
    """
    bad = _first_non_finite(a)
    if bad is None:
        return
    i, j, what = bad
    if second is None:
        template = N_("{name}: cell ({i}, {j}) is {what}; it overflowed float64 (beyond ±1.8e308): make the entries "
                      "of {first} smaller.")
    else:
        template = N_("{name}: cell ({i}, {j}) is {what}; it overflowed float64 (beyond ±1.8e308): make the entries "
                      "of {first} and {second} smaller.")
    params = {"first": first} if second is None else {"first": first, "second": second}
    raise AttentionInputError(template, name=name, i=i, j=j, what=what, **params, matrix=name, cell=(i, j))


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
        The whole message, marked with ``N_`` for the catalogs: an English template starting ``"{name}: "``, with
        ``{name}``, ``{size}``, ``{other}`` and ``{other_size}`` filled in. A template that does not start with
        ``{name}`` is the message after ``"name: "`` (the prefix is added).

    Raises
    ------
    AttentionInputError
        If ``size != other_size``, with ``matrix=name``.

    Examples
    --------
    >>> k, v = np.ones((3, 2)), np.ones((2, 4))  # K [n_k, d_k] with n_k = 3; V [2, d_v]: one value row short
    >>> check_dim("V", v.shape[0], "K", k.shape[0],
    ...           N_("{name}: has {size} rows but {other} has {other_size}; one value per key."))
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: V: has 2 rows but K has 3; one value per key.
    """
    if size != other_size:
        template = detail if detail.startswith("{name}") else "{name}: " + detail
        raise AttentionInputError(template, name=name, size=size, other=other, other_size=other_size, matrix=name)


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
              N_("{name}: has {size} rows but {other} has {other_size} columns; {other} @ {name} needs them equal."))


def as_mask(mask: object, n_q: int, n_k: int) -> np.ndarray:
    """Return the boolean mask [n_q, n_k] (True = may attend), or raise."""
    try:
        arr = np.asarray(mask)
    except ValueError:  # numpy refuses ragged nestings
        raise AttentionInputError(N_("mask: rows of different lengths; a mask needs equal rows."),
                                  matrix="mask") from None
    if arr.dtype != np.bool_:
        raise AttentionInputError(
            N_("mask: must be boolean (True = may attend), got dtype {dtype}; for a 0/1 matrix use mask.astype(bool)."),
            dtype=arr.dtype, matrix="mask",
        )
    if arr.shape != (n_q, n_k):
        raise AttentionInputError(
            N_("mask: shape {shape} does not match the scores' shape ({n_q}, {n_k})."), shape=arr.shape, n_q=n_q,
            n_k=n_k, matrix="mask",
        )
    return arr


def divisor_for(scale: object, d_k: int) -> float:
    """The number the scores are divided by: √d_k, 1, or a given positive number."""
    if isinstance(scale, str):
        if scale == "sqrt_dk":
            return float(np.sqrt(d_k))
        if scale == "none":
            return 1.0
        raise AttentionInputError(N_('scale: "{scale}" is not one of "sqrt_dk", "none" or a positive number.'),
                                  scale=scale)
    if isinstance(scale, numbers.Real) and not isinstance(scale, (bool, np.bool_)):
        s = float(scale)
        if np.isfinite(s) and s > 0:
            return s
    raise AttentionInputError(N_("scale: the divisor must be a finite number above 0, got {scale!r}."), scale=scale)
