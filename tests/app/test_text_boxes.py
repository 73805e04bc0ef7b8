"""The text boxes of the model pages (A real model's sentence and other sentences, A model that writes' prompt, A model
that translates' English sentence), on the tiny checkpoints of tests/: what is pasted stays in the box as pasted; over
the limit the page says so under the box, in the learner's language, naming the box, the length and the limit, and
keeps computing with the last text within it. A fresh reviewer pasted 1,200 characters into "English sentence": with
Streamlit's max_chars the paste was dropped and the old sentence stayed, without a word.

A paste longer than controls.TEXT_KEPT times the limit is cut to that many characters in the box, and said: the
session keeps no more than that of any box (the memory bound)."""

from __future__ import annotations

import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from attn_ui.app import registry, state
from attn_ui.views import generate_views, model_views, translate_views
from attn_ui.widgets import controls

from .. import tiny_bert, tiny_gpt2, tiny_t5
from .apptools import APP, plain, tiny_models


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, str]:
    return tiny_models(tmp_path_factory.mktemp("text_boxes"))


@pytest.fixture(autouse=True)
def operator_models(monkeypatch, dirs):
    monkeypatch.setenv("ATTN_MODEL", dirs["bert"])
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", dirs["gpt2"])
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", dirs["t5"])


def page(file: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page(file).run()
    assert not at.exception, at.exception
    return at


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


def shown(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.info]))


def longest_text(obj: object, seen: set[int] | None = None, depth: int = 0) -> int:
    """The most characters (or bytes, in a protobuf message) any one value reachable from ``obj`` holds: dicts,
    sequences, protobuf messages and objects' attributes, a few levels deep."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 8:
        return 0
    seen.add(id(obj))
    if isinstance(obj, str | bytes):
        return len(obj)
    if isinstance(obj, Message):
        return obj.ByteSize()
    if isinstance(obj, dict):
        items = [*obj.keys(), *obj.values()]
    elif isinstance(obj, list | tuple | set | frozenset):
        items = list(obj)
    elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):  # SessionState is a dataclass with slots
        names = [*getattr(obj, "__dict__", {})] + [n for c in type(obj).__mro__ for n in getattr(c, "__slots__", ())]
        items = [getattr(obj, n, None) for n in names]
    else:
        return 0
    return max((longest_text(i, seen, depth + 1) for i in items), default=0)


# ---- A model that translates: the reviewer's 1,200 characters --------------------------------------------------------


def test_a_sentence_over_the_limit_stays_in_the_box_and_is_said_while_the_last_one_translates():
    at = page(registry.TRANSLATE.file)
    box = at.text_input(key=translate_views.SENTENCE)
    box.input(tiny_t5.SENTENCES[1]).run()
    before = shown(at)
    assert warnings(at) == []
    pasted = ("The dog is tired. " * 70)[:1_200]
    at.text_input(key=translate_views.SENTENCE).input(pasted).run()
    assert not at.exception and not at.error
    assert at.text_input(key=translate_views.SENTENCE).value == pasted  # kept as pasted
    assert warnings(at) == ["English sentence: 1,200 characters, at most 1,000 are read: shorten it. The sentence in "
                            "use is still the last one within the limit: “The dog is tired.”."]
    assert shown(at) == before  # the page still translates the last sentence within the limit
    at.text_input(key=translate_views.SENTENCE).input(pasted[:1_000]).run()  # shortened: read
    assert warnings(at) == [] and shown(at) != before


def test_the_refusal_in_chinese_and_korean():
    for lang, said in (("zh", "英文句子：1,200 个字符，最多读取 1,000 个：请缩短。仍在使用限度内的最后一个句子：“"),
                       ("ko", "영어 문장: 1,200자, 최대 1,000자까지 읽습니다: 줄여 주세요. "
                              "한도 안의 마지막 문장을 계속 사용합니다: “")):
        at = page(registry.TRANSLATE.file, lang)
        at.text_input(key=translate_views.SENTENCE).input("a" * 1_200).run()
        assert len(warnings(at)) == 1 and warnings(at)[0].startswith(said), warnings(at)
        assert translate_views.DEFAULT_SENTENCE in warnings(at)[0]  # the default, still translated


# ---- A model that writes, A real model -------------------------------------------------------------------------------


def test_a_prompt_over_the_limit_stays_in_the_box_and_is_said_while_the_last_one_is_continued():
    at = page(registry.GENERATE.file)
    at.text_input(key=generate_views.PROMPT).input(tiny_gpt2.PROMPTS[1]).run()
    before = shown(at)
    pasted = "word " * 500  # 2,500 characters
    at.text_input(key=generate_views.PROMPT).input(pasted).run()
    assert not at.exception and not at.error
    assert at.text_input(key=generate_views.PROMPT).value == pasted
    assert warnings(at) == ["Prompt: 2,500 characters, at most 2,000 are read: shorten it. The prompt in use is still "
                            "the last one within the limit: “A dog ran”."]
    assert shown(at) == before


def test_a_sentence_and_other_sentences_over_their_limits_stay_and_are_said():
    at = page(registry.MODEL.file)
    at.text_input(key=model_views.SENTENCE).input(tiny_bert.SENTENCE).run()
    before = shown(at)
    long_sentence = "The cat sat. " * 400  # 5,200 characters
    at.text_input(key=model_views.SENTENCE).input(long_sentence).run()
    assert not at.exception and not at.error
    assert at.text_input(key=model_views.SENTENCE).value == long_sentence
    assert warnings(at) == ["Sentence: 5,200 characters, at most 4,000 are read: shorten it. The sentence in use is "
                            "still the last one within the limit: “The cat sat on the mat.”."]
    assert shown(at) == before
    others = at.text_area(key=model_views.OTHERS)
    lines = "\n".join(["A dog slept on the rug all day long."] * 80)  # 2,959 characters
    others.input(lines).run()
    assert not at.exception and not at.error
    assert at.text_area(key=model_views.OTHERS).value == lines
    assert warnings(at)[1:] == [f"Other sentences, one per line (at most 8): {len(lines):,} characters, at most 2,000 "
                                "are read: shorten it. Still comparing yours with 3 other sentences, those typed "
                                "before."]


# ---- the memory bound: a paste far over the limit -------------------------------------------------------------------


def test_a_paste_past_ten_times_the_limit_is_cut_to_that_said_and_nothing_longer_is_kept():
    at = page(registry.TRANSLATE.file)
    kept = controls.TEXT_KEPT * translate_views.SENTENCE_MOST
    at.text_input(key=translate_views.SENTENCE).input("ab" * 500_000).run()  # a megabyte
    assert not at.exception and not at.error
    assert at.text_input(key=translate_views.SENTENCE).value == ("ab" * 500_000)[:kept]
    assert warnings(at) == [f"English sentence: 1,000,000 characters, at most 1,000 are read: shorten it. The box "
                            f"keeps only the first {kept:,} of them. The sentence in use is still the last one "
                            f"within the limit: “{translate_views.DEFAULT_SENTENCE}”."]
    at.run()  # said as long as the box holds the cut text
    assert warnings(at)[0].startswith("English sentence: 1,000,000 characters") and "first 10,000" in warnings(at)[0]
    assert kept <= longest_text(at._session_state._state) <= kept + 100  # the box's text, nothing of the megabyte
    at.text_input(key=translate_views.SENTENCE).input("b" * 1_500).run()  # changed: a plain refusal again
    assert warnings(at)[0].startswith("English sentence: 1,500 characters") and "keeps only" not in warnings(at)[0]
    assert at.session_state[state.TEXTS_CUT] == {}


def test_a_text_set_since_a_cut_paste_is_told_its_own_length():
    """A lesson or a link sets the box's text (the kept store) without its on_change: the cut noted before is not
    said of it."""
    at = page(registry.TRANSLATE.file)
    at.text_input(key=translate_views.SENTENCE).input("c" * 20_000).run()
    assert "keeps only" in warnings(at)[0]
    at.session_state[state.KEPT][translate_views.SENTENCE] = "d" * 1_500
    at.run()
    assert at.text_input(key=translate_views.SENTENCE).value == "d" * 1_500
    assert warnings(at)[0].startswith("English sentence: 1,500 characters") and "keeps only" not in warnings(at)[0]


# ---- the other boxes: a model's name, Inputs & weights' sentence, one cell's Value (a reviewer: up to 25 MB kept) ---


MEGABYTE = "ab" * 500_000  # 1,000,000 characters


@pytest.mark.parametrize(("file", "key", "source_key"), [
    (registry.MODEL.file, model_views.OTHER, model_views.SOURCE),
    (registry.GENERATE.file, generate_views.OTHER, generate_views.SOURCE),
    (registry.TRANSLATE.file, translate_views.OTHER, translate_views.SOURCE)])
def test_a_megabyte_pasted_as_a_models_name_is_cut_said_and_not_read(file, key, source_key):
    at = page(file)
    before, label = shown(at), at.text_input(key=key).label
    at.text_input(key=key).input(MEGABYTE).run()
    assert not at.exception and not at.error
    kept = controls.TEXT_KEPT * model_views.MODEL_NAME_MOST
    assert at.text_input(key=key).value == MEGABYTE[:kept]
    said = [w for w in warnings(at) if w.startswith(label)]
    assert len(said) == 1 and said[0].startswith(
        f"{label}: 1,000,000 characters, at most 500 are read: shorten it. The box keeps only the first 5,000 of "
        "them. The page still reads "), said
    assert source_key not in at.session_state or not at.session_state[source_key]  # the operator's model, still
    assert shown(at) == before
    at.run()  # (the value the browser sent is Streamlit's until the next run, as in the test above)
    assert longest_text(at._session_state._state) <= kept + 100  # nothing of the megabyte past the box's text


def test_a_megabyte_pasted_as_inputs_sentence_is_cut_said_and_the_button_reads_the_last_one_within():
    from attn_core import tokenize

    at = page(registry.INPUTS.file)
    at.text_input(key="inputs_sentence").input("the cat sat").run()
    at.text_input(key="inputs_sentence").input(MEGABYTE).run()
    assert not at.exception and not at.error
    kept = controls.TEXT_KEPT * 4_000
    assert at.text_input(key="inputs_sentence").value == MEGABYTE[:kept]
    assert [w for w in warnings(at) if w.startswith("…or type a sentence")] == [
        "…or type a sentence: 1,000,000 characters, at most 4,000 are read: shorten it. The box keeps only the first "
        "40,000 of them. “Use this sentence” still reads the last sentence within the limit: “the cat sat”."]
    at.run()
    assert longest_text(at._session_state._state) <= kept + 100
    at.button(key="inputs_use_sentence").click().run()
    assert at.session_state[state.CONFIG].tokens == tuple(tokenize("the cat sat"))


def test_a_megabyte_pasted_as_one_cells_value_is_cut_said_and_set_reads_the_last_value_within():
    from .apptools import app_on, too_large_for_a_grid

    cfg = too_large_for_a_grid()
    at = app_on(cfg, registry.INPUTS.file)
    box = next(t for t in at.text_input if t.key.startswith("w_q_cell_value_0_0_"))
    box.input(MEGABYTE).run()
    assert not at.exception and not at.error
    box = next(t for t in at.text_input if t.key.startswith("w_q_cell_value_0_0_"))
    assert box.value == MEGABYTE[:10_000]
    assert [w for w in warnings(at) if w.startswith("Value")] == [
        "Value: 1,000,000 characters, at most 1,000 are read: shorten it. The box keeps only the first 10,000 of them. "
        f"Set still reads the last value within the limit: “{float(cfg.w_q[0, 0])!r}”."]
    at.run()
    assert longest_text(at._session_state._state) <= 10_100
    next(b for b in at.button if b.key == f"{box.key}_set").click().run()
    assert not at.exception and (at.session_state[state.CONFIG].w_q == cfg.w_q).all()  # the value it had
