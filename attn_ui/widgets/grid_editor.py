"""The grid editor: an st.data_editor grid per matrix (and one for the token labels) whose edits go through
attn_core validation, and the banner that says a grid holds a refused value.

The grids' edits are committed at the start of every run (:func:`commit_pending`, from attn_ui.shell.frame), before
any page draws: the whole page and every other page see the new configuration, and an edit that arrives with a
page switch is not lost. (Not in on_change callbacks: AppTest edits reach the script, not callbacks.)
A rejected edit keeps the learner's values as a draft (shown again when they come back) with a
message naming the matrix and the cell; the configuration keeps its last valid value.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attn_core import MATRIX_NAMES, AttentionInputError, Config, Phrase, as_matrix, check_computable
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import N_, _
from attn_ui.infra import budget, st_internals
from attn_ui.widgets import controls, text
from attn_ui.widgets.numbers import exact_texts, grid_texts, parse_number

#: matrices bigger than this are not shown as an editable grid (the browser would crawl)
MAX_EDITABLE_CELLS = 20_000


def row_tokens(cfg: Config, name: str) -> tuple[str, ...]:
    """The tokens that label a matrix's rows: Y's for Y, X's otherwise (only X and Y have a row per token)."""
    return cfg.query_tokens if name == "y" else cfg.tokens


#: LEFT-TO-RIGHT MARK: put first in a grid's row label with a right-to-left token. The grid (glide-data-grid) aligns a
#: text to the right when its first strong letter is right to left (the isolate's marks count for none), and a label
#: wider than the sidebar grid's column then lost its start, the token's number ("0: ")
LRM = "\u200e"


def row_labels(name: str, tokens: tuple[str, ...], n_rows: int) -> list[str]:
    """Rows of X (and Y) are tokens, each drawn from the left (:data:`LRM`); weight rows are input dimensions.

    >>> row_labels("x", ("the", "שלום"), 2) == ["0: the", LRM + "1: " + text.isolate("שלום")]
    True
    """
    if name in ("x", "y"):
        return [LRM + label if label[-1:] == text.PDI else label for label in text.numbered(tokens)]
    return [str(i) for i in range(n_rows)]


def cell_label(name: str, cell: tuple[int, int], tokens: tuple[str, ...]) -> str:
    """'row 1 (input2), column 2' for X (and Y); 'row 3, column 0' for weights."""
    phrase = cell_phrase(name, cell, tokens)
    return i18n.filled(phrase.template, phrase.params)


def cell_phrase(name: str, cell: tuple[int, int], tokens: tuple[str, ...]) -> Phrase:
    """:func:`cell_label` still to be translated: kept in a change that Undo names in the language shown then."""
    i, j = cell
    if name in ("x", "y") and i < len(tokens):
        return Phrase(N_("row {i} ({token}), column {j}"), i=i, token=text.isolate(tokens[i]), j=j)
    return Phrase(N_("row {i}, column {j}"), i=i, j=j)


def set_to(name: str, cell: tuple[int, int], value: float, tokens: tuple[str, ...]) -> state.Change:
    """The change of one cell, as Undo names it: "X, row 1 (input2), column 0 set to 11"."""
    return state.change(N_("{matrix}, {cell} set to {value}"), matrix=MATRIX_NAMES[name],
                        cell=cell_phrase(name, cell, tokens), value=typed_text(value))


def typed_text(value: float) -> str:
    """A value as a learner types it: every digit of the float64 (``repr``), a whole number without its ".0".

    >>> typed_text(5.0), typed_text(-0.125), typed_text(1e-05), typed_text(1e22)
    ('5', '-0.125', '1e-05', '1e+22')
    """
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


#: the core's messages about one cell that it can raise for a grid (attn_core.as_matrix), by their template: the
#: grid's own sentence, naming the cell by the grid's labels (with the row's token, for X and Y; without)
CELL_MESSAGES = {
    "{name}: cell ({i}, {j}) is {v!r}, not a number.": (
        N_("{matrix}, row {i} ({token}), column {j} is {v!r}, not a number."),
        N_("{matrix}, row {i}, column {j} is {v!r}, not a number."),
    ),
    "{name}: cell ({i}, {j}) is beyond ±1.8e308, too large for a float64.": (
        N_("{matrix}, row {i} ({token}), column {j} is beyond ±1.8e308, too large for a float64."),
        N_("{matrix}, row {i}, column {j} is beyond ±1.8e308, too large for a float64."),
    ),
    "{name}: cell ({i}, {j}) is {what}; {hint}.": (
        N_("{matrix}, row {i} ({token}), column {j} is {what}; {hint}."),
        N_("{matrix}, row {i}, column {j} is {what}; {hint}."),
    ),
}
#: an empty cell (the core's "is empty, not a number.")
EMPTY_MESSAGES = (N_("{matrix}, row {i} ({token}), column {j} is empty, not a number."),
                  N_("{matrix}, row {i}, column {j} is empty, not a number."))
#: how the core's English message about a cell starts ("X: cell (1, 2) ")
_CORE_CELL = re.compile(r"^[^:]*: cell \(\d+, \d+\) ")


#: a message about a matrix names up to this many of its bad cells and counts the others ("X has 3 more cells to
#: fix."); one more than this is named rather than counted
NAMED_CELLS = 4
#: a refused text is quoted up to this many characters, then "…" (a pasted page of text stays in its cell, and the
#: message stays a few lines long: as one_cell's)
QUOTED_CHARS = 40


def quoted(v: object) -> object:
    """A cell's value as a message quotes it: a text cut at :data:`QUOTED_CHARS` characters, anything else as it is.

    >>> quoted("abc"), quoted("x" * 50) == "x" * 40 + "…", quoted(1e999)
    ('abc', True, inf)
    """
    return v[:QUOTED_CHARS] + "…" if isinstance(v, str) and len(v) > QUOTED_CHARS else v


def typed(v: object) -> object:
    """What was typed in a cell as a message quotes it: :func:`quoted`, and a text's quotes isolated with it
    (text.Typed).

    >>> typed("abc"), typed(1e999)
    ('abc', inf)
    """
    return text.Typed(q) if isinstance(q := quoted(v), str) else q


def describe_error(name: str, err: AttentionInputError, tokens: tuple[str, ...]) -> str:
    """The core's message in the learner's language, with the cell spelled out in the grid's own labels, and as much
    about every other bad cell the core found (``err.more``): up to :data:`NAMED_CELLS` named, the others counted."""
    total = 1 + err.n_more
    named = (err, *err.more)[:total if total <= NAMED_CELLS + 1 else NAMED_CELLS]
    said = i18n.sentences(*(describe_cell(name, e, tokens) for e in named))
    if total > len(named):
        said = i18n.sentences(said, _("{matrix} has {n} more cells to fix.").format(
            matrix=MATRIX_NAMES.get(name, name), n=total - len(named)))
    return said


def describe_cell(name: str, err: AttentionInputError, tokens: tuple[str, ...]) -> str:
    """The core's message about one cell (or about none) in the learner's language, the cell spelled out in the
    grid's own labels; a cell of another matrix (V overflowed from a number typed in X) as the core names it."""
    if err.cell is None or (err.matrix and err.matrix != MATRIX_NAMES.get(name, name)):
        return i18n.error_text(err)
    matrix, (i, j) = MATRIX_NAMES.get(name, name), err.cell
    template, params = getattr(err, "template", None), getattr(err, "params", None)
    if template in CELL_MESSAGES and isinstance(params, dict):
        with_token, without = EMPTY_MESSAGES if params.get("v") is _EMPTY else CELL_MESSAGES[template]
        values = {k: _(v) if k == "hint" and isinstance(v, str) else typed(v) if k == "v" else v
                  for k, v in params.items()}  # a marked hint; what was typed, quoted
        has_token = name in ("x", "y") and i < len(tokens)
        try:
            return _(with_token if has_token else without).format(
                **{**values, "matrix": matrix, "i": i, "j": j, "token": text.isolate(tokens[i]) if has_token else ""})
        except (KeyError, IndexError):  # a template whose values differ from these: said as the core says it
            pass
    message = i18n.error_text(err)
    if m := _CORE_CELL.match(message):  # the core's English words: the detail after its "X: cell (i, j) "
        return f"{matrix}, {cell_label(name, err.cell, tokens)} {message[m.end():]}"
    return message  # the core's message, translated: it names the matrix and the cell itself


def _parse(value: object, was: object, shown: str) -> object:
    """A grid cell as typed -> the value it stands for: a number where it reads as one (numbers.parse_number),
    the cell's own value where it is the text the grid showed for it (``shown``) unchanged, None where it is empty,
    otherwise the text as typed (the core names it in its message)."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    if isinstance(was, float) and value == shown:
        return was  # the shown text, typed back unchanged: the exact value (even when shown rounded)
    try:
        number = parse_number(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else Typed(number, value)  # refused: its draft keeps the text typed


class Typed(float):
    """A number the core refuses, as the learner typed it: ``float("1e999")`` is +inf, and a draft shows "1e999"
    again (:func:`_texts`), not "+∞", while the core names the cell and its value as for any +inf."""

    __slots__ = ("text",)

    def __new__(cls, value: float, text: str) -> Typed:
        out = super().__new__(cls, value)
        out.text = text
        return out


def apply_edits(base: np.ndarray, edited_rows: dict, precision: int,
                shown: np.ndarray | None = None) -> np.ndarray:  # object [r, c] -> object [r, c]
    """The grid's values: ``base`` with the editor's edits (row -> {column label -> value}) applied.

    ``precision``: the decimals the grid was drawn with (its texts are :func:`_texts`); ``shown``: those texts, if
    known (else worked out here).
    """
    out = np.array(base, dtype=object, copy=True)
    texts = None
    if edited_rows:  # what each cell showed: the whole grid's notation
        texts = shown if shown is not None else _texts(base, precision)
    for i, row in edited_rows.items():
        for j, value in row.items():
            if str(j).isdigit():
                was = out[int(i), int(j)]
                shown = texts[int(i), int(j)] if _is_number(was) else ""
                out[int(i), int(j)] = _parse(value, was, shown)
    return out


@dataclass(frozen=True)
class Committed:
    """What :func:`commit_pending` took in."""

    news: bool  #: a grid's edits changed something: the configuration, or a draft kept or let go
    #: ... and came from a grid the last run did not draw (drawn by a page before it: the browser's late commit of a
    #: cell still open when the learner clicked another page; attn_ui.shell.frame.follow_click)
    stray: bool = False


def commit_pending() -> Committed:
    """Commit every grid edit the browser sent, whichever page this run draws.

    attn_ui.shell.frame calls it first on every run. A learner who types into a cell and clicks another page at once
    sends the edit with the page switch: that run draws the other page, without the grid. The token grid commits
    here too; it names a refused label when it is drawn. Returns what it took in, for attn_ui.shell.frame.follow_click.
    """
    version, bases = st.session_state[state.EDITOR_VERSION], st.session_state[state.EDITOR_BASE]
    drawn, st.session_state[state.GRIDS_DRAWN] = st.session_state.get(state.GRIDS_DRAWN, set()), set()
    news = stray = False
    for name in MATRIX_NAMES:
        key = f"{name}_editor_{version}"
        # its edits under whichever page's id (st_internals.grid_edits): the sidebar's grid of the page just left
        # may send them after a click on another page
        sent, elsewhere = st_internals.grid_edits(key) if name in bases else (None, False)
        if sent is not None:  # no edits left may be news too: Streamlit drops an edit that puts a cell's first
            before = _stored(name)  # text back
            _commit(name, sent.get("edited_rows", {}))
            if st.session_state[state.EDITOR_VERSION] != version:  # a stale grid reset them all: nothing left
                return Committed(news=False)
            if any(now is not was for now, was in zip(_stored(name), before, strict=True)):
                news, stray = True, stray or elsewhere or key not in drawn
    for field in ("tokens", "y_tokens"):
        if (key := f"{field}_editor_{version}") in st.session_state:
            before = state.config()
            _commit_tokens(key, field)  # a refused label is named when the token grid is drawn again
            if state.config() is not before:
                news, stray = True, stray or key not in drawn
    return Committed(news, stray)


def _stored(name: str) -> tuple[Config, np.ndarray | None]:
    """What a grid's commit can change (each made anew when it does): the configuration and matrix ``name``'s
    draft."""
    return state.config(), st.session_state[state.DRAFTS].get(name)


def _commit(name: str, edits: dict) -> None:
    """Validate the edited grid and store it, or keep it as a draft with a message."""
    cfg = state.config()
    if cfg.matrix(name) is None:  # a grid of a matrix the configuration no longer has (score function, Y)
        return
    base, precision, held = st.session_state[state.EDITOR_BASE][name]
    if not _same(held, cfg.matrix(name)):  # the matrix changed since, not through this grid: its edits are stale
        state.reset_editor_state()  # every grid is drawn afresh from the configuration
        return
    drafts, errors = st.session_state[state.DRAFTS], st.session_state[state.ERRORS]
    cells, sent = _cells(edits), st.session_state.setdefault(state.GRID_CELLS, {}).get(name)
    # the browser's grid holds none of the edits it sent before, only new ones: it was drawn anew from its first
    # values (a page switch that crossed an edit; its next edit would put the old values back): the new edits go
    # onto the matrix held, and the grids are drawn again from it. (A cell typed back to its first text leaves the
    # grid's other edits, or no edit at all.)
    lost = bool(sent) and bool(cells) and not cells & sent and name not in drafts
    start = cfg.matrix(name) if lost else base
    values = apply_edits(start, edits, precision, _shown(start, precision)) if edits else base
    if name not in drafts and _same(values, cfg.matrix(name)):
        return  # nothing new since the last commit
    try:
        matrix = as_matrix(MATRIX_NAMES[name], _with_empty(values))
        check_computable(replace(cfg, **{name: matrix}))  # 1e308 in X is a float, but V would overflow
    except AttentionInputError as err:
        drafts[name] = values
        errors[name] = (err, row_tokens(cfg, name))  # said in words when shown: errors()
        return
    drafts.pop(name, None)
    errors.pop(name, None)
    st.session_state[state.EDITOR_BASE][name] = (base, precision, matrix)  # what the grid now holds
    st.session_state[state.GRID_CELLS][name] = frozenset(itertools.islice(cells, KEPT_CELLS))
    changed = np.argwhere(matrix != cfg.matrix(name))  # [k, 2]: Undo names the cell when the edit changed one
    what = set_to(name, tuple(map(int, changed[0])), matrix[tuple(changed[0])], row_tokens(cfg, name)) \
        if len(changed) == 1 else None
    state.set_config(replace(cfg, **{name: matrix}), reset_editors=False, what=what)
    if lost:
        state.redraw_grids()


#: the cells of a grid's last edits kept to tell a grid drawn anew (:func:`_commit`): a few stand for all (a browser's
#: grid keeps every edit but a cell typed back), and a pasted 141 × 141 block would keep 20,000 pairs a session
KEPT_CELLS = 64


def _cells(edits: dict) -> frozenset[tuple[int, int]]:
    """The (row, column) of each cell a grid's edits hold."""
    return frozenset((int(i), int(j)) for i, row in edits.items() for j in row if str(j).isdigit())


def _shown(base: np.ndarray, precision: int) -> np.ndarray:  # object or float [r, c] -> object [r, c]
    """The texts the grid of ``base`` showed (a float matrix's from the cache)."""
    return _grid_texts(base, precision)[0]


def _same(values: np.ndarray, matrix: np.ndarray) -> bool:
    try:
        return bool(np.array_equal(values.astype(np.float64), matrix))
    except (TypeError, ValueError):
        return False


def _with_empty(values: np.ndarray) -> np.ndarray:
    """Mark empty cells so the core reports them as empty rather than as None."""
    if None not in values.ravel().tolist():  # the common case: every cell holds something
        return values
    out = values.copy()
    for (i, j), v in np.ndenumerate(values):
        if v is None:
            out[i, j] = _EMPTY
    return out


class _Empty:
    def __repr__(self) -> str:
        return "empty"


_EMPTY = _Empty()


def _is_number(v: object) -> bool:
    return isinstance(v, float | int) and not isinstance(v, bool)


def _numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # object or float [r, c] -> ([k] flat index, [k])
    """The cells of a grid's values that are numbers (a draft also holds refused texts and empty cells)."""
    flat = values.ravel()
    if values.dtype != object:
        return np.arange(flat.size), flat.astype(float)
    where = np.array([i for i, v in enumerate(flat) if _is_number(v)], dtype=int)
    return where, np.array([float(flat[i]) for i in where], dtype=float)


def _texts(values: np.ndarray, precision: int) -> np.ndarray:  # object or float [r, c] -> object [r, c]
    """Each cell's text: the numbers in the one notation of the matrix (numbers.grid_texts: "1", "16"; "0.3333"),
    a refused cell's text as it was typed, "" for an empty cell."""
    where, numbers = _numbers(values)
    texts = np.array(["" if v is None else str(v) for v in values.ravel().tolist()] if values.dtype == object
                     else [""] * values.size, dtype=object)
    texts[where] = grid_texts(numbers, precision)
    if values.dtype == object:  # a draft: a refused number shows as it was typed
        for i, v in enumerate(values.ravel().tolist()):
            if isinstance(v, Typed):
                texts[i] = v.text
    return texts.reshape(values.shape)


def _grid_texts(values: np.ndarray, precision: int) -> tuple[np.ndarray, tuple[int, ...]]:  # [r, c] -> texts, [c]
    """What the grid shows (:func:`_texts`: the numbers at ``precision`` in the matrix's one notation, a refused
    cell's text as it was typed), and how wide each column must be for its texts (:func:`column_px`)."""
    if values.dtype != object:  # a matrix of the configuration: every cell a number
        flat, widths = _number_texts(values, precision).value
        return flat.to_numpy(zero_copy_only=False).reshape(values.shape), widths  # ≈ 0.3 ms at 64 × 64
    texts = _texts(values, precision)
    return texts, _widths(texts)


def _widths(texts: np.ndarray) -> tuple[int, ...]:  # object [r, c] -> [c] px
    return tuple(map(column_px, texts.T.tolist()))


@budget.cached("grid_texts", slots=budget.EXPLORER_SLOTS)
def _number_texts(values: np.ndarray, precision: int) -> budget.Counted:  # [r, c] -> (texts [r·c], px [c])
    """A float matrix's grid texts (row by row, as one Arrow array: 59 kB at 64 × 64, where 4,096 Python strings
    take 327 kB) and its columns' widths, worked out once per matrix and precision (an edit of X leaves W_Q's grid as
    it was; every run after an edit compares the grid's edits with the texts it showed)."""
    texts = _texts(values, precision)
    flat = pa.array(texts.ravel().tolist(), pa.large_string())
    return budget.Counted((flat, _widths(texts)), flat.nbytes + 8 * values.shape[1])


def _reads_as(text: str, v: float) -> bool:
    """Whether a grid's ``text`` reads back as exactly ``v`` ("<0.0001" and "+∞" do not)."""
    try:
        return parse_number(text) == v
    except ValueError:
        return False


def _shown_exactly(values: np.ndarray, precision: int) -> bool:  # values [r, c]
    """Whether every number of a grid's values reads back from its text as exactly itself (:func:`_reads_as`)."""
    if values.dtype != object:  # a matrix of the configuration: answered once per matrix and precision
        return _cached_read_back(values, precision)
    return _read_back(_numbers(values)[1], precision)


def _read_back(numbers: np.ndarray, precision: int) -> bool:  # [n] floats
    return all(map(_reads_as, grid_texts(numbers, precision), numbers.tolist()))


@budget.cached("grid_exact", slots=budget.EXPLORER_SLOTS)
def _cached_read_back(values: np.ndarray, precision: int) -> bool:  # values float [r, c]
    return _read_back(values.ravel(), precision)


#: up to this many cells, the "Every digit" popover under a grid lists them (beyond, the JSON file has them)
EVERY_DIGIT_CELLS = 400


def every_digit_key(name: str) -> str:
    """The key of matrix ``name``'s Every digit popover (a grid is drawn once a run: one popover per matrix)."""
    return f"{name}_every_digit"


def every_digit(name: str, values: np.ndarray, rows: list[str], precision: int) -> None:  # values [r, c]
    """Under a grid whose texts round some of its numbers: a popover with every digit of each (the shortest text
    that reads back as exactly that float64); nothing when the grid shows every number exactly. Its contents are
    made only while it is open (opening it reruns the page)."""
    if values.size > EVERY_DIGIT_CELLS:  # not checked cell by cell on every run: too many
        with st.popover(_("Every digit"), icon=":material/pin:", key=every_digit_key(name), on_change="rerun") as box:
            if box.open:
                st.caption(_("{matrix} has {cells} cells: the JSON file on {page} holds every digit of each.").format(
                    matrix=MATRIX_NAMES[name], cells=f"{values.size:,}", page=_(registry.SHARE.title)))
        return
    if _shown_exactly(values, precision):
        return
    where, numbers = _numbers(values)
    with st.popover(_("Every digit"), icon=":material/pin:", key=every_digit_key(name), on_change="rerun") as box:
        if not box.open:
            return
        texts = np.array(_texts(values, precision).ravel(), dtype=object)
        texts[where] = exact_texts(numbers)
        st.caption(_("{matrix} with every digit: the grid shows {n} decimals; a cell typed back as shown keeps its "
                     "exact value.").format(matrix=MATRIX_NAMES[name], n=precision))
        st.dataframe(pd.DataFrame(texts.reshape(values.shape), index=rows,
                                  columns=[str(j) for j in range(values.shape[1])]))


#: the row labels' widest column in a compact grid (the sidebar's edit panel, ≈ 240 px wide): with d_model 4 every
#: number column stays in view, "0: input1" whole (column_px's estimate, 88, is generous); a longer label is cut
#: there (the grid on Inputs & weights shows it whole)
COMPACT_LABELS_PX = 78


def column_px(texts: list[str]) -> int:
    """A grid column just wide enough for its longest text: ≈ 7.5 px a character at the grid's font, plus the
    cell's padding and the header's edit icon.

    >>> column_px(["1", "0"]), column_px(["0.4963", "−1.2e-05"]), column_px(["0: input1"])
    (40, 80, 88)
    """
    return max(40, round(7.5 * max(map(len, texts), default=1)) + 20)


def text_column(label: str | None = None, *, width: int | None = None, disabled: bool | None = None,
                alignment: str | None = None) -> dict:
    """``st.column_config.TextColumn(label, width=width, disabled=disabled, alignment=alignment)`` as Streamlit sends
    it (its fields that are None left out, in its order): the same column, cheaper to pass (Streamlit deep-copies
    each column's configuration, and a grid of 64 columns took 1 ms more with TextColumn's ten fields).

    >>> text_column("3", alignment="right")
    {'label': '3', 'alignment': 'right', 'type_config': {'type': 'text'}}
    """
    given = {"label": label, "width": width, "disabled": disabled, "alignment": alignment}
    return {**{k: v for k, v in given.items() if v is not None}, "type_config": {"type": "text"}}


def _grid(values: np.ndarray, rows: tuple[str, ...], precision: int, compact: bool) -> st_internals.PreparedGrid:
    """The grid element of ``values`` (object or float [r, c]): st.data_editor's, made once per matrix, precision and
    layout (attn_ui.infra.st_internals.show_grid: ≈ 20 ms a run for a 64 × 64 grid through st.data_editor); a
    draft's (it holds refused texts and empty cells) anew on every run it is shown."""
    if values.dtype != object:
        return _number_grid(values, rows, precision, compact)
    return _make_grid(values, rows, precision, compact)


@budget.cached("grid_element", slots=budget.EXPLORER_SLOTS)
def _number_grid(values: np.ndarray, rows: tuple[str, ...], precision: int, compact: bool) -> st_internals.PreparedGrid:
    return _make_grid(values, rows, precision, compact)


def _make_grid(values: np.ndarray, rows: tuple[str, ...], precision: int, compact: bool) -> st_internals.PreparedGrid:
    texts, widths = _grid_texts(values, precision)
    columns = [str(j) for j in range(values.shape[1])]
    # text cells: a number column's cell editor drops what it does not expect ("1e-3" arrived as -13)
    config = {c: text_column(c, alignment="right", width=width if compact else None)
              for c, width in zip(columns, widths, strict=True)}
    # the row labels are the tokens' (set on Inputs & weights): read-only here, not an edit silently dropped
    config["_index"] = text_column(width=min(column_px(list(rows)), COMPACT_LABELS_PX) if compact else None,
                                   disabled=True)
    # a cell emptied with the Delete key comes back as None, which the browser's grid keeps over the texts sent and
    # would draw as a grey "None" (Streamlit's placeholder for a missing value): it shows empty, as the learner left it
    return st_internals.refill_grid(_grid_shape(rows, len(columns)), texts.T.tolist(), list(rows), config,
                                    placeholder="")


@budget.cached("grid_shape", slots=budget.EXPLORER_SLOTS)
def _grid_shape(rows: tuple[str, ...], n_cols: int) -> st_internals.PreparedGrid:
    """The element of a grid of empty texts with these rows and ``n_cols`` columns: what every grid of that
    structure shares (its signature, its Arrow schema), st_internals.refill_grid fills with a matrix's texts."""
    frame = pd.DataFrame(np.full((len(rows), n_cols), "", dtype=object), index=list(rows),
                         columns=[str(j) for j in range(n_cols)])
    return st_internals.prepare_grid(frame, {})


def matrix_editor(name: str, *, height: int | str = "auto", compact: bool = False) -> None:
    """An editable grid for one matrix of the configuration ("x", "w_q", ..., or one it has: "y", "w_a", ...).

    ``compact``: each column only as wide as its texts (for the sidebar's edit panel), not Streamlit's default."""
    cfg = state.config()
    current = cfg.matrix(name)
    if current.size > MAX_EDITABLE_CELLS and name not in st.session_state[state.DRAFTS]:
        st.caption(_(
            "{matrix} has {cells} cells, too many for a grid here (up to {most}): change one cell at a time below, "
            "randomise it, or import a JSON file on {page}."
        ).format(matrix=MATRIX_NAMES[name], cells=f"{current.size:,}", most=f"{MAX_EDITABLE_CELLS:,}",
                 page=_(registry.SHARE.title)))
        one_cell(name)
        return
    key = f"{name}_editor_{st.session_state[state.EDITOR_VERSION]}"
    bases = st.session_state[state.EDITOR_BASE]
    if key not in st.session_state or name not in bases or bases[name][0].shape != current.shape:
        # a fresh grid starts from the current values (as does one whose matrix changed shape without a new
        # version: a configuration put in the state directly); it holds the current matrix
        bases[name] = (st.session_state[state.DRAFTS].get(name, current), controls.precision(), current)
        st.session_state.setdefault(state.GRID_CELLS, {}).pop(name, None)  # a new grid: no edits of it yet
    base, precision, _held = bases[name]
    rows = row_labels(name, row_tokens(cfg, name), base.shape[0])
    st_internals.show_grid(_grid(base, tuple(rows), precision, compact), key=key, height=height)
    st.session_state.setdefault(state.GRIDS_DRAWN, set()).add(key)
    every_digit(name, st.session_state[state.DRAFTS].get(name, cfg.matrix(name)), rows, precision)
    if name in st.session_state[state.ERRORS]:  # its edits were committed (or refused) by commit_pending
        st.error(
            _("{message} Until this is fixed, the results on this page and the other pages use the last valid "
              "values.").format(
                message=text.md_escape(errors()[name])),
            icon=":material/warning:",
        )


#: the most characters of the one-cell editor's Value box read (controls.text_box): a float64 written out exactly in
#: decimals has at most 767 significant digits (and its sign, point and exponent)
VALUE_MOST = 1_000


def one_cell(name: str) -> None:
    """One cell of a matrix too large for a grid: its row and column, its value exactly (as Python writes the
    float64), and a new value typed, which **Set** stores (a value that is not a number is refused, named by matrix
    and cell, and the matrix keeps its values)."""
    cfg, version = state.config(), st.session_state[state.EDITOR_VERSION]
    m = cfg.matrix(name)  # [r, c]
    row = st.container(horizontal=True, vertical_alignment="bottom")
    # what is typed, as typed ("2.5" is not row 2): refused in words under the row, the cell shown before kept
    i = controls.whole_box(_("Row"), state.CELL_ROW.format(name=name), 0, 0, m.shape[0] - 1,
                           lambda i: _("Still showing row {i}.").format(i=i), where=row, width=110,
                           help=_("From 0 to {last}.").format(last=m.shape[0] - 1))
    j = controls.whole_box(_("Column"), state.CELL_COL.format(name=name), 0, 0, m.shape[1] - 1,
                           lambda j: _("Still showing column {j}.").format(j=j), where=row, width=110,
                           help=_("From 0 to {last}.").format(last=m.shape[1] - 1))
    value_key = state.CELL_VALUE.format(name=name, i=i, j=j, version=version)
    # what is pasted stays in the box; over the limit: said, and Set reads the last value within it
    controls.text_box(_("Value"), value_key, repr(float(m[i, j])), VALUE_MOST,
                      lambda typed: _("Set still reads the last value within the limit: {text}.").format(
                          text=controls.quoted_text(typed)), where=row, width=220)
    row.button(_("Set"), key=f"{value_key}_set", on_click=set_cell, args=(name, i, j, value_key))
    if message := st.session_state.setdefault(state.CELL_REFUSED, {}).get(name):
        st.error(text.md_escape(message), icon=":material/warning:")


def set_cell(name: str, i: int, j: int, value_key: str) -> None:
    """on_click of :func:`one_cell`'s Set: the value typed into cell (i, j) of matrix ``name``, or a message."""
    refused = st.session_state.setdefault(state.CELL_REFUSED, {})
    cfg = state.config()
    typed = controls.text_in_use(value_key, repr(float(cfg.matrix(name)[i, j])), VALUE_MOST)[0]  # as the box says
    where = cell_label(name, (i, j), row_tokens(cfg, name))
    try:
        value = parse_number(typed)
    except ValueError:
        refused[name] = _("{matrix}, {cell}: {typed!r} is not a number; the matrix keeps its values.").format(
            matrix=MATRIX_NAMES[name], cell=where, typed=quoted(typed))
        return
    m = cfg.matrix(name).copy()
    m[i, j] = value
    if message := state.set_config(replace(cfg, **{name: m}), what=set_to(name, (i, j), value, row_tokens(cfg, name))):
        refused[name] = message
    else:
        refused.pop(name, None)


def token_editor(field: str = "tokens") -> None:
    """A one-column grid of token labels, one row per row of X (``field`` "tokens") or of Y ("y_tokens"); an empty
    label is refused with a message."""
    cfg = state.config()
    key = f"{field}_editor_{st.session_state[state.EDITOR_VERSION]}"
    st_internals.show_grid(_token_grid(getattr(cfg, field), _("token")), key=key, width="content")
    st.session_state.setdefault(state.GRIDS_DRAWN, set()).add(key)
    if message := _commit_tokens(key, field):
        st.error(_("{message} The token labels are not changed.").format(message=text.md_escape(message)),
                 icon=":material/warning:")


@budget.cached("token_grid", slots=budget.EXPLORER_SLOTS)
def _token_grid(tokens: tuple[str, ...], title: str) -> st_internals.PreparedGrid:
    """The token grid's element (st_internals.show_grid), made once per token list and language (``title``: the
    column's, translated)."""
    return st_internals.prepare_grid(pd.DataFrame({"token": list(tokens)}),
                                     {"token": st.column_config.TextColumn(title, required=True)})


def _commit_tokens(key: str, field: str = "tokens") -> str | None:
    """Store the token grid's edits; the message when they are refused (e.g. an empty label), else None."""
    cfg = state.config()
    if getattr(cfg, field) is None:  # Y's grid of a session that has since gone back to self-attention
        return None
    tokens = list(getattr(cfg, field))
    for i, row in st.session_state[key].get("edited_rows", {}).items():
        if "token" in row and int(i) < len(tokens):
            tokens[int(i)] = "" if row["token"] is None else str(row["token"]).strip()
    if tuple(tokens) == getattr(cfg, field):
        return None
    return state.set_config(replace(cfg, **{field: tuple(tokens)}))


#: where each matrix's grid is, and how the banner names it, in English (W_O's grid is on Multi-head only)
FIX_ON = {"w_o": (registry.MULTIHEAD, N_("Multi-head (section 5)")),
          **{name: (registry.SCORES, registry.SCORES.title) for name in ("w_a", "w_1", "w_2", "v_a")}}


def pending_errors_banner(here: registry.Page | None = None, *, in_panel: tuple[str, ...] = ()) -> None:
    """Tell the learner that a grid holds a rejected value and these numbers are the last valid ones, with a link
    to the page of that grid (none to ``here``, the page the banner is on); ``in_panel``: the matrices the sidebar's
    edit panel offers on this page (attn_ui.shell.edit_panel), where the value can be fixed without leaving it."""
    errs = errors()
    cells = sum(1 + getattr(err, "n_more", 0) for err, _tokens in st.session_state[state.ERRORS].values())
    if state.on_phone() and errs and set(errs) == {st.session_state.get(state.EDIT_MATRIX)} <= set(in_panel):
        return  # the panel's grid, right above (frame.panel_slot), shows its message: said twice, it took the screen
    if errs and set(errs) <= set(in_panel):
        where = (i18n.ngettext("Fix it above, under Edit the numbers.", "Fix them above, under Edit the numbers.",
                               cells)
                 if state.on_phone() else  # a phone's panel is in the page (frame.panel_slot)
                 i18n.ngettext("Fix it in the sidebar, under Edit the numbers.",
                               "Fix them in the sidebar, under Edit the numbers.", cells))
        st.warning(i18n.sentences(_("Showing the last valid values: {errors}").format(
            errors=i18n.sentences(*map(text.md_escape, errs.values()))), where), icon=":material/warning:")
    elif errs:
        places = list(dict.fromkeys(FIX_ON.get(name, (registry.INPUTS, registry.INPUTS.title)) for name in errs))
        where = _(places[0][1])
        for _page, label in places[1:]:  # "A and B", "A and B and C"
            where = _("{first} and {second}").format(first=where, second=_(label))
        st.warning(
            i18n.ngettext("Showing the last valid values: {errors} Fix it on {places}.",
                          "Showing the last valid values: {errors} Fix them on {places}.", cells).format(
                errors=i18n.sentences(*map(text.md_escape, errs.values())), places=where),
            icon=":material/warning:",
        )
        for page, label in places:
            if page != here:
                st.page_link(page.file, label=_("Go to {page}").format(page=_(label)), icon=":material/edit:")


def errors() -> dict[str, str]:
    """Rejected inputs waiting to be fixed, by matrix name: each message in the learner's language now (a switch of
    language after the edit says it again in the new one)."""
    return {name: describe_error(name, err, tokens) for name, (err, tokens) in st.session_state[state.ERRORS].items()}
