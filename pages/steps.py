"""Step by step: every intermediate of one head's attention, then one query's row number by number."""

import streamlit as st

from attn_ui import compute, controls, drill_down, frame, grid_editor, registry, state, step_by_step

frame.page_start(registry.STEPS)

grid_editor.pending_errors_banner()
controls.precision_control("steps", st.sidebar)

cfg = state.config()
trace = compute.current_trace()  # shows a message and stops if the configuration cannot be computed
head = controls.head_selector(cfg.n_heads, "steps")
st.caption(" · ".join(filter(None, [
    f"{cfg.n_q} queries (rows of Y) · {cfg.n_seq} keys and values (rows of X)" if cfg.cross else f"{cfg.n_seq} tokens",
    f"d_model {cfg.d_model}", f"d_q {cfg.d_q}" if cfg.d_q != cfg.d_k else "", f"d_k {cfg.d_k}",
    f"d_a {cfg.d_a}" if cfg.score == "additive" else "", f"d_v {cfg.d_v}",
    f"{cfg.n_heads} head{'s' if cfg.n_heads > 1 else ''}",
    f"scores {step_by_step.SCORE_TEXT[cfg.score]}" if cfg.score != "dot" else "", f"mask {cfg.mask_kind}",
])))

step_by_step.show_steps(trace.heads[head], cfg, prefix="steps", head=head if cfg.n_heads > 1 else None)
if cfg.n_heads > 1 or not compute.is_identity(cfg.w_o):
    st.info(f"This is head {head} of {cfg.n_heads}. The layer puts the heads' outputs side by side and "
            "multiplies them by W_O." if cfg.n_heads > 1 else "The layer's output is this output times W_O.",
            icon=":material/view_column:")
    st.page_link(registry.MULTIHEAD.file, label="See the heads and W_O on Multi-head", icon=":material/view_column:")

drill_down.drill_down_section(trace.heads[head], cfg, prefix="steps")
