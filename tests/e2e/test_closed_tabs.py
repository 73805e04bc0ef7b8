"""A closed tab's session is shut down once its reconnect time is over: its state, uploads and cached results go.

Its own server, with a reconnect time of 2 s (``server.disconnectedSessionTTL``; the app's is 20 s) so the test
waits seconds, not minutes. The server's log says when attn_ui.infra.sessions shuts a session down.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from playwright.sync_api import Browser, expect

from attn_core import initialize, make_config, share

from .helpers import VIEWPORT, goto_page, open_app, start_server, stop_server

pytestmark = pytest.mark.e2e
SHUT = re.compile(r"session (\S+) shut down after its tab closed: its uploads freed, ([\d.]+) MB of cached results "
                  r"released")


def test_a_closed_tab_is_shut_down_and_its_cached_results_released(browser: Browser, tmp_path):
    x = initialize("gaussian", (64, 64), seed=1)  # 64 tokens: a trace worth releasing
    cfg = make_config([f"t{i}" for i in range(64)], x, x, x, x, n_heads=4)
    json_file = tmp_path / "config.json"
    json_file.write_text(share.to_json(cfg))
    os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"] = "2"
    try:
        proc, url = start_server(tmp_path / "streamlit.log")
    finally:
        del os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"]
    try:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        open_app(page, url)
        goto_page(page, "Share & export")
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(json_file))
        expect(page.get_by_text("Loaded config.json: 64 tokens", exact=False)).to_be_visible()
        goto_page(page, "Step by step")  # this session's trace is now in the budget
        expect(page.get_by_text("t63", exact=False).first).to_be_attached()
        assert not SHUT.search((tmp_path / "streamlit.log").read_text())  # open: nothing shut down
        context.close()
        deadline, found = time.monotonic() + 30, None
        while found is None and time.monotonic() < deadline:
            time.sleep(0.5)
            found = SHUT.search((tmp_path / "streamlit.log").read_text())
    finally:
        stop_server(proc)
    assert found is not None, "the closed tab's session was not shut down within 30 s"
    assert float(found.group(2)) > 0.1  # its trace (64 tokens, 4 heads: ≈ 0.5 MB) went with it
