"""Two lessons of Learn done as a learner in Chromium: predict, check, read the reveal, try it in the explorer.

The first lesson is opened from the sidebar, answered wrongly, tried again and answered rightly; its numbers are
checked against numpy written out (tests/e2e/seed000.py). The second is opened by a link (?lesson=…). Every chart
must be drawn at a readable size, with no two labels on top of each other. Screenshots go to $E2E_SCREENSHOTS if
set (to look at them), else under pytest's tmp dir.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Locator, Page, expect

from attn_ui import lessons

from .. import minilm
from .helpers import (
    MAIN,
    chart_after,
    charts,
    expect_rerun,
    fit_viewport_to_content,
    goto_page,
    heatmap_values,
    model_server,
    nav_link,
    open_app,
    screenshot,
    server_with,
)
from .seed000 import W_K, W_Q, X, attention

pytestmark = pytest.mark.e2e
N_LESSONS = len(lessons.LESSONS)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("E2E_SCREENSHOTS") or tmp_path)


def press(page: Page, name: str) -> None:
    """Click the button called ``name`` and wait for the app's rerun."""
    button = page.get_by_role("button", name=name)
    expect(button).to_be_enabled()
    with expect_rerun(page):
        button.click()


def pick(page: Page, label: str, option: str) -> None:
    """Pick ``option`` of the prediction's radio ``label``: inside the answer's form, no rerun until Check."""
    group = page.get_by_role("radiogroup", name=label)
    choice = group.locator('[data-testid="stRadioOption"]').filter(has=page.get_by_text(option, exact=True))
    expect(choice).to_have_count(1)
    choice.click()
    expect(choice.locator("input")).to_be_checked()


def label_boxes(chart: Locator) -> list[list[float]]:
    """[left, top, right, bottom] of every text a chart shows: numbers on marks and axis labels (hidden ones out)."""
    return chart.locator("svg text").evaluate_all("""es => es
        .filter(e => e.textContent.trim() && getComputedStyle(e).opacity !== '0' && e.getAttribute('opacity') !== '0')
        .map(e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })""")


def axis_labels(chart: Locator, axis: str) -> list[tuple[str, bool]]:
    """The labels of a chart's ``axis`` ("X" or "Y"), each with whether it is drawn (Vega hides a label its overlap
    rule drops with opacity 0)."""
    group = chart.locator(f'g.role-axis[aria-label^="{axis}-axis"]').first
    return [tuple(pair) for pair in group.locator("g.role-axis-label text").evaluate_all(
        "ts => ts.map(t => [t.textContent, getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0'])")]


def assert_charts_readable(page: Page) -> None:
    """Every chart on the page is drawn at a readable size and no two of its labels overlap."""
    found = charts(page)
    assert found.count(), "no chart on the page"
    for i in range(found.count()):
        chart = found.nth(i)
        box = chart.bounding_box()
        assert box and box["width"] >= 150 and box["height"] >= 100, f"chart {i} collapsed: {box}"
        boxes = label_boxes(chart)
        for a in range(len(boxes)):
            for b in range(a + 1, len(boxes)):
                (l1, t1, r1, b1), (l2, t2, r2, b2) = boxes[a], boxes[b]
                overlap_x, overlap_y = min(r1, r2) - max(l1, l2), min(b1, b2) - max(t1, t2)
                assert overlap_x <= 1 or overlap_y <= 1, f"chart {i}: labels {a} and {b} overlap"


def test_lesson_one_wrong_then_right_then_step_by_step(app_page: Page, shots: Path) -> None:
    page = app_page
    weights = attention()[1]  # [3, 3], numpy written out
    scores = (X @ W_Q) @ (X @ W_K).T  # [3, 3]

    goto_page(page, "Learn")
    main = page.locator(MAIN)
    expect(page.get_by_role("heading", name="1. By hand: the best match")).to_be_visible()
    expect(main).not_to_contain_text("The numbers")  # nothing revealed yet

    pick(page, "Your prediction", "input3")
    press(page, "Check my answer")
    expect(main).to_contain_text("Not quite. You said input3; the answer is input2.")
    expect(main).to_contain_text(f"Lesson 1 of {N_LESSONS} · wrong")
    screenshot(page, shots / "learn_1_wrong.png")

    press(page, "Try again")
    expect(main).not_to_contain_text("Not quite")
    pick(page, "Your prediction", "input2")
    press(page, "Check my answer")
    expect(main).to_contain_text("Right. The answer is input2.")
    expect(main).to_contain_text(f"Lesson 1 of {N_LESSONS} · right on the 2nd try")
    # the reveal: input2's scores and weights, as numpy gives them
    row = ", ".join(f"{s:g}" for s in scores[1])
    expect(main).to_contain_text(f"[{row}]")
    _, _, shown = heatmap_values(chart_after(page, "Weights"))
    np.testing.assert_allclose(shown, weights, rtol=5e-4)  # the tooltip shows 4 significant digits
    assert_charts_readable(page)
    screenshot(page, shots / "learn_1_right.png")
    assert "lesson=best-match" in page.url  # the address links to the lesson

    press(page, "Try it yourself on Step by step")
    expect(nav_link(page, "Step by step")).to_have_attribute("aria-current", "page")
    _, _, on_steps = heatmap_values(chart_after(page, "Weights"))
    np.testing.assert_allclose(on_steps, weights, rtol=5e-4)
    expect(page.get_by_role("heading", name="Softmax of row 1")).to_be_visible()  # the drill-down follows input2

    goto_page(page, "Learn")  # the answer is still there
    expect(main).to_contain_text("Right. The answer is input2.")


def test_a_link_opens_a_lesson_and_try_it_opens_scaling(page: Page, app_server: str, shots: Path) -> None:
    open_app(page, f"{app_server}/?lesson=temperature")
    expect(nav_link(page, "Learn")).to_have_attribute("aria-current", "page")
    main = page.locator(MAIN)
    expect(page.get_by_role("heading", name="6. Scores times 10")).to_be_visible()

    pick(page, "Your prediction", "they get sharper: closer to all the weight on one key")
    press(page, "Check my answer")
    expect(main).to_contain_text("Right.")
    bars = charts(page).last
    expect(bars).to_contain_text("Entropy of each row of weights")
    expect(bars.locator("g.mark-rect path")).to_have_count(12)  # 6 rows × (as they are, times 10)
    assert_charts_readable(page)
    screenshot(page, shots / "learn_6_right.png")

    press(page, "Try it yourself on Scaling")
    expect(nav_link(page, "Scaling")).to_have_attribute("aria-current", "page")
    expect(main).to_contain_text("÷ √d_k = √10")
    screenshot(page, shots / "learn_6_scaling.png")


@pytest.fixture(scope="module")
def minilm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own whose model lesson reads all-MiniLM-L6-v2's real weights (tests/minilm.py)."""
    with model_server(minilm.folder(), tmp_path_factory.mktemp("streamlit") / "streamlit.log") as url:
        yield url


def test_the_real_model_lesson_then_a_real_model(page: Page, minilm_server: str, shots: Path) -> None:
    lesson = next(x for x in lessons.LESSONS if x.needs_model)
    worked = lessons.solved(lesson.key, minilm.model())
    n_heads, origin = worked.config.n_heads, worked.config.origin
    open_app(page, f"{minilm_server}/?lesson={lesson.key}")
    main = page.locator(MAIN)
    expect(page.get_by_role("heading", name=f"{lessons.index_of(lesson.key) + 1}. {lesson.title}")).to_be_visible(
        timeout=60_000)  # the model is read once per server
    pick(page, "Your prediction", "[CLS], the token the tokenizer puts before the sentence")
    press(page, "Check my answer")
    expect(main).to_contain_text("Right.")
    expect(main).to_contain_text(f"{n_heads} of the {n_heads} heads give their largest share to [CLS].")
    bars = charts(page).filter(has_text="Where each head's weight goes")
    expect(bars.locator("g.mark-rect path")).to_have_count(3 * n_heads)  # [CLS], [SEP], the words: per head
    screenshot(page, shots / "learn_real_model.png")
    assert_charts_readable(page)

    press(page, "Try it yourself on A real model")
    expect(nav_link(page, "A real model")).to_have_attribute("aria-current", "page")
    expect(page.get_by_label("Sentence", exact=True)).to_have_value(origin["sentence"])
    expect(main).to_contain_text(f"Layer {origin['layer']}, head 0")
    expect(page.get_by_role("heading", name="In the explorer now")).to_be_visible()
    screenshot(page, shots / "learn_real_model_try.png")


def test_a_typed_number_is_checked_by_one_click(page: Page, app_server: str, shots: Path) -> None:
    """Type the number at a person's pace and click Check my answer once: no Enter, the field not left before.
    (Streamlit commits a number_input when it loses focus; before the form, the click that took the focus away
    only committed the number, and a second click was needed.)"""
    lesson = lessons.by_key("match-weight")
    answer = lessons.solved(lesson.key).solution.answer
    open_app(page, f"{app_server}/?lesson={lesson.key}")
    main = page.locator(MAIN)
    screenshot(page, shots / "learn_2_before.png")
    field = page.get_by_label("Your prediction")
    field.click()
    page.keyboard.type(f"{answer:.2f}", delay=60)
    expect(field).to_be_focused()
    with expect_rerun(page):
        page.get_by_role("button", name="Check my answer").click()  # once
    expect(main).to_contain_text(f"Right. The answer is {answer:.4f}.")
    expect(main).to_contain_text(f"Lesson 2 of {N_LESSONS} · right on the first try")
    screenshot(page, shots / "learn_2_right.png")
    weights = chart_after(page, "Weights")  # the question is input2's weight on input2: every token labelled
    tokens = [(t, True) for t in ("input1", "input2", "input3")]
    assert axis_labels(weights, "X") == tokens and axis_labels(weights, "Y") == tokens

    press(page, "Try again")  # a wrong try after the right one: the record stays right
    field = page.get_by_label("Your prediction")
    field.click()
    page.keyboard.type("1", delay=60)
    with expect_rerun(page):
        page.get_by_role("button", name="Check my answer").click()
    expect(main).to_contain_text("Not quite. You said 1;")
    expect(main).to_contain_text(f"Lesson 2 of {N_LESSONS} · right on the first try · tried again once")


def test_the_lesson_list_opens_a_lesson_by_click_and_by_keyboard(page: Page, app_server: str, shots: Path) -> None:
    open_app(page, f"{app_server}/?lesson=best-match&lang=ko")
    main = page.locator(MAIN)
    summary = page.locator(".st-key-learn_list summary")
    with expect_rerun(page):
        summary.click()
    rows = page.locator(".st-key-learn_list button")
    expect(rows).to_have_count(N_LESSONS)
    screenshot(page, shots / "learn_list_ko.png")
    with expect_rerun(page):
        rows.nth(2).click()
    expect(page.locator("h2").filter(has_text="3. ")).to_be_visible()
    assert "lesson=uniform" in page.url
    expect(rows.first).not_to_be_visible()  # the list closed over the lesson it opened

    with expect_rerun(page):
        summary.click()
    rows.nth(6).focus()  # the rows are buttons: Tab reaches them, Enter opens one
    with expect_rerun(page):
        page.keyboard.press("Enter")
    expect(page.locator("h2").filter(has_text="7. ")).to_be_visible()
    assert f"lesson={lessons.LESSONS[6].key}" in page.url
    expect(main).not_to_contain_text("Traceback")


@pytest.fixture(scope="module")
def generating_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own whose causal and translator models are the tiny GPT-2 and T5 (the operator's:
    $ATTN_CAUSAL_MODEL, $ATTN_TRANSLATOR_MODEL, set for the server process only)."""
    yield from server_with(tmp_path_factory.mktemp("streamlit") / "streamlit.log", {
        "ATTN_CAUSAL_MODEL": minilm.lesson_source("next-word"),
        "ATTN_TRANSLATOR_MODEL": minilm.lesson_source("source-word")})


@pytest.mark.parametrize("key, page_title", [("next-word", "A model that writes"),
                                             ("source-word", "A model that translates")])
def test_a_lesson_that_generates_then_its_page(page: Page, generating_server: str, shots: Path, key: str,
                                               page_title: str) -> None:
    """The GPT-2 and T5 lessons: pick a token, check, read the reveal (wide and at a phone's width), try it."""
    lesson = lessons.by_key(key)
    worked = lessons.solved(key, minilm.lesson_model(lesson))
    facts, answer = worked.solution.facts, worked.solution.answer
    open_app(page, f"{generating_server}/?lesson={key}")
    main = page.locator(MAIN)
    expect(page.get_by_role("heading", name=f"{lessons.index_of(key) + 1}. {lesson.title}")).to_be_visible(
        timeout=60_000)
    options = page.get_by_role("radiogroup", name="Your prediction").locator('[data-testid="stRadioOption"]')
    expect(options).to_have_count(worked.config.n_seq)  # one per token of the configuration
    screenshot(page, shots / f"learn_{key}_question.png")
    options.nth(answer).click()
    press(page, "Check my answer")
    expect(main).to_contain_text("Right.")
    expect(main).to_contain_text(f"Head {facts['head']} of layer {facts['layer']} gives “{facts['top']}” "
                                 f"{lessons.show(facts['w_top'], 4)}")
    expect(charts(page)).to_have_count(len(worked.solution.views))
    screenshot(page, shots / f"learn_{key}_right.png")
    assert_charts_readable(page)
    page.set_viewport_size({"width": 390, "height": 900})
    page.wait_for_timeout(500)
    fit_viewport_to_content(page, width=390)
    page.screenshot(path=str(shots / f"learn_{key}_right_390.png"))
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_timeout(300)
    press(page, f"Try it yourself on {page_title}")
    expect(nav_link(page, page_title)).to_have_attribute("aria-current", "page")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    screenshot(page, shots / f"learn_{key}_try.png")
