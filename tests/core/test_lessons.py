"""The Learn page's lessons (attn_ui/lessons.py): each answer marked right is the one the numbers give.

For every lesson the expected answer is computed here from the lesson's configuration with numpy written out
(not attn_core), and the lesson's judge must accept it and refuse the wrong choices (every other option or cell,
or numbers a learner might guess wrongly). The rest checks the lessons as data: texts, facts, pages, links.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

from attn_core import MATRICES, PRESETS, Config, configs_equal, load_preset, validate_config
from attn_ui import lessons, registry
from attn_ui.lessons import Cell, Choice, Number
from tests import minilm

TRY_PAGES = {registry.STEPS, registry.SCALING, registry.MASKING, registry.MULTIHEAD, registry.MODEL}


def model_of(lesson: lessons.Lesson):
    """The model a model lesson reads: all-MiniLM-L6-v2's real weights (tests/minilm.py); None for the others."""
    return minilm.model() if lesson.needs_model else None

# ---- attention written out ------------------------------------------------------------------------------------


def softmax_rows(s: np.ndarray) -> np.ndarray:  # [n_q, n_k] -> [n_q, n_k]; -inf allowed, not a whole row
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attend(x, w_q, w_k, w_v, divisor: float, allowed: np.ndarray | None = None):
    """q, k, v, raw scores, weights, output of single-head attention: softmax(mask(q kᵀ / divisor)) v."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # [n, d_k], [n, d_k], [n, d_v]
    s = q @ k.T  # [n, n]
    scaled = s / divisor
    if allowed is not None:
        scaled = np.where(allowed, scaled, -np.inf)
    w = softmax_rows(scaled)
    return q, k, v, s, w, w @ v


def plain(cfg: Config, allowed: np.ndarray | None = None):
    """attend() on a one-head configuration, dividing as the configuration says (√d_k or 1)."""
    d_k = cfg.w_q.shape[1]
    divisor = {"sqrt_dk": np.sqrt(d_k), "none": 1.0}[cfg.scale]
    return attend(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, divisor, allowed)


def entropy(w: np.ndarray) -> np.ndarray:  # [n_q, n_k] -> [n_q]
    return -np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0), axis=1)


def sinusoids(n: int, d: int) -> np.ndarray:  # [n, d]: sin on even columns, cos on odd, as in the Transformer
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(d):
            angle = p / 10000 ** (2 * (i // 2) / d)
            pe[p, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    return pe


# ---- each lesson's answer, computed independently: (expected answer, wrong numbers to refuse) --------------------


def best_match(cfg):
    *_, w, _ = plain(cfg)
    return int(np.argmax(w[1])), []


def match_weight(cfg):
    _, _, _, s, w, _ = plain(cfg)
    unscaled = softmax_rows(s)[1].max()  # forgetting the √d_k
    return w[1].max(), [1.0, 0.5, 1 / 3, unscaled]


def uniform(cfg):
    assert not cfg.w_q.any()
    n = cfg.x.shape[0]
    return 1 / n, [0.0, 1.0, 1 / (n - 1)]


def lookup(cfg):
    *_, v, _, _, out = plain(cfg)
    value, mean, got = v[2, 0], v[:, 0].mean(), out[0, 0]  # cherry is token 2
    assert np.allclose(out, got)  # every token asks the same
    if np.isclose(got, value):
        return 0, []
    if np.isclose(got, mean):
        return 2, []
    return (3 if got > value else 1), []


def largest_cell(cfg):
    assert cfg.scale == "none"
    *_, w, _ = plain(cfg)
    return tuple(int(i) for i in np.unravel_index(np.argmax(w), w.shape)), []


def temperature(cfg):
    _, _, _, s, w, _ = plain(cfg)
    after = softmax_rows(10 * s / np.sqrt(cfg.w_q.shape[1]))
    before_h, after_h = entropy(w), entropy(after)
    assert (after_h < before_h).all()
    return 0, []


def sqrt_dk(cfg):
    q, k, *_ = plain(cfg)
    return (q @ k.T).var(), [np.sqrt(64), 1.0, 64.0**2, 0.0]


def stable_softmax(cfg):
    _, _, _, s, w, _ = plain(cfg)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s[0])  # d_k = 1: scaled = raw
        naive = e / e.sum()
    assert np.isnan(naive).all() and np.isfinite(w[0]).all()
    return 1, []


def causal(cfg):
    n = cfg.x.shape[0]
    *_, v, _, w, out = plain(cfg, np.tril(np.ones((n, n), dtype=bool)))
    assert np.allclose(out[0], v[0], atol=1e-12, rtol=0) and not np.allclose(out[0], v.mean(axis=0))
    return 0, []


def padding(cfg):
    is_pad = np.array(cfg.is_pad)
    n = len(is_pad)
    *_, w, _ = plain(cfg, np.tile(~is_pad, (n, 1)))
    *_, open_w, _ = plain(cfg)
    tea, pad = cfg.tokens.index("tea"), int(np.flatnonzero(is_pad)[0])
    return w[tea, pad], [open_w[tea, pad], 1 / n, 0.1]


def swapped_outputs(cfg, positions: bool):
    perm = [2, 1, 0]
    pe = sinusoids(*cfg.x.shape) if positions else 0.0
    x_swapped = (cfg.x - pe)[perm] + pe  # the words' own vectors swap; the positions stay
    *_, before = plain(cfg)
    *_, after = attend(x_swapped, cfg.w_q, cfg.w_k, cfg.w_v, np.sqrt(cfg.w_q.shape[1]))
    return before, after, perm


def permutation(cfg):
    before, after, perm = swapped_outputs(cfg, positions=False)
    assert np.allclose(after, before[perm], atol=1e-12, rtol=0) and not np.allclose(after, before)
    return 0, []


def positions(cfg):
    before, after, perm = swapped_outputs(cfg, positions=True)
    for row in after:  # every new row differs from every old row
        assert np.abs(before - row).max(axis=1).min() > 1e-6
    return 1, []


def heads(cfg):
    n_heads, width = cfg.n_heads, cfg.w_q.shape[1]
    d_k, d_v = width // n_heads, cfg.w_v.shape[1] // n_heads
    outs = [attend(cfg.x, cfg.w_q[:, h * d_k:(h + 1) * d_k], cfg.w_k[:, h * d_k:(h + 1) * d_k],
                   cfg.w_v[:, h * d_v:(h + 1) * d_v], np.sqrt(d_k))[-1] for h in range(n_heads)]
    concat = np.hstack(outs)
    assert np.array_equal(cfg.w_o, np.eye(concat.shape[1]))
    return concat.shape[1], [d_v, d_k, n_heads, cfg.x.shape[1], 2 * concat.shape[1]]


def value_width(cfg):
    *_, out = plain(cfg)
    widths = [cfg.w_q.shape[1], cfg.w_v.shape[1], cfg.x.shape[1], cfg.x.shape[0]]  # the options' order
    assert len(set(widths)) == 4
    return widths.index(out.shape[1]), []


def real_model(cfg):
    """From transformers' attentions (the fixture), not attn_core: per head, the key with the largest weight
    averaged over the queries; the choice ([CLS], [SEP], a word) most heads pick."""
    o = cfg.origin
    tokens, attentions = minilm.reference_attentions(o["sentence"])
    assert tokens == list(cfg.tokens) and o["pad_to"] == 0
    top = attentions[o["layer"]].mean(axis=1).argmax(axis=1)  # [n_heads]: [n_heads, n_q, n_k] -> mean over queries
    n = len(tokens)
    counts = [np.sum(top == 0), np.sum(top == n - 1), np.sum((top > 0) & (top < n - 1))]
    assert sorted(counts)[-1] > sorted(counts)[-2], "a clear majority"
    return int(np.argmax(counts)), []


EXPECTED: dict[str, Callable[[Config], tuple[object, list[float]]]] = {
    "best-match": best_match, "match-weight": match_weight, "uniform": uniform, "lookup": lookup,
    "largest-cell": largest_cell, "temperature": temperature, "sqrt-dk": sqrt_dk, "stable-softmax": stable_softmax,
    "causal": causal, "padding": padding, "permutation": permutation, "positions": positions, "heads": heads,
    "value-width": value_width, "real-model": real_model,
}

ids = [lesson.key for lesson in lessons.LESSONS]


def test_every_lesson_has_an_independent_answer():
    assert set(EXPECTED) == set(ids)


@pytest.mark.parametrize("lesson", lessons.LESSONS, ids=ids)
def test_the_answer_marked_right_is_the_one_the_numbers_give(lesson: lessons.Lesson):
    worked = lessons.solved(lesson.key, model_of(lesson))
    cfg = lessons.configuration(lesson, model_of(lesson))
    expected, wrong_numbers = EXPECTED[lesson.key](cfg)
    sol = worked.solution
    judge = lambda guess: lessons.judge(lesson, sol, guess)  # noqa: E731
    if isinstance(lesson.ask, Number):
        np.testing.assert_allclose(sol.answer, expected, rtol=1e-12, atol=1e-15)
        assert judge(expected)
        for guess in wrong_numbers:
            assert not judge(guess), f"{guess} should be wrong (answer {expected})"
    elif isinstance(lesson.ask, Choice):
        assert sol.answer == expected
        assert judge(expected)
        assert not any(judge(i) for i in range(len(lesson.ask.options)) if i != expected)
    else:
        assert sol.answer == expected
        n = cfg.x.shape[0]
        assert [(i, j) for i in range(n) for j in range(n) if judge((i, j))] == [expected]


# ---- the lessons as data -----------------------------------------------------------------------------------------


def test_a_course_of_at_least_ten_lessons_with_unique_link_names():
    assert len(lessons.LESSONS) >= 10
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key) for key in ids)
    assert [lessons.by_key(key) for key in ids] == list(lessons.LESSONS)
    assert {type(lesson.ask) for lesson in lessons.LESSONS} == {Choice, Number, Cell}  # every kind of question


@pytest.mark.parametrize("lesson", lessons.LESSONS, ids=ids)
def test_lesson_texts_read_for_a_learner(lesson: lessons.Lesson):
    facts = lessons.solved(lesson.key, model_of(lesson)).solution.facts
    for template in lessons.texts(lesson):
        assert lessons.template_fields(template) <= set(facts), template  # every {fact} is computed
        assert not re.search(r"seed ?0\d\d", template.lower()), template  # no tutorial numbers or preset names
        assert not any(key in template for key in PRESETS), template
        filled = lessons.fill(template, facts, 4)
        assert "{" not in filled and "nan" not in filled.replace("NaN", "")
    assert 2 <= lessons.sentences(lessons.fill(lesson.setup, facts, 4)) <= 4
    assert 2 <= lessons.sentences(lessons.fill(lesson.explanation, facts, 4)) <= 5
    # the numbers an explanation reveals come from the facts, never typed (single digits like 0 and 1 may be)
    assert not re.search(r"(?<![\w.^])\d{2,}|\d+\.\d+", lesson.explanation), lesson.explanation
    if isinstance(lesson.ask, Choice):
        assert 3 <= len(lesson.ask.options) <= 4


@pytest.mark.parametrize("lesson", lessons.LESSONS, ids=ids)
def test_lesson_configuration_reveal_and_page(lesson: lessons.Lesson):
    worked = lessons.solved(lesson.key, model_of(lesson))
    cfg = lessons.configuration(lesson, model_of(lesson))
    assert configs_equal(validate_config(cfg), cfg)
    assert configs_equal(worked.config, cfg)  # build() is deterministic
    if lesson.preset is not None:
        assert lesson.preset in PRESETS and configs_equal(cfg, load_preset(lesson.preset))
    assert lesson.query is None or 0 <= lesson.query < cfg.n_seq
    assert set(lesson.shows) <= set(MATRICES)
    assert lesson.page in TRY_PAGES
    sol = worked.solution
    assert sol.numbers, "the reveal shows numbers"
    assert all(name in sol.facts for _, name in sol.numbers)
    for view in sol.views:
        if isinstance(view, lessons.MatrixView):
            assert view.values.shape == (len(view.rows), len(view.cols))
            assert len(set(view.rows)) == len(view.rows) and len(set(view.cols)) == len(view.cols)  # one cell each
        else:
            assert all(values.shape == (len(view.categories),) for _, values in view.series)


def test_lessons_module_imports_no_streamlit():
    code = "import sys, attn_ui.lessons; print('streamlit' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_show_writes_numbers_with_the_app_formatter():
    assert lessons.show(np.array([-np.inf, np.inf, np.nan, 0.5]), 4) == "[−∞, +∞, NaN, 0.5]"
    assert lessons.show(np.array([[1.0, 2.0], [3.0, 4.5]]), 2) == "[[1, 2], [3, 4.5]]"
    assert lessons.fill("{a} of {b}", {"a": 0.123456, "b": "[PAD]"}, 3) == "0.123 of \\[PAD\\]"
