"""Inputs & weights: pick a preset or type every number of X, W_Q, W_K, W_V yourself; queries from X
(self-attention) or from a second sequence Y (cross-attention)."""

from dataclasses import replace

import streamlit as st

from attn_core import (
    INITIALIZERS,
    LIMITS,
    PRESETS,
    SCORE_WORDS,
    AttentionInputError,
    Config,
    embed,
    positional_encoding,
    tokenize,
    with_dimensions,
    with_query_rows,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _
from attn_ui.shell import frame
from attn_ui.views import compute, step_by_step
from attn_ui.widgets import controls, grid_editor, randomise, text

frame.page_start(registry.INPUTS)

PRESET_OPTION = N_("{title} — {source}")  # a preset in the selectbox
#: the segmented control's choices: value (read by the code) -> what it shows, in English
QUERY_SOURCES = {"self": N_("X: self-attention"), "cross": N_("Y: cross-attention")}
#: the score functions with weights of their own, as the last caption names them
#: why a mask went when the queries changed sequence, by the mask that went ({page}: the Masking page)
MASK_GONE = {
    "causal": N_("The causal mask was made for queries and keys of one sequence, so there is no mask now; {page} "
                 "offers padding and a custom mask for Y."),
    "custom": N_("The custom mask was made for queries and keys of one sequence, so there is no mask now; {page} "
                 "offers padding and a custom mask for Y."),
}

FILL_SEED = "inputs_fill_seed"  # the seed box of new cells (controls.seed_box)
now = i18n.translator()  # for the options' format_func (called outside the run too): this run's language


def row() -> st.delta_generator.DeltaGenerator:
    """Elements side by side, bottoms aligned: one container (st.columns would send one more per column, and the
    browser redraws every element on every edit)."""
    return st.container(horizontal=True, vertical_alignment="bottom")


def size_box(where: st.delta_generator.DeltaGenerator, label: str, key: str, size: int,
             help_text: str) -> str | None:
    """One of the sizes, in ``where``: a whole-number box (controls.whole_number_input) holding the configuration's
    ``size``, or while a change of the sizes is refused what was typed (:func:`sizes_refused`: as every typed box,
    controls.whole_box, it keeps what was typed); a change goes through :func:`change_dimensions`. Returns the size in
    use as the refusal says it ("n_seq 3") while the box holds something else, else None."""
    typed = refused[0].get(key, size) if (refused := sizes_refused()) else size
    controls.whole_number_input(label, where=where, help=help_text,
                                **state.bind(key, None if typed is None else float(typed), change_dimensions))
    return None if typed == size else f"{label} {size}"


def judged_against(cfg: Config) -> tuple:
    """What a change of the sizes is judged against besides the sizes typed (the shapes, the heads, the score, RoPE):
    while it stays the same, a refusal of the sizes holds."""
    return (cfg.x.shape, cfg.w_q.shape, cfg.w_k.shape, cfg.w_v.shape, cfg.w_o.shape, cfg.n_q, cfg.n_heads,
            cfg.n_kv_heads, cfg.score, cfg.rope)


def sizes_refused() -> tuple[dict, list[AttentionInputError]] | None:
    """The sizes typed that :func:`change_dimensions` refused ({box key: what it held}) and why (each box's refusal:
    :func:`each_refusal`), while the
    configuration is the one they were refused for; a change from elsewhere (a preset, Undo, RoPE on Modern
    attention) lets them go, and the boxes show its sizes."""
    refusal = st.session_state.get(state.DIMS_REFUSED)
    if refusal is None or refusal[0] != judged_against(state.config()):
        st.session_state.pop(state.DIMS_REFUSED, None)
        return None
    return refusal[1:]


# Both callbacks do nothing when their widget holds what the configuration already has. Streamlit also calls them when
# the browser sends this page's widgets back after a run of another page forgot them (a cell committed after a click
# on another page comes in a run of this page: attn_ui.shell.frame.follow_click): reloading the preset there put
# the preset back over the learner's numbers, and each resize drew every grid anew, dropping the edit that came.


def choose_preset() -> None:
    chosen = st.session_state["inputs_preset"]
    if chosen is not None and chosen != st.session_state[state.PRESET]:  # a selectbox changes only to another one
        state.load(chosen)


def fill_seed() -> int:
    """The seed new cells are drawn with: the box's, or while it holds what is refused the last one it took."""
    return controls.whole_in_use(FILL_SEED, 0, 0, controls.SEED_HIGH)[0]


SIZES = ("inputs_n_seq", "inputs_d_model", "inputs_d_qk", "inputs_d_k", "inputs_d_v")  # the size boxes' keys


def change_dimensions() -> None:
    cfg, ss = state.config(), st.session_state
    d_k = ss.get("inputs_d_k") if cfg.score == "additive" else cfg.w_k.shape[1]
    if (ss["inputs_n_seq"], ss["inputs_d_model"], ss["inputs_d_qk"], d_k, ss["inputs_d_v"]) == (
            cfg.n_seq, cfg.d_model, cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]):
        ss.pop(state.DIMS_REFUSED, None)  # the sizes in use typed back: nothing refused any more
        return  # the sizes it has (the inputs hold floats: 3.0 == 3): nothing to change (see above)
    typed = {"n_seq": ss["inputs_n_seq"], "d_model": ss["inputs_d_model"], "d_qk": ss["inputs_d_qk"],
             "d_k": d_k if cfg.score == "additive" else None, "d_v": ss["inputs_d_v"]}
    try:
        new = resized(cfg, typed)
    except AttentionInputError as err:  # said under the sizes, which keep what was typed (state.DIMS_REFUSED)
        ss[state.DIMS_REFUSED] = (judged_against(cfg), {k: ss[k] for k in SIZES if k in ss},
                                  each_refusal(cfg, typed, err))
        return
    ss.pop(state.DIMS_REFUSED, None)
    if new.n_heads != cfg.n_heads:  # always 2 or more heads before: they became 1
        state.notify(_("{n} heads no longer divide the widths, so the configuration now has 1 head.").format(
            n=cfg.n_heads))
    state.set_config(new)


def resized(cfg: Config, sizes: dict) -> Config:
    """``cfg`` with the ``sizes`` of the boxes (n_seq, d_model, d_qk, d_k: W_K's own with an additive score, else
    None, and d_v), or AttentionInputError for the first size refused."""
    if cfg.score == "additive" and sizes["d_k"] is None:  # its box left empty (the core takes None as following d_q)
        raise AttentionInputError(N_("{what} holds no number that can be read: type a whole number."),
                                  what=N_("d_k (columns of W_K)"))
    return with_dimensions(cfg, **sizes, init=st.session_state["inputs_fill"], seed=fill_seed())


def each_refusal(cfg: Config, typed: dict, first: AttentionInputError) -> list[AttentionInputError]:
    """Every size box's refusal, in the boxes' order: the core stops at the first size it refuses (``first``), so two
    boxes refused named only the first. Each box changed is judged alone (the others at the sizes in use) and its
    refusal said once; ``first`` stays (it may be a refusal of the sizes together)."""
    in_use = {"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_qk": cfg.w_q.shape[1],
              "d_k": cfg.w_k.shape[1] if cfg.score == "additive" else None, "d_v": cfg.w_v.shape[1]}
    found = []
    for name, value in typed.items():
        if value != in_use[name]:
            try:
                resized(cfg, {**in_use, name: value})
            except AttentionInputError as err:
                found.append(err)
    said = [str(err) for err in found]
    return found if str(first) in said else [first, *found]


#: the most characters of a sentence box read (controls.text_box): the 256 tokens of n_seq's cap, words of a few
#: letters each
SENTENCE_MOST = 4_000


#: the key of what "Use this sentence" last refused ({prefix}: "inputs" or "inputs_y"), said once under its button
SENTENCE_REFUSED = "{prefix}_sentence_refused"


def refuse_sentence(prefix: str, message: str) -> None:
    """Keep why the sentence was not used, for :func:`sentence_controls` to say under the button (under the page's
    title, state.notify's place, it was 1,500 px above the button, out of view: a reviewer saw nothing happen)."""
    st.session_state[SENTENCE_REFUSED.format(prefix=prefix)] = message


def use_sentence(prefix: str = "inputs", example: str = "") -> None:
    """on_click: the sentence typed (``prefix`` "inputs" for X, "inputs_y" for Y; ``example``, the box's first
    text) becomes tokens with embeddings: the last one within :data:`SENTENCE_MOST` characters, as the box says."""
    ss, cfg = st.session_state, state.config()
    tokens = tokenize(controls.text_in_use(f"{prefix}_sentence", example, SENTENCE_MOST)[0])
    if not tokens:
        refuse_sentence(prefix, _("The sentence has no words to turn into tokens."))
        return
    if len(tokens) > LIMITS.n_seq:  # more than the cap: always several
        refuse_sentence(prefix, _("The sentence has {n} tokens; the cap is {cap}.").format(n=len(tokens),
                                                                                         cap=LIMITS.n_seq))
        return
    seed = controls.whole_in_use(f"{prefix}_embed_seed", 0, 0, controls.SEED_HIGH)[0]  # refused: the one in use
    rows = embed(tokens, cfg.d_model, seed=seed)  # [n_tokens, d_model]
    if ss[f"{prefix}_positional"]:
        rows = rows + positional_encoding(len(tokens), cfg.d_model)
    try:
        if prefix == "inputs_y":
            new = replace(with_query_rows(cfg, len(tokens)), y_tokens=tuple(tokens), y=rows)
        else:
            new = replace(with_dimensions(cfg, n_seq=len(tokens), d_model=cfg.d_model, d_qk=cfg.w_q.shape[1],
                                          d_v=cfg.w_v.shape[1], d_k=cfg.w_k.shape[1]), tokens=tuple(tokens), x=rows)
    except AttentionInputError as err:
        refuse_sentence(prefix, i18n.error_text(err))
        return
    what = state.change(N_("Y made from your sentence") if prefix == "inputs_y" else N_("X made from your sentence"))
    if message := state.set_config(new, what=what):  # Undo names it (its sizes changing said "dimensions changed")
        refuse_sentence(prefix, message)


def choose_queries() -> None:
    """on_change: queries from X (self-attention) or from Y (cross-attention)."""
    mask_before = state.config().mask_kind
    if message := state.set_cross(st.session_state["inputs_queries"] == "cross"):
        state.notify(message)
    elif state.config().mask_kind != mask_before:
        state.notify(_(MASK_GONE.get(mask_before, MASK_GONE["causal"])).format(page=_(registry.MASKING.title)))


def change_query_rows() -> None:
    ss = st.session_state
    try:
        new = with_query_rows(state.config(), ss["inputs_n_y"], init=ss["inputs_fill"], seed=fill_seed())
    except AttentionInputError as err:
        state.notify(_("Rows of Y not changed: {message}").format(message=i18n.error_text(err)))
        return
    if message := state.set_config(new):
        state.notify(message)


def sentence_controls(prefix: str, example: str) -> None:
    """Type a sentence, and its words become the tokens (of X, or of Y with ``prefix`` "inputs_y"). The box starts
    with ``example``, a sentence that works as it is (a placeholder would look typed, and then hold no words)."""
    key = f"{prefix}_sentence"
    # what is pasted stays in the box; over the limit: said, and the button reads the last sentence within it
    controls.text_box(_("…or type a sentence"), key, example, SENTENCE_MOST,
                      lambda typed: _("“{button}” still reads the last sentence within the limit: {text}.").format(
                          button=_("Use this sentence"), text=controls.quoted_text(typed)))
    sentence_row = row()
    controls.seed_box(_("Embedding seed"), f"{prefix}_embed_seed", where=sentence_row, width=220,
                      help=_("The same word always gets the same vector for a given seed and d_model."))
    sentence_row.checkbox(_("Add positional encoding"), key=f"{prefix}_positional",
                          help=_("Sinusoidal, as in 'Attention is all you need'."))
    sentence_row.button(_("Use this sentence"), key=f"{prefix}_use_sentence", on_click=use_sentence,
                        args=(prefix, example))
    if refused := st.session_state.pop(SENTENCE_REFUSED.format(prefix=prefix), None):  # the button's, once
        st.warning(text.md_escape(refused), icon=":material/warning:")
    st.caption(_("Each word or punctuation mark becomes a token (in Chinese, written without spaces, each "
                 "character) with a deterministic N(0, 1) embedding of width d_model; the weights keep their values."))


def matrix_section(name: str, title: str, what: str) -> None:
    """A matrix's grid under its title, shape and ``what`` (in the learner's language), its Randomise popover under
    it: above it, the grid's toolbar (shown on hover, at the grid's top right) covered the popover's button in a
    third of the page."""
    m = state.config().matrix(name)
    st.markdown(f"**{title}** · {m.shape[0]} × {m.shape[1]}  \n{what}")
    grid_editor.matrix_editor(name)
    randomise.popover_of(name, "inputs")


def result() -> None:
    """What the grids above give: head 0's attention weights and the layer's output, recomputed on every edit."""
    try:
        trace = compute.trace(state.config())
    except AttentionInputError as err:  # the grids stay editable: say what is wrong, here
        st.error(i18n.error_text(err), icon=":material/error:")
        return
    step_by_step.show_result(trace, state.config(), prefix="inputs")


cfg = state.config()

# ---- preset ---------------------------------------------------------------------------------------
preset = st.session_state[state.PRESET]  # None: the configuration came from a link or a file
edited = state.edited_since_preset()
with row():
    st.selectbox(
        _("Start from a worked example"), list(PRESETS), **state.bind("inputs_preset", preset, choose_preset),
        format_func=lambda k: now(PRESET_OPTION).format(title=now(PRESETS[k].title), source=now(PRESETS[k].source)),
        # the same text on every run of a language: Streamlit keeps the choice by its text, so a text that changed
        # would read as a new choice
        placeholder=_("A configuration from a link or a file: pick a preset to start over"),
    )
    st.button(_("Reset to preset"), key="inputs_reset", on_click=state.load, args=(preset,),
              disabled=not (edited or state.holds_refused()),  # a refused value in a grid: a way out of it
              help=_("Throw away your edits and reload the preset (Undo in the sidebar brings them back)."))
# one container, whatever it holds: a note that comes or goes above the grids would move them, and the browser would
# draw them anew, losing the cell a learner just selected (the first edit after a preset adds "Edited")
with st.container():
    if preset is not None:
        st.caption(_(PRESETS[preset].note))
    if edited:
        st.caption(_(":material/edit: **Edited**: your numbers differ from this preset. *Reset to preset* brings the "
                     "tutorial's values back; *Undo* in the sidebar takes back one change at a time."))

# ---- the matrices, and what they give -----------------------------------------------------------
st.header(_("X and the weights"))
matrix_section("x", "X", _("one row per token (n_seq × d_model)"))
if cfg.cross:
    matrix_section("y", "Y", _("one row per query token (n_y × d_model); Q = Y W_Q"))
w1, w2, w3 = st.columns(3)
with w1:
    matrix_section("w_q", "W_Q", "Q = Y W_Q" if cfg.cross else "Q = X W_Q")
with w2:
    matrix_section("w_k", "W_K", "K = X W_K")
with w3:
    matrix_section("w_v", "W_V", "V = X W_V")
if cfg.n_kv_heads:
    st.caption(_("Grouped-query attention (set on Modern attention): W_Q holds the {n} query heads ({d_model} × {n}·"
                 "{d_k} = {d_model} × {q_cols}); W_K and W_V hold the {k} key/value heads they share, so W_K is "
                 "{d_model} × {k}·{d_k} = {d_model} × {k_cols} and W_V {d_model} × {k}·{d_v} = {d_model} × "
                 "{v_cols}.").format(n=cfg.n_heads, k=cfg.kv_heads, d_model=cfg.d_model, d_k=cfg.d_k, d_v=cfg.d_v,
                                     q_cols=cfg.w_q.shape[1], k_cols=cfg.w_k.shape[1], v_cols=cfg.w_v.shape[1]))
if cfg.score != "dot":
    st.caption(_("W_O ({rows} × {cols}) is edited on the {multihead} page, beside the output it makes; the {score} "
                 "score function's weights on {scores}.").format(
        rows=cfg.w_o.shape[0], cols=cfg.d_out, multihead=_(registry.MULTIHEAD.title),
        score=_(SCORE_WORDS[cfg.score]), scores=_(registry.SCORES.title)))
else:
    st.caption(_("W_O ({rows} × {cols}) is edited on the {multihead} page, beside the output it makes.").format(
        rows=cfg.w_o.shape[0], cols=cfg.d_out, multihead=_(registry.MULTIHEAD.title)))

st.header(_("What your numbers give"))
result()
st.page_link(registry.STEPS.file, label=_("See every step recompute"), icon=":material/stairs:")

# ---- dimensions -----------------------------------------------------------------------------------
st.header(_("Dimensions"))
st.caption(_(
    "Caps: n_seq ≤ {n_seq}, d_model ≤ {d_model} (the 768 features of a layer of GPT-2 or BERT and the column of "
    "ones that carries its biases), widths ≤ {width}, heads ≤ {n_heads}, {cells} cells in X and the weights "
    "together. Changing a dimension keeps every value that still fits; new cells are filled as chosen below."
).format(n_seq=LIMITS.n_seq, d_model=LIMITS.d_model, width=LIMITS.width, n_heads=LIMITS.n_heads,
         cells=f"{LIMITS.total_cells:,}"))
dims_row = row()
in_use = [size_box(dims_row, "n_seq", "inputs_n_seq", cfg.n_seq,
                   _("Number of tokens (rows of X), at most {n}.").format(n=LIMITS.n_seq)),
          size_box(dims_row, "d_model", "inputs_d_model", cfg.d_model,
                   _("Width of each token's input vector (columns of X), at most {n}.").format(n=LIMITS.d_model))]
if cfg.score == "additive":  # queries and keys may differ in width
    in_use += [size_box(dims_row, "d_q", "inputs_d_qk", cfg.w_q.shape[1],
                        _("Columns of W_Q. The additive score function lets it differ from W_K's. With several heads "
                          "this is n_heads · d_q. At most {n}.").format(n=LIMITS.width)),
               size_box(dims_row, "d_k", "inputs_d_k", cfg.w_k.shape[1],
                        _("Columns of W_K. With several heads this is n_heads · d_k. At most {n}.").format(
                            n=LIMITS.width))]
elif cfg.n_kv_heads:  # W_K follows W_Q: as many columns per key/value head as W_Q has per query head
    in_use.append(size_box(dims_row, "d_k", "inputs_d_qk", cfg.w_q.shape[1],
                           _("Columns of W_Q: n_heads · d_k. W_K follows with n_kv_heads · d_k columns (grouped-query "
                             "attention). At most {n}.").format(n=LIMITS.width)))
else:
    in_use.append(size_box(dims_row, "d_k", "inputs_d_qk", cfg.w_q.shape[1],
                           _("Columns of W_Q and W_K. With several heads this is n_heads · d_k: each head gets an "
                             "equal slice. At most {n}.").format(n=LIMITS.width)))
in_use.append(size_box(
    dims_row, "d_v", "inputs_d_v", cfg.w_v.shape[1],
    (_("Columns of W_V: n_kv_heads · d_v with grouped-query attention; may differ from W_K's. At most {n}.")
     if cfg.n_kv_heads else
     _("Columns of W_V; may differ from d_k. The output has d_v columns. At most {n}.")).format(n=LIMITS.width)))
if refused := sizes_refused():  # said while the boxes hold what was refused, with the sizes still in use
    in_use = [size for size in in_use if size]
    st.warning(text.md_escape(i18n.sentences(
        _("Dimensions not changed: {message}").format(message=i18n.sentences(*map(i18n.error_text, refused[1]))),
        _("Still using {sizes}.").format(sizes=_(", ").join(in_use)) if in_use else "")),
        icon=":material/warning:")
fill_row = row()
fill_row.selectbox(_("New cells are filled with"), randomise.NAMES, key="inputs_fill", width=360,
                   index=randomise.NAMES.index("xavier_uniform"), format_func=i18n.option_labels(INITIALIZERS))
controls.seed_box(_("Seed for new cells"), FILL_SEED, where=fill_row, width=220)

# ---- tokens ---------------------------------------------------------------------------------------
st.header(_("Tokens"))
tok_left, tok_right = st.columns([1, 3])
with tok_left:
    grid_editor.token_editor()
    st.caption(_("Rename a token (one per row of X)."))  # under the grid: its toolbar covers what is just above it
with tok_right:
    sentence_controls("inputs", "slow but steady wins the race")  # the example: the Korean blog post's (a preset)


# ---- where the queries come from ------------------------------------------------------------------
st.header(_("Queries: from X, or from a second sequence Y"))
st.segmented_control(
    _("The queries come from"), list(QUERY_SOURCES),
    **state.bind("inputs_queries", "cross" if cfg.cross else "self", choose_queries),
    required=True, format_func=lambda v: now(QUERY_SOURCES[v]),
    help=_("Self-attention: every token of X asks (Q = X W_Q) and answers (K = X W_K, V = X W_V). Cross-attention: "
           "the tokens of a second sequence Y ask (Q = Y W_Q), the tokens of X answer, as when a translator's decoder "
           "reads the sentence it translates."),
)
if cfg.cross:
    st.caption(_("Q = Y W_Q: {n_q} queries from Y; K = X W_K and V = X W_V: {n_k} keys and values from X. "
                 "The weights are {n_q} × {n_k}. Self-attention is the case Y = X; a causal mask needs it.").format(
                     n_q=cfg.n_q, n_k=cfg.n_seq))
    y_left, y_right = st.columns([1, 3])
    with y_left:
        controls.whole_number_input(
            _("n_y (rows of Y)"), help=_("Number of queries, at most {n}. New rows are filled as chosen above.").format(
                n=LIMITS.n_seq), **state.bind("inputs_n_y", float(cfg.n_q), change_query_rows))
        grid_editor.token_editor("y_tokens")
        st.caption(_("Rename a query token (one per row of Y)."))
    with y_right:
        sentence_controls("inputs_y", "the cat sleeps")  # the example: the cross-attention preset's Y
else:
    st.caption(_("Every token of X asks and answers. Choose Y to let a second sequence ask instead."))

