"""Server-side cost of every page of the app, and the bytes each rerun sends to the browser.

For each page and three configurations (seed 000; n_seq 64, d_model 64, 8 heads; the caps) it runs the
app in Streamlit's AppTest and measures, as the median of several runs after a warm-up:

- ``edit ms``: the script's run time (Streamlit's own ``exec`` of the script, timed around the call the
  ScriptRunner makes: widget callbacks, the page, every element enqueued and hashed) on the run that follows
  an edit of one cell of X. Where the page draws an X grid (Inputs & weights; the sidebar's *Edit the numbers*
  panel on Step by step, Scaling, Masking, Score functions, Multi-head and Modern attention, opened on X) the edit
  goes through it (the data_editor's edit dict, as the browser reports it): the learner's edit there. On the other
  pages, and on every page with ``--edit-by config``, the configuration is replaced by one with that cell changed
  (what the page sees when the learner comes to it after an edit elsewhere: every grid drawn afresh). Every edit
  types a value never typed before, so no cache can answer it from an earlier run.
- ``rerun ms``: a plain rerun with nothing changed (a widget elsewhere, a click that changes nothing shown).
- ``st CPU ms``: of the edit run's CPU time, the part spent inside Streamlit's commands the app called (``st.markdown``,
  ``st.vega_lite_chart``, every widget and container, ``st.navigation``, ..., and attn_ui.infra.st_internals'
  ``show_chart`` and ``show_grid``, which make the same elements; the outermost call only, with its
  Streamlit work: making the element, registering the widget, enqueueing and hashing the message); the rest is the
  app's own Python (and the harness's script start, which the floor app's figure shows).
- ``wall ms``: AppTest's whole ``run()`` around the edit run (adds the test harness's thread and parsing).
- bytes of the edit run: every ForwardMsg the run produced, serialised, split into charts (Vega-Lite specs
  with their datasets), dataframes (data_editor and dataframe grids) and the rest; ``sent`` is what reaches
  the browser after Streamlit's message cache (a message ≥ 10 kB the browser already holds from the previous
  run goes as a reference of a few dozen bytes).

The first rows time Streamlit's floor: bench/floor_app.py (one data_editor and one number) in the same harness.
The floor stays open beside the pages: before each of a page's edit runs one edit run of the floor is timed, and the
page's ``× floor`` is the median of those pairs' ratios (with their interquartile range). The machine's speed moves
between pages and minutes (the floor alone has read 1.2 and 2.9 ms within two minutes); a pair shares its moment.

Run: ``.venv/bin/python bench/app.py`` (``--quick`` for fewer repeats, ``--configs seed000 mid``,
``--pages steps scaling``, ``--lang zh``). A benchmark that prints figures, never a timed assertion.

``--profile PAGE`` (with one of ``--configs``) runs that page's edit runs under cProfile instead and prints where
their time went: the functions of the app (attn_ui, attn_core, pages/) by time including what they call, every
function by its own time, and the Streamlit elements the app called (``st.vega_lite_chart``, ``st.markdown``, ...)
by their time inside Streamlit, with the calls that made them.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import os
import platform
import pstats
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from itertools import count
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit  # noqa: E402
import streamlit.runtime.scriptrunner.script_runner as script_runner  # noqa: E402
import streamlit.testing.v1.app_test as app_test  # noqa: E402
import streamlit.testing.v1.local_script_runner as local_script_runner  # noqa: E402
from streamlit.runtime.forward_msg_cache import create_reference_msg  # noqa: E402
from streamlit.runtime.pages_manager import PagesManager  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from attn_core import LIMITS, initialize, load_preset, make_config  # noqa: E402
from attn_ui.app import i18n, registry, state  # noqa: E402
from attn_ui.infra import st_internals  # noqa: E402

APP = str(ROOT / "streamlit_app.py")
FLOOR_APP = str(ROOT / "bench" / "floor_app.py")
PAGES = {p.name: p.title for p in registry.PAGES}  # name -> sidebar title, in sidebar order
# attn_ui.widgets.grid_editor.MAX_EDITABLE_CELLS: X larger than this has no grid on Inputs & weights
GRID_CELLS = 20_000
CHART_TYPES = {"vega_lite_chart"}
FRAME_TYPES = {"dataframe", "table"}


# ---- the configurations --------------------------------------------------------------------------


def xavier_config(n_seq: int, d_model: int, width: int, n_heads: int):
    """Tokens t0.., X and W_Q, W_K, W_V Xavier-uniform (seeds 0..3), W_O the identity."""
    def w(shape, seed):
        return initialize("xavier_uniform", shape, seed=seed)
    return make_config(
        [f"t{i}" for i in range(n_seq)], w((n_seq, d_model), 0), w((d_model, width), 1), w((d_model, width), 2),
        w((d_model, width), 3), n_heads=n_heads,
    )


def caps_width(n_seq: int = LIMITS.n_seq, step: int = 64) -> int:
    """The widest d_model = widths (a multiple of ``step``: 8 heads of whole d_k) whose configuration at ``n_seq``
    tokens the app accepts: X, W_Q, W_K, W_V and a square W_O within LIMITS.total_cells, LIMITS.d_model and
    LIMITS.width. The caps a learner can reach: LIMITS.d_model (769, a GPT-2 head's X) and LIMITS.width together
    are over the cells' cap.

    >>> caps_width()
    512
    """
    def cells(w: int) -> int:
        return n_seq * w + 3 * w * w + w * w

    fits = [w for w in range(step, min(LIMITS.d_model, LIMITS.width) + 1, step) if cells(w) <= LIMITS.total_cells]
    return max(fits)


CAPS_W = caps_width()
CONFIGS: dict[str, tuple[str, Callable]] = {
    "seed000": ("seed 000 preset (3 tokens, d_model 4, d_k 3)", lambda: load_preset("seed000")),
    "mid": ("n_seq 64, d_model 64, W 64×64, 8 heads", lambda: xavier_config(64, 64, 64, 8)),
    "caps": (f"caps: n_seq {LIMITS.n_seq}, d_model {CAPS_W}, widths {CAPS_W}, 8 heads (the largest the app accepts)",
             lambda: xavier_config(LIMITS.n_seq, CAPS_W, CAPS_W, 8)),
}


# ---- instruments: the script's exec time and the messages of each run ---------------------------

_exec_times: list[tuple[float, float]] = []  # (wall s, CPU s of the script thread) per exec
_st_cpu = [0.0]  # CPU s of the script thread inside Streamlit's commands (outermost calls), all runs so far
_in_command = threading.local()
_messages: list[list] = []
_profiler: list[cProfile.Profile] = []  # while it holds one: every exec runs under it (--profile)


def _install_probes() -> None:
    """Time ScriptRunner's exec of the script; keep the ForwardMsgs AppTest parses after each run.

    Also run every page as a warm server does: AppTest forgets before each run that the app uses
    st.navigation, so a run that starts on a page takes Streamlit's legacy ``pages/`` path (and the app's
    detour through the router, frame.page_start), which a server only takes before its first navigation;
    and AppTest compiles the scripts again on every run, which a server does once (one ScriptCache).
    """
    script_cache = app_test.ScriptCache()
    app_test.ScriptCache = lambda: script_cache
    init = PagesManager.__init__

    def warm_server(self, *args, **kwargs):
        init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False  # what st.navigation leaves behind on a running server

    PagesManager.__init__ = warm_server
    exec_fn = script_runner.exec_func_with_error_handling

    def timed_exec(*args, **kwargs):
        start, cpu = time.perf_counter(), time.thread_time()
        if _profiler:  # the script's own thread: cProfile sees only the thread it is enabled in
            _profiler[0].enable()
        try:
            return exec_fn(*args, **kwargs)
        finally:
            if _profiler:
                _profiler[0].disable()
            _exec_times.append((time.perf_counter() - start, time.thread_time() - cpu))

    script_runner.exec_func_with_error_handling = timed_exec
    _time_streamlit_commands()
    parse = local_script_runner.parse_tree_from_messages

    def keep(msgs):
        _messages.append(list(msgs))
        return parse(msgs)

    local_script_runner.parse_tree_from_messages = keep


def _time_streamlit_commands() -> None:
    """Count the script thread's CPU time inside every Streamlit command (``_st_cpu``): the DeltaGenerator's public
    methods (``st.sidebar.markdown``, ``container.button``) and the ``st.*`` names (bound methods of the main area's
    DeltaGenerator, and functions such as ``st.navigation``), each wrapped once; a command called inside another
    counts with the outer one."""
    from streamlit.delta_generator import DeltaGenerator

    def timed(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if getattr(_in_command, "depth", 0):
                return fn(*args, **kwargs)
            _in_command.depth, start = 1, time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                _st_cpu[0] += time.thread_time() - start
                _in_command.depth = 0
        return call

    for name in dir(DeltaGenerator):  # its own and its mixins' (MarkdownMixin.markdown, ...)
        value = getattr(DeltaGenerator, name)
        if not name.startswith("_") and callable(value) and hasattr(value, "__wrapped__"):  # gather_metrics' own
            setattr(DeltaGenerator, name, timed(value))
    for name in ("show_chart", "show_grid"):  # the app's own way to st.vega_lite_chart's and st.data_editor's elements
        setattr(st_internals, name, timed(getattr(st_internals, name)))
    for name in dir(streamlit):
        value = getattr(streamlit, name)
        command = (isinstance(getattr(value, "__self__", None), DeltaGenerator)
                   or (callable(value) and not isinstance(value, type) and hasattr(value, "__wrapped__")))
        if not name.startswith("_") and command:
            setattr(streamlit, name, timed(value))


def kind_of(msg) -> str:
    """"chart", "frame" or "other" for one ForwardMsg."""
    if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
        element = msg.delta.new_element.WhichOneof("type")
        if element in CHART_TYPES:
            return "chart"
        if element in FRAME_TYPES:
            return "frame"
    return "other"


def message_bytes(msgs: list, cached: set[str]) -> dict[str, int]:
    """Serialised bytes by kind, and ``sent``: with messages the browser holds (hash in ``cached``) as references."""
    out = {"chart": 0, "frame": 0, "other": 0, "sent": 0}
    for msg in msgs:
        n = len(msg.SerializeToString())
        out[kind_of(msg)] += n
        ref = msg.metadata.cacheable and msg.hash in cached
        out["sent"] += len(create_reference_msg(msg).SerializeToString()) if ref else n
    return out


def cacheable_hashes(msgs: list) -> set[str]:
    return {m.hash for m in msgs if m.metadata.cacheable}


class Run:
    """One AppTest run: exec time (s), wall time (s), its messages."""

    def __init__(self, at: AppTest) -> None:
        n_exec, st_before = len(_exec_times), _st_cpu[0]
        start = time.perf_counter()
        at.run()
        self.wall = time.perf_counter() - start
        runs = _exec_times[n_exec:]  # a st.rerun() inside the run execs the script twice
        self.exec = sum(wall for wall, _ in runs)
        self.cpu = sum(cpu for _, cpu in runs)
        self.st_cpu = _st_cpu[0] - st_before
        self.msgs = _messages[-1]
        if at.exception:
            raise RuntimeError(f"the app raised: {at.exception[0].value}")


# ---- one page, one configuration ------------------------------------------------------------------

_fresh = count(1)  # every edit types a value no earlier edit typed (no cache hit from an earlier row)


def fresh_value() -> float:
    return round(0.5 + next(_fresh) * 0.001, 6)


def x_grid_key(at: AppTest) -> str:
    return f"x_editor_{at.session_state['editor_version']}"


#: how :func:`edit_x` edits: "grid", through the page's X grid where the last run drew one (Inputs & weights' own, the
#: sidebar's edit panel on the pages that show the steps: where the learner edits), else "config" (``--edit-by``)
EDIT_BY = ["grid"]


def edit_x(at: AppTest, page: str) -> float:
    """Change X[0, 0] to a new value: through the X grid the page drew (its edit, as the browser reports it), else
    by replacing the configuration with one with that cell changed (the page as it is met after an edit elsewhere;
    every page with ``--edit-by config``)."""
    cfg = at.session_state["config"]
    value = fresh_value()
    if EDIT_BY[0] == "grid" and cfg.x.size <= GRID_CELLS and x_grid_key(at) in at.session_state:
        at.session_state[x_grid_key(at)] = {"edited_rows": {0: {"0": value}}, "added_rows": [], "deleted_rows": []}
        return value
    x = cfg.x.copy()
    x[0, 0] = value
    at.session_state["config"] = replace(cfg, x=x)
    return value


def measure_page(page: str, cfg_key: str, repeats: int, lang: str = "en",
                 profile: cProfile.Profile | None = None, beside: Floor | None = None) -> dict:
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state[state.LANG] = lang
    at.run()
    at.session_state["config"] = CONFIGS[cfg_key][1]()
    at.session_state["editor_version"] = at.session_state["editor_version"] + 1
    at.switch_page(registry.by_name(page).file)
    Run(at)
    Run(at)  # warm-up: widgets settled, caches of this configuration filled

    typed = []

    def check() -> None:
        if at.session_state["config"].x[0, 0] != typed[-1]:
            raise RuntimeError(f"{page}: the edit of X[0, 0] did not reach the configuration")

    return measure_runs(at, lambda: typed.append(edit_x(at, page)), repeats, check, profile, beside)


def measure_runs(at: AppTest, edit, repeats: int, check=lambda: None,
                 profile: cProfile.Profile | None = None, beside: Floor | None = None) -> dict:
    """``repeats`` runs each after ``edit()`` (which makes an edit; the run it starts is timed here, then
    ``check()``), then as many plain reruns; each with its bytes against the run before (what Streamlit's message
    cache would not send again). ``profile``: the edit runs are profiled into it (:func:`print_profile`).
    ``beside``: the floor app, one of whose edit runs is timed right before each edit run here (the pairs share the
    machine's minute: their ratio does not move with the machine's speed between pages)."""
    prev = Run(at)
    edits, plain, floor = [], [], []
    for runs, before, after in ((edits, edit, check), (plain, None, None)):
        for _ in range(repeats):
            if before and beside:
                floor.append(beside.edit_run())
            if before:
                before()
            if profile and before:
                _profiler.append(profile)
            try:
                run = Run(at)
            finally:
                _profiler.clear()
            if after:
                after()
            runs.append((run, message_bytes(run.msgs, cacheable_hashes(prev.msgs))))
            prev = run
    return summarise(edits, plain, floor)


def summarise(edits: list, plain: list, floor: list[float] = ()) -> dict:
    """Medians of the runs; with ``floor`` (the floor's edit CPU s, one before each edit run): its median and the
    ratio of each edit run to the floor's run before it, their median and interquartile range."""
    med = statistics.median
    beside = {}
    if floor:
        ratios = sorted(r.cpu / f for (r, _), f in zip(edits, floor, strict=True))
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        beside = {"floor_cpu": med(floor) * 1000, "ratio": med(ratios), "ratio_iqr": (q[0], q[2])}
    return {**beside,
        "edit_cpu": med(r.cpu for r, _ in edits) * 1000,
        "edit_st_cpu": med(r.st_cpu for r, _ in edits) * 1000,
        "edit_ms": med(r.exec for r, _ in edits) * 1000,
        "rerun_cpu": med(r.cpu for r, _ in plain) * 1000,
        "rerun_ms": med(r.exec for r, _ in plain) * 1000,
        "wall_ms": med(r.wall for r, _ in edits) * 1000,
        **{k: med(b[k] for _, b in edits) for k in ("chart", "frame", "other", "sent")},
        "rerun_sent": med(b["sent"] for _, b in plain),
    }


class Floor:
    """bench/floor_app.py with a rows × cols grid, open for the whole run: :meth:`edit_run` times one edit of it."""

    def __init__(self, rows: int, cols: int) -> None:
        self.at = AppTest.from_file(FLOOR_APP, default_timeout=600)
        self.at.query_params["rows"], self.at.query_params["cols"] = str(rows), str(cols)
        Run(self.at)
        Run(self.at)

    def edit(self) -> None:
        self.at.session_state["floor_grid"] = {"edited_rows": {0: {"0": fresh_value()}}, "added_rows": [],
                                               "deleted_rows": []}

    def edit_run(self) -> float:
        """CPU s of the run after an edit of the grid's first cell."""
        self.edit()
        return Run(self.at).cpu


def measure_floor(floor: Floor, repeats: int) -> dict:
    """The floor on its own: edits through its grid, then plain reruns."""
    return measure_runs(floor.at, floor.edit, repeats)


# ---- report ---------------------------------------------------------------------------------------


def kb(n: float) -> str:
    return f"{n / 1000:,.1f}"


HEADER = ("| page | config | edit CPU ms | floor beside ms | × floor (IQR) | st CPU ms | edit ms | rerun CPU ms "
          "| rerun ms | AppTest ms | charts kB "
          "| frames kB | other kB | total kB | sent kB | rerun sent kB |")


def row(page: str, cfg: str, r: dict) -> str:
    total = r["chart"] + r["frame"] + r["other"]
    paired = (f"{r['floor_cpu']:.2f} | {r['ratio']:.2f} ({r['ratio_iqr'][0]:.2f}–{r['ratio_iqr'][1]:.2f})"
              if "ratio" in r else "– | –")
    return (f"| {page} | {cfg} | {r['edit_cpu']:.1f} | {paired} | {r['edit_st_cpu']:.1f} | {r['edit_ms']:.1f} "
            f"| {r['rerun_cpu']:.1f} | {r['rerun_ms']:.1f} "
            f"| {r['wall_ms']:.1f} | {kb(r['chart'])} "
            f"| {kb(r['frame'])} | {kb(r['other'])} | {kb(total)} | {kb(r['sent'])} | {kb(r['rerun_sent'])} |")


APP_CODE = tuple(str(ROOT / d) for d in ("attn_ui", "attn_core", "attn_models", "pages")) + (APP,)
ELEMENTS = os.sep + os.path.join("streamlit", "elements") + os.sep  # st.markdown, st.vega_lite_chart, widgets, ...


def print_profile(prof: cProfile.Profile, runs: int, top: int = 25) -> None:
    """Where the profiled runs' time went, ms per run: the app's functions by cumulative time, every function by
    its own time, and Streamlit's elements by the time spent in them when the app called them."""
    stats = pstats.Stats(prof).stats  # {(file, line, name): (calls, primitive calls, own s, cumulative s, callers)}

    def name(fn: tuple) -> str:
        file, line, func = fn
        return f"{os.path.relpath(file, ROOT) if file.startswith(str(ROOT)) else file.split('site-packages/')[-1]}" \
               f":{line} {func}" if line else func

    def table(title: str, rows: list[tuple[float, float, str]]) -> None:
        print(f"\n{title}\n  ms/run   calls/run  function")
        for ms, calls, fn in rows[:top]:
            print(f"  {ms:7.2f}  {calls:9.1f}  {fn}")

    ms = 1000 / runs
    table("the app's functions, cumulative", sorted(
        ((ct * ms, nc / runs, name(fn)) for fn, (_, nc, _, ct, _) in stats.items() if fn[0].startswith(APP_CODE)),
        reverse=True))
    table("every function, own time", sorted(((tt * ms, nc / runs, name(fn))
                                              for fn, (_, nc, tt, _, _) in stats.items()), reverse=True))
    # an element's public method (st.markdown, st.button, ...: called through Streamlit's metrics wrapper, so
    # not by the app directly) by its time including Streamlit's work for it (building, hashing, enqueueing)
    table("Streamlit's elements, cumulative", sorted(
        ((ct * ms, nc / runs, f"{fn[2]}  ({name(fn).split(' ')[0]})") for fn, (_, nc, _, ct, _) in stats.items()
         if ELEMENTS in fn[0] and not fn[2].startswith("_") and fn[2] not in ("wrapper", "wrapped_func")),
        reverse=True))


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, "
            f"Streamlit {streamlit.__version__}, {platform.system()} {platform.release()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS))
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    parser.add_argument("--repeats", type=int, default=0, help="runs per median (default: 7, 5, 3 by size)")
    parser.add_argument("--quick", action="store_true", help="3 runs per median everywhere")
    parser.add_argument("--lang", choices=list(i18n.LANGUAGES), default=i18n.DEFAULT, help="the app's language")
    parser.add_argument("--edit-by", choices=["grid", "config"], default="grid",
                        help="edit X through the page's X grid where it has one (default), or always by replacing "
                             "the configuration (the page met after an edit elsewhere)")
    parser.add_argument("--profile", choices=list(PAGES), metavar="PAGE",
                        help="profile this page's edit runs (the first of --configs) and print where the time went")
    args = parser.parse_args()
    EDIT_BY[0] = args.edit_by
    _install_probes()
    if args.profile:
        key = args.configs[0]
        reps = args.repeats or 7
        prof = cProfile.Profile()
        print(machine())
        print(f"{PAGES[args.profile]}, {key}: {reps} edit runs under cProfile (its overhead inflates every figure)")
        print(HEADER)
        print("|" + "---|" * (HEADER.count("|") - 1))
        print(row(PAGES[args.profile], key, measure_page(args.profile, key, reps, args.lang, prof)))
        print_profile(prof, reps)
        return 0
    defaults = {"seed000": 7, "mid": 5, "caps": 3}
    print(machine())
    print("edit/rerun ms: the script's exec time, median; bytes: the edit run's messages. floor beside: the floor "
          "app's edit run timed right before each of the page's (median); × floor: the median of the pairs' ratios, "
          "with their interquartile range.\n")
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    sizes = {"seed000": (3, 4), "mid": (64, 64), "caps": (64, 64)}  # caps: X has no grid; the largest one shown
    floors = {size: Floor(*size) for size in dict.fromkeys(sizes[key] for key in args.configs)}
    for (rows, cols), floor in floors.items():
        reps = args.repeats or (3 if args.quick else defaults["seed000" if rows == 3 else "mid"])
        print(row("floor_app", f"{rows}×{cols} grid", measure_floor(floor, reps)), flush=True)
    for key in args.configs:
        reps = args.repeats or (3 if args.quick else defaults[key])
        for page in args.pages:
            print(row(PAGES[page], key, measure_page(page, key, reps, args.lang, beside=floors[sizes[key]])),
                  flush=True)
    print("\nconfigs: " + "; ".join(f"{k} = {CONFIGS[k][0]}" for k in args.configs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
