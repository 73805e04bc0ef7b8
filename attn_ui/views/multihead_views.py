"""The head views of the Multi-head page: matrices marked by head slice, per-head weights, the shapes table.

Chart factories (as :mod:`attn_ui.widgets.heatmap`): they take arrays and labels, return an
:class:`attn_ui.widgets.charts.Chart`
(or a DataFrame), and never call st. Test them through ``chart.to_dict()``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attn_core import (
    INITIALIZERS,
    LIMITS,
    AttentionInputError,
    Config,
    ModernTrace,
    MultiHeadTrace,
    config_mask,
    cross_attention,
    head_score,
    head_slice,
    initialize,
    merge_heads,
    modern_attention,
    multi_head_cross_attention,
    run,
    valid_head_counts,
    validate_config,
    whole_size,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.views import compute
from attn_ui.widgets import charts, controls, grid_editor, heatmap, randomise, text
from attn_ui.widgets.numbers import format_numbers

HEAD_SHADES = ("#e3e3e3", "#b0b0b0")  # alternate greys for the head bands (readable without colour vision)
BOUNDARY_COLOUR = "#222222"
WIDE_LABEL_PX = 46  # a head band at least this wide is labelled "head h", a narrower one "h"
MATRIX_CELLS = 2_048  # most cells drawn in one head-marked matrix (more rows: shown a page at a time)
MATRIX_PX = 880  # widest a matrix is drawn, in pixels
ROWS_PX = 320  # tallest (rows share it; a row is 2..44 px)
AXIS_LABELS = 24  # more positions than this: only some are labelled
FONT = 12  # px: numbers on cells and labels (at least 12: read at a glance)
#: most cells drawn in all the per-head weight panels together: each drawn cell costs the browser tens of µs in one
#: task (12,000 took one of ≈ 0.5 s at the caps, bench/RESULTS.md, issue 28); 8 heads of 22 tokens, 16 of 16
PANEL_CELLS = 4_096
PANEL_PX = 300  # pixel budget of one per-head panel
ROW_PX = 900  # pixel budget of one row of per-head panels (the page's width)
BLOCK_CELLS = 512  # most numbers printed in one head's block of concat (more rows: a page at a time)
BLOCK_ROWS = 32  # ... and most rows
BLOCK_ROW_PX = 24  # height of a row of printed numbers


def rows_that_fit(n_rows: int, n_cols: int, max_cells: int = MATRIX_CELLS) -> int:
    """How many leading rows of an [n_rows, n_cols] matrix to draw so at most ``max_cells`` are drawn.

    Every column is kept (the head slices are columns), so only rows are left out.

    Examples
    --------
    >>> rows_that_fit(3, 512), rows_that_fit(512, 512)
    (3, 4)
    """
    return max(1, min(n_rows, max_cells // max(n_cols, 1)))


def tokens_that_fit(n_seq: int, n_heads: int, max_cells: int = PANEL_CELLS) -> int:
    """How many leading tokens each per-head [n_seq, n_seq] panel can show within ``max_cells`` in all.

    Examples
    --------
    >>> tokens_that_fit(3, 8), tokens_that_fit(256, 16)
    (3, 16)
    """
    return max(1, min(n_seq, math.isqrt(max_cells // max(n_heads, 1))))


def head_label(h: int, band_px: int) -> str:
    """"head h" when the band is wide enough to hold it, else just "h"."""
    return _("head {h}").format(h=h) if band_px >= WIDE_LABEL_PX else str(h)


def axis_values(n: int, group: int) -> list[int] | None:
    """Which of n positions to label: all when few (None), else every group's start (or every n/8).

    Examples
    --------
    >>> axis_values(4, 2) is None, axis_values(512, 64)[:3], axis_values(100, 100)[:3]
    (True, [0, 64, 128], [0, 13, 26])
    """
    if n <= AXIS_LABELS:
        return None
    step = group if 2 <= n // group <= AXIS_LABELS else math.ceil(n / 8)
    return list(range(0, n, step))


def _axis(values: list[int] | None, **kwargs) -> alt.Axis:
    return alt.Axis(**kwargs, **({"values": values} if values else {}))  # altair 6 rejects values=None


def cell_frame(
    values: np.ndarray, row_labels: list[str], precision: int, *, labels: bool = True, **extra: np.ndarray
) -> charts.Frame:  # [r, c] -> r·c rows
    """One row per cell: (row_i, col_i, value, the row's label "row" and the value as "text" unless ``labels`` is
    False, and any ``extra`` columns), built in one step.

    Examples
    --------
    >>> cell_frame(np.array([[-0.00001, 2.0, -0.0]]), ["a"], 2)["text"].to_pylist()
    ['>−0.01', '2.00', '0.00']
    >>> cell_frame(np.array([[-0.00001, 2.0]]), ["a"], 2, labels=False).column_names
    ['row_i', 'col_i', 'value']
    """
    r, c = values.shape
    flat = values.ravel()
    columns = {"row_i": np.repeat(np.arange(r), c), "col_i": np.tile(np.arange(c), r), "value": flat}
    if labels:
        columns["row"] = charts.repeated(row_labels, c)
        columns["text"] = format_numbers(flat, precision)
    return charts.table({**columns, **extra})


def cell_sizes(values: np.ndarray, precision: int) -> tuple[int, int, bool]:
    """(column px, row px, numbers shown) for a matrix drawn within MATRIX_PX × ROWS_PX pixels.

    Numbers are printed when the matrix is small and every column fits its widest number; a wide
    matrix gets narrow columns and rows of a readable height (cells need not be square).
    """
    r, c = values.shape
    if r * c <= heatmap.MAX_TEXT_CELLS:
        text_px = max(28, heatmap.cell_width(0, max(map(len, format_numbers(values.ravel(), precision)))))
        if c * text_px <= MATRIX_PX:
            return text_px, 28, True
    return max(1, min(44, MATRIX_PX // c)), max(2, min(44, ROWS_PX // r)), False


def head_strip(n_cols: int, n_heads: int, px: int) -> alt.LayerChart:  # one band per head over n_cols columns
    """A one-row strip over the columns: alternating grey bands, one per head, labelled "head 0", ...

    Drawn above a matrix with the same columns and column width ``px``, it marks each head's slice.
    """
    d = n_cols // n_heads
    j = np.arange(n_cols)
    bands = pd.DataFrame({
        "col_i": j,
        "shade": (j // d) % 2,
        "slice": [_("head {h}: columns {first}–{last}").format(h=h, first=h * d, last=h * d + d - 1) for h in j // d],
    })
    rect = alt.Chart(bands).mark_rect().encode(
        x=alt.X("col_i:O", axis=None),
        color=alt.Color("shade:N", scale=alt.Scale(domain=[0, 1], range=list(HEAD_SHADES)), legend=None),
        tooltip=[alt.Tooltip("slice:N", title=_("head slice"))],
    )
    centre = d / 2  # columns from a band's left edge to its middle: a column's edge (even d) or centre (odd d)
    labels = pd.DataFrame({
        "col_i": [h * d + int(centre) for h in range(n_heads)],
        "label": [head_label(h, d * px) for h in range(n_heads)],
    })
    text = alt.Chart(labels).mark_text(fontSize=FONT, fontWeight="bold").encode(
        x=alt.X("col_i:O", axis=None, bandPosition=centre - int(centre)),
        text="label:N",
    )
    return alt.layer(rect, text).properties(width=alt.Step(px), height=18)


def head_boundaries(n_cols: int, n_heads: int) -> alt.Chart:
    """Vertical rules on the column boundaries between heads (none for one head)."""
    d = n_cols // n_heads
    starts = pd.DataFrame({"col_i": [h * d for h in range(1, n_heads)]})
    return alt.Chart(starts).mark_rule(color=BOUNDARY_COLOUR, strokeWidth=2, aria=False).encode(  # drawn lines only
        x=alt.X("col_i:O", bandPosition=0),
    )


@dataclass(frozen=True)
class MatrixLayout:
    """Everything about a :func:`head_matrix` but its numbers (the key of its cached spec, attn_ui.widgets.charts)."""

    n_rows: int
    n_cols: int
    row_labels: tuple[str, ...]
    n_heads: int | None
    title: str
    x_title: str
    y_title: str
    col_px: int
    row_px: int
    show_text: bool
    precision: int = 4
    description: str = ""
    lang: str = i18n.DEFAULT  # the language of the words the builder adds (tooltips, head labels): part of the key

    @property
    def on_canvas(self) -> bool:
        """Many cells and no numbers: drawn on a canvas, its data without per-cell labels (as a heatmap's)."""
        return not self.show_text and self.n_rows * self.n_cols >= heatmap.CANVAS_CELLS


def matrix_build(layout: MatrixLayout, data: list, domains: list) -> alt.LayerChart | alt.VConcatChart:
    """The chart of a :class:`MatrixLayout` on ``data[0]`` with colour domain ``domains[0]`` (:func:`head_matrix`'s
    builder). Its words are in the session's language, which is ``layout.lang`` (the factory's)."""
    lay = layout
    r, c, n_heads = lay.n_rows, lay.n_cols, lay.n_heads
    group = c // n_heads if n_heads else c
    base = alt.Chart(data[0]).encode(
        x=alt.X("col_i:O", title=lay.x_title, axis=_axis(axis_values(c, group), labelAngle=0)),
        y=alt.Y("row_i:O", title=lay.y_title or None,  # labelled from row_labels without a long sort list
                axis=_axis(axis_values(r, math.ceil(r / 8)),
                           labelExpr=f"{json.dumps(list(lay.row_labels))}[datum.value]")),
    ).properties(width=alt.Step(lay.col_px), height=alt.Step(lay.row_px))
    row_title, value_title = lay.y_title or _("row"), _("value")
    row, value = ((alt.Tooltip("row:O", title=row_title), alt.Tooltip("text:N", title=value_title))
                  if lay.show_text else  # no label columns in the data: the row's index, the value formatted here
                  (alt.Tooltip("row_i:O", title=row_title),
                   alt.Tooltip("value:Q", title=value_title, format=f".{max(lay.precision, 1)}~g")))
    head = [alt.Tooltip("head:O", title=_("head"))] if n_heads else []
    tooltip = [row, alt.Tooltip("col_i:O", title=lay.x_title), *head, value]
    rect = base.mark_rect(stroke="white", strokeWidth=0.5 if lay.col_px >= 8 else 0,
                          **({"aria": False} if lay.on_canvas else {})).encode(
        color=alt.Color("value:Q", title=None, scale=alt.Scale(scheme=heatmap.SCHEMES["signed"], domain=domains[0],
                                                               domainMid=0),
                        legend=alt.Legend(orient="right", gradientLength=max(60, lay.row_px * r),
                                          labelExpr=heatmap.LEGEND_LABEL)),
        tooltip=tooltip,
    )
    layers = [rect]
    if lay.show_text:
        layers.append(base.mark_text(fontSize=FONT).encode(
            text="text:N", color=heatmap.cell_ink(),
        ))
    if not n_heads:
        return alt.layer(*layers, title=lay.title, description=lay.description)
    heat = alt.layer(*layers, head_boundaries(c, n_heads))
    return alt.vconcat(head_strip(c, n_heads, lay.col_px), heat, spacing=2, bounds="flush", title=lay.title,
                       description=lay.description)


SIGNED_COLOURS = N_("colour: blue below 0, white at 0, orange above 0")
#: a matrix's text alternative, by (columns titled, cut into heads): its first clause
_MATRIX_WHAT = {
    (False, False): N_("{title}: a heatmap of {n_rows} rows ({y_title}) by {n_cols} columns"),
    (True, False): N_("{title}: a heatmap of {n_rows} rows ({y_title}) by {n_cols} columns ({x_title})"),
    (False, True): N_("{title}: a heatmap of {n_rows} rows ({y_title}) by {n_cols} columns, cut into {n_heads} head "
                      "slices of {d} columns each, labelled above"),
    (True, True): N_("{title}: a heatmap of {n_rows} rows ({y_title}) by {n_cols} columns ({x_title}), cut into "
                     "{n_heads} head slices of {d} columns each, labelled above"),
}


def matrix_description(title: str, n_rows: int, n_cols: int, n_heads: int | None, y_title: str,
                       x_title: str | None, show_text: bool) -> str:
    """What a :func:`head_matrix` shows, in words (the chart's text alternative); the columns' title is named unless
    it is just "column" (or None).

    >>> matrix_description("concat", 3, 512, 8, "token", "column", False)[:84]
    'concat: a heatmap of 3 rows (token) by 512 columns, cut into 8 head slices of 64 col'
    """
    heads = bool(n_heads and n_heads > 1)
    what = _(_MATRIX_WHAT[x_title not in (None, "column", _("column")), heads]).format(
        title=title, n_rows=n_rows, y_title=y_title or _("row"), n_cols=n_cols, x_title=x_title, n_heads=n_heads,
        d=n_cols // n_heads if heads else n_cols)
    numbers = _("each cell's number printed on it") if show_text else _("each cell's number in its tooltip")
    return _("{what}; {colours}; {numbers}.").format(what=what, colours=_(SIGNED_COLOURS), numbers=numbers)


def head_matrix(
    values: np.ndarray,
    row_labels: list[str],
    *,
    n_heads: int | None = None,
    title: str,
    x_title: str | None = None,
    y_title: str = "",
    precision: int = 4,
    domain: tuple[float, float] | None = None,
) -> charts.Chart:  # values [r, c]; with heads, c = n_heads·d
    """A signed heatmap that stays readable when wide; with ``n_heads``, its column slices marked per head.

    Used for W_Q, W_K, W_V (columns n_heads · d_k or n_heads · d_v), the concatenation of the head
    outputs (n_heads · d_v) and the output. With ``n_heads`` a strip of grey bands labelled
    "head 0", "head 1", ... sits above the matrix and rules mark the boundaries between slices.
    Unlike :func:`attn_ui.widgets.heatmap.heatmap` the cells need not be square, so a 4 × 512 matrix is a
    readable band rather than a strip of 2-pixel cells, and only every head's first column is labelled.

    Parameters
    ----------
    values : ndarray of shape (r, c)
        Finite numbers.
    row_labels : list of str, length r
    n_heads : int, optional
        Divides c.
    title : str
    x_title : str, optional
        The columns' title; "column" (in the session's language) when not given.
    domain : (lo, hi), optional
        Colour domain; symmetric around 0 from the values when not given.

    Examples
    --------
    >>> spec = head_matrix(np.arange(8.0).reshape(2, 4), ["a", "b"], n_heads=2, title="W").to_dict()
    >>> len(spec["vconcat"]), spec["title"]
    (2, 'W')
    """
    r, c = values.shape
    col_px, row_px, show_text = cell_sizes(values, precision)
    lo, hi = domain or heatmap.shared_domain(values)
    extra = {}  # only the columns the chart reads
    if n_heads:
        extra["head"] = np.tile(np.arange(c) // (c // n_heads), r)
    data = cell_frame(values, row_labels, precision, labels=show_text, **extra)  # big: the tooltip formats numbers
    layout = MatrixLayout(r, c, tuple(row_labels), n_heads, title, _("column") if x_title is None else x_title,
                          y_title, col_px, row_px, show_text, precision,
                          matrix_description(title, r, c, n_heads, y_title, x_title, show_text), i18n.language())
    return charts.Chart(matrix_build, layout, (data,), ((float(lo), float(hi)),), canvas=layout.on_canvas)


def block_rows(n_rows: int, d: int) -> int:
    """How many rows of one head's [n_rows, d] block of concat :func:`head_block` prints at a time.

    >>> block_rows(3, 64), block_rows(256, 32), block_rows(256, 512), block_rows(256, 2)
    (3, 16, 1, 32)
    """
    return max(1, min(n_rows, BLOCK_ROWS, BLOCK_CELLS // max(d, 1)))


@dataclass(frozen=True)
class BlockLayout:
    """Everything about a :func:`head_block` but its numbers."""

    row_labels: tuple[str, ...]
    head: int
    first_col: int  # the block's first column in concat
    d: int  # columns in the block (d_v)
    per_line: int  # columns printed on one line
    col_px: int
    y_title: str
    title: str
    description: str
    lang: str = i18n.DEFAULT  # the language of the words the builder adds (tooltips, subtitle): part of the key


def head_block(
    values: np.ndarray,
    row_labels: list[str],
    *,
    head: int,
    first_col: int,
    y_title: str | None = None,
    precision: int = 4,
    domain: tuple[float, float] | None = None,
) -> charts.Chart:  # values [r, d]: concat[rows, first_col:first_col + d]
    """One head's block of concat with every number printed, its columns wrapped onto lines (as numpy prints a
    wide array): lines of as many columns as fit MATRIX_PX, each labelled with its columns' numbers in concat.

    Parameters
    ----------
    values : ndarray of shape (r, d)
        Head ``head``'s output: concat's columns first_col … first_col + d − 1 (a page of its rows).
    row_labels : list of str, length r
    y_title : str, optional
        The rows' title; "token" (in the session's language) when not given.
    domain : (lo, hi), optional
        Colour domain (the whole concat's, so the colours match its heatmap); from the values when not given.

    Examples
    --------
    >>> spec = head_block(np.arange(60.0).reshape(2, 30) / 7, ["a", "b"], head=1, first_col=30).to_dict()
    >>> spec["facet"]["row"]["field"], spec["resolve"]["scale"]["x"]
    ('line', 'independent')
    """
    r, d = values.shape
    text = format_numbers(values.ravel(), precision)
    col_px = max(28, heatmap.cell_width(0, max(map(len, text))))
    lines = math.ceil(d / max(1, min(d, MATRIX_PX // col_px)))
    per_line = math.ceil(d / lines)  # lines of equal length, the last one perhaps shorter
    lo, hi = domain or heatmap.shared_domain(values)
    j = np.tile(np.arange(d), r)  # the column within the head
    data = charts.table({
        "row_i": np.repeat(np.arange(r), d), "col_i": first_col + j, "head_col": j, "line": j // per_line,
        "value": values.ravel(), "text": text, "row": charts.repeated(row_labels, d),
    })
    last = first_col + d - 1
    y_title = _("token") if y_title is None else y_title
    title = (_("head {head} = columns {first}–{last} of concat").format(head=head, first=first_col, last=last)
             if d > 1 else _("head {head} = column {first}").format(head=head, first=first_col))
    description = ngettext(
        "{title}: head {head}'s output, {r} rows ({y_title}) by {d} columns, every number printed, {per_line} "
        "columns to a line ({lines} line), each line's columns numbered as in concat; {colours}.",
        "{title}: head {head}'s output, {r} rows ({y_title}) by {d} columns, every number printed, {per_line} "
        "columns to a line ({lines} lines), each line's columns numbered as in concat; {colours}.", lines,
    ).format(title=title, head=head, r=r, y_title=y_title, d=d, per_line=per_line, lines=lines,
             colours=_(SIGNED_COLOURS))
    layout = BlockLayout(tuple(row_labels), head, first_col, d, per_line, col_px, y_title, title, description,
                         i18n.language())
    return charts.Chart(head_block_build, layout, (data,), ((float(lo), float(hi)),))


def head_block_build(layout: BlockLayout, data: list, domains: list) -> alt.FacetChart:
    """The chart of a :class:`BlockLayout` (:func:`head_block`'s builder): one facet row per line of columns.

    Its words are in the session's language, which is ``layout.lang`` (the factory's)."""
    lay = layout
    base = alt.Chart(data[0]).encode(
        x=alt.X("col_i:O", title=None, axis=alt.Axis(labelAngle=0, orient="top", ticks=False)),
        y=alt.Y("row_i:O", title=None, axis=alt.Axis(labelExpr=f"{json.dumps(list(lay.row_labels))}"
                                                                       "[datum.value]")),
    ).properties(width=alt.Step(lay.col_px), height=alt.Step(BLOCK_ROW_PX))
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("value:Q", title=None, legend=None,
                        scale=alt.Scale(scheme=heatmap.SCHEMES["signed"], domain=domains[0], domainMid=0)),
        tooltip=[alt.Tooltip("row:N", title=lay.y_title), alt.Tooltip("col_i:O", title=_("column of concat")),
                 alt.Tooltip("head_col:O", title=_("column of head {head}").format(head=lay.head)),
                 alt.Tooltip("text:N", title=_("value"))],
    )
    text = base.mark_text(fontSize=FONT).encode(
        text="text:N", color=heatmap.cell_ink(),
    )
    return alt.layer(rect, text).facet(
        row=alt.Row("line:O", title=None, header=alt.Header(labels=False)), spacing=6,
        title=alt.Title(lay.title, subtitle=_("each line: the next columns; above it, their numbers in concat")),
        description=lay.description,
    ).resolve_scale(x="independent")


def head_weights(weights: list[np.ndarray], tokens: list[str], *, precision: int = 4,
                 keys: list[str] | None = None, first: int = 0) -> charts.Chart:
    """Small multiples: each head's attention weights [n_q, n_k], one shared 0..1 colour scale.

    Parameters
    ----------
    weights : list of ndarray of shape (n_q, n_k)
        One per head, in order.
    tokens : list of str
        Unique labels of the queries (rows); also of the keys (columns) unless ``keys`` is given.
    keys : list of str, optional
        Unique labels of the keys (columns), when they differ from the queries' (cross-attention).
    first : int
        The number of the first head drawn (a group of grouped-query heads starts further on).

    Examples
    --------
    >>> spec = head_weights([np.eye(2), np.full((2, 2), 0.5)], ["a", "b"]).to_dict()
    >>> len(spec["concat"]), spec["resolve"]["scale"]["color"]
    (2, 'shared')
    """
    keys = tokens if keys is None else keys
    n_q, n_k = len(tokens), len(keys)
    px = heatmap.cell_px(n_q, n_k, budget=PANEL_PX)
    parts = [
        heatmap.heatmap(w, tokens, keys, title=_("head {h}").format(h=h), kind="weights", precision=precision,
                        domain=(0.0, 1.0), x_title=_("key"), y_title=_("query"), px=px, focus=False)  # concat panels
        for h, w in enumerate(weights, start=first)
    ]
    longest = max(map(len, format_numbers(weights[0].ravel(), precision)))
    cell_w = heatmap.cell_width(px, longest if heatmap.shows_text(n_q, n_k, px) else 0)
    panel_w = max(map(heatmap.label_px, tokens)) + 30 + n_k * cell_w + 20  # query labels, cells, spacing
    row_px = heatmap.PHONE_COLUMN_PX if charts.narrow() else ROW_PX  # a phone's panels one under another
    per_row = max(1, (row_px - 60) // panel_w)  # 60 px for the one shared legend
    rows = math.ceil(len(parts) / per_row)
    description = (_("Attention weights of each of the {n} heads: one small heatmap per head, titled head 0 to head "
                     "{last}, {n_q} rows (query) by {n_k} columns (key); colour: white at 0 to dark blue at 1, the "
                     "same scale for every head; each cell's number printed on it.")
                   if heatmap.shows_text(n_q, n_k, px) else
                   _("Attention weights of each of the {n} heads: one small heatmap per head, titled head 0 to head "
                     "{last}, {n_q} rows (query) by {n_k} columns (key); colour: white at 0 to dark blue at 1, the "
                     "same scale for every head; each cell's number in its tooltip.")
                   ).format(n=len(weights), last=first + len(weights) - 1, n_q=n_q, n_k=n_k)
    layout = (tuple(p.layout for p in parts), math.ceil(len(parts) / rows), description)
    return charts.Chart(head_weights_build, layout, tuple(p.data[0] for p in parts),  # 0 … 1: fixed, in the layouts
                        canvas=all(p.layout.on_canvas for p in parts))  # thousands of rects: one canvas, no SVG nodes


def head_weights_build(layout: tuple, data: list, domains: list) -> alt.ConcatChart:
    """The small multiples of a :func:`head_weights` layout (its builder)."""
    panels, columns, description = layout
    charts_ = [heatmap.heatmap_chart(lay, [data[h]], [domains[h]]) for h, lay in enumerate(panels)]
    return alt.concat(*charts_, columns=columns, description=description).resolve_scale(color="shared")


def _shape(a: np.ndarray | tuple[int, ...]) -> str:
    r, c = a if isinstance(a, tuple) else a.shape
    return f"{r} × {c}"


#: each score function's heads, in the shapes table: (array, formula, shape in symbols, trace attribute)
_SCORE_ROWS = {
    "dot": (),
    "general": (("Q_h W_a,h", N_("Q_h times head h's column slice of W_a"), "{n_q} × d_k", "q_a"),),
    "additive": (("Q_h W_1,h", N_("Q_h times head h's column slice of W_1"), "{n_q} × d_a", "q_1"),
                 ("K_h W_2,h", N_("K_h times head h's column slice of W_2"), "n_seq × d_a", "k_2")),
}
_SCORE_FORMULAS = {"dot": "Q_h K_hᵀ", "general": "(Q_h W_a,h) K_hᵀ", "additive": "v_a,h · tanh(Q_h W_1,h + K_h W_2,h)"}
_SCORE_WEIGHTS = {
    "dot": (),
    "general": (("W_a", N_("general score weights, n_heads column slices"), "d_q × n_heads·d_k", "w_a"),),
    "additive": (("W_1", N_("additive score weights for the queries"), "d_q × n_heads·d_a", "w_1"),
                 ("W_2", N_("additive score weights for the keys"), "d_k × n_heads·d_a", "w_2"),
                 ("v_a", N_("weighs the tanh features into a score"), "1 × n_heads·d_a", "v_a")),
}


def kv_groups(trace: MultiHeadTrace) -> list[list[int]]:
    """The query heads reading each key/value head, in order (one head each without grouping).

    >>> from attn_core import make_config, run
    >>> c = make_config(["a", "b"], np.eye(2), np.eye(2, 4), np.eye(2), np.eye(2), w_o=np.eye(4), n_heads=2,
    ...                 n_kv_heads=1)
    >>> kv_groups(run(c))
    [[0, 1]]
    """
    groups: dict[int, list[int]] = {}
    for h, g in enumerate(trace.kv_heads):
        groups.setdefault(g, []).append(h)
    return [groups[g] for g in sorted(groups)]


def modern_shape_rows(trace: MultiHeadTrace, n_q: str, d_q: str, kv_h: str, each: str,
                      each_kv: str) -> list[tuple[str, str, str, str, str]]:
    """The shapes table's rows for QK-norm and RoPE: each head's q and k as they are scored."""
    if not isinstance(trace, ModernTrace) or (trace.q_normed is None and trace.q_rotated is None):
        return []
    how = ("RoPE(RMSNorm({m}))" if trace.q_normed is not None and trace.q_rotated is not None
           else "RoPE({m})" if trace.q_rotated is not None else "RMSNorm({m})")
    h0 = trace.heads[0]
    return [("Q̃_h", how.format(m="Q_h"), f"{n_q} × {d_q}", _shape(h0.q), each),
            (f"K̃_{kv_h}", how.format(m=f"K_{kv_h}"), "n_seq × d_k", _shape(h0.k), each_kv)]


def scores_formula(trace: MultiHeadTrace, score: str, kv_h: str) -> str:
    """scores_h's formula: the score function's, with the scored (normed, rotated) rows and the key/value head."""
    modern = isinstance(trace, ModernTrace) and (trace.q_normed is not None or trace.q_rotated is not None)
    if score == "dot":
        return f"Q̃_h K̃_{kv_h}ᵀ" if modern else f"Q_h K_{kv_h}ᵀ"
    return _SCORE_FORMULAS[score]


def weights_formula(t) -> str:
    """weights_h's formula: the scaling, a soft cap, a bias and the mask, in their order."""
    inner = "scores_h ÷ s"
    if t.softcap is not None:
        inner = f"c·tanh({inner} ÷ c)"
    if t.bias is not None:
        inner = f"{inner} + B_h"
    if t.mask is not None or t.bias is not None or t.softcap is not None:
        return _("softmax({inner}), row by row (masked cells −∞)").format(inner=inner) if t.mask is not None else \
            _("softmax({inner}), row by row").format(inner=inner)
    return _("softmax(mask(scores_h ÷ s)), row by row")


def shapes_table(cfg: Config, trace: MultiHeadTrace) -> pa.Table:
    """Every array of the multi-head computation: symbol, formula, shape in symbols and here (its words and its
    columns' names in the session's language).

    Shapes are read off the computed arrays, not derived from the formulas. With cross-attention the queries come
    from Y (n_q rows); with a general or additive score the score function's weights and intermediates are listed.

    Examples
    --------
    >>> from attn_core import make_config, run
    >>> cfg = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2), n_heads=2)
    >>> table = shapes_table(cfg, run(cfg)).to_pydict()
    >>> table["here"][table["array"].index("concat")]
    '2 × 2'
    """
    n = trace.n_heads
    h0 = trace.heads[0]
    each = "1" if n == 1 else _("{n} (one per head)").format(n=n)
    n_q = "n_q" if cfg.cross else "n_seq"  # the queries' count in symbols
    d_q = "d_q" if cfg.score == "additive" else "d_k"  # the queries' width per head
    src = "Y" if cfg.cross else "X"
    groups = kv_groups(trace)  # with grouped-query heads: K and V once per key/value head
    firsts = [readers[0] for readers in groups]
    if isinstance(trace, ModernTrace):  # the projections, before any QK-norm or RoPE
        q, k, v = trace.q, trace.k, trace.v
    else:
        q = merge_heads([t.q for t in trace.heads])  # [n_q or n_seq, n·d]
        k, v = (merge_heads([getattr(trace.heads[h], m) for h in firsts]) for m in ("k", "v"))  # [n_seq, n_kv·d]
    heads_k = "n_kv_heads" if len(groups) != n else "n_heads"  # the key/value heads' count in symbols
    each_kv = each if len(groups) == n else _("{n} (one per key/value head)").format(n=len(groups))
    kv_h = "g" if len(groups) != n else "h"  # the key/value head query head h reads (g = h without grouping)
    rows = [
        ("X", _("the inputs, one row per token (the keys and values)") if cfg.cross else
         _("the inputs, one row per token"), "n_seq × d_model", _shape(cfg.x), "1"),
        *([("Y", _("the queries' inputs, one row per query token"), "n_q × d_model", _shape(cfg.y), "1")]
          if cfg.cross else []),
        ("W_Q", _("query weights, n_heads column slices"), f"d_model × n_heads·{d_q}", _shape(cfg.w_q), "1"),
        *([("W_K", _("key weights, n_heads column slices"), "d_model × n_heads·d_k", _shape(cfg.w_k), "1"),
           ("W_V", _("value weights, n_heads column slices"), "d_model × n_heads·d_v", _shape(cfg.w_v), "1")]
          if heads_k == "n_heads" else
          [("W_K", _("key weights, n_kv_heads column slices"), "d_model × n_kv_heads·d_k", _shape(cfg.w_k), "1"),
           ("W_V", _("value weights, n_kv_heads column slices"), "d_model × n_kv_heads·d_v", _shape(cfg.w_v), "1")]),
        *((name, _(what), sym, _shape(cfg.matrix(attr)), "1") for name, what, sym, attr in _SCORE_WEIGHTS[cfg.score]),
        ("Q", f"{src} W_Q", f"{n_q} × n_heads·{d_q}", _shape(q), "1"),
        ("K", "X W_K", f"n_seq × {heads_k}·d_k", _shape(k), "1"),
        ("V", "X W_V", f"n_seq × {heads_k}·d_v", _shape(v), "1"),
        ("Q_h", _("columns h·{d} … (h+1)·{d} − 1 of Q").format(d=d_q), f"{n_q} × {d_q}", _shape(h0.q), each),
        *([("K_h", _("columns h·d_k … (h+1)·d_k − 1 of K"), "n_seq × d_k", _shape(h0.k), each),
           ("V_h", _("columns h·d_v … (h+1)·d_v − 1 of V"), "n_seq × d_v", _shape(h0.v), each)]
          if kv_h == "h" else
          [("K_g", _("columns g·d_k … (g+1)·d_k − 1 of K, g the key/value head that query head h reads"),
            "n_seq × d_k", _shape(h0.k), each_kv),
           ("V_g", _("columns g·d_v … (g+1)·d_v − 1 of V"), "n_seq × d_v", _shape(h0.v), each_kv)]),
        *modern_shape_rows(trace, n_q, d_q, kv_h, each, each_kv),
        *((name, _(what), sym.format(n_q=n_q), _shape(getattr(h0, attr)), each)
          for name, what, sym, attr in _SCORE_ROWS[cfg.score]),
        ("scores_h", scores_formula(trace, cfg.score, kv_h), f"{n_q} × n_seq", _shape(h0.scores), each),
        ("weights_h", weights_formula(h0), f"{n_q} × n_seq", _shape(h0.weights), each),
        ("head_h", f"weights_h V_{kv_h}", f"{n_q} × d_v", _shape(h0.output), each),
        ("concat", _("[head_0 | head_1 | … ] side by side"), f"{n_q} × n_heads·d_v", _shape(trace.concat), "1"),
        ("W_O", _("output projection"), "n_heads·d_v × d_out", _shape(trace.w_o), "1"),
        (_("output"), "concat W_O", f"{n_q} × d_out", _shape(trace.output), "1"),
    ]
    return text.rows_table([_("array"), _("formula"), _("shape"), _("here"), _("how many")], rows)


# ---- the page's widgets and sections (pages/multihead.py draws them in order) ------------------------------

WANTED = "heads_wanted"  # number_input: the head count the learner asks for
PICK = "heads_pick"  # segmented_control: the head to open on Step by step
BLOCK_HEAD = "heads_block_head"  # segmented_control: the head whose block of concat is printed (section 4)
WEIGHTS_SHOWN = "heads_weights_shown"  # segmented control: W_Q, W_K or W_V
SECTION_SHOWN = "heads_section_shown"  # segmented control: one of sections 3 to 7
WEIGHTS = {"W_Q": "w_q", "W_K": "w_k", "W_V": "w_v"}  # label: matrix
METRIC = N_("max |multi-head output − single-head output|")
CONCAT_METRIC = N_("max |concat − single-head output|")  # when W_O changes the width: the output cannot be compared
#: the W_O that "Split into heads" gives a configuration whose W_O is the identity: (initialiser, seed), the
#: Randomise W_O popover's first choices, so that popover gives it back
MIXING_W_O = ("xavier_uniform", 0)


def grouped_head_counts(cfg: Config) -> dict[int, int]:
    """With grouped-query heads, the head counts that keep every width (and so every value) of W_Q, W_K, W_V, each
    with its key/value heads: the group size (query heads per key/value head, W_Q's columns ÷ W_K's) stays, so
    n_kv_heads = n_heads ÷ group; without grouping, {} (valid_head_counts applies).

    >>> from attn_core import make_config
    >>> c = make_config(["a"], np.ones((1, 2)), np.ones((2, 8)), np.ones((2, 4)), np.ones((2, 4)), w_o=np.eye(8),
    ...                 n_heads=4, n_kv_heads=2)
    >>> grouped_head_counts(c)
    {2: 1, 4: 2, 8: 4}
    """
    if not cfg.n_kv_heads:
        return {}
    group = cfg.n_heads // cfg.n_kv_heads
    d_q, d_k, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]
    return {n: n // group for n in range(group, min(d_q, LIMITS.n_heads) + 1, group)
            if d_q % n == 0 and d_k % (n // group) == 0 and d_v % (n // group) == 0 and d_k // (n // group) == d_q // n}


def heads_changes(cfg: Config, n_heads: int) -> dict:
    """The changes for ``n_heads`` heads (state.with_heads), with grouped-query heads the key/value heads that keep
    the group size (grouped_head_counts)."""
    changes = state.with_heads(cfg, n_heads)
    if cfg.n_kv_heads:
        changes["n_kv_heads"] = grouped_head_counts(cfg)[n_heads]
    return changes


def typed_heads(typed: float | None) -> int:
    """The head count typed in the page's box (a float, or None for a box left empty or holding no number) as an
    int; AttentionInputError, naming n_heads, when it is empty, not a whole number, under 1 or over the cap
    (:data:`attn_core.LIMITS`). Whether the widths split into that many heads is the page's to say.

    >>> typed_heads(4.0)
    4
    """
    return whole_size(N_("n_heads"), typed, LIMITS.n_heads, N_("{what}: {value} is under 1; attention has at least one "
                                                               "head."))


def use_heads(n_heads: int) -> None:
    """on_click: switch to a valid head count (and show it in the number box)."""
    if message := state.update_config(**heads_changes(state.config(), n_heads)):
        state.notify(message)
    st.session_state[WANTED] = float(state.config().n_heads)  # the box holds floats (pages/multihead.py)


def pick_head() -> None:
    if st.session_state[PICK] is not None:
        st.session_state[state.HEAD] = st.session_state[PICK]


def split_heads(n_heads: int) -> None:
    """on_click: ``n_heads`` heads, keeping every value (state.with_heads); an identity W_O becomes one that mixes
    the heads (MIXING_W_O)."""
    cfg = state.config()
    changes = state.with_heads(cfg, n_heads)
    if compute.is_identity(cfg.w_o):
        changes["w_o"] = initialize(MIXING_W_O[0], cfg.w_o.shape, seed=MIXING_W_O[1])
    if message := state.update_config(**changes):
        state.notify(message)
    st.session_state[WANTED] = float(state.config().n_heads)  # the box holds floats (pages/multihead.py)


def mix_w_o() -> None:
    """on_click: W_O (the identity) becomes one that mixes the heads (MIXING_W_O)."""
    w_o = state.config().w_o
    if message := state.update_config(w_o=initialize(MIXING_W_O[0], w_o.shape, seed=MIXING_W_O[1])):
        state.notify(message)


def mixing_w_o_text() -> str:
    return _("{init}, seed {seed}").format(init=_(INITIALIZERS[MIXING_W_O[0]]), seed=MIXING_W_O[1])


def one_head_identity() -> None:
    """on_click: the setting in which multi-head attention is plain single-head attention."""
    width = state.config().w_v.shape[1]
    use_heads(1)
    if message := state.update_config(w_o=np.eye(width)):
        state.notify(message)


def columns(s: slice) -> str:
    return (_("column {i}").format(i=s.start) if s.stop - s.start == 1 else
            _("columns {first}–{last}").format(first=s.start, last=s.stop - 1))


def rows_labels(pages: list[range]) -> list[str]:
    """The options of a rows selectbox, made now (format_func runs outside the run too: i18n.translator)."""
    return [_("rows {first}–{last}").format(first=p.start, last=p.stop - 1) for p in pages]


def head_names(n_heads: int) -> list[str]:
    return [_("head {h}").format(h=h) for h in range(n_heads)]


def show_matrix(
    values: np.ndarray, rows: list[str], *, key: str, title: str, y_title: str, n_heads: int | None = None,
    x_title: str | None = None,
) -> bool:
    """A (head-marked) matrix; when its rows exceed the drawing budget, a page of rows at a time (a selectbox).

    Every column is always drawn (the head slices are columns); the colours use the whole matrix. Returns whether
    every number of the matrix is printed on its cell (all rows on one page, and numbers shown).
    """
    pages = controls.pages_of(values.shape[0], rows_that_fit(*values.shape))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            _("Rows shown ({n} in all, {k} at a time)").format(n=values.shape[0], k=len(pages[0])), range(len(pages)),
            format_func=rows_labels(pages).__getitem__, key=f"heads_{key}_rows", width=320,
            help=_("Drawing every row at once would slow the page down. Every column is drawn (so every head's slice "
                   "shows), and the colours use the whole matrix."),
        )]
    part = slice(shown.start, shown.stop)
    chart = head_matrix(
        values[part], rows[part], n_heads=n_heads, title=title, x_title=x_title, y_title=y_title,
        precision=controls.precision(), domain=heatmap.shared_domain(values),
    )
    charts.show_chart(chart)
    return len(pages) == 1 and chart.layout.show_text


def split_offer(cfg) -> None:
    """At the top, on a configuration of one head: the one action that shows several heads at work (a split that
    keeps every value, with a W_O that mixes the heads), or why no split fits these widths."""
    d_qk, d_kk, d_v = cfg.w_q.shape[1], cfg.w_k.shape[1], cfg.w_v.shape[1]
    split = [h for h in valid_head_counts(d_qk, d_v, d_kk) if 1 < h <= LIMITS.n_heads]
    identity = compute.is_identity(cfg.w_o)
    box = st.container(border=True)
    box.markdown(i18n.sentences(
        _("**Your configuration has 1 head**, so there is nothing to split yet.") if not identity else
        _("**Your configuration has 1 head and W_O = I** (the identity), so multi-head attention is plain attention "
          "here: the output, the heads' concatenation times W_O, is the one head's output as it is."),
        "" if split else _("No head count above 1 divides these widths (W_Q and W_K have {d_qk} columns, W_V has "
                           "{d_v}); on Inputs & weights, give them widths with a common divisor (4 and 4, say) to "
                           "split them into heads.").format(
            d_qk=d_qk if d_qk == d_kk else f"{d_qk}, {d_kk}", d_v=d_v),
    ))
    if not split:
        return
    n = split[0]
    box.button(
        ngettext("Split into {n} head, with a W_O that mixes them", "Split into {n} heads, with a W_O that mixes them",
                 n).format(n=n) if identity else
        ngettext("Split into {n} head (your W_O kept)", "Split into {n} heads (your W_O kept)", n).format(n=n),
        key="heads_split", icon=":material/call_split:", on_click=split_heads, args=(n,),
    )
    box.caption(i18n.sentences(
        _("Every value of X, W_Q, W_K and W_V is kept: each head takes its own slice of their columns, d_k = {d_k} "
          "of W_Q and W_K and d_v = {d_v} of W_V.").format(d_k=d_kk // n, d_v=d_v // n),
        _("W_O becomes {init} (Randomise W_O in section 5 gives it back).").format(init=mixing_w_o_text())
        if identity else "",
        _("Undo in the sidebar takes the split back."),
    ))


def heads_weights(cfg: Config, trace: MultiHeadTrace, *, head: int | None = None) -> None:
    """Every head's attention weights, small multiples on one colour scale (a row of them per key/value head when
    heads are grouped): section 3's. ``head``: that head's alone, a phone's first result right under the edit panel
    (every head's, one under another on a phone's screen, took 270 px a head there: 2,150 px for 8 heads)."""
    queries, keys = text.query_labels(cfg), text.token_labels(cfg)
    st.caption(i18n.sentences(
        _("Attention weights of every head (row: query, column: key), on one shared colour scale 0 … 1.")
        if head is None else
        _("Attention weights of head {head} (row: query, column: key): the head followed in section 3, which draws "
          "every head's.").format(head=head),
        _("The queries are Y's tokens, the keys X's.") if cfg.cross else ""))
    shown = tokens_that_fit(max(cfg.n_q, cfg.n_seq), cfg.n_heads if head is None else 1)
    s_q, s_k = min(shown, cfg.n_q), min(shown, cfg.n_seq)
    groups = kv_groups(trace)
    if head is not None:
        charts.show_chart(head_weights([trace.heads[head].weights[:s_q, :s_k]], queries[:s_q], keys=keys[:s_k],
                                       precision=controls.precision(), first=head))
    elif len(groups) == cfg.n_heads:
        charts.show_chart(head_weights(
            [t.weights[:s_q, :s_k] for t in trace.heads], queries[:s_q], keys=keys[:s_k],
            precision=controls.precision(),
        ))
    else:  # grouped-query heads: one row of panels per key/value head, its readers side by side
        st.caption(group_text(groups))
        for g, readers in enumerate(groups):
            st.markdown(_("**Key/value head {g}** · K and V shared by query heads {readers}").format(
                g=g, readers=", ".join(map(str, readers))))
            charts.show_chart(head_weights(
                [trace.heads[h].weights[:s_q, :s_k] for h in readers], queries[:s_q], keys=keys[:s_k],
                precision=controls.precision(), first=readers[0],
            ))
    if (s_q, s_k) != (cfg.n_q, cfg.n_seq):
        st.caption((_("Drawing the first {s_q} of {n_q} queries and {s_k} of {n_k} keys of each head; Step by step "
                      "shows one head whole.") if cfg.cross else
                    _("Drawing the first {shown} of {n_k} tokens of each head; Step by step shows one head whole."))
                   .format(s_q=s_q, n_q=cfg.n_q, s_k=s_k, n_k=cfg.n_seq, shown=shown))


def per_head_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    heads_weights(cfg, trace)
    groups = kv_groups(trace)
    st.segmented_control(_("Follow one head step by step"), list(range(cfg.n_heads)),
                         format_func=head_names(cfg.n_heads).__getitem__, required=True,
                         **state.bind(PICK, st.session_state[state.HEAD], pick_head))
    head = st.session_state[state.HEAD]
    g = trace.kv_heads[min(head, cfg.n_heads - 1)]
    q_cols, k_cols, v_cols = head_slice(head, cfg.d_q), head_slice(g, cfg.d_k), head_slice(g, cfg.d_v)
    if len(groups) != cfg.n_heads:
        st.caption(_("Head {head} uses {q} of W_Q; it reads key/value head {g}: {k} of W_K and {v} of W_V.").format(
            head=head, g=g, q=columns(q_cols), k=columns(k_cols), v=columns(v_cols)))
    else:
        st.caption((_("Head {head} uses {qk} of W_Q and W_K and {v} of W_V.") if q_cols == k_cols else
                _("Head {head} uses {q} of W_Q, {k} of W_K and {v} of W_V."))
                   .format(head=head, qk=columns(k_cols), q=columns(q_cols), k=columns(k_cols), v=columns(v_cols)))
    if st.button(_("Open head {head} on Step by step").format(head=head), key="heads_open_steps",
                 icon=":material/stairs:"):
        st.switch_page(registry.STEPS.file)


def group_text(groups: list[list[int]]) -> str:
    """Which query heads read which key/value head, in words: "key/value head 0 ← query heads 0, 1 · …"."""
    return i18n.sentences(
        _("Grouped-query attention: {n} query heads share {k} key/value heads; each head has its own W_Q slice and "
          "its own weights, but the heads of a group score against the same keys and average the same values.").format(
            n=sum(map(len, groups)), k=len(groups)),
        " · ".join(_("key/value head {g} ← query heads {readers}").format(g=g, readers=", ".join(map(str, readers)))
                   for g, readers in enumerate(groups)))


def options_text(cfg: Config) -> str:
    """The modern options every head runs with, in words, or ""."""
    parts = [name for name, on in (("QK-norm", cfg.qk_norm), ("RoPE", cfg.rope is not None),
                                   (_("soft cap {c}").format(c=f"{cfg.softcap:g}") if cfg.softcap is not None else "",
                                    cfg.softcap is not None),
                                   (_("ALiBi (a slope per head)"), cfg.alibi),
                                   (_("sliding window {w}").format(w=cfg.window), cfg.window is not None)) if on]
    if not parts:
        return ""
    return _("Every head also runs with {options} (set on Modern attention; Step by step shows each step).").format(
        options=", ".join(parts))


def concat_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    n_rows, n_cols = trace.concat.shape
    n_q = "n_q" if cfg.cross else "n_seq"
    row_word = _("query") if cfg.cross else _("token")
    st.markdown(_("**concat** · shape {r} × {c} = [{n_q}, n_heads·d_v] = [{n}, {heads}·{d_v}]").format(
        r=n_rows, c=n_cols, n_q=n_q, n=cfg.n_q, heads=cfg.n_heads, d_v=cfg.d_v))
    st.caption((_("Head h's output ({r} × d_v = {r} × {d_v}) fills columns h·d_v … (h+1)·d_v − 1: column j comes "
                  "from head j ÷ {d_v} (rounded down).") if cfg.n_heads > 1 else
                _("With one head, concat is that head's output ({r} × {d_v}).")).format(r=n_rows, d_v=cfg.d_v))
    every_number = show_matrix(trace.concat, text.query_labels(cfg), key="concat", n_heads=cfg.n_heads,
                               title=_("concat = [head 0 | head 1 | …]"), y_title=row_word)
    if compute.is_identity(cfg.w_o):
        st.caption(_("W_O is the identity, so the output (section 5) is this same matrix: concat · I = concat."))
    if not every_number:
        head_block_view(cfg, trace, row_word)


def head_block_view(cfg, trace, row_word: str) -> None:
    """One head's block of concat, every number printed (the whole concat is too large to print them)."""
    st.markdown(_("**Read one head's numbers** · the heatmap above is too large to print every number; here is one "
                  "head's block of {r} × {d_v}, its columns wrapped onto lines.").format(r=trace.concat.shape[0],
                                                                                         d_v=cfg.d_v))
    if cfg.n_heads > 1:
        st.segmented_control(_("Head"), list(range(cfg.n_heads)), format_func=head_names(cfg.n_heads).__getitem__,
                             required=True,
                             **state.bind(BLOCK_HEAD, st.session_state[state.HEAD],
                                          state.copy_to(state.HEAD, BLOCK_HEAD)))
    head = min(st.session_state[state.HEAD], cfg.n_heads - 1)
    cols = head_slice(head, cfg.d_v)
    n_rows, labels = trace.concat.shape[0], text.query_labels(cfg)
    pages = controls.pages_of(n_rows, block_rows(n_rows, cfg.d_v))
    shown = pages[0]
    if len(pages) > 1:
        shown = pages[st.selectbox(
            _("Rows of head {head} shown ({n} in all, {k} at a time)").format(head=head, n=n_rows, k=len(pages[0])),
            range(len(pages)), format_func=rows_labels(pages).__getitem__, key="heads_block_rows", width=320,
        )]
    part = slice(shown.start, shown.stop)
    charts.show_chart(head_block(
        trace.concat[part, cols], labels[part], head=head, first_col=cols.start, y_title=row_word,
        precision=controls.precision(), domain=heatmap.shared_domain(trace.concat),
    ))
    st.caption(_("This is head {head}'s output, weights_{head} · V_{head}, exactly; Step by step shows how it is "
                 "made (with head {head} picked there).").format(head=head))


def project_section() -> None:
    w_o = state.config().w_o
    top, tools = st.columns([4, 1], vertical_alignment="bottom")
    top.markdown(_("**W_O** · shape {r} × {c} = [n_heads·d_v, d_out] · identity by default when square; row block h "
                   "multiplies head h's output.").format(r=w_o.shape[0], c=w_o.shape[1]))
    randomise.popover_of("w_o", "heads", where=tools, label=_("Randomise W_O"), init=MIXING_W_O[0],
                         seed=MIXING_W_O[1], width="stretch")
    with st.expander(_("Edit W_O"), expanded=w_o.size <= 64, key="heads_edit_w_o", on_change="rerun") as box:
        if box.open:
            grid_editor.matrix_editor("w_o")
    cfg, trace = state.config(), compute.current_trace()
    out, queries = trace.output, text.query_labels(cfg)
    if compute.is_identity(cfg.w_o):
        note, button = st.columns([4, 1], vertical_alignment="center")
        note.info(_("W_O is the identity: the output below is concat (section 4) unchanged, number for number, and "
                    "the heads' columns are not mixed."), icon=":material/info:")
        button.button(_("Mix the heads"), key="heads_mix_w_o", on_click=mix_w_o, width="stretch",
                      help=_("W_O becomes {init}; Undo in the sidebar takes it back.").format(init=mixing_w_o_text()))
    st.markdown(_("**output** · shape {r} × {c} = [{n}, d_out]").format(
        r=out.shape[0], c=out.shape[1], n="n_q" if cfg.cross else "n_seq"))
    show_matrix(out, queries, key="output", title=_("output = concat · W_O"), x_title=_("output dimension"),
                y_title=_("query") if cfg.cross else _("token"))
    check_metrics(cfg, trace, per_head=False)


def check_metrics(cfg, trace, *, per_head: bool = True) -> None:
    """How far the multi-head output is from single-head attention (and, with ``per_head``, one head's block of
    concat from plain attention on its slices)."""
    head = min(st.session_state[state.HEAD], cfg.n_heads - 1)
    g = trace.kv_heads[head]  # the key/value head it reads (itself without grouping)
    q_cols, k_cols, v_cols = head_slice(head, cfg.d_q), head_slice(g, cfg.d_k), head_slice(g, cfg.d_v)
    y, score, mask = cfg.y if cfg.cross else cfg.x, cfg.score_function(), config_mask(cfg)
    # a score function's weights are per head: single-head attention on the whole of W_Q, W_K has no W_a
    # (W_1, W_2) of its own unless there is one head; grouped-query heads' W_K is narrower than W_Q
    whole = (cfg.n_heads == 1 or cfg.score == "dot") and not cfg.n_kv_heads
    try:
        single = whole_attention(cfg) if whole else None
        one = head_attention(cfg, trace, head, (q_cols, k_cols, v_cols), y, score, mask) if per_head else None
    except AttentionInputError as err:
        st.error(_("Single-head attention cannot be computed here: {error}").format(
            error=text.md_escape(i18n.error_text(err))), icon=":material/error:")
        st.stop()
    out, metrics = trace.output, []  # (label, value, help)
    if single is not None:  # the output if it has single-head attention's shape, else concat (before W_O)
        mine, label = (out, METRIC) if single.output.shape == out.shape else (trace.concat, CONCAT_METRIC)
        metrics.append((_(label), np.abs(mine - single.output).max(), None))
    if per_head:
        metrics.append((_("max |head {head}'s block of concat − attention on its slices|").format(head=head),
                        np.abs(trace.concat[:, v_cols] - one.output).max(),
                        _("Each head is plain attention on its own column slices of W_Q, W_K, W_V.")))
    places = st.columns(len(metrics)) if len(metrics) > 1 else [st] * len(metrics)
    for place, (label, value, why) in zip(places, metrics, strict=True):
        place.metric(label, f"{value:.3g}", width="content", help=why)
    if single is None and cfg.n_kv_heads:
        st.caption(_("With grouped-query heads W_K and W_V are narrower than W_Q ({k} key/value heads for {n} query "
                     "heads): there is no single-head attention on the whole of them to compare the output "
                     "with.").format(k=cfg.kv_heads, n=cfg.n_heads))
    elif single is None:
        st.caption((_("The general score's weights hold one column slice per head: with {n} heads there is no "
                      "single-head attention on the whole of W_Q and W_K to compare the output with.")
                    if cfg.score == "general" else
                    _("The additive score's weights hold one column slice per head: with {n} heads there is no "
                      "single-head attention on the whole of W_Q and W_K to compare the output with.")
                    ).format(n=cfg.n_heads))
    elif single.output.shape != out.shape:
        st.caption(_(
            "The output is {r} × {c} ([{n}, d_out]: W_O turns the {concat} concatenated columns into {c}); "
            "single-head attention gives {r1} × {c1} ([{n}, n_heads·d_v]), so the two cannot be compared number for "
            "number. Compared instead: concat, the heads side by side before W_O, which has single-head attention's "
            "shape."
        ).format(r=out.shape[0], c=out.shape[1], n="n_q" if cfg.cross else "n_seq", concat=trace.concat.shape[1],
                 r1=single.output.shape[0], c1=single.output.shape[1]))


def whole_attention(cfg: Config):
    """Single-head attention on the whole of W_Q, W_K, W_V with the configuration's scale, mask and modern options
    (attn_core.run of it with one head and W_O = I): its head's trace. With one head and W_O = I it is this page's
    output exactly. The score bias is kept with one head (it is that head's), dropped with several."""
    one = replace(cfg, n_heads=1, n_kv_heads=None, w_o=np.eye(cfg.w_v.shape[1]),
                  score_bias=cfg.score_bias if cfg.n_heads == 1 else None)
    return run(validate_config(one)).heads[0]


def head_attention(cfg: Config, trace: MultiHeadTrace, head: int, cols: tuple[slice, slice, slice], y, score,
                   mask):
    """Plain attention of head ``head`` on its own column slices (``cols``: of W_Q, and of W_K and W_V of the
    key/value head it reads), computed apart from the page's trace with the configuration's options (RoPE, QK-norm,
    the window, the soft cap) and the head's own score bias (ALiBi's slope is the head's)."""
    q_cols, k_cols, v_cols = cols
    w_q, w_k, w_v = cfg.w_q[:, q_cols], cfg.w_k[:, k_cols], cfg.w_v[:, v_cols]
    sf, bias = head_score(score, head, cfg.n_heads), trace.heads[head].bias
    if cfg.modern and not cfg.cross:
        causal = cfg.mask_kind == "causal"
        return modern_attention(cfg.x, w_q, w_k, w_v, n_heads=1, rope=cfg.rope, qk_norm=cfg.qk_norm, window=cfg.window,
                                causal=causal, softcap=cfg.softcap, scale=cfg.scale, mask=None if causal else mask,
                                bias=bias, score=sf).heads[0]
    if cfg.softcap is not None:
        return multi_head_cross_attention(y, cfg.x, w_q, w_k, w_v, np.eye(w_v.shape[1]), 1, scale=cfg.scale, mask=mask,
                                          score=sf, bias=bias, softcap=cfg.softcap).heads[0]
    return cross_attention(y, cfg.x, w_q, w_k, w_v, scale=cfg.scale, mask=mask, score=sf, bias=bias)


def shapes_section() -> None:
    shapes = shapes_table(state.config(), compute.current_trace())
    st.dataframe(shapes, hide_index=True, height=35 * (shapes.num_rows + 1) + 3)


def check_section() -> None:
    cfg, trace = state.config(), compute.current_trace()
    st.caption(_("Single-head attention on the whole of W_Q, W_K, W_V (as on Step by step with one head), computed "
                 "separately and compared with this page's output."))
    check_metrics(cfg, trace)
    is_identity = compute.is_identity(cfg.w_o)
    if cfg.n_heads == 1 and is_identity:
        st.success(_("One head and W_O = I: the multi-head output is exactly single-head attention."),
                   icon=":material/check_circle:")
    else:
        w_o = cfg.w_o.shape
        now = {  # (several heads, W_O: None the identity, True square, False not square)
            (True, None): N_("Now: {n} heads, so the outputs need not agree."),
            (False, True): N_("Now: W_O is not the identity, so the outputs need not agree."),
            (False, False): N_("Now: W_O is {r} × {c}, not the identity, so the outputs need not agree."),
            (True, True): N_("Now: {n} heads and W_O is not the identity, so the outputs need not agree."),
            (True, False): N_("Now: {n} heads and W_O is {r} × {c}, not the identity, so the outputs need not agree."),
        }[cfg.n_heads > 1, None if is_identity else w_o[0] == w_o[1]]
        st.markdown(_(now).format(n=cfg.n_heads, r=w_o[0], c=w_o[1]))
        st.button(_("Try it: 1 head and W_O = I"), key="heads_try_single", on_click=one_head_identity,
                  help=_("Sets the number of heads to 1 and replaces W_O by the identity (as wide as W_V)."))


SECTIONS = {  # the picker's values (kept in the session and the tests), shown translated
    N_("3 · Each head attends"): per_head_section,
    N_("4 · Concatenate the heads"): concat_section,
    N_("5 · Project with W_O"): project_section,
    N_("6 · Every shape"): shapes_section,
    N_("7 · Check: one head is plain attention"): check_section,
}
