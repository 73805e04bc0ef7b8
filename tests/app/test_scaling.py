"""AppTest of the Scaling page: scale modes, measured variances, the d_k sweep, softmax saturation.

Expected numbers are computed here with numpy from the seeds' matrices, or are the seeds' printed values.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow.ipc
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset

from .. import seeds
from .apptools import app_on, new_app, notes, paragraphs, plain

PAGE = "pages/scaling.py"

# seed 000 / 004 (tests/seeds.py): Q = X W_Q, K = X W_K, V = X W_V
X, W_Q, W_K, W_V = (
    np.array(m, dtype=float) for m in (seeds.SEED000_X, seeds.SEED000_W_Q, seeds.SEED000_W_K, seeds.SEED000_W_V)
)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
S = Q @ K.T  # seed 004 prints it: seeds.SEED004_SCORES


def np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---- helpers shared with test_masking.py ---------------------------------------------------------


def chart_frames(at: AppTest) -> list[pd.DataFrame]:
    """Every dataset of every Altair chart on the page, in page order."""
    return [
        pyarrow.ipc.open_stream(d.data.data).read_all().to_pandas()
        for chart in at.get("vega_lite_chart")
        for d in chart.proto.datasets
    ]


def heatmaps(at: AppTest) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(values, masked, texts) of every heatmap on the page, as [rows, cols] arrays, in page order.

    A heatmap's frame has a "masked" column only when some cell is masked.
    """
    out = []
    for f in chart_frames(at):
        if {"row_i", "col_i", "value", "text"} <= set(f.columns):
            f = f if "masked" in f.columns else f.assign(masked=False)
            shape = (int(f.row_i.max()) + 1, int(f.col_i.max()) + 1)
            grid = [np.empty(shape, dtype=dt) for dt in (float, bool, object)]
            for g, column in zip(grid, ("value", "masked", "text"), strict=True):
                g[f.row_i.to_numpy(), f.col_i.to_numpy()] = f[column].to_numpy()
            out.append(tuple(grid))
    return out


def has_heatmap(at: AppTest, expected: np.ndarray, *, atol: float = 1e-9) -> bool:
    return any(v.shape == expected.shape and np.allclose(v, expected, atol=atol) for v, _, _ in heatmaps(at))


def metrics(at: AppTest) -> dict[str, float]:
    return {m.label: float(m.value) for m in at.metric}


# ---- the page ------------------------------------------------------------------------------------


@pytest.fixture
def page() -> AppTest:
    at = new_app(PAGE)
    assert not at.exception
    return at


def test_default_divides_by_sqrt_dk_and_shows_unscaled_beside(page):
    assert page.radio(key="scaling_mode").value == "sqrt_dk"
    assert page.select_slider(key="scaling_divisor").value == pytest.approx(np.sqrt(3))
    unscaled, scaled = np_softmax(S), np_softmax(S / np.sqrt(3))
    assert has_heatmap(page, unscaled) and has_heatmap(page, scaled)
    assert has_heatmap(page, unscaled @ V) and has_heatmap(page, scaled @ V)
    # seed 000's printed weights, seed 004's printed unscaled ones
    assert has_heatmap(page, np.array(seeds.SEED000_WEIGHTS), atol=1e-7)
    assert has_heatmap(page, np.array(seeds.SEED004_SOFTMAX), atol=1e-5)


def test_measured_variances_of_the_current_q_and_k(page):
    m = metrics(page)
    assert m["var(Q)"] == pytest.approx(Q.var(), abs=5e-5)
    assert m["var(K)"] == pytest.approx(K.var(), abs=5e-5)
    assert m["var(QKᵀ)"] == pytest.approx(S.var(), abs=5e-5)
    assert m["var(QKᵀ / √d_k)"] == pytest.approx((S / np.sqrt(3)).var(), abs=5e-5)


def test_the_variance_formula_is_compared_with_the_learners_measured_variance(page):
    """var(QKᵀ) ≈ d_k · var(Q) · var(K) holds for independent entries with mean 0: the page says how far seed 000's
    numbers are from it, and why (numbers from numpy here)."""
    expected = 3 * Q.var() * K.var()
    (said,) = [plain(c) for c in notes(page) if plain(c).startswith("Your measured var(QKᵀ)")]
    assert f"var(QKᵀ) = {S.var():.4f} is {S.var() / expected:.2f} times the formula's" in said
    assert S.var() / expected > 1.25 and "the means of your entries are" in said
    assert f"{Q.mean():.4f} (Q) and {K.mean():.4f} (K)" in said


def test_seed002_variances_are_the_printed_ones():
    at = new_app()
    at.session_state["config"] = load_preset("seed002_causal")
    at.switch_page(PAGE).run()
    assert not at.exception
    m = metrics(at)  # seed 002: q.var(), k.var(), QKᵀ.var(), scaled.var()
    assert m["var(Q)"] == pytest.approx(seeds.SEED002_VAR_Q, abs=5e-5)
    assert m["var(K)"] == pytest.approx(seeds.SEED002_VAR_K, abs=5e-5)
    assert m["var(QKᵀ)"] == pytest.approx(seeds.SEED002_VAR_QKT, abs=5e-5)
    assert m["var(QKᵀ / √d_k)"] == pytest.approx(seeds.SEED002_VAR_SCALED, abs=5e-5)


def test_none_mode_is_written_to_the_configuration(page):
    page.radio(key="scaling_mode").set_value("none").run()
    assert not page.exception
    assert page.session_state["config"].scale == "none"
    assert page.select_slider(key="scaling_divisor").value == 1.0
    assert any("divides by 1" in plain(c) for c in notes(page))
    assert has_heatmap(page, np_softmax(S)) and not has_heatmap(page, np_softmax(S / np.sqrt(3)))


def test_custom_divisor_from_the_log_slider(page):
    slider = page.select_slider(key="scaling_divisor")
    assert min(slider.options, key=float) == "0.01" and max(slider.options, key=float) == "1000"
    slider.set_value(10.0).run()
    assert not page.exception
    assert page.session_state["config"].scale == 10.0
    assert page.radio(key="scaling_mode").value == "custom"
    assert has_heatmap(page, np_softmax(S / 10.0)) and has_heatmap(page, np_softmax(S / 10.0) @ V)


def test_custom_mode_starts_from_the_divisor_in_use(page):
    page.radio(key="scaling_mode").set_value("custom").run()
    assert page.session_state["config"].scale == pytest.approx(np.sqrt(3))
    assert has_heatmap(page, np_softmax(S / np.sqrt(3)))


def test_reopened_page_shows_the_configuration_scale(page):
    page.select_slider(key="scaling_divisor").set_value(100.0).run()
    page.switch_page("pages/overview.py").run()
    page.switch_page(PAGE).run()
    assert page.radio(key="scaling_mode").value == "custom"
    assert page.select_slider(key="scaling_divisor").value == 100.0
    page.session_state["config"] = load_preset("seed004_unscaled")
    page.run()
    assert page.radio(key="scaling_mode").value == "none"


def test_scale_chosen_here_changes_step_by_step(page):
    page.radio(key="scaling_mode").set_value("none").run()
    page.switch_page("pages/steps.py").run()
    assert not page.exception
    assert page.session_state["config"].scale == "none"
    assert has_heatmap(page, np_softmax(S))  # seed 004's unscaled weights
    assert not has_heatmap(page, np_softmax(S / np.sqrt(3)))


def sweep_table(at: AppTest):
    """The variance sweep's numbers (the expander "The numbers" opened: its table is made only while open)."""
    assert not at.main.dataframe  # closed
    at.session_state["scaling_sweep_numbers"] = True
    return at.run().main.dataframe[0].value


def test_sweep_raw_grows_with_d_k_and_scaled_stays_near_1(page):
    sweep = sweep_table(page)
    d_k, raw, scaled = (sweep[c].to_numpy(dtype=float) for c in ("d_k", "var(QKᵀ)", "var(QKᵀ / √d_k)"))
    assert d_k.tolist() == [2.0**i for i in range(10)]  # 1 … 512
    assert np.all((scaled > 0.7) & (scaled < 1.3))
    assert np.all(np.diff(raw) > 0) and raw[-1] > 300
    assert np.allclose(raw / d_k, scaled, atol=1e-4)
    plotted = next(f for f in chart_frames(page) if "series" in f.columns)
    assert set(plotted.series) == {"var(QKᵀ)", "var(QKᵀ / √d_k)"}


def test_saturation_curves_reach_one_hot_and_uniform(page):
    top, entropy = (f for f in chart_frames(page) if {"divisor", "query", "value"} <= set(f.columns))

    def curve(frame: pd.DataFrame, query: str) -> pd.DataFrame:
        return frame[frame["query"] == query].sort_values("divisor").reset_index(drop=True)

    q0, q1, h0 = curve(top, "0: input1"), curve(top, "1: input2"), curve(entropy, "0: input1")
    assert q0.divisor.iloc[0] == pytest.approx(0.01) and q0.divisor.iloc[-1] == pytest.approx(1000)
    at_1 = q0.iloc[(q0.divisor - 1.0).abs().argmin()]
    assert at_1.divisor == pytest.approx(1.0)
    assert at_1.value == pytest.approx(seeds.SEED004_SOFTMAX[0][1], abs=1e-5)  # seed 004: softmax([2, 4, 4])[1]
    assert q1.value.iloc[0] == pytest.approx(1.0)  # ÷ 0.01: one-hot
    assert q0.value.iloc[-1] == pytest.approx(1 / 3, abs=1e-3)  # ÷ 1000: uniform
    assert np.all(np.diff(q0.value) <= 1e-12)  # sharper with a smaller divisor
    for i in (0, len(h0) // 2, len(h0) - 1):
        w = np_softmax(S[0] / h0.divisor.iloc[i])
        assert h0.value.iloc[i] == pytest.approx(-np.sum(w[w > 0] * np.log(w[w > 0])), abs=1e-9)
    assert h0.value.iloc[-1] == pytest.approx(np.log(3), abs=1e-3)


def test_seed_notes(page):
    text = " ".join(i.value for i in page.info)
    assert "√(number of tokens)" in text and "rounded down to 1" in text and "n_seq = 3 and d_k = 3" in text


def test_heads_picks_the_head_whose_variances_are_shown():
    at = new_app()
    cfg = load_preset("seed003_heads")
    at.session_state["config"] = cfg
    at.switch_page(PAGE).run()
    assert not at.exception
    at.selectbox(key="scaling_head").set_value(3).run()
    assert not at.exception and at.session_state["head"] == 3
    q, k = cfg.x @ cfg.w_q[:, 192:256], cfg.x @ cfg.w_k[:, 192:256]  # head 3 of 8 × 64
    s = q @ k.T
    m = metrics(at)
    assert m["var(Q)"] == pytest.approx(q.var(), abs=5e-5)
    assert m["var(QKᵀ / √d_k)"] == pytest.approx((s / 8).var(), abs=5e-5)
    assert has_heatmap(at, np_softmax(s / 8)) and has_heatmap(at, np_softmax(s))


def test_a_variance_beyond_float64_is_said_not_printed_as_inf(page):
    """Q of entries near 1e160 (scores still finite): var(Q) exceeds float64; the metric says so."""
    from attn_core import make_config

    x = np.array([[1e160, -1e160], [2.0, 1.0]])
    tiny = np.full((2, 2), 1e-170)
    page.session_state["config"] = make_config(["a", "b"], x, np.eye(2), tiny, tiny)
    page.run()
    assert not page.exception
    got = metrics_text(page)
    assert got["var(Q)"] == "beyond float64"
    assert got["var(K)"] != "beyond float64" and float(got["var(QKᵀ)"]) >= 0


def metrics_text(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# ---- every sentence true on the numbers shown (issue 28) ---------------------------------------------------------
FOUR = r"(−?\d+\.\d{4})"  # a variance as the page prints it


def open_preset(key: str) -> AppTest:
    at = new_app()
    at.session_state["config"] = load_preset(key)
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def head0(cfg):
    """Head 0's Q (or Q W_a) and K, and the boolean mask (True = may attend), written out."""
    d_k = cfg.w_k.shape[1] // cfg.n_heads
    y = cfg.y if cfg.cross else cfg.x
    q, k = (y @ cfg.w_q)[:, :d_k], (cfg.x @ cfg.w_k)[:, :d_k]
    allowed = np.tril(np.ones((cfg.n_seq,) * 2, dtype=bool)) if cfg.mask_kind == "causal" else np.ones(
        (q.shape[0], k.shape[0]), dtype=bool)
    return q, k, allowed


@pytest.mark.parametrize("key", ["seed000", "seed002_causal", "seed001_sentence", "cross_translation",
                                 "seed003_heads"])
def test_the_sqrt_d_k_claim_states_its_assumption_beside_the_learners_variances(key):
    at = open_preset(key)
    cfg = at.session_state["config"]
    q, k, _ = head0(cfg)
    s = q @ k.T
    scaled = (s / np.sqrt(q.shape[1])).var()
    (claim,) = [plain(m.value) for m in at.markdown if "for this reason" in m.value]
    assert ("**if the entries of q and k are independent, with mean 0 and variance 1**, a score q · k is a sum of d_k "
            "products and has variance d_k") in claim
    head = " (head 0)" if cfg.n_heads > 1 else ""
    found = re.search(rf"On your numbers{re.escape(head)}: var\(Q\) = {FOUR}, var\(K\) = {FOUR}, and "
                      rf"var\(QKᵀ / √d_k\) = {FOUR}(, near 1\.| instead of 1 \(measured below\)\.)", claim)
    assert found, claim
    var_q, var_k, var_scaled = (float(found.group(i)) for i in (1, 2, 3))
    assert (var_q, var_k, var_scaled) == (round(q.var(), 4), round(k.var(), 4), round(scaled, 4))
    assert (found.group(4) == ", near 1.") == bool(0.8 <= scaled <= 1.25)


def test_seed000_and_the_notebooks_scaled_variances_are_compared_with_1():
    claim = [plain(m.value) for m in open_preset("seed000").markdown if "for this reason" in m.value][0]
    assert "var(QKᵀ / √d_k) = 7.3416 instead of 1" in claim  # S.var() / 3, seed 000's scores
    assert (S / np.sqrt(3)).var() == pytest.approx(7.3416, abs=5e-5)
    claim = [plain(m.value) for m in open_preset("seed002_causal").markdown if "for this reason" in m.value][0]
    # the notebook's printed 1.3836 is outside 0.8 … 1.25, so not "near 1"
    assert f"var(QKᵀ / √d_k) = {seeds.SEED002_VAR_SCALED:.4f} instead of 1" in claim


def test_additive_scores_say_the_reason_does_not_apply():
    claim = [plain(m.value) for m in open_preset("additive").markdown if "for this reason" in m.value][0]
    assert claim.endswith("Your scores are additive, not dot products, so this reason does not apply to them (see Why "
                          "√d_k: measured).")


def test_the_random_sweep_sentence_gives_the_range_it_measured(page):
    sweep = sweep_table(page)
    scaled = sweep["var(QKᵀ / √d_k)"].to_numpy(dtype=float)
    (text,) = [plain(m) for m in paragraphs(page.markdown) if m.startswith("**The same on random Q, K")]
    assert (f"for d_k from 1 to 512: the raw variance grows with d_k, close to the dashed line variance = d_k, and "
            f"the scaled one stays between {scaled.min():.2f} and {scaled.max():.2f}.") in text


@pytest.mark.parametrize("key", ["seed000", "seed004_unscaled", "seed002_causal", "seed001_sentence"])
def test_the_saturation_sentence_names_the_rows_that_do_not_go_one_hot(key):
    at = open_preset(key)
    cfg = at.session_state["config"]
    q, k, allowed = head0(cfg)
    s = np.where(allowed, q @ k.T, -np.inf)
    ties = {i: int((row == row.max()).sum()) for i, row in enumerate(s) if (row == row.max()).sum() > 1}
    (text,) = [plain(m) for m in paragraphs(at.markdown) if m.startswith("For each query row")]
    for i, label in enumerate(cfg.query_tokens):
        said = f"Query {i}: {label}'s largest score is shared by"
        assert (said in text) == (i in ties), (label, text)
        if i in ties:
            n = ties[i]
            assert (f"{said} {n} keys, so a small divisor splits its weight evenly among them: largest weight 1/{n} = "
                    f"{1 / n:.4g}, entropy ln {n} = {np.log(n):.4g}.") in text
    if key == "seed000":  # seed 004's raw scores [2, 4, 4]: input1's two 4s
        assert ties == {0: 2}


def test_a_query_with_every_key_masked_is_named_in_the_saturation_sentence():
    at = open_preset("seed000")
    cfg = at.session_state["config"]
    custom = np.ones((3, 3), dtype=bool)
    custom[1] = False
    at.session_state["config"] = replace(cfg, mask_kind="custom", custom_mask=custom)
    at.run()
    (text,) = [plain(m) for m in paragraphs(at.markdown) if m.startswith("For each query row")]
    assert "Query 1: input2 has every key masked: its weights are 0 at every divisor." in text


def rule_labels(at: AppTest) -> list[pd.DataFrame]:
    return [f for f in chart_frames(at) if {"label", "ypos", "right"} <= set(f.columns)]


@pytest.mark.parametrize("divisor", [None, 1.2, 0.01, 30.0, 1000.0])
def test_rule_labels_have_a_row_each_above_the_plot(page, divisor):
    """However close the divisors (√d_k = 1.73 beside 1; a custom one anywhere), each label has its own row, above
    the plot (negative pixels), so no two overlap and none covers a curve; labels on the right end at their rule."""
    if divisor is not None:
        page.select_slider(key="scaling_divisor").set_value(divisor).run()
    for d_k in (1, 3, 64, 512):  # √d_k from 1 to 22.6
        cfg = page.session_state["config"]
        rng = np.random.default_rng(d_k)
        page.session_state["config"] = replace(cfg, w_q=rng.normal(size=(4, d_k)), w_k=rng.normal(size=(4, d_k)))
        page.run()
        assert not page.exception
        saturation_rules, sweep_rule = rule_labels(page)[-1], rule_labels(page)[0]
        assert list(sweep_rule.label) == [f"your d_k = {d_k}"] and (sweep_rule.ypos < 0).all()
        assert len(set(saturation_rules.ypos)) == len(saturation_rules) and (saturation_rules.ypos < 0).all()
        order = saturation_rules.sort_values("divisor")  # the smallest divisor the lowest row
        assert list(order.ypos) == sorted(order.ypos, reverse=True)
        right = np.log10(saturation_rules.divisor) > -2 + 0.6 * 5  # the right 40 % of 0.01 … 1000
        assert list(saturation_rules.right) == list(right)
        labels = set(saturation_rules.label)
        assert {"÷ 1 (none)", f"÷ √d_k = {np.sqrt(d_k):.3g}"} <= labels


def test_the_pages_idea_and_the_reason_for_sqrt_d_k_are_one_element(page):
    (both,) = [m.value for m in page.markdown if "for this reason" in m.value]
    idea, claim = both.split("\n\n")
    assert idea.startswith("Before softmax, every score is divided by a number s.")
    assert claim.startswith("The Transformer uses s = √d_k for this reason")


def test_a_configuration_that_cannot_be_computed_keeps_the_idea_and_says_why():
    at = open_preset("seed000")
    at.session_state["config"] = replace(at.session_state["config"], n_heads=2)  # 3 columns in 2 heads: no
    at.run()
    assert not at.exception and at.error and "cannot be computed" in at.error[0].value
    (idea,) = [m.value for m in at.markdown if m.value.startswith("Before softmax, every score is divided")]
    assert "for this reason" not in idea  # the claim needs the numbers
    assert at.radio(key="scaling_mode")  # the scale can still be chosen


def _configs_for_unscaled():
    """Configurations whose heads' scores are dot products: plain, masked, several heads, a T5-style score bias, and the
    modern options (grouped heads, RoPE, QK-norm, ALiBi, a window, a soft cap)."""
    from attn_core import RoPE, initialize, make_config

    def w(shape, seed):
        return initialize("xavier_uniform", shape, seed=seed)

    tokens = [f"t{i}" for i in range(6)]
    x = w((6, 8), 0)
    base = make_config(tokens, x, w((8, 8), 1), w((8, 8), 2), w((8, 8), 3), n_heads=2)
    rng = np.random.default_rng(5)
    yield load_preset("seed000")
    yield load_preset("seed002_causal")
    yield base
    yield replace(base, mask_kind="causal", score_bias=rng.normal(size=(2, 6, 6)))
    yield make_config(tokens, x, w((8, 8), 1), w((8, 4), 2), w((8, 4), 3), w_o=w((8, 8), 4), n_heads=2, n_kv_heads=1,
                      rope=RoPE(), qk_norm=True, alibi=True, window=3, softcap=2.5, mask_kind="causal", scale=0.7)


@pytest.mark.parametrize("number", range(5))
def test_the_unscaled_head_is_the_unscaled_configurations_head(number):
    """The Scaling page computes the unscaled side of a dot-product head on that head alone
    (scaling_views.unscaled_head): every intermediate equals the whole configuration's unscaled trace's, number for
    number."""
    from attn_ui.views import compute, scaling_views

    cfg = list(_configs_for_unscaled())[number]
    scaled, unscaled = compute.trace(cfg), compute.trace(replace(cfg, scale="none"))
    for h, (t, u) in enumerate(zip(scaled.heads, unscaled.heads, strict=True)):
        mine = scaling_views.unscaled_head(t)
        assert mine.divisor == 1.0
        for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "output"):
            assert np.array_equal(getattr(mine, name), getattr(u, name)), (number, h, name)
        assert mine.fully_masked_rows == u.fully_masked_rows


def test_a_negative_mean_is_written_with_the_minus_sign_of_every_other_number():
    """A fresh reviewer: the notebook preset's means read "-0.1909" (an ASCII hyphen) where every other number of the
    app writes "−". X negated: Q and K negated, their means negative, the scores as they were."""
    cfg = load_preset("seed000")
    at = app_on(replace(cfg, x=-cfg.x), "pages/scaling.py")
    (said,) = [plain(c) for c in notes(at) if plain(c).startswith("Your measured var(QKᵀ)")]
    assert f"−{Q.mean():.4f} (Q) and −{K.mean():.4f} (K)" in said, said
