"""A learner with a keyboard only: reach the X grid with Tab, move to a cell with the arrow keys, edit it, and open
Step by step from the sidebar with Tab and Enter; the edit shows there. No mouse event is sent.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Locator, Page, expect

from .helpers import (
    EDITOR_INPUT,
    chart_after,
    expect_rerun,
    grid_after,
    grid_cell,
    heatmap_values,
    nav_link,
    open_app,
)
from .seed000 import W_K, W_Q, X

pytestmark = pytest.mark.e2e
MAX_TABS = 400  # a page has far fewer focusable elements before its grids


def focused_in(locator: Locator) -> bool:
    return locator.evaluate("el => el.contains(document.activeElement)")


def tab_to(page: Page, target: Locator) -> int:
    """Press Tab until the focus is inside ``target``; returns how many presses it took."""
    for presses in range(1, MAX_TABS + 1):
        page.keyboard.press("Tab")
        if focused_in(target):
            return presses
    raise AssertionError(f"{MAX_TABS} presses of Tab never reached {target}")


def test_edit_a_grid_cell_and_change_page_with_the_keyboard_only(page: Page, app_server: str) -> None:
    open_app(page, f"{app_server}/inputs")
    grid = grid_after(page, "X")
    tab_to(page, grid.locator('[data-testid="data-grid-canvas"]'))  # the cells themselves, past the grid's toolbar
    selected = grid.locator('td[aria-selected="true"]')
    if not selected.count():  # focus alone selects no cell in some releases: the first arrow key does
        page.keyboard.press("ArrowRight")
    expect(selected).to_have_count(1)
    target = (1, 2)  # X[1, 2]: data column 2 is the grid's column 3 (column 0 holds the row labels)
    while (at := tuple(map(int, selected.get_attribute("data-testid").rsplit("-", 2)[-2:]))) != (target[1] + 1,
                                                                                                   target[0]):
        dx, dy = target[1] + 1 - at[0], target[0] - at[1]
        page.keyboard.press(("ArrowRight" if dx > 0 else "ArrowLeft") if dx else ("ArrowDown" if dy > 0 else "ArrowUp"))
        expect(selected).not_to_have_attribute("data-testid", f"glide-cell-{at[0]}-{at[1]}")
    page.wait_for_timeout(100)  # the editor opens asynchronously (E2E_NOTES)
    page.keyboard.press("Enter")
    editor = page.locator(EDITOR_INPUT).first
    expect(editor).to_be_visible()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type("7", delay=60)
    with expect_rerun(page):
        page.keyboard.press("Enter")
    expect(grid_cell(grid, *target)).to_have_text("7")

    link = nav_link(page, "Step by step")
    tab_to(page, link)
    with expect_rerun(page):
        page.keyboard.press("Enter")
    expect(link).to_have_attribute("aria-current", "page")
    x = np.array(X, dtype=float)
    x[target] = 7.0
    q, k = x @ np.array(W_Q, float), x @ np.array(W_K, float)
    s = q @ k.T / np.sqrt(3)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    _, _, shown = heatmap_values(chart_after(page, "Weights"))
    np.testing.assert_allclose(shown, w, rtol=5e-4)
