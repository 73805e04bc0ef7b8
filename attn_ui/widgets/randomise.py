"""A matrix's Randomise popover: an initialiser, a seed (and the std of a Gaussian), and a button that fills the
matrix of the configuration with them. Inputs & weights, Multi-head (W_O) and Score functions (W_a, W_1, W_2, v_a)
draw it with their own widget-key prefix; the choices are kept while the popover is closed (state.kept).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attn_core import INITIALIZERS, MATRIX_NAMES, initialize, initialize_heads
from attn_ui.app import i18n, state
from attn_ui.app.i18n import _

NAMES = list(INITIALIZERS)


def keys(prefix: str, name: str) -> dict[str, str]:
    """The widget keys of matrix ``name``'s popover on the page of ``prefix`` ("inputs", "heads", "scores")."""
    return {part: f"{prefix}_{name}_{part}" for part in ("randomise", "init", "seed", "std", "fill")}


def popover_of(name: str, prefix: str, *, where: DeltaGenerator | None = None, label: str | None = None,
            init: str = NAMES[0], seed: int = 0, per_head: bool = False, width: int | str = "content") -> None:
    """The popover (its widgets built only while it is open) in ``where`` (default: the page).

    ``init`` and ``seed``: what it offers the first time. ``per_head``: draw each head's column block on its own
    (attn_core.initialize_heads, the fans one head's): for weights held per head, as a score function's are.
    """
    k = keys(prefix, name)
    with (where or st).popover(label or _("Randomise"), icon=":material/casino:", key=k["randomise"],
                               on_change="rerun", width=width) as box:
        if box.open:
            st.selectbox(_("Initialiser"), NAMES, format_func=i18n.option_labels(INITIALIZERS),
                         **state.bind(k["init"], state.kept(k["init"], init, NAMES)))
            st.number_input(_("Seed"), 0, 2**31 - 1, **state.bind(k["seed"], state.kept(k["seed"], seed)))
            if st.session_state[k["init"]] == "gaussian":  # the std of N(0, std²)
                st.number_input(_("std"), 0.0, 100.0, **state.bind(k["std"], state.kept(k["std"], 1.0)))
            n_heads = state.config().n_heads
            st.button(_("Fill {name}").format(name=MATRIX_NAMES[name]), key=k["fill"], on_click=fill,
                      args=(name, prefix, per_head),
                      help=_("Each head's block of columns is drawn on its own, as for a matrix of one head's "
                             "width.") if per_head and n_heads > 1 else None)


def fill(name: str, prefix: str, per_head: bool = False) -> None:
    """on_click: the matrix ``name`` of the configuration, filled as its popover says."""
    k, ss, cfg = keys(prefix, name), st.session_state, state.config()
    shape, std = cfg.matrix(name).shape, ss.get(k["std"], 1.0)
    values = (initialize_heads(ss[k["init"]], shape, cfg.n_heads, seed=ss[k["seed"]], std=std) if per_head else
              initialize(ss[k["init"]], shape, seed=ss[k["seed"]], std=std))
    if message := state.update_config(**{name: values}):
        state.notify(message)
