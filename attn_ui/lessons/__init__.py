"""The lessons of the Learn page: the course (their order), and the one place a lesson is worked out.

- attn_ui.lessons.engine: what a lesson is (a configuration, a setup, a question with a prediction to commit, how the
  answer is computed from the attention trace, an explanation, the page where the learner tries it), how an answer is
  judged and how its texts are filled. Pure data and numpy over attn_core: no Streamlit.
- attn_ui.lessons.by_hand, attn_ui.lessons.modern and attn_ui.lessons.with_models: the content, one :class:`Lesson`
  each (adding a lesson is one entry in the right one, and its independent answer in tests/core/test_lessons.py, or
  tests/core/test_lessons_modern.py for modern attention's).
- attn_ui.lessons.lesson_ui (Streamlit glue: the learner's progress, Try it yourself) and lesson_views (charts).

The texts are templates: ``{name}`` stands for the fact ``name`` that the lesson's solver computed from the trace
(numbers written by :mod:`attn_ui.widgets.numbers`), so no number a lesson reveals is typed by hand. Every text a
learner reads is written in English and marked with ``N_`` for the catalogs; the page translates it when it shows it
(``i18n._(template)``, then :func:`fill` with :func:`localized` facts). Nothing here is ever translated, so
:func:`solved` (kept in the server's byte budget) holds the same English for every language.
"""


from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from attn_ui.lessons import by_hand, modern, with_models
from attn_ui.lessons.by_hand import TUTORIAL
from attn_ui.lessons.engine import (
    Answer,
    BarsView,
    Cell,
    Choice,
    Difference,
    Lesson,
    MatrixView,
    ModelPage,
    Number,
    Solution,
    Token,
    Worked,
    answer_text,
    configuration,
    fill,
    judge,
    localized,
    sentences,
    show,
    template_fields,
    texts,
    token_choices,
    work,
)
from attn_ui.lessons.with_models import (
    MASKED_SENTENCE,
    MODEL_OTHER,
    MODEL_SENTENCE,
    TRANSLATE_SENTENCES,
    WRITE_PROMPT,
    readable_sentence,
)

if TYPE_CHECKING:
    from attn_models import Model

__all__ = [
    "LESSONS", "by_key", "index_of", "solved",
    "Answer", "BarsView", "Cell", "Choice", "Difference", "Lesson", "MatrixView", "ModelPage", "Number", "Solution",
    "Token", "Worked", "answer_text", "configuration", "fill", "judge", "localized", "sentences", "show",
    "template_fields", "texts", "token_choices", "work",
    "MASKED_SENTENCE", "MODEL_OTHER", "MODEL_SENTENCE", "TRANSLATE_SENTENCES", "TUTORIAL", "WRITE_PROMPT",
    "readable_sentence",
]

#: the course: the lessons done by hand, then modern attention's (what today's models change), then the ones that look
#: inside a pretrained model
LESSONS: tuple[Lesson, ...] = by_hand.LESSONS + modern.LESSONS + with_models.LESSONS
_BY_KEY = {lesson.key: lesson for lesson in LESSONS}


def by_key(key: str) -> Lesson | None:
    """The lesson a link names, or None.

    >>> by_key("causal").title, by_key("nowhere")
    ('The causal mask', None)
    """
    return _BY_KEY.get(key)


def index_of(key: str) -> int:
    """The lesson's place in the course (0 for the first)."""
    return LESSONS.index(_BY_KEY[key])


def solved(key: str, model: Model | None = None) -> Worked:
    """The lesson ``key`` with its configuration, its trace (attn_core) and its solution, computed once (per model,
    for a model lesson; see :func:`configuration`), kept in the server's byte budget (attn_ui.infra.budget), a model
    lesson's under the model's name (its source: the same weights), never the live object.

    The arrays are shared by every caller: read them, never change them.
    """
    by_hand_work, model_work = _cached()
    if model is None:
        return by_hand_work(key)
    return model_work(key, model.name, _model=model)


@functools.cache
def _cached():  # -> (by hand, with a model): budget-cached work()
    """The budget's cached :func:`work`, made on first use: importing the lessons imports no Streamlit (the budget
    does), so tests/core and a program read the course without it."""
    from attn_ui.infra import budget

    @budget.cached("lesson", slots=budget.EXPLORER_SLOTS)
    def by_hand_work(key: str) -> Worked:
        return work(_BY_KEY[key])

    @budget.cached("lesson_model")
    def model_work(key: str, source: str, _model: Model | None = None) -> Worked:
        return work(_BY_KEY[key], _model)

    return by_hand_work, model_work
