"""Numbers as the learner reads and writes them: how every number the app shows is written, and how a number
typed into a grid is read, in one place.

Three styles of one formatter:

- ``"fixed"``: one notation for a whole chart, table column or grid (:func:`notation`), chosen from its values:
  whole numbers without decimals ("1", "16"); else ``precision`` fixed decimals ("1.8639", "0.5000"), a value
  too small to show at that precision written "<0.0001" (never 1e-11 beside 0.98); else, for values of 10,000
  and beyond or all too small to show, scientific notation with ``precision`` decimals ("1.2346e6");
- ``"short"``: each number on its own with trailing zeros dropped, for prose and worked sums ("2", "0.5",
  "1.8639", "1e-05");
- ``"sig"``: ``precision`` significant digits, for tables whose numbers span many magnitudes ("8.2184e+307").

Every digit of a value (the shortest text that reads back as exactly that float64) is :func:`exact_texts`: what a
chart's tooltip and a grid's "Every digit" show. Infinities are spelled ``−∞``/``+∞`` and a negative zero loses
its sign; NaN is "NaN".
"""

from __future__ import annotations

import math
import re
from typing import Literal

import numpy as np

Style = Literal["fixed", "short", "sig"]
Notation = Literal["integer", "fixed", "scientific"]

#: at and beyond this, numbers that are not all whole are written in scientific notation ("12345.6789" is wider
#: than "1.2346e4" and its digits are harder to count)
SCIENTIFIC_FROM = 1e4
#: whole numbers are written out up to this ("999999"), in scientific notation beyond
WHOLE_UP_TO = 1e6
MINUS = "\u2212"  # "−": how a negative number is written (and read back: parse_number)
#: up to this many values, :func:`notation` and :func:`write` look at them one by one in Python: for a few cells
#: (a 3 × 3 heatmap) numpy's cost per call, a dozen calls, was most of the work (format_numbers of 9 values: 71 → 37 µs)
SMALL = 64


def notation(values: np.ndarray, precision: int) -> Notation:  # [...] -> one notation for all of them
    """The one notation ``values`` are written in by the "fixed" style, from their finite values' range.

    Examples
    --------
    >>> notation(np.array([1.0, 16.0, -3.0, -np.inf]), 4), notation(np.array([0.98, 1e-11]), 4)
    ('integer', 'fixed')
    >>> notation(np.array([1e6, 0.5]), 4), notation(np.array([2e-5, -1e-6]), 4), notation(np.array([2e-5]), 6)
    ('scientific', 'scientific', 'fixed')
    """
    if values.size <= SMALL:
        finite = [v for v in values.astype(float, copy=False).ravel().tolist() if math.isfinite(v)]
        big = max(map(abs, finite), default=None)
        whole = big is not None and all(v.is_integer() for v in finite)
    else:
        kept = values[np.isfinite(values)]
        big = float(np.abs(kept).max()) if kept.size else None
        whole = big is not None and bool((kept == np.round(kept)).all())
    if big is None:
        return "fixed"
    if big < WHOLE_UP_TO and whole:
        return "integer"
    if big >= SCIENTIFIC_FROM or big < 0.5 * 10.0**-precision:  # too big for fixed, or every one would read 0
        return "scientific"
    return "fixed"


def format_numbers(values: np.ndarray, precision: int, style: Style = "fixed") -> list[str]:  # [n] -> n strings
    """Every value written in ``style`` (fast: Python floats, no numpy scalar per cell).

    Examples
    --------
    >>> format_numbers(np.array([1.0, 16.0, -0.0, -np.inf]), 4)
    ['1', '16', '0', '−∞']
    >>> format_numbers(np.array([0.98, 0.0014, 6.034e-06, -1.526e-11, 0.0, -0.5]), 4)
    ['0.9800', '0.0014', '<0.0001', '>−0.0001', '0.0000', '−0.5000']
    >>> format_numbers(np.array([1e6, 2.5, 0.0, -3e-7, np.nan]), 4)
    ['1.0000e6', '2.5000e0', '0', '−3.0000e−7', 'NaN']
    >>> format_numbers(np.array([2.0, 0.5, 1.86387, -0.00001, 1.23456e10]), 4, "short")
    ['2', '0.5', '1.8639', '−1e-05', '1.235e+10']
    >>> format_numbers(np.array([8.218407461554972e+307, 1e-4, np.inf, np.nan]), 5, "sig")
    ['8.2184e+307', '0.0001', '+∞', 'NaN']
    """
    if style == "sig":
        return [_tidy(f"{v:.{precision}g}") for v in values.tolist()]
    if style == "short":
        return [_trim(t) for t in _each_fixed(values, precision)]
    return grid_texts(values, precision)


def write(values: np.ndarray, how: Notation, precision: int) -> list[str]:  # [n] -> n strings
    """Every value in notation ``how`` (see :func:`notation`), ``precision`` decimals where it has decimals.

    >>> write(np.array([0.25, 3e-9, 0.0]), "fixed", 2), write(np.array([0.25, -1234.5]), "scientific", 2)
    (['0.25', '<0.01', '0.00'], ['2.50e−1', '−1.23e3'])
    """
    if how == "integer":
        return [_tidy(f"{v:.0f}") for v in values.tolist()]
    if how == "scientific":
        return [_tidy(_exponent(f"{v:.{precision}e}")) if v and np.isfinite(v) else _tidy(f"{v:.0f}")
                for v in values.tolist()]
    tiny = 0.5 * 10.0**-precision  # below it, fixed decimals would show 0
    step = f"{10.0**-precision:.{precision}f}"  # "0.0001"
    every = values.tolist()
    if len(every) <= SMALL:
        return _write_each(every, precision, tiny, step)
    texts = list(map(f"{{:.{precision}f}}".format, every))  # as they are: a finite value ≥ tiny, or 0 (most of them)
    shown_negative = (values < -tiny) & np.isfinite(values)  # "-0.25": rounds away from 0, so "−" + its digits
    for i in np.flatnonzero(shown_negative).tolist():
        texts[i] = MINUS + texts[i][1:]
    special = (np.signbit(values) & ~shown_negative) | ~np.isfinite(values) | ((values > 0) & (values < tiny))
    for i in np.flatnonzero(special).tolist():  # the others: −0, ±∞, NaN, a value too small to show
        v = every[i]
        texts[i] = "<" + step if 0 < v < tiny else ">" + MINUS + step if -tiny < v < 0 else _tidy(texts[i])
    return texts


def _write_each(every: list[float], precision: int, tiny: float, step: str) -> list[str]:  # n -> n strings
    """:func:`write`'s fixed decimals, value by value (a few values: see :data:`SMALL`), the same texts.

    >>> _write_each([0.25, -0.25, 3e-9, -3e-9, -0.0, -5e-3, float("-inf"), float("nan")], 2, 0.005, "0.01")
    ['0.25', '−0.25', '<0.01', '>−0.01', '0.00', '−0.01', '−∞', 'NaN']
    """
    fixed = f"{{:.{precision}f}}".format
    texts = []
    for v in every:
        if v < -tiny:  # shown negative: "−" and its digits (−∞ too)
            texts.append(MINUS + fixed(v)[1:] if v != -math.inf else _tidy("-inf"))
        elif v >= tiny or v == 0:  # as it is (+∞ spelled; −0 loses its sign)
            texts.append(fixed(v) if 0 < v < math.inf else _tidy(fixed(v)))
        elif 0 < v:
            texts.append("<" + step)
        elif v < 0:  # −tiny itself rounds away from 0 or to it, as its text says
            texts.append(">" + MINUS + step if -tiny < v else _tidy(fixed(v)))
        else:  # NaN
            texts.append(_tidy(fixed(v)))
    return texts


def _fewest_decimals(texts: list[str], precision: int) -> list[str]:
    """Fixed-decimal texts with the decimals no value needs dropped from all alike: the fewest decimals that change
    no value's text (a row sum 0.9999999999999999 beside 1 reads "1", 4.5 beside 2 reads "4.5" and "2.0"). Beside a
    "<0.0001" mark every value keeps its decimals: the mark says what the precision is.

    >>> _fewest_decimals(["1.0000", "1.0000"], 4), _fewest_decimals(["4.5000", "2.0000", "<0.0001"], 4)
    (['1', '1'], ['4.5000', '2.0000', '<0.0001'])
    >>> _fewest_decimals(["0.1361", "0.0000"], 4), _fewest_decimals(["+∞", "2.50"], 2)
    (['0.1361', '0.0000'], ['+∞', '2.5'])
    """
    if precision <= 0:
        return texts
    drop = precision + 1  # the trailing zeros every value has (≤ precision); more: no value with decimals yet
    for t in texts:
        if t[0] in "<>":  # a mark: every value keeps its decimals
            return texts
        if "." in t:
            drop = min(drop, len(t) - len(t.rstrip("0")))
            if not drop:  # a value needs every decimal (a mark further on would keep them too): seen at once
                return texts
    if drop > precision:  # no value with decimals
        return texts
    cut = drop + 1 if drop == precision else drop  # every decimal: the point goes too
    return [t[:-cut] if "." in t else t for t in texts]


def format_number(v: float, precision: int, style: Style = "fixed") -> str:
    """One number in ``style`` (see :func:`format_numbers`).

    >>> format_number(2.0, 4), format_number(2.5, 2), format_number(float("-inf"), 4), format_number(0.00001, 4)
    ('2', '2.5', '−∞', '1.0000e−5')
    """
    return format_numbers(np.array([v], dtype=float), precision, style)[0]


def exact_texts(values: np.ndarray) -> list[str]:  # [n] -> n strings
    """Every digit: the shortest text that reads back (:func:`parse_number`) as exactly each value.

    >>> exact_texts(np.array([0.1, 1 / 3, -2.0, 1e-11, 4.9999999999999994e29, -np.inf]))
    ['0.1', '0.3333333333333333', '−2', '1e-11', '4.9999999999999994e+29', '−∞']
    """
    return [_tidy(t[:-2] if t.endswith(".0") else t) for t in map(repr, values.tolist())]


def grid_texts(values: np.ndarray, precision: int, how: Notation | None = None) -> list[str]:  # [n] -> n strings
    """Grid cells' texts: the matrix's numbers in one notation, as its heatmap writes them (``how``: the
    notation of the whole matrix when ``values`` are some of its cells; by default chosen from ``values``).

    A text typed back unchanged leaves the value as it was (the grid editor recognises the cell's own text);
    any other text is read exactly (:func:`parse_number`).

    >>> grid_texts(np.array([1.0, 16.0, 0.0]), 4), grid_texts(np.array([0.5, 1 / 3, -0.0]), 4)
    (['1', '16', '0'], ['0.5000', '0.3333', '0.0000'])
    """
    if how is not None:
        return write(values, how, precision)
    how = notation(values, precision)
    texts = write(values, how, precision)
    return _fewest_decimals(texts, precision) if how == "fixed" else texts


def grid_text(v: float, precision: int, how: Notation | None = None) -> str:
    """One grid cell's text (see :func:`grid_texts`): ``how``, the notation of its matrix.

    >>> grid_text(1 / 3, 2), grid_text(1 / 3, 2, "scientific"), grid_text(-0.0, 2)
    ('0.33', '3.33e−1', '0')
    """
    return grid_texts(np.array([v], dtype=float), precision, how)[0]


def parse_number(text: str) -> float:
    """A number as typed: what Python's ``float()`` reads (``1e-3``, ``-2.5E+2``, ``.5``, ``1_000``), with the
    "−" (U+2212) minus the app prints read as "-". Raises ValueError for anything else.

    >>> parse_number("1e-3"), parse_number(" −2.5E+2 "), parse_number(".5"), parse_number("1.5e−3")
    (0.001, -250.0, 0.5, 0.0015)
    >>> parse_number("1,5")
    Traceback (most recent call last):
    ...
    ValueError: could not convert string to float: '1,5'
    """
    return float(text.strip().replace(MINUS, "-"))


def _each_fixed(values: np.ndarray, precision: int) -> list[str]:  # [n] -> n strings
    """Each value on its own: ``precision`` decimals; one that would show as 0 at that precision, and 1e9 and
    beyond, with ``precision`` significant digits in scientific notation ("1e-05", "5e+29")."""
    tiny, digits = 0.5 * 10.0**-precision, max(precision, 1)
    return [_tidy(f"{v:.{precision}f}" if v == 0 or tiny <= abs(v) < 1e9 else f"{v:.{digits}g}")
            for v in values.tolist()]


_EXPONENT = re.compile(r"e([+-])0*(\d)")


def _exponent(text: str) -> str:
    """'1.2346e+06' -> '1.2346e6', '2.5000e-01' -> '2.5000e−1' (no plus sign, no leading zeros, the minus sign)."""
    return _EXPONENT.sub(lambda m: "e" + (MINUS if m[1] == "-" else "") + m[2], text)


def _tidy(text: str) -> str:
    """'-2.5' -> '−2.5' (the minus sign, as the charts' axes and legends write it), '-inf' -> '−∞', 'inf' -> '+∞',
    'nan' -> 'NaN', '-0.0000' -> '0.0000'."""
    if text.startswith("-"):
        if text == "-inf":
            return "−∞"
        return text[1:] if not text.strip("-0.") else MINUS + text[1:]
    return {"inf": "+∞", "nan": "NaN"}.get(text, text)


def _trim(text: str) -> str:
    """'0.5000' -> '0.5', '2.0000' -> '2' (not in scientific notation, where the digits are the precision)."""
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
