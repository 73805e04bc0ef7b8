"""Share & export in AppTest: permalinks in and out, the sidebar control on every page, JSON import."""

from __future__ import annotations

import base64
import json
import zlib
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pyarrow.ipc
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import DEFAULT_PRESET, LIMITS, configs_equal, load_preset, make_config
from attn_core.codegen import numpy_script
from attn_core.share import decode_link, encode_link, to_json
from attn_ui.app import registry

from ..seeds import SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X
from .apptools import APP, new_app, open_share, plain

SHARE = registry.SHARE.file
PAGE_TITLES = {p.name: p.page_heading for p in registry.PAGES}  # how each page's title starts


def harness(url_path: str, link: str | None = None) -> AppTest:
    """The app opened (with ``?c=link`` if given) and, without a link, switched to the page at ``url_path``."""
    at = AppTest.from_file(APP, default_timeout=60)
    if link is not None:
        at.query_params["c"] = link
    at.run()
    if url_path and link is None:
        at.switch_page(f"pages/{url_path}.py").run()
    return at


def open_link(value: str) -> AppTest:
    """A fresh session opened with ?c=value."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["c"] = value
    return at.run()


def shared_config():
    """Seed 000 with values no preset has (exact binary fractions and awkward float64s), causal mask."""
    x = np.array(SEED000_X, dtype=float) + np.array([[0.1, -0.0, 1e-17, 0.5], [0.3, 0.25, 1 / 3, 0], [0, 0, 0, 2]])
    return make_config(["the", "cat", "sat"], x, SEED000_W_Q, SEED000_W_K, SEED000_W_V, mask_kind="causal")


def chart_matrices(at: AppTest) -> list[np.ndarray]:
    """Every heatmap on the page as a matrix, rebuilt from the chart's data (row_i, col_i, value)."""
    out = []
    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            df = pyarrow.ipc.open_stream(ds.data.data).read_all().to_pandas()
            if {"row_i", "col_i", "value"} <= set(df.columns):
                m = np.full((df.row_i.max() + 1, df.col_i.max() + 1), np.nan)
                m[df.row_i, df.col_i] = df.value
                out.append(m)
    return out


def expected_weights(x, w_q, w_k, mask) -> np.ndarray:
    """softmax(mask(Q Kᵀ / √d_k)) written out here, independently of attn_core."""
    q, k = np.asarray(x) @ np.asarray(w_q, float), np.asarray(x) @ np.asarray(w_k, float)
    s = np.where(mask, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def link_in(code_value: str) -> str:
    """The ?c= value of the URL shown in a code block (relative in AppTest: no browser address)."""
    assert code_value.startswith("?c=")
    return parse_qs(urlsplit(code_value).query)["c"][0]


# ---- opening a permalink ---------------------------------------------------------------------------


def test_a_permalink_restores_the_configuration_bit_for_bit_on_its_page():
    cfg = shared_config()
    at = open_link(encode_link(cfg, "steps"))
    assert not at.exception
    assert configs_equal(at.session_state["config"], cfg)
    assert at.title[0].value == "Step by step"
    assert configs_equal(decode_link(at.query_params["c"])[0], cfg)  # the address holds it, for a reload
    weights = expected_weights(cfg.x, SEED000_W_Q, SEED000_W_K, np.tri(3, dtype=bool))
    assert any(m.shape == (3, 3) and np.allclose(m, weights, rtol=1e-12, equal_nan=False) for m in chart_matrices(at))
    assert not at.warning


@pytest.mark.parametrize(("page", "title"), [("overview", "Self-Attention Explorer"), ("masking", "Masking"),
                                            ("share", "Share & export")])
def test_a_permalink_opens_the_page_it_names(page, title):
    at = open_link(encode_link(load_preset("seed002_causal"), page))
    assert not at.exception and at.title[0].value == title
    assert configs_equal(at.session_state["config"], load_preset("seed002_causal"))


def test_the_link_is_read_once_so_later_edits_stay():
    at = harness("", encode_link(shared_config(), "overview"))
    assert configs_equal(at.session_state["config"], shared_config())
    at.session_state["config"] = load_preset("seed004_unscaled")
    at.query_params["c"] = encode_link(shared_config())  # even if the address still had it
    at.run()
    assert configs_equal(at.session_state["config"], load_preset("seed004_unscaled"))
    assert configs_equal(decode_link(at.query_params["c"])[0], load_preset("seed004_unscaled"))  # and now holds


def hostile_values() -> dict[str, str]:
    good = encode_link(load_preset("seed001_sentence"))
    doc = json.loads(to_json(load_preset("seed000")))
    nan = json.dumps(doc).replace("[0.0, 2.0, 0.0, 2.0]", "[0.0, NaN, 0.0, 2.0]", 1)

    def pack(text: str) -> str:
        return base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")

    return {
        "truncated": good[: len(good) // 2],
        "bad base64": "%%%not-base64%%%",
        "bad zlib": base64.urlsafe_b64encode(b"definitely not zlib").decode(),
        "zip bomb": base64.urlsafe_b64encode(zlib.compress(bytes(100_000_000), 9)).decode(),
        "huge dimensions": pack(json.dumps(doc | {"x": [[0.0] * 5000] * 3})),
        "wrong types": pack(json.dumps(doc | {"n_heads": "lots"})),
        "negative heads": pack(json.dumps(doc | {"n_heads": -2})),
        "NaN": pack(nan),
        "unknown version": pack(json.dumps(doc | {"version": 99})),
        "deeply nested": pack("[" * 50_000 + "]" * 50_000),
        "pickle": base64.urlsafe_b64encode(zlib.compress(b"\x80\x04\x95cos\nsystem\n")).decode(),
    }


@pytest.mark.parametrize("name", sorted(hostile_values()))
def test_a_hostile_link_shows_a_message_and_the_default_preset(name):
    at = open_link(hostile_values()[name])
    assert not at.exception
    assert configs_equal(at.session_state["config"], load_preset(DEFAULT_PRESET))
    assert at.title[0].value == "Self-Attention Explorer"
    assert len(at.warning) == 1 and plain(at.warning[0].value).startswith("This link could not be opened")
    assert "link: " in plain(at.warning[0].value) or plain(at.warning[0].value).count(":") >= 1


def test_the_message_of_a_hostile_link_is_shown_once():
    at = harness("steps", "%%%")
    assert "This link could not be opened" in plain(at.warning[0].value)
    assert configs_equal(at.session_state["config"], load_preset(DEFAULT_PRESET))
    at.run()
    assert not at.warning and not at.exception


# ---- making a permalink ---------------------------------------------------------------------------


def test_the_share_page_makes_a_link_that_decodes_to_the_configuration():
    at = new_app(SHARE)
    assert not at.exception and at.title[0].value == "Share & export"
    at.session_state["config"] = shared_config()
    at.selectbox(key="share_link_page").select("masking").run()
    assert not at.exception
    cfg, page = decode_link(link_in(at.code[0].value))
    assert configs_equal(cfg, shared_config()) and page == "masking"


def test_a_configuration_too_large_for_a_link_is_offered_as_json():
    at = new_app(SHARE)
    at.session_state["config"] = load_preset("seed003_heads")  # 8 heads × 64 Gaussians: far over 8 kB
    at.run()
    assert not at.exception
    warning = plain(at.warning[0].value)
    assert "too large for a link" in warning and "Share the JSON file instead" in warning
    assert at.get("download_button")[0].proto.label == "Download the configuration (JSON)"
    assert all(not c.value.startswith("?c=") for c in at.code)


def test_the_sidebar_offers_the_json_file_when_the_link_would_be_too_long():
    at = harness("steps")
    at.session_state["config"] = load_preset("seed003_heads")
    open_share(at).sidebar.button(key="share_sidebar_link").click().run()
    assert "too large for a link" in plain(at.sidebar.warning[0].value) and not at.sidebar.code
    assert [b.proto.label for b in at.sidebar.get("download_button")] == ["Download the configuration (JSON)"]


@pytest.mark.parametrize("page", [p.name for p in registry.PAGES if p.linkable])  # a link can open these
def test_every_page_has_the_sidebar_control(page):
    at = open_link(encode_link(load_preset("seed004_unscaled"), page))
    assert at.title[0].value.startswith(PAGE_TITLES[page])
    assert "share_sidebar_link" not in [b.key for b in at.sidebar.button]  # closed: its contents are made when opened
    assert open_share(at).sidebar.button(key="share_sidebar_link").label == "Make a link to this"


@pytest.mark.parametrize(("url_path", "page"), [("", "overview"), ("steps", "steps"), ("multihead", "multihead")])
def test_the_sidebar_control_links_to_the_configuration_on_this_page(url_path, page):
    at = harness(url_path)
    at.session_state["config"] = shared_config()
    open_share(at).sidebar.button(key="share_sidebar_link").click().run()
    assert not at.exception
    value = link_in(at.sidebar.code[0].value)
    cfg, name = decode_link(value)
    assert configs_equal(cfg, shared_config()) and name == page
    follow = open_link(value)  # the full app opens that page with that configuration
    assert configs_equal(follow.session_state["config"], shared_config())
    assert follow.title[0].value.startswith(PAGE_TITLES[page])


# ---- JSON, CSV, code ---------------------------------------------------------------------------------


def upload(at: AppTest, content: bytes, name: str = "config.json") -> AppTest:
    at.file_uploader(key=f"share_import_{at.session_state['imports']}").set_value((name, content, "application/json"))
    return at.run()


def test_importing_a_json_file_replaces_the_configuration():
    at = new_app(SHARE)
    upload(at, to_json(shared_config(), "steps").encode())
    assert not at.exception
    assert configs_equal(at.session_state["config"], shared_config())
    assert plain(at.success[0].value).startswith("Loaded config.json: 3 tokens")
    assert at.title[0].value == "Share & export"  # an import stays here
    assert at.session_state["imports"] == 1  # the file is dropped once read: the uploader is a new, empty one
    assert at.file_uploader(key="share_import_1").value is None


@pytest.mark.parametrize("lang, one, many", [
    ("en", "Loaded one.json: 1 token, d_model 2, 1 head.", "Loaded many.json: 3 tokens, d_model 4, 2 heads."),
    ("zh", "已加载 one.json：1 个词元，d_model 2，1 个头。", "已加载 many.json：3 个词元，d_model 4，2 个头。"),
    ("ko", "one.json 파일을 불러왔습니다: 토큰 1개, d_model 2, 헤드 1개.",
     "many.json 파일을 불러왔습니다: 토큰 3개, d_model 4, 헤드 2개."),
])
def test_the_import_message_counts_tokens_and_heads_in_words(lang, one, many):
    """One token and one head read "1 token, … 1 head", not "1 tokens, … 1 head(s)" (zh and ko have one form)."""
    at = new_app(SHARE)
    at.session_state["lang"] = lang
    single = make_config(["a"], np.array([[1.0, 2.0]]), np.eye(2), np.eye(2), np.eye(2))
    upload(at, to_json(single, "steps").encode(), "one.json")
    assert plain(at.success[0].value) == one
    two = make_config(["a", "b", "c"], np.ones((3, 4)), np.eye(4), np.eye(4), np.eye(4), n_heads=2)
    upload(at, to_json(two, "steps").encode(), "many.json")
    assert plain(at.success[0].value) == many


def bad_files() -> dict[str, bytes]:
    doc = json.loads(to_json(load_preset("seed000")))
    return {
        "not JSON": b"x,y\n1,2\n",
        "not UTF-8": b"\xff\xfe\x00{",
        "wrong schema": json.dumps({"tokens": ["a"], "x": [[1.0]]}).encode(),
        "unknown version": json.dumps(doc | {"version": 7}).encode(),
        "wrong shapes": json.dumps(doc | {"w_q": [[1.0, 0.0, 1.0]] * 3}).encode(),
        "NaN": json.dumps(doc).replace("1.0", "NaN", 1).encode(),
        "dimensions over the caps": json.dumps(doc | {"x": [[0.0] * (LIMITS.d_model + 88)] * 3}).encode(),
        "oversized": b" " * (LIMITS.file_bytes + 1),
        "texts in cells": json.dumps(doc | {"x": [[1, "a", 1, 0], [0, 2, "b", 2], [None, 1, 1, 1]]}).encode(),
        "texts in many cells": json.dumps(doc | {"x": [["a"] * 4] * 3}).encode(),
    }


@pytest.mark.parametrize("name", sorted(bad_files()))
def test_a_bad_json_file_gets_a_message_and_leaves_the_configuration_untouched(name):
    at = new_app(SHARE)
    at.session_state["config"] = shared_config()
    at.run()
    upload(at, bad_files()[name], f"{name}.json")
    assert not at.exception
    assert configs_equal(at.session_state["config"], shared_config())
    assert len(at.error) == 1 and plain(at.error[0].value).startswith(f"{name}.json was not loaded: ")
    expected = {"not JSON": "not valid JSON", "not UTF-8": "not UTF-8", "wrong schema": "not a Self-Attention",
                "unknown version": "version 7", "wrong shapes": "W_Q: has 3 rows but X has 4 columns",
                "NaN": "X, row 0, column 0 is NaN",
                "dimensions over the caps": f"over the cap of 256 × {LIMITS.d_model}",
                "oversized": "40,000,001 bytes is over the cap",
                # every bad cell named in the grid's words (a fresh reviewer: the first only, in the core's)
                "texts in cells": "X, row 0, column 1 is a string, not a number. X, row 1, column 2 is a string, not "
                                  "a number. X, row 2, column 0 is null, not a number.",
                "texts in many cells": "X, row 0, column 3 is a string, not a number. X has 8 more cells to fix.",
                }[name]
    assert expected in plain(at.error[0].value)


def test_the_share_page_offers_every_download_and_the_script():
    at = new_app(SHARE)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download the configuration (JSON)", "X (CSV)", "All 15 tables (zip)", "Download attention.py"]
    assert at.selectbox(key="share_csv_name").options[:6] == ["X", "W_Q", "W_K", "W_V", "W_O", "head 0 · q"]
    at.selectbox(key="share_csv_name").select("head0_weights").run()
    assert [b.proto.label for b in at.get("download_button")][1] == "head 0 · weights (CSV)"
    script = [c.value for c in at.code if c.value.startswith("#!/usr/bin/env python3")]  # plain text (WCAG contrast)
    assert script == [numpy_script(load_preset(DEFAULT_PRESET)).rstrip("\n")]  # st.code drops the final newline


def test_a_large_configuration_offers_the_script_for_download_only():
    at = new_app(SHARE)
    rng = np.random.default_rng(0)
    at.session_state["config"] = make_config([f"t{i}" for i in range(64)], rng.standard_normal((64, 128)),
                                             *(rng.standard_normal((128, 128)) for _ in range(3)))
    at.run()
    assert not at.exception and not [c for c in at.code if c.language == "python"]
    assert "too long to show here" in plain(at.info[0].value)
    assert "Download attention.py" in [b.proto.label for b in at.get("download_button")]


@pytest.mark.parametrize("key", ["additive", "cross_translation"])
def test_score_functions_and_cross_attention_travel_by_link_and_file(key):
    cfg = load_preset(key)
    at = open_link(encode_link(cfg, "scores"))
    assert not at.exception and at.title[0].value == registry.SCORES.page_heading
    assert configs_equal(at.session_state["config"], cfg)
    assert configs_equal(decode_link(at.query_params["c"])[0], cfg)  # the address keeps Y and the score weights
    at = new_app(SHARE)
    upload(at, to_json(cfg, "steps").encode())
    assert not at.exception and configs_equal(at.session_state["config"], cfg)


def test_a_link_and_a_file_from_before_score_functions_still_open():
    doc = json.loads(to_json(load_preset("seed000")))  # no score, no y: as a file or link was written before them
    assert "score" not in doc and "y" not in doc
    at = new_app(SHARE)
    upload(at, json.dumps(doc).encode())
    assert not at.exception and configs_equal(at.session_state["config"], load_preset("seed000"))
    old_link = base64.urlsafe_b64encode(zlib.compress(json.dumps(doc, separators=(",", ":")).encode())).decode()
    at = open_link(old_link.rstrip("="))
    assert not at.exception and at.session_state["config"].score == "dot" and not at.session_state["config"].cross


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "bad.json was not loaded: JSON file: not valid JSON (a value was expected at line 1, column 1)."),
    ("zh", "此处应为一个值"), ("ko", "값이 있어야 함"),
])
def test_a_json_syntax_error_is_said_in_the_learners_language(lang, said):
    """A fresh reviewer: "第 1 行第 1 列：Expecting value", json's English inside the translated sentence."""
    at = new_app(SHARE)
    at.session_state["lang"] = lang
    upload(at, b"x,y\n1,2\n", "bad.json")
    shown = plain(at.error[0].value)
    assert said in shown and "Expecting" not in shown


def test_a_file_with_null_for_an_option_that_is_off_is_loaded():
    doc = json.loads(to_json(shared_config())) | {"window": None, "softcap": None, "n_kv_heads": None, "rope": None}
    at = new_app(SHARE)
    upload(at, json.dumps(doc).encode())
    assert not at.exception and not at.error and configs_equal(at.session_state["config"], shared_config())
