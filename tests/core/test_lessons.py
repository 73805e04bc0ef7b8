"""The Learn page's lessons (attn_ui/lessons/__init__.py): each answer marked right is the one the numbers give.

For every lesson the expected answer is computed here from the lesson's configuration with numpy written out
(not attn_core), and the lesson's judge must accept it and refuse the wrong choices (every other option or cell,
or numbers a learner might guess wrongly). The rest checks the lessons as data: texts, facts, pages, links.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from attn_core import MATRICES, PRESETS, Config, configs_equal, load_preset, validate_config
from attn_ui import lessons
from attn_ui.app import registry
from attn_ui.lessons import Cell, Choice, Number, Token
from attn_ui.widgets.numbers import format_number
from tests import minilm, tiny_bert, tiny_gpt2, tiny_t5
from tests.core import test_lessons_modern as modern
from tests.models import make_output_reference as cases

TRY_PAGES = {registry.STEPS, registry.SCALING, registry.MASKING, registry.MULTIHEAD, registry.MODERN, registry.MODEL,
             registry.GENERATE, registry.TRANSLATE}
#: what the models do, by transformers + PyTorch in float64 (tests/models/make_output_reference.py): the model
#: lessons' answers are computed from these, not with attn_models
OUTPUTS = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_outputs.npz")
#: the tiny random GPT-2 and T5 (tests/tiny_gpt2.py, tests/tiny_t5.py) run by transformers in float64
#: (tests/models/make_gpt2_reference.py, make_t5_reference.py): the lessons on the models that generate
GPT2 = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_gpt2.npz")
T5 = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_t5.npz")


def model_of(lesson: lessons.Lesson):
    """The model a model lesson reads: all-MiniLM-L6-v2's real weights (tests/minilm.py), or the tiny masked-language
    model of tests/tiny_bert for a lesson that fills in a [MASK]; None for the others."""
    return minilm.lesson_model(lesson)

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


# ---- the lessons that run a model: from transformers' numbers (tests/models/reference_outputs.npz) ----------------

SMALL = 0.005  # the options' "less than 0.005"


def similarity_pair(cfg) -> tuple[float, int]:
    """The lesson pair's similarity as trained, by transformers (sentence-transformers' pipeline), and the model's
    number of layers; the lesson's sentences are the reference's."""
    assert (lessons.MODEL_SENTENCE, lessons.MODEL_OTHER) == cases.LESSON_PAIR
    assert cfg.origin["sentence"] == lessons.MODEL_SENTENCE and cfg.origin["pad_to"] == 0
    emb = OUTPUTS["minilm_lesson_embeddings"]  # [2, 384], each of length 1
    return float(emb[0] @ emb[1]), OUTPUTS["minilm_lesson_heads"].shape[0]


def head_off_numbers(cfg):
    """The middle two layers' heads, each switched off alone (mean): the one that moves the similarity most, and the
    one of the other layer that moves it least, in layer order: ((layer, head, similarity after, change) × 2, the
    most's (layer, head, change), the layers)."""
    sim, n_layers = similarity_pair(cfg)
    layers = [n_layers // 2 - 1, n_layers // 2]
    change = OUTPUTS["minilm_lesson_heads"][layers] - sim  # [2, n_heads]
    row, head = np.unravel_index(np.argmax(np.abs(change)), change.shape)
    other = 1 - row
    least = int(np.argmin(np.abs(change[other])))
    picked = sorted([(layers[row], int(head)), (layers[other], least)])
    rows = [(lay, h, sim + change[layers.index(lay), h], change[layers.index(lay), h]) for lay, h in picked]
    return rows, (layers[row], int(head), change[row, head]), layers, sim


def head_off(cfg):
    (a, b), *_ = head_off_numbers(cfg)
    changes = [abs(a[3]), abs(b[3])]
    return (2 if max(changes) < SMALL else int(np.argmax(changes))), []


def masked_numbers(cfg):
    """The tiny masked-LM (decoder tied) at tiny_bert.MASKED[0]'s [MASK]: probabilities as trained [vocab], with the
    last layer's head that moves the top word's probability most switched off (mean) [vocab], that head, the top."""
    assert lessons.MASKED_SENTENCE == tiny_bert.MASKED[0] == cfg.origin["sentence"]
    digest = hashlib.sha256((tiny_bert.mlm_folder() / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(OUTPUTS["mlm_tied_sha256"]), "the lesson's model is the reference's"
    before = OUTPUTS["mlm_tied_0"][0]  # [vocab]
    heads = OUTPUTS["mlm_tied_lesson_heads"]  # [n_layers, n_heads, vocab]
    last = heads.shape[0] - 1
    assert cfg.origin["layer"] == last
    top = int(np.argmax(before))
    head = int(np.argmax(np.abs(heads[last, :, top] - before[top])))
    return before, heads[last, head], last, head, top


def masked_word(cfg):
    before, after, _, _, top = masked_numbers(cfg)
    if int(np.argmax(after)) != top:
        return 2, []
    return (0 if after[top] > before[top] else 1), []


def query_zero_numbers(cfg):
    """(similarity as trained, with W_Q of the lesson's layer zero (weight and bias), by transformers)."""
    sim, n_layers = similarity_pair(cfg)
    assert cfg.origin["layer"] == n_layers // 2 and not cfg.w_q.any()  # W_Q all zeros, its bias row too
    return sim, float(OUTPUTS["minilm_lesson_query_zero"][n_layers // 2])


def query_zero(cfg):
    sim, after = query_zero_numbers(cfg)
    return (2 if abs(after - sim) < SMALL else 0 if after > sim else 1), []


# ---- the lessons on the models that generate: from transformers' numbers (reference_gpt2.npz, reference_t5.npz) --


def probabilities(logits: np.ndarray) -> np.ndarray:  # [vocab] -> [vocab]
    e = np.exp(logits - logits.max())
    return e / e.sum()


def first_two(row: np.ndarray) -> tuple[int, int]:
    """The two largest entries' indices, checked apart by more than the two implementations' difference."""
    top, second = np.argsort(-row, kind="stable")[:2]
    assert row[top] - row[second] > 1e-6
    return int(top), int(second)


def next_word_numbers(cfg):
    """transformers' GPT-2 on the lesson's prompt (tiny_gpt2.PROMPTS[0]): the last layer, the head whose last row
    has the largest weight, that head's weights [n, n], every head's last row [n_heads, n], the next token, its
    probability, and the tokens as words (decoded one by one, spaces stripped)."""
    assert lessons.WRITE_PROMPT == tiny_gpt2.PROMPTS[0] == cfg.origin["sentence"]
    att = GPT2["p0_attentions"]  # [n_layers, n_heads, n, n]
    layer = att.shape[0] - 1
    last = att[layer, :, -1, :]  # [n_heads, n]
    ranked = np.sort(last.max(axis=1))
    assert ranked[-1] - ranked[-2] > 1e-6, "one head is the most concentrated"
    head = int(np.argmax(last.max(axis=1)))
    assert (cfg.origin["layer"], cfg.origin["head"]) == (layer, head)
    tok = tiny_gpt2.tokenizer()
    words = [tok.decode([int(i)]).strip() for i in GPT2["p0_ids"]]
    assert len(words) == len(cfg.tokens)
    probs = probabilities(GPT2["p0_logits"][-1])
    nxt = int(np.argmax(probs))
    return layer, head, att[layer, head], last, nxt, probs[nxt], words, tok.decode([nxt]).strip()


def next_word(cfg):
    _, _, weights, *_ = next_word_numbers(cfg)
    return first_two(weights[-1])[0], []


def source_word_numbers(cfg):
    """transformers' T5 (the tied relu checkpoint) on tiny_t5.SENTENCES[0]: the tutorial's sentence has a word the
    tiny vocabulary cannot spell (an <unk>), so the lesson reads this one. Row 0 of the cross-attention is the
    decoder's first position, which reads only the start token: the same for any decoder input (the reference's
    TARGET, the lesson's translation). Returns each head's row 0 of the last decoder layer [n_heads, n_src], the head
    with the largest weight, the first output token, its probability, the source tokens as words, the layer."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tiny_t5.tokenizer_json())
    assert 2 in tok.encode(tiny_t5.PREFIX + lessons.TRANSLATE_SENTENCES[0]).ids  # <unk>: a letter it has not
    assert cfg.origin["sentence"] == tiny_t5.SENTENCES[0] == lessons.TRANSLATE_SENTENCES[1]
    digest = hashlib.sha256((Path(minilm.lesson_source("source-word")) / "model.safetensors").read_bytes())
    assert digest.hexdigest() == str(T5["relu_sha256"]), "the lesson's model is the reference's"
    words = [tiny_t5.VOCAB[i].replace("▁", " ").strip() or tiny_t5.VOCAB[i] for i in T5["relu_0_ids"]]
    assert [tiny_t5.VOCAB[i] for i in T5["relu_0_ids"]] == list(cfg.tokens)
    cross = T5["relu_0_cross"]  # [n_decoder_layers, n_heads, n_t, n_src]
    layer = cross.shape[0] - 1
    rows = cross[layer, :, 0, :]  # [n_heads, n_src]
    ranked = np.sort(rows.max(axis=1))
    assert ranked[-1] - ranked[-2] > 1e-6, "one head is the most concentrated"
    head = int(np.argmax(rows.max(axis=1)))
    assert (cfg.origin["layer"], cfg.origin["head"]) == (layer, head)
    first = int(T5["relu_0_generated"][1])  # after the start token
    probs = probabilities(T5["relu_0_logits"][0])
    assert int(np.argmax(probs)) == first
    return rows, head, first, probs[first], words, layer


def source_word(cfg):
    rows, head, *_ = source_word_numbers(cfg)
    return first_two(rows[head])[0], []


EXPECTED: dict[str, Callable[[Config], tuple[object, list[float]]]] = {
    "best-match": best_match, "match-weight": match_weight, "uniform": uniform, "lookup": lookup,
    "largest-cell": largest_cell, "temperature": temperature, "sqrt-dk": sqrt_dk, "stable-softmax": stable_softmax,
    "causal": causal, "padding": padding, "permutation": permutation, "positions": positions, "heads": heads,
    "value-width": value_width, "real-model": real_model, "head-off": head_off, "masked-word": masked_word,
    "query-zero": query_zero, "next-word": next_word, "source-word": source_word,
    **modern.EXPECTED,  # modern attention's, written out in tests/core/test_lessons_modern.py
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
    elif isinstance(lesson.ask, Token):
        assert sol.answer == expected
        assert [i for i in range(cfg.x.shape[0]) if judge(i)] == [expected]
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
    assert {type(lesson.ask) for lesson in lessons.LESSONS} == {Choice, Number, Cell, Token}  # every kind of question


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


# ---- every sentence that states a number or a property is true on the lesson's numbers ---------------------------
# Each lesson's texts (setup, question, options, explanation, hint, the reveal's row names), filled at 4 decimals as
# the page shows them, must contain the sentences below, whose numbers are numpy written out here; the properties
# the sentences state ("the widest gap", "every row gets sharper", "nearly one-hot") are asserted on the numbers.


def fmt(v: float) -> str:
    """A number as the page writes it at 4 decimals (attn_ui.widgets.numbers, "short" style)."""
    return format_number(float(v), 4, "short")


def vec(a) -> str:
    a = np.asarray(a, dtype=float)
    return "[" + ", ".join(fmt(x) if a.ndim == 1 else vec(x) for x in a) + "]" if a.ndim else fmt(a)


def difference(d: float) -> str:
    """A difference the lesson says is (nearly) none: "exactly 0", or its tiny value, never "0"."""
    return "exactly 0" if d == 0 else fmt(d)


def shown_text(lesson: lessons.Lesson) -> str:
    """Every text of the lesson as the page fills it (precision 4), Markdown escapes read."""
    sol = lessons.solved(lesson.key, model_of(lesson)).solution
    parts = [*lessons.texts(lesson), *(what for what, _ in sol.numbers)]
    return re.sub(r"\\(.)", r"\1", "\n".join(lessons.fill(t, sol.facts, 4) for t in parts))


def said_best_match(cfg):
    _, _, _, s, w, _ = plain(cfg)
    n, d_model = cfg.x.shape
    assert (np.argsort(s[1]) == np.argsort(w[1])).all()  # "Softmax keeps the order of the scores"
    return [f"{n} inputs of {d_model} numbers and weights W_Q, W_K of shape {d_model} × {cfg.w_q.shape[1]}",
            f"its row of X, {vec(cfg.x[1])}, times W_Q", f"its dot products with the {n} keys are {vec(s[1])}",
            f"the largest score, {fmt(s[1].max())}", f"{fmt(w[1].max())} of the row {vec(w[1])}",
            f"divided by √d_k = √{cfg.w_q.shape[1]}"]


def said_match_weight(cfg):
    _, _, _, s, w, _ = plain(cfg)
    n, d_k = cfg.x.shape[0], cfg.w_q.shape[1]
    root = np.sqrt(d_k)
    top2, raw2 = np.sort(s[1] / root)[-2:], np.sort(s[1])[-2:]
    best = cfg.tokens[int(np.argmax(w[1]))]
    return [f"scores the {n} keys {vec(s[1])}, and the scores are divided by √d_k = √{d_k} = {fmt(root)} before",
            f"Divided by √d_k = {fmt(root)}, the scores become {vec(s[1] / root)}",
            f"The best stands {fmt(top2[1] - top2[0])} above the runner-up", f"here {fmt(np.exp(top2[1] - top2[0]))}",
            f"{best} takes {fmt(w[1].max())} of the row and the other {n - 1} share the rest",
            f"Without the division the gap would be {fmt(raw2[1] - raw2[0])} and {best}'s weight "
            f"{fmt(softmax_rows(s)[1].max())}"]


def said_uniform(cfg):
    _, _, v, s, w, out = plain(cfg)
    n = cfg.x.shape[0]
    assert (s == 0).all() and (w == 1 / n).all()  # "every score is 0", "the same weight"
    spread = np.abs(out - out[0]).max()
    assert spread < 1e-12  # "the same for every token"
    return [f"{n} tokens, each with its own input", f"softmax of {n} equal scores gives each key the same weight, "
            f"{fmt(1 / n)} = 1/{n}", f"the plain average of the value rows, {vec(v.mean(axis=0))}",
            f"the largest difference between two of them is {difference(spread)})"]


def said_lookup(cfg):
    _, _, v, s, w, out = plain(cfg)
    n, d_k = cfg.x.shape[0], cfg.w_q.shape[1]
    root, cherry, other = np.sqrt(d_k), 2, 0
    assert softmax_rows(s / 1e-3)[0, cherry] > 1 - 1e-12  # "with larger scores, cherry's weight goes to 1"
    return [f"{n} tokens with one-hot inputs", f"a dictionary with {n} entries", f"a single number, {vec(v[:, 0])}",
            f"the average of the {n} values ({fmt(v[:, 0].mean())})",
            f"a dot product of {fmt(s[0, cherry])} and every other key with {fmt(s[0, other])}",
            f"divided by √d_k = √{d_k} = {fmt(root)}, that is a gap of only {fmt((s[0, cherry] - s[0, other]) / root)}",
            f"Softmax gives cherry {fmt(w[0, cherry])} and each other fruit {fmt(w[0, other])}",
            f"the output, {fmt(out[0, 0])}",
            f"move it down to 0.1: cherry's weight grows to {fmt(softmax_rows(s / 0.1)[0, cherry])}"]


def said_largest_cell(cfg):
    _, _, _, s, w, _ = plain(cfg)
    row, col = np.unravel_index(np.argmax(w), w.shape)
    top2 = np.sort(s, axis=1)[:, -2:]  # [n, 2]
    gaps = top2[:, 1] - top2[:, 0]
    assert np.argmax(gaps) == row and (np.delete(gaps, row) < gaps[row]).all()  # "the widest gap in the matrix"
    d_k = cfg.w_q.shape[1]
    scaled_top = softmax_rows(s / np.sqrt(d_k)).max()
    assert scaled_top < w.max()  # "see the largest weight drop"
    tok = cfg.tokens
    return [f"are {vec(s)}", f"Row {tok[row]}'s best score, {fmt(s[row, col])}, stands {fmt(gaps[row])} above its "
            f"runner-up, {fmt(top2[row, 0])}, the widest gap", f"e^{fmt(gaps[row])} = {fmt(np.exp(gaps[row]))}",
            f"query {tok[row]} and key {tok[col]} takes {fmt(w[row, col])} of its row",
            f"to one decimal they are {vec(np.round(w, 1))}",
            f"choose ÷ √d_k = √{d_k} and see the largest weight drop from {fmt(w.max())} to {fmt(scaled_top)}"]


def said_temperature(cfg):
    _, _, _, s, w, _ = plain(cfg)
    n, d_k = cfg.x.shape[0], cfg.w_q.shape[1]
    scaled = s / np.sqrt(d_k)
    after = softmax_rows(10 * scaled)
    h_before, h_after = entropy(w), entropy(after)
    assert (h_after < h_before).all()  # "every row gets sharper"
    assert after.max(axis=1).min() > 0.99  # "the largest score takes nearly everything", "nearly one-hot"
    return [f"sentence, {n} words, each a vector of width {d_k}", f"√d_k = √{d_k} as usual",
            "multiply every score by 10 before the softmax", f"which is {fmt(np.log(n))} for equal weights",
            f"falls from {fmt(h_before.mean())} to {fmt(h_after.mean())} on average",
            f"grows from {fmt(scaled.var())} to {fmt((10 * scaled).var())}", "with the scores times 10"]


def said_sqrt_dk(cfg):
    q, k, _, s, _, _ = plain(cfg)
    n, d_model = cfg.x.shape
    d_k = q.shape[1]
    assert abs(cfg.x.mean()) < 0.05 and abs(cfg.x.var() - 1) < 0.05  # "mean 0 and variance 1"
    assert abs(q.var() - 1) < 0.1 and abs(k.var() - 1) < 0.1  # "a variance of about 1"
    return [f"{n} tokens whose inputs are {d_model} random numbers each", f"so d_k = {d_k} and",
            f"(all {n * n} of them)", f"Each score is a sum of {d_k} products", f"var(QKᵀ) ≈ d_k = {d_k}",
            f"Measured here it is {fmt(s.var())}, with var(Q) = {fmt(q.var())} and var(K) = {fmt(k.var())}",
            f"Dividing by √d_k = {fmt(np.sqrt(d_k))} divides the variance by d_k, back to "
            f"{fmt((s / np.sqrt(d_k)).var())}"]


def said_stable_softmax(cfg):
    _, _, _, s, w, _ = plain(cfg)
    return [f"{cfg.x.shape[0]} tokens whose scores all lie between {fmt(s.min())} and {fmt(s.max())}; the first row "
            f"is {vec(s[0])}", f"exp of anything above {fmt(np.log(np.finfo(float).max))}",
            f"turns the row into {vec(s[0] - s[0].max())}", f"The weights, {vec(w[0])}, are the exact ones"]


def said_causal(cfg):
    n = cfg.x.shape[0]
    *_, v, _, w, out = plain(cfg, np.tril(np.ones((n, n), dtype=bool)))
    return [f"tutorial's {n} tokens", f"queries and keys of width {cfg.w_q.shape[1]} and values of width "
            f"{cfg.w_v.shape[1]}", f"the average of all {n} value rows", f"its weights {vec(w[0])}",
            f"its own value row, {vec(v[0])} (the largest difference is {difference(np.abs(out[0] - v[0]).max())})",
            f"spreads its weight over all {n}: {vec(w[-1])}"]


def said_padding(cfg):
    is_pad = np.array(cfg.is_pad)
    n = len(is_pad)
    *_, w, _ = plain(cfg, np.tile(~is_pad, (n, 1)))
    *_, open_w, _ = plain(cfg)
    tea, pad = cfg.tokens.index("tea"), int(np.flatnonzero(is_pad)[0])
    return [f"{n - is_pad.sum()} words and a padding token", f"tea gives [PAD] {fmt(w[tea, pad])}",
            f"its column is {vec(w[:, pad])}", f"tea would give it {fmt(open_w[tea, pad])}",
            f"tea's row, {vec(w[tea])}, still sums to {fmt(w[tea].sum())}"]


def said_permutation(cfg):
    before, after, perm = swapped_outputs(cfg, positions=False)
    return [f"a random vector of width {cfg.x.shape[1]}", f"What happens to the {cfg.x.shape[0]} output rows?",
            f"and the new ones is {difference(np.abs(after - before[perm]).max())})"]


def said_positions(cfg):
    before, after, _ = swapped_outputs(cfg, positions=True)
    least = min(np.abs(before - row).max(axis=1).min() for row in after)
    return [f"What happens to the {cfg.x.shape[0]} output rows?", f"by at least {fmt(least)}",
            f"changes by up to {fmt(np.abs(after[1] - before[1]).max())}"]


def said_heads(cfg):
    n, n_heads = cfg.x.shape[0], cfg.n_heads
    d_k, d_v = cfg.w_q.shape[1] // n_heads, cfg.w_v.shape[1] // n_heads
    outs = [attend(cfg.x, cfg.w_q[:, h * d_k:(h + 1) * d_k], cfg.w_k[:, h * d_k:(h + 1) * d_k],
                   cfg.w_v[:, h * d_v:(h + 1) * d_v], np.sqrt(d_k))[-1] for h in range(n_heads)]
    concat = np.hstack(outs)
    diff = np.abs(concat @ cfg.w_o - concat).max()
    more = 3  # the next number of heads that divides both widths, 6 and 6
    assert cfg.w_q.shape[1] % more == 0 and cfg.w_v.shape[1] % more == 0 and more > n_heads
    big = load_preset("seed003_heads")
    h3, d3 = big.n_heads, big.w_v.shape[1] // big.n_heads
    return [f"The tutorials' {n} inputs, now with {n_heads} heads",
            f"queries and keys {d_k} wide and values {d_v} wide", f"Each head outputs {n} rows of {d_v} numbers",
            f"{n_heads} × {d_v} = {concat.shape[1]} columns", f"(the largest difference is {difference(diff)})",
            f"{h3} heads of {d3} columns give {h3} × {d3} = {h3 * d3}",
            f"Set the number of heads to {more} on Multi-head: each head's queries and keys are then "
            f"{cfg.w_q.shape[1] // more} wide and its values {cfg.w_v.shape[1] // more} wide, and the concatenation "
            f"keeps its width, {concat.shape[1]}"]


def said_value_width(cfg):
    n, d_model = cfg.x.shape
    d_k, d_v = cfg.w_q.shape[1], cfg.w_v.shape[1]
    return [f"The tutorials' {n} inputs, {d_model} numbers each", f"W_Q and W_K have {d_k} columns, W_V has {d_v}",
            f"a {n} × {n} matrix times a {n} × {d_v} one gives {n} × {d_v}", f"{d_k}, the width of the queries",
            f"{d_v}, the width of the values", f"{d_model}, the width of the inputs", f"{n}, the number of tokens"]


def said_real_model(cfg):
    """From transformers' attentions (float32: the shares are compared to 1e-4 below, not as text)."""
    o = cfg.origin
    _, attentions = minilm.reference_attentions(o["sentence"])
    share = attentions[o["layer"]].mean(axis=1)  # [n_heads, n_k]: each key's weight averaged over the queries
    n_heads, n = share.shape
    top = share.argmax(axis=1)
    return [f"{np.sum(top == 0)} of the {n_heads} heads give their largest share to [CLS]",
            ("[CLS] takes ", share[:, 0].mean()), (", [SEP] ", share[:, n - 1].mean()),
            ("and all the words together ", share[:, 1:n - 1].sum(axis=1).mean())]


def said_head_off(cfg):
    (a, b), top, layers, sim = head_off_numbers(cfg)
    n_heads = OUTPUTS["minilm_lesson_heads"].shape[1]
    return [f"“{lessons.MODEL_SENTENCE}” and “{lessons.MODEL_OTHER}” have a similarity of {fmt(sim)}",
            f"head {a[1]} of layer {a[0]}", f"head {b[1]} of layer {b[0]}",
            "neither: each moves it by less than 0.005",
            f"With head {a[1]} of layer {a[0]} switched off the similarity becomes {fmt(a[2])}, a change of "
            f"{fmt(a[3])}; with head {b[1]} of layer {b[0]} it becomes {fmt(b[2])}, a change of {fmt(b[3])}",
            f"Of the {2 * n_heads} heads of layers {layers[0]} and {layers[1]}, the one that moves it most is head "
            f"{top[1]} of layer {top[0]}, with a change of {fmt(top[2])}",
            f"with head {top[1]} of layer {top[0]} switched off, and “Which heads matter” switches off each head of "
            f"layer {top[0]}"]


def said_masked_word(cfg):
    before, after, layer, head, top = masked_numbers(cfg)
    word = tiny_bert.VOCAB
    facts = lessons.solved("masked-word", minilm.lesson_model(lessons.by_key("masked-word"))).solution.facts
    for name, probs in (("tops_before", before), ("tops_after", after)):  # the reveal's rows of top words
        assert facts[name] == ", ".join(word[i] for i in np.argsort(-probs, kind="stable")[:5])
    n_heads = OUTPUTS["mlm_tied_lesson_heads"].shape[1]
    new = int(np.argmax(after))
    return [f"for “{lessons.MASKED_SENTENCE}” it puts “{word[top]}” in the [MASK], with a probability of "
            f"{fmt(before[top])}", f"switch off head {head} of layer {layer}, its last layer",
            f"Of that layer's {n_heads} heads, it is the one that moves the probability of “{word[top]}” most",
            f"the probability of “{word[top]}” goes from {fmt(before[top])} to {fmt(after[top])}, and the most "
            f"probable word is now “{word[new]}”, with {fmt(after[new])}"]


def said_query_zero(cfg):
    sim, after = query_zero_numbers(cfg)
    n_heads, n = cfg.n_heads, cfg.x.shape[0]
    d_k = cfg.w_q.shape[1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):  # every head of the layer with W_Q = 0, written out
        cols = slice(h * d_k, (h + 1) * d_k)
        q, _, _, s, w, out = attend(cfg.x, cfg.w_q[:, cols], cfg.w_k[:, cols], cfg.w_v[:, cols], np.sqrt(d_k))
        assert not q.any() and not s.any()  # "every query is a row of zeros and every score is 0"
        outs.append(out)
        weights.append(w)
    concat, weights = np.hstack(outs), np.stack(weights)
    layer = cfg.origin["layer"]
    every = OUTPUTS["minilm_lesson_query_zero"]  # [n_layers]: W_Q zero in each layer in turn, by transformers
    facts = lessons.solved("query-zero", minilm.model()).solution.facts
    np.testing.assert_allclose(facts["every"], every, rtol=0, atol=1e-12)  # the reveal's row and bars
    return [f"a cosine similarity of {fmt(sim)}. Now set W_Q of its layer {layer} to zeros",
            f"each of the layer's {n_heads} heads spreads", "it changes by less than 0.005",
            f"The similarity goes from {fmt(sim)} to {fmt(after)}, a change of {fmt(after - sim)}",
            f"every weight is now {fmt(1 / n)} for the {n} tokens of “{lessons.MODEL_SENTENCE}” (the largest "
            f"difference is {difference(np.abs(weights - 1 / n).max())})",
            f"(the largest difference between two tokens' outputs is {difference(np.abs(concat - concat[0]).max())})",
            f"with W_Q of layer {layer} all zeros", f"every attention weight in layer {layer}",
            f"W_Q gives similarities from {fmt(every.min())} (layer {np.argmin(every)}) to {fmt(every.max())} (layer "
            f"{np.argmax(every)})"]


def said_next_word(cfg):
    layer, head, weights, last, nxt, p, words, next_word_ = next_word_numbers(cfg)
    n = len(words)
    row = weights[-1]
    top, second = first_two(row)
    facts = lessons.solved("next-word", minilm.lesson_model(lessons.by_key("next-word"))).solution.facts
    np.testing.assert_allclose(facts["head_max"], last.max(axis=1), rtol=0, atol=1e-9)  # the reveal's row
    np.testing.assert_allclose(facts["w_row"], row, rtol=0, atol=1e-9)
    np.testing.assert_allclose(facts["p_next"], p, rtol=0, atol=1e-9)
    above = weights[np.triu_indices(n, 1)]
    return [f"it reads “{lessons.WRITE_PROMPT}” as {n} tokens", f"The last position, “{words[-1]}”,",
            f"head {head} of layer {layer}, the last layer: of its {last.shape[0]} heads",
            f"Head {head} of layer {layer} gives “{words[top]}” {fmt(row[top])} of the last position's weight, and "
            f"the runner-up, “{words[second]}”, {fmt(row[second])}",
            f"the largest of the {above.size} weights above the diagonal is {difference(np.abs(above).max())}",
            f"which sees only itself, gives itself {fmt(weights[0, 0])}",
            f"the next word: “{next_word_}”, with a probability of {fmt(p)}",
            f"the probability of the next word, “{next_word_}”", f"each head's largest weight in the last row, layer "
            f"{layer}", f"A model that writes opens on this prompt with head {head} of layer {layer}"]


def said_source_word(cfg):
    rows, head, first, p, words, layer = source_word_numbers(cfg)
    row, mean = rows[head], rows.mean(axis=0)
    top, second = first_two(row)
    top_mean = first_two(mean)[0]
    out = tiny_t5.VOCAB[first].replace("▁", " ").strip()
    n_heads, n_src = rows.shape
    facts = lessons.solved("source-word", minilm.lesson_model(lessons.by_key("source-word"))).solution.facts
    np.testing.assert_allclose(facts["head_max"], rows.max(axis=1), rtol=0, atol=1e-9)  # the reveal's rows
    np.testing.assert_allclose(facts["w_mean"], mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(facts["p_out"], p, rtol=0, atol=1e-9)
    greedy = [tiny_t5.VOCAB[i].replace("▁", "") for i in T5["relu_0_generated"][1:]]  # transformers' first tokens
    assert facts["translation"].split()[:len(greedy)] == greedy
    return [f"its encoder reads “{tiny_t5.PREFIX}{tiny_t5.SENTENCES[0]}” ({n_src} tokens with the task's prefix",
            f"its decoder writes “{facts['translation']}” one token at a time",
            "The Korean tutorial's sentence has words this model's vocabulary does not know",
            f"the first token the decoder writes, “{out}”, in head {head} of layer {layer}, the last decoder layer: "
            f"of its {n_heads} heads",
            f"Head {head} of layer {layer} gives “{words[top]}” {fmt(row[top])} of the weight of “{out}”, and the "
            f"runner-up, “{words[second]}”, {fmt(row[second])}",
            f"spread over the {n_src} English tokens and sums to {fmt(row.sum())}",
            f"Averaged over the layer's {n_heads} heads, “{words[top_mean]}” takes the most, {fmt(mean[top_mean])}",
            f"Which English token does “{out}” give the most weight in this head?",
            f"each head's largest weight for “{out}”, layer {layer}"]


SAID: dict[str, Callable[[Config], list]] = {
    "best-match": said_best_match, "match-weight": said_match_weight, "uniform": said_uniform, "lookup": said_lookup,
    "largest-cell": said_largest_cell, "temperature": said_temperature, "sqrt-dk": said_sqrt_dk,
    "stable-softmax": said_stable_softmax, "causal": said_causal, "padding": said_padding,
    "permutation": said_permutation, "positions": said_positions, "heads": said_heads,
    "value-width": said_value_width, "real-model": said_real_model, "head-off": said_head_off,
    "masked-word": said_masked_word, "query-zero": said_query_zero, "next-word": said_next_word,
    "source-word": said_source_word,
    **modern.SAID,  # modern attention's (tests/core/test_lessons_modern.py)
}


@pytest.mark.parametrize("lesson", lessons.LESSONS, ids=ids)
def test_every_number_a_lesson_states_is_the_one_numpy_gives(lesson: lessons.Lesson):
    assert set(SAID) == set(ids)
    text = shown_text(lesson)
    for said in SAID[lesson.key](lessons.configuration(lesson, model_of(lesson))):
        if isinstance(said, tuple):  # (the words before it, the number to 1e-4)
            words, value = said
            shown = re.search(re.escape(words) + r"(−?\d+(?:\.\d+)?)", text)
            assert shown, (words, text)
            assert abs(float(shown.group(1)) - value) < 1e-4, (words, shown.group(1), value)
        else:
            assert said in text, f"{lesson.key}: {said!r} not in\n{text}"


def test_a_lesson_on_a_model_of_another_kind_says_which_kind_it_needs():
    """The masked-word lesson on all-MiniLM-L6-v2 (no masked-LM head), the similarity lessons on a masked-language
    model: a ModelError the page shows (and the lesson can be skipped), never a wrong lesson."""
    import attn_models

    masked_lm = minilm.lesson_model(lessons.by_key("masked-word"))
    gpt2, t5 = (minilm.lesson_model(lessons.by_key(key)) for key in ("next-word", "source-word"))
    for key, model, said in [("masked-word", minilm.model(), "has no masked-language-model head"),
                             ("head-off", masked_lm, "needs a sentence encoder"),
                             ("query-zero", masked_lm, "needs a sentence encoder"),
                             ("next-word", minilm.model(), "is not a causal language model"),
                             ("next-word", t5, "needs one of the GPT-2 family"),
                             ("source-word", gpt2, "is not a translator"),
                             ("source-word", masked_lm, "needs an encoder-decoder of the T5 family")]:
        with pytest.raises(attn_models.ModelError, match=said):
            lessons.solved(key, model)


def test_try_it_yourself_on_a_model_lesson_says_what_a_real_model_shows():
    """What A real model opens with: the lesson's other sentence, the head that moves the result most switched off
    (mean), and for W_Q = 0 no head off (the edited layer is what changes)."""
    for key in ("head-off", "masked-word", "query-zero"):
        lesson = lessons.by_key(key)
        page = lessons.solved(key, model_of(lesson)).solution.model_page
        cfg = lessons.configuration(lesson, model_of(lesson))
        if key == "head-off":
            _, top, _, _ = head_off_numbers(cfg)
            assert page.others == (lessons.MODEL_OTHER,) and page.ablate == (top[:2],) and page.scan == top[0]
        elif key == "masked-word":
            _, _, layer, head, _ = masked_numbers(cfg)
            assert page.others == () and page.ablate == ((layer, head),) and page.scan is None
        else:
            assert page.others == (lessons.MODEL_OTHER,) and page.ablate == () and page.scan is None
        assert page.how == "mean"
    assert lessons.solved("real-model", minilm.model()).solution.model_page is None


@pytest.mark.parametrize("lesson", lessons.LESSONS, ids=ids)
def test_no_number_is_typed_in_a_lessons_sentences_and_none_reads_at_most_0(lesson: lessons.Lesson):
    """A number a lesson states comes from its facts (single digits such as 0, 1 and e^g's g may be typed); no
    difference reads "at most 0" or "within 0"."""
    ask = lesson.ask
    for template in [lesson.setup, lesson.question, *(ask.options if isinstance(ask, Choice) else ()),
                     lesson.explanation]:
        assert not re.search(r"(?<![\w.^√{])\d{2,}|\d+\.\d+", template), template
        assert not re.search(r"\b(three|four|five|six|seven|eight|nine|ten)\b", template, re.IGNORECASE), template
    assert not re.search(r"(at most|within|by) 0\b", shown_text(lesson))


def test_try_it_yourself_follows_the_head_and_query_of_a_lesson_that_generates():
    """The GPT-2 lesson opens A model that writes, the explorer on its head and its last query (the position that
    predicts the next word); the T5 lesson opens A model that translates, its cross-attention in the explorer on its
    head and the first query (the decoder's start, whose output is the first French token)."""
    for key, page in (("next-word", registry.GENERATE), ("source-word", registry.TRANSLATE)):
        lesson = lessons.by_key(key)
        worked = lessons.solved(key, model_of(lesson))
        cfg = worked.config
        assert lesson.page == page
        if key == "next-word":
            _, head, *_ = next_word_numbers(cfg)
            assert worked.solution.follow == (head, cfg.n_seq - 1) and cfg.mask_kind == "causal"
        else:
            _, head, *_ = source_word_numbers(cfg)
            assert worked.solution.follow == (head, 0) and cfg.cross and cfg.y_tokens[0] == "<pad>"
            assert cfg.mask_kind == "none"  # "No mask hides any of them"
