"""The lessons of the Learn page: one entry per lesson, and the small functions that judge and explain them.

Pure data and numpy over attn_core: no Streamlit (pages/learn.py draws a lesson, attn_ui.lessons.lesson_ui keeps the
learner's progress). A lesson is a configuration, a short setup, a question with a prediction to commit, how the
answer is computed from the attention trace of that configuration, an explanation, and the page where the learner
tries it. Adding a lesson is adding one :class:`Lesson` to :data:`LESSONS`.

The texts are templates: ``{name}`` stands for the fact ``name`` that the lesson's solver computed from the trace
(numbers written by :mod:`attn_ui.widgets.numbers`), so no number a lesson reveals is typed by hand.

Every text a learner reads (titles, setups, questions, options, explanations, hints, the reveal's rows and chart
titles) is written here in English and marked with :func:`N_` for the catalogs; the page translates it when it shows
it (``i18n._(template)``, then :func:`fill` with :func:`localized` facts). Nothing here is ever translated, so
:func:`solved` (cached) holds the same English for every language.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Literal

import numpy as np

from attn_core import (
    Config,
    MultiHeadTrace,
    Words,
    analysis,
    embed,
    initialize,
    load_preset,
    make_config,
    positional_encoding,
    run,
    softmax,
)
from attn_ui.app import registry
from attn_ui.app.i18n import N_
from attn_ui.infra import budget
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
Family = Literal["encoder", "causal", "translator"]  # the kinds of pretrained model a lesson reads
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
    family : "encoder", "causal", "translator" or None
        The kind of pretrained model whose layer the configuration is (None: no model): ``build`` and ``solve``
        receive the loaded model of that family (an encoder: the one A real model reads; "causal": a GPT-2, the one
        A model that writes reads; "translator": a T5), and the lesson cannot be done while no model can be read,
        or when the model is not of the kind it needs (``build`` raises attn_models.ModelError saying so).
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

    >>> token_choices(make_config(("a", "b", "a"), np.eye(3), np.eye(3), np.eye(3), np.eye(3)))
    ('0: a', '1: b', '2: a')
    """
    return _labels(cfg)


def sentences(text: str) -> int:
    """How many sentences a text has (ends of sentences followed by a space, or the end).

    >>> sentences("One. Two, with 0.5 in it! Three?")
    3
    """
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


# ---- the lessons' configurations ------------------------------------------------------------------------------

TUTORIAL = "seed000"  # the tutorials' example: 3 inputs, d_model 4, W_Q, W_K, W_V of 4 × 3, scaled by √3


def _all_scores_equal() -> Config:
    tokens = ("the", "cat", "sat", "down")
    w_k = initialize("xavier_uniform", (4, 3), seed=1)  # [d_model, d_k]
    w_v = initialize("xavier_uniform", (4, 3), seed=2)  # [d_model, d_v]
    return make_config(tokens, embed(list(tokens), 4, seed=0), np.zeros((4, 3)), w_k, w_v)


FRUITS = ("apple", "banana", "cherry", "date")
LOOKUP_KEY = 2  # every query equals cherry's key


def _lookup() -> Config:
    eye = np.eye(4)  # one-hot inputs and keys
    w_q = np.zeros((4, 4))
    w_q[:, LOOKUP_KEY] = 1.0  # [d_model, d_k]: every token's query is cherry's key
    w_v = np.array([[10.0], [20.0], [30.0], [40.0]])  # [d_model, d_v = 1]: each fruit's value
    return make_config(FRUITS, eye, w_q, eye, w_v)


def _wide_random() -> Config:
    """32 tokens of 128 N(0, 1) inputs; the queries are the first 64 columns, the keys the other 64."""
    eye = np.eye(128)
    x = initialize("gaussian", (32, 128), seed=0)  # [n_seq, d_model]
    return make_config(tuple(f"t{i}" for i in range(1, 33)), x, eye[:, :64], eye[:, 64:], eye[:, :8])


def _huge_scores() -> Config:
    """Scores near 1000: queries 1000, 1001, 1002 (d_k = 1) meet keys 1, 1.001, 1.002."""
    x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])  # [3, 2]
    return make_config(("big", "bigger", "biggest"), x, np.array([[1000.0], [1.0]]), np.array([[1.0], [0.001]]),
                       np.eye(2))


PADDED = ("I", "like", "tea", "[PAD]")


def _padded() -> Config:
    t = load_preset(TUTORIAL)
    return make_config(PADDED, embed(list(PADDED), 4, seed=3), t.w_q, t.w_k, t.w_v, mask_kind="padding",
                       is_pad=(False, False, False, True))


SENTENCE = ("dog", "bites", "man")
SWAP = [2, 1, 0]  # "dog bites man" -> "man bites dog"


def _sentence(tokens: tuple[str, ...], positions: bool) -> Config:
    """Deterministic embeddings of width 4 (seed 0, as Inputs & weights makes them), the tutorials' weights."""
    t = load_preset(TUTORIAL)
    x = embed(list(tokens), 4, seed=0)  # [3, 4]
    if positions:
        x = x + positional_encoding(len(tokens), 4)
    return make_config(tokens, x, t.w_q, t.w_k, t.w_v)


def _two_heads() -> Config:
    """The tutorials' inputs; head 0 has the tutorials' weights, head 1 three seeded random ones."""
    t = load_preset(TUTORIAL)
    more = [initialize("xavier_uniform", (4, 3), seed=s) for s in (11, 12, 13)]  # [4, 3] each
    return make_config(t.tokens, t.x, np.hstack([t.w_q, more[0]]), np.hstack([t.w_k, more[1]]),
                       np.hstack([t.w_v, more[2]]), n_heads=2)  # W_O: the identity [6, 6]


def _wide_values() -> Config:
    """The tutorials' inputs with d_k = 2 (their first two columns) and d_v = 5 (two more value columns)."""
    t = load_preset(TUTORIAL)
    w_v = np.hstack([t.w_v, initialize("xavier_uniform", (4, 2), seed=5)])  # [4, 5]
    return make_config(t.tokens, t.x, t.w_q[:, :2], t.w_k[:, :2], w_v)


MODEL_SENTENCE = "The cat sat on the mat."
MODEL_LAYER = 2  # all-MiniLM-L6-v2: every head of this layer gives [CLS] the largest share on this sentence


def _model_layer(model: Model) -> Config:
    return model.layer_config(MODEL_SENTENCE, MODEL_LAYER)


# what a real model does: the lessons that run it with a head switched off or a layer replaced
MODEL_OTHER = "A cat was lying on a rug."  # compared with MODEL_SENTENCE (A real model's first other sentence)
MASKED_SENTENCE = "The cat sat on the [MASK]."
SMALL = 0.005  # a change of the similarity smaller than this is "no change" in the options


def _encoder(model: Model) -> Model:
    """The model, when it is a sentence encoder (what the similarity lessons need); else ModelError saying so."""
    from attn_models import DEFAULT_MODEL, ROLE_WORDS, ModelError, shown_name

    if model.role != "encoder":
        raise ModelError(N_("{name} is {kind}. This lesson needs a sentence encoder such as {encoder}."),
                         name=shown_name(model.name), kind=ROLE_WORDS[model.role], encoder=DEFAULT_MODEL)
    if model.has_mlm:
        raise ModelError(N_("{name} is a masked-language model: it was trained to fill in a [MASK], not to compare "
                            "sentences. This lesson needs a sentence encoder such as {encoder}."),
                         name=shown_name(model.name), encoder=DEFAULT_MODEL)
    return model


def _scanned(model: Model) -> tuple[int, int]:
    """The two layers whose heads the head lesson switches off one by one: the two in the middle."""
    return max(model.n_layers // 2 - 1, 0), model.n_layers // 2


def _middle_layer(model: Model) -> Config:
    """The later of the two layers scanned, on the lesson's sentence (Try it yourself opens it)."""
    return _encoder(model).layer_config(MODEL_SENTENCE, _scanned(model)[1])


def _query_zero(model: Model, layer: int | None = None) -> Config:
    """Layer ``layer`` (the middle one by default) on the lesson's sentence with W_Q all zeros, its bias row too:
    every query is 0."""
    cfg = _encoder(model).layer_config(MODEL_SENTENCE, model.n_layers // 2 if layer is None else layer)
    return replace(cfg, w_q=np.zeros_like(cfg.w_q))


def _masked_last_layer(model: Model) -> Config:
    """The last layer on the masked sentence; ModelError when the model cannot fill in a [MASK]."""
    from attn_models import ModelError, shown_name

    if model.role != "encoder" or not model.has_mlm:
        raise ModelError(N_("{name} has no masked-language-model head (the cls.predictions weights of a "
                            "BertForMaskedLM): it cannot fill in a [MASK]. This lesson needs a BERT checkpoint that "
                            "has one."), name=shown_name(model.name))
    return model.layer_config(MASKED_SENTENCE, model.n_layers - 1)


# ---- the lessons' solvers: the answer and the facts, from the trace -------------------------------------------


def _labels(cfg: Config) -> tuple[str, ...]:
    """The tokens as a chart's labels: as they are (isolated: attn_ui.widgets.text.isolate), or numbered ("1: the")
    when a
    word occurs twice."""
    return tuple(map(isolate, cfg.tokens)) if len(set(cfg.tokens)) == cfg.n_seq else tuple(token_labels(cfg))


def _heatmaps(cfg: Config, *views: tuple[str, np.ndarray, str]) -> tuple[MatrixView, ...]:
    """Query × key heatmaps of the configuration's tokens: (title, values, "signed" or "weights")."""
    return tuple(MatrixView(title, values, _labels(cfg), _labels(cfg), kind) for title, values, kind in views)


def _outputs(cfg: Config, *views: tuple[str, np.ndarray, tuple[str, ...]]) -> tuple[MatrixView, ...]:
    """Token × column heatmaps: (title, values [n_seq, d], row labels)."""
    return tuple(MatrixView(title, values, rows, tuple(map(str, range(values.shape[1]))), y_title=N_("token"),
                            x_title=N_("column")) for title, values, rows in views)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(a, b, rtol=0.0, atol=1e-9))


FOCUS = 1  # the by-hand lessons follow input2


def _solve_best_match(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, i = trace.heads[0], FOCUS
    best = int(np.argmax(t.weights[i]))
    return Solution(
        answer=best,
        facts={"query": cfg.tokens[i], "x_row": cfg.x[i], "q_row": t.q[i], "scores": t.scores[i],
               "n_seq": cfg.n_seq, "d_model": cfg.d_model, "w_shape": cfg.w_q.shape, "d_k": cfg.d_k,
               "divisor": t.divisor, "weights": t.weights[i], "best": cfg.tokens[best], "s_best": t.scores[i, best],
               "w_best": t.weights[i, best]},
        numbers=((N_("input2's query (its row of Q)"), "q_row"),
                 (N_("its scores against input1, input2, input3"), "scores"),
                 (N_("divided by √d_k = √{d_k}"), "divisor"), (N_("its weights"), "weights")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ"), t.scores, "signed"), (N_("Weights"), t.weights, "weights")),
    )


def _solve_match_weight(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, i = trace.heads[0], FOCUS
    best = int(np.argmax(t.weights[i]))
    runner_up = np.sort(t.scaled[i])[-2]
    raw = softmax(t.scores[i])  # [n_k]: the same row without the division
    return Solution(
        answer=float(t.weights[i, best]),
        facts={"scores": t.scores[i], "d_k": cfg.d_k, "divisor": t.divisor, "n_seq": cfg.n_seq,
               "n_others": cfg.n_seq - 1, "gap_raw": t.scores[i, best] - np.sort(t.scores[i])[-2],
               "best": cfg.tokens[best], "scaled": t.scaled[i],
               "exps": np.exp(t.scaled[i]), "total": float(np.exp(t.scaled[i]).sum()),
               "gap": t.scaled[i, best] - runner_up, "ratio": float(np.exp(t.scaled[i, best] - runner_up)),
               "w_best": t.weights[i, best], "weights": t.weights[i], "w_raw": raw[best]},
        numbers=((N_("scores ÷ √d_k"), "scaled"), (N_("e to the power of each"), "exps"), (N_("their sum"), "total"),
                 (N_("weights: each e^s divided by the sum"), "weights")),
        views=_heatmaps(cfg, (N_("Weights"), t.weights, "weights")),
    )


def _solve_uniform(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    return Solution(
        answer=float(t.weights[0, 0]),
        facts={"n": cfg.n_seq, "weight": t.weights[0, 0], "v_mean": t.v.mean(axis=0), "out_row": t.output[0],
               "spread": Difference(float(np.abs(t.output - t.output[0]).max())), "q_row": t.q[0]},
        numbers=((N_("a query (the first row of Q)"), "q_row"), (N_("every weight"), "weight"),
                 (N_("the average of the value rows"), "v_mean"), (N_("every token's output"), "out_row")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ"), t.scores, "signed"), (N_("Weights"), t.weights, "weights")),
    )


LOOKUP_OPTIONS = (
    N_("exactly cherry's value, {v_hit}"),
    N_("between the average of the {n} values ({v_mean}) and cherry's value ({v_hit})"),
    N_("exactly the average of the {n} values, {v_mean}"),
    N_("more than cherry's value"),
)


HINT_DIVISOR = 0.1  # the lookup lesson's hint: the divisor that makes it nearly exact


def _solve_lookup(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, hit = trace.heads[0], LOOKUP_KEY
    out, v = float(t.output[0, 0]), t.v[:, 0]  # d_v = 1: one number per token
    v_hit, v_mean = float(v[hit]), float(v.mean())
    answer = (0 if np.isclose(out, v_hit, rtol=0, atol=1e-9) else 2 if np.isclose(out, v_mean, rtol=0, atol=1e-9)
              else 3 if out > v_hit else 1)
    other = 0 if hit != 0 else 1
    return Solution(
        answer=answer,
        facts={"n": cfg.n_seq, "d_k": cfg.d_k, "hint_divisor": HINT_DIVISOR,
               "w_hint": softmax(t.scores[0] / HINT_DIVISOR)[hit], "values": v, "v_hit": v_hit, "v_mean": v_mean,
               "out": out, "dot_hit": t.scores[0, hit],
               "dot_other": t.scores[0, other], "divisor": t.divisor, "gap": t.scaled[0, hit] - t.scaled[0, other],
               "w_hit": t.weights[0, hit], "w_other": t.weights[0, other], "weights": t.weights[0],
               "scores_row": t.scores[0]},
        numbers=((N_("a query's scores against apple, banana, cherry, date"), "scores_row"),
                 (N_("divided by √d_k = √{d_k}"), "divisor"), (N_("its weights"), "weights"),
                 (N_("the values"), "values"),
                 (N_("the output (every token's)"), "out")),
        views=_heatmaps(cfg, (N_("Weights"), t.weights, "weights")),
    )


def _solve_largest_cell(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    row, col = (int(i) for i in np.unravel_index(np.argmax(t.weights), t.weights.shape))
    runner_up = np.sort(t.scaled[row])[-2]
    return Solution(
        answer=(row, col),
        facts={"scores": t.scores, "row": cfg.tokens[row], "col": cfg.tokens[col], "w": t.weights[row, col],
               "s_best": t.scaled[row, col], "s_next": runner_up, "gap": t.scaled[row, col] - runner_up,
               "ratio": float(np.exp(t.scaled[row, col] - runner_up)), "rounded": np.round(t.weights, 1),
               "w_scaled": float(softmax(t.scores / np.sqrt(cfg.d_k)).max()), "d_k": cfg.d_k,
               "weights": t.weights},
        numbers=((N_("the scores QKᵀ, row by row"), "scores"), (N_("the weights, row by row"), "weights"),
                 (N_("the largest weight"), "w")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ (not divided)"), t.scores, "signed"),
                        (N_("Weights"), t.weights, "weights")),
    )


FACTOR = 10  # the temperature lesson multiplies the scores by this
SHARPNESS_OPTIONS = (
    N_("they get sharper: closer to all the weight on one key"),
    N_("they get flatter: closer to equal weights"),
    N_("nothing changes: softmax ignores a common factor"),
    N_("sharper in some rows, flatter in others"),
)


def _solve_temperature(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    after = softmax(FACTOR * t.masked)  # [n_q, n_k]
    h_before, h_after = analysis.row_entropy(t.weights), analysis.row_entropy(after)  # [n_q] each
    answer = (2 if np.allclose(h_before, h_after) else 0 if (h_after < h_before).all()
              else 1 if (h_after > h_before).all() else 3)
    return Solution(
        answer=answer,
        facts={"factor": FACTOR, "d_k": cfg.d_k, "n_seq": cfg.n_seq, "h_max": float(np.log(cfg.n_seq)),
               "h_before": h_before, "h_after": h_after,
               "mean_before": float(h_before.mean()), "mean_after": float(h_after.mean()),
               "var_before": float(t.scaled.var()), "var_after": float((FACTOR * t.scaled).var()),
               "top_before": t.weights.max(axis=1), "top_after": after.max(axis=1)},
        numbers=((N_("entropy of each row (nats), as they are"), "h_before"),
                 (N_("… with the scores times {factor}"), "h_after"),
                 (N_("largest weight of each row, as they are"), "top_before"),
                 (N_("… with the scores times {factor}"), "top_after"),
                 (N_("variance of the scores, as they are"), "var_before"), (N_("… times {factor}"), "var_after")),
        views=(*_heatmaps(cfg, (N_("Weights"), t.weights, "weights"),
                          (N_("Weights, scores times 10"), after, "weights")),
               BarsView(N_("Entropy of each row of weights"), cfg.tokens,
                        ((N_("as they are"), h_before), (N_("scores times 10"), h_after)), N_("entropy (nats)"))),
    )


def _solve_sqrt_dk(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    v = analysis.variance_stats(t.q, t.k)
    return Solution(
        answer=v.var_scores,
        facts={"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_k": cfg.d_k, "n_scores": t.scores.size,
               "var_q": v.var_q, "var_k": v.var_k, "var_scores": v.var_scores, "var_scaled": v.var_scaled,
               "sqrt_dk": float(np.sqrt(cfg.d_k))},
        numbers=(("var(Q)", "var_q"), ("var(K)", "var_k"), ("var(QKᵀ)", "var_scores"),
                 ("var(QKᵀ / √d_k)", "var_scaled")),
        views=(BarsView(N_("Variance of the entries"), ("Q", "K", "QKᵀ", "QKᵀ / √d_k"),
                        ((N_("variance"), np.array([v.var_q, v.var_k, v.var_scores, v.var_scaled])),),
                        N_("variance")),),
    )


NAIVE_OPTIONS = (
    N_("the same weights as the other formula"),
    N_("NaN (not a number) in every cell"),
    N_("zeros in every cell"),
    N_("all the weight on the largest score"),
)


def _solve_stable_softmax(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    cmp = analysis.compare_softmax(t.masked[0])
    naive, stable = cmp.naive_weights, cmp.stable_weights  # [n_k] each
    one_hot = np.zeros_like(stable)
    one_hot[np.argmax(cmp.scores)] = 1.0
    answer = (1 if np.isnan(naive).all() else 0 if np.allclose(naive, stable) else 2 if (naive == 0).all()
              else 3 if np.allclose(naive, one_hot) else 0)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "s_low": float(t.scores.min()), "s_high": float(t.scores.max()),
               "row": cmp.scores, "max_exp": analysis.MAX_EXP, "naive_exp": cmp.naive_exp, "naive": naive,
               "shifted": cmp.shifted, "stable_exp": cmp.stable_exp, "stable": stable},
        numbers=((N_("the first row of scores, x"), "row"), ("exp(x)", "naive_exp"), (N_("exp(x) ÷ its sum"), "naive"),
                 ("x − max", "shifted"), ("exp(x − max)", "stable_exp"), (N_("exp(x − max) ÷ its sum"), "stable")),
        views=_heatmaps(cfg, (N_("Weights (with the largest score subtracted)"), t.weights, "weights")),
    )


CAUSAL_OPTIONS = (
    N_("exactly its own value row"),
    N_("the average of all {n_seq} value rows"),
    N_("a blend of all {n_seq} value rows, weighted by its scores"),
    N_("zeros: the mask hides every key from it"),
)


def _solve_causal(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    out, v = t.output[0], t.v  # [d_v], [n_k, d_v]
    answer = (0 if _close(out, v[0]) else 3 if _close(out, 0 * out) else 1 if _close(out, v.mean(axis=0)) else 2)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "d_k": cfg.d_k, "d_v": cfg.d_v, "first": cfg.tokens[0], "last": cfg.tokens[-1],
               "w_first": t.weights[0], "w_last": t.weights[-1],
               "out": out, "v_first": v[0], "diff": Difference(float(np.abs(out - v[0]).max())),
               "scores_first": t.masked[0]},
        numbers=((N_("the first token's scores after the mask"), "scores_first"), (N_("its weights"), "w_first"),
                 (N_("its value row"), "v_first"), (N_("its output"), "out"),
                 (N_("the last token's weights"), "w_last")),
        views=(MatrixView(N_("Weights"), t.weights, _labels(cfg), _labels(cfg), "weights", masked=~t.mask),),
    )


def _solve_padding(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    pad, i = cfg.is_pad.index(True), cfg.tokens.index("tea")
    open_ = run(make_config(cfg.tokens, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v)).heads[0]  # the same, no mask
    return Solution(
        answer=float(t.weights[i, pad]),
        facts={"n_words": cfg.n_seq - sum(cfg.is_pad), "pad": cfg.tokens[pad], "w_pad": t.weights[i, pad],
               "pad_col": t.weights[:, pad],
               "w_open": open_.weights[i, pad], "w_tea": t.weights[i], "open_tea": open_.weights[i],
               "row_sum": float(t.weights[i].sum())},
        numbers=((N_("tea's weights, with the mask"), "w_tea"), (N_("… without it"), "open_tea"),
                 (N_("the padding token's column of weights"), "pad_col")),
        views=(MatrixView(N_("Weights, padding mask"), t.weights, _labels(cfg), _labels(cfg), "weights",
                          masked=~t.mask),
               *_heatmaps(cfg, (N_("Weights, no mask"), open_.weights, "weights"))),
    )


SWAP_OPTIONS = (
    N_("the same rows as before, with dog's and man's swapped"),
    N_("every row has new numbers"),
    N_("nothing changes: the same rows in the same order"),
    N_("some rows change, the others stay"),
)


def _solve_swap(positions: bool, cfg: Config, trace: MultiHeadTrace) -> Solution:
    swapped_cfg = _sentence(tuple(cfg.tokens[j] for j in SWAP), positions)
    before, after = trace.output, run(swapped_cfg).output  # [n_seq, d_out] each
    moved = before[SWAP]  # the old rows, in the new order
    # each new row against every old row: the smallest difference says whether it is an old row
    nearest = np.abs(after[:, None, :] - before[None, :, :]).max(axis=2).min(axis=1)  # [n_seq]
    answer = (2 if _close(after, before) else 0 if _close(after, moved)
              else 1 if (nearest > 1e-9).all() else 3)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "d_model": cfg.d_model, "before": before, "after": after,
               "diff_moved": Difference(float(np.abs(after - moved).max())),
               "least_change": float(nearest.min()), "bites_change": float(np.abs(after[1] - before[1]).max())},
        numbers=((N_("outputs of “dog bites man”"), "before"), (N_("outputs of “man bites dog”"), "after"),
                 (N_("largest difference from the old rows, swapped"), "diff_moved")),
        views=_outputs(cfg, (N_("Outputs of “dog bites man”"), before, cfg.tokens),
                       (N_("Outputs of “man bites dog”"), after, swapped_cfg.tokens)),
    )


def _solve_heads(cfg: Config, trace: MultiHeadTrace) -> Solution:
    tutorial = load_preset("seed003_heads")  # the Korean Python tutorial's 8 heads of 64
    widths = (cfg.w_q.shape[1], cfg.w_v.shape[1])
    more = next(h for h in range(cfg.n_heads + 1, widths[0] + 1) if all(w % h == 0 for w in widths))  # the hint's
    return Solution(
        answer=float(trace.concat.shape[1]),
        facts={"n_heads": cfg.n_heads, "d_v": cfg.d_v, "d_k": cfg.d_k, "n_seq": cfg.n_seq,
               "width": trace.concat.shape[1], "concat_shape": trace.concat.shape,
               "head_shape": trace.heads[0].output.shape,
               "diff": Difference(float(np.abs(trace.output - trace.concat).max())), "h3": tutorial.n_heads,
               "more_heads": more, "d_k_more": cfg.d_k * cfg.n_heads // more, "d_v_more": cfg.d_v * cfg.n_heads // more,
               "d3": tutorial.d_v,
               "w3": run(tutorial).concat.shape[1]},
        numbers=((N_("each head's output"), "head_shape"), (N_("the concatenation"), "concat_shape"),
                 (N_("largest difference between the output (times W_O = I) and the concatenation"), "diff")),
        views=(MatrixView(N_("The heads side by side"), trace.concat, cfg.tokens,
                          tuple(map(str, range(trace.concat.shape[1]))), y_title=N_("token"), x_title=N_("column"),
                          n_heads=cfg.n_heads),),
    )


WIDTH_OPTIONS = (
    N_("{d_k}, the width of the queries and keys"),
    N_("{d_v}, the width of the values"),
    N_("{d_model}, the width of the inputs"),
    N_("{n_seq}, the number of tokens"),
)


def _solve_value_width(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    widths = (cfg.d_k, cfg.d_v, cfg.d_model, cfg.n_seq)  # in the order of WIDTH_OPTIONS
    return Solution(
        answer=widths.index(t.output.shape[1]),
        facts={"d_k": cfg.d_k, "d_v": cfg.d_v, "d_model": cfg.d_model, "n_seq": cfg.n_seq,
               "q_shape": t.q.shape, "v_shape": t.v.shape, "w_shape": t.weights.shape, "out_shape": t.output.shape},
        numbers=((N_("Q and K"), "q_shape"), ("V", "v_shape"), (N_("the weights"), "w_shape"),
                 (N_("the output"), "out_shape")),
        views=_outputs(cfg, ("V", t.v, cfg.tokens), (N_("Output"), t.output, cfg.tokens)),
    )


SINK_OPTIONS = (
    N_("[CLS], the token the tokenizer puts before the sentence"),
    N_("[SEP], the token it puts after the sentence"),
    N_("one of the words ({words})"),
)


def _solve_sink(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:  # the layer alone says it
    tokens = cfg.tokens
    real = ~np.array(cfg.is_pad) if cfg.is_pad else np.ones(cfg.n_seq, dtype=bool)  # [n_seq]: not padding
    cls, sep = 0, int(np.flatnonzero(real)[-1])  # [CLS] opens the sentence, [SEP] closes it
    words = [j for j in range(cfg.n_seq) if real[j] and j not in (cls, sep)]
    weights = np.stack([h.weights for h in trace.heads])  # [n_heads, n_seq, n_seq]
    share = weights[:, real, :].mean(axis=1)  # [n_heads, n_seq]: each key's weight, averaged over the queries
    groups = (share[:, cls], share[:, sep], share[:, words].sum(axis=1))  # in the order of SINK_OPTIONS
    top = share.argmax(axis=1)  # [n_heads]: the key each head gives the most
    counts = (int(np.sum(top == cls)), int(np.sum(top == sep)), int(np.isin(top, words).sum()))
    best = int(np.argmax(counts))
    names = ("[CLS]", "[SEP]", N_("the words"))
    o = cfg.origin or {}
    sharpest = int(np.argmax(groups[best]))  # the head that gives the answer's token(s) the most
    return Solution(
        answer=best,
        facts={"model": _model_name(o), "sentence": str(o.get("sentence", "")),
               "layer": int(o.get("layer", 0)), "n_heads": cfg.n_heads, "tokens": " ".join(map(isolate, tokens)),
               "words": ", ".join(isolate(tokens[j]) for j in words), "n_best": counts[best], "best": names[best],
               "n_cls": counts[0], "n_sep": counts[1], "n_words": counts[2], "share_cls": float(groups[0].mean()),
               "share_sep": float(groups[1].mean()), "share_words": float(groups[2].mean()), "sharpest": sharpest},
        numbers=((N_("heads whose largest share goes to [CLS]"), "n_cls"), (N_("… to [SEP]"), "n_sep"),
                 (N_("… to one of the words"), "n_words"),
                 (N_("weight on [CLS], averaged over the heads"), "share_cls"),
                 (N_("weight on [SEP], averaged over the heads"), "share_sep"),
                 (N_("weight on all the words together, averaged over the heads"), "share_words")),
        views=(BarsView(N_("Where each head's weight goes (averaged over the queries)"),
                        tuple(map(str, range(cfg.n_heads))), tuple(zip(names, groups, strict=True)),
                        y_title=N_("share of the weight"), stacked=True, category_label=N_("head {category}")),
               MatrixView(N_("Head {sharpest}'s attention weights"), trace.heads[sharpest].weights, _labels(cfg),
                          _labels(cfg), "weights")),
    )


def _similarity(model: Model, intervention=None) -> float:  # attn_models.Intervention or None
    """The cosine similarity of the lesson's two sentences, with ``intervention``."""
    from attn_models import cosine_similarities

    emb = model.embed_sentences((MODEL_SENTENCE, MODEL_OTHER), intervention=intervention)  # [2, d_model]
    return float(cosine_similarities(emb)[0, 1])


WHICH_HEAD_OPTIONS = (
    N_("head {head_a} of layer {layer_a}"),
    N_("head {head_b} of layer {layer_b}"),
    N_("neither: each moves it by less than {small}"),
)


def _solve_which_head(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    layers = _scanned(model)
    sim = _similarity(model)
    after = model.similarity_effects((MODEL_SENTENCE, MODEL_OTHER), layers=list(layers))  # [2, n_heads]
    change = after - sim  # [2, n_heads]
    top = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(change)), change.shape))  # (row, head): moves it most
    other = 1 - top[0]
    least = (other, int(np.argmin(np.abs(change[other]))))  # the head of the other layer that moves it least
    a, b = sorted([top, least])  # in layer order
    changes = np.array([change[a], change[b]])
    answer = 2 if np.abs(changes).max() < SMALL else int(np.argmax(np.abs(changes)))
    o = cfg.origin or {}
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MODEL_SENTENCE, "other": MODEL_OTHER, "sim": sim,
               "layer_a": layers[a[0]], "head_a": a[1], "layer_b": layers[b[0]], "head_b": b[1],
               "after_a": after[a], "after_b": after[b], "change_a": changes[0], "change_b": changes[1],
               "small": SMALL, "n_heads": model.n_heads, "n_scanned": change.size, "layer_1": layers[0],
               "layer_2": layers[1], "layer_top": layers[top[0]], "head_top": top[1],
               "change_top": float(change[top])},
        numbers=((N_("the similarity, as trained"), "sim"),
                 (N_("with head {head_a} of layer {layer_a} switched off"), "after_a"),
                 (N_("… a change of"), "change_a"),
                 (N_("with head {head_b} of layer {layer_b} switched off"), "after_b"),
                 (N_("… a change of"), "change_b")),
        views=(MatrixView(N_("Change in the similarity when each head alone is switched off"), change,
                          tuple(map(str, layers)), tuple(map(str, range(model.n_heads))), y_title=N_("layer"),
                          x_title=N_("head")),),
        model_page=ModelPage(others=(MODEL_OTHER,), ablate=((layers[top[0]], top[1]),), scan=layers[top[0]]),
    )


MASK_OPTIONS = (
    N_("“{top}” stays the top word, with a higher probability"),
    N_("“{top}” stays the top word, with a lower probability"),
    N_("another word takes the top place"),
)


def _solve_masked_word(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    from attn_models import Intervention

    layer = model.n_layers - 1
    before = model.mask_probs(MASKED_SENTENCE)[0]  # [vocab]: the first [MASK]
    top = int(np.argmax(before))
    effects = model.mask_effects(MASKED_SENTENCE, top, layers=[layer])[0] - before[top]  # [n_heads]
    head = int(np.argmax(np.abs(effects)))  # the head of the last layer that moves the top word most
    after = model.mask_probs(MASKED_SENTENCE, intervention=Intervention(ablate={(layer, head)}))[0]  # [vocab]
    new_top = int(np.argmax(after))
    answer = 2 if new_top != top else 0 if after[top] > before[top] else 1
    word = model.tokenizer.id_to_token
    shown = list(dict.fromkeys([*np.argsort(-before, kind="stable")[:5], *np.argsort(-after, kind="stable")[:5]]))
    o = cfg.origin or {}
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MASKED_SENTENCE, "layer": layer, "head": head,
               "n_heads": model.n_heads, "top": word(top), "p_top": before[top], "p_top_after": after[top],
               "new_top": word(new_top), "p_new": after[new_top], "change": float(effects[head]),
               "tops_before": ", ".join(word(int(i)) for i in np.argsort(-before, kind="stable")[:5]),
               "tops_after": ", ".join(word(int(i)) for i in np.argsort(-after, kind="stable")[:5])},
        numbers=((N_("the probability of “{top}”, as trained"), "p_top"),
                 (N_("… with head {head} of layer {layer} switched off"), "p_top_after"),
                 (N_("the top words, as trained"), "tops_before"),
                 (N_("… with the head switched off"), "tops_after")),
        views=(BarsView(N_("The words for the [MASK]"), tuple(word(int(i)) for i in shown),
                        ((N_("as trained"), before[shown]), (N_("the head switched off"), after[shown])),
                        N_("probability")),),
        model_page=ModelPage(ablate=((layer, head),)),
    )


ZERO_OPTIONS = (
    N_("it rises, by at least {small}"),
    N_("it falls, by at least {small}"),
    N_("it changes by less than {small}"),
)


def _solve_query_zero(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    from attn_models import Intervention

    sim = _similarity(model)
    layer = int((cfg.origin or {}).get("layer", 0))
    every = np.array([_similarity(model, Intervention(config=cfg if i == layer else _query_zero(model, i)))
                      for i in range(model.n_layers)])  # [n_layers]: W_Q = 0 in that layer, the rest as trained
    after = float(every[layer])
    change = after - sim
    answer = 2 if abs(change) < SMALL else 0 if change > 0 else 1
    weights = np.stack([h.weights for h in trace.heads])  # [n_heads, n_seq, n_seq]
    o = cfg.origin or {}
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MODEL_SENTENCE, "other": MODEL_OTHER,
               "layer": layer, "n_heads": cfg.n_heads, "n_seq": cfg.n_seq, "sim": sim, "every": every,
               "sim_low": float(every.min()), "layer_low": int(np.argmin(every)), "sim_high": float(every.max()),
               "layer_high": int(np.argmax(every)),
               "sim_after": after, "change": change, "small": SMALL, "weight": 1 / cfg.n_seq,
               "spread": Difference(float(np.abs(weights - 1 / cfg.n_seq).max())),
               "out_spread": Difference(float(np.abs(trace.concat - trace.concat[0]).max()))},
        numbers=((N_("the similarity, as trained"), "sim"), (N_("… with W_Q of layer {layer} all zeros"), "sim_after"),
                 (N_("the change"), "change"), (N_("every attention weight in layer {layer}"), "weight"),
                 (N_("the similarity with W_Q all zeros in layer 0, 1, … in turn"), "every")),
        views=(MatrixView(N_("Head 0's attention weights with W_Q = 0"), trace.heads[0].weights, _labels(cfg),
                          _labels(cfg), "weights"),
               BarsView(N_("The similarity with W_Q all zeros in one layer"), tuple(map(str, range(model.n_layers))),
                        ((N_("as trained"), np.full(model.n_layers, sim)), (N_("W_Q all zeros"), every)),
                        N_("cosine similarity"), category_label=N_("layer {category}"))),
        model_page=ModelPage(others=(MODEL_OTHER,)),
    )


# ---- the models that generate: a GPT-2 writes the next word, a T5 translates --------------------------------------

WRITE_PROMPT = "The cat sat on the"  # English, as the model reads it (also tests/tiny_gpt2.PROMPTS[0], the reference's)
#: the sentence the translation lesson reads: the Korean tutorial's (its transformers pipeline translates it to
#: French), else, for a model whose vocabulary lacks its words (a tiny test checkpoint), a plainer one
TRANSLATE_SENTENCES = ("It is easy to translate languages with transformers", "The cat sat on the mat.")
TRANSLATE_MAX = 24  # the most tokens of the translation the lesson writes (the tutorial's is about 15 in t5-small)


def _model_name(origin: dict) -> str:
    """The model a lesson's configuration came from, as a page names it (a folder on the server by its name only)."""
    from attn_models import shown_name

    return shown_name(str(origin.get("model", "")))


def _word(label: str) -> str:
    """A token label as a word in a sentence: without the space or ▁ that marks a word's start (GPT-2, T5)."""
    return label.replace("▁", " ").strip() or label


def _most_concentrated(rows: np.ndarray) -> int:  # [n_heads, n_k] -> a head
    """The head whose row puts the largest weight on a single key (the first such head on a tie)."""
    return int(np.argmax(rows.max(axis=1)))


def _causal_lm(model):  # -> attn_models.CausalLM
    """The model, when it writes (a GPT-2-family causal language model); else ModelError saying so."""
    from attn_models import CAUSAL_MODEL, ModelError, shown_name

    if model.role != "causal":
        raise ModelError(N_("{name} is not a causal language model: it does not write the next word. This lesson "
                            "needs one of the GPT-2 family, such as {causal}."), name=shown_name(model.name),
                         causal=CAUSAL_MODEL)
    return model


def _writing_head(model) -> Config:
    """On WRITE_PROMPT, the head of the last layer whose last query (the position that predicts the next word) puts
    the largest weight on a single token, with its causal mask."""
    lm = _causal_lm(model)
    last = lm.forward(WRITE_PROMPT).attentions[-1, :, -1, :]  # [n_heads, n_seq]: each head's last row
    return lm.layer_config(WRITE_PROMPT, lm.n_layers - 1, head=_most_concentrated(last))


def _solve_next_word(cfg: Config, trace: MultiHeadTrace, model) -> Solution:
    lm = _causal_lm(model)
    o = cfg.origin or {}
    layer, head = int(o["layer"]), int(o["head"])
    out = lm.forward(WRITE_PROMPT)  # the logits, and every head's last row for the rule
    t = trace.heads[head if cfg.n_heads > 1 else 0]  # the whole layer, or the head alone (a wide model)
    row = t.weights[-1]  # [n_seq]: the last query's weights
    top, second = (int(j) for j in np.argsort(-row, kind="stable")[:2])
    probs = softmax(out.logits[-1])  # [vocab]: the next token, at temperature 1
    nxt = int(np.argmax(probs))
    hidden = t.weights[~t.mask]  # the weights of the cells the causal mask hides (above the diagonal)
    labels = token_choices(cfg)
    return Solution(
        answer=top,
        facts={"model": _model_name(o), "prompt": WRITE_PROMPT, "n_seq": cfg.n_seq, "layer": layer,
               "head": head, "n_heads": lm.n_heads, "last": _word(cfg.tokens[-1]), "top": _word(cfg.tokens[top]),
               "w_top": row[top], "second": _word(cfg.tokens[second]), "w_second": row[second], "w_row": row,
               "n_masked": int(hidden.size), "masked_max": Difference(float(np.abs(hidden).max())),
               "w_first": t.weights[0, 0], "next": _word(lm.piece(nxt)), "p_next": probs[nxt],
               "head_max": out.attentions[layer, :, -1, :].max(axis=1)},
        numbers=((N_("the last position's weights, token by token"), "w_row"), (N_("the largest"), "w_top"),
                 (N_("each head's largest weight in the last row, layer {layer}"), "head_max"),
                 (N_("the largest weight above the diagonal (masked)"), "masked_max"),
                 (N_("the probability of the next word, “{next}”"), "p_next")),
        views=(MatrixView(N_("Head {head} of layer {layer}: attention weights"), t.weights, labels, labels, "weights",
                          masked=~t.mask),
               BarsView(N_("The last position's weights"), labels, ((N_("weight"), row),), N_("weight"))),
        follow=(head if cfg.n_heads > 1 else 0, cfg.n_seq - 1),
    )


def _translator(model):  # -> attn_models.Translator
    """The model, when it translates (a T5 encoder-decoder); else ModelError saying so."""
    from attn_models import TRANSLATOR_MODEL, ModelError, shown_name

    if model.role != "translator":
        raise ModelError(N_("{name} is not a translator: it has no decoder that writes French. This lesson needs an "
                            "encoder-decoder of the T5 family, such as {t5}."), name=shown_name(model.name),
                         t5=TRANSLATOR_MODEL)
    return model


def readable_sentence(model) -> str:
    """The first of TRANSLATE_SENTENCES the model's tokenizer reads without an unknown token (<unk>), with the task's
    prefix; the last when none is."""
    from attn_models.t5 import PREFIX

    unk = model.tokenizer.token_to_id("<unk>")
    return next((s for s in TRANSLATE_SENTENCES if unk is None or unk not in model.encode(PREFIX + s)[1]),
                TRANSLATE_SENTENCES[-1])


def _translated(model):  # attn_models.Translator -> (sentence, attn_models.Translation)
    """The lesson's sentence and its greedy translation (once per model: build and solve both read it)."""
    return _translation(model.name, _model=model)


@budget.cached("lesson_translation")  # the model is keyed by its name (its source): the same weights
def _translation(source: str, _model=None):  # -> (sentence, attn_models.Translation)
    sentence = readable_sentence(_translator(_model))
    return sentence, _model.translate(sentence, max_new=TRANSLATE_MAX)


def _translation_head(model) -> Config:
    """The last decoder layer's cross-attention on the lesson's sentence, one query row per output token, with the
    head whose row for the first output token puts the largest weight on a single source token."""
    sentence, t = _translated(_translator(model))
    layer = model.config.n_decoder_layers - 1
    return model.cross_config(sentence, t.output_ids[:-1], layer, head=_most_concentrated(t.cross[layer, :, 0, :]))


def _solve_source_word(cfg: Config, trace: MultiHeadTrace, model) -> Solution:
    sentence, t = _translated(_translator(model))
    o = cfg.origin or {}
    layer, head = int(o["layer"]), int(o["head"])
    rows = np.stack([h.weights[0] for h in trace.heads])  # [n_heads, n_src]: each head's row for output token 0
    row, mean = rows[head], rows.mean(axis=0)  # [n_src] each
    top, second = (int(j) for j in np.argsort(-row, kind="stable")[:2])
    top_mean = int(np.argmax(mean))
    out = _word(t.output_tokens[0])
    labels = token_choices(cfg)
    which = (N_("It is the sentence the Korean tutorial translates with a transformers pipeline.")
             if sentence == TRANSLATE_SENTENCES[0] else
             N_("The Korean tutorial's sentence has words this model's vocabulary does not know, so the lesson "
                "reads a plainer one."))
    return Solution(
        answer=top,
        facts={"model": _model_name(o), "source": str(o.get("prefix", "")) + sentence,
               "n_src": cfg.n_seq, "translation": t.text, "which": which, "out": out, "p_out": t.probs[0],
               "layer": layer, "head": head, "n_heads": cfg.n_heads, "top": _word(cfg.tokens[top]),
               "w_top": row[top], "second": _word(cfg.tokens[second]), "w_second": row[second],
               "row_sum": float(row.sum()), "top_mean": _word(cfg.tokens[top_mean]), "w_top_mean": mean[top_mean],
               "w_row": row, "w_mean": mean, "head_max": rows.max(axis=1), "start": cfg.y_tokens[0]},
        numbers=((N_("“{out}”'s weights over the English tokens"), "w_row"), (N_("the largest"), "w_top"),
                 (N_("each head's largest weight for “{out}”, layer {layer}"), "head_max"),
                 (N_("the weights averaged over the heads"), "w_mean"),
                 (N_("the probability the model gave “{out}”"), "p_out")),
        views=(MatrixView(N_("Every head of layer {layer}: the weights for “{out}”"), rows,
                          tuple(map(str, range(cfg.n_heads))), labels, "weights", y_title=N_("head"),
                          x_title=N_("English token")),),  # bars of 2 × n_src tokens would not fit a phone
        follow=(head, 0),
    )


# ---- the course ------------------------------------------------------------------------------------------------

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="best-match", title=N_("By hand: the best match"),
        build=partial(load_preset, TUTORIAL), preset=TUTORIAL, query=FOCUS, shows=("x", "w_q", "w_k"),
        setup=N_("This is the example that the Chinese, Korean and English tutorials work through by hand: {n_seq} "
                 "inputs of {d_model} numbers and weights W_Q, W_K of shape {w_shape} (below). The query of input2 is "
                 "its row of X, {x_row}, times W_Q; each key is a row of X times W_K. A key's score is the dot "
                 "product of the query with it."),
        question=N_("Which key does input2's query match best, that is, which key gets the largest weight?"),
        ask=Choice(("input1", "input2", "input3")), solve=_solve_best_match,
        explanation=N_("input2's query is {q_row}, and its dot products with the {n_seq} keys are {scores}. {best}'s "
                       "key gives the largest score, {s_best}. Softmax keeps the order of the scores, so the largest "
                       "score gets the largest weight: {w_best} of the row {weights}."),
        page=registry.STEPS,
        hint=N_("Step by step follows input2 in its drill-down at the bottom. Change input2's row of X on Inputs & "
                "weights and come back to see which key wins then."),
    ),
    Lesson(
        key="match-weight", title=N_("By hand: how much weight"),
        build=partial(load_preset, TUTORIAL), preset=TUTORIAL, query=FOCUS,
        setup=N_("The same example: input2's query scores the {n_seq} keys {scores}, and the scores are divided by "
                 "√d_k = √{d_k} = {divisor} before softmax. Softmax turns a row of scores s into weights e^s divided "
                 "by the sum of e^s over the row, so only the gaps between the scores matter."),
        question=N_("How much weight does input2 give to its best match, {best}? (a number between 0 and 1)"),
        ask=Number(tolerance=0.05, low=0.0, high=1.0, step=0.01), solve=_solve_match_weight,
        explanation=N_("Divided by √d_k = {divisor}, the scores become {scaled}. The best stands {gap} above the "
                       "runner-up, and softmax turns a gap g into a weight ratio of e^g, here {ratio}: so {best} "
                       "takes {w_best} of the row and the other {n_others} share the rest. Without the division the "
                       "gap would be {gap_raw} and {best}'s weight {w_raw}."),
        page=registry.STEPS,
        hint=N_("The drill-down at the bottom of Step by step writes out this softmax number by number. Change the "
                "scale on Scaling and watch the weight move."),
    ),
    Lesson(
        key="uniform", title=N_("All scores equal"),
        build=_all_scores_equal,
        setup=N_("{n} tokens, each with its own input, and random W_K and W_V. W_Q is all zeros, so every query is a "
                 "row of zeros."),
        question=N_("What weight does each query give to each key?"),
        ask=Number(tolerance=0.01, low=0.0, high=1.0, step=0.01), solve=_solve_uniform,
        explanation=N_("A zero query has a dot product of 0 with every key, so every score is 0, and softmax of {n} "
                       "equal scores gives each key the same weight, {weight} = 1/{n}. Each output row is then the "
                       "plain average of the value rows, {v_mean}, the same for every token (the largest difference "
                       "between two of them is {spread}). This is uniform attention: the layer cannot tell the tokens "
                       "apart."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, set one cell of W_Q to 1 and come back: the rows of weights stop being equal."),
    ),
    Lesson(
        key="lookup", title=N_("A soft dictionary lookup"),
        build=_lookup,
        setup=N_("{n} tokens with one-hot inputs, and W_K is the identity, so the keys are one-hot too: a dictionary "
                 "with {n} entries. Each fruit's value is a single number, {values}. W_Q gives every token the same "
                 "query, equal to cherry's key."),
        question=N_("What does the lookup return, that is, what is each token's output?"),
        ask=Choice(LOOKUP_OPTIONS), solve=_solve_lookup,
        explanation=N_("The query meets cherry's key with a dot product of {dot_hit} and every other key with "
                       "{dot_other}; divided by √d_k = √{d_k} = {divisor}, that is a gap of only {gap}. Softmax gives "
                       "cherry {w_hit} and each other fruit {w_other}, so the output, {out}, is an average pulled "
                       "toward cherry's value: a soft lookup. With larger scores, cherry's weight goes to 1 and the "
                       "lookup becomes exact."),
        page=registry.SCALING,
        hint=N_("Choose a custom divisor on Scaling and move it down to {hint_divisor}: cherry's weight grows to "
                "{w_hint}."),
    ),
    Lesson(
        key="largest-cell", title=N_("No scaling: the largest weight"),
        build=partial(load_preset, "seed004_unscaled"), preset="seed004_unscaled",
        setup=N_("The English illustrated tutorial takes the softmax of the raw scores, without dividing them by "
                 "anything. Its scores QKᵀ, row by row (one row per query, one column per key), are {scores}."),
        question=N_("Which cell of the weights is the largest?"),
        ask=Cell(), solve=_solve_largest_cell,
        explanation=N_("Row {row}'s best score, {s_best}, stands {gap} above its runner-up, {s_next}, the widest gap "
                       "in the matrix. Softmax turns that gap into a weight ratio of e^{gap} = {ratio}, so the cell of "
                       "query {row} and key {col} takes {w} of its row. The tutorial goes on with these weights "
                       "roughly rounded; to one decimal they are {rounded}."),
        page=registry.SCALING,
        hint=N_("Scaling shows these weights beside the ones divided by √d_k: choose ÷ √d_k = √{d_k} and see the "
                "largest weight drop from {w} to {w_scaled}."),
    ),
    Lesson(
        key="temperature", title=N_("Scores times 10"),
        build=partial(load_preset, "seed001_sentence"), preset="seed001_sentence",
        setup=N_("The Korean blog post's sentence, {n_seq} words, each a vector of width {d_k}, with Q = K = V = X and "
                 "the scores divided by √d_k = √{d_k} as usual. Now multiply every score by {factor} before the "
                 "softmax."),
        question=N_("What happens to each row of weights?"),
        ask=Choice(SHARPNESS_OPTIONS), solve=_solve_temperature,
        explanation=N_("Every row gets sharper: its entropy, which is {h_max} for equal weights and 0 when one key "
                       "takes everything, falls from {mean_before} to {mean_after} on average. Multiplying the scores "
                       "by {factor} multiplies the gaps between them by {factor}, and softmax turns gaps into ratios "
                       "e^gap, so the largest score takes nearly everything. This is the English notebook tutorial's "
                       "variance argument: the variance of the scores grows from {var_before} to {var_after}, and at "
                       "that spread softmax is nearly one-hot and its gradient nearly vanishes."),
        page=registry.SCALING,
        hint=N_("Choose a custom divisor on Scaling and move it from √d_k down to a tenth of it; the saturation "
                "curves at the bottom show the entropy of every row as the divisor changes."),
    ),
    Lesson(
        key="sqrt-dk", title=N_("Why divide by √d_k"),
        build=_wide_random,
        setup=N_("{n_seq} tokens whose inputs are {d_model} random numbers each, with mean 0 and variance 1. W_Q "
                 "picks the first half of them as the query and W_K the other half as the key, so d_k = {d_k} and "
                 "every entry of Q and K has a variance of about 1."),
        question=N_("What is the variance of the scores QKᵀ (all {n_scores} of them), before any division?"),
        ask=Number(tolerance=0.25, relative=True, low=0.0, high=100_000.0, step=1.0), solve=_solve_sqrt_dk,
        explanation=N_("Each score is a sum of {d_k} products of two independent numbers of variance 1, and the "
                       "variances of independent terms add up: var(QKᵀ) ≈ d_k = {d_k}. Measured here it is "
                       "{var_scores}, with var(Q) = {var_q} and var(K) = {var_k}. Dividing by √d_k = {sqrt_dk} divides "
                       "the variance by d_k, back to {var_scaled}: that is why the Transformer divides by √d_k, "
                       "whatever the width."),
        page=registry.SCALING,
        hint=N_("On Scaling, choose none (÷ 1) and see nearly every row of weights go one-hot; the chart under "
                "“Why √d_k: measured” repeats this for every width from 1 to 512."),
    ),
    Lesson(
        key="stable-softmax", title=N_("Scores around 1000"),
        build=_huge_scores,
        setup=N_("{n_seq} tokens whose scores all lie between {s_low} and {s_high}; the first row is {row}. The "
                 "English notebook tutorial computes softmax as exp(x) divided by the sum of exp(x). The Korean blog "
                 "post first subtracts the row's largest score, as this app does."),
        question=N_("What does the first formula, exp(x) divided by the sum of exp(x), give for the first row?"),
        ask=Choice(NAIVE_OPTIONS), solve=_solve_stable_softmax,
        explanation=N_("exp of anything above {max_exp} is more than a float64 can hold, so every exp(x) becomes +∞, "
                       "and +∞ divided by +∞ is NaN. Subtracting the largest score first turns the row into {shifted}: "
                       "every exponent is 0 or less, so exp stays between 0 and 1. The weights, {stable}, are the "
                       "exact ones, because the common factor e^max cancels between the top and the bottom of the "
                       "fraction."),
        page=registry.MASKING,
        hint=N_("At the bottom of Masking, “Why softmax subtracts the row maximum” compares both formulas: set the "
                "factor to × 1 and try the other queries."),
    ),
    Lesson(
        key="causal", title=N_("The causal mask"),
        build=partial(load_preset, "seed002_causal"), preset="seed002_causal", query=0,
        setup=N_("The English notebook tutorial's {n_seq} tokens, “My name is Kishor”, with queries and keys of width "
                 "{d_k} and values of width {d_v}. A causal mask lets each token attend only to itself and to the "
                 "tokens before it, as a decoder must: it cannot read words it has not produced yet."),
        question=N_("What is the first token's output?"),
        ask=Choice(CAUSAL_OPTIONS), solve=_solve_causal,
        explanation=N_("The first token, {first}, may see only itself: its other scores become −∞, and softmax gives "
                       "its weights {w_first}. Its output is therefore exactly its own value row, {out} (the largest "
                       "difference is {diff}). Each later token sees one more key; the last, {last}, spreads its "
                       "weight over all {n_seq}: {w_last}."),
        page=registry.MASKING,
        hint=N_("On Masking, choose none and then causal, and compare the first row of weights; or make a custom "
                "mask that hides a token from itself."),
    ),
    Lesson(
        key="padding", title=N_("A padding token"),
        build=_padded,
        setup=N_("{n_words} words and a padding token, [PAD], which only fills the sequence up to a fixed length (the "
                 "sentences of a batch must be equally long). The padding mask is on."),
        question=N_("How much weight does tea give to [PAD]?"),
        ask=Number(tolerance=0.005, low=0.0, high=1.0, step=0.01), solve=_solve_padding,
        explanation=N_("The mask sets every score in [PAD]'s column to −∞ before softmax, and e^−∞ is exactly 0, so "
                       "tea gives [PAD] {w_pad}, and so does every other query: its column is {pad_col}. Without the "
                       "mask, tea would give it {w_open}. The other weights grow to fill the gap: tea's row, {w_tea}, "
                       "still sums to {row_sum}."),
        page=registry.MASKING,
        hint=N_("On Masking, pick another token as padding, or choose none and see how much [PAD] takes."),
    ),
    Lesson(
        key="permutation", title=N_("Swapping two tokens"),
        build=partial(_sentence, SENTENCE, False),
        setup=N_("The sentence “dog bites man”, each word a random vector of width {d_model} that says nothing about "
                 "its position, with the tutorials' W_Q, W_K, W_V and no mask. Swap the first and the last word: “man "
                 "bites dog”."),
        question=N_("What happens to the {n_seq} output rows?"),
        ask=Choice(SWAP_OPTIONS), solve=partial(_solve_swap, False),
        explanation=N_("Each output row depends on its own query and on the set of keys and values, not on their "
                       "order, so dog's output moves with dog and bites' output stays as it was (the largest "
                       "difference between the old rows, swapped, and the new ones is {diff_moved}). Attention is "
                       "permutation-equivariant: shuffle the inputs and the outputs shuffle the same way. On its own "
                       "it cannot tell “dog bites man” from “man bites dog”."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, type “man bites dog” as the sentence (embedding seed 0, no positional "
                "encoding), press Use this sentence, and compare the output on Step by step."),
    ),
    Lesson(
        key="positions", title=N_("Swapping with positions"),
        build=partial(_sentence, SENTENCE, True),
        setup=N_("The same sentence, but now each word's vector has the sinusoidal positional encoding of the "
                 "original Transformer added to it, so each input also says where the word stands. Swap dog and man "
                 "again."),
        question=N_("What happens to the {n_seq} output rows?"),
        ask=Choice(SWAP_OPTIONS), solve=partial(_solve_swap, True),
        explanation=N_("Now a word's input depends on where it stands, so after the swap no output row is one of the "
                       "old ones (each differs from every old row by at least {least_change}). Even bites, which did "
                       "not move, changes by up to {bites_change}, because the keys and values it reads have changed. "
                       "Positional encoding is what lets attention tell “dog bites man” from “man bites dog”."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, type “man bites dog” with Add positional encoding ticked, press Use this "
                "sentence, and compare the output on Step by step."),
    ),
    Lesson(
        key="heads", title=N_("Two heads side by side"),
        build=_two_heads,
        setup=N_("The tutorials' {n_seq} inputs, now with {n_heads} heads: each head has its own slice of W_Q, W_K and "
                 "W_V, with queries and keys {d_k} wide and values {d_v} wide. The heads' outputs are laid side by "
                 "side, and W_O is the identity."),
        question=N_("How many columns does the concatenation of the heads' outputs have?"),
        ask=Number(tolerance=0.5, low=0.0, high=10_000.0, step=1.0), solve=_solve_heads,
        explanation=N_("Each head outputs {n_seq} rows of {d_v} numbers, and the concatenation puts the {n_heads} "
                       "heads side by side: {n_heads} × {d_v} = {width} columns. With W_O = I, the layer's output is "
                       "exactly that concatenation (the largest difference is {diff}); a trained W_O mixes the heads' "
                       "columns. The Korean Python tutorial does the same at full size: {h3} heads of {d3} columns "
                       "give {h3} × {d3} = {w3}, the width of the original Transformer."),
        page=registry.MULTIHEAD,
        hint=N_("Set the number of heads to {more_heads} on Multi-head: each head's queries and keys are then "
                "{d_k_more} wide and its values {d_v_more} wide, and the concatenation keeps its width, {width}."),
    ),
    Lesson(
        key="value-width", title=N_("Values wider than keys"),
        build=_wide_values,
        setup=N_("The tutorials' {n_seq} inputs, {d_model} numbers each. This time the queries and keys are narrower "
                 "and the values wider: W_Q and W_K have {d_k} columns, W_V has {d_v}."),
        question=N_("How wide is each output row?"),
        ask=Choice(WIDTH_OPTIONS), solve=_solve_value_width,
        explanation=N_("The output is the weights times V: a {w_shape} matrix times a {v_shape} one gives {out_shape}. "
                       "Queries and keys only meet in dot products, each a single number, so their width never "
                       "reaches the output; it only has to be the same for both. The English illustrated tutorial "
                       "says so too: the values may have another width, and the output follows it."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, change the width of W_V and watch the output's shape follow it on Step by "
                "step, while the weights keep theirs."),
    ),
    Lesson(
        key="real-model", title=N_("A real model: where the heads look"),
        build=_model_layer, family="encoder", page=registry.MODEL,
        setup=N_("The model that A real model reads, {model}, is a pretrained transformer encoder. Its "
                 "tokenizer cuts “{sentence}” into {tokens}: it adds [CLS] before the sentence and [SEP] after it. "
                 "This lesson looks at its layer {layer}, whose {n_heads} heads this app computes on the model's real "
                 "weights."),
        question=N_("Each head spreads every query's weight over the keys. Which token gets the largest share in most "
                    "of the {n_heads} heads?"),
        ask=Choice(SINK_OPTIONS), solve=_solve_sink,
        explanation=N_("{n_best} of the {n_heads} heads give their largest share to {best}. Averaged over the heads, "
                       "[CLS] takes {share_cls} of each query's weight, [SEP] {share_sep}, and all the words together "
                       "{share_words}. A head must put every query's weight somewhere, since each row of softmax sums "
                       "to 1. When what a head looks for is not in the sentence, a trained model parks the weight on a "
                       "token that is always there and means little by itself, [CLS] or [SEP]: such a token is called "
                       "an attention sink."),
        hint=N_("A real model shows every layer and head on this sentence. Type another sentence, compare the layers, "
                "and open a head in the explorer to change its numbers."),
    ),
    Lesson(
        key="head-off", title=N_("A real model: which head matters"),
        build=_middle_layer, family="encoder", page=registry.MODEL,
        setup=N_("{model} turns a sentence into one vector, its embedding; two sentences that mean much the same get "
                 "embeddings whose cosine similarity is near 1. “{sentence}” and “{other}” have a similarity of {sim}. "
                 "Switching a head off replaces its output by its mean over the sentence's tokens: what the head says "
                 "about each token is gone, its average stays."),
        question=N_("Which of these two heads, switched off alone, moves the similarity more?"),
        ask=Choice(WHICH_HEAD_OPTIONS), solve=_solve_which_head,
        explanation=N_("With head {head_a} of layer {layer_a} switched off the similarity becomes {after_a}, a change "
                       "of {change_a}; with head {head_b} of layer {layer_b} it becomes {after_b}, a change of "
                       "{change_b}. Of the {n_scanned} heads of layers {layer_1} and {layer_2}, the one that moves it "
                       "most is head {head_top} of layer {layer_top}, with a change of {change_top}. Each layer adds "
                       "its heads' output to what the layers before computed (the residual path), so switching one "
                       "head off takes away only its own part of what the model builds, and the other heads keep "
                       "theirs."),
        hint=N_("A real model opens on these two sentences with head {head_top} of layer {layer_top} switched off, "
                "and “Which heads matter” switches off each head of layer {layer_top} in turn. Switch off several "
                "heads at once, or choose zeros instead of the mean, and watch the similarity move further."),
    ),
    Lesson(
        key="masked-word", title=N_("A real model: a masked word without one head"),
        build=_masked_last_layer, family="encoder", page=registry.MODEL,
        setup=N_("{model} has a masked-language-model head: for “{sentence}” it puts “{top}” in the [MASK], with a "
                 "probability of {p_top}. Now switch off head {head} of layer {layer}, its last layer: the head's "
                 "output is replaced by its mean over the sentence's tokens. Of that layer's {n_heads} heads, it is "
                 "the one that moves the probability of “{top}” most."),
        question=N_("What does the model put in the [MASK] with that head switched off?"),
        ask=Choice(MASK_OPTIONS), solve=_solve_masked_word,
        explanation=N_("With head {head} of layer {layer} switched off, the probability of “{top}” goes from {p_top} "
                       "to {p_top_after}, and the most probable word is now “{new_top}”, with {p_new}. The last "
                       "layer's output goes straight to the masked-language-model head: what its heads say about the "
                       "[MASK] token passes only W_O, the feed-forward block and that head (with their LayerNorms) "
                       "on its way to the prediction. The mean keeps what the head adds on average, so the change "
                       "comes from what it said about each token."),
        hint=N_("A real model opens on this sentence with head {head} of layer {layer} switched off, the top words "
                "before and after side by side. Switch off other heads, or choose zeros instead of the mean."),
    ),
    Lesson(
        key="query-zero", title=N_("A real model: W_Q set to zero"),
        build=_query_zero, family="encoder", page=registry.MODEL,
        setup=N_("{model} gives “{sentence}” and “{other}” a cosine similarity of {sim}. Now set W_Q of its layer "
                 "{layer} to zeros, its bias row too: every query is a row of zeros and every score is 0, so each of "
                 "the layer's {n_heads} heads spreads every query's weight evenly over the sentence's tokens. The "
                 "rest of the model stays as trained."),
        question=N_("What happens to the similarity of the two sentences?"),
        ask=Choice(ZERO_OPTIONS), solve=_solve_query_zero,
        explanation=N_("The similarity goes from {sim} to {sim_after}, a change of {change}. In layer {layer} every "
                       "weight is now {weight} for the {n_seq} tokens of “{sentence}” (the largest difference is "
                       "{spread}), so each head's output is the plain average of its value rows, the same for every "
                       "token (the largest difference between two tokens' outputs is {out_spread}). The layer no "
                       "longer tells the tokens apart, and the layers after it work on what is left. Set to zero in "
                       "each layer in turn, W_Q gives similarities from {sim_low} (layer {layer_low}) to {sim_high} "
                       "(layer {layer_high}): what a layer's attention adds depends on the layer."),
        hint=N_("A real model opens with this layer in the explorer, its W_Q at zero: “Your edits, run through the "
                "model” compares the similarities with the model as trained. Press Back to the model's weights, "
                "then change only a few cells of W_Q on Inputs & weights and come back to see how far the "
                "similarity moves."),
    ),
    Lesson(
        key="next-word", title=N_("Which earlier token does the next word look at?"),
        build=_writing_head, family="causal", page=registry.GENERATE,
        setup=N_("{model} is a decoder of the GPT-2 family: it reads “{prompt}” as {n_seq} tokens and writes what "
                 "comes next, one token at a time. The last position, “{last}”, is the one whose output predicts the "
                 "next word. This lesson looks at head {head} of layer {layer}, the last layer: of its {n_heads} "
                 "heads, it is the one whose last query puts the largest weight on a single token."),
        question=N_("Which token does the last position's query weigh most in this head?"),
        ask=Token(), solve=_solve_next_word,
        explanation=N_("Head {head} of layer {layer} gives “{top}” {w_top} of the last position's weight, and the "
                       "runner-up, “{second}”, {w_second}. The causal mask lets each position read itself and the "
                       "tokens before it, never a later one: the largest of the {n_masked} weights above the diagonal "
                       "is {masked_max}, and the first token, which sees only itself, gives itself {w_first}. Only "
                       "the last position has read the whole prompt, so its output is the one the model turns into "
                       "the next word: “{next}”, with a probability of {p_next}."),
        hint=N_("A model that writes opens on this prompt with head {head} of layer {layer} drawn large, and the "
                "explorer holds this head with its causal mask. Type another prompt and see where the last row's "
                "weight goes, or write on and watch each new token's row."),
    ),
    Lesson(
        key="source-word", title=N_("Which English word does this French word come from?"),
        build=_translation_head, family="translator", page=registry.TRANSLATE,
        setup=N_("{model} is an encoder-decoder that translates: its encoder reads “{source}” ({n_src} tokens with "
                 "the task's prefix and the end token), and its decoder writes “{translation}” one token at a time. "
                 "{which} This lesson follows the first token the decoder writes, “{out}”, in head {head} of layer "
                 "{layer}, the last decoder layer: of its {n_heads} heads, the one whose weights for that token put "
                 "the most on a single English token."),
        question=N_("Which English token does “{out}” give the most weight in this head?"),
        ask=Token(), solve=_solve_source_word,
        explanation=N_("Head {head} of layer {layer} gives “{top}” {w_top} of the weight of “{out}”, and the "
                       "runner-up, “{second}”, {w_second}. This is cross-attention: the queries come from the French "
                       "being written (the decoder's position that chose “{out}”), the keys and values from the "
                       "English the encoder read, so the row of weights is spread over the {n_src} English tokens "
                       "and sums to {row_sum}. No mask hides any of them: the whole English sentence is there before "
                       "the first French word is written. Averaged over the layer's {n_heads} heads, “{top_mean}” "
                       "takes the most, {w_top_mean}."),
        hint=N_("Try it yourself opens A model that translates on this sentence, decoder layer {layer} and head "
                "{head}; there, Open this cross-attention head in the explorer puts it on Score functions. Y's first "
                "row, {start}, is the decoder's start, whose output chose “{out}”: the queries are the rows of Y (the "
                "French being written), the keys and values the rows of X (the English); change a row of X and watch "
                "the weights move."),
    ),
)

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


def configuration(lesson: Lesson, model: Model | None = None) -> Config:
    """The lesson's configuration; a model lesson's is a layer of ``model`` (ValueError without one)."""
    if not lesson.needs_model:
        return lesson.build()
    if model is None:
        raise ValueError(f"the lesson {lesson.key!r} is a layer of a pretrained model: pass the model")
    return lesson.build(model)


def solved(key: str, model: Model | None = None) -> Worked:
    """The lesson ``key`` with its configuration, its trace (attn_core) and its solution, computed once (per model,
    for a model lesson; see :func:`configuration`), kept in the server's byte budget (attn_ui.infra.budget).

    The arrays are shared by every caller: read them, never change them.
    """
    if model is None:
        return _solved_by_hand(key)
    return _solved_with_model(key, model.name, _model=model)  # the model keyed by its name (its source)


@budget.cached("lesson", slots=budget.EXPLORER_SLOTS)
def _solved_by_hand(key: str) -> Worked:
    return _solve(key, None)


@budget.cached("lesson_model")
def _solved_with_model(key: str, source: str, _model: Model | None = None) -> Worked:
    return _solve(key, _model)


def _solve(key: str, model: Model | None) -> Worked:
    lesson = _BY_KEY[key]
    cfg = configuration(lesson, model)
    trace = run(cfg)
    solution = lesson.solve(cfg, trace, model) if lesson.needs_model else lesson.solve(cfg, trace)
    return Worked(lesson, cfg, trace, solution)
