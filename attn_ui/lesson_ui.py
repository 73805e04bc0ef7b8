"""Learn's glue: which lesson is open, the learner's answers (kept across pages), the prediction widgets, the
``?lesson=`` link, and **Try it yourself**.

The lessons themselves (texts, configurations, how each answer is computed) are data in :mod:`attn_ui.lessons`.
Progress lives in the session-state keys ``state.LESSON``, ``LESSON_ANSWERS``, ``LESSON_RETRY`` and
``LESSON_SKIPPED``: not widget keys, so it survives a page switch; a prediction not yet committed keeps its value
in the kept store of :func:`attn_ui.state.bind` (through :func:`bind`).

Links: ``?lesson=<key>`` (on any page's address, e.g. ``/learn?lesson=causal``) is read once, when a session
starts, and opens Learn on that lesson. While a lesson is open its key stays in the address bar, so the address
is a link to it.
"""

from __future__ import annotations

from typing import NoReturn

import streamlit as st

import attn_models

from . import lessons, model_views, registry, share_ui, state, text
from .i18n import N_, _, ngettext
from .lessons import Answer, Cell, Choice, Number

PARAM = "lesson"  # the query parameter that names a lesson: ?lesson=<lessons.Lesson.key>
CHECK = "learn_check"  # widget key of "Check my answer"


# ---- the link -------------------------------------------------------------------------------------------------


def apply_query_param(pg: st.Page) -> None:
    """Once per session: open Learn on the lesson ``?lesson=`` names (after ``st.navigation``, before ``pg.run``).

    An unknown name opens Learn on the first lesson and says so; the parameter is removed.
    """
    if st.session_state.get(state.LESSON_LINK_APPLIED):
        return
    st.session_state[state.LESSON_LINK_APPLIED] = True
    key = st.query_params.get(PARAM)
    if key is None:
        return
    if lessons.by_key(key) is None:
        del st.query_params[PARAM]
        state.notify(_("This link names a lesson “{key}” that does not exist, so Learn opens on the first "
                       "lesson.").format(key=text.isolate(key[:40])), icon=":material/link_off:")
    else:
        st.session_state[state.LESSON] = key
    if share_ui.page_name(pg) != registry.LEARN.name:
        st.switch_page(registry.LEARN.file)


def keep_in_address_bar(lesson: lessons.Lesson) -> None:
    """Put ``?lesson=<key>`` in the address bar, so it links to the lesson open."""
    if st.query_params.get(PARAM) != lesson.key:
        st.query_params[PARAM] = lesson.key


# ---- which lesson, and how it went ------------------------------------------------------------------------------


def current() -> lessons.Lesson:
    """The lesson open (the first until the learner picks another)."""
    return lessons.by_key(st.session_state[state.LESSON] or "") or lessons.LESSONS[0]


def open_lesson(key: str) -> None:
    """on_click: open the lesson ``key``."""
    st.session_state[state.LESSON] = key


def step(delta: int) -> None:
    """on_click: open the lesson ``delta`` places after the current one (before it if negative)."""
    i = lessons.index_of(current().key) + delta
    open_lesson(lessons.LESSONS[min(max(i, 0), len(lessons.LESSONS) - 1)].key)


def skip() -> None:
    """on_click: leave the current lesson without an answer (marked skipped) for the next one."""
    key = current().key
    if not attempts(key):
        st.session_state[state.LESSON_SKIPPED].add(key)
    step(1)


def model_for(lesson: lessons.Lesson) -> attn_models.Model | None:
    """The model a model lesson reads: A real model's (downloaded with a progress bar the first time), or the
    operator's when the learner named one there that cannot be read (refused, or not on this server); None for the
    other lessons. Raises attn_models.ModelError (the learner's model's) when neither can be read."""
    if not lesson.needs_model:
        return None
    try:
        return model_views.model(model_views.source())
    except attn_models.ModelError as err:
        if model_views.source() == model_views.operator_source():
            raise
        try:
            return model_views.model(model_views.operator_source())
        except attn_models.ModelError:
            raise err from None  # why the learner's cannot be read: what A real model says too


def worked(lesson: lessons.Lesson) -> lessons.Worked:
    """The lesson's configuration, trace and answer (attn_core). Raises attn_models.ModelError (see model_for)."""
    return lessons.solved(lesson.key, model_for(lesson))


def attempts(key: str) -> list[tuple[Answer, bool]]:
    """Every answer committed to lesson ``key``, oldest first: (prediction, right?)."""
    return st.session_state[state.LESSON_ANSWERS].get(key, [])


def shown_attempt(key: str) -> tuple[Answer, bool] | None:
    """The answer the lesson shows (its last), or None while unanswered or being tried again."""
    tries = attempts(key)
    return tries[-1] if tries and key not in st.session_state[state.LESSON_RETRY] else None


def status(key: str) -> str:
    """How the lesson went, in a few words: "not answered yet", "skipped", "right", "right on try 2", "wrong", …
    (in the learner's language)."""
    tries = attempts(key)
    n = len(tries)
    if not tries:
        return _("skipped") if key in st.session_state[state.LESSON_SKIPPED] else _("not answered yet")
    if key in st.session_state[state.LESSON_RETRY]:
        return ngettext("trying again ({n} try so far)", "trying again ({n} tries so far)", n).format(n=n)
    if tries[-1][1]:
        return _("right") if n == 1 else _("right on try {n}").format(n=n)
    return _("wrong") if n == 1 else _("wrong ({n} tries)").format(n=n)


def progress() -> tuple[int, int]:
    """(lessons answered, lessons whose last answer is right)."""
    answered = [tries for tries in st.session_state[state.LESSON_ANSWERS].values() if tries]
    return len(answered), sum(tries[-1][1] for tries in answered)


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


def prediction(w: lessons.Worked, precision: int) -> Answer | None:
    """The widgets to give the prediction (a choice, a number, or a query and a key); returns it, or None."""
    lesson, ask = w.lesson, w.lesson.ask
    kept = [state.bind(k, state.kept(k, None)) for k in _widget_keys(lesson)]
    if isinstance(ask, Choice):
        facts = lessons.localized(w.solution.facts, _)
        labels = [lessons.fill(_(option), facts, precision) for option in ask.options]  # in this run's language
        st.radio(_("Your prediction"), list(range(len(ask.options))), index=None, **kept[0],
                 format_func=labels.__getitem__)
    elif isinstance(ask, Number):
        st.number_input(_("Your prediction"), min_value=ask.low, max_value=ask.high, step=ask.step, value=None,
                        format="%g", placeholder=_("Type a number"), width=240, **kept[0])
    else:
        tokens = w.config.tokens
        for label, bound in zip((_("Query (row)"), _("Key (column)")), kept, strict=True):
            st.radio(label, list(range(len(tokens))), index=None, horizontal=True, format_func=tokens.__getitem__,
                     **bound)
    return _guess(lesson)


def commit() -> None:
    """on_click of Check my answer: judge the prediction in the widgets and keep it."""
    lesson = current()
    guess = _guess(lesson)
    if guess is None:
        return
    right = lessons.judge(lesson, worked(lesson).solution, guess)
    st.session_state[state.LESSON_ANSWERS].setdefault(lesson.key, []).append((guess, right))
    st.session_state[state.LESSON_RETRY].discard(lesson.key)
    st.session_state[state.LESSON_SKIPPED].discard(lesson.key)


def retry() -> None:
    """on_click of Try again: hide the answer and start from empty widgets."""
    lesson = current()
    st.session_state[state.LESSON_RETRY].add(lesson.key)
    for k in _widget_keys(lesson):
        st.session_state[state.KEPT].pop(k, None)


# ---- trying it ------------------------------------------------------------------------------------------------


def try_it(w: lessons.Worked) -> NoReturn:
    """Load the lesson's configuration into the explorer (Undo brings the learner's back) and open its page (a
    model lesson's also shows its sentence and layer on A real model)."""
    lesson = w.lesson
    message = state.set_config(w.config, what=state.change(N_("lesson “{title}” loaded"), title=lesson.title))
    if message:  # a lesson's configuration is valid (tests/core/test_lessons.py): never expected
        raise RuntimeError(message)
    model_views.follow_origin(w.config)
    st.session_state[state.PRESET] = lesson.preset
    st.session_state[state.HEAD] = 0
    if lesson.query is not None:
        st.session_state[state.QUERY] = lesson.query
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
