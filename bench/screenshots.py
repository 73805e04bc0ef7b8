"""Save a PNG of every page of the app, as Chromium shows it, to look at.

    .venv/bin/python bench/screenshots.py [OUT_DIR]      # default /tmp/shots

Starts its own Streamlit server on a free port (killed at the end), walks the sidebar in one session
(seed 000, as the app opens), photographs each page with a viewport as tall as the page, and prints one
line per page: file, size, time, and any Streamlit exception shown. Look at the PNGs: a chart collapsed
into a strip, overlapping labels or an empty page are bugs no assertion catches.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import Error as PlaywrightError  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.helpers import (  # noqa: E402
    APP_IDLE,
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_TITLES,
    VIEWPORT,
    goto_page,
    screenshot,
    start_server,
    stop_server,
    watch_runs,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="/tmp/shots", type=Path)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    log = Path(tempfile.mkdtemp(prefix="shots-")) / "streamlit.log"
    proc, url = start_server(log)
    failures = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            watch_runs(page)
            page.goto(url)
            page.wait_for_selector(APP_IDLE)
            for i, title in enumerate(PAGE_TITLES):
                start = time.perf_counter()
                note = ""
                try:
                    goto_page(page, title)
                except (AssertionError, PlaywrightError) as err:  # e.g. an exception box: photograph it anyway
                    note = "  FAILED: " + " | ".join(str(err).splitlines()[:3])
                path = screenshot(page, args.out_dir / f"{i}_{title.split()[0].lower()}.png")
                page.set_viewport_size(VIEWPORT)
                failures += bool(note)
                ms = (time.perf_counter() - start) * 1000
                print(f"{path}  {path.stat().st_size // 1024} KiB  {ms:.0f} ms{note}", flush=True)
            browser.close()
    finally:
        stop_server(proc)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
