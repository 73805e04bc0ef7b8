"""Scaling: what dividing the scores by s does to softmax, and why s = √d_k, measured."""

from dataclasses import replace

import numpy as np
import streamlit as st

from attn_core import analysis, divisor_for
from attn_ui import (
    charts,
    compute,
    controls,
    frame,
    grid_editor,
    heatmap,
    registry,
    scaling_views,
    state,
    step_by_step,
    text,
)
from attn_ui.matrix_display import matrix_block

frame.page_start(registry.SCALING)

MODE, DIVISOR = "scaling_mode", "scaling_divisor"  # widget keys
MODES = {"sqrt_dk": "÷ √d_k (default)", "none": "none (÷ 1)", "custom": "custom divisor"}
SLIDER_STOPS = analysis.log_grid(*analysis.DIVISOR_RANGE, 10, digits=2)  # 0.01 … 1000, 10 stops per decade
CURVE_DIVISORS = analysis.log_grid(*analysis.DIVISOR_RANGE, 20)  # the saturation curves' x axis


@st.cache_data(show_spinner=False)
def variance_sweep(d_ks: tuple[int, ...], n_samples: int, seed: int) -> analysis.VarianceSweep:
    return analysis.variance_sweep(d_ks, n_samples=n_samples, seed=seed)


@st.cache_data(max_entries=32, show_spinner=False)
def saturation(scores: np.ndarray, divisors: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    return analysis.saturation(scores, divisors, mask)


def set_mode() -> None:
    """√d_k or none as such; "custom" starts from the divisor in use, so nothing jumps."""
    mode, cfg = st.session_state[MODE], state.config()
    state.update_config(scale=divisor_for(cfg.scale, cfg.d_k) if mode == "custom" else mode)


def set_divisor() -> None:
    state.update_config(scale=float(st.session_state[DIVISOR]))


cfg = state.config()
st.markdown(
    "Before softmax, every score is divided by a number s. Dividing by a large s flattens each row of weights "
    "towards uniform; dividing by a small s sharpens it towards one-hot (s acts as softmax's *temperature*). "
    "The Transformer uses s = √d_k, which keeps the scores' variance near 1 whatever the width d_k. "
    "The scale you choose here is part of your configuration: Step by step and Multi-head use it too."
)
grid_editor.pending_errors_banner()

divisor = divisor_for(cfg.scale, cfg.d_k)
st.radio("Scale", list(MODES), format_func=MODES.get, horizontal=True,
         **state.bind(MODE, cfg.scale if isinstance(cfg.scale, str) else "custom", set_mode))
st.select_slider(
    "Divisor s (temperature), log scale", sorted({*SLIDER_STOPS.tolist(), divisor}),
    **state.bind(DIVISOR, divisor, set_divisor), format_func=lambda v: f"{v:.4g}",
    help="From 0.01 to 1000. Moving it sets a custom divisor.",
)
st.caption(f"Scores are divided by: {text.scale_text(cfg)}.")

n_name = "n_q (queries)" if cfg.cross else "n_seq"
same = "the same number, so that tutorial's formula gives the same weights" if cfg.n_q == cfg.d_k else (
    f"different numbers (√{cfg.n_q} = {np.sqrt(cfg.n_q):.4g} vs √{cfg.d_k} = {np.sqrt(cfg.d_k):.4g}), so "
    "that tutorial's formula would give other weights"
)
st.info(
    "**Where the tutorials differ.** The Chinese tutorial divides by √(number of tokens), not by √d_k; its "
    f"example has 3 tokens and d_k = 3, so both are √3. Here {n_name} = {cfg.n_q} and d_k = {cfg.d_k}: {same}. "
    "The Korean Python tutorial divides by 1 (\"square root of 3 rounded down to 1\") and the English illustrated "
    "tutorial takes the softmax of the raw scores: both are *none* here (the preset “3 inputs, d_model 4, no "
    "scaling”). The Korean blog post and the English notebook divide by √d_k.",
    icon=":material/info:",
)

trace = compute.current_trace()
head = controls.head_selector(cfg.n_heads, "scaling")
t = trace.heads[head]
u = compute.trace(replace(cfg, scale="none")).heads[head]
queries, labels = text.query_labels(cfg), text.token_labels(cfg)  # rows: the queries; columns: the keys (X)
head_note = f" (head {head})" if cfg.n_heads > 1 else ""
masked = None if t.mask is None else ~t.mask
score = step_by_step.SCORE_LATEX[cfg.score]  # QK^T, or the configuration's other score function
if cfg.score != "dot":
    st.caption(f"Your scores are {step_by_step.SCORE_TEXT[cfg.score]} ({step_by_step.SCORE_NAMES[cfg.score]}); "
               "the divisor applies to them as to dot products. d_k is the keys' width per head.")

st.header("Unscaled beside your scale")
if np.isclose(divisor, 1.0):
    st.caption("Your scale divides by 1, so both sides are the same: choose √d_k or a custom divisor to compare.")
left, right = controls.pair(u.weights, t.weights, queries)
with left:
    matrix_block("Weights, unscaled" + head_note, rf"\mathrm{{softmax}}({score})", u.weights, queries, labels,
                 kind="weights", y_title="query", x_title="key", masked=masked)
with right:
    matrix_block(f"Weights, ÷ {divisor:.4g}" + head_note, rf"\mathrm{{softmax}}({score} / {divisor:.4g})",
                 t.weights, queries, labels, kind="weights", y_title="query", x_title="key", masked=masked)
out_domain = heatmap.shared_domain(u.output, t.output)
dims = text.dim_labels(t.output.shape[1])
left, right = controls.pair(u.output, t.output, queries)
with left:
    matrix_block("Output, unscaled" + head_note, rf"\mathrm{{softmax}}({score})\,V", u.output, queries, dims,
                 y_title="query", x_title="dimension", domain=out_domain)
with right:
    matrix_block(f"Output, ÷ {divisor:.4g}" + head_note, rf"\mathrm{{softmax}}({score} / {divisor:.4g})\,V",
                 t.output, queries, dims, y_title="query", x_title="dimension",
                 domain=out_domain)


def metrics(pairs: list[tuple[str, float]]) -> None:
    """A row of variances, "beyond float64" where one overflowed."""
    for col, (label, var) in zip(st.columns(len(pairs)), pairs, strict=True):
        col.metric(label, f"{var:.4f}" if np.isfinite(var) else "beyond float64",
                   help=None if np.isfinite(var) else "The squares of these entries exceed 1.8 · 10³⁰⁸.")


st.header("Why √d_k: measured")
if cfg.score == "additive":  # no dot product: each score is bounded by Σ|v_a|, whatever d_k
    with np.errstate(over="ignore", invalid="ignore"):
        var_s, var_scaled = float(t.scores.var()), float((t.scores / np.sqrt(cfg.d_k)).var())
    metrics([("var(scores)", var_s), ("var(scores / √d_k)", var_scaled)])
    st.caption(
        f"The argument for √d_k is about the dot product q · k, a sum of d_k products. Your scores{head_note} are "
        "additive, v_a · tanh(q W_1 + k W_2): each tanh is between −1 and 1, so every score is at most "
        f"Σ|v_a| = {np.abs(t.v_a).sum():.4g} in size whatever d_k is (Bahdanau's attention does not scale). "
        "The numbers and the chart below are about dot products."
    )
else:  # the dot product, or (general) the dot product of Q W_a with K
    qq, q_name = (t.q_a, "Q W_a") if cfg.score == "general" else (t.q, "Q")
    stats = analysis.variance_stats(qq, t.k)
    prod = "(Q W_a)Kᵀ" if cfg.score == "general" else "QKᵀ"
    metrics([(f"var({q_name})", stats.var_q), ("var(K)", stats.var_k), (f"var({prod})", stats.var_scores),
             (f"var({prod} / √d_k)", stats.var_scaled)])
    st.caption(
        f"Variances over all entries of your {q_name}, K{head_note} (d_k = {cfg.d_k}). Each score is a sum of d_k "
        f"products, so for independent entries with mean 0, var({prod}) ≈ d_k · var({q_name}) · var(K) = "
        f"{cfg.d_k * stats.var_q * stats.var_k:.4f}; dividing by √d_k divides the variance by d_k. "
        "The English notebook measures 1.0063, 1.0563, 11.0689 and 1.3836 on its random 4 × 8 Q and K (the preset "
        "“4 tokens, d_k = d_v = 8, causal mask”)."
    )
sweep = variance_sweep(analysis.SWEEP_D_K, 300, 0)
st.markdown(
    "**The same on random Q, K with unit-variance entries**, 300 draws of 8 × d_k each: the raw variance grows "
    "in proportion to d_k (dashed line: variance = d_k), the scaled one stays near 1."
    + ("" if cfg.score == "dot" else
       f" This is about the dot product QKᵀ, not your score function ({step_by_step.SCORE_TEXT[cfg.score]}).")
)
charts.show_chart(charts.cached_chart(scaling_views.variance_sweep_chart, sweep.d_k, sweep.raw, sweep.scaled,
                                      current_d_k=cfg.d_k))
with st.expander("The numbers"):
    st.dataframe(
        {"d_k": sweep.d_k, "var(QKᵀ)": sweep.raw.round(4), "var(QKᵀ / √d_k)": sweep.scaled.round(4)},
        hide_index=True,
    )

st.header("Softmax saturation")
st.markdown(
    "For each query row, the largest weight and the entropy of the weights as the divisor changes. Large raw "
    "scores (a small divisor) push every row to one-hot: largest weight 1, entropy 0, and softmax's gradient "
    "vanishes. A large divisor flattens the row to uniform: largest weight 1/n_k, entropy ln n_k "
    f"(ln {cfg.n_seq} = {np.log(cfg.n_seq):.4g} here; a masked row spreads over its allowed keys only)."
    + ("" if cfg.score == "dot" else f" The raw scores here are {step_by_step.SCORE_TEXT[cfg.score]}.")
)
marks = [("÷ 1 (none)", 1.0), (f"÷ √d_k = {np.sqrt(cfg.d_k):.3g}", float(np.sqrt(cfg.d_k)))]
if not any(np.isclose(divisor, v) for _, v in marks):
    marks.append((f"yours: ÷ {divisor:.3g}", divisor))
top, entropy = saturation(t.scores, CURVE_DIVISORS, t.mask)
charts.show_chart(scaling_views.saturation(CURVE_DIVISORS, top, entropy, queries, marks))
