"""The whole-number boxes beyond the sizes, typed key by key in Chromium (tests/app/test_whole_boxes.py has every box
and value): an integer box's browser side read "1e3" as 1 and "2.5" as 2 without a word, and left a number out of
its bounds in a red box with Streamlit's English tooltip. Now "1e3" is 1000, and "2.5" (or a number out of range) is
refused under the box in words, the page keeping the value it used, the box what was typed.

One screenshot at 1400 × 900 of a refused box on each page with such a box, in $E2E_SCREENSHOTS (else pytest's tmp
dir): look at them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from attn_ui.app import registry

from .. import tiny_bert, tiny_gpt2
from . import helpers
from .helpers import MAIN, expect_rerun, goto_page, open_app, sized_page, type_slowly

pytestmark = pytest.mark.e2e


@pytest.fixture
def small_page(browser: Browser) -> Iterator[Page]:
    with sized_page(browser, 1400, 900) as page:
        yield page


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: $E2E_SCREENSHOTS if set (to look at them), else pytest's tmp dir."""
    return Path(os.environ.get("E2E_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))


def box(page: Page, label: str) -> Locator:
    return page.locator(MAIN).get_by_label(label, exact=True)


def type_into(page: Page, label: str, text: str) -> None:
    """Type ``text`` into the number box ``label`` key by key at a person's pace, then Enter; wait for its run."""
    type_slowly(page, box(page, label), text)


def said(page: Page, words: str) -> Locator:
    """The one alert on the page saying exactly ``words``, visible."""
    alert = page.locator(MAIN).get_by_test_id("stAlert").filter(has=page.get_by_text(words, exact=True))
    expect(alert).to_have_count(1)
    expect(alert).to_be_visible()
    return alert


def shoot(page: Page, label: str, alert: Locator, path: Path) -> None:
    """The box and its refusal in the 1400 × 900 screen: nothing of either cut by the screen's edges."""
    alert.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(200)
    for part in (box(page, label), alert):
        b = part.bounding_box()
        assert b and b["x"] >= 0 and b["x"] + b["width"] <= 1400 and b["y"] >= 0 and b["y"] + b["height"] <= 900, b
    page.screenshot(path=str(path))


def test_a_seed_typed_1e3_is_1000_and_2_5_is_refused_in_words(small_page: Page, app_server: str, shots: Path):
    page = small_page
    open_app(page, f"{app_server}/{registry.INPUTS.name}")
    type_into(page, "Seed for new cells", "1e3")
    expect(box(page, "Seed for new cells")).to_have_value("1000")
    expect(page.locator(MAIN).get_by_text("Seed for new cells:")).to_have_count(0)  # taken: nothing said
    type_into(page, "Seed for new cells", "2.5")  # the seed in use is 1000: "1e3" was read as 1000
    alert = said(page, "Seed for new cells: 2.5 is not a whole number. Still using seed 1000.")
    expect(box(page, "Seed for new cells")).to_have_value("2.5")  # what was typed stays
    shoot(page, "Seed for new cells", alert, shots / "whole_inputs_seed.png")


def test_a_shift_s_of_2_5_is_refused_in_words(small_page: Page, app_server: str, shots: Path):
    page = small_page
    open_app(page, f"{app_server}/{registry.MODERN.name}")
    with expect_rerun(page):  # seed 000's d_k of 3 is odd: the preset widens each head to 4 (RoPE turns pairs)
        page.get_by_role("button", name="Llama / Mistral", exact=True).click()
    expect(page.locator(MAIN).get_by_text("each head was widened from 3 to 4", exact=False)).to_be_visible()
    with expect_rerun(page):
        page.locator(f'{MAIN} [data-testid="stButtonGroup"] button').filter(has_text="RoPE").first.click()
    type_into(page, "shift s", "2.5")
    alert = said(page, "shift s: 2.5 is not a whole number. Still using s = 5.")
    expect(box(page, "shift s")).to_have_value("2.5")
    expect(page.locator(MAIN).get_by_text("(m+s, n+s) = (7, 5)")).to_have_count(1)
    shoot(page, "shift s", alert, shots / "whole_modern_shift.png")


@pytest.fixture(scope="module")
def gpt2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tiny_gpt2.build(tmp_path_factory.mktemp("gpt2"))
    with helpers.model_server(folder, tmp_path_factory.mktemp("streamlit") / "s.log", "ATTN_CAUSAL_MODEL") as url:
        yield url


def test_tokens_to_write_typed_2_5_or_1e3_are_refused_in_words(small_page: Page, gpt2_server: str, shots: Path):
    page = small_page
    open_app(page, gpt2_server)
    goto_page(page, "A model that writes")
    expect(page.get_by_text("Next token at T = 1")).to_be_visible(timeout=30_000)
    type_into(page, "Tokens to write", "1e3")  # 1000: over the 20 a click writes (it came as 1)
    said(page, "Tokens to write: 1000 is over the cap of 20. Still writing 8 tokens per click.")
    type_into(page, "Tokens to write", "2.5")
    alert = said(page, "Tokens to write: 2.5 is not a whole number. Still writing 8 tokens per click.")
    expect(box(page, "Tokens to write")).to_have_value("2.5")
    shoot(page, "Tokens to write", alert, shots / "whole_generate_tokens.png")
    with expect_rerun(page):
        page.get_by_role("button", name="Write").click()
    expect(page.locator(MAIN).get_by_text("8 tokens written, greedy: each time the most probable token.")
           ).to_be_visible(timeout=30_000)


@pytest.fixture(scope="module")
def bert_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tiny_bert.build(tmp_path_factory.mktemp("bert"))
    with helpers.model_server(folder, tmp_path_factory.mktemp("streamlit") / "s.log") as url:
        yield url


def test_a_padding_of_2_5_is_refused_in_words(small_page: Page, bert_server: str, shots: Path):
    page = small_page
    open_app(page, bert_server)
    goto_page(page, "A real model")
    type_into(page, "Pad to (tokens)", "2.5")
    alert = said(page, "Pad to (tokens): 2.5 is not a whole number. Still without padding.")
    expect(box(page, "Pad to (tokens)")).to_have_value("2.5")
    shoot(page, "Pad to (tokens)", alert, shots / "whole_model_pad.png")


def test_a_prediction_out_of_its_range_is_said_in_words(small_page: Page, app_server: str, shots: Path):
    page = small_page
    open_app(page, f"{app_server}/{registry.LEARN.name}?lesson=match-weight")
    type_into(page, "Your prediction", "1.5")  # Enter checks it (the form's button)
    alert = said(page, "Your prediction: 1.5 is over 1. Type a number from 0 to 1.")
    expect(box(page, "Your prediction")).to_have_value("1.5")
    shoot(page, "Your prediction", alert, shots / "whole_learn_prediction.png")
