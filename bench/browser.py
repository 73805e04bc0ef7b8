"""Edit → update in Chromium: the app beside Streamlit's floor (one data_editor and one number), in one run.

What is timed, in the page itself (``performance.now()``):

- start: the keydown of the Enter that commits a cell edit (the one pressed while the grid's editor is open);
- end: the DOM change that puts the new *output* on screen (a MutationObserver): a number only the new
  configuration produces;
- also: the run's end reaching the browser: the first animation frame after the websocket brings the message that
  the run the edit started is over.

The app: W_O[i, j] is edited on Multi-head (section 5, the one with a grid and outputs below it); the end
is the section's last output, the metric "max |multi-head output − single-head output|" under the output heatmap,
showing the value for the new W_O (computed here with attn_core, formatted as the page does). Everything above it
(the output heatmap among them) has arrived by then; the heatmaps themselves hold no text to wait for (64 × 64
ones are drawn on a canvas). The edit reruns the whole Multi-head page (sections 1, 2 and the chosen section).
The floor: bench/floor_app.py, its grid's cell (i, j) edited, the end is "sum = …" showing the new sum; its grid
has the size of the configuration's X (3 × 4 for seed 000, 64 × 64 otherwise). Also: X[i, j] edited on Inputs &
weights, which shows no output: the end is that run's end, compared with the floor's run end.

(i, j) = (1, 2). The edit follows tests/e2e/helpers.edit_grid_cell (select the cell with select_grid_cell, wait,
open the editor, fill, Enter) with one change.
Waiting: the helper's waits (Playwright's visibility and text checks, run inside the page) would compete with
the page's rendering inside the timed window, more so on a larger page; here only the page's own stamp is read,
every 100 ms, and the helper's checks (run finished, charts drawn, the cell's value) come after.

The three are edited in turn, each in its own browser session, so load from other processes hits them alike;
median of ``--repeats`` after one warm-up edit. Configurations: seed 000 (the app's default) and n_seq 64,
d_model 64, 8 heads (bench/app.py's, loaded through Share & export's JSON import: too large for a ?c= link).
``--caps`` (default) then loads the caps, randomises X and opens every page of attn_ui.app.registry.PAGES (Inputs &
weights is the page of the randomise): click → run finished and every chart drawn, and the main thread's long tasks
meanwhile (the browser's responsiveness); ``--walks N`` does that N times, each in a fresh session, and gives
medians. A real model opens with whatever model the server can read (without one it says so, and its row times
that message, not a model's charts: bench/model.py times the model).

Run: ``.venv/bin/python bench/browser.py`` (``--repeats 5``, ``--configs seed000``, ``--no-caps``, ``--configs``
alone with ``--walks 3`` for the caps walk only; ``--langs en zh ko``
runs seed 000 in each language, the app opened with ``?lang=``: issue 18's check that a language costs no more). Needs
/usr/bin/chromium. A benchmark that prints figures, never a timed assertion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

import tests.e2e.helpers as e2e  # noqa: E402
from attn_core import config_mask, run, self_attention, share  # noqa: E402
from attn_ui.app import i18n, registry  # noqa: E402
from bench.app import CONFIGS, machine  # noqa: E402  (the same configurations as bench/app.py)

TIMEOUT_MS = 60_000
METRIC = "max |multi-head output − single-head output|"  # the last output of Multi-head's section 5
CELL = (1, 2)  # the cell (row, column) edited in every grid

#: JavaScript: ``runEnded(data)``, whether one websocket message is a ForwardMsg saying a run is over (shared with
#: bench/load.py)
RUN_ENDED_JS = """
  const varint = (bytes, at) => {
    let value = 0, shift = 0, byte;
    do { byte = bytes[at++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; } while (byte & 0x80);
    return [value, at];
  };
  const runEnded = data => {  // data: one ForwardMsg
    if (!(data instanceof ArrayBuffer)) return false;
    const bytes = new Uint8Array(data);
    for (let at = 0, tag, value; at < bytes.length;) {
      [tag, at] = varint(bytes, at);
      const field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) {
        [value, at] = varint(bytes, at);
        if (field === 6) return value !== 2;  // 2: FINISHED_EARLY_FOR_RERUN
      } else if (wire === 2) { [value, at] = varint(bytes, at); at += value; }
      else if (wire === 1) at += 8;
      else if (wire === 5) at += 4;
      else return false;
    }
    return false;
  };
"""

# Installed in every page before the app loads: reads each message the app's websocket receives far enough to know
# a ForwardMsg whose `script_finished` (field 6, a varint) says a run is over (not one cut short for another run)
# and stamps the first animation frame after it in window.__bench.idle, once an Enter has been stamped. (Watching
# the DOM's script state instead misses runs whose first and last messages arrive together: React then never
# renders "running". A small page's run can be that fast.)
_RUN_END_HOOK = """(() => {
""" + RUN_ENDED_JS + """  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', e => {
        const b = window.__bench;
        if (b && b.enter !== null && b.idle === null && runEnded(e.data)) {
          requestAnimationFrame(() => { if (b.idle === null) b.idle = performance.now(); });
        }
      });
    }
  };
})();"""

# Installs (once per document) a keydown listener that stamps the committing Enter and a MutationObserver that
# stamps the DOM change that puts the target on screen.
_WATCH = """(target) => {
  const b = window.__bench || (window.__bench = {});
  Object.assign(b, {enter: null, shown: null, idle: null, target});
  if (b.installed) return;
  b.installed = true;
  const editorOpen = () => document.querySelector('#portal input.gdg-input, #portal textarea.gdg-input');
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && b.enter === null && editorOpen()) b.enter = performance.now();
  }, true);
  const onScreen = t => {
    if (t.kind === 'text') {
      return [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .some(e => e.textContent.trim() === t.text);
    }
    return [...document.querySelectorAll('[data-testid="stMetric"]')]
      .some(e => e.textContent.includes(t.label) && e.querySelector('[data-testid="stMetricValue"]')
                 .textContent.trim() === t.value);
  };
  new MutationObserver(() => {  // runs after each batch of DOM changes, before the browser paints them
    if (b.enter !== null && b.shown === null && b.target && onScreen(b.target)) b.shown = performance.now();
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def new_page(browser) -> Page:
    """A page in a fresh context (a fresh app session), with the run-end hook installed."""
    page = browser.new_context(viewport=e2e.VIEWPORT).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(_RUN_END_HOOK)
    return page


# ---- servers ----------------------------------------------------------------------------------------


@contextmanager
def server(script: Path | None, log_dir: Path):
    """tests/e2e/helpers.start_server on the app, or on ``script`` (served from a folder where it is the
    only streamlit_app.py: start_server always runs that file name from its REPO_ROOT). Yields the URL."""
    root = e2e.REPO_ROOT
    if script is not None:
        folder = Path(tempfile.mkdtemp(dir=log_dir))
        (folder / "streamlit_app.py").symlink_to(script)
        e2e.REPO_ROOT = folder
    try:
        proc, url = e2e.start_server(log_dir / f"{(script or Path('app')).stem}.log")
    finally:
        e2e.REPO_ROOT = root
    try:
        yield url
    finally:
        e2e.stop_server(proc)


# ---- one edit, timed --------------------------------------------------------------------------------


def timed_edit(page: Page, grid, row: int, col: int, text: str, target: dict | None) -> tuple[float | None, float]:
    """(Enter → target on screen, Enter → the run finished) in ms, for one cell edit (no target: None, run only).

    The cell is selected and its editor opened and filled as tests/e2e/helpers.edit_grid_cell does; then Enter,
    and nothing but a cheap check of the page's own stamp every 100 ms until the target is on screen: the helper's
    waits (Playwright's visibility and text checks, run inside the page) would compete with the page's rendering
    inside the timed window, and more so on a larger page. The rerun's end and the cell's value are checked after.
    """
    page.evaluate(_WATCH, target)
    e2e.select_grid_cell(page, grid, row, col)
    page.wait_for_timeout(100)  # the editor opens asynchronously (E2E_NOTES)
    editor = page.locator(e2e.EDITOR_INPUT).first
    if not editor.is_visible():
        page.keyboard.press("Enter")
    expect(editor).to_be_visible()
    editor.fill(text)
    page.keyboard.press("Enter")
    done = "b.idle !== null" + (" && b.shown !== null" if target else "")
    try:
        page.wait_for_function(f"() => {{ const b = window.__bench; return {done}; }}", timeout=TIMEOUT_MS, polling=100)
    except PlaywrightTimeout:
        state = page.evaluate("() => JSON.stringify(window.__bench)")
        raise RuntimeError(f"{page.url}: typed {text} in cell {(row, col)}; {TIMEOUT_MS} ms later: {state}") from None
    shown_ms, idle_ms = page.evaluate("() => [window.__bench.shown - window.__bench.enter, "
                                      "window.__bench.idle - window.__bench.enter]")
    e2e.wait_for_app(page, timeout_ms=TIMEOUT_MS)
    expect(e2e.grid_cell(grid, row, col)).to_have_text(e2e._grid_text(text))
    return (shown_ms if target else None), idle_ms


class AppMultiHead:
    """The app on Multi-head: edit W_O[i, j], wait for the page's last output (a metric of the output)."""

    def __init__(self, page: Page, cfg, cell: tuple[int, int], lang: str) -> None:
        self.page, self.cfg, self.cell, self.last = page, cfg, cell, None
        self.metric = tr(lang, METRIC)
        e2e.goto_page(page, tr(lang, registry.MULTIHEAD.title))
        with e2e.expect_rerun(page, timeout_ms=TIMEOUT_MS):  # the W_O grid and the output are in section 5
            page.get_by_role("radio", name=tr(lang, "5 · Project with W_O")).click()
        if cfg.w_o.size > 64:  # the W_O grid sits in a collapsed expander, built when it opens (a rerun)
            with e2e.expect_rerun(page, timeout_ms=TIMEOUT_MS):
                page.get_by_text(tr(lang, "Edit W_O"), exact=True).click()
        self.grid = e2e.grid_after(page, "W_O")
        expect(self.grid.locator('[data-testid="data-grid-canvas"]')).to_be_visible(timeout=TIMEOUT_MS)

    def edit(self, k: int) -> tuple[float, float]:
        value = 1.0 + 0.125 * (k + 1)  # exact in binary: what is typed is what is stored
        w_o = self.cfg.w_o.copy()
        w_o[self.cell] = value
        cfg = replace(self.cfg, w_o=w_o)
        single = self_attention(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, scale=cfg.scale, mask=config_mask(cfg))
        shown = f"{np.abs(run(cfg).output - single.output).max():.3g}"  # as pages/multihead.py formats it
        if shown == self.last:
            raise RuntimeError(f"edit {k} would show the same metric as the one before ({shown})")
        self.last = shown
        return timed_edit(self.page, self.grid, *self.cell, repr(value), {"kind": "metric", "label": self.metric,
                                                                           "value": shown})


class AppInputs:
    """The app on Inputs & weights: edit X[i, j]; only the rerun's end is known (no output there)."""

    def __init__(self, page: Page, cell: tuple[int, int], lang: str) -> None:
        self.page, self.cell = page, cell
        e2e.goto_page(page, tr(lang, registry.INPUTS.title))
        self.grid = e2e.grid_after(page, "X")

    def edit(self, k: int) -> tuple[None, float]:
        return timed_edit(self.page, self.grid, *self.cell, repr(2.0 + 0.125 * (k + 1)), None)


class Floor:
    """bench/floor_app.py: edit cell (i, j), wait for the new sum."""

    def __init__(self, page: Page, url: str, rows: int, cols: int, cell: tuple[int, int]) -> None:
        self.page, self.cell = page, cell
        e2e.open_app(page, f"{url}/?rows={rows}&cols={cols}")
        self.start = np.arange(rows * cols, dtype=float).reshape(rows, cols) / 10  # as floor_app.py
        self.grid = e2e.grids(page).first

    def edit(self, k: int) -> tuple[float, float]:
        value = 100.0 + 0.125 * (2 * k + 1)  # never a whole number: the bare grid shows 101.0 as "101"
        total = self.start.sum() - self.start[self.cell] + value
        return timed_edit(self.page, self.grid, *self.cell, repr(value),
                          {"kind": "text", "text": f"sum = {total:.4f}"})


def load_config(page: Page, cfg, tmp: Path) -> None:
    """Load ``cfg`` in this session through Share & export's JSON import."""
    path = tmp / "config.json"
    path.write_text(share.to_json(cfg))
    e2e.goto_page(page, "Share & export")
    with e2e.expect_rerun(page, timeout_ms=TIMEOUT_MS):
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    expect(page.get_by_text("Loaded config.json", exact=False)).to_be_visible(timeout=TIMEOUT_MS)


# ---- the run ----------------------------------------------------------------------------------------


def tr(lang: str, text: str) -> str:
    """``text`` (a message id: a page title, a label) as the app shows it in ``lang``."""
    return i18n.catalog(lang).gettext(text)


def measure(browser, app_url: str, floor_url: str, key: str, repeats: int, tmp: Path, lang: str = "en") -> dict:
    cfg = CONFIGS[key][1]()
    pages = [new_page(browser) for _ in range(3)]
    for p in pages[:2]:
        e2e.open_app(p, f"{app_url}/?lang={lang}")
        if key != "seed000":
            load_config(p, cfg, tmp)  # (English only: its check reads the English message)
    heads, inputs = AppMultiHead(pages[0], cfg, CELL, lang), AppInputs(pages[1], CELL, lang)
    floor = Floor(pages[2], floor_url, *cfg.x.shape, CELL)
    got = {"app": [], "app_run": [], "floor": [], "floor_run": [], "inputs_run": []}
    for k in range(repeats + 1):  # the first round warms up
        app_ms, app_run = heads.edit(k)
        floor_ms, floor_run = floor.edit(k)
        _, inputs_run = inputs.edit(k)
        if k:
            for name, v in zip(got, (app_ms, app_run, floor_ms, floor_run, inputs_run), strict=True):
                got[name].append(v)
    for p in pages:
        e2e.assert_no_exception(p)
        p.context.close()
    return {name: statistics.median(v) for name, v in got.items()} | {"n": repeats}


# ---- at the caps: every page after an edit ----------------------------------------------------------

_LONG_TASKS = """() => {
  window.__longTasks = [];
  if (window.__longObserver) return;
  window.__longObserver = new PerformanceObserver(l => window.__longTasks.push(...l.getEntries().map(e => e.duration)));
  window.__longObserver.observe({type: 'longtask'});
}"""


def at_caps(browser, app_url: str, tmp: Path) -> list[tuple[str, float, float, float]]:
    """Load the caps configuration, randomise X on Inputs & weights (the edit: X has too many cells for a grid),
    then open every page: (what, ms from the click to the run finished and every chart drawn, longest main-thread
    task in that time, ms of main-thread tasks over 50 ms in all)."""
    page = new_page(browser)
    e2e.open_app(page, app_url)
    load_config(page, CONFIGS["caps"][1](), tmp)
    e2e.goto_page(page, "Inputs & weights")
    rows = []

    def timed(what: str, action) -> None:
        page.evaluate(_LONG_TASKS)
        start = time.perf_counter()
        try:
            with e2e.expect_rerun(page, timeout_ms=TIMEOUT_MS):
                action()
        except AssertionError as err:
            raise RuntimeError(f"at the caps, {what}: {str(err)[:2000]}") from None
        ms = (time.perf_counter() - start) * 1000
        tasks = page.evaluate("() => window.__longTasks")
        rows.append((what, ms, max(tasks, default=0.0), sum(tasks)))

    page.get_by_role("button", name="Randomise").first.click()
    fill = page.locator('[data-testid="stPopoverBody"]').get_by_role("button", name="Fill")
    timed("Inputs & weights: randomise X (seed 1)", lambda: (
        page.locator('[data-testid="stPopoverBody"]').get_by_role("spinbutton", name="Seed").fill("1"),
        page.keyboard.press("Enter"), fill.click()))
    page.keyboard.press("Escape")  # close the popover (else the next click only closes it)
    expect(page.locator('[data-testid="stPopoverBody"]')).to_have_count(0)
    walk = [(p.title, p.title) for p in registry.PAGES if p != registry.INPUTS]
    for what, title in [*walk, ("Step by step, again (the browser's code warmed up)", "Step by step")]:
        timed(what, lambda title=title: e2e.nav_link(page, title).click())
        expect(e2e.nav_link(page, title)).to_have_attribute("aria-current", "page")  # the page did open
    e2e.assert_no_exception(page)
    page.context.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="*", choices=["seed000", "mid"], default=["seed000", "mid"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--langs", nargs="*", choices=list(i18n.LANGUAGES), default=["en"],
                        help="seed 000 in each of these languages (?lang=), one after the other (default: en)")
    parser.add_argument("--caps", action=argparse.BooleanOptionalAction, default=True,
                        help="also open every page at the caps after an edit (default: yes)")
    parser.add_argument("--walks", type=int, default=1,
                        help="caps walks, each in a fresh session; the table gives each figure's median (default: 1)")
    args = parser.parse_args()
    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    results = {}
    with server(None, tmp) as app_url, server(ROOT / "bench" / "floor_app.py", tmp) as floor_url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
        try:
            for key in args.configs:
                for lang in args.langs if key == "seed000" else ["en"]:
                    results[key, lang] = measure(browser, app_url, floor_url, key, args.repeats, tmp, lang)
            walks = [at_caps(browser, app_url, tmp) for _ in range(args.walks)] if args.caps else []
        finally:
            browser.close()
    print("\nms, median of", args.repeats, "edits after one warm-up, from the Enter that commits the edit\n")
    print("| config | language | app: W_O edit → output (Multi-head) | floor: edit → sum | app / floor "
          "| Inputs: X edit → run finished | floor: edit → run finished | Inputs / floor | Multi-head run finished |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (key, lang), r in results.items():
        print(f"| {CONFIGS[key][0]} | {lang} | {r['app']:.0f} | {r['floor']:.0f} | {r['app'] / r['floor']:.2f} "
              f"| {r['inputs_run']:.0f} | {r['floor_run']:.0f} | {r['inputs_run'] / r['floor_run']:.2f} "
              f"| {r['app_run']:.0f} |")
    if walks:
        print(f"\nAt the caps ({CONFIGS['caps'][0]}): median of {len(walks)} walk(s), each page once a walk, in this "
              "order; every walk's figures in brackets\n")
        print("| action | click → run finished, charts drawn (ms) | longest main-thread task (ms) "
              "| main-thread tasks > 50 ms, total (ms) |")
        print("|---|---|---|---|")
        for rows in zip(*walks, strict=True):
            cells = [f"{statistics.median(r[i] for r in rows):.0f}"
                     + (f" ({', '.join(f'{r[i]:.0f}' for r in rows)})" if len(rows) > 1 else "") for i in (1, 2, 3)]
            print(f"| {rows[0][0]} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
