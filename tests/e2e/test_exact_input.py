"""What a learner types into a grid, key by key or all at once, or pastes from a spreadsheet, is exactly what the app
holds (issue 21): the value is read back from the permalink on Share & export, decoded here with
attn_core.share.decode_link, never from the grid's own text. Text that is no number is refused by name, stays in
its cell, and is not shared; Undo in the sidebar takes an edit back.

The app opens on seed 000 (tests/e2e/seed000.py): X[0, 0] is 1.0, row 0 is "input1"; W_O is the identity.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import Locator, Page, expect

from attn_core.share import decode_link
from attn_ui.widgets.numbers import grid_texts

from .helpers import (
    MAIN,
    canvas_texts,
    expect_block_shown,
    expect_rerun,
    goto_page,
    grid_after,
    grid_cell,
    open_app,
    paste_block,
    record_canvas_texts,
    select_grid_cell,
    type_into_cell,
)
from .seed000 import X

pytestmark = pytest.mark.e2e

SIDEBAR = '[data-testid="stSidebar"]'
MINUS = "\u2212"  # "−", the minus the app prints; typed, it reads as "-"
ACCEPTED = ["1e-3", "-2.5E+2", ".5", "1e20", f"{MINUS}3", "123456789012345678", "2.5E+2"]
REFUSED = ["abc", "1,5"]
KEYS, FILL = 60, None  # type_into_cell's delay_ms: key by key at a person's pace (ms between keys), or fill()
#: every input key by key; fill() for a few (the number column's editor lost 1e-3, 1e20 and long integers both ways)
CASES = [(text, KEYS) for text in ACCEPTED + REFUSED] + [(text, FILL) for text in ("1e-3", "123456789012345678", "abc")]


def number(text: str) -> float:
    """The value ``text`` stands for, as Python reads it (the "−" minus as "-"): what the app must hold."""
    return float(text.replace(MINUS, "-"))


def refusal(text: str) -> str:
    """The message naming the matrix, the cell (X[0, 0], row 0 is token "input1") and what was typed in it."""
    return f"X, row 0 (input1), column 0 is {text!r}, not a number."


def alerts(page: Page, containing: str, where: str = MAIN) -> Locator:
    return page.locator(where).get_by_test_id("stAlert").filter(has_text=containing)


def undo_button(page: Page, what: str | None) -> Locator:
    """The sidebar's Undo button: "Undo: <what>", or plain "Undo" (disabled) when there is nothing to take back."""
    return page.locator(SIDEBAR).get_by_role("button", name=f"Undo: {what}" if what else "Undo", exact=True)


def shared(page: Page, matrix: str = "x") -> np.ndarray:
    """A matrix as the permalink on Share & export holds it (the page is opened; the link decoded here)."""
    goto_page(page, "Share & export")
    code = page.locator(MAIN).get_by_test_id("stCode").filter(has_text="?c=")
    expect(code).to_have_count(1)
    url = "".join(code.inner_text().split())  # a wrapped line must not add spaces
    cfg, _ = decode_link(parse_qs(urlparse(url).query)["c"][0])  # beside it: &lang=
    return cfg.matrix(matrix)


def assert_x_holds(x: np.ndarray, changed: dict[tuple[int, int], float]) -> None:
    """``x`` is seed 000's X with the ``changed`` cells set to their values, bit for bit (no other cell moved)."""
    expected = X.copy()
    for cell, value in changed.items():
        expected[cell] = value
    assert x.tolist() == expected.tolist(), f"the link holds X =\n{x!r}\nexpected\n{expected!r}"


@pytest.fixture
def inputs_page(app_page: Page) -> Page:
    """A fresh session on Inputs & weights, reached from the sidebar. (Not at its address: see
    test_the_first_edit_after_a_cold_start_at_inputs_stays_in_its_cell.)"""
    goto_page(app_page, "Inputs & weights")
    return app_page


@pytest.mark.parametrize(("text", "delay_ms"), CASES,
                         ids=[f"{'keys' if d else 'fill'}:{t}" for t, d in CASES])
def test_a_typed_value_is_held_exactly_or_refused_by_name(inputs_page: Page, text: str, delay_ms: float | None) -> None:
    """Accepted: the link holds exactly the value typed; drawn anew, the grid shows it as grid_texts writes X.
    Refused: named under the grid, on Share & export and in the sidebar's Share this ("Not shared:"), kept in its
    cell; the link holds 1.0."""
    page = inputs_page
    type_into_cell(page, grid_after(page, "X"), 0, 0, text, delay_ms=delay_ms)  # the cell shows it as typed
    if text in REFUSED:
        message = refusal(text)
        expect(alerts(page, message)).to_have_count(1)  # under the grid
        assert_x_holds(shared(page), {})  # the last valid X: X[0, 0] is still 1.0
        not_shared = alerts(page, "Not shared:")
        expect(not_shared.filter(has_text=message)).to_have_count(1)
        expect(not_shared).to_contain_text("Links and files made now hold the last valid values")
        page.locator(SIDEBAR).get_by_text("Share this").click()  # the sidebar's share control says so too
        expect(alerts(page, "Not shared:", SIDEBAR).filter(has_text=message)).to_be_visible()
        goto_page(page, "Inputs & weights")  # drawn anew from the draft: what was typed, still refused
        expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text(text)
        expect(alerts(page, message)).to_have_count(1)
    else:
        value = number(text)
        expect(alerts(page, "not a number")).to_have_count(0)
        x = shared(page)
        assert x[0, 0] == value, f"typed {text!r}: the link holds {x[0, 0]!r}, not {value!r}"
        assert_x_holds(x, {(0, 0): value})
        expect(alerts(page, "Not shared:")).to_have_count(0)
        goto_page(page, "Inputs & weights")  # drawn anew from the configuration
        now = X.copy()
        now[0, 0] = value
        expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text(grid_texts(now.ravel(), 4)[0])


def test_undo_takes_the_edit_back_from_another_page(inputs_page: Page) -> None:
    page = inputs_page
    type_into_cell(page, grid_after(page, "X"), 0, 0, "1e-3", delay_ms=FILL)
    assert_x_holds(shared(page), {(0, 0): 0.001})
    with expect_rerun(page):  # on Share & export: the sidebar's Undo is on every page
        undo_button(page, "X, row 0 (input1), column 0 set to 0.001").click()
    assert_x_holds(shared(page), {})  # the link follows the configuration: X[0, 0] is 1.0 again
    expect(undo_button(page, None)).to_be_disabled()  # nothing more to take back
    goto_page(page, "Inputs & weights")
    expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text("1")


def test_undo_on_inputs_and_weights_then_another_edit(inputs_page: Page) -> None:
    """Where the grid is: Undo redraws it with the old value, and the learner goes on editing."""
    page = inputs_page
    type_into_cell(page, grid_after(page, "X"), 0, 0, "1e-3", delay_ms=KEYS)
    with expect_rerun(page):
        undo_button(page, "X, row 0 (input1), column 0 set to 0.001").click()
    expect(grid_cell(grid_after(page, "X"), 0, 0)).to_have_text("1")  # seed 000's X: whole numbers
    expect(undo_button(page, None)).to_be_disabled()
    type_into_cell(page, grid_after(page, "X"), 0, 1, "2.5E+2", delay_ms=KEYS)
    assert_x_holds(shared(page), {(0, 1): 250.0})


def test_a_refused_text_typed_again_after_a_fix_is_refused_again(inputs_page: Page) -> None:
    """The grid drawn anew holds the refused text; fixed, then the same text typed again: refused again, not kept
    silently in the cell while the app holds the fix."""
    page = inputs_page
    type_into_cell(page, grid_after(page, "X"), 0, 0, "abc", delay_ms=FILL)
    goto_page(page, "Step by step")
    goto_page(page, "Inputs & weights")  # the grid starts from the draft: its cell is "abc"
    type_into_cell(page, grid_after(page, "X"), 0, 0, "1", delay_ms=FILL)  # seed 000's value: fixed
    expect(alerts(page, "not a number")).to_have_count(0)
    type_into_cell(page, grid_after(page, "X"), 0, 0, "abc", delay_ms=FILL)
    expect(alerts(page, refusal("abc"))).to_have_count(1)
    assert_x_holds(shared(page), {})
    expect(alerts(page, "Not shared:").filter(has_text=refusal("abc"))).to_have_count(1)


def test_typing_a_cells_own_text_back_restores_its_value(app_page: Page) -> None:
    """W_O[0, 0] shows "1" (W_O is the identity); typed 2, then "1" again: the app holds 1.0 again, as the cell
    shows.
    (On Multi-head: W_O's grid, one edit after another on the page that holds it.)"""
    page = app_page
    goto_page(page, "Multi-head")
    with expect_rerun(page):
        page.get_by_role("radio", name="5 · Project with W_O").click()
    w_o = grid_after(page, "W_O")
    expect(grid_cell(w_o, 0, 0)).to_have_text("1")
    type_into_cell(page, w_o, 0, 0, "2", delay_ms=FILL)
    type_into_cell(page, w_o, 0, 0, "1", delay_ms=FILL)
    assert shared(page, "w_o").tolist() == np.eye(3).tolist()


def test_a_block_pasted_from_a_spreadsheet_lands_exactly(inputs_page: Page, app_server: str) -> None:
    """Tab- and newline-separated text on the clipboard, Control+V on X[0, 0]: four cells at once."""
    page = inputs_page
    block = [["1e-3", "-2.5E+2"], [".5", f"{MINUS}4"]]
    x_grid = grid_after(page, "X")
    paste_block(page, app_server, x_grid, block)
    expect_block_shown(x_grid, block)
    expect(alerts(page, "not a number")).to_have_count(0)
    assert_x_holds(shared(page), {(i, j): number(text) for i, row in enumerate(block) for j, text in enumerate(row)})



def test_a_cell_emptied_with_the_delete_key_shows_empty_and_is_named_as_empty(page: Page, app_server: str) -> None:
    """The Delete key empties X[0, 2]: its cell shows nothing (not Streamlit's grey "None" for a missing value, which
    the accessibility table does not show: the texts drawn on the canvas are read), the message says it is empty,
    the grid drawn anew from the draft shows it empty too, and a number typed in fixes it."""
    record_canvas_texts(page)
    open_app(page, app_server)
    goto_page(page, "Inputs & weights")
    x_grid = grid_after(page, "X")
    select_grid_cell(page, x_grid, 0, 2)
    canvas_texts(page, clear=True)
    with expect_rerun(page):
        page.keyboard.press("Delete")
    page.keyboard.press("ArrowRight")  # the grid draws its cells again as the selection moves
    message = "X, row 0 (input1), column 2 is empty, not a number."
    expect(alerts(page, message)).to_have_count(1)
    expect(grid_cell(x_grid, 0, 2)).to_have_text("")
    expect(grid_cell(x_grid, 0, 3)).to_have_attribute("aria-selected", "true")
    drawn = canvas_texts(page, clear=True)
    assert "0" in drawn and "None" not in drawn, f"the grid drew {sorted(set(drawn))}"
    goto_page(page, "Step by step")
    goto_page(page, "Inputs & weights")  # drawn anew from the draft
    expect(grid_cell(grid_after(page, "X"), 0, 2)).to_have_text("")
    expect(alerts(page, message)).to_have_count(1)
    assert "None" not in canvas_texts(page)
    type_into_cell(page, grid_after(page, "X"), 0, 2, "5", delay_ms=FILL)
    expect(alerts(page, "not a number")).to_have_count(0)
    assert_x_holds(shared(page), {(0, 2): 5.0})


def test_two_bad_cells_pasted_at_once_are_both_named(inputs_page: Page, app_server: str) -> None:
    """A block with text in X[0, 0] and an empty cell in X[1, 0], pasted on X[0, 0]: both named, in reading order,
    under the grid; every text pasted stays in its cell; X keeps its last valid values."""
    page = inputs_page
    block = [["abc", "5"], ["", "7"]]
    x_grid = grid_after(page, "X")
    paste_block(page, app_server, x_grid, block)
    expect_block_shown(x_grid, block)
    message = ("X, row 0 (input1), column 0 is 'abc', not a number. "
               "X, row 1 (input2), column 0 is empty, not a number.")
    expect(alerts(page, message)).to_have_count(1)
    assert_x_holds(shared(page), {})
