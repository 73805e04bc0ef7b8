"""Grid edits as a learner makes them: a rejected value is named at once, under the grid and in the page's banner,
and goes away with the fix; and clicking another page while a cell is still being typed keeps what was typed and
never leaves a blank page.

Expected numbers are computed here with numpy from seed 000's matrices (tests/e2e/seed000.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .helpers import (
    EDITOR_INPUT,
    edit_grid_cell,
    expect_rerun,
    goto_page,
    grid_after,
    grid_cell_text,
    nav_link,
    select_grid_cell,
)
from .seed000 import X, attention

pytestmark = pytest.mark.e2e

METRIC = "max |multi-head output − single-head output|"  # under the output in Multi-head's section 5
BANNER = "Showing the last valid values"  # grid_editor.pending_errors_banner, at the top of the page


def metric_text(w_o: np.ndarray) -> str:
    """The metric for seed 000 (one head) with this W_O: max |out · W_O − out|, as the page formats it."""
    out, _ = attention(X)
    return f"{np.abs(out @ w_o - out).max():.3g}"


def test_a_rejected_w_o_value_is_named_under_the_grid_and_in_the_banner_until_fixed(app_page: Page) -> None:
    page = app_page
    goto_page(page, "Multi-head")
    with expect_rerun(page):
        page.get_by_role("radio", name="5 · Project with W_O").click()
    grid = grid_after(page, "W_O")
    metric = page.get_by_test_id("stMetric").filter(has_text=METRIC).get_by_test_id("stMetricValue")
    banner = page.get_by_test_id("stAlert").filter(has_text=BANNER)
    w_o = np.eye(3)  # seed 000's W_O: the identity
    expect(metric).to_have_text(metric_text(w_o))

    edit_grid_cell(page, grid, 1, 2, "0.5")
    w_o[1, 2] = 0.5
    expect(metric).to_have_text(metric_text(w_o))
    assert metric_text(w_o) != metric_text(np.eye(3))

    edit_grid_cell(page, grid, 0, 0, "abc")  # the cell keeps what was typed
    error = "W_O, row 0, column 0 is 'abc', not a number."
    # grid, banner (the sidebar's Share this, closed, says it once opened: tests/e2e/test_exact_input.py)
    expect(page.get_by_test_id("stAlert").filter(has_text=error)).to_have_count(2)
    expect(banner).to_contain_text("Fix it on Multi-head (section 5).")
    expect(metric).to_have_text(metric_text(w_o))  # the last valid W_O
    assert grid_cell_text(grid, 0, 0) == "abc"  # the grid keeps the rejected cell

    edit_grid_cell(page, grid, 0, 0, "2")
    w_o[0, 0] = 2.0
    expect(metric).to_have_text(metric_text(w_o))
    expect(page.get_by_test_id("stAlert").filter(has_text="not a number")).to_have_count(0)  # grid and banner


def test_clicking_another_page_while_typing_in_a_cell_keeps_the_value_and_draws_a_page(app_page: Page) -> None:
    """The cell's editor loses focus to the link (mouse down); the click (mouse up, 50 ms later, as a person clicks)
    switches the page, after the edit has gone (attn_ui.shell.frame.EDIT_BEFORE_PAGE). The edit counts, whichever run
    brings it (attn_ui.widgets.grid_editor.commit_pending), and the next page is drawn. (With an edit inside an
    st.fragment, Streamlit 1.67 can draw a blank page here: the app uses no fragments. Under load Streamlit's browser
    side could lose the switch: a second click made it; the click now waits for the edit.)"""
    page = app_page
    goto_page(page, "Inputs & weights")
    select_grid_cell(page, grid_after(page, "W_K"), 0, 0)
    page.wait_for_timeout(100)  # the editor opens asynchronously (E2E_NOTES)
    page.keyboard.type("7")  # typing opens the cell's editor
    expect(page.locator(EDITOR_INPUT).first).to_be_visible()
    link = nav_link(page, "Step by step")
    box = link.bounding_box()
    with expect_rerun(page):  # waits until the page is drawn (wait_for_app: a blank page fails it)
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.wait_for_timeout(50)
        page.mouse.up()  # no Enter
    # the rerun waited for is the edit's own: the page switch's run comes after it
    expect(link).to_have_attribute("aria-current", "page", timeout=15_000)
    expect(page.get_by_role("heading", name="Step by step")).to_be_visible()
    goto_page(page, "Inputs & weights")
    expect(grid_after(page, "W_K").get_by_test_id("glide-cell-1-0")).to_have_text("7")  # whole numbers

