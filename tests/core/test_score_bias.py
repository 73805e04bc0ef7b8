"""The additive score bias (the mask's finite sibling): softmax(mask(S / s + B)) V, checked against numpy written out
here, per head and for every head, with masks, and the messages for a bias that does not fit."""

from __future__ import annotations

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    causal_mask,
    cross_attention,
    multi_head_attention,
    multi_head_cross_attention,
    scaled_dot_product_attention,
    self_attention,
)

RNG = np.random.default_rng(7)


def reference(q, k, v, bias, divisor, mask=None):  # numpy, written out: one head
    s = q @ k.T / divisor + bias
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w, w @ v


def test_bias_is_added_to_the_scaled_scores_before_the_softmax():
    q, k, v = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
    bias = RNG.normal(size=(3, 5))
    t = scaled_dot_product_attention(q, k, v, bias=bias)
    w, out = reference(q, k, v, bias, 2.0)
    np.testing.assert_allclose(t.weights, w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(t.scaled, q @ k.T / 2.0)  # the bias is its own stage
    np.testing.assert_array_equal(t.biased, t.scaled + bias)
    np.testing.assert_array_equal(t.masked, t.biased)  # no mask


def test_no_bias_and_a_zero_bias_give_the_same_weights_bit_for_bit():
    q, k, v = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    plain = scaled_dot_product_attention(q, k, v)
    zero = scaled_dot_product_attention(q, k, v, bias=np.zeros((4, 4)))
    assert plain.weights.tobytes() == zero.weights.tobytes()
    assert plain.bias is None and plain.biased is plain.scaled


def test_a_bias_row_shift_changes_nothing_and_a_large_bias_acts_as_a_mask():
    q, k, v = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))
    plain = scaled_dot_product_attention(q, k, v)
    shifted = scaled_dot_product_attention(q, k, v, bias=np.full((2, 3), 5.0))  # the same number on a whole row
    np.testing.assert_allclose(shifted.weights, plain.weights, rtol=0, atol=1e-15)
    big = np.array([[0.0, -1e4, 0.0], [0.0, -1e4, 0.0]])  # key 1 all but masked
    masked = scaled_dot_product_attention(q, k, v, mask=np.array([[True, False, True]] * 2))
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, bias=big).weights, masked.weights, atol=1e-15)


def test_bias_with_a_causal_mask_and_no_scaling_as_t5_decodes():
    x = RNG.normal(size=(4, 6))
    w_q, w_k, w_v = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3)), RNG.normal(size=(6, 3))
    bias = RNG.normal(size=(4, 4))
    t = self_attention(x, w_q, w_k, w_v, scale="none", mask=causal_mask(4), bias=bias)
    w, out = reference(x @ w_q, x @ w_k, x @ w_v, bias, 1.0, causal_mask(4))
    np.testing.assert_allclose(t.weights, w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.output, out, rtol=0, atol=1e-14)
    assert np.isneginf(t.masked[0, 1]) and t.weights[0, 1] == 0.0


def test_cross_attention_bias_is_queries_by_keys():
    y, x = RNG.normal(size=(2, 4)), RNG.normal(size=(5, 4))
    w = RNG.normal(size=(4, 4))
    bias = RNG.normal(size=(2, 5))
    t = cross_attention(y, x, w, w, w, bias=bias)
    ref, _ = reference(y @ w, x @ w, x @ w, bias, 2.0)
    np.testing.assert_allclose(t.weights, ref, rtol=0, atol=1e-15)


def test_multi_head_takes_one_bias_per_head_or_one_for_all():
    x = RNG.normal(size=(5, 8))
    w_q, w_k, w_v, w_o = (RNG.normal(size=(8, 8)) for _ in range(4))
    per_head = RNG.normal(size=(2, 5, 5))
    t = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, bias=per_head, scale="none")
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        w, out = reference(x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols], per_head[h], 1.0)
        np.testing.assert_allclose(t.heads[h].weights, w, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(t.heads[h].bias, per_head[h])
    one = multi_head_attention(x, w_q, w_k, w_v, w_o, 2, bias=per_head[0], scale="none")
    np.testing.assert_array_equal(one.heads[1].bias, per_head[0])
    cross = multi_head_cross_attention(x[:2], x, w_q, w_k, w_v, w_o, 2, bias=per_head[:, :2, :])
    assert cross.heads[1].weights.shape == (2, 5)


@pytest.mark.parametrize(("bias", "words"), [
    (np.ones((3, 4)), "score bias: shape 3 × 4 does not fit the scores, which are 2 × 3 (rows of Q × rows of K)."),
    ([[0.0, float("nan"), 0.0], [0.0, 0.0, 0.0]], "score bias: cell (0, 1) is NaN"),
    ([[0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]], "score bias: cell (0, 2) is -inf"),
    ([[0.0, "a", 0.0], [0.0, 0.0, 0.0]], "score bias: cell (0, 1) is 'a', not a number."),
])
def test_a_bias_that_does_not_fit_is_named(bias, words):
    with pytest.raises(AttentionInputError) as err:
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)), bias=bias)
    assert words in str(err.value)


def test_multi_head_bias_errors_name_the_head():
    x = np.ones((2, 4))
    with pytest.raises(AttentionInputError, match=r"score bias: 3 matrices for 2 heads"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=np.zeros((3, 2, 2)))
    bad = np.zeros((2, 2, 2))
    bad[1, 1, 0] = np.inf
    with pytest.raises(AttentionInputError, match=r"score bias \(head 1\): cell \(1, 0\) is \+inf"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=bad)
    with pytest.raises(AttentionInputError, match=r"does not fit the scores, which are 2 × 2 \(rows of Q \(head 0\)"):
        multi_head_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bias=np.zeros((2, 3, 2)))


def test_a_bias_that_overflows_the_scores_is_named():
    with pytest.raises(AttentionInputError, match=r"scaled scores \+ bias: cell \(0, 0\) is \+inf"):
        scaled_dot_product_attention([[1e308]], [[1.0]], [[1.0]], scale="none", bias=[[1.7e308]])


# ---- in a configuration: validated, run, saved, exported, resized ------------------------------------------------

def _biased_preset(seed: int = 0):
    from dataclasses import replace

    from attn_core import load_preset, validate_config
    cfg = load_preset("seed000")
    bias = np.random.default_rng(seed).normal(size=(cfg.n_heads, cfg.n_q, cfg.n_seq))
    return validate_config(replace(cfg, score_bias=bias)), bias


def test_a_configuration_runs_its_score_bias():
    from attn_core import run
    cfg, bias = _biased_preset()
    t = run(cfg)
    x = cfg.x
    w, out = reference(x @ cfg.w_q, x @ cfg.w_k, x @ cfg.w_v, bias[0], np.sqrt(cfg.d_k))
    np.testing.assert_allclose(t.heads[0].weights, w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.output, out @ cfg.w_o, rtol=0, atol=1e-13)


def test_a_score_bias_is_saved_and_read_back_exactly_and_exported_as_code():
    import subprocess
    import sys

    from attn_core import codegen, configs_equal, run, share
    cfg, _ = _biased_preset(1)
    back, _ = share.config_from_dict(share.config_to_dict(cfg))
    assert configs_equal(back, cfg)
    assert back.score_bias.tobytes() == cfg.score_bias.tobytes()
    printed = codegen.parse_output(subprocess.run([sys.executable, "-c", codegen.numpy_script(cfg)],
                                                  capture_output=True, text=True, check=True).stdout)
    trace = run(cfg)
    assert printed["head0_biased"].tobytes() == trace.heads[0].biased.tobytes()
    assert printed["output"].tobytes() == trace.output.tobytes()


def test_a_configuration_without_a_bias_is_not_equal_to_one_with_it():
    from attn_core import configs_equal, load_preset
    cfg, _ = _biased_preset()
    assert not configs_equal(cfg, load_preset("seed000"))


@pytest.mark.parametrize(("bias", "words"), [
    (np.zeros((2, 3, 3)), "score bias: shape 2 × 3 × 3 does not fit; it needs one 3 × 3 matrix per head (1)."),
    (np.zeros((3, 3)), "score bias: shape 3 × 3 does not fit; it needs one 3 × 3 matrix per head (1)."),
    (np.full((1, 3, 3), np.nan), "score bias (head 0): cell (0, 0) is NaN"),
])
def test_a_configuration_names_a_bias_that_does_not_fit(bias, words):
    from dataclasses import replace

    from attn_core import load_preset, validate_config
    with pytest.raises(AttentionInputError) as err:
        validate_config(replace(load_preset("seed000"), score_bias=bias))
    assert words in str(err.value)


@pytest.mark.parametrize(("value", "words"), [
    ([], "score bias: expected a list of 1 to 16 matrices (one per head), got 0."),
    ("no", "score bias: expected a list of 1 to 16 matrices (one per head), got a string."),
    ([[[0.0, 0.0, 0.0]] * 3, [[0.0, 0.0]] * 3], "score bias: the heads' matrices differ in shape"),
    ([[[0.0] * 300]], "score bias: 1 × 300 is over the cap of 256 × 256."),
])
def test_a_file_with_a_bad_score_bias_is_refused_by_name(value, words):
    from attn_core import load_preset, share
    doc = share.config_to_dict(load_preset("seed000")) | {"score_bias": value}
    with pytest.raises(AttentionInputError) as err:
        share.config_from_dict(doc)
    assert words in str(err.value)


def test_the_bias_follows_the_tokens_and_is_dropped_with_another_head_count():
    from attn_core import with_dimensions
    cfg, bias = _biased_preset()
    grown = with_dimensions(cfg, n_seq=5, d_model=cfg.d_model, d_qk=cfg.w_q.shape[1], d_v=cfg.w_v.shape[1])
    assert grown.score_bias.shape == (1, 5, 5)
    np.testing.assert_array_equal(grown.score_bias[0, :3, :3], bias[0])
    assert not grown.score_bias[0, 3:].any() and not grown.score_bias[0, :, 3:].any()


def test_the_bias_counts_toward_the_cap_on_cells():
    from dataclasses import replace

    from attn_core import LIMITS, make_config, validate_config
    n, d, w = 256, 512, 32  # 16 heads of width 2: the matrices alone are 181,248 cells
    cfg = make_config([f"t{i}" for i in range(n)], np.zeros((n, d)), np.zeros((d, w)), np.zeros((d, w)),
                      np.zeros((d, w)), np.zeros((w, w)), n_heads=16)
    assert n * d + 3 * d * w + w * w + 16 * n * n > LIMITS.total_cells  # with one bias per head: 1,229,824
    with pytest.raises(AttentionInputError, match="1,229,824 cells in X, the weights and the score bias together"):
        validate_config(replace(cfg, score_bias=np.zeros((16, n, n))))
