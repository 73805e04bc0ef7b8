"""Many learners, one server (issue 17): three sessions at once (three browser contexts of one browser) type their
own numbers, interleaved; none ever shows another's. Checked in each session's grid and in the configuration its
address holds (``?c=``, decoded with attn_core.share.decode_link). A JSON file downloaded in one session and loaded
in another changes that one only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

from attn_core import Config, configs_equal
from attn_core.share import decode_link, from_json

from .conftest import NAV_TIMEOUT_MS
from .helpers import (
    VIEWPORT,
    choose_radio,
    edit_grid_cell,
    expect_rerun,
    goto_page,
    grid_after,
    grid_cell,
    open_app,
    watch_runs,
)
from .seed000 import X

pytestmark = pytest.mark.e2e

VALUES = {"A": 1.25, "B": 2.5, "C": -3.75}  # what each session types into X[0, 0]
SHOWN = {"A": "1.25", "B": "2.5", "C": "\u22123.75"}  # the grid drawn anew (the decimals its numbers need, "−" U+2212)


@pytest.fixture
def sessions(browser: Browser, app_server: str) -> Iterator[dict[str, Page]]:
    """Three learners on one server, each in its own browser context, on Inputs & weights."""
    pages = {}
    try:
        for name in VALUES:
            context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
            context.set_default_timeout(NAV_TIMEOUT_MS)
            pages[name] = context.new_page()
            watch_runs(pages[name])
            open_app(pages[name], app_server)
        for page in pages.values():
            goto_page(page, "Inputs & weights")
        yield pages
    finally:
        for page in pages.values():
            page.context.close()


def address_config(page: Page) -> Config:
    params = parse_qs(urlparse(page.url).query)
    assert set(params) == {"c", "lang"}, page.url  # the numbers and the language
    return decode_link(params["c"][0])[0]


def check(page: Page, x00: float, mask: str, *, redraw: str | None = None) -> None:
    """The session's address holds seed 000 with X[0, 0] = x00 and ``mask``. With ``redraw``: the session first
    opens Inputs & weights anew (from another page: a run of its own, its grid drawn from its own state) and the
    grid's X[0, 0] reads ``redraw``."""
    if redraw is not None:
        if urlparse(page.url).path.strip("/") == "inputs":
            goto_page(page, "Step by step")
        goto_page(page, "Inputs & weights")
        expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text(redraw)
    cfg = address_config(page)
    want = X.copy()
    want[0, 0] = x00
    np.testing.assert_array_equal(cfg.x, want)
    assert cfg.mask_kind == mask


def test_three_sessions_typing_at_once_each_keep_their_own_numbers(sessions: dict[str, Page], tmp_path: Path) -> None:
    a, b, c = sessions["A"], sessions["B"], sessions["C"]
    for name, page in sessions.items():  # interleaved: each edit lands between the others'
        edit_grid_cell(page, grid_after(page, "X"), 0, 0, repr(VALUES[name]))
    goto_page(a, "Masking")
    choose_radio(a, "Mask", "causal")
    check(a, VALUES["A"], "causal")
    check(b, VALUES["B"], "none", redraw=SHOWN["B"])
    check(c, VALUES["C"], "none", redraw=SHOWN["C"])
    check(a, VALUES["A"], "causal", redraw=SHOWN["A"])

    # A's JSON file, loaded by C: C now has A's numbers; A and B keep theirs
    goto_page(a, "Share & export")
    with a.expect_download(timeout=NAV_TIMEOUT_MS) as info:
        a.get_by_role("button", name="Download the configuration (JSON)").click()
    path = tmp_path / "config.json"
    info.value.save_as(path)
    a_cfg, _ = from_json(path.read_bytes())
    assert configs_equal(a_cfg, address_config(a)) and a_cfg.x[0, 0] == VALUES["A"]
    goto_page(c, "Share & export")
    with expect_rerun(c):
        c.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    expect(c.get_by_text("Loaded config.json", exact=False)).to_be_visible()
    assert configs_equal(address_config(c), a_cfg)
    check(c, VALUES["A"], "causal", redraw=SHOWN["A"])
    check(b, VALUES["B"], "none", redraw=SHOWN["B"])
    check(a, VALUES["A"], "causal", redraw=SHOWN["A"])
