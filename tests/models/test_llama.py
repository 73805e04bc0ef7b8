"""attn_models.llama against transformers' LlamaForCausalLM, Qwen2ForCausalLM and MistralForCausalLM in float64
(tests/models/reference_llama.npz, made by make_llama_reference.py on tests/tiny_llama.py's checkpoints): logits,
attentions, hidden states, greedy generation, temperature, heads switched off, an edited W_Q run back; writing on the
key/value cache against the whole text; bfloat16 kept as its bits; hostile checkpoints from a folder and from a fake
Hub. No torch here."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_models import Intervention, ModelError, llama, reader

from .. import fake_hub, tiny_llama
from .make_llama_reference import ABLATIONS, EDIT_LAYER, N_NEW, TEMPERATURE, edits

REF = np.load(Path(__file__).with_name("reference_llama.npz"))
PROMPTS = tiny_llama.PROMPTS
VARIANTS = list(tiny_llama.VARIANTS)
TOL = 1e-9


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, llama.LlamaLM]:
    root = tmp_path_factory.mktemp("llama")
    return {v: attn_models.load(str(tiny_llama.build(root / v, v))) for v in VARIANTS}


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_forward_equals_transformers(models, variant, i):
    lm, key = models[variant], f"{variant}_p{i}_"
    out = lm.forward(PROMPTS[i])
    assert out.ids.tolist() == REF[key + "ids"].tolist()
    assert np.abs(out.logits - REF[key + "logits"]).max() <= TOL
    assert np.abs(out.attentions - REF[key + "attentions"]).max() <= TOL
    assert np.abs(out.hidden_states - REF[key + "hidden"]).max() <= TOL
    assert np.all(np.triu(out.attentions, 1) == 0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_generation_and_temperature_give_transformers_numbers(models, variant):
    lm = models[variant]
    for i, prompt in enumerate(PROMPTS):
        key = f"{variant}_p{i}_"
        assert lm.generate(prompt, N_NEW).ids.tolist() == REF[key + "greedy"].tolist()
        want = REF[key + "probs_t07"]
        assert np.abs(lm.probs(prompt, temperature=TEMPERATURE) - want).max() <= TOL


def test_the_mistral_window_lets_each_query_see_five_tokens(models):
    out = models["mistral"].forward(PROMPTS[3])
    assert out.attentions.shape[-1] == 9
    assert ((out.attentions[:, :, 8] > 0).sum(-1) == 5).all() and (out.attentions[:, :, 8, :4] == 0).all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_writing_on_the_cache_equals_the_whole_text(models, variant):
    lm = models[variant]
    cached, whole = lm.generate(PROMPTS[3], 6), lm.generate(PROMPTS[3], 6, cache=False)
    assert cached.ids.tolist() == whole.ids.tolist()
    worst = max(float(np.abs(a.attention - b.attention).max()) for a, b in zip(cached.steps, whole.steps, strict=True))
    worst = max(worst, *(abs(a.prob - b.prob) for a, b in zip(cached.steps, whole.steps, strict=True)))
    assert worst <= 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ABLATIONS)
def test_heads_switched_off_equal_transformers_hook(models, variant, name):
    pairs, how = ABLATIONS[name]
    for i, prompt in enumerate(PROMPTS):
        out = models[variant].forward(prompt, intervention=Intervention(ablate=pairs, how=how))
        ref = REF[f"{variant}_p{i}_ablate_{name}_logits"]
        assert np.abs(out.logits - ref).max() <= TOL
        assert np.abs(out.logits - REF[f"{variant}_p{i}_logits"]).max() > 1e-6


def test_heads_off_by_zeros_on_the_cache_equal_the_whole_text(models):
    lm, iv = models["smol"], Intervention(ablate={(0, 1), (2, 3)}, how="zero")
    a, b = lm.generate(PROMPTS[0], 5, intervention=iv), lm.generate(PROMPTS[0], 5, intervention=iv, cache=False)
    assert a.ids.tolist() == b.ids.tolist() and abs(a.steps[-1].prob - b.steps[-1].prob) <= 1e-12


def edited(cfg, variant: str):
    w_q = cfg.w_q.copy()
    for row, col, added in edits(variant):
        w_q[row, col] += added
    return replace(cfg, w_q=w_q)


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_edited_layer_runs_back_as_transformers_with_the_edit(models, variant):
    lm = models[variant]
    for i, prompt in enumerate(PROMPTS):
        cfg = lm.layer_config(prompt, EDIT_LAYER)
        assert cfg.origin["family"] == lm.family and cfg.n_heads == lm.n_heads and cfg.mask_kind == "causal"
        assert np.abs(lm.forward(prompt, intervention=Intervention(config=cfg)).logits
                      - REF[f"{variant}_p{i}_logits"]).max() <= 1e-12
        out = lm.forward(prompt, intervention=Intervention(config=edited(cfg, variant)))
        assert np.abs(out.logits - REF[f"{variant}_p{i}_edited_logits"]).max() <= TOL
    # opened on one prompt, its weights meet another's X, on the cache and not
    cfg = edited(lm.layer_config(PROMPTS[0], EDIT_LAYER), variant)
    out = lm.forward(PROMPTS[1], intervention=Intervention(config=cfg))
    assert np.abs(out.logits - REF[f"{variant}_p1_edited_logits"]).max() <= TOL
    a = lm.generate(PROMPTS[0], 4, intervention=Intervention(config=cfg))
    b = lm.generate(PROMPTS[0], 4, intervention=Intervention(config=cfg), cache=False)
    assert a.ids.tolist() == b.ids.tolist() and abs(a.steps[-1].prob - b.steps[-1].prob) <= 1e-12
    assert abs(a.steps[0].prob - softmax(REF[f"{variant}_p0_edited_logits"][-1])[a.steps[0].id]) <= TOL


def test_one_head_opened_alone_runs_back(models, monkeypatch):
    monkeypatch.setattr(llama.LlamaConfig, "head_only", property(lambda self: True))
    lm = models["smol"]
    out = lm.forward(PROMPTS[0])
    assert np.abs(out.logits - REF["smol_p0_logits"]).max() <= TOL  # head by head: still exact
    cfg = lm.layer_config(PROMPTS[0], 1, head=2)
    assert cfg.n_heads == 1 and cfg.w_q.shape == (17, 6) and cfg.w_k.shape == (17, 6) and cfg.origin["of_heads"] == 4
    assert np.abs(lm.forward(PROMPTS[0], intervention=Intervention(config=cfg)).logits - out.logits).max() <= 1e-12
    w_q = cfg.w_q.copy()
    w_q[3, 1] += 3.0
    changed = lm.forward(PROMPTS[0], intervention=Intervention(config=replace(cfg, w_q=w_q)))
    assert np.array_equal(changed.attentions[1, [0, 1, 3]], out.attentions[1, [0, 1, 3]])
    assert not np.allclose(changed.attentions[1, 2], out.attentions[1, 2])


def test_heads_report_the_key_value_head_they_share(models):
    assert [models["llama"].kv_head(h) for h in range(4)] == [0, 0, 1, 1]
    assert [models["smol"].kv_head(h) for h in range(4)] == [0, 0, 0, 0] and models["smol"].n_kv_heads == 1
    cfg = models["llama"].layer_config(PROMPTS[0], 0)
    w = models["llama"].weights.blocks[0]
    assert cfg.n_kv_heads == 2 and cfg.kv_heads == 2 and cfg.w_k.shape == cfg.w_v.shape == (17, 8)  # grouped
    assert np.array_equal(cfg.w_k, w.w_k) and np.array_equal(cfg.w_v, w.w_v)  # the key/value heads themselves


def test_bfloat16_stays_as_its_bits_and_the_memory_counts_it(models):
    smol, lm = models["smol"], models["llama"]
    assert smol.weights.embed.dtype == reader.BF16 and smol.weights.lm_head is smol.weights.embed
    assert smol.weights.nbytes == llama.llama_resident_bytes(smol.config, 2)
    assert lm.weights.embed.dtype == np.float32 and lm.weights.nbytes == llama.llama_resident_bytes(lm.config, 4)
    assert attn_models.llama_resident_bytes(llama.parse_llama_config(smol_config())) == 269_122_176


def test_bfloat16_is_widened_to_float32_for_the_other_families(tmp_path):
    t = {"a": tiny_llama.to_bf16_values(np.array([[1.5, -2.25], [3e38, 1e-30]], np.float32))}
    tiny_llama.save(t, tmp_path / "m.safetensors", "BF16")
    header = reader.read_header(tmp_path / "m.safetensors")
    reader.check_tensors(header, {"a": (2, 2)}, "no {name}")
    with reader.tensors(header) as get:
        assert get("a").dtype == np.float32 and np.array_equal(get("a"), t["a"])
    assert header.itemsize("a") == 4 and header.itemsize("a", keep_bf16=True) == 2


def smol_config(**change) -> dict:
    """HuggingFaceTB/SmolLM2-135M's config.json (its published values; not downloaded here)."""
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 576,
            "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "intermediate_size": 1536,
            "hidden_act": "silu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 100000,
            "rope_scaling": None, "tie_word_embeddings": True, "vocab_size": 49152, "bos_token_id": 0,
            "eos_token_id": 0, "torch_dtype": "bfloat16", **change}


def test_smollm2_135m_fits_the_caps():
    cfg = llama.parse_llama_config(smol_config())
    assert cfg.head_only and cfg.n_layers == 30 and cfg.d_k == 64 and cfg.eos_ids == (0,)
    with pytest.raises(ModelError, match="this model would take 538 MB of memory once loaded; the cap is 340 MB"):
        llama.check_llama_caps(cfg, itemsize=4)  # its float32 copy would not


def change_config(folder: Path, **change) -> Path:
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **change}))
    return folder


HOSTILE = [
    ({"num_hidden_layers": 33}, "config.json: num_hidden_layers 33 is over the cap of 32 (attn_models.MODEL_LIMITS)."),
    ({"intermediate_size": 5000}, "config.json: intermediate_size 5000 is over the cap of 4096"),
    ({"num_key_value_heads": 3}, "config.json: num_key_value_heads 3 does not divide num_attention_heads 4"),
    ({"head_dim": 5}, "config.json: head_dim 5 is odd; RoPE turns a head's features in pairs."),
    ({"rope_theta": 1e300}, "config.json: rope_theta must be a number from 1 to 1e+09, got 1e+300."),
    ({"rope_theta": float("nan")}, "config.json: rope_theta must be a number from 1 to 1e+09, got nan."),
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}},
     "config.json: rope_scaling has rope_type 'llama3': only the default RoPE (no scaling) is run here."),
    ({"hidden_act": "gelu"}, "config.json: hidden_act 'gelu': only SiLU"),
    ({"mlp_bias": True}, "config.json: mlp_bias is true; this variant is not run here."),
    ({"model_type": "qwen2", "use_sliding_window": True}, "config.json: use_sliding_window is true"),
    ({"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 2}, "num_attention_heads 32 is over the cap"),
    ({"hidden_size": 1024, "head_dim": 4}, "hidden_size 1024 + 1 (the bias column) = 1025 columns of X is over"),
    ({"num_hidden_layers": 30, "hidden_size": 576, "num_attention_heads": 9, "num_key_value_heads": 3,
      "intermediate_size": 1536, "vocab_size": 49152},
     "model.safetensors: this model would take 651 MB of memory once loaded"),  # float32, untied: the header says
]


@pytest.mark.parametrize("change, message", HOSTILE[:-1])
def test_a_hostile_config_is_refused_naming_the_field(tmp_path, change, message):
    folder = change_config(tiny_llama.build(tmp_path / "m"), **change)
    with pytest.raises(ModelError) as err:
        attn_models.load(str(folder))
    assert message in str(err.value)


def test_the_memory_cap_counts_the_stored_dtype(tmp_path):
    """SmolLM2-135M's shape stored as float32 (per its header) is over the cap; its config alone (bfloat16) is not."""
    change, message = HOSTILE[-1]
    folder = tiny_llama.build(tmp_path / "m")
    big = llama.parse_llama_config({**tiny_llama.config(301), **change, "vocab_size": 49152})
    shapes = llama.llama_tensors(big)
    header = {k: {"dtype": "F32", "shape": list(s), "data_offsets": [0, 0]} for k, s in shapes.items()}
    offset = 0
    for entry in header.values():
        size = int(np.prod(entry["shape"])) * 4
        entry["data_offsets"], offset = [offset, offset + size], offset + size
    text = json.dumps(header).encode()
    with open(folder / "model.safetensors", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        f.truncate(8 + len(text) + offset)  # a sparse file: its header is what is judged
    with pytest.raises(ModelError, match=message):
        llama.read_llama_header(folder / "model.safetensors", big)


def tensors(variant: str = "llama", **change: np.ndarray | None) -> dict[str, np.ndarray]:
    t = tiny_llama.weights(tiny_llama.config(tiny_llama.tokenizer().get_vocab_size(), variant))
    for name, value in change.items():
        name = name.replace("__", ".")
        if value is None:
            del t[name]
        else:
            t[name] = value
    return t


@pytest.mark.parametrize("variant, t, message", [
    ("llama", tensors(model__layers__1__mlp__up_proj__weight=None),
     "model.safetensors has no tensor model.layers.1.mlp.up_proj.weight; is it a Llama-family checkpoint?"),
    ("llama", tensors(model__layers__0__self_attn__k_proj__weight=np.zeros((16, 16), np.float32)),
     "model.safetensors: model.layers.0.self_attn.k_proj.weight has shape (16, 16), config.json implies (8, 16)."),
    ("qwen2", tensors("qwen2", model__layers__2__self_attn__v_proj__bias=None),
     "model.safetensors has no tensor model.layers.2.self_attn.v_proj.bias"),
    ("smol", tensors("smol", model__norm__weight=np.full(16, np.inf, np.float32)),
     "model.safetensors: model.norm.weight holds a value that is not a finite number"),
])
def test_a_hostile_weights_file_is_refused_naming_the_tensor(tmp_path, variant, t, message):
    with pytest.raises(ModelError) as err:
        attn_models.load(str(tiny_llama.build(tmp_path / "m", variant, tensors=t)))
    assert message in str(err.value)


@pytest.fixture
def hub(monkeypatch):
    with fake_hub.FakeHub() as h:
        fake_hub.use(monkeypatch, h.url)
        yield h


def test_a_hub_repo_is_judged_before_its_weights_and_read(tmp_path, hub, models):
    hub.add_folder("someone/tiny-smol", tiny_llama.build(tmp_path / "smol", "smol"))
    got = attn_models.load("someone/tiny-smol", cache_dir=tmp_path / "c")
    assert type(got) is attn_models.LlamaLM and got.role == "causal"
    assert np.array_equal(got.forward(PROMPTS[1]).logits, models["smol"].forward(PROMPTS[1]).logits)
    for name, change, message in [("deep", {"num_hidden_layers": 33}, "num_hidden_layers 33 is over the cap"),
                                  ("gqa", {"num_key_value_heads": 3}, "num_key_value_heads 3 does not divide"),
                                  ("rope", {"rope_theta": 1e300}, "rope_theta must be a number from 1 to")]:
        hub.add_folder(f"someone/{name}", change_config(tiny_llama.build(tmp_path / name), **change))
        with pytest.raises(ModelError, match=message):
            attn_models.load(f"someone/{name}", cache_dir=tmp_path / name / "cache")
        assert not list((tmp_path / name / "cache").glob("models--*"))  # what was downloaded of it is removed
    assert hub.fetched("config.json")


def test_a_hub_repo_over_the_file_cap_is_never_requested(tmp_path, hub):
    hub.add_folder("someone/huge", tiny_llama.build(tmp_path / "m"), claimed={"model.safetensors": 700_000_000})
    with pytest.raises(ModelError, match="model.safetensors is 700.0 MB"):
        attn_models.load("someone/huge", cache_dir=tmp_path / "c")
    assert not hub.fetched("model.safetensors")


def test_doctests_of_llama():
    import doctest

    from attn_models import causal, ops, pretrained

    for module in (llama, causal, ops, pretrained, reader):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
