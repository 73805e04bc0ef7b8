"""Helpers that drive the Self-Attention Explorer in a real browser (Playwright sync API).

What they rely on is measured in ../shared/E2E_NOTES.md (Streamlit 1.67, Debian Chromium):

- ``[data-testid=stApp]`` carries ``data-test-script-state`` ("running", "notRunning", ...): the app has
  finished a run when it is "notRunning". A rerun is detected by the server's ``script_finished`` message on
  the websocket: the attribute alone misses a fast run (React may never render "running").
- A data_editor grid is a canvas (glide-data-grid) with a hidden accessibility table whose cells are
  ``data-testid="glide-cell-{col}-{row}"`` (col 0 is the index column) with ``aria-selected``; those cells
  have no layout, so click positions come from the canvas bounding box.
- Altair charts render as SVG: each cell of a heatmap is a ``path`` whose ``aria-label`` lists its
  encoded fields by axis title ("key: 1: input2; query: 0: input1; value: 0.431937101222"), and the
  numbers drawn on the cells are SVG ``text`` elements.

Everything here is plain functions over a Playwright ``Page``; the fixtures are in conftest.py.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError
from playwright.sync_api import Browser, Locator, Page, WebSocket, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attn_ui.app import registry
from attn_ui.shell.frame import CRASHED

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1800}

#: the sidebar entries, in order (the titles st.navigation registers: attn_ui/app/registry.py)
PAGE_TITLES = tuple(p.title for p in registry.PAGES)

APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
EXCEPTION = '[data-testid="stException"]'
SKELETON = '[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"]'
MAIN = '[data-testid="stMainBlockContainer"]'
GRID = '[data-testid="stDataFrame"]'
CHART = '[data-testid="stVegaLiteChart"]'
EDITOR_INPUT = "#portal input.gdg-input, #portal textarea.gdg-input"
GRID_ROW_PX = 35  # height of a data_editor row (and of its header)

# ---- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path: Path, *, port: int | None = None, timeout_s: float = 30.0) -> tuple[subprocess.Popen, str]:
    """``streamlit run streamlit_app.py`` from the repo root on a free port; returns (process, base URL).

    Waits until ``/_stcore/health`` answers. Output goes to ``log_path``. Raises RuntimeError (with the
    end of the log) if the server exits or does not answer within ``timeout_s``.
    """
    port = port or free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "streamlit_app.py",
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false",
    ]
    log = open(log_path, "wb")  # noqa: SIM115 - the child writes to it for the whole session
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    stop_server(proc)
    tail = Path(log_path).read_text(errors="replace")[-3000:]
    raise RuntimeError(f"streamlit did not start on {url} (exit code {proc.returncode}); its log ends:\n{tail}")


@contextmanager
def model_server(model_dir: Path, log_path: Path, env: str = "ATTN_MODEL") -> Iterator[str]:
    """A server of its own whose A real model page (and Learn's model lesson) reads the checkpoint in ``model_dir``
    ($ATTN_MODEL, set for the server process only; ``env`` another operator variable, e.g. ATTN_CAUSAL_MODEL for A
    model that writes); yields its base URL."""
    yield from server_with(log_path, {env: str(model_dir)})


def server_with(log_path: Path, env: dict[str, str]) -> Iterator[str]:
    """A server of its own with the operator's variables ``env`` (ATTN_MODEL, ATTN_CAUSAL_MODEL, ...) set for its
    process only; yields its base URL."""
    before = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})  # inherited by the server process
    try:
        proc, url = start_server(log_path)
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        yield url
    finally:
        stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server started by start_server (its own process group), by its PID."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# ---- the app as a whole -------------------------------------------------------------------------


def assert_no_exception(page: Page) -> None:
    """Fail with Streamlit's own message if any exception box is on the page, or with the router's message for an
    error no page foresaw (attn_ui.shell.frame.run: the server's log has its traceback)."""
    boxes = page.locator(EXCEPTION)
    if boxes.count():
        raise AssertionError(f"Streamlit exception on {page.url}:\n" + "\n---\n".join(boxes.all_inner_texts()))
    if page.locator(f".st-key-{CRASHED}").count():
        raise AssertionError(f"A page stopped on an unforeseen error on {page.url}: see the server's log")


def wait_for_app(page: Page, *, timeout_ms: float = 20_000) -> None:
    """Wait until the script has finished running and the main block is rendered; no exception box.

    Finished = stApp's script state is "notRunning" over a live connection, the "Running..." status
    icon is gone, no element is still a loading skeleton (widgets load their code lazily), and every
    chart has drawn (an svg or canvas inside it).
    """
    page.wait_for_selector(APP_IDLE, timeout=timeout_ms)
    expect(page.locator('[data-testid="stStatusWidgetRunningIcon"]')).to_have_count(0, timeout=timeout_ms)
    expect(page.locator(f"{MAIN} [data-testid='stElementContainer']").first).to_be_attached(timeout=timeout_ms)
    expect(page.locator(SKELETON)).to_have_count(0, timeout=timeout_ms)
    page.wait_for_function(_ALL_DRAWN, timeout=timeout_ms)
    assert_no_exception(page)


# grids are left out: glide-data-grid draws its canvas only once the grid scrolls into view
_ALL_DRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
  .every(e => e.querySelector('svg.marks, canvas'))"""


class RunCounter:
    """Counts the script runs the server reports finished to one page (``script_finished`` messages), leaving out
    a run cut short for another one (``st.switch_page``, ``st.rerun``: the run that follows is the one to wait for).

    The DOM alone can miss a run: when the run's first and last messages arrive together, React renders
    only the final "notRunning". The websocket messages are never missed.
    """

    def __init__(self) -> None:
        self.finished = 0
        self.sockets = 0  # websockets watched: 0 if the page opened the app before watch_runs

    def attach(self, ws: WebSocket) -> None:
        self.sockets += 1
        ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload: str | bytes) -> None:
        if not isinstance(payload, bytes):
            return
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except DecodeError:
            return
        if msg.WhichOneof("type") == "script_finished":
            if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:  # another run follows it
                self.finished += 1


_COUNTERS: weakref.WeakKeyDictionary[Page, RunCounter] = weakref.WeakKeyDictionary()


#: a phone's user agent (the app tells a phone by it, attn_ui.app.state.on_phone: its edit panel goes in the page)
PHONE_UA = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 "
            "Mobile Safari/537.36")


@contextmanager
def sized_page(browser: Browser, width: int, height: int, *, phone: bool = False) -> Iterator[Page]:
    """A page in a fresh context (a fresh app session) of that viewport, its runs watched (:func:`watch_runs`);
    ``phone``: a phone's touch screen and user agent. Closed on leaving."""
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone,
                                  **({"user_agent": PHONE_UA} if phone else {}))
    context.set_default_timeout(30_000)
    page = context.new_page()
    watch_runs(page)
    try:
        yield page
    finally:
        context.close()


def watch_runs(page: Page) -> RunCounter:
    """The page's run counter, created on first use. Call it before the page opens the app (the ``page``
    fixture and :func:`open_app` do): only websockets opened afterwards are watched."""
    if page not in _COUNTERS:
        _COUNTERS[page] = RunCounter()
        page.on("websocket", _COUNTERS[page].attach)
    return _COUNTERS[page]


@contextmanager
def expect_rerun(page: Page, *, timeout_ms: float = 30_000) -> Iterator[None]:
    """Around an action that makes the app rerun: afterwards, wait until that rerun has finished::

        with expect_rerun(page):
            page.get_by_text("causal").click()

    The rerun is over when the server reports a run finished (its ``script_finished`` message on the websocket;
    the DOM's script state can miss a fast run), not counting a run cut short for another; then
    :func:`wait_for_app`.
    """
    runs = watch_runs(page)
    assert runs.sockets, "watch_runs(page) was not called before the page opened the app: a fast run would be missed"
    before = runs.finished
    yield
    deadline = time.monotonic() + timeout_ms / 1000
    while runs.finished == before:
        if time.monotonic() > deadline:
            raise AssertionError(f"no rerun of the app within {timeout_ms / 1000:.0f} s after the action")
        page.wait_for_timeout(25)  # lets Playwright deliver the websocket events
    wait_for_app(page, timeout_ms=timeout_ms)


def open_app(page: Page, url: str) -> None:
    """Load ``url`` (the app's base URL, or a deep link) and wait for the first run to finish."""
    watch_runs(page)
    page.goto(url)
    wait_for_app(page)


def nav_link(page: Page, title: str) -> Locator:
    """The sidebar navigation link of the page called ``title`` (as in PAGE_TITLES)."""
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    return links.filter(has=page.get_by_text(title, exact=True))


def goto_page(page: Page, title: str) -> None:
    """Click the sidebar link of page ``title`` and wait until that page has run.

    Note (E2E_NOTES): navigating in the sidebar clears the URL's query parameters.
    """
    link = nav_link(page, title)
    expect(link).to_have_count(1)
    with expect_rerun(page):
        link.click()
    expect(link).to_have_attribute("aria-current", "page")


def type_slowly(page: Page, field: Locator, text: str) -> None:
    """Type ``text`` into a number box key by key at a person's pace (what the browser reads of it is what it had
    when Enter came), replacing what it held, then Enter; wait for the run it makes."""
    field.scroll_into_view_if_needed()
    field.click()
    field.press("Control+a")
    field.press("Backspace")
    page.keyboard.type(text, delay=60)
    with expect_rerun(page):
        page.keyboard.press("Enter")


def choose_radio(page: Page, label: str, option: str) -> None:
    """Pick ``option`` of the st.radio labelled ``label`` (it must not be picked already) and wait for the rerun."""
    group = page.get_by_role("radiogroup", name=label)
    choice = group.locator('[data-testid="stRadioOption"]').filter(has=page.get_by_text(option, exact=True))
    expect(choice).to_have_count(1)
    with expect_rerun(page):
        choice.click()
    expect(choice.locator("input")).to_be_checked()


def fit_viewport_to_content(page: Page, *, width: int = 1400, max_height: int = 12_000) -> None:
    """Make the viewport as tall as the page's content (Streamlit scrolls an inner container, so
    ``full_page=True`` would stop at the viewport)."""
    height = page.locator(MAIN).evaluate("e => Math.ceil(e.getBoundingClientRect().bottom + 120)")
    page.set_viewport_size({"width": width, "height": int(min(max(height, 900), max_height))})
    page.wait_for_timeout(300)  # charts re-measure their container
    page.wait_for_selector(APP_IDLE)


def screenshot(page: Page, path: Path) -> Path:
    """A PNG of the whole current page (tall viewport), at ``path``."""
    fit_viewport_to_content(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    return path


# ---- data_editor grids --------------------------------------------------------------------------


def grids(page: Page) -> Locator:
    """Every data_editor / dataframe grid on the page, in document order."""
    return page.locator(GRID)


def grid_cell(grid: Locator, row: int, col: int) -> Locator:
    """The hidden accessibility cell of data row ``row``, data column ``col`` (0-based, after the index)."""
    return grid.locator(f'[data-testid="glide-cell-{col + 1}-{row}"]')


def grid_cell_text(grid: Locator, row: int, col: int) -> str:
    """The raw value the grid holds in that cell (the accessibility table has the unformatted value)."""
    return grid_cell(grid, row, col).inner_text()


def select_grid_cell(page: Page, grid: Locator, row: int, col: int) -> None:
    """Select data cell (row, col) of a grid of any size, and make sure it is the one selected.

    Click the first row's index cell (the canvas's left edge, one and a half rows down: header and rows share one
    height, ``GRID_ROW_PX``), then move with the arrow keys, each awaited in the accessibility table (the selected
    cell is ``aria-selected``). Clicking the target where an even split of the canvas would put it misses in a
    grid narrower than its box or one that scrolls: column widths are not in the DOM.
    """
    selected = grid.locator('td[aria-selected="true"]')
    canvas = grid.locator('[data-testid="data-grid-canvas"]')
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    assert box is not None, "the grid's canvas is not visible"
    # the mouse, not canvas.click(): the grid's scroller lies over the canvas and takes the events
    page.mouse.click(box["x"] + 5, box["y"] + 1.5 * GRID_ROW_PX)
    # the index cell clicked, before any arrow key: after an edit the accessibility table may still mark the cell
    # selected before, and arrows counted from there went astray (a second edit landed in a row label)
    expect(grid_cell(grid, 0, -1)).to_have_attribute("aria-selected", "true")
    while (at := tuple(map(int, selected.get_attribute("data-testid").rsplit("-", 2)[-2:]))) != (col + 1, row):
        dx, dy = col + 1 - at[0], row - at[1]
        page.keyboard.press(("ArrowRight" if dx > 0 else "ArrowLeft") if dx else ("ArrowDown" if dy > 0 else "ArrowUp"))
        expect(selected).not_to_have_attribute("data-testid", f"glide-cell-{at[0]}-{at[1]}")
    expect(grid_cell(grid, row, col)).to_have_attribute("aria-selected", "true")


def edit_grid_cell(page: Page, grid: Locator, row: int, col: int, text: str, *, shown: str | None = None) -> float:
    """Type ``text`` into data cell (row, col) of a data_editor grid and commit it; the cell then reads ``shown``
    (by default the number typed, as the grid writes it; a number column shows text that is no number as "").

    Follows E2E_NOTES: select the cell on the canvas, wait for ``aria-selected``, wait ~100 ms (the editor
    opens asynchronously; typing at once loses keystrokes), press Enter if the overlay input is not open,
    fill, press Enter, wait for the app's rerun. Returns the round trip in ms: from the commit (Enter) to
    the rerun finished with the grid's cell holding the new value.
    """
    editor = open_cell_editor(page, grid, row, col)
    editor.fill(text)
    with expect_rerun(page):
        start = time.perf_counter()
        page.keyboard.press("Enter")
    expect(grid_cell(grid, row, col)).to_have_text(_grid_text(text) if shown is None else shown)
    return (time.perf_counter() - start) * 1000


def open_cell_editor(page: Page, grid: Locator, row: int, col: int) -> Locator:
    """Select data cell (row, col) and open its editor (E2E_NOTES: wait ~100 ms after the selection, the editor
    opens asynchronously; press Enter if it is not open yet); returns the editor's input, holding the cell's text."""
    select_grid_cell(page, grid, row, col)
    page.wait_for_timeout(100)
    editor = page.locator(EDITOR_INPUT).first
    if not editor.is_visible():
        page.keyboard.press("Enter")
    expect(editor).to_be_visible()
    return editor


def type_into_cell(page: Page, grid: Locator, row: int, col: int, text: str, *, delay_ms: float | None = 60) -> None:
    """Replace the text of data cell (row, col) of a text-column grid with ``text`` and commit it (Enter), waiting
    for the app's rerun; the cell then shows ``text`` as typed (the grid keeps it until it is drawn anew).

    Key by key at a person's pace (select all, then ``delay_ms`` between keys) once the editor is open, or with
    ``fill()`` when ``delay_ms`` is None. The editor must hold exactly ``text`` before the commit: a lost keystroke
    fails here, not as a wrong value later.
    """
    editor = open_cell_editor(page, grid, row, col)
    if delay_ms is None:
        editor.fill(text)
    else:
        page.keyboard.press("ControlOrMeta+A")
        page.keyboard.type(text, delay=delay_ms)
    expect(editor).to_have_value(text)
    with expect_rerun(page):
        page.keyboard.press("Enter")
    expect(grid_cell(grid, row, col)).to_have_text(text)


def paste_block(page: Page, origin: str, grid: Locator, block: list[list[str]]) -> None:
    """Put ``block`` on the clipboard as a spreadsheet copies it (tab- and newline-separated), paste it on the grid's
    cell (0, 0) with Control+V and wait for the app's rerun; then move the selection right, so that the grid's
    accessibility table, where the checks read, is drawn again (the canvas shows the pasted cells at once)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    page.evaluate("text => navigator.clipboard.writeText(text)", "\n".join("\t".join(row) for row in block))
    select_grid_cell(page, grid, 0, 0)
    with expect_rerun(page):
        page.keyboard.press("ControlOrMeta+V")
    page.keyboard.press("ArrowRight")


def expect_block_shown(grid: Locator, block: list[list[str]]) -> None:
    """The grid's cells from (0, 0) show ``block``'s texts as typed (or pasted)."""
    for i, row in enumerate(block):
        for j, text in enumerate(row):
            expect(grid_cell(grid, i, j)).to_have_text(text)


#: wraps the canvas's fillText (on screen and off screen: glide-data-grid draws through buffers) to keep every text
#: drawn in ``window.__drawnTexts``: what a grid shows, where its accessibility table holds the raw value (an empty
#: cell and one drawn as a grey "None" both read "" there)
_RECORD_CANVAS_TEXTS = """(() => {
  window.__drawnTexts = [];
  for (const name of ["CanvasRenderingContext2D", "OffscreenCanvasRenderingContext2D"]) {
    const proto = window[name] && window[name].prototype;
    if (!proto) continue;
    const fillText = proto.fillText;
    proto.fillText = function (text, ...rest) {
      window.__drawnTexts.push(String(text));
      return fillText.call(this, text, ...rest);
    };
  }
})()"""


def record_canvas_texts(page: Page) -> None:
    """From the next page load on, keep every text drawn on a canvas (:func:`canvas_texts`). Call it before
    :func:`open_app`."""
    page.add_init_script(_RECORD_CANVAS_TEXTS)


def canvas_texts(page: Page, *, clear: bool = False) -> list[str]:
    """The texts drawn on the page's canvases since it loaded (or since the last call with ``clear``), in order:
    the page must have been opened after :func:`record_canvas_texts`."""
    return page.evaluate("clear => { const t = window.__drawnTexts; if (clear) window.__drawnTexts = []; return t; }",
                         clear)


def _grid_text(text: str) -> str:
    """What a text-column cell shows right after ``text`` was typed into it: the text as typed (the grid shows the
    value at the page's decimals, attn_ui.widgets.numbers.grid_text, once it is drawn anew)."""
    return text


# ---- charts -------------------------------------------------------------------------------------


def charts(page: Page) -> Locator:
    """Every Altair / Vega-Lite chart on the page, in document order."""
    return page.locator(CHART)


def after_label(page: Page, label: str, testid: str) -> Locator:
    """The first element with ``data-testid=testid`` after the bold label ``label`` in document order.

    The pages put a bold name above each matrix ("**Output** · shape 3 × 3", "**X** · 3 × 4"), so
    ``after_label(page, "Output", "stVegaLiteChart")`` is the output heatmap.
    """
    literal = f'"{label}"' if '"' not in label else f"'{label}'"
    return page.locator(f"xpath=(//strong[normalize-space()={literal}]/following::*[@data-testid='{testid}'])[1]")


def grid_after(page: Page, label: str) -> Locator:
    """The data_editor grid under the bold label ``label`` (e.g. "X" on Inputs & weights)."""
    return after_label(page, label, "stDataFrame")


def chart_after(page: Page, label: str) -> Locator:
    """The chart under the bold label ``label`` (e.g. "Weights" on Step by step)."""
    return after_label(page, label, "stVegaLiteChart")


def chart_items(chart: Locator) -> list[dict[str, str]]:
    """The data behind a chart's rect marks, from the SVG's aria-labels: one dict per mark, in drawing order.

    Vega writes each encoded field as "title: value" joined by "; ", x first, then y, then colour; the titles
    are the axis titles ("query", "key", "token", ...), or the field names ("row", "col") when untitled.
    """
    chart.locator("g.mark-rect path").first.wait_for(state="attached")
    labels = chart.locator("g.mark-rect path[aria-label]").evaluate_all("es => es.map(e => e.ariaLabel)")
    items = []
    for label in labels:
        fields: dict[str, str] = {}
        for part in label.split("; "):
            key, _, value = part.partition(": ")
            fields.setdefault(key, value)  # the first occurrence of a field wins
        items.append(fields)
    return items


def heatmap_values(chart: Locator, value: str = "value") -> tuple[list[str], list[str], np.ndarray]:
    """A heatmap's (row labels, column labels, values [r, c]) from its accessible data.

    The column field is the first in each label (x), the row field the second (y); Vega writes negative
    numbers with "−" (U+2212). A cell without a number is nan: a masked (grey) cell's label says
    "value: masked" (attn_ui.widgets.heatmap), so it is nan too; the numbers drawn on the cells (:func:`chart_texts`)
    say "−∞" for a masked score and 0 for a masked weight.
    """
    items = chart_items(chart)
    col_key, row_key = [k for k in items[0] if k != value][:2]  # x, then y (the tooltip's fields may follow)
    rows = list(dict.fromkeys(it[row_key] for it in items))
    cols = list(dict.fromkeys(it[col_key] for it in items))
    values = np.full((len(rows), len(cols)), np.nan)
    for it in items:
        try:
            values[rows.index(it[row_key]), cols.index(it[col_key])] = float(it.get(value, "nan").replace("−", "-"))
        except ValueError:  # "NaN", "null", ...
            pass
    return rows, cols, values


def chart_cell(chart: Locator, x: str, y: str) -> Locator:
    """The rect mark of a heatmap's cell in column ``x`` and row ``y`` (their labels), found by its aria-label
    (column first, row second: :func:`heatmap_values`)."""
    for i, item in enumerate(chart_items(chart)):
        if list(item.values())[:2] == [x, y]:
            return chart.locator("g.mark-rect path[aria-label]").nth(i)
    raise AssertionError(f"no cell of column {x!r} and row {y!r} in the chart")


def tooltip_of(page: Page, mark: Locator) -> dict[str, str]:
    """Hover a chart mark near its top-left corner (a number drawn on a heatmap cell lies over its centre) and
    read the tooltip Vega shows: {field title: value}, in order."""
    tip = page.locator("#vg-tooltip-element.visible")
    page.mouse.move(0, 0)  # a tooltip already open would be read instead
    expect(tip).to_have_count(0)
    mark.hover(position={"x": 3, "y": 3})
    expect(tip).to_have_count(1)
    rows = tip.locator("tr").evaluate_all(
        "trs => trs.map(tr => [tr.querySelector('.key').textContent, tr.querySelector('.value').textContent])")
    return dict(rows)


def table_after_heading(page: Page, heading: str) -> list[list[str]]:
    """The body rows (cell texts) of the first markdown table after the heading containing ``heading``."""
    literal = f'"{heading}"' if '"' not in heading else f"'{heading}'"
    table = page.locator(f"xpath=(//*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]"
                         f"[contains(normalize-space(), {literal})]/following::table)[1]")
    return table.locator("tbody tr").evaluate_all("trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))")


def chart_texts(chart: Locator) -> list[str]:
    """The numbers drawn on a chart's cells (its SVG text marks), in drawing order; not the focus's lines above the
    cells (attn_ui.widgets.heatmap.focus_layers: the hint, the lit cell's name)."""
    return chart.locator("g.mark-text.role-mark:not(.focus_hint_marks):not(.focus_cell_marks) text").evaluate_all(
        "es => es.map(e => e.textContent)")
