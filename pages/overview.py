"""Overview: what self-attention is, the formula, the pipeline, and the current configuration."""

import streamlit as st

from attn_ui import frame, layout, state

frame.page_start()

cfg = state.config()
st.title("Self-Attention Explorer")
st.markdown(
    "Self-attention lets every token of a sequence look at every other token and take a weighted "
    "average of what they offer. Each token's input row is projected three ways: a **query** (what it "
    "looks for), a **key** (what it offers to be matched on) and a **value** (what it passes on). "
    "The dot product of a query with every key says how well they match; softmax turns those scores "
    "into weights that sum to 1; the output is the weighted sum of the values. "
    "Here you can type every number yourself and watch each step recompute."
)
st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V,"
         r"\qquad Q = XW_Q,\; K = XW_K,\; V = XW_V")

st.subheader("The pipeline")
st.graphviz_chart(layout.pipeline_dot(cfg), width="stretch")
cols = st.columns(len(layout.PIPELINE))
for col, (label, page) in zip(cols, layout.PIPELINE, strict=True):
    col.page_link(page, label=label, help="Open the page that shows this stage.")

st.subheader("Current configuration")
layout.pending_errors_banner()
mask_text = {"none": "none", "causal": "causal (each token sees itself and earlier ones)",
             "padding": f"padding ({sum(cfg.is_pad)} padding token(s))", "custom": "custom"}[cfg.mask_kind]
st.markdown(
    f"- **Tokens** ({cfg.n_seq}): {', '.join(cfg.tokens)}\n"
    f"- **X**: {cfg.n_seq} × {cfg.d_model} · **W_Q, W_K**: {cfg.d_model} × {cfg.w_q.shape[1]} · "
    f"**W_V**: {cfg.d_model} × {cfg.w_v.shape[1]} · **W_O**: {cfg.w_o.shape[0]} × {cfg.d_out}\n"
    f"- **Heads**: {cfg.n_heads} (d_k = {cfg.d_k}, d_v = {cfg.d_v} per head)\n"
    f"- **Scale**: {layout.scale_text(cfg)}\n"
    f"- **Mask**: {mask_text}"
)
st.page_link(layout.INPUTS, label="Edit the inputs and weights", icon=":material/edit:")

st.subheader("The attention weights")
trace = layout.current_trace()  # shows a message instead when the configuration cannot be computed
first = trace.heads[0]
tokens = layout.token_labels(cfg)
layout.matrix_block(
    "Attention weights" + (f" of head 0 (of {cfg.n_heads})" if cfg.n_heads > 1 else ""), "", first.weights,
    tokens, tokens, kind="weights", y_title="query", x_title="key", key="overview_weights_chart",
    masked=None if first.mask is None else ~first.mask,
    note="Row i: how much query i attends to each key (each row sums to 1). Every step that leads here is on "
         "Step by step.",
)
st.page_link(layout.STEPS, label="See how every weight is computed", icon=":material/stairs:")
