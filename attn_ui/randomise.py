"""Randomise a matrix: a popover with an initialiser, a seed (and a std for Gaussian) and a Fill button.

Every grid of the app has one beside it (Inputs & weights, the edit panel, Score functions): the same controls, the
same seeded attn_core initialisers, so a matrix filled on one page is the matrix filled on another.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attn_core import INITIALIZERS, initialize

from . import i18n, state
from .i18n import _

INIT_NAMES = list(INITIALIZERS)


def init_labels() -> Callable[[str], str]:
    """A selectbox's ``format_func``: an initialiser as the learner reads it ("Xavier/Glorot uniform"), in this run's
    language (Streamlit calls it outside the run too, where the session's language cannot be read)."""
    now = i18n.translator()
    return lambda name: now(INITIALIZERS[name])


def fill(name: str, prefix: str) -> None:
    """on_click: fill matrix ``name`` as the popover's controls (keys ``{prefix}_{name}_…``) say."""
    ss = st.session_state
    shape = state.config().matrix(name).shape
    values = initialize(ss[f"{prefix}_{name}_init"], shape, seed=ss[f"{prefix}_{name}_seed"],
                        std=ss.get(f"{prefix}_{name}_std", 1.0))
    if message := state.update_config(**{name: values}):
        state.notify(message)


def controls(name: str, prefix: str) -> None:
    """The popover's controls; they keep their values while it is closed (state.kept)."""
    init, seed, std = f"{prefix}_{name}_init", f"{prefix}_{name}_seed", f"{prefix}_{name}_std"
    st.selectbox(_("Initialiser"), INIT_NAMES, format_func=init_labels(),
                 **state.bind(init, state.kept(init, INIT_NAMES[0], INIT_NAMES)))
    st.number_input(_("Seed"), 0, 2**31 - 1, **state.bind(seed, state.kept(seed, 0)))
    if st.session_state[init] == "gaussian":
        st.number_input(_("std"), 0.0, 100.0, **state.bind(std, state.kept(std, 1.0)))  # the std of N(0, std²)
    st.button(_("Fill"), key=f"{prefix}_{name}_fill", on_click=fill, args=(name, prefix))


def popover(name: str, *, key_prefix: str, where: object = st) -> None:
    """The Randomise popover of matrix ``name``; its widgets are built only while it is open."""
    with where.popover(_("Randomise"), icon=":material/casino:", key=f"{key_prefix}_{name}_randomise",
                       on_change="rerun") as box:
        if box.open:
            controls(name, key_prefix)
