"""Edit → update in Chromium: the app beside Streamlit's floor (bench/floor_app.py), in one run.

What is timed, in the page itself (``performance.now()``):

- start: the keydown of the Enter that commits a cell edit (the one pressed while the grid's editor is open);
- end: the DOM change that puts the new *output* on screen (a MutationObserver): a number only the new
  configuration produces;
- also: the run's end reaching the browser: the first animation frame after the websocket brings the message that
  the run the edit started is over.

The app, three edits, each in its own browser session:

- Multi-head: W_O[i, j] is edited in the page's own grid (section 5, the one with a grid and outputs below it); the
  end is the section's last output, the metric "max |multi-head output − single-head output|" under the output
  heatmap, showing the value for the new W_O (computed here with attn_core, formatted as the page does). Everything
  above it (the output heatmap among them) has arrived by then; the heatmaps themselves hold no text to wait for
  (64 × 64 ones are drawn on a canvas). The edit reruns the whole Multi-head page (sections 1, 2 and the chosen one).
- Step by step: X[i, j] is edited in the sidebar's *Edit the numbers* panel (attn_ui.shell.edit_panel, the matrix it
  opens on); the end is the page's last output, the drill-down's check under query 0's weighted values, "Sum of the
  weighted values [...] = output row 0 of O = AV [...] ✓ (largest difference ...)", showing head 0's numbers for the
  new X (computed here with attn_core and written as attn_ui.views.drill_down writes them). Every step and chart
  of the page comes before it.
- Inputs & weights: X[i, j] edited in the page's grid; the page shows no number that follows the edit in text (its
  result heatmaps hold none at 64 × 64), so the end is that run's end, compared with the floor's run end.

The floor: bench/floor_app.py, its grid's cell (i, j) edited, the end is "sum = …" showing the new sum; its grid
has the size of the configuration's X (3 × 4 for seed 000, 64 × 64 otherwise).

(i, j) = (1, 2). The edit follows tests/e2e/helpers.edit_grid_cell (select the cell with select_grid_cell, wait,
open the editor, fill, Enter) with one change.
Waiting: the helper's waits (Playwright's visibility and text checks, run inside the page) would compete with
the page's rendering inside the timed window, more so on a larger page; here only the page's own stamp is read,
every 100 ms, and the helper's checks (run finished, charts drawn, the cell's value) come after.

Rounds: each round edits Multi-head, Step by step, the floor and Inputs & weights back to back (one warm-up round
first), so load from other processes hits app and floor alike; each round's app / floor ratio is kept, and the table
gives over ``--repeats`` rounds (default 15) the median ms of each, the median ratio and its spread (interquartile
range and min–max of the rounds' ratios). Every edit types a value never typed before in the run (the traces are
cached across sessions and languages). Configurations: seed 000 (the app's default) and n_seq 64, d_model 64, 8 heads
(bench/app.py's, loaded through Share & export's JSON import: too large for a ?c= link).

``--caps`` (default) then loads the caps (bench/app.py's: the largest configuration the app accepts), randomises X and
opens every page of attn_ui.app.registry.PAGES (Inputs & weights is the page of the randomise). For each: click →
run finished and every chart drawn, the main thread's CPU time meanwhile (Chromium's Performance.getMetrics
``ThreadTime`` over CDP: the renderer's main-thread tasks, Playwright's own checks of the page among them), its
longest task and the sum of its tasks over 50 ms (the browser's responsiveness), and the number of charts on the
page. Right after each, the same in the chart floor (bench/floor_app.py ``?charts=N``, one session per N): a switch
to a page of as many heatmaps of the caps' size (256 × 256 in 32 × 32 blocks), so each page is printed beside
Streamlit's own cost of drawing its charts, with the ratios. ``--walks N`` does that N times, each in fresh
sessions, and gives medians. A real model opens with whatever model the server can read (without one it says so,
and its row times that message, not a model's charts: bench/model.py times the model).

Run: ``.venv/bin/python bench/browser.py`` (``--repeats 5``, ``--configs seed000``, ``--no-caps``, ``--configs``
alone with ``--walks 3`` for the caps walk only; ``--langs en zh ko``
runs seed 000 in each language, the app opened with ``?lang=``: issue 18's check that a language costs no more). Needs
/usr/bin/chromium. A benchmark that prints figures, never a timed assertion. The load average is printed before and
after: read wall-clock figures with it, and the ratios (app and floor under the same load) first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

import tests.e2e.helpers as e2e  # noqa: E402
from attn_core import LIMITS, config_mask, run, self_attention, share  # noqa: E402
from attn_ui.app import i18n, registry, state  # noqa: E402
from attn_ui.views import drill_down  # noqa: E402
from attn_ui.widgets.numbers import format_numbers  # noqa: E402
from bench.app import CONFIGS, machine  # noqa: E402  (the same configurations as bench/app.py)

TIMEOUT_MS = 60_000
METRIC = "max |multi-head output − single-head output|"  # the last output of Multi-head's section 5
#: the last output of Step by step: the drill-down's check of query i's weighted values (attn_ui.views.drill_down)
CHECK = ("Sum of the weighted values {total} = output row {i} of O = AV {output} {mark} (largest difference "
         "{gap}).")
PANEL_GRID = "[data-testid='stSidebar'] [data-testid='stDataFrame']"  # the edit panel's grid (attn_ui.shell.edit_panel)
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


class AppSteps:
    """The app on Step by step: edit X[i, j] in the sidebar's edit panel, wait for the page's last output (the
    drill-down's check of query 0 in head 0, the query and head the page opens on)."""

    def __init__(self, page: Page, cfg, cell: tuple[int, int], lang: str) -> None:
        self.page, self.cfg, self.cell, self.lang, self.last = page, cfg, cell, lang, None
        e2e.goto_page(page, tr(lang, registry.STEPS.title))
        self.grid = page.locator(PANEL_GRID).first  # the panel opens on X
        expect(self.grid.locator('[data-testid="data-grid-canvas"]')).to_be_visible(timeout=TIMEOUT_MS)

    def edit(self, k: int) -> tuple[float, float]:
        value = -(2.0 + 0.125 * (k + 1))  # exact in binary; never typed on Inputs & weights (the traces are shared)
        x = self.cfg.x.copy()
        x[self.cell] = value
        shown = drill_down_check(replace(self.cfg, x=x), self.lang)
        if shown == self.last:
            raise RuntimeError(f"edit {k} would show the same check as the one before ({shown})")
        self.last = shown
        return timed_edit(self.page, self.grid, *self.cell, repr(value), {"kind": "text", "text": shown})


def drill_down_check(cfg, lang: str, i: int = 0) -> str:
    """Step by step's last sentence for query ``i`` of head 0, written as attn_ui.views.drill_down.show_drill_down
    writes it (at the app's default decimals), from attn_core's numbers."""
    t = run(cfg).heads[0]
    total = t.contributions(i).sum(axis=0)  # [d_v]
    return tr(lang, CHECK).format(
        total=vector_text(total, lang), i=i, output=vector_text(t.output[i], lang),
        mark="✓" if np.allclose(total, t.output[i], rtol=1e-12, atol=1e-12) else "✗",
        gap=f"{float(np.abs(total - t.output[i]).max()):.1e}")


def vector_text(v: np.ndarray, lang: str) -> str:
    """A row vector as attn_ui.views.drill_down.vector_text writes it, in ``lang``: "[1.8639, 6.3194, 1.7042]"."""
    items = format_numbers(v[:drill_down.MAX_ITEMS], state.DEFAULT_PRECISION, "short")
    if len(v) > drill_down.MAX_ITEMS:
        items.append(tr(lang, "… ({n} more)").format(n=len(v) - drill_down.MAX_ITEMS))
    return "[" + ", ".join(items) + "]"


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


#: what the edit table compares: (row, the app's figure, the floor's figure), names of :func:`measure`'s rounds
COMPARED = [
    ("Multi-head: W_O edit → output", "heads", "floor"),
    ("Step by step: X edit in the panel → output", "steps", "floor"),
    ("Inputs & weights: X edit → run finished", "inputs_run", "floor_run"),
    ("Multi-head: W_O edit → run finished", "heads_run", "floor_run"),
    ("Step by step: X edit in the panel → run finished", "steps_run", "floor_run"),
]


def measure(browser, app_url: str, floor_url: str, key: str, rounds: range, tmp: Path,
            lang: str = "en") -> dict[str, list[float]]:
    """A warm-up round, then the others of ``rounds``, each editing Multi-head, Step by step, the floor and Inputs &
    weights back to back: each round's ms by name (heads, steps, floor: Enter → output; *_run: Enter → run finished).
    Round k types values of its own (the rounds of the whole run are numbered apart: the traces of one configuration
    are cached across sessions and languages)."""
    cfg = CONFIGS[key][1]()
    pages = [new_page(browser) for _ in range(4)]
    for p in pages[:3]:
        e2e.open_app(p, f"{app_url}/?lang={lang}")
        if key != "seed000":
            load_config(p, cfg, tmp)  # (English only: its check reads the English message)
    heads, steps = AppMultiHead(pages[0], cfg, CELL, lang), AppSteps(pages[1], cfg, CELL, lang)
    inputs = AppInputs(pages[2], CELL, lang)
    floor = Floor(pages[3], floor_url, *cfg.x.shape, CELL)
    got: dict[str, list[float]] = {name: [] for name in
                                   ("heads", "heads_run", "steps", "steps_run", "floor", "floor_run", "inputs_run")}
    for k in rounds:
        figures = (*heads.edit(k), *steps.edit(k), *floor.edit(k), inputs.edit(k)[1])
        if k != rounds.start:  # the first round warms up
            for name, v in zip(got, figures, strict=True):
                got[name].append(v)
    for p in pages:
        e2e.assert_no_exception(p)
        p.context.close()
    return got


def spread(app: list[float], floor: list[float]) -> str:
    """Table cells: app and floor medians (ms), then the median, interquartile range and min–max of the rounds'
    app / floor ratios.

    >>> spread([100.0, 110.0, 120.0, 130.0, 140.0], [100.0] * 5)
    '120 | 100 | **1.20** | 1.10–1.30 | 1.00–1.40'
    """
    ratios = [a / f for a, f in zip(app, floor, strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else ratios * 3
    return (f"{statistics.median(app):.0f} | {statistics.median(floor):.0f} | **{statistics.median(ratios):.2f}** "
            f"| {q1:.2f}–{q3:.2f} | {min(ratios):.2f}–{max(ratios):.2f}")


# ---- at the caps: every page after an edit, beside the chart floor ------------------------------------

_LONG_TASKS = """() => {
  window.__longTasks = [];
  if (window.__longObserver) return;
  window.__longObserver = new PerformanceObserver(l => window.__longTasks.push(...l.getEntries().map(e => e.duration)));
  window.__longObserver.observe({type: 'longtask'});
}"""


@dataclass(frozen=True)
class Drawn:
    """One click → run finished and every chart drawn, in one page: ms, and the browser's work meanwhile."""

    ms: float  # click → run finished, every chart drawn (wall clock, in this process)
    cpu_ms: float  # the renderer's main-thread CPU time meanwhile (Performance.getMetrics ThreadTime)
    longest_ms: float  # the longest main-thread task (PerformanceObserver 'longtask': tasks over 50 ms)
    long_ms: float  # the main-thread tasks over 50 ms, in all
    charts: int  # Vega-Lite charts on the page once drawn (not Overview's Graphviz pipeline)


class Timed:
    """A page whose clicks are timed (:meth:`click`), with a CDP session reading its main thread's CPU time."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")

    def thread_s(self) -> float:
        """The CPU time of the renderer's main thread since Performance.enable, in s."""
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return next(m["value"] for m in metrics if m["name"] == "ThreadTime")

    def click(self, what: str, action) -> Drawn:
        """``action`` (a click that makes the app rerun), timed until the run has finished and every chart is drawn."""
        self.page.evaluate(_LONG_TASKS)
        cpu, start = self.thread_s(), time.perf_counter()
        try:
            with e2e.expect_rerun(self.page, timeout_ms=TIMEOUT_MS):
                action()
        except AssertionError as err:
            raise RuntimeError(f"at the caps, {what}: {str(err)[:2000]}") from None
        ms = (time.perf_counter() - start) * 1000
        cpu_ms = (self.thread_s() - cpu) * 1000
        tasks = self.page.evaluate("() => window.__longTasks")
        return Drawn(ms, cpu_ms, max(tasks, default=0.0), sum(tasks), self.page.locator(e2e.CHART).count())


class ChartFloor:
    """bench/floor_app.py's chart floor: for N charts, a session of its own (opened on first use, one untimed
    switch to warm it up) whose :meth:`switch` clicks the other page of N heatmaps of the caps' size."""

    OTHER = {"Charts A": "Charts B", "Charts B": "Charts A"}  # its two pages: from one, the other

    def __init__(self, browser, url: str) -> None:
        self.browser, self.url = browser, url
        self.sessions: dict[int, Timed] = {}
        self.on: dict[int, str] = {}  # the page each session is on

    def switch(self, n: int) -> Drawn:
        if n not in self.sessions:
            page = new_page(self.browser)
            e2e.open_app(page, f"{self.url}/?charts={n}&side={LIMITS.n_seq}")
            self.sessions[n], self.on[n] = Timed(page), "Charts A"
            self.switch(n)  # the warm-up
        timed, title = self.sessions[n], self.OTHER[self.on[n]]
        drawn = timed.click(f"the floor's {title} ({n} charts)", lambda: e2e.nav_link(timed.page, title).click())
        expect(e2e.nav_link(timed.page, title)).to_have_attribute("aria-current", "page")
        self.on[n] = title
        if drawn.charts != n:
            raise RuntimeError(f"the chart floor drew {drawn.charts} charts, not {n}")
        return drawn

    def close(self) -> None:
        for timed in self.sessions.values():
            e2e.assert_no_exception(timed.page)
            timed.page.context.close()


def at_caps(browser, app_url: str, floor_url: str, tmp: Path) -> list[tuple[str, Drawn, Drawn]]:
    """Load the caps configuration, randomise X on Inputs & weights (the edit: X has too many cells for a grid),
    then open every page: (what, the app's click → drawn, the chart floor's switch to as many charts), in turn."""
    page = new_page(browser)
    e2e.open_app(page, app_url)
    load_config(page, CONFIGS["caps"][1](), tmp)
    e2e.goto_page(page, "Inputs & weights")
    app, floor, rows = Timed(page), ChartFloor(browser, floor_url), []

    def timed(what: str, action) -> None:
        drawn = app.click(what, action)
        rows.append((what, drawn, floor.switch(drawn.charts)))

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
    floor.close()
    return rows


def median_cell(values: list[float], digits: int = 0) -> str:
    """The median of ``values``, and their range in brackets when there are several.

    >>> median_cell([1.0]), median_cell([1.234, 1.5, 1.0], 2)
    ('1', '1.23 (1.00–1.50)')
    """
    med = f"{statistics.median(values):.{digits}f}"
    return med if len(values) == 1 else f"{med} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def caps_table(walks: list[list[tuple[str, Drawn, Drawn]]]) -> None:
    """Each action's figures beside the floor's, medians over the walks (with their ranges)."""
    print(f"\nAt the caps ({CONFIGS['caps'][0]}): median of {len(walks)} walk(s), each page once a walk, in this "
          "order, each followed by the chart floor (bench/floor_app.py ?charts=N: a page switch to N plain heatmaps of "
          f"{LIMITS.n_seq} × {LIMITS.n_seq} in 32 × 32 blocks); with several walks, their range in brackets. "
          "CPU: the renderer's main-thread CPU time from the click until the page is drawn (Performance.getMetrics "
          "ThreadTime)\n")
    print("| action | charts | app: click → drawn (ms) | floor (ms) | app / floor | app: main-thread CPU (ms) "
          "| floor CPU (ms) | CPU app / floor | longest task app / floor (ms) | tasks > 50 ms app / floor (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rows in zip(*walks, strict=True):
        def cell(fn, digits: int = 0, rows=rows) -> str:
            return median_cell([fn(app, floor) for _what, app, floor in rows], digits)
        charts = {app.charts for _what, app, _floor in rows}
        print(f"| {rows[0][0]} | {', '.join(map(str, sorted(charts)))} "
              f"| {cell(lambda a, f: a.ms)} | {cell(lambda a, f: f.ms)} | {cell(lambda a, f: a.ms / f.ms, 2)} "
              f"| {cell(lambda a, f: a.cpu_ms)} | {cell(lambda a, f: f.cpu_ms)} "
              f"| {cell(lambda a, f: a.cpu_ms / f.cpu_ms, 2)} "
              f"| {cell(lambda a, f: a.longest_ms)} / {cell(lambda a, f: f.longest_ms)} "
              f"| {cell(lambda a, f: a.long_ms)} / {cell(lambda a, f: f.long_ms)} |")


def load() -> str:
    """The machine's load averages (1, 5, 15 min), as ``uptime`` prints them."""
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="*", choices=["seed000", "mid"], default=["seed000", "mid"])
    parser.add_argument("--repeats", type=int, default=15, help="rounds after the warm-up (default: 15)")
    parser.add_argument("--langs", nargs="*", choices=list(i18n.LANGUAGES), default=["en"],
                        help="seed 000 in each of these languages (?lang=), one after the other (default: en)")
    parser.add_argument("--caps", action=argparse.BooleanOptionalAction, default=True,
                        help="also open every page at the caps after an edit (default: yes)")
    parser.add_argument("--walks", type=int, default=1,
                        help="caps walks, each in fresh sessions; the table gives each figure's median (default: 1)")
    args = parser.parse_args()
    print(machine())
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, before: {load()}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    results = {}
    with server(None, tmp) as app_url, server(ROOT / "bench" / "floor_app.py", tmp) as floor_url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
        try:
            for key in args.configs:
                for lang in args.langs if key == "seed000" else ["en"]:
                    rounds = range(len(results) * (args.repeats + 1), (len(results) + 1) * (args.repeats + 1))
                    results[key, lang] = measure(browser, app_url, floor_url, key, rounds, tmp, lang)
            walks = [at_caps(browser, app_url, floor_url, tmp) for _ in range(args.walks)] if args.caps else []
        finally:
            browser.close()
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, after: {load()}")
    if results:
        print(f"\nms from the Enter that commits the edit, {args.repeats} rounds after one warm-up, each round the "
              "app's edits and the floor's back to back: medians, and the spread of the rounds' app / floor ratios\n")
        print("| config | language | edit → what | app (ms) | floor (ms) | app / floor, median | interquartile "
              "| min–max |")
        print("|---|---|---|---|---|---|---|---|")
        for (key, lang), got in results.items():
            for what, app, floor in COMPARED:
                print(f"| {CONFIGS[key][0]} | {lang} | {what} | {spread(got[app], got[floor])} |")
    if walks:
        caps_table(walks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
