"""The neuron view of every model page: one query and one key of the head the page shows, feature by feature
(BertViz's neuron view, for every family this app runs).

For the layer and head a model page draws, the learner picks a query token and a key token; the view draws q_i, k_j
and their elementwise product q_i ⊙ k_j (d_k cells each, after RoPE where the model turns them, and before it on
request), then writes the arithmetic out with the numbers shown: Σ (q_i ⊙ k_j) = the score, ÷ the divisor (√d_k;
a T5 does not scale), + the score bias (a T5's relative positions), the mask, and the weight after the softmax: the
cell of the page's heatmap. The numbers are attn_core.head_neuron's, on the trace of the explorer configuration the
model makes of that head (attn_models' ``config_for``: the same numbers "Open in the explorer" loads).

:func:`section` is the one call a model page makes; :func:`vectors_chart` the chart factory (arrays in, a
:class:`attn_ui.widgets.charts.Chart` out, no st).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import altair as alt
import numpy as np
import streamlit as st

import attn_models
from attn_core import AttentionInputError, NeuronView, head_neuron
from attn_ui.app import i18n, state
from attn_ui.app.i18n import N_, _
from attn_ui.views import compute, model_views
from attn_ui.views.generate_views import label
from attn_ui.widgets import charts, text
from attn_ui.widgets.numbers import format_number, format_numbers

#: a page's widget keys are its prefix ("model_neuron", "gen_neuron", "trans_neuron") and these
QUERY, KEY, BEFORE, SIDE = "_query", "_key", "_before", "_side"
#: a translator's attentions, as the section's choice names them
SIDES = {"cross": N_("cross-attention"), "decoder": N_("decoder self-attention"),
         "encoder": N_("encoder self-attention")}
NAMED = 5  # the features whose products are largest in size, named under the chart
SAME = 1e-9  # the page's heatmap cell and the view's weight agree to this (they are the same float64 computation)
ROW_PX = 22  # a row of cells
LEGEND_PX = 44  # a colour key: its two ends' labels apart
MARK_PX = 12  # under the products: a ▲ at each of the NAMED largest, above the axis labels
DIGITS = 4  # decimals of the arithmetic written out


# ---- the chart -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VectorsLayout:
    """What :func:`vectors_chart` draws, apart from the numbers: its rows' names, d_k, titles."""

    top_rows: tuple[str, ...]  # q_i and k_j (and before RoPE): one colour scale
    bottom_row: str  # q_i ⊙ k_j: its own colour scale
    d_k: int
    x_title: str
    value_title: str
    feature_title: str
    every: int  # an axis label every this many features
    name: str = ""  # what the chart is called where it is listed (Save a chart); not drawn: the section's title says it


def vectors_chart(rows: dict[str, np.ndarray], product: np.ndarray, *, x_title: str) -> charts.Chart:
    """Rows of d_k cells, aligned feature by feature: ``rows`` (name -> [d_k]: q_i, k_j, and before RoPE) on one
    diverging colour scale, and ``product`` [d_k] (q_i ⊙ k_j) under them on its own, both centred on 0; each cell's
    value on hover; a ▲ under the NAMED products largest in size (the features the page names). The chart stretches
    to the width of its container (d_k cells of a few pixels on a phone)."""
    d_k = product.shape[0]
    names = tuple(rows)
    bottom = "q_i ⊙ k_j"
    top = charts.table({"row": charts.repeated(names, d_k), "feature": np.tile(np.arange(d_k), len(names)),
                        "value": np.concatenate([rows[n] for n in names]),
                        "text": [t for n in names for t in format_numbers(rows[n], DIGITS)]})
    largest = np.zeros(d_k, dtype=bool)
    if d_k > NAMED:  # NeuronView.largest's features (with NAMED or fewer, every one is named)
        largest[np.argsort(-np.abs(product), kind="stable")[:NAMED]] = True
    low = charts.table({"row": [bottom] * d_k, "feature": np.arange(d_k), "value": product,
                        "text": format_numbers(product, DIGITS), "largest": largest})
    top_max = max(float(np.abs(np.concatenate([rows[n] for n in names])).max()), 1e-12)
    low_max = max(float(np.abs(product).max()), 1e-12)
    layout = VectorsLayout(names, bottom, d_k, x_title, _("value"), _("feature"), label_every(d_k),
                           _("The query and key vectors, feature by feature"))
    return charts.Chart(vectors_build, layout, (top, low), ((-top_max, top_max), (-low_max, low_max)))


def label_every(d_k: int) -> int:
    """An axis label every this many features: every one up to 16, then 8 or 16 (on a phone greedy overlap removal
    drops more).

    >>> label_every(4), label_every(64), label_every(128)
    (1, 8, 16)
    """
    return 1 if d_k <= 16 else 8 if d_k <= 64 else 16


def vectors_build(layout: VectorsLayout, data: list, domains: list) -> alt.VConcatChart:
    """The builder of :func:`vectors_chart` (its structure depends on ``layout`` only)."""
    lay = layout
    x_axis = alt.Axis(values=list(range(0, lay.d_k, lay.every)), labelAngle=0, labelOverlap="greedy", ticks=False,
                      offset=MARK_PX)
    x_scale = alt.Scale(domain=list(range(lay.d_k)), paddingInner=0.08)

    def band(frame, rows: tuple[str, ...], domain, scheme: str, x_title: str | None) -> alt.Chart:
        return alt.Chart(frame).mark_rect(stroke=None).encode(
            x=alt.X("feature:O", sort=None, title=x_title, axis=x_axis if x_title else None, scale=x_scale),
            y=alt.Y("row:N", sort=list(rows), title=None, axis=alt.Axis(labelLimit=140)),
            color=alt.Color("value:Q", scale=alt.Scale(scheme=scheme, domain=domain, domainMid=0),
                            legend=alt.Legend(title=None, orient="right", gradientLength=LEGEND_PX,
                                              gradientThickness=10, tickCount=2, labelOverlap="greedy")),
            tooltip=[alt.Tooltip("row:N", title=""), alt.Tooltip("feature:O", title=lay.feature_title),
                     alt.Tooltip("text:N", title=lay.value_title)],
        ).properties(width="container", height=max(ROW_PX * len(rows), LEGEND_PX))

    low_px = max(ROW_PX, LEGEND_PX)
    marks = alt.Chart(data[1]).transform_filter("datum.largest").mark_text(
        text="▲", color="#888888", fontSize=11, baseline="top", dy=low_px / 2 + 1).encode(
        x=alt.X("feature:O", sort=None, scale=x_scale), y=alt.Y("row:N", title=None),
        tooltip=[alt.Tooltip("feature:O", title=lay.feature_title), alt.Tooltip("text:N", title=lay.value_title)])
    return alt.vconcat(
        band(data[0], lay.top_rows, domains[0], "redblue", None),
        band(data[1], (lay.bottom_row,), domains[1], "purpleorange", lay.x_title) + marks,
        spacing=6,
    ).resolve_scale(color="independent").properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


# ---- the section on a model page ----------------------------------------------------------------------------


def section(origin: attn_models.Origin, *, key: str, shown: np.ndarray | None = None,
            labels: tuple[list[str], list[str]] | None = None) -> None:
    """The neuron view of the head ``origin`` names (the page's layer and head, on its text): pick a query and a
    key, see q_i, k_j, q_i ⊙ k_j and the arithmetic to the weight. ``shown``: the weights the page's heatmap draws for
    that head ([n_q, n_k]); the weight is said to be its cell only when it is, to SAME. A translator's origin (a
    cross-attention head) offers its decoder's and encoder's self-attention too, same layer and head. ``key``: the
    page's prefix of the section's widget keys. ``labels``: the heatmap's row and column labels (numbered), so that a
    query and a key are named as the heatmap names them (a T5's output token chosen by each row); else the
    configuration's tokens, numbered."""
    st.subheader(_("Inside one score: the query and key vectors"))
    origin, (shown, labels) = _side(origin, key, (shown, labels))
    try:
        cfg = model_views.opened(replace(origin, head=0))  # a whole layer: one configuration for all its heads
        if cfg.n_heads == 1 and origin.head:  # the model opens a head alone (a layer beyond attn_core.LIMITS)
            cfg = model_views.opened(origin)
        trace = compute.trace(cfg)
    except (attn_models.ModelError, AttentionInputError) as err:
        st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
        return
    h = origin.head if cfg.n_heads > 1 else 0  # a head opened alone is its configuration's head 0
    weights = trace.heads[h].weights  # [n_q, n_k]
    q_labels = text.numbered(tuple(label(t) for t in cfg.query_tokens))
    k_labels = text.numbered(tuple(label(t) for t in cfg.tokens))
    if labels is not None and (len(labels[0]), len(labels[1])) == weights.shape:
        q_labels, k_labels = list(labels[0]), list(labels[1])
    i, j = _pick(key, q_labels, k_labels, weights, bool(cfg.mask_kind == "causal" or cfg.cross))
    v = head_neuron(trace, h, i, j)
    st.caption(_("A score is a dot product: query i's vector times key j's, feature by feature, summed. Here are the "
                 "two vectors of this head ({d_k} features each: d_k), their product feature by feature, and the "
                 "arithmetic from it to the attention weight.").format(d_k=v.d_k))
    before = v.q_before is not None and st.toggle(
        _("Show q and k before RoPE too"), help=_("RoPE turns each query and key by its position before the dot "
                                                  "product; the score uses the turned vectors."),
        **state.bind(key + BEFORE, bool(state.kept(key + BEFORE, False))))
    rows = {"q_i": v.q_i, "k_j": v.k_j}  # names that do not change with i and j: one chart layout for every pair
    if v.q_before is not None:
        rows = {_("q after RoPE"): v.q_i, _("k after RoPE"): v.k_j}
        if before:
            rows = {_("q before RoPE"): v.q_before, _("k before RoPE"): v.k_before, **rows}
    charts.show_chart(vectors_chart(rows, v.product, x_title=_("feature (0 … {last})").format(last=v.d_k - 1)),
                      width="stretch")
    st.markdown(largest_words(v))
    st.markdown(arithmetic(v, q_labels[i], k_labels[j], shown))
    if v.q_before is not None:
        st.markdown(rope_words(v, getattr(trace, "positions", None)))


def _side(origin: attn_models.Origin, key: str, page: tuple) -> tuple[attn_models.Origin, tuple]:
    """A translator's choice of its attentions (the page's cross-attention head; its decoder's or encoder's
    self-attention at the same layer and head); the origin as it is for any other model. ``page``: what the page
    says of the attention it draws (its weights, its labels), kept for that one only (else Nones)."""
    if origin.side is None:
        return origin, page
    side = st.segmented_control(_("Attention"), list(SIDES), format_func=i18n.option_labels(SIDES),
                                **state.bind(key + SIDE, state.kept(key + SIDE, origin.side, list(SIDES)))) or "cross"
    if side == origin.side:
        return origin, page
    if side == "decoder":
        return replace(origin, side="decoder"), (None, None)
    n_enc = model_views.model(origin.model).config.n_layers  # the encoder's layers (a T5's config)
    if origin.layer >= n_enc:
        st.caption(_("The encoder has {n} layers: its last, layer {layer}, is shown.").format(n=n_enc,
                                                                                          layer=n_enc - 1))
    return replace(origin, side="encoder", target=None, layer=min(origin.layer, n_enc - 1)), (None, None)


def _pick(key: str, q_labels: list[str], k_labels: list[str], weights: np.ndarray, last: bool) -> tuple[int, int]:
    """The query and key selectboxes: the query kept (else the last one for a causal or cross-attention, else
    token 1), the key kept while the query stays (else the key the query weighs most)."""
    row = st.container(horizontal=True)
    queries, keys = list(range(len(q_labels))), list(range(len(k_labels)))
    i = row.selectbox(_("Query token"), queries, format_func=q_labels.__getitem__, width=260,
                      **state.bind(key + QUERY, _kept(key + QUERY, queries[-1] if last else min(1, queries[-1]),
                                                      queries), partial(_new_query, key)))
    j = row.selectbox(_("Key token"), keys, format_func=k_labels.__getitem__, width=260,
                      help=_("At first, the key this query weighs most."),
                      **state.bind(key + KEY, _kept(key + KEY, int(np.argmax(weights[i])), keys)))
    return int(i), int(j)


def _kept(key: str, default: int, options: list[int]) -> int:
    """The choice kept for widget ``key`` while it is one of ``options`` (another text, another attention of a T5
    may have fewer tokens), else ``default``."""
    value = state.kept(key, default)
    return value if value in options else default


def _new_query(key: str) -> None:
    """A new query: keep it, and let the key go back to the one it weighs most."""
    kept = st.session_state[state.KEPT]
    kept[key + QUERY] = st.session_state[key + QUERY]
    kept.pop(key + KEY, None)


# ---- the words, on the numbers shown ------------------------------------------------------------------------------


def num(x: float) -> str:
    """A number of the arithmetic, as the page writes it (DIGITS decimals, the app's minus)."""
    return format_number(x, DIGITS)


def largest_words(v: NeuronView) -> str:
    """The features whose products weigh most in the score, with their q, k and product (Markdown)."""
    parts = [_("feature {d}: {q} × {k} = {p}").format(d=int(d), q=num(v.q_i[d]), k=num(v.k_j[d]),
                                                      p=num(v.product[d])) for d in v.largest(NAMED)]
    if len(v.product) > NAMED:  # the chart marks them (vectors_chart: with NAMED or fewer it marks none)
        return _("**The largest products** (in size; ▲ under the chart): {parts}.").format(parts="; ".join(parts))
    return _("**The products** (largest in size first): {parts}.").format(parts="; ".join(parts))


def arithmetic(v: NeuronView, q_label: str, k_label: str, shown: np.ndarray | None) -> str:
    """Σ (q ⊙ k) = score, the scaling (or none), the bias, the mask and the weight, each with its number (Markdown
    lines)."""
    lines = [_("**Score** = Σ (q ⊙ k), the sum of the {d_k} products: **{score}** (the cell of Q Kᵀ).").format(
        d_k=v.d_k, score=num(v.score))]
    if v.divisor == 1.0:
        lines.append(_("**Scaled**: this model does not divide its scores (÷ 1): **{scaled}**.").format(
            scaled=num(v.scaled)))
    elif np.isclose(v.divisor, np.sqrt(v.d_k), rtol=1e-12, atol=0):
        lines.append(_("**Scaled** = score ÷ √d_k = {score} ÷ √{d_k} = {score} ÷ {div} = **{scaled}**.").format(
            score=num(v.score), d_k=v.d_k, div=num(v.divisor), scaled=num(v.scaled)))
    else:
        lines.append(_("**Scaled** = score ÷ {div} = **{scaled}**.").format(div=num(v.divisor), scaled=num(v.scaled)))
    if v.bias is not None:
        lines.append(_("**+ score bias** (what the model adds for this query and key; a T5's learned relative-position "
                       "bias): {scaled} + ({bias}) = **{biased}**.").format(scaled=num(v.scaled), bias=num(v.bias),
                                                                           biased=num(v.biased)))
    if not v.allowed:
        lines.append(_("**Masked**: this query may not read this key, so its score becomes −∞ and its weight 0."))
    weight = _("**Weight** after the softmax over the query's row: **{weight}**").format(weight=num(v.weight))
    if shown is not None and abs(float(shown[v.i, v.j]) - v.weight) <= SAME:
        weight = _("{weight}: the heatmap's cell ({query}, {key}).").format(
            weight=weight, query=text.md_escape(q_label), key=text.md_escape(k_label))
    else:
        weight += "."
    return "  \n".join([*lines, weight])


def rope_words(v: NeuronView, positions: np.ndarray | None) -> str:
    """What RoPE changed in this score: the dot product before and after the rotation, on the numbers shown."""
    pi, pj = (v.i, v.j) if positions is None else (int(positions[v.i]), int(positions[v.j]))
    return _("**RoPE**: q is turned by its position {pi} and k by {pj}, pair of features by pair of features, so "
             "their dot product depends on the offset {off}. Before the turn it would be {before}; after it, the "
             "score is {score}.").format(pi=pi, pj=pj, off=pi - pj, before=num(v.score_before), score=num(v.score))
