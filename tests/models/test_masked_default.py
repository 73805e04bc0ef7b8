"""The masked-language-model default (issue 36): a BERT that ships vocab.txt and no tokenizer.json (as
gaunernst/bert-mini-uncased, attn_models.MASKED_MODEL) reads as the same BERT with tokenizer.json does, token for
token and probability for probability; it is judged and downloaded from the Hub with vocab.txt in place of
tokenizer.json (a fake Hub on 127.0.0.1: tests/fake_hub.py), and a family that reads tokenizer.json only is refused
before its weights come; the operator names another with ATTN_MASKED_MODEL."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_models import Access, ModelError, tokenizer

from .. import fake_hub, tiny_bert, tiny_gpt2

TEXTS = (*tiny_bert.MASKED, tiny_bert.SENTENCE, tiny_bert.TRICKY, "  The  CAT sat… on ä [MASK]!! ")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("masked")
    return {"json": tiny_bert.write_mlm(root / "json"),
            "vocab": tiny_bert.vocab_only(tiny_bert.write_mlm(root / "vocab"))}


@pytest.fixture(scope="module")
def models(folders) -> dict[str, attn_models.Model]:
    return {kind: attn_models.load(str(folder)) for kind, folder in folders.items()}


@pytest.fixture
def fake(monkeypatch):
    with fake_hub.FakeHub() as h:
        fake_hub.use(monkeypatch, h.url)
        yield h


# ---- vocab.txt reads as tokenizer.json does ----------------------------------------------------------------------


def test_the_folder_has_vocab_txt_and_no_tokenizer_json(folders):
    assert sorted(p.name for p in folders["vocab"].iterdir()) == ["config.json", "model.safetensors", "vocab.txt"]


@pytest.mark.parametrize("text", TEXTS)
def test_the_tokens_are_the_tokenizer_json_ones(models, text):
    by_json, by_vocab = models["json"].encode(text, pad_to=24), models["vocab"].encode(text, pad_to=24)
    assert by_vocab.tokens == by_json.tokens and by_vocab.tokens[0] == "[CLS]"
    np.testing.assert_array_equal(by_vocab.ids, by_json.ids)
    np.testing.assert_array_equal(by_vocab.type_ids, by_json.type_ids)


def test_mask_stays_one_token_and_the_masked_word_probabilities_are_the_same(models):
    for text in tiny_bert.MASKED:
        assert models["vocab"].tokenize(text).count("[MASK]") == text.count("[MASK]")
        np.testing.assert_array_equal(models["vocab"].mask_probs(text), models["json"].mask_probs(text))
        assert [(f.tokens, f.probs.tolist()) for f in models["vocab"].fill_mask(text, top_k=5)] == [
            (f.tokens, f.probs.tolist()) for f in models["json"].fill_mask(text, top_k=5)]


def test_lower_case_comes_from_tokenizer_config_else_from_the_vocabulary(tmp_path):
    assert tokenizer.lowercase({t: i for i, t in enumerate(tiny_bert.VOCAB)})  # its specials' capitals do not count
    assert not tokenizer.lowercase({"[CLS]": 0, "the": 1, "##The": 2})
    cased = tiny_bert.vocab_only(tiny_bert.write_mlm(tmp_path / "cased"), settings={"do_lower_case": False})
    assert attn_models.load(str(cased)).tokenize("The cat")[1:3] == ["[UNK]", "cat"]  # "The" is not in the vocab
    said = tiny_bert.vocab_only(tiny_bert.write_mlm(tmp_path / "said"), settings={"do_lower_case": True,
                                                                                   "model_max_length": 512})
    assert attn_models.load(str(said)).tokenize("The cat")[1:3] == ["the", "cat"]


@pytest.mark.parametrize("vocab, message", [
    (tiny_bert.vocab_txt() + "extra\n", "vocab.txt gives the token 'extra' the id 27; config.json's vocab_size 27 has "
                                        "ids 0 … 26 only."),
    (tiny_bert.vocab_txt().replace("[CLS]\n", "[CLX]\n"), "The tokenizer has no [CLS] token; is it a BERT tokenizer?"),
    ("\udcff", "vocab.txt is not UTF-8 text."),
])
def test_a_vocab_txt_that_does_not_fit_is_refused(tmp_path, vocab, message):
    folder = tiny_bert.vocab_only(tiny_bert.write_mlm(tmp_path / "m"))
    (folder / "vocab.txt").write_bytes(vocab.encode("utf-8", "surrogateescape"))
    with pytest.raises(ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value) == message


def test_a_vocab_txt_over_its_cap_is_never_read_whole(tmp_path):
    folder = tiny_bert.vocab_only(tiny_bert.write_mlm(tmp_path / "m"))
    with open(folder / "vocab.txt", "r+b") as f:
        f.truncate(attn_models.MODEL_LIMITS.tokenizer_bytes + 10)  # sparse
    with pytest.raises(ModelError, match=r"^vocab.txt is 20.0 MB; the cap is 20.0 MB"):
        attn_models.load(str(folder))


def test_a_family_that_reads_tokenizer_json_only_refuses_a_vocab_txt(tmp_path):
    folder = tiny_gpt2.build(tmp_path / "gpt2")
    (folder / "tokenizer.json").rename(folder / "vocab.txt")
    with pytest.raises(ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value) == ("gpt2 has no tokenizer.json; a checkpoint folder needs config.json, tokenizer.json and "
                              "model.safetensors.")


# ---- from the Hub: judged before download, vocab.txt in place of tokenizer.json -----------------------------------


def test_a_repo_with_vocab_txt_is_judged_downloaded_and_read(tmp_path, folders, models, fake):
    fake.add_folder("someone/bert-mini", folders["vocab"])
    plan = attn_models.judge_repo("someone/bert-mini", cache_dir=tmp_path)
    assert sorted(plan.sizes) == ["config.json", "model.safetensors", "vocab.txt"]
    assert plan.to_download(tmp_path) == sum(f.stat().st_size for f in folders["vocab"].iterdir())
    assert not any("/resolve/" in p for _m, p in fake.requests)  # judged from the metadata alone
    got = attn_models.load("someone/bert-mini", cache_dir=tmp_path)
    assert fake.fetched("vocab.txt") and not fake.fetched("tokenizer.json")
    np.testing.assert_array_equal(got.mask_probs(tiny_bert.MASKED[1]), models["json"].mask_probs(tiny_bert.MASKED[1]))
    assert attn_models.repo_cached("someone/bert-mini", tmp_path)
    again = attn_models.load("someone/bert-mini", cache_dir=tmp_path, local_only=True)  # from the cache
    assert again.tokenize(tiny_bert.SENTENCE) == models["json"].tokenize(tiny_bert.SENTENCE)


def test_a_repos_tokenizer_config_comes_with_its_vocab_txt(tmp_path, fake):
    folder = tiny_bert.vocab_only(tiny_bert.write_mlm(tmp_path / "cased"), settings={"do_lower_case": False})
    fake.add_folder("someone/cased", folder)
    assert "tokenizer_config.json" in attn_models.judge_repo("someone/cased", cache_dir=tmp_path / "c").sizes
    model = attn_models.load("someone/cased", cache_dir=tmp_path / "c")
    assert fake.fetched("tokenizer_config.json") and model.tokenize("The cat")[1] == "[UNK]"


def test_a_repo_with_tokenizer_json_reads_it_and_nothing_else(tmp_path, folders, fake):
    both = tiny_bert.write_mlm(tmp_path / "both")
    (both / "vocab.txt").write_text(tiny_bert.vocab_txt())
    fake.add_folder("someone/both", both)
    attn_models.load("someone/both", cache_dir=tmp_path / "c")
    assert fake.fetched("tokenizer.json") and not fake.fetched("vocab.txt")


def test_a_gpt2_repo_with_vocab_txt_only_is_refused_before_its_weights(tmp_path, fake):
    folder = tiny_gpt2.build(tmp_path / "gpt2")
    (folder / "tokenizer.json").rename(folder / "vocab.txt")
    fake.add_folder("someone/gpt", folder)
    with pytest.raises(ModelError) as err:
        attn_models.load("someone/gpt", cache_dir=tmp_path / "c")
    assert str(err.value) == "someone/gpt has no tokenizer.json on the Hugging Face Hub."
    assert fake.fetched("config.json") and not fake.fetched("model.safetensors")
    assert not list((tmp_path / "c").glob("models--*"))  # what was downloaded of it is removed


def test_a_repo_without_any_tokenizer_is_refused_from_its_metadata(tmp_path, folders, fake):
    files = {f.name: f.read_bytes() for f in folders["vocab"].iterdir() if f.name != "vocab.txt"}
    fake.add("someone/none", files)
    with pytest.raises(ModelError) as err:
        attn_models.judge_repo("someone/none", cache_dir=tmp_path)
    assert str(err.value) == "someone/none has no tokenizer.json on the Hugging Face Hub."


def test_a_vocab_txt_over_its_cap_is_refused_from_the_metadata(tmp_path, folders, fake):
    fake.add_folder("someone/huge-vocab", folders["vocab"], claimed={"vocab.txt": 30_000_000})
    with pytest.raises(ModelError, match=r"^vocab.txt is 30.0 MB; the cap is 20.0 MB"):
        attn_models.load("someone/huge-vocab", cache_dir=tmp_path)
    assert not any("/resolve/" in p for _m, p in fake.requests)


# ---- the default and the operator's choice ----------------------------------------------------------------------


def test_the_masked_model_is_a_default_the_operator_may_replace(caplog):
    assert attn_models.MASKED_MODEL == "gaunernst/bert-mini-uncased" in attn_models.access.DEFAULTS
    assert attn_models.masked_model() == attn_models.MASKED_MODEL
    assert attn_models.masked_model({"ATTN_MASKED_MODEL": " me/mlm "}) == "me/mlm"
    access = Access.from_env({"ATTN_MODELS": "default", "ATTN_MASKED_MODEL": "me/mlm"})
    assert {attn_models.MASKED_MODEL, "me/mlm"} <= access.repos and access.is_operators("me/mlm")
    with caplog.at_level(logging.WARNING):
        _, problems = Access.parse({"ATTN_MASKED_MODEL": "a/b..c"})
    assert problems == ["ATTN_MASKED_MODEL='a/b..c' is neither a folder on this machine nor a valid Hugging Face "
                        "repo id: the page that reads it refuses it with a message."]


def test_the_masked_models_config_fits_the_caps():
    """gaunernst/bert-mini-uncased's config.json (BertForMaskedLM, 4 layers × 4 heads, hidden 256), as the Hub has
    it: read by BERT's rules, within every cap, its head tied to the word embedding."""
    config = {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
              "hidden_dropout_prob": 0.1, "hidden_size": 256, "initializer_range": 0.02, "intermediate_size": 1024,
              "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
              "num_attention_heads": 4, "num_hidden_layers": 4, "pad_token_id": 0,
              "position_embedding_type": "absolute", "type_vocab_size": 2, "vocab_size": 30522}
    cfg = attn_models.parse_config(json.loads(json.dumps(config)))
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.max_tokens) == (4, 4, 256, 256)
    assert attn_models.resident_bytes(cfg, mlm=True) < attn_models.MODEL_LIMITS.resident_bytes
