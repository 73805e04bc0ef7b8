"""Grids inside a part of a page (layout.part, an st.fragment): an edit reruns only that part, and whatever the
rest of the page shows still follows (a rejected value reaches the page's banner; a randomised matrix gives every
grid on the page a fresh start, so the next edit of another grid still counts).

Expected numbers are computed here with numpy from seed 000's matrices (tests/e2e/seed000.py).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .helpers import (
    PAGE_RUN,
    PART_RUN,
    edit_grid_cell,
    expect_rerun,
    goto_page,
    grid_after,
    grid_cell_text,
    wait_for_app,
    watch_runs,
)
from .seed000 import X, attention

pytestmark = pytest.mark.e2e

METRIC = "max |multi-head output − single-head output|"  # under the output in Multi-head's section 5
BANNER = "Showing the last valid values"  # layout.pending_errors_banner, at the top of the page


def wait_for_page_run(page: Page, runs, since: int, timeout_s: float = 20) -> None:
    """Wait until the whole page has run since the ``since``-th finished run (not only a part of it)."""
    deadline = time.monotonic() + timeout_s
    while PAGE_RUN not in runs.statuses[since:]:
        assert time.monotonic() < deadline, f"no run of the whole page, only {runs.statuses[since:]}"
        page.wait_for_timeout(25)  # lets Playwright deliver the websocket events
    wait_for_app(page)


def metric_text(w_o: np.ndarray) -> str:
    """The metric for seed 000 (one head) with this W_O: max |out · W_O − out|, as the page formats it."""
    out, _ = attention(X)
    return f"{np.abs(out @ w_o - out).max():.3g}"


def test_a_w_o_edit_reruns_only_its_tab_and_a_rejected_value_reaches_the_banner(app_page: Page) -> None:
    page, runs = app_page, watch_runs(app_page)
    goto_page(page, "Multi-head")
    with expect_rerun(page):
        page.get_by_role("tab", name="5 · Project with W_O").click()
    grid = grid_after(page, "W_O")
    metric = page.get_by_test_id("stMetric").filter(has_text=METRIC).get_by_test_id("stMetricValue")
    banner = page.get_by_test_id("stAlert").filter(has_text=BANNER)
    w_o = np.eye(3)  # seed 000's W_O: the identity
    expect(metric).to_have_text(metric_text(w_o))

    before = len(runs.statuses)
    edit_grid_cell(page, grid, 1, 2, "0.5")
    w_o[1, 2] = 0.5
    expect(metric).to_have_text(metric_text(w_o))
    assert metric_text(w_o) != metric_text(np.eye(3))
    assert runs.statuses[before:] == [PART_RUN], "a valid W_O edit reruns the tab's part alone"

    before = len(runs.statuses)
    edit_grid_cell(page, grid, 0, 0, "abc", shown="")  # a number column takes text as an empty cell
    error = "W_O, row 0, column 0 is empty, not a number."
    expect(page.get_by_test_id("stAlert").filter(has_text=error)).to_have_count(2)  # under the grid, in the banner
    expect(banner).to_contain_text(error)
    expect(metric).to_have_text(metric_text(w_o))  # the last valid W_O
    wait_for_page_run(page, runs, before)  # the banner is outside the part
    assert grid_cell_text(grid, 0, 0) == ""  # the grid keeps the rejected cell

    edit_grid_cell(page, grid, 0, 0, "2")
    w_o[0, 0] = 2.0
    expect(metric).to_have_text(metric_text(w_o))
    expect(banner).to_have_count(0)
    expect(page.get_by_test_id("stAlert").filter(has_text="is empty")).to_have_count(0)


def test_after_randomising_x_an_edit_of_another_grid_still_counts(app_page: Page) -> None:
    """Randomise gives every grid a fresh start (new widget keys): the other grids on the page are redrawn, or
    their next edit would be lost."""
    page, runs = app_page, watch_runs(app_page)
    goto_page(page, "Inputs & weights")
    x_grid = grid_after(page, "X")
    with expect_rerun(page):
        page.get_by_role("button", name="Randomise").first.click()
    popover = page.get_by_test_id("stPopoverBody")
    before = len(runs.statuses)
    with expect_rerun(page):
        popover.get_by_role("button", name="Fill").click()
    expect(x_grid.get_by_test_id("glide-cell-1-0")).not_to_have_text(f"{X[0, 0]:g}")
    wait_for_page_run(page, runs, before)  # the other grids are redrawn with their new keys
    page.keyboard.press("Escape")  # close the popover
    randomised = [grid_cell_text(x_grid, i, j) for i in range(3) for j in range(4)]

    edit_grid_cell(page, grid_after(page, "W_Q"), 0, 0, "5")
    goto_page(page, "Overview")
    goto_page(page, "Inputs & weights")
    expect(grid_after(page, "W_Q").get_by_test_id("glide-cell-1-0")).to_have_text("5")
    assert [grid_cell_text(grid_after(page, "X"), i, j) for i in range(3) for j in range(4)] == randomised
