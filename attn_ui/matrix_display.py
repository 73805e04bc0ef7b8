"""One intermediate on a page: its title and shape, its formula, a note, and its heatmap."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from . import charts, controls, heatmap


def matrix_block(
    title: str,
    latex: str,
    values: np.ndarray,
    rows: list[str],
    cols: list[str],
    *,
    kind: heatmap.Kind = "signed",
    y_title: str = "",
    x_title: str = "",
    note: str = "",
    domain: tuple[float, float] | None = None,
    key: str | None = None,
    select: str | None = None,
    on_select: str | Callable[[], None] = "rerun",
    masked: np.ndarray | None = None,
) -> object:
    """One intermediate: title, formula, shape, heatmap. Returns the chart's selection event if any.

    With ``select``, ``on_select`` is "rerun" or a callback run (before the page) when the selection changes.
    ``masked`` (bool, the shape of ``values``) draws those cells grey as masked.
    """
    st.markdown(f"**{title}** · shape {values.shape[0]} × {values.shape[1]}")
    if latex:
        st.latex(latex)
    if note:
        st.caption(note)
    chart = heatmap.heatmap(values, rows, cols, kind=kind, precision=controls.precision(), domain=domain,
                            x_title=x_title, y_title=y_title, select=select, masked=masked, name=title)
    if select:
        return charts.show_chart(chart, key=key, on_select=on_select, selection_mode=select)
    return charts.show_chart(chart, key=key)
