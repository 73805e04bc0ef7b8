"""Cached attention of the current configuration (the matrices are the cache key)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attn_core import Config, MultiHeadTrace, config_mask, multi_head_attention


@st.cache_data(max_entries=64, show_spinner=False)
def _multi_head(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray,
    n_heads: int, scale: str | float, mask: np.ndarray | None,
) -> MultiHeadTrace:
    return multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, scale=scale, mask=mask)


def trace(cfg: Config) -> MultiHeadTrace:
    """attn_core.run(cfg), computed once per distinct configuration. Raises AttentionInputError."""
    return _multi_head(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads, cfg.scale, config_mask(cfg))
