"""Learn (pages/learn.py): every lesson answered wrongly then rightly, its reveal, Try it yourself, progress, links.

The answers themselves are checked against numpy written out in tests/core/test_lessons.py; here the page must show
them, keep the learner's progress across pages, and open the explorer on the lesson's configuration.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attn_core import configs_equal, load_preset
from attn_ui import lessons
from attn_ui.app import registry, state
from attn_ui.lessons import Cell, Choice, Token, lesson_ui
from attn_ui.views import generate_views, model_views
from tests import minilm

from .apptools import APP, new_app, plain

LESSON_KEYS = [lesson.key for lesson in lessons.LESSONS]


@pytest.fixture(autouse=True)
def folders_allowed(monkeypatch):
    """These tests name checkpoint folders (made here, or all-MiniLM-L6-v2's): the operator's switch on."""
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")


def model_of(lesson: lessons.Lesson):
    """The model a model lesson reads: all-MiniLM-L6-v2's real weights, or the tiny masked-language model for a lesson
    that fills in a [MASK] (tests/minilm.py); None for the others."""
    return minilm.lesson_model(lesson)


def open_lesson(key: str) -> AppTest:
    """A fresh session opened by the link ?lesson=<key> (a model lesson's reading its model from its folder:
    all-MiniLM-L6-v2, or the tiny masked-language model)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[lesson_ui.PARAM] = key
    if (lesson := lessons.by_key(key)).needs_model:  # the learner's choice on the page of the lesson's family
        at.session_state[minilm.source_key(lesson)] = minilm.lesson_source(key)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == registry.LEARN.page_heading
    return at


def predict(at: AppTest, lesson: lessons.Lesson, guess) -> AppTest:
    """Give a prediction in the lesson's widgets and press Check my answer, with no run in between (the widgets and
    the button are one form: the browser sends the values with the click)."""
    if isinstance(lesson.ask, Cell):
        at.radio(key=f"learn_{lesson.key}_row").set_value(guess[0])
        at.radio(key=f"learn_{lesson.key}_col").set_value(guess[1])
    elif isinstance(lesson.ask, (Choice, Token)):
        at.radio(key=f"learn_{lesson.key}_guess").set_value(guess)
    else:
        at.number_input(key=f"learn_{lesson.key}_guess").set_value(guess)
    return at.button(key=lesson_ui.CHECK).click().run()


def wrong_guess(lesson: lessons.Lesson, answer):
    ask = lesson.ask
    if isinstance(ask, Choice):
        return (answer + 1) % len(ask.options)
    if isinstance(ask, (Cell, Token)):
        n = lessons.solved(lesson.key, model_of(lesson)).config.n_seq
        return (answer + 1) % n if isinstance(ask, Token) else (answer[0], (answer[1] + 1) % n)
    off = 3 * ask.tolerance * (abs(answer) if ask.relative else 1.0)
    return answer + off if ask.high is None or answer + off <= ask.high else answer - off


def status(at: AppTest) -> str:
    """The line under the lesson's title: "Lesson 3 of 14 · right"."""
    return next(c.value for c in at.caption if c.value.startswith("Lesson "))


def listed(at: AppTest) -> dict[str, str]:
    """The lesson list: each row's title (a button) and how the lesson went (the list opened to read it)."""
    if not at.session_state[lesson_ui.LIST]:
        at.session_state[lesson_ui.LIST] = True
        at.run()
    rows = at.expander(key=lesson_ui.LIST)
    return {b.label: c.value for b, c in zip(rows.button, rows.caption, strict=True)}


def texts(at: AppTest) -> str:
    return "\n".join(plain(m.value) for m in [*at.markdown, *at.success, *at.error, *at.caption])


@pytest.mark.parametrize("key", LESSON_KEYS)
def test_lesson_wrong_then_right_then_try_it(key: str):
    lesson = lessons.by_key(key)
    worked = lessons.solved(key, model_of(lesson))
    sol, answer = worked.solution, worked.solution.answer
    at = open_lesson(key)
    shown = texts(at)
    assert plain(lessons.fill(lesson.setup, sol.facts, 4)) in shown
    assert plain(lessons.fill(lesson.question, sol.facts, 4)) in shown
    assert "The numbers" not in shown  # nothing revealed before the prediction

    wrong = wrong_guess(lesson, answer)
    assert not lessons.judge(lesson, sol, wrong)
    predict(at, lesson, wrong)
    assert not at.exception
    answer_text = plain(lessons.answer_text(worked, answer, 4))
    assert len(at.error) == 1 and "Not quite" in at.error[0].value and answer_text in plain(at.error[0].value)
    shown = texts(at)
    for _, name in sol.numbers:  # the reveal shows the numbers attn_core computed
        assert plain(lessons.show(sol.facts[name], 4)) in shown
    assert plain(lessons.fill(lesson.explanation, sol.facts, 4)) in shown
    assert len(at.get("vega_lite_chart")) == len(lesson.shows) + len(sol.views)
    assert status(at).endswith("· wrong")

    at.button(key="learn_retry").click().run()
    assert "The numbers" not in texts(at)
    assert all(at.session_state[k] is None for k in lesson_ui._widget_keys(lesson))  # empty widgets again
    predict(at, lesson, answer)
    assert not at.exception and not at.error
    assert len(at.success) == 1 and answer_text in plain(at.success[0].value)
    assert status(at).endswith("· right on the 2nd try")

    at.button(key="learn_try").click().run()
    assert not at.exception
    assert at.title[0].value.startswith(lesson.page.page_heading)
    assert configs_equal(at.session_state["config"], lessons.configuration(lesson, model_of(lesson)))
    assert at.session_state["preset"] == lesson.preset
    head, query = sol.follow or (0, lesson.query)  # the head and query the explorer follows
    assert at.session_state["head"] == head
    if query is not None:
        assert at.session_state["query"] == query
    origin = worked.config.origin
    if lesson.family == "causal":  # A model that writes on the lesson's prompt, its head drawn large
        assert at.text_input(key=generate_views.PROMPT).value == origin["sentence"] == lessons.WRITE_PROMPT
        assert (at.selectbox(key=generate_views.LAYER).value, at.selectbox(key=generate_views.HEAD).value) == (
            origin["layer"], origin["head"])
        assert "In the explorer now" in [h.value for h in at.header]
    if lesson.family == "encoder":  # A real model shows the lesson's sentence and layer, and what the explorer holds
        assert at.text_input(key=model_views.SENTENCE).value == origin["sentence"]
        assert at.selectbox(key=model_views.LAYER).value == origin["layer"]
        assert "In the explorer now" in [h.value for h in at.header]
    if (page := sol.model_page) is not None:  # the lesson's other sentence, heads off and scan, on A real model
        if page.others:
            assert at.text_area(key=model_views.OTHERS).value == "\n".join(page.others)
        assert at.multiselect(key=model_views.ABLATE).value == [f"L{lay} · H{h}" for lay, h in page.ablate]
        assert at.segmented_control(key=model_views.ABLATE_HOW).value == page.how
        assert at.selectbox(key=model_views.EFFECTS).value == page.scan
        shown = texts(at)
        if page.ablate:  # before and after side by side
            assert "Switch heads off" in [h.value for h in at.subheader] and "1 head off" in shown
        else:  # W_Q set to zero: the edited layer run back, the similarity with the model as trained
            assert "Your edits, run through the model" in [h.value for h in at.subheader]
            assert f"{lessons.show(sol.facts['sim'], 4)}" in shown and lessons.show(sol.facts["sim_after"], 4) in shown


def test_a_model_lesson_without_its_model_says_so_and_can_be_skipped(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    key = next(lesson.key for lesson in lessons.LESSONS if lesson.needs_model)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[lesson_ui.PARAM] = key
    at.session_state[model_views.SOURCE] = "nobody-here/no-such-model"
    at.run()
    assert not at.exception
    assert "is not on this server yet" in plain(at.warning[0].value) and "Skip it" in at.info[0].value  # no download
    if lessons.index_of(key) + 1 < len(lessons.LESSONS):
        at.button(key="learn_skip").click().run()  # to the next lesson (one that runs the model: it says so too)
        assert not at.exception and at.header[0].value.startswith(f"{lessons.index_of(key) + 2}.")
        assert listed(at)[f"{lessons.index_of(key) + 1}. {lessons.by_key(key).title}"] == "skipped"
        back = lessons.index_of(key) + 1  # Previous: the lesson skipped (numbered from 1)
    else:
        assert "last lesson" in texts(at)
        back = lessons.index_of(key)  # Previous: the one before it
    at.button(key="learn_previous").click().run()
    assert not at.exception and at.header[0].value.startswith(f"{back}.")


@pytest.mark.parametrize("key, source, said", [
    ("masked-word", "minilm", "has no masked-language-model head"),
    ("query-zero", "masked-lm", "needs a sentence encoder"),
])
def test_a_model_lesson_on_a_model_of_another_kind_says_so_and_can_be_skipped(key: str, source: str, said: str):
    """The masked-word lesson on all-MiniLM-L6-v2 (no masked-LM head), a similarity lesson on a masked-language
    model: the page says which kind the lesson needs and where to name one, and the lesson can be skipped."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[lesson_ui.PARAM] = key
    at.session_state[model_views.SOURCE] = minilm.lesson_source("masked-word" if source == "masked-lm" else "")
    at.run()
    assert not at.exception
    assert said in plain(at.warning[0].value) and "Name such a model on A real model" in at.info[0].value
    assert "The numbers" not in texts(at) and not at.radio  # no question asked of the wrong model
    if lessons.index_of(key) + 1 < len(lessons.LESSONS):
        at.button(key="learn_skip").click().run()
        assert not at.exception and at.header[0].value.startswith(f"{lessons.index_of(key) + 2}.")
    else:
        assert "last lesson" in texts(at)


def test_the_overview_links_to_learn_second_in_the_sidebar(app: AppTest):
    assert registry.PAGES[1] is registry.LEARN
    assert [link.proto.page for link in app.get("page_link")][0] == registry.LEARN.name  # first on the page


def test_progress_survives_a_page_switch_and_the_list_shows_it(app: AppTest):
    at = app.switch_page(registry.LEARN.file).run()
    first, third = lessons.LESSONS[0], lessons.LESSONS[2]
    predict(at, first, wrong_guess(first, lessons.solved(first.key).solution.answer))
    at.selectbox(key="learn_pick").set_value(2).run()
    assert at.header[0].value == f"3. {third.title}"
    at.switch_page(registry.STEPS.file).run()
    at.switch_page(registry.LEARN.file).run()
    assert not at.exception
    assert at.header[0].value == f"3. {third.title}"  # the lesson open survives
    rows = listed(at)
    assert rows[f"1. {first.title}"] == "wrong" and rows[f"3. {third.title}"] == "not answered yet"
    assert at.get("progress")[0].proto.text == f"1 of {len(lessons.LESSONS)} lessons answered, 0 right"
    at.selectbox(key="learn_pick").set_value(0).run()
    assert "Not quite" in at.error[0].value  # the answer survives too
    assert status(at).endswith("· wrong")


def test_skip_next_and_previous(app: AppTest, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the last lesson reads a model: no download tried here
    at = app.switch_page(registry.LEARN.file).run()
    at.button(key="learn_skip").click().run()
    assert at.header[0].value.startswith("2.")
    assert listed(at)[f"1. {lessons.LESSONS[0].title}"] == "skipped"
    at.button(key="learn_previous").click().run()
    assert at.header[0].value.startswith("1.") and status(at).endswith("· skipped")
    first = lessons.LESSONS[0]
    predict(at, first, lessons.solved(first.key).solution.answer)
    assert status(at).endswith("· right on the first try")
    at.button(key="learn_next").click().run()
    assert at.header[0].value.startswith("2.")
    at.selectbox(key="learn_pick").set_value(len(lessons.LESSONS) - 1).run()
    assert not at.exception and "last lesson" in texts(at)


def test_the_address_bar_names_the_lesson_open(app: AppTest):
    at = app.switch_page(registry.LEARN.file).run()
    assert at.query_params[lesson_ui.PARAM] == lessons.LESSONS[0].key
    at.selectbox(key="learn_pick").set_value(4).run()
    assert at.query_params[lesson_ui.PARAM] == lessons.LESSONS[4].key


def test_a_link_to_the_root_opens_learn_on_its_lesson():
    at = open_lesson("causal")
    assert at.header[0].value.endswith(lessons.by_key("causal").title)
    assert configs_equal(at.session_state["config"], load_preset("seed000"))  # the explorer's own is untouched


def test_a_link_to_an_unknown_lesson_says_so_and_opens_the_first():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[lesson_ui.PARAM] = "[no](javascript:alert(1))"
    at.run()
    assert not at.exception and at.title[0].value == registry.LEARN.page_heading
    assert "does not exist" in at.warning[0].value and "](" not in at.warning[0].value.replace("\\](", "")
    assert at.header[0].value.startswith("1.")


def test_undo_after_try_it_brings_the_learners_numbers_back():
    at = new_app(registry.INPUTS.file)
    at.switch_page(registry.LEARN.file).run()
    at.selectbox(key="learn_pick").set_value(LESSON_KEYS.index("causal")).run()
    lesson = lessons.by_key("causal")
    predict(at, lesson, 0)
    at.button(key="learn_try").click().run()
    assert at.title[0].value == registry.MASKING.page_heading
    undo = at.button(key="frame_undo")
    assert "The causal mask" in undo.label
    undo.click().run()
    assert configs_equal(at.session_state["config"], load_preset("seed000"))


@pytest.mark.parametrize("source", ["a/b..c", "someone/elsewhere", "/proc/self/cwd"])
def test_a_model_lesson_reads_the_operators_model_when_the_learners_cannot_be_read(tmp_path, monkeypatch, source):
    """A name refused on A real model (an id the Hub refuses, a server folder) or a repo not downloaded (a lesson
    never downloads: a fake Hub sees no request) does not take the lesson away: it reads the operator's model."""
    from huggingface_hub import constants

    from tests import fake_hub

    key = next(lesson.key for lesson in lessons.LESSONS if lesson.needs_model)
    monkeypatch.setenv("ATTN_MODEL", str(minilm.folder()))
    with fake_hub.FakeHub() as hub:
        fake_hub.use(monkeypatch, hub.url)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params[lesson_ui.PARAM] = key
        at.session_state[model_views.SOURCE] = source
        at.run()
        assert hub.requests == []
    assert not at.exception and not at.warning
    assert at.header[0].value.startswith(f"{lessons.index_of(key) + 1}.")


@pytest.mark.parametrize("source, said", [
    ("a/b..c", "'a/b..c' is not a valid Hugging Face repo id"),
    ("someone/elsewhere", "someone/elsewhere is not on this server yet: its model page offers to download it."),
])
def test_a_model_lesson_with_no_model_it_can_read_says_so_then_works_again(tmp_path, monkeypatch, source, said):
    """When the operator's model cannot be read either (offline, not in the cache), the lesson says why the
    learner's cannot; naming a readable model afterwards makes it work, in the same session."""
    from huggingface_hub import constants

    from tests import fake_hub

    key = next(lesson.key for lesson in lessons.LESSONS if lesson.needs_model)
    with fake_hub.FakeHub() as hub:
        fake_hub.use(monkeypatch, hub.url)
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the operator's model cannot be fetched either
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params[lesson_ui.PARAM] = key
        at.session_state[model_views.SOURCE] = source
        at.run()
        assert not at.exception and said in plain(at.warning[0].value) and "Skip it" in at.info[0].value
        assert hub.requests == []
    at.session_state[model_views.SOURCE] = str(minilm.folder())
    at.run()
    assert not at.exception and not at.warning
    assert at.header[0].value.startswith(f"{lessons.index_of(key) + 1}.")


# ---- the record: a right answer stays right ---------------------------------------------------------------------


def test_a_right_first_answer_stays_right_and_the_tries_after_it_are_counted(app: AppTest):
    at = app.switch_page(registry.LEARN.file).run()
    lesson = lessons.by_key("match-weight")
    answer = lessons.solved(lesson.key).solution.answer
    at.selectbox(key="learn_pick").set_value(lessons.index_of(lesson.key)).run()
    predict(at, lesson, round(answer, 2))
    assert status(at).endswith("· right on the first try")
    at.button(key="learn_retry").click().run()
    assert status(at).endswith("· right on the first try · trying again")
    predict(at, lesson, wrong_guess(lesson, answer))
    assert "Not quite" in at.error[0].value  # this try's answer, said as it is ...
    assert status(at).endswith("· right on the first try · tried again once")  # ... and the record keeps the first
    at.button(key="learn_retry").click().run()
    predict(at, lesson, round(answer, 2))
    assert status(at).endswith("· right on the first try · tried again twice")
    assert at.get("progress")[0].proto.text == f"1 of {len(lessons.LESSONS)} lessons answered, 1 right"
    assert at.session_state[lesson_ui.ANSWERS][lesson.key] == [
        (round(answer, 2), True), (wrong_guess(lesson, answer), False), (round(answer, 2), True)]


@pytest.mark.parametrize("tries, said", [
    ([False], "wrong"), ([False, False], "wrong (2 tries)"), ([True], "right on the first try"),
    ([False, True], "right on the 2nd try"), ([False, False, True, False], "right on the 3rd try · tried again once"),
    ([False] * 10 + [True, True, True], "right on the 11th try · tried again twice"),
    ([False] * 20 + [True] * 4, "right on the 21st try · tried again 3 times"),
])
def test_the_record_read_from_a_sessions_answers(app: AppTest, tries: list[bool], said: str):
    """The record is the list of (prediction, right?) every session has kept since Learn began: an old session's
    answers read the same way."""
    at = app.switch_page(registry.LEARN.file).run()
    at.session_state[lesson_ui.ANSWERS] = {"best-match": [(1 if right else 0, right) for right in tries]}
    at.run()
    assert not at.exception and status(at).endswith(f"· {said}")
    assert listed(at)[f"1. {lessons.LESSONS[0].title}"] == said


def test_check_without_a_prediction_says_what_is_missing(app: AppTest):
    at = app.switch_page(registry.LEARN.file).run()
    at.button(key=lesson_ui.CHECK).click().run()
    assert not at.exception and at.warning[0].value == "Pick an answer first."
    assert status(at).endswith("· not answered yet")
    at.selectbox(key="learn_pick").set_value(lessons.index_of("largest-cell")).run()
    at.radio(key="learn_largest-cell_row").set_value(1)
    at.button(key=lesson_ui.CHECK).click().run()
    assert at.warning[0].value == "Pick a query and a key first."
    assert at.radio(key="learn_largest-cell_row").value == 1  # what was given stays
    at.selectbox(key="learn_pick").set_value(lessons.index_of("uniform")).run()
    at.button(key=lesson_ui.CHECK).click().run()
    assert at.warning[0].value == "Type a number first."


# ---- the lesson list opens a lesson --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh", "ko"])
def test_a_row_of_the_lesson_list_opens_its_lesson(app: AppTest, lang: str):
    at = app.switch_page(registry.LEARN.file)
    at.session_state[state.LANG] = lang
    at.run()
    assert not at.expander(key=lesson_ui.LIST).button  # closed: its rows are not made
    at.session_state[lesson_ui.LIST] = True  # the learner opens the list
    at.run()
    rows = at.expander(key=lesson_ui.LIST)
    assert len(rows.button) == len(lessons.LESSONS)
    assert rows.button[0].proto.icon == ":material/arrow_right:"  # the lesson open is marked
    at.button(key="learn_list_causal").click().run()
    assert not at.exception
    at_causal = lessons.index_of("causal")
    assert at.header[0].value.startswith(f"{at_causal + 1}. ")
    assert at.session_state[lesson_ui.LESSON] == "causal" and at.query_params[lesson_ui.PARAM] == "causal"
    assert at.session_state[lesson_ui.LIST] is False  # the list closes over the lesson it opened
    assert listed(at) and at.expander(key=lesson_ui.LIST).button[at_causal].proto.icon == ":material/arrow_right:"
    assert at.selectbox(key="learn_pick").value == at_causal


# ---- the lessons on the models that generate (a GPT-2, a T5): each reads its family's model ------------------------

GENERATING = [lesson.key for lesson in lessons.LESSONS if lesson.family in ("causal", "translator")]
OPERATOR_ENV = {"causal": "ATTN_CAUSAL_MODEL", "translator": "ATTN_TRANSLATOR_MODEL"}


def test_two_lessons_generate():
    assert {lessons.by_key(key).family for key in GENERATING} == {"causal", "translator"}


@pytest.mark.parametrize("key", GENERATING)
@pytest.mark.parametrize("source", [None, "a/b..c", "/proc/self/cwd"])
def test_a_lesson_that_generates_reads_the_operators_model_of_its_family(key: str, source, monkeypatch):
    """With no model named on its family's page, or one that cannot be read there, the lesson reads the operator's
    ($ATTN_CAUSAL_MODEL, $ATTN_TRANSLATOR_MODEL: the tiny checkpoints here); Try it yourself opens the page on it."""
    lesson = lessons.by_key(key)
    monkeypatch.setenv(OPERATOR_ENV[lesson.family], minilm.lesson_source(key))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[lesson_ui.PARAM] = key
    if source is not None:
        at.session_state[minilm.source_key(lesson)] = source
    at.run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    sol = lessons.solved(key, model_of(lesson)).solution
    assert plain(lessons.fill(lesson.setup, sol.facts, 4)) in texts(at)
    predict(at, lesson, sol.answer)
    assert len(at.success) == 1
    at.button(key="learn_try").click().run()
    assert not at.exception and at.title[0].value.startswith(lesson.page.page_heading)
    assert configs_equal(at.session_state["config"], lessons.configuration(lesson, model_of(lesson)))
    # the page reads the model the lesson read, and runs the configuration it opened back through it
    assert not at.error and "In the explorer now" in [h.value for h in at.header]


@pytest.mark.parametrize("key, other, said", [
    ("next-word", "translator", "is an encoder-decoder translator (T5), not a causal language model"),
    ("source-word", "causal", "is a causal language model (GPT-2 or Llama family), not an encoder-decoder translator"),
])
def test_a_lesson_that_generates_on_a_model_of_another_kind_says_so_and_can_be_skipped(key: str, other: str,
                                                                                       said: str):
    """A T5 named for the GPT-2 lesson, a GPT-2 for the T5 one: the page says which kind the lesson needs, asks
    nothing, and the lesson can be skipped."""
    lesson = lessons.by_key(key)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[lesson_ui.PARAM] = key
    at.session_state[minilm.source_key(lesson)] = str(minilm.tiny_folder(other))
    at.run()
    assert not at.exception
    assert said in plain(at.warning[0].value)
    assert "Name such a model on A model that" in at.info[0].value  # read, but of another kind: where to name one
    assert "The numbers" not in texts(at) and not at.radio
    if lessons.index_of(key) + 1 < len(lessons.LESSONS):
        at.button(key="learn_skip").click().run()
        assert not at.exception and at.header[0].value.startswith(f"{lessons.index_of(key) + 2}.")
        assert listed(at)[f"{lessons.index_of(key) + 1}. {lesson.title}"] == "skipped"
    else:
        assert "last lesson" in texts(at)


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_the_lessons_that_generate_open_and_answer_in_every_language(lang: str):
    """Both lessons in Chinese and Korean: the question, a wrong then a right answer, the reveal's charts, and the
    progress counting them."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[state.LANG] = lang
    for n, key in enumerate(GENERATING, start=1):
        lesson = lessons.by_key(key)
        worked = lessons.solved(key, model_of(lesson))
        at.session_state[lesson_ui.LESSON] = key
        at.session_state[minilm.source_key(lesson)] = minilm.lesson_source(key)
        at.switch_page(registry.LEARN.file).run()
        assert not at.exception, [e.value for e in at.exception]
        assert len(at.radio(key=f"learn_{key}_guess").options) == worked.config.n_seq  # one option per token
        predict(at, lesson, wrong_guess(lesson, worked.solution.answer))
        assert not at.exception and len(at.error) == 1
        assert len(at.get("vega_lite_chart")) == len(worked.solution.views)
        at.button(key="learn_retry").click().run()
        predict(at, lesson, worked.solution.answer)
        assert not at.exception and len(at.success) == 1
        answered = at.get("progress")[0].proto.text
        assert f"{n}" in answered and f"{len(lessons.LESSONS)}" in answered


@pytest.mark.parametrize(("key", "said"), [("match-weight", "Counted right within ±0.05 of the answer."),
                                           ("sqrt-dk", "Counted right within 25% of the answer.")])
def test_a_typed_number_says_how_near_it_must_be(key: str, said: str):
    lesson = lessons.by_key(key)
    assert isinstance(lesson.ask, lessons.Number)
    at = open_lesson(key)
    assert said in [c.value for c in at.caption]


def test_a_model_lesson_without_network_says_what_whoever_runs_the_server_can_do(monkeypatch):
    """With folders off, the advice names the operator's variable of the lesson's kind, never a folder to type."""
    monkeypatch.delenv("ATTN_ALLOW_FOLDERS")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in model_views.VARIABLES.values():
        monkeypatch.setenv(name, "nobody-here/no-such-model")
    lesson = next(lesson for lesson in lessons.LESSONS if lesson.needs_model)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[lesson_ui.PARAM] = lesson.key
    at.run()
    assert not at.exception
    shown = plain(at.warning[0].value)
    assert "could not be loaded" in shown and f"set {model_views.VARIABLES[lesson.family]} to that folder's" in shown
    assert "give that folder's path instead" not in shown
