"""Every page follows the configuration (issue 16): score functions (general, additive with d_q ≠ d_k and several
heads) and cross-attention (queries from Y), on Step by step, the drill-down, Masking, Multi-head, Scaling,
Overview and Share & export.

Expected numbers are numpy written out here, independently of attn_core: general q W_a kᵀ, additive
v_a · tanh(q W_1 + k W_2), cross Q = Y W_Q with K, V from X.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset, make_config, with_query_rows
from attn_ui.app import registry

from .apptools import formulas, new_app, notes, plain
from .test_multihead import head_panels, open_section
from .test_scaling import heatmaps
from .test_steps import charts, grid, numbers, page_text, tables

W_A = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, -1.0], [2.0, 0.0, 1.0]])  # [d_q, d_k]: not the identity


def general_config():
    """Seed 000's numbers with the general score (q W_a) · k and the W_a above."""
    base = load_preset("seed000")
    return make_config(base.tokens, base.x, base.w_q, base.w_k, base.w_v, score="general", w_a=W_A)


def additive_two_heads():
    """2 heads of additive attention with d_q = 3, d_k = 2, d_a = 3, d_v = 3 (W_Q 6 wide, W_K 4, W_V 6), 4 tokens."""
    rng = np.random.default_rng(5)
    return make_config(
        ["we", "read", "the", "text"], rng.normal(size=(4, 5)), rng.normal(size=(5, 6)), rng.normal(size=(5, 4)),
        rng.normal(size=(5, 6)), w_o=rng.normal(size=(6, 3)), n_heads=2, score="additive",
        w_1=rng.normal(size=(3, 6)), w_2=rng.normal(size=(2, 6)), v_a=rng.normal(size=(1, 6)),
    )


def cross_two_queries():
    """The cross-translation preset with 2 rows of Y (so the weights are [2, 3], not square)."""
    return with_query_rows(load_preset("cross_translation"), 2)


CONFIGS = {
    "additive": lambda: load_preset("additive"),
    "cross_translation": lambda: load_preset("cross_translation"),
    "general": general_config,
    "additive_2_heads": additive_two_heads,
    "cross_2_queries": cross_two_queries,
}
PAGES = [p for p in registry.PAGES if p not in (registry.LEARN, registry.MODEL, registry.SCORES)]


# ---- an independent reference ---------------------------------------------------------------------


def softmax_rows(s: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    s = s if allowed is None else np.where(allowed, s, -np.inf)
    out = np.zeros_like(s)
    for i, row in enumerate(s):
        keep = np.isfinite(row)
        if keep.any():
            e = np.exp(row[keep] - row[keep].max())
            out[i, keep] = e / e.sum()
    return out


def reference(cfg, head: int = 0, allowed=None) -> dict[str, np.ndarray]:
    """Head ``head``'s intermediates, written out: Q from Y (or X), K and V from X, the score function by hand."""
    n = cfg.n_heads
    y = cfg.x if cfg.y is None else cfg.y
    d_q, d_k, d_v = cfg.w_q.shape[1] // n, cfg.w_k.shape[1] // n, cfg.w_v.shape[1] // n
    q = y @ cfg.w_q[:, head * d_q:(head + 1) * d_q]
    k = cfg.x @ cfg.w_k[:, head * d_k:(head + 1) * d_k]
    v = cfg.x @ cfg.w_v[:, head * d_v:(head + 1) * d_v]
    out = {"Q": q, "K": k, "V": v}
    if cfg.score == "general":
        w_a = cfg.w_a[:, head * d_k:(head + 1) * d_k]
        out["q_a"] = q @ w_a
        s = np.array([[sum(out["q_a"][i, d] * k[j, d] for d in range(d_k)) for j in range(len(k))]
                      for i in range(len(q))])
    elif cfg.score == "additive":
        d_a = cfg.w_1.shape[1] // n
        cols = slice(head * d_a, (head + 1) * d_a)
        out["q_1"], out["k_2"], out["v_a"] = q @ cfg.w_1[:, cols], k @ cfg.w_2[:, cols], cfg.v_a[0, cols]
        out["features"] = [np.tanh(out["q_1"][i][None, :] + out["k_2"]) for i in range(len(q))]  # [n_k, d_a] each
        s = np.array([[float(np.dot(out["v_a"], f[j])) for j in range(len(k))] for f in out["features"]])
    else:
        s = q @ k.T
    divisor = {"sqrt_dk": np.sqrt(d_k), "none": 1.0}.get(cfg.scale, cfg.scale)
    out["scores"], out["scaled"] = s, s / divisor
    out["weights"] = softmax_rows(out["scaled"], allowed)
    out["output"] = out["weights"] @ v
    return out


def open_with(cfg, page: str) -> AppTest:
    at = new_app()
    at.session_state["config"] = cfg
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


# ---- every page, every configuration --------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_runs_with_every_score_function_and_cross_attention(page, name):
    at = open_with(CONFIGS[name](), page.file)
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_multihead_section_runs(name):
    at = open_with(CONFIGS[name](), registry.MULTIHEAD.file)
    for number in (3, 4, 5, 6, 7):
        open_section(at, number)
        assert not at.exception and not at.error, (number, [e.value for e in at.error])


# ---- Step by step and the drill-down -----------------------------------------------------------------


def test_steps_general_shows_q_w_a_and_its_scores():
    cfg = general_config()
    at = open_with(cfg, registry.STEPS.file)
    ref, found = reference(cfg), charts(at)
    np.testing.assert_allclose(grid(found["Q W_a"]), ref["q_a"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Scores (Q W_a) Kᵀ"]), ref["scores"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-12)
    assert "Scores QKᵀ" not in found
    assert "(Q W_a) Kᵀ" in page_text(at)
    # the drill-down writes each score as (q_i W_a) · k_j, term by term
    at.selectbox(key="steps_query").set_value(1).run()
    for j, row in enumerate(tables(at)["a"]):
        terms = [x for pair in zip(ref["q_a"][1], ref["K"][j], strict=True) for x in pair]
        assert numbers(row[2]) == pytest.approx([*terms, ref["scores"][1, j]], abs=5e-5), row[2]
    assert any(r"(q_{1} W_a) \cdot k_j" in f for f in formulas(at))


def test_steps_additive_shows_its_halves_scores_and_features():
    cfg = load_preset("additive")
    at = open_with(cfg, registry.STEPS.file)
    ref, found = reference(cfg), charts(at)
    np.testing.assert_allclose(grid(found["Q W_1"]), ref["q_1"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["K W_2"]), ref["k_2"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["v_a"])[0], ref["v_a"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Scores v_a · tanh(Q W_1 + K W_2)"]), ref["scores"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Scaled scores"]), ref["scores"], rtol=1e-12)  # no scaling
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-12)
    assert "v_a · tanh(Q W_1 + K W_2)" in page_text(at)
    for i in (0, 2):
        at.selectbox(key="steps_query").set_value(i).run()
        assert not at.exception
        found = charts(at)
        (title,) = [t for t in found if t.startswith("Features of query")]
        assert plain(title) == f"Features of query {i}: input{i + 1}"
        np.testing.assert_allclose(grid(found[title]), ref["features"][i], rtol=1e-12)  # [n_k, d_a]
        for j, row in enumerate(tables(at)["a"]):  # each score: the features row · v_a
            assert numbers(row[2]) == pytest.approx(ref["features"][i][j], abs=5e-5)
            assert numbers(row[3])[-1] == pytest.approx(ref["scores"][i, j], abs=5e-5)
            want_terms = [x for pair in zip(ref["features"][i][j], ref["v_a"], strict=True) for x in pair]
            assert numbers(row[3])[:-1] == pytest.approx(want_terms, abs=5e-5)


def test_steps_cross_attention_queries_from_y():
    cfg = cross_two_queries()
    at = open_with(cfg, registry.STEPS.file)
    ref, found = reference(cfg), charts(at)
    assert grid(found["Q"]).shape == (2, 6) and grid(found["K"]).shape == (3, 6)
    np.testing.assert_allclose(grid(found["Q"]), cfg.y @ cfg.w_q, rtol=1e-12)
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12)
    assert grid(found["Weights"]).shape == (2, 3)  # [n_y, n_x]
    np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-12)
    assert any(r"Q = Y\,W_Q" in f for f in formulas(at))
    assert any(r"K = X\,W_K" in f for f in formulas(at))
    # rows: Y's tokens; columns: X's
    weights = found["Weights"]
    assert list(dict.fromkeys(weights["row"])) == ["0: the", "1: cat"]
    assert list(dict.fromkeys(weights["col"])) == ["0: le", "1: chat", "2: dort"]
    query = at.selectbox(key="steps_query")
    assert query.options == ["0: the", "1: cat"]  # n_y queries
    query.set_value(1).run()
    assert not at.exception
    assert [r[0] for r in tables(at)["a"]] == ["0: le", "1: chat", "2: dort"]
    assert "output row 1" in plain(at.success[0].value)


def test_cross_preset_query_selector_offers_y_tokens():
    at = open_with(load_preset("cross_translation"), registry.STEPS.file)
    assert at.selectbox(key="steps_query").options == ["0: the", "1: cat", "2: sleeps"]


def test_steps_additive_two_heads_each_head():
    cfg = additive_two_heads()
    at = open_with(cfg, registry.STEPS.file)
    for head in (0, 1):
        at.selectbox(key="steps_head").set_value(head).run()
        assert not at.exception
        ref, found = reference(cfg, head), charts(at)
        np.testing.assert_allclose(grid(found[f"Q (head {head})"]), ref["Q"], rtol=1e-12)  # [4, d_q = 3]
        np.testing.assert_allclose(grid(found[f"K (head {head})"]), ref["K"], rtol=1e-12)  # [4, d_k = 2]
        np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12)
        np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-12)
        text = page_text(at)
        assert f"columns {3 * head}…{3 * head + 2} of W_Q, columns {2 * head}…{2 * head + 1} of W_K" in text
        assert r"\sqrt{2}" in " ".join(formulas(at))  # √d_k: the keys' width


# ---- Masking ------------------------------------------------------------------------------------------


def test_masking_cross_offers_no_causal_and_padding_greys_x_tokens():
    cfg = cross_two_queries()
    at = open_with(cfg, registry.MASKING.file)
    radio = at.radio(key="masking_kind")
    assert "causal" not in radio.options and "padding" in radio.options
    assert any("Causal is not offered" in plain(c.value) for c in at.caption)
    radio.set_value("padding").run()
    assert not at.exception
    at.multiselect(key="masking_pad").set_value([1]).run()  # X's token "chat" is padding
    assert not at.exception
    assert at.session_state["config"].is_pad == (False, True, False)
    allowed = np.array([[True, False, True]] * 2)  # [n_y, n_x]: column 1 masked for every query
    mask_values, mask_grey, _ = heatmaps(at)[0]
    np.testing.assert_array_equal(mask_values, allowed.astype(float))
    np.testing.assert_array_equal(mask_grey, ~allowed)
    values, grey, _ = heatmaps(at)[-2]  # the masked weights (the row sums come last)
    np.testing.assert_array_equal(grey, ~allowed)
    np.testing.assert_allclose(values, reference(at.session_state["config"], allowed=allowed)["weights"],
                               rtol=1e-12, atol=1e-15)
    assert any("np.broadcast_to(~is_pad, (2, 3))" in plain(c) and "1: chat" in plain(c) for c in notes(at))


def test_masking_cross_custom_mask_is_n_y_by_n_x():
    cfg = replace(cross_two_queries(), mask_kind="custom")
    at = open_with(cfg, registry.MASKING.file)
    (grid_df,) = [d for d in at.dataframe if d.key and d.key.startswith("masking_custom_")]
    assert grid_df.value.shape == (2, 3)
    labels = [b.label for b in at.button]
    assert "Start from causal" not in labels and "Allow every pair" in labels
    assert at.selectbox(key="masking_query").options == ["0: the", "1: cat"]


def test_masking_caption_says_how_each_mask_is_built():
    cfg = load_preset("seed000")
    for kind, words in (("none", "np.ones((3, 3))"), ("causal", "np.tril(np.ones((3, 3)))"),
                        ("custom", "ticked in the grid")):
        at = open_with(replace(cfg, mask_kind=kind), registry.MASKING.file)
        assert any(words in plain(c) for c in notes(at)), kind


# ---- Multi-head ---------------------------------------------------------------------------------------


def test_multihead_additive_two_heads_weights_and_widths():
    cfg = additive_two_heads()
    at = open_with(cfg, registry.MULTIHEAD.file)
    panels = head_panels(at)
    assert len(panels) == 2
    for h, got in enumerate(panels):
        np.testing.assert_allclose(got, reference(cfg, h)["weights"], rtol=1e-12, atol=1e-15)
    line = next(plain(m.value) for m in at.markdown if "per head" in plain(m.value))
    assert "d_q per head **3** (6 columns of W_Q ÷ 2)" in line
    assert "d_k per head **2** (4 columns of W_K ÷ 2)" in line
    assert "valid for these widths: **1, 2**" in line  # 6, 4 and 6 columns: 1 or 2 heads


def test_multihead_head_count_must_divide_w_k_too():
    at = open_with(additive_two_heads(), registry.MULTIHEAD.file)
    at.number_input(key="heads_wanted").set_value(3).run()  # divides W_Q's and W_V's 6 columns, not W_K's 4
    assert not at.exception
    assert at.session_state["config"].n_heads == 2
    assert any("3 heads do not fit" in plain(w.value) for w in at.warning)


def test_multihead_changing_heads_resizes_the_score_weights():
    at = open_with(additive_two_heads(), registry.MULTIHEAD.file)
    at.number_input(key="heads_wanted").set_value(1).run()
    assert not at.exception and not at.error
    cfg = at.session_state["config"]
    assert cfg.n_heads == 1 and cfg.w_1.shape == (6, 6) and cfg.w_2.shape == (4, 6)
    np.testing.assert_allclose(head_panels(at)[0], reference(cfg)["weights"], rtol=1e-12)

    at = open_with(general_config(), registry.MULTIHEAD.file)
    at.number_input(key="heads_wanted").set_value(3).run()
    assert not at.exception and not at.error
    cfg = at.session_state["config"]
    assert cfg.n_heads == 3 and cfg.w_a.shape == (1, 3)
    for h, got in enumerate(head_panels(at)):
        np.testing.assert_allclose(got, reference(cfg, h)["weights"], rtol=1e-12)


def test_multihead_cross_rows_are_y_tokens():
    cfg = cross_two_queries()
    at = open_with(cfg, registry.MULTIHEAD.file)
    (panel,) = head_panels(at)
    np.testing.assert_allclose(panel, reference(cfg)["weights"], rtol=1e-12)
    assert panel.shape == (2, 3)
    open_section(at, 4)
    assert "**concat** · shape 2 × 6 = [n_q, n_heads·d_v] = [2, 1·6]" in [plain(m.value) for m in at.markdown]
    open_section(at, 7)
    assert float(next(m.value for m in at.metric if m.label.startswith("max |multi-head"))) < 1e-12


# ---- Scaling, Overview, Share & export ----------------------------------------------------------------


def test_scaling_additive_says_the_variance_argument_is_about_dot_products():
    at = open_with(load_preset("additive"), registry.SCALING.file)
    text = " ".join(plain(getattr(el, "value", "")) for el in [*at.caption, *at.markdown])
    assert "about the dot product" in text and "Σ|v_a|" in text
    labels = {m.label for m in at.metric}
    assert labels == {"var(scores)", "var(scores / √d_k)"}


def test_scaling_general_measures_q_w_a():
    cfg = general_config()
    at = open_with(cfg, registry.SCALING.file)
    ref = reference(cfg)
    m = {x.label: float(x.value) for x in at.metric}
    assert m["var(Q W_a)"] == pytest.approx(ref["q_a"].var(), abs=5e-5)
    assert m["var((Q W_a)Kᵀ)"] == pytest.approx(ref["scores"].var(), abs=5e-5)


def test_overview_names_the_score_function_and_y():
    at = open_with(cross_two_queries(), registry.OVERVIEW.file)
    text = " ".join(plain(m.value) for m in [*at.markdown, *at.caption])
    assert "Q = Y W_Q" in text and "Query tokens** (2 of Y): the, cat" in text
    at = open_with(load_preset("additive"), registry.OVERVIEW.file)
    assert "v_a · tanh(Q W_1 + K W_2)" in at.get("graphviz_chart")[0].proto.spec


def test_share_titles_the_new_intermediates():
    at = open_with(load_preset("additive"), registry.SHARE.file)
    box = at.selectbox(key="share_csv_name")
    assert {"W_1", "W_2", "v_a", "head 0 · Q W_1", "head 0 · K W_2"} <= set(box.options)
    at = open_with(general_config(), registry.SHARE.file)
    assert {"W_a", "head 0 · Q W_a"} <= set(at.selectbox(key="share_csv_name").options)
    at = open_with(cross_two_queries(), registry.SHARE.file)
    assert "Y" in at.selectbox(key="share_csv_name").options
