"""The score functions (dot, Luong's general, Bahdanau's additive) against numpy written out with loops.

The reference below never calls attn_core: every score is a loop over queries i and keys j,

    dot:       s[i, j] = Σ_c q[i, c] k[j, c]
    general:   q_a = q W_a,  s[i, j] = Σ_c q_a[i, c] k[j, c]
    additive:  q_1 = q W_1, k_2 = k W_2,  s[i, j] = Σ_a v_a[a] tanh(q_1[i, a] + k_2[j, a])

then scaled (÷ divisor), masked (a disallowed key gets no weight), a stable softmax per row (a row with no key
allowed is all zeros) and the weighted sum of V. Multi-head attention gives head h its column slice of every
weight, W_a's and W_1's, W_2's and v_a's included (attn_core.multihead's layout), written out here.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn_core.attention
from attn_core import (
    AttentionInputError,
    ScoreFunction,
    additive_features,
    additive_scores,
    causal_mask,
    cross_attention,
    general_scores,
    make_config,
    multi_head_attention,
    padding_mask,
    run,
    scaled_dot_product_attention,
    self_attention,
    validate_config,
)

RTOL, ATOL = 1e-10, 1e-12
FAST = settings(max_examples=100, deadline=None)
KINDS = ("dot", "general", "additive")


# ---- the reference, with loops --------------------------------------------------------------------


def matmul(a, b):  # [n, m], [m, p] -> [n, p]
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    return np.array([[sum(a[i, c] * b[c, j] for c in range(m)) for j in range(p)] for i in range(n)]).reshape(n, p)


def reference(q, k, v, kind, divisor, mask=None, w_a=None, w_1=None, w_2=None, v_a=None) -> dict:
    """One head: q [n_q, d_q], k [n_k, d_k], v [n_k, d_v], mask bool [n_q, n_k] (True = may attend) or None.

    Returns every intermediate by the trace's names: scores, scaled, weights, output [n_q, ...], and q_a [n_q, d_k]
    (general) or q_1 [n_q, d_a], k_2 [n_k, d_a] (additive).
    """
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[1]
    out: dict = {}
    scores = np.zeros((n_q, n_k))  # [n_q, n_k]
    if kind == "dot":
        for i in range(n_q):
            for j in range(n_k):
                scores[i, j] = sum(q[i, c] * k[j, c] for c in range(q.shape[1]))
    elif kind == "general":
        q_a = out["q_a"] = matmul(q, w_a)  # [n_q, d_k]
        for i in range(n_q):
            for j in range(n_k):
                scores[i, j] = sum(q_a[i, c] * k[j, c] for c in range(k.shape[1]))
    else:
        q_1, k_2 = out["q_1"], out["k_2"] = matmul(q, w_1), matmul(k, w_2)  # [n_q, d_a], [n_k, d_a]
        for i in range(n_q):
            for j in range(n_k):
                scores[i, j] = sum(v_a[a] * math.tanh(q_1[i, a] + k_2[j, a]) for a in range(len(v_a)))
    scaled = scores / divisor  # [n_q, n_k]
    weights = np.zeros((n_q, n_k))  # [n_q, n_k]
    for i in range(n_q):
        allowed = [j for j in range(n_k) if mask is None or mask[i, j]]
        if not allowed:
            continue  # no key to attend to: zeros
        top = max(scaled[i, j] for j in allowed)
        e = {j: math.exp(scaled[i, j] - top) for j in allowed}
        total = sum(e.values())
        for j in allowed:
            weights[i, j] = e[j] / total
    output = np.array([[sum(weights[i, j] * v[j, c] for j in range(n_k)) for c in range(d_v)]
                       for i in range(n_q)]).reshape(n_q, d_v)  # [n_q, d_v]
    return out | {"scores": scores, "scaled": scaled, "weights": weights, "output": output}


def multi_head_reference(x, w_q, w_k, w_v, w_o, n_heads, kind, mask=None, w_a=None, w_1=None, w_2=None, v_a=None):
    """Multi-head self-attention with √d_k scaling; every weight cut into one column slice per head.

    x [n, d_model]; w_q [d_model, n_heads·d_q], w_k [d_model, n_heads·d_k], w_v [d_model, n_heads·d_v];
    w_a [d_q, n_heads·d_k]; w_1 [d_q, n_heads·d_a], w_2 [d_k, n_heads·d_a], v_a [n_heads·d_a].
    Returns (the heads' reference dicts, concat [n, n_heads·d_v], output [n, d_out]).
    """
    q_all, k_all, v_all = matmul(x, w_q), matmul(x, w_k), matmul(x, w_v)
    d_q, d_k, d_v = w_q.shape[1] // n_heads, w_k.shape[1] // n_heads, w_v.shape[1] // n_heads
    d_a = 0 if w_1 is None else w_1.shape[1] // n_heads
    heads = []
    for h in range(n_heads):
        q = q_all[:, h * d_q:(h + 1) * d_q]  # [n, d_q]
        k = k_all[:, h * d_k:(h + 1) * d_k]  # [n, d_k]
        v = v_all[:, h * d_v:(h + 1) * d_v]  # [n, d_v]
        score_weights = {}
        if kind == "general":
            score_weights["w_a"] = w_a[:, h * d_k:(h + 1) * d_k]  # [d_q, d_k]
        elif kind == "additive":
            a = slice(h * d_a, (h + 1) * d_a)
            score_weights |= {"w_1": w_1[:, a], "w_2": w_2[:, a], "v_a": v_a[a]}  # [d_q, d_a], [d_k, d_a], [d_a]
        heads.append(reference(q, k, v, kind, math.sqrt(d_k), mask, **score_weights))
    concat = np.hstack([head["output"] for head in heads])  # [n, n_heads·d_v]
    return heads, concat, matmul(concat, w_o)


def random_score(rng, kind, d_q, d_k, d_a=3) -> dict:
    """Random weights of a score function, as keyword arguments (w_a [d_q, d_k]; w_1 [d_q, d_a], w_2 [d_k, d_a],
    v_a [d_a])."""
    if kind == "general":
        return {"w_a": rng.standard_normal((d_q, d_k))}
    if kind == "additive":
        return {"w_1": rng.standard_normal((d_q, d_a)), "w_2": rng.standard_normal((d_k, d_a)),
                "v_a": rng.standard_normal(d_a)}
    return {}


def masks(n_q, n_k) -> dict:
    """None, causal, padding (the last key) and custom (query 1 with no key at all), bool [n_q, n_k]."""
    custom = np.ones((n_q, n_k), dtype=bool)
    custom[0, 0] = custom[-1, 1] = False
    custom[1] = False
    out = {"none": None, "padding": padding_mask([False] * (n_k - 1) + [True], n_q), "custom": custom}
    if n_q == n_k:
        out["causal"] = causal_mask(n_q)
    return out


# ---- single head against the reference ---------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "custom"])
@pytest.mark.parametrize("scale", ["sqrt_dk", "none", 2.5])
@pytest.mark.parametrize("kind", KINDS)
def test_one_head_equals_the_loops(kind, scale, mask_kind):
    rng = np.random.default_rng(KINDS.index(kind))
    n, d_q, d_v = 5, 3, 2
    d_k = 4 if kind == "additive" else 3  # only the additive score lets queries and keys differ in width
    q, k, v = rng.standard_normal((n, d_q)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_v))
    weights = random_score(rng, kind, d_q, d_k)
    mask = masks(n, n)[mask_kind]
    divisor = {"sqrt_dk": math.sqrt(d_k), "none": 1.0}.get(scale, scale)  # √d_k is the key width

    t = scaled_dot_product_attention(q, k, v, scale=scale, mask=mask, score=ScoreFunction(kind, **weights))
    ref = reference(q, k, v, kind, divisor, mask, **weights)

    assert t.score_fn == kind and t.divisor == divisor
    for stage in ("scores", "scaled", "weights", "output"):
        np.testing.assert_allclose(getattr(t, stage), ref[stage], rtol=RTOL, atol=ATOL, err_msg=stage)
    if mask is not None:
        assert (t.weights[~mask] == 0).all() and np.isneginf(t.masked[~mask]).all()
    assert t.fully_masked_rows == ((1,) if mask_kind == "custom" else ())
    if kind == "general":
        np.testing.assert_allclose(t.q_a, ref["q_a"], rtol=RTOL, atol=ATOL)  # [n, d_k]
        assert t.q_1 is t.k_2 is t.v_a is None
    elif kind == "additive":
        np.testing.assert_allclose(t.q_1, ref["q_1"], rtol=RTOL, atol=ATOL)  # [n, d_a]
        np.testing.assert_allclose(t.k_2, ref["k_2"], rtol=RTOL, atol=ATOL)  # [n, d_a]
        np.testing.assert_array_equal(t.v_a, weights["v_a"])
        assert t.q_a is None
        for i in range(n):
            features = t.features(i)  # [n_k, d_a]
            loops = [[math.tanh(ref["q_1"][i, a] + ref["k_2"][j, a]) for a in range(3)] for j in range(n)]
            np.testing.assert_allclose(features, loops, rtol=RTOL, atol=ATOL)
            np.testing.assert_array_equal(features @ t.v_a, t.scores[i])  # its row of scores
    else:
        assert t.q_a is t.q_1 is t.k_2 is t.v_a is None
        with pytest.raises(ValueError, match="features exist for additive attention only"):
            t.features(0)


@pytest.mark.parametrize("kind", KINDS)
def test_self_attention_with_a_score_function_projects_then_scores(kind):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 5))  # [n_seq, d_model]
    w_q, w_k, w_v = rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    weights = random_score(rng, kind, 3, 3)
    t = self_attention(x, w_q, w_k, w_v, mask=causal_mask(4), score=ScoreFunction(kind, **weights))
    ref = reference(matmul(x, w_q), matmul(x, w_k), matmul(x, w_v), kind, math.sqrt(3), causal_mask(4), **weights)
    for stage in ("scores", "weights", "output"):
        np.testing.assert_allclose(getattr(t, stage), ref[stage], rtol=RTOL, atol=ATOL, err_msg=stage)


def test_the_score_helpers_equal_the_loops():
    rng = np.random.default_rng(12)
    q, k = rng.standard_normal((3, 2)), rng.standard_normal((4, 5))  # [n_q, d_q], [n_k, d_k]
    w_a = rng.standard_normal((2, 5))  # [d_q, d_k]
    q_a, s = general_scores(q, k, w_a)
    ref = reference(q, k, np.ones((4, 1)), "general", 1.0, w_a=w_a)
    np.testing.assert_allclose(q_a, ref["q_a"], rtol=RTOL)
    np.testing.assert_allclose(s, ref["scores"], rtol=RTOL, atol=ATOL)
    w_1, w_2, v_a = rng.standard_normal((2, 6)), rng.standard_normal((5, 6)), rng.standard_normal(6)
    q_1, k_2 = additive_features(q, k, w_1, w_2)  # [3, 6], [4, 6]
    ref = reference(q, k, np.ones((4, 1)), "additive", 1.0, w_1=w_1, w_2=w_2, v_a=v_a)
    np.testing.assert_allclose(q_1, ref["q_1"], rtol=RTOL)
    np.testing.assert_allclose(k_2, ref["k_2"], rtol=RTOL)
    np.testing.assert_allclose(additive_scores(q_1, k_2, v_a), ref["scores"], rtol=RTOL, atol=ATOL)
    out = np.empty((3, 4))
    assert additive_scores(q_1, k_2, v_a, out=out) is out


# ---- multi-head against the reference -----------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "custom"])
@pytest.mark.parametrize("n_heads", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_multi_head_equals_the_loops_with_per_head_column_slices(kind, n_heads, mask_kind):
    rng = np.random.default_rng(100 * n_heads + KINDS.index(kind))
    n, d_model, d_q, d_v, d_a, d_out = 5, 6, 2, 2, 3, 4
    d_k = 3 if kind == "additive" else d_q  # per head
    x = rng.standard_normal((n, d_model))  # [n, d_model]
    w_q = rng.standard_normal((d_model, n_heads * d_q))  # [d_model, n_heads·d_q]
    w_k = rng.standard_normal((d_model, n_heads * d_k))  # [d_model, n_heads·d_k]
    w_v = rng.standard_normal((d_model, n_heads * d_v))  # [d_model, n_heads·d_v]
    w_o = rng.standard_normal((n_heads * d_v, d_out))  # [n_heads·d_v, d_out]
    weights = {  # one column slice per head
        "dot": {},
        "general": {"w_a": rng.standard_normal((d_q, n_heads * d_k))},  # [d_q, n_heads·d_k]
        "additive": {"w_1": rng.standard_normal((d_q, n_heads * d_a)),  # [d_q, n_heads·d_a]
                     "w_2": rng.standard_normal((d_k, n_heads * d_a)),  # [d_k, n_heads·d_a]
                     "v_a": rng.standard_normal(n_heads * d_a)},  # [n_heads·d_a]
    }[kind]
    mask = masks(n, n)[mask_kind]

    t = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, mask=mask, score=ScoreFunction(kind, **weights))
    heads, concat, output = multi_head_reference(x, w_q, w_k, w_v, w_o, n_heads, kind, mask, **weights)

    assert t.n_heads == n_heads
    for h, (got, ref) in enumerate(zip(t.heads, heads, strict=True)):
        assert got.score_fn == kind and got.divisor == math.sqrt(d_k)
        for stage in ("scores", "scaled", "weights", "output", *{"general": ["q_a"],
                                                                 "additive": ["q_1", "k_2"]}.get(kind, [])):
            np.testing.assert_allclose(getattr(got, stage), ref[stage], rtol=RTOL, atol=ATOL,
                                       err_msg=f"head {h} {stage}")
        if kind == "additive":
            np.testing.assert_array_equal(got.v_a, weights["v_a"][h * d_a:(h + 1) * d_a])
            assert got.q_1.shape == (n, d_a) and got.k_2.shape == (n, d_a)
            for i in range(n):
                np.testing.assert_array_equal(got.features(i) @ got.v_a, got.scores[i])
    np.testing.assert_allclose(t.concat, concat, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(t.output, output, rtol=RTOL, atol=ATOL)


# ---- reductions to known cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", ["none", "causal", "custom"])
def test_general_with_the_identity_is_the_dot_product_exactly(mask_kind):
    rng = np.random.default_rng(21)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    mask = masks(4, 4)[mask_kind]
    dot = scaled_dot_product_attention(q, k, v, mask=mask)
    general = scaled_dot_product_attention(q, k, v, mask=mask, score=ScoreFunction("general", w_a=np.eye(3)))
    np.testing.assert_array_equal(general.q_a, q)
    for stage in ("scores", "scaled", "masked", "weights", "output"):
        np.testing.assert_array_equal(getattr(general, stage), getattr(dot, stage), err_msg=stage)
    # multi-head: W_a = [I | I] gives every head the identity
    x, w = rng.standard_normal((4, 4)), [rng.standard_normal((4, 4)) for _ in range(3)]
    dot = multi_head_attention(x, *w, np.eye(4), 2)
    general = multi_head_attention(x, *w, np.eye(4), 2, score=ScoreFunction("general", w_a=np.hstack([np.eye(2)] * 2)))
    np.testing.assert_array_equal(general.output, dot.output)


@pytest.mark.parametrize("n", [1, 2, 5, 7])
def test_additive_with_w_2_zero_gives_uniform_weights(n):
    """k_2 = 0: every key scores v_a · tanh(q_1[i]) for query i, so each row's weights are all 1/n."""
    rng = np.random.default_rng(n)
    q, k, v = rng.standard_normal((3, 2)), rng.standard_normal((n, 4)), rng.standard_normal((n, 3))
    sf = ScoreFunction("additive", w_1=rng.standard_normal((2, 5)), w_2=np.zeros((4, 5)), v_a=rng.standard_normal(5))
    t = scaled_dot_product_attention(q, k, v, score=sf)
    np.testing.assert_array_equal(t.k_2, np.zeros((n, 5)))
    np.testing.assert_allclose(t.weights, np.full((3, n), 1 / n), rtol=1e-14)
    np.testing.assert_allclose(t.output, np.tile(v.mean(axis=0), (3, 1)), rtol=1e-12, atol=1e-14)


def test_additive_with_w_1_zero_gives_identical_rows():
    """q_1 = 0: the scores no longer depend on the query, so every query weighs the keys the same way."""
    rng = np.random.default_rng(22)
    q, k, v = rng.standard_normal((6, 3)), rng.standard_normal((4, 2)), rng.standard_normal((4, 3))
    sf = ScoreFunction("additive", w_1=np.zeros((3, 5)), w_2=rng.standard_normal((2, 5)), v_a=rng.standard_normal(5))
    t = scaled_dot_product_attention(q, k, v, score=sf)
    for i in range(1, 6):
        np.testing.assert_array_equal(t.scores[i], t.scores[0])
        np.testing.assert_array_equal(t.weights[i], t.weights[0])
        np.testing.assert_array_equal(t.output[i], t.output[0])
    assert not np.allclose(t.weights[0], 0.25)  # and they are not uniform


def test_additive_allows_queries_and_keys_of_different_widths():
    rng = np.random.default_rng(23)
    q, k, v = rng.standard_normal((2, 3)), rng.standard_normal((5, 7)), rng.standard_normal((5, 4))  # d_q 3, d_k 7
    sf = ScoreFunction("additive", w_1=rng.standard_normal((3, 6)), w_2=rng.standard_normal((7, 6)),
                       v_a=rng.standard_normal(6))
    t = scaled_dot_product_attention(q, k, v, score=sf)
    assert t.q_1.shape == (2, 6) and t.k_2.shape == (5, 6) and t.features(1).shape == (5, 6)
    assert t.scores.shape == t.weights.shape == (2, 5) and t.output.shape == (2, 4)
    assert t.divisor == math.sqrt(7)  # √d_k: the keys' width
    x = rng.standard_normal((5, 4))
    t = self_attention(x, rng.standard_normal((4, 3)), rng.standard_normal((4, 7)), rng.standard_normal((4, 2)),
                       score=sf)
    assert t.q.shape == (5, 3) and t.k.shape == (5, 7) and t.output.shape == (5, 2)
    m = multi_head_attention(x, rng.standard_normal((4, 6)), rng.standard_normal((4, 14)), rng.standard_normal((4, 2)),
                             np.eye(2), 2, score=ScoreFunction("additive", w_1=rng.standard_normal((3, 12)),
                                                               w_2=rng.standard_normal((7, 12)),
                                                               v_a=rng.standard_normal(12)))
    assert [h.q_1.shape for h in m.heads] == [(5, 6)] * 2 and m.output.shape == (5, 2)


def test_the_dot_product_refuses_queries_and_keys_of_different_widths():
    rng = np.random.default_rng(24)
    x = rng.standard_normal((3, 4))
    w_q, w_k, w_v = rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    message = r"W_K: has 2 columns but W_Q has 3; queries and keys need the same width d_k\."
    with pytest.raises(AttentionInputError, match=message) as err:
        self_attention(x, w_q, w_k, w_v)
    assert err.value.matrix == "W_K"
    with pytest.raises(AttentionInputError, match=message):
        multi_head_attention(x, w_q, w_k, w_v, np.eye(2), 1)
    with pytest.raises(AttentionInputError, match=message):
        make_config(["a", "b", "c"], x, w_q, w_k, w_v)
    with pytest.raises(AttentionInputError, match=message):  # the general score keeps d_q = d_k in a configuration
        make_config(["a", "b", "c"], x, w_q, w_k, w_v, score="general", w_a=np.ones((3, 2)))
    with pytest.raises(AttentionInputError, match="K: has width 2 but Q has width 3"):
        scaled_dot_product_attention(x[:, :3], x[:, :2], x)


# ---- properties, for every score function ---------------------------------------------------------------

VALUES = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
SMALL = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def matrix(rows, cols, elements=VALUES):
    return arrays(np.float64, (rows, cols), elements=elements)


@st.composite
def score_cases(draw, kind):
    """Q [n_q, d_q], K [n_k, d_k], V [n_k, d_v], a ScoreFunction of that kind, a mask [n_q, n_k] or None, a scale."""
    n_q, n_k, d_q, d_v = (draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 4)),
                          draw(st.integers(1, 4)))
    d_k = d_q if kind == "dot" else draw(st.integers(1, 4))
    q, k, v = draw(matrix(n_q, d_q)), draw(matrix(n_k, d_k)), draw(matrix(n_k, d_v))
    if kind == "general":
        sf = ScoreFunction("general", w_a=draw(matrix(d_q, d_k, SMALL)))
    elif kind == "additive":
        d_a = draw(st.integers(1, 4))
        sf = ScoreFunction("additive", w_1=draw(matrix(d_q, d_a, SMALL)), w_2=draw(matrix(d_k, d_a, SMALL)),
                           v_a=draw(arrays(np.float64, (d_a,), elements=VALUES)))
    else:
        sf = ScoreFunction()
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_k)))
    return q, k, v, sf, mask, draw(st.sampled_from(["sqrt_dk", "none", 0.5, 3.0]))


def attend(case):
    q, k, v, sf, mask, scale = case
    allowed = np.ones((q.shape[0], k.shape[0]), dtype=bool) if mask is None else mask  # [n_q, n_k]
    return scaled_dot_product_attention(q, k, v, scale=scale, mask=mask, score=sf), allowed, v


@pytest.mark.parametrize("kind", KINDS)
def test_weights_are_a_distribution_over_the_allowed_keys(kind):
    @FAST
    @given(score_cases(kind))
    def check(case):
        t, allowed, _ = attend(case)
        assert (t.weights >= 0).all() and (t.weights <= 1).all()
        assert (t.weights[~allowed] == 0.0).all()  # exactly
        any_key = allowed.any(axis=1)
        np.testing.assert_allclose(t.weights.sum(axis=1)[any_key], 1.0, rtol=1e-12)
        assert (t.weights[~any_key] == 0).all() and (t.output[~any_key] == 0).all()
        assert t.fully_masked_rows == tuple(int(i) for i in np.flatnonzero(~any_key))

    check()


@pytest.mark.parametrize("kind", KINDS)
def test_output_rows_lie_within_the_allowed_value_rows(kind):
    @FAST
    @given(score_cases(kind))
    def check(case):
        t, allowed, v = attend(case)
        tol = 1e-9 * (1 + np.abs(v).max())
        for i in range(t.output.shape[0]):
            if allowed[i].any():
                rows = v[allowed[i]]  # [n_allowed, d_v]
                assert (t.output[i] >= rows.min(axis=0) - tol).all()
                assert (t.output[i] <= rows.max(axis=0) + tol).all()

    check()


@FAST
@given(score_cases("additive"))
def test_additive_scores_are_bounded_by_the_norm_of_v_a(case):
    """|v_a · tanh(...)| ≤ Σ|v_a|: whatever the inputs, the additive scores cannot blow up."""
    t, _, _ = attend(case)
    assert (np.abs(t.scores) <= np.abs(t.v_a).sum() * (1 + 1e-12)).all()


# ---- validation names the matrix ----------------------------------------------------------------------

Q3, K3, V2 = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))  # d_q = d_k = 3


@pytest.mark.parametrize(
    ("score", "matrix", "message"),
    [
        (ScoreFunction("general", w_a=np.ones((2, 3))), "W_a", "W_a: has 2 rows but Q has width 3"),
        (ScoreFunction("general", w_a=np.ones((3, 2))), "W_a", "W_a: has 2 columns but K has width 3"),
        (ScoreFunction("general"), "W_a", "W_a: expected a matrix"),
        (ScoreFunction("general", w_a=np.ones(3)), "W_a", "W_a: expected a matrix (2 dimensions), got 1."),
        (ScoreFunction("additive", w_1=np.ones((2, 4)), w_2=np.ones((3, 4)), v_a=np.ones(4)), "W_1",
         "W_1: has 2 rows but Q has width 3"),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), w_2=np.ones((2, 4)), v_a=np.ones(4)), "W_2",
         "W_2: has 2 rows but K has width 3"),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), w_2=np.ones((3, 5)), v_a=np.ones(4)), "W_2",
         "W_2: has 5 columns but W_1 has 4; both make features of width d_a."),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), w_2=np.ones((3, 4)), v_a=np.ones(3)), "v_a",
         "v_a: has 3 numbers but W_1 has 4 columns (d_a)"),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), w_2=np.ones((3, 4)), v_a=np.ones((4, 1))), "v_a",
         "v_a: must be one row of d_a numbers, got 4 rows."),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), v_a=np.ones(4)), "W_2", "W_2: expected a matrix"),
        (ScoreFunction("general", w_a=[[1.0, 0, 0], [0, float("nan"), 0], [0, 0, 1]]), "W_a",
         "W_a: cell (1, 1) is NaN; every cell must be a finite number."),
        (ScoreFunction("additive", w_1=np.ones((3, 4)), w_2=np.ones((3, 4)), v_a=[0, 1, float("inf"), 0]), "v_a",
         "v_a: cell (0, 2) is +inf"),
        (ScoreFunction("bilinear"), None, "score function: 'bilinear' is not one of dot, general, additive."),
        ("general", None, "score function: 'general' is not one of dot, general, additive."),
    ],
)
def test_scaled_dot_product_attention_names_the_score_matrix_at_fault(score, matrix, message):
    with pytest.raises(AttentionInputError, match=re.escape(message)) as err:
        scaled_dot_product_attention(Q3, K3, V2, score=score)
    assert err.value.matrix == matrix


def mh_inputs(n_heads=2, d_q=2, d_k=2):
    """X [3, 4] and W_Q [4, n_heads·d_q], W_K [4, n_heads·d_k], W_V [4, n_heads·2], W_O [n_heads·2, 2]."""
    return np.ones((3, 4)), np.ones((4, n_heads * d_q)), np.ones((4, n_heads * d_k)), np.ones((4, 2 * n_heads)), \
        np.ones((2 * n_heads, 2))


@pytest.mark.parametrize(
    ("score", "matrix", "message"),
    [
        (ScoreFunction("general", w_a=np.ones((4, 4))), "W_a",
         "W_a: has 4 rows but each head's queries are 2 wide (columns of W_Q ÷ heads)."),
        (ScoreFunction("general", w_a=np.ones((2, 2))), "W_a", "W_a: has 2 columns but W_K has 4;"),
        (ScoreFunction("additive", w_1=np.ones((4, 6)), w_2=np.ones((2, 6)), v_a=np.ones(6)), "W_1",
         "W_1: has 4 rows but each head's queries are 2 wide"),
        (ScoreFunction("additive", w_1=np.ones((2, 6)), w_2=np.ones((4, 6)), v_a=np.ones(6)), "W_2",
         "W_2: has 4 rows but each head's keys are 2 wide"),
        (ScoreFunction("additive", w_1=np.ones((2, 6)), w_2=np.ones((2, 4)), v_a=np.ones(6)), "W_2",
         "W_2: has 4 columns but W_1 has 6"),
        (ScoreFunction("additive", w_1=np.ones((2, 6)), w_2=np.ones((2, 6)), v_a=np.ones(4)), "v_a",
         "v_a: has 4 numbers but W_1 has 6 columns"),
        (ScoreFunction("additive", w_1=np.ones((2, 5)), w_2=np.ones((2, 5)), v_a=np.ones(5)), "W_1",
         "W_1: its 5 columns do not split into 2 heads"),
        (ScoreFunction("general", w_a=np.full((2, 4), np.nan)), "W_a", "W_a: cell (0, 0) is NaN"),
    ],
)
def test_multi_head_attention_names_the_score_matrix_at_fault(score, matrix, message):
    with pytest.raises(AttentionInputError, match=re.escape(message)) as err:
        multi_head_attention(*mh_inputs(), 2, score=score)
    assert err.value.matrix == matrix


TOKENS = ["a", "b", "c"]


def config_inputs():
    """X [3, 4], W_Q = W_K [4, 4] (2 heads of 2), W_V [4, 4], for make_config."""
    x, w_q, w_k, w_v, _ = mh_inputs()
    return TOKENS, x, w_q, w_k, w_v


@pytest.mark.parametrize(
    ("options", "matrix", "message"),
    [
        ({"score": "general"}, "W_a", "W_a: the general score function needs W_a."),
        ({"score": "additive"}, "W_1", "W_1: the additive score function needs W_1, W_2, v_a."),
        ({"score": "additive", "w_1": np.ones((2, 4)), "v_a": np.ones((1, 4))}, "W_2",
         "W_2: the additive score function needs W_1, W_2, v_a."),
        ({"score": "additive", "w_1": np.ones((2, 4)), "w_2": np.ones((2, 4))}, "v_a",
         "v_a: the additive score function needs W_1, W_2, v_a."),
        ({"score": "general", "w_a": np.ones((4, 4))}, "W_a", "W_a: has 4 rows but each head's queries are 2 wide"),
        ({"score": "general", "w_a": np.ones((2, 2))}, "W_a", "W_a: has 2 columns but W_K has 4"),
        ({"score": "general", "w_a": [[1.0, 2.0, 3.0, float("nan")], [0.0] * 4]}, "W_a", "W_a: cell (0, 3) is NaN"),
        ({"score": "additive", "w_1": np.ones((3, 4)), "w_2": np.ones((2, 4)), "v_a": np.ones((1, 4))}, "W_1",
         "W_1: has 3 rows but each head's queries are 2 wide"),
        ({"score": "additive", "w_1": np.ones((2, 4)), "w_2": np.ones((3, 4)), "v_a": np.ones((1, 4))}, "W_2",
         "W_2: has 3 rows but each head's keys are 2 wide"),
        ({"score": "additive", "w_1": np.ones((2, 4)), "w_2": np.ones((2, 6)), "v_a": np.ones((1, 4))}, "W_2",
         "W_2: has 6 columns but W_1 has 4"),
        ({"score": "additive", "w_1": np.ones((2, 4)), "w_2": np.ones((2, 4)), "v_a": np.ones((1, 2))}, "v_a",
         "v_a: has 2 numbers but W_1 has 4 columns"),
        ({"score": "additive", "w_1": np.ones((2, 4)), "w_2": np.ones((2, 4)), "v_a": np.ones((2, 4))}, "v_a",
         "v_a: must be one row of numbers, got 2 rows."),
        ({"score": "additive", "w_1": np.ones((2, 3)), "w_2": np.ones((2, 3)), "v_a": np.ones((1, 3))}, "W_1",
         "W_1: its 3 columns do not split into 2 heads"),
        ({"score": "luong"}, "score", "score function: 'luong' is not one of dot, general, additive."),
    ],
)
def test_make_config_names_the_score_matrix_at_fault(options, matrix, message):
    with pytest.raises(AttentionInputError, match=re.escape(message)) as err:
        make_config(*config_inputs(), n_heads=2, **options)
    assert err.value.matrix == matrix


def test_validate_config_keeps_score_matrices_exactly_when_used():
    tokens, x, w_q, w_k, w_v = config_inputs()
    w_a = np.arange(8.0).reshape(2, 4)  # [d_q, n_heads·d_k]
    general = make_config(tokens, x, w_q, w_k, w_v, n_heads=2, score="general", w_a=w_a)
    assert general.matrix_names() == ("x", "w_q", "w_k", "w_v", "w_o", "w_a")
    assert validate_config(general).w_a.tobytes() == w_a.tobytes()
    with pytest.raises(AttentionInputError, match="W_a: given, but the dot score function does not use it"):
        make_config(tokens, x, w_q, w_k, w_v, n_heads=2, w_a=w_a)  # a weight nothing uses is refused, not lost
    dot = make_config(tokens, x, w_q, w_k, w_v, n_heads=2)
    assert dot.w_a is None and dot.matrix_names() == ("x", "w_q", "w_k", "w_v", "w_o")
    with pytest.raises(AttentionInputError, match="W_a: given, but the additive score function does not use it"):
        make_config(tokens, x, w_q, w_k, w_v, n_heads=2, score="additive", w_1=np.ones((2, 4)),
                    w_2=np.ones((2, 4)), v_a=[[1, 2, 3, 4]], w_a=w_a)
    additive = make_config(tokens, x, w_q, w_k, w_v, n_heads=2, score="additive", w_1=np.ones((2, 4)),
                           w_2=np.ones((2, 4)), v_a=[[1, 2, 3, 4]])
    assert additive.matrix_names() == ("x", "w_q", "w_k", "w_v", "w_o", "w_1", "w_2", "v_a")
    assert additive.w_a is None and additive.v_a.dtype == np.float64 and additive.d_a == 2
    sf = additive.score_function()
    assert sf.kind == "additive" and sf.v_a.tolist() == [1.0, 2.0, 3.0, 4.0]  # v_a as a vector
    t = run(additive)
    np.testing.assert_array_equal(t.heads[1].v_a, [3.0, 4.0])


def test_a_configuration_with_a_score_function_runs_as_the_functions_do():
    rng = np.random.default_rng(31)
    x, w_q, w_k, w_v = (rng.standard_normal(s) for s in ((3, 4), (4, 4), (4, 6), (4, 4)))
    w_1, w_2, v_a = rng.standard_normal((2, 6)), rng.standard_normal((3, 6)), rng.standard_normal((1, 6))
    cfg = make_config(TOKENS, x, w_q, w_k, w_v, n_heads=2, score="additive", w_1=w_1, w_2=w_2, v_a=v_a,
                      mask_kind="causal")
    assert (cfg.d_q, cfg.d_k, cfg.d_a) == (2, 3, 3)
    got = run(cfg)
    want = multi_head_attention(x, w_q, w_k, w_v, np.eye(4), 2, mask=causal_mask(3),
                                score=ScoreFunction("additive", w_1=w_1, w_2=w_2, v_a=v_a[0]))
    assert got.output.tobytes() == want.output.tobytes()
    for a, b in zip(got.heads, want.heads, strict=True):
        assert a.weights.tobytes() == b.weights.tobytes()


# ---- the additive score in blocks ---------------------------------------------------------------------


class TanhRecorder:
    """Stands in for numpy inside attn_core.attention, recording the size of every array given to np.tanh."""

    def __init__(self):
        self.sizes: list[int] = []
        self.shapes: list[tuple[int, ...]] = []

    def tanh(self, a, *args, **kwargs):
        self.sizes.append(np.size(a))
        self.shapes.append(np.shape(a))
        return np.tanh(a, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(np, name)


def test_the_additive_score_never_holds_more_than_a_block_of_features(monkeypatch):
    n, d_a = 300, 64
    rng = np.random.default_rng(41)
    q, k, v = rng.standard_normal((n, 8)), rng.standard_normal((n, 5)), rng.standard_normal((n, 2))
    w_1, w_2, v_a = rng.standard_normal((8, d_a)), rng.standard_normal((5, d_a)), rng.standard_normal(d_a)
    whole = np.tanh((q @ w_1)[:, None, :] + (k @ w_2)[None, :, :]) @ v_a  # [n, n]: unblocked, [n, n, d_a] held

    recorder = TanhRecorder()
    monkeypatch.setattr(attn_core.attention, "np", recorder)
    t = scaled_dot_product_attention(q, k, v, scale="none", score=ScoreFunction("additive", w_1=w_1, w_2=w_2, v_a=v_a))
    monkeypatch.undo()

    block = attn_core.attention.ADDITIVE_BLOCK
    assert recorder.sizes and max(recorder.sizes) <= block
    assert len(recorder.sizes) > 1  # 300 × 300 × 64 = 5,760,000 numbers: several blocks
    assert sum(s[0] for s in recorder.shapes) == n and all(s[1:] == (n, d_a) for s in recorder.shapes)
    np.testing.assert_array_equal(t.scores, whole)  # the same numbers, bit for bit
    np.testing.assert_array_equal(t.q_1, q @ w_1)


@pytest.mark.parametrize("block", [1, 7, 20, 64, 10**9])
def test_the_additive_score_is_the_same_whatever_the_block(monkeypatch, block):
    rng = np.random.default_rng(block % 1000)
    q_1, k_2, v_a = rng.standard_normal((11, 4)), rng.standard_normal((5, 4)), rng.standard_normal(4)
    whole = np.tanh(q_1[:, None, :] + k_2[None, :, :]) @ v_a  # [11, 5]
    monkeypatch.setattr(attn_core.attention, "ADDITIVE_BLOCK", block)
    if block >= 5 * 4:  # blocks of whole queries (every configuration within the caps): bit for bit
        np.testing.assert_array_equal(additive_scores(q_1, k_2, v_a), whole)
    else:  # one query's row split into blocks of keys: the same to the last bit or two of each sum
        np.testing.assert_allclose(additive_scores(q_1, k_2, v_a), whole, rtol=1e-14, atol=1e-15)


def test_cross_attention_takes_the_score_function_too():
    rng = np.random.default_rng(51)
    y, x = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    w_q, w_k, w_v = rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    w_a = rng.standard_normal((2, 2))
    t = cross_attention(y, x, w_q, w_k, w_v, score=ScoreFunction("general", w_a=w_a))
    ref = reference(matmul(y, w_q), matmul(x, w_k), matmul(x, w_v), "general", math.sqrt(2), w_a=w_a)
    np.testing.assert_allclose(t.weights, ref["weights"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(t.q_a, ref["q_a"], rtol=RTOL, atol=ATOL)
