"""Streamlit's floor: what Streamlit itself costs for what the app does, with nothing of the app's.

Two modes, chosen by the first URL of a session:

- the edit floor (default): one data_editor grid and one number derived from it, nothing else. bench/app.py and
  bench/browser.py time an edit of it beside the app's edits. ``?rows=R&cols=C`` sets the grid's size (default
  3 × 4, seed 000's X); the number is the sum of the grid's cells.
- the chart floor, ``?charts=N`` (``&side=S&blocks=B``, default 256 and 32: the caps' n_seq, and the blocks the app
  draws a larger matrix in, attn_ui.widgets.heatmap.BLOCKS): two pages in the sidebar's navigation, "Charts A" and
  "Charts B", each a title and N plain Altair heatmaps of an S × S matrix of its own random numbers, drawn as
  B × B block means (B² rects, a colour legend, axes and a tooltip, on a canvas as the app's large heatmaps). A click
  on the other page's link is a page switch to N heatmaps of the caps' size: bench/browser.py's caps walk times it
  beside each of the app's pages. N is kept in the session (a page switch clears the URL's query parameters).

    .venv/bin/python -m streamlit run bench/floor_app.py
"""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

CHARTS = "floor_charts"  # session state: (N, S, B) of the chart floor, from the session's first URL


def edit_floor() -> None:
    """One data_editor grid and the sum of its cells."""
    rows = int(st.query_params.get("rows", 3))
    cols = int(st.query_params.get("cols", 4))
    start = pd.DataFrame(np.arange(rows * cols, dtype=float).reshape(rows, cols) / 10,
                         columns=[str(j) for j in range(cols)])
    grid = st.data_editor(start, key="floor_grid", num_rows="fixed")
    st.write(f"sum = {grid.to_numpy().sum():.4f}")


def block_heatmap(values: np.ndarray, blocks: int) -> alt.Chart:  # [S, S] -> at most blocks × blocks rects
    """A plain Altair heatmap of ``values``, in ``blocks`` × ``blocks`` block means when it is larger."""
    side = values.shape[0]
    if side > blocks:
        values = values.reshape(blocks, side // blocks, blocks, side // blocks).mean(axis=(1, 3))
    rows, cols = np.indices(values.shape)
    frame = pd.DataFrame({"row": rows.ravel(), "col": cols.ravel(), "value": values.ravel()})
    return alt.Chart(frame).mark_rect().encode(
        x="col:O", y="row:O", color=alt.Color("value:Q", scale=alt.Scale(scheme="blueorange")),
        tooltip=["row:O", "col:O", "value:Q"],
    ).properties(width=alt.Step(12), height=alt.Step(12), usermeta={"embedOptions": {"renderer": "canvas"}})


def charts_page(which: int) -> None:
    """N heatmaps of numbers never drawn before in the session (seeded by the visit): as each page of the app's
    walk, every switch sends and draws new charts, none a message the browser already holds."""
    n, side, blocks = st.session_state[CHARTS]
    st.session_state.visits = st.session_state.get("visits", 0) + 1
    st.title(f"Charts {'AB'[which]}: {n} heatmaps of {side} × {side}")
    rng = np.random.default_rng(st.session_state.visits)
    for _ in range(n):
        st.altair_chart(block_heatmap(rng.standard_normal((side, side)), blocks), width="content")  # as the app


def page_a() -> None:
    charts_page(0)


def page_b() -> None:
    charts_page(1)


if "charts" in st.query_params and CHARTS not in st.session_state:
    st.session_state[CHARTS] = tuple(int(st.query_params.get(name, default)) for name, default in
                                     (("charts", 0), ("side", 256), ("blocks", 32)))
if CHARTS in st.session_state:
    st.navigation([st.Page(page_a, title="Charts A", url_path="a"),
                   st.Page(page_b, title="Charts B", url_path="b")]).run()
else:
    edit_floor()
