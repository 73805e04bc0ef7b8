"""Overview: formula, pipeline, current configuration summary."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .apptools import formulas, new_app, notes
from .test_steps import SEED000_OUT, SEED_W_K, SEED_W_Q, SEED_W_V, SEED_X, charts, grid, reference


def test_overview_shows_formula_pipeline_and_configuration():
    at = new_app()
    assert not at.exception
    assert any("softmax" in f for f in formulas(at))
    text = " ".join(m.value for m in at.markdown)
    assert "input1, input2, input3" in text
    assert "3 × 4" in text and "√3" in text and "Mask**: none" in text
    dot = at.get("graphviz_chart")[0].proto.spec
    for stage in ("Q, K, V", "QKᵀ", "softmax", "heads · W_O"):
        assert stage in dot


def test_overview_follows_the_configuration():
    at = new_app()
    cfg = at.session_state["config"]
    at.session_state["config"] = replace(cfg, mask_kind="causal", scale=2.5)
    at.run()
    text = " ".join(m.value for m in at.markdown)
    assert "causal" in text and "÷ 2.5" in text
    assert not at.exception


def test_overview_draws_the_attention_weights_of_the_configuration():
    at = new_app()
    found = charts(at)
    assert list(found) == ["Attention weights"]
    want = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)["weights"]  # numpy written out in test_steps
    np.testing.assert_allclose(grid(found["Attention weights"]), want, rtol=1e-12)
    np.testing.assert_allclose(grid(found["Attention weights"]) @ (SEED_X @ SEED_W_V), SEED000_OUT, rtol=1e-6)


def test_overview_names_the_head_it_draws_when_there_are_several():
    at = new_app()
    cfg = at.session_state["config"]
    rng = np.random.default_rng(3)
    at.session_state["config"] = replace(cfg, w_q=rng.normal(size=(4, 6)), w_k=rng.normal(size=(4, 6)),
                                         w_v=rng.normal(size=(4, 6)), w_o=np.eye(6), n_heads=2)
    at.run()
    assert not at.exception
    (title,) = charts(at)
    assert title == "Attention weights of head 0 (of 2)"
    assert "2 heads → 3×6" in at.get("graphviz_chart")[0].proto.spec


def test_the_pipeline_counts_one_head_in_the_singular():
    at = new_app()
    spec = at.get("graphviz_chart")[0].proto.spec
    assert "1 head → 3×3" in spec and "head(s)" not in spec


def test_rows_sum_to_1_or_0_when_a_query_has_every_key_masked():
    at = new_app()
    spec = at.get("graphviz_chart")[0].proto.spec
    assert "rows sum to 1" in spec and "rows sum to 1 or 0" not in spec
    custom = np.ones((3, 3), dtype=bool)
    custom[0] = False
    at.session_state["config"] = replace(at.session_state["config"], mask_kind="custom", custom_mask=custom)
    at.run()
    assert not at.exception
    assert "rows sum to 1 or 0" in at.get("graphviz_chart")[0].proto.spec
    assert any("each row sums to 1, or to 0 when every key is masked" in c for c in notes(at))


def test_the_padding_mask_counts_its_tokens_in_words():
    """One padding token reads "1 padding token", not "1 padding token(s)"."""
    at = new_app()
    cfg = at.session_state["config"]
    for pads, said in (((False, False, True), "padding (1 padding token)"),
                       ((False, True, True), "padding (2 padding tokens)")):
        at.session_state["config"] = replace(cfg, mask_kind="padding", is_pad=pads)
        at.run()
        assert not at.exception
        text = " ".join(m.value for m in at.markdown)
        assert f"Mask**: {said}" in text, text
