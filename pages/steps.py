"""Step by step: every intermediate of one head's attention, then one query's row number by number."""

import streamlit as st

from attn_ui.app import registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, drill_down, step_by_step
from attn_ui.widgets import controls, grid_editor, text

#: the mask in the caption, one whole phrase per kind (marked; shown with _())
MASK_WORDS = {"none": N_("mask none"), "causal": N_("mask causal"), "padding": N_("mask padding"),
              "custom": N_("mask custom")}

frame.page_start(registry.STEPS)
in_panel = edit_panel.sidebar()  # X and every weight, beside the steps they feed
edit_panel.hint()
controls.precision_control("steps", st.sidebar)

grid_editor.pending_errors_banner(registry.STEPS, in_panel=in_panel)

cfg = state.config()
trace = compute.current_trace()  # shows a message and stops if the configuration cannot be computed
head = controls.head_selector(cfg.n_heads, "steps")
controls.focus_control(list(dict.fromkeys(text.query_labels(cfg) + text.token_labels(cfg))), "steps", st.sidebar)
st.caption(" · ".join(filter(None, [
    _("{n_q} queries (rows of Y) · {n_k} keys and values (rows of X)").format(n_q=cfg.n_q, n_k=cfg.n_seq)
    if cfg.cross else ngettext("{n} token", "{n} tokens", cfg.n_seq).format(n=cfg.n_seq),
    f"d_model {cfg.d_model}", f"d_q {cfg.d_q}" if cfg.d_q != cfg.d_k else "", f"d_k {cfg.d_k}",
    f"d_a {cfg.d_a}" if cfg.score == "additive" else "", f"d_v {cfg.d_v}",
    ngettext("{n} head", "{n} heads", cfg.n_heads).format(n=cfg.n_heads),
    *text.modern_options(cfg),
    _("scores {formula}").format(formula=text.SCORE_TEXT[cfg.score]) if cfg.score != "dot" else "",
    _(MASK_WORDS[cfg.mask_kind]) if cfg.mask_kind in MASK_WORDS else f"mask {cfg.mask_kind}",
    _("window {w}").format(w=cfg.window) if cfg.window is not None else "",
])))

step_by_step.show_steps(trace.heads[head], cfg, prefix="steps", head=head if cfg.n_heads > 1 else None,
                        mt=trace)
if cfg.n_heads > 1 or not compute.is_identity(cfg.w_o):
    st.info(_("This is head {head} of {n}. The layer puts the heads' outputs side by side and multiplies them by "
              "W_O.").format(head=head, n=cfg.n_heads) if cfg.n_heads > 1
            else _("The layer's output is this output times W_O."), icon=":material/view_column:")
    st.page_link(registry.MULTIHEAD.file, label=_("See the heads and W_O on Multi-head"), icon=":material/view_column:")

drill_down.drill_down_section(trace.heads[head], cfg, prefix="steps", mt=trace)
