"""Weight initialisers, resize, tokens, embeddings and positional encoding, against formulas written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attn_core import INITIALIZERS, AttentionInputError, embed, initialize, positional_encoding, resize, tokenize

RANDOM = ["gaussian", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"]
FAN_IN, FAN_OUT = 300, 500  # a large [fan_in, fan_out] weight: 150 000 draws, std known to about 0.2 %


def test_every_named_initialiser_is_listed_and_known():
    assert set(INITIALIZERS) == {*RANDOM, "zeros", "ones", "identity"}
    for name in INITIALIZERS:
        w = initialize(name, (4, 3), seed=1)
        assert w.shape == (4, 3) and w.dtype == np.float64 and np.isfinite(w).all()


@pytest.mark.parametrize("name", RANDOM)
def test_random_initialisers_are_reproducible_per_seed(name):
    a = initialize(name, (5, 7), seed=42)
    np.testing.assert_array_equal(a, initialize(name, (5, 7), seed=42))
    assert not np.array_equal(a, initialize(name, (5, 7), seed=43))


@pytest.mark.parametrize(("name", "expected_std"), [
    ("xavier_uniform", math.sqrt(6 / (FAN_IN + FAN_OUT)) / math.sqrt(3)),  # U(-a, a) has std a/√3
    ("xavier_normal", math.sqrt(2 / (FAN_IN + FAN_OUT))),
    ("kaiming_uniform", math.sqrt(6 / FAN_IN) / math.sqrt(3)),
    ("kaiming_normal", math.sqrt(2 / FAN_IN)),
])
def test_distribution_std(name, expected_std):
    w = initialize(name, (FAN_IN, FAN_OUT), seed=7)
    assert w.std() == pytest.approx(expected_std, rel=0.02)
    assert abs(w.mean()) < 5 * expected_std / math.sqrt(w.size)


@pytest.mark.parametrize(("name", "limit"), [
    ("xavier_uniform", math.sqrt(6 / (FAN_IN + FAN_OUT))),
    ("kaiming_uniform", math.sqrt(6 / FAN_IN)),
])
def test_uniform_initialisers_fill_their_limit(name, limit):
    w = initialize(name, (FAN_IN, FAN_OUT), seed=3)
    assert np.abs(w).max() <= limit
    assert np.abs(w).max() > 0.999 * limit  # the whole interval is used
    # uniform: a quarter of the draws in each quarter of [-a, a]
    counts, _ = np.histogram(w, bins=4, range=(-limit, limit))
    np.testing.assert_allclose(counts / w.size, 0.25, atol=0.01)


def test_normal_initialisers_are_gaussian_shaped():
    w = initialize("kaiming_normal", (FAN_IN, FAN_OUT), seed=5)
    std = math.sqrt(2 / FAN_IN)
    within_one = np.mean(np.abs(w) < std)
    assert within_one == pytest.approx(math.erf(1 / math.sqrt(2)), abs=0.01)  # 68.3 % within one std


@pytest.mark.parametrize("std", [0.0, 0.5, 2.0])
def test_gaussian_std(std):
    w = initialize("gaussian", (FAN_IN, FAN_OUT), seed=11, std=std)
    assert w.std() == pytest.approx(std, rel=0.02, abs=1e-15)


def test_deterministic_initialisers():
    np.testing.assert_array_equal(initialize("zeros", (2, 3)), [[0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(initialize("ones", (3, 2)), [[1, 1], [1, 1], [1, 1]])
    np.testing.assert_array_equal(initialize("identity", (3, 3)), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(initialize("identity", (2, 3)), [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(initialize("identity", (3, 2)), [[1, 0], [0, 1], [0, 0]])
    assert initialize("zeros", (2, 2), seed=1).tolist() == initialize("zeros", (2, 2), seed=2).tolist()


@pytest.mark.parametrize(("args", "kwargs", "detail"), [
    (("he", (2, 2)), {}, "unknown name 'he'"),
    (("zeros", (0, 2)), {}, "at least 1 × 1"),
    (("ones", (2, -1)), {}, "at least 1 × 1"),
    (("gaussian", (2, 2)), {"std": -1.0}, "std must be a finite number"),
    (("gaussian", (2, 2)), {"std": float("nan")}, "std must be a finite number"),
])
def test_bad_initialiser_requests(args, kwargs, detail):
    with pytest.raises(AttentionInputError, match="initialiser") as info:
        initialize(*args, **kwargs)
    assert detail in str(info.value)


# ---- resize -------------------------------------------------------------------------------------


def test_resize_keeps_every_value_that_fits():
    a = np.arange(6.0).reshape(2, 3)  # [[0, 1, 2], [3, 4, 5]]
    grown = resize(a, (3, 4), np.full((3, 4), -1.0))
    np.testing.assert_array_equal(grown, [[0, 1, 2, -1], [3, 4, 5, -1], [-1, -1, -1, -1]])
    shrunk = resize(a, (1, 2), np.zeros((1, 2)))
    np.testing.assert_array_equal(shrunk, [[0, 1]])
    mixed = resize(a, (3, 2), np.full((3, 2), 9.0))
    np.testing.assert_array_equal(mixed, [[0, 1], [3, 4], [9, 9]])
    fill = np.full((2, 2), 7.0)
    resize(a, (2, 2), fill)
    assert (fill == 7.0).all()  # the fill is copied, not written into


# ---- tokens -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sentence", "tokens"), [
    ("slow but steady wins the race", ["slow", "but", "steady", "wins", "the", "race"]),
    ("The paper was rejected, because it was poorly written.",
     ["The", "paper", "was", "rejected", ",", "because", "it", "was", "poorly", "written", "."]),
    ("My name is Kishor!", ["My", "name", "is", "Kishor", "!"]),
    ("don't stop", ["don", "'", "t", "stop"]),
    ("  spaced\tout\nlines  ", ["spaced", "out", "lines"]),
    ("a...b", ["a", ".", ".", ".", "b"]),
    ("x2 = 3", ["x2", "=", "3"]),
    ("", []),
    ("   ", []),
    # written without spaces: one token a character
    ("注意力就是加权平均。", ["注", "意", "力", "就", "是", "加", "权", "平", "均", "。"]),
    ("我的 GPU 是 A100，", ["我", "的", "GPU", "是", "A100", "，"]),
    ("어텐션은 가중 평균입니다.", ["어텐션은", "가중", "평균입니다", "."]),  # Korean: words between spaces
    ("ひらがなと漢字", ["ひ", "ら", "が", "な", "と", "漢", "字"]),
])
def test_tokenize_splits_words_and_punctuation(sentence, tokens):
    assert tokenize(sentence) == tokens


def test_embed_is_deterministic_and_case_insensitive():
    tokens = ["The", "cat", "sat", "the", "CAT"]
    e = embed(tokens, 8, seed=3)
    assert e.shape == (5, 8) and e.dtype == np.float64
    np.testing.assert_array_equal(e[0], e[3])  # The / the
    np.testing.assert_array_equal(e[1], e[4])  # cat / CAT
    assert not np.array_equal(e[0], e[1]) and not np.array_equal(e[1], e[2])
    np.testing.assert_array_equal(e, embed(tokens, 8, seed=3))  # same call, same numbers
    np.testing.assert_array_equal(embed(["sat"], 8, seed=3)[0], e[2])  # position in the sentence does not matter
    assert not np.array_equal(embed(tokens, 8, seed=4), e)  # another seed, other vectors
    assert not np.array_equal(embed(["cat"], 9, seed=3)[0, :8], e[1])  # another width, another vector


def test_embed_draws_standard_normal_values():
    words = [f"w{i}" for i in range(400)]
    e = embed(words, 64, seed=0)
    assert e.mean() == pytest.approx(0.0, abs=5 / math.sqrt(e.size))
    assert e.std() == pytest.approx(1.0, rel=0.02)


def test_embed_of_no_tokens_is_an_empty_matrix_of_the_width():
    assert embed([], 5).shape == (0, 5)


def test_positional_encoding_matches_the_formula_written_out():
    # PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d))
    pe = positional_encoding(3, 4)  # d = 4: divisors 10000^0 = 1 and 10000^(2/4) = 100
    expected = [
        [math.sin(0), math.cos(0), math.sin(0), math.cos(0)],
        [math.sin(1), math.cos(1), math.sin(1 / 100), math.cos(1 / 100)],
        [math.sin(2), math.cos(2), math.sin(2 / 100), math.cos(2 / 100)],
    ]
    np.testing.assert_allclose(pe, expected, rtol=1e-14, atol=1e-15)
    pe = positional_encoding(5, 5)  # odd width: the last column is a sine with 10000^(4/5)
    assert pe.shape == (5, 5)
    for p in range(5):
        row = [math.sin(p), math.cos(p), math.sin(p / 10000 ** (2 / 5)), math.cos(p / 10000 ** (2 / 5)),
               math.sin(p / 10000 ** (4 / 5))]
        np.testing.assert_allclose(pe[p], row, rtol=1e-13, atol=1e-15)


def test_positional_encoding_at_a_larger_width():
    pe = positional_encoding(50, 128)
    assert pe.shape == (50, 128)
    assert np.abs(pe).max() <= 1.0
    np.testing.assert_allclose(pe[:, 1::2][0], 1.0)  # position 0: every cosine is 1
    np.testing.assert_allclose(pe[:, 0::2][0], 0.0)  # ... every sine is 0
    np.testing.assert_allclose(pe[10, 126], math.sin(10 / 10000 ** (126 / 128)), rtol=1e-13)
    np.testing.assert_allclose(pe[49, 127], math.cos(49 / 10000 ** (126 / 128)), rtol=1e-13)


# ---- per-head blocks and the score functions' starting weights -------------------------------------------------
def test_initialize_heads_draws_each_block_with_one_heads_fans_from_one_stream():
    from attn_core import initialize_heads

    rng = np.random.default_rng(4)
    limit = np.sqrt(6 / (3 + 2))  # Xavier uniform of one [3, 2] block
    want = np.hstack([rng.uniform(-limit, limit, (3, 2)) for _ in range(3)])
    np.testing.assert_array_equal(initialize_heads("xavier_uniform", (3, 6), 3, seed=4), want)
    np.testing.assert_array_equal(initialize_heads("kaiming_normal", (5, 4), 1, seed=9),
                                  initialize("kaiming_normal", (5, 4), seed=9))
    np.testing.assert_array_equal(initialize_heads("identity", (2, 4), 2), np.hstack([np.eye(2), np.eye(2)]))
    with pytest.raises(AttentionInputError, match="3 heads do not divide 4 columns"):
        initialize_heads("zeros", (2, 4), 3)


def test_score_weights_start_as_score_starts_says_and_general_is_not_the_identity():
    from attn_core import SCORE_STARTS, score_weights

    assert SCORE_STARTS == {"w_a": ("xavier_uniform", 0), "w_1": ("xavier_uniform", 1),
                            "w_2": ("xavier_uniform", 2), "v_a": ("kaiming_uniform", 3)}
    w_a = score_weights("general", 3, 3, 1)["w_a"]
    np.testing.assert_array_equal(w_a, np.random.default_rng(0).uniform(-1, 1, (3, 3)))  # √(6 / 6) = 1
    assert not np.allclose(w_a, np.eye(3))
    additive = score_weights("additive", 2, 3, 2, d_a=4)
    assert {n: w.shape for n, w in additive.items()} == {"w_1": (2, 8), "w_2": (3, 8), "v_a": (1, 8)}
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(additive["v_a"], np.hstack([rng.uniform(-np.sqrt(6), np.sqrt(6), (1, 4))
                                                              for _ in range(2)]))
    assert score_weights("dot", 3, 3, 1) == {}


@pytest.mark.parametrize(("sentence", "tokens"), [
    ("\u202e \u200b \x00 abc", ["abc"]),  # a fresh reviewer's: 4 tokens, 3 of them blank labels
    ("\u202e\u200b\x00", []),  # nothing visible: no words (the page says so)
    ("a\u200bb", ["a", "b"]),  # a zero-width space inside a word
    ("\ufeff\u2060\u200e\u200f\u2066 \u2028\u2029\u3000\u00a0\x7f\x1b", []),  # BOM, joiners, marks, breaks, spaces
    ("\u3164 \ufe0f go", ["go"]),  # a Hangul filler and a variation selector show nothing either
    ("\u202eשלום abc", ["שלום", "abc"]),  # a right-to-left word stays a token; only the override goes
    ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
])
def test_a_token_with_no_visible_character_is_no_word(sentence, tokens):
    assert tokenize(sentence) == tokens
