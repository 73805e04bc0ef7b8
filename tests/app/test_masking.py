"""AppTest of the Masking page: every mask kind, masked weights, fully masked rows, naive vs stable softmax.

Expected numbers are computed here with numpy from seed 000's matrices (tests/seeds.py, as test_scaling.py's
arrays).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset

from ..seeds import SEED002_SCALED
from .apptools import new_app, plain
from .test_scaling import S, V, has_heatmap, heatmaps

PAGE = "pages/masking.py"
SCALED = S / np.sqrt(3)  # seed 000's scaled scores
LABELS = ["0: input1", "1: input2", "2: input3"]


def masked_softmax(a: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Softmax over the allowed entries of each row; a row with none allowed is all zeros."""
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        if allowed[i].any():
            e = np.exp(a[i, allowed[i]] - a[i, allowed[i]].max())
            out[i, allowed[i]] = e / e.sum()
    return out


def masked_weights(at: AppTest) -> tuple[np.ndarray, np.ndarray]:
    """Values and grey cells of the masked weights: the last heatmap but one (the row sums come last)."""
    values, masked, _ = heatmaps(at)[-2]
    return values, masked


def row_sums(at: AppTest) -> np.ndarray:
    values, _, _ = heatmaps(at)[-1]
    assert values.shape[1] == 1  # the "Σ row" column
    return values[:, 0]


def choose(at: AppTest, kind: str) -> AppTest:
    at.radio(key="masking_kind").set_value(kind).run()
    assert not at.exception
    assert at.session_state["config"].mask_kind == kind
    return at


def custom_grid_key(at: AppTest) -> str:
    return next(d.key for d in at.dataframe if d.key and d.key.startswith("masking_custom_"))


@pytest.fixture
def page() -> AppTest:
    at = new_app(PAGE)
    assert not at.exception
    return at


def test_mask_radio_is_labelled_for_the_browser_tests(page):
    radio = page.radio(key="masking_kind")
    assert radio.label == "Mask"
    assert list(radio.options) == ["none", "causal", "padding", "custom"]
    assert radio.value == "none"


def test_no_mask_weights_are_plain_softmax(page):
    values, masked = masked_weights(page)
    assert np.allclose(values, masked_softmax(SCALED, np.ones((3, 3), bool)))
    assert not masked.any()
    assert np.allclose(row_sums(page), 1.0)


def test_causal_weights_are_exactly_zero_above_the_diagonal(page):
    choose(page, "causal")
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    values, masked = masked_weights(page)
    assert np.all(values[np.triu_indices(3, k=1)] == 0.0)
    assert np.array_equal(masked, ~allowed)  # drawn grey, not as a small weight
    assert np.allclose(values, masked_softmax(SCALED, allowed))
    assert np.allclose(row_sums(page), 1.0)
    boolean, boolean_grey, _ = heatmaps(page)[0]
    assert np.array_equal(boolean, allowed.astype(float)) and np.array_equal(boolean_grey, ~allowed)
    _, additive_grey, additive_text = heatmaps(page)[1]
    assert np.array_equal(additive_grey, ~allowed)
    assert set(additive_text[~allowed]) == {"−∞"}
    _, plus_grey, plus_text = heatmaps(page)[3]  # scaled scores + M
    assert set(plus_text[~allowed]) == {"−∞"} and not plus_grey[allowed].any()
    assert has_heatmap(page, SCALED)


def test_causal_mask_reaches_step_by_step(page):
    choose(page, "causal")
    page.switch_page("pages/steps.py").run()
    assert not page.exception
    expected = masked_softmax(SCALED, np.tril(np.ones((3, 3), dtype=bool)))
    assert has_heatmap(page, expected) and has_heatmap(page, expected @ V)


def test_padding_columns_are_zero(page):
    choose(page, "padding")
    page.multiselect(key="masking_pad").set_value([2]).run()
    assert not page.exception
    assert page.session_state["config"].is_pad == (False, False, True)
    values, masked = masked_weights(page)
    assert np.all(values[:, 2] == 0.0) and masked[:, 2].all() and not masked[:, :2].any()
    assert np.allclose(values, masked_softmax(SCALED, np.array([[True, True, False]] * 3)))
    assert np.allclose(row_sums(page), 1.0)


def test_custom_grid_with_an_all_false_row_gives_zero_weights_and_a_message(page):
    choose(page, "custom")
    key = custom_grid_key(page)
    page.session_state[key] = {"edited_rows": {0: {label: False for label in LABELS}},
                               "added_rows": [], "deleted_rows": []}
    page.run()
    assert not page.exception
    allowed = np.array([[False, False, False], [True, True, True], [True, True, True]])
    assert np.array_equal(page.session_state["config"].custom_mask, allowed)
    assert custom_grid_key(page) != key  # the grid restarts from the new configuration
    assert any("Every key is masked for query 0: input1" in plain(i.value) for i in page.info)
    values, masked = masked_weights(page)
    assert not np.isnan(values).any()
    assert np.all(values[0] == 0.0) and masked[0].all()
    assert np.allclose(values, masked_softmax(SCALED, allowed))
    assert np.allclose(row_sums(page), [0.0, 1.0, 1.0])
    # the stable-softmax demo on that row: naive 0 / 0 = NaN, stable zeros
    table = page.main.dataframe[-1].value
    assert list(table["naive weight"]) == ["⚠ NaN"] * 3 and list(table["stable weight"]) == ["0"] * 3  # whole: "0"


def test_custom_buttons_fill_the_grid(page):
    choose(page, "custom")
    next(b for b in page.button if b.label == "Start from causal").click().run()
    assert np.array_equal(page.session_state["config"].custom_mask, np.tril(np.ones((3, 3), dtype=bool)))
    assert np.all(masked_weights(page)[0][np.triu_indices(3, k=1)] == 0.0)
    next(b for b in page.button if b.label == "Block every pair").click().run()
    assert not page.session_state["config"].custom_mask.any()
    assert np.all(masked_weights(page)[0] == 0.0) and np.allclose(row_sums(page), 0.0)


def test_reopened_page_shows_the_configuration_mask(page):
    choose(page, "padding")
    page.multiselect(key="masking_pad").set_value([0, 1]).run()
    page.switch_page("pages/overview.py").run()
    page.switch_page(PAGE).run()
    assert page.radio(key="masking_kind").value == "padding"
    assert page.multiselect(key="masking_pad").value == [0, 1]
    page.session_state["config"] = load_preset("seed002_causal")
    page.run()
    assert page.radio(key="masking_kind").value == "causal"


def test_naive_softmax_overflows_where_the_score_is_above_709(page):
    assert page.select_slider(key="masking_factor").value == 1000
    row = 1000 * SCALED[0]  # [1154.7, 2309.4, 2309.4]: every exp overflows
    table = page.main.dataframe[-1].value
    over = row > np.log(np.finfo(np.float64).max)
    assert over.all()
    assert list(table["naive exp(x)"]) == ["⚠ +inf"] * 3 and list(table["naive weight"]) == ["⚠ NaN"] * 3
    e = np.exp(row - row.max())
    assert np.allclose(table["stable weight"].astype(float), e / e.sum(), atol=1e-4)
    assert any("overflows for key 0: input1, 1: input2, 2: input3" in plain(m.value) for m in page.markdown)


def test_small_factor_does_not_overflow(page):
    page.select_slider(key="masking_factor").set_value(1).run()
    table = page.main.dataframe[-1].value
    assert not any("+inf" in t or "⚠" in t for t in table["naive exp(x)"])
    assert np.allclose(table["naive weight"].astype(float), np.exp(SCALED[0]) / np.exp(SCALED[0]).sum(), atol=1e-4)
    assert any("still works" in plain(m.value) for m in page.markdown)


def test_causal_row_of_seed002_overflows_only_where_allowed():
    at = new_app()
    at.session_state["config"] = load_preset("seed002_causal")
    at.switch_page(PAGE).run()
    at.selectbox(key="masking_query").set_value(3).run()
    assert not at.exception
    # seed 002's printed scaled row 3, ×1000: [514.7, -2189.3, -1540.0, 1802.7]
    row = 1000 * np.array(SEED002_SCALED[3])
    table = at.main.dataframe[-1].value
    assert list(table["naive exp(x)"] == "⚠ +inf") == list(row > 709.78)  # marked where it overflows
    assert list(table["naive weight"])[3] == "⚠ NaN"
    e = np.exp(row - row.max())
    assert np.allclose(table["stable weight"].astype(float), e / e.sum(), atol=1e-4)


def test_every_key_masked_for_several_queries_is_said_in_the_plural(page):
    """Padding on every token masks every key of every query: "queries …, Their scores", not "query …, Its"."""
    cfg = page.session_state["config"]
    page.session_state["config"] = replace(cfg, mask_kind="padding", is_pad=(True,) * cfg.n_seq)
    page.run()
    assert not page.exception
    said = [plain(i.value) for i in page.info if "Every key is masked" in plain(i.value)]
    assert said == ["**Every key is masked for queries 0: input1, 1: input2, 2: input3.** Their scores are all −∞, and "
                    "softmax of such a row would be 0 / 0 = NaN. Here each gets weights of all zeros (row sum 0) and "
                    "an output row of zeros: these queries receive nothing."], said
