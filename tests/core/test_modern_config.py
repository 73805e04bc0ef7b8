"""The modern options in the explorer's Config: defaults that leave every configuration as it was, validation with
named refusals, run(cfg) through modern_attention, links and files that round-trip them bit for bit, with_dimensions
sizing W_K and W_V by the key/value heads, and the NumPy export printing attn_core's numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attn_core import (
    PRESETS,
    AttentionInputError,
    Config,
    RoPE,
    config_mask,
    configs_equal,
    load_preset,
    make_config,
    modern_attention,
    run,
    share,
    validate_config,
    with_dimensions,
)
from attn_core.share import named_matrices

from .test_codegen import run_script

RNG = np.random.default_rng(11)
MODERN = ("n_kv_heads", "rope", "qk_norm", "alibi", "window", "softcap")


def grouped(mask_kind="causal", **options):
    """Seed 002's 4 tokens (d_model 24) with 4 query heads of width 2 sharing 2 key/value heads."""
    base = load_preset("seed002_causal")
    return make_config(base.tokens, base.x, base.w_q, base.w_k[:, :4], base.w_v[:, :4], RNG.normal(size=(8, 5)),
                       n_heads=4, mask_kind=mask_kind, **{"n_kv_heads": 2, **options})


def mqa(**options):
    """Seed 002 with 4 query heads of width 2 and one key/value head."""
    base = load_preset("seed002_causal")
    return make_config(base.tokens, base.x, base.w_q, base.w_k[:, :2], base.w_v[:, :2], np.eye(8), n_heads=4,
                       n_kv_heads=1, mask_kind="causal", **options)


VARIANTS = {
    "llama: gqa, rope, causal": lambda: grouped(rope=RoPE()),
    "mistral: + window": lambda: grouped(rope=RoPE(), window=2),
    "qwen3: qk_norm, rope interleaved": lambda: grouped(rope=RoPE(500000.0, "interleaved"), qk_norm=True),
    "gemma2: softcap, window, divisor": lambda: replace(grouped(rope=RoPE(), window=3, softcap=0.5), scale=1.5),
    "bloom: alibi, mqa": lambda: mqa(alibi=True),
    "padding + window, no causal, softcap + alibi + score bias": lambda: replace(
        grouped(mask_kind="padding", window=2, softcap=2.0, alibi=True, is_pad=(False, False, True, False)),
        score_bias=RNG.normal(size=(4, 4, 4))),
    "heads of seed 003, all on": lambda: replace(load_preset("seed003_heads"), rope=RoPE(), qk_norm=True, alibi=True,
                                                 window=2, softcap=4.0, mask_kind="causal"),
}


def test_the_defaults_leave_every_preset_as_it_was():
    for key in PRESETS:
        cfg = load_preset(key)
        assert (cfg.n_kv_heads, cfg.rope, cfg.qk_norm, cfg.alibi, cfg.window, cfg.softcap) == (
            None, None, False, False, None, None)
        assert not cfg.modern
        doc = share.config_to_dict(cfg)
        assert not set(MODERN) & set(doc)  # a link or file of an old configuration stays the same text


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_run_goes_through_modern_attention(name):
    cfg = validate_config(VARIANTS[name]())
    t = run(cfg)
    causal = cfg.mask_kind == "causal"
    want = modern_attention(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=cfg.n_heads,
                            n_kv_heads=cfg.n_kv_heads, rope=cfg.rope, qk_norm=cfg.qk_norm, alibi=cfg.alibi,
                            window=cfg.window, causal=causal, softcap=cfg.softcap, scale=cfg.scale,
                            mask=None if causal else config_mask(cfg), bias=cfg.score_bias)
    np.testing.assert_array_equal(t.output, want.output)
    assert t.kv_heads == tuple(h // (cfg.n_heads // cfg.kv_heads) for h in range(cfg.n_heads))
    assert cfg.d_k * cfg.kv_heads == cfg.w_k.shape[1] and cfg.d_v * cfg.n_heads == cfg.w_o.shape[0]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_links_and_files_round_trip_the_options_bit_for_bit(name):
    cfg = validate_config(VARIANTS[name]())
    link = share.encode_link(cfg, page="multihead")  # seed 003's 512-wide heads: over a link's cap, lifted here
    back, page = share.decode_link(link, max_chars=len(link), max_json=10**7)
    assert configs_equal(back, cfg) and page == "multihead"
    back, _ = share.from_json(share.to_json(cfg))
    assert configs_equal(back, cfg)
    np.testing.assert_array_equal(run(back).output, run(cfg).output)


def test_options_differ_so_configs_differ():
    a = grouped(rope=RoPE())
    assert not configs_equal(a, replace(a, rope=RoPE(500000.0)))
    assert not configs_equal(a, replace(a, window=3))
    assert configs_equal(validate_config(replace(a, n_kv_heads=None, w_k=a.w_q, w_v=np.hstack([a.w_v, a.w_v]))),
                         validate_config(replace(a, n_kv_heads=4, w_k=a.w_q, w_v=np.hstack([a.w_v, a.w_v]))))


@pytest.mark.parametrize("changes, words, matrix", [
    (dict(n_kv_heads=3), "n_kv_heads: 3 key/value heads do not divide the 4 query heads", None),
    (dict(n_kv_heads=1), "W_K: has 4 columns but needs 2", "W_K"),
    (dict(rope="half"), "rope: must be RoPE(base, layout) or none", None),
    (dict(qk_norm="yes"), "qk_norm: must be True or False", None),
    (dict(window=0), "window: must be a whole number of at least 1", None),
    (dict(softcap=-1.0), "softcap: must be a finite number above 0", None),
    (dict(w_o=np.ones((4, 5))), "W_O: has 4 rows but the heads concatenate to 8 columns", "W_O"),
])
def test_validation_names_the_option_or_matrix(changes, words, matrix):
    with pytest.raises(AttentionInputError) as err:
        validate_config(replace(grouped(), **changes))
    assert words in str(err.value)
    assert err.value.matrix == matrix


def test_rope_needs_even_head_widths_and_positions_need_self_attention():
    cfg = load_preset("seed000")  # one head of width 3
    with pytest.raises(AttentionInputError) as err:
        validate_config(replace(cfg, rope=RoPE()))
    assert str(err.value) == ("RoPE turns pairs of features, so each head of W_Q needs an even width; it is 3: widen "
                              "each head (d_k) by one, to 4.")  # what to do, in the learner's terms
    assert err.value.matrix == "W_Q" and err.value.params == {"name": "W_Q", "width": 3, "wider": 4}
    cross = load_preset("cross_translation")
    with pytest.raises(AttentionInputError, match="alibi: works on self-attention"):
        validate_config(replace(cross, alibi=True))
    t = run(validate_config(replace(cross, softcap=1.0)))  # a soft cap needs no positions
    assert all(h.softcap == 1.0 for h in t.heads)


@pytest.mark.parametrize("doc_changes, words", [
    ({"n_kv_heads": 2.0}, "n_kv_heads: must be a whole number from 1"),
    ({"rope": {"base": 10000}}, "rope: has the keys 'base'; it takes exactly \"base\" and \"layout\""),
    ({"rope": 5}, 'rope: must be an object with "base" and "layout", got a number'),
    ({"rope": {"base": "1e4", "layout": "half"}}, "RoPE base: must be a number above 1, got a string"),
    ({"rope": {"base": 10**400, "layout": "half"}}, "RoPE base: is too large for a float64 number"),
    ({"rope": {"base": 10000, "layout": 3}}, 'RoPE layout: must be "half" or "interleaved", got a number'),
    ({"rope": {"base": 10000, "layout": "spiral"}}, "RoPE layout: 'spiral'"),
    ({"qk_norm": 1}, "qk_norm: must be true or false"),
    ({"softcap": "big"}, "softcap: must be a number above 0"),
    ({"window": True}, "window: must be a whole number from 1"),
])
def test_hostile_documents_are_refused_by_field(doc_changes, words):
    doc = share.config_to_dict(grouped()) | doc_changes
    with pytest.raises(AttentionInputError) as err:
        share.config_from_dict(doc)
    assert words in str(err.value)


def test_with_dimensions_sizes_w_k_and_w_v_by_the_key_value_heads():
    cfg = grouped(rope=RoPE())
    new = with_dimensions(cfg, n_seq=6, d_model=10, d_qk=16, d_v=6)  # W_V of 2 KV heads of width 3
    assert (new.n_heads, new.n_kv_heads) == (4, 2)
    assert new.w_q.shape == (10, 16) and new.w_k.shape == (10, 8) and new.w_v.shape == (10, 6)
    assert new.w_o.shape == (12, 5)  # 4 query heads · d_v 3 rows
    np.testing.assert_array_equal(new.w_k[:, :4], cfg.w_k[:10, :4])  # the values that still fit are kept
    np.testing.assert_array_equal(new.w_q[:, :8], cfg.w_q[:10, :8])
    one = with_dimensions(cfg, n_seq=4, d_model=24, d_qk=6, d_v=4)  # 6 columns do not split into 4 heads
    assert (one.n_heads, one.n_kv_heads) == (1, None) and one.w_k.shape == (24, 6) and one.w_o.shape == (4, 5)
    run(new)


def expected_blocks(cfg):
    named = named_matrices(cfg, run(cfg))
    return {name: m for name, m in named.items() if name.startswith("head") or name in ("concat", "output")}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_numpy_export_prints_attn_cores_numbers(name, tmp_path):
    cfg = validate_config(VARIANTS[name]())
    got, want = run_script(cfg, tmp_path), expected_blocks(cfg)
    assert list(got) == list(want)
    for block, m in want.items():
        assert got[block].tobytes() == m.tobytes(), block  # the same operations in the same order: equal bits
    assert "head0_capped" in got if cfg.softcap is not None else "head0_capped" not in got


def test_config_fields_are_the_documented_ones():
    assert [f for f in Config.__dataclass_fields__][-6:] == list(MODERN)
