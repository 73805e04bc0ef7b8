"""Altair chart factories: they take arrays and labels, return charts, and never call st.

Test them through ``chart.to_dict()``.
"""

from __future__ import annotations

from typing import Literal

import altair as alt
import numpy as np
import pandas as pd

Kind = Literal["signed", "weights", "mask"]

#: colour-blind-safe schemes: diverging around 0 for signed matrices, one hue for weights
SCHEMES = {"signed": "blueorange", "weights": "blues", "mask": "greys"}
MASKED_COLOUR = "#d9d9d9"  # a masked (-inf) cell: grey, distinct from any small weight
MAX_TEXT_CELLS = 400  # above this, the numbers are dropped from the cells (unreadable anyway)


def cell_px(n_rows: int, n_cols: int, *, largest: int = 44, budget: int = 640) -> int:
    """Pixel size of a square cell so the heatmap stays within ``budget`` pixels."""
    return int(max(2, min(largest, budget // max(n_rows, n_cols, 1))))


def shows_text(n_rows: int, n_cols: int, px: int) -> bool:
    """Whether a heatmap writes its numbers on the cells (not when they are too many or too small)."""
    return n_rows * n_cols <= MAX_TEXT_CELLS and px >= 26


def font_px(px: int) -> int:
    return max(8, min(12, px // 4))


def cell_width(px: int, longest_text: int) -> int:
    """Width of a cell ``px`` high that must hold numbers of ``longest_text`` characters (0: no text)."""
    return max(px, int(0.62 * font_px(px) * longest_text) + 8)


def row_height(n_rows: int, px: int, *, least: int = 18, budget: int = 640) -> int:
    """Row height: at least ``least`` px (a readable row label) while the rows fit in ``budget`` px."""
    return px if px >= least or n_rows * least > budget else least


def heatmap_width(values: np.ndarray, row_labels: list[str], precision: int) -> int:  # values [r, c]
    """Approximate pixel width of :func:`heatmap` (row labels, cells, legend), to lay heatmaps side by side."""
    r, c = values.shape
    px = cell_px(r, c)
    longest = max(map(len, format_numbers(values.ravel(), precision))) if shows_text(r, c, px) else 0
    return 6 * max(len(s) for s in row_labels) + 30 + c * cell_width(px, longest) + 60


def format_number(v: float, precision: int) -> str:
    """A number as the learner reads it: fixed decimals (or 1.2345e+12 from 1e9 on), ±∞ spelled out, no '-0.0000'.

    Examples
    --------
    >>> format_number(-0.00001, 4), format_number(2.5, 2), format_number(float("-inf"), 4), format_number(3e12, 1)
    ('0.0000', '2.50', '−∞', '3.0e+12')
    """
    return format_numbers(np.array([v], dtype=float), precision)[0]


def format_numbers(values: np.ndarray, precision: int) -> list[str]:  # [n] -> n strings
    """:func:`format_number` of every value (fast: Python floats, no numpy scalar per cell)."""
    return [_tidy(f"{v:.{precision}{'f' if -1e9 < v < 1e9 else 'e'}}") for v in values.tolist()]


def _tidy(text: str) -> str:
    """'-inf' -> '−∞', 'inf' -> '+∞', '-0.0000' -> '0.0000'."""
    if text.startswith("-"):
        if text == "-inf":
            return "−∞"
        return text[1:] if not text.strip("-0.") else text
    return "+∞" if text == "inf" else text


def long_frame(values: np.ndarray, row_labels: list[str], col_labels: list[str], precision: int) -> pd.DataFrame:
    """[r, c] -> r·c rows of (row, col, row_i, col_i, value, text, masked); -inf cells get value None."""
    r, c = values.shape
    flat = values.ravel()
    finite = np.isfinite(flat)
    return pd.DataFrame({
        "row": np.repeat(row_labels, c),
        "col": np.tile(col_labels, r),
        "row_i": np.repeat(np.arange(r), c),
        "col_i": np.tile(np.arange(c), r),
        "value": np.where(finite, flat, np.nan),
        "text": format_numbers(flat, precision),
        "masked": ~finite,
    })


def heatmap(
    values: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    *,
    title: str = "",
    kind: Kind = "signed",
    precision: int = 4,
    domain: tuple[float, float] | None = None,
    x_title: str = "",
    y_title: str = "",
    px: int | None = None,
    select: str | None = None,
    masked: np.ndarray | None = None,
) -> alt.LayerChart | alt.Chart:  # values [r, c]
    """A heatmap with the numbers on the cells; masked (-inf) cells grey and marked −∞.

    Parameters
    ----------
    values : ndarray of shape (r, c)
    row_labels, col_labels : list of str
        Unique labels, in order (e.g. "0: input1").
    kind : "signed", "weights" or "mask"
        Diverging colours centred on 0, sequential 0..1, or greys.
    domain : (lo, hi), optional
        A shared colour domain, so side-by-side heatmaps compare.
    select : str, optional
        Name of a click selection on the cell (fields row_i, col_i), for ``on_select``.
    masked : ndarray of bool, shape (r, c), optional
        Cells to draw grey as masked even though their value is finite (e.g. weights of masked keys).
    """
    r, c = values.shape
    data = long_frame(values, row_labels, col_labels, precision)
    if masked is not None:
        data["masked"] = data["masked"].to_numpy() | np.asarray(masked, dtype=bool).ravel()
    px = px or cell_px(r, c)
    finite = data["value"].dropna()
    if domain is None:
        if kind == "weights":
            domain = (0.0, 1.0)
        elif kind == "mask":
            domain = (0.0, 1.0)
        else:
            m = float(np.abs(finite).max()) if len(finite) else 1.0
            domain = (-m or -1.0, m or 1.0)
    lo, hi = domain
    span = (hi - lo) or 1.0
    scale = alt.Scale(scheme=SCHEMES[kind], domain=[lo, hi], **({"domainMid": 0} if kind == "signed" else {}))
    t = (data["value"].fillna(lo) - lo) / span
    data["dark"] = ((np.abs(t - 0.5) > 0.3) if kind == "signed" else (t > 0.55)) & ~data["masked"]  # grey: black text
    data["value"] = data["value"].fillna(lo)  # a null value would drop the masked cell's rect (Vega-Lite "invalid")

    show_text = shows_text(r, c, px)
    font = font_px(px)
    width_px = cell_width(px, int(data["text"].str.len().max()) if show_text else 0)
    height_px = row_height(r, px)
    flat = c <= 12 and max((len(str(s)) for s in col_labels), default=0) * 6 <= width_px  # labels fit their cells
    angle = 0 if flat else (-45 if c <= 12 else -90)
    x = alt.X("col:O", sort=list(col_labels), title=x_title or None,
              axis=alt.Axis(labelAngle=angle, labelOverlap="greedy"))  # greedy: hide labels that would overlap
    y = alt.Y("row:O", sort=list(row_labels), title=y_title or None, axis=alt.Axis(labelOverlap="greedy"))
    base = alt.Chart(data).encode(x=x, y=y).properties(
        width=alt.Step(width_px), height=alt.Step(height_px),
        **({"title": title} if title else {}),  # never alt.Undefined: altair 6 rejects it
    )
    tooltip = [alt.Tooltip("row:O", title=y_title or "row"), alt.Tooltip("col:O", title=x_title or "column"),
               alt.Tooltip("text:N", title="value")]
    fill = alt.when(alt.datum.masked).then(alt.value(MASKED_COLOUR)).otherwise(
        alt.Color("value:Q", scale=scale, title=None,
                  legend=alt.Legend(orient="right", gradientLength=max(60, height_px * r)))
    )
    rect = base.mark_rect(stroke="white", strokeWidth=0.5 if px >= 8 else 0).encode(color=fill, tooltip=tooltip)
    if select:
        sel = alt.selection_point(name=select, fields=["row_i", "col_i"], on="click", clear=False)
        rect = rect.add_params(sel)
    if not show_text:
        return rect
    text = base.mark_text(fontSize=font).encode(
        text="text:N",
        color=alt.when(alt.datum.dark).then(alt.value("white")).otherwise(alt.value("black")),
    )
    return alt.layer(rect, text)


def shared_domain(*matrices: np.ndarray, kind: Kind = "signed") -> tuple[float, float]:
    """One colour domain for several heatmaps shown side by side (finite cells only)."""
    if kind != "signed":
        return (0.0, 1.0)
    m = max((float(np.abs(a[np.isfinite(a)]).max()) for a in matrices if np.isfinite(a).any()), default=1.0)
    return (-m or -1.0, m or 1.0)
