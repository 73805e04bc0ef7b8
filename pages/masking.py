"""Masking: which keys each query may attend to, what the mask does to scores and weights, and why
softmax subtracts the row maximum."""

import zlib
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from attn_core import MASK_KINDS, AttentionInputError, additive_mask, analysis, causal_mask
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, masking_views, step_by_step
from attn_ui.widgets import charts, controls, grid_editor, heatmap, text
from attn_ui.widgets.matrix_display import (
    block_markdown,
    formula_markdown,
    heading_markdown,
    matrix_block,
    note_markdown,
)

frame.page_start(registry.MASKING)
in_panel = edit_panel.sidebar()  # X and the weights, beside what they do here
edit_panel.hint()

KIND, PAD, FACTOR = "masking_kind", "masking_pad", "masking_factor"  # widget keys
KIND_LABELS = {"none": N_("none"), "causal": N_("causal"), "padding": N_("padding"), "custom": N_("custom")}
KIND_CAPTIONS = {
    "none": N_("every query sees every key"),
    "causal": N_("a token sees itself and earlier ones (as in a decoder)"),
    "padding": N_("no query sees a padding token"),
    "custom": N_("tick the pairs yourself"),
}
NO_CAUSAL = N_("Causal is not offered: with cross-attention the queries (rows of Y) and the keys (rows of X) come "
               "from two sequences, so “the tokens before it” has no meaning. Padding and custom masks work as usual.")
FACTORS = [1, 10, 100, 1000, 10_000]


def set_kind() -> None:
    state.update_config(mask_kind=st.session_state[KIND])


def set_padding() -> None:
    chosen = set(st.session_state[PAD])
    state.update_config(is_pad=tuple(i in chosen for i in range(state.config().n_seq)))


def set_custom(mask: np.ndarray) -> None:
    state.update_config(custom_mask=mask)


def custom_mask_editor(mask: np.ndarray, queries: list[str], keys: list[str], *, causal: bool = True) -> None:
    """A query × key grid of checkboxes (ticked = may attend), committed as the configuration's custom mask.

    ``mask`` is bool [n_q, n_k]: rows ``queries``, columns ``keys``. ``causal``: offer "Start from causal" (only
    for self-attention). The key changes with the mask, so the grid always starts from the configuration's values.
    """
    key = f"masking_custom_{mask.shape[0]}x{mask.shape[1]}_{zlib.crc32(np.packbits(mask).tobytes()):08x}"
    grid = pd.DataFrame(mask, index=pd.Index(queries, name=_("query ↓ key →")), columns=keys)
    edited = st.data_editor(
        grid, key=key, num_rows="fixed", width="content",
        column_config={c: st.column_config.CheckboxColumn(c, default=True) for c in keys},
    )
    new = edited.to_numpy(dtype=bool)  # [n_q, n_k]
    if not np.array_equal(new, mask):
        set_custom(new)
        st.rerun()  # draw the grid again under the key of the new mask
    row = st.container(horizontal=True)
    row.button(_("Allow every pair"), on_click=set_custom, args=(np.ones(mask.shape, dtype=bool),))
    if causal:
        row.button(_("Start from causal"), on_click=set_custom, args=(causal_mask(mask.shape[0]),))
    row.button(_("Block every pair"), on_click=set_custom, args=(np.zeros(mask.shape, dtype=bool),))


cfg = state.config()
st.markdown(_(
    "A mask says which keys each query may attend to. Before softmax, the scores of forbidden pairs are set "
    "to −∞ (by adding a matrix M of 0 and −∞), so exp gives exactly 0 there and the weights of the allowed "
    "keys still sum to 1. The mask you choose here is part of your configuration: Step by step and "
    "Multi-head use it too."
))
with frame.under_panel():  # on a phone right under the panel, where the value is fixed (above the first result)
    grid_editor.pending_errors_banner(registry.MASKING, in_panel=in_panel)
queries, labels = text.query_labels(cfg), text.token_labels(cfg)  # rows (queries) and columns (keys: X's tokens)

kinds = [k for k in MASK_KINDS if not (cfg.cross and k == "causal")]  # causal needs one sequence
st.radio(_("Mask"), kinds, **state.bind(KIND, cfg.mask_kind, set_kind), horizontal=True,
         format_func=i18n.option_labels(KIND_LABELS), captions=[_(KIND_CAPTIONS[k]) for k in kinds])
if cfg.cross:
    st.caption(_(NO_CAUSAL))
if cfg.mask_kind == "padding":
    st.multiselect(_("Padding tokens of X (the keys)") if cfg.cross else _("Padding tokens"), list(range(cfg.n_seq)),
                   format_func=lambda i: labels[i],
                   **state.bind(PAD, [i for i, p in enumerate(cfg.is_pad) if p], set_padding),
                   placeholder=_("Choose the tokens that are padding"))
elif cfg.mask_kind == "custom":
    st.markdown(_("**Custom mask**: ticked = the query (row) may attend to the key (column)."))
    custom_mask_editor(cfg.custom_mask, queries, labels, causal=not cfg.cross)

trace = compute.current_trace()
head = controls.head_selector(cfg.n_heads, "masking")
t = trace.heads[head]
u = t if cfg.mask_kind == "none" and cfg.window is None else (  # unmasked already: the same trace, not looked up again
    compute.trace(replace(cfg, mask_kind="none", window=None)).heads[head])  # no mask kind, no sliding window
mask = np.ones(t.weights.shape, dtype=bool) if t.mask is None else t.mask  # [n_q, n_k]
per_head = cfg.n_heads > 1  # titles name the head
score = text.SCORE_LATEX[cfg.score]  # QK^T, or the configuration's other score function
shape = f"{cfg.n_q} × {cfg.n_seq}"

if t.fully_masked_rows:
    names = ", ".join(text.md_escape(queries[i]) for i in t.fully_masked_rows)
    st.info(
        ngettext("**Every key is masked for query {names}.** Its scores are all −∞, and softmax of such a row would "
                 "be 0 / 0 = NaN. Here it gets weights of all zeros (row sum 0) and an output row of zeros: the query "
                 "receives nothing.",
                 "**Every key is masked for queries {names}.** Their scores are all −∞, and softmax of such a row "
                 "would be 0 / 0 = NaN. Here each gets weights of all zeros (row sum 0) and an output row of zeros: "
                 "these queries receive nothing.", len(t.fully_masked_rows)).format(names=names),
        icon=":material/block:",
    )



def masked_weights() -> None:
    """The masked weights, grey where masked, and each row's sum: what an edit of X or a weight and the mask change."""
    st.markdown(block_markdown(  # as a matrix block's: title, formula and note in one element
        (_("**Weights, masked (head {head})** · shape {shape}, and each row's sum") if per_head else
         _("**Weights, masked** · shape {shape}, and each row's sum")).format(head=head, shape=shape),
        formula_markdown(rf"\mathrm{{softmax}}({score} / s{plus_b} + M)"),
        note_markdown(_("Grey = masked, weight exactly 0; a small weight is pale blue. Each row sums to 1, "
                        "or to 0 when every key is masked."))))
    charts.show_chart(masking_views.weights_with_row_sums(t.weights, t.mask, queries, labels,
                                                          precision=controls.precision()),
                      name=_("Weights, masked, and each row's sum"))


st.header(_("The mask"))
left, right = controls.pair(mask.astype(float), additive_mask(mask), queries)  # the mask's two forms: both
with left:
    st.markdown(block_markdown(_("**Boolean mask** · shape {shape}").format(shape=shape), note_markdown(
        _("1 = may attend; grey 0 = masked. {how}").format(how=masking_views.how_built(cfg)))))
    charts.show_chart(masking_views.mask_heatmap(mask, queries, labels, i18n.language()), name=_("Boolean mask"))
with right:
    # the words in the formula are translated, its layout is not
    m_formula = r"M_{ij} = 0 \text{ " + _("if allowed,") + r" } -\infty \text{ " + _("if masked") + "}"
    st.markdown(block_markdown(_("**{title}** · shape {rows} × {cols}").format(  # as matrix_block writes a block
        title=_("Additive mask M"), rows=mask.shape[0], cols=mask.shape[1]), formula_markdown(m_formula)))
    charts.show_chart(masking_views.additive_mask_heatmap(mask, queries, labels, controls.precision(),
                                                          i18n.language()))


if t.bias is not None:
    st.header(_("The score bias: the mask's finite sibling"))
    st.markdown(_(
        "This configuration adds a score bias B to the scaled scores before the mask (a T5 layer's learned relative "
        "positions: one number per head and distance between query and key). The mask adds −∞ where a key is ruled "
        "out; the bias adds a finite number, from {lo} to {hi} in this head: it favours or penalises a key and never "
        "rules it out. Below, the scores before the mask already include B.").format(
        lo=f"{float(t.bias.min()):.4g}", hi=f"{float(t.bias.max()):.4g}") if not cfg.alibi else i18n.sentences(
        step_by_step.bias_words(trace, cfg, head),
        _("In this head B runs from {lo} to {hi}. Below, the scores before the mask already include B.").format(
            lo=f"{float(t.bias.min()):.4g}", hi=f"{float(t.bias.max()):.4g}")))
    matrix_block(_("Score bias B (head {head})").format(head=head) if per_head else _("Score bias B"),
                 "B", t.bias, queries, labels, y_title=_("query"), x_title=_("key"))

st.header(_("Scores before and after the mask"))
BEFORE, AFTER = N_("Before the mask"), N_("After the mask")  # one of each pair at a time when drawn in blocks
sides = controls.one_at_a_time(_("Side shown"), [BEFORE, AFTER], large=step_by_step.in_blocks(t.weights),
                               key="masking_side_shown")


def slots(a: np.ndarray, b: np.ndarray, extra_b: int = 0) -> list:
    """Where a pair's two heatmaps go: side by side, or the one shown (None for the other)."""
    return controls.pair_shown(a, b, queries, sides, (BEFORE, AFTER), extra_b)


plus_b = "" if t.bias is None else " + B"  # the bias, when there is one, is part of the scores the mask meets
if cfg.rope is not None or cfg.qk_norm:  # the scores of the normed / rotated q and k (Step by step, 1a, 1b)
    score = r"\tilde Q \tilde K^\top" if cfg.score == "dot" else score
scaled = rf"{score} / {t.divisor:.4g}"
if t.softcap is not None:  # the soft cap comes before the bias and the mask
    scaled = rf"{t.softcap:g} \tanh\big({scaled} / {t.softcap:g}\big)"
if t.bias is None:
    before_title = _("Scaled scores (head {head})") if per_head else _("Scaled scores")
    after_title = _("Scaled scores + M (head {head})") if per_head else _("Scaled scores + M")
else:
    before_title = _("Scaled scores + B (head {head})") if per_head else _("Scaled scores + B")
    after_title = _("Scaled scores + B + M (head {head})") if per_head else _("Scaled scores + B + M")
domain = heatmap.shared_domain(t.biased, t.masked)
left, right = slots(t.biased, t.masked)
if left:
    with left:
        matrix_block(before_title.format(head=head), rf"{scaled}{plus_b}", t.biased, queries, labels,
                     y_title=_("query"), x_title=_("key"), domain=domain)
if right:
    with right:
        matrix_block(after_title.format(head=head), rf"{scaled}{plus_b} + M", t.masked, queries,
                     labels, y_title=_("query"), x_title=_("key"), domain=domain)

frame.also_under_panel(masked_weights)  # on a phone: what an edit of X or a weight changes (the mask does not)
st.header(_("Weights before and after the mask"))
left, right = slots(u.weights, t.weights, extra_b=masking_views.ROW_SUM_WIDTH)
if left:
    with left:
        matrix_block(_("Weights, no mask (head {head})").format(head=head) if per_head else _("Weights, no mask"),
                     rf"\mathrm{{softmax}}({score} / s{plus_b})", u.weights, queries, labels,
                     kind="weights", y_title=_("query"), x_title=_("key"))
if right:
    with right:
        masked_weights()

st.markdown(block_markdown(  # the heading, its words and the formula between them: one element
    heading_markdown(_("Why softmax subtracts the row maximum")),
    _("The English notebook's softmax is `np.exp(x) / np.sum(np.exp(x))`. float64 stops at about 1.8 · 10³⁰⁸ = "
      "e^709.78, so a score above 709.78 makes exp overflow to +inf, and inf / inf is NaN. The Korean blog post "
      "subtracts the row maximum m first. The weights are the same,"),
    formula_markdown(r"\frac{e^{x_j - m}}{\sum_k e^{x_k - m}} = \frac{e^{x_j}}{\sum_k e^{x_k}}, "
                     r"\qquad m = \max_k x_k,"),
    _("but every exponent is ≤ 0, so exp stays between 0 and 1. Here is one row of the scores + M, multiplied "
      "to make it large.")))
left, right = st.columns(2)
with left:
    i = controls.query_selector(queries, "masking")
with right:
    factor = st.select_slider(_("Multiply the row's scores by"), FACTORS, value=1000, key=FACTOR,
                              format_func=lambda f: f"× {f:,}")
try:
    cmp = analysis.compare_softmax(t.masked[i] * factor)
except AttentionInputError as err:
    st.warning(_("{error} Choose a smaller factor.").format(error=text.md_escape(i18n.error_text(err))),
               icon=":material/warning:")
    st.stop()
st.dataframe(masking_views.softmax_table(cmp, labels, precision=controls.precision()))
mark = note_markdown(_("{mark} marks a number that overflowed to +inf or became NaN.").format(
    mark=masking_views.OVERFLOW_MARK))  # the table's note, in one element with what the row shows
if cmp.overflow.any():
    over = ", ".join(text.md_escape(labels[j]) for j in np.flatnonzero(cmp.overflow))
    overflows = _(
        "The naive exp overflows for key {keys}: the score is above {max_exp}, exp gives +inf, and +inf / +inf = "
        "NaN for every key: the naive formula gives no weights at all. The stable softmax gives finite weights "
        "that sum to 1."
    ) if cmp.overflow.all() else _(
        "The naive exp overflows for key {keys}: the score is above {max_exp}, exp gives +inf, and +inf / +inf = "
        "NaN there, while every other weight becomes x / inf = 0. The stable softmax gives finite weights that sum "
        "to 1."
    )
    st.markdown(block_markdown(mark, overflows.format(keys=over, max_exp=f"{analysis.MAX_EXP:.2f}")))
elif cmp.naive_nan.any():
    st.markdown(block_markdown(mark, _("Every key is masked in this row: the naive exp gives 0 everywhere and 0 / 0 = "
                                       "NaN; the stable softmax (the one this app uses) gives zeros.")))
else:
    st.markdown(block_markdown(mark, _("No score in this row is above {max_exp}, so the naive softmax still works: "
                                       "choose a larger factor (or another query) to see it overflow.").format(
                                           max_exp=f"{analysis.MAX_EXP:.2f}")))
