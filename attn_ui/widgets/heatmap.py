"""The heatmap of a matrix: the chart most intermediates are drawn with (a chart factory; never calls st).

:func:`heatmap` returns an :class:`attn_ui.widgets.charts.Chart`; test it through ``heatmap(...).to_dict()``.
"""

from __future__ import annotations

import json
import math
import string
import threading
import unicodedata
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import altair as alt
import numpy as np
import pyarrow as pa

from attn_ui.app.i18n import N_, _
from attn_ui.infra import budget
from attn_ui.widgets import charts
from attn_ui.widgets.numbers import format_numbers

Kind = Literal["signed", "weights", "mask"]

#: colour-blind-safe schemes: diverging around 0 for signed matrices, one hue for weights
SCHEMES = {"signed": "blueorange", "weights": "blues", "mask": "greys"}
MASKED_COLOUR = "#d9d9d9"  # a masked (-inf) cell: grey, distinct from any small weight
MAX_TEXT_CELLS = 400  # above this, the numbers are dropped from the cells (unreadable anyway)
#: a legend's labels: 4 significant digits (0.5, 16, 5e+29, never a 30-digit label); only the labels, so the
#: cells' descriptions for screen readers keep every digit (a legend ``format`` would round those too)
LEGEND_LABEL = "format(datum.value, '.4~g')"
#: a cell's value with every digit, for its tooltip: the shortest text that reads back as exactly that float64
#: (JavaScript's, as Python's repr), with the minus sign the app writes; worked out in the browser from the value,
#: so a large heatmap carries no second text per cell
EXACT = "replace(toString(datum.value), '-', '\u2212')"
CANVAS_CELLS = 256  # a heatmap of at least this many cells and no numbers on them is drawn on a canvas
FONT = 12  # px: the numbers on the cells (as attn_ui.widgets.charts.CONFIG's axis and legend labels)
CHAR_PX = 5.7  # px: a number's width per character at FONT px ("<0.0001": 38.8 px, "−1.2346e−5": 56.7 in Source Sans)
WIDE_CHAR_PX = 13  # px: width of a Chinese or Korean character at FONT px
#: the sidebar's width (attn_ui.shell.frame sets it): Streamlit's 300 px and 20 more, for the edit panel's grid of X
#: (index and four columns of seed 000's numbers) without a sideways scroll
SIDEBAR_PX = 320
#: the main column's width at a 1,400 px window: the window less the sidebar and the wide layout's padding (5rem,
#: 80 px, each side; measured in Chromium). No heatmap is wider (:func:`geometry`).
MAIN_COLUMN_PX = 1400 - SIDEBAR_PX - 2 * 80
LEGEND_PX = 72  # the colour legend right of the cells: its offset, gradient and labels ("−0.9876")
#: the name Vega-Lite gives a heatmap's colour scale in the Vega it compiles (its legend below the cells reads it)
COLOR_SCALE = "color"
#: a phone's main column (390 px less Streamlit's 16 px each side): a heatmap wider than it scrolls sideways in its box
PHONE_COLUMN_PX = 358
#: px a colour legend right of the cells takes besides its labels, as Chromium draws it: the padding and offset
#: between the cells and the gradient, the gradient and the labels' offset (measured: 52 + 33 for "−9.238")
LEGEND_BESIDE_PX = 52
AXIS_PX = 14  # between a row label and the cells: ticks and padding
LABEL_LIMIT = 180  # px: Vega's default labelLimit, the widest an axis label is drawn (cut with "…" beyond)
#: px: the height of an axis label's line at FONT px. Labels whose lines are this far apart never overlap: each
#: axis is told to draw every one of them (Vega's overlap rule, on by default, measures turned labels by their upright
#: boxes and hid "input2" between "input1" and "input3" on cells that held all three)
LABEL_LINE_PX = 15


def cell_px(n_rows: int, n_cols: int, *, largest: int = 44, budget: int = 640) -> int:
    """Pixel size of a square cell so the heatmap stays within ``budget`` pixels."""
    return int(max(2, min(largest, budget // max(n_rows, n_cols, 1))))


def shows_text(n_rows: int, n_cols: int, px: int) -> bool:
    """Whether a heatmap writes its numbers on the cells (not when they are too many or too small)."""
    return n_rows * n_cols <= MAX_TEXT_CELLS and px >= 26


def label_px(label: object) -> int:
    """Approximate width of an axis label (12 px font): 7 px a character, 13 for a wide one (Chinese, Korean), none
    for an invisible one (the isolates around a right-to-left label: attn_ui.widgets.text.isolate); at most LABEL_LIMIT.

    >>> label_px("0: input1"), label_px("0: 注意"), label_px("0: \u2068שלום\u2069"), label_px("x" * 40)
    (63, 47, 49, 180)
    """
    return min(LABEL_LIMIT, text_px(str(label)))


def text_px(text: str, narrow: float = 7) -> int:
    """:func:`label_px` of a line of any length (no limit); ``narrow``: px a character that is not wide (6 for
    words: a label's 7 allows for digits and capitals)."""
    if text.isascii():  # no wide and no invisible character (most labels, and every number)
        return round(narrow * len(text))
    return round(sum(0 if unicodedata.category(ch) == "Cf" else WIDE_CHAR_PX if unicodedata.east_asian_width(ch) in
                     "WF" else narrow for ch in text))


def fit_lines(text: str, px: int) -> str | list[str]:
    """``text`` as one line when it fits in ``px`` (by :func:`text_px`), else as two (a Vega text's lines), broken
    where the halves are nearest in width: at a space, or, in text written without spaces (Chinese), after any
    character but before punctuation. Vega cuts a line still too long with "…".

    >>> fit_lines("hover a cell: its row and column light up", 400)
    'hover a cell: its row and column light up'
    >>> fit_lines("hover a cell: its row and column light up", 200)
    ['hover a cell: its row', 'and column light up']
    >>> fit_lines("悬停在单元格上：它的行和列会高亮", 150)
    ['悬停在单元格上：', '它的行和列会高亮']
    """
    if text_px(text, 6) <= px:
        return text
    breaks = ([i for i, ch in enumerate(text) if ch == " "] if " " in text else
              [i for i in range(1, len(text)) if unicodedata.category(text[i])[0] != "P"])
    if not breaks:
        return text
    best = min(breaks, key=lambda i: abs(text_px(text[:i], 6) - text_px(text[i:], 6)))
    return [text[:best].rstrip(), text[best:].lstrip()]


def cell_width(px: int, longest_text: int) -> int:
    """Width of a cell ``px`` high that must hold numbers of ``longest_text`` characters (0: no text).

    >>> cell_width(44, 0), cell_width(44, 6), cell_width(44, 9)
    (44, 44, 57)
    """
    return max(px, int(CHAR_PX * longest_text) + 6)


def cells_room(row_labels: list[str]) -> int:
    """The pixels a heatmap's cells may take: the main column less its row labels, their ticks and its legend."""
    return room_beside(max(map(label_px, row_labels), default=0))


def room_beside(labels_px: int) -> int:
    """:func:`cells_room` of row labels ``labels_px`` wide (the widest one's :func:`label_px`).

    >>> room_beside(63)
    771
    """
    return MAIN_COLUMN_PX - labels_px - AXIS_PX - LEGEND_PX


def fit_width(n_cols: int, row_labels: list[str], px: int, longest_text: int,
              room: int | None = None) -> tuple[int, bool]:
    """The width of a heatmap's cells ``px`` high that hold numbers of ``longest_text`` characters (0: none), and
    whether the numbers are written on them: the cells never wider than ``room`` px together (default
    :func:`cells_room`, the main column) whatever the numbers, or the blocks a large matrix is drawn in (``px``: a
    block's width); where the numbers would not fit at FONT px, the cells hold colour only and each number is in
    its tooltip.

    >>> fit_width(4, ["0: input1"], 44, 6), fit_width(15, ["0: [CLS]"], 42, 7), fit_width(15, ["0: [CLS]"], 42, 12)
    ((44, True), (45, True), (42, False))
    >>> fit_width(32, ["0–7"], 32, 0)  # the caps' Q in blocks of 8 × 16: 32 blocks of 32 px were 1,024 px
    (25, False)
    """
    room = cells_room(row_labels) if room is None else room
    width = cell_width(px, longest_text)
    if n_cols * width > room:
        return max(2, min(px, room // n_cols)), False
    return width, longest_text > 0


def flat_width(n_cols: int, row_labels: list[str], col_labels: list[str], width: int,
               room: int | None = None) -> tuple[int, bool]:
    """The width of a heatmap's columns ``width`` wide at least, and whether their labels lie flat: where they fit
    in the cells, or in cells widened to hold them (up to 12 columns, within ``room`` px, default the main
    column's :func:`cells_room`); else turned.

    >>> flat_width(3, ["0: input1"], ["0", "1", "2"], 44), flat_width(3, ["0: input1"], ["0: input1"] * 3, 44)
    ((44, True), (71, True))
    >>> flat_width(15, ["0: [CLS]"], ["12: sentence"] * 15, 44), flat_width(3, ["0"], ["0: input1"] * 3, 44, room=150)
    ((44, False), (44, False))
    """
    need = max(map(label_px, col_labels), default=0) + 8  # a label, with room between it and the next
    if need <= width:
        return width, True
    if n_cols <= 12 and n_cols * need <= (cells_room(row_labels) if room is None else room):
        return need, True
    return width, False


def every_label(step_px: int, angle: int) -> bool:
    """Whether an axis can draw every label of cells ``step_px`` apart: labels lying flat (``angle`` 0) where the
    cells were made wide enough for them (:func:`flat_width`), or turned labels whose lines, step · sin |angle| apart,
    are at least :data:`LABEL_LINE_PX` apart; a row axis (its labels flat, one above the other) passes its rows'
    height and 90. Beyond, cells too small to label each one, the axis hides what would overlap.

    >>> every_label(50, 0), every_label(44, -45), every_label(16, -90), every_label(8, -90), every_label(18, 90)
    (True, True, True, False, True)
    """
    return angle == 0 or step_px * abs(math.sin(math.radians(angle))) >= LABEL_LINE_PX


def row_height(n_rows: int, px: int, *, least: int = 18, budget: int = 640) -> int:
    """Row height: at least ``least`` px (a readable row label) while the rows fit in ``budget`` px."""
    return px if px >= least or n_rows * least > budget else least


def heatmap_width(values: np.ndarray, row_labels: list[str], precision: int,
                  col_labels: list[str] | None = None, *, most: int | None = None) -> int:  # values [r, c]
    """Approximate pixel width of :func:`heatmap` (row labels, cells, legend), to lay heatmaps side by side.

    ``col_labels`` by default: the row labels for a square matrix (queries × keys), the column numbers otherwise.
    ``most``: as :func:`heatmap`'s.
    """
    r, c = values.shape
    px = cell_px(r, c)
    longest = max(map(len, written(values, precision))) if shows_text(r, c, px) else 0
    bc = -(-c // block_limit(r, c, most))  # columns per block (see :func:`heatmap`)
    labels_px = max(map(label_px, row_labels), default=0)  # worked out once
    room = room_beside(labels_px)
    width = fit_width(-(-c // bc), row_labels, px * bc, longest, room)[0]
    if col_labels is None:
        col_labels = row_labels if r == c else [str(j) for j in range(c)]
    if bc == 1:
        width = flat_width(c, row_labels, col_labels, width, room)[0]
    return labels_px + AXIS_PX + -(-c // bc) * width + LEGEND_PX


def long_frame(values: np.ndarray, row_labels: list[str], col_labels: list[str], precision: int) -> charts.Frame:
    """[r, c] -> r·c rows of (row, col, row_i, col_i, value, text, masked); -inf cells get value NaN."""
    flat = values.ravel()
    finite = np.isfinite(flat)
    return with_cells(label_columns(tuple(row_labels), tuple(col_labels)), value=np.where(finite, flat, np.nan),
                      text=format_numbers(flat, precision), masked=~finite)


@budget.cached("heatmap_labels", slots=budget.EXPLORER_SLOTS, key=lambda *args: args)  # the learner's labels: in bytes
def label_columns(rows: tuple[str, ...], cols: tuple[str, ...], br: int = 1, bc: int = 1) -> pa.Table:
    """The columns of a heatmap's long frame that depend on its labels alone, once per labels and block sizes (br × bc
    cells a block): row and col, each cell's labels (row-major), and row_i and col_i, the first row and column of
    its block (what a click on it picks). A run adds its numbers' columns (:func:`with_cells`): making the label
    columns took half of a small heatmap's data (≈ 40 µs of ≈ 90 for 3 × 3; 600 µs at 64 × 64).

    >>> label_columns(("a", "b"), ("x",), 2).to_pydict()
    {'row': ['a', 'b'], 'col': ['x', 'x'], 'row_i': [0, 2], 'col_i': [0, 0]}
    """
    r, c = len(rows), len(cols)
    return charts.table({
        "row": charts.repeated(rows, c),
        "col": charts.tiled(cols, r),
        "row_i": np.repeat(np.arange(r) * br, c),
        "col_i": np.tile(np.arange(c) * bc, r),
    })


def with_cells(labels: pa.Table, **columns: np.ndarray | Sequence[str]) -> pa.Table:
    """A heatmap's long frame: its :func:`label_columns`, then ``columns`` in order (numpy arrays, lists of str), as
    :func:`attn_ui.widgets.charts.table` makes them.

    >>> with_cells(label_columns(("a",), ("x", "y")), value=np.array([0.5, 1.0]), text=["0.5", "1"]).column_names
    ['row', 'col', 'row_i', 'col_i', 'value', 'text']
    """
    return pa.Table.from_arrays([*labels.columns, *columns.values()],
                                names=[*labels.column_names, *columns])


class _Written(threading.local):
    """This thread's (a script run's) last matrices written by :func:`written`: (a weak reference to the matrix,
    precision, its texts), newest last."""

    def __init__(self) -> None:
        self.last: list[tuple[weakref.ref, int, list[str]]] = []


_WRITTEN = _Written()
WRITTEN_KEPT = 8  # matrices remembered per thread: a page's row of heatmaps (Q, K, V), each measured then drawn


def written(values: np.ndarray, precision: int) -> list[str]:  # [r, c] -> r·c strings
    """The numbers on a heatmap's cells (format_numbers of ``values``, row-major), written once for a read-only matrix
    (a cached trace's) that is measured (:func:`heatmap_width`) and then drawn (:func:`heatmap`) in the same run: the
    last few such matrices of up to MAX_TEXT_CELLS cells are remembered by identity, per thread, as long as they live.

    >>> m = np.array([[0.125, 1.0]]); m.flags.writeable = False
    >>> written(m, 2), written(m, 2) is written(m, 2), written(m, 3)
    (['0.12', '1.00'], True, ['0.125', '1.000'])
    """
    last = _WRITTEN.last
    for ref, p, texts in last:
        if ref() is values and p == precision:
            return texts
    texts = format_numbers(values.ravel(), precision)
    if not values.flags.writeable and values.size <= MAX_TEXT_CELLS:  # unchanging: a read-only array (and its base)
        last.append((weakref.ref(values), precision, texts))
        del last[:-WRITTEN_KEPT]
    return texts


MAX_SIDE = 64  # a heatmap with more rows or columns than this draws blocks: the mean of each block
BLOCKS = 32  # ... at most this many blocks per side (≤ 1,024 marks: light for the browser at the caps)


def block_limit(n_rows: int, n_cols: int, most: int | None = None) -> int:
    """Most cells (or blocks) drawn per side of an [n_rows, n_cols] heatmap: every cell up to MAX_SIDE, else BLOCKS;
    every cell up to ``most`` a side, else BLOCKS, when ``most`` is given (a summary drawn on every edit).

    >>> block_limit(64, 64), block_limit(65, 3), block_limit(64, 64, BLOCKS), block_limit(32, 3, BLOCKS)
    (64, 32, 32, 64)
    """
    return MAX_SIDE if max(n_rows, n_cols) <= (most or MAX_SIDE) else BLOCKS


def block_means(
    values: np.ndarray, masked: np.ndarray | None = None, most: int = MAX_SIDE
) -> tuple[np.ndarray, np.ndarray | None, int, int]:  # [r, c] -> [⌈r/br⌉, ⌈c/bc⌉]
    """The matrix in blocks of br × bc cells (each side at most ``most`` blocks), each the mean of its drawn cells.

    Drawn cells are finite and not ``masked``. A block with none is −∞ (grey, masked) or, when ``masked`` is
    given, masked. Returns (block values, block mask or None, br, bc); a small matrix comes back as it is.

    Examples
    --------
    >>> m, _, br, bc = block_means(np.arange(6.0).reshape(1, 6), most=3)
    >>> m.tolist(), br, bc
    ([[0.5, 2.5, 4.5]], 1, 2)
    >>> block_means(np.array([[1.0, -np.inf, -np.inf, -np.inf]]), most=2)[0].tolist()
    [[1.0, -inf]]
    """
    r, c = values.shape
    br, bc = -(-r // most), -(-c // most)
    if br == bc == 1:
        return values, masked, 1, 1
    drawn = np.isfinite(values) if masked is None else np.isfinite(values) & ~np.asarray(masked, dtype=bool)
    rb, cb = -(-r // br), -(-c // bc)
    pad = ((0, rb * br - r), (0, cb * bc - c))
    sums = np.pad(np.where(drawn, values, 0.0), pad).reshape(rb, br, cb, bc).sum(axis=(1, 3))  # [rb, cb]
    counts = np.pad(drawn, pad).reshape(rb, br, cb, bc).sum(axis=(1, 3))  # [rb, cb]
    means = sums / np.maximum(counts, 1)
    if masked is None:
        return np.where(counts > 0, means, -np.inf), None, br, bc
    return means, counts == 0, br, bc


def block_labels(labels: list[str], size: int) -> list[str]:
    """Labels of blocks of ``size`` positions: "0–3", "4–7", ... (the labels themselves for size 1)."""
    if size == 1:
        return list(labels)
    n = len(labels)
    return [f"{a}–{min(a + size, n) - 1}" for a in range(0, n, size)]


#: what a masked cell's tooltip and description say in place of its value (marked; shown with _(MASKED_WORD))
MASKED_WORD = N_("masked")


def value_title(layout: HeatmapLayout) -> str:
    """What a cell's number is, for its tooltip: "weight", "may attend (1)", "score", or the matrix's name.

    In the learner's language: a chart's builder runs in the session, and attn_ui.widgets.charts keeps one spec per
    language.

    >>> from dataclasses import replace
    >>> lay = HeatmapLayout(("a",), ("b",), "signed", 44, 44, 0.5, 11, 0, "", "key", "query", None, name="Scores QKᵀ")
    >>> value_title(lay), value_title(replace(lay, kind="weights")), value_title(replace(lay, name=""))
    ('score', 'weight', 'value')
    """
    if layout.kind == "weights":
        return _("weight")
    if layout.kind == "mask":
        return _("may attend (1)")
    name = (layout.title or layout.name).lower()
    score = _("score")  # a matrix of scores ("Scaled scores") is named with the word in the learner's language too
    if "score" in name or score.lower() in name:
        return score
    return layout.title or layout.name or _("value")


def masked_description(x_title: str, y_title: str, field: str = "value",
                       number: str = 'format(datum.value, "")') -> str:
    """The Vega expression of a cell's description (its aria-label) in a heatmap with masked cells.

    What Vega-Lite writes by itself ("key: 1: b; query: 0: a; value: 0.431937101222": the axes' titles and
    values, then ``field`` and ``number``, the expression of its value) but "masked" for a masked cell's value.
    ``field`` ("value", "text": marked message ids) and "masked" are written in the learner's language.

    >>> masked_description("key", "query")
    '"key: " + datum.col + "; query: " + datum.row + "; value: " + (datum.masked ? "masked" : format(datum.value, ""))'
    """
    return (f"{json.dumps(x_title + ': ')} + datum.col + {json.dumps('; ' + y_title + ': ')} + datum.row + "
            f"{json.dumps('; ' + _(field) + ': ')} + (datum.masked ? {json.dumps(_(MASKED_WORD))} : {number})")


@dataclass(frozen=True)
class HeatmapLayout:
    """Everything about a heatmap but its numbers: the key of its cached Vega-Lite spec (see attn_ui.widgets.charts)."""

    rows: tuple[str, ...]
    cols: tuple[str, ...]
    kind: str
    width_px: int
    height_px: int
    stroke: float
    font: int  # 0: no numbers on the cells
    angle: int
    title: str
    x_title: str
    y_title: str
    select: str | None
    has_masked: bool = False  # some cell is drawn grey as masked
    fixed_domain: tuple[float, float] | None = None  # weights and masks: 0 … 1 in the spec, not in the data
    name: str = ""  # what the matrix is, for the text alternative of a chart without a title (shown above it)
    focus: bool = False  # hover a cell to light its row and column, click to pin them (:func:`focus_layers`)
    labels_px: int = 0  # the row labels' width (:func:`label_px`), where the focus line starts
    legend_below: bool = False  # the colour legend lies under the cells, not right of them (:func:`legend_below`)

    def pin_value(self, token: str | None) -> list[dict] | None:
        """The focus the control holds (the value of :data:`attn_ui.widgets.charts.HELD`) for the token labelled
        ``token`` (the keyboard's focus, attn_ui.widgets.controls.focus_control): its row and its column where the
        heatmap has them (a matrix of tokens × dimensions lights the row only); None when neither axis has it
        (blocks).

        >>> lay = HeatmapLayout(("0: a", "1: b"), ("0", "1"), "signed", 44, 44, 0.5, 0, 0, "", "", "", None)
        >>> lay.pin_value("1: b"), lay.pin_value("2: c")
        ([{'row': '1: b', 'col': None}], None)
        """
        row, col = (token if token in self.rows else None), (token if token in self.cols else None)
        return None if row is None and col is None else [{"row": row, "col": col}]

    @property
    def on_canvas(self) -> bool:
        """Many cells and no numbers on them: drawn on a canvas, without a per-cell ARIA description (a screen
        reader cannot use a thousand of them; building them is most of Vega's work for such a chart)."""
        return not self.font and len(self.rows) * len(self.cols) >= CANVAS_CELLS


#: what each colour scheme means, for a chart's text alternative (:func:`describe`; marked, shown with _())
SCHEME_WORDS = {
    "signed": N_("colour from blue (negative) through white (0) to orange (positive)"),
    "weights": N_("colour from white (0) to dark blue (1)"),
    "mask": N_("colour from white (0) to black (1)"),
}


def describe(layout: HeatmapLayout) -> str:
    """A heatmap's text alternative (its top-level Vega-Lite ``description``: the chart's aria-label).

    >>> describe(HeatmapLayout(("a", "b"), ("x", "y", "z"), "weights", 44, 44, 0.5, 11, 0, "Weights", "key",
    ...                        "query", None)).split(", colour")[0]
    'Weights: heatmap of 2 × 3 cells, rows query, columns key'
    """
    lay = layout
    parts = [_("heatmap of {rows} × {cols} cells").format(rows=len(lay.rows), cols=len(lay.cols))]
    if lay.y_title:
        parts.append(_("rows {title}").format(title=lay.y_title))
    if lay.x_title:
        parts.append(_("columns {title}").format(title=lay.x_title))
    parts.append(_(SCHEME_WORDS[lay.kind]))
    if lay.has_masked:
        parts.append(_("masked cells grey"))
    cells = _("each cell is written on it") if lay.font else _("each cell's value is in its tooltip")
    # a list of separate facts: joined with the language's list comma, then its semicolon
    words = _("{facts}; {cells}").format(facts=_(", ").join(parts), cells=cells)
    label = lay.title or lay.name
    return _("{label}: {words}").format(label=label, words=words) if label else words[0].upper() + words[1:]


def cell_ink(scale: str = "color") -> dict:
    """The colour of the number written on a heatmap cell: white or black, whichever contrasts more with the cell.

    Worked out per cell in the browser (Vega's ``contrast()`` of the cell's fill from colour scale ``scale``),
    so it holds for any colour scheme, domain and Streamlit theme: never a threshold on the value guessed in
    Python. A masked cell (:data:`MASKED_COLOUR`, light grey) gets black. For any heatmap whose colour channel
    has a scale named ``scale`` ("color" in a plain layer; Vega-Lite prefixes it inside a concatenation).
    """
    fill = f"scale({json.dumps(scale)}, datum.value)"
    return (alt.when(f"!datum.masked && contrast('white', {fill}) > contrast('black', {fill})")
            .then(alt.value("white")).otherwise(alt.value("black")))


#: the two selections of a heatmap's focus (fields row and col, the labels): the cell under the pointer, and the cell
#: clicked (pinned until it is clicked again, double-clicked, or a click lands off the cells); and the focus the
#: page's control holds (:data:`attn_ui.widgets.charts.HELD`), which outranks both
FOCUS, PIN, HELD = "focus", charts.PIN, charts.HELD
#: which row and column are lit: the held token's, else the pinned cell's, else the hovered one's (a label, or null)
LIT_ROW, LIT_COL = "lit_row", "lit_col"
#: the lit row's and column's outline and the focus lines: red-orange, apart from both colour schemes (a param, so the
#: page's theme picks its shade: attn_ui.widgets.charts.INKS)
FOCUS_COLOUR = {"expr": charts.INK}
FOCUS_LINE_PX = 24  # the focus line's baseline above the cells (the rows' title sits 8 px above them)
#: px: a heatmap this wide (cells and legend) has its focus in one line beside the rows' title; a narrower one in two
#: lines above it (the lit cell, then what to do)
WIDE_LINE_PX = 420
#: the focus lines' words (marked; shown with _()): the lit cell, and above it what a click does (or did)
FOCUS_CELL = N_("{rows} {row} → {cols} {col}: {value}")
FOCUS_HINT = N_("hover or tap a cell: its row and column light up")  # a tap lights (and pins) on a phone
FOCUS_CLICK = N_("click to pin it")
FOCUS_PINNED = N_("pinned · click the lit cell to release it")  # pinned by a click: a cell (its row and column)
#: the model view's own pin: a query's row of cells, lit in every head (attn_ui.views.model_views)
FOCUS_PINNED_ROW = N_("pinned · click a lit row to release it")
#: held by the page's control (Focus on a token: attn_ui.widgets.controls.focus_control), whatever it lights (a cell,
#: a row, a column): clicks leave it, so that every chart and the control always say the same. Two parts: one line
#: (:func:`held_words`), or two over a narrow heatmap; a saved image says the first only (:func:`held_expr`)
FOCUS_HELD = N_("pinned by Focus on a token"), N_("set it to none to release")


def held_words() -> str:
    """What a chart whose focus the page's control holds says, on one line, in the learner's language.

    >>> held_words()
    'pinned by Focus on a token · set it to none to release'
    """
    return " · ".join(map(_, FOCUS_HELD))


def held_expr(lines: int = 1) -> str:
    """What a chart whose focus the page's control holds says, as a Vega expression: on the page (the param
    :data:`attn_ui.widgets.charts.RELEASE` true) :func:`held_words`; in a saved image what pinned it only, without how
    to release it (an instruction for a control the image does not have). ``lines`` 2: a list of two lines, over a
    narrow heatmap (the image's one part on the second, the line over the lit cell's).

    >>> held_expr()
    '(focus_release ? "pinned by Focus on a token · set it to none to release" : "pinned by Focus on a token")'
    >>> held_expr(2)
    '(focus_release ? ["pinned by Focus on a token", "set it to none to release"] : ["", "pinned by Focus on a token"])'
    """
    pinned, release = map(_, FOCUS_HELD)
    page, image = (held_words(), pinned) if lines == 1 else ([pinned, release], ["", pinned])
    return f"({charts.RELEASE} ? {json.dumps(page, ensure_ascii=False)} : {json.dumps(image, ensure_ascii=False)})"


def vega_text(template: str, parts: dict[str, str]) -> str:
    """A Vega string expression writing a translated ``template`` whose ``{name}`` placeholders are the Vega
    expressions ``parts[name]``.

    >>> vega_text("{row} → {col}!", {"row": "datum.row", "col": "datum.col"})
    '(datum.row) + " → " + (datum.col) + "!"'
    """
    pieces = []
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        if literal:
            pieces.append(json.dumps(literal, ensure_ascii=False))
        if name is not None:
            pieces.append(f"({parts[name]})")
    return " + ".join(pieces) or '""'


CELLS = "cells"  # the name of a heatmap's layer of cells (with a focus): where its selections listen (``views``)


def focus_params() -> list[dict]:
    """The hover selection, the pin (a click; the same click again releases it: its toggle is true when the
    clicked cell is the pinned one), the focus the page's control holds (null, or its token's row and column: set
    where the chart is drawn, attn_ui.widgets.charts.pinned) and which row and column are lit: the held ones, else
    the pinned ones, else the hovered ones. Plain Vega-Lite, listening on the cells."""
    is_pinned = f"!!datum && isValid(datum.row) && vlSelectionTest({json.dumps(PIN + '_store')}, datum)"
    lit = "isArray({s}.{f}) ? {s}.{f}[0] : null"

    def lit_expr(field: str) -> str:
        return (f"isArray({HELD}) ? {HELD}[0].{field} : isArray({PIN}.row) ? {PIN}.{field}[0] : "
                f"({lit.format(s=FOCUS, f=field)})")

    return [{"name": FOCUS, "select": {"type": "point", "clear": "pointerout", "fields": ["row", "col"],
                                       "on": "pointerover"}, "views": [CELLS]},
            {"name": PIN, "select": {"type": "point", "clear": "dblclick", "fields": ["row", "col"], "on": "click",
                                     "toggle": is_pinned}, "views": [CELLS]},
            {"name": HELD, "value": None},
            {"name": LIT_ROW, "expr": lit_expr("row")}, {"name": LIT_COL, "expr": lit_expr("col")},
            {"name": charts.INK, "value": charts.INKS["light"]}, {"name": charts.RELEASE, "value": True}]


def focus_layers(lay: HeatmapLayout) -> list[dict]:
    """What lights the focused cell (:func:`focus_params`): an outline around its row and one around its column,
    a line above the cells naming its query and key and its value (the number shown on it, else every digit), and
    what to do: hover, click to pin, click the lit cell to release; or, while the page's control holds a token, that
    the control pinned it and how to release it (a held token lights a row or a column alone where the other axis
    has no tokens: the words then stand alone). On a wide heatmap one line beside the title, on a narrow one two
    lines above it. Nothing of it is drawn for screen readers
    (``aria`` off): the chart's description says what it is, and the keyboard's focus is the page's control.
    Plain Vega-Lite layers on the heatmap's data (the layer chart's: :func:`heatmap_chart`)."""
    width, height = lay.width_px * len(lay.cols), lay.height_px * len(lay.rows)
    x, y = axes(lay)
    outline = {"type": "rect", "aria": False, "filled": False, "stroke": FOCUS_COLOUR, "strokeWidth": 2}
    # the bands read the labels alone (n rows, m columns), not the n × m cells: Vega filters a band's data again on
    # every new data and every hover, in Streamlit's expression interpreter (≈ 20 % of an edit's browser time on
    # Step by step at 64 tokens when they read the cells)
    row_band = {"data": {"values": [{"row": r} for r in lay.rows]}, "mark": outline, "name": "focus_row",
                "encoding": {"x": {"value": 0}, "x2": {"value": width}, "y": y},
                "transform": [{"filter": f"datum.row === {LIT_ROW}"}]}
    col_band = {"data": {"values": [{"col": c} for c in lay.cols]}, "mark": outline, "name": "focus_col",
                "encoding": {"x": x, "y": {"value": 0}, "y2": {"value": height}},
                "transform": [{"filter": f"datum.col === {LIT_COL}"}]}
    number = ("datum.text" if lay.font else EXACT)
    if lay.has_masked:
        number = f"datum.masked ? {json.dumps(_(MASKED_WORD), ensure_ascii=False)} : {number}"
    said = vega_text(_(FOCUS_CELL), {"rows": json.dumps(lay.y_title or _("row"), ensure_ascii=False),
                                      "cols": json.dumps(lay.x_title or _("column"), ensure_ascii=False),
                                      "row": "datum.row", "col": "datum.col", "value": number})
    words = {k: json.dumps(_(w), ensure_ascii=False) for k, w in
             (("hint", FOCUS_HINT), ("click", FOCUS_CLICK), ("pinned", FOCUS_PINNED))}
    after_click = f"(isArray({PIN}.row) ? {words['pinned']} : {words['click']})"
    nothing_lit = f"{LIT_ROW} === null && {LIT_COL} === null"
    if width + LEGEND_PX >= WIDE_LINE_PX:  # one line, beside the rows' title: the chart no taller than without it
        x0, y0 = max(0, label_px(lay.y_title) - lay.labels_px - AXIS_PX + 8), -8  # right of the title, on its line
        status = f"(isArray({HELD}) ? {held_expr()} : {after_click})"
        no_cell = f"{LIT_ROW} === null || {LIT_COL} === null"  # a held row (or column) alone: no cell's line
        said = f"{said} + ' · ' + {status}"
        hint, hint_y, up = f"{nothing_lit} ? {words['hint']} : {no_cell} ? {status} : ''", y0, 0
    else:  # the cell's line over the rows' title, what to do over it (narrow: one line would be cut short)
        x0, y0 = -(lay.labels_px + AXIS_PX), -FOCUS_LINE_PX
        # held: its two parts on two lines (on one, a small heatmap's would be cut short); the hint, a click's and a
        # pin's words on two where one would not fit (Korean, on a 3-column W_Q). Lines drawn downwards from the
        # hint's line: over the cell's line where a cell is lit (then a line higher), else on its empty line. When
        # the words take two lines, the hint's line is a line higher for good: lit, the cell's line stays free, and
        # the chart's height never changes on a hover (Vega fits the chart to its marks: a line moving up would grow it)
        fitted = {k: fit_lines(_(w), width + LEGEND_PX - x0) for k, w in
                  (("hint", FOCUS_HINT), ("click", FOCUS_CLICK), ("pinned", FOCUS_PINNED))}
        words = {k: json.dumps(w, ensure_ascii=False) for k, w in fitted.items()}
        after_click = f"(isArray({PIN}.row) ? {words['pinned']} : {words['click']})"
        two = any(isinstance(w, list) for w in fitted.values())
        hint, hint_y = (f"{nothing_lit} ? {words['hint']} : isArray({HELD}) ? {held_expr(2)} : {after_click}",
                        y0 - (2 if two else 1) * LABEL_LINE_PX)
        up = 0 if two else {
            "expr": f"isArray({HELD}) && {LIT_ROW} !== null && {LIT_COL} !== null ? {-LABEL_LINE_PX} : 0"}
    line = {"type": "text", "align": "left", "aria": False, "baseline": "bottom", "color": FOCUS_COLOUR,
            "fontSize": FONT, "limit": width + LEGEND_PX - x0, "lineHeight": LABEL_LINE_PX}
    cell = {"mark": {**line, "fontWeight": "bold"},
            "encoding": {"text": {"field": "said", "type": "nominal"}, "x": {"value": x0}, "y": {"value": y0}},
            "name": "focus_cell",
            "transform": [{"filter": f"datum.row === {LIT_ROW} && datum.col === {LIT_COL}"},
                          {"calculate": said, "as": "said"}]}
    hint = {"data": {"values": [{}]}, "mark": {**line, "text": {"expr": hint}, "dy": up},
            "encoding": {"x": {"value": x0}, "y": {"value": hint_y}}, "name": "focus_hint"}
    return [row_band, col_band, cell, hint]


def focus_extra(lay: HeatmapLayout) -> dict:
    """A heatmap's focus (:attr:`attn_ui.widgets.charts.Chart.extra`): its selections and the layers that read them,
    added as plain Vega-Lite to the spec Altair built (once per layout: attn_ui.widgets.charts.spec)."""
    return {"params": focus_params(), "layer": focus_layers(lay)}


def axes(lay: HeatmapLayout) -> tuple[dict, dict]:
    """A heatmap's x (columns) and y (rows) encodings as Vega-Lite: shared by its cells, numbers and focus layers.

    sort None: the data's order, rows and columns in order (row-major); an explicit list of every label would make
    Vega evaluate an indexof() expression per cell. Labels lie flat where they fit (angle 0: Streamlit's theme would
    turn them), else turned; each one drawn where the cells give it its line (every_label), else greedy: hide labels
    that would overlap. The rows' title lies flat above the row labels (turned on its side, a Chinese or Korean
    title is hard to read).
    """
    x_overlap = False if every_label(lay.width_px, lay.angle) else "greedy"
    y_overlap = False if every_label(lay.height_px, 90) else "greedy"
    x = {"axis": {"labelAngle": lay.angle, "labelOverlap": x_overlap}, "field": "col", "sort": None,
         "title": lay.x_title or None, "type": "ordinal"}
    y = {"axis": {"labelOverlap": y_overlap, "titleAlign": "left", "titleAngle": 0, "titleBaseline": "bottom",
                  "titleY": -8}, "field": "row", "sort": None, "title": lay.y_title or None, "type": "ordinal"}
    return x, y


def heatmap_chart(layout: HeatmapLayout, data: list, domains: list) -> alt.LayerChart | alt.Chart:
    """The heatmap of a layout, on ``data[0]`` (its long frame) with colour domain ``domains[0]``.

    The builder of :func:`heatmap`'s :class:`attn_ui.widgets.charts.Chart`: the structure depends on ``layout`` only.
    """
    lay = layout
    scale = alt.Scale(scheme=SCHEMES[lay.kind], domain=list(lay.fixed_domain) if lay.fixed_domain else domains[0],
                      **({"domainMid": 0} if lay.kind == "signed" else {}))
    x, y = axes(lay)
    # layered (numbers on the cells, or a focus): the layer chart holds the data, which its focus layers read too
    layered = bool(lay.font or lay.focus)
    base = alt.Chart(alt.Undefined if layered else data[0]).encode(x=alt.X(**x), y=alt.Y(**y)).properties(
        width=alt.Step(lay.width_px), height=alt.Step(lay.height_px))
    # the title over the whole chart (never alt.Undefined: altair 6 rejects it)
    top = {"description": describe(lay), **({"title": lay.title} if lay.title else {})}
    # the tooltip's value ("shown", below) has every digit (:data:`EXACT`), the cell's text the decimals shown
    tooltip = [alt.Tooltip("row:O", title=lay.y_title or _("row")),
               alt.Tooltip("col:O", title=lay.x_title or _("column")),
               alt.Tooltip("shown:N", title=value_title(lay))]
    if lay.legend_below:  # across, as long as the cells are wide (at least 100 px: its end labels apart), labelled at
        # the ends of the colours' domain, as the legend right of the cells is (left alone, Vega picked round numbers
        # within it: −5, 0, 5 for ±9.238)
        legend = alt.Legend(orient="bottom", direction="horizontal", labelExpr=LEGEND_LABEL,
                            gradientLength=max(100, lay.width_px * len(lay.cols)),
                            values=alt.ExprRef(f"domain('{COLOR_SCALE}')"))
    else:
        legend = alt.Legend(orient="right", gradientLength=max(60, lay.height_px * len(lay.rows)),
                            labelExpr=LEGEND_LABEL)
    fill = alt.Color("value:Q", scale=scale, title=None, legend=legend)
    rect = base.mark_rect(stroke="white", strokeWidth=lay.stroke, **({"aria": False} if lay.on_canvas else {}))
    if lay.has_masked:
        fill = alt.when(alt.datum.masked).then(alt.value(MASKED_COLOUR)).otherwise(fill)
        # a masked cell's value is a stand-in (the bottom of the colour scale, or the weight 0): its tooltip and
        # its description for screen readers say "masked" instead
        rect = rect.transform_calculate(shown=f"datum.masked ? {json.dumps(_(MASKED_WORD))} : {EXACT}")
        if not lay.on_canvas:
            rect = rect.transform_calculate(description=masked_description(lay.x_title or _("col"),
                                                                           lay.y_title or _("row")))
            rect = rect.encode(description="description:N")
    else:
        rect = rect.transform_calculate(shown=EXACT)
    rect = rect.encode(color=fill, tooltip=tooltip)
    if lay.select:
        sel = alt.selection_point(name=lay.select, fields=["row_i", "col_i"], on="click", clear=False)
        rect = rect.add_params(sel)
    if lay.focus:  # named: its focus selections listen on it (:func:`focus_extra`, added to the spec)
        rect = rect.properties(name=CELLS)
    if not lay.font:
        return alt.layer(rect, data=data[0], **top) if lay.focus else rect.properties(**top)
    text = base.mark_text(fontSize=lay.font).encode(text="text:N", color=cell_ink())
    if lay.has_masked:  # the number drawn on a masked cell ("−∞", or a weight 0) is read as "masked" too
        text = text.transform_calculate(description=masked_description(
            lay.x_title or _("col"), lay.y_title or _("row"), N_("text"), "datum.text")).encode(
            description="description:N")
    return alt.layer(rect, text, data=data[0], **top)


def heatmap(
    values: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    *,
    title: str = "",
    kind: Kind = "signed",
    precision: int = 4,
    domain: tuple[float, float] | None = None,
    x_title: str = "",
    y_title: str = "",
    px: int | None = None,
    select: str | None = None,
    masked: np.ndarray | None = None,
    name: str = "",
    most: int | None = None,
    room: int | None = None,
    focus: bool = True,
    narrow: bool | None = None,
    beside_px: int = 0,
) -> charts.Chart:  # values [r, c]
    """A heatmap with the numbers on the cells; masked (-inf) cells grey and marked −∞.

    ``title``, ``name`` and the axis titles are shown as they are (the caller translates them); the words the
    heatmap adds itself (tooltip titles, its text alternative, "masked") are in the learner's language.

    A matrix with more than MAX_SIDE rows or columns is drawn in at most BLOCKS × BLOCKS blocks (the mean of each,
    see :func:`block_means`), as tall as the whole matrix would be, and the title says so.

    Parameters
    ----------
    values : ndarray of shape (r, c)
    row_labels, col_labels : list of str
        Unique labels, in order (e.g. "0: input1").
    kind : "signed", "weights" or "mask"
        Diverging colours centred on 0, sequential 0..1, or greys.
    domain : (lo, hi), optional
        A shared colour domain, so side-by-side heatmaps compare.
    select : str, optional
        Name of a click selection on the cell (fields row_i, col_i), for ``on_select``.
    masked : ndarray of bool, shape (r, c), optional
        Cells to draw grey as masked even though their value is finite (e.g. weights of masked keys).
    name : str, optional
        What the matrix is ("Weights"), for the chart's text alternative when it has no ``title`` (the page shows
        the name above it).
    most : int, optional
        Blocks above this many rows or columns (instead of MAX_SIDE): for a summary redrawn on every edit, whose
        every drawn cell costs the browser on every run.
    room : int, optional
        The pixels the cells may take (default: the main column less the row labels and the legend,
        :func:`cells_room`), for a heatmap in a narrower column: numbers and flat column labels only where they fit.
    focus : bool
        Hover to light a cell's row and column, click to pin them (:func:`focus_layers`; never with one row or one
        column), added as plain Vega-Lite to the chart's spec (:func:`focus_extra`), never by :func:`heatmap_chart`.
        False for a panel of a concatenated chart (heatmap_chart of its layout beside others): every panel's layer
        of cells would be named :data:`CELLS`, and Vega-Lite refuses a name twice.
    narrow : bool, optional
        Drawn on a phone's narrow screen (default: this run's, attn_ui.widgets.charts.narrow): a heatmap too wide for
        it with its legend beside the cells has the legend under them (:func:`legend_below`).
    beside_px : int
        What a chart draws right of this heatmap, in px (Masking's column of row sums): counted in its width on a
        phone's screen (its legend goes under the cells where the whole would not fit with it beside them).
    """
    r, c = values.shape
    narrow = charts.narrow() if narrow is None else narrow
    px = px or cell_px(r, c)
    height_px = row_height(r, px)
    values, masked, br, bc = block_means(values, masked, block_limit(r, c, most))  # at most block_limit(...) a side
    in_blocks = br > 1 or bc > 1
    if in_blocks:
        row_labels, col_labels = block_labels(row_labels, br), block_labels(col_labels, bc)
        if kind == "weights" and domain is None:  # means of many small weights: 0 … 1 would be one pale colour
            note = _("each cell: the mean of a block of {rows} × {cols}, colours from 0 to the largest mean")
        else:
            note = _("each cell: the mean of a block of {rows} × {cols}")
        note = note.format(rows=br, cols=bc)
        title = f"{title} · {note}" if title else note
    r, c = values.shape
    flat = values.ravel()
    finite = np.isfinite(flat)
    is_masked = ~finite if masked is None else ~finite | np.asarray(masked, dtype=bool).ravel()
    spread = in_blocks and kind == "weights" and domain is None  # colours from 0 to the largest block mean
    if domain is None:
        if spread:
            domain = (0.0, float(flat[finite].max()) if finite.any() else 1.0)
        elif kind in ("weights", "mask"):
            domain = (0.0, 1.0)
        else:
            m = float(np.abs(flat[finite]).max()) if finite.any() else 1.0
            domain = (-m or -1.0, m or 1.0)
    lo, hi = domain
    value = np.where(finite, flat, lo)  # a null value would drop the masked cell's rect (Vega-Lite "invalid")
    show_text, has_masked = shows_text(r, c, px), bool(is_masked.any())
    text = written(values, precision) if show_text else []  # written only where they are drawn (4,096: 13 ms)
    labels_px = max(map(label_px, row_labels), default=0)  # the row labels' widths, worked out once
    room = room_beside(labels_px) if room is None else room
    width_px, show_text = fit_width(c, row_labels, px * bc, max(map(len, text)) if show_text else 0, room)
    width_px, lie_flat = flat_width(c, row_labels, col_labels, width_px, room)
    rows, cols = tuple(row_labels), tuple(col_labels)
    # only the columns the chart reads: the browser converts every cell of every column
    data = with_cells(label_columns(rows, cols, br, bc), value=value, **({"text": text} if show_text else {}),
                      **({"masked": is_masked} if has_masked else {}))

    below = narrow and legend_below(labels_px + AXIS_PX + c * width_px + beside_px, (lo, hi))
    layout = HeatmapLayout(
        rows=rows, cols=cols, kind=kind, width_px=width_px, height_px=height_px * br,
        stroke=0.5 if px >= 8 else 0, font=FONT if show_text else 0,
        angle=0 if lie_flat else (-45 if c <= 12 else -90),
        title=title, x_title=x_title, y_title=y_title, select=select, has_masked=has_masked,
        fixed_domain=None if kind == "signed" or spread else (float(lo), float(hi)), name=name,
        focus=focus and r > 1 and c > 1, labels_px=labels_px, legend_below=below,
    )
    return charts.Chart(heatmap_chart, layout, (data,), (None if layout.fixed_domain else (float(lo), float(hi)),),
                        canvas=layout.on_canvas, extra=focus_extra if layout.focus else None)


def legend_below(drawn_px: int, domain: tuple[float, float]) -> bool:
    """Whether a heatmap on a phone has its colour legend under the cells: where the legend right of them would take
    the chart past the phone's column (:data:`PHONE_COLUMN_PX`), so that the box scrolled sideways and its edge cut the
    legend's labels (Step by step's scaled scores showed "9.23" for 9.238). ``drawn_px``: the row labels, their ticks
    and the cells; ``domain``: the colours' (its ends are the legend's widest labels, 4 significant digits as
    :data:`LEGEND_LABEL` writes them).

    >>> legend_below(290, (-9.2376, 9.2376)), legend_below(290, (0.0, 1.0)), legend_below(209, (-8.0, 8.0))
    (True, False, False)
    """
    widest = max(len(f"{v:.4g}") for v in domain)  # "−9.238": the minus counts as the "-" does
    return drawn_px + LEGEND_BESIDE_PX + CHAR_PX * widest > PHONE_COLUMN_PX


def shared_domain(*matrices: np.ndarray, kind: Kind = "signed") -> tuple[float, float]:
    """One colour domain for several heatmaps shown side by side (finite cells only)."""
    if kind != "signed":
        return (0.0, 1.0)
    m = max((float(np.abs(a[np.isfinite(a)]).max()) for a in matrices if np.isfinite(a).any()), default=1.0)
    return (-m or -1.0, m or 1.0)
