"""Choose the causal mask on Masking; Step by step shows zero weights above the diagonal, drawn grey as masked:
a screen reader and the tooltip say "masked" for those cells, not a number.

The expected weights are computed here with numpy from seed 000's matrices (the app opens on seed 000).
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page

from .helpers import (
    chart_after,
    chart_cell,
    chart_items,
    chart_texts,
    choose_radio,
    goto_page,
    heatmap_values,
    table_after_heading,
    tooltip_of,
)
from .seed000 import W_K, W_Q, X

pytestmark = pytest.mark.e2e


def causal_weights() -> np.ndarray:  # [3, 3]
    """softmax(QKᵀ/√3 with -inf above the diagonal), written out independently of attn_core."""
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(3.0)
    scores[np.triu_indices(3, k=1)] = -np.inf
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_causal_mask_zeroes_weights_above_diagonal_on_step_by_step(app_page: Page) -> None:
    page = app_page
    expected = causal_weights()
    above = np.triu(np.ones((3, 3), dtype=bool), k=1)

    goto_page(page, "Masking")
    choose_radio(page, "Mask", "causal")
    goto_page(page, "Step by step")

    _, _, weights = heatmap_values(chart_after(page, "Weights"))
    assert np.isnan(weights[above]).all()  # masked: no number in their accessible values (below)
    np.testing.assert_allclose(weights, np.where(above, np.nan, expected), atol=1e-9)
    np.testing.assert_allclose(np.nansum(weights, axis=1), 1.0, atol=1e-9)
    texts = np.array(chart_texts(chart_after(page, "Weights"))).reshape(3, 3)
    assert (texts[above] == "0.0000").all() and texts[0, 0] == "1.0000"
    masked = np.array(chart_texts(chart_after(page, "Masked scores"))).reshape(3, 3)
    assert (masked[above] == "−∞").all() and not np.isin(masked[~above], ["−∞"]).any()

    # what a screen reader reads (the cell's aria-label) and the tooltip: "masked" for a masked cell
    for name, numbers_drawn in (("Weights", texts), ("Masked scores", masked)):
        chart = chart_after(page, name)
        values = np.array([item["value"] for item in chart_items(chart)]).reshape(3, 3)
        assert (values[above] == "masked").all() and not np.isin(values[~above], ["masked"]).any()
        labels = chart.locator("g.mark-rect path[aria-label]").evaluate_all("es => es.map(e => e.ariaLabel)")
        assert labels[1] == "key: 1: input2; query: 0: input1; value: masked"
        drawn = chart.locator("g.mark-text text[aria-label]").evaluate_all("es => es.map(e => e.ariaLabel)")
        assert drawn[1] == "key: 1: input2; query: 0: input1; text: masked"  # not the "−∞" or 0 drawn on it
        assert drawn[3] == f"key: 0: input1; query: 1: input2; text: {numbers_drawn[1, 0]}"  # unmasked: its number
        field = {"Weights": "weight", "Masked scores": "score"}[name]  # the tooltip names what the number is
        assert tooltip_of(page, chart_cell(chart, "1: input2", "0: input1")) == {
            "query": "0: input1", "key": "1: input2", field: "masked"}
        tip = tooltip_of(page, chart_cell(chart, "0: input1", "1: input2"))[field]  # every digit of the number drawn
        assert abs(float(tip.replace("−", "-")) - float(numbers_drawn[1, 0].replace("−", "-"))) <= 5e-5

    # drill-down for query 0 (the default): its softmax row is [1, 0, 0]
    rows = table_after_heading(page, "Softmax of row 0")
    keys = [r for r in rows if r[0][:1].isdigit()]
    assert [r[0] for r in keys] == ["0: input1", "1: input2", "2: input3"]
    assert [float(r[-1]) for r in keys] == [1.0, 0.0, 0.0]
    assert [r[1] for r in keys][1:] == ["−∞", "−∞"]
