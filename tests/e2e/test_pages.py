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

from .helpers import MAIN, VIEWPORT, assert_no_exception, goto_page, nav_link, open_app, screenshot, wait_for_app

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


def test_back_goes_to_the_page_before_in_at_most_two_presses(browser: Browser, app_server: str) -> None:
    """A page switch is at most two entries in the browser's history, so Back reaches the page before in at most two
    presses. The address's parameters (?c=, ?lang=) are set at once; they were set one by one, three entries a page,
    and Back looked dead twice. (Two entries when Streamlit's browser side has dropped the parameters before it
    pushes the new page's address: a race of its own; then one Back lands on the same page, whose run puts its
    parameters back.)"""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, app_server)
    pages = [registry.INPUTS, registry.STEPS, registry.MASKING]
    lengths = [page.evaluate("history.length")]
    for p in pages:
        goto_page(page, p.title)
        expect(page).to_have_url(re.compile(r"[?&]c="))
        lengths.append(page.evaluate("history.length"))
    assert all(b - a in (1, 2) for a, b in itertools.pairwise(lengths)), lengths
    for before in reversed([registry.DEFAULT, *pages[:-1]]):
        path = "/" if before == registry.DEFAULT else f"/{before.name}"
        for _press in (1, 2):
            page.go_back()  # the address changes at once; the app's run follows
            page.wait_for_timeout(1_000)
            wait_for_app(page)
            if urlsplit(page.url).path == path:
                break
        assert urlsplit(page.url).path == path, (before.name, page.url)
        expect(nav_link(page, before.title)).to_have_attribute("aria-current", "page")
    assert_no_exception(page)
    context.close()
