"""AppTest of the Score functions page: the choice of score function and its grids, and every number it draws
checked against numpy written out here (seed 000's matrices, tests/seeds.py)."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow.ipc
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import PRESETS, load_preset, make_config
from tests.seeds import SEED000_W_K, SEED000_W_Q, SEED000_WEIGHTS, SEED000_X

from .apptools import APP, edit_cells, editor_key, new_app, notes, plain

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


def uniform(seed: int, shape: tuple[int, int], limit: float) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-limit, limit, shape)


# how general and additive start on seed 000 (one head, d_q = d_k = d_a = 3): Xavier uniform √(6 / (3 + 3)) = 1 for
# W_a (seed 0), W_1 (seed 1), W_2 (seed 2); Kaiming uniform √(6 / 1) for v_a [1, 3] (seed 3)
W_A0 = uniform(0, (3, 3), 1.0)
W_10, W_20, V_A0 = uniform(1, (3, 3), 1.0), uniform(2, (3, 3), 1.0), uniform(3, (1, 3), np.sqrt(6.0))


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
    np.testing.assert_array_equal(cfg.w_a, W_A0)  # Xavier uniform, seed 0: not the identity
    assert editor_key(at, "w_a") in at.session_state
    assert "**W_a** · 3 × 3 = [d_q, n_heads·d_k]" in markdown(at)
    assert ("W_a starts as Xavier/Glorot uniform, seed 0, not as the identity, which would give the dot product's "
            "numbers back (Randomise offers it: “identity (ones on the diagonal)”). Yours are still those numbers."
            ) in [plain(c) for c in notes(at)]

    choose(at, "additive")
    cfg = at.session_state["config"]
    assert cfg.score == "additive" and cfg.w_a is None
    for got, want in ((cfg.w_1, W_10), (cfg.w_2, W_20), (cfg.v_a, V_A0)):
        np.testing.assert_array_equal(got, want)
    assert ("W_1, W_2 and v_a start as W_1 Xavier/Glorot uniform, seed 1; W_2 Xavier/Glorot uniform, seed 2; v_a "
            "Kaiming/He uniform, seed 3; v_a's numbers lie between −2.45 and 2.45: √6, Kaiming's √(6 / fan-in) of "
            "v_a drawn as one row (1 × d_a), wider than the ±1.41 of a layer from the d_a features to one score, so "
            "that the scores are not all near 0. Yours are still those numbers.") in [plain(c) for c in notes(at)]
    assert np.abs(cfg.v_a).max() > np.sqrt(6 / 3) and np.abs(cfg.v_a).max() <= np.sqrt(6)  # what it says, shown
    assert all(editor_key(at, k) in at.session_state for k in ("w_1", "w_2", "v_a"))
    assert at.number_input(key="scores_d_a").value == 3

    at.number_input(key="scores_d_a").set_value(5).run()
    assert not at.exception
    assert at.session_state["config"].w_1.shape == (3, 5) and at.session_state["config"].v_a.shape == (1, 5)

    choose(at, "dot")
    cfg = at.session_state["config"]
    assert cfg.score == "dot" and cfg.w_1 is None and cfg.w_a is None
    assert "The dot product has no weights of its own" in " ".join(notes(at))


def test_switching_back_to_general_restores_the_edited_w_a():
    at = choose(open_page(), "general")
    edit_cells(at, "w_a", {0: {1: "0.5"}})
    assert not at.exception
    assert at.session_state["config"].w_a[0, 1] == 0.5
    assert any(plain(c).endswith("Yours differ from them now (edited, randomised, or kept through a change "
                                 "of heads).") for c in notes(at))
    choose(choose(at, "additive"), "general")
    want = W_A0.copy()
    want[0, 1] = 0.5
    np.testing.assert_array_equal(at.session_state["config"].w_a, want)


def test_a_refused_w_a_cell_names_the_matrix_and_the_cell():
    at = choose(open_page(), "general")
    edit_cells(at, "w_a", {1: {2: "abc"}})
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert any("W_a, row 1, column 2" in e and "abc" in e for e in errors), errors
    np.testing.assert_array_equal(at.session_state["config"].w_a, W_A0)  # the last valid values stay


def test_comparison_equals_numpy_on_seed000():
    """Dot ÷ √3 (seed 000's printed weights), general and additive with the weights they start with (written out
    above), cell by cell; the starting weights change the weights (the point of showing them)."""
    at = open_page(precision=8)
    (dot_rows, dot), (_, general), (_, additive), *_ = heatmaps(at)
    q, k = X @ W_Q, X @ W_K
    want_dot = softmax_rows(q @ k.T / np.sqrt(3))
    assert dot_rows == ["0: input1", "1: input2", "2: input3"]
    np.testing.assert_allclose(dot, want_dot, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dot, SEED000_WEIGHTS, rtol=1e-6)
    want_general = softmax_rows(q @ W_A0 @ k.T / np.sqrt(3))
    np.testing.assert_allclose(general, want_general, rtol=1e-12, atol=1e-14)
    _, want_additive = additive_reference(q, k, W_10, W_20, V_A0[0], np.sqrt(3))
    np.testing.assert_allclose(additive, want_additive, rtol=1e-12, atol=1e-14)
    assert np.abs(want_general - want_dot).max() > 0.3 and np.abs(want_additive - want_dot).max() > 0.1

    table = summary_table(at)
    assert list(table["score function"]) == ["dot product (yours)", "general (Luong)", "additive (Bahdanau)"]
    np.testing.assert_allclose(numbers(table["largest weight"]),
                               [want_dot.max(), want_general.max(), want_additive.max()], atol=1e-8)
    entropy = [-(w * np.log(w)).sum(axis=1).mean() for w in (want_dot, want_general, want_additive)]
    np.testing.assert_allclose(numbers(table["mean row entropy (nats)"]), entropy, atol=1e-8)
    diff = table["largest |difference| from the dot product's weights"]
    np.testing.assert_allclose(numbers(diff), [0, np.abs(want_general - want_dot).max(),
                                               np.abs(want_additive - want_dot).max()], atol=1e-8)
    sources = " ".join(plain(c) for c in notes(at))
    assert "General (Luong): W_a as it starts: W_a Xavier/Glorot uniform, seed 0." in sources


@pytest.mark.parametrize("preset", ["seed000", "seed001_sentence", "seed002_causal", "cross_translation",
                                    "seed003_heads"])
def test_general_and_additive_start_with_weights_that_change_the_picture(preset):
    """On every preset, the starting W_a moves the weights away from the dot product's, and the starting additive
    weights are not near uniform (mean row entropy below 0.95 · ln n_k), head 0, numpy written out."""
    cfg = load_preset(preset)
    at = open_page(cfg, precision=8)
    (_, dot), (_, general), (_, additive), *_ = heatmaps(at)
    y = cfg.y if cfg.cross else cfg.x
    d = cfg.d_k
    q, k = (y @ cfg.w_q)[:, :d], (cfg.x @ cfg.w_k)[:, :d]  # head 0
    allowed = np.tril(np.ones((4, 4), dtype=bool)) if cfg.mask_kind == "causal" else np.ones(dot.shape, dtype=bool)

    def weights(s):
        s = np.where(allowed, s / np.sqrt(d), -np.inf)
        return softmax_rows(s)

    w_a = uniform(0, (d, d), np.sqrt(6 / (2 * d)))  # head 0's block: drawn first from seed 0, one head's fans
    w_1, w_2 = uniform(1, (d, d), np.sqrt(6 / (2 * d))), uniform(2, (d, d), np.sqrt(6 / (2 * d)))
    v_a = uniform(3, (1, d), np.sqrt(6.0))[0]
    want_general = weights(q @ w_a @ k.T)
    s_additive, _ = additive_reference(q, k, w_1, w_2, v_a, 1.0)
    want_additive = weights(s_additive)
    np.testing.assert_allclose(general, want_general, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(additive, want_additive, rtol=1e-10, atol=1e-12)
    assert np.abs(want_general - dot).max() > 0.1
    live = allowed.sum(axis=1) > 1  # rows with a choice to make
    entropy = -(np.where(allowed, want_additive * np.log(np.where(allowed, want_additive, 1)), 0)).sum(axis=1)
    assert entropy[live].mean() < 0.95 * np.log(allowed.sum(axis=1)[live]).mean()


def test_randomise_fills_a_score_matrix_per_head_and_the_identity_gives_the_dot_product_back():
    at = choose(open_page(precision=8), "general")
    at.session_state["scores_w_a_randomise"] = True  # open W_a's Randomise popover
    at.run()
    assert at.selectbox(key="scores_w_a_init").value == "xavier_uniform"  # offered as W_a started
    assert at.number_input(key="scores_w_a_seed").value == 0
    at.selectbox(key="scores_w_a_init").set_value("identity")
    at.button(key="scores_w_a_fill").click().run()
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].w_a, np.eye(3))
    (_, dot), (_, general), *_ = heatmaps(at)
    np.testing.assert_allclose(general, dot, rtol=1e-12, atol=1e-14)

    choose(at, "additive")
    at.session_state["scores_v_a_randomise"] = True
    at.run()
    at.selectbox(key="scores_v_a_init").set_value("gaussian")
    at.run()
    at.number_input(key="scores_v_a_seed").set_value(7)
    at.number_input(key="scores_v_a_std").set_value(2.0)
    at.button(key="scores_v_a_fill").click().run()
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].v_a, np.random.default_rng(7).normal(0, 2.0, (1, 3)))


def test_randomise_of_several_heads_draws_each_head_block_on_its_own():
    cfg = make_config(["a", "b", "c"], np.eye(3, 4), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 4)), n_heads=2)
    at = choose(open_page(cfg), "general")
    rng = np.random.default_rng(0)  # one stream, head 0's 2 × 2 block then head 1's, each with one head's fans
    want = np.hstack([rng.uniform(-np.sqrt(6 / 4), np.sqrt(6 / 4), (2, 2)) for _ in range(2)])
    np.testing.assert_array_equal(at.session_state["config"].w_a, want)
    at.session_state["scores_w_a_randomise"] = True
    at.run()
    at.number_input(key="scores_w_a_seed").set_value(0)
    at.button(key="scores_w_a_fill").click().run()  # Xavier uniform, seed 0: as it started
    np.testing.assert_array_equal(at.session_state["config"].w_a, want)
    assert "With 2 heads: each head's block of columns drawn on its own." in " ".join(
        plain(c) for c in notes(at))


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
    table = at.main.dataframe[-1].value
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
    table = at.main.dataframe[-1].value
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


@pytest.mark.parametrize(("typed", "said"), [
    (2.5, "Features per head not changed: d_a (features per head): 2.5 is not a whole number."),
    (0.0, "Features per head not changed: d_a (features per head): 0 is under 1; the tanh layer has at least one "
          "feature."),
    (9999.0, "Features per head not changed: d_a (features per head): 9999 is over the cap of 768."),
    (None, "Features per head not changed: d_a (features per head) holds no number that can be read: type a whole "
           "number."),
])
def test_a_d_a_that_is_no_width_is_refused_in_words(typed, said):
    """d_a's box takes what is typed as typed (an integer box read "1e2" as 1 and "2.5" as 2 without a word): what is
    not a whole width from 1 to the cap is said, and the weights stay; 1e2 is 100."""
    at = new_app("pages/scores.py")
    choose(at, "additive")
    before = at.session_state["config"]
    at.number_input(key="scores_d_a").set_value(typed).run()
    assert not at.exception, at.exception
    assert at.session_state["config"] is before
    assert said in [plain(e.value) for e in at.warning], [e.value for e in at.warning]
    at.number_input(key="scores_d_a").set_value(1e2).run()
    assert at.session_state["config"].w_1.shape == (3, 100)


def test_the_mean_entropy_of_no_row_is_no_number():
    """Every key of every query masked: no row to average, so the table says "–", not an entropy of 0 that the note
    reads as "one key takes all the weight"; the note says such rows are left out."""
    at = new_app("pages/scores.py")
    cfg = at.session_state["config"]
    at.session_state["config"] = replace(cfg, mask_kind="padding", is_pad=(True,) * cfg.n_seq)
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert set(table["mean row entropy (nats)"]) == {"–"}
    assert any("its row is left out of the mean" in plain(n) for n in notes(at))
