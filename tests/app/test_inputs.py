"""Inputs & weights: presets, grid edits, bad cells, dimensions, tokens, randomise."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import DEFAULT_PRESET, PRESETS, RoPE, load_preset, with_dimensions
from attn_ui.app import state

from ..seeds import SEED000_OUTPUT, SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X, SEED004_SCORES, SEED004_SOFTMAX
from .apptools import APP, edit_cells, editor_key, new_app, plain

SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V = (
    np.array(m, dtype=float) for m in (SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
)


def reference(x, w_q, w_k, w_v, divisor=None):
    """softmax(QKᵀ/√d_k)V written out independently of attn_core."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    s = q @ k.T / (np.sqrt(q.shape[1]) if divisor is None else divisor)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return q, w, w @ v


def trace_of(at):
    from attn_core import run

    return run(at.session_state["config"]).heads[0]


def test_opens_on_seed_000():
    at = new_app("pages/inputs.py")
    assert not at.exception
    cfg = at.session_state["config"]
    np.testing.assert_array_equal(cfg.x, SEED_X)
    np.testing.assert_array_equal(cfg.w_q, SEED_W_Q)
    out = trace_of(at).output
    np.testing.assert_allclose(out[0], SEED000_OUTPUT[0], rtol=1e-6)  # seed 000's print


def test_where_w_o_is_edited_is_true_on_a_phone_too():
    """W_O's caption names the one page where it is edited (Multi-head: the panel of the other pages offered it, and
    an edit there changed nothing shown), and no sidebar (on a phone the panel is in the page)."""
    at = new_app("pages/inputs.py")
    said = next(plain(c.value) for c in at.caption if plain(c.value).startswith("W_O ("))
    assert said == "W_O (3 × 3) is edited on the Multi-head page, beside the output it makes."


def test_editing_x_recomputes_q_weights_and_output():
    at = new_app("pages/inputs.py")
    edit_cells(at, "x", {0: {1: 5.0}})
    assert not at.exception
    x = SEED_X.copy()
    x[0, 1] = 5.0
    q, w, out = reference(x, SEED_W_Q, SEED_W_K, SEED_W_V)
    t = trace_of(at)
    np.testing.assert_allclose(t.q, q, rtol=1e-12)
    np.testing.assert_allclose(t.weights, w, rtol=1e-12)
    np.testing.assert_allclose(t.output, out, rtol=1e-12)
    # the edit survives a page switch and shows on Step by step's data
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/inputs.py").run()
    assert at.session_state["config"].x[0, 1] == 5.0
    assert not at.exception


def test_an_edit_sent_with_a_page_switch_still_counts():
    """Typing into a cell and clicking another page at once: the edit arrives with the run of the other page, which
    draws no grid; it is committed all the same (and a bad value is named there)."""
    at = new_app("pages/inputs.py")
    at.session_state[editor_key(at, "w_k")] = {"edited_rows": {0: {"0": 7.0}}, "added_rows": [], "deleted_rows": []}
    at.switch_page("pages/steps.py").run()
    assert not at.exception
    w_k = SEED_W_K.copy()
    w_k[0, 0] = 7.0
    np.testing.assert_array_equal(at.session_state["config"].w_k, w_k)
    _, w, out = reference(SEED_X, SEED_W_Q, w_k, SEED_W_V)
    np.testing.assert_allclose(trace_of(at).output, out, rtol=1e-12)

    at.switch_page("pages/inputs.py").run()
    at.session_state[editor_key(at, "w_v")] = {"edited_rows": {1: {"2": "abc"}}, "added_rows": [], "deleted_rows": []}
    at.switch_page("pages/steps.py").run()
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].w_v, SEED_W_V)  # the last valid W_V
    assert any("W_V, row 1, column 2 is 'abc'" in plain(w.value) for w in at.warning)  # the banner names it


@pytest.mark.parametrize(
    ("value", "what"),
    [("abc", "'abc', not a number"), (None, "empty"), ("nan", "NaN"), ("inf", "+inf"), ("-inf", "-inf")],
)
def test_bad_cell_names_matrix_and_cell_and_keeps_other_values(value, what):
    at = new_app("pages/inputs.py")
    edit_cells(at, "w_k", {0: {0: 7.0}, 2: {1: value}})
    assert not at.exception
    messages = [plain(e.value) for e in at.error]
    assert any("W_K" in m and "row 2, column 1" in m and what in m for m in messages), messages
    # the configuration keeps its last valid values; the learner's other edit is kept as a draft
    np.testing.assert_array_equal(at.session_state["config"].w_k, SEED_W_K)
    draft = at.session_state["drafts"]["w_k"]
    assert draft[0, 0] == 7.0
    # downstream pages say they show the last valid result
    at.switch_page("pages/overview.py").run()
    assert any("last valid" in plain(w.value) for w in at.warning)
    # coming back: the message and the draft are still there; fixing the cell commits everything
    at.switch_page("pages/inputs.py").run()
    assert any("W_K" in plain(e.value) for e in at.error)
    edit_cells(at, "w_k", {2: {1: 1.5}})
    assert not at.error
    expected = SEED_W_K.copy()
    expected[0, 0], expected[2, 1] = 7.0, 1.5
    np.testing.assert_array_equal(at.session_state["config"].w_k, expected)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_loads(key):
    at = new_app("pages/inputs.py")
    at.selectbox(key="inputs_preset").set_value(key).run()
    assert not at.exception
    assert at.session_state["preset"] == key
    assert at.session_state["config"].n_seq == PRESETS[key].build().n_seq


def test_preset_switch_then_reset_restores_seed_numbers():
    at = new_app("pages/inputs.py")
    at.selectbox(key="inputs_preset").set_value("seed004_unscaled").run()
    t = trace_of(at)
    np.testing.assert_array_equal(t.scores, SEED004_SCORES)  # seed 004's print
    np.testing.assert_allclose(t.weights[1], SEED004_SOFTMAX[1], rtol=1e-4)
    edit_cells(at, "x", {2: {3: -4.0}})
    assert at.session_state["config"].x[2, 3] == -4.0
    at.button[0].click().run()  # "Reset to preset"
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)
    assert not at.exception


def test_dimension_change_keeps_values_that_fit():
    at = new_app("pages/inputs.py")
    at.number_input(key="inputs_n_seq").set_value(5).run()
    at.number_input(key="inputs_d_qk").set_value(2).run()
    cfg = at.session_state["config"]
    assert cfg.x.shape == (5, 4) and cfg.w_q.shape == (4, 2) and cfg.w_k.shape == (4, 2)
    np.testing.assert_array_equal(cfg.x[:3], SEED_X)
    np.testing.assert_array_equal(cfg.w_q, SEED_W_Q[:, :2])
    assert cfg.tokens[:3] == ("input1", "input2", "input3") and len(cfg.tokens) == 5
    assert at.number_input(key="inputs_n_seq").value == 5
    # grids restart from the new values (fresh key)
    assert editor_key(at, "x").endswith(str(at.session_state["editor_version"]))
    assert not at.exception


@pytest.mark.parametrize(("key", "value", "said"), [
    ("inputs_n_seq", 9999, "Dimensions not changed: n_seq (tokens): 9999 is over the cap of 256. Still using n_seq 3."),
    ("inputs_d_model", 0, "Dimensions not changed: d_model (columns of X): 0 is under 1; X has at least one column. "
                          "Still using d_model 4."),
    ("inputs_d_v", 5000, "Dimensions not changed: d_v (columns of W_V): 5000 is over the cap of 768. Still using d_v "
                         "3."),
    ("inputs_n_seq", 2.5, "Dimensions not changed: n_seq (tokens): 2.5 is not a whole number. Still using n_seq 3."),
    ("inputs_d_model", 1e3, "Dimensions not changed: d_model (columns of X): 1000 is over the cap of 769. Still using "
                            "d_model 4."),
    ("inputs_d_qk", 800.0, "Dimensions not changed: d_k (columns of W_Q and W_K): 800 is over the cap of 768. Still "
                           "using d_k 3."),
    ("inputs_n_seq", None, "Dimensions not changed: n_seq (tokens) holds no number that can be read: type a whole "
                           "number. Still using n_seq 3."),  # a box left empty
])
def test_a_size_out_of_range_is_refused_with_a_message_under_the_sizes(key, value, said):
    """Streamlit's own range check left a size past its cap in a red box, with no word of why (a fresh reviewer): the
    sizes have no bounds in the browser, and the core's refusal is said under them. A size typed as 2.5 came as 2 (the
    browser's integer input kept the whole part, without a word): it is refused by name; 1e3 is 1000. The box keeps
    what was typed (it jumped back to the configuration's size, the typing gone) and the message says the size still
    in use, as every typed box does (controls.whole_box), on every run and page visit until the size in use is typed
    back."""
    at = new_app("pages/inputs.py")
    before = at.session_state["config"]
    at.number_input(key=key).set_value(value).run()
    assert not at.exception, at.exception
    assert at.session_state["config"] is before
    assert [plain(e.value) for e in at.warning] == [said]
    typed = {"inputs_n_seq": 3, "inputs_d_model": 4, "inputs_d_qk": 3, "inputs_d_v": 3, key: value}
    assert {k: at.number_input(key=k).value for k in SIZES} == typed  # what was typed stays in its box
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/inputs.py").run()  # the next run, another visit: the same box, the same message
    assert [plain(e.value) for e in at.warning] == [said]
    assert {k: at.number_input(key=k).value for k in SIZES} == typed
    at.number_input(key=key).set_value(float(before_size(before, key))).run()  # the size in use typed back
    assert not at.warning and at.session_state["config"] is before


def before_size(cfg, key: str) -> int:
    return {"inputs_n_seq": cfg.n_seq, "inputs_d_model": cfg.d_model, "inputs_d_qk": cfg.w_q.shape[1],
            "inputs_d_v": cfg.w_v.shape[1]}[key]


def test_while_a_size_is_refused_another_size_typed_is_refused_with_it_and_both_are_said_in_use():
    at = new_app("pages/inputs.py")
    at.number_input(key="inputs_n_seq").set_value(0.0).run()
    at.number_input(key="inputs_d_model").set_value(5.0).run()
    assert [plain(e.value) for e in at.warning] == [
        "Dimensions not changed: n_seq (tokens): 0 is under 1; a sequence has at least one token. Still using n_seq 3, "
        "d_model 4."]
    assert [at.number_input(key=k).value for k in SIZES] == [0, 5, 3, 3]
    at.number_input(key="inputs_n_seq").set_value(4.0).run()  # a whole number: both sizes typed are taken
    assert not at.warning and at.session_state["config"].x.shape == (4, 5)
    assert [at.number_input(key=k).value for k in SIZES] == [4, 5, 3, 3]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_sizes_refused_are_each_named(lang):
    """The core stops at the first size it refuses: with n_seq and d_model both refused, only n_seq was named, and
    d_model's box held a refused size that no word spoke of."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state[state.LANG] = lang
    at.run()
    at.switch_page("pages/inputs.py").run()
    at.number_input(key="inputs_n_seq").set_value(0.0).run()
    at.number_input(key="inputs_d_model").set_value(9999.0).run()
    at.number_input(key="inputs_d_v").set_value(2.5).run()
    said = [plain(e.value) for e in at.warning]
    if lang == "en":
        assert said == [
            "Dimensions not changed: n_seq (tokens): 0 is under 1; a sequence has at least one token. d_model (columns "
            "of X): 9999 is over the cap of 769. d_v (columns of W_V): 2.5 is not a whole number. Still using n_seq 3, "
            "d_model 4, d_v 3."]
    else:
        assert len(said) == 1 and all(name in said[0] for name in ("n_seq", "d_model", "d_v", "9999", "2.5"))
    assert [at.number_input(key=k).value for k in SIZES] == [0, 9999, 3, 2.5]
    assert not at.exception


def test_a_change_from_elsewhere_lets_the_sizes_refused_go_and_the_boxes_show_its_sizes():
    """Undo (or a preset, a sentence, RoPE switched on Modern attention) changes what the sizes were judged against:
    the boxes show the sizes of the configuration in use, and nothing refused is said any more."""
    at = new_app("pages/inputs.py")
    at.number_input(key="inputs_d_model").set_value(5.0).run()
    at.number_input(key="inputs_n_seq").set_value(2.5).run()
    assert at.warning and at.number_input(key="inputs_n_seq").value == 2.5
    at.button(key="frame_undo").click().run()
    assert not at.exception and not at.warning and at.session_state["config"].x.shape == (3, 4)
    assert [at.number_input(key=k).value for k in SIZES] == [3, 4, 3, 3]


@pytest.mark.parametrize(("lang", "said"), [
    ("zh", "维度未更改：n_seq（词元数）：2.5 不是整数。仍使用 n_seq 3。"),
    ("ko", "차원을 바꾸지 않았습니다: n_seq(토큰 수): 2.5 — 정수가 아닙니다. 아직 n_seq 3을(를) 사용합니다."),
])
def test_a_size_refused_is_said_with_the_size_in_use_in_the_learners_language(lang, said):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[state.LANG] = lang
    at.run()
    at.switch_page("pages/inputs.py").run()
    at.number_input(key="inputs_n_seq").set_value(2.5).run()
    assert not at.exception and [plain(e.value) for e in at.warning] == [said]
    assert at.number_input(key="inputs_n_seq").value == 2.5


SIZES = ("inputs_n_seq", "inputs_d_model", "inputs_d_qk", "inputs_d_v")  # the sizes' inputs (d_k: an additive score)


def test_sizes_equal_to_the_configurations_as_floats_change_nothing():
    """The sizes hold floats (3.0); Streamlit calls their callback again when the browser sends the page's widgets
    back after a run that forgot them (see the next test): sizes equal to the configuration's, as 3.0 for 3, change
    nothing: no message, the same configuration, the grids not drawn anew."""
    at = new_app("pages/inputs.py")
    before, version = at.session_state["config"], at.session_state["editor_version"]
    sent_back = at._tree
    held = [(w, w.value) for w in widgets(at._tree)]
    at.switch_page("pages/overview.py").run()  # forgets this page's widgets: each sent back calls its callback
    at._tree = sent_back
    for widget, value in held:
        widget.set_value(value)
    drop_buttons(at._tree)
    for key, size in zip(SIZES, (3.0, 4.0, 3.0, 3.0), strict=True):
        assert at.number_input(key=key).value == size
    at.switch_page("pages/inputs.py").run()
    assert not at.exception, at.exception
    assert at.session_state["config"] is before and at.session_state["editor_version"] == version
    assert not at.error and not at.warning
    assert type(at.number_input(key="inputs_n_seq").value) is float


def test_a_size_refused_keeps_what_was_typed_in_the_grids():
    """A size refused (2.5) leaves every number the learner typed as it was, and the next size typed works."""
    at = new_app("pages/inputs.py")
    edit_cells(at, "x", {0: {1: 5.0}})
    at.number_input(key="inputs_n_seq").set_value(2.5).run()
    assert "2.5 is not a whole number" in plain(at.warning[0].value)
    assert at.session_state["config"].x[0, 1] == 5.0 and at.session_state["config"].n_seq == 3
    at.number_input(key="inputs_n_seq").set_value(4.0).run()
    cfg = at.session_state["config"]
    assert not at.error and cfg.x.shape == (4, 4) and cfg.x[0, 1] == 5.0


@pytest.mark.parametrize(("n_y", "said"), [
    (2.5, "Rows of Y not changed: n_y (rows of Y): 2.5 is not a whole number."),
    (1e3, "Rows of Y not changed: n_y (rows of Y): 1000 is over the cap of 256."),
])
def test_a_row_count_of_y_not_whole_or_over_its_cap_is_refused_with_a_message(n_y, said):
    at = choose_queries(new_app("pages/inputs.py"), "cross")
    before = at.session_state["config"]
    at.number_input(key="inputs_n_y").set_value(n_y).run()
    assert not at.exception, at.exception
    assert at.session_state["config"] is before
    assert said in [plain(w.value) for w in at.warning]
    assert at.number_input(key="inputs_n_y").value == before.n_q


def test_tokens_rename():
    at = new_app("pages/inputs.py")
    key = f"tokens_editor_{at.session_state['editor_version']}"
    at.session_state[key] = {"edited_rows": {1: {"token": "cat"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert at.session_state["config"].tokens == ("input1", "cat", "input3")
    # typed, then another page clicked at once: the label comes with the other page's run
    key = f"tokens_editor_{at.session_state['editor_version']}"
    at.session_state[key] = {"edited_rows": {2: {"token": "mat"}}, "added_rows": [], "deleted_rows": []}
    at.switch_page("pages/steps.py").run()
    assert not at.exception
    assert at.session_state["config"].tokens == ("input1", "cat", "mat")


def test_sentence_becomes_tokens_with_deterministic_embeddings():
    from attn_core import embed, positional_encoding

    at = new_app("pages/inputs.py")
    at.text_input(key="inputs_sentence").input("the cat sat on the mat.").run()
    at.checkbox(key="inputs_positional").check().run()
    [b for b in at.button if b.label == "Use this sentence"][0].click().run()
    cfg = at.session_state["config"]
    assert cfg.tokens == ("the", "cat", "sat", "on", "the", "mat", ".")
    expected = embed(list(cfg.tokens), 4, seed=0) + positional_encoding(7, 4)
    np.testing.assert_array_equal(cfg.x, expected)
    np.testing.assert_array_equal(cfg.x[0] - positional_encoding(7, 4)[0], cfg.x[4] - positional_encoding(7, 4)[4])
    np.testing.assert_array_equal(cfg.w_q, SEED_W_Q)  # weights kept
    assert not at.exception
    assert at.button(key="frame_undo").label == "Undo: X made from your sentence"  # it said "dimensions changed"


def choose_randomise(at, name: str, init: str, seed: int, std: float | None = None) -> None:
    """Open matrix ``name``'s Randomise popover and choose its initialiser, seed (and std)."""
    at.session_state[f"inputs_{name}_randomise"] = True  # open the popover
    at.run()
    at.selectbox(key=f"inputs_{name}_init").set_value(init).run()
    at.number_input(key=f"inputs_{name}_seed").set_value(seed).run()
    if std is not None:
        at.number_input(key=f"inputs_{name}_std").set_value(std).run()


def test_randomise_with_initialiser_and_seed():
    from attn_core import initialize

    at = new_app("pages/inputs.py")
    choose_randomise(at, "w_v", "kaiming_normal", 7)
    at.button(key="inputs_w_v_fill").click().run()
    rng = np.random.default_rng(7)
    np.testing.assert_array_equal(at.session_state["config"].w_v, rng.normal(0.0, np.sqrt(2 / 4), (4, 3)))
    np.testing.assert_array_equal(at.session_state["config"].w_v, initialize("kaiming_normal", (4, 3), seed=7))
    assert not at.exception


def test_the_randomise_popover_keeps_its_choices_while_closed():
    at = new_app("pages/inputs.py")
    choose_randomise(at, "x", "gaussian", 42, std=0.5)
    at.session_state["inputs_x_randomise"] = False  # close it: its widgets are not drawn
    at.run()
    at.switch_page("pages/steps.py").run()  # and another page
    at.switch_page("pages/inputs.py").run()
    at.session_state["inputs_x_randomise"] = True
    at.run()
    assert at.selectbox(key="inputs_x_init").value == "gaussian"
    assert at.number_input(key="inputs_x_seed").value == 42
    assert at.number_input(key="inputs_x_std").value == 0.5
    at.button(key="inputs_x_fill").click().run()
    np.testing.assert_array_equal(at.session_state["config"].x, np.random.default_rng(42).normal(0.0, 0.5, (3, 4)))
    assert not at.exception


def test_empty_token_label_is_refused_with_a_message():
    at = new_app("pages/inputs.py")
    key = f"tokens_editor_{at.session_state['editor_version']}"
    at.session_state[key] = {"edited_rows": {2: {"token": "  "}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert at.session_state["config"].tokens == ("input1", "input2", "input3")
    assert any("label 2 is empty" in plain(e.value) for e in at.error)
    assert not at.exception


def test_a_configuration_from_a_link_names_no_preset():
    from streamlit.testing.v1 import AppTest

    from attn_core.share import encode_link

    from .apptools import APP

    cfg = PRESETS["seed001_sentence"].build()
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["c"] = encode_link(cfg, "inputs")
    at.run()
    assert at.session_state["preset"] is None
    assert at.selectbox(key="inputs_preset").value is None
    assert [b for b in at.button if b.label == "Reset to preset"][0].disabled
    at.selectbox(key="inputs_preset").set_value("seed000").run()
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)
    assert not at.exception


# ---- queries from a second sequence Y (cross-attention) -----------------------------------------------------------


def choose_queries(at, which: str):
    at.segmented_control(key="inputs_queries").set_value(which).run()
    assert not at.exception
    return at


def test_cross_attention_starts_as_self_attention_then_y_is_edited():
    at = choose_queries(new_app("pages/inputs.py"), "cross")
    cfg = at.session_state["config"]
    assert cfg.cross and cfg.y_tokens == cfg.tokens
    np.testing.assert_array_equal(cfg.y, SEED_X)  # Y starts as a copy of X: self-attention's numbers
    np.testing.assert_allclose(trace_of(at).weights, reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)[1], rtol=1e-12)
    edit_cells(at, "y", {0: {1: 3.0}})
    y = SEED_X.copy()
    y[0, 1] = 3.0
    q, k, v = y @ SEED_W_Q, SEED_X @ SEED_W_K, SEED_X @ SEED_W_V  # Q from Y; K and V from X
    s = q @ k.T / np.sqrt(3)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    t = trace_of(at)
    np.testing.assert_allclose(t.q, q, rtol=1e-12)
    np.testing.assert_allclose(t.weights, w, rtol=1e-12)
    np.testing.assert_allclose(t.output, w @ v, rtol=1e-12)
    assert "Q = Y W_Q" in " ".join(m.value for m in at.markdown)


def test_more_rows_of_y_new_query_labels_and_back_to_self_and_y_comes_back():
    at = choose_queries(new_app("pages/inputs.py"), "cross")
    at.number_input(key="inputs_n_y").set_value(5).run()
    cfg = at.session_state["config"]
    assert (cfg.n_q, cfg.n_seq) == (5, 3) and cfg.y_tokens[3:] == ("q4", "q5")
    assert trace_of(at).weights.shape == (5, 3)
    at.session_state[editor_key(at, "y_tokens")] = {"edited_rows": {4: {"token": "who"}}, "added_rows": [],
                                                    "deleted_rows": []}
    at.run()
    assert at.session_state["config"].y_tokens[4] == "who"
    choose_queries(at, "self")
    assert not at.session_state["config"].cross and at.session_state["config"].y is None
    choose_queries(at, "cross")  # the Y set aside comes back
    assert at.session_state["config"].y_tokens[4] == "who" and at.session_state["config"].n_q == 5


def test_a_causal_mask_gives_way_to_cross_attention_and_says_so():
    at = new_app("pages/inputs.py")
    at.session_state["config"] = PRESETS["seed002_causal"].build()
    at.run()
    choose_queries(at, "cross")
    assert at.session_state["config"].mask_kind == "none"
    assert "causal mask was made for queries and keys of one sequence" in plain(at.warning[0].value)


def test_a_sentence_for_y_becomes_its_tokens():
    at = choose_queries(new_app("pages/inputs.py"), "cross")
    at.text_input(key="inputs_y_sentence").input("who sat there ?").run()
    at.button(key="inputs_y_use_sentence").click().run()
    cfg = at.session_state["config"]
    assert cfg.y_tokens == ("who", "sat", "there", "?") and cfg.y.shape == (4, 4) and cfg.tokens == ("input1",
                                                                                                   "input2", "input3")
    assert cfg.custom_mask.shape == (4, 3)


def test_a_bad_y_cell_is_named():
    at = choose_queries(new_app("pages/inputs.py"), "cross")
    edit_cells(at, "y", {1: {2: "abc"}})
    assert any("Y, row 1 (input2), column 2" in plain(e.value) for e in at.error)
    np.testing.assert_array_equal(at.session_state["config"].y, SEED_X)  # the last valid values stay


def test_additive_scores_let_the_queries_and_keys_differ_in_width():
    at = new_app("pages/inputs.py")
    at.session_state["config"] = PRESETS["additive"].build()
    at.run()
    at.number_input(key="inputs_d_k").set_value(5).run()
    cfg = at.session_state["config"]
    assert not at.exception
    assert cfg.w_q.shape == (4, 3) and cfg.w_k.shape == (4, 5) and cfg.w_2.shape == (5, 4)
    np.testing.assert_array_equal(cfg.w_k[:, :3], SEED_W_K)  # the values that fit are kept


def test_with_rope_an_odd_d_k_is_refused_by_name():
    """With RoPE on (Modern attention), d_k 5 was refused as "rope: turns pairs of features, so each head of W_Q
    needs an even width, got 5.", naming neither the size typed nor how to have it."""
    at = new_app("pages/inputs.py")
    four = with_dimensions(PRESETS["seed000"].build(), n_seq=3, d_model=4, d_qk=4, d_v=3)  # W_Q, W_K [4, 4]
    at.session_state["config"] = replace(four, rope=RoPE())
    at.run()
    before = at.session_state["config"]
    at.number_input(key="inputs_d_qk").set_value(5.0).run()
    assert not at.exception and at.session_state["config"] is before
    assert [plain(e.value) for e in at.warning] == [
        "Dimensions not changed: d_k (columns of W_Q and W_K): 5 leaves each head 5 features, but RoPE turns pairs "
        "of features: a head needs an even width (or RoPE off). Still using d_k 4."]
    assert at.number_input(key="inputs_d_qk").value == 5  # what was typed stays in its box
    at.number_input(key="inputs_d_qk").set_value(6.0).run()
    assert at.session_state["config"].w_q.shape == (4, 6) and at.session_state["config"].rope == RoPE()


def test_a_refused_value_let_go_by_a_change_of_dimensions_is_said():
    """A grid's refused value cannot outlive a change that draws every grid anew (here d_model): the learner is told
    it went, on the page drawn next, rather than finding it gone without a word."""
    at = new_app("pages/inputs.py")
    edit_cells(at, "w_k", {2: {1: "abc"}})
    assert any("'abc', not a number" in plain(e.value) for e in at.error)
    at.number_input(key="inputs_d_model").set_value(3).run()
    assert not at.exception and not at.session_state["errors"]
    said = "The value refused in W_K was let go with this change: the grids show the values in use now."
    assert [plain(w.value) for w in at.warning].count(said) == 1
    at.run()  # said once
    assert said not in [plain(w.value) for w in at.warning]


@pytest.mark.parametrize("page", ["pages/inputs.py", "pages/steps.py", "pages/scaling.py", "pages/masking.py",
                                  "pages/multihead.py", "pages/scores.py"])
def test_the_pages_widgets_sent_back_after_a_run_that_forgot_them_change_nothing(page):
    """A cell committed just after a click on another page comes in a run of this page, with this page's widgets as
    the browser still had them, which the run of the other page had forgotten: Streamlit calls their callbacks again.
    On Inputs & weights the preset was loaded again over the learner's numbers, and each size drew every grid anew
    (dropping the edit that came): a fresh reviewer's tap from Inputs & weights to Step by step, 2 of 6."""
    at = new_app(page)
    edit_cells(at, "w_q" if page == "pages/inputs.py" else "x", {0: {"0": "9"}})
    sent_back = at._tree  # the page's widgets, as the browser still has them after the click (AppTest sends a tree's)
    held = [(w, w.value) for w in widgets(at._tree)]
    at.switch_page("pages/overview.py").run()  # the page clicked: its run forgets this page's widgets
    at._tree = sent_back
    for widget, value in held:  # each sends what it held (it reads the state, which forgot it)
        widget.set_value(value)
    drop_buttons(at._tree)  # a button's click is sent once, never again: not among the widgets sent back
    at.session_state[editor_key(at, "x")] = {"edited_rows": {1: {"1": "7"}}, "added_rows": [], "deleted_rows": []}
    at.switch_page(page).run()  # the late commit, with the address of the page left
    assert not at.exception, at.exception
    cfg = at.session_state["config"]
    first = cfg.w_q[0, 0] if page == "pages/inputs.py" else cfg.x[0, 0]
    assert first == 9.0 and cfg.x[1, 1] == 7.0  # the learner's numbers, and the edit that came


def widgets(node) -> list:
    """Every widget of an AppTest element tree but its buttons, in order."""
    from streamlit.testing.v1.element_tree import Button, Widget

    found = [node] if isinstance(node, Widget) and not isinstance(node, Button) else []
    for child in (getattr(node, "children", None) or {}).values():
        found += widgets(child)
    return found


def drop_buttons(node) -> None:
    """Take the buttons out of an AppTest element tree (AppTest sends every button's state, unclicked; a browser
    sends a button's only with its click)."""
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        node.children = {k: v for k, v in children.items() if getattr(v, "type", "") != "button"}
        for child in node.children.values():
            drop_buttons(child)


def test_a_sentence_of_invisible_characters_gives_no_blank_tokens():
    """A fresh reviewer: U+202E, U+200B, U+0000 and "abc" became 4 tokens, three of them blank labels."""
    at = new_app("pages/inputs.py")
    at.text_input(key="inputs_sentence").input("\u202e \u200b \x00 abc").run()
    [b for b in at.button if b.label == "Use this sentence"][0].click().run()
    assert not at.exception and at.session_state["config"].tokens == ("abc",)
    before = at.session_state["config"]
    at.text_input(key="inputs_sentence").input("\u202e \u200b \x00 \ufeff").run()
    [b for b in at.button if b.label == "Use this sentence"][0].click().run()
    assert not at.exception and at.session_state["config"] is before  # nothing visible: nothing changed
    assert "The sentence has no words to turn into tokens." in [plain(w.value) for w in at.warning]


def test_a_refused_sentence_is_said_under_its_button():
    """A fresh reviewer: 300 words and "Use this sentence": nothing seemed to happen, the refusal was under the page's
    title, 1,500 px above the button. It is said right under the button's row, once."""
    at = new_app("pages/inputs.py")
    before = at.session_state["config"]
    at.text_input(key="inputs_sentence").input(" ".join(f"w{i}" for i in range(300))).run()
    [b for b in at.button if b.label == "Use this sentence"][0].click().run()
    assert not at.exception and at.session_state["config"] is before
    order = [(n.type, getattr(n, "key", None) or plain(getattr(n, "value", "") or ""))
             for n in at.main if n.type in ("button", "warning")]  # the main column's buttons and messages, in order
    said = ("warning", "The sentence has 300 tokens; the cap is 256.")
    assert said in order and order[order.index(said) - 1] == ("button", "inputs_use_sentence"), order
    at.run()
    assert said[1] not in [plain(w.value) for w in at.warning]  # once


def test_a_refused_value_can_be_left_with_reset_to_preset():
    """A fresh reviewer: "abc" typed into X on a fresh page was refused (right), and then Reset to preset and Undo were
    both disabled (the numbers in use were the preset's): the one way out was to find the cell and type it again."""
    at = new_app("pages/inputs.py")
    reset = next(b for b in at.button if b.key == "inputs_reset")
    assert reset.disabled  # nothing to reset
    edit_cells(at, "x", {0: {0: "abc"}})
    reset = next(b for b in at.button if b.key == "inputs_reset")
    assert at.session_state[state.DRAFTS] and not reset.disabled
    reset.click().run()
    assert not at.exception and not at.session_state[state.DRAFTS] and not at.session_state[state.ERRORS]
    assert np.array_equal(at.session_state["config"].x, load_preset(DEFAULT_PRESET).x)
    assert next(b for b in at.button if b.key == "inputs_reset").disabled  # the grid shows the preset again
