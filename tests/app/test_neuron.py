"""The neuron view (attn_ui.views.neuron_views) on every model page, with the tiny checkpoints: the section renders
right after the page's one-head heatmap, its chart and its numbers are the core's (attn_core.head_neuron on the
trace of the model's own configuration of that head), changing the query or the key changes them, the weight is the
heatmap's cell, a Llama's shows q and k after RoPE (and before, on request), and a T5's offers its three attentions."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import attn_models
from attn_core import head_neuron, run
from attn_ui.app import registry
from attn_ui.views import neuron_views
from attn_ui.widgets import text
from attn_ui.widgets.numbers import format_number

from .. import tiny_bert, tiny_gpt2, tiny_llama, tiny_t5
from .apptools import APP, new_app, plain
from .test_steps import elements

SUBHEADER = "Inside one score: the query and key vectors"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("neuron")
    return {"bert": str(tiny_bert.build(root / "bert")), "gpt2": str(tiny_gpt2.build(root / "gpt2")),
            "llama": str(tiny_llama.build(root / "llama", "llama")), "t5": str(tiny_t5.build(root / "t5"))}


@pytest.fixture(autouse=True)
def operator_models(monkeypatch, dirs):
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", dirs["t5"])


def texts(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info]))


def vectors(at: AppTest) -> dict[str, np.ndarray]:
    """The neuron chart's rows as drawn: row name -> its d_k values (features in order)."""
    rows: dict[str, list] = {}
    for el in elements(at.main):
        if el.type != "vega_lite_chart" or '"feature:O"' not in el.proto.spec and '"feature"' not in el.proto.spec:
            continue
        for ds in el.proto.datasets:
            table = pa.ipc.open_stream(ds.data.data).read_all().to_pydict()
            for r, f, v in zip(table.get("row", []), table.get("feature", []), table.get("value", []), strict=True):
                rows.setdefault(r, []).append((f, v))
    assert rows, "the neuron view's chart"
    return {r: np.array([v for _, v in sorted(fv)]) for r, fv in rows.items()}


def shown_numbers(at: AppTest, v) -> None:
    """The section's words carry the view's numbers, as the page writes them."""
    said = texts(at)
    for x in (v.score, v.scaled, v.weight):
        assert plain(format_number(x, neuron_views.DIGITS)) in said, (x, said[-800:])


def check(at: AppTest, cfg, head: int, i: int, j: int):
    assert not at.exception, at.exception
    assert SUBHEADER in [s.value for s in at.subheader]
    v = head_neuron(run(cfg), head, i, j)
    drawn = vectors(at)
    np.testing.assert_array_equal(drawn["q_i ⊙ k_j"], v.product)
    assert any(np.array_equal(row, v.q_i) for row in drawn.values())
    assert any(np.array_equal(row, v.k_j) for row in drawn.values())
    shown_numbers(at, v)
    return v


def test_a_real_model_bert(dirs):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["model_source"] = dirs["bert"]
    at.run()
    at.switch_page(registry.MODEL.file).run()
    at.text_input(key="model_sentence").set_value(tiny_bert.SENTENCE).run()
    at.selectbox(key="model_layer").set_value(1).run()
    at.selectbox(key="model_head").set_value(2).run()
    model = attn_models.load(dirs["bert"])
    cfg = model.config_for(attn_models.Origin("encoder", dirs["bert"], 1, 2, tiny_bert.SENTENCE))
    weights = run(cfg).heads[2].weights
    i = at.selectbox(key="model_neuron_query").value
    j = at.selectbox(key="model_neuron_key").value
    assert i == 1 and j == int(np.argmax(weights[1]))  # token 1, and the key it weighs most
    v = check(at, cfg, 2, i, j)
    assert "the heatmap's cell" in texts(at) and "÷ √4" in texts(at)
    at.selectbox(key="model_neuron_key").set_value(0 if j else 1).run()
    v2 = check(at, cfg, 2, i, 0 if j else 1)
    assert v2.score != v.score
    at.selectbox(key="model_neuron_query").set_value(3).run()  # a new query: its strongest key
    assert at.selectbox(key="model_neuron_key").value == int(np.argmax(weights[3]))
    check(at, cfg, 2, 3, int(np.argmax(weights[3])))


def causal_page(monkeypatch, folder: str) -> AppTest:
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", folder)
    at = new_app(registry.GENERATE.file, timeout=60)
    at.text_input(key="gen_prompt").set_value(tiny_gpt2.PROMPTS[0]).run()
    assert not at.exception, at.exception
    return at


def test_a_model_that_writes_gpt2(monkeypatch, dirs):
    at = causal_page(monkeypatch, dirs["gpt2"])
    at.selectbox(key="gen_layer").set_value(1).run()
    lm = attn_models.load(dirs["gpt2"])
    cfg = lm.config_for(attn_models.Origin("causal", dirs["gpt2"], 1, 0, tiny_gpt2.PROMPTS[0]))
    n = cfg.n_seq
    assert at.selectbox(key="gen_neuron_query").value == n - 1  # the last token: the one that writes
    v = check(at, cfg, 0, n - 1, at.selectbox(key="gen_neuron_key").value)
    assert not at.get("toggle") or "before RoPE" not in str([t.label for t in at.toggle])
    assert "The products** (largest in size first)" in texts(at) and "▲" not in texts(at)  # d_k 4: no ▲ drawn
    at.selectbox(key="gen_neuron_query").set_value(1).run()
    at.selectbox(key="gen_neuron_key").set_value(3).run()  # after the query: masked
    assert "its weight 0" in texts(at)
    assert v.weight > 0


def test_a_model_that_writes_llama_shows_rope(monkeypatch, dirs):
    at = causal_page(monkeypatch, dirs["llama"])
    at.selectbox(key="gen_head").set_value(3).run()
    lm = attn_models.load(dirs["llama"])
    cfg = lm.config_for(attn_models.Origin("causal", dirs["llama"], 0, 3, tiny_gpt2.PROMPTS[0], family="llama"))
    i, j = at.selectbox(key="gen_neuron_query").value, at.selectbox(key="gen_neuron_key").value
    v = check(at, cfg, 3, i, j)
    assert set(vectors(at)) == {"q after RoPE", "k after RoPE", "q_i ⊙ k_j"}
    at.toggle(key="gen_neuron_before").set_value(True).run()
    drawn = vectors(at)
    np.testing.assert_array_equal(drawn["q before RoPE"], v.q_before)
    np.testing.assert_array_equal(drawn["k before RoPE"], v.k_before)
    assert plain(format_number(v.score_before, neuron_views.DIGITS)) in texts(at)


def test_a_model_that_translates_every_attention(dirs):
    at = new_app(registry.TRANSLATE.file, timeout=60)
    at.text_input(key="trans_sentence").set_value(tiny_t5.SENTENCES[0]).run()
    assert not at.exception, at.exception
    model = attn_models.load(dirs["t5"])
    tr = model.translate(tiny_t5.SENTENCES[0], max_new=40)
    target = tuple(int(t) for t in tr.output_ids[:-1])
    layer = at.selectbox(key="trans_layer").value
    base = attn_models.Origin("translator", dirs["t5"], layer, 0, tiny_t5.SENTENCES[0], side="cross",
                              prefix=attn_models.t5.PREFIX, target=target)
    i, j = at.selectbox(key="trans_neuron_query").value, at.selectbox(key="trans_neuron_key").value
    check(at, model.config_for(base), 0, i, j)
    out = [plain(t) for t in text.numbered(tr.output_tokens)]  # each row named by the token it chose, as the heatmap
    assert [plain(o) for o in at.selectbox(key="trans_neuron_query").options] == out
    said = texts(at)
    assert "does not divide its scores (÷ 1)" in said and "the heatmap's cell" in said
    from dataclasses import replace
    for side, origin in (("decoder", replace(base, side="decoder")),
                         ("encoder", replace(base, side="encoder", target=None))):
        at.segmented_control(key="trans_neuron_side").set_value(side).run()
        i, j = at.selectbox(key="trans_neuron_query").value, at.selectbox(key="trans_neuron_key").value
        v = check(at, model.config_for(origin), 0, i, j)
        assert v.bias is not None and "+ score bias" in texts(at)
        assert "the heatmap's cell" not in texts(at)  # the heatmap above is the cross-attention's


def test_the_chart_factory():
    """Three aligned rows of d_k cells: q and k on one diverging scale centred on 0, their product on its own."""
    q, k = np.array([1.0, -3.0, 0.5] * 40), np.array([2.0, 1.0, -1.0] * 40)  # d_k 120
    spec = neuron_views.vectors_chart({"q": q, "k": k}, q * k, x_title="feature").to_dict()
    top, bottom = spec["vconcat"]
    low, marks = bottom["layer"]
    datasets = spec["datasets"]
    top_rows, low_rows = datasets[top["data"]["name"]], datasets[bottom["data"]["name"]]
    assert [r["value"] for r in top_rows] == [*q, *k] and [r["value"] for r in low_rows] == list(q * k)
    assert top["encoding"]["color"]["scale"]["domain"] == [-3.0, 3.0]
    assert low["encoding"]["color"]["scale"]["domain"] == [-3.0, 3.0] and low["encoding"]["color"]["scale"][
        "domainMid"] == 0
    assert low["encoding"]["x"]["axis"]["values"] == list(range(0, 120, 16))
    assert spec["resolve"]["scale"]["color"] == "independent"
    assert neuron_views.label_every(16) == 1
    assert [r["feature"] for r in low_rows if r["largest"]] == [1, 4, 7, 10, 13]  # the products −3, as named
    assert marks["mark"]["text"] == "▲" and marks["transform"] == [{"filter": "datum.largest"}]
