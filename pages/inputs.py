"""Inputs & weights: pick a preset or type every number of X, W_Q, W_K, W_V yourself; queries from X
(self-attention) or from a second sequence Y (cross-attention)."""

from dataclasses import replace

import streamlit as st

from attn_core import (
    INITIALIZERS,
    LIMITS,
    PRESETS,
    AttentionInputError,
    embed,
    initialize,
    positional_encoding,
    tokenize,
    with_dimensions,
    with_query_rows,
)
from attn_ui import frame, grid_editor, registry, state, text

frame.page_start(registry.INPUTS)

INIT_NAMES = list(INITIALIZERS)


def row() -> st.delta_generator.DeltaGenerator:
    """Elements side by side, bottoms aligned: one container (st.columns would send one more per column, and the
    browser redraws every element on every edit)."""
    return st.container(horizontal=True, vertical_alignment="bottom")


def choose_preset() -> None:
    if st.session_state["inputs_preset"] is not None:
        state.load(st.session_state["inputs_preset"])


def change_dimensions() -> None:
    cfg, ss = state.config(), st.session_state
    try:
        new = with_dimensions(
            cfg, n_seq=ss["inputs_n_seq"], d_model=ss["inputs_d_model"], d_qk=ss["inputs_d_qk"],
            d_v=ss["inputs_d_v"], init=ss["inputs_fill"], seed=ss["inputs_fill_seed"],
            d_k=ss.get("inputs_d_k") if cfg.score == "additive" else None,
        )
    except AttentionInputError as err:
        state.notify(f"Dimensions not changed: {err}")
        return
    if new.n_heads != cfg.n_heads:
        state.notify(f"{cfg.n_heads} heads no longer divide the widths, so the configuration now has 1 head.")
    state.set_config(new)


def randomise(name: str) -> None:
    shape = state.config().matrix(name).shape
    values = initialize(
        st.session_state[f"inputs_{name}_init"], shape, seed=st.session_state[f"inputs_{name}_seed"],
        std=st.session_state.get(f"inputs_{name}_std", 1.0),
    )
    message = state.update_config(**{name: values})
    if message:
        state.notify(message)


def use_sentence(prefix: str = "inputs") -> None:
    """on_click: the sentence typed (``prefix`` "inputs" for X, "inputs_y" for Y) becomes tokens with embeddings."""
    ss, cfg = st.session_state, state.config()
    tokens = tokenize(ss[f"{prefix}_sentence"])
    if not tokens:
        state.notify("The sentence has no words to turn into tokens.")
        return
    if len(tokens) > LIMITS.n_seq:
        state.notify(f"The sentence has {len(tokens)} tokens; the cap is {LIMITS.n_seq}.")
        return
    rows = embed(tokens, cfg.d_model, seed=ss[f"{prefix}_embed_seed"])  # [n_tokens, d_model]
    if ss[f"{prefix}_positional"]:
        rows = rows + positional_encoding(len(tokens), cfg.d_model)
    try:
        if prefix == "inputs_y":
            new = replace(with_query_rows(cfg, len(tokens)), y_tokens=tuple(tokens), y=rows)
        else:
            new = replace(with_dimensions(cfg, n_seq=len(tokens), d_model=cfg.d_model, d_qk=cfg.w_q.shape[1],
                                          d_v=cfg.w_v.shape[1], d_k=cfg.w_k.shape[1]), tokens=tuple(tokens), x=rows)
    except AttentionInputError as err:
        state.notify(str(err))
        return
    if message := state.set_config(new):
        state.notify(message)


def choose_queries() -> None:
    """on_change: queries from X (self-attention) or from Y (cross-attention)."""
    mask_before = state.config().mask_kind
    if message := state.set_cross(st.session_state["inputs_queries"] == "cross"):
        state.notify(message)
    elif state.config().mask_kind != mask_before:
        state.notify(f"The {mask_before} mask was made for queries and keys of one sequence, so there is no mask "
                     "now; Masking offers padding and a custom mask for Y.")


def change_query_rows() -> None:
    ss = st.session_state
    try:
        new = with_query_rows(state.config(), ss["inputs_n_y"], init=ss["inputs_fill"], seed=ss["inputs_fill_seed"])
    except AttentionInputError as err:
        state.notify(f"Rows of Y not changed: {err}")
        return
    if message := state.set_config(new):
        state.notify(message)


cfg = state.config()
if notice := state.pop_notice():
    st.warning(text.md_escape(notice), icon=":material/warning:")

# ---- preset ---------------------------------------------------------------------------------------
st.header("Start from a worked example")
preset = st.session_state[state.PRESET]  # None: the configuration came from a link or a file
edited = state.edited_since_preset()
with row():
    st.selectbox(
        "Preset", list(PRESETS), **state.bind("inputs_preset", preset, choose_preset),
        format_func=lambda k: f"{PRESETS[k].title} — {PRESETS[k].source}",  # the same text on every run: Streamlit
        # keeps the choice by its text, so a text that changed would read as a new choice
        placeholder="A configuration from a link or a file: pick a preset to start over",
    )
    st.button("Reset to preset", key="inputs_reset", on_click=state.load, args=(preset,), disabled=not edited,
              help="Throw away your edits and reload the preset (Undo in the sidebar brings them back).")
if preset is not None:
    st.caption(PRESETS[preset].note)
if edited:
    st.caption(":material/edit: **Edited**: your numbers differ from this preset. *Reset to preset* brings the "
               "tutorial's values back; *Undo* in the sidebar takes back one change at a time.")

# ---- dimensions -----------------------------------------------------------------------------------
st.header("Dimensions")
st.caption(
    f"Caps: n_seq ≤ {LIMITS.n_seq}, d_model ≤ {LIMITS.d_model}, widths ≤ {LIMITS.width}, "
    f"heads ≤ {LIMITS.n_heads}, {LIMITS.total_cells:,} cells in X and the weights together. "
    "Changing a dimension keeps every value that still fits; new cells are filled as chosen below."
)
dims_row = row()
dims_row.number_input("n_seq", 1, LIMITS.n_seq, **state.bind("inputs_n_seq", cfg.n_seq, change_dimensions),
                      help=f"Number of tokens (rows of X), at most {LIMITS.n_seq}.")
dims_row.number_input("d_model", 1, LIMITS.d_model, **state.bind("inputs_d_model", cfg.d_model, change_dimensions),
                      help=f"Width of each token's input vector (columns of X), at most {LIMITS.d_model}.")
if cfg.score == "additive":  # queries and keys may differ in width
    dims_row.number_input("d_q", 1, LIMITS.width, **state.bind("inputs_d_qk", cfg.w_q.shape[1], change_dimensions),
                          help="Columns of W_Q. The additive score function lets it differ from W_K's. With several "
                          f"heads this is n_heads · d_q. At most {LIMITS.width}.")
    dims_row.number_input("d_k", 1, LIMITS.width, **state.bind("inputs_d_k", cfg.w_k.shape[1], change_dimensions),
                          help=f"Columns of W_K. With several heads this is n_heads · d_k. At most {LIMITS.width}.")
else:
    dims_row.number_input("d_k", 1, LIMITS.width, **state.bind("inputs_d_qk", cfg.w_q.shape[1], change_dimensions),
                          help="Columns of W_Q and W_K. With several heads this is n_heads · d_k: each head gets an "
                          f"equal slice. At most {LIMITS.width}.")
dims_row.number_input("d_v", 1, LIMITS.width, **state.bind("inputs_d_v", cfg.w_v.shape[1], change_dimensions),
                      help=f"Columns of W_V; may differ from d_k. The output has d_v columns. At most {LIMITS.width}.")
fill_row = row()
fill_row.selectbox("New cells are filled with", INIT_NAMES, index=INIT_NAMES.index("xavier_uniform"),
                   key="inputs_fill", format_func=INITIALIZERS.get, width=360)
fill_row.number_input("Seed for new cells", 0, 2**31 - 1, 0, key="inputs_fill_seed", width=220)

# ---- tokens ---------------------------------------------------------------------------------------
st.header("Tokens")
tok_left, tok_right = st.columns([1, 3])
with tok_left:
    grid_editor.token_editor()
    st.caption("Rename a token (one per row of X).")  # under the grid: its toolbar covers what is just above it


def sentence_controls(prefix: str, example: str) -> None:
    """Type a sentence, and its words become the tokens (of X, or of Y with ``prefix`` "inputs_y")."""
    st.text_input("…or type a sentence", placeholder=example, key=f"{prefix}_sentence")
    sentence_row = row()
    sentence_row.number_input("Embedding seed", 0, 2**31 - 1, 0, key=f"{prefix}_embed_seed", width=220,
                              help="The same word always gets the same vector for a given seed and d_model.")
    sentence_row.checkbox("Add positional encoding", key=f"{prefix}_positional",
                          help="Sinusoidal, as in 'Attention is all you need'.")
    sentence_row.button("Use this sentence", key=f"{prefix}_use_sentence", on_click=use_sentence, args=(prefix,))
    st.caption("Each word or punctuation mark becomes a token with a deterministic N(0, 1) embedding of "
               "width d_model; the weights keep their values.")


with tok_right:
    sentence_controls("inputs", "slow but steady wins the race")


# ---- the matrices ---------------------------------------------------------------------------------
def randomise_controls(name: str) -> None:
    """The popover's controls; they keep their values while it is closed (state.kept)."""
    init, seed, std = f"inputs_{name}_init", f"inputs_{name}_seed", f"inputs_{name}_std"
    st.selectbox("Initialiser", INIT_NAMES, format_func=INITIALIZERS.get,
                 **state.bind(init, state.kept(init, INIT_NAMES[0], INIT_NAMES)))
    st.number_input("Seed", 0, 2**31 - 1, **state.bind(seed, state.kept(seed, 0)))
    if st.session_state[init] == "gaussian":
        st.number_input("std", 0.0, 100.0, **state.bind(std, state.kept(std, 1.0)))
    st.button("Fill", key=f"inputs_{name}_fill", on_click=randomise, args=(name,))


def matrix_section(name: str, title: str, what: str) -> None:
    m = state.config().matrix(name)
    head = row()
    head.markdown(f"**{title}** · {m.shape[0]} × {m.shape[1]}  \n{what}")
    with head.popover("Randomise", icon=":material/casino:", key=f"inputs_{name}_randomise",
                      on_change="rerun") as box:
        if box.open:  # its widgets are built only while it is open
            randomise_controls(name)
    grid_editor.matrix_editor(name)


# ---- where the queries come from ------------------------------------------------------------------
st.header("Queries: from X, or from a second sequence Y")
st.segmented_control(
    "The queries come from", ["self", "cross"], **state.bind("inputs_queries", "cross" if cfg.cross else "self",
                                                              choose_queries),
    required=True, format_func={"self": "X: self-attention", "cross": "Y: cross-attention"}.get,
    help="Self-attention: every token of X asks (Q = X W_Q) and answers (K = X W_K, V = X W_V). Cross-attention: "
         "the tokens of a second sequence Y ask (Q = Y W_Q), the tokens of X answer, as when a translator's decoder "
         "reads the sentence it translates.",
)
if cfg.cross:
    st.caption(f"Q = Y W_Q: {cfg.n_q} queries from Y; K = X W_K and V = X W_V: {cfg.n_seq} keys and values from X. "
               f"The weights are {cfg.n_q} × {cfg.n_seq}. Self-attention is the case Y = X; a causal mask needs it.")
    y_left, y_right = st.columns([1, 3])
    with y_left:
        st.number_input("n_y (rows of Y)", 1, LIMITS.n_seq, **state.bind("inputs_n_y", cfg.n_q, change_query_rows),
                        help=f"Number of queries, at most {LIMITS.n_seq}. New rows are filled as chosen above.")
        grid_editor.token_editor("y_tokens")
        st.caption("Rename a query token (one per row of Y).")
    with y_right:
        sentence_controls("inputs_y", "the cat sleeps")
else:
    st.caption("Every token of X asks and answers. Choose Y to let a second sequence ask instead.")

st.header("Input and weights")
matrix_section("x", "X", "one row per token (n_seq × d_model)")
if cfg.cross:
    matrix_section("y", "Y", "one row per query token (n_y × d_model); Q = Y W_Q")
w1, w2, w3 = st.columns(3)
with w1:
    matrix_section("w_q", "W_Q", "Q = Y W_Q" if cfg.cross else "Q = X W_Q")
with w2:
    matrix_section("w_k", "W_K", "K = X W_K")
with w3:
    matrix_section("w_v", "W_V", "V = X W_V")
st.caption(f"W_O ({cfg.w_o.shape[0]} × {cfg.d_out}) is edited on the Multi-head page"
           + (f", the {cfg.score} score function's weights on Score functions." if cfg.score != "dot" else "."))
st.page_link(registry.STEPS.file, label="See every step recompute", icon=":material/stairs:")
