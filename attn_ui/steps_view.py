"""One head's attention drawn step by step, and the drill-down into one query.

Used by the Step by step page and reused by Multi-head: every function takes a widget-key
``prefix`` ("steps", "heads", ...) so two pages never share a widget key. The text builders at the
top are pure (no st) and write the arithmetic out with the numbers of an ``AttentionTrace``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from attn_core import AttentionTrace, Config

from . import charts, layout, state

CELL = "cell"  # name of the click selection on the scores and weights heatmaps
MAX_TERMS = 6  # products written out in q_i·k_j before "…"
MAX_ITEMS = 6  # entries of a vector written out before "…"
SCROLL_ROWS = 12  # drill-down tables with more keys than this scroll in a box
KEYS_PER_PAGE = 32  # drill-down tables with more keys than this show them a page at a time
MAX_PRECISION = 8


# ---- text builders (pure) ------------------------------------------------------------------------


def fmt(v: float, precision: int) -> str:
    """A number with at most ``precision`` decimals, trailing zeros dropped: 2, 0.5, 1.8639, −∞.

    Examples
    --------
    >>> fmt(2.0, 4), fmt(0.5, 4), fmt(1.86387, 4), fmt(-0.00001, 4), fmt(float("-inf"), 4)
    ('2', '0.5', '1.8639', '0', '−∞')
    >>> fmt(1e10, 2)
    '1.00e+10'
    """
    text = charts.format_number(v, precision)
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _factor(v: float, precision: int) -> str:
    text = fmt(v, precision)
    return f"({text})" if text.startswith("-") else text


def dot_product_text(a: np.ndarray, b: np.ndarray, total: float, precision: int, max_terms: int = MAX_TERMS) -> str:
    """``a·b`` as a sum of products with its total: "1·0 + 0·1 + 2·1 = 2".  # [d], [d]

    ``total`` is the dot product as attn_core computed it. Beyond ``max_terms`` products the rest are
    summarised as "… (n more)".

    Examples
    --------
    >>> dot_product_text(np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0]), 2.0, 4)
    '1·0 + 0·1 + 2·1 = 2'
    >>> dot_product_text(np.array([1.0, -1.0, 1.0]), np.array([2.0, 3.0, 4.0]), 3.0, 4, max_terms=2)
    '1·2 + (-1)·3 + … (1 more) = 3'
    """
    terms = [f"{_factor(x, precision)}·{_factor(y, precision)}" for x, y in zip(a[:max_terms], b[:max_terms],
                                                                              strict=True)]
    if len(a) > max_terms:
        terms.append(f"… ({len(a) - max_terms} more)")
    return " + ".join(terms) + f" = {fmt(total, precision)}"


def vector_text(v: np.ndarray, precision: int, max_items: int = MAX_ITEMS) -> str:
    """A row vector as "[1.8639, 6.3194, 1.7042]", cut after ``max_items`` entries.  # [d]

    Examples
    --------
    >>> vector_text(np.array([2.0, 7.0, 1.5]), 4)
    '[2, 7, 1.5]'
    >>> vector_text(np.arange(8.0), 2, max_items=3)
    '[0, 1, 2, … (5 more)]'
    """
    items = [fmt(x, precision) for x in v[:max_items]]
    if len(v) > max_items:
        items.append(f"… ({len(v) - max_items} more)")
    return "[" + ", ".join(items) + "]"


def softmax_parts(row: np.ndarray) -> tuple[float | None, np.ndarray, np.ndarray, float]:  # [n_k] -> ..., [n_k] x2
    """The pieces of a stable softmax of one row: max, row − max, exp(row − max) and their sum.

    A row with every entry −∞ (every key masked) has no max: (None, all −∞, all 0, 0.0).

    Examples
    --------
    >>> m, shifted, e, total = softmax_parts(np.array([2.0, 4.0, -np.inf]))
    >>> m, shifted.tolist(), np.round(e, 4).tolist(), round(total, 4)
    (4.0, [-2.0, 0.0, -inf], [0.1353, 1.0, 0.0], 1.1353)
    """
    if np.isneginf(row).all():
        return None, np.full(row.shape, -np.inf), np.zeros(row.shape), 0.0
    m = float(row.max())
    shifted = row - m  # [n_k], -inf where masked
    e = np.exp(shifted)  # [n_k], 0 where masked
    return m, shifted, e, float(e.sum())


def query_from_selection(selection: dict[str, Any], name: str = CELL) -> int | None:
    """The query (row) of a clicked heatmap cell in a Streamlit selection state, or None.

    Examples
    --------
    >>> query_from_selection({"cell": [{"row_i": 2, "col_i": 0}]})
    2
    >>> query_from_selection({"cell": []}) is None
    True
    """
    points = selection.get(name) or []
    return int(points[0]["row_i"]) if points and "row_i" in points[0] else None


def md_escape(text: str) -> str:
    """Make a token label safe inside a markdown table cell.

    Examples
    --------
    >>> md_escape("a|b*c")
    'a\\\\|b\\\\*c'
    """
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!|<>$~" else ch for ch in text)


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table (cells are used as given)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def is_identity(m: np.ndarray) -> bool:
    """Whether ``m`` is a square identity matrix (then W_O changes nothing)."""
    return m.shape[0] == m.shape[1] and bool(np.array_equal(m, np.eye(m.shape[0])))


# ---- widgets bound to the shared state -----------------------------------------------------------


def _copy_to(widget_key: str, state_key: str) -> Callable[[], None]:
    def copy() -> None:
        st.session_state[state_key] = st.session_state[widget_key]

    return copy


def _bound(widget: Callable[..., Any], label: str, state_key: str, widget_key: str, value: Any, **kwargs) -> Any:
    """A widget that shows and sets a non-widget state key (which survives page switches)."""
    st.session_state[state_key] = value
    state.sync_widget(widget_key, value)
    return widget(label, key=widget_key, on_change=_copy_to(widget_key, state_key), **kwargs)


def precision_control(prefix: str, where: Any = st) -> int:
    """Slider for the number of decimals every number on the page is shown with (state PRECISION)."""
    value = min(max(int(st.session_state[state.PRECISION]), 0), MAX_PRECISION)
    return _bound(where.slider, "Decimals shown", state.PRECISION, f"{prefix}_precision", value,
                  min_value=0, max_value=MAX_PRECISION, help="Applies to every number on this page.")


def head_selector(n_heads: int, prefix: str) -> int:
    """The head to show (state HEAD); no widget when there is only one."""
    if n_heads == 1:
        return 0
    value = min(int(st.session_state[state.HEAD]), n_heads - 1)
    return _bound(st.selectbox, "Head", state.HEAD, f"{prefix}_head", value, options=list(range(n_heads)),
                  format_func=lambda h: f"head {h}", help="Each head attends with its own slice of W_Q, W_K, W_V.",
                  width=320)


def query_selector(labels: list[str], prefix: str) -> int:
    """The query token to drill into (state QUERY); clicking a scores or weights cell also sets it."""
    value = min(int(st.session_state[state.QUERY]), len(labels) - 1)
    return _bound(st.selectbox, "Query token (or click a cell of the scores or weights)", state.QUERY,
                  f"{prefix}_query", value, options=list(range(len(labels))), format_func=lambda i: labels[i],
                  width=320)


def _on_cell_click(chart_key: str) -> Callable[[], None]:
    def pick() -> None:
        i = query_from_selection(st.session_state[chart_key]["selection"])
        if i is not None:
            st.session_state[state.QUERY] = i

    return pick


# ---- the steps -------------------------------------------------------------------------------------


def _sup(head: int | None) -> str:
    """LaTeX superscript naming the head, or nothing for a single head."""
    return "" if head is None else f"^{{({head})}}"


def divisor_latex(cfg: Config, divisor: float, precision: int) -> str:
    """How the scores were divided: √d_k with its value, 1 (no scaling), or the chosen number."""
    if cfg.scale == "sqrt_dk":
        return rf"\sqrt{{d_k}} = \sqrt{{{cfg.d_k}}} = {fmt(divisor, precision)}"
    if cfg.scale == "none":
        return r"1 \text{ (no scaling)}"
    return rf"{fmt(divisor, precision)} \text{{ (a divisor you chose)}}"


MASK_NOTES = {
    "causal": "Causal mask: each token may attend to itself and the tokens before it.",
    "padding": "Padding mask: no token may attend to a padding token.",
    "custom": "Custom mask: the cells you switched off on the Masking page.",
}


def side_by_side(widths: list[int], least: int = 200) -> list[Any]:
    """Containers in a row, ``widths`` pixels wide (at least ``least``); they wrap when the row is full."""
    row = st.container(horizontal=True, gap="medium")
    return [row.container(width=max(w, least)) for w in widths]


def show_steps(t: AttentionTrace, cfg: Config, *, prefix: str, head: int | None = None) -> None:
    """Every intermediate of one head, in order, each with its formula, shape and heatmap.

    ``head`` names the head in the formulas (None for single-head attention). Clicking a cell of the
    scores or weights heatmap chooses that row's query for :func:`show_drill_down`.
    """
    p = layout.precision()
    tokens = layout.token_labels(cfg)
    h = _sup(head)
    d_k, d_v = t.q.shape[1], t.v.shape[1]
    pair = {"rows": tokens, "cols": tokens, "y_title": "query", "x_title": "key"}

    st.subheader("1 · Queries, keys, values")
    if head is not None:
        st.caption(f"Head {head} uses columns {head * d_k}…{(head + 1) * d_k - 1} of W_Q and W_K, and columns "
                   f"{head * d_v}…{(head + 1) * d_v - 1} of W_V.")
    domain = charts.shared_domain(t.q, t.k, t.v)
    qkv = (("Q", t.q, "d_k"), ("K", t.k, "d_k"), ("V", t.v, "d_v"))
    for col, (name, m, dim) in zip(side_by_side([charts.heatmap_width(m, tokens, p) for _, m, _ in qkv]), qkv,
                                   strict=True):
        with col:
            layout.matrix_block(
                f"{name}{'' if head is None else f' (head {head})'}", rf"{name}{h} = X\,W_{name}{h}", m, tokens,
                layout.dim_labels(m.shape[1]), y_title="token", x_title=f"dimension ({dim})", domain=domain,
                key=f"{prefix}_{name.lower()}_chart",
            )

    st.subheader("2 · Scores")
    click = "Click a cell to explain its query row in the [drill-down](#drill-down) below."
    layout.matrix_block(
        "Scores QKᵀ", rf"S{h} = Q{h} K{h}{{}}^\top, \qquad s_{{ij}} = q_i \cdot k_j", t.scores, **pair,
        note=f"Row i holds the dot products of query i with every key. {click}",
        key=f"{prefix}_scores_chart", select=CELL, on_select=_on_cell_click(f"{prefix}_scores_chart"),
    )

    st.subheader("3 · Scaled scores")
    layout.matrix_block(
        "Scaled scores", rf"\tilde S{h} = \frac{{S{h}}}{{s}}, \qquad s = {divisor_latex(cfg, t.divisor, p)}",
        t.scaled, **pair, note="Every score is divided by the same number s, so the softmax is less peaked.",
        key=f"{prefix}_scaled_chart",
    )

    step = 4
    if t.mask is not None:
        st.subheader(f"{step} · Masked scores")
        layout.matrix_block(
            "Masked scores",
            r"\tilde S_{ij} \leftarrow -\infty \quad \text{where query } i \text{ may not attend to key } j",
            t.masked, **pair,
            note=f"{MASK_NOTES.get(cfg.mask_kind, 'Masked')} Grey cells (−∞) get weight exp(−∞) = 0.",
            key=f"{prefix}_masked_chart",
        )
        step += 1

    st.subheader(f"{step} · Attention weights (softmax of each row)")
    st.latex(rf"A{h} = \mathrm{{softmax}}(\tilde S{h}), \qquad a_{{ij}} = "
             r"\frac{\exp(\tilde s_{ij} - m_i)}{\sum_{k} \exp(\tilde s_{ik} - m_i)}, \quad m_i = \max_k \tilde s_{ik}")
    st.caption(f"Each weight is between 0 and 1 and each row sums to 1 (see the row sums). "
               f"{'Grey cells are masked keys: weight 0. ' if t.mask is not None else ''}{click}")
    sums = t.weights.sum(axis=1)[:, None]  # [n_q, 1]
    left, right = side_by_side([charts.heatmap_width(t.weights, tokens, p), charts.heatmap_width(sums, tokens, p)])
    with left:
        layout.matrix_block(
            "Weights", "", t.weights, **pair, kind="weights",
            key=f"{prefix}_weights_chart", select=CELL, on_select=_on_cell_click(f"{prefix}_weights_chart"),
            masked=None if t.mask is None else ~t.mask,
        )
    with right:
        layout.matrix_block("Row sums Σⱼ aᵢⱼ", "", sums, tokens, ["Σ_j"], kind="weights", y_title="query",
                            key=f"{prefix}_rowsums_chart")
    if t.fully_masked_rows:
        names = ", ".join(tokens[r] for r in t.fully_masked_rows)
        st.info(f"Every key is masked for query {names}: there is nothing to attend to, so that row's weights "
                "are all 0 (not NaN) and its row sum is 0, and its output row is 0.", icon=":material/info:")
    step += 1

    st.subheader(f"{step} · Output")
    layout.matrix_block(
        "Output", rf"O{h} = A{h} V{h}, \qquad o_i = \sum_j a_{{ij}}\, v_j", t.output, tokens,
        layout.dim_labels(d_v), y_title="token", x_title="dimension (d_v)", key=f"{prefix}_output_chart",
        note="Each output row is the weighted average of the value rows, with that query's weights.",
    )


# ---- the drill-down into one query -----------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]]) -> None:
    """A markdown table; long ones scroll inside a box."""
    text = md_table(header, rows)
    if len(rows) > SCROLL_ROWS:
        st.container(height=460).markdown(text)
    else:
        st.markdown(text)


def drill_down_section(t: AttentionTrace, cfg: Config, *, prefix: str) -> int:
    """Heading, query picker (and, for many keys, a page of keys) and the drill-down; returns the query index."""
    st.subheader("Drill-down: one query, number by number", anchor="drill-down")
    labels = layout.token_labels(cfg)
    i = query_selector(labels, prefix)
    show_drill_down(t, cfg, i, keys_page(t.k.shape[0], labels, prefix))
    return i


def keys_page(n_k: int, labels: list[str], prefix: str) -> range:
    """All keys when they are few; else a selectbox of pages of KEYS_PER_PAGE keys (the tables stay light)."""
    pages = layout.pages_of(n_k, KEYS_PER_PAGE)
    if len(pages) == 1:
        return pages[0]
    k = st.selectbox(f"Keys shown ({n_k} in all, {KEYS_PER_PAGE} at a time)", range(len(pages)),
                     format_func=lambda p: f"keys {pages[p].start}–{pages[p].stop - 1}: {labels[pages[p].start]} … "
                                           f"{labels[pages[p].stop - 1]}", key=f"{prefix}_keys_page", width=420)
    return pages[k]


def show_drill_down(t: AttentionTrace, cfg: Config, i: int, keys: range | None = None) -> None:
    """Query ``i``'s row written out: q_i·k_j as sums of products, its softmax, its weighted values.

    The tables list the keys in ``keys`` (default: all); their Σ rows always sum over every key.
    """
    p = layout.precision()
    labels = [md_escape(label) for label in layout.token_labels(cfg)]
    n_k = t.k.shape[0]
    keys = range(n_k) if keys is None else keys
    sigma = "**Σ**" if len(keys) == n_k else f"**Σ (all {n_k} keys)**"
    masked = np.isneginf(t.masked[i])  # [n_k]

    which = "every key" if len(keys) == n_k else f"keys {keys.start}–{keys.stop - 1} (of {n_k})"
    st.markdown(f"##### a · Scores of query {labels[i]} with {which}")
    st.latex(rf"s_{{{i}j}} = q_{{{i}}} \cdot k_j = \sum_d q_{{{i},d}}\, k_{{j,d}}, \qquad "
             rf"\tilde s_{{{i}j}} = s_{{{i}j}} \,/\, s, \quad s = {divisor_latex(cfg, t.divisor, p)}")
    st.markdown(f"$q_{{{i}}}$ = {vector_text(t.q[i], p)}")
    rows = [[labels[j], vector_text(t.k[j], p), dot_product_text(t.q[i], t.k[j], t.scores[i, j], p),
             fmt(t.scaled[i, j], p) + (" → −∞ (masked)" if masked[j] else "")] for j in keys]
    _table([r"key $j$", r"$k_j$", rf"$q_{{{i}}} \cdot k_j$ (sum of products)", r"scaled $\tilde s$"], rows)

    st.markdown(f"##### b · Softmax of row {i}")
    m, shifted, e, total = softmax_parts(t.masked[i])
    if m is None:
        st.info("Every key is masked for this query: exp(−∞) = 0 for every key, so the weights are all 0 "
                "(not NaN) and the output row is 0.", icon=":material/info:")
    else:
        st.latex(rf"m = \max_j \tilde s_{{{i}j}} = {fmt(m, p)}, \qquad "
                 rf"\sum_j e^{{\tilde s_{{{i}j}} - m}} = {fmt(total, p)}, \qquad "
                 rf"a_{{{i}j}} = e^{{\tilde s_{{{i}j}} - m}} \big/ {fmt(total, p)}")
    rows = [[labels[j], fmt(t.masked[i, j], p), fmt(shifted[j], p), fmt(e[j], p), fmt(t.weights[i, j], p)]
            for j in keys]
    rows.append([sigma, "", "", f"**{fmt(total, p)}**", f"**{fmt(t.weights[i].sum(), p)}**"])
    _table([r"key $j$", r"$\tilde s_{ij}$", r"$\tilde s_{ij} - m$", r"$e^{\tilde s_{ij} - m}$",
            r"weight $a_{ij}$"], rows)
    st.caption("Subtracting the row's largest score m first keeps every exp at most 1 (nothing overflows) and "
               "does not change the weights.")

    st.markdown(f"##### c · Weighted values of query {labels[i]} (seed 004's alignment vectors)")
    st.latex(rf"o_{{{i}}} = \sum_j a_{{{i}j}}\, v_j")
    c = t.contributions(i)  # [n_k, d_v]
    total_c = c.sum(axis=0)  # [d_v]
    rows = [[labels[j], fmt(t.weights[i, j], p), vector_text(t.v[j], p), vector_text(c[j], p)] for j in keys]
    rows.append([sigma, f"**{fmt(t.weights[i].sum(), p)}**", "", f"**{vector_text(total_c, p)}**"])
    _table([r"key $j$", r"weight $a_{ij}$", r"value $v_j$", r"$a_{ij}\, v_j$"], rows)
    gap = float(np.abs(total_c - t.output[i]).max())
    same = np.allclose(total_c, t.output[i], rtol=1e-12, atol=1e-12)
    check = st.success if same else st.error
    check(f"Sum of the weighted values {vector_text(total_c, p)} = output row {i} of O = AV "
          f"{vector_text(t.output[i], p)} {'✓' if same else '✗'} (largest difference {gap:.1e}).")
