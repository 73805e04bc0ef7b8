"""Every existing page stays true with the modern options (issue 38): grouped-query heads, RoPE, QK-norm, ALiBi, a
sliding window and soft-capping, alone, all together and in odd combinations, on every page without an exception;
Step by step's normed, rotated and capped steps and the drill-down's dot products against numpy written out here
(RoPE by hand with cos and sin, RMSNorm, c·tanh(s/c), ALiBi's slopes), independently of attn_core."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import RoPE, load_preset, make_config
from attn_ui.app import registry

from .apptools import new_app
from .test_multihead import open_section
from .test_steps import charts, grid, numbers, page_text, tables

TOKENS = ["the", "cat", "sat", "on", "mat"]


def gqa_base(n_kv_heads: int | None = 2, **options):
    """5 tokens, d_model 4, 4 query heads of d_k = d_v = 2 reading ``n_kv_heads`` key/value heads (None: 4, plain
    multi-head): W_Q 8 wide, W_K and W_V 2·n_kv, W_O 8 × 4; ``options``: the other modern fields and mask_kind."""
    rng = np.random.default_rng(38)
    kv = 4 if n_kv_heads is None else n_kv_heads
    return make_config(TOKENS, rng.normal(size=(5, 4)), rng.normal(size=(4, 8)), rng.normal(size=(4, 2 * kv)),
                       rng.normal(size=(4, 2 * kv)), w_o=rng.normal(size=(8, 4)), n_heads=4, n_kv_heads=n_kv_heads,
                       **options)


def one_head(**options):
    """Seed 000 with d_k = 3 widened to 4 (RoPE turns pairs): one head, 3 tokens."""
    rng = np.random.default_rng(7)
    base = load_preset("seed000")
    return make_config(base.tokens, base.x, rng.normal(size=(base.d_model, 4)), rng.normal(size=(base.d_model, 4)),
                       base.w_v, **options)


CONFIGS = {
    "all_on": lambda: gqa_base(rope=RoPE(), qk_norm=True, alibi=True, window=2, softcap=3.0, mask_kind="causal"),
    "gqa": lambda: gqa_base(),
    "mqa": lambda: gqa_base(n_kv_heads=1),
    "rope": lambda: one_head(rope=RoPE()),
    "rope_interleaved_heads": lambda: gqa_base(n_kv_heads=None, rope=RoPE(500.0, "interleaved")),
    "qk_norm": lambda: one_head(qk_norm=True),
    "alibi": lambda: gqa_base(n_kv_heads=None, alibi=True),
    "window": lambda: one_head(window=2),
    "window_causal": lambda: gqa_base(window=2, mask_kind="causal"),
    "window_padding": lambda: replace(one_head(window=2, mask_kind="padding"), is_pad=(False, False, True)),
    "softcap": lambda: one_head(softcap=0.5),
    "softcap_cross": lambda: replace(load_preset("cross_translation"), softcap=1.0),
    "rope_cross_refused": lambda: replace(load_preset("cross_translation"), rope=RoPE()),
    "gqa_general_refused": lambda: replace(gqa_base(), score="general", w_a=np.eye(2, 4)),
}
PAGES = [registry.OVERVIEW, registry.INPUTS, registry.STEPS, registry.SCALING, registry.MASKING, registry.MULTIHEAD,
         registry.SCORES, registry.SHARE]


def open_with(cfg, page: str) -> AppTest:
    at = new_app()
    at.session_state["config"] = cfg
    at.switch_page(page).run()
    return at


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_runs_with_the_modern_options(page, name):
    at = open_with(CONFIGS[name](), page.file)
    assert not at.exception, at.exception


@pytest.mark.parametrize("name", ["all_on", "gqa", "softcap_cross"])
def test_every_multihead_section_runs_with_the_modern_options(name):
    at = open_with(CONFIGS[name](), registry.MULTIHEAD.file)
    for number in (3, 4, 5, 6, 7):
        open_section(at, number)
        assert not at.exception and not at.error, (number, [e.value for e in at.error])


# ---- numpy written out ---------------------------------------------------------------------------


def rope_half(m: np.ndarray, base: float) -> np.ndarray:
    """RoPE by hand, layout "half": row p's pair (x_i, x_{i+d/2}) turned by p·base^(−2i/d)."""
    n, d = m.shape
    out = m.copy()
    for p in range(n):
        for i in range(d // 2):
            phi = p * base ** (-2 * i / d)
            a, b = m[p, i], m[p, i + d // 2]
            out[p, i], out[p, i + d // 2] = a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)
    return out


def rms(m: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return m / np.sqrt((m ** 2).mean(axis=1, keepdims=True) + eps)


def expected(cfg, head: int) -> dict[str, np.ndarray]:
    """Query head ``head``'s steps written out: its slice of X W_Q, key/value head g = head ÷ group's of X W_K,
    QK-norm, RoPE, scores, ÷ √d_k, soft cap."""
    d_k = cfg.w_q.shape[1] // cfg.n_heads
    g = head // (cfg.n_heads // cfg.kv_heads)
    q = cfg.x @ cfg.w_q[:, head * d_k:(head + 1) * d_k]
    k = cfg.x @ cfg.w_k[:, g * d_k:(g + 1) * d_k]
    out = {"Q": q, "K": k}
    if cfg.qk_norm:
        q, k = rms(q), rms(k)
        out["norm"] = (q, k)
    if cfg.rope is not None:
        q, k = rope_half(q, cfg.rope.base), rope_half(k, cfg.rope.base)
        out["rope"] = (q, k)
    out["q"], out["k"] = q, k
    out["scores"] = np.array([[sum(q[i, d] * k[j, d] for d in range(d_k)) for j in range(len(k))]
                              for i in range(len(q))])
    out["scaled"] = out["scores"] / np.sqrt(d_k)
    if cfg.softcap is not None:
        out["capped"] = cfg.softcap * np.tanh(out["scaled"] / cfg.softcap)
    return out


def test_steps_rope_and_qk_norm_and_softcap_equal_numpy_written_out():
    cfg = CONFIGS["all_on"]()
    at = open_with(cfg, registry.STEPS.file)
    assert not at.exception
    ref, found = expected(cfg, 0), charts(at)
    np.testing.assert_allclose(grid(found["Q (head 0)"]), ref["Q"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["K (key/value head 0)"]), ref["K"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Q (QK-norm)"]), ref["norm"][0], rtol=1e-10)
    np.testing.assert_allclose(grid(found["K (QK-norm)"]), ref["norm"][1], rtol=1e-10)
    np.testing.assert_allclose(grid(found["Q (RoPE)"]), ref["rope"][0], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grid(found["K (RoPE)"]), ref["rope"][1], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grid(found["Scores QKᵀ"]), ref["scores"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grid(found["Soft-capped scores"]), ref["capped"], rtol=1e-10, atol=1e-14)
    assert "query heads 0, 1 share" in page_text(at)


def test_steps_show_the_modern_steps_only_when_on():
    at = open_with(load_preset("seed000"), registry.STEPS.file)
    found = charts(at)
    assert not any(t in found for t in ("Q (RoPE)", "Q (QK-norm)", "Soft-capped scores"))
    at = open_with(CONFIGS["rope"](), registry.STEPS.file)
    found = charts(at)
    assert "Q (RoPE)" in found and "Q (QK-norm)" not in found and "Soft-capped scores" not in found
    ref = expected(CONFIGS["rope"](), 0)
    np.testing.assert_allclose(grid(found["Q (RoPE)"]), ref["rope"][0], rtol=1e-10, atol=1e-14)


def test_drill_down_dot_products_use_the_rotated_rows():
    cfg = CONFIGS["rope"]()
    at = open_with(cfg, registry.STEPS.file)
    ref = expected(cfg, 0)
    rows = tables(at)["a"]
    i = 0  # the drill-down's first query
    for j, row in enumerate(rows[:cfg.n_seq]):
        assert numbers(row[1]) == pytest.approx(ref["k"][j], abs=1e-4)  # k_j as scored: rotated
        total = numbers(row[2].split("=")[-1])[0]
        assert total == pytest.approx(ref["scores"][i, j], abs=1e-4)
        factors = numbers(row[2].split("=")[0])
        assert factors[0::2] == pytest.approx(ref["q"][i], abs=1e-4)


def test_multihead_groups_heads_by_their_key_value_head():
    at = open_with(CONFIGS["gqa"](), registry.MULTIHEAD.file)
    open_section(at, 3)
    text = page_text(at)
    assert "key/value head 0 ← query heads 0, 1" in text and "key/value head 1 ← query heads 2, 3" in text
    open_section(at, 6)
    (shapes,) = [d.value.set_index(d.value.columns[0]) for d in at.main.dataframe if "W_K" in set(d.value.iloc[:, 0])]
    assert shapes.loc["W_K"].iloc[1] == "d_model × n_kv_heads·d_k" and shapes.loc["W_K"].iloc[2] == "4 × 4"


def test_multihead_head_count_keeps_the_group():
    at = open_with(CONFIGS["gqa"](), registry.MULTIHEAD.file)  # 4 heads on 2 key/value heads: groups of 2
    at.number_input(key="heads_wanted").set_value(2).run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert (cfg.n_heads, cfg.n_kv_heads, cfg.w_k.shape) == (2, 1, (4, 4))  # the group of 2 kept, W_K untouched
    at.number_input(key="heads_wanted").set_value(3).run()  # not a multiple of the group: refused, said why
    assert at.session_state["config"].n_heads == 2
    assert any("grouped-query" in w.value for w in at.warning)


def test_masking_shows_the_window_in_the_mask():
    cfg = CONFIGS["window_padding"]()
    at = open_with(cfg, registry.MASKING.file)
    text = page_text(at)
    assert "Sliding window of 2 keys" in text and "the two together" in text


def test_multi_head_offers_only_head_counts_rope_can_turn():
    """W_Q, W_K and W_V 6 wide: 1, 2, 3 and 6 heads divide them, but RoPE turns pairs of features, so only heads of an
    even width (6 ÷ 1, 6 ÷ 3) are offered; asking for 2 says why."""
    rng = np.random.default_rng(6)
    cfg = make_config(TOKENS[:3], rng.normal(size=(3, 4)), *(rng.normal(size=(4, 6)) for _ in range(3)),
                      rope=RoPE())
    at = new_app()
    at.session_state["config"] = cfg
    at.switch_page(registry.MULTIHEAD.file).run()
    assert not at.exception
    at.number_input(key="heads_wanted").set_value(2).run()
    assert not at.exception and at.session_state["config"].n_heads == 1
    said = " ".join(w.value for w in at.warning)
    assert "**2 heads do not fit.**" in said and "RoPE turns pairs of features" in said
    assert "Valid choices: 1, 3." in said


def test_overview_lists_the_modern_options_its_weights_use():
    """The Overview's Current configuration names every option the weights it draws run with (it listed heads, scale
    and mask only, while the weights below were computed with GQA, RoPE, QK-norm, ALiBi, a window and a cap)."""
    at = new_app()
    at.session_state["config"] = CONFIGS["all_on"]()
    at.run()
    listed = next(m.value for m in at.markdown if "**Heads**" in m.value)
    assert "- **Modern attention**: sharing 2 key/value heads, QK-norm, RoPE (half, base 10000), soft cap 3, ALiBi" \
        in listed
    assert "- **Mask**: causal (each token sees itself and earlier ones) · window 2" in listed
    at.session_state["config"] = load_preset("seed000")
    at.run()
    listed = next(m.value for m in at.markdown if "**Heads**" in m.value)
    assert "Modern attention" not in listed and "window" not in listed
