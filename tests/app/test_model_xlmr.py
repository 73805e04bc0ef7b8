"""A real model in Chinese and Korean: the page opens on the multilingual default (an XLM-RoBERTa), names it when
it is not on this machine, and runs a tiny random XLM-RoBERTa (tests/tiny_xlmr.py) named by the operator."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import attn_models
from attn_ui.app import registry

from .. import tiny_xlmr
from .apptools import APP, plain

MODEL = registry.MODEL.file


def page(lang: str, sentence: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page(MODEL).run()
    if sentence is not None:
        at.text_input(key="model_sentence").input(sentence).run()
    assert not at.exception, at.exception
    return at


def shown(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info]))


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No network and an empty Hugging Face cache; no ATTN_MODEL."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("ATTN_MODEL", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


@pytest.mark.parametrize(("lang", "default"), [
    ("zh", attn_models.MULTILINGUAL_MODEL), ("ko", attn_models.MULTILINGUAL_MODEL), ("en", attn_models.DEFAULT_MODEL),
])
def test_the_page_opens_on_the_languages_default_and_says_it_is_not_here(offline, lang, default):
    at = page(lang)
    text = shown(at)
    assert default in text  # the model it tried, named
    other = ({attn_models.MULTILINGUAL_MODEL, attn_models.DEFAULT_MODEL} - {default}).pop()
    assert other not in text
    box = at.text_input(key="model_other")
    assert box.placeholder == default


@pytest.mark.parametrize(("lang", "sentence", "pieces"), [
    ("ko", "어텐션은 트랜스포머의 핵심입니다",
     ["<s>", "▁어텐션", "은", "▁트랜스포머", "의", "▁핵심", "입니다", "</s>"]),
    ("zh", "注意力很重要", ["<s>", "▁注意", "力", "很", "重要", "</s>"]),
])
def test_the_operators_xlm_roberta_reads_the_sentence_in_real_pieces(tmp_path, monkeypatch, lang, sentence, pieces):
    folder = tiny_xlmr.build(tmp_path / "xlmr")
    monkeypatch.setenv("ATTN_MODEL", str(folder))
    at = page(lang, sentence)
    model = attn_models.load(str(folder))
    out = model.forward(sentence)
    assert list(out.tokens) == pieces
    text = shown(at)
    assert all(p in text for p in pieces[1:-1]), text[:2000]
    at.button(key="model_open").click().run()  # the head opens in the explorer: its tokens, its weights
    assert not at.exception, at.exception
    cfg = at.session_state["config"]
    assert list(cfg.tokens) == pieces
    assert np.array_equal(cfg.x[:, :-1], out.hidden_states[0])


def test_the_page_says_tokens_and_the_families_specials_not_wordpiece(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_MODEL", str(tiny_xlmr.build(tmp_path / "xlmr")))
    at = page("en", "注意力很重要")
    text = shown(at)
    assert "WordPiece" not in text and "[CLS]" not in text
    assert "**6 tokens** (with <s> and </s>; at most 40) · <s> · ▁注意 · 力 · 很 · 重要 · </s>" in text
    assert "vocabulary 41 sentencepiece tokens" in text
    assert at.number_input(key="model_pad_to").help.startswith("Append <pad> tokens up to this length")
    at.text_area(key="model_others").input("注意" * 45).run()  # 47 tokens: named and left out
    assert "Other sentence 1 is 47 tokens; the model reads at most 40: it is left out until you shorten it." in \
        shown(at)
