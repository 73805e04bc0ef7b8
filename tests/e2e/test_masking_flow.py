"""Choose the causal mask on Masking; Step by step shows zero weights above the diagonal.

The expected weights are computed here with numpy from seed 000's matrices (the app opens on seed 000).
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page

from .helpers import chart_after, chart_texts, choose_radio, goto_page, heatmap_values, table_after_heading
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
    assert (weights[above] == 0).all()
    np.testing.assert_allclose(weights, expected, atol=1e-9)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-9)
    texts = np.array(chart_texts(chart_after(page, "Weights"))).reshape(3, 3)
    assert (texts[above] == "0.0000").all() and texts[0, 0] == "1.0000"
    masked = np.array(chart_texts(chart_after(page, "Masked scores"))).reshape(3, 3)
    assert (masked[above] == "−∞").all() and not np.isin(masked[~above], ["−∞"]).any()

    # drill-down for query 0 (the default): its softmax row is [1, 0, 0]
    rows = table_after_heading(page, "Softmax of row 0")
    keys = [r for r in rows if r[0][:1].isdigit()]
    assert [r[0] for r in keys] == ["0: input1", "1: input2", "2: input3"]
    assert [float(r[-1]) for r in keys] == [1.0, 0.0, 0.0]
    assert [r[1] for r in keys][1:] == ["−∞", "−∞"]
