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
#: across (horizontal bars): the bars' room (the title is broken into lines this wide), the longest a category's
#: label is drawn (ellipsis beyond: the tooltip has it whole), one bar's step; with the axis, the numbers after the
#: bars and a padding, about 330 px: the chart fits a 390 px phone's page (≈ 358 px inside Streamlit's padding;
#: tests/e2e/test_phone.py)
ACROSS_PX = 200
LABEL_PX = 96
ACROSS_BAR_PX = 16
ROOM = 1.3  # the value axis runs to 1.3 × the largest value: room for its number after the longest bar


def bars(
    title: str, categories: tuple[str, ...], series: tuple[tuple[str, np.ndarray], ...], *, y_title: str,
    precision: int = 4, stacked: bool = False, across: bool = False,
) -> charts.Chart:  # each series' values [n_categories]
    """One group of bars per category, one bar per series, each with its value written above it; or, ``stacked``,
    one bar per category made of the series' parts (their values in the tooltip); or, ``across``, horizontal bars,
    the categories down the side and each value after its bar, in a chart as narrow as a phone's page whatever the
    number of categories (the title broken into lines to fit).

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
    across : bool
        Horizontal bars (not with ``stacked``): ``y_title`` then names the value axis, at the bottom.

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
    if across:
        return charts.Chart(across_build, (title_lines(title, ACROSS_PX), categories, names, y_title,
                                           tips), (data,))
    return charts.Chart(bars_build, (title, categories, names, y_title, group_px, stacked, tips), (data,))


def title_lines(title: str, width_px: int) -> tuple[str, ...]:
    """``title`` broken at spaces into lines about ``width_px`` wide at most (13 px bold: :func:`text_px`); a word
    longer than that stays whole on its line.

    >>> title_lines("Next token at T = 1, as trained and with heads off", 200)
    ('Next token at T = 1, as', 'trained and with heads off')
    """
    lines: list[str] = []
    for word in title.split(" "):
        if lines and text_px(f"{lines[-1]} {word}", 7.5) <= width_px:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return tuple(lines)


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


def across_build(layout: tuple, data: list, domains: list) -> alt.LayerChart:
    """The chart of a :func:`bars` layout ``across``: a bar per series in each category's row, its number after it;
    the value axis runs to :data:`ROOM` × the largest value (an unseen mark there), so the numbers stay inside."""
    title, categories, names, x_title, tips = layout
    colour = alt.Color("series:N", title=None, scale=alt.Scale(domain=list(names), range=list(SERIES_COLOURS)),
                       legend=alt.Legend(orient="top", labelLimit=0, columns=1) if len(names) > 1 else None)
    y = alt.Y("category:N", sort=list(categories), title=None, axis=alt.Axis(labelLimit=LABEL_PX))
    tooltip = [alt.Tooltip("category:N", title=tips[0]), alt.Tooltip("series:N", title=tips[1]),
               alt.Tooltip("text:N", title=tips[2])]
    base = alt.Chart(data[0]).encode(y=y, yOffset=alt.YOffset("series:N", sort=list(names)))
    x = alt.X("value:Q", title=x_title, axis=alt.Axis(tickCount=4))
    bar = base.mark_bar().encode(x=x, color=colour, tooltip=tooltip)
    text = base.mark_text(dx=3, align="left", baseline="middle", fontSize=12, color="#808495").encode(
        x="value:Q", text="text:N")
    room = base.transform_calculate(room=f"datum.value * {ROOM}").mark_point(opacity=0).encode(x="room:Q")
    return alt.layer(bar, text, room, title=alt.Title(list(title))).properties(
        width=ACROSS_PX, height=alt.Step(ACROSS_BAR_PX),  # one bar (with yOffset the step is each series' bar)
        autosize=alt.AutoSizeParams(type="pad", contains="padding"))  # the labels around the plot, not inside it
