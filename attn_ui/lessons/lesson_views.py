"""Learn's charts besides heatmaps: grouped bars (entropy of each row before and after, the variances of Q, K and
the scores) and stacked ones (where each head of a real model puts its weight).

A chart factory: it takes arrays and labels, returns an :class:`attn_ui.widgets.charts.Chart`, and never calls st.
Heatmaps come from :mod:`attn_ui.widgets.heatmap`.

The titles it is given are already in the learner's language; its own words (the tooltip's) are translated into
the layout, so a spec cached for one language is never shown in another.
"""

from __future__ import annotations

import unicodedata

import altair as alt
import numpy as np

from attn_ui.app.i18n import _
from attn_ui.widgets import charts
from attn_ui.widgets.numbers import format_numbers

#: colour-blind-safe pair (ColorBrewer PuOr ends, as on Scaling), then Okabe–Ito
SERIES_COLOURS = ("#5e3c99", "#e66101", "#009e73", "#0072b2")
BAR_PX = 26  # least width of one bar
HEIGHT = 200


def bars(
    title: str, categories: tuple[str, ...], series: tuple[tuple[str, np.ndarray], ...], *, y_title: str,
    precision: int = 4, stacked: bool = False,
) -> charts.Chart:  # each series' values [n_categories]
    """One group of bars per category, one bar per series, each with its value written above it; or, ``stacked``,
    one bar per category made of the series' parts (their values in the tooltip).

    Parameters
    ----------
    title : str
    categories : tuple of str
        The groups, left to right (unique).
    series : tuple of (str, ndarray of shape (n_categories,))
        The bars of each group, in order; their names go in the legend (none for a single series).
    y_title : str
    precision : int
        Decimals of the numbers written above the bars (attn_ui.widgets.numbers, "short").
    stacked : bool
        The series' parts one above the other (e.g. shares that add up to 1), in the order given from the bottom.

    Examples
    --------
    >>> c = bars("Variances", ("Q", "K"), (("variance", np.array([1.0, 64.0])),), y_title="variance")
    >>> spec = c.to_dict()
    >>> spec["layer"][0]["mark"]["type"], c.data[0].column("text").to_pylist()
    ('bar', ['1', '64'])
    """
    names = tuple(name for name, _ in series)
    values = np.concatenate([np.asarray(v, dtype=float) for _, v in series])  # [n_series · n_categories]
    data = charts.table({
        "category": np.tile(np.array(categories, dtype=object), len(series)),
        "series": np.repeat(np.array(names, dtype=object), len(categories)),
        "value": values,
        "text": format_numbers(values, precision, "short"),
    })
    bar_px = max(BAR_PX, 7 * max(map(len, data.column("text").to_pylist())) + 10)  # room for its number (12 px)
    group_px = max(BAR_PX + 16 if stacked else len(names) * bar_px + 16, 7 * max(map(len, categories)) + 16)
    tips = (_("of"), _("series"), _("value"))  # the tooltip's field titles
    return charts.Chart(bars_build, (title, categories, names, y_title, group_px, stacked, tips), (data,))


def text_px(text: str, char_px: float) -> int:
    """About how wide ``text`` is drawn: ``char_px`` a character, twice that for a wide one (Chinese, Korean)."""
    return round(sum(2 * char_px if unicodedata.east_asian_width(ch) in "WF" else char_px for ch in text))


def bars_build(layout: tuple, data: list, domains: list) -> alt.LayerChart:
    """The chart of a :func:`bars` layout (its builder: the structure depends on the layout only)."""
    title, categories, names, y_title, group_px, stacked, tips = layout
    colour = alt.Color("series:N", title=None, scale=alt.Scale(domain=list(names), range=list(SERIES_COLOURS)),
                       legend=alt.Legend(orient="top", labelLimit=0) if len(names) > 1 else None)
    x = alt.X("category:N", sort=list(categories), title=None, axis=alt.Axis(labelAngle=0))
    tooltip = [alt.Tooltip("category:N", title=tips[0]), alt.Tooltip("series:N", title=tips[1]),
               alt.Tooltip("text:N", title=tips[2])]
    # as wide as its title (13 px bold) and its legend in one row above the bars (each name 11 px, a swatch, a gap)
    title_px = text_px(title, 7.5)
    legend_px = sum(text_px(name, 6.5) + 30 for name in names) if len(names) > 1 else 0
    size = {"width": max(200, len(categories) * group_px, title_px, legend_px), "height": HEIGHT}
    if stacked:
        order = alt.Order("rank:Q")  # the series from the bottom up, in the order given
        return alt.Chart(data[0], title=title).transform_calculate(
            rank=f"indexof({list(names)!r}, datum.series)"
        ).mark_bar(width=BAR_PX).encode(x=x, y=alt.Y("value:Q", title=y_title, stack="zero"), color=colour,
                                         order=order, tooltip=tooltip).properties(**size)
    base = alt.Chart(data[0], title=title).encode(x=x, xOffset=alt.XOffset("series:N", sort=list(names)),
                                                  y=alt.Y("value:Q", title=y_title))
    bar = base.mark_bar().encode(color=colour, tooltip=tooltip)
    # grey, 12 px: readable above the bars on the light and on the dark background (a text mark's default is black)
    text = base.mark_text(dy=-6, fontSize=12, baseline="bottom", color="#808495").encode(text="text:N")
    return alt.layer(bar, text).properties(**size)
