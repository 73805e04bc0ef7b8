"""A model that writes (issue 30), on the tiny random GPT-2 of tests/tiny_gpt2.py: the next token's probabilities at
two temperatures, greedy writing, heads switched off and a head opened in the explorer, against transformers'
GPT2LMHeadModel in float64 (tests/models/reference_gpt2.npz, made by tests/models/make_gpt2_reference.py) with the
softmax written out here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

import attn_models
from attn_core import run
from attn_ui.app import registry

from .. import tiny_bert, tiny_gpt2
from .apptools import new_app, plain
from .test_steps import elements

GENERATE = registry.GENERATE.file
REFERENCE = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_gpt2.npz")
PROMPT = tiny_gpt2.PROMPTS[0]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> str:
    return str(tiny_gpt2.build(tmp_path_factory.mktemp("gpt2")))


@pytest.fixture(autouse=True)
def operator_model(monkeypatch, gpt2_dir):
    """The server's causal model is the tiny GPT-2 (the reference's), as an operator sets it."""
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", gpt2_dir)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def top_of_both(p: np.ndarray, q: np.ndarray) -> list[int]:
    """The 8 tokens a chart of two distributions shows: the top 4 of each, then the rest of each one's top 8."""
    top_p, top_q = np.argsort(-p, kind="stable")[:8], np.argsort(-q, kind="stable")[:8]
    order = [*top_p[:4], *top_q[:4], *top_p[4:], *top_q[4:]]
    return list(dict.fromkeys(int(i) for i in order))[:8]


def bar_charts(at: AppTest) -> dict[str, dict[str, np.ndarray]]:
    """Each bar chart's values by its title, then by series: {title: {series: values in category order}}."""
    found = {}
    for el in elements(at.main):
        if el.type != "vega_lite_chart":
            continue
        spec = json.loads(el.proto.spec)
        title = spec.get("title") or (spec.get("layer") or [{}])[0].get("title")
        title = title.get("text") if isinstance(title, dict) else title  # across: its lines
        title = " ".join(title) if isinstance(title, list) else title
        if not isinstance(title, str) or not title.startswith("Next token"):
            continue
        table = pa.ipc.open_stream(el.proto.datasets[0].data.data).read_all().to_pandas()
        found[title] = {s: g["value"].to_numpy() for s, g in table.groupby("series", sort=False)}
        found[title]["categories"] = table["category"].drop_duplicates().to_numpy()
    return found


def page(prompt: str = PROMPT) -> AppTest:
    at = new_app(GENERATE)
    at.text_input(key="gen_prompt").set_value(prompt).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def text_of(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error]))


@pytest.mark.parametrize(("temperature", "key"), [(1.0, None), (0.7, "p0_probs_t07")])
def test_the_next_tokens_are_transformers_at_each_temperature(temperature, key):
    at = page()
    if temperature != 1.0:
        at.slider(key="gen_temperature").set_value(temperature).run()
    want = softmax(REFERENCE["p0_logits"][-1]) if key is None else REFERENCE[key]  # [vocab]
    top = np.sort(want)[::-1][:10]
    bars = bar_charts(at)[f"Next token at T = {temperature:g}"]
    np.testing.assert_allclose(bars["probability"], top, rtol=0, atol=1e-12)
    bits = -(want[want > 0] * np.log2(want[want > 0])).sum()
    said = (f"The entropy of the whole distribution is {bits:.2f} bits." if key is None else
            f"the entropy is {bits:.2f} bits")
    assert said in text_of(at)


def test_writing_greedy_gives_transformers_tokens(gpt2_dir):
    at = page()
    at.number_input(key="gen_n_new").set_value(8).run()
    at.button(key="gen_write").click().run()
    assert not at.exception and not at.error
    model = attn_models.load(gpt2_dir)
    written = model.tokenizer.decode([int(i) for i in REFERENCE["p0_greedy"]])
    assert written  # the tiny model's greedy text ("ItItIt…": random weights)
    shown = [m.value for m in at.markdown if plain(m.value).replace("**", "") == PROMPT + written]
    assert shown, "the written text, the prompt and what the model wrote after it"
    html = MarkdownIt("commonmark").render(shown[0])  # CommonMark, as the browser reads it: the new text in bold
    assert f"<strong>{written.strip()}</strong>" in html and "**" not in html
    assert "8 tokens written, greedy: each time the most probable token." in text_of(at)


def test_a_head_switched_off_moves_the_next_token_as_transformers_says():
    at = page()
    at.multiselect(key="gen_ablate").select("L1 · H2").run()
    assert not at.exception and not at.error
    trained, off = softmax(REFERENCE["p0_logits"][-1]), softmax(REFERENCE["p0_ablate_one_mean_logits"][-1])
    bars = bar_charts(at)["Next token at T = 1, as trained and with heads off"]
    ids = top_of_both(trained, off)
    np.testing.assert_allclose(bars["as trained"], trained[ids], rtol=0, atol=1e-12)
    np.testing.assert_allclose(bars["heads off"], off[ids], rtol=0, atol=1e-12)
    top_off = int(np.argmax(off))
    assert top_off in ids
    words = "is still" if top_off == ids[0] else "changes from"
    assert f"With 1 head off, the most probable next token {words}" in text_of(at)


def test_a_head_opens_in_the_explorer_with_its_causal_mask():
    at = page()
    at.selectbox(key="gen_layer").set_value(2).run()
    at.selectbox(key="gen_head").set_value(3).run()
    at.button(key="gen_open").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.mask_kind == "causal" and cfg.origin["family"] == "gpt2" and cfg.origin["layer"] == 2
    np.testing.assert_allclose(run(cfg).heads[3].weights, REFERENCE["p0_attentions"][2, 3], rtol=0, atol=1e-12)


def test_an_encoder_is_named_and_sent_to_a_real_model(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", str(tiny_bert.build(tmp_path / "bert")))
    at = new_app(GENERATE)
    assert not at.exception
    assert "is not a causal language model (GPT-2 or Llama family): it does not write" in text_of(at)


def test_an_edited_head_runs_back_and_changes_the_next_token_as_transformers_says():
    """The explorer's W_Q edit of reference_gpt2's EDITS (layer 1), made on the configuration the page opened."""
    from dataclasses import replace

    from ..models import make_gpt2_reference as cases
    at = page()
    at.selectbox(key="gen_layer").set_value(cases.EDIT_LAYER).run()
    at.button(key="gen_open").click().run()
    cfg = at.session_state["config"]
    w_q = cfg.w_q.copy()
    for row, col, added in cases.EDITS:
        w_q[row, col] += added
    at.session_state["config"] = replace(cfg, w_q=w_q)
    at.switch_page(GENERATE).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    trained, edited = softmax(REFERENCE["p0_logits"][-1]), softmax(REFERENCE["p0_edited_logits"][-1])
    bars = bar_charts(at)["Next token at T = 1, as trained and with your edits"]
    ids = top_of_both(trained, edited)
    np.testing.assert_allclose(bars["with your edits"], edited[ids], rtol=0, atol=1e-12)
    assert "With your edits, the most probable next token" in text_of(at)
    assert "Back to the model's weights" in [b.label for b in at.button]
