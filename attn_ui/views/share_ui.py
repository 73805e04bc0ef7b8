"""Sharing glue: the ``?c=`` permalink read at app start, the sidebar share control, downloads and import.

The encoding, decoding and every check live in :mod:`attn_core.share` and :mod:`attn_core.codegen`;
this module only moves their results between Streamlit and the session state. Downloads pass a
callable to ``st.download_button``, so a file is built when it is clicked, not on every rerun.

The files (JSON, CSV, the NumPy script) are code and data: their content stays in English in every language;
what this module says around them is translated.
"""

from __future__ import annotations

import json
from functools import partial
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from attn_core import (
    LIMITS,
    MATRIX_NAMES,
    SCORE_WORDS,
    AttentionInputError,
    Config,
    MultiHeadTrace,
    codegen,
    share,
)
from attn_ui.app import address, i18n, origins, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import st_internals
from attn_ui.widgets import grid_editor, text

PARAM = "c"  # the permalink's numbers: ?c=<attn_core.share.encode_link value>; its language: ?lang= (address.LANG)
SHOW_CODE_CELLS = 20_000  # above this many cells the script is offered for download only


def page_name(pg: st.Page) -> str:
    """The name a link uses for the page ``st.navigation`` returned ("steps", ...; the default page has none)."""
    return pg.url_path or registry.DEFAULT.name


# ---- making a permalink -------------------------------------------------------------------------


def app_url() -> str:
    """The app's root address ("https://host/"), or "" where Streamlit does not know it (tests)."""
    url = st.context.url
    if not url:
        return ""
    parts = urlsplit(url)
    segments = parts.path.rstrip("/").split("/")
    if registry.by_name(segments[-1]):  # st.context.url ends with the current page's path
        segments = segments[:-1]
    return urlunsplit((parts.scheme, parts.netloc, "/".join(segments) + "/", "", ""))


def link_block(cfg: Config, page: str, key: str, *, wrap: bool = True, offer_json: bool = True) -> None:
    """The permalink of ``cfg`` opening on ``page`` in a copyable code block, or why there is none
    (with a JSON download in its place when ``offer_json``)."""
    try:
        value = share.encode_link(origins.exported(cfg), page, max_chars=LIMITS.permalink_bytes)
    except AttentionInputError:
        st.warning(
            _("This configuration is too large for a link (over {most:,} characters). "
              "Share the JSON file instead: the recipient loads it on Share & export.").format(
                most=LIMITS.permalink_bytes),
            icon=":material/link_off:",
        )
        if offer_json:
            json_download(cfg, key=f"{key}_json", page=page)
        return
    base = app_url()
    url = f"{base}?{PARAM}={value}&{address.LANG}={i18n.language()}"  # opens in the language it was made in
    st.code(url, language=None, wrap_lines=wrap)
    if base:
        st.caption(_("{n:,} characters. Copy it with the icon at the block's top right. "
                     "Opening it starts a fresh session with exactly these numbers.").format(n=len(url)))
    else:
        st.caption(_("{n:,} characters. Copy it with the icon at the block's top right. Add it to the end of the "
                     "app's address (it starts with ?). Opening it starts a fresh session with exactly these "
                     "numbers.").format(n=len(url)))


SIDEBAR_OPEN = "share_sidebar_open"  # the sidebar's Share this: open (its contents are made only then)


def sidebar(pg: st.Page) -> None:
    """The share control on every page: a link to the current configuration on the current page. Its contents are
    made only while it is open (opening it reruns the page): closed, as it mostly is, it costs every run of every
    page one element instead of four or five."""
    with st.sidebar.expander(_("Share this"), icon=":material/share:", key=SIDEBAR_OPEN, on_change="rerun") as box:
        if not box.open:
            return
        st.caption(_("A link that opens these numbers on this page."))
        pending_edits_warning()
        if st.button(_("Make a link to this"), key="share_sidebar_link", icon=":material/link:"):
            link_block(state.config(), page_name(pg), key="share_sidebar", wrap=False)  # one line: narrow sidebar
        st.page_link(registry.SHARE.file, label=_("JSON, CSV and NumPy code"), icon=":material/download:")


def pending_edits_warning() -> None:
    """Say which refused edits are waiting in a grid, and that what is shared holds the last valid values."""
    if errs := grid_editor.errors():
        st.warning(
            _("Not shared: {errors} Links and files made now hold the last valid values; fix the cell first to share "
              "your edit.").format(errors=i18n.sentences(*map(text.md_escape, errs.values()))),
            icon=":material/warning:",
        )


# ---- Share & export ---------------------------------------------------------------------------------


def choice(container, label: str, options: list[str], *, key: str, default: str, **kwargs) -> str:
    """A selectbox whose choice is kept in state (widget values do not survive a page switch)."""
    return container.selectbox(label, options, **state.bind(key, state.kept(key, default, options)), **kwargs)


def json_download(cfg: Config, *, key: str, page: str | None = None) -> None:
    st.download_button(
        _("Download the configuration (JSON)"), partial(share.to_json, origins.exported(cfg), page),
        file_name="attention-config.json",
        mime="application/json", key=key, icon=":material/download:", on_click="ignore",
    )


#: the key of the box around Share & export's uploader (:func:`uploader_words`)
UPLOADER_BOX = "share_uploader"


def uploader_words() -> str:
    """A style that shows the uploader's own texts in the learner's language, or "" in English: Streamlit writes its
    button ("Upload") and the line under it ("40MB per file • JSON") in English, with no setting to change them
    (streamlit/streamlit#13500). Each is kept in place and made 0 px high, and the learner's words are written after
    it at Streamlit's size (14 px), in the box :data:`UPLOADER_BOX` only. A screen reader reads both (the button:
    "Upload上传"): hidden (visibility), Streamlit's word took the learner's with it, and the button had no name. The
    size is the server's (the setting ``server.maxUploadSize``, which Streamlit's line shows).

    >>> uploader_words()  # English: Streamlit's own words
    ''
    """
    if i18n.language() == i18n.DEFAULT:
        return ""
    box, zone = f".st-key-{UPLOADER_BOX}", "[data-testid='stFileUploaderDropzone']"
    said = {f"{zone} button [data-testid='stMarkdownContainer'] p": _("Upload"),
            "[data-testid='stFileUploaderDropzoneInstructions'] span": _("{mb} MB per file · JSON").format(
                mb=st.get_option("server.maxUploadSize"))}
    return " ".join(f"{box} {where} {{ font-size: 0; }} {box} {where}::after {{"
                    f" content: {json.dumps(words, ensure_ascii=False)}; font-size: 0.875rem; }}"
                    for where, words in said.items())


def uploader_key() -> str:
    """The key of Share & export's JSON uploader: a new one after each file read, so the uploader is empty again."""
    return f"share_import_{st.session_state[state.IMPORTS]}"


def file_error(err: AttentionInputError) -> str:
    """Why a file was not loaded, in the learner's language: a matrix's bad cells as its grid names them (every one,
    up to grid_editor.NAMED_CELLS, the others counted: "X, row 1, column 2 is a string, not a number."), else the
    core's message."""
    name = next((key for key, shown in MATRIX_NAMES.items() if shown == err.matrix), None)
    return grid_editor.describe_error(name, err, ()) if name and err.cell else i18n.error_text(err)


def import_file() -> None:
    """on_change of the JSON uploader: load the file, or say why not and keep the configuration. Either way the
    file is dropped once read (:func:`forget_upload`): the configuration holds what it said."""
    uploaded = st.session_state.get(uploader_key())
    if uploaded is None:  # the file was removed from the uploader
        return
    data = uploaded.getvalue()
    forget_upload(uploaded)
    try:
        cfg, _page = share.from_json(data)  # checks the size cap first
    except AttentionInputError as err:
        st.session_state[state.IMPORT_RESULT] = (False, _("{file} was not loaded: {error}").format(
            file=text.isolate(uploaded.name), error=file_error(err)))
        return
    cfg, why = origins.admitted(cfg)  # its origin (a model's layer) checked whole before any page reads it
    if refused := state.load_shared(cfg):  # numbers attention cannot be computed on (1e308: V overflows)
        st.session_state[state.IMPORT_RESULT] = (False, _("{file} was not loaded: {error}").format(
            file=text.isolate(uploaded.name), error=refused))
        return
    values = {"file": text.isolate(uploaded.name), "d_model": cfg.d_model, "score": _(SCORE_WORDS[cfg.score]),
              "tokens": ngettext("{n} token", "{n} tokens", cfg.n_seq).format(n=cfg.n_seq),
              "queries": ngettext("{n} query of Y", "{n} queries of Y", cfg.n_q).format(n=cfg.n_q),
              "heads": ngettext("{n} head", "{n} heads", cfg.n_heads).format(n=cfg.n_heads)}
    if cfg.cross and cfg.score != "dot":
        loaded = _("Loaded {file}: {tokens}, {queries}, d_model {d_model}, {heads}, {score} scores.")
    elif cfg.cross:
        loaded = _("Loaded {file}: {tokens}, {queries}, d_model {d_model}, {heads}.")
    elif cfg.score != "dot":
        loaded = _("Loaded {file}: {tokens}, d_model {d_model}, {heads}, {score} scores.")
    else:
        loaded = _("Loaded {file}: {tokens}, d_model {d_model}, {heads}.")
    st.session_state[state.IMPORT_RESULT] = (True, i18n.sentences(loaded.format(**values), why or ""))


def forget_upload(uploaded: object) -> None:
    """Free an uploaded file once read: Streamlit keeps its bytes (up to 40 MB) in the server's memory until the
    learner removes it from the uploader or the session ends. The uploader gets a new key, so it shows no file."""
    st.session_state[state.IMPORTS] += 1
    st_internals.free_upload(getattr(uploaded, "file_id", None))


def import_result() -> None:
    """Show the outcome of the last import once."""
    result = st.session_state.pop(state.IMPORT_RESULT, None)
    if result:
        ok, message = result
        (st.success if ok else st.error)(text.md_escape(message), icon=":material/check:" if ok else ":material/error:")


#: a head's intermediates of the general and additive score functions, as the pages write them
STAGE_TITLES = {"q_a": "Q W_a", "q_1": "Q W_1", "k_2": "K W_2"}
#: the names of the tables that are words (shown in the learner's language; q, k, v stay as they are)
STAGE_WORDS = {"scores": N_("scores"), "scaled": N_("scaled"), "masked": N_("masked"), "weights": N_("weights"),
               "output": N_("output"), "mask": N_("mask"), "concat": N_("concat")}
#: the score functions as the import's summary names them


def stage_title(name: str) -> str:
    """ "head0_weights" -> "head 0 · weights", "head1_q_a" -> "head 1 · Q W_a", "w_q" -> "W_Q", "y" -> "Y"."""
    if name.startswith("head"):
        head, stage = name.removeprefix("head").split("_", 1)
        return _("head {head} · {table}").format(head=head, table=table_word(STAGE_TITLES.get(stage, stage)))
    return table_word(MATRIX_NAMES.get(name, name))


def table_word(name: str) -> str:
    """A table's name as shown: a word (scores, weights, ...) in the learner's language, a matrix name as it is."""
    return _(STAGE_WORDS[name]) if name in STAGE_WORDS else name


def csv_downloads(cfg: Config, trace: MultiHeadTrace) -> None:
    """One matrix or intermediate as CSV, or all of them in one zip."""
    tables = share.named_matrices(cfg, trace)
    left, middle, right = st.columns([2, 1, 1], vertical_alignment="bottom")
    titles = {name: stage_title(name) for name in tables}  # made now: format_func runs outside the run too
    name = choice(left, _("Matrix"), list(tables), key="share_csv_name", default="x", format_func=titles.__getitem__)
    matrix = tables[name]
    middle.download_button(
        _("{table} (CSV)").format(table=stage_title(name)),
        partial(share.to_csv, name, matrix, cfg.tokens, cfg.query_tokens), file_name=f"{name}.csv",
        mime="text/csv", key="share_csv", icon=":material/table:", on_click="ignore",
    )
    right.download_button(
        _("All {n} tables (zip)").format(n=len(tables)), partial(share.csv_zip, cfg, trace),
        file_name="attention-tables.zip", mime="application/zip", key="share_zip", icon=":material/folder_zip:",
        on_click="ignore",
    )
    st.caption(_("{table}: {rows} × {cols}. Values are exact (Python's repr of each float64); a masked score is -inf. "
                 "The zip also holds config.json.").format(table=stage_title(name), rows=matrix.shape[0],
                                                           cols=matrix.shape[1]))


def code_block(cfg: Config) -> None:
    """The NumPy script: shown when it is small enough to read, always downloadable."""
    cells = sum(cfg.matrix(name).size for name in cfg.matrix_names())
    if cells <= SHOW_CODE_CELLS:
        # plain text, wrapped, no fixed height: Streamlit's syntax colours fail WCAG contrast (and no theme option
        # sets them), and a box of fixed height scrolls where a keyboard cannot reach it (axe, tests/e2e/test_a11y.py)
        st.code(codegen.numpy_script(cfg), language=None, wrap_lines=True)
    else:
        st.info(_("The script holds {n:,} numbers: too long to show here. Download it.").format(n=cells),
                icon=":material/info:")
    st.download_button(
        _("Download attention.py"), partial(codegen.numpy_script, cfg), file_name="attention.py", mime="text/x-python",
        key="share_code", icon=":material/code:", on_click="ignore",
    )
