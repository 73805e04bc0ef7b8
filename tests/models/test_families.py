"""attn_models.load reads the family config.json names: a BERT-family encoder, a GPT-2 causal language model or a
T5 translator, from a folder or through the Hub (judged before the weights come); another model_type is refused by
name before anything but config.json is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import attn_models
from tests import fake_hub, tiny_bert, tiny_gpt2, tiny_t5


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("families")
    return {"encoder": tiny_bert.build(root / "bert"), "causal": tiny_gpt2.build(root / "gpt2"),
            "translator": tiny_t5.build(root / "t5")}


@pytest.fixture
def fake(monkeypatch):
    with fake_hub.FakeHub() as h:
        fake_hub.use(monkeypatch, h.url)
        yield h


KINDS = {"encoder": attn_models.Model, "causal": attn_models.CausalLM, "translator": attn_models.Translator}


@pytest.mark.parametrize("family", list(KINDS))
def test_load_reads_each_family_from_a_folder(folders, family):
    model = attn_models.load(str(folders[family]))
    assert type(model) is KINDS[family]
    assert attn_models.model_family(folders[family] / "config.json") == family


def test_the_families_loaded_by_load_compute_what_their_own_loaders_do(folders):
    by_load = attn_models.load(str(folders["causal"]))
    own = attn_models.load_causal_lm(str(folders["causal"]))
    prompt = tiny_gpt2.PROMPTS[0]
    assert by_load.forward(prompt).logits.tobytes() == own.forward(prompt).logits.tobytes()
    t5 = attn_models.load(str(folders["translator"]))
    own_t5 = attn_models.load_translator(str(folders["translator"]))
    sentence = tiny_t5.SENTENCES[0]
    np.testing.assert_array_equal(t5.translate(sentence).output_ids, own_t5.translate(sentence).output_ids)


@pytest.mark.parametrize("family", ["causal", "translator"])
def test_a_hub_repo_of_each_family_is_downloaded_and_read(tmp_path, folders, fake, family):
    fake.add_folder(f"someone/{family}", folders[family])
    model = attn_models.load(f"someone/{family}", cache_dir=tmp_path)
    assert type(model) is KINDS[family]
    assert fake.fetched("model.safetensors")


def test_another_model_type_is_refused_before_its_weights_are_downloaded(tmp_path, fake):
    doc = json.dumps({"model_type": "mamba", "num_hidden_layers": 2}).encode()
    fake.add("someone/mamba", {"config.json": doc, "tokenizer.json": b"{}", "model.safetensors": b"x"})
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load("someone/mamba", cache_dir=tmp_path)
    assert str(err.value) == ("config.json: model_type 'mamba' is not one this app runs (bert, roberta, xlm-roberta, "
                              "gpt2, llama, mistral, qwen2, t5).")
    assert fake.fetched("config.json") and not fake.fetched("model.safetensors")
    assert not list(tmp_path.glob("models--*"))


def test_a_gpt2_over_the_caps_is_refused_by_its_own_rules_before_the_weights(tmp_path, folders, fake):
    cfg = json.loads((folders["causal"] / "config.json").read_text()) | {"n_layer": 500}
    fake.add("someone/deep", {"config.json": json.dumps(cfg).encode(), "tokenizer.json": b"{}",
                              "model.safetensors": b"x"})
    with pytest.raises(attn_models.ModelError, match="n_layer 500 is over the cap"):
        attn_models.load("someone/deep", cache_dir=tmp_path)
    assert not fake.fetched("model.safetensors")


FAMILY_OF = {"encoder": "bert", "causal": "gpt2", "translator": "t5"}


@pytest.mark.parametrize("role", list(KINDS))
def test_each_family_satisfies_the_interface(folders, role):
    """What the app asks any loaded model (attn_models.LoadedModel), asked of the tiny checkpoint of each family."""
    model = attn_models.load(str(folders[role]))
    assert isinstance(model, attn_models.LoadedModel) and isinstance(model.config, attn_models.FamilyConfig)
    assert (model.role, model.family, model.name) == (role, FAMILY_OF[role], str(folders[role]))
    assert attn_models.FAMILIES[model.family] == role
    cfg = model.config
    assert min(cfg.n_layers, cfg.n_heads, cfg.d_model) >= 1 and cfg.d_model % cfg.n_heads == 0
    assert model.output_bias(0).shape == (cfg.d_model,)
    with pytest.raises(attn_models.ModelError, match="does not exist"):
        model.output_bias(99)
    text = {"encoder": tiny_bert.SENTENCE, "causal": tiny_gpt2.PROMPTS[0], "translator": tiny_t5.SENTENCES[0]}[role]
    plain, off = model.forward(text), model.forward(text, intervention=attn_models.Intervention(ablate={(0, 1)}))
    attentions = plain.cross_attentions if role == "translator" else plain.attentions  # the heads an ablation names
    assert attentions.shape[:2] == (cfg.n_layers, cfg.n_heads)
    changed = off.cross_attentions if role == "translator" else off.hidden_states
    assert not np.array_equal(changed, plain.cross_attentions if role == "translator" else plain.hidden_states)
    origin = {"encoder": attn_models.Origin("encoder", model.name, 1, 2, text),
              "causal": attn_models.Origin("causal", model.name, 1, 2, text),
              "translator": attn_models.Origin("translator", model.name, 1, 2, text, side="encoder",
                                               prefix=tiny_t5.PREFIX)}[role]
    assert model.config_for(origin).origin["layer"] == 1
    other = attn_models.Origin(next(r for r in KINDS if r != role), model.name, 0, 0, text)
    with pytest.raises(attn_models.KindError):
        model.config_for(other)
