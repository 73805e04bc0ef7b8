"""A first request straight to a page's address, on a fresh server, opens that page through the router.

Streamlit's legacy ``pages/`` support runs such a page without streamlit_app.py until a run in the
process has called st.navigation; attn_ui.shell.frame.page_start then draws the frame and reruns once through the
router, so the page's widgets keep their ids from the first run on (a grid's first edit was lost).
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page

from attn_ui.widgets.numbers import grid_texts

from .helpers import (
    assert_no_exception,
    chart_after,
    edit_grid_cell,
    goto_page,
    grid_after,
    grid_cell_text,
    heatmap_values,
    open_app,
    start_server,
    stop_server,
    wait_for_app,
)
from .seed000 import X, attention

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("path", "title"), [("steps", "Step by step"), ("masking", "Masking")])
def test_cold_server_deep_link_opens_the_page_with_the_app_navigation(page, tmp_path, path, title):
    proc, url = start_server(tmp_path / "streamlit.log")  # a fresh process: no st.navigation has run yet
    try:
        page.goto(f"{url}/{path}")
        wait_for_app(page)
        page.get_by_role("heading", name=title, level=1).wait_for()
        nav = page.get_by_test_id("stSidebarNav").inner_text()
        assert "Inputs & weights" in nav and "Share & export" in nav  # the router's titles, not file names
        assert "streamlit app" not in nav
        assert page.url.split("?")[0].rstrip("/").endswith(path)
        assert_no_exception(page)
    finally:
        stop_server(proc)


def test_cold_server_deep_link_to_inputs_keeps_the_first_grid_edit(page: Page, tmp_path) -> None:
    """The server's very first request is /inputs: the first edit of a grid stays, and so does the second (the
    second edit used to put the first one's old value back), and Step by step computes with both."""
    edited = X.copy()
    edited[0, 0], edited[1, 2] = 7.0, -2.5
    proc, url = start_server(tmp_path / "streamlit.log")  # a fresh process: no st.navigation has run yet
    try:
        open_app(page, f"{url}/inputs")
        page.get_by_role("heading", name="Inputs & weights", level=1).wait_for()
        x_grid = grid_after(page, "X")
        edit_grid_cell(page, x_grid, 0, 0, "7")
        assert grid_cell_text(x_grid, 0, 0) == "7"
        edit_grid_cell(page, x_grid, 1, 2, "-2.5")
        assert [grid_cell_text(x_grid, 0, 0), grid_cell_text(x_grid, 1, 2)] == ["7", "-2.5"]

        goto_page(page, "Step by step")
        out, weights = attention(edited)
        np.testing.assert_allclose(heatmap_values(chart_after(page, "Output"))[2], out, atol=1e-9)
        np.testing.assert_allclose(heatmap_values(chart_after(page, "Weights"))[2], weights, atol=1e-9)
        goto_page(page, "Inputs & weights")  # the grid, drawn anew from the configuration, holds both edits
        x_grid = grid_after(page, "X")
        assert [grid_cell_text(x_grid, i, j) for i in range(3) for j in range(4)] == grid_texts(edited.ravel(), 4)
        assert_no_exception(page)
    finally:
        stop_server(proc)
