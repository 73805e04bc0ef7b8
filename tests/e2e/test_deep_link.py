"""A first request straight to a page's address, on a fresh server, opens that page through the router.

Streamlit's legacy ``pages/`` support runs such a page without streamlit_app.py until a run in the
process has called st.navigation; attn_ui.frame.page_start then draws the frame itself.
"""

from __future__ import annotations

import pytest

from .helpers import assert_no_exception, start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("path", "title"), [("steps", "Step by step"), ("masking", "Masking")])
def test_cold_server_deep_link_opens_the_page_with_the_app_navigation(page, tmp_path, path, title):
    proc, url = start_server(tmp_path / "streamlit.log")  # a fresh process: no st.navigation has run yet
    try:
        page.goto(f"{url}/{path}")
        wait_for_app(page)
        page.get_by_role("heading", name=title, level=1).wait_for()
        nav = page.get_by_test_id("stSidebarNav").inner_text()
        assert "Inputs & weights" in nav and "Share & export" in nav  # the router's titles, not file names
        assert "streamlit app" not in nav
        assert page.url.split("?")[0].rstrip("/").endswith(path)
        assert_no_exception(page)
    finally:
        stop_server(proc)
