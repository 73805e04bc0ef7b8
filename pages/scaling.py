"""Scaling: what dividing the scores by s does to softmax, and why s = √d_k, measured."""

from dataclasses import replace

import numpy as np
import streamlit as st

from attn_core import PRESETS, AttentionInputError, analysis, divisor_for
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _
from attn_ui.shell import edit_panel, frame
from attn_ui.views import compute, scaling_views, step_by_step
from attn_ui.widgets import charts, controls, grid_editor, heatmap, numbers, text
from attn_ui.widgets.matrix_display import block_markdown, heading_markdown, matrix_block, note_markdown

frame.page_start(registry.SCALING)
in_panel = edit_panel.sidebar()  # X and the weights, beside what they do here
edit_panel.hint()

MODE, DIVISOR, SWEEP_TABLE = "scaling_mode", "scaling_divisor", "scaling_sweep_numbers"  # widget keys
MODES = {"sqrt_dk": N_("÷ √d_k (default)"), "none": N_("none (÷ 1)"), "custom": N_("custom divisor")}
#: the presets the notes on the tutorials name (their titles, marked for translation in attn_core.presets)
UNSCALED_PRESET, CAUSAL_PRESET = PRESETS["seed004_unscaled"].title, PRESETS["seed002_causal"].title


def set_mode() -> None:
    """√d_k or none as such; "custom" starts from the divisor in use, so nothing jumps."""
    mode, cfg = st.session_state[MODE], state.config()
    state.update_config(scale=divisor_for(cfg.scale, cfg.d_k) if mode == "custom" else mode)


def set_divisor() -> None:
    state.update_config(scale=float(st.session_state[DIVISOR]))


NEAR = (0.8, 1.25)  # a variance of the scaled scores in this range is "near 1"
CLAIM = N_("The Transformer uses s = √d_k for this reason: **if the entries of q and k are independent, with mean 0 "
           "and variance 1**, a score q · k is a sum of d_k products and has variance d_k, so dividing by √d_k brings "
           "it back to 1 whatever the width d_k.")
MEASURED = {  # (near 1, several heads) -> the learner's numbers beside the claim
    (True, False): N_("On your numbers: var({q}) = {var_q}, var(K) = {var_k}, and var({prod} / √d_k) = {scaled}, "
                      "near 1."),
    (False, False): N_("On your numbers: var({q}) = {var_q}, var(K) = {var_k}, and var({prod} / √d_k) = {scaled} "
                       "instead of 1 (measured below)."),
    (True, True): N_("On your numbers (head {head}): var({q}) = {var_q}, var(K) = {var_k}, and var({prod} / √d_k) = "
                     "{scaled}, near 1."),
    (False, True): N_("On your numbers (head {head}): var({q}) = {var_q}, var(K) = {var_k}, and var({prod} / √d_k) = "
                      "{scaled} instead of 1 (measured below)."),
}


#: the formula var(QKᵀ) ≈ d_k · var(Q) · var(K) beside the learner's measured variance (near it, or not)
FORMULA_FIT = {
    True: N_("Your measured var({prod}) = {measured} is {ratio} times the formula's: near it."),
    False: N_("Your measured var({prod}) = {measured} is {ratio} times the formula's: the formula assumes entries "
              "with mean 0, independent of each other, and the means of your entries are {mean_q} ({q_name}) and "
              "{mean_k} (K)."),
}


def variance_text(var: float) -> str:
    return f"{var:.4f}" if np.isfinite(var) else _("beyond float64")


def claim(cfg, t, head: int) -> str:
    """The reason for √d_k, with its assumption, and (dot and general scores) the learner's numbers beside it:
    ``t`` the trace of head ``head``, the one shown."""
    if cfg.score == "additive":
        return i18n.sentences(_(CLAIM), _(
            "Your scores are additive, not dot products, so this reason does not apply to them (see Why √d_k: "
            "measured)."))
    qq, q_name, prod = measured(cfg, t)
    stats = analysis.variance_stats(qq, t.k)
    near = bool(NEAR[0] <= stats.var_scaled <= NEAR[1])
    return i18n.sentences(_(CLAIM), _(MEASURED[near, cfg.n_heads > 1]).format(
        q=q_name, head=head, prod=prod, var_q=variance_text(stats.var_q), var_k=variance_text(stats.var_k),
        scaled=variance_text(stats.var_scaled)))


def measured(cfg, t) -> tuple:
    """What is measured (dot and general scores): the queries as scored [n_q, d_k] (Q, or Q W_a), their name, and
    the product's."""
    return (t.q_a, "Q W_a", "(Q W_a)Kᵀ") if cfg.score == "general" else (t.q, "Q", "QKᵀ")


cfg = state.config()
head = controls.head_shown(cfg.n_heads)  # the head the selector below shows
try:
    trace = compute.trace(cfg)
except AttentionInputError:  # said where the page stops, below (compute.current_trace)
    trace = None
st.markdown("\n\n".join([_(  # the page's idea, and (once the numbers are known) the reason for √d_k: one element
    "Before softmax, every score is divided by a number s. Dividing by a large s flattens each row of weights "
    "towards uniform; dividing by a small s sharpens it towards one-hot (s acts as softmax's *temperature*). "
    "The scale you choose here is part of your configuration: Step by step and Multi-head use it too."
), *([] if trace is None else [claim(cfg, trace.heads[head], head)])]))
with frame.under_panel():  # on a phone right under the panel, where the value is fixed (above the first result)
    grid_editor.pending_errors_banner(registry.SCALING, in_panel=in_panel)

divisor = divisor_for(cfg.scale, cfg.d_k)
st.radio(_("Scale"), list(MODES), format_func=i18n.option_labels(MODES), horizontal=True,
         **state.bind(MODE, cfg.scale if isinstance(cfg.scale, str) else "custom", set_mode))
st.select_slider(
    _("Divisor s (temperature), log scale"), sorted({*scaling_views.SLIDER_STOPS, divisor}),
    **state.bind(DIVISOR, divisor, set_divisor), format_func=lambda v: f"{v:.4g}",
    help=_("From 0.01 to 1000. Moving it sets a custom divisor."),
)
st.caption(_("Scores are divided by: {scale}.").format(scale=text.scale_text(cfg)))

n_name = _("n_q (queries)") if cfg.cross else "n_seq"
if cfg.n_q == cfg.d_k:
    tutorials = _(
        "**Where the tutorials differ.** The Chinese tutorial divides by √(number of tokens), not by √d_k; its "
        "example has 3 tokens and d_k = 3, so both are √3. Here {n_name} = {n_q} and d_k = {d_k}: the same number, "
        "so that tutorial's formula gives the same weights. The Korean Python tutorial divides by 1 (\"square root "
        "of 3 rounded down to 1\") and the English illustrated tutorial takes the softmax of the raw scores: both "
        "are *none* here (the preset “{preset}”). The Korean blog post and the English notebook divide by √d_k."
    )
else:
    tutorials = _(
        "**Where the tutorials differ.** The Chinese tutorial divides by √(number of tokens), not by √d_k; its "
        "example has 3 tokens and d_k = 3, so both are √3. Here {n_name} = {n_q} and d_k = {d_k}: different "
        "numbers (√{n_q} = {root_n_q} vs √{d_k} = {root_d_k}), so that tutorial's formula would give other "
        "weights. The Korean Python tutorial divides by 1 (\"square root of 3 rounded down to 1\") and the English "
        "illustrated tutorial takes the softmax of the raw scores: both are *none* here (the preset “{preset}”). "
        "The Korean blog post and the English notebook divide by √d_k."
    )
st.info(
    tutorials.format(n_name=n_name, n_q=cfg.n_q, d_k=cfg.d_k, root_n_q=f"{np.sqrt(cfg.n_q):.4g}",
                     root_d_k=f"{np.sqrt(cfg.d_k):.4g}", preset=_(UNSCALED_PRESET)),
    icon=":material/info:",
)

if trace is None:
    trace = compute.current_trace()  # a message, and the page stops here
head = controls.head_selector(cfg.n_heads, "scaling")
t = trace.heads[head]
# unscaled: already (the same), or this head again (its scores dot products), or the whole configuration again
u = t if cfg.scale == "none" else (scaling_views.unscaled_head(t) or
                                   compute.trace(replace(cfg, scale="none")).heads[head])
queries, labels = text.query_labels(cfg), text.token_labels(cfg)  # rows: the queries; columns: the keys (X)
per_head = cfg.n_heads > 1  # titles and captions name the head
masked = None if t.mask is None else ~t.mask
score = text.SCORE_LATEX[cfg.score]  # QK^T, or the configuration's other score function
if cfg.score != "dot":
    st.caption(_("Your scores are {scores} ({name}); the divisor applies to them as to dot products. d_k is "
                 "the keys' width per head.").format(scores=text.SCORE_TEXT[cfg.score],
                                                      name=_(text.SCORE_NAMES[cfg.score])))

plus_b = "" if t.bias is None else " + B"  # the score bias, when there is one, in every softmax below
if cfg.modern and (cfg.rope is not None or cfg.qk_norm or cfg.softcap is not None or cfg.alibi):
    st.info(i18n.sentences(
        _("The scores here are those of the q and k as scored: QK-normed and rotated by RoPE when those are on (Step "
          "by step, steps 1a, 1b); the variances below are measured on them.")
        if cfg.rope is not None or cfg.qk_norm else "",
        _("With QK-norm every row of q and k has a root mean square near 1, so the scores' size no longer grows with "
          "the inputs, only with d_k.") if cfg.qk_norm else "",
        _("The soft cap comes after the division: the weights and outputs drawn below (yours and the unscaled ones) "
          "are the softmax of c·tanh(score ÷ s ÷ c) with c = {c}, not of score ÷ s; the formulas and the measurements "
          "of the divisor leave the cap out.").format(
            c=f"{cfg.softcap:g}") if cfg.softcap is not None else "",
        _("ALiBi's bias (the Masking page draws it) is added after the division and the cap, and is not divided.")
        if cfg.alibi else ""), icon=":material/info:")
if t.bias is not None and not cfg.alibi:
    st.info(_(
        "**This configuration adds a score bias B after the division** (a T5 layer's learned relative positions; "
        "the Masking page draws it). T5 does not divide by √d_k at all: its scale is *none*, because its training "
        "folded the scale into W_Q's initial values. Both sides below include B: a divisor shrinks the scores, "
        "not the bias, so dividing a T5 layer by √d_k = {root} gives B more say than it was trained to have."
    ).format(root=f"{np.sqrt(cfg.d_k):.4g}"), icon=":material/info:")

UNSCALED, SCALED = N_("Unscaled"), N_("Your scale")  # the two sides, one at a time when each is drawn in blocks


def slots(a: np.ndarray, b: np.ndarray) -> list:
    """Where the unscaled and the scaled heatmap go: side by side, or the one shown (None for the other): ``sides``,
    chosen under the section's heading, below."""
    return controls.pair_shown(a, b, queries, sides, (UNSCALED, SCALED))


with frame.under_panel():  # on a phone right under the edit panel: the grid and these on one screen
    st.markdown(block_markdown(heading_markdown(_("Unscaled beside your scale")), note_markdown(
        _("Your scale divides by 1, so both sides are the same: choose √d_k or a custom divisor to compare."))
        if np.isclose(divisor, 1.0) else ""))
    s_text = f"{divisor:.4g}"
    sides = controls.one_at_a_time(_("Side shown"), [UNSCALED, SCALED], large=step_by_step.in_blocks(t.weights),
                                   key="scaling_side_shown")

    left, right = slots(u.weights, t.weights)
    if left:
        with left:
            matrix_block(_("Weights, unscaled (head {head})").format(head=head) if per_head
                         else _("Weights, unscaled"), rf"\mathrm{{softmax}}({score}{plus_b})", u.weights, queries,
                         labels, kind="weights", y_title=_("query"), x_title=_("key"), masked=masked)
    if right:
        with right:
            matrix_block((_("Weights, ÷ {s} (head {head})") if per_head else _("Weights, ÷ {s}")).format(s=s_text,
                                                                                                       head=head),
                         rf"\mathrm{{softmax}}({score} / {divisor:.4g}{plus_b})",
                         t.weights, queries, labels, kind="weights", y_title=_("query"), x_title=_("key"),
                         masked=masked)
    out_domain = heatmap.shared_domain(u.output, t.output)
    dims = text.dim_labels(t.output.shape[1])
    left, right = slots(u.output, t.output)
    if left:
        with left:
            matrix_block(_("Output, unscaled (head {head})").format(head=head) if per_head else _("Output, unscaled"),
                         rf"\mathrm{{softmax}}({score}{plus_b})\,V", u.output, queries, dims,
                         y_title=_("query"), x_title=_("dimension"), domain=out_domain)
    if right:
        with right:
            matrix_block((_("Output, ÷ {s} (head {head})") if per_head else _("Output, ÷ {s}")).format(s=s_text,
                                                                                                      head=head),
                         rf"\mathrm{{softmax}}({score} / {divisor:.4g}{plus_b})\,V",
                         t.output, queries, dims, y_title=_("query"), x_title=_("dimension"),
                         domain=out_domain)


def metrics(pairs: list[tuple[str, float]]) -> None:
    """A row of variances, "beyond float64" where one overflowed."""
    for col, (label, var) in zip(st.columns(len(pairs)), pairs, strict=True):
        col.metric(label, f"{var:.4f}" if np.isfinite(var) else _("beyond float64"),
                   help=None if np.isfinite(var) else _("The squares of these entries exceed 1.8 · 10³⁰⁸."))


st.header(_("Why √d_k: measured"))
if cfg.score == "additive":  # no dot product: each score is bounded by Σ|v_a|, whatever d_k
    with np.errstate(over="ignore", invalid="ignore"):
        var_s, var_scaled = float(t.scores.var()), float((t.scores / np.sqrt(cfg.d_k)).var())
    metrics([(_("var(scores)"), var_s), (_("var(scores / √d_k)"), var_scaled)])
    additive = _(
        "The argument for √d_k is about the dot product q · k, a sum of d_k products. Your scores (head {head}) are "
        "additive, v_a · tanh(q W_1 + k W_2): each tanh is between −1 and 1, so every score is at most "
        "Σ|v_a| = {bound} in size whatever d_k is (Bahdanau's attention does not scale). "
        "The numbers and the chart below are about dot products."
    ) if per_head else _(
        "The argument for √d_k is about the dot product q · k, a sum of d_k products. Your scores are "
        "additive, v_a · tanh(q W_1 + k W_2): each tanh is between −1 and 1, so every score is at most "
        "Σ|v_a| = {bound} in size whatever d_k is (Bahdanau's attention does not scale). "
        "The numbers and the chart below are about dot products."
    )
    notes = [additive.format(head=head, bound=f"{np.abs(t.v_a).sum():.4g}")]
else:  # the dot product, or (general) the dot product of Q W_a with K
    qq, q_name, prod = measured(cfg, t)
    stats = analysis.variance_stats(qq, t.k)
    metrics([(f"var({q_name})", stats.var_q), ("var(K)", stats.var_k), (f"var({prod})", stats.var_scores),
             (f"var({prod} / √d_k)", stats.var_scaled)])
    variances = _(
        "Variances over all entries of your {q_name}, K (head {head}) (d_k = {d_k}). Each score is a sum of d_k "
        "products, so for independent entries with mean 0, var({prod}) ≈ d_k · var({q_name}) · var(K) = "
        "{expected}; dividing by √d_k divides the variance by d_k. "
        "The English notebook measures 1.0063, 1.0563, 11.0689 and 1.3836 on its random 4 × 8 Q and K (the preset "
        "“{preset}”)."
    ) if per_head else _(
        "Variances over all entries of your {q_name}, K (d_k = {d_k}). Each score is a sum of d_k "
        "products, so for independent entries with mean 0, var({prod}) ≈ d_k · var({q_name}) · var(K) = "
        "{expected}; dividing by √d_k divides the variance by d_k. "
        "The English notebook measures 1.0063, 1.0563, 11.0689 and 1.3836 on its random 4 × 8 Q and K (the preset "
        "“{preset}”)."
    )
    expected = cfg.d_k * stats.var_q * stats.var_k  # the formula's var(QKᵀ), on the learner's variances
    notes = [variances.format(q_name=q_name, head=head, d_k=cfg.d_k, prod=prod, expected=f"{expected:.4f}",
                              preset=_(CAUSAL_PRESET))]
    if np.isfinite(stats.var_scores) and np.isfinite(expected) and expected > 0:  # how far yours are from it
        ratio = stats.var_scores / expected
        notes.append(_(FORMULA_FIT[bool(NEAR[0] <= ratio <= NEAR[1])]).format(
            prod=prod, q_name=q_name, measured=f"{stats.var_scores:.4f}", ratio=f"{ratio:.2f}",
            mean_q=numbers.format_number(float(qq.mean()), 4), mean_k=numbers.format_number(float(t.k.mean()), 4)))
sweep = scaling_views.variance_sweep(analysis.SWEEP_D_K, 300, 0)
same_on_random = _(
    "**The same on random Q, K whose entries are independent, with mean 0 and variance 1** (the assumption above), "
    "300 draws of 8 × d_k each, for d_k from {first} to {last}: the raw variance grows with d_k, close to the "
    "dashed line variance = d_k, and the scaled one stays between {lo} and {hi}."
).format(first=int(sweep.d_k[0]), last=int(sweep.d_k[-1]), lo=f"{sweep.scaled.min():.2f}",
         hi=f"{sweep.scaled.max():.2f}")
if cfg.score != "dot":
    same_on_random = _("{text} This is about the dot product QKᵀ, not your score function ({scores}).").format(
        text=same_on_random, scores=text.SCORE_TEXT[cfg.score])
st.markdown(block_markdown(*map(note_markdown, notes), same_on_random))  # the notes on your numbers: one element
charts.show_chart(charts.cached_chart(scaling_views.variance_sweep_chart, sweep.d_k, sweep.raw, sweep.scaled,
                                      current_d_k=cfg.d_k), width=scaling_views.SWEEP_MAX_PX,
                  name=_("Why √d_k: measured"))
with st.expander(_("The numbers"), key=SWEEP_TABLE, on_change="rerun") as box:
    if box.open:  # made only while open: its table is the same on every run
        st.dataframe(
            {"d_k": sweep.d_k, "var(QKᵀ)": sweep.raw.round(4), "var(QKᵀ / √d_k)": sweep.scaled.round(4)},
            hide_index=True,
        )

saturation_text = _(
    "For each query row, the largest weight and the entropy of the weights as the divisor changes. A small divisor "
    "(large scaled scores) pushes a row to one-hot when one key has its largest score: largest weight 1, entropy 0, "
    "and softmax's gradient vanishes. A large divisor flattens the row to uniform: largest weight 1/n_k, entropy "
    "ln n_k (ln {n_k} = {ln_n_k} here; a masked row spreads over its allowed keys only)."
).format(n_k=cfg.n_seq, ln_n_k=f"{np.log(cfg.n_seq):.4g}")
exceptions = []
for row, n_top in scaling_views.rows_not_one_hot(t.scores, t.mask):
    name = text.md_escape(queries[row])
    exceptions.append(_("Query {name} has every key masked: its weights are 0 at every divisor.").format(name=name)
                      if n_top == 0 else
                      _("Query {name}'s largest score is shared by {n} keys, so a small divisor splits its weight "
                        "evenly among them: largest weight 1/{n} = {top}, entropy ln {n} = {h}.").format(
                          name=name, n=n_top, top=f"{1 / n_top:.4g}", h=f"{np.log(n_top):.4g}"))
saturation_text = i18n.sentences(saturation_text, *exceptions)
if cfg.score != "dot":
    saturation_text = _("{text} The raw scores here are {scores}.").format(
        text=saturation_text, scores=text.SCORE_TEXT[cfg.score])
st.markdown(block_markdown(heading_markdown(_("Softmax saturation")), saturation_text))
marks = [(_("÷ 1 (none)"), 1.0), (f"÷ √d_k = {np.sqrt(cfg.d_k):.3g}", float(np.sqrt(cfg.d_k)))]
if not any(np.isclose(divisor, v) for _label, v in marks):
    marks.append((_("yours: ÷ {s}").format(s=f"{divisor:.3g}"), divisor))
top, entropy = scaling_views.saturation_numbers(t.scores, t.mask)
for column, chart in zip(st.columns(2), scaling_views.saturation(scaling_views.CURVE_DIVISORS, top, entropy, queries,
                                                                 marks),
                         strict=True):  # side by side; stacked on a narrow screen
    with column:
        charts.show_chart(chart, width="stretch",  # the column's width (the layout's "container")
                          name=_("Softmax saturation"))
