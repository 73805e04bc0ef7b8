"""One intermediate on a page: its title and shape, its formula, a note, and its heatmap."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from attn_ui.app.i18n import _
from attn_ui.widgets import charts, controls, heatmap


def formula(latex: str) -> None:
    """A display formula; one whose parts are set apart with ``\\qquad`` is laid out part by part in a row that
    wraps, so a phone (390 px) shows each part whole instead of cutting the line off."""
    parts = [p.strip() for p in latex.split(r"\qquad") if p.strip()]
    if len(parts) == 1:
        st.latex(latex)
        return
    row = st.container(horizontal=True, horizontal_alignment="center", gap="large")
    for part in parts:
        row.latex(part, width="content")


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
    most: int | None = None,
) -> object:
    """One intermediate: title, formula, shape, heatmap. Returns the chart's selection event if any.

    ``title``, ``note`` and the axis titles are shown as they are: the caller translates them (matrix names stay).

    With ``select``, ``on_select`` is "rerun" or a callback run (before the page) when the selection changes.
    ``masked`` (bool, the shape of ``values``) draws those cells grey as masked. ``most``: see heatmap.heatmap.
    """
    st.markdown(_("**{title}** · shape {rows} × {cols}").format(title=title, rows=values.shape[0],
                                                                 cols=values.shape[1]))
    if latex:
        formula(latex)
    if note:
        st.caption(note)
    chart = heatmap.heatmap(values, rows, cols, kind=kind, precision=controls.precision(), domain=domain,
                            x_title=x_title, y_title=y_title, select=select, masked=masked, name=title, most=most)
    if select:
        return charts.show_chart(chart, key=key, on_select=on_select, selection_mode=select)
    return charts.show_chart(chart, key=key)
