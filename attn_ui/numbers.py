"""Number formatting: how every number the app shows is written, in one place.

Three styles of one formatter:

- ``"fixed"``: fixed decimals, as in heatmap cells and grids ("1.8639", "0.5000"); 1e9 and beyond in
  scientific notation;
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
    >>> format_numbers(np.array([-0.00001, 2.5, -np.inf, 3e12]), 4)
    ['0.0000', '2.5000', '−∞', '3.0000e+12']
    >>> format_numbers(np.array([2.0, 0.5, 1.86387, -0.00001, 1e10]), 4, "short")
    ['2', '0.5', '1.8639', '0', '1.0000e+10']
    >>> format_numbers(np.array([8.218407461554972e+307, 1e-4, np.inf, np.nan]), 5, "sig")
    ['8.2184e+307', '0.0001', '+∞', 'NaN']
    """
    if style == "sig":
        return [_tidy(f"{v:.{precision}g}") for v in values.tolist()]
    texts = [_tidy(f"{v:.{precision}{'f' if -1e9 < v < 1e9 else 'e'}}") for v in values.tolist()]
    return [_trim(t) for t in texts] if style == "short" else texts


def format_number(v: float, precision: int, style: Style = "fixed") -> str:
    """One number in ``style`` (see :func:`format_numbers`).

    >>> format_number(-0.00001, 4), format_number(2.5, 2), format_number(float("-inf"), 4), format_number(3e12, 1)
    ('0.0000', '2.50', '−∞', '3.0e+12')
    """
    return format_numbers(np.array([v], dtype=float), precision, style)[0]


def _tidy(text: str) -> str:
    """'-inf' -> '−∞', 'inf' -> '+∞', 'nan' -> 'NaN', '-0.0000' -> '0.0000'."""
    if text.startswith("-"):
        if text == "-inf":
            return "−∞"
        return text[1:] if not text.strip("-0.") else text
    return {"inf": "+∞", "nan": "NaN"}.get(text, text)


def _trim(text: str) -> str:
    """'0.5000' -> '0.5', '2.0000' -> '2' (not in scientific notation, where the digits are the precision)."""
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
