"""Overview: what self-attention is, the formula, the pipeline, and the current configuration."""

import streamlit as st

from attn_core import Config
from attn_ui import compute, frame, grid_editor, registry, state, text
from attn_ui.matrix_display import matrix_block

frame.page_start(registry.OVERVIEW)

#: the stages of attention and the page that shows each
PIPELINE = [
    ("X", registry.INPUTS), ("Q, K, V", registry.STEPS), ("QKᵀ", registry.STEPS), ("÷ s", registry.SCALING),
    ("mask", registry.MASKING), ("softmax", registry.STEPS), ("· V", registry.STEPS), ("output", registry.STEPS),
    ("heads · W_O", registry.MULTIHEAD),
]


def pipeline_dot(cfg: Config) -> str:
    """Graphviz source of the pipeline X → Q, K, V → QKᵀ → ÷ s → mask → softmax → ·V → output → heads.

    No links inside the diagram: a plain link would reload the app and lose the session; the stages are linked
    with st.page_link below it instead.
    """
    shapes = {
        "X": f"{cfg.n_seq}×{cfg.d_model}", "Q, K, V": f"{cfg.n_seq}×{cfg.d_k}, ×{cfg.d_v}",
        "QKᵀ": f"{cfg.n_seq}×{cfg.n_seq}", "÷ s": text.scale_text(cfg).split("=")[-1].strip(" ÷"),
        "mask": cfg.mask_kind, "softmax": "rows sum to 1", "· V": f"{cfg.n_seq}×{cfg.d_v}",
        "output": f"{cfg.n_seq}×{cfg.d_v} per head",
        "heads · W_O": f"{cfg.n_heads} head(s) → {cfg.n_seq}×{cfg.d_out}",
    }
    nodes = "\n".join(f'  n{i} [label="{label}\\n{shapes[label]}"];' for i, (label, _) in enumerate(PIPELINE))
    edges = " -> ".join(f"n{i}" for i in range(len(PIPELINE)))
    return (
        "digraph { rankdir=LR; bgcolor=transparent;\n"
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#4c78a8", fontname="sans-serif"];\n'
        f"{nodes}\n  {edges};\n}}"
    )


cfg = state.config()
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
st.page_link(registry.LEARN.file, label="New to attention? Start with the guided lessons: predict, then check",
             icon=":material/school:")

st.subheader("The pipeline")
st.graphviz_chart(pipeline_dot(cfg), width="stretch")
cols = st.columns(len(PIPELINE))
for col, (label, page) in zip(cols, PIPELINE, strict=True):
    col.page_link(page.file, label=label, help="Open the page that shows this stage.")

st.subheader("Current configuration")
grid_editor.pending_errors_banner()
mask_text = {"none": "none", "causal": "causal (each token sees itself and earlier ones)",
             "padding": f"padding ({sum(cfg.is_pad)} padding token(s))", "custom": "custom"}[cfg.mask_kind]
st.markdown(
    f"- **Tokens** ({cfg.n_seq}): {', '.join(map(text.md_escape, cfg.tokens))}\n"
    f"- **X**: {cfg.n_seq} × {cfg.d_model} · **W_Q, W_K**: {cfg.d_model} × {cfg.w_q.shape[1]} · "
    f"**W_V**: {cfg.d_model} × {cfg.w_v.shape[1]} · **W_O**: {cfg.w_o.shape[0]} × {cfg.d_out}\n"
    f"- **Heads**: {cfg.n_heads} (d_k = {cfg.d_k}, d_v = {cfg.d_v} per head)\n"
    f"- **Scale**: {text.scale_text(cfg)}\n"
    f"- **Mask**: {mask_text}"
)
st.page_link(registry.INPUTS.file, label="Edit the inputs and weights", icon=":material/edit:")

st.subheader("The attention weights")
trace = compute.current_trace()  # shows a message instead when the configuration cannot be computed
first = trace.heads[0]
tokens = text.token_labels(cfg)
matrix_block(
    "Attention weights" + (f" of head 0 (of {cfg.n_heads})" if cfg.n_heads > 1 else ""), "", first.weights,
    tokens, tokens, kind="weights", y_title="query", x_title="key", key="overview_weights_chart",
    masked=None if first.mask is None else ~first.mask,
    note="Row i: how much query i attends to each key (each row sums to 1). Every step that leads here is on "
         "Step by step.",
)
st.page_link(registry.STEPS.file, label="See how every weight is computed", icon=":material/stairs:")
