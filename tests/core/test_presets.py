"""Every preset is a complete, valid configuration with the shapes its seed describes; with_dimensions keeps values."""

from __future__ import annotations

import re
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from attn_core import (
    DEFAULT_PRESET,
    PRESETS,
    AttentionInputError,
    Config,
    RoPE,
    configs_equal,
    load_preset,
    run,
    validate_config,
    with_dimensions,
    with_query_rows,
)

from ..seeds import SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X

# key -> (n_seq, d_model, n_heads, d_k, d_v, d_out, scale, mask_kind), as issue 2 and the seeds describe them
EXPECTED = {
    "seed000": (3, 4, 1, 3, 3, 3, "sqrt_dk", "none"),
    "seed004_unscaled": (3, 4, 1, 3, 3, 3, "none", "none"),
    "seed002_causal": (4, 24, 1, 8, 8, 8, "sqrt_dk", "causal"),
    "seed001_sentence": (6, 10, 1, 10, 10, 10, "sqrt_dk", "none"),
    "seed003_heads": (3, 4, 8, 64, 64, 4, "sqrt_dk", "none"),
    "cross_translation": (3, 6, 1, 6, 6, 6, "sqrt_dk", "none"),  # Y: 3 target tokens
    "additive": (3, 4, 1, 3, 3, 3, "none", "none"),
}


def test_one_preset_per_worked_example():
    assert set(PRESETS) == set(EXPECTED)
    assert DEFAULT_PRESET in PRESETS
    for key, p in PRESETS.items():
        assert p.key == key
        assert p.title.strip() and p.source.strip() and p.note.strip()
        # credited to a tutorial in words a learner reads (Overview's Sources names each), never by its file number
        assert re.search(r"tutorial|blog post|notebook", p.source), p.source
        assert not re.search(r"\bseeds? ?\d", p.source + p.note, re.IGNORECASE), key


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_preset_validates_runs_and_has_its_shapes(key):
    cfg = load_preset(key)
    assert isinstance(cfg, Config)
    assert configs_equal(validate_config(cfg), cfg)  # already in the validated form
    n_seq, d_model, n_heads, d_k, d_v, d_out, scale, mask_kind = EXPECTED[key]
    assert (cfg.n_seq, cfg.d_model, cfg.n_heads, cfg.d_k, cfg.d_v, cfg.d_out) == (
        n_seq, d_model, n_heads, d_k, d_v, d_out)
    assert cfg.scale == scale and cfg.mask_kind == mask_kind
    assert len(cfg.tokens) == n_seq and all(t.strip() for t in cfg.tokens)
    assert cfg.w_q.shape == cfg.w_k.shape == (d_model, n_heads * d_k)
    assert cfg.w_v.shape == (d_model, n_heads * d_v)
    assert cfg.w_o.shape == (n_heads * d_v, d_out)

    trace = run(cfg)
    assert trace.n_heads == n_heads
    assert trace.concat.shape == (n_seq, n_heads * d_v)
    assert trace.output.shape == (n_seq, d_out)
    for head in trace.heads:
        assert head.weights.shape == (n_seq, n_seq)
        assert np.isfinite(head.weights).all() and np.isfinite(head.output).all()
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(trace.output, trace.concat @ cfg.w_o, rtol=1e-12, atol=1e-12)


def test_seed003_heads_eight_heads_of_64_concatenate_to_3_by_512():
    cfg = load_preset("seed003_heads")
    trace = run(cfg)
    assert [h.q.shape for h in trace.heads] == [(3, 64)] * 8
    assert [h.output.shape for h in trace.heads] == [(3, 64)] * 8
    assert trace.concat.shape == (3, 512)
    assert trace.output.shape == (3, 4)
    np.testing.assert_array_equal(cfg.x, SEED000_X)  # the seed's 3 inputs (seed 003 writes out seed 000's X)
    # head h reads columns 64h ... 64h + 63 of each projection; numpy written out for head 5
    q5 = cfg.x @ cfg.w_q[:, 320:384]
    k5 = cfg.x @ cfg.w_k[:, 320:384]
    v5 = cfg.x @ cfg.w_v[:, 320:384]
    s = q5 @ k5.T / 8.0
    e = np.exp(s - s.max(axis=1, keepdims=True))
    out5 = (e / e.sum(axis=1, keepdims=True)) @ v5
    np.testing.assert_allclose(trace.concat[:, 320:384], out5, rtol=1e-12, atol=1e-12)


def test_seed_presets_share_the_tutorial_matrices():
    a, b = load_preset("seed000"), load_preset("seed004_unscaled")
    for name in ("x", "w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_array_equal(a.matrix(name), b.matrix(name))
    np.testing.assert_array_equal(a.x, SEED000_X)
    np.testing.assert_array_equal(a.w_q, SEED000_W_Q)
    np.testing.assert_array_equal(a.w_k, SEED000_W_K)
    np.testing.assert_array_equal(a.w_v, SEED000_W_V)
    np.testing.assert_array_equal(a.w_o, np.eye(3))


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_load_preset_gives_a_fresh_copy_each_time(key):
    first = load_preset(key)
    keep = first.x.copy()
    first.x[0, 0] += 123.0
    second = load_preset(key)
    np.testing.assert_array_equal(second.x, keep)
    assert configs_equal(second, load_preset(key))


def test_unknown_preset_raises_key_error():
    with pytest.raises(KeyError):
        load_preset("seed999")


# ---- with_dimensions: changing a dimension keeps every value that still fits ----------------------------


def test_growing_keeps_every_value_and_fills_the_rest():
    cfg = load_preset("seed000")
    big = with_dimensions(cfg, n_seq=5, d_model=6, d_qk=4, d_v=5, init="zeros")
    assert (big.n_seq, big.d_model, big.d_k, big.d_v) == (5, 6, 4, 5)
    np.testing.assert_array_equal(big.x[:3, :4], cfg.x)
    np.testing.assert_array_equal(big.w_q[:4, :3], cfg.w_q)
    np.testing.assert_array_equal(big.w_k[:4, :3], cfg.w_k)
    np.testing.assert_array_equal(big.w_v[:4, :3], cfg.w_v)
    assert (big.x[3:] == 0).all() and (big.x[:, 4:] == 0).all()
    assert (big.w_q[:, 3:] == 0).all() and (big.w_q[4:] == 0).all()
    np.testing.assert_array_equal(big.w_o, np.eye(5))  # a square W_O grows as the identity
    assert big.tokens == ("input1", "input2", "input3", "t4", "t5")
    assert big.is_pad == (False,) * 5 and big.custom_mask.all()
    run(big)  # still computes


def test_shrinking_keeps_the_top_left_values():
    cfg = load_preset("seed001_sentence")
    small = with_dimensions(cfg, n_seq=4, d_model=7, d_qk=5, d_v=3)
    np.testing.assert_array_equal(small.x, cfg.x[:4, :7])
    np.testing.assert_array_equal(small.w_q, cfg.w_q[:7, :5])
    np.testing.assert_array_equal(small.w_v, cfg.w_v[:7, :3])
    np.testing.assert_array_equal(small.w_o, cfg.w_o[:3, :3])
    assert small.tokens == cfg.tokens[:4]


def test_round_trip_through_a_larger_size_restores_the_values():
    cfg = load_preset("seed002_causal")
    back = with_dimensions(with_dimensions(cfg, n_seq=6, d_model=30, d_qk=10, d_v=12), n_seq=4, d_model=24,
                           d_qk=8, d_v=8)
    assert configs_equal(back, cfg)


def test_new_cells_come_from_the_initialiser_and_are_reproducible():
    cfg = load_preset("seed000")
    a = with_dimensions(cfg, n_seq=3, d_model=8, d_qk=3, d_v=3, init="kaiming_normal", seed=5)
    b = with_dimensions(cfg, n_seq=3, d_model=8, d_qk=3, d_v=3, init="kaiming_normal", seed=5)
    assert configs_equal(a, b)
    assert np.abs(a.x[:, 4:]).max() > 0  # new columns are drawn, not zeros


def test_masks_and_heads_survive_a_resize():
    cfg = load_preset("seed003_heads")
    same_heads = with_dimensions(cfg, n_seq=4, d_model=4, d_qk=256, d_v=256)
    assert same_heads.n_heads == 8 and same_heads.d_k == 32
    assert same_heads.w_o.shape == (256, 4)  # rectangular W_O keeps d_out
    np.testing.assert_array_equal(same_heads.w_o[:256], cfg.w_o[:256])
    other_heads = with_dimensions(cfg, n_seq=3, d_model=4, d_qk=12, d_v=12)
    assert other_heads.n_heads == 1  # 8 does not divide 12: back to one head
    causal = load_preset("seed002_causal")
    grown = with_dimensions(causal, n_seq=6, d_model=24, d_qk=8, d_v=8)
    assert grown.mask_kind == "causal"
    assert run(grown).fully_masked_rows == ()


@pytest.mark.parametrize(("sizes", "said"), [
    ({"d_v": 100_000}, "d_v (columns of W_V): 100000 is over the cap of 768."),
    ({"d_qk": 10**9}, "d_k (columns of W_Q and W_K): 1000000000 is over the cap of 768."),
    ({"n_seq": 9999}, "n_seq (tokens): 9999 is over the cap of 256."),
    ({"d_model": 5000}, "d_model (columns of X): 5000 is over the cap of 769."),
    ({"n_seq": 0}, "n_seq (tokens): 0 is under 1; a sequence has at least one token."),
    ({"d_model": -2}, "d_model (columns of X): -2 is under 1; X has at least one column."),
    ({"d_v": 0}, "d_v (columns of W_V): 0 is under 1; a matrix has at least one column."),
    ({"n_seq": 1e3}, "n_seq (tokens): 1000 is over the cap of 256."),  # "1e3" typed: a whole float is its int
    ({"n_seq": 2.5}, "n_seq (tokens): 2.5 is not a whole number."),
    ({"d_model": 3.25}, "d_model (columns of X): 3.25 is not a whole number."),
    ({"d_qk": -0.5}, "d_k (columns of W_Q and W_K): -0.5 is not a whole number."),
    ({"d_v": float("nan")}, "d_v (columns of W_V): nan is not a whole number."),
])
def test_with_dimensions_refuses_a_size_over_its_cap_under_1_or_not_whole_before_making_any_matrix(sizes, said):
    """A width of 100,000 asked numpy for a 74 GiB W_V before validate_config could refuse it; now the size is refused
    first, and nothing of its size is made (tracemalloc's peak stays under 1 MB). A size that is not a whole number
    (2.5 typed on Inputs & weights) is refused, never rounded; the size is named as its input is labelled."""
    cfg = load_preset(DEFAULT_PRESET)
    now = {"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_qk": cfg.w_q.shape[1], "d_v": cfg.w_v.shape[1]}
    tracemalloc.start()
    try:
        with pytest.raises(AttentionInputError) as err:
            with_dimensions(cfg, **{**now, **sizes})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(err.value) == said and peak < 1_000_000, (str(err.value), peak)


def grouped_query_config() -> Config:
    """seed003_heads (8 heads of width 64) with 2 key/value heads: W_Q [4, 512], W_K and W_V [4, 128]."""
    cfg = load_preset("seed003_heads")
    return with_dimensions(replace(cfg, n_kv_heads=2), n_seq=cfg.n_seq, d_model=cfg.d_model, d_qk=512, d_v=128,
                           d_k=128)


@pytest.mark.parametrize(("preset", "sizes", "said"), [
    ("seed000", {"d_qk": 800}, "d_k (columns of W_Q and W_K): 800 is over the cap of 768."),
    ("seed000", {"d_qk": 0}, "d_k (columns of W_Q and W_K): 0 is under 1; a matrix has at least one column."),
    ("seed000", {"d_v": 800}, "d_v (columns of W_V): 800 is over the cap of 768."),
    ("additive", {"d_qk": 800}, "d_q (columns of W_Q): 800 is over the cap of 768."),
    ("additive", {"d_k": 800}, "d_k (columns of W_K): 800 is over the cap of 768."),
    ("additive", {"d_k": 1.5}, "d_k (columns of W_K): 1.5 is not a whole number."),
    ("additive", {"d_v": 800}, "d_v (columns of W_V): 800 is over the cap of 768."),
    ("grouped", {"d_qk": 800}, "d_k (columns of W_Q): 800 is over the cap of 768."),
    ("grouped", {"d_qk": 2.5}, "d_k (columns of W_Q): 2.5 is not a whole number."),
    ("grouped", {"d_v": 800}, "d_v (columns of W_V): 800 is over the cap of 768."),
])
def test_a_refused_width_is_named_as_inputs_and_weights_labels_it(preset, sizes, said):
    """The d_k input (d_q with an additive score) was refused as "columns of W_Q: 800 is over the cap of 768.": the
    message names the size typed and the columns it is, by score function and heads (W_K follows W_Q's d_k unless
    the score is additive)."""
    cfg = grouped_query_config() if preset == "grouped" else load_preset(preset)
    now = {"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_qk": cfg.w_q.shape[1], "d_v": cfg.w_v.shape[1]}
    if cfg.score == "additive":
        now["d_k"] = cfg.w_k.shape[1]
    with pytest.raises(AttentionInputError) as err:
        with_dimensions(cfg, **{**now, **sizes})
    assert str(err.value) == said


@pytest.mark.parametrize(("preset", "sizes", "said"), [
    ("seed000", {"d_qk": 5}, "d_k (columns of W_Q and W_K): 5 leaves each head 5 features, but RoPE turns pairs of "
                             "features: a head needs an even width (or RoPE off)."),
    ("heads", {"d_qk": 24}, "d_k (columns of W_Q and W_K): 24 leaves each head 3 features, but RoPE turns pairs of "
                            "features: a head needs an even width (or RoPE off)."),
    ("grouped", {"d_qk": 24, "d_k": 6}, "d_k (columns of W_Q): 24 leaves each head 3 features, but RoPE turns pairs "
                                         "of features: a head needs an even width (or RoPE off)."),
])
def test_with_rope_a_width_that_leaves_a_head_odd_is_refused_by_the_size_typed(preset, sizes, said):
    """With RoPE on, an odd d_k was refused as "rope: turns pairs of features, so each head of W_Q needs an even
    width, got 5.": right, but it named neither the size typed nor the heads that split it."""
    cfg = {"seed000": lambda: load_preset("seed000"), "heads": lambda: load_preset("seed003_heads"),
           "grouped": grouped_query_config}[preset]()
    cfg = replace(cfg, rope=RoPE())
    now = {"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_qk": cfg.w_q.shape[1], "d_v": cfg.w_v.shape[1]}
    with pytest.raises(AttentionInputError) as err:
        with_dimensions(cfg, **{**now, **sizes})
    assert str(err.value) == said
    even = with_dimensions(cfg, **{**now, "d_qk": 2 * cfg.n_heads * 2, "d_k": None})  # 4 features a head: kept
    assert even.rope == cfg.rope and even.d_k == 4


def test_whole_floats_are_the_sizes_they_stand_for():
    """Inputs & weights' sizes hold floats (3.0): with_dimensions makes the same configuration as with ints."""
    cfg = load_preset("additive")
    as_ints = with_dimensions(cfg, n_seq=5, d_model=4, d_qk=2, d_v=3, d_k=6)
    as_floats = with_dimensions(cfg, n_seq=5.0, d_model=4.0, d_qk=2.0, d_v=3.0, d_k=6.0)
    assert configs_equal(as_ints, as_floats)
    assert as_floats.x.shape == (5, 4) and as_floats.w_k.shape == (4, 6)
    assert all(type(n) is int for n in (*as_floats.x.shape, *as_floats.w_q.shape, *as_floats.w_k.shape))


@pytest.mark.parametrize(("n_y", "said"), [
    (2.5, "n_y (rows of Y): 2.5 is not a whole number."),
    (1e3, "n_y (rows of Y): 1000 is over the cap of 256."),
    (0, "n_y (rows of Y): 0 is under 1; Y has at least one row."),
])
def test_with_query_rows_refuses_a_row_count_not_whole_over_its_cap_or_under_1(n_y, said):
    cfg = load_preset("cross_translation")
    with pytest.raises(AttentionInputError) as err:
        with_query_rows(cfg, n_y)
    assert str(err.value) == said
    assert with_query_rows(cfg, 4.0).y.shape == (4, cfg.d_model)
