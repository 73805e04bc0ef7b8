"""The head views of the Multi-head page: matrices marked by head slice, per-head weights, the shapes table.

Chart factories (as :mod:`attn_ui.widgets.heatmap`): they take arrays and labels, return an
:class:`attn_ui.widgets.charts.Chart`
(or a DataFrame), and never call st. Test them through ``chart.to_dict()``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from attn_core import Config, MultiHeadTrace, merge_heads
from attn_ui.app import i18n
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.widgets import charts, heatmap
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
        columns["row"] = np.repeat(row_labels, c)
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
        "value": values.ravel(), "text": text, "row": np.repeat(row_labels, d),
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
                 keys: list[str] | None = None) -> charts.Chart:
    """Small multiples: each head's attention weights [n_q, n_k], one shared 0..1 colour scale.

    Parameters
    ----------
    weights : list of ndarray of shape (n_q, n_k)
        One per head, in order.
    tokens : list of str
        Unique labels of the queries (rows); also of the keys (columns) unless ``keys`` is given.
    keys : list of str, optional
        Unique labels of the keys (columns), when they differ from the queries' (cross-attention).

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
                        domain=(0.0, 1.0), x_title=_("key"), y_title=_("query"), px=px)
        for h, w in enumerate(weights)
    ]
    longest = max(map(len, format_numbers(weights[0].ravel(), precision)))
    cell_w = heatmap.cell_width(px, longest if heatmap.shows_text(n_q, n_k, px) else 0)
    panel_w = max(map(heatmap.label_px, tokens)) + 30 + n_k * cell_w + 20  # query labels, cells, spacing
    per_row = max(1, (ROW_PX - 60) // panel_w)  # 60 px for the one shared legend
    rows = math.ceil(len(parts) / per_row)
    description = (_("Attention weights of each of the {n} heads: one small heatmap per head, titled head 0 to head "
                     "{last}, {n_q} rows (query) by {n_k} columns (key); colour: white at 0 to dark blue at 1, the "
                     "same scale for every head; each cell's number printed on it.")
                   if heatmap.shows_text(n_q, n_k, px) else
                   _("Attention weights of each of the {n} heads: one small heatmap per head, titled head 0 to head "
                     "{last}, {n_q} rows (query) by {n_k} columns (key); colour: white at 0 to dark blue at 1, the "
                     "same scale for every head; each cell's number in its tooltip.")
                   ).format(n=len(weights), last=len(weights) - 1, n_q=n_q, n_k=n_k)
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


def shapes_table(cfg: Config, trace: MultiHeadTrace) -> pd.DataFrame:
    """Every array of the multi-head computation: symbol, formula, shape in symbols and here (its words and its
    columns' names in the session's language).

    Shapes are read off the computed arrays, not derived from the formulas. With cross-attention the queries come
    from Y (n_q rows); with a general or additive score the score function's weights and intermediates are listed.

    Examples
    --------
    >>> from attn_core import make_config, run
    >>> cfg = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2), n_heads=2)
    >>> shapes_table(cfg, run(cfg)).set_index("array").loc["concat", "here"]
    '2 × 2'
    """
    n = trace.n_heads
    h0 = trace.heads[0]
    each = "1" if n == 1 else _("{n} (one per head)").format(n=n)
    n_q = "n_q" if cfg.cross else "n_seq"  # the queries' count in symbols
    d_q = "d_q" if cfg.score == "additive" else "d_k"  # the queries' width per head
    src = "Y" if cfg.cross else "X"
    q, k, v = (merge_heads([getattr(t, m) for t in trace.heads]) for m in ("q", "k", "v"))  # [n_q or n_seq, n·d]
    rows = [
        ("X", _("the inputs, one row per token (the keys and values)") if cfg.cross else
         _("the inputs, one row per token"), "n_seq × d_model", _shape(cfg.x), "1"),
        *([("Y", _("the queries' inputs, one row per query token"), "n_q × d_model", _shape(cfg.y), "1")]
          if cfg.cross else []),
        ("W_Q", _("query weights, n_heads column slices"), f"d_model × n_heads·{d_q}", _shape(cfg.w_q), "1"),
        ("W_K", _("key weights, n_heads column slices"), "d_model × n_heads·d_k", _shape(cfg.w_k), "1"),
        ("W_V", _("value weights, n_heads column slices"), "d_model × n_heads·d_v", _shape(cfg.w_v), "1"),
        *((name, _(what), sym, _shape(cfg.matrix(attr)), "1") for name, what, sym, attr in _SCORE_WEIGHTS[cfg.score]),
        ("Q", f"{src} W_Q", f"{n_q} × n_heads·{d_q}", _shape(q), "1"),
        ("K", "X W_K", "n_seq × n_heads·d_k", _shape(k), "1"),
        ("V", "X W_V", "n_seq × n_heads·d_v", _shape(v), "1"),
        ("Q_h", _("columns h·{d} … (h+1)·{d} − 1 of Q").format(d=d_q), f"{n_q} × {d_q}", _shape(h0.q), each),
        ("K_h", _("columns h·d_k … (h+1)·d_k − 1 of K"), "n_seq × d_k", _shape(h0.k), each),
        ("V_h", _("columns h·d_v … (h+1)·d_v − 1 of V"), "n_seq × d_v", _shape(h0.v), each),
        *((name, _(what), sym.format(n_q=n_q), _shape(getattr(h0, attr)), each)
          for name, what, sym, attr in _SCORE_ROWS[cfg.score]),
        ("scores_h", _SCORE_FORMULAS[cfg.score], f"{n_q} × n_seq", _shape(h0.scores), each),
        ("weights_h", _("softmax(mask(scores_h ÷ s)), row by row"), f"{n_q} × n_seq", _shape(h0.weights), each),
        ("head_h", "weights_h V_h", f"{n_q} × d_v", _shape(h0.output), each),
        ("concat", _("[head_0 | head_1 | … ] side by side"), f"{n_q} × n_heads·d_v", _shape(trace.concat), "1"),
        ("W_O", _("output projection"), "n_heads·d_v × d_out", _shape(trace.w_o), "1"),
        (_("output"), "concat W_O", f"{n_q} × d_out", _shape(trace.output), "1"),
    ]
    return pd.DataFrame(rows, columns=[_("array"), _("formula"), _("shape"), _("here"), _("how many")])
