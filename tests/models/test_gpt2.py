"""attn_models.gpt2 against transformers' GPT2LMHeadModel in float64 (tests/models/reference_gpt2.npz, made by
make_gpt2_reference.py on tests/tiny_gpt2.py's checkpoint): logits, attentions, hidden states, greedy generation,
temperature, heads switched off, an edited W_Q run back; the explorer's configuration of a layer (and of one head);
sampling by seed; hostile checkpoints from a folder and from a fake Hub. No torch here."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import attn_core
import attn_models
from attn_models import Intervention, ModelError, gpt2

from .. import fake_hub, tiny_bert, tiny_gpt2
from .make_gpt2_reference import ABLATIONS, EDIT_LAYER, EDITS, N_NEW, TEMPERATURE

REF = np.load(Path(__file__).with_name("reference_gpt2.npz"))
PROMPTS = tiny_gpt2.PROMPTS
TOL = 1e-9
CAP_MB = attn_models.MODEL_LIMITS.weights_bytes / 1e6  # model.safetensors's cap, in MB


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gpt2.build(tmp_path_factory.mktemp("gpt2") / "tiny")


@pytest.fixture(scope="module")
def lm(folder: Path) -> gpt2.CausalLM:
    return attn_models.load_causal_lm(str(folder))


@pytest.fixture
def head_only(monkeypatch):
    """The tiny model opened one head at a time, as GPT-2 small is (its whole layer is over attn_core.LIMITS)."""
    monkeypatch.setattr(gpt2.Gpt2Config, "head_only", property(lambda self: True))


def softmax(z: np.ndarray) -> np.ndarray:  # written out here: the reference's logits → probabilities
    e = np.exp(z - z.max())
    return e / e.sum()


# ---- exact to transformers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_forward_equals_transformers(lm, i):
    out = lm.forward(PROMPTS[i])
    assert out.ids.tolist() == REF[f"p{i}_ids"].tolist()
    assert out.logits.shape == (len(out.ids), lm.config.vocab_size)
    assert np.abs(out.logits - REF[f"p{i}_logits"]).max() <= TOL
    assert np.abs(out.attentions - REF[f"p{i}_attentions"]).max() <= TOL
    assert np.abs(out.hidden_states - REF[f"p{i}_hidden"]).max() <= TOL
    assert np.all(np.triu(out.attentions, 1) == 0)  # causal: no query sees a later token


@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_greedy_generation_gives_transformers_tokens(lm, i):
    gen = lm.generate(PROMPTS[i], N_NEW)
    assert gen.ids.tolist() == REF[f"p{i}_greedy"].tolist()
    assert gen.stopped == "length" and gen.prompt_tokens == lm.encode(PROMPTS[i]).tokens
    first = softmax(REF[f"p{i}_logits"][-1])
    assert abs(gen.steps[0].prob - first[gen.steps[0].id]) <= TOL
    assert gen.text.startswith(PROMPTS[i])
    if not any("\\x" in s.piece for s in gen.steps):  # a stray UTF-8 byte: "\\xd1" as a piece, "�" in the text
        assert gen.text == PROMPTS[i] + "".join(s.piece for s in gen.steps)


@pytest.mark.parametrize("cache, tol", [(False, 0.0), (True, 1e-12)])  # the whole text each step: bit for bit
def test_each_step_attention_is_the_last_query_row_over_the_context(lm, cache, tol):
    gen = lm.generate(PROMPTS[1], 4, cache=cache)
    ids = list(lm.encode(PROMPTS[1]).ids)
    for step in gen.steps:
        _, attentions = lm.run(np.array(ids, dtype=np.intp))
        assert step.attention.shape == (lm.n_layers, lm.n_heads, len(ids))
        assert np.abs(step.attention - attentions[:, :, -1, :]).max() <= tol
        np.testing.assert_allclose(step.attention.sum(-1), 1.0, atol=1e-12)
        ids.append(step.id)


@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_next_token_at_a_temperature(lm, i):
    want = REF[f"p{i}_probs_t07"]
    nxt = lm.next_token(PROMPTS[i], temperature=TEMPERATURE, top_k=5)
    assert nxt.ids.tolist() == np.argsort(-want, kind="stable")[:5].tolist()
    assert np.abs(nxt.probs - want[nxt.ids]).max() <= TOL
    assert np.all(np.diff(nxt.probs) <= 0) and nxt.temperature == TEMPERATURE
    assert nxt.tokens == tuple(gpt2.piece_label(lm.piece(t)) for t in nxt.ids)
    assert np.abs(lm.probs(PROMPTS[i], temperature=TEMPERATURE) - want).max() <= TOL


def test_a_higher_temperature_flattens_the_distribution(lm):
    def entropy(t: float) -> float:
        p = lm.probs(PROMPTS[0], temperature=t)
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    assert entropy(0.5) < entropy(1.0) < entropy(2.0) < entropy(10.0) < np.log(lm.config.vocab_size)
    every = lm.next_token(PROMPTS[0], top_k=lm.config.vocab_size)
    assert abs(every.probs.sum() - 1) < 1e-12


@pytest.mark.parametrize("name", ABLATIONS)
@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_heads_switched_off_equal_transformers_hook(lm, name, i):
    pairs, how = ABLATIONS[name]
    out = lm.forward(PROMPTS[i], intervention=Intervention(ablate=pairs, how=how))
    assert np.abs(out.logits - REF[f"p{i}_ablate_{name}_logits"]).max() <= TOL
    assert np.abs(out.logits - REF[f"p{i}_logits"]).max() > 1e-6  # it changed something


def edited(cfg: attn_core.Config) -> attn_core.Config:
    w_q = cfg.w_q.copy()
    for row, col, added in EDITS:
        w_q[row, col] += added
    return replace(cfg, w_q=w_q)


@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_an_edited_layer_runs_back_as_transformers_with_the_edit(lm, i):
    cfg = lm.layer_config(PROMPTS[i], EDIT_LAYER)
    assert np.abs(lm.forward(PROMPTS[i], intervention=Intervention(config=cfg)).logits
                  - REF[f"p{i}_logits"]).max() <= 1e-12  # unedited: the model as trained
    out = lm.forward(PROMPTS[i], intervention=Intervention(config=edited(cfg)))
    assert np.abs(out.logits - REF[f"p{i}_edited_logits"]).max() <= TOL


def test_a_layer_opened_on_one_prompt_applies_its_weights_to_another(lm):
    """X belongs to the prompt it was opened on; on another prompt the edited weights meet that prompt's own X."""
    cfg = lm.layer_config(PROMPTS[0], EDIT_LAYER)
    assert np.abs(lm.forward(PROMPTS[1], intervention=Intervention(config=cfg)).logits
                  - REF["p1_logits"]).max() <= 1e-12
    out = lm.forward(PROMPTS[1], intervention=Intervention(config=edited(cfg)))
    assert np.abs(out.logits - REF["p1_edited_logits"]).max() <= TOL
    nxt = lm.next_token(PROMPTS[1], intervention=Intervention(config=edited(cfg)), top_k=1)
    assert abs(nxt.probs[0] - softmax(REF["p1_edited_logits"][-1]).max()) <= TOL


def test_a_layer_whose_heads_were_changed_in_the_explorer_is_refused_by_name(lm):
    cfg = lm.layer_config(PROMPTS[0], 1)
    one = attn_core.make_config(list(cfg.tokens), cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=1,
                                mask_kind="causal", origin=cfg.origin)
    with pytest.raises(ModelError, match="The configuration has 1 heads; the model's layers have 4"):
        lm.forward(PROMPTS[0], intervention=Intervention(config=one))


def test_an_edited_layer_applies_its_weights_to_the_generated_context(lm):
    """Step 0 reads the prompt the configuration was opened on; later steps a longer context with its weights."""
    cfg = edited(lm.layer_config(PROMPTS[0], EDIT_LAYER))
    gen = lm.generate(PROMPTS[0], 3, intervention=Intervention(config=cfg))
    assert abs(gen.steps[0].prob - softmax(REF["p0_edited_logits"][-1])[gen.steps[0].id]) <= TOL
    ids = np.array([*lm.encode(PROMPTS[0]).ids, gen.steps[0].id], dtype=np.intp)
    stream, _ = lm.run(ids, intervention=Intervention(config=cfg), own=False)
    assert gen.steps[1].id == int(np.argmax(lm._last_logits(stream[-1])))


# ---- the explorer's configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize("layer", range(tiny_gpt2.N_LAYERS))
def test_layer_config_runs_to_the_forward_pass_attention_bit_for_bit(lm, layer):
    out = lm.forward(PROMPTS[2])
    cfg = lm.layer_config(PROMPTS[2], layer, head=3)
    assert cfg.mask_kind == "causal" and cfg.n_heads == lm.n_heads and cfg.d_model == 17
    assert cfg.tokens == out.tokens and cfg.origin["head"] == 3 and cfg.origin["layer"] == layer
    assert cfg.origin["family"] == "gpt2" and "of_heads" not in cfg.origin
    trace = attn_core.run(cfg)
    for h in range(lm.n_heads):
        assert np.array_equal(trace.heads[h].weights, out.attentions[layer, h])
    np.testing.assert_array_equal(cfg.x[:, -1], 1.0)  # the bias column


def test_a_model_too_wide_for_a_whole_layer_opens_one_head(lm, head_only):
    out = lm.forward(PROMPTS[0])
    assert np.abs(out.logits - REF["p0_logits"]).max() <= TOL  # computed head by head: still exact
    for h in range(lm.n_heads):
        cfg = lm.layer_config(PROMPTS[0], 2, head=h)
        assert cfg.n_heads == 1 and cfg.w_q.shape == (17, 4) and cfg.w_o.shape == (4, 16)
        assert cfg.origin["of_heads"] == lm.n_heads and cfg.mask_kind == "causal"
        assert np.array_equal(attn_core.run(cfg).heads[0].weights, out.attentions[2, h])
    cfg = lm.layer_config(PROMPTS[0], 2, head=1)
    assert np.abs(lm.forward(PROMPTS[0], intervention=Intervention(config=cfg)).logits - out.logits).max() <= 1e-12
    pairs, how = ABLATIONS["one_mean"]
    assert np.abs(lm.forward(PROMPTS[0], intervention=Intervention(ablate=pairs, how=how)).logits
                  - REF["p0_ablate_one_mean_logits"]).max() <= TOL


def test_one_head_edited_changes_only_that_head(lm, head_only):
    cfg = lm.layer_config(PROMPTS[0], 1, head=2)
    w_q = cfg.w_q.copy()
    w_q[3, 1] += 3.0
    out = lm.forward(PROMPTS[0], intervention=Intervention(config=replace(cfg, w_q=w_q)))
    clean = lm.forward(PROMPTS[0])
    assert np.array_equal(out.attentions[1, [0, 1, 3]], clean.attentions[1, [0, 1, 3]])
    assert np.array_equal(out.attentions[1, 2], attn_core.run(replace(cfg, w_q=w_q)).heads[0].weights)
    assert not np.allclose(out.attentions[1, 2], clean.attentions[1, 2])


def test_head_effects_are_the_ablated_probabilities(lm):
    token = int(np.argmax(REF["p0_logits"][-1]))
    effects = lm.head_effects(PROMPTS[0], token)
    assert effects.shape == (lm.n_layers, lm.n_heads)
    assert abs(effects[1, 2] - softmax(REF["p0_ablate_one_mean_logits"][-1])[token]) <= TOL
    zero = lm.head_effects(PROMPTS[0], token, how="zero", layers=[1])
    assert abs(zero[0, 2] - softmax(REF["p0_ablate_one_zero_logits"][-1])[token]) <= TOL


# ---- tokens, sampling, bad input -----------------------------------------------------------------------------


def test_token_labels_show_the_text_each_piece_stands_for(lm):
    enc = lm.encode(PROMPTS[2])
    assert enc.tokens[:3] == ("It", " was", " tire") and "␣" in enc.tokens  # the lone "Ġ" before the byte pieces
    assert "".join(enc.pieces) == PROMPTS[2]
    assert lm.tokenizer.id_to_token(int(enc.ids[1])) == "Ġwas"
    assert lm.piece(lm.eot_id) == tiny_gpt2.EOT
    assert gpt2.piece_label("\n") == "↵" and gpt2.piece_label("\u3000") == "U+3000"
    assert "".join(lm.encode("猫").pieces) == "\\xe7\\x8c\\xab"  # the bytes of one character, in byte pieces


def test_sampling_is_reproducible_by_seed(lm):
    a = lm.generate(PROMPTS[1], 6, sample=True, temperature=3.0, seed=7)
    b = lm.generate(PROMPTS[1], 6, sample=True, temperature=3.0, seed=7)
    assert a.ids.tolist() == b.ids.tolist()
    runs = {tuple(lm.generate(PROMPTS[1], 6, sample=True, temperature=3.0, seed=s).ids) for s in range(6)}
    assert len(runs) > 1
    probs = softmax(REF["p1_logits"][-1] / 3.0)
    assert abs(a.steps[0].prob - probs[a.steps[0].id]) <= TOL and a.steps[0].top.temperature == 3.0


def test_generation_stops_after_endoftext(tmp_path):
    """ln_f's weight 0: every position's last state is ln_f's bias b; wte[<|endoftext|>] = 100 b wins every step."""
    t = tensors()
    eot = len(t["wte.weight"]) - 1
    t["ln_f.weight"] = np.zeros(16, np.float32)
    t["wte.weight"][eot] = 100 * t["ln_f.bias"]
    model = attn_models.load_causal_lm(str(tiny_gpt2.build(tmp_path / "m", tensors=t)))
    gen = model.generate(PROMPTS[0], 5)
    assert gen.stopped == "eot" and gen.ids.tolist() == [eot] and gen.steps[0].token == tiny_gpt2.EOT
    assert gen.text == PROMPTS[0] + tiny_gpt2.EOT


def test_generation_stops_when_the_context_is_full(lm):
    prompt = " ".join(["the cat"] * 19)  # 38 tokens; the model has 40 positions
    n = len(lm.encode(prompt).ids)
    gen = lm.generate(prompt, 8)
    assert gen.stopped == "cap" and len(gen.steps) == lm.config.max_positions - n


@pytest.mark.parametrize("call, message", [
    (lambda lm: lm.forward(""), "The prompt is empty"),
    (lambda lm: lm.forward("the cat " * 30), "The text is 61 tokens; the model's 40 positions allow 40. Shorten it."),
    (lambda lm: lm.next_token("A dog", temperature=0), "The temperature must be a number above 0, got 0."),
    (lambda lm: lm.next_token("A dog", top_k=0), "top_k must be a whole number from 1 to 301, got 0."),
    (lambda lm: lm.generate("A dog", 0), "The number of tokens to generate must be a whole number from 1 to 256"),
    (lambda lm: lm.generate("A dog", 2, seed=-1), "The seed must be a whole number of at least 0, got -1."),
    (lambda lm: lm.layer_config("A dog", 3), "Layer 3 does not exist: the model has layers 0 … 2."),
    (lambda lm: lm.layer_config("A dog", 0, head=4), "Head 4 of layer 0 does not exist"),
    (lambda lm: lm.forward("A dog", intervention=Intervention(ablate={(5, 0)})), "Layer 5 does not exist"),
    (lambda lm: lm.head_effects("A dog", 301), "Token id 301 is not in the vocabulary (ids 0 … 300)."),
    (lambda lm: lm.forward(3), "The prompt must be text, got int."),
])
def test_bad_input_is_a_model_error_naming_it(lm, call, message):
    with pytest.raises(ModelError) as err:
        call(lm)
    assert message in str(err.value)


def test_an_explorer_configuration_that_does_not_fit_is_named(lm):
    cfg = lm.layer_config(PROMPTS[0], 1)
    wrong = replace(cfg, x=cfg.x[:, :-1], w_q=cfg.w_q[:-1], w_k=cfg.w_k[:-1], w_v=cfg.w_v[:-1])
    with pytest.raises(ModelError, match="X has 16 columns; the model's layer takes 17"):
        lm.forward(PROMPTS[0], intervention=Intervention(config=wrong))


# ---- the checkpoint: weights kept in float32, names, hostile files -------------------------------------------


def test_weights_stay_in_the_checkpoint_dtype(lm):
    w = lm.weights
    assert w.wte.dtype == np.float32 and w.blocks[0].w_q.dtype == np.float32 and w.blocks[0].w_q.shape == (17, 16)
    assert w.nbytes == attn_models.gpt2_resident_bytes(lm.config)


def test_the_hub_gpt2_layout_without_prefix_and_with_mask_buffers_reads_the_same(tmp_path, lm):
    other = attn_models.load_causal_lm(str(tiny_gpt2.build(tmp_path / "hub", prefix="", buffers=True)))
    assert np.array_equal(other.forward(PROMPTS[0]).logits, lm.forward(PROMPTS[0]).logits)


def change_config(folder: Path, **change) -> Path:
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **change}))
    return folder


@pytest.mark.parametrize("change, message", [
    ({"n_layer": 25}, "config.json: n_layer 25 is over the cap of 24 (attn_models.MODEL_LIMITS)."),
    ({"vocab_size": 10**9}, "config.json: vocab_size 1000000000 is over the cap of 262144"),
    ({"n_positions": 9000}, "config.json: n_positions 9000 is over the cap of 8192"),
    ({"n_inner": 5000}, "config.json: n_inner 5000 is over the cap of 4096"),
    ({"n_embd": 1024, "n_head": 16}, "config.json: n_embd 1024 + 1 (the bias column) = 1025 columns of X is over "
                                     "the cap of 769 (d_model)."),
    ({"n_head": 17, "n_embd": 17}, "config.json: n_head 17 is over the cap of 16 (heads)."),
    ({"n_head": 3}, "config.json: n_embd 16 is not a multiple of n_head 3."),
    ({"model_type": "bert"}, "config.json: model_type 'bert' is not GPT-2"),
    ({"activation_function": "relu"}, "config.json: activation_function 'relu': only GPT-2's tanh GELU"),
    ({"scale_attn_weights": False}, "config.json: scale_attn_weights is not true"),
    ({"scale_attn_by_inverse_layer_idx": True}, "config.json: scale_attn_by_inverse_layer_idx is true"),
    ({"reorder_and_upcast_attn": True}, "config.json: reorder_and_upcast_attn is true"),
    ({"n_layer": 0}, "config.json: n_layer must be a whole number of at least 1, got 0."),
    ({"layer_norm_epsilon": "small"}, "config.json: layer_norm_epsilon must be a small number, got small."),
    ({"n_layer": 24, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},
     "config.json: this model would take 838 MB of memory once loaded; the cap is 340 MB"),
])
def test_a_hostile_config_is_refused_naming_the_field(tmp_path, change, message):
    folder = change_config(tiny_gpt2.build(tmp_path / "m"), **change)
    with pytest.raises(ModelError) as err:
        attn_models.load_causal_lm(str(folder))
    assert message in str(err.value)


def tensors(**change: np.ndarray | None) -> dict[str, np.ndarray]:
    t = tiny_gpt2.weights(tiny_gpt2.config(tiny_gpt2.tokenizer().get_vocab_size()))
    for name, value in change.items():
        name = name.replace("__", ".")
        if value is None:
            del t[name]
        else:
            t[name] = value
    return t


@pytest.mark.parametrize("t, message", [
    (tensors(h__1__mlp__c_fc__bias=None), "model.safetensors has no tensor h.1.mlp.c_fc.bias; is it a GPT-2"),
    (tensors(h__0__attn__c_attn__weight=np.zeros((16, 47), np.float32)),
     "model.safetensors: h.0.attn.c_attn.weight has shape (16, 47), config.json implies (16, 48)."),
    (tensors(wte__weight=np.full((301, 16), np.nan, np.float32)),
     "model.safetensors: wte.weight holds a value that is not a finite number"),
    (tensors(ln_f__bias=np.zeros(16, np.int32)), "model.safetensors: ln_f.bias holds I32 numbers"),
])
def test_a_hostile_weights_file_is_refused_naming_the_tensor(tmp_path, t, message):
    with pytest.raises(ModelError) as err:
        attn_models.load_causal_lm(str(tiny_gpt2.build(tmp_path / "m", tensors=t)))
    assert message in str(err.value)


def test_a_checkpoint_of_the_other_family_is_refused_both_ways(tmp_path, folder):
    with pytest.raises(ModelError, match="model_type 'bert' is not GPT-2"):
        attn_models.load_causal_lm(str(tiny_bert.build(tmp_path / "bert")))
    with pytest.raises(ModelError, match="model_type 'gpt2' is not BERT-family"):
        attn_models.parse_config(json.loads((folder / "config.json").read_text()))
    assert isinstance(attn_models.load(str(folder)), attn_models.CausalLM)  # load() reads the family it names


def test_the_memory_cap_counts_the_weights_dtype(tmp_path, monkeypatch, lm):
    size = attn_models.gpt2_resident_bytes(lm.config)
    monkeypatch.setattr(gpt2, "MODEL_LIMITS", replace(attn_models.MODEL_LIMITS, causal_resident_bytes=size - 1))
    with pytest.raises(ModelError, match="this model would take 0 MB of memory once loaded"):
        attn_models.load_causal_lm(str(tiny_gpt2.build(tmp_path / "m")))


# ---- the Hub (a fake one on 127.0.0.1): judged before the download -------------------------------------------


@pytest.fixture
def hub(monkeypatch):
    with fake_hub.FakeHub() as h:
        fake_hub.use(monkeypatch, h.url)
        yield h


def test_a_hub_repo_is_downloaded_into_the_cache_and_loaded(tmp_path, folder, hub, lm):
    hub.add_folder("someone/tiny-gpt2", folder)
    got = attn_models.load_causal_lm("someone/tiny-gpt2", cache_dir=tmp_path)
    assert np.array_equal(got.forward(PROMPTS[1]).logits, lm.forward(PROMPTS[1]).logits)
    assert attn_models.load_causal_lm("someone/tiny-gpt2", cache_dir=tmp_path, local_only=True).n_layers == 3


def test_a_hub_repo_over_the_caps_is_refused_before_its_weights_are_fetched(tmp_path, folder, hub):
    hub.add_folder("someone/huge", folder, claimed={"model.safetensors": 700_000_000})
    with pytest.raises(ModelError, match=f"model.safetensors is 700.0 MB; the cap is {CAP_MB:.1f} MB"):
        attn_models.load_causal_lm("someone/huge", cache_dir=tmp_path)
    assert not hub.fetched("model.safetensors") and not hub.fetched("config.json")  # judged from the metadata
    deep = change_config(tiny_gpt2.build(tmp_path / "deep"), n_layer=25)
    hub.add_folder("someone/deep", deep)
    with pytest.raises(ModelError, match="n_layer 25 is over the cap"):
        attn_models.load_causal_lm("someone/deep", cache_dir=tmp_path / "cache")
    assert hub.fetched("config.json") and not hub.fetched("model.safetensors")  # config.json first
    assert not list((tmp_path / "cache").glob("models--*"))  # what was downloaded of it is removed


def test_doctests_of_gpt2():
    import doctest

    from attn_models import limits

    for module in (gpt2, limits):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
