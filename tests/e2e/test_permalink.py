"""Permalinks in a real browser: a link opened in a fresh browser context shows the shared numbers.

The configuration is written out here (seed 000's weights, tests/seeds.py, with an X no preset has) and the expected
numbers are computed here with numpy, never through the app's code; the link value itself is made by
attn_core.share.encode_link (the format under test), or by the app's own sidebar control.
"""

from __future__ import annotations

import base64
import zlib
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

from attn_core import configs_equal, make_config
from attn_core.share import decode_link, encode_link
from attn_ui.widgets.numbers import grid_texts

from .conftest import NAV_TIMEOUT_MS
from .helpers import (
    VIEWPORT,
    chart_after,
    goto_page,
    grid_after,
    grid_cell_text,
    heatmap_values,
    wait_for_app,
    watch_runs,
)
from .seed000 import W_K, W_Q, W_V

pytestmark = pytest.mark.e2e

TOKENS = ["the", "cat", "sat"]
X = np.array([[1.0, 1 / 3, 1.0, 0.1 + 0.2], [2.5, 2.0, 1e-17, 2.0], [1.0, -1.0, 1.0, 0.75]])
SHARED = make_config(TOKENS, X, W_Q, W_K, W_V, mask_kind="causal")


def causal_weights(x: np.ndarray) -> np.ndarray:
    """softmax of the causally masked QKᵀ/√3, written out independently of attn_core."""
    s = (x @ W_Q) @ (x @ W_K).T / np.sqrt(3.0)
    s = np.where(np.tri(3, dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def as_read(weights: np.ndarray) -> np.ndarray:
    """Causal weights as helpers.heatmap_values reads them: nan above the diagonal (those cells say "masked")."""
    return np.where(np.tri(3, dtype=bool), weights, np.nan)


def fresh_page(browser: Browser) -> Page:
    """A page in a new browser context: no cookies, a new Streamlit session."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(NAV_TIMEOUT_MS)
    page = context.new_page()
    watch_runs(page)  # before the page opens the app, so expect_rerun sees every run
    return page


def open_link(page: Page, url: str, title: str) -> None:
    """Open a permalink and wait until the page it names (the app switches to it) has run.

    Two runs (the router's, then the named page's) in a fresh session, maybe the server's first: a longer wait.
    """
    page.goto(url)
    expect(page.locator("h1").first).to_contain_text(title, timeout=3 * NAV_TIMEOUT_MS)
    wait_for_app(page, timeout_ms=3 * NAV_TIMEOUT_MS)


def link_value(url: str) -> str:
    """The ?c= value of an address (which also holds ?lang=)."""
    return parse_qs(urlparse(url).query)["c"][0]


def test_a_permalink_opened_in_a_fresh_context_shows_the_shared_numbers(page: Page, app_server: str) -> None:
    open_link(page, f"{app_server}/?c={encode_link(SHARED, 'steps')}", "Step by step")
    assert page.url.split("?")[0] == f"{app_server}/steps"  # on the page the link names
    assert configs_equal(decode_link(link_value(page.url))[0], SHARED)  # the address holds it (a reload)
    rows, cols, weights = heatmap_values(chart_after(page, "Weights"))
    assert rows == ["0: the", "1: cat", "2: sat"]
    np.testing.assert_allclose(weights, as_read(causal_weights(X)), rtol=1e-9, atol=1e-12)
    assert np.isnan(weights[0, 1]) and np.isnan(weights[0, 2])  # the causal mask came along: masked cells
    expect(page.get_by_text("This link could not be opened")).to_have_count(0)


def test_the_sidebar_link_reopens_the_same_numbers_in_another_context(
    page: Page, browser: Browser, app_server: str
) -> None:
    open_link(page, f"{app_server}/?c={encode_link(SHARED)}", "Self-Attention Explorer")
    goto_page(page, "Inputs & weights")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Share this").click()
    sidebar.get_by_role("button", name="Make a link to this").click()
    code = sidebar.locator('[data-testid="stCode"] code')
    expect(code).to_contain_text("?c=", timeout=NAV_TIMEOUT_MS)
    url = code.inner_text().strip()
    assert url.startswith(f"{app_server}/?c=")  # the app's own address, from st.context.url
    assert url.endswith("&lang=en")  # and the language it was made in

    other = fresh_page(browser)
    try:
        open_link(other, url, "Inputs & weights")
        x_grid = grid_after(other, "X")
        shown = [[grid_cell_text(x_grid, i, j) for j in range(4)] for i in range(3)]
        assert sum(shown, []) == grid_texts(X.ravel(), 4)  # X in one notation, as its grid writes it
        np.testing.assert_array_equal(decode_link(link_value(other.url))[0].x, X)  # and every value exactly
        goto_page(other, "Step by step")
        np.testing.assert_allclose(heatmap_values(chart_after(other, "Weights"))[2], as_read(causal_weights(X)),
                                   rtol=1e-9)
    finally:
        other.context.close()


def test_a_hostile_link_opens_the_default_example_with_a_message(page: Page, app_server: str) -> None:
    not_a_config = base64.urlsafe_b64encode(zlib.compress(b"[1, 2, 3]")).decode().rstrip("=")  # valid zlib + JSON
    open_link(page, f"{app_server}/?c={not_a_config}", "Self-Attention Explorer")
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="This link could not be opened")).to_have_count(1)
    goto_page(page, "Step by step")
    rows, _, _ = heatmap_values(chart_after(page, "Weights"))
    assert rows == ["0: input1", "1: input2", "2: input3"]  # seed 000, the default example
