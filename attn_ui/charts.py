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


def format_number(v: float, precision: int) -> str:
    """A number as the learner reads it: fixed decimals, ±∞ spelled out, no '-0.0000'."""
    if np.isneginf(v):
        return "−∞"
    if np.isposinf(v):
        return "+∞"
    text = f"{v:.{precision}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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
        "text": [format_number(v, precision) for v in flat],
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
    data["dark"] = (np.abs(t - 0.5) > 0.3) if kind == "signed" else (t > 0.55)

    x = alt.X("col:O", sort=list(col_labels), title=x_title or None, axis=alt.Axis(labelAngle=0 if c <= 12 else -90))
    y = alt.Y("row:O", sort=list(row_labels), title=y_title or None)
    base = alt.Chart(data).encode(x=x, y=y).properties(
        width=alt.Step(px), height=alt.Step(px), title=title or alt.Undefined
    )
    tooltip = [alt.Tooltip("row:O", title=y_title or "row"), alt.Tooltip("col:O", title=x_title or "column"),
               alt.Tooltip("text:N", title="value")]
    fill = alt.when(alt.datum.masked).then(alt.value(MASKED_COLOUR)).otherwise(
        alt.Color("value:Q", scale=scale, title=None, legend=alt.Legend(orient="right", gradientLength=max(60, px * r)))
    )
    rect = base.mark_rect(stroke="white", strokeWidth=0.5 if px >= 8 else 0).encode(color=fill, tooltip=tooltip)
    if select:
        sel = alt.selection_point(name=select, fields=["row_i", "col_i"], on="click", clear=False)
        rect = rect.add_params(sel)
    if r * c > MAX_TEXT_CELLS or px < 26:
        return rect
    text = base.mark_text(fontSize=max(8, min(12, px // 4))).encode(
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
