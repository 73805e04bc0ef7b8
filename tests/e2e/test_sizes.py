"""The sizes on Inputs & weights take what is typed, key by key, as typed (F4): "2.5" is refused by name under the
sizes (an integer input's browser side read it as 2, without a word) and "1e3" is 1000 (it came as 1), over the cap;
a box left empty (or holding no number) is refused as empty, not as a 0 nobody typed; X keeps its rows either way,
the box keeps what was typed and the message says the size still in use. A whole number resizes. Multi-head's
number of heads the same way. Screenshots of the Dimensions area at 1400 × 900 and 390 × 844 (phone) go to
$E2E_SCREENSHOTS (else pytest's tmp dir): look at them.

The app opens on seed 000: X is 3 × 4 (n_seq 3, d_model 4, d_k 3, d_v 3).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from attn_ui.app import registry

from .helpers import MAIN, grid_after, open_app, sized_page, type_slowly

pytestmark = pytest.mark.e2e

SIZES = ("n_seq", "d_model", "d_k", "d_v")  # the sizes' labels with the dot score
#: text typed -> (what is said under the sizes, what the box shows: what was typed, as the box holds it)
NO_NUMBER = ("Dimensions not changed: n_seq (tokens) holds no number that can be read: type a whole number. "
             "Still using n_seq 3.")  # the box sends no number: left empty, letters, or one past a float's range
REFUSED = {
    "2.5": ("Dimensions not changed: n_seq (tokens): 2.5 is not a whole number. Still using n_seq 3.", "2.5"),
    "1e3": ("Dimensions not changed: n_seq (tokens): 1000 is over the cap of 256. Still using n_seq 3.", "1000"),
    "": (NO_NUMBER, ""),  # a box left empty
    "abc": (NO_NUMBER, ""),  # the box takes no letters
    "1e400": (NO_NUMBER, ""),  # shown as typed, but a number box's value reads "" while what it holds is no float:
}  # the message said the box was empty beside the 1e400 it showed


def size_box(page: Page, label: str):
    return page.locator(MAIN).get_by_label(label, exact=True)


def number_input(page: Page, label: str):
    """The whole number input (label and box) labelled ``label``."""
    return page.locator(MAIN).get_by_test_id("stNumberInput").filter(has=page.get_by_label(label, exact=True))


def type_size(page: Page, label: str, text: str) -> None:
    """Type ``text`` into size ``label`` key by key at a person's pace, then Enter; wait for the run it makes."""
    type_slowly(page, size_box(page, label), text)


def expect_x_rows(page: Page, n: int) -> None:
    """X's grid has ``n`` rows (its accessibility table: one cell per row in the first data column)."""
    expect(grid_after(page, "X").locator('[data-testid^="glide-cell-1-"]')).to_have_count(n)


@pytest.mark.parametrize("text", list(REFUSED), ids=lambda t: t or "empty")
def test_a_size_that_is_not_whole_or_over_its_cap_is_refused_by_name(page: Page, app_server: str, text: str):
    open_app(page, f"{app_server}/{registry.INPUTS.name}")
    expect_x_rows(page, 3)
    type_size(page, "n_seq", text)
    alert = page.locator(MAIN).get_by_test_id("stAlert").filter(has_text="Dimensions not changed")
    expect(alert).to_have_count(1)
    said, shown = REFUSED[text]
    expect(alert.get_by_text(said, exact=True)).to_be_visible()
    expect(size_box(page, "n_seq")).to_have_value(shown)  # what was typed stays in the box (it showed 3 again)
    expect_x_rows(page, 3)
    type_size(page, "n_seq", "5")  # a whole number resizes, and the message has gone
    expect(size_box(page, "n_seq")).to_have_value("5")
    expect_x_rows(page, 5)
    expect(alert).to_have_count(0)


@pytest.fixture(params=[(1400, 900, False), (390, 844, True)], ids=["1400", "phone"])
def shown_page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    width, height, phone = request.param
    with sized_page(browser, width, height, phone=phone) as page:
        yield page


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: $E2E_SCREENSHOTS if set (to look at them), else pytest's tmp dir."""
    return Path(os.environ.get("E2E_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))


def test_the_dimensions_area_shows_every_size_whole_with_the_refusal(shown_page: Page, app_server: str,
                                                                     shots: Path):
    """Each size's label and box whole inside the screen, none over another, with the refusal under them."""
    page = shown_page
    width = page.viewport_size["width"]
    open_app(page, f"{app_server}/{registry.INPUTS.name}")
    type_size(page, "n_seq", "2.5")
    boxes = []
    for label in SIZES:
        widget = number_input(page, label)
        expect(widget).to_have_count(1)
        box = widget.bounding_box()
        assert box and 0 <= box["x"] and box["x"] + box["width"] <= width, (label, box)
        shown = widget.get_by_test_id("stWidgetLabel").evaluate("e => e.scrollWidth <= e.clientWidth")
        assert shown, f"{label}'s label is cut"
        boxes.append((label, box))
    for (a, p), (b, q) in itertools.pairwise(boxes):
        apart = p["x"] + p["width"] <= q["x"] or p["y"] + p["height"] <= q["y"]  # beside it, or below
        assert apart, (a, p, b, q)
    heading = page.locator(MAIN).get_by_role("heading", name="Dimensions")
    seed = number_input(page, "Seed for new cells")
    heading.scroll_into_view_if_needed()
    top = heading.bounding_box()["y"]
    bottom = seed.bounding_box()["y"] + seed.bounding_box()["height"]
    if bottom - top > page.viewport_size["height"]:  # taller than the screen: a taller screen
        page.set_viewport_size({"width": width, "height": int(bottom - top) + 200})
        heading.scroll_into_view_if_needed()
        top = heading.bounding_box()["y"]
        bottom = seed.bounding_box()["y"] + seed.bounding_box()["height"]
    page.screenshot(path=str(shots / f"dimensions_{width}.png"),
                    clip={"x": 0, "y": max(0, top - 10), "width": width, "height": bottom - top + 20})


@pytest.mark.parametrize("text, said", [
    ("1e1", "10 heads do not fit."),  # read as 10 (an integer box read it as 1: 3 heads became 1 without a word)
    ("2.5", "n_heads: 2.5 is not a whole number. Still showing 1 head."),
    ("99", "n_heads: 99 is over the cap of 16. Still showing 1 head."),
    ("", "n_heads holds no number that can be read: type a whole number. Still showing 1 head."),
], ids=["1e1", "2.5", "99", "empty"])
def test_a_head_count_typed_is_read_as_typed_and_refused_in_words(page: Page, app_server: str, text: str, said: str):
    """Multi-head's number of heads, typed key by key: read as typed, refused in words, the heads kept."""
    open_app(page, f"{app_server}/{registry.MULTIHEAD.name}")
    type_size(page, "Number of heads (n_heads)", text)
    expect(page.locator(MAIN).get_by_test_id("stAlert").filter(has_text=said)).to_have_count(1)
