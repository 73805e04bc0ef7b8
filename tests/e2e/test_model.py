"""A real model in Chromium, on a tiny random BERT made here (the server reads it through $ATTN_MODEL, no network):
type a sentence, open a head in the explorer, edit one W_Q cell, see Step by step move; at 1400 × 900, a thumbnail's
tooltip names its tokens, and a click on it shows that head's large view on the same screen."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from playwright.sync_api import Page, expect

import attn_models
from attn_core import run

from .. import tiny_bert
from . import helpers
from .helpers import (
    CHART,
    MAIN,
    chart_after,
    edit_grid_cell,
    expect_rerun,
    goto_page,
    grid_after,
    heatmap_values,
    open_app,
    tooltip_of,
)

pytestmark = pytest.mark.e2e
LAYER, HEAD, NEW = 1, 2, 3.0  # the head opened; W_Q[0, HEAD·d_k] becomes NEW (a cell in that head's slice)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory):
    return tiny_bert.build(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory, tiny_dir) -> Iterator[str]:
    """A server of its own whose A real model page reads the tiny checkpoint."""
    with helpers.model_server(tiny_dir, tmp_path_factory.mktemp("streamlit") / "streamlit.log") as url:
        yield url


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the st.selectbox labelled ``label``."""
    box = page.get_by_label(label, exact=True)
    with expect_rerun(page):
        box.click()
        page.get_by_role("option", name=option, exact=True).click()


def test_type_open_edit_and_step_by_step_moves(page: Page, model_server: str, tiny_dir) -> None:
    model = attn_models.load(str(tiny_dir))
    cfg = model.layer_config(tiny_bert.TRICKY, LAYER, head=HEAD)
    open_app(page, model_server)  # the root first: a fresh server's very first run of a page URL is a legacy run
    goto_page(page, "A real model")
    sentence = page.get_by_label("Sentence", exact=True)
    sentence.fill(tiny_bert.TRICKY)
    with expect_rerun(page):
        sentence.press("Enter")
    expect(page.get_by_text("10 WordPiece tokens")).to_be_visible()
    choose(page, "Layer", str(LAYER))
    choose(page, "Head", str(HEAD))
    with expect_rerun(page):
        page.get_by_role("button", name="Open this head in the explorer").click()
    expect(page.locator("h1").filter(has_text="Step by step")).to_be_visible()
    rows, _, shown = heatmap_values(chart_after(page, "Weights"))
    assert rows[0] == "0: [CLS]" and rows[-1] == "9: [SEP]"
    # the chart's accessible values carry 4 significant digits at this size
    np.testing.assert_allclose(shown, model.forward(tiny_bert.TRICKY).attentions[LAYER, HEAD], rtol=1e-3, atol=1e-7)

    goto_page(page, "Inputs & weights")
    col = HEAD * cfg.d_k
    edit_grid_cell(page, grid_after(page, "W_Q"), 0, col, f"{NEW:g}")
    goto_page(page, "Step by step")
    w_q = cfg.w_q.copy()
    w_q[0, col] = NEW
    expected = run(replace(cfg, w_q=w_q)).heads[HEAD].weights
    assert np.abs(expected - run(cfg).heads[HEAD].weights).max() > 1e-3  # the edit moves this head's weights
    np.testing.assert_allclose(heatmap_values(chart_after(page, "Weights"))[2], expected, rtol=1e-3, atol=1e-7)


#: the page's scroll offset: Streamlit scrolls an inner container, not the window (E2E_NOTES)
SCROLLED = "() => Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollTop), window.scrollY)"


def assert_shows(chart, weights: np.ndarray) -> None:
    """The large view's cells carry these weights (to the 2 digits the page prints: pages/model.py)."""
    np.testing.assert_allclose(heatmap_values(chart, "weight")[2].ravel(), weights.ravel(), rtol=0, atol=0.005)


def in_viewport(page: Page, chart) -> None:
    box, inner = chart.bounding_box(), page.evaluate("[window.innerWidth, window.innerHeight]")
    assert box["y"] >= 0 and box["y"] + box["height"] <= inner[1], (box, inner)
    assert box["x"] >= 0 and box["x"] + box["width"] <= inner[0], (box, inner)


def test_a_thumbnail_names_its_tokens_and_a_click_shows_its_head_on_the_same_screen(
        page: Page, model_server: str, tiny_dir) -> None:
    out = attn_models.load(str(tiny_dir)).forward(tiny_bert.TRICKY)
    n_heads, n = out.attentions.shape[1], out.attentions.shape[-1]  # 4 heads, 10 tokens
    page.set_viewport_size({"width": 1400, "height": 900})
    open_app(page, model_server)
    goto_page(page, "A real model")
    sentence = page.get_by_label("Sentence", exact=True)
    sentence.fill(tiny_bert.TRICKY)
    with expect_rerun(page):
        sentence.press("Enter")
    page.get_by_role("heading", name="Every layer and head").evaluate("e => e.scrollIntoView({block: 'start'})")
    grid = page.locator(f"{MAIN} {CHART}").first  # the model view, read where a learner left it
    panel = LAYER * n_heads + HEAD
    row = grid.locator("g.mark-rect").first.locator("path").nth(panel * n + 2)  # query 2's row of the thumbnail
    top = int(np.argmax(out.attentions[LAYER, HEAD, 2]))
    assert tooltip_of(page, row) == {
        "layer": str(LAYER), "head": str(HEAD),
        "query → key with the most weight": f"2: ##ize → {top}: {out.tokens[top]}",
        "weight": f"{out.attentions[LAYER, HEAD, 2, top]:.3f}",
        "mostly": attn_models.describe_head(out.attentions[LAYER, HEAD], out.tokens)}

    thumb = grid.locator("g.mark-image image").nth(panel).bounding_box()
    scrolled = page.evaluate(SCROLLED)
    with expect_rerun(page):
        page.mouse.click(thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2)
    large = page.locator(f"{MAIN} {CHART}").nth(1)
    assert_shows(large, out.attentions[LAYER, HEAD])
    # its description is under it: the heatmap, checked last, is what must be on the first screen
    expect(page.locator(f"{MAIN} p", has_text=f"Layer {LAYER}, head {HEAD}:")).to_be_attached()
    assert page.evaluate(SCROLLED) == scrolled  # nothing scrolled: the large view stands beside the grid
    in_viewport(page, large)

    choose(page, "Head", str(HEAD + 1))  # the boxes above the large view: the same place
    assert_shows(large, out.attentions[LAYER, HEAD + 1])
    assert page.evaluate(SCROLLED) == scrolled
    in_viewport(page, large)
