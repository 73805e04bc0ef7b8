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

import attn_core
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


def by_hand(cfg, theta: float, n_kv: int, window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A layer's attention written out here (not attn_core): Q, K, V = X W; rotate_half RoPE per head; query head h
    reads key/value head h // (H / KV) (transformers' repeat_kv); causal (and window) softmax(q kᵀ / √d_k) v.
    Returns the weights [H, n, n] and the heads' outputs side by side [n, H·d_v]."""
    n, n_heads = cfg.n_seq, cfg.n_heads
    q, k, v = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k, cfg.x @ cfg.w_v
    d = q.shape[1] // n_heads
    inv = 1.0 / theta ** (np.arange(0, d, 2) / d)  # [d/2]
    ang = np.arange(n)[:, None] * np.concatenate([inv, inv])[None]  # [n, d]

    def turn(m):  # [n, d]
        return m * np.cos(ang) + np.concatenate([-m[:, d // 2:], m[:, :d // 2]], axis=1) * np.sin(ang)

    i, j = np.indices((n, n))
    allowed = (j <= i) & ((i - j < window) if window else True)
    weights, outs = [], []
    for h in range(n_heads):
        g = h // (n_heads // n_kv)
        s = turn(q[:, h * d:(h + 1) * d]) @ turn(k[:, g * d:(g + 1) * d]).T / np.sqrt(d)
        s = np.where(allowed, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        weights.append(w)
        outs.append(w @ v[:, g * d:(g + 1) * d])
    return np.stack(weights), np.concatenate(outs, axis=1)


def model_heads(lm, prompt: str, layer: int):
    """The model's own traces of ``layer`` on ``prompt`` (attn_models.intervene.model_traces at the site
    attn_models.llama.attention makes)."""
    from attn_models import intervene
    from attn_models.ops import with_bias_column

    cfg, w = lm.config, lm.weights.blocks[layer].f64()
    ids = lm.encode(prompt).ids
    x1 = with_bias_column(llama.rms_norm(lm.run(ids)[0][layer], w.in_norm, cfg.eps))
    site = intervene.Site(x1, w.w_q, w.w_k, w.w_v, w.w_o, cfg.n_heads, causal=True, by_head=cfg.head_only,
                          rope_base=cfg.rope_theta, n_kv_heads=cfg.n_kv_heads, window=cfg.window)
    return intervene.model_traces(site, cfg.head_only)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_layer_opened_in_the_explorer_is_the_models_attention(models, variant):
    """attn_core.run of the configuration a layer opens as = the model's attention of that layer: its weights bit for
    bit as forward's (and transformers' to 1e-9), its heads' outputs bit for bit as the model's own and within 1e-12
    of the attention written out by hand; the configuration carries RoPE, the grouped K/V, causal and the window."""
    lm = models[variant]
    cfg_m = lm.config
    for i, prompt in enumerate(PROMPTS):
        out = lm.forward(prompt)
        for layer in range(lm.n_layers):
            cfg = lm.layer_config(prompt, layer)
            assert cfg.rope == attn_core.RoPE(cfg_m.rope_theta, "half") and cfg.mask_kind == "causal"
            assert cfg.n_kv_heads == (None if cfg_m.n_kv_heads == cfg_m.n_heads else cfg_m.n_kv_heads)
            assert cfg.w_k.shape == cfg.w_v.shape == (cfg_m.d_model + 1, cfg_m.n_kv_heads * cfg_m.d_head)
            assert cfg.window == cfg_m.window and cfg.n_heads == cfg_m.n_heads
            t = attn_core.run(cfg)
            weights = np.stack([h.weights for h in t.heads])  # [H, n, n]
            assert np.array_equal(weights, out.attentions[layer])
            assert np.abs(weights - REF[f"{variant}_p{i}_attentions"][layer]).max() <= TOL
            own = model_heads(lm, prompt, layer)[0]
            assert np.array_equal(t.concat, own.concat) and np.array_equal(t.output, own.output)
            hand_w, hand_o = by_hand(cfg, cfg_m.rope_theta, cfg_m.n_kv_heads, cfg_m.window)
            assert np.abs(weights - hand_w).max() <= 1e-12 and np.abs(t.concat - hand_o).max() <= 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_opened_layer_that_is_not_edited_runs_back_bit_for_bit(models, variant):
    lm = models[variant]
    for prompt in PROMPTS:
        out = lm.forward(prompt)
        for layer in range(lm.n_layers):
            back = lm.forward(prompt, intervention=Intervention(config=lm.layer_config(prompt, layer)))
            assert np.array_equal(back.logits, out.logits) and np.array_equal(back.attentions, out.attentions)


def with_kv_head_edited(cfg, g: int, added: float = 1.5):
    """``cfg`` with key/value head ``g``'s columns of W_K changed (a few cells, as a learner's edits)."""
    w_k = cfg.w_k.copy()
    d = cfg.d_k
    w_k[[1, 4, 9], g * d] += added
    w_k[3, g * d + 1] -= added
    return replace(cfg, w_k=w_k)


@pytest.mark.parametrize(("variant", "g", "group"), [("llama", 0, [0, 1]), ("llama", 1, [2, 3]),
                                                     ("qwen2", 1, [2, 3]), ("mistral", 0, [0, 1]),
                                                     ("smol", 0, [0, 1, 2, 3])])
def test_an_edit_of_a_shared_key_value_head_reaches_exactly_its_group(models, variant, g, group):
    """W_K of one key/value head edited in the explorer and run back: the query heads that share it change, the
    others' weights stay bit for bit; on another prompt and on the key/value cache too."""
    lm, layer = models[variant], 1
    assert [h for h in range(lm.n_heads) if lm.kv_head(h) == g] == group
    others = [h for h in range(lm.n_heads) if h not in group]
    cfg = with_kv_head_edited(lm.layer_config(PROMPTS[0], layer), g)
    for prompt in PROMPTS[:2]:  # the prompt it was opened on (its own X), then another (that prompt's X)
        out = lm.forward(prompt)
        edited = lm.forward(prompt, intervention=Intervention(config=cfg))
        a, b = edited.attentions[layer], out.attentions[layer]  # [H, n, n]
        assert all(np.abs(a[h] - b[h]).max() > 1e-3 for h in group)
        assert np.array_equal(a[others], b[others])
        assert np.array_equal(edited.attentions[:layer], out.attentions[:layer])
    if variant == "llama":  # as the explorer computes the edited layer
        t = attn_core.run(cfg)
        assert np.array_equal(np.stack([h.weights for h in t.heads]), lm.forward(
            PROMPTS[0], intervention=Intervention(config=cfg)).attentions[layer])
    cached = lm.generate(PROMPTS[0], 4, intervention=Intervention(config=cfg))
    whole = lm.generate(PROMPTS[0], 4, intervention=Intervention(config=cfg), cache=False)
    assert cached.ids.tolist() == whole.ids.tolist()
    worst = max(float(np.abs(x.attention - y.attention).max()) for x, y in zip(cached.steps, whole.steps, strict=True))
    assert worst <= 1e-12


def test_one_head_alone_is_its_query_head_with_its_key_value_head(models, monkeypatch):
    """A layer over attn_core.LIMITS opens one head: n_heads 1, no grouping (n_kv_heads None), W_Q its columns, W_K and
    W_V its key/value head's, W_O its rows, RoPE and causal on. attn_core.run of it is the model's head bit for bit;
    run back unedited, the model's output bit for bit; its W_K edited, that query head alone changes (the configuration
    holds its copy of the shared key/value head and replaces this head only)."""
    monkeypatch.setattr(llama.LlamaConfig, "head_only", property(lambda self: True))
    lm, layer, head = models["llama"], 2, 3
    out = lm.forward(PROMPTS[2])
    cfg = lm.layer_config(PROMPTS[2], layer, head=head)
    w = lm.weights.blocks[layer].f64()
    assert cfg.n_heads == 1 and cfg.n_kv_heads is None and cfg.rope == attn_core.RoPE(10000.0, "half")
    assert cfg.mask_kind == "causal" and cfg.origin["of_heads"] == 4 and cfg.origin["head"] == head
    assert np.array_equal(cfg.w_q, w.w_q[:, 12:16]) and np.array_equal(cfg.w_o, w.w_o[12:16])
    assert np.array_equal(cfg.w_k, w.w_k[:, 4:8]) and np.array_equal(cfg.w_v, w.w_v[:, 4:8])  # key/value head 1
    t = attn_core.run(cfg)
    assert np.array_equal(t.heads[0].weights, out.attentions[layer, head])
    own = model_heads(lm, PROMPTS[2], layer)[head]  # the model, head by head
    assert np.array_equal(t.concat, own.concat) and np.array_equal(t.output, own.output)
    back = lm.forward(PROMPTS[2], intervention=Intervention(config=cfg))
    assert np.array_equal(back.logits, out.logits)
    changed = lm.forward(PROMPTS[2], intervention=Intervention(config=with_kv_head_edited(cfg, 0)))
    a, b = changed.attentions[layer], out.attentions[layer]
    assert np.array_equal(a[[0, 1, 2]], b[[0, 1, 2]]) and np.abs(a[head] - b[head]).max() > 1e-3
    mistral = models["mistral"].layer_config(PROMPTS[3], 0, head=1)
    assert mistral.window == 5 and np.array_equal(attn_core.run(mistral).heads[0].weights,
                                                  models["mistral"].forward(PROMPTS[3]).attentions[0, 1])


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
