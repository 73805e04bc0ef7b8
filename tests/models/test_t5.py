"""attn_models.t5 against Hugging Face transformers' T5ForConditionalGeneration + PyTorch in float64
(tests/models/make_t5_reference.py made reference_t5.npz; neither torch nor transformers is needed here): every
attention and the logits within 1e-9, the same greedy tokens, cross-attention heads switched off, the relative-position
buckets; the explorer's cross-attention configuration bit for bit; hostile configs and files refused by name.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from attn_core import Phrase, Words, run
from attn_models import Intervention, ModelError
from attn_models.t5 import (
    T5Config,
    load_translator,
    parse_t5_config,
    position_bias,
    relative_position_bucket,
    rms_norm,
    t5_resident_bytes,
)

from .. import tiny_t5
from . import make_t5_reference as cases

REFERENCE = np.load(Path(__file__).with_name("reference_t5.npz"))
TOL = 1e-9


@pytest.fixture(scope="module", params=list(cases.CHECKPOINTS))
def translator(request, tmp_path_factory):
    kind = request.param
    folder = tiny_t5.build(tmp_path_factory.mktemp(kind) / kind, config=cases.CHECKPOINTS[kind])
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE[f"{kind}_sha256"]), "tests/tiny_t5.py changed: rerun make_t5_reference.py"
    return kind, load_translator(str(folder))


@pytest.fixture(scope="module")
def relu(tmp_path_factory):
    return load_translator(str(tiny_t5.build(tmp_path_factory.mktemp("relu") / "t5")))


# ---- exact to transformers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("i", range(len(tiny_t5.SENTENCES)))
def test_attentions_and_logits_equal_transformers(translator, i):
    kind, tr = translator
    key = f"{kind}_{i}"
    tokens, ids = tr.encode(tiny_t5.PREFIX + tiny_t5.SENTENCES[i])
    assert ids.tolist() == REFERENCE[f"{key}_ids"].tolist() and tokens[-1] == "</s>"
    out = tr.decode_step(ids, np.array(cases.TARGET))
    n_t, n_src = len(cases.TARGET), len(ids)
    assert out.logits.shape == (n_t, tr.config.vocab_size)
    assert out.cross_attentions.shape == (2, 4, n_t, n_src) and out.self_attentions.shape == (2, 4, n_t, n_t)
    for mine, name in ((out.encoder_attentions, "encoder"), (out.self_attentions, "self"),
                       (out.cross_attentions, "cross"), (out.logits, "logits")):
        assert np.abs(mine - REFERENCE[f"{key}_{name}"]).max() < TOL, name
    assert np.abs(np.triu(out.self_attentions, 1)).max() == 0.0  # causal: no position sees a later one


@pytest.mark.parametrize("i", range(len(tiny_t5.SENTENCES)))
def test_greedy_translation_equals_transformers_generate(translator, i):
    kind, tr = translator
    t = tr.translate(tiny_t5.SENTENCES[i], max_new=cases.MAX_NEW)
    generated = REFERENCE[f"{kind}_{i}_generated"]
    assert t.output_ids.tolist() == generated[1:].tolist()  # transformers' starts with the start token
    assert t.output_tokens == tuple(tr.tokenizer.id_to_token(int(j)) for j in generated[1:])
    assert t.text == tr.tokenizer.decode([int(j) for j in generated[1:]], skip_special_tokens=True)
    # row t of the cross-attention and each probability: decoder position t, which chose output token t (each step on
    # the key/value cache: the whole decoder's to rounding; rerunning the whole decoder each step: bit for bit)
    full = tr.decode_step(t.source_ids, np.concatenate([[0], t.output_ids[:-1]]))
    assert np.abs(t.cross - full.cross_attentions).max() <= 1e-12
    plain = tr.translate(tiny_t5.SENTENCES[i], max_new=cases.MAX_NEW, cache=False)
    assert np.array_equal(plain.cross, full.cross_attentions)
    # the encoder's and the decoder's self-attentions kept with it (attention rollout reads them), likewise
    assert np.array_equal(t.encoder_attentions, full.encoder_attentions)
    assert np.abs(t.decoder_attentions - full.self_attentions).max() <= 1e-12
    assert np.array_equal(plain.decoder_attentions, full.self_attentions)
    assert t.decoder_tokens == (tr.label(0), *t.output_tokens[:-1])
    e = np.exp(full.logits - full.logits.max(axis=1, keepdims=True))
    probs = (e / e.sum(axis=1, keepdims=True))[np.arange(len(t.output_ids)), t.output_ids]
    assert np.abs(t.probs - probs).max() < 1e-12
    assert (full.logits.argmax(axis=1) == t.output_ids).all()


@pytest.mark.parametrize("i", range(len(tiny_t5.SENTENCES)))
@pytest.mark.parametrize("name", list(cases.ABLATIONS))
def test_cross_attention_heads_switched_off_equal_transformers(translator, name, i):
    kind, tr = translator
    ablate, how = cases.ABLATIONS[name]
    iv = Intervention(ablate=ablate, how=how)
    _, ids = tr.encode(tiny_t5.PREFIX + tiny_t5.SENTENCES[i])
    out = tr.decode_step(ids, np.array(cases.TARGET), intervention=iv)
    assert np.abs(out.logits - REFERENCE[f"{kind}_{i}_{name}_logits"]).max() < TOL
    assert np.abs(out.logits - REFERENCE[f"{kind}_{i}_logits"]).max() > 1e-3  # the heads did matter
    t = tr.translate(tiny_t5.SENTENCES[i], max_new=cases.MAX_NEW, intervention=iv)
    assert t.output_ids.tolist() == REFERENCE[f"{kind}_{i}_{name}_generated"][1:].tolist()


def test_head_effects_are_the_first_tokens_probability_with_each_head_off(relu):
    text = tiny_t5.SENTENCES[1]
    effects = relu.head_effects(text, how="zero")
    assert effects.shape == (2, 4)
    first = relu.translate(text, max_new=1)
    _, ids = relu.encode(tiny_t5.PREFIX + text)
    for layer, h in ((0, 1), (1, 3)):
        logits = relu.decode_step(ids, [0], intervention=Intervention(ablate={(layer, h)}, how="zero")).logits[0]
        e = np.exp(logits - logits.max())
        assert abs(effects[layer, h] - e[first.output_ids[0]] / e.sum()) < 1e-12
    assert not np.allclose(effects, first.probs[0])  # some head changes it


def test_the_unchanged_transformers_differs_only_by_its_float32_variance():
    diffs = [float(v) for k, v in REFERENCE.items() if k.startswith("unpatched_logits_diff")]
    assert 0 < max(diffs) < 1e-3
    assert all(bool(v) for k, v in REFERENCE.items() if k.startswith("unpatched_same_ids"))


# ---- buckets, bias, norm --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), cases.BUCKET_CASES)
@pytest.mark.parametrize("direction", ["bi", "causal"])
def test_relative_position_buckets_equal_transformers(n, d, direction):
    mine = relative_position_bucket(np.arange(-300, 301), direction == "bi", n, d)
    assert mine.tolist() == REFERENCE[f"buckets_{n}_{d}_{direction}"].tolist()


def test_position_bias_is_the_table_at_each_bucket():
    table = np.arange(16.0).reshape(8, 2)  # [num_buckets, n_heads]
    b = position_bias(table, 3, 4, True, 8, 16)  # [n_heads, n_q, n_k]
    rel = np.arange(4)[None, :] - np.arange(3)[:, None]  # key − query
    # 4 buckets each way, 2 of them exact: distance 0, 1 exact; 2 … 16 log-spaced into buckets 2, 3; +4 for after
    expected = np.array([[0, 5, 6, 6], [1, 0, 5, 6], [2, 1, 0, 5]])
    assert relative_position_bucket(rel, True, 8, 16).tolist() == expected.tolist()
    assert b.tolist() == [table[expected, 0].tolist(), table[expected, 1].tolist()]


def test_rms_norm_by_hand():
    x = np.array([[1.0, -2.0, 2.0]])
    out = rms_norm(x, np.array([1.0, 2.0, 0.5]), 1e-6)
    assert np.abs(out - x / np.sqrt(3 + 1e-6) * [1.0, 2.0, 0.5]).max() < 1e-15


# ---- the explorer ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layer", [0, 1])
def test_cross_config_runs_to_the_translations_cross_attentions_bit_for_bit(relu, layer):
    text = tiny_t5.SENTENCES[1]
    t = relu.translate(text, max_new=6, cache=False)  # the whole decoder at each step; on the cache: to 1e-12 (below)
    cfg = relu.cross_config(text, t.output_ids[:-1], layer, head=2)
    assert cfg.scale == "none" and cfg.cross and cfg.n_heads == 4
    assert cfg.tokens == t.source_tokens and len(cfg.y_tokens) == len(t.output_ids)
    assert cfg.y_tokens[0] == "<pad>" and cfg.y_tokens[1:] == t.output_tokens[:-1]
    assert cfg.origin["layer"] == layer and cfg.origin["head"] == 2
    trace = run(cfg)
    cached = relu.translate(text, max_new=6)
    for h in range(4):
        assert np.array_equal(trace.heads[h].weights, t.cross[layer, h])
        assert np.abs(trace.heads[h].weights - cached.cross[layer, h]).max() <= 1e-12


@pytest.mark.parametrize("side", ["encoder", "decoder"])
@pytest.mark.parametrize("layer", [0, 1])
def test_self_config_runs_to_the_models_self_attentions_bit_for_bit(relu, side, layer):
    text, target = tiny_t5.SENTENCES[0], [21, 22, 4]
    cfg = relu.self_config(text, layer, head=1, side=side, output_prefix_ids=target)
    _, ids = relu.encode(tiny_t5.PREFIX + text)
    out = relu.decode_step(ids, [0, *target])
    attentions = out.encoder_attentions if side == "encoder" else out.self_attentions
    n = attentions.shape[-1]
    assert cfg.scale == "none" and not cfg.cross and cfg.n_seq == n and cfg.score_bias.shape == (4, n, n)
    assert cfg.mask_kind == ("none" if side == "encoder" else "causal") and cfg.origin["side"] == side
    trace = run(cfg)
    for h in range(4):
        assert np.array_equal(trace.heads[h].weights, attentions[layer, h])
    # the bias is the stack's table at each relative position's bucket (the buckets checked against transformers)
    table = relu.weights.encoder_bias if side == "encoder" else relu.weights.decoder_bias
    rel = np.arange(n)[None, :] - np.arange(n)[:, None]
    buckets = relative_position_bucket(rel, side == "encoder", 8, 16)
    assert np.array_equal(cfg.score_bias[2], table[buckets, 2].astype(np.float64))


def test_self_config_refuses_a_side_or_layer_that_does_not_exist(relu):
    with pytest.raises(ModelError, match="side must be encoder or decoder"):
        relu.self_config("The cat.", 0, side="cross")
    with pytest.raises(ModelError, match="Layer 5 does not exist"):
        relu.self_config("The cat.", 5)


def test_a_layer_the_explorer_refuses_says_why_in_words_the_app_translates(relu):
    """The core's reason goes into the message as a Phrase (its template and values), which the app translates
    inside the translated sentence: as ``str(err)`` it stayed English in a Chinese or Korean message."""
    tokens = ("a", "b")
    x = np.ones((2, relu.config.d_model))
    x[1, 0] = np.nan
    with pytest.raises(ModelError) as caught:
        relu._config(0, "encoder", tokens, x, relu.weights.encoder[0].self_attn)
    why = caught.value.params["err"]
    assert isinstance(why, Phrase) and why == "X: cell (1, 0) is NaN; every cell must be a finite number."
    assert why.template == "{name}: cell ({i}, {j}) is {what}; {hint}." and isinstance(why.params["hint"], Words)


def test_a_cross_config_runs_back_through_the_decoder(relu):
    from dataclasses import replace

    text = tiny_t5.SENTENCES[0]
    plain = relu.translate(text, max_new=6)
    cfg = relu.cross_config(text, plain.output_ids[:-1], 1)
    same = relu.translate(text, max_new=6, intervention=Intervention(config=cfg))
    assert same.output_ids.tolist() == plain.output_ids.tolist() and np.array_equal(same.cross, plain.cross)
    # W_Q set to zero: every score 0, so every query of layer 1 attends evenly to the n_src source tokens
    flat = relu.translate(text, max_new=6, intervention=Intervention(config=replace(cfg, w_q=np.zeros_like(cfg.w_q))))
    n_src = len(plain.source_ids)
    assert np.abs(flat.cross[1] - 1 / n_src).max() < 1e-15
    assert np.array_equal(flat.cross[0, :, :1], plain.cross[0, :, :1])  # layer 0 at the first position: unchanged
    assert np.abs(flat.probs[0] - plain.probs[0]) > 1e-6
    with pytest.raises(ModelError, match="The configuration has 2 heads"):
        relu.translate(text, intervention=Intervention(config=replace(cfg, n_heads=2)))


def test_cross_config_refuses_a_layer_that_does_not_exist(relu):
    with pytest.raises(ModelError, match="Layer 2 does not exist"):
        relu.cross_config("The cat.", [], 2)


# ---- hostile configs and files -----------------------------------------------------------------------------------


def test_t5_small_fits_the_memory_cap_in_float32_not_in_float64():
    small = parse_t5_config({"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
                             "num_heads": 8, "vocab_size": 32128})
    assert small == T5Config(6, 6, 8, 512, 64, 2048, 32128, 32, 128, 1e-6)
    assert t5_resident_bytes(small, 4) == 4 * 60_506_624  # t5-small's parameters (model.safetensors: 242 MB)
    assert t5_resident_bytes(small, 8) > 300_000_000


@pytest.mark.parametrize(("change", "message"), [
    ({"model_type": "bert"}, "model_type 'bert' is not T5"),
    ({"feed_forward_proj": "gated-silu"}, "feed_forward_proj 'gated-silu'"),
    ({"num_layers": 10_000}, "num_layers 10000 is over the cap"),
    ({"num_decoder_layers": 99}, "num_decoder_layers 99 is over the cap"),
    ({"vocab_size": 10**9}, "vocab_size 1000000000 is over the cap"),
    ({"d_ff": 10**6}, "d_ff 1000000 is over the cap"),
    ({"relative_attention_num_buckets": 10**5}, "relative_attention_num_buckets 100000 is over the cap"),
    ({"relative_attention_max_distance": 10**7}, "relative_attention_max_distance 10000000 is over the cap"),
    ({"relative_attention_max_distance": 4}, "relative_attention_max_distance 4 must be more than half"),
    ({"d_model": 1024}, "d_model 1024 columns of X is over the cap of 769"),
    ({"d_kv": 256}, "num_heads × d_kv = 1024 columns of W_Q is over the cap"),
    ({"num_heads": 32, "d_kv": 1}, "num_heads 32 is over the cap of 16"),
    ({"num_heads": "4"}, "num_heads must be a whole number"),
    ({"layer_norm_epsilon": "x"}, "layer_norm_epsilon must be a small number"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings must be true or false"),
    ({"eos_token_id": 999}, "eos_token_id 999 is not below vocab_size"),
    ({"is_encoder_decoder": False}, "not an encoder-decoder"),
    ({"d_model": 512, "d_ff": 4096, "num_layers": 24, "vocab_size": 32128, "d_kv": 64, "num_heads": 8},
     "this model would take .* MB of memory once loaded"),
])
def test_a_hostile_config_is_refused_by_field(change, message):
    with pytest.raises(ModelError, match=message) as err:
        parse_t5_config({**tiny_t5.CONFIG, **change})
    assert err.value.template  # an N_ template the app translates


def test_a_bert_checkpoint_is_refused_by_model_type(tmp_path):
    from .. import tiny_bert

    folder = tiny_bert.build(tmp_path / "bert")
    with pytest.raises(ModelError, match="config.json: model_type 'bert' is not T5"):
        load_translator(str(folder))


@pytest.mark.parametrize(("drop", "extra", "message"), [
    (("shared.weight",), None, "no tensor shared.weight; is it a T5 checkpoint"),
    (("decoder.block.1.layer.1.EncDecAttention.k.weight",), None,
     "no tensor decoder.block.1.layer.1.EncDecAttention.k.weight"),
    ((), {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": np.zeros((9, 4), np.float32)},
     r"relative_attention_bias.weight has shape \(9, 4\), config.json implies \(8, 4\)"),
    ((), {"encoder.final_layer_norm.weight": np.full(16, np.nan, np.float32)},
     "encoder.final_layer_norm.weight holds a value that is not a finite number"),
    ((), {"decoder.final_layer_norm.weight": np.ones(16, np.int32)}, "holds I32 numbers"),
])
def test_a_hostile_weights_file_is_refused_by_tensor(tmp_path, drop, extra, message):
    folder = tiny_t5.build(tmp_path / "t5", drop=drop, extra=extra)
    with pytest.raises(ModelError, match=message):
        load_translator(str(folder))


def test_an_oversized_or_broken_file_is_named(tmp_path):
    folder = tiny_t5.build(tmp_path / "t5")
    (folder / "config.json").write_text(" " * 1_000_001)
    with pytest.raises(ModelError, match="config.json is 1.0 MB; the cap is 1.0 MB"):
        load_translator(str(folder))
    (folder / "config.json").write_text(json.dumps(tiny_t5.CONFIG))
    (folder / "tokenizer.json").write_text("{")
    with pytest.raises(ModelError, match="tokenizer.json: not valid JSON"):
        load_translator(str(folder))
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:-100])
    (folder / "tokenizer.json").write_text(tiny_t5.tokenizer_json())
    with pytest.raises(ModelError, match="model.safetensors: its header puts"):
        load_translator(str(folder))


def test_a_tokenizer_without_the_post_processor_still_ends_the_source_with_eos(tmp_path, relu):
    folder = tiny_t5.build(tmp_path / "t5")
    doc = json.loads((folder / "tokenizer.json").read_text())
    doc["post_processor"] = None
    (folder / "tokenizer.json").write_text(json.dumps(doc))
    tokens, ids = load_translator(str(folder)).encode("The cat sat.")
    assert (tokens, ids.tolist()) == (("▁The", "▁cat", "▁sat", ".", "</s>"), [8, 10, 11, 17, 1])
    assert relu.encode("The cat sat.")[1].tolist() == [8, 10, 11, 17, 1]


def test_bad_requests_are_named(relu):
    with pytest.raises(ModelError, match="max_new must be a whole number from 1 to 64"):
        relu.translate("The cat.", max_new=0)
    with pytest.raises(ModelError, match="The sentence is 3\\d\\d tokens"):
        relu.translate("cat " * 300)
    with pytest.raises(ModelError, match="Head 9 of layer 0 does not exist"):
        relu.translate("The cat.", intervention=Intervention(ablate={(0, 9)}))
    with pytest.raises(ModelError, match="target_ids must be 1"):
        relu.decode_step([3, 1], [999])
