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
from attn_ui.widgets import controls

NAMES = list(INITIALIZERS)
STD, STD_HIGH = 1.0, 100.0  # a Gaussian's std: offered the first time, the largest taken


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
            controls.whole_box(_("Seed"), k["seed"], seed, 0, controls.SEED_HIGH,
                               lambda v: _(controls.STILL_SEED).format(value=v))
            if st.session_state[k["init"]] == "gaussian":  # the std of N(0, std²)
                controls.number_box(_("std"), k["std"], STD, 0.0, STD_HIGH,
                                    lambda v: _("Still using std {value}.").format(value=f"{v:g}"))
            n_heads = state.config().n_heads
            st.button(_("Fill {name}").format(name=MATRIX_NAMES[name]), key=k["fill"], on_click=fill,
                      args=(name, prefix, per_head, seed),
                      help=_("Each head's block of columns is drawn on its own, as for a matrix of one head's "
                             "width.") if per_head and n_heads > 1 else None)


def fill(name: str, prefix: str, per_head: bool = False, offered: int = 0) -> None:
    """on_click: the matrix ``name`` of the configuration, filled as its popover says (``offered``: the seed it
    offered the first time)."""
    k, ss, cfg = keys(prefix, name), st.session_state, state.config()
    shape = cfg.matrix(name).shape
    # what the boxes hold, or while one holds what is refused the last value it took (said in the popover)
    seed = controls.whole_in_use(k["seed"], offered, 0, controls.SEED_HIGH)[0]
    std = controls.number_in_use(k["std"], STD, 0.0, STD_HIGH)[0]
    values = (initialize_heads(ss[k["init"]], shape, cfg.n_heads, seed=seed, std=std) if per_head else
              initialize(ss[k["init"]], shape, seed=seed, std=std))
    if message := state.update_config(**{name: values}):
        state.notify(message)
