"""Across tokens and layers (issue 39) on the three model pages, on the tiny checkpoints made here: *Several tokens
together* and *Attention rollout* render, their numbers equal numpy written out here on the model's own attentions
(the run the page made), and changing the tokens chosen changes them."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import attn_models
from attn_ui.app import registry

from .. import tiny_t5
from .apptools import APP, new_app, plain, tiny_models
from .test_steps import elements, grid

PAD_TO = 16  # the page's sentence is 13 tokens: 3 padding tokens


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    return tiny_models(tmp_path_factory.mktemp("across"))


@pytest.fixture(autouse=True)
def operator_models(monkeypatch, folders):
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", folders["gpt2"])
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", folders["t5"])


def heatmap_by_title(at: AppTest, starts: str) -> np.ndarray:
    """The values of the one heatmap whose title starts with ``starts`` (its long data back to a matrix)."""
    found = [el for el in elements(at.main) if el.type == "vega_lite_chart"
             and any(t.startswith(starts) for t in titles(json.loads(el.proto.spec)))]
    assert len(found) == 1, starts
    return grid(pa.ipc.open_stream(found[0].proto.datasets[0].data.data).read_all().to_pandas())


def titles(spec: object) -> list[str]:
    """Every title a chart's spec holds (a layered heatmap's is on its first layer)."""
    if isinstance(spec, dict):
        here = [spec["title"]] if isinstance(spec.get("title"), str) else []
        return here + [t for v in spec.values() for t in titles(v)]
    return [t for v in spec for t in titles(v)] if isinstance(spec, list) else []


def words(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.info]))


# ---- numpy written out: the independent computation ----------------------------------------------------------------
def summed(a_layer: np.ndarray, queries: list[int], how: str) -> np.ndarray:  # [H, n, n] -> [H + 1, n]
    """Rows of the chosen queries added up (or averaged), per head, then the same over the heads' mean."""
    per_head = np.zeros(a_layer.shape[::2])
    for q in queries:
        per_head += a_layer[:, q, :]
    mean_of_heads = sum(a_layer[h] for h in range(a_layer.shape[0])) / a_layer.shape[0]
    over = sum(mean_of_heads[q] for q in queries)
    if how == "mean":
        per_head, over = per_head / len(queries), over / len(queries)
    return np.vstack([per_head, over])


def rolled(attentions: np.ndarray, real: np.ndarray, token: int, after: int) -> np.ndarray:  # -> [2, n]
    """Rollout (heads averaged, + I, rows rescaled, layers multiplied last on the left) on the real tokens, and the
    layer's own head mean, for one token."""
    idx = np.flatnonzero(real)
    joint = np.eye(len(idx))
    for layer in range(after + 1):
        w = attentions[layer][:, idx][:, :, idx].mean(axis=0) + np.eye(len(idx))
        joint = (w / w.sum(axis=1, keepdims=True)) @ joint
    out = np.zeros((2, len(real)))
    out[0, idx] = joint[list(idx).index(token)]
    out[1] = attentions[after].mean(axis=0)[token]
    return out


# ---- A real model: an encoder, padded ------------------------------------------------------------------------------
def test_a_real_model_summed_and_rolled_out_on_a_padded_run(folders):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["model_source"] = folders["bert"]
    at.run()
    at.switch_page(registry.MODEL.file).run()
    at.number_input(key="model_pad_to").set_value(PAD_TO).run()
    assert not at.exception, at.exception
    out = attn_models.load(folders["bert"]).forward(at.text_input(key="model_sentence").value, PAD_TO)
    a, real = out.attentions, ~out.is_pad
    assert out.is_pad.any()
    at.selectbox(key="model_layer").set_value(1).run()

    shown = heatmap_by_title(at, "layer 1: 2 query tokens summed")
    np.testing.assert_allclose(shown, summed(a[1], [1, 2], "sum"), rtol=0, atol=1e-12)
    at.multiselect(key="model_sum_queries").set_value([0, 3, 5])
    at.segmented_control(key="model_sum_how").set_value("mean").run()
    before, shown = shown, heatmap_by_title(at, "layer 1: 3 query tokens averaged")
    np.testing.assert_allclose(shown, summed(a[1], [0, 3, 5], "mean"), rtol=0, atol=1e-12)
    assert np.abs(shown - before).max() > 0.01
    assert "on average the most weight" in words(at)
    offered = at.multiselect(key="model_sum_queries").options  # the real tokens only, no [PAD]
    assert len(offered) == real.sum() and not any("[PAD]" in o for o in offered)

    rows = heatmap_by_title(at, "where “0: [CLS]” comes from")
    np.testing.assert_allclose(rows, rolled(a, real, 0, 1), rtol=0, atol=1e-12)
    assert (rows[0, ~real] == 0).all() and abs(rows[0].sum() - 1) < 1e-12
    at.selectbox(key="model_rollout_token").set_value(4)
    at.selectbox(key="model_rollout_layer").set_value(0).run()
    np.testing.assert_allclose(heatmap_by_title(at, "where “4: on” comes from"), rolled(a, real, 4, 0), rtol=0,
                               atol=1e-12)
    assert "Computed over the real tokens only" in words(at)
    assert not at.exception, at.exception


def test_the_sentence_under_the_rollout_names_its_numbers(folders):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["model_source"] = folders["bert"]
    at.run()
    at.switch_page(registry.MODEL.file).run()
    out = attn_models.load(folders["bert"]).forward(at.text_input(key="model_sentence").value)
    want = rolled(out.attentions, ~out.is_pad, 0, out.attentions.shape[0] - 1)
    a, b = int(np.argmax(want[0])), int(np.argmax(want[1]))
    said = next(m for m in words(at).splitlines() if "rolled out" in m.lower() or "Rolled out" in m)
    assert f"“{a}: {out.tokens[a]}” ({want[0, a]:.2f}" in said
    assert f"“{b}: {out.tokens[b]}” ({want[1, b]:.2f})" in said


# ---- A model that writes: causal ------------------------------------------------------------------------------------
def test_a_model_that_writes_summed_and_rolled_out(folders):
    at = new_app(registry.GENERATE.file, 60)
    assert not at.exception, at.exception
    model = attn_models.load(folders["gpt2"])
    out = model.forward(at.text_input(key="gen_prompt").value)
    a, n = out.attentions, out.attentions.shape[-1]
    last = a.shape[0] - 1
    queries = [n - 2, n - 1]  # the last two tokens, to start with
    title = heatmap_by_title
    np.testing.assert_allclose(title(at, "layer 0: 2 query tokens summed"), summed(a[0], queries, "sum"), rtol=0,
                               atol=1e-12)
    at.multiselect(key="gen_sum_queries").set_value([0]).run()
    shown = title(at, "layer 0: 1 query token summed")  # one token: singular (ngettext), the sentence too
    assert "the 1 token chosen puts the most weight on" in words(at)
    np.testing.assert_allclose(shown, summed(a[0], [0], "sum"), rtol=0, atol=1e-12)
    assert (shown[:, 1:] == 0).all()  # the first token reads only itself
    real = np.ones(n, dtype=bool)
    np.testing.assert_allclose(title(at, f"where “{n - 1}: "), rolled(a, real, n - 1, last), rtol=0, atol=1e-12)
    at.selectbox(key="gen_rollout_token").set_value(1).run()
    got = title(at, "where “1: ")
    np.testing.assert_allclose(got, rolled(a, real, 1, last), rtol=0, atol=1e-12)
    assert (got[:, 2:] == 0).all() and "only itself and the tokens before it" in words(at)
    assert not at.exception, at.exception


# ---- A model that translates: the encoder's and the decoder's self-attention; cross-attention summed only ----------
def test_a_model_that_translates_summed_and_rolled_out_on_each_side(folders):
    at = new_app(registry.TRANSLATE.file, 60)
    at.text_input(key="trans_sentence").set_value(tiny_t5.SENTENCES[0]).run()
    assert not at.exception, at.exception
    t = attn_models.load(folders["t5"]).translate(tiny_t5.SENTENCES[0], max_new=40)
    enc, dec = t.encoder_attentions, t.decoder_attentions
    n_dec = dec.shape[0]
    at.selectbox(key="trans_enc_layer").set_value(1).run()
    np.testing.assert_allclose(heatmap_by_title(at, "layer 1: 2 query tokens summed"), summed(enc[1], [1, 2], "sum"),
                               rtol=0, atol=1e-12)
    at.segmented_control(key="trans_enc_across_sum").set_value("trans_cross").run()  # cross-attention: summed only
    queries = [1, 2] if len(t.output_tokens) > 2 else [0]
    layer = at.selectbox(key="trans_layer").value
    np.testing.assert_allclose(heatmap_by_title(at, f"layer {layer}: {len(queries)} query tokens summed"),
                               summed(t.cross[layer], queries, "sum"), rtol=0, atol=1e-10)

    src_real = np.ones(enc.shape[-1], dtype=bool)
    np.testing.assert_allclose(heatmap_by_title(at, "where “0: "), rolled(enc, src_real, 0, enc.shape[0] - 1),
                               rtol=0, atol=1e-12)
    options = at.segmented_control(key="trans_enc_across_rollout").options
    assert len(options) == 2 and "Cross-attention has no rollout" in words(at)
    at.segmented_control(key="trans_enc_across_rollout").set_value("trans_dec").run()
    n_out = dec.shape[-1]
    got = heatmap_by_title(at, f"where “{n_out - 1}: ")
    np.testing.assert_allclose(got, rolled(dec, np.ones(n_out, dtype=bool), n_out - 1, n_dec - 1), rtol=0,
                               atol=1e-12)
    assert not at.exception, at.exception


def broken_page() -> None:
    """The sections on weights whose rows do not sum to 1 (no family gives such; a bug would)."""
    import numpy as np

    from attn_ui.app import state
    from attn_ui.views import across_views

    state.init()
    sides = across_views.causal_sides(np.full((1, 1, 3, 3), 0.5), ["a", "b", "c"], 0)
    across_views.rollout(sides)


def test_weights_that_are_not_attention_are_a_message_not_a_traceback():
    at = AppTest.from_function(broken_page, default_timeout=30).run()
    assert not at.exception, at.exception
    assert [plain(e.value) for e in at.error] == [
        "attentions: layer 0, head 0, row 0 sums to 1.5 (or has a negative weight); attention weights are ≥ 0 and "
        "each row sums to 1, or to 0 when every key is masked."]


def long_page() -> None:
    """The sections on 80 tokens of random causal weights: the heatmaps draw blocks of tokens."""
    import numpy as np

    from attn_core import causal_mask, softmax
    from attn_ui.app import state
    from attn_ui.views import across_views

    state.init()
    scores = np.random.default_rng(0).standard_normal((2, 3, 80, 80)) * 3
    a = softmax(np.where(causal_mask(80), scores, -np.inf))
    sides = across_views.causal_sides(a, [f"t{i}" for i in range(80)], 1)
    across_views.tokens_summed(sides)
    across_views.rollout(sides)


def test_above_64_tokens_the_keys_each_sentence_names_are_listed_token_by_token():
    from attn_core import causal_mask, softmax

    at = AppTest.from_function(long_page, default_timeout=30).run()
    assert not at.exception, at.exception
    scores = np.random.default_rng(0).standard_normal((2, 3, 80, 80)) * 3
    a = softmax(np.where(causal_mask(80), scores, -np.inf))
    rows = rolled(a, np.ones(80, dtype=bool), 79, 1)  # the last token after layer 1: the rollout and the layer
    tables = [m.value for m in at.markdown if m.value.startswith("| row")]
    assert len(tables) == 2
    lines = tables[1].splitlines()[2:]
    for line, values in zip(lines, rows, strict=True):
        top = np.argsort(-values, kind="stable")[:5]
        assert plain(line).split(" | ")[1:] == [f"{j}: t{j} ({values[j]:.2f})" for j in top[:4]] + \
            [f"{top[4]}: t{top[4]} ({values[top[4]]:.2f}) |"]
    assert "Above 64 tokens the chart draws the mean of each block" in words(at)
