"""Pieces every page uses: labels, the pending-error banner, a matrix with formula/shape/heatmap."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import numpy as np
import streamlit as st

from attn_core import AttentionInputError, Config, MultiHeadTrace

from . import charts, compute, state

#: page files, for st.page_link (the router registers the same files)
OVERVIEW = "pages/overview.py"
INPUTS = "pages/inputs.py"
STEPS = "pages/steps.py"
SCALING = "pages/scaling.py"
MASKING = "pages/masking.py"
MULTIHEAD = "pages/multihead.py"
SHARE = "pages/share.py"


def token_labels(cfg: Config) -> list[str]:
    """Unique labels for the tokens, "0: input1", ... (a word may occur twice)."""
    return [f"{i}: {t}" for i, t in enumerate(cfg.tokens)]


def dim_labels(n: int) -> list[str]:
    return [str(j) for j in range(n)]


def scale_text(cfg: Config) -> str:
    if cfg.scale == "sqrt_dk":
        return f"÷ √d_k = √{cfg.d_k} = {np.sqrt(cfg.d_k):.4g}"
    if cfg.scale == "none":
        return "none (÷ 1)"
    return f"÷ {float(cfg.scale):.4g}"


def pending_errors_banner() -> None:
    """Tell the learner that a grid holds a rejected value and these numbers are the last valid ones."""
    errs = state.errors()
    if errs:
        st.warning(
            "Showing the last valid values: " + " ".join(errs.values()) + " Fix it on Inputs & weights.",
            icon="⚠️",
        )
        st.page_link(INPUTS, label="Go to Inputs & weights", icon="✏️")


def current_trace() -> MultiHeadTrace:
    """The trace of the current configuration, or a message and st.stop() if it cannot be computed."""
    try:
        return compute.trace(state.config())
    except AttentionInputError as err:
        st.error(f"This configuration cannot be computed: {err} Change it on Inputs & weights.", icon="🛑")
        st.page_link(INPUTS, label="Go to Inputs & weights", icon="✏️")
        st.stop()
        raise  # unreachable: st.stop() raises


def precision() -> int:
    return int(st.session_state[state.PRECISION])


def show_chart(chart: alt.TopLevelMixin, **kwargs) -> object:
    """st.altair_chart without Streamlit's theme (the factories pick colour-blind-safe schemes)."""
    return st.altair_chart(chart, theme=None, **kwargs)


def matrix_block(
    title: str,
    latex: str,
    values: np.ndarray,
    rows: list[str],
    cols: list[str],
    *,
    kind: charts.Kind = "signed",
    y_title: str = "",
    x_title: str = "",
    note: str = "",
    domain: tuple[float, float] | None = None,
    key: str | None = None,
    select: str | None = None,
    on_select: str | Callable[[], None] = "rerun",
) -> object:
    """One intermediate: title, formula, shape, heatmap. Returns the chart's selection event if any.

    With ``select``, ``on_select`` is "rerun" or a callback run (before the page) when the selection changes.
    """
    st.markdown(f"**{title}** · shape {values.shape[0]} × {values.shape[1]}")
    if latex:
        st.latex(latex)
    if note:
        st.caption(note)
    chart = charts.heatmap(
        values, rows, cols, kind=kind, precision=precision(), domain=domain, x_title=x_title, y_title=y_title,
        select=select,
    )
    if select:
        return show_chart(chart, key=key, on_select=on_select, selection_mode=select)
    return show_chart(chart, key=key)
