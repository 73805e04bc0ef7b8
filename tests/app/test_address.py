"""The address bar keeps the learner's work (issue 17): after every change it holds the configuration, so a reload
(a new session with the same address) brings it back; configurations too large for an address are kept on the
server under a key that only that address names."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from attn_core import Config, configs_equal, initialize, load_preset, make_config
from attn_core.share import decode_link, encode_link
from attn_ui import lessons
from attn_ui.app import address, registry, state
from attn_ui.infra import budget

from .apptools import APP, edit_cells, new_app


def reload(at: AppTest, page: str | None = None) -> AppTest:
    """What the browser's reload does: a new session opened on the same address (its parameters and page)."""
    fresh = AppTest.from_file(APP, default_timeout=60)
    for name, value in at.query_params.items():
        fresh.query_params[name] = value
    fresh.run()
    if page:
        fresh.switch_page(page).run()
    return fresh


def test_every_change_is_in_the_address_and_a_reload_brings_it_back():
    at = new_app("pages/masking.py")
    at.radio(key="masking_kind").set_value("causal").run()
    assert decode_link(at.query_params["c"])[0].mask_kind == "causal"
    at.switch_page("pages/inputs.py").run()
    edit_cells(at, "x", {0: {0: "1e-3"}})
    assert decode_link(at.query_params["c"])[0].x[0, 0] == 0.001  # after the run that took the edit
    again = reload(at, "pages/inputs.py")
    assert not again.exception and not again.warning
    assert configs_equal(again.session_state["config"], at.session_state["config"])
    assert again.session_state["config"].mask_kind == "causal"
    assert not again.button(key="frame_undo").label.startswith("Undo:")  # nothing to undo in a fresh session


def test_a_change_made_by_the_page_itself_is_in_the_address_after_that_run():
    at = new_app("pages/multihead.py")
    at.session_state["config"] = load_preset("seed003_heads")
    at.run()
    at.number_input(key="heads_wanted").set_value(4).run()  # the page sets n_heads while it runs
    assert at.session_state["config"].n_heads == 4
    assert address.STORE.get(at.query_params["s"]).n_heads == 4  # 8 heads × 64 wide: kept on the server


def test_a_configuration_too_large_for_an_address_is_kept_on_the_server():
    x = initialize("gaussian", (64, 64), seed=1)
    big = make_config([f"t{i}" for i in range(64)], x, x, x, x, mask_kind="causal")
    at = new_app()
    at.session_state["config"] = big
    at.run()
    assert "c" not in at.query_params and len(at.query_params["s"]) >= 20
    again = reload(at)
    assert configs_equal(again.session_state["config"], big)
    other = new_app()  # another learner: a key of their own, never this one's
    other.session_state["config"] = make_config([f"u{i}" for i in range(64)], x, x, x, x)
    other.run()
    assert other.query_params["s"] != at.query_params["s"]
    assert configs_equal(reload(at).session_state["config"], big)


def test_a_forgotten_server_key_says_so_and_opens_the_default_example():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["s"] = "no-such-key"
    at.run()
    assert not at.exception
    assert any("no longer has it" in w.value for w in at.warning)
    assert configs_equal(at.session_state["config"], load_preset("seed000"))
    assert "s" not in at.query_params and "c" in at.query_params  # the address holds what is shown now


def test_two_sessions_from_one_address_go_their_own_way():
    x = initialize("gaussian", (64, 64), seed=2)
    at = new_app()
    at.session_state["config"] = make_config([f"t{i}" for i in range(64)], x, x, x, x)
    at.run()
    first, second = reload(at), reload(at)
    edited = first.session_state["config"].x.copy()
    first.session_state["config"] = make_config([f"t{i}" for i in range(64)], edited * 2, x, x, x)
    first.run()
    assert first.query_params["s"] != at.query_params["s"]  # the new session stored under its own key
    assert np.array_equal(reload(second).session_state["config"].x, x)
    assert np.array_equal(reload(first).session_state["config"].x, edited * 2)


def test_the_store_is_bounded_in_bytes_by_the_process_budget(monkeypatch):
    cfg = load_preset("seed000")
    size = budget.nbytes(cfg)
    small = budget.Budget(10 * size)  # room for ten configurations of seed 000
    monkeypatch.setattr(budget, "BUDGET", small)
    store = address._Store()
    for i in range(15):
        store.put(f"k{i}", cfg)
    assert small.bytes <= small.limit and small.usage()["address"] == (10, 10 * size)
    assert [store.get(f"k{i}") for i in range(5)] == [None] * 5  # the least recently written went first
    assert all(store.get(f"k{i}") is cfg for i in range(5, 15))


def opened(**params: str) -> AppTest:
    """A fresh session opened on an address with these parameters."""
    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def kept_on_server() -> tuple[str, Config]:
    """A ?s= this server knows: the key of a configuration too large for an address, and that configuration."""
    x = initialize("gaussian", (64, 64), seed=3)
    big = make_config([f"t{i}" for i in range(64)], x, x, x, x)
    at = new_app()
    at.session_state["config"] = big
    at.run()
    return at.query_params["s"], big


LINKED = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2))  # what a ?c= holds
REFUSED = "not-a-link"  # a ?c= that cannot be decoded


def test_a_link_wins_over_a_server_key_beside_it():
    """?c= is the numbers themselves: beside it, a ?s= this server forgot, or still has, is not read."""
    key, _big = kept_on_server()
    for s in ("no-such-key", key):
        at = opened(s=s, c=encode_link(LINKED, None))
        assert not at.warning, [w.value for w in at.warning]
        assert configs_equal(at.session_state["config"], LINKED)
        assert "s" not in at.query_params  # the address now holds what is shown


def test_a_link_to_a_page_beside_a_server_key_opens_that_page():
    at = opened(s="no-such-key", c=encode_link(LINKED, "masking"))
    assert not at.warning and at.title[0].value == registry.MASKING.page_heading
    assert configs_equal(at.session_state["config"], LINKED)


def test_a_refused_link_beside_a_known_server_key_says_so_and_opens_the_key():
    key, big = kept_on_server()
    at = opened(c=REFUSED, s=key)
    assert len(at.warning) == 1, [w.value for w in at.warning]
    assert "could not be opened" in at.warning[0].value and "kept on the server" in at.warning[0].value
    assert configs_equal(at.session_state["config"], big)


def test_a_refused_link_beside_a_forgotten_server_key_says_so_once():
    at = opened(c=REFUSED, s="no-such-key")
    assert len(at.warning) == 1 and "could not be opened" in at.warning[0].value
    assert "default example" in at.warning[0].value
    assert configs_equal(at.session_state["config"], load_preset("seed000"))


def test_a_refused_link_that_opens_a_lesson_is_said_on_learn():
    """The lesson link switches to Learn before any page is drawn: the warning waits for Learn."""
    at = opened(c=REFUSED, lesson="causal")
    assert at.title[0].value == registry.LEARN.page_heading
    assert at.header[0].value.endswith(lessons.by_key("causal").title)  # the lesson is open
    assert len(at.warning) == 1 and "This link could not be opened" in at.warning[0].value
    at.run()
    assert not at.warning  # said once


def test_a_refused_link_and_an_unknown_lesson_are_both_said():
    at = opened(c=REFUSED, lesson="no-such-lesson")
    assert at.title[0].value == registry.LEARN.page_heading
    said = " ".join(w.value for w in at.warning)
    assert "could not be opened" in said and "does not exist" in said, said


def test_a_notice_is_shown_on_every_page():
    """A page without a notice of its own (Masking) shows one kept for it: the frame draws them all."""
    at = new_app(registry.MASKING.file)
    at.session_state[state.NOTICE] = [state.Notice("Something to say.")]
    at.run()
    assert [w.value for w in at.warning] == ["Something to say\\."]
    at.run()
    assert not at.warning
