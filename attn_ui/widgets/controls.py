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

from attn_core import AttentionInputError, number_in_range, whole_number
from attn_ui.app import i18n, state
from attn_ui.app.i18n import N_, _
from attn_ui.widgets import heatmap, text

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


def number_input(label: str, *, where: Any = st, step: float = 0.01, help: str | None = None,
                 width: int | str = "stretch", **bound: Any) -> float | None:
    """:func:`whole_number_input`'s sibling for a number that need not be whole (attn_core.number_in_range checks
    it): no bounds (Streamlit's would leave a value out of range in a red box with an English tooltip; the core's
    refusal says the range in the learner's language), no default, "%g" (shown as typed: 0.005, not 0.01)."""
    return where.number_input(label, value=None, step=step, format="%g", help=help, width=width, **bound)


SEED_HIGH = 2**31 - 1  # the largest seed a seed box takes (the boxes' bound before; numpy's generators take more)
STILL_SEED = N_("Still using seed {value}.")  # said after a seed box's refusal


def whole_box(label: str, key: str, default: int, low: int, high: int, still: Callable[[int], str], *,
              where: Any = st, help: str | None = None, width: int | str = "stretch", **options: Any) -> int:
    """A :func:`whole_number_input` labelled ``label`` (translated: the refusal names the box by it) for a whole
    number from ``low`` to ``high``; returns the number in use.

    The box holds what was typed, kept across reruns and pages (:func:`attn_ui.app.state.bind`, the kept store;
    ``default`` the first time), and attn_core.whole_number checks it: a whole float is its int ("1e3" is 1000);
    what it refuses (empty, not whole, out of range) is said under the box, in words and in the learner's language,
    with ``still(value)``, the sentence saying the value still in use ("Still using seed 0."): the last one the core
    took (:func:`whole_in_use`). Nothing typed is lost. ``options``: more of number_input's (``disabled``: the box is
    not in use then, so no refusal is said)."""
    whole_number_input(label, where=where, help=help, width=width,
                       **state.bind(key, _boxed(state.kept(key, default))), **options)
    value, refused = whole_in_use(key, default, low, high, what=label)
    return _said((value, None if options.get("disabled") else refused), still)  # a disabled box: not in use


def seed_box(label: str, key: str, *, where: Any = st, **options: Any) -> int:
    """:func:`whole_box` for a seed: 0 (the first time) to :data:`SEED_HIGH`."""
    return whole_box(label, key, 0, 0, SEED_HIGH, lambda v: _(STILL_SEED).format(value=v), where=where, **options)


def number_box(label: str, key: str, default: float, low: float | None, high: float | None,
               still: Callable[[float], str], *, where: Any = st, help: str | None = None,
               width: int | str = "stretch", step: float = 0.01) -> float:
    """:func:`whole_box` for a number that need not be whole (:func:`number_input`, attn_core.number_in_range)."""
    number_input(label, where=where, help=help, width=width, step=step,
                 **state.bind(key, _boxed(state.kept(key, default))))
    return _said(number_in_use(key, default, low, high, what=label), still)


#: a text box keeps at most this many times the characters its page reads: a longer paste is cut to that many, and
#: said (a page reads at most 4,000 characters, so a box holds at most 40,000, ≈ 40 kB to 160 kB as Python keeps a
#: str; Streamlit would keep whatever the browser sent, up to its 25 MB message cap, in the session until it ends)
TEXT_KEPT = 10
TOO_LONG = N_("{what}: {n:,} characters, at most {most:,} are read: shorten it.")  # a text box's refusal
CUT_TO = N_("The box keeps only the first {kept:,} of them.")  # after TOO_LONG, when a paste was cut
QUOTED_TEXT = 60  # the most characters of a text a "still …" sentence quotes


def text_box(label: str, key: str, default: str, most: int, still: Callable[[str], str], *, where: Any = st,
             area: bool = False, on_change: Callable[[], None] | None = None, **options: Any) -> str:
    """A text box (``area``: a text area) labelled ``label`` (translated: the refusal names the box by it) whose page
    reads at most ``most`` characters; returns the text in use.

    The box holds what was typed or pasted, as it was, kept across reruns and pages (:func:`attn_ui.app.state.bind`,
    ``default`` the first time); no ``max_chars``, whose browser side drops a paste that is too long without a word.
    A text longer than ``most`` is refused under the box, in words and in the learner's language, naming the box, the
    length and the limit, with ``still(text)``, the sentence saying the text still in use: the last one within
    ``most`` (``default`` before any). Past :data:`TEXT_KEPT` × ``most`` characters the box keeps only that many (the
    session would hold all of it), and says so. ``on_change``: called after the box has kept what it holds (which
    may be over ``most``). ``options``: more of the widget's (``height``, ``help``, ``placeholder``)."""
    widget = where.text_area if area else where.text_input
    widget(label, **state.bind(key, state.kept(key, default), partial(_keep_text, key, most * TEXT_KEPT, on_change)),
           **options)
    return _said(text_in_use(key, default, most, what=label), still)


def _keep_text(key: str, kept_most: int, then: Callable[[], None] | None = None) -> None:
    """on_change of a :func:`text_box`: what it holds, cut to ``kept_most`` characters (how long it was noted); then
    the box's own ``on_change``, if any."""
    ss = st.session_state
    typed, cut = ss[key], ss.setdefault(state.TEXTS_CUT, {})
    if isinstance(typed, str) and len(typed) > kept_most:
        cut[key] = len(typed)
        ss[key] = typed = typed[:kept_most]
    else:
        cut.pop(key, None)
    ss[state.KEPT][key] = typed
    if then is not None:
        then()


def text_in_use(key: str, default: str, most: int, *, what: str = "") -> tuple[str, str | None]:
    """The text the :func:`text_box` ``key`` stands for: what it holds when at most ``most`` characters (then kept as
    the text in use, state.TEXTS_IN_USE), else the last text it held that was (``default`` before any); and why what
    it holds is refused (None when it is not)."""
    ss = st.session_state
    typed = ss[key] if key in ss else state.kept(key, default)
    typed = typed if isinstance(typed, str) else default
    in_use = ss.setdefault(state.TEXTS_IN_USE, {})
    if len(typed) <= most:
        in_use[key] = typed
        return typed, None
    # the length pasted, when the box holds what a paste was cut to (not a text set since, by a lesson or a link)
    cut = ss.get(state.TEXTS_CUT, {}).get(key) if len(typed) == most * TEXT_KEPT else None
    refused = _(TOO_LONG).format(what=what, n=cut or len(typed), most=most)
    if cut:
        refused = i18n.sentences(refused, _(CUT_TO).format(kept=len(typed)))
    return in_use.get(key, default), refused


def quoted_text(typed: str, most: int = QUOTED_TEXT) -> str:
    """A text as a "still …" sentence quotes it: cut at ``most`` characters with "…", Markdown escaped, in “ ”.

    >>> quoted_text("a" * 70)[-4:]
    'aa…”'
    """
    return "“" + text.md_escape(typed if len(typed) <= most else typed[:most - 1] + "…") + "”"


def _said(checked: tuple[Any, str | None], still: Callable[[Any], str]) -> Any:
    """The value in use of a box just drawn (:func:`whole_in_use`); its refusal, if any, said under it."""
    value, refused = checked
    if refused:
        st.warning(i18n.sentences(refused, still(value)), icon=":material/warning:")
    return value


def whole_in_use(key: str, default: int, low: int, high: int, *, what: str = "") -> tuple[int, str | None]:
    """The whole number box ``key`` (:func:`whole_box`) stands for, for a page or a callback: what it holds if the
    core takes it (then kept as the value in use, state.IN_USE), else the last value it took (``default`` before
    any), kept within ``low`` and ``high``; and why the core refused what it holds (None when it took it)."""
    return _in_use(whole_number, key, default, low, high, what)


def number_in_use(key: str, default: float, low: float | None, high: float | None, *,
                  what: str = "") -> tuple[float, str | None]:
    """:func:`whole_in_use` for a :func:`number_box`."""
    return _in_use(number_in_range, key, default, low, high, what)


def _in_use(check: Callable, key: str, default: float, low: float | None, high: float | None,
            what: str) -> tuple[Any, str | None]:
    ss = st.session_state
    typed = ss[key] if key in ss else state.kept(key, default)  # a callback's box, or one this run has not drawn
    in_use = ss.setdefault(state.IN_USE, {})
    try:
        in_use[key] = check(what, typed, low, high)
        return in_use[key], None
    except AttentionInputError as err:
        last = in_use.get(key, default)
        last = last if low is None else max(last, low)  # a bound that moved (a matrix's shape, a model's length)
        return (last if high is None else min(last, high)), i18n.error_text(err)


def _boxed(value: object) -> float | None:
    """A kept value as a float box holds it (an int a callback kept, e.g. a model layer's padding: attn_ui.views.
    model_views.follow_origin), None as None (a box left empty)."""
    return None if value is None else float(value)


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
