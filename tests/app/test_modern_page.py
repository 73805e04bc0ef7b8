"""AppTest of the Modern attention page: every control and preset changes the configuration, the numbers shown equal
numpy written out here (RoPE's shift property, the window's hidden keys, online softmax's tiles, the KV cache), and a
refused value leaves a message, the value typed and no exception.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset, make_config
from attn_ui.views import modern_views as mv

from .apptools import new_app, plain
from .test_scaling import heatmaps

PAGE = "pages/modern.py"


def np_softmax(a: np.ndarray) -> np.ndarray:
    """Softmax of each row over its finite entries (−inf: weight 0)."""
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rotate_half(x: np.ndarray, pos: np.ndarray, base: float) -> np.ndarray:
    """transformers' apply_rotary_pos_emb for one head: x·cos + rotate_half(x)·sin, written out. [n, d] -> [n, d]"""
    d = x.shape[1]
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)  # [d/2]
    ang = np.asarray(pos, dtype=float)[:, None] * inv[None, :]  # [n, d/2]
    cos, sin = np.cos(np.concatenate([ang, ang], 1)), np.sin(np.concatenate([ang, ang], 1))
    rot = np.concatenate([-x[:, d // 2:], x[:, :d // 2]], 1)
    return x * cos + rot * sin


def open_page(preset: str = "seed000") -> AppTest:
    at = new_app()
    at.session_state["config"] = load_preset(preset)
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def show(at: AppTest, section: str) -> AppTest:
    at.session_state["kept"][mv.SECTION] = section
    at.run()
    assert not at.exception
    return at


def cfg(at: AppTest):
    return at.session_state["config"]


def texts(at: AppTest) -> str:
    return plain(" ".join(m.value for m in at.markdown))


def number_after(label: str, text: str) -> float:
    return float(re.search(re.escape(label) + r"\s*\**([0-9.e+−-]+)", text).group(1).replace("−", "-"))


# ---- the page as it opens ---------------------------------------------------------------------------------------

def test_seed000_opens_with_every_option_off_and_the_seeds_weights():
    at = open_page()
    c = cfg(at)
    assert not c.modern
    q, k = c.x @ c.w_q, c.x @ c.w_k
    weights = np_softmax(q @ k.T / np.sqrt(3))
    values, _, _ = heatmaps(at)[0]
    assert np.allclose(values, weights, atol=1e-12)
    assert "No option that changes a score is on" in texts(at)
    assert [h.value for h in at.header][:2] == ["1 · Switch the options on", "2–8 · Each step, on your numbers"]


# ---- the controls -----------------------------------------------------------------------------------------------

def test_toggles_and_the_window_change_the_configuration():
    at = open_page("seed002_causal")
    at.toggle(key=mv.CAUSAL).set_value(False).run()
    assert cfg(at).mask_kind == "none"
    at.toggle(key=mv.CAUSAL).set_value(True).run()
    assert cfg(at).mask_kind == "causal"
    at.toggle(key=mv.QK_NORM).set_value(True).run()
    assert cfg(at).qk_norm
    at.toggle(key=mv.ALIBI).set_value(True).run()
    assert cfg(at).alibi
    at.select_slider(key=mv.WINDOW).set_value(2).run()
    assert cfg(at).window == 2
    at.select_slider(key=mv.WINDOW).set_value(0).run()
    assert cfg(at).window is None
    at.toggle(key=mv.ROPE_ON).set_value(True).run()  # seed 002: d_k = 8, even
    assert cfg(at).rope is not None and cfg(at).rope.base == 10000.0
    at.number_input(key=mv.ROPE_BASE).set_value(500000.0).run()
    at.radio(key=mv.ROPE_LAYOUT).set_value("interleaved").run()
    assert (cfg(at).rope.base, cfg(at).rope.layout) == (500000.0, "interleaved")
    assert not at.exception


def test_soft_cap_on_takes_a_cap_at_the_size_of_the_scores_then_the_value_typed():
    at = open_page()
    c = cfg(at)
    largest = np.abs((c.x @ c.w_q) @ (c.x @ c.w_k).T / np.sqrt(3)).max()
    at.toggle(key=mv.CAP_ON).set_value(True).run()
    assert cfg(at).softcap == float(f"{largest:.2g}")
    at.number_input(key=mv.CAP).set_value(2.5).run()
    assert cfg(at).softcap == 2.5
    at.toggle(key=mv.CAP_ON).set_value(False).run()
    assert cfg(at).softcap is None


def test_key_value_heads_resize_w_k_and_w_v():
    at = open_page("seed003_heads")  # 8 heads of d_k = 64
    assert at.selectbox(key=mv.KV).options == ["8 (multi-head)", "4 (grouped)", "2 (grouped)", "1 (multi-query)"]
    before = cfg(at)
    at.selectbox(key=mv.KV).set_value(2).run()
    c = cfg(at)
    assert c.n_kv_heads == 2 and c.w_k.shape == (4, 128) and c.w_v.shape == (4, 128) and c.w_o.shape == (512, 4)
    assert np.array_equal(c.w_k, before.w_k[:, :128])  # the values that still fit are kept
    show(at, mv.GQA)
    t = texts(at)
    assert "query heads 0–3 → KV head 0" in t and "query heads 4–7 → KV head 1" in t
    # per token and layer: 2 K/V heads × (64 + 64) × 2 bytes, against 8 heads'
    assert "512 bytes" in t and "2,048 bytes" in t and "4 times less" in t


# ---- refusals ---------------------------------------------------------------------------------------------------

def test_rope_on_odd_widths_is_refused_with_a_way_out():
    at = open_page()  # seed 000: d_k = 3
    at.toggle(key=mv.ROPE_ON).set_value(True).run()
    assert not at.exception and cfg(at).rope is None
    assert "needs an even width" in plain(at.error[0].value)
    assert at.toggle(key=mv.ROPE_ON).value  # what the learner asked stays shown beside the message
    before = cfg(at)
    at.button(key="modern_widen").click().run()
    c = cfg(at)
    assert c.rope is not None and c.w_q.shape == (4, 4) and c.w_k.shape == (4, 4)
    assert np.array_equal(c.w_q[:, :3], before.w_q) and np.array_equal(c.x, before.x)
    assert not at.error


def test_a_refusal_goes_when_the_configuration_changes_elsewhere():
    at = open_page()
    at.toggle(key=mv.ROPE_ON).set_value(True).run()
    assert at.error
    at.session_state["config"] = load_preset("seed002_causal")  # as Inputs & weights would change it
    at.run()
    assert not at.error and not at.toggle(key=mv.ROPE_ON).value


@pytest.mark.parametrize(("key", "bad", "words"), [(mv.CAP, -1.0, "Cap: -1 is not above 0: type a number above 0"),
                                                   (mv.ROPE_BASE, 0.5, "RoPE base: must be a finite number above 1")])
def test_bad_values_are_refused_with_a_message_and_stay_typed(key, bad, words):
    at = open_page("seed002_causal")
    at.toggle(key=mv.ROPE_ON).set_value(True).run()
    at.toggle(key=mv.CAP_ON).set_value(True).run()
    before = cfg(at)
    at.number_input(key=key).set_value(bad).run()
    assert not at.exception
    assert any(words in plain(e.value) for e in at.error)
    assert at.number_input(key=key).value == bad
    assert (cfg(at).softcap, cfg(at).rope) == (before.softcap, before.rope)


# ---- the presets ------------------------------------------------------------------------------------------------

def test_presets_set_the_fields_the_models_use():
    at = open_page("seed003_heads")
    def press(name):
        at.button(key=f"modern_preset_{name}").click().run()
        assert not at.exception and not at.error
        return cfg(at)

    c = press("llama")
    assert (c.rope.base, c.rope.layout, c.n_kv_heads, c.window, c.mask_kind) == (10000.0, "half", 4, 2, "causal")
    assert (c.qk_norm, c.alibi, c.softcap) == (False, False, None)
    # Gemma 2's cap from the scores of these numbers: 8 query heads, query head h reading K/V head h // 2
    scaled = [((c.x @ c.w_q[:, h * 64:(h + 1) * 64]) @ (c.x @ c.w_k[:, h // 2 * 64:(h // 2 + 1) * 64]).T) / 8
              for h in range(8)]
    largest = max(np.abs(s).max() for s in scaled)
    c = press("gemma")
    assert (c.rope, c.window, c.n_kv_heads, c.mask_kind) == (None, None, 4, "causal")
    assert c.softcap == float(f"{largest:.2g}")
    c = press("bloom")  # BLOOM is multi-head: one K/V head per query head again, whatever the preset before
    assert (c.alibi, c.rope, c.softcap, c.mask_kind, c.kv_heads) == (True, None, None, "causal", 8)
    c = press("qwen")
    assert (c.qk_norm, c.rope.base, c.n_kv_heads, c.alibi) == (True, 1_000_000.0, 4, False)
    c = press("off")
    assert not c.modern and c.w_k.shape == (4, 512)


# ---- the numbers shown ------------------------------------------------------------------------------------------

def llama_on_seed000() -> AppTest:
    at = open_page()
    at.button(key="modern_preset_llama").click().run()  # d_k = 3 is odd: widens W_Q and W_K, then the preset
    assert not at.error and cfg(at).rope is not None and cfg(at).window == 2
    return at


def test_rope_shift_property_equals_numpy():
    at = llama_on_seed000()
    show(at, mv.ROPE_S)
    c = cfg(at)
    m, n, s = 2, 0, 5  # the page's defaults: the last query, the first key, a shift of 5
    q, k = c.x @ c.w_q, c.x @ c.w_k
    at_mn = rotate_half(q[[m]], [m], 1e4)[0] @ rotate_half(k[[n]], [n], 1e4)[0]
    shifted = rotate_half(q[[m]], [m + s], 1e4)[0] @ rotate_half(k[[n]], [n + s], 1e4)[0]
    assert abs(at_mn - shifted) < 1e-12
    # the original Transformer's sinusoidal positions added to X instead
    pos = np.arange(8)[:, None] / 10000.0 ** (2 * (np.arange(4)[None, :] // 2) / 4)
    pe = np.where(np.arange(4) % 2 == 0, np.sin(pos), np.cos(pos))
    abs_mn = ((c.x[m] + pe[m]) @ c.w_q) @ ((c.x[n] + pe[n]) @ c.w_k)
    abs_shifted = ((c.x[m] + pe[m + s]) @ c.w_q) @ ((c.x[n] + pe[n + s]) @ c.w_k)
    table = at.dataframe[0].value
    shown = np.array([[float(x.replace("−", "-")) for x in table.iloc[:2, c]] for c in (1, 2)])  # RoPE, X's
    assert np.allclose(shown, [[at_mn, shifted], [abs_mn, abs_shifted]], rtol=1e-3)
    t = texts(at)
    assert number_after("With RoPE the two scores differ by", t) < 1e-12
    assert abs(number_after("they differ by", t) - abs(abs_mn - abs_shifted)) < 1e-2 * abs(abs_mn - abs_shifted)
    # and the rotated heatmaps are numpy's
    rotated = rotate_half(q, np.arange(3), 1e4)
    assert any(v.shape == rotated.shape and np.allclose(v, rotated, atol=1e-12) for v, _, _ in heatmaps(at))


def test_window_hides_the_keys_numpy_says():
    at = open_page("seed002_causal")  # 4 tokens, causal
    at.select_slider(key=mv.WINDOW).set_value(2).run()
    show(at, mv.WINDOW_S)
    c = cfg(at)
    scores = (c.x @ c.w_q) @ (c.x @ c.w_k).T / np.sqrt(8)
    causal = np.tril(np.ones((4, 4), bool))
    before = np_softmax(np.where(causal, scores, -np.inf))
    table = at.dataframe[0].value
    labels = list(table.index)
    assert table.iloc[0, 0] == "—" and table.iloc[1, 0] == "—"
    for i, hidden in ((2, [0]), (3, [0, 1])):  # i − 2 < j ≤ i: query i loses keys j ≤ i − 2
        assert table.iloc[i, 0].count("(") == len(hidden)
        assert abs(float(table.iloc[i, 1]) - before[i, hidden].sum()) < 1e-4
        assert labels[hidden[0]] in table.iloc[i, 0]
    mask, masked, _ = heatmaps(at)[1]
    assert np.array_equal(mask.astype(bool), causal & ~np.tril(np.ones((4, 4), bool), -2))
    assert "i − 2 < j ≤ i" in texts(at)


def online_numpy(q, k, v, block, divisor, allowed):
    """FlashAttention's Algorithm 1 for the rows of q, written out."""
    n_q = q.shape[0]
    m, l, o = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, v.shape[1]))  # noqa: E741
    for a in range(0, k.shape[0], block):
        s = np.where(allowed[:, a:a + block], q @ k[a:a + block].T / divisor, -np.inf)
        m_new = np.maximum(m, s.max(axis=1))
        p = np.exp(s - m_new[:, None])
        r = np.exp(m - m_new)
        l, o, m = r * l + p.sum(1), r[:, None] * o + p @ v[a:a + block], m_new  # noqa: E741
    return m, l, o


def test_online_softmax_ends_at_the_softmax_output():
    at = open_page("seed001_sentence")  # 6 tokens
    show(at, mv.ONLINE)
    at.select_slider(key=mv.BLOCK).set_value(2).run()
    at.select_slider(key=mv.TILE).set_value(2).run()  # the last of 3 tiles
    c = cfg(at)
    q, k, v = c.x @ c.w_q, c.x @ c.w_k, c.x @ c.w_v
    m, l, o = online_numpy(q, k, v, 2, np.sqrt(10), np.ones((6, 6), bool))  # noqa: E741
    table = at.dataframe[0].value
    assert np.allclose([float(x) for x in table[table.columns[4]]], l, rtol=1e-3)  # "l after"
    weights = np_softmax(q @ k.T / np.sqrt(10))
    assert np.allclose(o / l[:, None], weights @ v, atol=1e-12)
    t = texts(at)
    assert number_after("largest difference", t) < 1e-12
    assert "the Korean blog post's stable softmax" in t


def test_kv_cache_counts_dot_products_and_equals_the_causal_forward():
    at = open_page("seed003_heads")
    at.button(key="modern_preset_llama").click().run()
    show(at, mv.CACHE)
    table = at.dataframe[0].value
    assert list(table[table.columns[2]]) == [8 * (t + 1) for t in range(3)]  # n_heads · (t + 1) a step
    assert list(table[table.columns[3]]) == [8, 8 + 16, 8 + 16 + 24]  # with the cache, so far
    assert list(table[table.columns[4]]) == [8, 8 + 32, 8 + 32 + 72]  # the whole prefix again: n_heads · (t + 1)²
    assert number_after("largest difference", texts(at)) < 1e-12


def untitled_heatmaps(at: AppTest) -> list[str]:
    """The descriptions of the page's heatmaps (charts of row and col labels) whose rows or columns have no title."""
    out = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        for layer in spec.get("layer", [spec]):
            enc = layer.get("encoding", {})
            if enc.get("y", {}).get("field") == "row" and enc.get("x", {}).get("field") == "col":
                if not (enc["x"].get("title") and enc["y"].get("title")):
                    out.append(spec.get("description", "")[:80])
                break
    return out


def test_every_option_on_every_section():
    """Each section draws with every option on, without an error, and every heatmap names its rows and columns (the
    grouped-query weights, the soft cap's two, the KV cache's three had no axis titles)."""
    at = open_page("seed003_heads")
    at.button(key="modern_preset_qwen").click().run()
    at.toggle(key=mv.ALIBI).set_value(True).run()
    at.toggle(key=mv.CAP_ON).set_value(True).run()
    at.select_slider(key=mv.WINDOW).set_value(2).run()
    c = cfg(at)
    assert (c.qk_norm, c.alibi, c.window, c.n_kv_heads) == (True, True, 2, 4) and c.rope and c.softcap
    for section in mv.SECTIONS:
        show(at, section)
        assert not at.error
        assert not untitled_heatmaps(at), (section, untitled_heatmaps(at))


@pytest.mark.parametrize("cap", [1e-3, 1e3])
def test_the_soft_cap_sentence_says_whether_the_cap_is_reached_on_these_numbers(cap):
    """tanh(s / c) rounds to 1.0 in float64 once |s| / c ≳ 19: a tiny cap is reached (the capped score equals it), a
    large one is not; the sentence follows the numbers, computed here with numpy."""
    at = open_page()
    c = cfg(at)
    at.session_state["config"] = replace(c, softcap=cap)
    show(at, mv.CAP_S)
    q, k = c.x @ c.w_q, c.x @ c.w_k  # seed 000: one head
    capped = cap * np.tanh(q @ k.T / np.sqrt(k.shape[1]) / cap)
    said = texts(at)
    if np.abs(capped).max() >= cap:
        assert cap == 1e-3 and "is the cap itself" in said and "no score reaches" not in said
    else:
        assert cap == 1e3 and "below the cap" in said and "is the cap itself" not in said


def test_the_kv_cache_section_decodes_at_most_its_first_tokens():
    """Each decoding step keeps its own cache and trace (memory grows with the square of the tokens): past
    mv.DECODE_TOKENS the section decodes the first ones, says so, and compares them with the whole causal forward's
    first rows."""
    rng = np.random.default_rng(5)
    n = mv.DECODE_TOKENS + 6
    w = [rng.normal(size=(4, 4)) for _ in range(3)]
    cfg = make_config([f"t{i}" for i in range(n)], rng.normal(size=(n, 4)), *w, n_heads=2, mask_kind="causal")
    at = new_app()
    at.session_state["config"] = cfg
    at.switch_page(PAGE).run()
    show(at, mv.CACHE)
    said = texts(at) + " ".join(c.value for c in at.caption)
    assert f"The first {mv.DECODE_TOKENS} of the {n} tokens are decoded here" in said
    assert len(mv.decode(cfg).steps) == mv.DECODE_TOKENS


def test_the_online_softmax_offers_at_most_max_tiles():
    """Each tile keeps its own m, l and O, so the smallest block offered gives at most mv.MAX_TILES tiles."""
    for n in (1, 4, 16, 17, 40, 256):
        sizes = mv.block_sizes(n)
        assert sizes[-1] == n and -(-n // sizes[0]) <= mv.MAX_TILES
        assert sizes[0] == 1 or -(-n // (sizes[0] - 1)) > mv.MAX_TILES  # and no smaller block would do
