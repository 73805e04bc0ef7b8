"""Many learners on one server: N browser sessions editing at once; per-edit latency and the server's memory.

One Streamlit server (tests/e2e/helpers.start_server, a fresh one for every row of the table), one headless
Chromium, one browser context per session (a context is a learner: its own cookies, its own Streamlit session).
The sessions run concurrently (Playwright's async API, ``asyncio.gather``). Each session opens the app, loads its
configuration, goes to Inputs & weights, makes one warm-up edit (not counted), then loops ``--edits`` times:

- **edit**: at seed 000 (and ``mid``), type a new number into X[0, 0] on Inputs & weights (select the cell, open its
  editor, fill, Enter, as tests/e2e/helpers.edit_grid_cell does). At the caps X has 131,072 cells, more than a grid
  edits (attn_ui.widgets.grid_editor.MAX_EDITABLE_CELLS), and so has every matrix: the edit is X's *Randomise* popover,
  a new seed, *Fill* (every number of X changes);
- **page switch**: click ``--switch-to`` (default Step by step) in the sidebar, then Inputs & weights again.

What is timed, in the page (``performance.now()``): from the committing action (the Enter that commits the cell
while its editor is open; the click on *Fill*; the click on the sidebar link) to the arrival of the server's
message that the run it started has finished (a ForwardMsg with ``script_finished``, not one cut short for another
run: the same message tests/e2e/helpers.expect_rerun counts and bench/browser.py's hook reads). Each session
waits ``--think`` seconds (± half, at random) between actions, as a learner would; 0 hammers the server.

Memory: VmRSS of the streamlit process and of its descendants (/proc/<pid>/status), sampled every 0.5 s: before
any session (idle), after the sessions opened, the peak during the edits, at the end; also the load average and the
server's CPU use during the edits (CPU seconds / wall seconds: 100 % is one core of the 2). The browser runs on the
same cores as the server, so at many sessions the latency measures the machine, not the server alone; the server's
own cost is its CPU ms per run: the CPU seconds (utime + stime, /proc/<pid>/stat) of the streamlit process and its
descendants in the measured window, divided by the runs it finished in that window (counted in every page by the
hook below). If that stays flat as sessions are added, the server does not slow down with N; wall-clock latency
then grows with the waiting for a core.

``--server-env KEY=VALUE`` (repeatable) sets a variable in the server's environment only, e.g.
``--server-env MALLOC_ARENA_MAX=2``, for A/B runs of settings read at the server's start.

Configurations (bench/app.py's): seed000 (the app's default), mid (n_seq 64, d_model 64, 8 heads) and caps
(n_seq 256, d_model 512, widths 512, 8 heads), loaded through Share & export's JSON import.

``--soak SECONDS``: one server, ``--sessions`` sessions (the first value; sizes given round-robin from ``--sizes``)
edit and switch pages for that long; each session starts over in a new context every ``--churn`` edits (learners
come and go); prints the RSS at start, every minute and at the end, with that minute's latency and where the
memory is (:func:`anon_split`: main heap, glibc's other malloc arenas, other anonymous mappings, files).

``--writers N`` (issue 40): N sessions write ``--write-tokens`` tokens on A model that writes after prompts of about
``--prompt-tokens`` tokens, with a random GPT-2 of distilgpt2's shape (6 layers × d_model 768, 12 heads, vocabulary
50,257; made once with tests/tiny_gpt2.py's helpers in $TMPDIR/attn-bench-models) as the server's causal model, while
one more session edits X[0, 0] on Inputs & weights at seed 000: its edit times idle (``--edits`` of them, before
the writes) and while the writes last, the ratio of the medians, the writes' times; ``--translator`` adds a session
translating a new sentence on A model that translates (a random T5 of t5-small's shape) idle and 5 s into the writes.
``--app-dir`` serves another checkout (the code before a change, in a second worktree) with this benchmark.

Run::

    .venv/bin/python bench/load.py                                   # seed000 at 1 5 10 20, caps at 1 2 4
    .venv/bin/python bench/load.py --sizes seed000 --sessions 1 5 --edits 5
    .venv/bin/python bench/load.py --soak 1800 --sessions 4 --sizes seed000 mid
    .venv/bin/python bench/load.py --soak 600 --sessions 4 --sizes caps seed000 --server-env MALLOC_ARENA_MAX=2
    .venv/bin/python bench/load.py --writers 2 --translator                   # fair compute (issue 40)
    .venv/bin/python bench/load.py --writers 2 --translator --app-dir /tmp/attn-before

Needs /usr/bin/chromium. Prints figures, never asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import Browser, Page, async_playwright, expect  # noqa: E402
from playwright.async_api import TimeoutError as PlaywrightTimeout  # noqa: E402

import tests.e2e.helpers as e2e  # noqa: E402
from attn_core import share  # noqa: E402
from attn_ui.app import registry  # noqa: E402
from bench.app import CONFIGS, machine  # noqa: E402
from bench.browser import RUN_ENDED_JS  # noqa: E402

RETURN_MB = 150  # issue 27: the RSS back within this of its idle baseline within 60 s of the last tab closing
TIMEOUT_MS = 180_000  # 20 sessions on 2 cores: a step can take long; a real hang still fails
DEFAULT_SESSIONS = {"seed000": [1, 5, 10, 20], "mid": [1, 5, 10], "caps": [1, 2, 4]}

# Installed in every page before the app loads. Counts the runs the server reports finished (ForwardMsg field 6,
# script_finished, a varint; 2 = FINISHED_EARLY_FOR_RERUN is left out, another run follows it) and, once armed,
# stamps the committing action (Enter in an open cell editor, a click on a "Fill" button or a sidebar link) and
# the arrival of the first finished-run message after it.
_HOOK = """(() => {
  const L = window.__load = {runs: 0, armed: false, start: null, end: null};
""" + RUN_ENDED_JS + """  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', e => {
        if (!runEnded(e.data)) return;
        L.runs += 1;
        if (L.armed && L.start !== null && L.end === null) L.end = performance.now();
      });
    }
  };
  const stamp = () => { if (L.armed && L.start === null) L.start = performance.now(); };
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && document.querySelector('#portal input.gdg-input, #portal textarea.gdg-input')) stamp();
  }, true);
  document.addEventListener('click', e => {
    const t = e.target instanceof Element ? e.target : null;
    if (!t) return;
    const b = t.closest('button');
    if (t.closest('[data-testid="stSidebarNavLink"]') || (b && b.innerText.trim() === 'Fill')) stamp();
  }, true);
})();"""

_IDLE = (f"() => document.querySelector({e2e.APP_IDLE!r}) !== null"
         " && !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"
         f" && !document.querySelector({e2e.SKELETON!r})")


# ---- the server's memory ------------------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used by ``pid`` (its threads included), by its live descendants, and by the
    children it has waited for (cutime + cstime)."""
    total = 0
    for p in descendants(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if p == pid else 0)
    return total / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` and of every descendant, in MB (MiB)."""
    total_kb = 0
    for p in descendants(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            pass
    return total_kb / 1024


def anon_split(pid: int) -> str:
    """Where the server's resident memory is (/proc/<pid>/smaps), MiB: the main malloc heap ([heap]); glibc's
    other malloc arenas (one per thread that allocates, up to 8 × cores: anonymous mappings starting on a 64 MiB
    boundary, as glibc aligns every arena's heap); other anonymous memory (mmapped blocks such as numpy arrays
    above the mmap threshold, thread stacks); files (code, libraries)."""
    heap = arenas = small = files = 0
    arena = False
    name = ""
    try:
        lines = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    except OSError:
        return "?"
    for line in lines:
        head = line.split(None, 1)
        if "-" in head[0] and not head[0].endswith(":"):
            lo, parts = int(head[0].split("-")[0], 16), line.split()
            name = parts[5] if len(parts) > 5 else ""
            arena = not name and lo % (64 << 20) == 0
        elif head[0] == "Rss:":
            kb = int(head[1].split()[0])
            if name == "[heap]":
                heap += kb
            elif name.startswith("/"):
                files += kb
            elif arena:
                arenas += kb
            else:
                small += kb
    return (f"heap {heap / 1024:.0f}, arenas {arenas / 1024:.0f}, other anon {small / 1024:.0f}, "
            f"files {files / 1024:.0f}")


def start_server(log_path: Path, env: dict[str, str]):
    """tests/e2e/helpers.start_server with ``env`` added to the server's environment only (not the browser's)."""
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # start_server's child inherits os.environ
    try:
        return e2e.start_server(log_path)
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def threads(pid: int) -> int:
    """The server's threads now (/proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Sampler:
    """RSS of the server every ``every`` s in the background: the peak since the last reset."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        self.pid, self.every, self.peak, self._task = pid, every, 0.0, None

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, rss_mb(self.pid))
            await asyncio.sleep(self.every)

    def start(self) -> None:
        self.peak = rss_mb(self.pid)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> float:
        if self._task:
            self._task.cancel()
        return max(self.peak, rss_mb(self.pid))


# ---- one session --------------------------------------------------------------------------------------


@dataclass
class Stats:
    edits: list[float] = field(default_factory=list)  # ms, committing action -> run finished
    switches: list[float] = field(default_factory=list)  # ms, sidebar click -> run finished
    errors: list[str] = field(default_factory=list)


async def wait_idle(page: Page) -> None:
    await page.wait_for_function(_IDLE, timeout=TIMEOUT_MS, polling=100)


async def runs(page: Page) -> int:
    return await page.evaluate("() => window.__load.runs")


async def after_rerun(page: Page, before: int) -> None:
    """Wait until a run finished after ``before`` runs, then until the app is idle."""
    await page.wait_for_function(f"() => window.__load.runs > {before}", timeout=TIMEOUT_MS, polling=100)
    await wait_idle(page)


async def timed(page: Page, action) -> float:
    """ms from the action's stamped event (see _HOOK) to the next finished run; then waits until idle."""
    await page.evaluate("() => Object.assign(window.__load, {armed: true, start: null, end: null})")
    await action()
    try:
        await page.wait_for_function("() => window.__load.end !== null", timeout=TIMEOUT_MS, polling=50)
    except PlaywrightTimeout:
        state = await page.evaluate("() => JSON.stringify(window.__load)")
        raise RuntimeError(f"no run finished within {TIMEOUT_MS / 1000:.0f} s of the action on {page.url[:80]}: "
                           f"{state}") from None
    ms = await page.evaluate("() => { const L = window.__load; L.armed = false; return L.end - L.start; }")
    await wait_idle(page)
    return ms


async def goto_page(page: Page, title: str) -> float:
    link = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]').filter(
        has=page.get_by_text(title, exact=True))
    ms = await timed(page, link.click)
    await expect(link).to_have_attribute("aria-current", "page", timeout=TIMEOUT_MS)
    return ms


class Session:
    """One learner: a browser context with the app open on Inputs & weights."""

    def __init__(self, browser: Browser, url: str, size: str, json_path: Path | None, name: str, think: float):
        self.browser, self.url, self.size, self.json_path, self.name = browser, url, size, json_path, name
        self.think, self.page, self.k, self.stats = think, None, 0, Stats()

    async def open(self) -> None:
        context = await self.browser.new_context(viewport=e2e.VIEWPORT)
        context.set_default_timeout(TIMEOUT_MS)
        await context.add_init_script(_HOOK)
        self.page = page = await context.new_page()
        await page.goto(self.url, timeout=TIMEOUT_MS)
        await wait_idle(page)
        if self.json_path is not None:  # Share & export's JSON import
            await goto_page(page, "Share & export")
            before = await runs(page)
            await page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(self.json_path))
            await after_rerun(page, before)
            await expect(page.get_by_text("Loaded config.json", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
        await goto_page(page, "Inputs & weights")

    async def close(self) -> None:
        if self.page is not None:
            await self.page.context.close()
            self.page = None

    async def pause(self) -> None:
        if self.think:
            await asyncio.sleep(random.uniform(0.5, 1.5) * self.think)

    async def edit(self) -> float:
        self.k += 1
        if self.size == "caps":
            return await self._randomise_x(self.k)
        index = int(self.name.rsplit("-", 1)[1])
        # unique per session, exact in binary, never a whole number (the grid would show "41.0" typed as "41")
        return await self._edit_cell(repr(10.0 * (index + 1) + 0.0625 * (2 * (self.k % 80) + 1)))

    async def _edit_cell(self, text: str) -> float:
        page = self.page
        grid = page.locator("xpath=(//strong[normalize-space()='X']/following::*[@data-testid='stDataFrame'])[1]")
        canvas = grid.locator('[data-testid="data-grid-canvas"]')
        selected = grid.locator('td[aria-selected="true"]')
        await canvas.scroll_into_view_if_needed()
        box = await canvas.bounding_box()
        await page.mouse.click(box["x"] + 5, box["y"] + 1.5 * e2e.GRID_ROW_PX)  # row 0's index cell
        await expect(selected).to_have_count(1)
        target = grid.locator('[data-testid="glide-cell-1-0"]')
        if await target.get_attribute("aria-selected") != "true":
            await page.keyboard.press("ArrowRight")
        await expect(target).to_have_attribute("aria-selected", "true")
        await page.wait_for_timeout(100)  # the editor opens asynchronously (E2E_NOTES)
        editor = page.locator(e2e.EDITOR_INPUT).first
        if not await editor.is_visible():
            await page.keyboard.press("Enter")
        await expect(editor).to_be_visible()
        await editor.fill(text)
        ms = await timed(page, lambda: page.keyboard.press("Enter"))
        await expect(target).to_have_text(e2e._grid_text(text), timeout=TIMEOUT_MS)
        if boxes := await page.locator(e2e.EXCEPTION).all_inner_texts():
            raise RuntimeError("exception box after the edit: " + " | ".join(boxes))
        return ms

    async def _randomise_x(self, seed: int) -> float:
        page = self.page
        body = page.locator('[data-testid="stPopoverBody"]')
        if not await body.count():
            before = await runs(page)
            await page.get_by_role("button", name="Randomise").first.click()  # X's popover (a rerun builds it)
            await after_rerun(page, before)
        spin = body.get_by_role("spinbutton", name="Seed")
        await spin.fill(str(seed))
        before = await runs(page)
        await page.keyboard.press("Enter")
        await after_rerun(page, before)
        ms = await timed(page, body.get_by_role("button", name="Fill").click)
        await page.keyboard.press("Escape")  # closes the popover (else the next sidebar click only closes it)
        await expect(body).to_have_count(0)
        await page.wait_for_timeout(300)
        await wait_idle(page)
        return ms

    async def switch(self, title: str) -> list[float]:
        return [await goto_page(self.page, title), await goto_page(self.page, "Inputs & weights")]

    async def step(self, title: str, record: bool = True) -> None:
        """One edit and one page switch (there and back)."""
        try:
            await self.pause()
            ms = await self.edit()
            await self.pause()
            sw = await self.switch(title)
            if boxes := await self.page.locator(e2e.EXCEPTION).all_inner_texts():
                raise RuntimeError("exception box: " + " | ".join(boxes))
            if record:
                self.stats.edits.append(ms)
                self.stats.switches.extend(sw)
        except Exception as err:  # noqa: BLE001 - counted and printed; the other sessions go on
            self.stats.errors.append(f"{self.name}: {type(err).__name__}: {str(err)[:300]}")
            await self.recover()

    async def recover(self) -> None:
        """After an error: start this learner over in a new context."""
        try:
            await self.close()
            await self.open()
        except Exception as err:  # noqa: BLE001
            self.stats.errors.append(f"{self.name} (reopening): {type(err).__name__}: {str(err)[:300]}")


# ---- the runs -----------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def json_for(size: str, tmp: Path) -> Path | None:
    if size == "seed000":
        return None
    path = tmp / size / "config.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(share.to_json(CONFIGS[size][1]()))
    return path


async def gather_limited(coros, limit: int):
    sem = asyncio.Semaphore(limit)

    async def one(c):
        async with sem:
            return await c
    return await asyncio.gather(*(one(c) for c in coros))


async def total_runs(sessions: list[Session]) -> int:
    """Finished runs the server reported to the open sessions' pages (see _HOOK), summed."""
    return sum([await runs(s.page) for s in sessions if s.page is not None])


async def rss_after_close(pid: int, idle: float, seconds: float, every: float = 5.0) -> list[tuple[float, float]]:
    """[(seconds since the last tab closed, RSS MiB)], every ``every`` s up to ``seconds`` (stops early once the RSS
    is within RETURN_MB of ``idle`` twice in a row)."""
    t0, out, near = time.monotonic(), [(0.0, rss_mb(pid))], 0
    while time.monotonic() - t0 < seconds:
        await asyncio.sleep(every)
        out.append((time.monotonic() - t0, rss_mb(pid)))
        near = near + 1 if out[-1][1] - idle <= RETURN_MB else 0
        if near >= 2:
            break
    return out


def returned(after_close: list[tuple[float, float]], idle: float) -> str:
    """When the RSS after close first came within RETURN_MB of ``idle`` ("+25 s"), or "not in 75 s"."""
    for t, mb in after_close:
        if mb - idle <= RETURN_MB:
            return f"+{t:.0f} s"
    return f"not in {after_close[-1][0]:.0f} s"


async def visit_every_page(s: Session) -> None:
    """The session opens every page of the registry once (as a learner looking around), back on Inputs & weights."""
    for p in registry.PAGES:
        await goto_page(s.page, p.title)
    await goto_page(s.page, "Inputs & weights")


async def load_row(pw, size: str, n: int, edits: int, think: float, switch_to: str, tmp: Path,
                   env: dict[str, str], visit_all: bool = False, after_s: float = 75.0) -> dict:
    """A fresh server and browser; n sessions of ``size``; each makes ``edits`` edits + page switches (after visiting
    every page once with ``visit_all``); then every tab closes and the RSS is followed for ``after_s`` seconds."""
    proc, url = start_server(tmp / f"server-{size}-{n}.log", env)
    browser = await pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
    try:
        await asyncio.sleep(1.0)
        idle = rss_mb(proc.pid)
        sessions = [Session(browser, url, size, json_for(size, tmp), f"{size}-{i}", think) for i in range(n)]
        t0 = time.monotonic()
        await gather_limited([s.open() for s in sessions], limit=4 if size != "caps" else 2)
        if visit_all:
            await gather_limited([visit_every_page(s) for s in sessions], limit=4)
        await asyncio.gather(*(s.step(switch_to, record=False) for s in sessions))  # warm-up, not counted
        opened_s = time.monotonic() - t0
        opened = rss_mb(proc.pid)
        sampler = Sampler(proc.pid)
        sampler.start()
        load_before = loadavg()
        runs0, cpu0 = await total_runs(sessions), cpu_s(proc.pid)
        t1 = time.monotonic()

        async def loop(s: Session) -> None:
            for _ in range(edits):
                await s.step(switch_to)
        await asyncio.gather(*(loop(s) for s in sessions))
        wall = time.monotonic() - t1
        cpu_used = cpu_s(proc.pid) - cpu0
        # a session restarted after an error counts from 0 again: its runs before the error are lost, a few at most
        runs_done = await total_runs(sessions) - runs0
        peak = await sampler.stop()
        server_cpu = cpu_used / wall
        end = rss_mb(proc.pid)
        load_after = loadavg()
        for s in sessions:
            await s.close()
        after_close = await rss_after_close(proc.pid, idle, after_s)
        closed = after_close[-1][1]
    finally:
        await browser.close()
        e2e.stop_server(proc)
    all_edits = [v for s in sessions for v in s.stats.edits]
    all_switches = [v for s in sessions for v in s.stats.switches]
    errors = [e for s in sessions for e in s.stats.errors]
    return {"size": size, "n": n, "edits": all_edits, "switches": all_switches, "errors": errors,
            "idle": idle, "opened": opened, "peak": peak, "end": end, "closed": closed, "wall": wall,
            "after_close": after_close, "returned": returned(after_close, idle),
            "opened_s": opened_s, "load": f"{load_before} → {load_after}", "cpu": server_cpu,
            "runs": runs_done, "cpu_per_run": 1000 * cpu_used / runs_done if runs_done > 0 else float("nan")}


def print_rows(rows: list[dict], think: float, switch_to: str) -> None:
    print(f"\nms from the committing action to the server's run-finished message; think time {think} s (± 50 %); "
          f"page switch = Inputs & weights ↔ {switch_to}; RSS of the streamlit process (MiB); server CPU = its CPU "
          "seconds / wall seconds in the measured window (100 % = one core); CPU ms / run = its CPU ms / the runs it "
          "finished in that window\n")
    print("| config | sessions | edits | edit median | edit p95 | p95 / 1 session | switch median | switch p95 "
          "| RSS idle | RSS opened | RSS peak | RSS after close | back within 150 of idle | server CPU | runs "
          "| server CPU ms / run | errors | load avg (1/5/15 min, before → after) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    base: dict[str, float] = {}
    for r in rows:
        p95 = pct(r["edits"], 0.95)
        if r["n"] == 1:
            base.setdefault(r["size"], p95)
        ratio = p95 / base[r["size"]] if r["size"] in base else float("nan")
        print(f"| {r['size']} | {r['n']} | {len(r['edits'])} | {median(r['edits']):.0f} "
              f"| {p95:.0f} | {ratio:.2f} | {median(r['switches']):.0f} "
              f"| {pct(r['switches'], 0.95):.0f} | {r['idle']:.0f} | {r['opened']:.0f} | {r['peak']:.0f} "
              f"| {r['closed']:.0f} | {r['returned']} | {r['cpu']:.0%} | {r['runs']} | {r['cpu_per_run']:.1f} "
              f"| {len(r['errors'])} "
              f"| {r['load']} |")
    for r in rows:
        series = ", ".join(f"+{t:.0f} s {mb:.0f}" for t, mb in r["after_close"])
        print(f"RSS after the last tab closed ({r['size']}, {r['n']} sessions; idle {r['idle']:.0f}): {series}")
    for r in rows:
        for e in r["errors"][:5]:
            print(f"error ({r['size']}, {r['n']} sessions): {e}")


async def run_load(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    rows = []
    async with async_playwright() as pw:
        for size in args.sizes:
            for n in args.sessions or DEFAULT_SESSIONS[size]:
                t = time.monotonic()
                r = await load_row(pw, size, n, args.edits, args.think, args.switch_to, tmp, args.server_env,
                                   args.visit_all, args.after_close)
                rows.append(r)
                print(f"  {size} × {n}: {len(r['edits'])} edits in {r['wall']:.0f} s (opening {r['opened_s']:.0f} s), "
                      f"edit median {median(r['edits']):.0f} ms, "
                      f"p95 {pct(r['edits'], 0.95):.0f} ms, RSS peak {r['peak']:.0f} MiB, "
                      f"server CPU {r['cpu_per_run']:.1f} ms / run ({r['runs']} runs), "
                      f"{len(r['errors'])} errors, RSS {r['closed']:.0f} MiB after close (idle {r['idle']:.0f}, "
                      f"back within {RETURN_MB} MiB: {r['returned']}) [{time.monotonic() - t:.0f} s]", flush=True)
    print_rows(rows, args.think, args.switch_to)
    print(f"\nserver logs: {tmp}")


async def run_soak(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    k = (args.sessions or [4])[0]
    proc, url = start_server(tmp / "server-soak.log", args.server_env)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
        try:
            await asyncio.sleep(1.0)
            if args.server_env:
                print("server environment: " + " ".join(f"{k}={v}" for k, v in args.server_env.items()))
            print(f"soak: {k} sessions ({', '.join(args.sizes[i % len(args.sizes)] for i in range(k))}), "
                  f"{args.soak:.0f} s, a new context every {args.churn} edits, think {args.think} s", flush=True)
            print("\n| minute | RSS (MiB) | edits | edit median | edit p95 | switch median | errors | load avg "
                  "| RSS by kind (MiB, bench/load.anon_split) |")
            print("|---:|---:|---:|---:|---:|---:|---:|---|---|", flush=True)
            print(f"| 0 (idle server) | {rss_mb(proc.pid):.0f} | | | | | | {loadavg()} | {anon_split(proc.pid)} |",
                  flush=True)
            sessions = []
            for i in range(k):
                size = args.sizes[i % len(args.sizes)]
                sessions.append(Session(browser, url, size, json_for(size, tmp), f"{size}-{i}", args.think))
            await gather_limited([s.open() for s in sessions], limit=4)
            start = time.monotonic()
            deadline = start + args.soak
            print(f"| 0 (sessions open) | {rss_mb(proc.pid):.0f} | | | | | | {loadavg()} | {anon_split(proc.pid)} |",
                  flush=True)

            async def loop(s: Session) -> None:
                done = 0
                while time.monotonic() < deadline:
                    await s.step(args.switch_to)
                    done += 1
                    if args.churn and done % args.churn == 0 and time.monotonic() < deadline:
                        await s.close()  # this learner leaves; a new one comes
                        try:
                            await s.open()
                        except Exception as err:  # noqa: BLE001
                            s.stats.errors.append(f"{s.name} (reopening): {type(err).__name__}: {str(err)[:300]}")
                            await s.recover()

            async def report() -> None:
                minute, seen_e, seen_s, seen_err = 0, 0, 0, 0
                while True:
                    await asyncio.sleep(max(0.0, start + 60 * (minute + 1) - time.monotonic()))
                    minute += 1
                    edits = [v for s in sessions for v in s.stats.edits]
                    switches = [v for s in sessions for v in s.stats.switches]
                    errs = sum(len(s.stats.errors) for s in sessions)
                    new_e, new_s = edits[seen_e:], switches[seen_s:]
                    print(f"| {minute} | {rss_mb(proc.pid):.0f} | {len(new_e)} "
                          f"| {median(new_e):.0f} | {pct(new_e, 0.95):.0f} "
                          f"| {median(new_s):.0f} | {errs - seen_err} "
                          f"| {loadavg()} | {anon_split(proc.pid)} |", flush=True)
                    seen_e, seen_s, seen_err = len(edits), len(switches), errs
            reporter = asyncio.get_running_loop().create_task(report())
            await asyncio.gather(*(loop(s) for s in sessions))
            reporter.cancel()
            edits = [v for s in sessions for v in s.stats.edits]
            print(f"| end ({(time.monotonic() - start) / 60:.1f} min) | {rss_mb(proc.pid):.0f} | {len(edits)} in all "
                  f"| {statistics.median(edits):.0f} | {pct(edits, 0.95):.0f} | | "
                  f"{sum(len(s.stats.errors) for s in sessions)} in all | {loadavg()} | {anon_split(proc.pid)} |",
                  flush=True)
            for s in sessions:
                await s.close()
            await asyncio.sleep(5.0)
            print(f"| sessions closed, +5 s | {rss_mb(proc.pid):.0f} | | | | | | {loadavg()} "
                  f"| {anon_split(proc.pid)} |", flush=True)
            for s in sessions:
                for e in s.stats.errors[:5]:
                    print("error:", e)
        finally:
            await browser.close()
            e2e.stop_server(proc)
    print(f"\nserver log: {tmp / 'server-soak.log'}")


async def run_pad_sweep(args) -> None:
    """One learner on A real model types Pad to = 256, 255, … (``--pad-sweep`` values): each is a new forward pass
    (≈ 43 MB at 256 tokens). Prints the RSS after each, the peak, and the RSS after the tab closed."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-pad-"))
    proc, url = start_server(tmp / "server-pad.log", args.server_env)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
        try:
            await asyncio.sleep(1.0)
            idle = rss_mb(proc.pid)
            s = Session(browser, url, "seed000", None, "pad-0", 0.0)
            await s.open()
            await goto_page(s.page, "A real model")
            box = s.page.get_by_role("spinbutton", name="Pad to (tokens)")
            await expect(box).to_be_visible(timeout=TIMEOUT_MS)
            opened = rss_mb(proc.pid)
            sampler = Sampler(proc.pid)
            sampler.start()
            series, t0 = [], time.monotonic()
            for pad in range(256, 256 - args.pad_sweep, -1):
                before = await runs(s.page)
                await box.fill(str(pad))
                await box.press("Enter")
                if args.pad_gap:  # a learner (or a script) who does not wait for the page
                    await asyncio.sleep(args.pad_gap)
                else:
                    await after_rerun(s.page, before)
                series.append((pad, rss_mb(proc.pid)))
            wall = time.monotonic() - t0
            n_threads = threads(proc.pid)
            if args.pad_gap:  # the runs still going: the peak is reached after the last change
                await wait_idle(s.page)
            peak = await sampler.stop()
            await s.close()
            after = await rss_after_close(proc.pid, idle, args.after_close)
        finally:
            await browser.close()
            e2e.stop_server(proc)
    gap = f"one every {args.pad_gap} s without waiting" if args.pad_gap else "each after its run"
    print(f"\npad sweep ({gap}; server threads at the end {n_threads}): {args.pad_sweep} values in {wall:.0f} s; "
          f"RSS (MiB) idle {idle:.0f}, A real model open "
          f"{opened:.0f}, peak {peak:.0f} (+{peak - opened:.0f} over the page open), after close "
          f"{after[-1][1]:.0f} (back within {RETURN_MB} of idle: {returned(after, idle)})")
    print("RSS after each value: " + ", ".join(f"{p}: {mb:.0f}" for p, mb in series))
    print("after the tab closed: " + ", ".join(f"+{t:.0f} s {mb:.0f}" for t, mb in after))


# ---- fair compute (issue 40): long writes beside a learner's edits ---------------------------------------------

DISTILGPT2_SHAPE = {"n_layer": 6, "n_head": 12, "n_embd": 768, "n_positions": 1024, "n_ctx": 1024,
                    "vocab_size": 50_257}  # distilgpt2's config.json, with random weights
T5_SMALL_SHAPE = {"d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_decoder_layers": 6, "num_heads": 8,
                  "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
                  "vocab_size": 32_128}  # t5-small's
SENTENCES = ("The dog is tired.", "The cat sat on the mat.", "The dog sat on the mat.")  # translated, one per measure


def model_folders(cache: Path) -> tuple[Path, Path]:
    """A random GPT-2 of distilgpt2's shape and a random T5 of t5-small's, made with tests/tiny_gpt2.py's and
    tests/tiny_t5.py's helpers (their tokenizers: ids past them are written as nothing), kept in ``cache``."""
    import json

    from tests import tiny_gpt2, tiny_t5

    gpt2_dir, t5_dir = cache / "gpt2-distilgpt2-shape", cache / "t5-small-shape"
    if not (gpt2_dir / "model.safetensors").exists():
        from safetensors.numpy import save_file

        gpt2_dir.mkdir(parents=True, exist_ok=True)
        tok = tiny_gpt2.tokenizer()
        cfg = {**tiny_gpt2.config(DISTILGPT2_SHAPE["vocab_size"]), **DISTILGPT2_SHAPE}
        (gpt2_dir / "config.json").write_text(json.dumps(cfg, indent=2))
        (gpt2_dir / "tokenizer.json").write_text(tok.to_str())
        save_file({"transformer." + k: v for k, v in tiny_gpt2.weights(cfg).items()},
                  str(gpt2_dir / "model.safetensors.part"))
        (gpt2_dir / "model.safetensors.part").rename(gpt2_dir / "model.safetensors")
    if not (t5_dir / "done").exists():
        tiny_t5.build(t5_dir, config={**tiny_t5.CONFIG, **T5_SMALL_SHAPE})
        (t5_dir / "done").write_text("")
    return gpt2_dir, t5_dir


def long_prompt(n_tokens: int) -> tuple[str, int]:
    """The words of tests/tiny_gpt2.py's corpus, over and over, as many as make at most ``n_tokens`` tokens of its
    tokenizer; (the prompt, its tokens)."""
    from tests import tiny_gpt2

    tok, text = tiny_gpt2.tokenizer(), ""
    words = [w for k in range(10_000) for w in tiny_gpt2.CORPUS[k % len(tiny_gpt2.CORPUS)].split()]
    for w in words:
        longer = (text + " " + w).strip()
        if len(tok.encode(longer).ids) > n_tokens:
            break
        text = longer
    return text, len(tok.encode(text).ids)


async def run_until_finished(page: Page, action) -> float:
    """Seconds from ``action`` to the next run the server reports finished (the page's count, polled every 50 ms);
    then waits until the app is idle."""
    before = await runs(page)
    t0 = time.perf_counter()
    await action()
    await page.wait_for_function(f"() => window.__load.runs > {before}", timeout=TIMEOUT_MS, polling=50)
    took = time.perf_counter() - t0
    await wait_idle(page)
    return took


async def enter(page: Page, key: str, text: str) -> None:
    """Type ``text`` into the input of the widget with Streamlit key ``key`` and press Enter (the page reruns)."""
    box = page.locator(f".st-key-{key} input").first
    await box.fill(text)
    await box.press("Enter")


async def run_writers(args) -> None:
    """``--writers N``: N sessions each write ``--write-tokens`` tokens on A model that writes, after prompts of
    ``--prompt-tokens`` tokens, with a random GPT-2 of distilgpt2's shape as the server's causal model; meanwhile one
    session makes seed-000 edits of X on Inputs & weights (``--edits`` before the writes: idle; then as many as fit
    while the writes last), and with ``--translator`` one session translates a new sentence on A model that
    translates (a random T5 of t5-small's shape) once idle and once 5 s into the writes."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-writers-"))
    cache = Path(tempfile.gettempdir()) / "attn-bench-models"
    t = time.monotonic()
    gpt2_dir, t5_dir = model_folders(cache)
    print(f"models: {gpt2_dir}, {t5_dir} (made or found in {time.monotonic() - t:.0f} s)", flush=True)
    prompts = [long_prompt(args.prompt_tokens[i % len(args.prompt_tokens)]) for i in range(args.writers)]
    env = {"ATTN_CAUSAL_MODEL": str(gpt2_dir), "ATTN_TRANSLATOR_MODEL": str(t5_dir), **args.server_env}
    if args.app_dir:
        e2e.REPO_ROOT = Path(args.app_dir).resolve()  # start_server runs streamlit there
    proc, url = start_server(tmp / "server-writers.log", env)
    print(f"server: {e2e.REPO_ROOT} ({proc.pid}); log {tmp / 'server-writers.log'}", flush=True)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=e2e.CHROMIUM, args=e2e.CHROMIUM_ARGS)
        try:
            editor = Session(browser, url, "seed000", None, "edit-0", args.think)
            writers = [Session(browser, url, "seed000", None, f"write-{i}", 0.0) for i in range(args.writers)]
            translator = Session(browser, url, "seed000", None, "translate-0", 0.0) if args.translator else None
            for s in [editor, *writers, *([translator] if translator else [])]:
                await s.open()
            for s, (prompt, _n) in zip(writers, prompts, strict=True):  # the model read, the prompt's pass done
                await goto_page(s.page, "A model that writes")
                await run_until_finished(s.page, lambda s=s, prompt=prompt: enter(s.page, "gen_prompt", prompt))
                await run_until_finished(s.page, lambda s=s: enter(s.page, "gen_n_new", str(args.write_tokens)))
            if translator:
                await goto_page(translator.page, "A model that translates")  # the model read, its default sentence
            await editor.step(args.switch_to, record=False)  # warm-up, not counted
            print(f"ready in {time.monotonic() - t:.0f} s; load average {loadavg()}", flush=True)

            idle: list[float] = []
            for _ in range(args.edits):
                await editor.pause()
                idle.append(await editor.edit())
            translate_idle = None
            if translator:
                translate_idle = await run_until_finished(
                    translator.page, lambda: enter(translator.page, "trans_sentence", SENTENCES[0]))

            load_before, cpu0 = loadavg(), cpu_s(proc.pid)
            active = [0]
            written: list[tuple[float, str]] = []

            async def write(s: Session) -> None:
                active[0] += 1
                try:
                    took = await run_until_finished(s.page, s.page.locator(".st-key-gen_write button").click)
                    said = [c for c in await s.page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                            if "written" in c]
                    written.append((took, said[0].split(".")[0] if said else "no caption"))
                finally:
                    active[0] -= 1

            async def translate() -> float:
                await asyncio.sleep(5.0)
                return await run_until_finished(translator.page,
                                                lambda: enter(translator.page, "trans_sentence", SENTENCES[1]))

            t1 = time.monotonic()
            tasks = [asyncio.get_running_loop().create_task(write(s)) for s in writers]
            side = asyncio.get_running_loop().create_task(translate()) if translator else None
            await asyncio.sleep(0.5)  # the writes have started
            loaded: list[tuple[float, int]] = []  # (ms, writers still writing when the edit began)
            while active[0] > 0:
                await editor.pause()
                if active[0] == 0:
                    break
                at_start = active[0]
                loaded.append((await editor.edit(), at_start))
            await asyncio.gather(*tasks)
            translate_loaded = await side if side else None
            wall = time.monotonic() - t1
            cpu = (cpu_s(proc.pid) - cpu0) / wall
            load_after = loadavg()
        finally:
            await browser.close()
            e2e.stop_server(proc)

    full = [ms for ms, n in loaded if n == args.writers]
    print(f"\n{args.writers} writers × {args.write_tokens} tokens after prompts of "
          f"{', '.join(str(n) for _p, n in prompts)} tokens; edits of X[0, 0] (seed 000) on Inputs & weights, think "
          f"{args.think} s (± 50 %); server {e2e.REPO_ROOT}; load average {load_before} → {load_after}; "
          f"server CPU {cpu:.0%} of one core during the writes ({wall:.0f} s)\n")
    print("| | edits | median ms | p95 ms | median / idle median |")
    print("|---|---:|---:|---:|---:|")
    base = median(idle)
    print(f"| idle | {len(idle)} | {base:.0f} | {pct(idle, 0.95):.0f} | 1.00 |")
    print(f"| while all {args.writers} write | {len(full)} | {median(full):.0f} | {pct(full, 0.95):.0f} "
          f"| {median(full) / base:.2f} |")
    every = [ms for ms, _n in loaded]
    print(f"| while any writes | {len(every)} | {median(every):.0f} | {pct(every, 0.95):.0f} "
          f"| {median(every) / base:.2f} |")
    print("\nwrites (click → run finished): " + "; ".join(f"{s:.1f} s ({what})" for s, what in written))
    if translator:
        print(f"a new sentence translated on A model that translates: idle {translate_idle:.1f} s, "
              f"5 s into the writes {translate_loaded:.1f} s")
    print("edits while writing (ms, writers at its start): " + ", ".join(f"{ms:.0f} ({n})" for ms, n in loaded))
    for s in [editor, *writers, *([translator] if translator else [])]:
        for e in s.stats.errors[:5]:
            print("error:", e)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", choices=list(CONFIGS), default=["seed000", "caps"])
    parser.add_argument("--sessions", nargs="+", type=int,
                        help="numbers of sessions (default: 1 5 10 20 at seed000, 1 5 10 at mid, 1 2 4 at caps); "
                             "with --soak the first value (default 4)")
    parser.add_argument("--edits", type=int, default=8, help="measured edits per session (after one warm-up)")
    parser.add_argument("--think", type=float, default=1.0, help="seconds between actions, ± 50 %% (default 1)")
    parser.add_argument("--switch-to", default="Step by step", help="the page each loop switches to and back from")
    parser.add_argument("--soak", type=float, default=0.0, metavar="SECONDS",
                        help="run a soak of this length instead")
    parser.add_argument("--churn", type=int, default=20,
                        help="soak: a session starts over every CHURN edits (0: never)")
    parser.add_argument("--visit-all", action="store_true",
                        help="each session visits every page once after opening (issue 27's 10 learners at the caps)")
    parser.add_argument("--after-close", type=float, default=75.0, metavar="SECONDS",
                        help="follow the server's RSS this long after the last tab closed (default 75)")
    parser.add_argument("--pad-sweep", type=int, default=0, metavar="N",
                        help="instead: one learner on A real model sets Pad to 256, 255, … (N values); needs a model "
                             "(--server-env ATTN_MODEL=folder, e.g. tests/minilm.folder())")
    parser.add_argument("--pad-gap", type=float, default=0.0, metavar="SECONDS",
                        help="pad sweep: the next value this long after the last, without waiting for its run")
    parser.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                        help="set this in the server's environment (not the browser's); repeatable, e.g. "
                             "--server-env MALLOC_ARENA_MAX=2")
    parser.add_argument("--writers", type=int, default=0, metavar="N",
                        help="instead: N sessions write on A model that writes (a random GPT-2 of distilgpt2's shape) "
                             "while one session edits on Inputs & weights; its edit time idle and under the writes")
    parser.add_argument("--write-tokens", type=int, default=20, help="writers: tokens each write (default 20)")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", default=[105, 150],
                        help="writers: about this many tokens of prompt, a value per writer in turn (default 105 150)")
    parser.add_argument("--translator", action="store_true",
                        help="writers: one more session translates a sentence idle and under the writes")
    parser.add_argument("--app-dir", help="serve the app from this checkout (e.g. a worktree of an older commit)")
    args = parser.parse_args()
    try:
        args.server_env = dict(kv.split("=", 1) for kv in args.server_env)
    except ValueError:
        parser.error("--server-env takes KEY=VALUE")
    print(machine())
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; load average {loadavg()}", flush=True)
    scenario = (run_writers if args.writers else run_pad_sweep if args.pad_sweep else run_soak if args.soak
                else run_load)
    asyncio.run(scenario(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
