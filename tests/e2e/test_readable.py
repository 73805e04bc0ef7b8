"""Charts readable at a glance (issue 28), in Chromium at 1,400 × 900: A real model's head (all-MiniLM-L6-v2, layer
2, head 0, the issue's sentence) opened in the explorer; Step by step then draws every chart inside the main column,
its numbers in one notation per chart and its text at least 12 px."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .. import minilm
from .helpers import MAIN, chart_after, charts, expect_rerun, model_server, open_app, screenshot, sized_page

pytestmark = pytest.mark.e2e
SENTENCE = "Attention lets every word look at every other word in the sentence."
LAYER, HEAD = 2, 0
NUMBER = re.compile(r"(<|>−)?−?\d+(\.\d+)?(e−?\d+)?")  # a number as a chart writes it


@pytest.fixture(scope="module")
def minilm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own whose A real model page reads all-MiniLM-L6-v2's real weights (tests/minilm.py)."""
    with model_server(minilm.folder(), tmp_path_factory.mktemp("streamlit") / "streamlit.log") as url:
        yield url


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("E2E_SCREENSHOTS") or tmp_path)


def chart_boxes(page: Page) -> list[tuple[str, float, float]]:
    """(aria-label, left, right) of every chart's drawing (its SVG or canvas) on the page, in page pixels."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => {
        const d = c.querySelector('svg.marks, canvas.marks') || c; const r = d.getBoundingClientRect();
        return [(c.querySelector('[aria-label]') || c).getAttribute('aria-label') || '', r.left, r.right]; })""")


def smallest_chart_text(page: Page) -> float:
    """The smallest font size (px) of any text Vega drew in an SVG chart on the page."""
    return page.evaluate("""() => Math.min(...[...document.querySelectorAll(
        '[data-testid="stVegaLiteChart"] svg.marks text')].filter(t => t.textContent.trim()).map(
        t => parseFloat(getComputedStyle(t).fontSize)))""")


def test_the_real_model_head_in_the_explorer_fits_the_main_column(page: Page, minilm_server: str, shots: Path):
    page.set_viewport_size({"width": 1400, "height": 900})
    open_app(page, f"{minilm_server}/model")
    sentence = page.get_by_label("Sentence", exact=True)
    expect(sentence).to_be_visible(timeout=60_000)  # the model is read once per server
    sentence.fill(SENTENCE)
    with expect_rerun(page):
        sentence.press("Enter")
    layer = page.get_by_label("Layer", exact=True)
    with expect_rerun(page):
        layer.click()
        page.keyboard.type(str(LAYER))
        page.keyboard.press("Enter")
    expect(page.locator(MAIN)).to_contain_text(f"Layer {LAYER}, head {HEAD}")
    with expect_rerun(page):
        page.get_by_role("button", name="Open this head in the explorer").click()
    expect(page.locator("h1").filter(has_text="Step by step")).to_be_visible()
    weights = chart_after(page, "Weights")
    expect(weights).to_contain_text("[SEP]")

    main = page.locator(MAIN).bounding_box()
    pad = page.evaluate("(sel) => parseFloat(getComputedStyle(document.querySelector(sel)).paddingRight)", MAIN)
    right = main["x"] + main["width"] - pad  # the main column's right edge
    boxes = chart_boxes(page)
    assert len(boxes) >= 8 and charts(page).count() == len(boxes)
    too_wide = [(label[:40], round(r - right)) for label, _, r in boxes if r > right + 1]
    assert not too_wide, f"charts past the main column's right edge ({right:.0f} px): {too_wide}"
    # the bound the chart factories keep (attn_ui.widgets.heatmap.MAIN_COLUMN_PX)
    assert right - main["x"] - pad <= 940 + 1

    # the weights in one notation: fixed decimals, tiny ones "<0.0001", never a number in scientific notation
    texts = weights.locator("svg.marks text").all_text_contents()
    numbers = [t for t in texts if NUMBER.fullmatch(t)]  # the cells' and legend's (not the axes' "1: attention")
    assert not [t for t in numbers if "e" in t]
    cells = [t for t in numbers if re.fullmatch(r"<?\d\.\d{4}", t)]  # 4 decimals: "0.9801", "<0.0001"
    assert len(cells) == 15 * 15 and "<0.0001" in cells  # [CLS], 13 words and the full stop, [SEP]: all written
    assert smallest_chart_text(page) >= 12
    screenshot(page, shots / "readable_model_steps_1400.png")


PIPELINE_FONT = """() => { const svg = document.querySelector('[data-testid="stGraphVizChart"] svg');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(t.getAttribute('font-size')));
    return Math.min(...sizes) * scale; }"""
#: the pipeline's box: its widths, its mask and the widths of the fades at its left and right edges
#: (attn_ui.shell.frame)
EDGE = """() => { const box = document.querySelector('[data-testid="stGraphVizChart"]');
    const style = getComputedStyle(box);
    return [box.scrollWidth, box.clientWidth, style.maskImage, style.getPropertyValue('--attn-fade-l'),
            style.getPropertyValue('--attn-fade-r')]; }"""


def test_the_pipeline_is_readable_and_shows_on_a_phone_that_it_scrolls(app_server: str, browser, shots: Path):
    """At 1,400 px the Overview's nine boxes fit the main column with text of at least 12 px; on a phone (390 px)
    the diagram keeps that size and scrolls in its box, which fades out at the edge where more is."""
    desk = browser.new_context(viewport={"width": 1400, "height": 900})
    page = desk.new_page()
    open_app(page, app_server)
    expect(page.locator('[data-testid="stGraphVizChart"] svg text').first).to_be_visible()
    assert page.evaluate(PIPELINE_FONT) >= 12
    desk.close()

    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = phone.new_page()
    open_app(page, app_server)
    expect(page.locator('[data-testid="stGraphVizChart"] svg text').first).to_be_visible()
    assert page.evaluate(PIPELINE_FONT) >= 12
    scroll_width, width, mask, left, right = page.evaluate(EDGE)
    assert scroll_width > width + 100  # it scrolls ...
    assert "linear-gradient" in mask and (left, right) == ("0px", "48px")  # ... and fades out on the right
    page.locator('[data-testid="stGraphVizChart"]').evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    page.wait_for_function(f"() => ({EDGE})()[4] === '0px'")
    assert page.evaluate(EDGE)[3:] == ["48px", "0px"]  # at the end: the left edge fades, the right no longer
    screenshot(page, shots / "readable_overview_390.png")
    phone.close()


def apart(a: dict, b: dict) -> bool:
    """Whether two bounding boxes (Playwright's) share no pixel."""
    return (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or a["y"] + a["height"] <= b["y"]
            or b["y"] + b["height"] <= a["y"])


def settled_box(page: Page, locator) -> dict:
    """A locator's bounding box once it has stopped moving (a toolbar slides into place as it appears)."""
    box = None
    for _ in range(50):
        page.wait_for_timeout(100)
        if box == (box := locator.bounding_box()):
            return box
    raise AssertionError("still moving after 5 s")


@pytest.mark.parametrize("width", [1400, 1000])
def test_a_grids_toolbar_covers_no_randomise_button(app_server: str, browser, width: int):
    """Inputs & weights: hovering a matrix's grid shows its toolbar at the grid's top right; it covers none of the
    Randomise buttons (W_Q's, in a third of the page, was half under it when the button stood above the grid)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    open_app(page, f"{app_server}/inputs")
    buttons = [page.locator(f".st-key-inputs_{m}_randomise button").first for m in ("x", "w_q", "w_k", "w_v")]
    for name in ("x", "w_q", "w_k", "w_v"):
        grid = page.locator(f".st-key-{name}_editor_0").first
        grid.hover()
        toolbar = grid.locator('[data-testid="stElementToolbar"]').first
        expect(toolbar).to_be_visible()
        box = settled_box(page, toolbar)
        assert all(apart(box, b.bounding_box()) for b in buttons), name
    context.close()


TITLE = "3 inputs, d_model 4, scaled by √d_k"  # seed 000's preset, the default


@pytest.mark.parametrize(("width", "phone"), [(390, True), (1400, False)])
def test_the_preset_box_shows_the_presets_title_whole(app_server: str, browser, width: int, phone: bool):
    """Inputs & weights' preset box beside its Reset button cut the preset's name on a phone to "3 inputs, d_model
    4, scaled by": there it takes its row, the button under it; on a desktop the two stay on one row."""
    with sized_page(browser, width, 900, phone=phone) as page:
        open_app(page, f"{app_server}/inputs")
        select = page.locator(".st-key-inputs_preset").first.bounding_box()
        button = page.locator(".st-key-inputs_reset").first.bounding_box()
        box = page.locator(".st-key-inputs_preset input[role=combobox]").first
        assert box.input_value().startswith(TITLE), box.input_value()
        shown_px = box.evaluate("""(e, title) => { const c = document.createElement('canvas').getContext('2d');
            c.font = getComputedStyle(e).font; return [c.measureText(title).width, e.clientWidth]; }""", TITLE)
        assert shown_px[1] > shown_px[0], shown_px  # the preset's title, whole in the box
        assert (button["y"] >= select["y"] + select["height"]) == phone  # under it on a phone only
