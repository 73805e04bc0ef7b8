"""On a phone the edit panel stands in the page, and Masking, Multi-head, Modern attention and Score functions draw a
result that an edit of the panel's matrix changes right under it, as well as where it is on the page (issue 37; the
positions are measured in tests/e2e/test_phone.py). Here: every preset's configuration on each of those pages, as a
phone runs it, draws what a desktop draws and that one chart more (of several heads, even grouped, the weights of the
head followed), with no error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attn_core import PRESETS, load_preset

from .apptools import APP

PAGES = {"masking": 1, "multihead": 1, "modern": 1, "scores": 1}  # page: the charts a phone adds


def charts_drawn(cfg, page: str, *, phone: bool):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["config"] = cfg
    at.session_state["on_phone"] = phone  # as a phone's first run keeps it (attn_ui.app.state.on_phone)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at, at.get("vega_lite_chart")


def configurations():
    yield from ((name, load_preset(name)) for name in PRESETS)
    heads = load_preset("seed003_heads")  # grouped-query heads: a row of the heads' weights per key/value head
    yield "grouped", replace(heads, n_kv_heads=heads.n_heads // 2, w_k=heads.w_k[:, :heads.w_k.shape[1] // 2],
                             w_v=heads.w_v[:, :heads.w_v.shape[1] // 2])


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize(("name", "cfg"), list(configurations()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_phone_draws_the_desktops_charts_and_the_first_result_under_the_panel(page, name, cfg):
    _at, desk = charts_drawn(cfg, page, phone=False)
    at, phone = charts_drawn(cfg, page, phone=True)
    cfg = at.session_state["config"]
    if page == "modern" and (cfg.cross or cfg.score != "dot"):  # the page says why it has no options for these
        assert len(phone) == len(desk) == 0
        return
    assert len(phone) == len(desk) + PAGES[page], (len(phone), len(desk))
    if page == "multihead":  # of several heads, the weights of the head followed (head 0)
        said = "Attention weights of every head" if cfg.n_heads == 1 else "Attention weights of head 0"
        assert any(c.value.startswith(said) for c in at.caption)
