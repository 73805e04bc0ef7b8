"""Learn's glue: which lesson is open, the learner's answers (kept across pages), the prediction widgets, the
``?lesson=`` link, and **Try it yourself**.

The lessons themselves (texts, configurations, how each answer is computed) are data in :mod:`attn_ui.lessons`.
Progress lives in the session-state keys ``LESSON``, ``LESSON_ANSWERS``, ``LESSON_RETRY`` and
``LESSON_SKIPPED``: not widget keys, so it survives a page switch; a prediction not yet committed keeps its value
in the kept store of :func:`attn_ui.app.state.bind` (through :func:`bind`).

Links: ``?lesson=<key>`` (on any page's address, e.g. ``/learn?lesson=causal``) is read once, when a session
starts, and opens Learn on that lesson. While a lesson is open its key stays in the address bar, so the address
is a link to it.
"""

from __future__ import annotations

from typing import NoReturn

import streamlit as st

import attn_models
from attn_core import AttentionInputError, number_in_range
from attn_ui import lessons
from attn_ui.app import i18n, origins, registry, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import settings
from attn_ui.lessons import Answer, Cell, Choice, Number, Token
from attn_ui.views import generate_views, model_output, model_views, share_ui, translate_views
from attn_ui.widgets import controls, text
from attn_ui.widgets.numbers import format_number

# Learn's session keys: the lesson open, the learner's answers, and the ?lesson= link read once
LESSON = "lesson"  # key of the lesson open on Learn (attn_ui.lessons); None: the first
ANSWERS = "lesson_answers"  # {lesson key: [(prediction, right?)]}: every answer committed, oldest first
# (the record: its first right answer says "right on the nth try", the answers after it are tries again)
RETRY = "lesson_retry"  # set of lesson keys being tried again (their answer is hidden)
SKIPPED = "lesson_skipped"  # set of lesson keys skipped without an answer
LINK_APPLIED = "lesson_link_applied"  # bool: this session has read its ?lesson= link (once, at start)

#: each kind of model -> the state key of the checkpoint the learner named on its page
SOURCE_KEYS = {"encoder": model_views.SOURCE, "masked": model_views.SOURCE, "causal": generate_views.SOURCE,
               "translator": translate_views.SOURCE}
#: each kind of model (an origin's role) -> what makes its page show an origin's text, layer and head
FOLLOW = {"encoder": model_views.follow_origin, "causal": generate_views.follow_origin,
          "translator": translate_views.follow_origin}

PARAM = "lesson"  # the query parameter that names a lesson: ?lesson=<lessons.Lesson.key>
CHECK = "learn_check"  # widget key of "Check my answer"
FORM = "learn_answer"  # the form of the prediction's widgets and Check my answer
OUT_OF_RANGE = "learn_out_of_range"  # str: why the number last checked is no prediction (out_of_range), said once
LIST = "learn_list"  # the expander "All lessons and how you did" (its key: a row opened closes it)


def init() -> None:
    """Create Learn's keys once per session (idempotent): attn_ui.shell.frame calls it on every run, after
    attn_ui.app.state.init."""
    st.session_state.setdefault(LESSON, None)
    st.session_state.setdefault(ANSWERS, {})
    st.session_state.setdefault(RETRY, set())
    st.session_state.setdefault(SKIPPED, set())


# ---- the link -------------------------------------------------------------------------------------------------


def apply_query_param(pg: st.Page) -> None:
    """Once per session: open Learn on the lesson ``?lesson=`` names (after ``st.navigation``, before ``pg.run``).

    An unknown name opens Learn on the first lesson and says so; the parameter is removed.
    """
    if st.session_state.get(LINK_APPLIED):
        return
    st.session_state[LINK_APPLIED] = True
    key = st.query_params.get(PARAM)
    if key is None:
        return
    if lessons.by_key(key) is None:
        del st.query_params[PARAM]
        state.notify(_("This link names a lesson “{key}” that does not exist, so Learn opens on the first "
                       "lesson.").format(key=text.isolate(key[:40])), icon=":material/link_off:")
    else:
        st.session_state[LESSON] = key
    if share_ui.page_name(pg) != registry.LEARN.name:
        st.switch_page(registry.LEARN.file)


def keep_in_address_bar(lesson: lessons.Lesson) -> None:
    """Put ``?lesson=<key>`` in the address bar, so it links to the lesson open."""
    if st.query_params.get(PARAM) != lesson.key:
        st.query_params[PARAM] = lesson.key


# ---- which lesson, and how it went ------------------------------------------------------------------------------


def current() -> lessons.Lesson:
    """The lesson open (the first until the learner picks another)."""
    return lessons.by_key(st.session_state[LESSON] or "") or lessons.LESSONS[0]


def open_lesson(key: str) -> None:
    """on_click: open the lesson ``key``."""
    st.session_state[LESSON] = key


def open_from_list(key: str) -> None:
    """on_click of a row of the lesson list: open the lesson ``key`` and close the list over it."""
    open_lesson(key)
    st.session_state[LIST] = False


def lesson_list(titles: list[str]) -> None:
    """"All lessons and how you did": a row per lesson, its numbered title a button that opens it (a link's look,
    reached with Tab, opened with Enter or Space), and how it went. The rows are made only while the list is open
    (opening it reruns the page): closed, their 60-odd elements were most of Learn's run on every answer."""
    now = current().key
    with st.expander(_("All lessons and how you did"), key=LIST, on_change="rerun") as box:
        if not box.open:
            return
        for title, lesson in zip(titles, lessons.LESSONS, strict=True):
            row = st.container(horizontal=True, vertical_alignment="center", gap="small")
            row.button(title, key=f"learn_list_{lesson.key}", type="tertiary", on_click=open_from_list,
                       args=(lesson.key,), icon=":material/arrow_right:" if lesson.key == now else None)
            row.caption(status(lesson.key))


def step(delta: int) -> None:
    """on_click: open the lesson ``delta`` places after the current one (before it if negative)."""
    i = lessons.index_of(current().key) + delta
    open_lesson(lessons.LESSONS[min(max(i, 0), len(lessons.LESSONS) - 1)].key)


def skip() -> None:
    """on_click: leave the current lesson without an answer (marked skipped) for the next one."""
    key = current().key
    if not attempts(key):
        st.session_state[SKIPPED].add(key)
    step(1)


def sources(lesson: lessons.Lesson) -> tuple[str, str]:
    """(the checkpoint a model lesson reads first, the operator's of its kind): the one the learner named on the page
    of its kind (A real model for an encoder or a masked-language model, A model that writes, A model that
    translates), else the operator's (attn_ui.infra.settings: the English encoder, its lessons' words being English;
    the masked-language model; the causal model; the translator)."""
    s = settings.settings()
    operator = {"causal": s.causal_model, "translator": s.translator_model, "masked": s.masked_model}.get(
        lesson.family, s.default_model("en"))
    return st.session_state.get(SOURCE_KEYS.get(lesson.family, model_views.SOURCE)) or operator, operator


def model_for(lesson: lessons.Lesson):  # -> attn_models.Model, CausalLM or Translator, or None
    """The model a model lesson reads: the one the learner named on its page, or the operator's of that kind when the
    learner's cannot be read (refused, not on this server) or is of another kind than the lesson's; the operator's
    is downloaded with a progress bar the first time. None for the other lessons. Raises attn_models.ModelError (the
    learner's model's) when neither can be read."""
    if not lesson.needs_model:
        return None
    source, operator = sources(lesson)
    try:
        return _of_kind(model_views.model(source, role=lesson.family), lesson.family)
    except attn_models.ModelError as err:
        if source == operator:
            raise
        try:
            return _of_kind(model_views.model(operator, role=lesson.family), lesson.family)
        except attn_models.ModelError:
            raise err from None  # why the learner's cannot be read: what its page says too


def _of_kind(model, kind: str):  # -> the model, else attn_models.KindError
    attn_models.expect_role(model, "encoder" if kind == "masked" else kind)
    if kind == "masked" and not model.has_mlm:
        raise attn_models.KindError(N_("{name} has no masked-language-model head (the cls.predictions weights of a "
                                       "BertForMaskedLM): it cannot fill in a [MASK]. This lesson needs a BERT "
                                       "checkpoint that has one."), name=attn_models.shown_name(model.name))
    return model


def worked(lesson: lessons.Lesson) -> lessons.Worked:
    """The lesson's configuration, trace and answer (attn_core). Raises attn_models.ModelError (see model_for)."""
    return lessons.solved(lesson.key, model_for(lesson))


def attempts(key: str) -> list[tuple[Answer, bool]]:
    """Every answer committed to lesson ``key``, oldest first: (prediction, right?)."""
    return st.session_state[ANSWERS].get(key, [])


def shown_attempt(key: str) -> tuple[Answer, bool] | None:
    """The answer the lesson shows (its last), or None while unanswered or being tried again."""
    tries = attempts(key)
    return tries[-1] if tries and key not in st.session_state[RETRY] else None


def first_right(key: str) -> int | None:
    """The try (1 for the first) on which lesson ``key`` was first answered right; None if never.

    The record is every answer in order (:func:`attempts`), so a right answer stays right whatever the learner tries
    afterwards, and the tries after it are counted apart (:func:`status`).
    """
    return next((n for n, (_prediction, right) in enumerate(attempts(key), start=1) if right), None)


def _nth(n: int) -> str:
    """An ordinal in the learner's language: "2nd", "3rd", "11th", "21st"."""
    last = n % 10 if n % 100 not in (11, 12, 13) else 0
    return _({1: N_("{n}st"), 2: N_("{n}nd"), 3: N_("{n}rd")}.get(last, N_("{n}th"))).format(n=n)


def _tried_again(n: int) -> str:
    """ "tried again once", "twice", "{n} times" """
    if n <= 2:
        return _("tried again once") if n == 1 else _("tried again twice")
    return ngettext("tried again {n} time", "tried again {n} times", n).format(n=n)


def status(key: str) -> str:
    """How the lesson went, in a few words (in the learner's language): "not answered yet", "skipped", "wrong",
    "wrong (3 tries)", "right on the first try", "right on the 2nd try · tried again once", "… · trying again".

    Once right, the lesson stays right: a later try, right or wrong, is counted as a try again."""
    tries = attempts(key)
    n = len(tries)
    if not tries:
        return _("skipped") if key in st.session_state[SKIPPED] else _("not answered yet")
    retrying = key in st.session_state[RETRY]
    first = first_right(key)
    if first is None:
        if retrying:
            return ngettext("trying again ({n} try so far)", "trying again ({n} tries so far)", n).format(n=n)
        return _("wrong") if n == 1 else _("wrong ({n} tries)").format(n=n)
    said = [_("right on the first try") if first == 1 else _("right on the {nth} try").format(nth=_nth(first))]
    if n > first:
        said.append(_tried_again(n - first))
    if retrying:
        said.append(_("trying again"))
    return " · ".join(said)


def progress() -> tuple[int, int]:
    """(lessons answered, lessons answered right at least once)."""
    answered = [key for key, tries in st.session_state[ANSWERS].items() if tries]
    return len(answered), sum(first_right(key) is not None for key in answered)


# ---- predicting ------------------------------------------------------------------------------------------------


def _widget_keys(lesson: lessons.Lesson) -> list[str]:
    """The keys of the lesson's prediction widgets (two for a cell: row and column)."""
    base = f"learn_{lesson.key}"
    return [f"{base}_row", f"{base}_col"] if isinstance(lesson.ask, Cell) else [f"{base}_guess"]


def _guess(lesson: lessons.Lesson) -> Answer | None:
    """The prediction in the widgets (None until complete)."""
    values = [st.session_state.get(k) for k in _widget_keys(lesson)]
    if any(v is None for v in values):
        return None
    return tuple(values) if isinstance(lesson.ask, Cell) else values[0]


def prediction(w: lessons.Worked, precision: int) -> None:
    """The prediction's widgets (a choice, a number, a query and a key, or a token) and **Check my answer**, in one
    form.

    In a form, the browser sends what the widgets hold with the click on the button: a number typed and not yet
    committed (Streamlit commits a number_input when it loses focus, which the click itself causes) is checked by
    that one click. Enter in the number checks it too. The widgets have no on_change (a form allows none):
    :func:`commit` keeps their values. A click with no complete prediction says what is missing.
    """
    lesson, ask = w.lesson, w.lesson.ask
    # bind's value, without its on_change: commit() keeps the values (a widget in a form may have no callback)
    kept = [{**state.bind(k, state.kept(k, None)), "on_change": None} for k in _widget_keys(lesson)]
    with st.form(FORM, border=False):
        if isinstance(ask, Choice):
            facts = lessons.localized(w.solution.facts, _)
            labels = [lessons.fill(_(option), facts, precision, _) for option in ask.options]  # this run's language
            st.radio(_("Your prediction"), list(range(len(ask.options))), index=None, **kept[0],
                     format_func=labels.__getitem__)
        elif isinstance(ask, Number):
            # no bounds in the box (Streamlit's left a number out of range in a red box with an English tooltip,
            # and the click checked nothing): commit() says the range in words, and the box keeps what was typed
            controls.number_input(_("Your prediction"), step=ask.step, placeholder=_("Type a number"), width=320,
                                  **kept[0])
            st.caption(tolerance_text(ask))
        elif isinstance(ask, Token):
            tokens = [text.md_escape(t) for t in lessons.token_choices(w.config)]
            st.radio(_("Your prediction"), list(range(len(tokens))), index=None, horizontal=True,
                     format_func=tokens.__getitem__, **kept[0])
        else:
            tokens = w.config.tokens
            for label, bound in zip((_("Query (row)"), _("Key (column)")), kept, strict=True):
                st.radio(label, list(range(len(tokens))), index=None, horizontal=True,
                         format_func=tokens.__getitem__, **bound)
        checked = st.form_submit_button(_("Check my answer"), key=CHECK, icon=":material/check:", on_click=commit)
    if checked and shown_attempt(lesson.key) is None:  # commit() found the prediction incomplete or out of range
        st.warning(st.session_state.pop(OUT_OF_RANGE, None) or (
                   _("Pick a query and a key first.") if isinstance(ask, Cell) else
                   _("Type a number first.") if isinstance(ask, Number) else _("Pick an answer first.")),
                   icon=":material/info:")


def tolerance_text(ask: Number) -> str:
    """How near the answer a typed number must be to count as right (lessons.judge), said under the box it is typed
    in: "within ±0.05 of the answer", or for a relative tolerance "within 25% of the answer"."""
    if ask.relative:
        return _("Counted right within {percent} of the answer.").format(percent=f"{ask.tolerance * 100:g}%")
    return _("Counted right within ±{tolerance} of the answer.").format(
        tolerance=format_number(ask.tolerance, 4, "short"))


def out_of_range(ask: Number, guess: float) -> str | None:
    """Why a number typed as a prediction is not one (attn_core.number_in_range: under ``ask.low``, over
    ``ask.high``), with the range in words; None when it is one."""
    try:
        number_in_range(_("Your prediction"), guess, ask.low, ask.high)
    except AttentionInputError as err:
        if ask.low is None or ask.high is None:
            return i18n.error_text(err)
        return i18n.sentences(i18n.error_text(err), _("Type a number from {low} to {high}.").format(
            low=f"{ask.low:g}", high=f"{ask.high:g}"))
    return None


def commit() -> None:
    """on_click of Check my answer: keep the prediction in the widgets and, once complete, judge it and record it."""
    lesson = current()
    st.session_state.pop(OUT_OF_RANGE, None)
    for k in _widget_keys(lesson):
        st.session_state[state.KEPT][k] = st.session_state.get(k)
    guess = _guess(lesson)
    if guess is None:
        return
    if isinstance(lesson.ask, Number) and (refused := out_of_range(lesson.ask, guess)):
        st.session_state[OUT_OF_RANGE] = refused  # said under the box (prediction), which keeps what was typed
        return
    right = lessons.judge(lesson, worked(lesson).solution, guess)
    st.session_state[ANSWERS].setdefault(lesson.key, []).append((guess, right))
    st.session_state[RETRY].discard(lesson.key)
    st.session_state[SKIPPED].discard(lesson.key)


def retry() -> None:
    """on_click of Try again: hide the answer and start from empty widgets (the record keeps every answer)."""
    lesson = current()
    st.session_state[RETRY].add(lesson.key)
    for k in _widget_keys(lesson):
        st.session_state[state.KEPT].pop(k, None)


# ---- trying it ------------------------------------------------------------------------------------------------


def try_it(w: lessons.Worked) -> NoReturn:
    """Load the lesson's configuration into the explorer (Undo brings the learner's back) and open its page (a
    model lesson's also shows its sentence and layer on A real model, and a lesson that ran the model the other
    sentences, the heads switched off and the layer scanned that it used)."""
    lesson = w.lesson
    message = state.set_config(w.config, what=state.change(N_("lesson “{title}” loaded"), title=lesson.title))
    if message:  # a lesson's configuration is valid (tests/core/test_lessons.py): never expected
        raise RuntimeError(message)
    kept = st.session_state[state.KEPT]
    if (o := origins.origin_of(w.config)) is not None:  # a model's layer: its page opens on the lesson's model
        if sources(lesson)[0] != o.model:  # the learner's could not be read, or is of another kind
            st.session_state[SOURCE_KEYS[o.role]] = o.model
        FOLLOW[o.role](o)  # the page shows the lesson's text, layer and head
    if (shown := w.solution.model_page) is not None:
        if shown.others:
            kept[model_views.OTHERS] = "\n".join(shown.others)
            kept[model_views.EFFECT_ON] = 0
        kept.update({model_views.ABLATE: [model_output.head_name(*pair) for pair in shown.ablate],
                     model_views.ABLATE_HOW: shown.how, model_views.EFFECTS: shown.scan})
    st.session_state[state.PRESET] = lesson.preset
    head, query = w.solution.follow or (0, lesson.query)
    st.session_state[state.HEAD] = head
    if query is not None:
        st.session_state[state.QUERY] = query
    st.switch_page(lesson.page.file)


def move_on(lesson: lessons.Lesson) -> None:
    """The buttons under a lesson: Previous, and Next (once answered) or Skip; the last lesson says it is."""
    at = lessons.index_of(lesson.key)
    nav = st.container(horizontal=True)
    nav.button(_("Previous lesson"), key="learn_previous", icon=":material/arrow_back:", disabled=at == 0,
               on_click=step, args=(-1,))
    if at + 1 == len(lessons.LESSONS):
        nav.markdown(_("This is the last lesson. Go back to any lesson with the list above."))
    elif attempts(lesson.key):
        nav.button(_("Next lesson"), key="learn_next", icon=":material/arrow_forward:", on_click=step, args=(1,))
    else:
        nav.button(_("Skip this lesson"), key="learn_skip", icon=":material/skip_next:", on_click=skip)
