"""Every page of the sidebar loads in Chromium with no exception, shows its title, and is photographed.

One browser session walks the sidebar in order (as a learner would; one page load instead of seven).
Screenshots go to $E2E_SCREENSHOTS if set (to look at them), else under pytest's tmp dir.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from attn_ui.app import registry

from .helpers import (
    MAIN,
    VIEWPORT,
    assert_no_exception,
    edit_grid_cell,
    goto_page,
    grid_cell,
    grids,
    nav_link,
    open_app,
    screenshot,
    wait_for_app,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def walk(browser: Browser, app_server: str) -> Iterator[Page]:
    """One session shared by this module's tests, which visit the pages in sidebar order."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, app_server)
    yield page
    context.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(os.environ.get("E2E_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))


def test_sidebar_lists_every_page(walk: Page) -> None:
    links = walk.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    expect(links).to_have_count(len(registry.PAGES))
    for page in registry.PAGES:
        expect(nav_link(walk, page.title)).to_have_count(1)
    # the app opens on the default page (Overview)
    expect(nav_link(walk, registry.DEFAULT.title)).to_have_attribute("aria-current", "page")


@pytest.mark.parametrize("page", registry.PAGES, ids=lambda p: p.title)
def test_page_loads_without_exception(walk: Page, shots: Path, page: registry.Page) -> None:
    title = page.title
    goto_page(walk, title)
    expect(nav_link(walk, title)).to_have_attribute("aria-current", "page")
    heading = walk.locator(f"{MAIN} h1").first
    expect(heading).to_be_visible()
    expect(heading).not_to_have_text("")
    expect(walk.get_by_text("This page is being built")).to_have_count(0)
    path = screenshot(walk, shots / f"{registry.PAGES.index(page)}_{title.split()[0].lower()}.png")
    assert path.stat().st_size > 10_000  # something rendered, not a blank page
    assert_no_exception(walk)


@pytest.mark.parametrize("path, heading", [("/overview?lang=zh", "自注意力探索器"),
                                           ("/home", "Self-Attention Explorer")])
def test_the_default_pages_guessed_addresses_open_it_at_the_root(browser: Browser, app_server: str, path: str,
                                                                  heading: str) -> None:
    """/overview (every other page is at its name's address) and /home open the Overview at the root, with the
    address's query (?lang=), instead of Streamlit's "Page not found" dialog."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, app_server + path)
    expect(page.locator(f"{MAIN} h1").first).to_have_text(heading)
    expect(page).to_have_url(re.compile(r"^http://[^/]+/\?"))  # the root, with the app's own query (?c=, ?lang=)
    expect(nav_link(page, "概览" if "zh" in path else registry.DEFAULT.title)).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert_no_exception(page)
    context.close()


@pytest.mark.parametrize("path, message, overview", [
    ("/nonexistent", "This app has no page at the address “/nonexistent”: Overview opened instead.", "Overview"),
    ("/mysteps?lang=zh", "本应用在地址“/mysteps”没有页面，已改为打开“概览”。", "概览"),
])
def test_an_address_that_names_no_page_says_so_in_the_learners_language(browser: Browser, app_server: str, path: str,
                                                                        message: str, overview: str) -> None:
    """An address that names no page opens the Overview with a message in the learner's language that names the
    address asked for (as typed: /mysteps, which ends with a page's name, is not cut to /my) and the page that
    opened; Streamlit's English "Page not found" dialog is closed (attn_ui.shell.frame.no_page_there)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, app_server + path)
    expect(page.locator(f"{MAIN} [data-testid='stAlert']").filter(has_text=message)).to_have_count(1)
    expect(nav_link(page, overview)).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    if shots := os.environ.get("E2E_SCREENSHOTS"):
        page.screenshot(path=str(Path(shots) / f"not_found_{'zh' if 'zh' in path else 'en'}.png"))
    learn = "学习" if "zh" in path else "Learn"  # the page answers a click; the message is said once
    goto_page(page, learn)
    goto_page(page, overview)
    expect(page.locator(f"{MAIN} [data-testid='stAlert']").filter(has_text=message)).to_have_count(0)
    assert_no_exception(page)
    context.close()


def test_back_goes_to_the_page_before_in_one_press_even_after_edits(browser: Browser, app_server: str) -> None:
    """A page switch is one entry in the browser's history, and an edit none (attn_ui.shell.frame.ONE_ENTRY_A_PAGE):
    Back goes to the page before in one press. Streamlit pushed an entry each time a run changed the address's
    query: each edit's ?c=, and a page's parameters after its path; Back then stayed on the same page once per edit
    (the configuration is the session's), and up to twice after a page switch."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, app_server)
    pages = [registry.INPUTS, registry.STEPS, registry.MASKING]
    lengths = [page.evaluate("history.length")]
    for p in pages:
        goto_page(page, p.title)
        expect(page).to_have_url(re.compile(r"[?&]c="))
        lengths.append(page.evaluate("history.length"))
        if p == registry.STEPS:  # two edits in the edit panel's X grid: each a new ?c=, no new entry
            for value in ("7", "8"):
                address = page.url
                edit_grid_cell(page, grids(page).first, 0, 0, value)
                expect(page).not_to_have_url(address)
            assert page.evaluate("history.length") == lengths[-1]
    assert [b - a for a, b in itertools.pairwise(lengths)] == [1, 1, 1], lengths
    for before in reversed([registry.DEFAULT, *pages[:-1]]):
        page.go_back()  # the address changes at once; the app's run follows
        page.wait_for_timeout(500)
        wait_for_app(page)
        assert urlsplit(page.url).path == ("/" if before == registry.DEFAULT else f"/{before.name}"), page.url
        expect(nav_link(page, before.title)).to_have_attribute("aria-current", "page")
        if before == registry.STEPS:  # the edits stay: Back is not an Undo
            expect(grid_cell(grids(page).first, 0, 0)).to_have_text("8")
    assert_no_exception(page)
    context.close()
