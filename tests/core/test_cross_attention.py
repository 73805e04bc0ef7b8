"""Cross-attention: queries from Y, keys and values from X (Q = Y W_Q, K = X W_K, V = X W_V).

Checked against numpy written out here, against PyTorch's ``nn.MultiheadAttention`` with a query sequence of
another width than the key/value sequence (its numbers stored in reference_cross_attention.npz by
make_cross_reference.py, so these run without torch; where torch is installed, PyTorch is also run live), against
the same computation written out in numpy, and through a configuration with Y (``Config.y``, ``Config.y_tokens``).

PyTorch's layout, transposed into attn_core's: ``q_proj_weight`` [E, E] -> w_q [E, E], ``k_proj_weight`` [E, kdim]
-> w_k [kdim, E], ``v_proj_weight`` [E, vdim] -> w_v [vdim, E], ``out_proj.weight`` [E, E] -> w_o [E, E]. Its
``key_padding_mask`` [batch, S] means True = ignore; attn_core's masks mean True = may attend.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attn_core import (
    AttentionInputError,
    ScoreFunction,
    config_mask,
    cross_attention,
    load_preset,
    make_config,
    multi_head_attention,
    multi_head_cross_attention,
    padding_mask,
    run,
    self_attention,
    validate_config,
    with_dimensions,
)
from tests.core.make_cross_reference import N_HEADS, PADS, pytorch_case, pytorch_forward

RTOL, ATOL = 1e-10, 1e-12
KINDS = ("dot", "general", "additive")


# ---- the reference, written out ------------------------------------------------------------------------


def softmax_rows(logits):  # [..., n_q, n_k] with -inf where masked -> weights; a row of only -inf gives zeros
    top = logits.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0.0, top)
    e = np.exp(logits - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def cross_reference(y, x, w_q, w_k, w_v, w_o, n_heads, kind="dot", mask=None, scale="sqrt_dk", **score):
    """Multi-head cross-attention in numpy. y [n_y, d_model], x [n_x, d_model]; mask bool [n_y, n_x] (True = may
    attend). Head h uses columns h·d:(h+1)·d of every projection and of W_a / W_1, W_2, v_a.
    Returns (weights [n_heads, n_y, n_x], concat [n_y, n_heads·d_v], output [n_y, d_out])."""
    q_all, k_all, v_all = y @ w_q, x @ w_k, x @ w_v  # [n_y, n_heads·d_q], [n_x, n_heads·d_k], [n_x, n_heads·d_v]
    d_q, d_k, d_v = (m.shape[1] // n_heads for m in (q_all, k_all, v_all))
    weights, outputs = [], []
    for h in range(n_heads):
        q = q_all[:, h * d_q:(h + 1) * d_q]  # [n_y, d_q]
        k = k_all[:, h * d_k:(h + 1) * d_k]  # [n_x, d_k]
        v = v_all[:, h * d_v:(h + 1) * d_v]  # [n_x, d_v]
        if kind == "general":
            s = (q @ score["w_a"][:, h * d_k:(h + 1) * d_k]) @ k.T  # [n_y, n_x]
        elif kind == "additive":
            d_a = score["w_1"].shape[1] // n_heads
            a = slice(h * d_a, (h + 1) * d_a)
            q_1, k_2 = q @ score["w_1"][:, a], k @ score["w_2"][:, a]  # [n_y, d_a], [n_x, d_a]
            s = np.array([[score["v_a"][a] @ np.tanh(q_1[i] + k_2[j]) for j in range(len(x))]
                          for i in range(len(y))])  # [n_y, n_x]
        else:
            s = q @ k.T  # [n_y, n_x]
        divisor = {"sqrt_dk": math.sqrt(d_k), "none": 1.0}.get(scale, scale)
        logits = s / divisor if mask is None else np.where(mask, s / divisor, -np.inf)
        w = softmax_rows(logits)  # [n_y, n_x]
        weights.append(w)
        outputs.append(w @ v)  # [n_y, d_v]
    concat = np.hstack(outputs)  # [n_y, n_heads·d_v]
    return np.stack(weights), concat, concat @ w_o


def random_cross(rng, n_heads, kind, n_y=3, n_x=5, d_model=4, d_head=2, d_a=3, d_out=3):
    """Y [n_y, d_model], X [n_x, d_model], the four weights and the score function's (one slice per head)."""
    d_k = d_head + 1 if kind == "additive" else d_head  # the additive score lets d_k differ from d_q
    y, x = rng.standard_normal((n_y, d_model)), rng.standard_normal((n_x, d_model))
    w = (rng.standard_normal((d_model, n_heads * d_head)), rng.standard_normal((d_model, n_heads * d_k)),
         rng.standard_normal((d_model, n_heads * d_head)), rng.standard_normal((n_heads * d_head, d_out)))
    score = {
        "dot": {},
        "general": {"w_a": rng.standard_normal((d_head, n_heads * d_k))},  # [d_q, n_heads·d_k]
        "additive": {"w_1": rng.standard_normal((d_head, n_heads * d_a)),  # [d_q, n_heads·d_a]
                     "w_2": rng.standard_normal((d_k, n_heads * d_a)),  # [d_k, n_heads·d_a]
                     "v_a": rng.standard_normal(n_heads * d_a)},  # [n_heads·d_a]
    }[kind]
    return y, x, w, score


# ---- against the reference -------------------------------------------------------------------------------


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_cross_attention_equals_the_reference(kind, masked):
    rng = np.random.default_rng(KINDS.index(kind) + 10 * masked)
    y, x, (w_q, w_k, w_v, _), score = random_cross(rng, 1, kind)  # Y [3, 4], X [5, 4]
    mask = padding_mask([False, True, False, False, True], 3) if masked else None  # [n_y, n_x]
    t = cross_attention(y, x, w_q, w_k, w_v, mask=mask, score=ScoreFunction(kind, **score))
    weights, concat, _ = cross_reference(y, x, w_q, w_k, w_v, np.eye(2), 1, kind, mask, **score)
    assert t.q.shape == (3, 2) and t.k.shape[0] == t.v.shape[0] == 5
    assert t.weights.shape == t.scores.shape == (3, 5) and t.output.shape == (3, 2)  # [n_y, n_x], [n_y, d_v]
    np.testing.assert_array_equal(t.q, y @ w_q)
    np.testing.assert_array_equal(t.k, x @ w_k)
    np.testing.assert_array_equal(t.v, x @ w_v)
    np.testing.assert_allclose(t.weights, weights[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(t.output, concat, rtol=RTOL, atol=ATOL)
    if masked:
        assert (t.weights[:, [1, 4]] == 0).all()


@pytest.mark.parametrize("mask_kind", ["none", "padding", "custom"])
@pytest.mark.parametrize("n_heads", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_multi_head_cross_attention_equals_the_reference(kind, n_heads, mask_kind):
    rng = np.random.default_rng(100 * n_heads + KINDS.index(kind))
    y, x, w, score = random_cross(rng, n_heads, kind, n_y=4, n_x=6)
    custom = rng.random((4, 6)) < 0.6
    custom[:, 0] = True  # every other query reads at least X's token 0
    custom[2] = False  # query 2 reads nothing: zero weights, zero output
    mask = {"none": None, "padding": padding_mask([True, False, False, False, False, True], 4),
            "custom": custom}[mask_kind]
    t = multi_head_cross_attention(y, x, *w, n_heads, mask=mask, score=ScoreFunction(kind, **score))
    weights, concat, output = cross_reference(y, x, *w, n_heads, kind, mask, **score)
    assert t.n_heads == n_heads and t.output.shape == (4, 3)
    for h in range(n_heads):
        assert t.heads[h].weights.shape == (4, 6)  # [n_y, n_x]
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=RTOL, atol=ATOL, err_msg=f"head {h}")
    np.testing.assert_allclose(t.concat, concat, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(t.output, output, rtol=RTOL, atol=ATOL)
    assert t.fully_masked_rows == ((2,) if mask_kind == "custom" else ())
    if mask_kind == "custom":
        assert (t.output[2] == 0).all()


@pytest.mark.parametrize("n_heads", [1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_self_attention_is_cross_attention_with_y_equal_to_x(kind, n_heads):
    rng = np.random.default_rng(7 + n_heads)
    _, x, w, score = random_cross(rng, n_heads, kind)
    sf = ScoreFunction(kind, **score)
    mask = np.tri(5, dtype=bool)
    base = multi_head_attention(x, *w, n_heads, mask=mask, score=sf)
    for y in (x, x.copy()):  # the same object, and an equal copy
        t = multi_head_cross_attention(y, x, *w, n_heads, mask=mask, score=sf)
        assert t.output.tobytes() == base.output.tobytes() and t.concat.tobytes() == base.concat.tobytes()
        for a, b in zip(t.heads, base.heads, strict=True):
            assert a.weights.tobytes() == b.weights.tobytes() and a.scores.tobytes() == b.scores.tobytes()
    if n_heads == 1:
        w_q, w_k, w_v, _ = w
        single = self_attention(x, w_q, w_k, w_v, mask=mask, score=sf)
        cross = cross_attention(x.copy(), x, w_q, w_k, w_v, mask=mask, score=sf)
        for stage in ("q", "k", "v", "scores", "weights", "output"):
            assert getattr(cross, stage).tobytes() == getattr(single, stage).tobytes(), stage


def test_cross_attention_checks_name_y_x_and_the_mask():
    y, x, w = np.ones((2, 3)), np.ones((4, 5)), np.ones((5, 2))
    with pytest.raises(AttentionInputError, match=re.escape("W_Q: has 5 rows but Y has 3 columns")) as err:
        cross_attention(y, x, w, w, w)
    assert err.value.matrix == "W_Q"
    t = cross_attention(y, x, np.ones((3, 2)), w, w)  # Y may be of another width than X: W_Q bridges it
    assert t.weights.shape == (2, 4)
    with pytest.raises(AttentionInputError, match=re.escape("W_K: has 3 rows but X has 5 columns")):
        cross_attention(y, x, np.ones((3, 2)), np.ones((3, 2)), w)
    message = "mask: shape (4, 4) does not match the scores' shape (2, 4)."  # [n_y, n_x]
    with pytest.raises(AttentionInputError, match=re.escape(message)):
        cross_attention(y, x, np.ones((3, 2)), w, w, mask=np.ones((4, 4), dtype=bool))
    with pytest.raises(AttentionInputError, match=re.escape("Y: cell (1, 0) is NaN")):
        cross_attention([[1.0, 2, 3], [np.nan, 0, 0]], x, np.ones((3, 2)), w, w)


# ---- PyTorch's nn.MultiheadAttention with kdim, vdim ---------------------------------------------------


def torch_style_cross_reference(query, key, value, q_proj, k_proj, v_proj, out_proj, n_heads, key_padding=None):
    """nn.MultiheadAttention's forward (batch of one, no bias, no dropout) written out in numpy.

    query [L, E], key [S, kdim], value [S, vdim]; q_proj [E, E], k_proj [E, kdim], v_proj [E, vdim], out_proj
    [E, E] (PyTorch's weights as stored); key_padding bool [S], True = ignore (PyTorch's convention).
    Returns (output [L, E], weights [n_heads, L, S]).
    """
    q, k, v = query @ q_proj.T, key @ k_proj.T, value @ v_proj.T  # F.linear: [L, E], [S, E], [S, E]
    length, source, e = q.shape[0], k.shape[0], q.shape[1]
    head_dim = e // n_heads
    qh = q.reshape(length, n_heads, head_dim).transpose(1, 0, 2)  # [n_heads, L, head_dim]
    kh = k.reshape(source, n_heads, head_dim).transpose(1, 0, 2)  # [n_heads, S, head_dim]
    vh = v.reshape(source, n_heads, head_dim).transpose(1, 0, 2)  # [n_heads, S, head_dim]
    logits = qh @ kh.transpose(0, 2, 1) / math.sqrt(head_dim)  # [n_heads, L, S]
    if key_padding is not None:
        logits = logits + np.where(key_padding, -np.inf, 0.0)  # broadcast over heads and queries
    weights = softmax_rows(logits)  # [n_heads, L, S]
    concat = (weights @ vh).transpose(1, 0, 2).reshape(length, e)  # [L, E]
    return concat @ out_proj.T, weights


@pytest.mark.parametrize("pads", PADS)
@pytest.mark.parametrize("n_heads", N_HEADS)
def test_multi_head_cross_attention_equals_pytorchs_formulation_in_numpy(n_heads, pads):
    y, x, q_proj, k_proj, v_proj, out_proj = pytorch_case(n_heads, n_heads)
    key_padding = None if pads is None else np.array(pads)
    out, weights = torch_style_cross_reference(y, x, x, q_proj, k_proj, v_proj, out_proj, n_heads, key_padding)
    mask = None if pads is None else padding_mask(pads, 3)  # [L, S]: True = may attend
    t = multi_head_cross_attention(y, x, q_proj.T, k_proj.T, v_proj.T, out_proj.T, n_heads, mask=mask)
    for h in range(n_heads):
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(t.output, out, rtol=1e-10, atol=1e-12)


#: PyTorch's own numbers, made by tests/core/make_cross_reference.py (torch needed there only): the inputs it was
#: given and its outputs. attn_core agrees with them to 6.7e-16 (torch 2.13.0, numpy 2.4); TORCH_ATOL leaves room
#: for another summation order, and catches any drift of attn_core's numbers above it.
REFERENCE_FILE = Path(__file__).with_name("reference_cross_attention.npz")
REFERENCE = np.load(REFERENCE_FILE)
TORCH_ATOL = 1e-12  # absolute, rtol 0: the outputs are of order 1, the weights in [0, 1]


def stored_case(n_heads, pads):
    """Case (n_heads, pads) of the reference: (inputs y, x, q_proj, k_proj, v_proj, out_proj; key padding or None;
    PyTorch's output [L, E]; its weights [n_heads, L, S])."""
    i, p = N_HEADS.index(n_heads), PADS.index(pads)
    assert REFERENCE["n_heads"][i] == n_heads and REFERENCE["key_padding"][p].tolist() == (pads or [False] * 5)
    inputs = tuple(REFERENCE[name][i] for name in ("y", "x", "q_proj", "k_proj", "v_proj", "out_proj"))
    key_padding = None if pads is None else np.array(pads)
    return inputs, key_padding, REFERENCE["out"][i, p], REFERENCE[f"weights_{n_heads}"][p]


def assert_matches_pytorch(inputs, key_padding, out, weights, n_heads):
    """attn_core's multi-head cross-attention on PyTorch's inputs (weights transposed) gives PyTorch's numbers."""
    y, x, q_proj, k_proj, v_proj, out_proj = inputs
    mask = None if key_padding is None else padding_mask(key_padding, len(y))  # attn_core: True = may attend
    t = multi_head_cross_attention(y, x, q_proj.T, k_proj.T, v_proj.T, out_proj.T, n_heads, mask=mask)
    assert t.output.shape == out.shape and len(t.heads) == len(weights) == n_heads
    for h in range(n_heads):
        np.testing.assert_allclose(t.heads[h].weights, weights[h], rtol=0, atol=TORCH_ATOL, err_msg=f"head {h}")
        if key_padding is not None:
            assert (t.heads[h].weights[:, key_padding] == 0).all()
    np.testing.assert_allclose(t.output, out, rtol=0, atol=TORCH_ATOL)


@pytest.mark.parametrize("pads", PADS)
@pytest.mark.parametrize("n_heads", N_HEADS)
def test_multi_head_cross_attention_equals_pytorch(n_heads, pads):
    inputs, key_padding, out, weights = stored_case(n_heads, pads)
    assert_matches_pytorch(inputs, key_padding, out, weights, n_heads)
    # and the numpy formulation agrees with PyTorch itself
    y, x, q_proj, k_proj, v_proj, out_proj = inputs
    ref_out, ref_weights = torch_style_cross_reference(y, x, x, q_proj, k_proj, v_proj, out_proj, n_heads, key_padding)
    np.testing.assert_allclose(ref_out, out, rtol=0, atol=TORCH_ATOL)
    np.testing.assert_allclose(ref_weights, weights, rtol=0, atol=TORCH_ATOL)


def test_the_stored_reference_is_what_pytorch_computes_here():
    """Where torch is installed: PyTorch run now on the stored inputs gives the stored numbers, and attn_core equals
    it."""
    pytest.importorskip("torch")
    for n_heads in N_HEADS:
        for pads in PADS:
            inputs, key_padding, out, weights = stored_case(n_heads, pads)
            live_out, live_weights = pytorch_forward(*inputs, n_heads=n_heads, pads=pads)
            case = f"{n_heads} heads, key padding {pads}"
            np.testing.assert_allclose(live_out, out, rtol=0, atol=TORCH_ATOL, err_msg=case)
            np.testing.assert_allclose(live_weights, weights, rtol=0, atol=TORCH_ATOL, err_msg=case)
            assert_matches_pytorch(inputs, key_padding, live_out, live_weights, n_heads)


def test_the_stored_reference_is_small_and_says_what_made_it():
    assert REFERENCE_FILE.stat().st_size < 12_000
    assert str(REFERENCE["versions"]).startswith("torch ")


# ---- a configuration with Y ---------------------------------------------------------------------------------

X_TOKENS, Y_TOKENS = ("le", "chat", "noir", "dort"), ("the", "cat", "sleeps")


def cross_config(**options):
    """n_x = 4 tokens of X, n_y = 3 of Y, d_model 5, 2 heads of width 2 (W_O [4, 3])."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((3, 5))
    w_q, w_k, w_v, w_o = (rng.standard_normal(s) for s in ((5, 4), (5, 4), (5, 4), (4, 3)))
    return make_config(X_TOKENS, x, w_q, w_k, w_v, w_o, n_heads=2, y_tokens=Y_TOKENS, y=y, **options)


def test_run_of_a_configuration_with_y_is_cross_attention():
    cfg = cross_config()
    assert cfg.cross and (cfg.n_q, cfg.n_seq) == (3, 4) and cfg.query_tokens == Y_TOKENS
    assert cfg.matrix_names() == ("x", "y", "w_q", "w_k", "w_v", "w_o")
    got = run(cfg)
    want = multi_head_cross_attention(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, 2)
    assert got.output.tobytes() == want.output.tobytes()
    assert [h.weights.shape for h in got.heads] == [(3, 4)] * 2  # [n_y, n_x]
    _, concat, output = cross_reference(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, 2)
    np.testing.assert_allclose(got.output, output, rtol=RTOL, atol=ATOL)
    # one head and W_O = I: the heads' output is cross_attention's
    one = make_config(X_TOKENS, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, y_tokens=list(Y_TOKENS), y=cfg.y)
    single = cross_attention(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v)
    assert run(one).heads[0].weights.tobytes() == single.weights.tobytes()
    assert run(one).concat.tobytes() == single.output.tobytes()


def test_a_padding_mask_with_y_marks_xs_tokens_for_every_query():
    cfg = cross_config(mask_kind="padding", is_pad=(False, True, False, False))
    mask = config_mask(cfg)  # [n_y, n_x]
    assert mask.shape == (3, 4) and mask.tolist() == [[True, False, True, True]] * 3
    t = run(cfg)
    for head in t.heads:
        assert (head.weights[:, 1] == 0).all()
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0, rtol=1e-12)
    _, _, output = cross_reference(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, 2, mask=mask)
    np.testing.assert_allclose(t.output, output, rtol=RTOL, atol=ATOL)


def test_a_custom_mask_with_y_is_n_y_by_n_x():
    custom = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]], dtype=bool)  # [n_y, n_x]; query 2 reads nothing
    cfg = cross_config(mask_kind="custom", custom_mask=custom)
    t = run(cfg)
    assert t.fully_masked_rows == (2,) and (t.output[2] == 0).all()
    for head in t.heads:
        assert (head.weights[~custom] == 0).all()
    assert cross_config().custom_mask.shape == (3, 4)  # the default: every query may read every token
    with pytest.raises(AttentionInputError, match=re.escape(
            "mask: the custom mask must be True/False of shape (3, 4), got bool of shape (4, 4).")) as err:
        cross_config(mask_kind="custom", custom_mask=np.ones((4, 4), dtype=bool))
    assert err.value.matrix == "mask"


def test_causal_is_refused_with_y():
    with pytest.raises(AttentionInputError, match=re.escape("mask: causal needs the queries and the keys from one "
                                                            "sequence (self-attention)")) as err:
        cross_config(mask_kind="causal")
    assert err.value.matrix == "mask"
    with pytest.raises(AttentionInputError, match="mask: causal needs"):  # also when n_y = n_x
        validate_config(replace(cross_config(), y=np.ones((4, 5)), y_tokens=("a", "b", "c", "d"), mask_kind="causal",
                                custom_mask=np.ones((4, 4), dtype=bool)))


def test_y_of_the_wrong_width_or_token_count_is_refused_by_name():
    cfg = cross_config()
    with pytest.raises(AttentionInputError, match=re.escape("Y: has 3 columns but X has 5 (d_model)")) as err:
        validate_config(replace(cfg, y=np.ones((3, 3))))
    assert err.value.matrix == "Y"
    with pytest.raises(AttentionInputError, match=re.escape("y_tokens: need one label per row of Y (3), got 2")) as err:
        validate_config(replace(cfg, y_tokens=("the", "cat")))
    assert err.value.matrix == "y_tokens"
    with pytest.raises(AttentionInputError, match=re.escape("Y: given without y_tokens; cross-attention needs both")):
        validate_config(replace(cfg, y_tokens=None))
    with pytest.raises(AttentionInputError, match=re.escape("y_tokens: given without Y")) as err:
        validate_config(replace(cfg, y=None))
    assert err.value.matrix == "y_tokens"
    with pytest.raises(AttentionInputError, match=re.escape("y_tokens: label 1 is empty")):
        validate_config(replace(cfg, y_tokens=("the", " ", "sleeps")))
    with pytest.raises(AttentionInputError, match=re.escape("Y: cell (0, 2) is +inf")):
        validate_config(replace(cfg, y=np.where(np.arange(15).reshape(3, 5) == 2, np.inf, 1.0)))


def test_the_cross_translation_preset_aligns_the_two_sentences():
    cfg = load_preset("cross_translation")
    assert cfg.cross and cfg.tokens == ("le", "chat", "dort") and cfg.y_tokens == ("the", "cat", "sleeps")
    t = run(cfg)
    assert t.heads[0].weights.argmax(axis=1).tolist() == [0, 1, 2]  # each target word reads its source word most
    _, _, output = cross_reference(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, 1)
    np.testing.assert_allclose(t.output, output, rtol=RTOL, atol=ATOL)


# ---- with_dimensions ----------------------------------------------------------------------------------------


def test_with_dimensions_of_a_cross_configuration_keeps_what_fits():
    cfg = cross_config(mask_kind="custom", custom_mask=np.array([[1, 0, 1, 1]] * 3, dtype=bool))
    for n_seq, d_model, d_qk, d_v in ((6, 7, 6, 2), (2, 3, 2, 4), (4, 5, 4, 4)):
        new = with_dimensions(cfg, n_seq=n_seq, d_model=d_model, d_qk=d_qk, d_v=d_v)
        assert validate_config(new) is not None and new.cross
        assert new.y_tokens == Y_TOKENS and new.y.shape == (3, d_model)  # Y keeps its rows, follows d_model
        assert new.x.shape == (n_seq, d_model) and new.custom_mask.shape == (3, n_seq)
        r, c = min(4, n_seq), min(5, d_model)
        np.testing.assert_array_equal(new.x[:r, :c], cfg.x[:r, :c])
        np.testing.assert_array_equal(new.y[:, :c], cfg.y[:, :c])
        np.testing.assert_array_equal(new.w_q[:c, :min(4, d_qk)], cfg.w_q[:c, :min(4, d_qk)])
        np.testing.assert_array_equal(new.custom_mask[:, :r], cfg.custom_mask[:, :r])
        assert new.custom_mask[:, r:].all()  # new tokens may be read by every query
        assert new.tokens[:r] == X_TOKENS[:r]
        t = run(new)
        assert t.heads[0].weights.shape == (3, n_seq)
    same = with_dimensions(cfg, n_seq=4, d_model=5, d_qk=4, d_v=4)
    assert same.y.tobytes() == cfg.y.tobytes() and same.x.tobytes() == cfg.x.tobytes()


def test_with_dimensions_of_an_additive_configuration_keeps_what_fits():
    cfg = load_preset("additive")  # d_q = d_k = 3, W_1 [3, 4], W_2 [3, 4], v_a [1, 4]
    assert cfg.score == "additive" and cfg.d_a == 4
    new = with_dimensions(cfg, n_seq=5, d_model=6, d_qk=2, d_v=3, d_k=5)  # queries 2 wide, keys 5 wide
    assert validate_config(new) is not None and new.score == "additive"
    assert new.w_1.shape == (2, 4) and new.w_2.shape == (5, 4) and new.v_a.shape == (1, 4)
    np.testing.assert_array_equal(new.w_1, cfg.w_1[:2])
    np.testing.assert_array_equal(new.w_2[:3], cfg.w_2)
    np.testing.assert_array_equal(new.v_a, cfg.v_a)
    assert (new.d_q, new.d_k, new.d_a) == (2, 5, 4)
    assert run(new).heads[0].q_1.shape == (5, 4)
    back = with_dimensions(new, n_seq=3, d_model=4, d_qk=3, d_v=3)  # back to the preset's sizes
    np.testing.assert_array_equal(back.w_1[:2], cfg.w_1[:2])
    np.testing.assert_array_equal(back.w_2, cfg.w_2)
    np.testing.assert_array_equal(back.x, cfg.x)
    # two heads: W_1 [d_q, 2·d_a] follows the per-head query width
    two = make_config(X_TOKENS, np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 6)), np.ones((4, 4)), n_heads=2,
                      score="additive", w_1=np.arange(12.0).reshape(2, 6), w_2=np.ones((3, 6)), v_a=np.ones((1, 6)),
                      y_tokens=Y_TOKENS, y=np.ones((3, 4)))
    wider = with_dimensions(two, n_seq=4, d_model=4, d_qk=6, d_v=4, d_k=8)
    assert wider.n_heads == 2 and wider.w_1.shape == (3, 6) and wider.w_2.shape == (4, 6) and wider.cross
    np.testing.assert_array_equal(wider.w_1[:2], two.w_1)
    odd = with_dimensions(two, n_seq=4, d_model=4, d_qk=3, d_v=4, d_k=6)  # 3 does not split in 2: one head
    assert odd.n_heads == 1 and odd.w_1.shape == (3, 6) and validate_config(odd) is not None
