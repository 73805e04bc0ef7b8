"""The controls pages share: decimals shown, the head and the query followed, one part of a page at a time,
paging through long matrices, and heatmaps laid side by side.

Each control keeps its value across pages through :func:`attn_ui.app.state.bind`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import streamlit as st

from attn_ui.app import i18n, state
from attn_ui.app.i18n import N_, _
from attn_ui.widgets import heatmap

MAX_PRECISION = 8
HEAD_OPTION = N_("head {h}")  # a head in the selectbox


def precision() -> int:
    """Decimals every number on the page is shown with (the learner's choice, kept across pages)."""
    return int(st.session_state[state.PRECISION])


def precision_control(prefix: str, where: Any = st) -> int:
    """Slider for the number of decimals every number on the page is shown with (state PRECISION)."""
    value = min(max(precision(), 0), MAX_PRECISION)
    key = f"{prefix}_precision"
    return where.slider(_("Decimals shown"), min_value=0, max_value=MAX_PRECISION,
                        help=_("Applies to every number on this page."), **_shared(state.PRECISION, key, value))


NO_FOCUS = N_("none (hover or click a cell)")  # the focus selectbox's first option


def focus_control(labels: list[str], prefix: str, where: Any = st) -> str | None:
    """The keyboard's way to focus a token (state.FOCUS, kept across pages): the heatmaps light its row and column
    as a click on its cell does, and hold them until the control is set to none (attn_ui.widgets.charts.show_chart;
    a click on a chart leaves them: the control and every chart always say the same). One control per page, not one
    per chart."""
    key, now = f"{prefix}_focus", i18n.translator()
    value = st.session_state.get(state.FOCUS)
    value = value if value in labels else ""  # "": no focus (None would leave the box empty, "Choose an option")
    st.session_state[state.FOCUS] = value or None
    chosen = where.selectbox(_("Focus on a token"), ["", *labels], format_func=lambda t: t or now(NO_FOCUS),
                             help=_("Lights the token's row and column in every heatmap, as a click on its cell "
                                    "does, until you set this back to none. With a mouse, while it is none: hover a "
                                    "cell to light its row and column, click it to pin them, click it again (or "
                                    "double-click) to release."),
                             **state.bind(key, value, partial(_focus, key)))
    return chosen or None


def _focus(key: str) -> None:
    """on_change of the focus selectbox: its token, or None for its first option."""
    st.session_state[state.FOCUS] = st.session_state[key] or None
    st.session_state[state.KEPT][key] = st.session_state[key]


def head_shown(n_heads: int) -> int:
    """The head to show (state HEAD, within the ``n_heads``): what :func:`head_selector` will show, known before it is
    drawn."""
    return min(int(st.session_state[state.HEAD]), n_heads - 1)


def head_selector(n_heads: int, prefix: str) -> int:
    """The head to show (state HEAD); no widget when there is only one."""
    if n_heads == 1:
        return 0
    value, key, now = head_shown(n_heads), f"{prefix}_head", i18n.translator()
    return st.selectbox(_("Head"), list(range(n_heads)), format_func=lambda h: now(HEAD_OPTION).format(h=h), width=320,
                        help=_("Each head attends with its own slice of W_Q, W_K, W_V."),
                        **_shared(state.HEAD, key, value))


def query_selector(labels: list[str], prefix: str) -> int:
    """The query token to drill into (state QUERY); clicking a scores or weights cell also sets it."""
    value, key = min(int(st.session_state[state.QUERY]), len(labels) - 1), f"{prefix}_query"
    st.session_state[state.QUERY] = value
    return st.selectbox(_("Query token (or click a cell of the scores or weights)"), list(range(len(labels))),
                        format_func=lambda i: labels[i], width=320, **state.bind(key, value, partial(_pick_query, key)))


def _pick_query(key: str) -> None:
    """on_change of the query selectbox: the query, and fresh clickable heatmaps (a heatmap's click is news only when
    it differs from its last one: after the selectbox, a click on the cell clicked before must count again)."""
    st.session_state[state.QUERY] = st.session_state[key]
    st.session_state[state.QUERY_PICKS] += 1


def _shared(state_key: str, key: str, value: int) -> dict:
    """:func:`attn_ui.app.state.bind` for a widget showing a choice the pages share (its value kept in range)."""
    st.session_state[state_key] = value
    return state.bind(key, value, state.copy_to(state_key, key))


def whole_number_input(label: str, *, where: Any = st, help: str | None = None, width: int | str = "stretch",
                       **bound: Any) -> float | None:
    """A box for a whole number the core checks (attn_core.whole_size): a float shown whole ("%g": 3, 1000), so that
    what is typed arrives as typed. An integer box's browser side reads the text as parseInt does ("2.5" came as 2,
    "1e3" as 1, without a word); here 2.5 comes as 2.5, refused by name as not whole, and 1e3 as 1000.0, read as 1000.
    No bounds (the core's refusal names the size and its cap, where Streamlit's would leave the box red with an
    English tooltip) and no default: a box left empty (or holding no number: "abc") comes as None, refused as empty
    (a default would come as a number nobody typed). ``bound``: the widget's ``key`` and ``on_change``
    (:func:`attn_ui.app.state.bind`, holding a float). Returns the box's value."""
    return where.number_input(label, value=None, step=1.0, format="%g", help=help, width=width, **bound)


def view_picker(label: str, options: list[str], *, key: str, format_func: Callable[[str], str] | None = None) -> str:
    """A row of buttons choosing the one part of a page drawn below it; the choice is kept across page visits.

    ``options`` are the values the page reads (English, marked with ``N_``); each button shows
    ``format_func(option)``, by default the option in the learner's language.

    Use it instead of ``st.tabs``. The page builds only the chosen part, as with lazy tabs, but Streamlit's tab
    bar also costs the browser about 40–80 ms on every rerun of the page; a segmented control costs a few
    (bench/RESULTS.md, round 4).
    """
    return st.segmented_control(label, options, required=True, label_visibility="collapsed",
                                format_func=format_func or i18n.translator(),
                                **state.bind(key, state.kept(key, options[0], options)))


def one_at_a_time(label: str, options: list[str], *, large: bool, key: str,
                  format_func: Callable[[str], str] | None = None) -> list[str]:
    """The heatmaps of a group (a before/after pair, Q K V) to draw: every one side by side, or, when ``large``
    (each drawn in blocks: attn_ui.views.step_by_step.in_blocks), the one chosen on a :func:`view_picker` above them.

    At that size each heatmap costs the browser tens of milliseconds of work, all at once when the page opens
    (bench/RESULTS.md, issue 28); at a smaller size the group is compared side by side as before."""
    if not large:
        return list(options)
    chosen = view_picker(label, options, key=key, format_func=format_func)
    st.caption(_("At this size each heatmap is drawn in blocks, one at a time: choose which above."))
    return [chosen]


def pair_shown(a: np.ndarray, b: np.ndarray, rows: list[str], shown: list[str], both: tuple[str, str],
               extra_b: int = 0) -> list[Any]:
    """Where a pair's heatmaps go (``both``: the pair's two options of :func:`one_at_a_time`, ``shown``: what it
    returned): side by side (:func:`pair`), or a container for the one shown and None for the other."""
    if len(shown) == 2:
        return pair(a, b, rows, extra_b=extra_b)
    return [st.container() if side in shown else None for side in both]


def pages_of(n: int, per_page: int) -> list[range]:
    """Positions 0 … n − 1 in pages of ``per_page`` (rows or keys shown a page at a time).

    >>> pages_of(70, 32)
    [range(0, 32), range(32, 64), range(64, 70)]
    """
    return [range(a, min(a + per_page, n)) for a in range(0, n, max(per_page, 1))]


def side_by_side(widths: list[int], least: int = 200) -> list[Any]:
    """Containers in a row, ``widths`` pixels wide (at least ``least``); they wrap when the row is full. One alone
    needs no row (one element fewer: each costs Streamlit ≈ 0.2 ms a run)."""
    if len(widths) == 1:
        return [st.container(width=max(widths[0], least))]
    row = st.container(horizontal=True, gap="medium")
    return [row.container(width=max(w, least)) for w in widths]


def pair(a: np.ndarray, b: np.ndarray, rows: list[str], extra_b: int = 0) -> list[Any]:
    """Two containers side by side, each as wide as the heatmap of ``a`` or ``b`` (plus ``extra_b`` pixels for
    what is drawn beside ``b``); they wrap if too wide."""
    widths = [heatmap.heatmap_width(m, rows, precision()) for m in (a, b)]
    return side_by_side([widths[0], widths[1] + extra_b])
