"""Overview: formula, pipeline, current configuration summary."""

from __future__ import annotations

from dataclasses import replace

from .apptools import new_app


def test_overview_shows_formula_pipeline_and_configuration():
    at = new_app()
    assert not at.exception
    assert any("softmax" in latex.value for latex in at.latex)
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
