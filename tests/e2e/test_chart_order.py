"""Heatmap axes run in token order (0, 1, …, 9, 10, 11), not in the order of the labels as text ("10: …" before
"2: …"): the charts take their order from the data, which lists rows and columns in order."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from .helpers import chart_after, expect_rerun, goto_page

pytestmark = pytest.mark.e2e


def axis_values(chart, axis: str) -> list[str]:
    """The tick labels of a chart's "X" or "Y" axis, in the order drawn (left to right, top to bottom)."""
    group = chart.locator(f'g.role-axis[aria-label^="{axis}-axis"]').first
    return group.locator("g.role-axis-label text").evaluate_all("ts => ts.map(t => t.textContent)")


def test_twelve_tokens_are_drawn_in_order_on_both_axes(app_page: Page) -> None:
    page = app_page
    goto_page(page, "Inputs & weights")
    with expect_rerun(page):
        page.get_by_role("spinbutton", name="n_seq").fill("12")
        page.keyboard.press("Enter")
    goto_page(page, "Step by step")
    tokens = ["0: input1", "1: input2", "2: input3"] + [f"{i}: t{i + 1}" for i in range(3, 12)]
    for title in ("Scores QKᵀ", "Weights"):
        chart = chart_after(page, title)
        assert axis_values(chart, "Y") == tokens
        assert axis_values(chart, "X") == tokens
