"""Token labels are shown as the characters they are, on every page, wherever they come from (issue 21): typed into
the token grid, in a ``?c=`` link, in a JSON file loaded on Share & export. Never a link, an image, bold text, a
KaTeX formula or a Material icon; and the browser never asks x.test for anything.

The configuration is made here with attn_core.make_config; its link and file with attn_core.share (the formats
the app reads). Its X makes every score of query 0 overflow the naive exp at Masking's default factor (× 1000), so
Masking names the keys in its message about it.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from playwright.sync_api import Page, Request, expect

from attn_core import make_config
from attn_core.share import encode_link, to_json
from attn_ui.app import registry

from .helpers import (
    EXCEPTION,
    MAIN,
    choose_radio,
    expect_rerun,
    goto_page,
    grids,
    nav_link,
    open_app,
    screenshot,
    table_after_heading,
    type_into_cell,
    wait_for_app,
)

pytestmark = pytest.mark.e2e

LABELS = (
    "[![i](http://x.test/i)](http://x.test)",  # an image inside a link
    '<img src="http://x.test/h.png">',  # HTML
    "$x^2$",  # a KaTeX formula
    ":material/home:",  # a Material icon
    "**bold**",  # emphasis
    "Donaudampfschifffahrtsgesellschaftskapit",  # one 40-character word: the label cap
)
assert len(LABELS[-1]) == 40
ROWS = [f"{i}: {label}" for i, label in enumerate(LABELS)]  # how the pages name a token ("0: …")
X = np.array([[1.0, 1.0], [1.0, 1.5], [1.5, 1.0], [2.0, 1.0], [1.0, 2.0], [1.2, 1.2]])  # q0·kj / √2 > 1.4 for every j
HOSTILE = make_config(list(LABELS), X, np.eye(2), np.eye(2), np.eye(2))
PLAIN = make_config([f"t{i}" for i in range(len(LABELS))], X, np.eye(2), np.eye(2), np.eye(2))
FILE_NAME = "[f](x.test) **bold** $x^2$.json"  # a file name is untrusted text too (no "/": not in a file name)

#: what must not be on any page: (what it is, selector)
RENDERED = [
    ("a Streamlit exception", EXCEPTION),
    ("a link to x.test", 'a[href*="x.test"]'),
    ("an image from x.test", 'img[src*="x.test"]'),
    ("**bold** rendered bold", 'xpath=//*[self::strong or self::b][normalize-space(.)="bold"]'),
    ("$x^2$ rendered by KaTeX", 'xpath=//*[local-name()="annotation"][normalize-space(.)="x^2"]'),
    (":material/home: rendered as an icon", '[role="img"][aria-label="home icon"]'),
]


def rendered(page: Page, where: str) -> list[str]:
    """Every element of RENDERED on the page: what it is, its HTML and the text of the element it is in."""
    found = []
    for what, selector in RENDERED:
        for html, context in page.locator(selector).evaluate_all(
            """es => es.map(e => [e.outerHTML.slice(0, 160),
                               (e.closest('[data-testid="stElementContainer"]') || e.parentElement).innerText])"""
        ):
            found.append(f"{where}: {what}: {html} in {' '.join(context.split())[:200]!r}")
    return found


def literal(page: Page, where: str, selector: str, expected: str, *, prefix: bool = False) -> list[str]:
    """The one element ``selector`` must show ``expected`` character for character (with ``prefix``: begin with it;
    the labels are in a message's first words, the rest of its wording is not under test here)."""
    element = page.locator(selector)
    try:
        expect(element).to_have_count(1)
    except AssertionError:
        return [f"{where}: expected one {selector!r}, found {element.count()}"]
    shown = element.inner_text().strip()
    ok = shown.startswith(expected) if prefix else shown == expected
    return [] if ok else [f"{where}: shows {shown!r}, not {expected!r}{' …' if prefix else ''}"]


def paragraph(start: str) -> str:
    """A paragraph of the page's Markdown containing ``start``."""
    return f'{MAIN} [data-testid="stMarkdownContainer"] p:has-text("{start}")'


def alert(start: str) -> str:
    """The Markdown of the alert (st.info, st.success, ...) containing ``start``, without its icon."""
    return f'{MAIN} [data-testid="stAlert"]:has-text("{start}") [data-testid="stMarkdownContainer"]'


def overflow_message(keys: list[int]) -> str:
    """How Masking's message about the naive softmax begins: the keys whose exp overflowed, by name."""
    return f"The naive exp overflows for key {', '.join(ROWS[j] for j in keys)}: "


def masking(page: Page) -> list[str]:
    """Masking with no mask, then every token padding, then the causal mask: the labels in its messages."""
    found = rendered(page, "Masking (no mask)")
    found += literal(page, "Masking (no mask)", paragraph("The naive exp overflows"), overflow_message(list(range(6))),
                     prefix=True)

    choose_radio(page, "Mask", "padding")
    page.get_by_test_id("stMultiSelect").locator("input").click()
    with expect_rerun(page):
        page.get_by_role("option", name="Select all", exact=True).click()
    page.keyboard.press("Escape")  # the list stays open
    expect(page.get_by_test_id("stMultiSelect")).to_contain_text(ROWS[-1])
    found += rendered(page, "Masking (every token padding)")
    found += literal(
        page, "Masking (every token padding)", alert("Every key is masked for"),
        f"Every key is masked for queries {', '.join(ROWS)}.", prefix=True,
    )

    choose_radio(page, "Mask", "causal")  # query 0 sees key 0 only
    found += rendered(page, "Masking (causal)")
    found += literal(page, "Masking (causal)", paragraph("The naive exp overflows"), overflow_message([0]), prefix=True)
    return found


def step_by_step(page: Page) -> list[str]:
    """The drill-down names query 0 in its headings and every key in its tables."""
    found = rendered(page, "Step by step")
    found += literal(page, "Step by step", f'{MAIN} h3:has-text("a · Scores of query")',
                     f"a · Scores of query {ROWS[0]} ", prefix=True)
    keys = [row[0] for row in table_after_heading(page, "Softmax of row 0")][:-1]  # the last row is Σ
    if keys != ROWS:
        found.append(f"Step by step: the softmax table's keys are {keys}, not {ROWS}")
    return found


def overview(page: Page) -> list[str]:
    found = rendered(page, "Overview")
    found += literal(page, "Overview", f'{MAIN} li:has-text("Tokens (6)")', f"Tokens (6): {', '.join(LABELS)}")
    return found


CHECKS = {registry.OVERVIEW: overview, registry.STEPS: step_by_step, registry.MASKING: masking}


def walk(page: Page) -> list[str]:
    """Every page of the registry in sidebar order: what is wrong on each."""
    found = []
    for p in registry.PAGES:
        if nav_link(page, p.title).get_attribute("aria-current") != "page":
            goto_page(page, p.title)
        found += CHECKS.get(p, lambda page, title=p.title: rendered(page, title))(page)
    return found


@pytest.fixture
def requested(page: Page) -> Iterator[list[str]]:
    """Every address the page asks for, from its first request on."""
    seen: list[str] = []

    def record(request: Request) -> None:
        seen.append(request.url)

    page.on("request", record)
    yield seen
    page.remove_listener("request", record)


def assert_clean(found: list[str], requested: list[str]) -> None:
    to_x_test = [url for url in requested if (urlsplit(url).hostname or "").endswith("x.test")]
    if found or to_x_test:
        pytest.fail("\n".join(found + [f"a request to x.test: {url}" for url in to_x_test]), pytrace=False)


def test_labels_typed_into_the_token_grid(page: Page, app_server: str, requested: list[str]) -> None:
    """A learner renames the tokens of a shared configuration (a link: no preset) in the token grid."""
    open_app(page, f"{app_server}/?c={encode_link(PLAIN, 'inputs')}")
    expect(page.locator(f"{MAIN} h1").first).to_have_text("Inputs & weights")  # the link's page: a second run
    wait_for_app(page)
    tokens = grids(page).filter(has=page.locator('th:text-is("token")'))
    for i, label in enumerate(LABELS):
        type_into_cell(page, tokens, i, 0, label, delay_ms=None)
    expect(page.get_by_test_id("stAlert").filter(has_text="The token labels are not changed")).to_have_count(0)
    found = rendered(page, "Inputs & weights (after typing)")
    assert_clean(found + walk(page), requested)


def test_labels_in_a_link(page: Page, app_server: str, requested: list[str]) -> None:
    open_app(page, f"{app_server}/?c={encode_link(HOSTILE, None)}")
    expect(page.get_by_text("This link could not be opened")).to_have_count(0)
    assert_clean(walk(page), requested)


def test_labels_in_a_loaded_file(page: Page, app_server: str, requested: list[str]) -> None:
    open_app(page, app_server)
    goto_page(page, "Share & export")
    with expect_rerun(page):
        page.get_by_test_id("stFileUploader").locator('input[type="file"]').set_input_files(
            {"name": FILE_NAME, "mimeType": "application/json", "buffer": to_json(HOSTILE).encode()}
        )
    found = rendered(page, "Share & export (file loaded)")
    found += literal(page, "Share & export (file loaded)", alert("Loaded"), f"Loaded {FILE_NAME}:", prefix=True)
    assert_clean(found + walk(page), requested)


# ---- direction: a label never reorders the text after it (issue 27) -------------------------------------------

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: once turned "Tokens (3): ‮abc, def, ghi" into "ihg ,fed ,cba"
BIDI = make_config([f"{RLO}abc", "def", "ghi", "שלום", "jkl"], X[:5], np.eye(2), np.eye(2), np.eye(2))
SHOTS = Path("/tmp/wt-small-shots")

#: the boxes of text found in an element: {text: [left, right, top]} (the first occurrence of each, in DOM order)
_BOXES = """(el, words) => {
  const out = {}, walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    for (const w of words) {
      const i = n.data.indexOf(w);
      if (i < 0 || w in out) continue;
      const r = document.createRange();
      r.setStart(n, i); r.setEnd(n, i + w.length);
      const b = r.getBoundingClientRect();
      out[w] = [b.left, b.right, b.top];
    }
  }
  return out;
}"""


def left_to_right(page: Page, selector: str, words: list[str]) -> list[str]:
    """What is wrong with ``words`` in the element ``selector``, drawn on one line: each must stand to the right of
    the one before (a sentence's words in their order)."""
    boxes = page.locator(selector).first.evaluate(_BOXES, words)
    missing = [w for w in words if w not in boxes]
    if missing:
        return [f"{selector}: {missing} not found"]
    return [f"{selector}: {b!r} (x {boxes[b][0]:.0f}) is not right of {a!r} (x {boxes[a][1]:.0f})"
            for a, b in pairwise(words) if boxes[b][0] < boxes[a][1] - 1 or abs(boxes[b][2] - boxes[a][2]) > 2]


def test_a_right_to_left_override_in_a_label_moves_nothing_after_it(page: Page, app_server: str) -> None:
    """A label holding U+202E before other labels, in a link: the sentences show the labels after it in their order,
    left to right, and a Hebrew label right to left (its first letter rightmost)."""
    open_app(page, f"{app_server}/?c={encode_link(BIDI, None)}")
    tokens = f'{MAIN} li:has-text("Tokens (5)")'
    wrong = left_to_right(page, tokens, ["Tokens", "abc", "def", "ghi", "שלום", "jkl"])
    wrong += left_to_right(page, tokens, ["ם", "ש"])  # Hebrew: its last letter (ם) left of its first (ש)
    screenshot(page, SHOTS / "bidi_overview.png")
    goto_page(page, "Step by step")
    wrong += left_to_right(page, f'{MAIN} h3:has-text("a · Scores of query")', ["Scores", "abc", "with every key"])
    screenshot(page, SHOTS / "bidi_step_by_step.png")
    assert not wrong, "\n".join(wrong)
