"""A configuration with a score bias (a T5 layer's relative positions) on every page: no error anywhere, and Step by
step, Masking and Scaling show the bias and the biased scores, checked against numpy written out here."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attn_core import causal_mask, load_preset, validate_config
from attn_ui.app import registry

from .test_follow_config import open_with
from .test_steps import charts, grid, page_text


def biased(mask_kind: str = "causal", n_heads: int = 1):
    """Seed 000 with a score bias per head (T5's is one number per distance: so is this one) and no scaling."""
    cfg = load_preset("seed000")
    n = cfg.n_seq
    distance = np.arange(n)[None, :] - np.arange(n)[:, None]  # key − query
    per_distance = np.array([0.7, -0.4, 1.1, -1.3, 0.2])  # distance −2 … 2
    bias = np.stack([per_distance[distance + 2] * (h + 1) for h in range(n_heads)])  # [n_heads, n, n]
    return validate_config(replace(cfg, scale="none", mask_kind=mask_kind, score_bias=bias))


def reference(cfg):  # head 0, numpy written out
    x = cfg.x
    s = (x @ cfg.w_q) @ (x @ cfg.w_k).T + cfg.score_bias[0]
    if cfg.mask_kind == "causal":
        s = np.where(causal_mask(cfg.n_seq), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return s, e / e.sum(axis=1, keepdims=True)


PAGES = [p for p in registry.PAGES if p not in (registry.LEARN, registry.MODEL)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_runs_with_a_score_bias(page):
    at = open_with(biased(), page.file)
    assert not at.error, [e.value for e in at.error]


def test_step_by_step_shows_the_bias_and_the_biased_scores():
    cfg = biased(mask_kind="none")
    at = open_with(cfg, registry.STEPS.file)
    found = charts(at)
    np.testing.assert_allclose(grid(found["Score bias B"]), cfg.score_bias[0], rtol=0, atol=1e-12)
    s, w = reference(cfg)
    np.testing.assert_allclose(grid(found["Scaled scores + B"]), s, rtol=0, atol=1e-12)
    np.testing.assert_allclose(grid(found["Weights"]), w, rtol=0, atol=1e-12)
    assert "the mask's finite sibling" in page_text(at)


def test_masking_draws_the_bias_and_names_its_range():
    cfg = biased()
    at = open_with(cfg, registry.MASKING.file)
    found = charts(at)
    np.testing.assert_allclose(grid(found["Score bias B"]), cfg.score_bias[0], rtol=0, atol=1e-12)
    s, _ = reference(cfg)
    after = grid(found["Scaled scores + B + M"])
    allowed = causal_mask(cfg.n_seq)
    np.testing.assert_allclose(after[allowed], s[allowed], rtol=0, atol=1e-12)
    text = page_text(at)
    assert f"from {cfg.score_bias[0].min():.4g} to {cfg.score_bias[0].max():.4g} in this head" in text


def test_scaling_says_the_divisor_shrinks_the_scores_not_the_bias():
    at = open_with(biased(), registry.SCALING.file)
    text = page_text(at) + " ".join(str(i.value) for i in at.info)
    assert "a divisor shrinks the scores, not the bias" in text
    assert f"√d_k = {np.sqrt(3):.4g}" in text


def test_score_functions_compare_with_the_heads_bias():
    cfg = biased(mask_kind="none")
    at = open_with(cfg, registry.SCORES.file)
    _, w = reference(cfg)
    found = charts(at)
    np.testing.assert_allclose(grid(found["Dot product · yours"]), w, rtol=0, atol=1e-12)  # its weights
