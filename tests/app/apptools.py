"""AppTest helpers: a fresh app, grid edits through the editor's session-state edit dict."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


def new_app(page: str | None = None, timeout: float = 30) -> AppTest:
    """Run the app once (Overview), then switch to ``page`` ("pages/x.py") if given."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    if page:
        at.switch_page(page).run()
    return at


def app_on(cfg, page: str) -> AppTest:
    """A session holding ``cfg`` (validated first), on ``page`` ("pages/x.py")."""
    from attn_core import validate_config

    validate_config(cfg)
    at = new_app()
    at.session_state["config"] = cfg
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def too_large_for_a_grid():
    """Seed 000 with W_Q 150 × 150 = 22,500 cells: more than a grid takes (Exact input sets one cell at a time)."""
    from dataclasses import replace

    import numpy as np

    from attn_core import load_preset

    cfg = load_preset("seed000")
    rng = np.random.default_rng(3)
    d = 150
    return replace(cfg, x=rng.standard_normal((3, d)), w_q=rng.standard_normal((d, 150)),
                   w_k=rng.standard_normal((d, 150)), w_v=rng.standard_normal((d, cfg.w_o.shape[0])))


def editor_key(at: AppTest, name: str) -> str:
    """The current key of a matrix grid ("x", "w_q", ...) or of the token grid ("tokens")."""
    return f"{name}_editor_{at.session_state['editor_version']}"


def edit_cells(at: AppTest, name: str, edits: dict[int, dict[int, object]]) -> AppTest:
    """Type values into a grid: {row: {column: value}}, as the browser's data_editor reports them."""
    rows = {r: {str(c): v for c, v in cols.items()} for r, cols in edits.items()}
    at.session_state[editor_key(at, name)] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    return at.run()


def open_share(at: AppTest) -> AppTest:
    """Open the sidebar's Share this (its contents are made only while it is open), as a click on it does."""
    from attn_ui.views import share_ui

    at.session_state[share_ui.SIDEBAR_OPEN] = True
    return at.run()


def plain(markdown: str) -> str:
    """The text a reader sees of Markdown the app wrote, its backslash escapes (attn_ui.widgets.text.md_escape) read."""
    return re.sub(r"\\(.)", r"\1", markdown)


#: a note inside Markdown, as attn_ui.widgets.matrix_display.note_markdown writes it (its brackets escaped)
NOTE = re.compile(r":small\[:gray\[((?:\\.|[^\\\]])*)\]\]")
FORMULA = re.compile(r"^\$\$\n(.*?)\n\$\$$", re.S | re.M)  # a display formula's $$ block in Markdown


def notes(at) -> list[str]:
    """Every caption of the main area (``at`` an AppTest) or of a block: the st.caption elements', and the notes in a
    Markdown element (matrix_display.note_markdown: a note drawn as a caption), in the page's order."""
    out = []
    for el in at.main if hasattr(at, "main") else at:
        body = str(getattr(el, "value", ""))
        if el.type == "caption":
            out.append(body)
        elif el.type == "markdown":
            out += NOTE.findall(body)
    return out


def formulas(at) -> list[str]:
    """Every LaTeX formula of the page: the st.latex elements', and each $$ block of a Markdown element."""
    return [*(el.value for el in at.latex), *(f for el in at.markdown for f in FORMULA.findall(str(el.value)))]


def paragraphs(*groups) -> list[str]:
    """Each paragraph of these Markdown elements (``at.markdown``, ``at.caption``, ...) as a text of its own, in their
    order: several paragraphs drawn as one element (a heading and the words under it, a page's captions joined) read
    as separate elements did."""
    return [p for group in groups for e in group for p in str(e.value).split("\n\n") if p]


def in_own_thread(fn) -> None:
    """Run ``fn`` in a thread of its own and wait for it (re-raising what it raised): asyncio.run refuses to start in a
    thread whose event loop runs already, as Playwright's sync API leaves one in the e2e tests' process."""
    failed: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as err:  # noqa: BLE001 - re-raised below
            failed.append(err)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def tiny_models(root: Path) -> dict[str, str]:
    """The tiny BERT, GPT-2 and T5 checkpoints of tests/ (random weights, no network) built in folders under
    ``root``: their paths by family ("bert", "gpt2", "t5"), for the operator's ATTN_MODEL, ATTN_CAUSAL_MODEL and
    ATTN_TRANSLATOR_MODEL."""
    from .. import tiny_bert, tiny_gpt2, tiny_t5

    return {"bert": str(tiny_bert.build(root / "bert")), "gpt2": str(tiny_gpt2.build(root / "gpt2")),
            "t5": str(tiny_t5.build(root / "t5"))}
