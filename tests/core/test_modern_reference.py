"""modern_attention against PyTorch (SDPA with enable_gqa, flex_attention with score_mod and transformers' mask
functions as block masks) and an eager PyTorch path with transformers' repeat_kv, both stored in reference_modern.npz
by make_modern_reference.py; and against numpy written out here, step by step in the models' order."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from attn_core import RoPE, alibi_slopes, cached_decode, modern_attention, online_softmax_attention

from .make_modern_reference import CASES, D_K, paper_slopes

REF = np.load(Path(__file__).with_name("reference_modern.npz"))


def case(name):
    opts = dict(CASES[name])
    arrays = {key.split("__", 1)[1]: REF[key] for key in REF.files if key.startswith(f"{name}__")}
    if "rope" in opts:
        opts["rope"] = RoPE(*opts["rope"])
    for w in ("q_norm_weight", "k_norm_weight"):
        if w in arrays:
            opts[w] = arrays[w]
    return opts, arrays


def run(name, **more):
    opts, a = case(name)
    return modern_attention(a["x"], a["w_q"], a["w_k"], a["w_v"], a["w_o"], **opts, **more), a


@pytest.mark.parametrize("name", list(CASES))
def test_modern_attention_is_pytorchs(name):
    t, a = run(name)
    np.testing.assert_allclose(t.output, a["output"], rtol=0, atol=1e-12)  # SDPA / flex_attention
    np.testing.assert_allclose(t.output, a["eager_output"], rtol=0, atol=1e-12)  # repeat_kv, eager
    for h, head in enumerate(t.heads):
        np.testing.assert_allclose(head.weights, a["weights"][h], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["llama_mistral", "window_bidirectional", "gemma2", "bloom"])
def test_flex_attentions_log_sum_exp_is_the_online_softmaxs(name):
    """flex_attention returns each row's log-sum-exp; the online softmax's m + log l over the same scored q, k (and,
    with a soft cap or ALiBi, the scores as the trace holds them after those steps) is the same number."""
    t, a = run(name)
    for h, head in enumerate(t.heads):
        if head.softcap is None and head.bias is None:
            online = online_softmax_attention(head.q, head.k, head.v, block=4, scale=head.divisor, mask=t.mask)
        else:  # the online softmax of the biased scores: q = identity rows picks them out of an identity "key"
            n = head.biased.shape[1]
            online = online_softmax_attention(head.biased, np.eye(n), head.v, block=4, scale="none", mask=t.mask)
        np.testing.assert_allclose(online.logsumexp, a["lse"][h], rtol=0, atol=1e-12)
        np.testing.assert_allclose(online.output, head.output, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["llama_mistral", "qwen3", "gemma2", "bloom", "softcap_alibi_mqa", "interleaved"])
def test_decoding_with_a_key_value_cache_is_pytorchs_whole_forward(name):
    opts, a = case(name)
    assert opts.pop("causal")
    got = cached_decode(a["x"], a["w_q"], a["w_k"], a["w_v"], a["w_o"], **opts)
    np.testing.assert_allclose(got.output, a["output"], rtol=0, atol=1e-12)


def test_alibi_slopes_are_the_papers_code():
    for n in range(1, 33):
        np.testing.assert_allclose(alibi_slopes(n), paper_slopes(n), rtol=1e-15, atol=0)


def test_alibi_weights_equal_blooms_though_its_bias_is_m_times_j():
    """BLOOM adds m_h · j, attn_core −m_h · (i − j): a shift of m_h · i along each row, which softmax ignores."""
    t, a = run("bloom")
    for h, head in enumerate(t.heads):
        np.testing.assert_allclose(head.weights, REF["bloom__weights"][h], rtol=0, atol=1e-12)
        i, j = np.indices(head.bias.shape)
        np.testing.assert_allclose(head.bias - alibi_slopes(4)[h] * j, -alibi_slopes(4)[h] * i, rtol=0, atol=1e-15)


# ---- numpy written out, in the models' order ----------------------------------------------------------------------


def numpy_modern(a, opts):
    """Q, K, V; per head: QK-norm over d_k, RoPE; scores; ÷ scale; soft-cap; + ALiBi; mask; softmax; @ v; W_O."""
    n, n_heads = a["x"].shape[0], opts["n_heads"]
    n_kv = opts.get("n_kv_heads") or n_heads
    q, k, v = a["x"] @ a["w_q"], a["x"] @ a["w_k"], a["x"] @ a["w_v"]
    d_v = v.shape[1] // n_kv
    i, j = np.indices((n, n))

    def prepare(m, h, weight):
        m = m[:, h * D_K:(h + 1) * D_K]
        if opts.get("qk_norm"):
            m = m / np.sqrt((m ** 2).mean(axis=1, keepdims=True) + 1e-6) * weight
        if opts.get("rope"):
            base, layout = opts["rope"].base, opts["rope"].layout
            out = np.empty_like(m)
            for p in range(n):
                for pair in range(D_K // 2):
                    a_i, b_i = (pair, pair + D_K // 2) if layout == "half" else (2 * pair, 2 * pair + 1)
                    phi = p * base ** (-2 * pair / D_K)
                    out[p, a_i] = m[p, a_i] * math.cos(phi) - m[p, b_i] * math.sin(phi)
                    out[p, b_i] = m[p, a_i] * math.sin(phi) + m[p, b_i] * math.cos(phi)
            m = out
        return m

    outs = []
    for h in range(n_heads):
        g = h * n_kv // n_heads  # = h // (n_heads // n_kv)
        qh, kh = prepare(q, h, opts.get("q_norm_weight")), prepare(k, g, opts.get("k_norm_weight"))
        s = qh @ kh.T / opts.get("scale", math.sqrt(D_K))
        if opts.get("softcap"):
            s = opts["softcap"] * np.tanh(s / opts["softcap"])
        if opts.get("alibi"):
            s = s - paper_slopes(n_heads)[h] * (i - j)
        allowed = np.ones((n, n), dtype=bool)
        if opts.get("causal"):
            allowed &= j <= i
        if opts.get("window"):
            allowed &= (i - j < opts["window"]) if opts.get("causal") else (abs(i - j) < opts["window"])
        s = np.where(allowed, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        outs.append(e / e.sum(axis=1, keepdims=True) @ v[:, g * d_v:(g + 1) * d_v])
    return np.concatenate(outs, axis=1) @ a["w_o"]


@pytest.mark.parametrize("name", list(CASES))
def test_modern_attention_is_numpy_written_out(name):
    opts, a = case(name)
    t, _ = run(name)
    np.testing.assert_allclose(t.output, numpy_modern(a, opts), rtol=0, atol=1e-12)


def test_the_trace_keeps_every_step_in_order():
    """Qwen 3 and Gemma 2 together: QK-norm before RoPE, soft-cap after the scaling and before the bias and mask."""
    opts, a = case("qwen3")
    t = modern_attention(a["x"], a["w_q"], a["w_k"], a["w_v"], a["w_o"], **opts, softcap=2.0, alibi=True, window=3)
    assert len(t.q_normed) == 4 and len(t.k_normed) == 2 and len(t.k_rotated) == 2
    np.testing.assert_allclose(np.sqrt(np.mean((t.q_normed[1] / opts["q_norm_weight"]) ** 2, axis=1)), 1.0, rtol=1e-6)
    for h, head in enumerate(t.heads):
        g = t.kv_heads[h]
        assert g == h // 2
        np.testing.assert_array_equal(head.q, t.q_rotated[h])
        np.testing.assert_array_equal(head.k, t.k_rotated[g])
        np.testing.assert_allclose(head.scores, head.q @ head.k.T, rtol=0, atol=1e-14)
        np.testing.assert_allclose(head.capped, 2.0 * np.tanh(head.scaled / 2.0), rtol=0, atol=1e-15)
        np.testing.assert_array_equal(head.biased, head.capped + t.alibi[h])
        np.testing.assert_array_equal(head.masked, np.where(t.mask, head.biased, -np.inf))
        assert np.all(np.abs(head.capped) < 2.0)
    np.testing.assert_array_equal(t.mask, np.tri(6, dtype=bool) & ~np.tri(6, k=-3, dtype=bool))
    np.testing.assert_array_equal(t.q, a["x"] @ a["w_q"])
    np.testing.assert_allclose(t.output, t.concat @ a["w_o"], rtol=0, atol=1e-15)
