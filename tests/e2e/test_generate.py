"""The models that generate in Chromium (issue 30), on the tiny random checkpoints (tests/tiny_gpt2.py,
tests/tiny_t5.py) that the servers read as their operator's models: A model that writes writes greedily and draws
each new token's attention; A model that translates opens a cross-attention head on Score functions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page, expect

import attn_models

from .. import tiny_gpt2, tiny_llama, tiny_t5
from . import helpers
from .helpers import MAIN, expect_rerun, goto_page, open_app

pytestmark = pytest.mark.e2e
GPT2_REFERENCE = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_gpt2.npz")


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gpt2.build(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def gpt2_server(tmp_path_factory: pytest.TempPathFactory, gpt2_dir: Path) -> Iterator[str]:
    with helpers.model_server(gpt2_dir, tmp_path_factory.mktemp("streamlit") / "s.log", "ATTN_CAUSAL_MODEL") as url:
        yield url


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_llama.build(tmp_path_factory.mktemp("llama"), "llama")  # 4 query heads on 2 key/value heads


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory, llama_dir: Path) -> Iterator[str]:
    with helpers.model_server(llama_dir, tmp_path_factory.mktemp("streamlit") / "s.log", "ATTN_CAUSAL_MODEL") as url:
        yield url


@pytest.fixture(scope="module")
def t5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tiny_t5.build(tmp_path_factory.mktemp("t5"))
    with helpers.model_server(folder, tmp_path_factory.mktemp("streamlit") / "s.log", "ATTN_TRANSLATOR_MODEL") as url:
        yield url


def test_writing_shows_transformers_greedy_tokens_and_their_attention(page: Page, gpt2_server: str,
                                                                      gpt2_dir: Path) -> None:
    written = attn_models.load(str(gpt2_dir)).tokenizer.decode([int(i) for i in GPT2_REFERENCE["p0_greedy"]])
    open_app(page, gpt2_server)
    goto_page(page, "A model that writes")
    expect(page.get_by_text("Next token at T = 1")).to_be_visible(timeout=30_000)
    with expect_rerun(page):
        page.get_by_role("button", name="Write").click()
    said = page.locator(MAIN).get_by_text("8 tokens written, greedy: each time the most probable token.")
    expect(said).to_be_visible(timeout=30_000)
    expect(page.locator(f"{MAIN} strong", has_text=written)).to_be_visible()
    expect(page.get_by_text("attention of each new token's query")).to_be_visible()


def test_a_cross_attention_head_opens_on_score_functions(page: Page, t5_server: str) -> None:
    open_app(page, t5_server)
    goto_page(page, "A model that translates")
    box = page.get_by_label("English sentence", exact=True)
    box.fill(tiny_t5.SENTENCES[0])
    with expect_rerun(page):
        box.press("Enter")
    expect(page.locator(MAIN).get_by_text("which source words each output token read")).to_be_visible(
        timeout=30_000)
    expect(page.locator(f"{MAIN} [data-testid=stVegaLiteChart]").first).to_be_visible()
    page.get_by_role("button", name="Open this cross-attention head in the explorer").click()
    expect(page.get_by_role("heading", name="Score functions and cross-attention")).to_be_visible(timeout=30_000)
    expect(page.locator(MAIN).get_by_text("The decoder's cross-attention: the queries come from the translation "
                                          "being written")).to_have_count(0)  # said on Inputs and the model pages
    helpers.assert_no_exception(page)


def test_a_llama_writes_and_opens_a_head_with_its_rope(page: Page, llama_server: str) -> None:
    """A Llama-family checkpoint as the operator's causal model: the page says its attention (RoPE, grouped K/V),
    writes, and a head opened in the explorer shows Step by step's RoPE step. (Its tokens are transformers' greedy
    ones: tests/app/test_generate_llama.py; the tiny tokenizer's pieces are random bytes, not text to look for.)"""
    open_app(page, llama_server)
    goto_page(page, "A model that writes")
    expect(page.get_by_text("Next token at T = 1")).to_be_visible(timeout=30_000)
    expect(page.locator(MAIN).get_by_text("4 query heads share 2 K/V heads", exact=False).first).to_be_visible()
    with expect_rerun(page):
        page.get_by_role("button", name="Write").click()
    said = page.locator(MAIN).get_by_text("8 tokens written, greedy: each time the most probable token.")
    expect(said).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Open this head in the explorer").click()
    expect(page.get_by_role("heading", name="Step by step")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name="RoPE: q and k turned by their position", exact=False)).to_be_visible(
        timeout=30_000)
    helpers.assert_no_exception(page)
