"""The app in 简体中文 and 한국어 (issue 18): every page, every lesson, the picker, the address, the browser's language.

Each page is run in each language, under presets that between them show every part of every page (dot
self-attention, cross-attention, an additive score with a causal mask, several heads), and everything the page
shows a reader is collected (attn_ui's own collector, tests/app/test_words.shown: text, labels, options, help,
tables, chart titles and tooltips). No English may be left in it but what stays English by design: formulas,
matrix names, numbers, token labels, the names of models and of the tutorials' titles.
"""

from __future__ import annotations

import html
import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attn_core import PRESETS
from attn_ui import lessons
from attn_ui.app import address, i18n, registry, state
from attn_ui.lessons import lesson_ui
from attn_ui.views import model_output, model_views, share_ui

from .. import minilm
from .apptools import APP, edit_cells, plain
from .test_learn import model_of, predict
from .test_words import TUTORIALS, shown

LANGS = [code for code in i18n.LANGUAGES if code != i18n.DEFAULT]  # every language but English
TITLES = {"en": "Step by step", "zh": "逐步计算", "ko": "단계별 계산"}  # the Step by step page, as the glossary says

# English that stays English in every language: names, not sentences
NAMES = [
    *TUTORIALS, "Transformer Explainer", "BertViz", "llm-viz", "all-MiniLM-L6-v2", "sentence-transformers",
    "Hugging Face", "Bahdanau", "Luong", "Vaswani", "Attention Is All You Need", "PyTorch", "NumPy", "JSON", "CSV",
    "BERT", "Streamlit", "English", "The cat sat on the mat.", "the cat sat on the mat",  # the model lesson's tokens
    "le chat dort", "the cat sleeps", "one-hot",
    "alignment vectors", "attention sink", "attention rollout",  # the field's English term, beside its translation
    "Quantifying Attention Flow in Transformers",  # Abnar & Zuidema 2020's title (attention rollout)
    "Python", "hf download",  # a command to type
    "dog bites man", "man bites dog",  # a lesson's sentence
]
ENGLISH_WORD = re.compile(r"[A-Za-z][a-z']+")
# a lone English word that is never a name, a symbol or a unit
ENGLISH_ONLY = {"the", "of", "and", "is", "to", "in", "an", "on", "for", "with", "each", "every", "this", "that",
                "its", "by", "from", "are", "be", "it", "as", "or", "not", "one", "at", "than", "into", "what", "which",
                "head", "heads", "query", "key", "keys", "value", "values", "weight", "weights", "score", "scores",
                "token", "tokens", "row", "rows", "column", "columns", "mask", "masked", "output", "input", "undo",
                "lesson", "page", "shown", "none", "custom", "causal", "padding", "seed", "preset", "layer", "sentence"}
LATEX = re.compile(r"\$\$.+?\$\$|\$[^$]+\$|\\\(.+?\\\)", re.S)


@pytest.fixture(autouse=True)
def folders_allowed(monkeypatch):
    """These tests name checkpoint folders (made here, or all-MiniLM-L6-v2's): the operator's switch on."""
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")


def english_left(texts: list[str], allowed: list[str]) -> list[str]:
    """The texts in which English is left: two words in a row, or a word that is only English ("the", "heads"),
    after formulas, code, addresses and the allowed names are taken out."""
    allowed = sorted({a for a in allowed if a}, key=len, reverse=True)
    bad = []
    for t in texts:
        s = LATEX.sub(" ", t)
        s = re.sub(r"`[^`]*`|https?://\S+|:material/[a-z_]+:|\\[A-Za-z]+", " ", s)
        for name in allowed:  # a whole name, not the letters of a longer word ("on" in "secondary")
            s = re.sub(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", " ", s)
        words = re.split(r"([A-Za-z][A-Za-z_'0-9]*)", s)
        run: list[str] = []
        for i, piece in enumerate(words):
            if i % 2:  # a word
                run.append(piece)
            elif piece.strip(" ") or i == len(words) - 1:  # anything but a space between two words ends the run
                if _is_phrase(run):
                    bad.append(f"{' '.join(run)!r} in {t[:200]!r}")
                    break
                run = []
    return bad


#: each language's own script: one on another language's page (Chinese on a Korean page) came from a cache keyed
#: without the language; the picker's own names are the one exception
SCRIPTS = {"zh": re.compile(r"[\u4e00-\u9fff]"), "ko": re.compile(r"[\uac00-\ud7a3]")}


def other_language(texts: list[str], lang: str) -> list[str]:
    others = [rx for code, rx in SCRIPTS.items() if code != lang]
    return [t for t in texts if any(rx.search(t.replace("中文", "").replace("한국어", "")) for rx in others)]


def _is_phrase(run: list[str]) -> bool:
    words = [w for w in run if len(w) > 1 and not re.search(r"[_\d]", w) and not w.isupper()]  # not n_heads, input2
    return len(words) >= 2 or any(w.lower() in ENGLISH_ONLY for w in words)


MODEL_WORDS = "The cat sat on the mat because it was tired .".split()  # the model's tokens, listed one by one
#: the sentences a model's input is compared with (A real model's defaults, a lesson's): English, as the model is
OTHER_SENTENCES = [*model_output.OTHERS, lessons.MODEL_OTHER, lessons.MASKED_SENTENCE]
SENTENCES = [" ".join(p.build().tokens) for p in PRESETS.values()]  # the examples' sentences, quoted as they are


def allowed_names(at: AppTest) -> list[str]:
    cfg = at.session_state[state.CONFIG]
    source = [str(at.session_state[model_views.SOURCE])] if model_views.SOURCE in at.session_state else []
    return NAMES + SENTENCES + source + list(cfg.tokens) + list(cfg.y_tokens or ())


def readable(at: AppTest) -> list[str]:
    """What the page shows a reader (test_words.shown), but the token grid's column key "token" (the grid shows
    its column_config label, translated, which AppTest does not report) and the frame's style and script for the
    page's language (attn_ui.shell.frame.page_language: markup, not text)."""
    return [t for t in shown(at) if t != "token" and not t.startswith(("<style>", "<script"))]


def open_in(lang: str, preset: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[state.LANG] = lang
    at.run()
    if preset:
        at.switch_page(registry.INPUTS.file).run()
        at.selectbox(key="inputs_preset").set_value(preset).run()
        assert at.session_state[state.PRESET] == preset
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_english_check_finds_english():
    assert english_left(["注意力权重 of the query"], []) and english_left(["Drag a slider below"], [])
    assert english_left(["Decimals shown"], []) and english_left(["头 heads"], [])
    assert not english_left(["查询 q 与键 k 的点积 $QK^\\top$，W_Q 与 X"], [])
    assert not english_left(["词元 the cat", "Bahdanau 加性"], ["the cat", "Bahdanau"])


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("preset", ["seed000", *(pytest.param(p, marks=pytest.mark.full) for p in (
    "seed002_causal", "seed003_heads", "cross_translation", "additive"))])  # the other presets: the full tier
def test_every_page_speaks_the_language(lang: str, preset: str):
    at = open_in(lang, preset)
    bad = {}
    for page in registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (lang, page.name, [e.value for e in at.exception])
        if left := english_left(readable(at), allowed_names(at)) + other_language(readable(at), lang):
            bad[page.name] = left[:8]
    assert not bad, bad


@pytest.mark.parametrize("lang", ["zh", pytest.param("ko", marks=pytest.mark.full)])  # ko: the full tier
def test_every_lesson_speaks_the_language(lang: str):
    """Each lesson as it opens, then its reveal after the right answer (the numbers, the charts, the explanation);
    the real-model lesson on all-MiniLM-L6-v2's own weights (tests/minilm)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[state.LANG] = lang
    at.session_state[model_views.SOURCE] = str(minilm.folder())
    at.run()
    at.switch_page(registry.LEARN.file).run()
    bad = {}
    for lesson in lessons.LESSONS:
        at.session_state[lesson_ui.LESSON] = lesson.key
        if lesson.needs_model:  # all-MiniLM-L6-v2, the tiny masked-language model for a lesson with a [MASK], or
            at.session_state[minilm.source_key(lesson)] = minilm.lesson_source(lesson.key)  # a tiny GPT-2 or T5
        at.run()
        assert not at.exception, (lesson.key, [e.value for e in at.exception])
        title = i18n.catalog(lang).gettext(lesson.title)
        assert any(title in h.value for h in at.header), (lesson.key, title)
        allowed = allowed_names(at) + (MODEL_WORDS + OTHER_SENTENCES if lesson.needs_model else [])
        if lesson.family in ("causal", "translator"):  # what the model wrote (its next word, its translation)
            facts = lessons.solved(lesson.key, model_of(lesson)).solution.facts
            said = [str(facts[k]) for k in ("next", "out", "translation", "source") if k in facts]
            allowed += [word for text in said for word in text.split()]
        asked = english_left(readable(at), allowed)
        predict(at, lesson, lessons.solved(lesson.key, model_of(lesson)).solution.answer)
        assert not at.exception, (lesson.key, [e.value for e in at.exception])
        assert at.success, (lesson.key, "no reveal")  # the right answer, said so
        if left := asked + english_left(readable(at), allowed):
            bad[lesson.key] = left[:8]
    assert not bad, bad


@pytest.mark.parametrize("lang", LANGS)
def test_a_real_model_speaks_the_language(lang: str, tmp_path):
    """A real model on a tiny checkpoint made here (no network): its page and the head descriptions."""
    from .. import tiny_bert

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[state.LANG] = lang
    at.session_state[model_views.SOURCE] = str(tiny_bert.build(tmp_path))
    at.run()
    at.switch_page(registry.MODEL.file).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == i18n.catalog(lang).gettext(registry.MODEL.page_heading)
    assert len(shown(at)) > 20  # the model's page, not a message that it is missing
    sentence = "The cat sat on the mat because it was tired."  # the model's input (English: the model is)
    assert not english_left(readable(at), allowed_names(at) + [sentence, *OTHER_SENTENCES, *MODEL_WORDS])


@pytest.mark.parametrize("lang", LANGS)
def test_bad_input_is_named_in_the_language(lang: str):
    at = open_in(lang)
    at.switch_page(registry.INPUTS.file).run()
    edit_cells(at, "x", {0: {1: "abc"}})
    assert not at.exception
    messages = [e.value for e in [*at.error, *at.warning]]
    assert any("X" in m for m in messages), messages
    assert not english_left(messages, allowed_names(at)), messages


def test_a_lang_link_opens_in_that_language():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[address.LANG] = "ko"
    at.run()
    at.switch_page(registry.STEPS.file).run()
    assert at.title[0].value == TITLES["ko"]
    assert at.session_state[state.LANG] == "ko"


def test_an_unknown_lang_falls_back_to_english_and_says_so_once():
    """A reviewer: ?lang=fr opened in English without a word."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[address.LANG] = "fr"
    at.run()
    assert at.session_state[state.LANG] == "en"
    assert [i.value for i in at.main.info if "fr" in i.value] == [
        "This app is in English, 中文 and 한국어, not “fr”: it opened in English. The buttons in the sidebar change "
        "the language."]
    at.switch_page(registry.STEPS.file).run()  # once
    assert not [i.value for i in at.main.info if "“fr”" in i.value]


@pytest.mark.parametrize(("locale", "said"), [
    ("zh-CN", "本应用有 English、中文 和 한국어 三种语言，没有“fr”：现在以 中文 打开。"),
    ("ko-KR", "이 앱의 언어는 English, 中文, 한국어입니다. “fr” 언어는 없어 다음 언어로 열었습니다: 한국어.")])
def test_an_unknown_lang_is_said_in_the_browsers_language_it_opened_in(monkeypatch, locale: str, said: str):
    browser_language(monkeypatch, locale)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[address.LANG] = "fr"
    at.run()
    assert any(i.value.startswith(said) for i in at.main.info), [i.value for i in at.main.info]


def test_an_unknown_lang_on_a_page_address_is_said_there():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[address.LANG] = "x" * 50  # a long one: cut
    at.switch_page(registry.STEPS.file).run()  # the session opens on Step by step
    assert not at.exception, at.exception
    assert [i.value for i in at.main.info if "“x" in i.value] == [
        f"This app is in English, 中文 and 한국어, not “{'x' * 19}…”: it opened in English. The buttons in the sidebar "
        "change the language."]


def browser_language(monkeypatch, locale: str) -> None:
    """The browser's language (st.context.locale, navigator.language) as the app reads it in the runs that follow
    (AppTest's own ``context`` came after Streamlit 1.66, the oldest release the app supports)."""
    monkeypatch.setattr(type(st.context), "locale", property(lambda self: locale))


@pytest.mark.parametrize(("locale", "lang"), [("zh-CN", "zh"), ("ko-KR", "ko"), ("en-GB", "en"), ("de-DE", "en")])
def test_the_first_visit_follows_the_browser(monkeypatch, locale: str, lang: str):
    browser_language(monkeypatch, locale)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.session_state[state.LANG] == lang
    at.switch_page(registry.STEPS.file).run()
    assert at.title[0].value == TITLES[lang]


def test_a_link_beats_the_browser(monkeypatch):
    browser_language(monkeypatch, "ko-KR")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[address.LANG] = "zh"
    at.run()
    assert at.session_state[state.LANG] == "zh"


def test_the_picker_switches_and_the_choice_stays():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(registry.STEPS.file).run()
    assert at.title[0].value == TITLES["en"]
    # each language's name in its own script, as the button's Markdown shows it (character references: e2e reads
    # the buttons' text in Chromium)
    labels = [html.unescape(label) for label in at.segmented_control(key=state.LANG_PICKER).options]
    assert labels == list(i18n.LANGUAGES.values())
    at.segmented_control(key=state.LANG_PICKER).set_value("zh").run()
    assert at.title[0].value == TITLES["zh"]
    assert at.query_params[address.LANG] == "zh"  # the address (a reload, a permalink) keeps the language
    nav_titles = [p.title for p in at.session_state[state.NAV_PAGES][1]  # the navigation's pages, kept a session
                  if p.visibility == "visible"]  # (the hidden ones: the root's other addresses, frame.root_aliases)
    zh_titles = [i18n.catalog("zh").gettext(p.title) for p in registry.PAGES]
    assert nav_titles == zh_titles != [p.title for p in registry.PAGES]
    for page in registry.PAGES:  # the choice survives every page switch
        at.switch_page(page.file).run()
        assert not at.exception
        assert at.session_state[state.LANG] == "zh"
        assert at.segmented_control(key=state.LANG_PICKER).value == "zh"
    at.segmented_control(key=state.LANG_PICKER).set_value("ko").run()
    at.switch_page(registry.STEPS.file).run()
    assert at.title[0].value == TITLES["ko"]


def test_the_configuration_survives_a_language_switch_and_undo_speaks_the_new_language():
    at = open_in("en")
    at.switch_page(registry.INPUTS.file).run()
    edit_cells(at, "x", {0: {0: 7}})
    before = at.session_state[state.CONFIG]
    assert at.button(key="frame_undo").label == "Undo: X, row 0 (input1), column 0 set to 7"  # the cell named
    at.segmented_control(key=state.LANG_PICKER).set_value("ko").run()
    assert not at.exception
    assert at.session_state[state.CONFIG] is before
    assert at.session_state[state.CONFIG].x[0, 0] == 7
    assert at.button(key="frame_undo").label == "실행 취소: X, 0행(input1) 0열 설정: 7"  # in the language shown
    at.switch_page(registry.INPUTS.file).run()
    at.selectbox(key="inputs_preset").set_value("seed002_causal").run()
    at.segmented_control(key=state.LANG_PICKER).set_value("zh").run()
    assert at.button(key="frame_undo").label.startswith("撤销：已载入预设“")  # the preset's title translated too
    assert not english_left([at.button(key="frame_undo").label], allowed_names(at))


def test_a_permalink_opens_in_the_language_it_was_made_in():
    at = open_in("ko")
    at.switch_page(registry.SHARE.file).run()
    links = [c.value for c in at.code if f"?{share_ui.PARAM}=" in c.value]
    assert links and all(link.endswith(f"&{address.LANG}=ko") for link in links), links
    opened = AppTest.from_file(APP, default_timeout=120)
    opened.query_params.update(dict(part.split("=", 1) for part in links[0].split("?", 1)[1].split("&")))
    opened.run()
    assert opened.session_state[state.LANG] == "ko"
    assert not opened.exception


def test_a_refused_edit_is_said_again_in_the_new_language():
    at = open_in("en")
    at.switch_page(registry.INPUTS.file).run()
    edit_cells(at, "x", {0: {1: "abc"}})
    assert any("X, row 0 (input1), column 1 is 'abc', not a number." in plain(e.value) for e in at.error)
    at.segmented_control(key=state.LANG_PICKER).set_value("zh").run()
    messages = [plain(e.value) for e in [*at.error, *at.warning]]
    assert any("'abc'" in m and "X" in m for m in messages), messages
    assert not english_left(messages, allowed_names(at)), messages
