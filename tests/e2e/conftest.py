"""Fixtures for the end-to-end tests: one Streamlit server and one Chromium for the session.

- ``app_server`` (session): ``streamlit run streamlit_app.py`` on a free port from the repo root; yields the
  base URL ("http://127.0.0.1:PORT"); killed at teardown. Its log is ``streamlit.log`` in a session tmp dir.
- ``browser`` (session): Debian's Chromium (/usr/bin/chromium) through Playwright's sync API. Fails (does not
  skip) if Chromium is missing: ``bash .ci/dev test`` installs it.
- ``page`` (function): a fresh browser context (fresh cookies, so a fresh Streamlit session) with a pinned
  1400x1800 viewport; blank. Load the app with ``helpers.open_app(page, url)``.
- ``app_page`` (function): ``page`` with the app's home page loaded and its first run finished.

Everything that drives the app is in helpers.py; a test module in this folder imports it relatively::

    import pytest
    from .helpers import goto_page, open_app, wait_for_app

    pytestmark = pytest.mark.e2e

    def test_something(app_page):
        goto_page(app_page, "Masking")
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from .. import tiny_bert, tiny_gpt2, tiny_t5
from .helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    open_app,
    server_with,
    start_server,
    stop_server,
    watch_runs,
)

NAV_TIMEOUT_MS = 20_000


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a Streamlit server running the app (one for the whole session)."""
    log = tmp_path_factory.mktemp("streamlit") / "streamlit.log"
    try:
        proc, url = start_server(log)
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium (Playwright cannot download its own browser here)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the e2e tests drive Debian's Chromium. Install it with "
            "`apt-get install -y chromium`, or run the tests with `bash .ci/dev test`, which installs it.",
            pytrace=False,
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A blank page in a fresh context (a fresh Streamlit session), viewport pinned to 1400x1800."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(NAV_TIMEOUT_MS)
    page = context.new_page()
    watch_runs(page)  # before the app's websocket opens, so expect_rerun sees every run
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def app_page(page: Page, app_server: str) -> Page:
    """``page`` with the app loaded at its home (Overview) and the first run finished."""
    open_app(page, app_server)
    return page


@pytest.fixture(scope="module")
def models_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of the module's whose three model pages read the tiny checkpoints of tests/ (the operator's variables,
    for its process only)."""
    root = tmp_path_factory.mktemp("models")
    yield from server_with(tmp_path_factory.mktemp("streamlit") / "streamlit.log", {
        "ATTN_MODEL": tiny_bert.build(root / "bert"), "ATTN_CAUSAL_MODEL": tiny_gpt2.build(root / "gpt2"),
        "ATTN_TRANSLATOR_MODEL": tiny_t5.build(root / "t5")})
