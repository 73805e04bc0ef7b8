"""Every worked example in the seed tutorials, reproduced by attn_core to the digits the seed prints.

The expected numbers are copied from the seeds (/work/shared/seeds/*.txt at the time of writing) into
tests/seeds.py, or, where a seed prints no number (seed 001's embeddings are random), computed here with numpy
written out in the test.
"""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import additive_mask, causal_mask, load_preset, run, self_attention, tokenize
from attn_core.presets import seed_002_qkv

from ..seeds import (
    SEED000_DIVISOR,
    SEED000_K,
    SEED000_OUTPUT,
    SEED000_Q,
    SEED000_V,
    SEED000_W_K,
    SEED000_W_Q,
    SEED000_W_V,
    SEED000_WEIGHTS,
    SEED000_X,
    SEED001_SENTENCE,
    SEED002_ADDITIVE_MASK,
    SEED002_EXP,
    SEED002_EXP_SUMS,
    SEED002_NEW_V,
    SEED002_QKT,
    SEED002_SCALED,
    SEED002_TOKENS,
    SEED002_VAR_K,
    SEED002_VAR_Q,
    SEED002_VAR_QKT,
    SEED002_VAR_SCALED,
    SEED002_WEIGHTS,
    SEED003_TABLE,
    SEED004_SCORES,
    SEED004_SOFTMAX_PRINTED,
)


def single_head(preset: str):
    trace = run(load_preset(preset))
    assert trace.n_heads == 1
    return trace, trace.heads[0]


# ---- seed 000: scaled by √3, printed in float32 ------------------------------------------------


def test_seed000_qkv_weights_and_output():
    trace, head = single_head("seed000")
    np.testing.assert_array_equal(head.q, SEED000_Q)
    np.testing.assert_array_equal(head.k, SEED000_K)
    np.testing.assert_array_equal(head.v, SEED000_V)
    assert head.divisor == pytest.approx(SEED000_DIVISOR, rel=1e-7)  # the seed prints √3 in float32
    # the seed computes in float32 (about 7 significant digits): compare to the printed digits at rtol 1e-6
    np.testing.assert_allclose(head.weights, SEED000_WEIGHTS, rtol=1e-6)
    np.testing.assert_allclose(head.output, SEED000_OUTPUT, rtol=1e-6)
    np.testing.assert_array_equal(trace.output, head.output)  # one head, W_O = identity


def test_seed000_through_self_attention_with_lists():
    """The seed's own calling convention: plain lists in, the same printed numbers out."""
    t = self_attention(SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    np.testing.assert_allclose(t.output, SEED000_OUTPUT, rtol=1e-6)


# ---- seed 004: raw scores and torch's softmax (5 significant digits) ----------------------------


def test_seed004_qkv_raw_scores_and_softmax_to_printed_digits():
    _, head = single_head("seed004_unscaled")
    np.testing.assert_array_equal(head.q, SEED000_Q)
    np.testing.assert_array_equal(head.k, SEED000_K)
    np.testing.assert_array_equal(head.v, SEED000_V)
    np.testing.assert_array_equal(head.scores, SEED004_SCORES)
    assert head.divisor == 1.0
    np.testing.assert_array_equal(head.scaled, SEED004_SCORES)
    # torch prints 5 significant digits: the same digits, character for character
    assert [[f"{w:.4e}" for w in row] for row in head.weights] == SEED004_SOFTMAX_PRINTED


def test_seed004_alignment_vectors_are_weighted_value_rows():
    _, head = single_head("seed004_unscaled")
    w, v = head.weights, np.array(SEED000_V, dtype=float)
    for i in range(3):
        c = head.contributions(i)  # [n_k, d_v]
        assert c.shape == (3, 3)
        for j in range(3):
            np.testing.assert_allclose(c[j], [w[i, j] * v[j, 0], w[i, j] * v[j, 1], w[i, j] * v[j, 2]], rtol=1e-15)
        np.testing.assert_allclose(c.sum(axis=0), head.output[i], rtol=1e-14)
    # seed 004's output 1 with its approximate weights [0, .5, .5]: [2.0, 7.0, 1.5]; the exact weights give
    # 0.0634·[1, 2, 3] + 0.4683·([2, 8, 0] + [2, 6, 3])
    e = np.exp(np.array(SEED004_SCORES[0], dtype=float))
    exact = e / e.sum()
    np.testing.assert_allclose(head.output[0], exact[0] * v[0] + exact[1] * v[1] + exact[2] * v[2], rtol=1e-14)


# ---- seed 003: the Q/K/V table and k_d = 1 ------------------------------------------------------


@pytest.mark.parametrize("preset", ["seed000", "seed004_unscaled"])
def test_seed003_qkv_table(preset):
    cfg = load_preset(preset)
    _, head = single_head(preset)
    for i, token in enumerate(cfg.tokens):
        q_row, k_row, v_row = SEED003_TABLE[token]
        assert head.q[i].tolist() == q_row
        assert head.k[i].tolist() == k_row
        assert head.v[i].tolist() == v_row


def test_seed003_step4_k_d_one_is_the_unscaled_preset():
    """Seed 003 divides by k_d = 1: its step-4 scores are Q @ Kᵀ itself."""
    _, head = single_head("seed004_unscaled")
    q, k = np.array(SEED000_Q, dtype=float), np.array(SEED000_K, dtype=float)
    expected = [[sum(q[i, c] * k[j, c] for c in range(3)) / 1 for j in range(3)] for i in range(3)]
    np.testing.assert_array_equal(head.scaled, expected)


# ---- seed 002: n_seq 4, d_k = d_v = 8, causal mask ----------------------------------------------

# The notebook prints 8 decimals (half a unit: 5e-9). Its q, k are random and unprinted; the preset rebuilds
# them from the printed QKᵀ, itself rounded by up to 5e-9, which moves later values by up to 2e-9 relative
# (exp of a value up to 6.07 moves by 1.1e-8). So: the printed digits within atol 5e-9 + rtol 2e-9.
PRINTED_8 = {"rtol": 2e-9, "atol": 5e-9}


def test_seed002_preset_uses_the_rebuilt_q_k_v():
    cfg = load_preset("seed002_causal")
    _, head = single_head("seed002_causal")
    q, k, v = seed_002_qkv()
    assert cfg.tokens == SEED002_TOKENS
    assert cfg.mask_kind == "causal"
    np.testing.assert_allclose(head.q, q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(head.k, k, rtol=0, atol=1e-15)
    np.testing.assert_allclose(head.v, v, rtol=0, atol=1e-15)
    assert head.q.shape == head.k.shape == head.v.shape == (4, 8)


def test_seed002_scores_and_variances():
    _, head = single_head("seed002_causal")
    np.testing.assert_allclose(head.scores, SEED002_QKT, rtol=0, atol=5e-9)
    # var(q) and var(k) are printed to full double precision
    assert head.q.var() == pytest.approx(SEED002_VAR_Q, rel=1e-12)
    assert head.k.var() == pytest.approx(SEED002_VAR_K, rel=1e-12)
    # var(QKᵀ) and var(scaled) follow from the 8-decimal QKᵀ: known to about 1e-9 relative
    assert head.scores.var() == pytest.approx(SEED002_VAR_QKT, rel=1e-9)
    assert head.scaled.var() == pytest.approx(SEED002_VAR_SCALED, rel=1e-9)
    assert head.divisor == pytest.approx(np.sqrt(8), rel=1e-15)


def test_seed002_scaled_mask_exp_and_row_sums():
    _, head = single_head("seed002_causal")
    np.testing.assert_allclose(head.scaled, SEED002_SCALED, **PRINTED_8)
    np.testing.assert_array_equal(additive_mask(causal_mask(4)), SEED002_ADDITIVE_MASK)
    np.testing.assert_array_equal(head.mask, np.tril(np.ones((4, 4))) == 1)
    # "scaled + mask": -inf above the diagonal, the scaled values elsewhere
    below = np.tril(np.ones((4, 4), dtype=bool))
    assert np.isneginf(head.masked[~below]).all()
    np.testing.assert_allclose(head.masked[below], np.array(SEED002_SCALED)[below], **PRINTED_8)
    exp = np.exp(head.masked)
    np.testing.assert_allclose(exp, SEED002_EXP, **PRINTED_8)
    np.testing.assert_allclose(exp.sum(axis=-1), SEED002_EXP_SUMS, **PRINTED_8)


def test_seed002_causal_weights_and_new_v():
    trace, head = single_head("seed002_causal")
    np.testing.assert_allclose(head.weights, SEED002_WEIGHTS, **PRINTED_8)
    assert (head.weights[~np.tril(np.ones((4, 4), dtype=bool))] == 0).all()
    np.testing.assert_allclose(head.output, SEED002_NEW_V, **PRINTED_8)
    np.testing.assert_allclose(trace.output, SEED002_NEW_V, **PRINTED_8)
    assert trace.fully_masked_rows == ()


# ---- seed 001: Q = K = V = the embeddings, scaled by √10 ----------------------------------------


def test_seed001_sentence_q_k_v_are_the_embeddings():
    cfg = load_preset("seed001_sentence")
    trace, head = single_head("seed001_sentence")
    assert list(cfg.tokens) == SEED001_SENTENCE.split() == tokenize(SEED001_SENTENCE)
    x = cfg.x
    assert x.shape == (6, 10)
    np.testing.assert_array_equal(cfg.w_q, np.eye(10))
    np.testing.assert_array_equal(cfg.w_k, np.eye(10))
    np.testing.assert_array_equal(cfg.w_v, np.eye(10))
    np.testing.assert_array_equal(head.q, x)
    np.testing.assert_array_equal(head.k, x)
    np.testing.assert_array_equal(head.v, x)

    # the seed's SelfAttention class, written out: inner_product, softmax (row max subtracted), weights @ value
    mat = np.dot(x, x.T) / (x.shape[1] ** (1 / 2))
    c = np.max(mat, axis=-1, keepdims=True)
    exp_a = np.exp(mat - c)
    weights = exp_a / np.sum(exp_a, axis=-1, keepdims=True)
    output = np.dot(weights, x)

    assert head.divisor == pytest.approx(np.sqrt(10), rel=1e-15)
    np.testing.assert_allclose(head.scaled, mat, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(head.weights, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(head.output, output, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.output, output, rtol=1e-12, atol=1e-14)
    # Q = K: every token's score with itself is its squared length over √10
    np.testing.assert_allclose(np.diag(head.scaled), (x**2).sum(axis=1) / np.sqrt(10), rtol=1e-13)
