"""The learner's state: the configuration and what every page shares, and the functions that change it.

The configuration lives in non-widget keys (they survive page switches); widgets write into it
through the setters here, each of which validates with attn_core first. A rejected input leaves the
configuration exactly as it was.

A page's own widget keys are page-prefixed (``learn_``, ``inputs_``, ``steps_``, ``scaling_``, ``masking_``,
``heads_``, ``share_``, ``model_``, ``gen_``, ``trans_``) and live beside its views (attn_ui.views.model_views,
generate_views, translate_views, multihead_views; attn_ui.lessons.lesson_ui), not here: a widget's value survives a
page switch only through :func:`bind`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, partial

import numpy as np
import streamlit as st

from attn_core import (
    DEFAULT_PRESET,
    MATRIX_NAMES,
    PRESETS,
    SCORE_MATRICES,
    SCORE_WORDS,
    AttentionInputError,
    Config,
    check_computable,
    configs_equal,
    load_preset,
    resize,
    score_weights,
)
from attn_ui.app import i18n
from attn_ui.app.i18n import N_, _, error_text

# ---- non-widget keys (the configuration and what the pages share) ------------------------------
CONFIG = "config"  # attn_core.Config: the last valid configuration
PRESET = "preset"  # key of the preset the configuration started from; None after a link or a file
HISTORY = "history"  # [(Config, PRESET, what changed it: a Change)]: the configurations before the last changes
EDITOR_VERSION = "editor_version"  # int; bump to reset every matrix editor to the configuration
LAST_RUN = "last_run"  # (page's url path, time.monotonic() at its start, the page's before it): attn_ui.shell.frame
GRIDS_DRAWN = "grids_drawn"  # {grid key}: the grids this run drew (attn_ui.widgets.grid_editor.commit_pending)
GRID_CELLS = "grid_cells"  # {matrix name: {(row, column)}}: up to 64 cells of its grid's last edits (grid_editor)
EDITOR_BASE = "editor_base"  # {matrix name: (values the grid started from, its decimals, the matrix it holds as valid)}
DRAFTS = "drafts"  # {matrix name: object array with the learner's rejected values}
ERRORS = "errors"  # {matrix name: (AttentionInputError, the grid's row tokens)} of the input that was rejected
#: (what they were judged against, {size box key: what it held}, AttentionInputError): sizes typed on Inputs & weights
#: that were refused, kept in their boxes and said there while the configuration's sizes stay (pages/inputs.py)
DIMS_REFUSED = "dims_refused"
CELL_REFUSED = "cell_refused"  # {matrix name: message}: a value the one-cell editor (too large for a grid) refused
#: the one-cell editor's widgets of matrix ``name``: row, column, the value typed (attn_ui.widgets.grid_editor.one_cell)
CELL_ROW, CELL_COL, CELL_VALUE = "{name}_cell_row", "{name}_cell_col", "{name}_cell_value_{i}_{j}_{version}"
PRECISION = "precision"  # decimals shown in heatmaps and tables
QUERY = "query"  # index of the query token in the drill-downs
QUERY_PICKS = "query_picks"  # int: times the query was chosen in a selectbox (names the clickable heatmaps afresh)
HEAD = "head"  # index of the head shown step by step
#: str or None: the token (its label, "2: cat") whose row and column the heatmaps light without a pointer (the
#: keyboard's focus: attn_ui.widgets.controls.focus_control; attn_ui.widgets.charts.show_chart gives it to the charts)
FOCUS = "focus_token"
NOTICE = "notice"  # [Notice]: one-off messages for the next page drawn (a refused link, a refused change, ...)
LINK_APPLIED = "link_applied"  # bool: this session has read its address (?c= or ?s=; once, at start)
# (Config, (parameter, value)): what attn_ui.app.address last put in the address bar, for that Config
ADDRESS = "address"
STORE_KEY = "store_key"  # this session's key in attn_ui.app.address.STORE (made when its configuration is too large)
IMPORT_RESULT = "import_result"  # (ok, message) of the last JSON import, shown once on Share & export
IMPORTS = "imports"  # int: files read by Share & export's uploader (its key; a new one empties it, see share_ui)
FRAMED = "framed"  # bool, set by attn_ui.shell.frame.navigation for the page it runs next (see attn_ui.shell.frame)
PHONE = "on_phone"  # bool: the session's browser is a phone's (:func:`on_phone`; told by attn_ui.shell.frame)
#: str: the address's path at which Streamlit found no page (attn_ui.shell.frame.unknown_address), until the page that
#: opened instead has said so
NOT_FOUND = "not_found"
#: str: a ``?lang=`` the app does not have, given when the session opened (attn_ui.shell.frame.choose_language), until
#: the page that opened has said so
LANG_UNKNOWN = "lang_unknown"
NAV_PAGES = "nav_pages"  # (language, [st.Page]): the navigation's pages, made once per session and language (frame)
EDIT_MATRIX = "edit_matrix"  # the matrix the edit panel shows (attn_ui.shell.edit_panel: a widget key, kept in KEPT)
KEPT = "kept"  # {widget key: value}: the kept store of bind(): choices that are not part of the configuration
#: {widget key: number}: the last value a number box held that the core took (attn_ui.widgets.controls.whole_box):
#: what the page keeps using while the box holds what the core refuses
IN_USE = "numbers_in_use"
#: {widget key: text}: the last text a text box held that was within what its page reads
#: (attn_ui.widgets.controls.text_box): what the page keeps using while the box holds a longer one
TEXTS_IN_USE = "texts_in_use"
#: {widget key: characters}: how long the text was that a text box cut to what it keeps (controls.text_box), until
#: the box is changed again
TEXTS_CUT = "texts_cut"
SET_ASIDE = "set_aside"  # {matrix or field name: value}: a score function's weights and Y while not in use
# Languages (attn_ui.app.i18n): the session's language, and whether it has been chosen (from ?lang= or the browser)
LANG = i18n.LANG_KEY  # "en", "zh" or "ko": every text is shown in it (i18n._ reads this key)
LANG_PICKER = "frame_lang"  # the sidebar's language picker (a widget key; kept in LANG)

DEFAULT_PRECISION = 4
UNDO_STEPS = 30  # changes that can be undone, at most ...
UNDO_BYTES = 32 * 2**20  # ... and the matrices they keep (a configuration at the caps holds about 10 MB)
_GRID_FIELDS = {"tokens", "x", "w_q", "w_k", "w_v", "w_o", "y", "y_tokens", "w_a", "w_1", "w_2", "v_a"}  # in grids


#: every key :func:`init` makes, with what makes its first value (a fresh list or dict for each session)
_FIRST = {PRESET: lambda: DEFAULT_PRESET, HISTORY: list, EDITOR_VERSION: int, IMPORTS: int, EDITOR_BASE: dict,
          DRAFTS: dict, ERRORS: dict, PRECISION: lambda: DEFAULT_PRECISION, QUERY: int, QUERY_PICKS: int, HEAD: int,
          KEPT: dict, IN_USE: dict, TEXTS_IN_USE: dict, TEXTS_CUT: dict, SET_ASIDE: dict}


def init() -> None:
    """Create every key once per session (idempotent); attn_ui.shell.frame calls it on every run.

    No code deletes these keys, so the last one made tells that they are all there: one read a run (3 µs), where
    looking for each cost 50 µs of every run (measured in AppTest). NOTICE is made when a message is kept
    (:func:`notify`)."""
    if SET_ASIDE in st.session_state:
        return
    if CONFIG not in st.session_state:
        st.session_state[CONFIG] = load_preset(DEFAULT_PRESET)
    for key, first in _FIRST.items():  # SET_ASIDE last
        if key not in st.session_state:
            st.session_state[key] = first()


def config() -> Config:
    return st.session_state[CONFIG]


def on_phone() -> bool:
    """Whether the session's browser is a phone's (:data:`PHONE`: attn_ui.shell.frame.navigation tells it from the
    browser's user agent, once a session, before any page or widget asks): there the sidebar is an overlay over the
    page, so what must stay beside the page (the edit panel: attn_ui.shell.frame.panel_slot) is drawn in it instead."""
    return bool(st.session_state.get(PHONE))


def set_config(cfg: Config, *, reset_editors: bool = True, what: Change | None = None) -> str | None:
    """Validate and store ``cfg``; the configuration it replaces can be brought back with :func:`undo`.
    Returns None on success, else the message (state untouched): a configuration attention cannot be computed on
    (a step would overflow float64: attn_core.check_computable) is refused like one the core rejects.

    ``reset_editors`` bumps the editor version so every grid shows the new values and drops any
    rejected drafts, when the configuration changed (the same numbers leave the grids as they are: a draft with its
    message, an edit arriving in this run, as when Streamlit calls a widget's callback again); grid edits themselves
    pass False. ``what`` names the change for the undo button (default: :func:`describe_change`).
    """
    try:
        cfg = check_computable(cfg)
    except AttentionInputError as err:
        return error_text(err)
    old = config()
    changed = not configs_equal(old, cfg)
    if changed:
        _remember(old, what or describe_change(old, cfg))
    _put(cfg)
    if reset_editors and changed:
        reset_editor_state()
    return None


#: called after every change of the configuration, in the order added (attn_ui.app.address adds the one that puts it
#: in the address bar, so that a reload brings it back): this module imports none of the modules that read it
_ON_CHANGE: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every change of the configuration (once, however often it is added)."""
    if listener not in _ON_CHANGE:
        _ON_CHANGE.append(listener)


def _put(cfg: Config) -> None:
    """Make ``cfg`` the configuration, and tell the listeners (:func:`on_change`)."""
    st.session_state[CONFIG] = cfg
    clamp_indices()
    for listener in _ON_CHANGE:
        listener()


def update_config(**changes) -> str | None:
    """``set_config(replace(config(), **changes))``: change some fields, validated."""
    return set_config(replace(config(), **changes), reset_editors=bool(_GRID_FIELDS & set(changes)))


def load(preset_key: str) -> None:
    """Replace the configuration with a fresh copy of a preset; every grid shows it, a value a grid refused let go
    (also when the numbers in use are the preset's: Reset to preset is the way out of a refused value)."""
    before = config()
    set_config(load_preset(preset_key), what=change(N_("preset “{title}” loaded"), title=PRESETS[preset_key].title))
    st.session_state[PRESET] = preset_key
    if configs_equal(before, config()) and holds_refused():  # unchanged: set_config left the grids as they are
        reset_editor_state()


def holds_refused() -> bool:
    """Whether a grid holds a value it refused (shown in it, with its message, while the charts use the last valid)."""
    return bool(st.session_state[DRAFTS] or st.session_state[ERRORS])


def load_shared(cfg: Config, *, undoable: bool = True) -> str | None:
    """Replace the configuration with one from a link or a file (already validated); a model layer's configuration
    opens on the head it was opened with (its origin's "head"). Returns None, or why it was not (:func:`set_config`:
    numbers attention cannot be computed on), the configuration untouched.

    ``undoable=False`` when a new session opens its address: there is nothing before it to go back to.
    """
    if message := set_config(cfg, what=change(N_("link or file opened"))):
        return message
    st.session_state[PRESET] = None
    if not undoable:
        st.session_state[HISTORY].clear()
    if cfg.origin and isinstance(head := cfg.origin.get("head"), int) and 0 <= head < cfg.n_heads:
        st.session_state[HEAD] = head
    return None


def default_score_weights(cfg: Config, kind: str, d_a: int | None = None) -> dict[str, np.ndarray]:
    """Weights to start a score function with, for ``cfg``'s head count and per-head widths (``d_a`` features per
    head for "additive", default d_k): attn_core.score_weights, drawn per head as attn_core.SCORE_STARTS says
    (W_a not the identity, so "general" changes the weights; the Score functions page names the initialiser)."""
    return score_weights(kind, cfg.d_q, cfg.d_k, cfg.n_heads, d_a)


def with_heads(cfg: Config, n_heads: int) -> dict:
    """The changes that give ``cfg`` ``n_heads`` heads: with a general or additive score, W_a (or W_1, W_2, v_a)
    follow the new per-head widths (d_q rows per head; each head d_a columns), keeping every value that still fits;
    new cells start as a new score function does (attn_ui.default_score_weights)."""
    new, changes = replace(cfg, n_heads=n_heads, score_bias=None), {"n_heads": n_heads}
    if cfg.score_bias is not None and n_heads != cfg.n_heads:
        changes["score_bias"] = None  # one matrix per head: it does not split or merge
    if cfg.score == "general":
        fresh = default_score_weights(new, "general")
    elif cfg.score == "additive":
        width = cfg.w_1.shape[1]  # n_heads·d_a: kept when the new count divides it
        fresh = default_score_weights(new, "additive", width // n_heads if width % n_heads == 0 else cfg.d_a)
    else:
        return changes
    return changes | {name: resize(cfg.matrix(name), w.shape, w) for name, w in fresh.items()}


def set_score(kind: str, d_a: int | None = None) -> str | None:
    """Switch the score function. The weights of the one left are set aside, and the new one's come back from
    where they were set aside when they still fit (and ``d_a`` is not a new width), else start from
    :func:`default_score_weights`. Returns None, or why the change was refused."""
    cfg, aside = config(), st.session_state[SET_ASIDE]
    aside.update({name: cfg.matrix(name) for name in SCORE_MATRICES[cfg.score]})
    wanted = {name: aside.get(name) for name in SCORE_MATRICES[kind]}
    fresh = default_score_weights(cfg, kind, d_a)
    if any(w is None or w.shape != fresh[name].shape for name, w in wanted.items()) or (d_a and d_a != cfg.d_a):
        wanted = fresh
    cleared = {name: None for names in SCORE_MATRICES.values() for name in names}
    return set_config(replace(cfg, score=kind, **(cleared | wanted)), what=change(
        N_("score function: {name}"), name=SCORE_WORDS[kind]))


def set_cross(on: bool) -> str | None:
    """Queries from a second sequence Y (cross-attention) or from X again. Y starts as a copy of X and its tokens
    (self-attention's numbers), or comes back from where it was set aside when it still fits. A causal mask,
    meaningless across two sequences, becomes no mask; a custom mask starts over; a score bias (made for the other
    queries) is dropped. Returns None, or why not."""
    cfg, aside = config(), st.session_state[SET_ASIDE]
    if on == cfg.cross:
        return None
    if cfg.cross:
        aside.update(y=cfg.y, y_tokens=cfg.y_tokens)
        return set_config(replace(cfg, y=None, y_tokens=None, custom_mask=np.ones((cfg.n_seq, cfg.n_seq), bool),
                                  mask_kind="none" if cfg.mask_kind == "custom" else cfg.mask_kind, score_bias=None))
    y, y_tokens = aside.get("y"), aside.get("y_tokens")
    if y is None or y.shape[1] != cfg.d_model:
        y, y_tokens = cfg.x.copy(), cfg.tokens
    n_y = y.shape[0]
    mask_kind = "none" if cfg.mask_kind in ("causal", "custom") else cfg.mask_kind
    return set_config(replace(cfg, y=y, y_tokens=y_tokens, mask_kind=mask_kind,
                              custom_mask=np.ones((n_y, cfg.n_seq), bool), score_bias=None))


#: what a change was, for the Undo button: English templates (marked with N_) and their values, put into words
#: in the language of the run that shows it (:func:`change_text`), not of the run that made the change
Change = tuple[tuple[str, dict], ...]


def change(template: str, **values: object) -> Change:
    """One change, in words to be translated when shown: ``change(N_("lesson “{title}” loaded"), title=...)``."""
    return ((template, values),)


def change_text(what: Change) -> str:
    """``what`` in the learner's language ("X edited, mask changed")."""
    return _(", ").join(i18n.filled(template, values) for template, values in what)  # ", " is "，" in Chinese


def describe_change(old: Config, new: Config) -> Change:
    """What changed from ``old`` to ``new``, in a few words ("X edited", "dimensions changed", ...)."""
    if old.score != new.score:
        return change(N_("score function changed to {name}"), name=SCORE_WORDS[new.score])
    if old.cross != new.cross:
        return change(N_("queries from Y (cross-attention)") if new.cross else
                      N_("queries from X again (self-attention)"))
    if any(old.matrix(n).shape != new.matrix(n).shape for n in new.matrix_names()):
        return change(N_("dimensions changed"))
    edited = [MATRIX_NAMES[n] for n in new.matrix_names() if old.matrix(n).tobytes() != new.matrix(n).tobytes()]
    changed = [(what, {}) for what, differs in (
        (N_("token labels changed"), old.tokens != new.tokens or old.y_tokens != new.y_tokens),
        (N_("head count changed"), old.n_heads != new.n_heads),
        (N_("scale changed"), type(old.scale) is not type(new.scale) or old.scale != new.scale),
        (N_("mask changed"), not _same_mask(old, new)),
    ) if differs]
    return (*change(N_("{matrices} edited"), matrices=", ".join(edited)) * bool(edited), *changed)


def _same_mask(a: Config, b: Config) -> bool:
    ca, cb = a.custom_mask, b.custom_mask
    same_custom = (ca is None) == (cb is None) and (ca is None or (ca.shape == cb.shape and bool((ca == cb).all())))
    return a.mask_kind == b.mask_kind and tuple(a.is_pad) == tuple(b.is_pad) and same_custom


def _remember(cfg: Config, what: Change) -> None:
    """Keep ``cfg`` (the configuration being replaced) for :func:`undo`, within UNDO_STEPS and UNDO_BYTES."""
    history = st.session_state[HISTORY]
    history.append((cfg, st.session_state[PRESET], what))
    while len(history) > UNDO_STEPS or (len(history) > 1 and _bytes(history) > UNDO_BYTES):
        history.pop(0)


def _bytes(history: list) -> int:
    """The memory the kept configurations hold (a matrix shared by several of them counts once)."""
    return sum({id(m): m.nbytes for cfg, *_kept in history for m in map(cfg.matrix, cfg.matrix_names())}.values())


@cache
def _preset(key: str) -> Config:
    return load_preset(key)  # read-only here: compared, never stored


def edited_since_preset() -> bool:
    """Whether the configuration differs from the preset it started from (False after a link or a file)."""
    preset = st.session_state[PRESET]
    return preset is not None and not configs_equal(config(), _preset(preset))


def undo() -> None:
    """on_click: bring back the configuration before the last change (and its preset); grids show it again."""
    if st.session_state[HISTORY]:
        cfg, st.session_state[PRESET], _what = st.session_state[HISTORY].pop()
        _put(cfg)
        reset_editor_state()


def last_change() -> str | None:
    """What :func:`undo` would take back, in the learner's language, or None."""
    return change_text(st.session_state[HISTORY][-1][2]) if st.session_state[HISTORY] else None


def redraw_grids() -> None:
    """Every grid drawn afresh under a new key, from the configuration or from its draft (a value refused, kept
    with its message): the browser's grids forget what they had sent."""
    st.session_state[EDITOR_VERSION] += 1
    st.session_state[EDITOR_BASE] = {}
    st.session_state[GRID_CELLS] = {}


def reset_editor_state() -> None:
    """Every grid drawn afresh from the configuration (a new editor version); a value a grid refused is let go,
    and the learner told so on the next page drawn (:func:`notify`), not dropped without a word."""
    if refused := st.session_state.get(ERRORS):
        notify(_("The value refused in {matrices} was let go with this change: the grids show the values in use "
                 "now.").format(matrices=_(", ").join(MATRIX_NAMES[name] for name in refused)),
               icon=":material/info:")
    redraw_grids()
    st.session_state[DRAFTS] = {}
    st.session_state[ERRORS] = {}


def clamp_indices() -> None:
    """Keep the chosen query and head inside the current configuration."""
    cfg = config()
    st.session_state[QUERY] = min(st.session_state.get(QUERY, 0), cfg.n_q - 1)
    st.session_state[HEAD] = min(st.session_state.get(HEAD, 0), cfg.n_heads - 1)


@dataclass(frozen=True)
class Notice:
    """A one-off message: plain text (shown Markdown-escaped), drawn as a warning, or as an error with ``error``."""

    text: str
    icon: str = ":material/warning:"
    error: bool = False


def notify(message: str, *, icon: str = ":material/warning:", error: bool = False) -> None:
    """Keep a message (a change refused in a callback, a link that could not be opened, ...) to show once, under the
    title of the next page drawn (attn_ui.shell.frame.page_start), whichever page that is: a message kept before a page
    switch is shown on the page that opens. Several wait their turn together; the same message is kept once."""
    pending = st.session_state.setdefault(NOTICE, [])
    if (notice := Notice(message, icon, error)) not in pending:
        pending.append(notice)


def pop_notices() -> list[Notice]:
    """The messages kept by :func:`notify` since they were last shown, oldest first; none are kept after this."""
    return st.session_state.pop(NOTICE, None) or []


def bind(key: str, value: object, on_change: Callable[[], None] | None = None) -> dict:
    """The one way a widget keeps its value across pages and reruns: ``st.selectbox(..., **bind(key, value))``.

    Streamlit forgets a widget's value on a run that does not draw it (another page, a closed popover), so the
    value lives outside the widget: in the configuration, in a choice the pages share (:data:`PRECISION`,
    :data:`QUERY`, :data:`HEAD`), or in the kept store (:func:`kept`). Before the widget is drawn it is given
    ``value``; a change the learner makes is written back by ``on_change``: the configuration's setter,
    ``copy_to(PRECISION, key)``, or by default the kept store. Returns the widget's ``key`` and ``on_change``.

    The value is written on every run, even when the widget seems to hold it: a widget's id includes the page's
    script hash, which differs between a page's first run without the router (attn_ui.shell.frame: a cold start, or a
    link that switches page) and the runs after it, and a widget with a new id starts afresh at its default.
    """
    st.session_state[key] = value
    return {"key": key, "on_change": on_change or partial(_keep, key)}


def kept(key: str, default: object, options: list | None = None) -> object:
    """The value widget ``key`` had when last changed, else ``default`` (``options[0]`` if not among ``options``)."""
    value = st.session_state[KEPT].get(key, default)
    return value if options is None or value in options else options[0]


def copy_to(state_key: str, key: str) -> Callable[[], None]:
    """on_change for :func:`bind`: copy widget ``key``'s value into the shared choice ``state_key``."""
    return partial(_copy, key, state_key)


def _keep(key: str) -> None:
    st.session_state[KEPT][key] = st.session_state[key]


def _copy(key: str, state_key: str) -> None:
    st.session_state[state_key] = st.session_state[key]
