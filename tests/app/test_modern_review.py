"""AppTest of what a review of the Modern attention page found: the RoPE presets on an odd head width (seed 000's
d_k = 3), a preset the core refuses, the page named for cross-attention, the comparisons when a query has no key left,
and ALiBi's title and sentence with and without the causal mask. Every number is computed here with numpy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset
from attn_ui.app import state
from attn_ui.views import modern_views as mv

from .apptools import new_app, plain
from .test_modern_page import np_softmax

PAGE = "pages/modern.py"


def open_with(cfg, lang: str | None = None) -> AppTest:
    at = new_app()
    if lang:
        at.session_state[state.LANG] = lang
    at.session_state["config"] = cfg
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def press(at: AppTest, name: str) -> AppTest:
    at.button(key=f"modern_preset_{name}").click().run()
    assert not at.exception
    return at


def said(at: AppTest) -> str:
    return plain(" ".join(m.value for m in at.markdown))


def show(at: AppTest, section: str) -> AppTest:
    at.session_state["kept"][mv.SECTION] = section
    at.run()
    assert not at.exception
    return at


# ---- 1 · the RoPE presets on an odd head width --------------------------------------------------------------------

WIDENED = ("RoPE turns pairs of features: each head was widened from 3 to 4 (new columns of W_Q and W_K filled as on "
           "Inputs & weights). Undo takes it back.")


@pytest.mark.parametrize("name, base", [("llama", 10000.0), ("qwen", 1_000_000.0)])
def test_a_rope_preset_on_seed000_widens_each_head_and_applies_everything(name, base):
    """Seed 000 has d_k = 3: the preset showed the core's refusal and applied nothing (not even the causal mask)."""
    seed = load_preset("seed000")
    at = open_with(seed)
    press(at, name)
    c = at.session_state["config"]
    assert not at.error
    assert c.rope is not None and c.rope.base == base and c.mask_kind == "causal"
    assert c.w_q.shape == (4, 4) and c.w_k.shape == (4, 4) and c.w_v.shape == seed.w_v.shape
    assert np.array_equal(c.w_q[:, :3], seed.w_q) and np.array_equal(c.w_k[:, :3], seed.w_k)
    assert np.array_equal(c.x, seed.x) and np.array_equal(c.w_v, seed.w_v)
    assert (c.window == 2) == (name == "llama") and c.qk_norm == (name == "qwen")
    assert WIDENED in [plain(i.value) for i in at.info]
    captions = " ".join(plain(c.value) for c in at.caption)  # it said the preset "keeps X, W_Q and W_O"
    assert "keeps X, W_O and every value of W_Q" in captions and "keeps X, W_Q and W_O" not in captions
    at.button(key="frame_undo").click().run()  # one change: Undo brings seed 000 back whole
    back = at.session_state["config"]
    assert back.rope is None and back.w_q.shape == (4, 3) and back.mask_kind == seed.mask_kind
    assert WIDENED not in [plain(i.value) for i in at.info]


def test_qwen_after_bloom_leaves_no_alibi_and_no_error():
    """Qwen 3 after BLOOM on seed 000 left BLOOM's ALiBi on beside the refusal."""
    at = open_with(load_preset("seed000"))
    press(at, "bloom")
    assert at.session_state["config"].alibi
    press(at, "qwen")
    c = at.session_state["config"]
    assert not at.error and not c.alibi and c.qk_norm and c.rope is not None
    press(at, "off")
    assert not at.error and not at.session_state["config"].modern
    assert WIDENED not in [plain(i.value) for i in at.info]  # said once, for the change that widened


def test_a_preset_in_chinese_says_the_widening_in_chinese():
    at = open_with(load_preset("seed000"), "zh")
    press(at, "llama")
    assert not at.error
    assert any("RoPE 按特征成对旋转：每个头的宽度已从 3 加宽到 4" in plain(i.value) for i in at.info)


def test_a_refused_preset_says_it_was_not_applied(monkeypatch):
    """Whatever the core refuses in a preset, the page says the preset was not applied, and nothing of it is."""
    real = mv.preset_changes
    monkeypatch.setattr(mv, "preset_changes", lambda *a: real(*a) | {"window": 0})
    at = open_with(load_preset("seed002_causal"))
    before = at.session_state["config"]
    press(at, "llama")
    assert at.session_state["config"] is before
    assert [plain(e.value) for e in at.error] == [
        "Llama / Mistral was not applied (nothing of it changed): window: must be a whole number of at least 1, "
        "got 0."]


def test_the_core_refusal_of_rope_says_what_to_do():
    at = open_with(load_preset("seed000"))
    at.toggle(key=mv.ROPE_ON).set_value(True).run()
    assert [plain(e.value) for e in at.error] == [
        "RoPE turns pairs of features, so each head of W_Q needs an even width; it is 3: widen each head (d_k) by "
        "one, to 4."]
    at.button(key="modern_widen").click().run()  # the same change the presets make
    assert not at.error and at.session_state["config"].w_q.shape == (4, 4)


# ---- 2 · cross-attention is switched on Inputs & weights ---------------------------------------------------------

def test_cross_attention_points_to_inputs_and_weights():
    at = open_with(load_preset("cross_translation"))
    info = plain(at.info[0].value)
    assert "switch back to X on Inputs & weights (“The queries come from”)" in info and "Score functions" not in info
    assert [link.proto.label for link in at.main.get("page_link")] == ["Inputs & weights"]
    assert [link.proto.page for link in at.main.get("page_link")] == ["inputs"]


def test_another_score_function_points_to_score_functions():
    at = open_with(load_preset("additive"))
    assert "switch back to the dot product on Score functions" in plain(at.info[0].value)
    assert [link.proto.label for link in at.main.get("page_link")] == ["Score functions"]


# ---- 3 · comparisons when a query has no key left ----------------------------------------------------------------

def only_first_key(cfg):
    """Seed 000 with a custom mask that lets every query see key 0 only."""
    mask = np.zeros((3, 3), bool)
    mask[:, 0] = True
    return replace(cfg, mask_kind="custom", custom_mask=mask)


def test_every_key_masked_says_there_is_nothing_to_compare():
    """With every key masked the page said the weights "differ by up to 0 (query 0: input1, key 0: input1)"."""
    cfg = replace(load_preset("seed000"), mask_kind="custom", custom_mask=np.zeros((3, 3), bool), alibi=True)
    at = open_with(cfg)
    text = said(at)
    assert "differ by up to" not in text
    assert "No key is left for any query (every row of weights is 0): there are no weights to compare" in text
    show(at, mv.ONLINE)
    text = said(at)
    assert "largest difference" not in text and "there is nothing to compare" in text
    assert "has no key left: m stays −∞ and l 0 after every tile" in text


def test_rows_with_no_key_are_left_out_of_the_comparison():
    """The window (|i − j| < 1 without the causal mask) leaves queries 1 and 2 no key: they are named and left out;
    the difference is computed on query 0 alone (here 0: it sees key 0 with and without the window)."""
    cfg = replace(only_first_key(load_preset("seed000")), window=1)
    at = open_with(cfg)
    text = said(at)
    assert ("these weights are the same: the largest difference is 0" in text and "differ by up to" not in text
            and "(the tutorials' attention on these numbers, with the mask drawn on Masking)" in text)
    assert "No key is left for queries 1: input2, 2: input3 (their rows of weights are all 0): they are not compared" \
        in text
    show(at, mv.ONLINE)
    assert "No key is left for queries 1: input2, 2: input3 (l = 0, their output rows 0 by definition)" in said(at)


def test_the_difference_is_the_one_numpy_computes_on_the_rows_compared():
    base = load_preset("seed000")
    mask = np.ones((3, 3), bool)
    mask[1] = False  # query 1 sees no key
    cfg = replace(base, mask_kind="custom", custom_mask=mask, softcap=0.5)
    at = open_with(cfg)
    s = (base.x @ base.w_q) @ (base.x @ base.w_k).T / np.sqrt(3)  # [3, 3]
    plain_w, capped_w = np_softmax(s), np_softmax(0.5 * np.tanh(s / 0.5))
    diff = np.abs(plain_w - capped_w)[[0, 2]]
    i, j = np.unravel_index(np.argmax(diff), diff.shape)
    text = said(at)
    assert f"differ by up to **{diff.max():.4g}** (query {[0, 2][i]}: input{[0, 2][i] + 1}, key {j}: " in text
    assert "No key is left for query 1: input2 (its row of weights is all 0): it is not compared." in text


# ---- 4 · ALiBi: a bias, a penalty or a bonus as the mask has it --------------------------------------------------

def test_alibi_without_the_causal_mask_says_later_keys_are_favoured_by_the_numbers_shown():
    at = show(open_with(replace(load_preset("seed000"), alibi=True)), mv.ALIBI_S)
    assert [s.value for s in at.subheader] == ["ALiBi: a bias by distance"]
    m = 2.0 ** -8  # one head: m_0 = 2^(−8/1)
    text = said(at)
    assert f"a key before its query is penalised, the farther the more: down to −{2 * m:.4g} (query 2: input3, key " \
           "0: input1)" in text
    assert f"A key after its query is favoured, the farther the more: up to +{2 * m:.4g} (query 0: input1, key 2: " \
           "input3)" in text
    assert text.count("Here, ") == 1  # the two sentences say "Here" once


def test_alibi_with_the_causal_mask_favours_no_key():
    at = show(open_with(replace(load_preset("seed000"), alibi=True, mask_kind="causal")), mv.ALIBI_S)
    text = said(at)
    assert "a key before its query is penalised" in text and "No query sees a key after it, so no key is favoured" \
        in text and "favoured, the farther" not in text


# ---- 5 · the sentence under the weights says what is applied and what is compared --------------------------------

def weights_sentence(at: AppTest) -> str:
    """The Markdown right after the weights heatmap's block: the sentence about them."""
    texts = [plain(m.value) for m in at.markdown]
    return next(t for t in texts if "tutorials'" in t or "教程" in t)


def causal_weights(cfg, s: np.ndarray) -> np.ndarray:
    return np_softmax(np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf))


def test_the_causal_mask_alone_says_these_are_the_tutorials_weights_with_the_mask():
    """With only the causal mask on, the page said "No option that changes a score is on: these are the tutorials'
    weights", under weights that are not the tutorials' (those have no mask)."""
    base = load_preset("seed000")
    at = open_with(base)
    at.toggle(key=mv.CAUSAL).set_value(True).run()
    s = (base.x @ base.w_q) @ (base.x @ base.w_k).T / np.sqrt(3)
    assert not np.allclose(causal_weights(base, s), np_softmax(s), atol=1e-3)  # the mask changes the weights
    assert weights_sentence(at) == ("RoPE, QK-norm, ALiBi, the window and the cap are off: these are the tutorials' "
                                    "weights, with the causal mask. Switch one on above.")
    at.session_state[state.LANG] = "zh"
    at.run()
    assert "因果掩码" in weights_sentence(at) and "Switch" not in weights_sentence(at)


@pytest.mark.parametrize("name", ["gemma", "llama"])
def test_the_comparison_with_the_causal_mask_says_it_keeps_the_mask_and_its_number_is_against_the_masked_weights(name):
    base = load_preset("seed000")
    at = press(open_with(base), name)
    c = at.session_state["config"]
    text = weights_sentence(at)
    assert text.startswith("With RoPE, QK-norm, ALiBi, the window and the cap off (the tutorials' attention on these "
                           "numbers, with the causal mask), these weights differ by up to **")
    # the figure: against the causally masked weights of the seeds' attention (one head each preset here)
    w_k = c.w_k[:, :c.d_k]
    s = (c.x @ c.w_q[:, :c.d_q]) @ (c.x @ w_k).T / np.sqrt(c.d_q)
    shown = float(text.split("**")[1])
    modern = at.session_state["config"]
    got = mv.trace(modern).heads[0].weights
    assert shown == float(f"{np.abs(got - causal_weights(c, s)).max():.4g}")
    at.session_state[state.LANG] = "zh"
    at.run()
    assert "因果掩码" in weights_sentence(at)


def test_rope_on_an_odd_width_says_rope_is_on_but_not_applied():
    at = open_with(load_preset("seed000"))
    at.toggle(key=mv.ROPE_ON).set_value(True).run()
    assert at.toggle(key=mv.ROPE_ON).value and at.session_state["config"].rope is None
    text = weights_sentence(at)
    assert "No option that changes a score is on" not in text
    assert text == ("RoPE is switched on but not applied until each head of W_Q and W_K has an even width (the Widen "
                    "button above). QK-norm, ALiBi, the window and the cap are off: these are still the tutorials' "
                    "weights.")
    assert [b.label for b in at.button if b.key == "modern_widen"] == ["Widen the heads to 4"]
    at.session_state[state.LANG] = "zh"
    at.run()
    assert "RoPE" in weights_sentence(at) and "Widen" not in weights_sentence(at)


def gemma_at(lang: str | None = None) -> AppTest:
    return press(open_with(load_preset("seed000"), lang), "gemma")


@pytest.mark.parametrize("typed, words", [
    (0.0, "Cap: 0 is not above 0: type a number above 0."),
    (-1.0, "Cap: -1 is not above 0: type a number above 0."),
    (None, "Cap holds no number that can be read: type a number above 0."),
])
def test_the_cap_box_refuses_by_its_label_keeps_what_was_typed_and_says_the_cap_in_use(typed, words):
    at = gemma_at()
    cap = at.session_state["config"].softcap
    at.number_input(key=mv.CAP).set_value(typed).run()
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [f"{words} Still using the cap {cap:g}."]
    assert at.number_input(key=mv.CAP).value == typed  # an empty box stays empty
    assert at.session_state["config"].softcap == cap


def test_the_cap_box_refuses_in_chinese():
    at = gemma_at("zh")
    at.number_input(key=mv.CAP).set_value(0.0).run()
    message = plain(at.error[0].value)
    assert message.startswith("上限") and "softcap" not in message and "none" not in message


def test_a_cap_that_changes_nothing_says_the_weights_are_the_same_and_names_no_cell():
    at = gemma_at()
    at.number_input(key=mv.CAP).set_value(1e308).run()
    text = weights_sentence(at)
    assert text == ("With RoPE, QK-norm, ALiBi, the window and the cap off (the tutorials' attention on these numbers, "
                    "with the causal mask), these weights are the same: the largest difference is 0.")
