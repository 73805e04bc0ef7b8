"""The Scaling page's charts: the variance of the scores against d_k, and how the divisor saturates softmax.

Chart factories: they take arrays and labels, return charts, and never call st. Heatmaps come from
:mod:`attn_ui.widgets.heatmap`. Their titles are in the session's language (:mod:`attn_ui.app.i18n`); the saturation
charts keep them in their layouts.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from attn_core import AttentionTrace, analysis, scaled_dot_product_attention
from attn_ui.app.i18n import _
from attn_ui.infra import budget
from attn_ui.widgets import charts

#: colour-blind-safe pair (ColorBrewer PuOr ends) for raw vs scaled
RAW_COLOUR, SCALED_COLOUR = "#e66101", "#5e3c99"
#: more query rows than this are summarised (mean line and min–max band) instead of one line each
MAX_LINES = 12
GUIDE_GREY = "#808495"  # dashed guides and rules: visible on the light and on the dark background
PLOT_HEIGHT = 230
#: the variance sweep's width with its axes and legend: the page's, at most this (as drawn at a fixed width before: a
#: 390 px phone's screen cut it; tests/e2e/test_phone.py)
SWEEP_MAX_PX = 495
#: the divisor slider's stops: 0.01 … 1000, 10 a decade (made once, not on every run of the page)
SLIDER_STOPS = analysis.log_grid(*analysis.DIVISOR_RANGE, 10, digits=2).tolist()
CURVE_DIVISORS = analysis.log_grid(*analysis.DIVISOR_RANGE, 20)  # [101]: the saturation curves' x axis


@budget.cached("scaling_variance", slots=budget.EXPLORER_SLOTS)
def variance_sweep(d_ks: tuple[int, ...], n_samples: int, seed: int) -> analysis.VarianceSweep:
    """analysis.variance_sweep, kept: the same for every learner."""
    return analysis.variance_sweep(d_ks, n_samples=n_samples, seed=seed)


@budget.cached("scaling_saturation", slots=budget.EXPLORER_SLOTS)
def saturation_numbers(scores: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """analysis.saturation at :data:`CURVE_DIVISORS`: each row's largest weight and entropy, [n_div, n_q] each."""
    return analysis.saturation(scores, CURVE_DIVISORS, mask)


@budget.cached("scaling_unscaled", slots=budget.EXPLORER_SLOTS)
def _unscaled_dot(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, bias: np.ndarray | None,
                  softcap: float | None) -> AttentionTrace:  # [n_q, d_k], [n_k, d_k], [n_k, d_v] -> trace
    return scaled_dot_product_attention(q, k, v, scale="none", mask=mask, bias=bias, softcap=softcap)


def unscaled_head(t: AttentionTrace) -> AttentionTrace | None:
    """Head ``t`` with its scores divided by 1: the same q, k (as scored: QK-normed and rotated where the trace did
    so), v, mask, soft cap and score bias, through attn_core's one head. Only a head whose scores are dot products
    (None otherwise: compute the whole unscaled configuration): one head's attention, not every head's again.

    >>> from attn_core import self_attention
    >>> t = self_attention(np.eye(2), np.eye(2), 2 * np.eye(2), np.eye(2))
    >>> unscaled_head(t).divisor, bool(np.allclose(unscaled_head(t).scores, t.scores))
    (1.0, True)
    """
    if t.score_fn != "dot":
        return None
    return _unscaled_dot(t.q, t.k, t.v, t.mask, t.bias, t.softcap)


def rows_not_one_hot(scores: np.ndarray, mask: np.ndarray | None) -> list[tuple[int, int]]:
    """The query rows that a small divisor does not push to one-hot, with how many keys share their largest score
    (0: every key masked). ``scores`` [n_q, n_k] unscaled, ``mask`` bool [n_q, n_k] (True = may attend) or None.

    >>> rows_not_one_hot(np.array([[2.0, 4.0, 4.0], [1.0, 0.0, 3.0]]), None)
    [(0, 2)]
    """
    allowed = np.ones(scores.shape, dtype=bool) if mask is None else mask
    masked = np.where(allowed, scores, -np.inf)  # [n_q, n_k]
    top = masked.max(axis=1, keepdims=True)  # [n_q, 1]
    n_top = np.where(allowed.any(axis=1), (allowed & (masked == top)).sum(axis=1), 0)  # [n_q]
    return [(int(i), int(n_top[i])) for i in np.flatnonzero(n_top != 1)]


def variance_sweep_chart(
    d_k: np.ndarray, raw: np.ndarray, scaled: np.ndarray, *, current_d_k: int | None = None
) -> alt.LayerChart:  # d_k, raw, scaled [n_d]
    """Variance of raw and of scaled scores against d_k, both axes logarithmic, with the line var = d_k.

    Parameters
    ----------
    d_k : ndarray of int, shape (n_d,)
    raw, scaled : ndarray of shape (n_d,)
        var(QKᵀ) and var(QKᵀ/√d_k) at each d_k.
    current_d_k : int, optional
        Marked with a vertical rule ("your d_k").
    """
    raw_name, scaled_name = "var(QKᵀ)", "var(QKᵀ / √d_k)"
    data = pd.DataFrame({
        "d_k": np.tile(d_k, 2),
        "variance": np.concatenate([raw, scaled]),
        "series": np.repeat([raw_name, scaled_name], len(d_k)),
    })
    x = alt.X("d_k:Q", title=_("d_k (width of queries and keys)"),
              scale=alt.Scale(type="log", base=2, domain=[1, int(max(d_k))]),
              axis=alt.Axis(values=[int(v) for v in d_k], format="d"))
    top = float(max(np.max(raw), np.max(d_k)))
    ticks = [float(4.0**i) for i in range(int(np.log(top) / np.log(4)) + 2)]  # 1, 4, 16, ...
    y = alt.Y("variance:Q", title=_("variance of the scores"),
              scale=alt.Scale(type="log", base=2, domain=[0.5, ticks[-1]]), axis=alt.Axis(values=ticks, format="~g"))
    colour = alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom"),
                       scale=alt.Scale(domain=[raw_name, scaled_name], range=[RAW_COLOUR, SCALED_COLOUR]))
    lines = alt.Chart(data).mark_line(point=True).encode(
        x=x, y=y, color=colour,
        tooltip=[alt.Tooltip("series:N", title=_("measured")), alt.Tooltip("d_k:Q", title=_("d_k (width)")),
                 alt.Tooltip("variance:Q", title=_("variance"), format=".4f")],
    )
    guide = alt.Chart(pd.DataFrame({"d_k": d_k, "variance": d_k.astype(float)})).mark_line(
        strokeDash=[4, 4], color=GUIDE_GREY
    ).encode(x=x, y=y)
    layers = [guide, lines]
    if current_d_k is not None:
        layers += _rules([(_("your d_k = {d_k}").format(d_k=current_d_k), float(current_d_k))], "d_k", x,
                         (1.0, float(max(d_k))))
    # autosize "pad": the plot is this size and the axes, the legend and the label above it are added around it
    # (Streamlit's default for a layer chart, "fit", squeezed all of them into this size: a plot ~120 px tall)
    # as wide as its box (pages/scaling.py: the page's, at most SWEEP_MAX_PX), the axes and legend inside it
    return alt.layer(*layers).properties(width="container", height=PLOT_HEIGHT,
                                         autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def saturation(
    divisors: np.ndarray,
    max_weight: np.ndarray,
    entropy: np.ndarray,
    row_labels: list[str],
    marks: list[tuple[str, float]],
) -> tuple[charts.Chart, charts.Chart]:  # divisors [n_div], max_weight and entropy [n_div, n_q]
    """Two line charts over the divisor (log axis): each query row's largest weight, and its entropy.

    Two charts, not one side by side, so that the page can put them in columns that stack on a narrow screen (a
    phone's 390 px held one 340 px plot, never two); each stretches to its column's width.

    Parameters
    ----------
    divisors : ndarray of shape (n_div,)
    max_weight, entropy : ndarray of shape (n_div, n_q)
    row_labels : list of str, length n_q
    marks : list of (label, divisor)
        Vertical rules, e.g. ("÷ √d_k", 1.732).
    """
    decades = [float(10.0**e) for e in range(int(np.floor(np.log10(divisors[0]))),
                                             int(np.ceil(np.log10(divisors[-1]))) + 1)]
    lines = tuple(row_labels) if len(row_labels) <= MAX_LINES else len(row_labels)
    frames = [_per_row_frame(divisors, max_weight, row_labels), _per_row_frame(divisors, entropy, row_labels),
              _rules_frame(marks, "divisor", (decades[0], decades[-1]))]
    n = len(row_labels)  # the band's titles are used only for more than MAX_LINES rows: always a plural
    titles = (
        _("divisor s (temperature)"), _("divisor s"), _("query"),
        (_("largest weight in the row"), _("largest weight in the row"),
         _("largest weight in the row: mean and range over {n} rows").format(n=n),
         _("largest weight in the row, mean over rows")),
        (_("entropy of the row (nats)"), _("entropy of the row"),
         _("entropy of the row (nats): mean and range over {n} rows").format(n=n),
         _("entropy of the row, mean over rows")),
    )
    rules = frames[2]
    return (charts.Chart(saturation_build, (tuple(decades), lines, titles, 0), (frames[0], rules)),
            charts.Chart(saturation_build, (tuple(decades), lines, titles, 1), (frames[1], rules)))




def saturation_build(layout: tuple, data: list, domains: list) -> alt.LayerChart:
    """The chart of a :func:`saturation` layout (its builder): the largest weight (side 0) or the entropy (side 1),
    as wide as its column."""
    decades, lines, (x_title, divisor_title, query_title, top_titles, entropy_titles), side = layout
    x = alt.X("divisor:Q", title=x_title, scale=alt.Scale(type="log", domain=[decades[0], decades[-1]]),
              axis=alt.Axis(values=list(decades), format="~g"))
    plot = _per_row_chart(data[0], lines, x, (top_titles, entropy_titles)[side], (divisor_title, query_title),
                          [0, 1] if side == 0 else None)
    return alt.layer(plot, *_rules_chart(data[1], "divisor", x)).properties(
        width="container", height=PLOT_HEIGHT, autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def _per_row_frame(divisors: np.ndarray, values: np.ndarray, row_labels: list[str]) -> charts.Frame:
    """One row per (divisor, query) for a few rows; the mean and range over rows for many."""  # values [n_div, n_q]
    if len(row_labels) <= MAX_LINES:
        return charts.table({
            "divisor": np.repeat(divisors, len(row_labels)),
            "value": values.ravel(),
            "query": charts.tiled(row_labels, len(divisors)),
        })
    return charts.table({
        "divisor": divisors, "mean": values.mean(axis=1), "lo": values.min(axis=1), "hi": values.max(axis=1),
    })


def _per_row_chart(
    data, lines: tuple[str, ...] | int, x: alt.X, titles: tuple[str, str, str, str], tips: tuple[str, str], y_domain,
) -> alt.Chart:
    """One line per query row (``lines`` their labels), or (``lines`` a count) the mean over rows with a min–max
    band.

    ``titles``: the y axis's title, its tooltip's, and both for the mean and range; ``tips``: the divisor's and the
    query's tooltip titles.
    """
    y_title, y_tip, band_title, mean_tip = titles
    divisor_tip, query_tip = tips
    y_scale = alt.Scale(domain=y_domain) if y_domain else alt.Undefined
    size = {"height": PLOT_HEIGHT}  # the width: the layer's (saturation_build), its column's
    if not isinstance(lines, int):
        return alt.Chart(data).mark_line().encode(
            x=x,
            y=alt.Y("value:Q", title=y_title, scale=y_scale),
            color=alt.Color("query:N", sort=list(lines), title=query_tip, scale=alt.Scale(scheme="tableau10")),
            tooltip=[alt.Tooltip("query:N", title=query_tip), alt.Tooltip("divisor:Q", title=divisor_tip, format=".3g"),
                     alt.Tooltip("value:Q", title=y_tip, format=".4f")],
        ).properties(**size)
    base = alt.Chart(data).encode(x=x)
    band = base.mark_area(opacity=0.25, color=SCALED_COLOUR).encode(
        y=alt.Y("lo:Q", title=band_title, scale=y_scale), y2="hi:Q"
    )
    line = base.mark_line(color=SCALED_COLOUR).encode(
        y="mean:Q", tooltip=[alt.Tooltip("divisor:Q", title=divisor_tip, format=".3g"),
                             alt.Tooltip("mean:Q", title=mean_tip, format=".4f")]
    )
    return alt.layer(band, line).properties(**size)


ROW_PX = 14  # px: one label row above a chart (10 px text)


def _rules(marks: list[tuple[str, float]], field: str, x: alt.X, domain: tuple[float, float]) -> list[alt.Chart]:
    """Dashed vertical rules, their labels above the plot (:func:`_rules_frame`)."""
    return _rules_chart(_rules_frame(marks, field, domain), field, x)


def _rules_frame(marks: list[tuple[str, float]], field: str, domain: tuple[float, float]) -> charts.Frame:
    """The rules' data: each label gets a row of its own above the plot (the smallest divisor the lowest row), so no
    two labels overlap and none covers a curve, however close the divisors; a label in the right 40 % of the
    (logarithmic) x ``domain`` ends at its rule instead of starting there, so it stays over the plot."""
    values = [float(v) for _label, v in marks]
    order = sorted(range(len(values)), key=values.__getitem__)
    lo, hi = np.log(domain[0]), np.log(domain[1])
    return charts.table({
        field: values, "label": [label for label, _v in marks],
        "ypos": [-8 - ROW_PX * (1 + order.index(i)) for i in range(len(values))],  # pixels: above the plot's top
        "right": [bool((np.log(v) - lo) / (hi - lo) > 0.6) for v in values],
    })


def _rules_chart(data, field: str, x: alt.X) -> list[alt.Chart]:
    rule = alt.Chart(data).mark_rule(strokeDash=[3, 3], color=GUIDE_GREY, clip=True).encode(x=x)
    marker = alt.Chart(data).mark_point(shape="triangle-down", filled=True, size=30, color=GUIDE_GREY).encode(
        x=x, y=alt.YValue(-4))  # at the top of the rule, just above the plot
    y = alt.Y("ypos:Q", scale=None)
    # the guides' grey, 12 px: readable on the light and on the dark background (a text mark's default ink is black)
    ink = {"baseline": "middle", "color": GUIDE_GREY, "fontSize": 12}
    left = alt.Chart(data).transform_filter("!datum.right").mark_text(align="left", dx=-3, **ink).encode(
        x=x, y=y, text="label:N")
    right = alt.Chart(data).transform_filter("datum.right").mark_text(align="right", dx=3, **ink).encode(
        x=x, y=y, text="label:N")
    return [rule, marker, left, right]
