"""The edit panel in real Chromium (issue 28): on Step by step at 1400 × 900 the grid of X is on the first screen,
in the sidebar beside the steps; a cell typed there changes Q, the weights and the output on the page in one rerun,
and Inputs & weights holds the same edit (one configuration).

Expected numbers are seed 000's matrices through numpy written out in tests/e2e/seed000.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .helpers import chart_after, edit_grid_cell, goto_page, grid_after, grid_cell_text, heatmap_values
from .seed000 import W_Q, X, attention

pytestmark = pytest.mark.e2e

SIDEBAR_GRID = "[data-testid='stSidebar'] [data-testid='stDataFrame']"


def test_an_edit_in_the_panel_recomputes_the_steps_beside_it(app_page: Page) -> None:
    page = app_page
    page.set_viewport_size({"width": 1400, "height": 900})
    goto_page(page, "Step by step")
    grid = page.locator(SIDEBAR_GRID).first
    expect(grid).to_be_visible()
    box = grid.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900, box  # the whole grid on the first screen
    q_box = chart_after(page, "Q").bounding_box()
    assert q_box is not None and q_box["y"] < 900  # and the first step beside it

    edited = X.copy()
    edited[1, 2] = 3.5
    edit_grid_cell(page, grid, 1, 2, "3.5")
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Q"))[2], edited @ W_Q, atol=1e-9)
    out, weights = attention(edited)
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Weights"))[2], weights, atol=1e-9)
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Output"))[2], out, atol=1e-9)

    goto_page(page, "Inputs & weights")  # the same configuration: its X grid holds the edit
    x_grid = grid_after(page, "X")
    expect(x_grid.locator('[data-testid="data-grid-canvas"]')).to_be_visible()
    assert float(grid_cell_text(x_grid, 1, 2).replace("\u2212", "-")) == 3.5
    assert x_grid.bounding_box()["y"] < 900  # Inputs & weights opens on its first grid
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Output"))[2], out, atol=1e-9)  # and its result
