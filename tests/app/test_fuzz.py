"""Seeded fuzz of the whole app with AppTest (issue 7).

Random sessions of random actions: preset switches, dimension changes up to the caps, grid edits with
numbers, extremes, NaN, empty cells and text, page switches, every widget the pages offer (mask kinds,
n_heads, scale modes, ...), and sessions opened with random and hostile ``?c=`` query parameters.

Checked after every action: no uncaught exception, no Streamlit exception element, and after every
input that must be rejected (a bad grid cell, a hostile link) the configuration equals the one before.

The default run is small enough for CI; the full run (500 sessions) is
``bash .ci/dev fuzz`` (= ``pytest tests/app/test_fuzz.py --fuzz-sessions=500``).
"""

from __future__ import annotations

import base64
import json
import random
import re
import zlib

import pytest

from attn_core import MATRIX_NAMES, PRESETS, SCORE_FUNCTIONS, configs_equal, load_preset
from attn_ui.app import registry

from .apptools import new_app, plain

PAGES = [p.file for p in registry.PAGES]  # every page's script, in sidebar order
GOOD_VALUES = [0.0, 1.0, -1.0, 0.5, 3.25, -7.0, 1e-30, 1e30, -1e30, 1e-300, 123456.789]
EXTREME_VALUES = [1e300, -1e300, 1.7e308]  # finite, but may overflow an intermediate: a message, not NaN
BAD_VALUES = [float("nan"), float("inf"), float("-inf"), None, "abc", "", "1,5", "inf", "NaN", "1e999", "🙂"]
EDITOR_KEY = re.compile(rf"^({'|'.join(MATRIX_NAMES)})_editor_(\d+)$")  # X, W_Q, ..., Y, W_a, W_1, W_2, v_a
#: view pickers, lazy expanders and popovers (only the chosen or open one runs): their keys, and the values the
#: browser can give them
LAZY_CONTAINERS = {
    "heads_weights_shown": ["W_Q", "W_K", "W_V"],
    "heads_edit_w_o": [True, False],
    **{f"inputs_{name}_randomise": [True, False] for name in ("x", "y", "w_q", "w_k", "w_v")},
    "heads_w_o_randomise": [True, False],
    "share_sidebar_open": [True, False],  # the sidebar's Share this, on every page
    "learn_list": [True, False],  # Learn's list of lessons
    "scaling_sweep_numbers": [True, False],  # Scaling's table of the variance sweep
    **{f"{name}_every_digit": [True, False] for name in ("x", "y", "w_q", "w_k", "w_v", "w_o")},  # under a grid
    "heads_section_shown": ["3 · Each head attends", "4 · Concatenate the heads", "5 · Project with W_O",
                            "6 · Every shape", "7 · Check: one head is plain attention"],
}
WIDGET_KINDS = ["selectbox", "radio", "number_input", "checkbox", "toggle", "slider", "select_slider",
                "multiselect", "button", "text_input", "button_group"]  # button_group: segmented controls


def hostile_params(rng: random.Random) -> str:
    """A ?c= value that must be rejected (or, rarely, a valid one that must load)."""
    cfg_json = json.dumps({"schema": 1, "tokens": ["a"], "x": [[1]]})
    good = zlib.compress(cfg_json.encode())
    choices = [
        "", "!!!", "%%%", "A" * 50_000, "bm90IHpsaWI",  # random text, too long, base64 of "not zlib"
        base64.urlsafe_b64encode(good).decode()[:-5],  # truncated
        base64.urlsafe_b64encode(zlib.compress(b"\0" * 20_000_000)).decode(),  # a zip bomb
        base64.urlsafe_b64encode(zlib.compress(b"[" * 100_000)).decode(),  # deep nesting
        base64.urlsafe_b64encode(zlib.compress(json.dumps({"n_seq": 10**9}).encode())).decode(),
        base64.urlsafe_b64encode(zlib.compress(b"__import__('os').system('true')")).decode(),
        "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(80)),
    ]
    return rng.choice(choices)


def current_grids(at) -> list[tuple[str, str]]:
    """Matrix grids drawn on the current page: (matrix name, widget key). AppTest lists editors as dataframes."""
    version = at.session_state["editor_version"]
    found = []
    for el in at.dataframe:
        m = EDITOR_KEY.match(getattr(el, "key", None) or "")
        if m and int(m.group(2)) == version:
            found.append((m.group(1), m.group(0)))
    return found


def check_healthy(at, where: str) -> None:
    assert not at.exception, f"{where}: {[e.value for e in at.exception]}"
    cfg = at.session_state["config"]
    assert cfg.x.shape[0] == len(cfg.tokens), where


def random_action(at, rng: random.Random, log: list[str]) -> None:
    kind = rng.choices(["page", "preset", "grid", "widget", "open"], weights=[2, 1, 4, 5, 1])[0]
    if kind == "page":
        page = rng.choice(PAGES)
        log.append(f"page {page}")
        at.switch_page(page).run()
        return
    if kind == "preset":
        key = rng.choice(list(PRESETS))
        log.append(f"preset {key}")
        at.switch_page("pages/inputs.py").run()
        at.selectbox(key="inputs_preset").set_value(key).run()
        return
    if kind == "grid":
        grid_edit(at, rng, log)
        return
    if kind == "open":
        open_container(at, rng, log)
        return
    widget_action(at, rng, log)


def open_container(at, rng: random.Random, log: list[str]) -> None:
    """Choose another view on a picker, or open / close a lazy expander or popover of the current page, as a click
    does."""
    keys = [k for k in LAZY_CONTAINERS if k in at.session_state]
    if not keys:
        log.append("open: no lazy container on page")
        return
    key = rng.choice(keys)
    value = rng.choice(LAZY_CONTAINERS[key])
    log.append(f"open {key} = {value!r}")
    pickers = {w.key: w for w in at.button_group}  # view pickers (segmented controls): clicked, as in the browser
    if key in pickers:
        pickers[key].set_value(value)
    else:
        at.session_state[key] = value
    at.run()


def grid_edit(at, rng: random.Random, log: list[str]) -> None:
    grids = current_grids(at)
    if not grids:
        at.switch_page("pages/inputs.py").run()
        grids = current_grids(at)
    if not grids:
        log.append("grid: none on page")
        return
    name, key = rng.choice(grids)
    shape = at.session_state["config"].matrix(name).shape
    bad = rng.random() < 0.4
    pool = BAD_VALUES if bad else (GOOD_VALUES if rng.random() < 0.85 else EXTREME_VALUES)
    edits: dict[int, dict[str, object]] = {}
    for _ in range(rng.randint(1, 3)):
        i, j = rng.randrange(shape[0]), rng.randrange(shape[1])
        edits.setdefault(i, {})[str(j)] = rng.choice(pool)
    if bad:  # make sure at least one cell really is bad
        i, j = rng.randrange(shape[0]), rng.randrange(shape[1])
        edits.setdefault(i, {})[str(j)] = rng.choice(["abc", None, float("nan"), float("inf")])
    before = at.session_state["config"]
    log.append(f"grid {name} {edits}")
    at.session_state[key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    at.run()
    if bad:
        assert configs_equal(at.session_state["config"], before), f"rejected edit changed the config: {log[-1]}"
        assert any(name_of(name) in plain(e.value) for e in at.error), f"no message naming the matrix: {log[-1]}"


def name_of(name: str) -> str:
    return MATRIX_NAMES[name]


def widget_action(at, rng: random.Random, log: list[str]) -> None:
    candidates = []
    for kind in WIDGET_KINDS:
        for w in getattr(at, kind):
            if not getattr(w, "disabled", False):
                candidates.append((kind, w))
    page_own = [(k, w) for k, w in candidates if getattr(w, "key", "") != "share_sidebar_link"]
    if page_own and rng.random() < 0.9:  # the sidebar's share button is on every page: pick it less often
        candidates = page_own
    if not candidates:
        log.append("widget: none")
        return
    kind, w = rng.choice(candidates)
    label = f"{kind} {getattr(w, 'key', None) or getattr(w, 'label', '')!r}"
    if kind in ("selectbox", "radio", "select_slider", "button_group"):
        options = python_options(w)
        if not options:
            log.append(f"{label}: no resolvable options")
            return
        value = rng.choice(options)
        log.append(f"{label} = {value!r}")
        w.set_value(value).run()
    elif kind == "number_input":
        lo = w.min if w.min is not None else -1e6
        hi = w.max if w.max is not None else 1e6
        if w.step and float(w.step).is_integer() and float(lo).is_integer():
            value = rng.choice([int(lo), int(hi), int(rng.uniform(lo, min(hi, lo + 20)))])
        else:
            value = rng.choice([lo, hi, rng.uniform(lo, hi)])
        log.append(f"{label} = {value!r}")
        w.set_value(value).run()
    elif kind in ("checkbox", "toggle"):
        log.append(f"{label} toggled")
        w.set_value(not w.value).run()
    elif kind == "slider":
        lo, hi = w.min, w.max
        value = rng.choice([lo, hi]) if not isinstance(w.value, (list, tuple)) else (lo, hi)
        log.append(f"{label} = {value!r}")
        w.set_value(value).run()
    elif kind == "multiselect":
        options = python_options(w)
        chosen = rng.sample(options, rng.randint(0, len(options))) if options else []
        log.append(f"{label} = {chosen!r}")
        w.set_value(chosen).run()
    elif kind == "button":
        log.append(f"{label} clicked")
        w.click().run()
    elif kind == "text_input":
        value = rng.choice(["", "the cat sat on the mat", "a " * 300, "¿¡ 🙂 !!", "x" * 100])
        log.append(f"{label} = {value[:30]!r}")
        w.input(value).run()


def python_options(w) -> list:
    """The Python values behind an option widget's labels (AppTest only exposes the labels).

    Candidates are the app's known option universes; a candidate counts when the widget's own
    format_func turns it into one of the labels.
    """
    from attn_core import INITIALIZERS
    from attn_core.config import MASK_KINDS

    labels = list(w.options)
    universe = [*PRESETS, *INITIALIZERS, *MASK_KINDS, *PAGES, *range(0, 600), *labels, "sqrt_dk", "none", "custom",
                *SCORE_FUNCTIONS, "self", "cross"]
    found: dict[str, object] = {}
    for v in universe:
        try:
            shown = str(w.format_func(v))
        except Exception:  # noqa: BLE001 - a candidate the format_func does not take
            continue
        if shown in labels and shown not in found:
            found[shown] = v
    return list(found.values())


def run_session(seed: int) -> None:
    rng = random.Random(seed)
    log: list[str] = [f"seed {seed}"]
    at = new_app(timeout=60)
    if rng.random() < 0.25:  # a session opened from a (usually hostile) link
        value = hostile_params(rng)
        log.append(f"open ?c={value[:40]!r}...")
        at = new_app_with_param(value)
        check_healthy(at, " / ".join(log))
        assert configs_equal(at.session_state["config"], load_preset("seed000")), "hostile link changed config"
    for _ in range(rng.randint(10, 30)):
        random_action(at, rng, log)
        check_healthy(at, " / ".join(log[-5:]))
        if rng.random() < 0.15:
            at.switch_page(rng.choice(PAGES)).run()
            check_healthy(at, " / ".join(log[-5:]) + " / page switch")


def new_app_with_param(value: str):
    from streamlit.testing.v1 import AppTest

    from .apptools import APP

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["c"] = value
    return at.run()


QUICK_SESSIONS = 4  # the quick tier's sessions; the others are in the full tier (tests/conftest.py)


def pytest_generate_tests(metafunc):
    if "fuzz_seed" in metafunc.fixturenames:
        n = metafunc.config.getoption("fuzz_sessions")
        metafunc.parametrize("fuzz_seed", [pytest.param(i, marks=() if i < QUICK_SESSIONS else pytest.mark.full)
                                           for i in range(n)])


def test_fuzz_session(fuzz_seed):
    run_session(fuzz_seed)
