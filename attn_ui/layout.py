"""Pieces every page uses: labels, the pending-error banner, a matrix with formula/shape/heatmap."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import numpy as np
import streamlit as st

from attn_core import AttentionInputError, Config, MultiHeadTrace

from . import charts, compute, state, vega

#: page files, for st.page_link (the router registers the same files)
OVERVIEW = "pages/overview.py"
INPUTS = "pages/inputs.py"
STEPS = "pages/steps.py"
SCALING = "pages/scaling.py"
MASKING = "pages/masking.py"
MULTIHEAD = "pages/multihead.py"
SHARE = "pages/share.py"


#: the stages of attention and the page that shows each
PIPELINE = [
    ("X", INPUTS), ("Q, K, V", STEPS), ("QKᵀ", STEPS), ("÷ s", SCALING), ("mask", MASKING),
    ("softmax", STEPS), ("· V", STEPS), ("output", STEPS), ("heads · W_O", MULTIHEAD),
]


def pipeline_dot(cfg: Config) -> str:
    """Graphviz source of the pipeline X → Q, K, V → QKᵀ → ÷ s → mask → softmax → ·V → output → heads.

    No links inside the diagram: a plain link would reload the app and lose the session; the pages link
    to the stages with st.page_link instead.
    """
    shapes = {
        "X": f"{cfg.n_seq}×{cfg.d_model}", "Q, K, V": f"{cfg.n_seq}×{cfg.d_k}, ×{cfg.d_v}",
        "QKᵀ": f"{cfg.n_seq}×{cfg.n_seq}", "÷ s": scale_text(cfg).split("=")[-1].strip(" ÷"),
        "mask": cfg.mask_kind, "softmax": "rows sum to 1", "· V": f"{cfg.n_seq}×{cfg.d_v}",
        "output": f"{cfg.n_seq}×{cfg.d_v} per head",
        "heads · W_O": f"{cfg.n_heads} head(s) → {cfg.n_seq}×{cfg.d_out}",
    }
    nodes = "\n".join(
        f'  n{i} [label="{label}\\n{shapes[label]}"];' for i, (label, _) in enumerate(PIPELINE)
    )
    edges = " -> ".join(f"n{i}" for i in range(len(PIPELINE)))
    return (
        "digraph { rankdir=LR; bgcolor=transparent;\n"
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#4c78a8", fontname="sans-serif"];\n'
        f"{nodes}\n  {edges};\n}}"
    )


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


#: where each matrix's grid is: page file and how the banner names it (W_O's grid is on Multi-head only)
FIX_ON = {"w_o": (MULTIHEAD, "Multi-head (section 5)")}


def pending_errors_banner() -> None:
    """Tell the learner that a grid holds a rejected value and these numbers are the last valid ones."""
    errs = state.errors()
    if errs:
        places = list(dict.fromkeys(FIX_ON.get(name, (INPUTS, "Inputs & weights")) for name in errs))
        st.warning(
            "Showing the last valid values: " + " ".join(errs.values()) + " Fix it on "
            + " and ".join(label for _, label in places) + ".",
            icon=":material/warning:",
        )
        for page, label in places:
            st.page_link(page, label=f"Go to {label}", icon=":material/edit:")


def current_trace() -> MultiHeadTrace:
    """The trace of the current configuration, or a message and st.stop() if it cannot be computed."""
    try:
        return compute.trace(state.config())
    except AttentionInputError as err:
        st.error(f"This configuration cannot be computed: {err} Change it on Inputs & weights.",
                 icon=":material/error:")
        st.page_link(INPUTS, label="Go to Inputs & weights", icon=":material/edit:")
        st.stop()
        raise  # unreachable: st.stop() raises


def precision() -> int:
    return int(st.session_state[state.PRECISION])


def pages_of(n: int, per_page: int) -> list[range]:
    """Positions 0 … n − 1 in pages of ``per_page`` (rows or keys shown a page at a time).

    >>> pages_of(70, 32)
    [range(0, 32), range(32, 64), range(64, 70)]
    """
    return [range(a, min(a + per_page, n)) for a in range(0, n, max(per_page, 1))]


def view_picker(label: str, options: list[str], *, key: str) -> str:
    """A row of buttons choosing the one part of a page drawn below it; the choice is kept across page visits.

    Use it instead of ``st.tabs``. The page builds only the chosen part, as with lazy tabs, but Streamlit's tab
    bar also costs the browser about 40–80 ms on every rerun of the page; a segmented control costs a few
    (bench/RESULTS.md, round 4).
    """
    state.restore(key, options[0], options)
    return st.segmented_control(label, options, key=key, required=True, on_change=state.keep, args=(key,),
                                label_visibility="collapsed")


def show_chart(chart: alt.TopLevelMixin | dict, **kwargs) -> object:
    """st.altair_chart (or st.vega_lite_chart for a spec dict, e.g. charts.heatmap_spec) without Streamlit's
    theme (the factories pick colour-blind-safe schemes).

    Width "content" by default: Streamlit's default "stretch" overrides the heatmaps' alt.Step cell size.
    """
    kwargs.setdefault("width", "content")
    if isinstance(chart, dict):
        return st.vega_lite_chart(spec=chart, theme=None, **kwargs)
    return st.altair_chart(chart, theme=None, **kwargs)


def cached_chart(factory: Callable[..., alt.TopLevelMixin], *args, **kwargs) -> dict:
    """The Vega-Lite spec of ``factory(*args, **kwargs)``, built once per distinct arguments (matrices included).

    For a chart factory's result that often stays the same across runs (e.g. W_Q's chart when X changes):
    Altair builds and validates it only when an argument changes. Show it with :func:`show_chart`.
    """
    return _chart_spec(f"{factory.__module__}.{factory.__qualname__}", factory, *args, **kwargs)


@st.cache_data(max_entries=256, show_spinner=False)
def _chart_spec(name: str, _factory: Callable[..., alt.TopLevelMixin], *args, **kwargs) -> dict:
    return vega.altair_spec(_factory(*args, **kwargs))  # the factory is part of the key by its name


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
    masked: np.ndarray | None = None,
) -> object:
    """One intermediate: title, formula, shape, heatmap. Returns the chart's selection event if any.

    With ``select``, ``on_select`` is "rerun" or a callback run (before the page) when the selection changes.
    ``masked`` (bool, the shape of ``values``) draws those cells grey as masked.
    """
    st.markdown(f"**{title}** · shape {values.shape[0]} × {values.shape[1]}")
    if latex:
        st.latex(latex)
    if note:
        st.caption(note)
    chart = charts.heatmap_spec(  # the spec of charts.heatmap, without building the Altair chart on every run
        values, rows, cols, kind=kind, precision=precision(), domain=domain, x_title=x_title, y_title=y_title,
        select=select, masked=masked,
    )
    if select:
        return show_chart(chart, key=key, on_select=on_select, selection_mode=select)
    return show_chart(chart, key=key)
