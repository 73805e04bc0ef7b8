"""The Masking page's charts and tables: the boolean mask, the masked weights beside their row sums, and the
naive and stable softmax side by side.

Chart factories: they take arrays and labels, return charts (or a DataFrame), and never call st. Their titles and
sentences are in the session's language (:mod:`attn_ui.app.i18n`).
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa

from attn_core import Config, additive_mask, analysis
from attn_ui.app import i18n
from attn_ui.app.i18n import _
from attn_ui.infra import budget
from attn_ui.views import step_by_step
from attn_ui.widgets import charts, heatmap, text
from attn_ui.widgets.numbers import Style, format_numbers

ROW_SUM_PX = 56  # width of the row-sum column beside the weights
ROW_SUM_WIDTH = ROW_SUM_PX + 12  # with the spacing
#: on a phone: narrower, so that a few tokens' weights, with their legend under the cells, and the sums fit its 358 px
#: column (3 tokens: 361 px with the desktop's 56)
PHONE_ROW_SUM_PX = 44


@budget.cached("mask_heatmap", slots=budget.EXPLORER_SLOTS)  # the mask stays as X and the weights are edited
def mask_heatmap(mask: np.ndarray, rows: list[str], cols: list[str], lang: str) -> charts.Chart:  # bool [n_q, n_k]
    """The boolean mask: 1 (may attend) in colour, 0 (masked) grey, like masked cells everywhere else. ``lang``: the
    language of its words (each has its own entry)."""
    return heatmap.heatmap(mask.astype(float), rows, cols, kind="weights", precision=0, masked=~mask,
                          x_title=_("key"), y_title=_("query"))


@budget.cached("additive_mask_heatmap", slots=budget.EXPLORER_SLOTS)  # as mask_heatmap: the mask stays as X changes
def additive_mask_heatmap(mask: np.ndarray, rows: list[str], cols: list[str], precision: int,
                          lang: str) -> charts.Chart:  # bool [n_q, n_k]
    """The additive mask M [n_q, n_k] (0 where allowed, −∞ where masked) as a matrix block draws it (its name, the
    axes query and key), in ``lang``."""
    return heatmap.heatmap(additive_mask(mask), rows, cols, precision=precision, x_title=_("key"), y_title=_("query"),
                           name=_("Additive mask M"))


def how_built(cfg: Config) -> str:
    """How the configuration's boolean mask [n_q, n_k] is built, in a sentence (Markdown; token labels escaped); with a
    sliding window (a modern option), the window's rule and that the mask used is both together.

    >>> from attn_core import load_preset
    >>> how_built(load_preset("seed002_causal"))
    'Causal: query i may attend to keys 0 … i, the lower triangle of ones (in NumPy: `np.tril(np.ones((4, 4)))`).'
    """
    kind = _kind_built(cfg)
    if cfg.window is None:
        return kind
    window = step_by_step.window_words(cfg, cfg.window)
    if cfg.mask_kind == "none":
        return i18n.sentences(window, _("No other mask is chosen: the window is the whole mask (set on Modern "
                                        "attention)."))
    return i18n.sentences(kind, window, _("The mask used is the two together (set on Modern attention): a key is "
                                          "allowed where both allow it, as drawn."))


def _kind_built(cfg: Config) -> str:
    n_q, n_k = cfg.n_q, cfg.n_seq
    if cfg.mask_kind == "causal":
        return _("Causal: query i may attend to keys 0 … i, the lower triangle of ones (in NumPy: "
                 "`np.tril(np.ones(({n_k}, {n_k})))`).").format(n_k=n_k)
    if cfg.mask_kind == "padding":
        pads = [text.md_escape(f"{j}: {t}") for j, (t, p) in enumerate(zip(cfg.tokens, cfg.is_pad, strict=True)) if p]
        if not pads:
            return _("Padding: column j is 0 in every row when token j of X is padding (none is marked yet, so every "
                     "cell is 1): every query sees the same keys (in NumPy: "
                     "`np.broadcast_to(~is_pad, ({n_q}, {n_k}))`).").format(n_q=n_q, n_k=n_k)
        return _("Padding: column j is 0 in every row when token j of X is padding (here {pads}): every query sees "
                 "the same keys (in NumPy: `np.broadcast_to(~is_pad, ({n_q}, {n_k}))`).").format(
                     pads=", ".join(pads), n_q=n_q, n_k=n_k)
    if cfg.mask_kind == "custom":
        allowed = int(np.count_nonzero(cfg.custom_mask))
        return _("Custom: the pairs ticked in the grid above ({allowed} of {total} allowed).").format(
            allowed=allowed, total=n_q * n_k)
    return _("No mask: every query may attend to every key, a {n_q} × {n_k} matrix of ones "
             "(`np.ones(({n_q}, {n_k}))`).").format(n_q=n_q, n_k=n_k)


def weights_with_row_sums(
    weights: np.ndarray, mask: np.ndarray | None, rows: list[str], cols: list[str], *, precision: int
) -> charts.Chart:  # weights [n_q, n_k], mask bool [n_q, n_k]
    """The weights with masked cells grey (not a pale blue that could pass for a small weight), and
    beside them each row's sum: 1, or 0 for a query with every key masked."""
    px = heatmap.cell_px(*weights.shape)
    heat = heatmap.heatmap(weights, rows, cols, kind="weights", precision=precision, px=px,
                           masked=None if mask is None else ~mask, x_title=_("key"), y_title=_("query"),
                           focus=False,  # a panel of an hconcat: no selections of its own
                           beside_px=ROW_SUM_WIDTH)  # on a phone its legend under the cells, the sums beside them
    sums = heatmap.long_frame(weights.sum(axis=1)[:, None], rows, [_("Σ row")], precision)  # [n_q, 1] -> n_q rows
    sum_px = PHONE_ROW_SUM_PX if charts.narrow() else ROW_SUM_PX
    return charts.Chart(row_sums_build, (heat.layout, tuple(rows), px, sum_px), (heat.data[0], sums), heat.domains)




def row_sums_build(layout: tuple, data: list, domains: list) -> alt.HConcatChart:
    """The chart of a :func:`weights_with_row_sums` layout (its builder)."""
    heat, rows, px, sum_px = layout
    base = alt.Chart(data[1]).encode(
        x=alt.X("col:O", title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("row:O", sort=list(rows), axis=None),
    ).properties(width=alt.Step(sum_px), height=alt.Step(px))
    cells = base.mark_rect(fill="#f7f7f7", stroke="#bbbbbb")
    text = base.mark_text(fontSize=max(8, min(12, px // 3))).encode(text="text:N")
    return alt.hconcat(heatmap.heatmap_chart(heat, [data[0]], domains), alt.layer(cells, text) if px >= 12 else cells,
                       spacing=ROW_SUM_WIDTH - ROW_SUM_PX)


OVERFLOW_MARK = "⚠"  # marks a cell that overflowed (+inf) or became NaN in softmax_table


def softmax_table(cmp: analysis.SoftmaxComparison, key_labels: list[str], *, precision: int) -> pa.Table:
    """One row per key: the score, the naive exp and weight, the shifted score, the stable exp and weight.

    Cells that overflowed (+inf) or became NaN are marked "⚠ +inf", "⚠ NaN" (a plain table of text: a pandas
    Styler's highlight cost more than the rest of the Masking page's run). The keys are the table's index
    (:func:`indexed`: shaded, first).

    >>> table = softmax_table(analysis.compare_softmax(np.array([1000.0, 0.0])), ["a", "b"], precision=2)
    >>> table["naive weight"].to_pylist()
    ['⚠ NaN', '0']
    """
    def column(values: np.ndarray, style: Style) -> list[str]:  # numpy's words where it overflowed, marked
        texts = format_numbers(values, precision + 3 if style == "sig" else precision, style)
        return [f"{OVERFLOW_MARK} NaN" if math.isnan(v) else f"{OVERFLOW_MARK} +inf" if v == math.inf else t
                for v, t in zip(values.tolist(), texts, strict=True)]  # math's tests: numpy's cost µs a float

    return indexed({
        _("score x"): column(cmp.scores, "sig"),
        _("naive exp(x)"): column(cmp.naive_exp, "sig"),
        _("naive weight"): column(cmp.naive_weights, "fixed"),
        "x − max": column(cmp.shifted, "sig"),
        "exp(x − max)": column(cmp.stable_exp, "sig"),
        _("stable weight"): column(cmp.stable_weights, "fixed"),
    }, _("key"), key_labels)


def indexed(columns: dict[str, list[str]], index_name: str, index: list[str]) -> pa.Table:
    """A table of texts with an index, the one ``pa.Table.from_pandas`` makes of a DataFrame of Python strings with a
    named index (the data columns, then the index's, and pandas' metadata naming it: st.dataframe shows it as the
    index, shaded and first), without the DataFrame: making it and Streamlit converting it cost ≈ 3 ms a run.

    >>> frame = pd.DataFrame({"a": ["1", "2"]}, index=pd.Index(["x", "y"], name="key", dtype=object), dtype=object)
    >>> indexed({"a": ["1", "2"]}, "key", ["x", "y"]).equals(pa.Table.from_pandas(frame), check_metadata=True)
    True
    """
    table = text.text_table({**columns, index_name: index})
    return table.replace_schema_metadata({b"pandas": _pandas_metadata(tuple(columns), index_name)})


@budget.cached("masking_index_metadata", slots=budget.EXPLORER_SLOTS, key=lambda *args: args)  # names: the app's words
def _pandas_metadata(names: tuple[str, ...], index_name: str) -> bytes:
    """pandas' metadata of :func:`indexed`'s table (its columns' and index's names and types; not its rows)."""
    one = pd.DataFrame({name: ["x"] for name in names}, index=pd.Index(["x"], name=index_name, dtype=object),
                       dtype=object)
    return pa.Table.from_pandas(one).schema.metadata[b"pandas"]
