"""Rotary position embeddings, RMSNorm and the grouped-query head map: against transformers' and Meta's numbers stored
in reference_rope.npz (made by make_rope_reference.py with torch), against numpy written out here, the property a
learner checks (q_m · k_n depends on m − n only), and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attn_core import AttentionInputError, apply_rope, kv_head_of, rms_norm, rope_angles, rope_frequencies

from .make_rope_reference import CASES

REF = np.load(Path(__file__).with_name("reference_rope.npz"))
RNG = np.random.default_rng(3)


@pytest.mark.parametrize("c", range(len(CASES)))
def test_half_layout_is_transformers_apply_rotary_pos_emb(c):
    d, base, positions = CASES[c]
    got = apply_rope(REF[f"x_{c}"], positions, base=base, layout="half")
    np.testing.assert_allclose(got, REF[f"half_{c}"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("c", range(len(CASES)))
def test_interleaved_layout_is_metas_complex_rotation(c):
    d, base, positions = CASES[c]
    got = apply_rope(REF[f"x_{c}"], positions, base=base, layout="interleaved")
    np.testing.assert_allclose(got, REF[f"interleaved_{c}"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("c", range(len(CASES)))
def test_angles_are_llama_rotary_embeddings_to_float32(c):
    """LlamaRotaryEmbedding computes p · θ_i in float32: its angle is off by up to ~p · 6e-8, hence the tolerance;
    its [n, d] is our [n, d/2] twice over (cat(cos, cos))."""
    d, base, positions = CASES[c]
    cos, sin = rope_angles(positions, d, base)
    assert cos.shape == sin.shape == (len(positions), d // 2)
    tol = 1e-6 * (1 + max(positions))
    np.testing.assert_allclose(np.concatenate([cos, cos], axis=1), REF[f"hf_cos_{c}"], rtol=0, atol=tol)
    np.testing.assert_allclose(np.concatenate([sin, sin], axis=1), REF[f"hf_sin_{c}"], rtol=0, atol=tol)


def test_rope_written_out_as_two_by_two_rotations():
    d, base, positions = 6, 50.0, np.array([0, 2, 9])
    x = RNG.normal(size=(3, d))
    for layout, pairs in (("half", [(i, i + d // 2) for i in range(d // 2)]),
                          ("interleaved", [(2 * i, 2 * i + 1) for i in range(d // 2)])):
        want = np.empty_like(x)
        for r, p in enumerate(positions):
            for i, (a, b) in enumerate(pairs):
                phi = p * base ** (-2 * i / d)
                rot = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
                want[r, [a, b]] = rot @ x[r, [a, b]]
        np.testing.assert_allclose(apply_rope(x, positions, base=base, layout=layout), want, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rope_frequencies(6, 50.0), [1.0, 50 ** (-1 / 3), 50 ** (-2 / 3)], rtol=1e-15)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_score_depends_on_relative_position_only(layout):
    """q_m · k_n = q_(m+3) · k_(n+3): shifting both tokens by 3 keeps every score; the norms stay too."""
    q, k = RNG.normal(size=(4, 8)), RNG.normal(size=(4, 8))
    m = np.array([0, 1, 5, 2])
    n = np.array([3, 0, 5, 7])
    before = np.sum(apply_rope(q, m, layout=layout) * apply_rope(k, n, layout=layout), axis=1)
    after = np.sum(apply_rope(q, m + 3, layout=layout) * apply_rope(k, n + 3, layout=layout), axis=1)
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-12)
    assert not np.allclose(before, np.sum(q * k, axis=1))  # the positions did change the scores
    np.testing.assert_allclose(np.linalg.norm(apply_rope(q, m + 3, layout=layout), axis=1), np.linalg.norm(q, axis=1),
                               rtol=1e-14)


def test_position_zero_is_the_identity_and_a_row_depends_on_its_own_position_only():
    x = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(apply_rope(x, [0, 0, 0]), x)
    np.testing.assert_allclose(apply_rope(x, [0, 1, 7])[2], apply_rope(x[2:], [7])[0], rtol=0, atol=0)


@pytest.mark.parametrize("call, matrix, words", [
    (lambda: apply_rope(np.ones((2, 3)), [0, 1], name="Q (head 0)"), "Q (head 0)", "must be even"),
    (lambda: apply_rope(np.ones((2, 4)), [0, 1, 2]), "positions", "3 positions for 2 rows"),
    (lambda: apply_rope(np.ones((2, 4)), [0, -1]), "positions", "entry 1 is -1"),
    (lambda: apply_rope(np.ones((2, 4)), [0, 1.5]), "positions", "entry 1 is 1.5"),
    (lambda: apply_rope([[1.0, np.nan]], [0]), "X", "cell (0, 1) is NaN"),
    (lambda: apply_rope(np.ones((1, 2)), [0], layout="paired"), None, "RoPE layout: 'paired'"),
    (lambda: apply_rope(np.ones((1, 2)), [0], base=1.0), None, "RoPE base"),
    (lambda: rope_angles([0], 5), "d", "must be even"),
])
def test_rope_refusals_name_what_is_wrong(call, matrix, words):
    with pytest.raises(AttentionInputError) as err:
        call()
    assert words in str(err.value)
    assert err.value.matrix == matrix
    if "entry 1" in words:
        assert err.value.cell == (0, 1)


def test_rms_norm_is_torch_rms_norm_and_llamas_convention():
    x, w = REF["norm_x"], REF["norm_w"]
    got = rms_norm(x, w, eps=1e-6)
    np.testing.assert_allclose(got, REF["rms_norm"], rtol=0, atol=1e-12)  # F.rms_norm, float64
    np.testing.assert_allclose(got, REF["llama_rms_norm"], rtol=1e-6, atol=1e-6)  # LlamaRMSNorm: float32 inside
    written = x / np.sqrt(np.mean(x ** 2, axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(got, written, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(got[2], 0.0)  # a row of zeros stays zero


def test_rms_norm_rows_have_unit_root_mean_square_and_large_rows_do_not_overflow():
    x = RNG.normal(size=(3, 5)) * 10
    np.testing.assert_allclose(np.sqrt(np.mean(rms_norm(x, eps=0.0) ** 2, axis=1)), 1.0, rtol=1e-14)
    big = np.array([[3e200, 4e200]])
    np.testing.assert_allclose(rms_norm(big), [[3 / np.sqrt(12.5), 4 / np.sqrt(12.5)]], rtol=1e-14)
    np.testing.assert_array_equal(rms_norm(np.zeros((1, 3)), eps=0.0), 0.0)


def test_rms_norm_refusals():
    with pytest.raises(AttentionInputError, match="Q norm weight: has 2 numbers but Q has width 3") as err:
        rms_norm(np.ones((1, 3)), [1.0, 2.0], name="Q")
    assert err.value.matrix == "Q norm weight"
    with pytest.raises(AttentionInputError, match="eps"):
        rms_norm(np.ones((1, 3)), eps=-1.0)
    with pytest.raises(AttentionInputError, match=r"X norm weight: cell \(0, 1\) is NaN") as err:
        rms_norm(np.ones((1, 2)), [1.0, np.nan])
    assert err.value.cell == (0, 1)


def test_kv_head_of_is_repeat_kv_and_its_two_ends():
    """transformers' repeat_kv repeats each KV head n_heads // n_kv_heads times, consecutively."""
    for n_heads, n_kv in ((8, 2), (6, 3), (4, 4), (4, 1), (1, 1)):
        repeated = np.repeat(np.arange(n_kv), n_heads // n_kv)  # repeat_interleave along the heads
        assert [kv_head_of(h, n_heads, n_kv) for h in range(n_heads)] == repeated.tolist()
    assert [kv_head_of(h, 4, 4) for h in range(4)] == [0, 1, 2, 3]  # multi-head: its own
    assert [kv_head_of(h, 4, 1) for h in range(4)] == [0, 0, 0, 0]  # multi-query: all one


@pytest.mark.parametrize("args, words", [
    ((0, 6, 4), "n_kv_heads: 4 key/value heads do not divide the 6 query heads (n_heads)"),
    ((0, 6, 0), "n_kv_heads: must be a whole number"),
    ((0, 0, 1), "n_heads: must be a whole number"),
    ((6, 6, 3), "head: 6 is not a head"),
])
def test_kv_head_of_refusals(args, words):
    with pytest.raises(AttentionInputError) as err:
        kv_head_of(*args)
    assert words in str(err.value)
