"""Score functions: how a query and a key make a score (dot product, general, additive), compared on your Q and K,
and where the queries come from (self- or cross-attention)."""

import numpy as np
import streamlit as st

from attn_core import LIMITS, SCORE_FUNCTIONS, SCORE_MATRICES, config_mask
from attn_ui import compute, controls, frame, grid_editor, heatmap, registry, score_views, state, step_by_step, text
from attn_ui.matrix_display import matrix_block

frame.page_start(registry.SCORES)

KIND, D_A, QUERY = "scores_kind", "scores_d_a", "scores_query"  # widget keys: the configuration's score function,
# additive's d_a, the query whose scores are made
#: the extra weights of each score function: (name, shape in words, its role)
ROLES = {
    "w_a": ("W_a", "[d_q, n_heads·d_k]", "each head's queries are multiplied by its column slice before the dot "
            "product with the keys: score = (q W_a) · k. The identity gives back the dot product."),
    "w_1": ("W_1", "[d_q, n_heads·d_a]", "turns each query into d_a features per head."),
    "w_2": ("W_2", "[d_k, n_heads·d_a]", "turns each key into d_a features per head; they are added to the query's "
            "and squashed by tanh."),
    "v_a": ("v_a", "[1, n_heads·d_a]", "weighs each head's d_a tanh features into one score."),
}
SCORE_LATEX = {  # one query row q and one key row k (row vectors, as everywhere in the app)
    "dot": r"q\,k^\top",
    "general": r"q\,W_a\,k^\top",
    "additive": r"\tanh\!\big(q\,W_1 + k\,W_2\big)\,v_a^\top",
}


@st.cache_data(max_entries=32, show_spinner=False)
def comparison(q: np.ndarray, k: np.ndarray, v: np.ndarray, functions: dict, h: int, n_heads: int,
               scale: str | float, mask: np.ndarray | None) -> dict[str, score_views.Scored]:
    return score_views.compare(q, k, v, functions, h=h, n_heads=n_heads, scale=scale, mask=mask)


def pick_kind() -> None:
    if message := state.set_score(st.session_state[KIND]):
        state.notify(message)


def pick_d_a() -> None:
    if message := state.set_score("additive", int(st.session_state[D_A])):
        state.notify(message)


def dims(cfg) -> str:
    """The per-head widths in words."""
    return f"d_q = {cfg.d_q}, d_k = {cfg.d_k}" + (f", d_a = {cfg.d_a}" if cfg.d_a else "") + (
        f", {cfg.n_heads} heads" if cfg.n_heads > 1 else "")


if notice := state.pop_notice():
    st.error(text.md_escape(notice), icon=":material/error:")
grid_editor.pending_errors_banner(registry.SCORES)
cfg = state.config()
st.markdown(
    "Attention gives each key a **score** for each query, divides it by the scale s, and turns each query's row of "
    "scores into weights with softmax. The Transformer scores with a dot product; earlier attention models for "
    "translation used two other **score functions**, each with weights of its own. Choose the one your "
    "configuration uses, edit its weights, and compare all three on your numbers."
)

# ---- 1. the formulas ------------------------------------------------------------------------------
st.header("1 · Three ways to score a query against a key")
per_head = "" if cfg.n_heads == 1 else f" per head ({cfg.n_heads} heads side by side in one matrix)"
d_a = cfg.d_a or cfg.d_k
cols = st.columns([1, 1, 1.3], gap="medium")
with cols[0]:
    st.markdown("**Dot product** (the Transformer, Vaswani et al. 2017)")
    st.latex(r"\mathrm{score}(q, k) = q\,k^\top")
    st.latex(r"\text{scaled: } \frac{q\,k^\top}{\sqrt{d_k}}")
    st.caption(f"No weights of its own: q and k must have the same width (here {text.md_escape(dims(cfg))}). "
               "Divided by √d_k it is the Transformer's scaled dot product.")
with cols[1]:
    st.markdown("**General** (Luong et al. 2015)")
    st.latex(r"\mathrm{score}(q, k) = q\,W_a\,k^\top")
    st.caption(f"W_a is d_q × d_k = {cfg.d_q} × {cfg.d_k}{per_head}: a learned matrix that lets a query match a "
               "key along other directions than its own. W_a = I is the dot product.")
with cols[2]:
    st.markdown("**Additive** (Bahdanau et al. 2015, “concat”)")
    st.latex(r"\mathrm{score}(q, k) = \tanh\!\big(q\,W_1 + k\,W_2\big)\,v_a^\top")
    st.caption(f"W_1 is d_q × d_a = {cfg.d_q} × {d_a}, W_2 is d_k × d_a = {cfg.d_k} × {d_a}, v_a has d_a = {d_a} "
               f"numbers{per_head}: a small network with one hidden layer of d_a tanh units. q and k may differ in "
               "width. With column vectors, as in the paper: v_aᵀ tanh(W_1ᵀ q + W_2ᵀ k).")
st.markdown(
    f"q and k are one row of Q and of K. Whatever the score function, the scores are then divided by the scale "
    f"(yours: {text.scale_text(cfg)}; change it on Scaling), masked, and turned into weights by softmax. Luong and "
    "Bahdanau did not scale their scores."
)

# ---- where the queries come from -------------------------------------------------------------------
st.header("Queries from another sequence: cross-attention")
st.markdown(
    "In **self-attention** the queries, the keys and the values all come from one sequence X: Q = X W_Q, "
    "K = X W_K, V = X W_V. In **cross-attention** (the encoder–decoder attention of a translation model) the "
    "queries come from a second sequence Y, the sentence being written, and the keys and values from X, the "
    "sentence being read: Q = Y W_Q. The weights then have one row per token of Y and one column per token of X. "
    "Every score function works the same either way."
)


def tokens_text(tokens: tuple[str, ...], most: int = 8) -> str:
    shown = ", ".join(f"“{text.md_escape(t)}”" for t in tokens[:most])
    return shown + (f", … ({len(tokens)} in all)" if len(tokens) > most else "")


if cfg.cross:
    st.markdown(f"Your configuration uses **cross-attention**: {cfg.n_q} queries from Y ({tokens_text(cfg.y_tokens)}) "
                f"against {cfg.n_seq} keys and values from X ({tokens_text(cfg.tokens)}).")
else:
    st.markdown(f"Your configuration uses **self-attention**: its {cfg.n_seq} tokens of X "
                f"({tokens_text(cfg.tokens)}) are the queries, the keys and the values.")
st.page_link(registry.INPUTS.file, label="Choose self- or cross-attention and edit Y on Inputs & weights",
             icon=":material/edit:")

# ---- 2. the configuration's score function ---------------------------------------------------------
st.header("2 · Your score function and its weights")
st.segmented_control("Score function of your configuration", SCORE_FUNCTIONS, format_func=step_by_step.SCORE_NAMES.get,
                     required=True, **state.bind(KIND, cfg.score, pick_kind),
                     help="Part of your configuration. Weights you edited come back when you choose their function "
                          "again.")
cfg = state.config()
if cfg.score == "dot":
    st.caption("The dot product has no weights of its own. Choose general or additive to see and edit theirs.")
if cfg.score == "additive":
    st.number_input("Features per head (d_a)", min_value=1, max_value=LIMITS.width // cfg.n_heads, step=1,
                    width=240, **state.bind(D_A, cfg.d_a, pick_d_a),
                    help="The width of the tanh layer. A new width starts W_1, W_2 and v_a afresh (random, seeded).")
for name in SCORE_MATRICES[cfg.score]:
    label, shape, role = ROLES[name]
    m = cfg.matrix(name)
    st.markdown(f"{score_views.shape_text(label, m, shape)}: {role}")
    with st.expander(f"Edit {label}", expanded=m.size <= 64, key=f"scores_edit_{name}", on_change="rerun") as box:
        if box.open:  # the grid is built only while it is open
            grid_editor.matrix_editor(name)
cfg = state.config()

# ---- 3. the three compared ------------------------------------------------------------------------
st.header("3 · The three side by side, on your Q and K")
head = controls.head_selector(cfg.n_heads, "scores")
t_head = compute.current_trace().heads[head]  # the configuration's own Q, K, V of this head (the cached trace)
q, k, v = t_head.q, t_head.k, t_head.v
mask = config_mask(cfg)
defaults = state.default_score_weights(cfg, "general") | state.default_score_weights(cfg, "additive")
functions = score_views.functions(cfg, defaults)
scored = comparison(q, k, v, functions, head, cfg.n_heads, cfg.scale, mask)
q_labels, k_labels = text.query_labels(cfg), text.token_labels(cfg)
head_note = f" (head {head})" if cfg.n_heads > 1 else ""
st.caption(
    f"The same queries{head_note} ({'rows of Y W_Q' if cfg.cross else 'rows of Q = X W_Q'}) and keys (rows of "
    f"K = X W_K), the same scale ({text.scale_text(cfg)}) and mask; only the score function changes. "
    + " ".join(f"{score_views.title(kind)}: {source}." for kind, (_, source) in functions.items() if source)
)
precision, masked = controls.precision(), None if mask is None else ~mask
shown = [s for s in scored.values() if s.trace is not None]
places = controls.side_by_side([heatmap.heatmap_width(s.trace.weights, q_labels, precision) for s in shown])
for place, s in zip(places, shown, strict=True):
    with place:
        yours = " · yours" if s.kind == cfg.score else ""
        matrix_block(f"{score_views.title(s.kind)}{yours}{head_note}",
                     rf"\mathrm{{softmax}}\big({SCORE_LATEX[s.kind]} / s\big)", s.trace.weights, q_labels, k_labels,
                     kind="weights", y_title="query", x_title="key", masked=masked)
for s in scored.values():
    if s.trace is None:
        st.info(f"{score_views.title(s.kind)}: not shown: {text.md_escape(s.why)}.", icon=":material/info:")
table = score_views.summary(scored, cfg.score, precision)
st.dataframe(table, hide_index=True, height=35 * (len(table) + 1) + 3)
st.caption("Entropy of a row of weights: 0 when one key takes all the weight, ln n_k when the weights are uniform "
           f"(ln {cfg.n_seq} = {np.log(cfg.n_seq):.4g} here). General with W_a = I gives exactly the dot product's "
           "weights.")

# ---- 4. one score, made -----------------------------------------------------------------------------
st.header("4 · How one query's scores are made")
mine = scored[cfg.score]
if mine.trace is None:
    st.error(f"Your score function cannot be computed here: {text.md_escape(mine.why)}", icon=":material/error:")
    st.stop()
t = mine.trace
i = min(int(st.session_state[state.QUERY]), cfg.n_q - 1)  # the query the pages share
i = st.selectbox("Query token", list(range(cfg.n_q)), format_func=q_labels.__getitem__, width=320,
                 **state.bind(QUERY, i, state.copy_to(state.QUERY, QUERY)))
label = text.md_escape(q_labels[i])
if cfg.score == "additive":
    st.markdown(
        f"For query **{label}**{head_note}, each key j gets d_a = {t.v_a.shape[0]} features tanh(q W_1 + k_j W_2), "
        "one row of the heatmap per key; the score is that row times v_a: the sum of each feature times its number "
        "in v_a."
    )
    feats = t.features(i)  # [n_k, d_a]: one query only
    left, right = controls.side_by_side([heatmap.heatmap_width(feats, k_labels, precision),
                                         heatmap.heatmap_width(t.v_a[None, :], ["v_a"], precision)])
    with left:
        matrix_block(f"Features of query {label}", r"\tanh\!\big(q\,W_1 + K\,W_2\big)", feats, k_labels,
                     text.dim_labels(feats.shape[1]), y_title="key", x_title="feature")
    with right:
        matrix_block("v_a", "", t.v_a[None, :], ["v_a"], text.dim_labels(t.v_a.shape[0]), x_title="feature")
    st.dataframe(score_views.additive_table(t, i, k_labels, precision), hide_index=True)
else:
    row, name = (t.q[i], "q") if cfg.score == "dot" else (t.q_a[i], "q W_a")
    st.markdown(
        f"For query **{label}**{head_note}, " + ("the score of key j is the dot product of q with row j of K."
                                                 if cfg.score == "dot" else
                                                 "q is first multiplied by W_a; the score of key j is the dot product "
                                                 "of q W_a with row j of K.")
    )
    left, right = controls.side_by_side([heatmap.heatmap_width(row[None, :], [name], precision),
                                         heatmap.heatmap_width(t.k, k_labels, precision)])
    with left:
        matrix_block(f"{name} of query {label}", r"q\,W_a" if name != "q" else "q", row[None, :], [name],
                     text.dim_labels(row.shape[0]), x_title="column")
    with right:
        matrix_block(f"K{head_note}", r"K = X\,W_K", t.k, k_labels, text.dim_labels(t.k.shape[1]), y_title="key",
                     x_title="column")
    st.dataframe(score_views.dot_table(t, i, k_labels, precision), hide_index=True)
st.caption("The score ÷ s is −∞ where the mask forbids the key; its weight is then 0.")
