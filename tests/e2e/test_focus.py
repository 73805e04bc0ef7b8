"""Hover to focus, click to pin, in Chromium (issue 39): on Step by step's heatmaps, in English and in Chinese, and on
A real model's thumbnails.

- Hovering a cell outlines its row and its column and names its query, key and value in the line above the cells.
- A click pins that focus: it stays after the pointer leaves, and the line above says how to release it; a click on
  the same cell releases it (the line goes back to its hint).
- The keyboard's way: the "Focus on a token" selectbox holds the token's row and column in every heatmap, each
  saying so, until it is set to none (a click on a chart leaves it).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from attn_ui.app import i18n
from attn_ui.widgets import charts, controls, heatmap

from .helpers import (
    CHART,
    MAIN,
    assert_no_exception,
    chart_cell,
    chart_items,
    expect_rerun,
    open_app,
    wait_for_app,
    watch_runs,
)

pytestmark = pytest.mark.e2e

LINE, HINT = "g.focus_cell_marks text", "g.focus_hint_marks text"
ROW, COL = "g.focus_row_marks path", "g.focus_col_marks path"
TOKENS = ("0: input1", "1: input2", "2: input3")  # seed 000's tokens


def square_chart(page: Page) -> Locator:
    """The first heatmap of Step by step whose rows and columns are both tokens (the scores): found by its cells'
    accessible labels, so in any language."""
    charts = page.locator(f"{MAIN} {CHART}")
    for i in range(charts.count()):
        chart = charts.nth(i)
        if chart.locator(HINT).count() and list(chart_items(chart)[1].values())[:2] == [TOKENS[1], TOKENS[0]]:
            return chart
    raise AssertionError("no heatmap of tokens × tokens on the page")


def tr(lang: str, text: str) -> str:
    return i18n.catalog(lang).gettext(text)


def drawn(text: str) -> re.Pattern:
    """``text`` as a narrow heatmap may draw it: on two lines where one would be cut (heatmap.fit_lines), whose
    tspans the element's text joins without the space at the break."""
    return re.compile("^" + re.escape(text).replace(r"\ ", r"\s?") + "$")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hover_lights_a_cell_a_click_pins_it_and_a_second_click_releases_it(page: Page, app_server: str, lang: str):
    open_app(page, app_server)  # the root first: a fresh server's very first run of a page URL is a legacy run
    open_app(page, f"{app_server}/steps?lang={lang}")
    chart = square_chart(page)
    chart.scroll_into_view_if_needed()
    hint = chart.locator(HINT)
    expect(hint).to_have_text(drawn(tr(lang, heatmap.FOCUS_HINT)))
    cell = chart_cell(chart, TOKENS[1], TOKENS[0])  # query 0, key 1
    cell.hover(position={"x": 3, "y": 3})
    line = chart.locator(LINE)
    expect(line).to_have_count(1)
    said = line.text_content()
    assert TOKENS[0] in said and TOKENS[1] in said and said.index(TOKENS[0]) < said.index(TOKENS[1]), said
    expect(chart.locator(ROW)).to_have_count(1)
    expect(chart.locator(COL)).to_have_count(1)
    expect(hint).to_have_text(tr(lang, heatmap.FOCUS_CLICK))

    with expect_rerun(page):  # the scores' click also picks the drill-down's query: one run
        cell.click(position={"x": 3, "y": 3})
    page.mouse.move(0, 0)  # the pointer leaves the chart: the pinned focus stays
    chart = square_chart(page)
    expect(chart.locator(HINT)).to_have_text(drawn(tr(lang, heatmap.FOCUS_PINNED)))
    expect(chart.locator(LINE)).to_have_text(said)
    expect(chart.locator(ROW)).to_have_count(1)

    chart_cell(chart, TOKENS[1], TOKENS[0]).click(position={"x": 3, "y": 3})  # the same cell again: released
    wait_for_app(page)
    page.mouse.move(0, 0)
    expect(chart.locator(HINT)).to_have_text(drawn(tr(lang, heatmap.FOCUS_HINT)))
    expect(chart.locator(LINE)).to_have_count(0)
    expect(chart.locator(ROW)).to_have_count(0)


def held_charts(page: Page) -> list[Locator]:
    """Step by step's charts with a focus (a hint layer): every heatmap of two rows and two columns at least."""
    charts = page.locator(f"{MAIN} {CHART}")
    return [charts.nth(i) for i in range(charts.count()) if charts.nth(i).locator(HINT).count()]


def test_the_focus_selectbox_holds_a_token_in_every_heatmap_until_it_is_set_to_none(page: Page, app_server: str):
    """The control's focus is the page's: every chart says it is held by Focus on a token and how to release it; a
    click on a lit cell leaves it everywhere (a chart never disagrees with the control or the other charts); setting
    the control to none, as the charts say, releases every one."""
    open_app(page, app_server)
    open_app(page, f"{app_server}/steps")
    box = page.get_by_role("combobox", name="Focus on a token")
    with expect_rerun(page):
        box.click()
        page.get_by_role("option", name=TOKENS[2], exact=True).click()
    held = "".join(heatmap.FOCUS_HELD)  # two lines over a narrow heatmap: the text's two tspans
    chart = square_chart(page)
    expect(chart.locator(HINT)).to_have_text(held)
    expect(chart.locator(LINE)).to_contain_text(f"{TOKENS[2]} → ")
    # every heatmap with the token lights it, and says so: Q (tokens × dimensions) its row only
    charts = held_charts(page)
    assert len(charts) >= 6, len(charts)  # Q, K, V, the scores, the scaled scores, the weights, the output
    for each in charts:
        expect(each.locator(HINT)).to_have_text(held)
        expect(each.locator(ROW)).to_have_count(1)

    with expect_rerun(page):  # a click on the scores' lit cell picks the drill-down's query (one run) ...
        chart_cell(chart, TOKENS[2], TOKENS[2]).click(position={"x": 3, "y": 3})
    page.mouse.move(0, 0)
    for each in held_charts(page):  # ... and leaves the focus held in every chart, as the control still says
        expect(each.locator(HINT)).to_have_text(held)
        expect(each.locator(ROW)).to_have_count(1)
    expect(box).to_have_value(TOKENS[2])

    with expect_rerun(page):  # what the line says: set it to none
        box.click()
        page.get_by_role("option", name=controls.NO_FOCUS, exact=True).click()
    page.mouse.move(0, 0)
    expect(box).to_have_value(controls.NO_FOCUS)
    for each in held_charts(page):
        expect(each.locator(HINT)).to_have_text(drawn(heatmap.FOCUS_HINT))
        expect(each.locator(ROW)).to_have_count(0)
        expect(each.locator(COL)).to_have_count(0)
    assert_no_exception(page)


def test_the_focus_ink_follows_a_change_of_the_system_theme_without_a_rerun(page: Page, app_server: str):
    """The ink a run set (charts.INK, the theme the browser reported) is redrawn by the page's style when the system's
    theme changes while the page is open (Streamlit follows it without a rerun): the lit row's outline and the focus
    lines take the new theme's ink at once (the light ink on a dark page, or the dark one on white, was 2.3:1)."""
    open_app(page, app_server)
    open_app(page, f"{app_server}/steps")
    chart = square_chart(page)
    chart.scroll_into_view_if_needed()
    chart_cell(chart, TOKENS[1], TOKENS[0]).hover(position={"x": 3, "y": 3})
    outline, hint = chart.locator(ROW), chart.locator(HINT)
    expect(outline).to_have_count(1)

    def inks() -> tuple[str, str]:
        return (outline.evaluate("p => getComputedStyle(p).stroke"), hint.evaluate("t => getComputedStyle(t).fill"))

    light, dark = (charts.INKS[t] for t in ("light", "dark"))
    assert inks() == (rgb(light), rgb(light))
    runs = watch_runs(page).finished
    page.emulate_media(color_scheme="dark")
    expect(outline).to_have_css("stroke", rgb(dark))
    expect(hint).to_have_css("fill", rgb(dark))
    assert watch_runs(page).finished == runs  # no rerun: the page's style did it
    page.emulate_media(color_scheme="light")
    expect(outline).to_have_css("stroke", rgb(light))


def rgb(hex_colour: str) -> str:
    """'#b5361c' as a computed style writes it: 'rgb(181, 54, 28)'."""
    r, g, b = (int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"
