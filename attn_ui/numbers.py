"""Numbers as the learner reads and writes them: how every number the app shows is written, and how a number
typed into a grid is read, in one place.

Three styles of one formatter:

- ``"fixed"``: fixed decimals, as in heatmap cells and grids ("1.8639", "0.5000"); a number that would show
  as 0.0000 at that precision, and 1e9 and beyond, with ``precision`` significant digits in scientific
  notation ("1e-05", "5e+29");
- ``"short"``: the same with trailing zeros dropped, for prose and worked sums ("2", "0.5", "1.8639");
- ``"sig"``: ``precision`` significant digits, for tables whose numbers span many magnitudes ("8.2184e+307").

Infinities are spelled ``−∞``/``+∞`` and a negative zero loses its sign; NaN is "NaN".
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Style = Literal["fixed", "short", "sig"]


def format_numbers(values: np.ndarray, precision: int, style: Style = "fixed") -> list[str]:  # [n] -> n strings
    """Every value written in ``style`` (fast: Python floats, no numpy scalar per cell).

    Examples
    --------
    >>> format_numbers(np.array([-0.00001, 2.5, -np.inf, 3e12, 0.0, -0.0]), 4)
    ['−1e-05', '2.5000', '−∞', '3e+12', '0.0000', '0.0000']
    >>> format_numbers(np.array([2.0, 0.5, 1.86387, -0.00001, 1.23456e10]), 4, "short")
    ['2', '0.5', '1.8639', '−1e-05', '1.235e+10']
    >>> format_numbers(np.array([8.218407461554972e+307, 1e-4, np.inf, np.nan]), 5, "sig")
    ['8.2184e+307', '0.0001', '+∞', 'NaN']
    """
    if style == "sig":
        return [_tidy(f"{v:.{precision}g}") for v in values.tolist()]
    tiny, digits = 0.5 * 10.0**-precision, max(precision, 1)  # below tiny, fixed decimals would show 0
    texts = [_tidy(f"{v:.{precision}f}" if v == 0 or tiny <= abs(v) < 1e9 else f"{v:.{digits}g}")
             for v in values.tolist()]
    return [_trim(t) for t in texts] if style == "short" else texts


def format_number(v: float, precision: int, style: Style = "fixed") -> str:
    """One number in ``style`` (see :func:`format_numbers`).

    >>> format_number(0.00001, 4), format_number(2.5, 2), format_number(float("-inf"), 4), format_number(3e12, 1)
    ('1e-05', '2.50', '−∞', '3e+12')
    """
    return format_numbers(np.array([v], dtype=float), precision, style)[0]


ROUNDED = "…"  # ends a grid cell's text that is not exactly the value it stands for
MINUS = "\u2212"  # "−": how a negative number is written (and read back: parse_number)


def grid_texts(values: np.ndarray, precision: int) -> list[str]:  # [n] -> n strings
    """Grid cells' texts: each value at ``precision``, ending in "…" when that text is not exactly the value.

    Typed back unchanged, the text leaves the value as it was (:func:`parse_number` refuses the "…"; the grid
    editor recognises the text as the value's own); any other text is read exactly.

    >>> grid_texts(np.array([0.5, 1 / 3, 1e-5, -0.0, 4.9999999999999994e29]), 4)
    ['0.5000', '0.3333…', '1e-05', '0.0000', '5e+29…']
    """
    texts = format_numbers(values, precision)
    return [t if _reads_as(t, v) else t + ROUNDED for t, v in zip(texts, values.tolist(), strict=True)]


def grid_text(v: float, precision: int) -> str:
    """One grid cell's text (see :func:`grid_texts`).

    >>> grid_text(1 / 3, 2), grid_text(-0.0, 2)
    ('0.33…', '0.00')
    """
    return grid_texts(np.array([v], dtype=float), precision)[0]


def _reads_as(text: str, v: float) -> bool:
    """Whether ``text`` is read back as exactly ``v`` (±∞ and NaN are spelled out: not a grid's values)."""
    try:
        return parse_number(text) == v
    except ValueError:
        return True


def parse_number(text: str) -> float:
    """A number as typed: what Python's ``float()`` reads (``1e-3``, ``-2.5E+2``, ``.5``, ``1_000``), with the
    "−" (U+2212) minus the app prints read as "-". Raises ValueError for anything else.

    >>> parse_number("1e-3"), parse_number(" −2.5E+2 "), parse_number(".5"), parse_number("1e20")
    (0.001, -250.0, 0.5, 1e+20)
    >>> parse_number("1,5")
    Traceback (most recent call last):
    ...
    ValueError: could not convert string to float: '1,5'
    """
    return float(text.strip().replace(MINUS, "-"))


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
