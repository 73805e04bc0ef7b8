"""Score functions: how a query and a key make a score (dot product, general, additive), compared on your Q and K,
and where the queries come from (self- or cross-attention)."""

from functools import partial

import numpy as np
import streamlit as st

from attn_core import (
    INITIALIZERS,
    LIMITS,
    SCORE_FUNCTIONS,
    SCORE_MATRICES,
    SCORE_STARTS,
    AttentionInputError,
    whole_size,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import budget
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, score_views, step_by_step
from attn_ui.widgets import controls, grid_editor, heatmap, randomise, text
from attn_ui.widgets.matrix_display import (
    block_markdown,
    formula_markdown,
    heading_markdown,
    matrix_block,
    note_markdown,
)

frame.page_start(registry.SCORES)
# a score function's weights have their grids on this page, by their formulas
in_panel = edit_panel.sidebar(drawn_by_page=SCORE_MATRICES[state.config().score])
edit_panel.hint()

KIND, D_A, QUERY = "scores_kind", "scores_d_a", "scores_query"  # widget keys: the configuration's score function,
# additive's d_a, the query whose scores are made
#: the extra weights of each score function: (name, shape in words, its role)
ROLES = {
    "w_a": ("W_a", "[d_q, n_heads·d_k]", N_("each head's queries are multiplied by its column slice before the dot "
                                            "product with the keys: score = (q W_a) · k. The identity gives back the "
                                            "dot product.")),
    "w_1": ("W_1", "[d_q, n_heads·d_a]", N_("turns each query into d_a features per head.")),
    "w_2": ("W_2", "[d_k, n_heads·d_a]", N_("turns each key into d_a features per head; they are added to the "
                                            "query's and squashed by tanh.")),
    "v_a": ("v_a", "[1, n_heads·d_a]", N_("weighs each head's d_a tanh features into one score.")),
}
SCORE_LATEX = {  # one query row q and one key row k (row vectors, as everywhere in the app)
    "dot": r"q\,k^\top",
    "general": r"q\,W_a\,k^\top",
    "additive": r"\tanh\!\big(q\,W_1 + k\,W_2\big)\,v_a^\top",
}


@budget.cached("score_comparison", slots=budget.EXPLORER_SLOTS)
def comparison(q: np.ndarray, k: np.ndarray, v: np.ndarray, functions: dict, h: int, n_heads: int,
               scale: str | float, mask: np.ndarray | None, lang: str,
               bias: np.ndarray | None = None) -> dict[str, score_views.Scored]:
    """score_views.compare; ``lang``: the language of its messages (Scored.why), so each has its own entries."""
    return score_views.compare(q, k, v, functions, h=h, n_heads=n_heads, scale=scale, mask=mask, bias=bias)


def pick_kind() -> None:
    if message := state.set_score(st.session_state[KIND]):
        state.notify(message, icon=":material/error:", error=True)


def pick_d_a() -> None:
    cfg = state.config()
    try:  # the box holds what was typed ("1e2" as 100, "2.5" as 2.5, None when left empty): refused in words
        d_a = whole_size(N_("d_a (features per head)"), st.session_state[D_A], LIMITS.width // cfg.n_heads,
                         N_("{what}: {value} is under 1; the tanh layer has at least one feature."))
    except AttentionInputError as err:
        state.notify(_("Features per head not changed: {message}").format(message=i18n.error_text(err)),
                     icon=":material/warning:")  # a value refused, the last kept: a warning, as every box says
        return
    if message := state.set_score("additive", d_a):
        state.notify(message, icon=":material/error:", error=True)


def dims(cfg) -> str:
    """The per-head widths in words."""
    return ", ".join([f"d_q = {cfg.d_q}", f"d_k = {cfg.d_k}", *([f"d_a = {cfg.d_a}"] if cfg.d_a else []),
                      *([ngettext("{n} head", "{n} heads", cfg.n_heads).format(n=cfg.n_heads)]
                        if cfg.n_heads > 1 else [])])


with frame.under_panel():  # on a phone right under the panel, where the value is fixed (above the first result)
    grid_editor.pending_errors_banner(registry.SCORES, in_panel=in_panel)
cfg = state.config()
st.markdown(_(
    "Attention gives each key a **score** for each query, divides it by the scale s, and turns each query's row of "
    "scores into weights with softmax. The Transformer scores with a dot product; earlier attention models for "
    "translation used two other **score functions**, each with weights of its own. Choose the one your "
    "configuration uses, edit its weights, and compare all three on your numbers."
))

# ---- 1. the formulas ------------------------------------------------------------------------------
st.header(_("1 · Three ways to score a query against a key"))
d_a = cfg.d_a or cfg.d_k
cols = st.columns([1, 1, 1.3], gap="medium")
scaled = _("scaled:")  # a word of the formula (KaTeX's \text)
cols[0].markdown(block_markdown(  # each function's name, formula(s) and note: one element
    _("**Dot product** (the Transformer, Vaswani et al. 2017)"), formula_markdown(r"\mathrm{score}(q, k) = q\,k^\top"),
    formula_markdown(rf"\text{{{scaled} }} \frac{{q\,k^\top}}{{\sqrt{{d_k}}}}"),
    note_markdown(_("No weights of its own: q and k must have the same width (here {dims}). Divided by √d_k it is the "
                    "Transformer's scaled dot product.").format(dims=text.md_escape(dims(cfg))))))
cols[1].markdown(block_markdown(
    _("**General** (Luong et al. 2015)"), formula_markdown(r"\mathrm{score}(q, k) = q\,W_a\,k^\top"),
    note_markdown((
        _("W_a is d_q × d_k = {d_q} × {d_k}: a learned matrix that lets a query match a key along other "
          "directions than its own. W_a = I is the dot product.") if cfg.n_heads == 1 else
        _("W_a is d_q × d_k = {d_q} × {d_k} per head ({n} heads side by side in one matrix): a learned matrix "
          "that lets a query match a key along other directions than its own. W_a = I is the dot product.")
    ).format(d_q=cfg.d_q, d_k=cfg.d_k, n=cfg.n_heads))))
cols[2].markdown(block_markdown(
    _("**Additive** (Bahdanau et al. 2015, “concat”)"),
    formula_markdown(r"\mathrm{score}(q, k) = \tanh\!\big(q\,W_1 + k\,W_2\big)\,v_a^\top"),
    note_markdown((
        _("W_1 is d_q × d_a = {d_q} × {d_a}, W_2 is d_k × d_a = {d_k} × {d_a}, v_a has d_a = {d_a} numbers: a "
          "small network with one hidden layer of d_a tanh units. q and k may differ in width. With column "
          "vectors, as in the paper: v_aᵀ tanh(W_1ᵀ q + W_2ᵀ k).") if cfg.n_heads == 1 else
        _("W_1 is d_q × d_a = {d_q} × {d_a}, W_2 is d_k × d_a = {d_k} × {d_a}, v_a has d_a = {d_a} numbers per "
          "head ({n} heads side by side in one matrix): a small network with one hidden layer of d_a tanh "
          "units. q and k may differ in width. With column vectors, as in the paper: "
          "v_aᵀ tanh(W_1ᵀ q + W_2ᵀ k).")).format(d_q=cfg.d_q, d_k=cfg.d_k, d_a=d_a, n=cfg.n_heads))))


def tokens_text(tokens: tuple[str, ...], most: int = 8) -> str:
    shown = ", ".join(f"“{text.md_escape(t)}”" for t in tokens[:most])
    return _("{shown}, … ({n} in all)").format(shown=shown, n=len(tokens)) if len(tokens) > most else shown


st.markdown(block_markdown(  # the words after the formulas and the next section's: one element
    _("q and k are one row of Q and of K. Whatever the score function, the scores are then divided by the scale "
      "(yours: {scale}; change it on Scaling), masked, and turned into weights by softmax. Luong and Bahdanau did not "
      "scale their scores.").format(scale=text.scale_text(cfg)),
    # ---- where the queries come from ----
    heading_markdown(_("Queries from another sequence: cross-attention")),
    _("In **self-attention** the queries, the keys and the values all come from one sequence X: Q = X W_Q, "
      "K = X W_K, V = X W_V. In **cross-attention** (the encoder–decoder attention of a translation model) the "
      "queries come from a second sequence Y, the sentence being written, and the keys and values from X, the "
      "sentence being read: Q = Y W_Q. The weights then have one row per token of Y and one column per token of X. "
      "Every score function works the same either way."),
    _("Your configuration uses **cross-attention**: {n_q} queries from Y ({queries}) against {n_k} keys and values "
      "from X ({keys}).").format(n_q=cfg.n_q, queries=tokens_text(cfg.y_tokens), n_k=cfg.n_seq,
                                  keys=tokens_text(cfg.tokens)) if cfg.cross else
    _("Your configuration uses **self-attention**: its {n} tokens of X ({tokens}) are the queries, the keys and the "
      "values.").format(n=cfg.n_seq, tokens=tokens_text(cfg.tokens))))
st.page_link(registry.INPUTS.file, label=_("Choose self- or cross-attention and edit Y on Inputs & weights"),
             icon=":material/edit:")

# ---- 2. the configuration's score function ---------------------------------------------------------
st.header(_("2 · Your score function and its weights"))
st.segmented_control(_("Score function of your configuration"), SCORE_FUNCTIONS,
                     format_func=i18n.option_labels(text.SCORE_NAMES),
                     required=True, **state.bind(KIND, cfg.score, pick_kind),
                     help=_("Part of your configuration. Weights you edited come back when you choose their "
                            "function again."))
cfg = state.config()
if cfg.score == "additive":
    controls.whole_number_input(  # what is typed, as typed ("1e2" is 100): pick_d_a refuses in words
        _("Features per head (d_a)"), width=240, **state.bind(D_A, float(cfg.d_a), pick_d_a),
        help=_("The width of the tanh layer. A new width starts W_1, W_2 and v_a afresh (random, seeded)."))
initializer = i18n.option_labels(INITIALIZERS)  # an initialiser's name as the learner reads it, in this run's language


def how_they_start(cfg) -> str:
    """How the score function's weights start (attn_core.SCORE_STARTS), and whether they still are so."""
    fresh = state.default_score_weights(cfg, cfg.score, cfg.d_a or None)
    unchanged = all(np.array_equal(cfg.matrix(name), w) for name, w in fresh.items())
    per_head = _("each head's block of columns drawn on its own") if cfg.n_heads > 1 else ""
    if cfg.score == "general":
        start = _("W_a starts as {init}, seed {seed}, not as the identity, which would give the dot product's "
                  "numbers back (Randomise offers it: “{identity}”).").format(
            init=initializer(SCORE_STARTS["w_a"][0]), seed=SCORE_STARTS["w_a"][1], identity=initializer("identity"))
    else:
        # Kaiming uniform's limit √(6 / fan_in) of v_a as drawn, one row [1, d_a] (fan_in 1: attn_core.SCORE_STARTS),
        # beside the one of a layer from d_a features to one score (fan_in d_a), which would draw smaller numbers
        limit, layer = np.sqrt(6.0), np.sqrt(6.0 / (cfg.d_a or cfg.d_k))
        start = _("W_1, W_2 and v_a start as {how}; v_a's numbers lie between −{limit} and {limit}: √6, Kaiming's "
                  "√(6 / fan-in) of v_a drawn as one row (1 × d_a), wider than the ±{layer} of a layer from the d_a "
                  "features to one score, so that the scores are not all near 0.").format(
            how=score_views.start_text("w_1", "w_2", "v_a"), limit=f"{limit:.3g}", layer=f"{layer:.3g}")
    return i18n.sentences(start, per_head and _("With {n} heads: {how}.").format(n=cfg.n_heads, how=per_head),
                          _("Yours are still those numbers.") if unchanged else
                          _("Yours differ from them now (edited, randomised, or kept through a change of heads)."))


for name in SCORE_MATRICES[cfg.score]:
    label, shape, role = ROLES[name]
    m = cfg.matrix(name)
    top = st.container(horizontal=True, vertical_alignment="bottom")
    top.markdown(_("{matrix}: {role}").format(matrix=score_views.shape_text(label, m, shape), role=_(role)))
    init, seed = SCORE_STARTS[name]
    randomise.popover_of(name, "scores", where=top, init=init, seed=seed, per_head=True)
    with st.expander(_("Edit {name}").format(name=label), expanded=m.size <= 64, key=f"scores_edit_{name}",
                     on_change="rerun") as box:
        if box.open:  # the grid is built only while it is open
            grid_editor.matrix_editor(name)
cfg = state.config()
st.markdown(block_markdown(  # the note under the weights (none for the dot product) and the next heading: one element
    note_markdown(how_they_start(cfg) if cfg.score != "dot" else
                  _("The dot product has no weights of its own. Choose general or additive to see and edit theirs.")),
    # ---- 3. the three compared ----
    heading_markdown(_("3 · The three side by side, on your Q and K"))))
head = controls.head_selector(cfg.n_heads, "scores")
t_head = compute.current_trace().heads[head]  # the configuration's own Q, K, V of this head (the cached trace)
q, k, v = t_head.q, t_head.k, t_head.v
mask = t_head.mask  # the mask the head used: the configuration's and a sliding window together
defaults = state.default_score_weights(cfg, "general") | state.default_score_weights(cfg, "additive")
functions = score_views.functions(cfg, defaults)
scored = comparison(q, k, v, functions, head, cfg.n_heads, cfg.scale, mask, i18n.language(),
                    t_head.bias)  # the head's score bias: a given one and ALiBi's
if cfg.modern:
    st.caption(i18n.sentences(
        _("With your modern options the three run on this head's q and k as they were scored (QK-normed and rotated "
          "by RoPE when those are on), its mask (with the sliding window) and its score bias (with ALiBi's).")
        if cfg.rope is not None or cfg.qk_norm or cfg.window is not None or cfg.alibi else "",
        _("The soft cap is left out of this comparison: every function's scaled scores go to the softmax as they "
          "are.") if cfg.softcap is not None else "",
        _("Grouped-query heads and RoPE take the dot product only: as your configuration the other two are "
          "refused; here they are computed on this one head's numbers, for comparison.")
        if cfg.n_kv_heads or cfg.rope is not None else ""))
    if cfg.n_kv_heads or cfg.rope is not None:
        st.page_link(registry.MODERN.file, label=_("To choose another score function, turn grouped-query heads and "
                                                   "RoPE off on Modern attention"), icon=":material/bolt:")
q_labels, k_labels = text.query_labels(cfg), text.token_labels(cfg)
several = cfg.n_heads > 1
rows_of = _("rows of Y W_Q") if cfg.cross else _("rows of Q = X W_Q")
st.caption(i18n.sentences(
    (_("The same queries (head {head}) ({rows}) and keys (rows of K = X W_K), the same scale ({scale}) and mask; only "
       "the score function changes.") if several else
     _("The same queries ({rows}) and keys (rows of K = X W_K), the same scale ({scale}) and mask; only the score "
       "function changes.")).format(head=head, rows=rows_of, scale=text.scale_text(cfg)),
    *(_("{name}: {source}.").format(name=score_views.title(kind), source=source)
      for kind, (_fn, source) in functions.items() if source),
))
precision, masked = controls.precision(), None if mask is None else ~mask
shown = [s for s in scored.values() if s.trace is not None]
kinds = controls.one_at_a_time(_("Score function shown"), [s.kind for s in shown], key="scores_kind_shown",
                               large=any(step_by_step.in_blocks(s.trace.weights) for s in shown),
                               format_func=score_views.title)
shown = [s for s in shown if s.kind in kinds]
places = controls.side_by_side([heatmap.heatmap_width(s.trace.weights, q_labels, precision) for s in shown])


def weights_block(s: score_views.Scored) -> None:
    """The weights of score function ``s.kind``, titled with its name (and "yours" for the configuration's)."""
    title = {(False, False): "{name}", (True, False): N_("{name} · yours"),
             (False, True): N_("{name} (head {head})"), (True, True): N_("{name} · yours (head {head})")}[
        s.kind == cfg.score, several]
    matrix_block(_(title).format(name=score_views.title(s.kind), head=head),
                 rf"\mathrm{{softmax}}\big({SCORE_LATEX[s.kind]} / s\big)", s.trace.weights, q_labels, k_labels,
                 kind="weights", y_title=_("query"), x_title=_("key"), masked=masked)


if scored[cfg.score].trace is not None:  # yours, on a phone
    frame.also_under_panel(partial(weights_block, scored[cfg.score]))
for place, s in zip(places, shown, strict=True):
    with place:
        weights_block(s)
for s in scored.values():
    if s.trace is None:
        st.info(_("{name}: not shown: {why}.").format(name=score_views.title(s.kind), why=text.md_escape(s.why)),
                icon=":material/info:")
table = score_views.summary(scored, cfg.score, precision)
st.dataframe(table, hide_index=True, height=35 * (table.num_rows + 1) + 3)
st.markdown(block_markdown(  # the table's note and the next heading: one element
    note_markdown(i18n.sentences(
        _("Entropy of a row of weights: 0 when one key takes all the weight, ln n_k when the weights are uniform "
          "(ln {n} = {ln_n} here). General with W_a = I gives exactly the dot product's weights.").format(
            n=cfg.n_seq, ln_n=f"{np.log(cfg.n_seq):.4g}"),
        _("A query whose every key is masked has no weights to measure: its row is left out of the mean.")
        if cfg.mask_kind != "none" else "")),
    # ---- 4. one score, made ----
    heading_markdown(_("4 · How one query's scores are made"))))
mine = scored[cfg.score]
if mine.trace is None:
    st.error(_("Your score function cannot be computed here: {why}").format(why=text.md_escape(mine.why)),
             icon=":material/error:")
    st.stop()
t = mine.trace
i = min(int(st.session_state[state.QUERY]), cfg.n_q - 1)  # the query the pages share
i = st.selectbox(_("Query token"), list(range(cfg.n_q)), format_func=q_labels.__getitem__, width=320,
                 **state.bind(QUERY, i, state.copy_to(state.QUERY, QUERY)))
label = text.md_escape(q_labels[i])
if cfg.score == "additive":
    st.markdown((
        _("For query **{label}** (head {head}), each key j gets d_a = {d_a} features tanh(q W_1 + k_j W_2), one row of "
          "the heatmap per key; the score is that row times v_a: the sum of each feature times its number in v_a.")
        if several else
        _("For query **{label}**, each key j gets d_a = {d_a} features tanh(q W_1 + k_j W_2), one row of the heatmap "
          "per key; the score is that row times v_a: the sum of each feature times its number in v_a.")
    ).format(label=label, head=head, d_a=t.v_a.shape[0]))
    feats = t.features(i)  # [n_k, d_a]: one query only
    left, right = controls.side_by_side([heatmap.heatmap_width(feats, k_labels, precision),
                                         heatmap.heatmap_width(t.v_a[None, :], ["v_a"], precision)])
    with left:
        matrix_block(_("Features of query {label}").format(label=label), r"\tanh\!\big(q\,W_1 + K\,W_2\big)",
                     feats, k_labels, text.dim_labels(feats.shape[1]), y_title=_("key"), x_title=_("feature"))
    with right:
        matrix_block("v_a", "", t.v_a[None, :], ["v_a"], text.dim_labels(t.v_a.shape[0]), x_title=_("feature"))
    st.dataframe(score_views.additive_table(t, i, k_labels, precision), hide_index=True)
else:
    row, name = (t.q[i], "q") if cfg.score == "dot" else (t.q_a[i], "q W_a")
    how = {
        ("dot", False): N_("For query **{label}**, the score of key j is the dot product of q with row j of K."),
        ("dot", True): N_("For query **{label}** (head {head}), the score of key j is the dot product of q with row j "
                          "of K."),
        ("general", False): N_("For query **{label}**, q is first multiplied by W_a; the score of key j is the dot "
                               "product of q W_a with row j of K."),
        ("general", True): N_("For query **{label}** (head {head}), q is first multiplied by W_a; the score of key j "
                              "is the dot product of q W_a with row j of K."),
    }[cfg.score, several]
    st.markdown(_(how).format(label=label, head=head))
    left, right = controls.side_by_side([heatmap.heatmap_width(row[None, :], [name], precision),
                                         heatmap.heatmap_width(t.k, k_labels, precision)])
    with left:
        matrix_block(_("{name} of query {label}").format(name=name, label=label), r"q\,W_a" if name != "q" else "q",
                     row[None, :], [name], text.dim_labels(row.shape[0]), x_title=_("column"))
    with right:
        matrix_block(_("K (head {head})").format(head=head) if several else "K", r"K = X\,W_K", t.k, k_labels,
                     text.dim_labels(t.k.shape[1]), y_title=_("key"), x_title=_("column"))
    st.dataframe(score_views.dot_table(t, i, k_labels, precision), hide_index=True)
st.caption(_("The score ÷ s is −∞ where the mask forbids the key; its weight is then 0."))
