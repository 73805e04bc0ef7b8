"""The editor the pages share: X and the weights in the sidebar, beside the steps they feed.

Step by step, Scaling, Masking, Multi-head and Score functions each show what a matrix does to attention; with this
panel the learner changes the matrix without leaving the page, and every step on it recomputes in the same run
(attn_ui.widgets.grid_editor commits a grid's edit at the start of the run, before the page draws). The sidebar stays in
view while the page scrolls: the change and its effect are on one screen, as in a spreadsheet.

One matrix at a time, chosen by a row of buttons (one grid for the browser to redraw on each edit). The grids are
grid_editor's, with the keys Inputs & weights uses, over the one configuration in attn_ui.app.state. Sizes, tokens and
presets stay on Inputs & weights, which the panel links to.
"""

from __future__ import annotations

import streamlit as st

from attn_core import MATRIX_NAMES
from attn_ui.app import registry, state
from attn_ui.app.i18n import N_, _
from attn_ui.shell import frame
from attn_ui.widgets import controls, grid_editor, randomise

#: what each matrix is, in a line under the picker (shape first: "3 × 4 · one row per token")
ROLES = {
    "x": N_("one row per token"),
    "y": N_("one row per query token"),
    "w_q": N_("Q = X W_Q"),
    "w_k": N_("K = X W_K"),
    "w_v": N_("V = X W_V"),
    "w_a": N_("scores (Q W_a) Kᵀ"),
    "w_1": N_("the queries' half of the tanh layer"),
    "w_2": N_("the keys' half of the tanh layer"),
    "v_a": N_("reads the tanh layer out into one score"),
}
#: at most this high in the sidebar (px): a taller matrix scrolls inside its grid
MAX_GRID_PX = 390


def hint() -> None:
    """Under a page's title: where its numbers are edited, and that the page follows."""
    if state.on_phone():
        return  # the panel is right here, above the page (frame.panel_slot)
    st.caption(_(":material/edit: Change X or a weight under **Edit the numbers** in the sidebar: everything on this "
                 "page recomputes at once."))


#: the matrices no panel offers: W_O makes the layer's output from the heads' outputs, which Multi-head shows beside
#: W_O's grid (its section 5) and Inputs & weights in its result; the pages with the panel show what W_O does not
#: change (a head's steps, the scaling, the mask, the options, the score functions), where an edit of it changed
#: nothing on the page (a reviewer)
NOT_OFFERED = ("w_o",)


def offered(names: tuple[str, ...], drawn_by_page: tuple[str, ...]) -> list[str]:
    """The matrices the panel offers: the configuration's (``names``, in order), less those the page edits itself and
    :data:`NOT_OFFERED`.

    >>> offered(("x", "w_q", "w_k", "w_v", "w_o", "w_a"), ("w_a",))
    ['x', 'w_q', 'w_k', 'w_v']
    """
    return [n for n in names if n not in drawn_by_page and n not in NOT_OFFERED]


def grid_height(n_rows: int) -> int | str:
    """The grid's height: its own ("auto") up to 10 rows, else :data:`MAX_GRID_PX` with a scroll bar.

    >>> grid_height(3), grid_height(64)
    ('auto', 390)
    """
    return "auto" if n_rows <= 10 else MAX_GRID_PX


def sidebar(*, drawn_by_page: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The panel, in the sidebar: pick a matrix, edit its cells (or randomise it), and the page recomputes.

    ``drawn_by_page``: matrices whose grid the page itself shows (W_O on Multi-head, a score function's weights on
    Score functions); a grid can be drawn once per run. Returns the matrices offered (for
    grid_editor.pending_errors_banner: a refused value is fixed here)."""
    cfg = state.config()
    names = offered(cfg.matrix_names(), drawn_by_page)
    phone = state.on_phone()
    with frame.panel_slot().container():  # not an expander: its padding would cost the grid a column
        title = _("Edit the numbers")  # (inside an f-string, the catalogs' extraction would not see it)
        st.markdown(f":material/edit: **{title}**")
        if cfg.y is not None:  # Y's rows ask: Q = Y W_Q
            roles = {**ROLES, "w_q": N_("Q = Y W_Q")}
        else:
            roles = ROLES
        name = controls.view_picker(_("Matrix to edit"), names, key=state.EDIT_MATRIX, format_func=MATRIX_NAMES.get)
        m = cfg.matrix(name)
        # (the line under the picker keeps the grid's toolbar, above the grid on its right, off the picker's buttons)
        st.caption(f"**{MATRIX_NAMES[name]}** · {m.shape[0]} × {m.shape[1]} · {_(roles[name])}")
        grid_editor.matrix_editor(name, height=grid_height(m.shape[0]), compact=True)
        # on a phone Randomise and the link share a row (the link's label wraps beside the button)
        row = st.container(horizontal=True, vertical_alignment="center", wrap=False) if phone else None
        randomise.popover_of(name, "panel", where=row)
        (row or st).page_link(registry.INPUTS.file, label=_("Sizes, tokens, presets: {page}").format(
            page=_(registry.INPUTS.title)), icon=registry.INPUTS.icon, width="stretch" if phone else "content")
    if phone:
        frame.keep_under_panel(st.container())  # where the page may draw its first result (frame.under_panel)
    return tuple(names)
