"""Save a chart in a real browser (issue 39): the sidebar's menu downloads the chart picked as PNG and SVG, made on
the click (a deferred download), without a rerun of the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from attn_ui.app import registry

from .helpers import APP_IDLE, expect_rerun, open_app, watch_runs

pytestmark = pytest.mark.e2e
pytest.importorskip("vl_convert", reason="pip install vl-convert-python (requirements.txt)")
SIDEBAR = '[data-testid="stSidebar"]'
POPOVER = '[data-testid="stSidebar"] [data-testid="stExpander"]:has-text("Save a chart")'


def test_save_the_weights_as_png_and_svg(page: Page, app_server: str):
    open_app(page, f"{app_server}/{registry.STEPS.name}")
    with expect_rerun(page):  # opening the menu makes its contents
        page.locator(SIDEBAR).get_by_text("Save a chart", exact=True).click()
    page.wait_for_selector(APP_IDLE)
    page.locator(f"{POPOVER} [data-testid='stSelectbox']").click()
    with expect_rerun(page):
        page.get_by_role("option", name="Weights", exact=True).click()
    page.wait_for_selector(APP_IDLE)
    runs = watch_runs(page).finished
    assert runs >= 3  # the page's, opening the menu, picking the chart: the counter counts
    files = {}
    for fmt in ("PNG", "SVG"):
        with page.expect_download(timeout=60_000) as download:
            page.locator(POPOVER).get_by_role("button", name=fmt).click()
        files[fmt] = download.value
    assert files["PNG"].suggested_filename == "steps-weights.png"
    assert files["SVG"].suggested_filename == "steps-weights.svg"
    png = open(files["PNG"].path(), "rb").read()
    svg = open(files["SVG"].path(), encoding="utf-8").read()
    assert png.startswith(b"\x89PNG") and svg.startswith("<svg") and "0: input1" in svg and "Weights" in svg
    page.wait_for_timeout(500)
    assert watch_runs(page).finished == runs  # on_click="ignore": the page did not run again
    assert page.locator(POPOVER).is_visible()  # and the menu stayed open
