"""A real model's result in Chromium (issue 29), on all-MiniLM-L6-v2 (the server reads it through $ATTN_MODEL):
type a sentence and two others, switch off head 5 of layer 2 in the multiselect, and the similarity table shows the
number transformers gives with that head's output replaced by its mean (tests/models/reference_outputs.npz)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .. import minilm
from ..models import make_output_reference as cases
from . import helpers
from .helpers import MAIN, expect_rerun, goto_page, open_app, table_after_heading

pytestmark = pytest.mark.e2e
REFERENCE = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_outputs.npz")
YOURS, OTHERS = cases.SENTENCES[0], cases.SENTENCES[1:3]


@pytest.fixture(scope="module")
def minilm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own whose A real model page reads all-MiniLM-L6-v2 (skipped where its package is not)."""
    folder = minilm.folder()
    with helpers.model_server(folder, tmp_path_factory.mktemp("streamlit") / "streamlit.log") as url:
        yield url


def four(x: float) -> str:
    return f"{x:.4f}".replace("-", "\u2212")


def test_switching_a_head_off_changes_the_similarity_to_transformers_number(page: Page, minilm_server: str) -> None:
    emb, off = REFERENCE["minilm_embeddings"], REFERENCE["minilm_one_mean"]  # (2, 5) off, its mean
    before = [four(emb[0] @ emb[j]) for j in (1, 2)]
    after = [four(off[0] @ off[j]) for j in (1, 2)]
    assert before != after
    open_app(page, minilm_server)
    goto_page(page, "A real model")
    sentence = page.get_by_label("Sentence", exact=True)
    sentence.fill(YOURS)
    with expect_rerun(page):
        sentence.press("Enter")
    others = page.get_by_label("Other sentences, one per line (at most 8)", exact=True)
    others.fill("\n".join(OTHERS))
    with expect_rerun(page):
        others.press("Control+Enter")  # a text area sends its text on Ctrl+Enter (or when it loses focus)
    table = table_after_heading(page, "Switch heads off")
    assert [row[1] for row in table] == before and table[0][0] == f"{OTHERS[0]} (closest)"

    box = page.locator(MAIN).get_by_test_id("stMultiSelect").filter(has_text="Heads switched off")
    box.locator("input").click()
    page.keyboard.type("L2 · H5")  # the list of 72 heads shows the first ones: typing filters it
    with expect_rerun(page):
        page.get_by_role("option", name="L2 · H5", exact=True).click()
    page.keyboard.press("Escape")  # the list stays open
    expect(page.locator(f"{MAIN} th", has_text="1 head off")).to_be_visible()
    table = table_after_heading(page, "Switch heads off")
    assert [row[1] for row in table] == before  # as trained
    assert [row[2] for row in table] == after  # with head 5 of layer 2 switched off
    expect(page.get_by_text(f"The similarity of your sentence and “{OTHERS[0]}” stayed 0.67 ({before[0]} → "
                            f"{after[0]}).")).to_be_visible()
