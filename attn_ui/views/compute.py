"""The attention of the current configuration, computed once per distinct configuration (matrices are the key)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from attn_core import (
    AttentionInputError,
    Config,
    MultiHeadTrace,
    ScoreFunction,
    config_mask,
    multi_head_cross_attention,
    run,
    validate_config,
)
from attn_ui.app import i18n, registry, state
from attn_ui.app.i18n import _
from attn_ui.infra import budget
from attn_ui.widgets import text


@budget.cached("trace", slots=budget.EXPLORER_SLOTS)  # a trace at the caps is ≈ 17 MB (bench/RESULTS.md)
def _multi_head(
    y: np.ndarray | None, x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray,
    n_heads: int, scale: str | float, mask: np.ndarray | None, score: str, score_weights: tuple,
    bias: np.ndarray | None = None,
) -> MultiHeadTrace:
    return multi_head_cross_attention(x if y is None else y, x, w_q, w_k, w_v, w_o, n_heads, scale=scale, mask=mask,
                                      score=ScoreFunction(score, *score_weights), bias=bias)


@budget.cached("modern_trace", slots=budget.EXPLORER_SLOTS)
def _modern(numbers: Config) -> MultiHeadTrace:
    """attn_core.run of a configuration with a modern option: a ModernTrace (self-attention), or the grouped or
    soft-capped heads of cross-attention."""
    return run(numbers)


def trace(cfg: Config) -> MultiHeadTrace:
    """attn_core.run(cfg), computed once per distinct configuration (every matrix, Y, the score function's weights
    and the score bias included, are the key). Raises AttentionInputError.

    A configuration with a modern option (cfg.modern: grouped-query heads, RoPE, QK-norm, ALiBi, a window, a soft
    cap) is validated first (an option the core refuses, RoPE with cross-attention or another score function with
    grouped heads, gives its message, never a trace that silently leaves it out) and runs through attn_core.run:
    a ModernTrace for self-attention. Its labels and origin are not part of the key."""
    if cfg.modern:
        checked = validate_config(cfg)
        return _modern(replace(checked, tokens=(), y_tokens=None if checked.y is None else (), origin=None))
    sf = cfg.score_function()
    return _multi_head(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads, cfg.scale, config_mask(cfg),
                       sf.kind, (sf.w_a, sf.w_1, sf.w_2, sf.v_a), cfg.score_bias)


def current_trace() -> MultiHeadTrace:
    """The trace of the current configuration, or a message and st.stop() if it cannot be computed."""
    try:
        return trace(state.config())
    except AttentionInputError as err:
        page = _(registry.INPUTS.title)
        st.error(_("This configuration cannot be computed: {message} Change it on {page}.").format(
            message=text.md_escape(i18n.error_text(err)), page=page), icon=":material/error:")
        st.page_link(registry.INPUTS.file, label=_("Go to {page}").format(page=page), icon=":material/edit:")
        st.stop()
        raise  # unreachable: st.stop() raises


def is_identity(m: np.ndarray) -> bool:
    """Whether ``m`` is a square identity matrix (then W_O changes nothing).

    >>> is_identity(np.eye(3)), is_identity(np.eye(3)[:, :2])
    (True, False)
    """
    return m.shape[0] == m.shape[1] and bool(np.array_equal(m, np.eye(m.shape[0])))
