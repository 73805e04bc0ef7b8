"""Save a PNG of every page of the app, as Chromium shows it, to look at.

    .venv/bin/python bench/screenshots.py [OUT_DIR]      # default /tmp/shots
    .venv/bin/python bench/screenshots.py /tmp/shots/dark --theme dark
    .venv/bin/python bench/screenshots.py /tmp/shots/phone --width 390     # a phone: 390 px, touch, mobile
    .venv/bin/python bench/screenshots.py /tmp/shots/ko --lang ko          # in Korean (zh: Chinese)

Starts its own Streamlit server on a free port (killed at the end), walks the sidebar in one session
(seed 000, as the app opens), photographs each page with a viewport as tall as the page, and prints one
line per page: file, size, time, and any Streamlit exception shown. Look at the PNGs: a chart collapsed
into a strip, overlapping labels or an empty page are bugs no assertion catches.

``--theme light|dark`` sets the browser's colour scheme (prefers-color-scheme), which the app follows (both
themes are configured in .streamlit/config.toml). ``--width`` below 600 px emulates a phone (is_mobile, touch, a
phone's user agent): the sidebar is then closed, so each page is opened by its address instead (a fresh session,
seed 000 too).
``--lang en|zh|ko`` opens the app with ``?lang=`` (the sidebar's page links are then in that language).
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

from attn_ui.app import i18n, registry
from tests.e2e.helpers import (  # noqa: E402
    APP_IDLE,
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_TITLES,
    PHONE_UA,
    VIEWPORT,
    fit_viewport_to_content,
    goto_page,
    open_app,
    start_server,
    stop_server,
    watch_runs,
)

PHONE_BELOW = 600  # px: narrower viewports are phones (is_mobile, touch and a phone's user agent, by which the app puts
#                   its edit panel in the page: attn_ui.shell.frame.on_phone; Streamlit closes the sidebar)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="/tmp/shots", type=Path)
    parser.add_argument("--theme", choices=("light", "dark"), default="light",
                        help="the browser's colour scheme (prefers-color-scheme), which the app follows")
    parser.add_argument("--width", type=int, default=VIEWPORT["width"],
                        help=f"viewport width in px; below {PHONE_BELOW}, a phone (is_mobile, touch)")
    parser.add_argument("--lang", choices=tuple(i18n.LANGUAGES), default=i18n.DEFAULT,
                        help="the app's language (?lang=)")
    args = parser.parse_args()
    tr = i18n.catalog(args.lang).gettext
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    phone = args.width < PHONE_BELOW
    viewport = {"width": args.width, "height": 844 if phone else VIEWPORT["height"]}
    log = Path(tempfile.mkdtemp(prefix="shots-")) / "streamlit.log"
    proc, url = start_server(log)
    failures = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=viewport, color_scheme=args.theme, is_mobile=phone, has_touch=phone,
                                          **({"user_agent": PHONE_UA} if phone else {}))
            warm_up = context.new_page()  # the first session of a fresh server keeps Streamlit's 300 px sidebar
            warm_up.goto(f"{url}/?lang={args.lang}")  # (not the app's 320: attn_ui.shell.frame); later sessions get it
            warm_up.wait_for_selector(APP_IDLE)
            warm_up.close()
            page = context.new_page()
            watch_runs(page)
            page.goto(f"{url}/?lang={args.lang}")
            page.wait_for_selector(APP_IDLE)
            for i, (title, entry) in enumerate(zip(PAGE_TITLES, registry.PAGES, strict=True)):
                start = time.perf_counter()
                note = ""
                try:
                    if phone:  # the sidebar is closed on a phone: open the page by its address
                        page.set_viewport_size(viewport)
                        path = "" if entry is registry.DEFAULT else entry.name  # the default page: /
                        open_app(page, f"{url}/{path}?lang={args.lang}")
                    else:
                        goto_page(page, tr(title))
                except (AssertionError, PlaywrightError) as err:  # e.g. an exception box: photograph it anyway
                    note = "  FAILED: " + " | ".join(str(err).splitlines()[:3])
                path = args.out_dir / f"{i}_{title.split()[0].lower()}.png"
                fit_viewport_to_content(page, width=args.width)
                # the sidebar grows to its width (attn_ui.shell.frame) with a transition: photograph it there
                if not phone:
                    page.wait_for_timeout(1500)
                page.screenshot(path=str(path))
                page.set_viewport_size(viewport)
                failures += bool(note)
                ms = (time.perf_counter() - start) * 1000
                print(f"{path}  {path.stat().st_size // 1024} KiB  {ms:.0f} ms{note}", flush=True)
            browser.close()
    finally:
        stop_server(proc)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
