"""AppTest of the Score functions page: the choice of score function and its grids, and every number it draws
checked against numpy written out here (seed 000's matrices, tests/seeds.py)."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pyarrow.ipc
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import PRESETS, initialize, load_preset, make_config
from tests.seeds import SEED000_W_K, SEED000_W_Q, SEED000_WEIGHTS, SEED000_X

from .apptools import APP, edit_cells, editor_key, plain

PAGE = "pages/scores.py"
KIND = "scores_kind"

X, W_Q, W_K = (np.array(m, dtype=float) for m in (SEED000_X, SEED000_W_Q, SEED000_W_K))


# ---- the reference, written out --------------------------------------------------------------------
def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def additive_reference(q, k, w_1, w_2, v_a, divisor):  # [n_q, d_q], [n_k, d_k] -> scores, weights [n_q, n_k]
    """score[i, j] = Σ_f v_a[f] · tanh((q_i W_1)[f] + (k_j W_2)[f]), one cell at a time."""
    s = np.zeros((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        for j in range(k.shape[0]):
            s[i, j] = sum(v_a[f] * np.tanh((q[i] @ w_1)[f] + (k[j] @ w_2)[f]) for f in range(w_1.shape[1]))
    return s, softmax_rows(s / divisor)


# ---- helpers ------------------------------------------------------------------------------------
def open_page(cfg=None, precision: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if cfg is not None:
        at.session_state["config"] = cfg
    if precision is not None:
        at.session_state["precision"] = precision
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def choose(at: AppTest, kind: str) -> AppTest:
    at.button_group(key=KIND).set_value(kind).run()
    assert not at.exception
    return at


def _frames(chart) -> list[pd.DataFrame]:
    return [pyarrow.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]


def heatmaps(at: AppTest) -> list[tuple[list[str], np.ndarray]]:
    """Every heatmap on the page, in order: (its row labels, its matrix)."""
    out = []
    for chart in at.get("vega_lite_chart"):
        for f in _frames(chart):
            if {"row_i", "col_i", "value"} <= set(f.columns):
                m = np.full((f["row_i"].max() + 1, f["col_i"].max() + 1), np.nan)
                m[f["row_i"], f["col_i"]] = f["value"]
                rows = list(dict.fromkeys(f["row"]))
                out.append((rows, m))
    return out


def numbers(column: pd.Series) -> np.ndarray:
    return np.array([float(s.replace("−", "-")) for s in column])


def summary_table(at: AppTest) -> pd.DataFrame:
    (table,) = [d.value for d in at.dataframe if "score function" in d.value.columns]
    return table


def markdown(at: AppTest) -> str:
    return "\n".join(plain(m.value) for m in at.markdown)


# ---- the tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_page_renders_for_every_preset(preset):
    at = open_page(load_preset(preset))
    assert at.title[0].value == "Score functions and cross-attention"
    cfg = at.session_state["config"]
    assert at.button_group(key=KIND).value == cfg.score
    assert len(heatmaps(at)) >= 4  # three compared (two with a dot product undefined) and the worked query
    assert ("cross-attention**" if cfg.cross else "self-attention**") in markdown(at)
    assert "Choose self- or cross-attention and edit Y on Inputs & weights" in [
        el.proto.label for el in at.main if el.type == "page_link"]


def test_switching_score_function_changes_the_configuration_and_the_grids():
    at = open_page()
    assert at.session_state["config"].score == "dot"
    assert not [k for k in ("w_a", "w_1", "w_2", "v_a") if editor_key(at, k) in at.session_state]

    choose(at, "general")
    cfg = at.session_state["config"]
    assert cfg.score == "general"
    np.testing.assert_array_equal(cfg.w_a, np.eye(3))  # starts as the identity: the dot product's numbers
    assert editor_key(at, "w_a") in at.session_state
    assert "**W_a** · 3 × 3 = [d_q, n_heads·d_k]" in markdown(at)

    choose(at, "additive")
    cfg = at.session_state["config"]
    assert cfg.score == "additive" and cfg.w_a is None
    assert (cfg.w_1.shape, cfg.w_2.shape, cfg.v_a.shape) == ((3, 3), (3, 3), (1, 3))
    assert all(editor_key(at, k) in at.session_state for k in ("w_1", "w_2", "v_a"))
    assert at.number_input(key="scores_d_a").value == 3

    at.number_input(key="scores_d_a").set_value(5).run()
    assert not at.exception
    assert at.session_state["config"].w_1.shape == (3, 5) and at.session_state["config"].v_a.shape == (1, 5)

    choose(at, "dot")
    cfg = at.session_state["config"]
    assert cfg.score == "dot" and cfg.w_1 is None and cfg.w_a is None
    assert "The dot product has no weights of its own" in " ".join(c.value for c in at.caption)


def test_switching_back_to_general_restores_the_edited_w_a():
    at = choose(open_page(), "general")
    edit_cells(at, "w_a", {0: {1: "0.5"}})
    assert not at.exception
    assert at.session_state["config"].w_a[0, 1] == 0.5
    choose(choose(at, "additive"), "general")
    want = np.eye(3)
    want[0, 1] = 0.5
    np.testing.assert_array_equal(at.session_state["config"].w_a, want)


def test_a_refused_w_a_cell_names_the_matrix_and_the_cell():
    at = choose(open_page(), "general")
    edit_cells(at, "w_a", {1: {2: "abc"}})
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert any("W_a, row 1, column 2" in e and "abc" in e for e in errors), errors
    np.testing.assert_array_equal(at.session_state["config"].w_a, np.eye(3))  # the last valid values stay


def test_comparison_equals_numpy_on_seed000():
    """Dot ÷ √3 (seed 000's printed weights), general with W_a = I (the same), additive with its starting weights
    against the tanh formula, written out cell by cell."""
    at = open_page(precision=8)
    (dot_rows, dot), (_, general), (_, additive), *_ = heatmaps(at)
    q, k = X @ W_Q, X @ W_K
    want_dot = softmax_rows(q @ k.T / np.sqrt(3))
    assert dot_rows == ["0: input1", "1: input2", "2: input3"]
    np.testing.assert_allclose(dot, want_dot, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dot, SEED000_WEIGHTS, rtol=1e-6)
    np.testing.assert_allclose(general, want_dot, rtol=1e-12, atol=1e-14)
    w_1 = initialize("xavier_uniform", (3, 3), seed=1)  # how additive starts (attn_ui.state.default_score_weights)
    w_2 = initialize("xavier_uniform", (3, 3), seed=2)
    v_a = initialize("xavier_uniform", (1, 3), seed=3)[0]
    _, want_additive = additive_reference(q, k, w_1, w_2, v_a, np.sqrt(3))
    np.testing.assert_allclose(additive, want_additive, rtol=1e-12, atol=1e-14)

    table = summary_table(at)
    assert list(table["score function"]) == ["dot product (yours)", "general (Luong)", "additive (Bahdanau)"]
    np.testing.assert_allclose(numbers(table["largest weight"]),
                               [want_dot.max(), want_dot.max(), want_additive.max()], atol=1e-8)
    entropy = [-(w * np.log(w)).sum(axis=1).mean() for w in (want_dot, want_dot, want_additive)]
    np.testing.assert_allclose(numbers(table["mean row entropy (nats)"]), entropy, atol=1e-8)
    diff = table["largest |difference| from the dot product's weights"]
    np.testing.assert_allclose(numbers(diff), [0, 0, np.abs(want_additive - want_dot).max()], atol=1e-8)


def test_the_additive_features_and_scores_of_one_query_equal_numpy():
    cfg = load_preset("additive")
    at = open_page(cfg, precision=8)
    at.selectbox(key="scores_query").set_value(1).run()
    assert not at.exception
    q, k = X @ W_Q, X @ W_K
    w_1, w_2, v_a = cfg.w_1, cfg.w_2, cfg.v_a[0]
    features = np.tanh(q[1] @ w_1 + k @ w_2)  # [n_k, d_a]
    rows, feats = heatmaps(at)[3]
    assert rows == ["0: input1", "1: input2", "2: input3"]
    np.testing.assert_allclose(feats, features, rtol=1e-12, atol=1e-14)
    scores, weights = additive_reference(q, k, w_1, w_2, v_a, 1.0)  # the preset does not scale
    table = at.dataframe[-1].value
    assert list(table["key"]) == rows
    np.testing.assert_allclose(numbers(table["score"]), scores[1], atol=1e-8)
    np.testing.assert_allclose(numbers(table["weight"]), weights[1], atol=1e-8)
    terms = table["v_a · tanh(q W_1 + k W_2), term by term"]
    for j, written in enumerate(terms):
        pairs = [p.split(" · ") for p in written.split(" + ")]
        np.testing.assert_allclose(numbers(pd.Series([a.strip("()") for a, _ in pairs])), v_a, atol=1e-8)
        np.testing.assert_allclose(numbers(pd.Series([b.strip("()") for _, b in pairs])), features[j], atol=1e-8)


def test_general_shows_q_w_a_beside_the_keys():
    at = choose(open_page(precision=8), "general")
    edit_cells(at, "w_a", {0: {1: "2"}})
    w_a = at.session_state["config"].w_a
    q, k = X @ W_Q, X @ W_K
    (_, q_a), (_, keys) = heatmaps(at)[3:5]
    np.testing.assert_allclose(q_a, (q[0] @ w_a)[None, :], rtol=1e-12)
    np.testing.assert_allclose(keys, k, rtol=1e-12)
    table = at.dataframe[-1].value
    np.testing.assert_allclose(numbers(table["score"]), q[0] @ w_a @ k.T, atol=1e-8)


def test_cross_attention_labels_queries_from_y_and_keys_from_x():
    at = open_page(load_preset("cross_translation"))
    rows, weights = heatmaps(at)[0]
    assert rows == ["0: the", "1: cat", "2: sleeps"]
    assert weights.shape == (3, 3)
    cfg = at.session_state["config"]
    q, k = cfg.y @ cfg.w_q, cfg.x @ cfg.w_k
    np.testing.assert_allclose(weights, softmax_rows(q @ k.T / np.sqrt(6)), rtol=1e-12, atol=1e-14)
    assert "cross-attention**: 3 queries from Y (“the”, “cat”, “sleeps”)" in markdown(at)


def test_a_large_configuration_stays_bounded():
    """256 tokens, widths 512, 16 heads, additive: one head compared at a time, charts in blocks."""
    rng = np.random.default_rng(0)
    cfg = make_config([f"t{i}" for i in range(256)], rng.normal(size=(256, 64)), rng.normal(size=(64, 512)) * 0.1,
                      rng.normal(size=(64, 512)) * 0.1, rng.normal(size=(64, 512)) * 0.1, n_heads=16)
    at = open_page(cfg)
    start = time.perf_counter()
    choose(at, "additive")
    assert time.perf_counter() - start < 30
    assert at.session_state["config"].w_1.shape == (32, 512)
    for chart in at.get("vega_lite_chart"):
        assert sum(len(f) for f in _frames(chart)) <= 2_100, json.loads(chart.proto.spec).get("title")


def test_queries_and_keys_of_different_widths_leave_out_the_dot_product():
    """Additive scores allow d_q ≠ d_k; the dot product is then not drawn, and says why."""
    rng = np.random.default_rng(1)
    cfg = make_config(["a", "b", "c"], rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=(4, 5)),
                      rng.normal(size=(4, 2)), score="additive", w_1=rng.normal(size=(3, 2)),
                      w_2=rng.normal(size=(5, 2)), v_a=rng.normal(size=(1, 2)))
    at = open_page(cfg)
    assert len(heatmaps(at)) == 2 + 2  # general and additive; the features and v_a
    assert any("Dot product: not shown" in plain(i.value) and "width" in plain(i.value) for i in at.info)
    assert list(summary_table(at)["largest weight"])[0] == "–"
