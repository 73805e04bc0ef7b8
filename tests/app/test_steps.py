"""Step by step: every intermediate, the drill-down, heads, masks, precision, bad configurations.

Expected numbers are computed here with numpy written out independently of attn_core, or are the seeds'
printed output (tests/seeds.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import PRESETS, load_preset, make_config

from .. import seeds
from .apptools import edit_cells, formulas, new_app, notes, plain

STEPS = "pages/steps.py"
SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V = (
    np.array(m, dtype=float) for m in (seeds.SEED000_X, seeds.SEED000_W_Q, seeds.SEED000_W_K, seeds.SEED000_W_V)
)
SEED000_OUT = np.array(seeds.SEED000_OUTPUT)  # seed 000's printed attention
SEED004_SOFTMAX = np.array(seeds.SEED004_SOFTMAX)  # seed 004's printed softmax of the raw scores
SEED002_WEIGHTS = np.array(seeds.SEED002_WEIGHTS)  # seed 002's printed causal attention
SEED002_OUT = np.array(seeds.SEED002_NEW_V)


# ---- an independent reference ---------------------------------------------------------------------


def reference(x, w_q, w_k, w_v, divisor=None, allowed=None):
    """Every intermediate of softmax(mask(QKᵀ/s))V, written out with plain numpy (allowed: True = may attend)."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T
    scaled = scores / (np.sqrt(q.shape[1]) if divisor is None else divisor)
    masked = scaled if allowed is None else np.where(allowed, scaled, -np.inf)
    weights = np.zeros_like(masked)
    for i, row in enumerate(masked):
        keep = np.isfinite(row)
        if keep.any():
            e = np.exp(row[keep] - row[keep].max())
            weights[i, keep] = e / e.sum()
    return {"Q": q, "K": k, "V": v, "scores": scores, "scaled": scaled, "masked": masked, "weights": weights,
            "output": weights @ v}


# ---- reading the page -----------------------------------------------------------------------------


def steps_app(cfg=None, *, preset: str | None = None, before=None) -> AppTest:
    """The app on Step by step, with the configuration ``cfg`` (or a preset's) put in session state."""
    at = new_app()
    if preset is not None:
        cfg = load_preset(preset)
    if cfg is not None:
        at.session_state["config"] = cfg
    if before is not None:
        before(at)
    at.switch_page(STEPS).run()
    assert not at.exception, at.exception
    return at


def elements(node):
    """Every element of the page in order (blocks flattened)."""
    if type(node).__name__ in ("Block", "SpecialBlock") or (hasattr(node, "children") and not hasattr(node, "proto")):
        for child in node.children.values():
            yield from elements(child)
    else:
        yield node


def charts(at: AppTest) -> dict[str, pd.DataFrame]:
    """Each heatmap's data, by the bold title written above it ("Q", "Scores QKᵀ", "Weights", ...)."""
    found, title = {}, None
    for el in elements(at.main):
        if el.type == "markdown":  # the last paragraph in bold of a block (a step's heading may come first)
            title = next((para.split("**")[1] for para in reversed(el.value.split("\n\n")) if para.startswith("**")),
                         title)
        elif el.type == "vega_lite_chart":
            found[title] = pa.ipc.open_stream(el.proto.datasets[0].data.data).read_all().to_pandas()
    return found


def grid(df: pd.DataFrame, column: str = "value") -> np.ndarray:
    """A chart's long data back to its matrix."""
    out = np.empty((df["row_i"].max() + 1, df["col_i"].max() + 1), dtype=object)
    out[df["row_i"], df["col_i"]] = df[column]
    return out if column == "text" else out.astype(float)


def tables(at: AppTest) -> dict[str, list[list[str]]]:
    """The drill-down's markdown tables by section letter ("a", "b", "c"): rows of cells, header dropped. A table is
    drawn in its section's Markdown, or (a long one, in a box that scrolls) in an element of its own."""
    found, section = {}, None
    for el in elements(at.main):
        if el.type != "markdown":
            continue
        for block in el.value.split("\n\n"):  # paragraphs: a heading, a formula, a table, ...
            if heading := re.match(r"### (\S+)", block):  # a section's heading
                section = heading[1]
            elif block.startswith("| ") and section:
                lines = block.splitlines()[2:]
                found[section] = [[plain(c.strip()) for c in line.strip("|").split(" | ")] for line in lines]
    return found


def numbers(text: str) -> list[float]:
    """The numbers in a text the app wrote (its minus is "−")."""
    return [float(s.replace("\u2212", "-")) for s in re.findall(r"[-\u2212]?\d+(?:\.\d+)?(?:e[+-]\d+)?", text)]


def page_text(at: AppTest) -> str:
    return "\n".join(str(getattr(el, "value", "")) for el in elements(at.main))


# ---- tests ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_runs(preset):
    at = steps_app(preset=preset)
    cfg = load_preset(preset)
    found = charts(at)
    assert not at.error
    assert at.title[0].value == "Step by step"
    scores = {"dot": "Scores QKᵀ", "general": "Scores (Q W_a) Kᵀ", "additive": "Scores v_a · tanh(Q W_1 + K W_2)"}
    assert {scores[cfg.score], "Scaled scores", "Weights", "Output"} <= set(found) or cfg.n_heads > 1
    assert ("Masked scores" in found) == (cfg.mask_kind != "none")
    for df in found.values():
        assert not df["value"].isna().any()
    assert len(at.selectbox(key="steps_query").options) == cfg.n_q  # the queries: Y's rows with cross-attention


def test_seed000_every_intermediate_and_output_row():
    at = steps_app(preset="seed000")
    ref = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)
    found = charts(at)
    for title, name in (("Q", "Q"), ("K", "K"), ("V", "V"), ("Scores QKᵀ", "scores"), ("Scaled scores", "scaled"),
                        ("Weights", "weights"), ("Output", "output")):
        np.testing.assert_allclose(grid(found[title]), ref[name], rtol=1e-12, err_msg=title)
    np.testing.assert_allclose(grid(found["Output"]), SEED000_OUT, rtol=1e-6)
    assert list(grid(found["Output"], "text")[0]) == ["1.8639", "6.3194", "1.7042"]
    np.testing.assert_allclose(grid(found["Row sums Σⱼ aᵢⱼ"])[:, 0], 1.0, rtol=1e-12)
    assert "Masked scores" not in found
    assert not at.info  # one head and W_O the identity: nothing to say about W_O
    # the divisor is named with its value, and the drill-down's weighted values sum to seed 000's row
    assert any(r"\sqrt{d_k} = \sqrt{3} = 1.7321" in f for f in formulas(at))
    assert tables(at)["c"][-1][-1] == "**[1.8639, 6.3194, 1.7042]**"
    assert "[1.8639, 6.3194, 1.7042] = output row 0" in plain(at.success[0].value)


def test_seed004_unscaled_shows_raw_scores():
    at = steps_app(preset="seed004_unscaled")
    found = charts(at)
    np.testing.assert_array_equal(grid(found["Scores QKᵀ"]), seeds.SEED004_SCORES)
    np.testing.assert_array_equal(grid(found["Scaled scores"]), grid(found["Scores QKᵀ"]))
    np.testing.assert_allclose(grid(found["Weights"]), SEED004_SOFTMAX, rtol=1e-4, atol=1e-9)
    assert any(r"1 \text{ (no scaling)}" in f for f in formulas(at))


@pytest.mark.parametrize("i", [0, 1, 2])
def test_choosing_a_query_writes_out_its_row(i):
    at = steps_app(preset="seed000")
    at.selectbox(key="steps_query").set_value(i).run()
    assert not at.exception
    assert at.session_state["query"] == i
    ref = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)
    q, k, v, w = ref["Q"], ref["K"], ref["V"], ref["weights"]
    t = tables(at)
    # a: q_i·k_j as a sum of products of the seed's integers, with the total
    for j, row in enumerate(t["a"]):
        products = " + ".join(f"{int(a)}·{int(b)}" for a, b in zip(q[i], k[j], strict=True))
        assert row[2] == f"{products} = {int(q[i] @ k[j])}"
        assert numbers(row[3]) == pytest.approx([q[i] @ k[j] / np.sqrt(3)], abs=5e-5)
    # b: exp(s_j − max), their sum, each weight
    s = q[i] @ k.T / np.sqrt(3)
    e = np.exp(s - s.max())
    for j, row in enumerate(t["b"][:-1]):
        assert [numbers(c)[0] for c in row[1:]] == pytest.approx([s[j], s[j] - s.max(), e[j], w[i, j]], abs=5e-5)
    assert float(t["b"][-1][3].strip("*")) == pytest.approx(e.sum(), abs=5e-5)
    assert float(t["b"][-1][4].strip("*")) == pytest.approx(1.0)
    # c: the weighted value rows weights[i, j]·v_j and their sum, equal to output_i
    for j, row in enumerate(t["c"][:-1]):
        assert numbers(row[3]) == pytest.approx(w[i, j] * v[j], abs=5e-5)
    total = numbers(t["c"][-1][3])
    assert total == pytest.approx(sum(w[i, j] * v[j] for j in range(3)), abs=5e-5)
    assert total == pytest.approx(SEED000_OUT[i], abs=5e-5)
    assert "✓" in plain(at.success[0].value)


def test_seed002_causal_masks_above_the_diagonal():
    at = steps_app(preset="seed002_causal")
    found = charts(at)
    above = np.triu(np.ones((4, 4), dtype=bool), k=1)
    text = grid(found["Masked scores"], "text")
    assert (text[above] == "−∞").all() and not (text[~above] == "−∞").any()
    weights = grid(found["Weights"])
    assert (weights[above] == 0).all()
    assert grid(found["Weights"], "masked")[above].all()  # drawn grey as masked
    np.testing.assert_allclose(weights, SEED002_WEIGHTS, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grid(found["Output"]), SEED002_OUT, rtol=1e-6, atol=1e-8)
    # the drill-down of "is" (query 2): the printed weights, the masked key spelled out
    at.selectbox(key="steps_query").set_value(2).run()
    rows = tables(at)["b"]
    assert [r[4] for r in rows[:-1]] == ["0.5079", "0.2753", "0.2168", "0"]
    assert tables(at)["a"][3][3].endswith("→ −∞ (masked)")


def test_causal_mask_on_seed000():
    cfg = replace(load_preset("seed000"), mask_kind="causal")
    at = steps_app(cfg)
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    ref = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, allowed=allowed)
    found = charts(at)
    assert (grid(found["Masked scores"], "text")[~allowed] == "−∞").all()
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-12)
    assert any("Causal mask" in plain(el) for el in notes(at))


def test_fully_masked_row_is_zero_not_nan():
    allowed = np.array([[True, True, True], [False, False, False], [True, False, True]])
    cfg = replace(load_preset("seed000"), mask_kind="custom", custom_mask=allowed)
    at = steps_app(cfg)
    found = charts(at)
    ref = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, allowed=allowed)
    np.testing.assert_array_equal(grid(found["Weights"])[1], [0, 0, 0])
    np.testing.assert_array_equal(grid(found["Output"])[1], [0, 0, 0])
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-12)
    assert grid(found["Row sums Σⱼ aᵢⱼ"])[:, 0].tolist() == pytest.approx([1, 0, 1])
    assert any("1: input2" in plain(el.value) and "not NaN" in plain(el.value) for el in at.info)
    at.selectbox(key="steps_query").set_value(1).run()
    assert any("Every key is masked for this query" in plain(el.value) for el in at.info)
    assert [r[4] for r in tables(at)["b"][:-1]] == ["0", "0", "0"]


def test_heads_selector_shows_that_heads_trace():
    at = steps_app(preset="seed003_heads")
    cfg = load_preset("seed003_heads")
    head = at.selectbox(key="steps_head")
    assert head.options == [f"head {h}" for h in range(8)]
    head.set_value(5).run()
    assert not at.exception
    assert at.session_state["head"] == 5
    cols = slice(5 * 64, 6 * 64)
    ref = reference(cfg.x, cfg.w_q[:, cols], cfg.w_k[:, cols], cfg.w_v[:, cols])
    found = charts(at)
    np.testing.assert_allclose(grid(found["Q (head 5)"]), ref["Q"], rtol=1e-12)
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-10)
    np.testing.assert_allclose(grid(found["Output"]), ref["output"], rtol=1e-10)
    assert any(r"\sqrt{64} = 8" in f for f in formulas(at))
    assert "columns 320…383 of W_Q" in page_text(at)
    assert any("head 5 of 8" in plain(el.value) and "W_O" in plain(el.value) for el in at.info)


def test_head_chosen_elsewhere_opens_here():
    """The Multi-head page sends the learner here by setting the HEAD state key."""
    def choose_head(at):
        at.session_state["head"] = 6

    at = steps_app(preset="seed003_heads", before=choose_head)
    assert at.selectbox(key="steps_head").value == 6
    assert "Q (head 6)" in charts(at)


def test_overflowing_configuration_shows_a_message():
    cfg = load_preset("seed000")
    at = steps_app(replace(cfg, x=np.full_like(cfg.x, 1e200)))
    assert not at.exception
    assert "cannot be computed" in plain(at.error[0].value)
    assert "overflowed" in plain(at.error[0].value)
    assert not at.get("vega_lite_chart")


def test_precision_applies_to_every_number():
    at = steps_app(preset="seed000")
    at.slider(key="steps_precision").set_value(2).run()
    assert at.session_state["precision"] == 2
    found = charts(at)
    assert list(grid(found["Output"], "text")[0]) == ["1.86", "6.32", "1.70"]
    assert list(grid(found["Weights"], "text")[0]) == ["0.14", "0.43", "0.43"]
    assert tables(at)["c"][-1][-1] == "**[1.86, 6.32, 1.7]**"
    assert any(r"\sqrt{3} = 1.73" in f for f in formulas(at))


def test_custom_divisor_is_named():
    at = steps_app(replace(load_preset("seed000"), scale=2.5))
    ref = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, divisor=2.5)
    np.testing.assert_allclose(grid(charts(at)["Scaled scores"]), ref["scaled"], rtol=1e-12)
    assert any(r"2.5 \text{ (a divisor you chose)}" in f for f in formulas(at))


def test_rejected_grid_value_keeps_the_last_valid_result():
    at = new_app("pages/inputs.py")
    edit_cells(at, "x", {0: {1: "abc"}})
    at.switch_page(STEPS).run()
    assert not at.exception
    assert "Showing the last valid values" in plain(at.warning[0].value)
    np.testing.assert_allclose(grid(charts(at)["Output"]), SEED000_OUT, rtol=1e-6)


def test_large_configuration_drops_cell_text_and_keeps_one_query():
    rng = np.random.default_rng(7)
    n, d = 64, 4
    base = load_preset("seed000")
    cfg = replace(base, tokens=tuple(f"t{i}" for i in range(n)), x=rng.standard_normal((n, d)),
                  is_pad=(False,) * n, custom_mask=np.ones((n, n), dtype=bool), mask_kind="causal")
    at = steps_app(cfg)
    ref = reference(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, allowed=np.tril(np.ones((n, n), dtype=bool)))
    found = charts(at)
    np.testing.assert_allclose(grid(found["Weights"]), ref["weights"], rtol=1e-10, atol=1e-15)
    scores_chart = next(el for el in at.get("vega_lite_chart") if "steps_scores_chart" in el.proto.id)
    spec = json.loads(scores_chart.proto.spec)
    layers = [layer for layer in spec.get("layer", [spec]) if not layer.get("name", "").startswith("focus_")]
    assert [layer["mark"]["type"] for layer in layers] == ["rect"]  # 64 × 64 cells: no numbers (then the focus layers)
    t = tables(at)
    assert len(t["a"]) == 16 and len(t["c"]) == 17  # one query's row, a page of 16 keys (+ the sum of all n)
    assert numbers(t["c"][-1][3]) == pytest.approx(ref["output"][0], abs=5e-5)


def test_many_keys_are_shown_a_page_at_a_time_and_the_sums_cover_every_key():
    """70 keys: the drill-down lists 16 at a time (the browser stays light), its Σ rows still sum all 70."""
    from attn_core import make_config

    rng = np.random.default_rng(11)
    x, w_q, w_k = rng.normal(size=(70, 4)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    w_v = rng.normal(size=(4, 2))
    at = steps_app(make_config([f"w{i}" for i in range(70)], x, w_q, w_k, w_v))
    ref = reference(x, w_q, w_k, w_v)
    page = at.selectbox(key="steps_keys_page")
    assert page.options == ["keys 0–15: 0: w0 … 15: w15", "keys 16–31: 16: w16 … 31: w31",
                            "keys 32–47: 32: w32 … 47: w47", "keys 48–63: 48: w48 … 63: w63",
                            "keys 64–69: 64: w64 … 69: w69"]
    got = tables(at)
    assert len(got["a"]) == 16 and len(got["b"]) == 17 and len(got["c"]) == 17  # 16 keys (+ the Σ row)

    # 70 × 70 scores drawn in blocks: the scaled scores would be the same picture, so their range is said instead
    assert list(charts(at)) == ["Q", "Scores QKᵀ", "Weights", "Output"]  # Q, K or V chosen above them
    said = next(plain(m.value) for m in at.markdown if "**Scaled scores**, shape 70 × 70" in plain(m.value))
    lo, hi = re.search(r"\*\*Scaled scores\*\*, shape 70 × 70: from (\S+) to (\S+)\.", said).groups()
    assert float(lo.replace("−", "-")) == pytest.approx(ref["scaled"].min(), abs=5e-5)
    assert float(hi.replace("−", "-")) == pytest.approx(ref["scaled"].max(), abs=5e-5)

    page.set_value(4).run()
    assert not at.exception
    got = tables(at)
    assert [row[0] for row in got["a"]] == [f"{j}: w{j}" for j in range(64, 70)]
    heading = "### a · Scores of query 0: w0 with keys 64–69 (of 70)\n"  # then its formula, in the same Markdown
    assert any(plain(m.value).startswith(heading) for m in at.markdown)
    weights = [numbers(row[4])[0] for row in got["b"][:-1]]
    np.testing.assert_allclose(weights, ref["weights"][0, 64:70], atol=1e-4)
    assert got["b"][-1][0] == "**Σ (all 70 keys)**"
    assert numbers(got["b"][-1][4]) == [1.0]  # the weights of every key sum to 1
    np.testing.assert_allclose(numbers(got["c"][-1][3]), ref["output"][0], atol=1e-4)


def test_after_the_query_selectbox_a_click_on_the_cell_clicked_before_counts_again():
    """A heatmap's click is news only when it differs from its last one: choosing the query in the selectbox draws
    the clickable heatmaps afresh, so clicking the cell clicked before picks its query again."""
    at = steps_app(load_preset("seed000"))

    def clickable() -> set[str]:
        return {el.proto.id for el in at.get("vega_lite_chart") if "_scores_chart" in el.proto.id
                or "_weights_chart" in el.proto.id}

    before = clickable()
    assert len(before) == 2
    at.selectbox(key="steps_query").set_value(2).run()
    assert at.session_state["query"] == 2
    after = clickable()
    assert len(after) == 2 and not before & after  # new charts: their selection starts empty
    assert not at.exception


@pytest.mark.parametrize(("scale", "said"), [
    ("sqrt_dk", "Every score is divided by the same number s = 1.732, larger than 1, so the softmax is less peaked."),
    (0.5, "Every score is divided by the same number s = 0.5, smaller than 1, so the softmax is more peaked."),
    ("none", "Every score is divided by s = 1: the scaled scores are the scores."),
])
def test_the_scaled_scores_note_says_what_the_divisor_does(scale, said):
    """Each claim checked on seed 000's numbers: the largest weight of every row grows (s < 1), stays (s = 1) or
    shrinks (s > 1) against the unscaled softmax."""
    at = steps_app(replace(load_preset("seed000"), scale=scale))
    captions = [plain(c) for c in notes(at)]
    assert said in captions, captions
    divisor = {"sqrt_dk": np.sqrt(3), "none": 1.0}.get(scale, scale)
    plain_top = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, divisor=1.0)["weights"].max(axis=1)
    top = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, divisor=divisor)["weights"].max(axis=1)
    assert np.all(np.sign(top - plain_top) == np.sign(1 - divisor))


def test_the_weights_caption_names_rows_that_sum_to_0():
    custom = np.ones((3, 3), dtype=bool)
    custom[2] = False
    at = steps_app(replace(load_preset("seed000"), mask_kind="custom", custom_mask=custom))
    assert any(plain(c).startswith("Each weight is between 0 and 1, and each row sums to 1 (see the row sums) "
                                         "except a row whose every key is masked: it sums to 0.") for c in notes(at))


@pytest.mark.parametrize("tokens, said", [(["a"], "1 token · d_model 2"), (["a", "b"], "2 tokens · d_model 2")])
def test_the_caption_counts_tokens_in_words(tokens, said):
    """One token reads "1 token", not "1 tokens"."""
    n = len(tokens)
    at = new_app("pages/steps.py")
    at.session_state["config"] = make_config(tokens, np.arange(2.0 * n).reshape(n, 2), np.eye(2), np.eye(2), np.eye(2))
    at.run()
    assert not at.exception
    assert any(plain(c.value).startswith(said) for c in at.caption), [c.value for c in at.caption]
