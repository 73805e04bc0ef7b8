"""One head's attention drawn step by step: every intermediate with its formula, shape and heatmap.

Used by the Step by step page and reused by Multi-head and Scaling: every function takes a widget-key
``prefix`` ("steps", "heads", ...) so two pages never share a widget key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attn_core import AttentionTrace, Config

from . import controls, heatmap, state, text
from .matrix_display import matrix_block

CELL = "cell"  # name of the click selection on the scores and weights heatmaps


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


def _on_cell_click(chart_key: str) -> Callable[[], None]:
    def pick() -> None:
        i = query_from_selection(st.session_state[chart_key]["selection"])
        if i is not None:
            st.session_state[state.QUERY] = i

    return pick


def _clickable(prefix: str, name: str) -> str:
    """The key of a heatmap whose cells choose the query: new after each choice in the query selectbox."""
    return f"{prefix}_{name}_chart_{st.session_state[state.QUERY_PICKS]}"


def _sup(head: int | None) -> str:
    """LaTeX superscript naming the head, or nothing for a single head."""
    return "" if head is None else f"^{{({head})}}"


MASK_NOTES = {
    "causal": "Causal mask: each token may attend to itself and the tokens before it.",
    "padding": "Padding mask: no token may attend to a padding token.",
    "custom": "Custom mask: the cells you switched off on the Masking page.",
}


def show_steps(t: AttentionTrace, cfg: Config, *, prefix: str, head: int | None = None) -> None:
    """Every intermediate of one head, in order, each with its formula, shape and heatmap.

    ``head`` names the head in the formulas (None for single-head attention). Clicking a cell of the
    scores or weights heatmap chooses that row's query for :func:`show_drill_down`.
    """
    p = controls.precision()
    tokens = text.token_labels(cfg)
    h = _sup(head)
    d_k, d_v = t.q.shape[1], t.v.shape[1]
    pair = {"rows": tokens, "cols": tokens, "y_title": "query", "x_title": "key"}

    st.subheader("1 · Queries, keys, values")
    if head is not None:
        st.caption(f"Head {head} uses columns {head * d_k}…{(head + 1) * d_k - 1} of W_Q and W_K, and columns "
                   f"{head * d_v}…{(head + 1) * d_v - 1} of W_V.")
    domain = heatmap.shared_domain(t.q, t.k, t.v)
    qkv = (("Q", t.q, "d_k"), ("K", t.k, "d_k"), ("V", t.v, "d_v"))
    for col, (name, m, dim) in zip(controls.side_by_side([heatmap.heatmap_width(m, tokens, p) for _, m, _ in qkv]), qkv,
                                   strict=True):
        with col:
            matrix_block(
                f"{name}{'' if head is None else f' (head {head})'}", rf"{name}{h} = X\,W_{name}{h}", m, tokens,
                text.dim_labels(m.shape[1]), y_title="token", x_title=f"dimension ({dim})", domain=domain,
                key=f"{prefix}_{name.lower()}_chart",
            )

    st.subheader("2 · Scores")
    click = "Click a cell to explain its query row in the [drill-down](#drill-down) below."
    matrix_block(
        "Scores QKᵀ", rf"S{h} = Q{h} K{h}{{}}^\top, \qquad s_{{ij}} = q_i \cdot k_j", t.scores, **pair,
        note=f"Row i holds the dot products of query i with every key. {click}",
        key=(k := _clickable(prefix, "scores")), select=CELL, on_select=_on_cell_click(k),
    )

    st.subheader("3 · Scaled scores")
    matrix_block(
        "Scaled scores", rf"\tilde S{h} = \frac{{S{h}}}{{s}}, \qquad s = {text.divisor_latex(cfg, t.divisor, p)}",
        t.scaled, **pair, note="Every score is divided by the same number s, so the softmax is less peaked.",
        key=f"{prefix}_scaled_chart",
    )

    step = 4
    if t.mask is not None:
        st.subheader(f"{step} · Masked scores")
        matrix_block(
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
    left, right = controls.side_by_side([heatmap.heatmap_width(m, tokens, p) for m in (t.weights, sums)])
    with left:
        matrix_block(
            "Weights", "", t.weights, **pair, kind="weights",
            key=(k := _clickable(prefix, "weights")), select=CELL, on_select=_on_cell_click(k),
            masked=None if t.mask is None else ~t.mask,
        )
    with right:
        matrix_block("Row sums Σⱼ aᵢⱼ", "", sums, tokens, ["Σ_j"], kind="weights", y_title="query",
                            key=f"{prefix}_rowsums_chart")
    if t.fully_masked_rows:
        names = ", ".join(text.md_escape(tokens[r]) for r in t.fully_masked_rows)
        st.info(f"Every key is masked for query {names}: there is nothing to attend to, so that row's weights "
                "are all 0 (not NaN) and its row sum is 0, and its output row is 0.", icon=":material/info:")
    step += 1

    st.subheader(f"{step} · Output")
    matrix_block(
        "Output", rf"O{h} = A{h} V{h}, \qquad o_i = \sum_j a_{{ij}}\, v_j", t.output, tokens,
        text.dim_labels(d_v), y_title="token", x_title="dimension (d_v)", key=f"{prefix}_output_chart",
        note="Each output row is the weighted average of the value rows, with that query's weights.",
    )


