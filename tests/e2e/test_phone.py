"""The learner's loop on a phone (issue 37): the sidebar closes once a page is picked, and the edit panel stands in
the page, above what it changes, so that an edit and its effect are on one screen; A model that writes draws its
next-token charts (the model's, and beside it with a head switched off) inside a 390 px screen, and Scaling its
variance sweep.

A phone is told by its user agent, as Streamlit tells one (it closes the sidebar after a page is picked on a phone
only): the tests open the app with an Android phone's user agent at 390 × 844.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from attn_ui.app import registry
from attn_ui.shell import frame

from .. import tiny_gpt2
from .helpers import (
    CHART,
    GRID,
    MAIN,
    chart_after,
    chart_items,
    edit_grid_cell,
    expect_rerun,
    grids,
    model_server,
    nav_link,
    open_app,
    sized_page,
    wait_for_app,
)
from .seed000 import W_K, W_Q, X, attention

pytestmark = pytest.mark.e2e

SIDEBAR = '[data-testid="stSidebar"]'


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    with sized_page(browser, 390, 844, phone=True) as page:
        yield page


OPEN_JS = f"""() => {{ const b = document.querySelector('{SIDEBAR}').getBoundingClientRect();
    return b.right > 10; }}"""


def sidebar_open(page: Page) -> bool:
    box = page.locator(SIDEBAR).bounding_box()
    return box is not None and box["x"] + box["width"] > 10


def settled(page: Page, is_open: bool) -> None:
    """Wait until the sidebar's sliding transition has left it open (or closed); fails after 5 s."""
    page.wait_for_function(OPEN_JS if is_open else f"() => !({OPEN_JS})()", timeout=5_000)


def test_the_edit_panel_is_in_the_page_on_a_phone(phone: Page, app_server: str):
    open_app(phone, f"{app_server}/{registry.STEPS.name}")
    main = phone.locator(MAIN)
    expect(main.get_by_text("Edit the numbers")).to_be_visible()
    expect(grids(phone).first).to_be_visible()  # X's grid, in the page
    assert main.locator('[data-testid="stDataFrame"]').count() >= 1
    assert not sidebar_open(phone)
    panel_top = main.get_by_text("Edit the numbers").bounding_box()["y"]
    first_chart = main.locator('[data-testid="stVegaLiteChart"]').first.bounding_box()["y"]
    assert panel_top < first_chart  # above what it changes


PHONE_W, PHONE_H = 390, 844
#: the pages with the edit panel checked here, each with the bold label over the first heatmap it draws (None: the
#: first chart of the page, Multi-head's heads' weights, captioned), a result that an edit of the panel's X changes
FIRST_HEATMAP = {registry.STEPS: "Q", registry.SCALING: "Weights, unscaled", registry.MASKING: "Weights, masked",
                 registry.MULTIHEAD: None, registry.MODERN: "Weights, with these options",
                 registry.SCORES: "Dot product · yours"}
#: how far every box that holds the grid has been scrolled (Streamlit scrolls an inner container, not the window)
SCROLLED = """g => { let s = window.scrollY; for (let e = g; e; e = e.parentElement) s += e.scrollTop; return s; }"""


def whole_on_screen(box: dict | None) -> bool:
    """Whether a bounding box lies whole inside the phone's 390 × 844 screen."""
    return (box is not None and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= PHONE_W
            and box["y"] + box["height"] <= PHONE_H)


def panel_and_first_heatmap(page: Page, label: str | None) -> tuple[Locator, Locator]:
    """The edit panel's grid and the page's first heatmap (the one under the bold label ``label``; None: the page's
    first chart), both whole on the screen with nothing scrolled (their boxes are in the message of a failure)."""
    grid = page.locator(MAIN).locator(GRID).first
    chart = page.locator(MAIN).locator(CHART).first if label is None else chart_after(page, label)
    expect(chart.locator("svg.marks, canvas").first).to_be_visible()
    first = page.locator(MAIN).locator(CHART).first.bounding_box()
    boxes = {"grid": grid.bounding_box(), "first heatmap": chart.bounding_box(), "first chart": first}
    assert boxes["first heatmap"] == first, boxes  # no chart above it
    assert grid.evaluate(SCROLLED) == 0, boxes
    assert whole_on_screen(boxes["grid"]) and whole_on_screen(boxes["first heatmap"]), boxes
    return grid, chart


@pytest.mark.parametrize("pg", list(FIRST_HEATMAP), ids=lambda pg: pg.name)
def test_the_panels_grid_and_the_first_heatmap_share_a_phones_screen(phone: Page, app_server: str,
                                                                     pg: registry.Page):
    """At 390 × 844 the panel's grid and the first heatmap the page draws are whole on the first screen, nothing
    scrolled: an edit and its effect on one screen. (Step by step's Q began at y 833, Scaling's first weights at
    1,726 and Masking's mask at 1,245: under the title's space, the panel's rows and the page's words. Then Masking's
    first heatmap was the mask, which an edit of X does not change, and the first chart of Multi-head, Modern attention
    and Score functions was at y 1,444, 1,576 and 2,469, under the sections and options that make it.)"""
    open_app(phone, f"{app_server}/{pg.name}")
    panel_and_first_heatmap(phone, FIRST_HEATMAP[pg])


def softmax_rows(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def weights(x: np.ndarray) -> np.ndarray:
    return attention(x)[1]  # softmax(QKᵀ / √3): no mask, one head, the dot product (seed 000)


@pytest.mark.parametrize(("pg", "expected"), [
    (registry.STEPS, lambda x: x @ W_Q),  # Q = X W_Q
    (registry.SCALING, lambda x: softmax_rows((x @ W_Q) @ (x @ W_K).T)),  # the weights, unscaled
    (registry.MASKING, weights),  # the masked weights (no mask yet)
    (registry.MULTIHEAD, weights),  # head 0's weights (one head)
    (registry.MODERN, weights),  # the weights with the options (none on)
    (registry.SCORES, weights),  # the dot product's, the configuration's own
], ids=["steps", "scaling", "masking", "multihead", "modern", "scores"])
def test_an_edit_typed_in_the_panel_changes_the_first_heatmap_on_the_same_screen(phone: Page, app_server: str,
                                                                                 pg: registry.Page, expected):
    """X[0, 0] typed into the panel's grid on a phone: the first heatmap, on the same screen, shows the new numbers,
    and neither it nor the grid has moved off the screen."""
    open_app(phone, f"{app_server}/{pg.name}")
    grid, chart = panel_and_first_heatmap(phone, FIRST_HEATMAP[pg])
    np.testing.assert_allclose(cell_values(chart), expected(X), atol=1e-9)
    edited = X.copy()
    edited[0, 0] = 5
    edit_grid_cell(phone, grid, 0, 0, "5")
    grid, chart = panel_and_first_heatmap(phone, FIRST_HEATMAP[pg])
    np.testing.assert_allclose(cell_values(chart), expected(edited), atol=1e-9)
    assert not np.allclose(expected(edited), expected(X))  # the edit shows


def cell_values(chart: Locator) -> np.ndarray:
    """A heatmap's values [r, c] (helpers.heatmap_values), those of its cells only: Masking's masked weights have a
    column of row sums beside them, marks of another kind."""
    items = [it for it in chart_items(chart) if "value" in it]
    col_key, row_key = [k for k in items[0] if k != "value"][:2]  # x, then y
    rows, cols = (list(dict.fromkeys(it[k] for it in items)) for k in (row_key, col_key))
    values = np.full((len(rows), len(cols)), np.nan)
    for it in items:
        values[rows.index(it[row_key]), cols.index(it[col_key])] = float(it["value"].replace("\u2212", "-"))
    return values


def test_a_value_the_panel_refuses_on_a_phone_says_to_fix_it_above(phone: Page, app_server: str):
    """On a phone the panel is in the page, above the steps. Its grid says what it refused, once (a banner under it
    said the same again and took the first screen: a reviewer); with the panel on another matrix, the banner of the
    refused value sends the learner there, not to the sidebar (it said "Fix it in the sidebar", where a phone has no
    panel)."""
    open_app(phone, f"{app_server}/{registry.STEPS.name}")
    grid = phone.locator(MAIN).locator(GRID).first
    edit_grid_cell(phone, grid, 0, 0, "abc", shown="abc")
    panel = phone.locator(f".st-key-{frame.PHONE_PANEL}")
    expect(panel.get_by_test_id("stAlertContentError")).to_contain_text("not a number")
    banner = phone.locator(MAIN).get_by_test_id("stAlertContentWarning").filter(has_text="Showing the last valid")
    expect(banner).to_have_count(0)
    with expect_rerun(phone):
        panel.locator("[data-testid=stButtonGroup] button").filter(has_text="W_Q").tap()
    expect(banner).to_contain_text("Fix it above, under Edit the numbers.")
    expect(banner).not_to_contain_text("sidebar")


#: [table's toolbar top, bottom of what is drawn above the table] for every table of the page but the panel's grid
TOOLBARS_OVER = f"""() => [...document.querySelectorAll(
        '{MAIN} [data-testid=stDataFrame] > [data-testid=stElementToolbar]')]
    .filter(t => !t.closest('.st-key-{frame.PHONE_PANEL}'))
    .map(t => {{ const above = t.closest('[data-testid=stElementContainer]').previousElementSibling;
                return [t.getBoundingClientRect().top, above ? above.getBoundingClientRect().bottom : -1e9]; }})"""


@pytest.mark.parametrize("pg", [registry.MASKING, registry.INPUTS], ids=lambda pg: pg.name)
def test_a_tables_toolbar_leaves_what_is_above_it_free_on_a_phone(phone: Page, app_server: str, pg: registry.Page):
    """A touch screen shows a table's toolbar at all times, 44 px above the table: it lay over Masking's slider
    handle (a tap there hit the toolbar) and over the heading "Tokens" on Inputs & weights (a second reviewer)."""
    open_app(phone, f"{app_server}/{pg.name}")
    expect(phone.locator(MAIN).locator("[data-testid=stDataFrame]").first).to_be_visible()
    pairs = phone.evaluate(TOOLBARS_OVER)
    assert pairs and all(top >= above - 0.5 for top, above in pairs), pairs


#: [table's bottom, top of what follows the table] for every table of the page
TABLES_OVER = f"""() => [...document.querySelectorAll('{MAIN} [data-testid=stDataFrame]')]
    .map(d => {{ const after = d.closest('[data-testid=stElementContainer]').nextElementSibling;
                return [d.getBoundingClientRect().bottom, after ? after.getBoundingClientRect().top : 1e9]; }})"""


@pytest.mark.parametrize("pg", [registry.SCORES, registry.MULTIHEAD, registry.MASKING, registry.INPUTS],
                         ids=lambda pg: pg.name)
def test_a_table_lies_over_nothing_after_it_on_a_phone(phone: Page, app_server: str, pg: registry.Page):
    """The toolbar's room above a table was inside the box of a table given a height (Score functions' comparison,
    Multi-head's every shape): the table's last row lay over the note under it (a reviewer)."""
    open_app(phone, f"{app_server}/{pg.name}")
    expect(phone.locator(MAIN).locator("[data-testid=stDataFrame]").first).to_be_visible()
    if pg is registry.MULTIHEAD:  # its every shape: section 6
        with expect_rerun(phone):
            phone.locator(MAIN).get_by_text("6 · Every shape", exact=True).first.click()
        expect(phone.locator(MAIN).locator("[data-testid=stDataFrame]").last).to_be_visible()
    pairs = phone.evaluate(TABLES_OVER)
    assert pairs and all(bottom <= after + 0.5 for bottom, after in pairs), pairs


#: [text, left, right] of every colour legend's label of the page's charts (Vega's SVG text)
LEGEND_LABELS = f"""() => [...document.querySelectorAll('{MAIN} {CHART} .role-legend-label text')]
    .map(t => {{ const b = t.getBoundingClientRect(); return [t.textContent, b.left, b.right]; }})"""


def test_the_heatmaps_legends_are_whole_on_a_phone(phone: Page, app_server: str):
    """Step by step at 390 × 844: every colour legend's labels are whole on the screen. Scaled scores' legend, right
    of cells that took the chart 17 px past the screen, showed "9.23" for 9.238 at the screen's edge; a heatmap too
    wide for its legend beside the cells has it under them, labelled at the ends of its colours."""
    open_app(phone, f"{app_server}/{registry.STEPS.name}")
    phone.wait_for_timeout(1000)  # every chart drawn at its width
    labels = phone.evaluate(LEGEND_LABELS)
    assert {"\u22129.238", "9.238", "\u221216", "16"} <= {text for text, _left, _right in labels}, labels
    assert all(0 <= left and right <= PHONE_W for _text, left, right in labels), labels
    # and no chart is wider than its box: none scrolls sideways, none faded at its edge (where "9.238" lost its "8")
    assert phone.locator(MAIN).locator(CHART).evaluate_all("cs => cs.every(c => c.scrollWidth <= c.clientWidth)")


def test_the_sidebar_closes_once_a_page_is_picked_on_a_phone(phone: Page, app_server: str):
    open_app(phone, app_server)
    phone.locator('[data-testid="stExpandSidebarButton"]').click()
    settled(phone, True)
    nav_link(phone, registry.MASKING.title).click()
    wait_for_app(phone)
    expect(phone.locator(f"{MAIN} h1").first).to_contain_text(registry.MASKING.page_heading)
    settled(phone, False)
    assert not sidebar_open(phone)


@pytest.fixture(scope="module")
def gpt2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tiny_gpt2.build(tmp_path_factory.mktemp("gpt2"))
    with model_server(folder, tmp_path_factory.mktemp("streamlit") / "s.log", "ATTN_CAUSAL_MODEL") as url:
        yield url


#: [left, right] of what is drawn of each chart with an axis titled AXIS (its ARIA label names it; a legend's title
#: does not count: the logit lens's colour key is titled "probability" too)
CHARTS_WITH_AXIS = """() => [...document.querySelectorAll('.vega-embed')]
    .filter(e => [...e.querySelectorAll('[aria-label]')]
        .some(a => a.ariaLabel.toLowerCase().includes("axis titled 'AXIS'".toLowerCase())))
    .map(e => { const r = e.querySelector('canvas, svg.marks').getBoundingClientRect(); return [r.left, r.right]; })"""


def charts_with_axis(page: Page, axis: str, n: int) -> list[list[float]]:
    """The edges of the drawn charts with an axis titled ``axis``, once there are at least ``n`` (20 s at most)."""
    js = CHARTS_WITH_AXIS.replace("AXIS", axis)
    page.wait_for_function(f"() => ({js})().length >= {n}", timeout=20_000)
    return page.evaluate(js)


def probability_charts(page: Page, n: int) -> list[list[float]]:
    return charts_with_axis(page, "probability", n)


def test_the_next_token_charts_fit_a_phone(phone: Page, gpt2_server: str):
    open_app(phone, f"{gpt2_server}/{registry.GENERATE.name}")
    (chart,) = probability_charts(phone, 1)
    assert 0 <= chart[0] and chart[1] <= 390  # the next token's 10 bars, whole on the screen
    box = phone.locator(MAIN).get_by_test_id("stMultiSelect").filter(has_text="Heads switched off")
    box.locator("input").click()
    phone.keyboard.type("L0 · H1")  # the list filtered to it: no scrolling a long list on a touch screen
    with expect_rerun(phone):
        phone.get_by_role("option", name="L0 · H1", exact=True).click()
    phone.keyboard.press("Escape")
    for left, right in probability_charts(phone, 2):  # and the model's beside the one with a head off
        assert 0 <= left and right <= 390


def test_the_variance_sweep_fits_a_phone(phone: Page, app_server: str):
    open_app(phone, f"{app_server}/{registry.SCALING.name}")
    (chart,) = charts_with_axis(phone, "d_k (width of queries and keys)", 1)
    assert 0 <= chart[0] and chart[1] <= 390


def test_the_saturation_curves_fit_a_phone(phone: Page, app_server: str):
    """The largest weight and the entropy against the divisor: two charts in columns that stack at 390 px, each
    whole on the screen (side by side they were 941 px wide)."""
    open_app(phone, f"{app_server}/{registry.SCALING.name}")
    for axis in ("largest weight in the row", "entropy of the row (nats)"):
        (chart,) = charts_with_axis(phone, axis, 1)
        assert 0 <= chart[0] and chart[1] <= 390 and chart[1] - chart[0] > 300  # drawn, as wide as the screen


FADES = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => {
    const s = getComputedStyle(c);
    return [c.scrollWidth - c.clientWidth, s.getPropertyValue('--attn-fade-l'), s.getPropertyValue('--attn-fade-r')];
})"""


def test_a_chart_a_little_wider_than_a_phone_fades_only_what_is_hidden(browser: Browser, app_server: str):
    """Step by step on a 375 px phone: the Weights heatmap, laid out for a 390 px one, is 14 px wider than the screen
    (at 390 px Scores and Scaled scores were 2 and 17 px wider; their legends now lie under the cells there). Its
    right edge fades by what is hidden (at most 48 px), so its colour legend stays readable; scrolled to the end, the
    left edge fades by as much. (A fixed 48 px fade covered both legends' labels for an overflow of 2 and 17 px.)"""
    with sized_page(browser, 375, 812, phone=True) as phone:
        fades_only_what_is_hidden(phone, app_server)


def fades_only_what_is_hidden(phone: Page, app_server: str) -> None:
    open_app(phone, f"{app_server}/{registry.STEPS.name}")
    expect(phone.locator(f'{MAIN} [data-testid="stVegaLiteChart"] canvas, {MAIN} [data-testid="stVegaLiteChart"] svg')
           .first).to_be_visible()
    phone.wait_for_timeout(1000)  # every chart drawn at its width
    fades = phone.evaluate(FADES)
    assert any(0 < hidden < 48 for hidden, _left, _right in fades), fades  # the case this test is about
    for hidden, left, right in fades:
        assert (left, right) == ("0px", f"{min(hidden, 48)}px"), fades
    phone.locator('[data-testid="stVegaLiteChart"]').evaluate_all(
        "boxes => boxes.forEach(b => { b.scrollLeft = b.scrollWidth; })")
    phone.wait_for_timeout(300)
    for hidden, left, right in phone.evaluate(FADES):
        assert (left, right) == (f"{min(hidden, 48)}px", "0px")


def test_a_formula_wider_than_a_phone_scrolls_in_its_own_box(phone: Page, app_server: str):
    """Multi-head's displayed formulas ("head_h = Attention(X W_Q^(h), X W_K^(h), X W_V^(h))", "MultiHead(X) = …") are
    wider than a 390 px screen: they were cut at its edge. Each now scrolls sideways in its own box, faded where more
    is, and the page itself does not get wider."""
    open_app(phone, f"{app_server}/{registry.MULTIHEAD.name}")
    formulas = phone.locator(f"{MAIN} .katex-display")
    expect(formulas.first).to_be_visible()
    boxes = formulas.evaluate_all("""fs => fs.map(f => {
        const b = f.getBoundingClientRect(), s = getComputedStyle(f);
        return [b.left, b.right, f.scrollWidth - f.clientWidth, s.overflowX, s.getPropertyValue('--attn-fade-r')];
    })""")
    wide = [b for b in boxes if b[2] > 0]
    assert wide, boxes  # the case this test is about: a formula wider than its box
    for left, right, hidden, overflow, fade in boxes:
        assert 0 <= left and right <= 390 and overflow == "auto", boxes
        assert fade == f"{min(hidden, 48)}px", boxes
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390


#: [scrollWidth − clientWidth, drawn right edge] of every chart of the page
CHARTS_OVER = f"""() => [...document.querySelectorAll('{MAIN} {CHART}')].map(c => [c.scrollWidth - c.clientWidth,
    c.querySelector('canvas, svg.marks').getBoundingClientRect().right])"""


def test_the_masked_weights_and_their_row_sums_fit_a_phone(phone: Page, app_server: str):
    """Masking's "Weights, masked, and each row's sum" was 428 px wide at 390 × 844 (its legend between the cells and
    the sums): it scrolled sideways, faded at the screen's edge. On a phone its legend lies under the cells and the
    sums' column is narrower: every chart of the page is whole on the screen, none scrolls sideways."""
    open_app(phone, f"{app_server}/{registry.MASKING.name}")
    expect(chart_after(phone, "Weights, masked").locator("svg.marks, canvas").first).to_be_visible()
    phone.wait_for_timeout(1000)  # every chart drawn at its width
    over = phone.evaluate(CHARTS_OVER)
    assert len(over) >= 6 and all(hidden <= 0 and right <= PHONE_W for hidden, right in over), over


def test_of_several_heads_the_one_followed_is_under_the_panel_and_every_head_in_section_3_on_a_phone(
        phone: Page, app_server: str):
    """Multi-head split into 3 heads at 390 × 844: under the panel, the weights of the head followed (head 0: every
    head's, one under another on a phone, would take 270 px a head); section 3 has every head's, one under another,
    whole on the screen's width (side by side they were wider than the screen)."""
    open_app(phone, f"{app_server}/{registry.MULTIHEAD.name}")
    with expect_rerun(phone):
        phone.locator(MAIN).get_by_role("button", name="Split into 3 heads").click()
    expect(phone.locator(MAIN).get_by_text("Attention weights of head 0")).to_be_visible()
    phone.wait_for_timeout(1000)  # every chart drawn at its width
    phone.evaluate("() => document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; })")  # the button's tap
    # scrolled the page
    first, every = (phone.locator(MAIN).locator(CHART).filter(has_text=t).first for t in ("head 0", "head 2"))
    assert first.locator("svg .role-title-text").all_text_contents() == ["head 0"]
    assert whole_on_screen(first.bounding_box()), first.bounding_box()
    titles = every.locator("svg .role-title-text").evaluate_all(
        "ts => ts.map(t => [t.textContent, t.getBoundingClientRect().y])")
    assert [t for t, _y in titles] == ["head 0", "head 1", "head 2"], titles
    assert titles[0][1] < titles[1][1] < titles[2][1], titles  # one under another
    over = phone.evaluate(CHARTS_OVER)
    assert all(hidden <= 0 and right <= PHONE_W for hidden, right in over), over


#: [scrollWidth − clientWidth, drawn left and right edges] of the chart whose title is TITLE (Vega's SVG title), or
#: of the page's first chart (TITLE null: the cross-attention heatmap, on a canvas, has no SVG title)
TITLED_CHART = f"""title => [...document.querySelectorAll('{MAIN} {CHART}')]
    .filter((c, i) => title === null ? i === 0 && c.querySelector('canvas, svg.marks')
                      : [...c.querySelectorAll('.role-title-text')].some(t => t.textContent === title))
    .map(c => {{ const r = c.querySelector('canvas, svg.marks').getBoundingClientRect();
                 return [c.scrollWidth - c.clientWidth, r.left, r.right]; }})"""


@pytest.mark.parametrize(("pg", "title"), [(registry.MODEL, "layer 0, head 0: attention weights"),
                                           (registry.GENERATE, "layer 0, head 0: attention weights"),
                                           (registry.TRANSLATE, None)],  # its cross-attention weights
                         ids=lambda v: v.name if isinstance(v, registry.Page) else "")
def test_the_model_pages_one_head_heatmap_fits_a_phone(phone: Page, models_server: str, pg: registry.Page,
                                                       title: str):
    """The large view of one head (A real model, A model that writes) and the cross-attention heatmap (A model that
    translates) were 670–730 px wide at 390 × 844, and scrolled sideways: on a phone each is within the screen."""
    open_app(phone, f"{models_server}/{pg.name}")
    js = f"({TITLED_CHART})({json.dumps(title)})"
    phone.wait_for_function(f"() => {js}.length > 0", timeout=30_000)
    phone.wait_for_timeout(1000)  # drawn at its width
    (box,) = phone.evaluate(f"() => {js}")
    assert box[0] <= 0 and 0 <= box[1] and box[2] <= PHONE_W, box
