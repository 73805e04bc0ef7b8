"""The model pages' text boxes in Chromium, on the tiny checkpoints of tests/ (no network): text pasted over the
limit stays in the box as pasted and the page says so under it, in the learner's language, naming the box, the
length and the limit, while it keeps computing with the last text within it. A fresh reviewer pasted 1,200
characters into "English sentence": with Streamlit's max_chars the browser dropped the paste without a word.

The text goes in as a paste does (the clipboard, then Ctrl+V), then Enter. With ATTN_SHOTS=<folder> the test also
saves the message at 1400 × 900, in English and Chinese, on the three pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from .helpers import MAIN, expect_rerun, open_app

pytestmark = pytest.mark.e2e
SHOTS = os.environ.get("ATTN_SHOTS")
ALERT = '[data-testid="stAlertContentWarning"]'


def paste(page: Page, box: Locator, text: str) -> None:
    """Replace what ``box`` holds by ``text`` as a learner pasting it does (clipboard, Ctrl+V), then Enter."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate("t => navigator.clipboard.writeText(t)", text)
    box.scroll_into_view_if_needed()
    box.click()
    box.press("Control+a")
    box.press("Control+v")
    with expect_rerun(page):
        box.press("Enter")


def shot(page: Page, name: str, message: Locator) -> None:
    if not SHOTS:
        return
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_timeout(300)
    message.scroll_into_view_if_needed()
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no focus ring over the text
    page.wait_for_timeout(200)
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


CASES = {  # page: (address, the box's label in en and zh, characters pasted, the message in en, and in zh)
    "translate": ("translate", ("English sentence", "英文句子"), 1_200,
                  "English sentence: 1,200 characters, at most 1,000 are read: shorten it. The sentence in use is "
                  "still the last one within the limit: “It is easy to translate languages with transformers”.",
                  "英文句子：1,200 个字符，最多读取 1,000 个：请缩短。仍在使用限度内的最后一个句子："
                  "“It is easy to translate languages with transformers”。"),
    "generate": ("generate", ("Prompt", "提示词"), 2_500,
                 "Prompt: 2,500 characters, at most 2,000 are read: shorten it. The prompt in use is still the last "
                 "one within the limit: “The cat sat on the”.",
                 "提示词：2,500 个字符，最多读取 2,000 个：请缩短。仍在使用限度内的最后一条提示词："
                 "“The cat sat on the”。"),
    "model": ("model", ("Sentence", "句子"), 4_800,
              "Sentence: 4,800 characters, at most 4,000 are read: shorten it. The sentence in use is still the last "
              "one within the limit: “The cat sat on the mat because it was tired.”.",
              "句子：4,800 个字符，最多读取 4,000 个：请缩短。仍在使用限度内的最后一个句子："
              "“The cat sat on the mat because it was tired.”。"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("which", list(CASES))
def test_text_pasted_over_the_limit_stays_in_the_box_and_is_said(page: Page, models_server: str, which: str,
                                                                 lang: str) -> None:
    path, labels, n, said_en, said_zh = CASES[which]
    open_app(page, f"{models_server}/?lang={lang}")  # the root first (a fresh server's first page URL is a legacy run)
    open_app(page, f"{models_server}/{path}?lang={lang}")
    main = page.locator(MAIN)
    before = main.inner_text()
    pasted = ("The dog slept on the rug all afternoon. " * 200)[:n]
    box = page.get_by_label(labels[lang == "zh"], exact=True)
    paste(page, box, pasted)
    expect(box).to_have_value(pasted)  # kept as pasted, every character
    message = main.locator(ALERT).filter(has_text=str(f"{n:,}"))
    expect(message).to_have_count(1)
    words = message.locator('[data-testid="stMarkdownContainer"]').inner_text().strip()  # without the icon's name
    assert words == (said_zh if lang == "zh" else said_en)
    after = main.inner_text()
    assert after.replace(message.inner_text(), "").split() == before.split()  # still computing with the last text
    shot(page, f"{which}_{lang}", message)


def test_a_paste_past_ten_times_the_limit_is_cut_in_the_box_and_said(page: Page, models_server: str) -> None:
    """What the session keeps of a box is bounded: 30,000 characters pasted into "English sentence" (read: 1,000)
    leave its first 10,000 in the box, in the browser too, and the page says so."""
    open_app(page, models_server)
    open_app(page, f"{models_server}/translate")
    pasted = ("The dog slept on the rug all afternoon. " * 800)[:30_000]
    box = page.get_by_label("English sentence", exact=True)
    paste(page, box, pasted)
    expect(box).to_have_value(pasted[:10_000])
    message = page.locator(MAIN).locator(ALERT).locator('[data-testid="stMarkdownContainer"]')
    expect(message).to_have_text("English sentence: 30,000 characters, at most 1,000 are read: shorten it. The box "
                                 "keeps only the first 10,000 of them. The sentence in use is still the last one "
                                 "within the limit: “It is easy to translate languages with transformers”.")
