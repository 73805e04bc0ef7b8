"""The address bar keeps the learner's work: a reload, or the same address opened later, brings it back.

After every run the address holds the current configuration and the learner's language (``?lang=``): ``?c=`` (the
permalink's value: the numbers themselves, so it survives a server restart and can be sent to anyone) when it is
short enough, else ``?s=`` (a random key to the configuration kept in this server's memory, :data:`STORE`: it
survives a reload, not a restart). The page is the address's path.
A new session reads the address once (:func:`restore`), as it does for a link someone sent.

Measured here (2026-11-23): seed 000 encodes in 0.06 ms to 282 characters; random numbers take about 3
characters a cell (2,000 cells: 6,070 characters in 1.2 ms; 5,120 cells: 14,931 in 7 ms), so a configuration of
more than about 2,600 random cells does not fit the 8,192 characters a link may have, and none is tried above
:data:`URL_CELLS` cells (at the caps, 1.2 million cells, encoding alone would take seconds on every change).
"""

from __future__ import annotations

import secrets

import streamlit as st

from attn_core import LIMITS, MATRICES, AttentionInputError, Config, share
from attn_ui.app import i18n, origins, registry, state
from attn_ui.app.i18n import _, error_text
from attn_ui.infra import budget, st_internals

LINK, STORE_KEY = "c", "s"  # the query parameters: the permalink's value, or a key of STORE
LANG = "lang"  # the query parameter of the learner's language (en, zh, ko): read once per session (attn_ui.shell.frame)
URL_CELLS = 4_096  # above this many cells a configuration is kept in STORE without trying a link


class _Store:
    """The configurations too large for an address, by a random key, shared by the sessions of this process.

    A key is minted per session (:func:`_session_key`), so two tabs opened from one address each go their own
    way; it cannot be guessed, so a session reads only what its own address names. The configurations are kept in
    the process's memory budget (attn_ui.infra.budget, cache "address"; a configuration at the caps: ≈ 10 MB) for the
    sessions that wrote or read them: a reload's new session reads its key while the old one is still kept for a
    reconnect (attn_ui.infra.sessions), so the configuration follows it; once no open session uses a key, it goes.
    """

    def put(self, key: str, cfg: Config) -> None:
        budget.BUDGET.put(("address", key), cfg, user=st_internals.session_id())

    def get(self, key: str) -> Config | None:
        found = budget.BUDGET.get(("address", key), st_internals.session_id())
        return None if found is budget.MISSING else found


STORE = _Store()


def restore(pg: st.Page) -> None:
    """Once per session: open the configuration the address holds (a link someone sent, or this learner's
    own address after a reload) and the page a link names.

    Call it in the router after ``st.navigation`` (``st.switch_page`` needs the registered pages) and before
    ``pg.run()``. A ``?c=`` that decodes wins over a ``?s=`` beside it: it is the numbers themselves, while a key
    names what this server happened to keep. A value that cannot be opened is said once (a notice, shown by the
    page that opens: attn_ui.shell.frame), and the app falls back to the ``?s=`` beside a refused ``?c=`` when this
    server still has it, else to the default example.
    """
    if st.session_state.get(state.LINK_APPLIED):
        return
    st.session_state[state.LINK_APPLIED] = True
    key, value = st.query_params.get(STORE_KEY), st.query_params.get(LINK)
    kept = STORE.get(key) if key is not None else None
    if value is not None:
        try:
            cfg, page = share.decode_link(value)
        except AttentionInputError as err:
            _not_opened(error_text(err), kept is not None)
        else:
            cfg, why = origins.admitted(cfg)  # its origin (a model's layer) checked whole before any page reads it
            if why:
                state.notify(why, icon=":material/link_off:")
            refused = state.load_shared(cfg, undoable=False)  # validated by decode_link; computable (or refused)
            if refused is None:
                target = registry.by_name(page) if page else None
                if target is not None and target.linkable and target.name != (pg.url_path or registry.DEFAULT.name):
                    st.switch_page(target.file)
                return
            _not_opened(refused, kept is not None)
    if kept is not None:
        state.load_shared(kept, undoable=False)
    elif key is not None and value is None:
        state.notify(_("This address kept a configuration too large for it on the server, which no longer has it "
                       "(the tab that made it was closed, the server restarted, or many learners came since), so the "
                       "app starts with the default example. Keep large configurations as a JSON file (Share & "
                       "export)."), icon=":material/link_off:")


def _not_opened(why: str, kept: bool) -> None:
    """Tell the learner the address's link could not be opened, and ``why``; ``kept``: the address also names a
    configuration the server kept, opened instead."""
    message = (_("This link could not be opened, so the app opens the configuration this address kept on the server "
                 "instead. {why}") if kept else
               _("This link could not be opened, so the app starts with the default example. {why}"))
    state.notify(message.format(why=why), icon=":material/link_off:")


def keep() -> None:
    """Make the address hold the current configuration: on every run (a page switch clears the address's
    parameters) and at every change of the configuration (attn_ui.app.state)."""
    cfg = state.config()
    kept = st.session_state.get(state.ADDRESS)
    if kept is None or kept[0] is not cfg:  # the configuration changed: encode it once
        kept = (cfg, _params(cfg))
        st.session_state[state.ADDRESS] = kept
    name, value = kept[1]
    now = st.query_params.to_dict()  # read once: ``in st.query_params`` alone cost ≈ 0.3 ms (a miss raises inside)
    other = STORE_KEY if name == LINK else LINK
    # the language too: a reload keeps it, as a link does
    wanted = {**{k: v for k, v in now.items() if k != other}, name: value, LANG: i18n.language()}
    if wanted != now:  # at once: each change of the address is an entry in the browser's history (its Back button)
        st.query_params.from_dict(wanted)


state.on_change(keep)  # every change of the configuration goes to the address bar at once


def _params(cfg: Config) -> tuple[str, str]:
    """("c", the permalink's value) when it fits an address, else ("s", this session's key) with ``cfg`` stored."""
    if sum(cfg.matrix(n).size for n in MATRICES) <= URL_CELLS:
        try:
            return LINK, share.encode_link(origins.exported(cfg), None, max_chars=LIMITS.permalink_bytes)
        except AttentionInputError:
            pass  # too long for an address
    key = _session_key()
    STORE.put(key, cfg)
    return STORE_KEY, key


def _session_key() -> str:
    if state.STORE_KEY not in st.session_state:
        st.session_state[state.STORE_KEY] = secrets.token_urlsafe(16)
    return st.session_state[state.STORE_KEY]
