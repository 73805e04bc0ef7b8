"""The frame around every page: page config, session state, navigation, language, permalink, share control.

The router (streamlit_app.py) runs :func:`navigation` and then the chosen page; every page starts with
:func:`page_start`. Streamlit may also run a page file on its own, without the router: while no run in the
process has called ``st.navigation``, its legacy support for a ``pages/`` folder runs the file the URL names
(a first request straight to /steps on a fresh server; every AppTest of a page file). The router leaves a mark
in the session for the page it runs; a page that finds none draws the frame itself, and on a session's first
run reruns at once so that the page runs through the router (see :func:`page_start`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from urllib.parse import unquote

import streamlit as st

from attn_ui.app import address, i18n, origins, registry, state
from attn_ui.app.i18n import _
from attn_ui.infra import st_internals
from attn_ui.lessons import lesson_ui
from attn_ui.shell import save_chart
from attn_ui.views import model_views, share_ui
from attn_ui.widgets import charts, grid_editor, heatmap, text

log = logging.getLogger(__name__)
CRASHED = "page_crashed"  # the key of the message a page's unforeseen error leaves (tests look for it)


def run(pg: st.Page) -> None:
    """Run the page, then the sidebar's *Save a chart* for the charts it drew (attn_ui.shell.save_chart).

    An error no page foresaw (a bug) is logged with its traceback, for the operator, and the page shows a message
    instead of Streamlit's exception box, whose traceback would show the server's file paths: the learner's numbers
    stay as they were. Every error a learner can cause has its own message on its page; this is the last line."""
    try:
        pg.run()
        save_chart.menu(share_ui.page_name(pg))  # after the page: the charts it drew
    except Exception:  # noqa: BLE001 - st.stop, st.rerun and st.switch_page are BaseExceptions: they pass
        log.exception("the page %r stopped on an error", pg.url_path)
        st.container(key=CRASHED).error(_(
            "Something went wrong on this page. It was logged for the app's developers; your numbers are kept. Try "
            "another page, or Undo the last change."), icon=":material/error:")


def navigation() -> st.Page:
    """Set up the session and the sidebar; return the page to run."""
    choose_language()  # first: every text of this run is in it
    i18n.pin_language()  # read once for the rest of the run: nothing after the callbacks changes it
    tell_phone()  # before any page or widget asks (state.on_phone)
    charts.new_run(narrow=state.on_phone())  # the charts this run draws, offered by save_chart.menu after the page
    st.set_page_config(page_title=_("Self-Attention Explorer"), page_icon=":material/center_focus_strong:",
                       layout="wide",
                       initial_sidebar_state=heatmap.SIDEBAR_PX)  # its width in px, shown
    state.init()
    lesson_ui.init()
    committed = grid_editor.commit_pending()  # an edit sent with a page switch still counts
    # every page listed (expanded): past 12 pages Streamlit would hide the last behind "View more"
    pg = st.navigation(pages(), expanded=True)
    if (asked := unknown_address(pg)) is not None:  # Streamlit found no page there: the default page runs instead
        st.session_state[state.NOT_FOUND] = asked  # said by the page that opens (page_start), whichever that is
    if pg.url_path in root_aliases():  # /overview (the default page's name), /home: the root's address
        to_default()
    follow_click(pg.url_path or registry.DEFAULT.name, committed)  # may switch page
    _RUN.panel = st.sidebar.container()  # under the pages' list: the page's edit panel, if it has one (panel_slot)
    _RUN.under_panel = None  # a phone's edit panel keeps the place under it (keep_under_panel)
    st.session_state[state.FRAMED] = True  # read by page_start: the frame is drawn for this run
    address.restore(pg)  # once per session: a link, or this learner's address after a reload; may switch page
    address.keep()  # the address holds the current configuration: a reload brings it back
    lesson_ui.apply_query_param(pg)  # a ?lesson= link: once per session; opens Learn on that lesson
    language_picker()
    undo_button()
    origin_note()
    share_ui.sidebar(pg)
    page_language()
    st.html(f"<style>{_WIDE_CHARTS} {_PHONE_ROOM} {_LINK_LABELS} {_KOREAN_LINES} {_HIDDEN} {_FOCUS_INK}"
            "</style>")  # style only
    return pg


#: how soon after the run of a page clicked a run of the page left can be the browser's late commit of a cell (seen
#: 0.05–0.20 s after it on an idle machine, more under load; only a grid the last run did not draw counts)
LATE_EDIT_S = 5.0


def follow_click(here: str, committed: grid_editor.Committed) -> None:
    """Keep a grid's edit and the page the learner clicked when the two cross.

    A cell still open when the learner clicks another page (a tap: mouse down and up at once) was committed by the
    browser after the click, in a run of the page being left, with the address the browser still had. That run
    would take the learner back (the click swallowed), to a grid that no longer shows the edit the browser had just
    sent: the charts would use the new value, the grid the old, and the grid's next edit would put the old value
    back without a word. The browser now lets the edit go first (:data:`EDIT_BEFORE_PAGE`); this mends a crossing
    that still reaches the server (a tab whose script has not run yet, a run cut short under load).

    So a run whose grid edits are news on another page than the last run's draws every grid afresh from the
    configuration; and when those edits came from a grid the last run did not draw (``committed.stray``), back on
    the page before it within :data:`LATE_EDIT_S`, the run goes on to the page clicked. ``here``: this run's page
    (its name)."""
    now, last = time.monotonic(), st.session_state.get(state.LAST_RUN)  # (page, when it started, the page before)
    st.session_state[state.LAST_RUN] = (here, now, last[0] if last else None)
    if not committed.news or last is None or last[0] == here:
        return
    state.redraw_grids()
    clicked = registry.by_name(last[0])
    if committed.stray and last[2] == here and now - last[1] < LATE_EDIT_S and clicked is not None:
        st.session_state[state.LAST_RUN] = (last[0], now, None)  # the run the switch makes is not judged again
        st.switch_page(clicked.file)


def pages() -> list[st.Page]:
    """Every page as an ``st.Page``, titled in the learner's language, then the root's hidden addresses
    (:func:`root_aliases`): made once per session and language, not on every run (a dozen pages, ≈ 1 ms a run). The
    session's own: ``st.navigation`` marks the page it returns as the one to run, and ``run()`` clears the mark, so
    two sessions must never share one."""
    lang = i18n.language()
    kept = st.session_state.get(state.NAV_PAGES)
    if kept is None or kept[0] != lang:
        kept = (lang, [*(st.Page(p.file, title=_(p.title), icon=p.icon, default=p == registry.DEFAULT,
                                 url_path=ROOT_PATH if p == registry.DEFAULT else p.name) for p in registry.PAGES),
                       *(st.Page(to_default, title=_(registry.DEFAULT.title), url_path=alias, visibility="hidden")
                         for alias in root_aliases())])
        st.session_state[state.NAV_PAGES] = kept
    return kept[1]


#: the default page's own URL path: Streamlit serves it at the root ("/") but still reserves this path for it, so
#: that the addresses a learner may guess for it (/overview: every other page is at its name's) can be hidden pages
#: that lead to the root (:func:`to_default`) instead of Streamlit's "Page not found"
ROOT_PATH = "overview-at-root"


def unknown_address(pg: st.Page) -> str | None:
    """The address the browser asked for ("/" and its path under the app's base) when no page of the app is there,
    else None.

    ``st.navigation`` runs the default page for an address that names no page, and Streamlit's browser side shows
    its own dialog, in English ("Page not found … Running the app's main page."), and puts the root in the address
    bar: a learner reading Chinese or Korean was told nothing in their language, and the address asked for was lost.
    The run that the address opened is the only one that knows it: Streamlit asked for the page by the name the
    address gives (st_internals.asked_page) and ran the default page, whose URL path is "" (a name that is some
    page's runs that page). The default page's reserved path (:data:`ROOT_PATH`) is such an address: Streamlit finds
    no page there either."""
    if pg.url_path:  # a page the address named
        return None
    asked = st_internals.asked_page()
    return "/" + unquote(asked).strip("/") if asked and asked.strip("/") else None


#: closes Streamlit's own "Page not found" dialog (in English, on top of the page) once the page that opened has said
#: the same in the learner's language (page_start). Streamlit has no setting or API for that dialog, and hiding it
#: with CSS would leave an invisible modal that keeps the keyboard's focus and swallows the first click: its own
#: Close button is pressed instead, on the dialog whose title is Streamlit's (the only dialog of the run that found no
#: page), as soon as it is drawn (tried for 3 s). If a later Streamlit words it otherwise, the dialog stays, on top of
#: the app's message.
CLOSE_NOT_FOUND = """(() => {
  let tries = 0;
  const close = () => {
    for (const title of document.querySelectorAll("[data-testid=stDialog] [role=dialog] h2")) {
      if (title.textContent.trim() === "Page not found") {
        const button = title.closest("[role=dialog]").querySelector("button[aria-label=Close]");
        if (button) { button.click(); return; }
      }
    }
    if (++tries < 60) setTimeout(close, 50);
  };
  close();
})();"""


def root_aliases() -> tuple[str, ...]:
    """The hidden addresses of the root: the default page's name, and "home"."""
    return registry.DEFAULT.name, "home"


def to_default() -> None:
    """Go to the default page at the root address, with the address's query (a link's ``?c=``, ``?lang=``)."""
    st.switch_page(registry.DEFAULT.file, query_params=st.query_params.to_dict())


#: this script run's own: a run has its own thread, and navigation() sets it at the start of every run
_RUN = threading.local()


#: the key of the edit panel's box on a phone (its class ``st-key-phone_panel``: :data:`_PHONE_ROOM` packs it tighter)
PHONE_PANEL = "phone_panel"


def tell_phone() -> None:
    """Once a session: whether the browser is a phone's (:data:`attn_ui.app.state.PHONE`, read by state.on_phone), by
    its user agent, as Streamlit itself tells one (it closes the sidebar after a page is picked on a phone only). The
    headers are those of the request that opened the session; reading them cost ≈ 1 ms, so they are read once."""
    if state.PHONE not in st.session_state:
        try:
            agent = st.context.headers.get("User-Agent") or ""
        except Exception:  # noqa: BLE001 - no request (AppTest): no browser
            agent = ""
        st.session_state[state.PHONE] = PHONE.search(agent) is not None


#: a phone's user agent: "Mobile" (Android phones, iPhone Safari and Chrome), iPhone, or Android without "Mobile" left
#: out (a tablet: the sidebar stands beside the page there)
PHONE = re.compile(r"Mobi|iPhone|iPod")


def panel_slot() -> st.delta_generator.DeltaGenerator:
    """Where a page's edit panel goes (attn_ui.shell.edit_panel): high in the sidebar, right under the list of pages, so
    that its grid is in view beside the page (above the language, Undo and Share, which are drawn before the page); on a
    phone, in the page under its title, above what it changes (the sidebar covers the page there)."""
    if state.on_phone():
        return st.container(border=True, key=PHONE_PANEL)
    return getattr(_RUN, "panel", None) or st.sidebar


def keep_under_panel(slot: st.delta_generator.DeltaGenerator) -> None:
    """Keep ``slot``, an empty container right under a phone's edit panel, for :func:`under_panel` (this run's)."""
    _RUN.under_panel = slot


def under_panel() -> contextlib.AbstractContextManager:
    """Where a page draws its first result: on a phone, right under the edit panel (kept by :func:`keep_under_panel`),
    so that the panel's grid and the first heatmap it changes are on the screen together (at 390 × 844 the words and
    controls above a page's first heatmap pushed it 500 to 2,000 px down, below the screen); elsewhere (the panel in the
    sidebar, beside the page), where the page is::

        with frame.under_panel():
            st.header(...)
            matrix_block(...)

    Each ``with`` adds to the place in turn (a banner of a value the panel refused first, then the first result)."""
    slot = getattr(_RUN, "under_panel", None)
    return slot if slot is not None and state.on_phone() else contextlib.nullcontext()


def also_under_panel(draw: Callable[[], None]) -> None:
    """On a phone, ``draw()`` right under the edit panel too (:func:`under_panel`): a result an edit of the panel's grid
    changes, on the first screen with it, drawn again where the page draws it (under the words and options that make
    it); elsewhere nothing (the panel is in the sidebar, beside the page)."""
    if state.on_phone():
        with under_panel():
            draw()


def choose_language() -> None:
    """Once per session: the language of a ``?lang=`` link, else the browser's if the app has it, else English.

    A ``?lang=`` the app does not have (``fr``, a typo) falls back to the browser's language, the best guess left,
    and the page that opens says so once (:func:`unknown_language`); the picker in the sidebar offers the three, and
    the address then names the one shown."""
    if state.LANG not in st.session_state:
        asked = st.query_params.get(address.LANG)
        st.session_state[state.LANG] = i18n.pick(asked) or i18n.pick(st.context.locale) or i18n.DEFAULT
        if asked and not i18n.pick(asked):  # said by the page that opens (page_start), whichever that is
            st.session_state[state.LANG_UNKNOWN] = asked


def ascii_label(name: str) -> str:
    """``name`` with every character past ASCII written as an HTML character reference, which the picker's buttons
    (Markdown) show as that character: Streamlit searches every option label that is not ASCII for a leading emoji,
    with one regular expression of all emoji that it hashes on every search (≈ 40 µs a label; measured on a loaded
    machine, the picker took 0.40 ms a run with 中文 and 한국어, 0.11 ms with these labels); an ASCII label is passed
    by at once.

    >>> ascii_label("中文"), ascii_label("English")
    ('&#20013;&#25991;', 'English')
    """
    return "".join(c if c.isascii() else f"&#{ord(c)};" for c in name)


#: the language picker's labels: each language's name in its own script, shown as it is (:func:`ascii_label`)
PICKER_LABELS = {code: ascii_label(name) for code, name in i18n.LANGUAGES.items()}


def language_picker() -> None:
    """In the sidebar of every page: English · 中文 · 한국어. The choice is the session's (every page, the
    address: attn_ui.app.address), and changing it costs one rerun."""
    st.sidebar.segmented_control(
        _("Language"), list(i18n.LANGUAGES),
        format_func=PICKER_LABELS.get, width="stretch", required=True, label_visibility="collapsed",
        **state.bind(state.LANG_PICKER, st.session_state[state.LANG], state.copy_to(state.LANG, state.LANG_PICKER)))


#: on a phone, a chart or a displayed formula wider than the screen scrolls sideways in its own box instead of being
#: cut off at the edge (Multi-head's "head_h = Attention(X W_Q^(h), …)" lost its end at 390 px),
#: and the Overview's pipeline diagram keeps a readable size (shrunk to the screen, its text was 4 px high). A box
#: that scrolls fades out at the edge where more is, by as much as is hidden there, at most 48 px (the right at first,
#: both edges midway, the left at the end; a chart 2 px too wide fades 2 px, not its legend's labels): two
#: scroll-driven animations of the fade's widths on the box's own scroll position, the left over the first 48 px of
#: scrolling and the right over the last 48, which do nothing while the chart fits (an inactive scroll timeline), so
#: a chart that fits is drawn as it is
#: (the "<" of "<length>" escaped as \3c: Streamlit's HTML sanitiser drops a style whose text holds "<" and a letter)
_WIDE_CHARTS = ("@property --attn-fade-l { syntax: '\\3c length>'; inherits: false; initial-value: 0px; }"
                " @property --attn-fade-r { syntax: '\\3c length>'; inherits: false; initial-value: 0px; }"
                " @keyframes attn-fade-l { from { --attn-fade-l: 0px; } to { --attn-fade-l: 48px; } }"
                " @keyframes attn-fade-r { from { --attn-fade-r: 48px; } to { --attn-fade-r: 0px; } }"
                " @media (max-width: 640px) {"
                " [data-testid='stVegaLiteChart'], [data-testid='stGraphVizChart'], .katex-display {"
                " max-width: 100%; overflow-x: auto;"
                " mask-image: linear-gradient(to right, transparent, #000 var(--attn-fade-l),"
                " #000 calc(100% - var(--attn-fade-r)), transparent);"
                " animation: attn-fade-l linear both, attn-fade-r linear both;"
                " animation-timeline: scroll(self inline), scroll(self inline);"
                " animation-range: 0px 48px, calc(100% - 48px) 100%; }"
                " .katex-display { overflow-y: hidden; }"
                " [data-testid='stGraphVizChart'] svg { min-width: 900px; height: auto; } }")
#: the box of an element that is a table (a grid or a dataframe), one of a block's children
_TABLE_BOX = "[data-testid='stElementContainer']:has(> * > [data-testid='stDataFrame'])"

#: on a narrow screen (a phone) the page wastes less height, so that the edit panel's grid and the first result it
#: changes are on the screen together (390 × 844: Step by step's Q began at y 833 under Streamlit's 96 px top space, a
#: 44 px title, 36 px headings that took two lines, and the panel's rows 16 px apart): less space above the title,
#: smaller titles and headings, elements and the panel's rows closer, display formulas with less space around them. A
#: heading keeps 1rem under its text: Streamlit pulls the element after a heading up by 1rem (its Markdown box's
#: margin), which with less padding laid the panel's box over the title's last pixels (逐步计算). The header (the
#: sidebar's button; opaque, over the page) is as much shorter as the space above the title, or it would hide the
#: title's top
_PHONE_ROOM = ("@media (max-width: 640px) {"
               " [data-testid='stApp'] :is([data-testid='stHeader'], [data-testid='stToolbar']) {"
               " height: 2.75rem; min-height: 0; }"
               " [data-testid='stMainBlockContainer'] { padding-top: 2.75rem; }"
               " [data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] { gap: 0.5rem; }"
               " [data-testid='stMainBlockContainer'] h1 { font-size: 1.75rem; padding: 0 0 1rem; }"
               " [data-testid='stMainBlockContainer'] h2 { font-size: 1.5rem; padding: 0.25rem 0 1rem; }"
               " [data-testid='stMainBlockContainer'] h3 { font-size: 1.25rem; padding: 0.25rem 0 1rem; }"
               " [data-testid='stMainBlockContainer'] .katex-display { margin: 0.5em 0; }"
               f" .st-key-{PHONE_PANEL} {{ padding: 0.5rem; }}"
               f" .st-key-{PHONE_PANEL} [data-testid='stVerticalBlock'] {{ gap: 0.5rem; }}"
               f" .st-key-{PHONE_PANEL} p {{ line-height: 1.3; }}"  # its title, caption and link's label
               # a table's toolbar, always shown on a touch screen, stands 44 px above the table: room for it, or it
               # lay over what is above (Masking's slider handle, the heading "Tokens"); the panel's grid has the
               # caption's line beside it
               # (the room above the table's box: a table given a height has a box of that height, and room inside it
               # laid the table's last rows over what follows, Score functions' comparison over its note: a reviewer)
               f" [data-testid='stMainBlockContainer'] {_TABLE_BOX} {{ margin-top: 2.25rem; }}"
               # Inputs & weights' preset box (its widget's key, pages/inputs.py) takes its row, the Reset button
               # under it: beside the button it cut the preset's name to "3 inputs, d_model 4, scaled by"
               " .st-key-inputs_preset { min-width: 100%; }"
               f" .st-key-{PHONE_PANEL} {_TABLE_BOX} {{ margin-top: 0; }} }}")
#: a page link's label wraps onto a second line instead of being cut at the box's edge (a long label on a phone)
_LINK_LABELS = "[data-testid='stPageLink-NavLink'] :is(span, p) { white-space: normal; }"
#: Korean is written with spaces between words: break its lines there, not inside a word (the browser's default
#: for Hangul); a word longer than the line still breaks. page_language sets the page's lang.
_KOREAN_LINES = "html:lang(ko) [data-testid='stApp'] * { word-break: keep-all; overflow-wrap: break-word; }"


def focus_ink_css() -> str:
    """A chart's focus (its lit row's and column's outlines, its focus lines: the marks heatmap.focus_layers and
    model_views name ``focus_*``) in the ink of the theme shown now, where Vega draws SVG. The ink is a Vega param set
    on each run (charts.INK, from the theme the browser reported), but Streamlit follows a change of the system's
    theme without a rerun: until the next one a chart kept the old theme's ink (#ff8a65 on white, 2.3:1). The app's
    theme is the system's (.streamlit/config.toml), so ``prefers-color-scheme`` says which it is. A canvas (a large
    heatmap's) keeps the run's ink until the next run.

    >>> "prefers-color-scheme: dark" in focus_ink_css() and charts.INKS["dark"] in focus_ink_css()
    True
    """
    marks = "[data-testid='stVegaLiteChart'] svg"
    rule = (f"{marks} :is(.focus_row_marks, .focus_col_marks) path {{ stroke: {{ink}}; }}"
            f" {marks} :is(.focus_cell_marks, .focus_hint_marks) text {{ fill: {{ink}}; }}")
    return (rule.replace("{ink}", charts.INKS["light"])
            + f" @media (prefers-color-scheme: dark) {{ {rule.replace('{ink}', charts.INKS['dark'])} }}")


_FOCUS_INK = focus_ink_css()
#: page_language's own element (and no_page_there's) takes no room in the sidebar
_HIDDEN = ("[data-testid='stElementContainer']:has(> [data-testid='stHtml'] script:is(.page-language, .page-not-found))"
           " { display: none; }")


#: Streamlit's browser side pushes an entry onto the browser's history each time a run changes the address's query
#: (every edit's ?c=, and a page's parameters after its path), so Back after three edits stayed three times on the
#: same page (the configuration is the session's: an old ?c= is not read again). Made once per tab: an entry for the
#: page already shown (same path) replaces the current one, so Back goes to the page before.
ONE_ENTRY_A_PAGE = """if (!history.attnOneEntryAPage) {
  const push = history.pushState.bind(history);
  history.pushState = (state, unused, url) =>
    url != null && new URL(url, location.href).pathname === location.pathname
      ? history.replaceState(state, unused, url) : push(state, unused, url);
  history.attnOneEntryAPage = true;
}"""


#: A tap on a page's link while a grid's cell is still open (mouse down and up at once), or soon after Enter in a
#: cell, reached the server before the cell's edit had been taken in, and the edit was lost: Streamlit's grid sends
#: an edit 150 ms after Enter (later on a busy tab, where a click is handled before a timer), or on the tap; and on a
#: page switch the server lets go of every widget value the new page did not send, also those of a run of the page
#: left that the switch cut short before it read them (streamlit/runtime/scriptrunner/script_runner.py, "Clear
#: widget state on page change"). The app stayed on the page, or went on with the grid's old value. Made once per
#: tab: such a tap waits until the edit is sent (at most SEND_WAIT_MS after it) and its run has finished (the
#: server's script_finished: field 6 of a ForwardMsg, at most RUN_WAIT_MS), then is followed; a tap with no edit
#: since the last run finished is followed at once. follow_click still mends a crossing seen on the server.
EDIT_BEFORE_PAGE = """if (!window.attnEditBeforePage) {
  window.attnEditBeforePage = true;
  const EDITOR = "#portal .gdg-input", LINK = "[data-testid=stSidebarNavLink], [data-testid=stPageLink] a";
  const GRID = "#portal, [data-testid=stDataFrame]", SEND_WAIT_MS = 600, RUN_WAIT_MS = 5000;
  let editAt = -Infinity, sentAt = -Infinity, finishedAt = -Infinity, passing = false;
  const finished = (data) => {  // a ForwardMsg that says a run finished (its script_finished: 0, or 3 a fragment's)
    if (!(data instanceof ArrayBuffer)) return false;
    const b = new Uint8Array(data);
    let i = 0;
    const varint = () => {
      let v = 0, shift = 0, c;
      do { c = b[i++]; v += (c & 127) * 2 ** shift; shift += 7; } while (c & 128 && i < b.length);
      return v;
    };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { const v = varint(); if (field === 6) return v === 0 || v === 3; }
      else if (wire === 2) { const n = varint(); i += n; }  // (i += varint() would add to i as it was)
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const send = WebSocket.prototype.send;  // watched, not changed: when the tab last sent, and a run last finished
  WebSocket.prototype.send = function (data) {
    if (!this.attnWatched) {
      this.attnWatched = true;
      this.addEventListener("message", (e) => { if (finished(e.data)) finishedAt = performance.now(); });
    }
    sentAt = performance.now();
    return send.call(this, data);
  };
  const edits = (e) => e.key.length === 1 && !e.ctrlKey && !e.metaKey || (e.ctrlKey || e.metaKey) &&
    "vVxX".includes(e.key) || ["Enter", "Tab", "Delete", "Backspace"].includes(e.key);
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof Element && e.target.closest(GRID) && edits(e)) editAt = performance.now();
  }, true);
  document.addEventListener("pointerdown", (e) => {  // before the grid's own handler closes its editor
    if (e.target instanceof Element && e.target.closest(LINK) && document.querySelector(EDITOR)) {
      editAt = performance.now();
    }
  }, true);
  // an edit since the last run finished: not sent yet, or its run not finished (a click while another run goes on,
  // with no edit since the last one finished, is followed at once, as Streamlit does)
  const waiting = () => editAt > finishedAt && (sentAt < editAt ? performance.now() - editAt < SEND_WAIT_MS
    : performance.now() - sentAt < RUN_WAIT_MS);
  document.addEventListener("click", (e) => {
    const link = e.target instanceof Element ? e.target.closest(LINK) : null;
    if (passing || !link || !waiting()) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const follow = () => {
      if (waiting()) { setTimeout(follow, 25); return; }
      passing = true;
      try { link.click(); } finally { passing = false; }
    };
    setTimeout(follow, 25);
  }, true);
}"""


def page_language() -> None:
    """Tell the browser which language the page is in (``<html lang>``, which Streamlit leaves at "en"): a screen
    reader then reads it with the right voice, the browser draws Chinese characters in their Chinese forms (not
    the Japanese ones a CJK font may prefer), and Korean lines break between words. The same script keeps one
    history entry a page (:data:`ONE_ENTRY_A_PAGE`) and lets a cell's edit go before a page's link
    (:data:`EDIT_BEFORE_PAGE`). It is this app's own, with a tag from i18n.TAGS, never text from a learner."""
    script = "\n".join([f"document.documentElement.lang = {json.dumps(i18n.tag(i18n.language()))};",
                        ONE_ENTRY_A_PAGE, EDIT_BEFORE_PAGE])
    st.sidebar.html(f"<script class='page-language'>{script}</script>", unsafe_allow_javascript=True)


def origin_note() -> None:
    """In the sidebar while the configuration is a pretrained model's layer: which one, and the way back to it."""
    cfg = state.config()
    origin = origins.origin_of(cfg)
    if note := model_views.origin_text(origin):
        page = origins.page_of(origin.role)
        if model_views.edited_if_loaded(cfg):
            note = i18n.sentences(note, _("**Edited** since: {page} runs your edits through the model.").format(
                page=_(page.title)) if origin.runs_back else _("**Edited** since (a self-attention head of a "
                                                                  "translator: your edits are not run back)."))
        st.sidebar.caption(note)
        st.sidebar.page_link(page.file, label=_("Back to {page}").format(page=_(page.title)), icon=page.icon)


def undo_button() -> None:
    """In the sidebar of every page: take back the last change to the configuration, naming it."""
    what = state.last_change()
    st.sidebar.button(_("Undo: {what}").format(what=what) if what else _("Undo"), key="frame_undo",
                      icon=":material/undo:", on_click=state.undo, disabled=what is None, width="stretch",
                      help=_("Takes back the last change to the configuration (a grid edit, a dimension, a "
                             "preset, a randomise, …); press again to go further back."))


def page_start(page: registry.Page) -> None:
    """The first line of every page: the frame unless the router has just drawn it, then the page's title."""
    if not st.session_state.pop(state.FRAMED, False):  # run without the router (see the module doc)
        first_run = state.CONFIG not in st.session_state  # the session's first run: navigation() makes the state
        navigation()
        st.session_state.pop(state.FRAMED, None)
        if first_run:
            # A cold server's first request straight to a page: rerun at once, now through the router, before
            # the page makes any widget. Run without the router, the page's widgets get other ids than in every
            # later run: an id includes the script hash active when the widget is made, which st.navigation (in
            # navigation() above) sets to the main script's, while the router's pg.run() makes them under the
            # page's own hash. A grid drawn by this run lost its first edit: the next run drew it afresh under
            # the new id, without the edit, and the grid's next edit put its old value back. st.navigation has
            # now run in this process, so Streamlit runs the router from here on; st.rerun keeps the page and the
            # state. Only on a session's first run: AppTest runs a page without the router every time (it resets
            # Streamlit's pages/ flag before each run), after a first run of the router; there every run makes
            # the page's widgets alike, and a rerun would make this run's unlike the next one's.
            st.rerun()
    st.set_page_config(page_title=_("{page} · Self-Attention Explorer").format(page=_(page.title)))  # the tab
    st.title(_(page.page_heading))
    no_page_there(page)
    unknown_language()
    show_notices()


#: the longest part of an unknown address quoted to the learner (the rest is cut at "…")
QUOTED_ADDRESS = 80


def no_page_there(page: registry.Page) -> None:
    """Under the title of the page that opened for an address that names no page (:func:`unknown_address`): that
    there is no page there, and which page opened, in the learner's language; Streamlit's English dialog closed."""
    if (asked := st.session_state.pop(state.NOT_FOUND, None)) is None:
        return
    if len(asked) > QUOTED_ADDRESS:
        asked = asked[:QUOTED_ADDRESS - 1] + "…"
    st.warning(_("This app has no page at the address “{address}”: {page} opened instead.").format(
        address=text.md_escape(asked), page=_(page.title)), icon=":material/link_off:")
    st.sidebar.html(f"<script class='page-not-found'>{CLOSE_NOT_FOUND}</script>", unsafe_allow_javascript=True)


#: the longest ``?lang=`` quoted to the learner (the rest is cut at "…")
QUOTED_LANGUAGE = 20


def unknown_language() -> None:
    """Under the title of the page that opened for a ``?lang=`` the app does not have (:func:`choose_language`), once:
    the languages it has, and the one it opened in, in that language."""
    if not (asked := st.session_state.pop(state.LANG_UNKNOWN, None)):
        return
    if len(asked) > QUOTED_LANGUAGE:
        asked = asked[:QUOTED_LANGUAGE - 1] + "…"
    st.info(_("This app is in English, 中文 and 한국어, not “{asked}”: it opened in {language}. The buttons in the "
              "sidebar change the language.").format(asked=text.md_escape(asked),
                                                     language=i18n.LANGUAGES[st.session_state[state.LANG]]),
            icon=":material/translate:")


def show_notices() -> None:
    """Under the page's title: the one-off messages kept for it (state.notify): a change refused in a callback, a
    link that could not be opened. Every page shows them here, so a message kept before a page switch (a link that
    opens a lesson or names a page) is shown on the page that opens."""
    for notice in state.pop_notices():
        (st.error if notice.error else st.warning)(text.md_escape(notice.text), icon=notice.icon)
