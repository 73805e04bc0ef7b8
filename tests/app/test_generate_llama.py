"""A model that writes with a Llama: the tiny grouped-query Llama of tests/tiny_llama.py (4 query heads, 2 key/value
heads, RoPE) as the operator's causal model: the next token, a short greedy text and a head switched off against
transformers' LlamaForCausalLM in float64 (tests/models/reference_llama.npz), the heads grouped by their shared
key/value head, and a head opened in the explorer with its RoPE and grouped K/V, which every explorer page then
reads without an exception."""

from __future__ import annotations

import numpy as np
import pytest

import attn_core
from attn_ui.app import registry

from .. import tiny_llama
from ..models.test_llama import REF
from .apptools import new_app, plain
from .test_generate import GENERATE, bar_charts, softmax, text_of, top_of_both

PROMPT = tiny_llama.PROMPTS[0]


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory) -> str:
    return str(tiny_llama.build(tmp_path_factory.mktemp("llama") / "llama", "llama"))


@pytest.fixture(autouse=True)
def operator_model(monkeypatch, llama_dir):
    """The server's causal model is the tiny Llama (the reference's), read from its folder, offline."""
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", llama_dir)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def page():
    at = new_app(GENERATE)
    at.text_input(key="gen_prompt").set_value(PROMPT).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_the_page_says_the_llama_attention_and_groups_the_heads():
    at = page()
    said = text_of(at)
    assert "Its attention: RoPE turns each head's queries and keys by their positions (base 10,000); grouped-query " \
           "attention (GQA): 4 query heads share 2 K/V heads." in said
    assert "Heads 0–1 share K/V head 0 · heads 2–3 share K/V head 1." in said
    assert at.selectbox(key="gen_head").options == ["0 (K/V 0)", "1 (K/V 0)", "2 (K/V 1)", "3 (K/V 1)"]
    view = [c for c in at.get("vega_lite_chart") if '"rule"' in c.proto.spec and '"label"' in c.proto.spec]
    assert view, "the model view's lines between the heads sharing a K/V head, and their names"
    want = softmax(REF["llama_p0_logits"][-1])
    bars = bar_charts(at)["Next token at T = 1"]
    np.testing.assert_allclose(bars["probability"], np.sort(want)[::-1][:10], rtol=0, atol=1e-12)


def test_the_attention_words_join_in_chinese_with_a_chinese_semicolon(llama_dir, monkeypatch):
    """The parts of "Its attention: …" are joined as the language joins them (a second reviewer read "; " in the
    Chinese sentence). (The page itself in Chinese: AppTest formats a select box's options outside the run, in
    English, and cannot set its widgets there.)"""
    import attn_models
    from attn_ui.app import i18n
    from attn_ui.views import generate_views

    monkeypatch.setattr(i18n, "language", lambda: "zh")
    said = generate_views.attention_words(attn_models.load(llama_dir))
    assert "）；" in said and ";" not in said, said


def test_a_short_write_and_a_head_switched_off_give_transformers_numbers(llama_dir):
    import attn_models

    lm = attn_models.load(llama_dir)
    at = page()
    at.number_input(key="gen_n_new").set_value(4).run()
    at.button(key="gen_write").click().run()
    assert not at.exception and not at.error
    first = "".join(lm.piece(int(i)) for i in REF["llama_p0_greedy"][:2])  # transformers' greedy tokens ("=k", then
    assert lm.generate(PROMPT, 4).ids.tolist() == REF["llama_p0_greedy"][:4].tolist()  # bytes of one character)
    assert any(plain(m.value).replace("**", "").replace("\u200b", "").startswith(PROMPT + first) for m in at.markdown)
    assert "4 tokens written, greedy: each time the most probable token." in text_of(at)
    at.multiselect(key="gen_ablate").select("L1 · H2").run()
    assert not at.exception and not at.error
    trained, off = softmax(REF["llama_p0_logits"][-1]), softmax(REF["llama_p0_ablate_one_mean_logits"][-1])
    bars = bar_charts(at)["Next token at T = 1, as trained and with heads off"]
    ids = top_of_both(trained, off)
    np.testing.assert_allclose(bars["heads off"], off[ids], rtol=0, atol=1e-9)


def test_a_head_opened_in_the_explorer_carries_rope_and_the_grouped_heads():
    at = page()
    at.selectbox(key="gen_layer").set_value(1).run()
    at.selectbox(key="gen_head").set_value(3).run()
    at.button(key="gen_open").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.rope == attn_core.RoPE(10000.0, "half") and cfg.n_kv_heads == 2 and cfg.n_heads == 4
    assert cfg.mask_kind == "causal" and cfg.origin["family"] == "llama" and cfg.w_k.shape == (17, 8)
    np.testing.assert_allclose(attn_core.run(cfg).heads[3].weights, REF["llama_p0_attentions"][1, 3], rtol=0,
                               atol=1e-9)
    for p in registry.PAGES:
        at.switch_page(p.file).run()
        assert not at.exception, (p.file, [e.value for e in at.exception])
    at.switch_page(GENERATE).run()
    assert not at.exception and not at.error
    assert "Edit it on Inputs & weights or Step by step" in text_of(at)  # the model's own numbers: not edited
