"""Sharing glue: the ``?c=`` permalink read at app start, the sidebar share control, downloads and import.

The encoding, decoding and every check live in :mod:`attn_core.share` and :mod:`attn_core.codegen`;
this module only moves their results between Streamlit and the session state. Downloads pass a
callable to ``st.download_button``, so a file is built when it is clicked, not on every rerun.
"""

from __future__ import annotations

from functools import partial
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from attn_core import LIMITS, MATRIX_NAMES, AttentionInputError, Config, MultiHeadTrace, codegen, share

from . import registry, state, text

PARAM = "c"  # the one query parameter of a permalink: ?c=<attn_core.share.encode_link value>
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
        value = share.encode_link(cfg, page, max_chars=LIMITS.permalink_bytes)
    except AttentionInputError:
        st.warning(
            f"This configuration is too large for a link (over {LIMITS.permalink_bytes:,} characters). "
            "Share the JSON file instead: the recipient loads it on Share & export.",
            icon=":material/link_off:",
        )
        if offer_json:
            json_download(cfg, key=f"{key}_json", page=page)
        return
    base = app_url()
    url = f"{base}?{PARAM}={value}"
    st.code(url, language=None, wrap_lines=wrap)
    where = "" if base else " Add it to the end of the app's address (it starts with ?)."
    st.caption(f"{len(url):,} characters. Copy it with the icon at the block's top right.{where} "
               "Opening it starts a fresh session with exactly these numbers.")


def sidebar(pg: st.Page) -> None:
    """The share control on every page: a link to the current configuration on the current page."""
    with st.sidebar.expander("Share this", icon=":material/share:"):
        st.caption("A link that opens these numbers on this page.")
        pending_edits_warning()
        if st.button("Make a link to this", key="share_sidebar_link", icon=":material/link:"):
            link_block(state.config(), page_name(pg), key="share_sidebar", wrap=False)  # one line: narrow sidebar
        st.page_link(registry.SHARE.file, label="JSON, CSV and NumPy code", icon=":material/download:")


def pending_edits_warning() -> None:
    """Say which refused edits are waiting in a grid, and that what is shared holds the last valid values."""
    if errs := state.errors():
        st.warning(
            "Not shared: " + " ".join(map(text.md_escape, errs.values()))
            + " Links and files made now hold the last valid values; fix the cell first to share your edit.",
            icon=":material/warning:",
        )


# ---- Share & export ---------------------------------------------------------------------------------


def choice(container, label: str, options: list[str], *, key: str, default: str, **kwargs) -> str:
    """A selectbox whose choice is kept in state (widget values do not survive a page switch)."""
    return container.selectbox(label, options, **state.bind(key, state.kept(key, default, options)), **kwargs)


def json_download(cfg: Config, *, key: str, page: str | None = None) -> None:
    st.download_button(
        "Download the configuration (JSON)", partial(share.to_json, cfg, page), file_name="attention-config.json",
        mime="application/json", key=key, icon=":material/download:", on_click="ignore",
    )


def import_file() -> None:
    """on_change of the JSON uploader: load the file, or say why not and keep the configuration."""
    uploaded = st.session_state.get("share_import")
    if uploaded is None:  # the file was removed from the uploader
        return
    try:
        cfg, _ = share.from_json(uploaded.getvalue())  # checks the size cap first
    except AttentionInputError as err:
        st.session_state[state.IMPORT_RESULT] = (False, f"{uploaded.name} was not loaded: {err}")
        return
    state.load_shared(cfg)
    summary = (f"{cfg.n_seq} tokens{f', {cfg.n_q} queries of Y' if cfg.cross else ''}, d_model {cfg.d_model}, "
               f"{cfg.n_heads} head(s){'' if cfg.score == 'dot' else f', {cfg.score} scores'}")
    st.session_state[state.IMPORT_RESULT] = (True, f"Loaded {uploaded.name}: {summary}.")


def import_result() -> None:
    """Show the outcome of the last import once."""
    result = st.session_state.pop(state.IMPORT_RESULT, None)
    if result:
        ok, message = result
        (st.success if ok else st.error)(text.md_escape(message), icon=":material/check:" if ok else ":material/error:")


#: a head's intermediates of the general and additive score functions, as the pages write them
STAGE_TITLES = {"q_a": "Q W_a", "q_1": "Q W_1", "k_2": "K W_2"}


def stage_title(name: str) -> str:
    """ "head0_weights" -> "head 0 · weights", "head1_q_a" -> "head 1 · Q W_a", "w_q" -> "W_Q", "y" -> "Y"."""
    if name.startswith("head"):
        head, stage = name.removeprefix("head").split("_", 1)
        return f"head {head} · {STAGE_TITLES.get(stage, stage)}"
    return MATRIX_NAMES.get(name, name)


def csv_downloads(cfg: Config, trace: MultiHeadTrace) -> None:
    """One matrix or intermediate as CSV, or all of them in one zip."""
    tables = share.named_matrices(cfg, trace)
    left, middle, right = st.columns([2, 1, 1], vertical_alignment="bottom")
    name = choice(left, "Matrix", list(tables), key="share_csv_name", default="x", format_func=stage_title)
    matrix = tables[name]
    middle.download_button(
        f"{stage_title(name)} (CSV)", partial(share.to_csv, name, matrix, cfg.tokens, cfg.query_tokens),
        file_name=f"{name}.csv",
        mime="text/csv", key="share_csv", icon=":material/table:", on_click="ignore",
    )
    right.download_button(
        f"All {len(tables)} tables (zip)", partial(share.csv_zip, cfg, trace), file_name="attention-tables.zip",
        mime="application/zip", key="share_zip", icon=":material/folder_zip:", on_click="ignore",
    )
    st.caption(f"{stage_title(name)}: {matrix.shape[0]} × {matrix.shape[1]}. Values are exact (Python's repr of "
               "each float64); a masked score is -inf. The zip also holds config.json.")


def code_block(cfg: Config) -> None:
    """The NumPy script: shown when it is small enough to read, always downloadable."""
    cells = sum(cfg.matrix(name).size for name in cfg.matrix_names())
    if cells <= SHOW_CODE_CELLS:
        # plain text, wrapped, no fixed height: Streamlit's syntax colours fail WCAG contrast (and no theme option
        # sets them), and a box of fixed height scrolls where a keyboard cannot reach it (axe, tests/e2e/test_a11y.py)
        st.code(codegen.numpy_script(cfg), language=None, wrap_lines=True)
    else:
        st.info(f"The script holds {cells:,} numbers: too long to show here. Download it.", icon=":material/info:")
    st.download_button(
        "Download attention.py", partial(codegen.numpy_script, cfg), file_name="attention.py", mime="text/x-python",
        key="share_code", icon=":material/code:", on_click="ignore",
    )
