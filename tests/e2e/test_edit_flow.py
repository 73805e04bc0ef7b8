"""Edit one cell of X in the browser grid; Step by step shows the new output; the edit survives page switches.

The expected numbers are computed here with numpy from seed 000's matrices (the app opens on seed 000),
never through the app's code.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from attn_ui.widgets.numbers import grid_texts

from .helpers import chart_after, chart_texts, edit_grid_cell, goto_page, grid_after, grid_cell_text, heatmap_values
from .seed000 import X, attention

pytestmark = pytest.mark.e2e

ROW, COL, NEW = 0, 1, 2.0  # X[0, 1]: 0 -> 2


def numbers(text: str) -> list[float]:
    return [float(s) for s in re.findall(r"-?\d+(?:\.\d+)?", text)]


def test_edit_x_cell_updates_step_by_step_and_persists(app_page: Page, record_property) -> None:
    page = app_page
    edited = X.copy()
    edited[ROW, COL] = NEW
    out_before, _ = attention(X)
    out, weights = attention(edited)
    assert np.abs(out - out_before).max() > 0.1  # the edit changes the output visibly

    goto_page(page, "Inputs & weights")
    x_grid = grid_after(page, "X")
    assert [grid_cell_text(x_grid, i, j) for i in range(3) for j in range(4)] == [
        *grid_texts(X.ravel(), 4)
    ]  # the app opens on seed 000's X: whole numbers, written without decimals ("1", "0")
    round_trip_ms = edit_grid_cell(page, x_grid, ROW, COL, f"{NEW:g}")
    record_property("edit_round_trip_ms", round(round_trip_ms))
    print(f"\nedit round trip (commit -> rerun done, new value in the grid): {round_trip_ms:.0f} ms")

    goto_page(page, "Step by step")
    rows, cols, shown = heatmap_values(chart_after(page, "Output"))
    assert rows == ["0: input1", "1: input2", "2: input3"] and cols == ["0", "1", "2"]
    np.testing.assert_allclose(shown, out, atol=1e-9)
    assert chart_texts(chart_after(page, "Output")) == [f"{v:.4f}" for v in out.ravel()]  # 4 decimals on screen
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Weights"))[2], weights, atol=1e-9)
    # the drill-down (query 0 by default) ends with output row 0 written out
    drill = page.locator('[data-testid="stAlert"]').filter(has_text="output row 0")
    expect(drill).to_have_count(1)
    written = numbers(drill.inner_text().split("output row 0")[1])
    for v in out[0]:
        assert any(abs(w - v) <= 5e-5 for w in written), (v, written)

    goto_page(page, "Overview")
    goto_page(page, "Inputs & weights")
    x_grid = grid_after(page, "X")
    expect(x_grid.locator('[data-testid="data-grid-canvas"]')).to_be_visible()
    shown = [grid_cell_text(x_grid, i, j) for i in range(3) for j in range(4)]
    assert shown == grid_texts(edited.ravel(), 4)  # the grid drawn anew: the matrix in one notation
