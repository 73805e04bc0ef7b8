"""Nothing lost on a reload (issue 17): the address bar holds the configuration, so the browser's reload, or the
same address opened in a new tab, brings the learner's work back on the same page.

A small configuration travels in the address itself (``?c=``, the permalink's value: decoded here with
attn_core.share.decode_link to check exact numbers); one too large for it is kept on the server under a random key
(``?s=``): loaded from a JSON file and edited in the grid, then compared after the reload through the grid's texts and
Share & export's JSON download (exactly).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from attn_core import Config, configs_equal, make_config
from attn_core.share import decode_link, from_json, to_json

from .conftest import NAV_TIMEOUT_MS
from .helpers import (
    choose_radio,
    edit_grid_cell,
    expect_rerun,
    goto_page,
    grid_after,
    grid_cell,
    grid_cell_text,
    wait_for_app,
    watch_runs,
)
from .seed000 import W_K, W_Q, W_V, X

pytestmark = pytest.mark.e2e


def address(page: Page) -> tuple[str, dict[str, str]]:
    """(the page's path without "/", its query parameters) of the address bar."""
    url = urlparse(page.url)
    return url.path.strip("/"), {k: v[0] for k, v in parse_qs(url.query).items()}


def linked_config(page: Page):
    """The configuration the address holds as ``?c=`` (there must be one, and no ``?s=``)."""
    _, params = address(page)
    assert "c" in params and "s" not in params, page.url
    cfg, _ = decode_link(params["c"])
    return cfg


def mask_option(page: Page, option: str):
    options = page.get_by_role("radiogroup", name="Mask").locator('[data-testid="stRadioOption"]')
    return options.filter(has=page.get_by_text(option, exact=True)).locator("input")


def reload(page: Page) -> None:
    page.reload()
    wait_for_app(page, timeout_ms=2 * NAV_TIMEOUT_MS)


def expected_x(x00: float) -> np.ndarray:
    x = X.copy()
    x[0, 0] = x00
    return x


def check_edit_and_mask(page: Page, x00: float, cell_text: str) -> None:
    """On Masking: "causal" is chosen; the address holds X[0, 0] = x00 (seed 000 otherwise, the causal mask);
    then on Inputs & weights the grid shows X[0, 0]."""
    assert address(page)[0] == "masking", page.url
    expect(mask_option(page, "causal")).to_be_checked()
    cfg = linked_config(page)
    np.testing.assert_array_equal(cfg.x, expected_x(x00))
    for got, want in ((cfg.w_q, W_Q), (cfg.w_k, W_K), (cfg.w_v, W_V)):
        np.testing.assert_array_equal(got, want)
    assert cfg.mask_kind == "causal"
    goto_page(page, "Inputs & weights")
    expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text(cell_text)
    assert linked_config(page).mask_kind == "causal"  # the page switch kept it in the address


def test_a_reload_keeps_a_grid_edit_and_the_mask_on_the_same_page(app_page: Page) -> None:
    page = app_page
    goto_page(page, "Inputs & weights")
    edit_grid_cell(page, grid_after(page, "X"), 0, 0, "2.5")
    assert linked_config(page).x[0, 0] == 2.5

    reload(page)  # on Inputs & weights
    assert address(page)[0] == "inputs", page.url
    expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text("2.5")  # drawn anew: the decimals its numbers need
    np.testing.assert_array_equal(linked_config(page).x, expected_x(2.5))

    goto_page(page, "Masking")
    choose_radio(page, "Mask", "causal")
    reload(page)  # on Masking
    check_edit_and_mask(page, 2.5, "2.5")


def test_the_address_opened_in_a_new_tab_brings_the_configuration_back(app_page: Page) -> None:
    page = app_page
    goto_page(page, "Inputs & weights")
    edit_grid_cell(page, grid_after(page, "X"), 0, 0, "-1.75")
    goto_page(page, "Masking")
    choose_radio(page, "Mask", "causal")

    tab = page.context.new_page()  # same browser context (cookies), a new Streamlit session
    watch_runs(tab)
    tab.goto(page.url)
    wait_for_app(tab, timeout_ms=2 * NAV_TIMEOUT_MS)
    check_edit_and_mask(tab, -1.75, "\u22121.75")

    # the two tabs are two sessions: an edit in the new one leaves the first as it was
    edit_grid_cell(tab, grid_after(tab, "X"), 0, 0, "3")
    assert linked_config(tab).x[0, 0] == 3.0
    goto_page(page, "Inputs & weights")
    expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text("\u22121.75")
    assert linked_config(page).x[0, 0] == -1.75


def download_config(page: Page) -> Config:
    """The configuration in Share & export's JSON download (exact numbers)."""
    goto_page(page, "Share & export")
    with page.expect_download(timeout=NAV_TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download the configuration (JSON)").click()
    cfg, _ = from_json(info.value.path().read_bytes())
    return cfg


def large_config() -> Config:
    """n_seq 64, d_model 64, d_k = d_v = 8, random normal numbers: 4,096 + 3 × 512 cells, too many for a ?c=."""
    rng = np.random.default_rng(17)
    return make_config([f"t{i}" for i in range(64)], rng.normal(size=(64, 64)),
                       *(rng.normal(size=(64, 8)) for _ in range(3)))


CELLS = [(0, 0), (1, 1), (2, 3), (5, 7), (9, 2)]


def test_a_configuration_too_large_for_the_address_comes_back_after_a_reload(app_page: Page, tmp_path: Path) -> None:
    page = app_page
    cfg = large_config()
    path = tmp_path / "large.json"
    path.write_text(to_json(cfg))
    goto_page(page, "Share & export")
    with expect_rerun(page):
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    expect(page.get_by_text("Loaded large.json", exact=False)).to_be_visible()
    goto_page(page, "Inputs & weights")
    x_grid = grid_after(page, "X")
    edit_grid_cell(page, x_grid, 1, 1, "7.25")  # and one number typed in this session
    x = cfg.x.copy()
    x[1, 1] = 7.25
    expected = replace(cfg, x=x)
    path_, params = address(page)
    assert path_ == "inputs" and set(params) == {"s", "lang"}, page.url
    texts = [grid_cell_text(x_grid, r, c) for r, c in CELLS]
    assert texts[1] == "7.25"

    reload(page)
    path_, params = address(page)
    assert path_ == "inputs" and set(params) == {"s", "lang"}, page.url
    expect(page.get_by_text("no longer has it")).to_have_count(0)
    expect(page.get_by_text("X · 64 × 64")).to_be_visible()
    x_grid = grid_after(page, "X")
    expect(grid_cell(x_grid, 1, 1)).to_have_text("7.2500")  # drawn anew at 4 decimals
    assert [grid_cell_text(x_grid, r, c) for r, c in CELLS] == ["7.2500" if t == "7.25" else t for t in texts]
    assert configs_equal(download_config(page), expected)  # every number, exactly
