"""The lesson engine: what a lesson is (its question, its answer, the views that reveal it), how an answer is judged,
and how a lesson's templates are filled with the facts its solver computed. No lesson is written here: the content is
in attn_ui.lessons.by_hand and attn_ui.lessons.with_models, the course (their order) in attn_ui.lessons.

Pure data and numpy over attn_core: no Streamlit.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from attn_core import (
    Config,
    MultiHeadTrace,
    Words,
    run,
)
from attn_ui.app import registry
from attn_ui.app.i18n import N_
from attn_ui.widgets.numbers import format_number, format_numbers
from attn_ui.widgets.text import isolate, md_escape, token_labels

if TYPE_CHECKING:  # attn_models is only needed by the model lessons, which receive a loaded model
    from attn_models import Model



@dataclass(frozen=True)
class Difference:
    """A fact that is the largest difference between two things the lesson says are equal: written "exactly 0" when
    it is 0 (never "at most 0"), else as the number (a tiny one in scientific notation: "4.441e-16", never "0")."""

    value: float


Fact = float | int | str | np.ndarray | tuple[int, ...] | Difference
#: the kinds of pretrained model a lesson reads: a sentence encoder, a masked-language model (an encoder with its
#: masked-LM head), a causal language model, a translator
Family = Literal["encoder", "masked", "causal", "translator"]
Answer = int | float | tuple[int, int]  # a choice's index, a number, or a (row, column) cell


# ---- what a lesson is -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """Pick one of 3–4 answers; ``options`` are templates (facts in braces)."""

    options: tuple[str, ...]


@dataclass(frozen=True)
class Number:
    """Type a number; a guess within ``tolerance`` of the answer (times the answer's size if ``relative``) is right."""

    tolerance: float
    relative: bool = False
    low: float | None = None
    high: float | None = None
    step: float = 0.01


@dataclass(frozen=True)
class Cell:
    """Pick the cell (query row, key column) of the attention weights that is largest."""


@dataclass(frozen=True)
class Token:
    """Pick one of the configuration's tokens (X's: the keys), as many as the model's tokenizer made."""


Ask = Choice | Number | Cell | Token


@dataclass(frozen=True, eq=False)
class MatrixView:
    """A heatmap in the reveal: ``values`` [rows, cols] with its labels.

    ``title`` is a marked template (facts in braces, filled after translating), the axis titles marked texts.
    """

    title: str
    values: np.ndarray
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    kind: Literal["signed", "weights"] = "signed"
    y_title: str = N_("query")
    x_title: str = N_("key")
    masked: np.ndarray | None = None  # bool [rows, cols]: cells drawn grey as masked
    n_heads: int = 1  # more than 1: the columns are the heads' slices, marked per head


@dataclass(frozen=True, eq=False)
class BarsView:
    """A bar chart in the reveal: one group of bars per category, one bar per series.

    ``title``, ``y_title`` and the series' names are marked texts (translated where shown); the categories are
    shown as they are (tokens, matrix names), or through ``category_label``, a marked template with
    ``{category}`` ("head {category}").
    """

    title: str
    categories: tuple[str, ...]
    series: tuple[tuple[str, np.ndarray], ...]  # (name, values [n_categories])
    y_title: str
    stacked: bool = False  # the series' parts one above the other (shares of a whole) instead of side by side
    category_label: str | None = None


View = MatrixView | BarsView


@dataclass(frozen=True, eq=False)
class Solution:
    """What a lesson's solver computed from the trace.

    Attributes
    ----------
    answer : int, float or (int, int)
        The right answer: a choice's index, a number, a (query, key) cell, or a token's index.
    facts : mapping of str to number, array or text
        The named numbers the texts use (``{name}``).
    numbers : tuple of (str, str)
        The rows of "The numbers" shown with the answer: (what, a marked text; fact name).
    views : tuple of MatrixView or BarsView
        The charts shown with the answer.
    model_page : ModelPage or None
        What A real model shows when **Try it yourself** opens it.
    follow : (int, int) or None
        The head and the query (a row of the configuration) the explorer follows when **Try it yourself** loads the
        configuration (None: head 0, and the lesson's ``query``).
    """

    answer: Answer
    facts: Mapping[str, Fact]
    numbers: tuple[tuple[str, str], ...] = ()
    views: tuple[View, ...] = ()
    model_page: ModelPage | None = None
    follow: tuple[int, int] | None = None


@dataclass(frozen=True)
class ModelPage:
    """What A real model shows when **Try it yourself** opens it from a lesson that ran the model: the sentences
    compared with the lesson's (one a line there), the heads switched off ((layer, head) pairs) and how, and the
    layer whose heads "Which heads matter" switches off one by one (None: none)."""

    others: tuple[str, ...] = ()
    ablate: tuple[tuple[int, int], ...] = ()
    how: Literal["mean", "zero"] = "mean"
    scan: int | None = None


@dataclass(frozen=True)
class Lesson:
    """One lesson.

    Attributes
    ----------
    key : str
        Its name in a link (``?lesson=<key>``): lower-case letters and hyphens.
    title : str
        (Every text of a lesson is English marked with :func:`N_`, translated where it is shown.)
    build : callable () -> Config, or (model) -> Config when the lesson has a ``family``
        The lesson's configuration.
    setup : str
        2–4 sentences (a template).
    question : str
        The question (a template).
    ask : Choice, Number, Cell or Token
        How the prediction is given.
    solve : callable (Config, MultiHeadTrace) -> Solution, or (Config, MultiHeadTrace, model) when the lesson has a
        ``family``
        Computes the answer and the facts from the trace of ``build()`` (and, for a model lesson, from what the
        model does: its result with heads switched off or a layer replaced).
    explanation : str
        2–5 sentences shown with the answer (a template).
    page : registry.Page
        Where **Try it yourself** opens with the lesson's configuration loaded.
    hint : str
        What to change there.
    preset : str or None
        The preset ``build()`` returns unchanged, if any (the explorer then names it).
    query : int or None
        The query token the explorer follows when the lesson opens it.
    shows : tuple of str
        Matrices of the configuration shown with the setup ("x", "w_q", ...), to work with by hand.
    family : "encoder", "masked", "causal", "translator" or None
        The kind of pretrained model whose layer the configuration is (None: no model): ``build`` and ``solve``
        receive the loaded model of that kind (an encoder: the one A real model reads; "masked": an encoder with a
        masked-language-model head; "causal": a GPT-2, the one A model that writes reads; "translator": a T5), each
        kind's default the operator's (attn_ui.infra.settings), and the lesson cannot be done while no model can be
        read, or when the model is not of the kind it needs (attn_models.ModelError saying so).
    """

    key: str
    title: str
    build: Callable[..., Config]
    setup: str
    question: str
    ask: Ask
    solve: Callable[..., Solution]
    explanation: str
    page: registry.Page
    hint: str
    preset: str | None = None
    query: int | None = None
    shows: tuple[str, ...] = ()
    family: Family | None = None

    @property
    def needs_model(self) -> bool:
        """Whether the configuration is a layer of a pretrained model (see ``family``)."""
        return self.family is not None


@dataclass(frozen=True, eq=False)
class Worked:
    """A lesson with its configuration, the trace attn_core computed, and the solution."""

    lesson: Lesson
    config: Config
    trace: MultiHeadTrace
    solution: Solution


# ---- judging and writing ----------------------------------------------------------------------------------------


def _same(text: str) -> str:
    return text



def judge(lesson: Lesson, solution: Solution, guess: Answer) -> bool:
    """Whether ``guess`` is right.

    Examples
    --------
    >>> from attn_ui.lessons import by_key, solved
    >>> lesson = by_key("match-weight")
    >>> sol = solved("match-weight").solution
    >>> judge(lesson, sol, round(sol.answer, 2)), judge(lesson, sol, 1.0)
    (True, False)
    """
    if isinstance(lesson.ask, Number):
        size = abs(float(solution.answer)) if lesson.ask.relative else 1.0
        return abs(float(guess) - float(solution.answer)) <= lesson.ask.tolerance * size
    if isinstance(lesson.ask, Cell):
        return tuple(int(i) for i in guess) == tuple(solution.answer)
    return int(guess) == int(solution.answer)


def show(value: Fact, precision: int, translate: Callable[[str], str] = _same) -> str:
    """A fact as the learner reads it: numbers through attn_ui.widgets.numbers ("short"), text Markdown-escaped, a
    :class:`Difference` of 0 as "exactly 0" in the learner's language (``translate=i18n._``).

    >>> show(np.array([0.5, 2.0]), 4), show(1 / 3, 2), show((3, 6), 4), show("[PAD]", 4)
    ('[0.5, 2]', '0.33', '3 × 6', '\\\\[PAD\\\\]')
    >>> show(Difference(0.0), 4), show(Difference(4.4e-16), 4), show(Difference(0.25), 4)
    ('exactly 0', '4.4e-16', '0.25')
    """
    if isinstance(value, Difference):
        return translate(N_("exactly 0")) if value.value == 0 else format_number(value.value, precision, "short")
    if isinstance(value, str):
        return md_escape(value)
    if isinstance(value, tuple):
        return " × ".join(str(int(v)) for v in value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return format_number(float(array), precision, "short")
    if array.ndim == 1:
        return "[" + ", ".join(format_numbers(array, precision, "short")) + "]"
    return "[" + ", ".join(show(row, precision) for row in array) + "]"


def fill(template: str, facts: Mapping[str, Fact], precision: int, translate: Callable[[str], str] = _same) -> str:
    """The template with each ``{name}`` replaced by the fact, written by :func:`show` (``translate`` as there).

    >>> fill("weights {w}, largest {top}", {"w": np.array([0.25, 0.75]), "top": 0.75}, 2)
    'weights [0.25, 0.75], largest 0.75'
    """
    return template.format_map({name: show(facts[name], precision, translate) for name in template_fields(template)})


def template_fields(template: str) -> set[str]:
    """The fact names a template uses.

    >>> sorted(template_fields("{a} and {b}, then {a}"))
    ['a', 'b']
    """
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def texts(lesson: Lesson) -> list[str]:
    """Every template of a lesson (setup, question, options, explanation, hint)."""
    options = list(lesson.ask.options) if isinstance(lesson.ask, Choice) else []
    return [lesson.setup, lesson.question, *options, lesson.explanation, lesson.hint]


def localized(facts: Mapping[str, Fact], translate: Callable[[str], str] = _same) -> dict[str, Fact]:
    """The facts that are marked words (``N_``: attn_core.Words) translated by ``translate`` (``i18n._``); tokens,
    sentences and numbers as they are.

    >>> localized({"best": N_("the words"), "token": "the"}, str.upper)
    {'best': 'THE WORDS', 'token': 'the'}
    """
    return {name: translate(value) if isinstance(value, Words) else value for name, value in facts.items()}


def answer_text(w: Worked, guess: Answer, precision: int, translate: Callable[[str], str] = _same) -> str:
    """A prediction (or the answer) in words: the option's text, the number, or "query … , key …"; in the learner's
    language with ``translate=i18n._`` (English without)."""
    ask = w.lesson.ask
    if isinstance(ask, Choice):
        return fill(translate(ask.options[int(guess)]), localized(w.solution.facts, translate), precision, translate)
    if isinstance(ask, Cell):
        row, col = guess
        return translate(N_("query {query}, key {key}")).format(query=md_escape(w.config.tokens[row]),
                                                                key=md_escape(w.config.tokens[col]))
    if isinstance(ask, Token):
        return translate(N_("“{token}”")).format(token=md_escape(token_choices(w.config)[int(guess)].strip()))
    return format_number(float(guess), precision, "short")


def token_choices(cfg: Config) -> tuple[str, ...]:
    """The tokens a :class:`Token` prediction picks from (X's): as they are, or each with its position ("3: the")
    when a token occurs twice.

    >>> from attn_core import make_config
    >>> token_choices(make_config(("a", "b", "a"), np.eye(3), np.eye(3), np.eye(3), np.eye(3)))
    ('0: a', '1: b', '2: a')
    """
    return chart_labels(cfg)


def sentences(text: str) -> int:
    """How many sentences a text has (ends of sentences followed by a space, or the end).

    >>> sentences("One. Two, with 0.5 in it! Three?")
    3
    """
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])



# ---- helpers the lessons' solvers share ---------------------------------------------------------------------


def chart_labels(cfg: Config) -> tuple[str, ...]:
    """The tokens as a chart's labels: as they are (isolated: attn_ui.widgets.text.isolate), or numbered ("1: the")
    when a
    word occurs twice."""
    return tuple(map(isolate, cfg.tokens)) if len(set(cfg.tokens)) == cfg.n_seq else tuple(token_labels(cfg))


def configuration(lesson: Lesson, model: Model | None = None) -> Config:
    """The lesson's configuration; a model lesson's is a layer of ``model`` (ValueError without one)."""
    if not lesson.needs_model:
        return lesson.build()
    if model is None:
        raise ValueError(f"the lesson {lesson.key!r} is a layer of a pretrained model: pass the model")
    return lesson.build(model)


def work(lesson: Lesson, model: Model | None = None) -> Worked:
    """The lesson with its configuration, its trace (attn_core) and its solution."""
    cfg = configuration(lesson, model)
    trace = run(cfg)
    solution = lesson.solve(cfg, trace, model) if lesson.needs_model else lesson.solve(cfg, trace)
    return Worked(lesson, cfg, trace, solution)
