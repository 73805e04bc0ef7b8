"""A model that translates (issue 30), on the tiny random T5 of tests/tiny_t5.py: the greedy translation, the
cross-attention drawn, heads switched off, a cross-attention head and an encoder head (its position bias) opened in the
explorer, and an edited head run back, against transformers' T5ForConditionalGeneration in float64
(tests/models/reference_t5.npz, made by tests/models/make_t5_reference.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import attn_models
from attn_core import run
from attn_ui.app import registry

from .. import tiny_gpt2, tiny_t5
from ..models import make_t5_reference as cases
from .apptools import new_app, plain
from .test_steps import elements, grid

TRANSLATE = registry.TRANSLATE.file
REFERENCE = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_t5.npz")
SENTENCE = tiny_t5.SENTENCES[0]


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory) -> str:
    return str(tiny_t5.build(tmp_path_factory.mktemp("t5")))


@pytest.fixture(autouse=True)
def operator_model(monkeypatch, t5_dir):
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", t5_dir)


def page() -> AppTest:
    at = new_app(TRANSLATE)
    at.text_input(key="trans_sentence").set_value(SENTENCE).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def text_of(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error]))


def quoted(at: AppTest) -> list[str]:
    """The translations the page quotes ("> ..."), in order."""
    return [plain(m.value[2:]) for m in at.markdown if m.value.startswith("> ")]


def heatmap_data(at: AppTest, title: str) -> np.ndarray:
    for el in elements(at.main):
        if el.type == "vega_lite_chart" and title in el.proto.spec:
            return grid(pa.ipc.open_stream(el.proto.datasets[0].data.data).read_all().to_pandas())
    raise AssertionError(f"no chart {title!r}")


def reference_text(t5_dir: str, key: str) -> str:
    model = attn_models.load(t5_dir)
    return model.tokenizer.decode([int(i) for i in REFERENCE[key][1:]], skip_special_tokens=True)


def test_the_translation_is_transformers_greedy_one(t5_dir):
    at = page()
    want = reference_text(t5_dir, "relu_0_generated")  # transformers' first 10 tokens (max_new_tokens=10)
    assert want and quoted(at)[0].startswith(plain(want).rstrip())


def test_the_cross_attention_drawn_is_transformers(t5_dir):
    at = page()
    at.selectbox(key="trans_layer").set_value(1).run()
    at.selectbox(key="trans_head").set_value(2).run()
    drawn = heatmap_data(at, "cross-attention weights")  # [n_out, n_src]
    # rows 0 and 1 read the start token and the first token written (▁est, TARGET's too): transformers' rows
    assert cases.TARGET[1] == int(attn_models.load(t5_dir).translate(SENTENCE, max_new=1).output_ids[0])
    np.testing.assert_allclose(drawn[:2], REFERENCE["relu_0_cross"][1, 2, :2], rtol=0, atol=1e-12)
    n = drawn.shape[0]
    said = "Each output token, and" if n <= 16 else f"The first 16 of the {n} output tokens, and"
    assert said in text_of(at)


def test_a_head_switched_off_translates_as_transformers(t5_dir):
    at = page()
    for name in ("L1 · H2",):  # cases.ABLATIONS["one_mean"]
        at.multiselect(key="trans_ablate").select(name).run()
    assert not at.exception and not at.error
    want = reference_text(t5_dir, "relu_0_one_mean_generated")
    assert quoted(at)[1].startswith(plain(want).rstrip())
    assert "With 1 head off, the translation" in text_of(at)


def test_a_cross_attention_head_opens_and_its_edits_run_back():
    at = page()
    at.selectbox(key="trans_layer").set_value(1).run()
    at.button(key="trans_open").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.cross and cfg.scale == "none" and cfg.origin["side"] == "cross"
    before = run(cfg).heads[0].weights
    assert before.shape[1] == len(REFERENCE["relu_0_ids"])
    np.testing.assert_allclose(before[:2], REFERENCE["relu_0_cross"][1, 0, :2], rtol=0, atol=1e-12)
    at.session_state["config"] = replace(cfg, w_o=np.zeros_like(cfg.w_o))  # the layer's cross-attention adds nothing
    at.switch_page(TRANSLATE).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Your edits, run through the translator" in [s.value for s in at.subheader]
    assert "With your edits, the translation" in text_of(at)


def test_an_encoder_head_opens_with_its_position_bias():
    at = page()
    at.selectbox(key="trans_enc_layer").set_value(1).run()
    at.selectbox(key="trans_enc_head").set_value(2).run()
    at.button(key="trans_open_encoder").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.score_bias is not None and cfg.scale == "none" and at.session_state["head"] == 2
    np.testing.assert_allclose(run(cfg).heads[2].weights, REFERENCE["relu_0_encoder"][1, 2], rtol=0, atol=1e-12)


def test_a_model_of_another_family_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", str(tiny_gpt2.build(tmp_path / "gpt2")))
    at = new_app(TRANSLATE)
    assert not at.exception
    assert "is not an encoder-decoder translator (T5): it does not translate." in text_of(at)


def test_the_heatmap_spec_names_its_axes():
    at = page()
    spec = next(json.loads(el.proto.spec) for el in elements(at.main)
                if el.type == "vega_lite_chart" and "cross-attention weights" in el.proto.spec)
    assert "source token (key)" in json.dumps(spec) and "output token (query)" in json.dumps(spec)
