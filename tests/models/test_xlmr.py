"""XLM-RoBERTa (the zh and ko default's family) against Hugging Face transformers' XLMRobertaModel + PyTorch in
float64 (tests/models/make_xlmr_reference.py made reference_xlmr.npz; neither torch nor transformers is needed
here): the tokens of Chinese, Korean and English sentences, RoBERTa's positions past the padding id, every attention
and hidden state of a padded batch, the mean-pooled sentence embeddings; hostile configs; the memory-mapped word
embedding.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import run
from attn_models import MODEL_LIMITS, bert

from .. import tiny_bert, tiny_xlmr

REFERENCE = np.load(Path(__file__).with_name("reference_xlmr.npz"))
TOL = 1e-9  # the brief's bound; the differences are about 1e-15 (asserted below too)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tiny_xlmr.build(tmp_path_factory.mktemp("xlmr") / "xlmr")
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE["sha256"]), "tests/tiny_xlmr.py changed: rerun make_xlmr_reference.py"
    return folder


@pytest.fixture(scope="module")
def xlmr(folder) -> attn_models.Model:
    return attn_models.load(str(folder))


def n_seq() -> int:
    return REFERENCE["ids"].shape[1]


# ---- tokens and positions ----------------------------------------------------------------------------------------


def test_the_config_is_read_as_roberta(xlmr):
    cfg = xlmr.config
    assert (cfg.family, cfg.pad_id, cfg.position_offset, cfg.type_vocab_size) == ("roberta", 1, 2, 1)
    assert cfg.max_tokens == 40 and cfg.specials == ("<s>", "</s>", "<pad>")  # 42 positions, 2 before the first


def test_the_tokens_are_transformers_tokenizers(xlmr):
    mask = REFERENCE["mask"]
    assert (mask.sum(1) < n_seq()).sum() == len(tiny_xlmr.SENTENCES) - 1  # all but the longest are padded
    for text, ids, tokens in zip(tiny_xlmr.SENTENCES, REFERENCE["ids"], REFERENCE["tokens"], strict=True):
        enc = xlmr.encode(text, pad_to=n_seq())
        assert enc.ids.tolist() == ids.tolist()
        assert list(enc.tokens) == tokens.tolist()
        assert enc.type_ids.tolist() == [0] * n_seq()
        assert enc.is_pad.tolist() == (ids == tiny_xlmr.PAD_ID).tolist()
    # real pieces, not characters one by one nor <unk>: the Chinese and Korean words are in the vocabulary
    assert xlmr.tokenize("注意力很重要") == ["<s>", "▁注意", "力", "很", "重要", "</s>"]
    assert xlmr.tokenize("어텐션은 핵심입니다") == ["<s>", "▁어텐션", "은", "▁핵심", "입니다", "</s>"]
    assert xlmr.tokenize("我喜欢猫!")[4] == "<unk>"  # "!" is not in the vocabulary: shown as what the model reads


def test_positions_are_robertas_past_the_padding_id(xlmr):
    for ids, positions in zip(REFERENCE["ids"], REFERENCE["positions"], strict=True):
        assert xlmr.positions(ids).tolist() == positions.tolist()
    # written out: real tokens 2, 3, …; padding 1
    assert xlmr.positions(np.array([0, 5, 2, 1, 1])).tolist() == [2, 3, 4, 1, 1]


# ---- the forward pass --------------------------------------------------------------------------------------------


def test_every_attention_and_hidden_state_equals_transformers(xlmr):
    worst = 0.0
    for i, text in enumerate(tiny_xlmr.SENTENCES):
        out = xlmr.forward(text, pad_to=n_seq())
        assert out.attentions.dtype == np.float64 and out.attentions.shape == (2, 4, n_seq(), n_seq())
        np.testing.assert_allclose(out.attentions, REFERENCE["attentions"][i], rtol=0, atol=TOL)
        np.testing.assert_allclose(out.hidden_states, REFERENCE["hidden"][i], rtol=0, atol=TOL)
        np.testing.assert_allclose(out.hidden_states[-1], REFERENCE["last"][i], rtol=0, atol=TOL)
        worst = max(worst, float(np.abs(out.hidden_states - REFERENCE["hidden"][i]).max()),
                    float(np.abs(out.attentions - REFERENCE["attentions"][i]).max()))
    assert worst < 1e-13  # float64 both sides: rounding only


def test_an_unpadded_sentence_equals_its_rows_in_the_padded_batch(xlmr):
    for i, text in enumerate(tiny_xlmr.SENTENCES):
        real = REFERENCE["mask"][i] == 1
        out = xlmr.forward(text)
        assert out.attentions.shape[-1] == real.sum()
        np.testing.assert_allclose(out.hidden_states[-1], REFERENCE["last"][i][real], rtol=0, atol=TOL)
        np.testing.assert_allclose(out.attentions, REFERENCE["attentions"][i][:, :, real][..., real], rtol=0,
                                   atol=TOL)


def test_sentence_embeddings_and_similarities_equal_mean_pooling(xlmr):
    emb = xlmr.embed_sentences(tiny_xlmr.SENTENCES)
    assert emb.shape == (4, 16)
    np.testing.assert_allclose(emb, REFERENCE["embeddings"], rtol=0, atol=TOL)
    np.testing.assert_allclose(attn_models.cosine_similarities(emb), REFERENCE["similarities"], rtol=0, atol=TOL)
    # pool() over the padded batch's real rows, as sentence-transformers' mean pooling takes them
    for i in range(4):
        pooled = attn_models.pool(REFERENCE["last"][i], REFERENCE["mask"][i] == 0)
        np.testing.assert_allclose(pooled, REFERENCE["embeddings"][i], rtol=0, atol=TOL)


def test_layer_config_runs_to_forwards_attentions_bit_for_bit(xlmr):
    text = tiny_xlmr.SENTENCES[1]
    for pad_to in (None, n_seq() + 2):
        out = xlmr.forward(text, pad_to=pad_to)
        for layer in range(xlmr.n_layers):
            cfg = xlmr.layer_config(text, layer, pad_to=pad_to)
            assert cfg.tokens[0] == "<s>" and cfg.d_model == 17
            for h, head in enumerate(run(cfg).heads):
                assert np.array_equal(head.weights, out.attentions[layer, h])


def test_the_roberta_prefix_is_read_as_no_prefix(tmp_path):
    model = attn_models.load(str(tiny_xlmr.build(tmp_path / "p", prefix="roberta.")))
    out = model.forward(tiny_xlmr.SENTENCES[3])
    np.testing.assert_allclose(out.hidden_states[-1], REFERENCE["prefixed_last"][3], rtol=0, atol=TOL)


def test_a_sentence_longer_than_the_positions_names_the_tokens_and_positions(xlmr):
    with pytest.raises(attn_models.ModelError) as err:
        xlmr.forward("注意" * 45)  # ▁注意, then 44 × 注意
    assert str(err.value) == ("The sentence is 47 tokens with <s> and </s>; at most 40 fit (the cap of 256 (n_seq), "
                              "and the model's 42 positions). Shorten it.")


# ---- the memory map ----------------------------------------------------------------------------------------------


def test_the_word_embedding_is_memory_mapped_not_copied(xlmr, folder):
    from safetensors.numpy import load_file

    word = xlmr.embeddings.word
    assert isinstance(word, np.memmap) and word.dtype == np.float32 and word.mode == "r"
    assert Path(word.filename) == (folder / "model.safetensors").resolve()
    assert not word.flags.owndata and not word.flags.writeable
    np.testing.assert_array_equal(np.asarray(word), load_file(str(folder / "model.safetensors"))[bert.WORD])
    # a sentence's rows become float64 exactly
    ids = xlmr.encode(tiny_xlmr.SENTENCES[0]).ids
    assert np.array_equal(np.asarray(word[ids], dtype=np.float64), np.asarray(word)[ids].astype(np.float64))
    # counted as the file's pages, not private memory: the encoder's float64 weights alone
    cfg = xlmr.config
    assert attn_models.resident_bytes(cfg, word_mapped=False) - attn_models.resident_bytes(cfg) == 41 * 16 * 4


def test_the_multilingual_minilm_fits_the_caps():
    real = {**tiny_xlmr.CONFIG, "num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 384,
            "intermediate_size": 1536, "vocab_size": 250002, "max_position_embeddings": 514}
    cfg = attn_models.parse_config(real)
    assert cfg.max_tokens == 256 and cfg.family == "roberta"
    size = attn_models.resident_bytes(cfg)  # 12 layers and the small embeddings in float64
    assert 170e6 < size < MODEL_LIMITS.resident_bytes
    file_bytes = 250002 * 384 * 4 + (514 + 1 + 2) * 384 * 4 + 12 * (4 * 385 * 384 + 2 * 1536 * 384 + 1536 + 5 * 384) * 4
    assert file_bytes < MODEL_LIMITS.weights_bytes  # its model.safetensors (470.6 MB with its pooler)


def test_a_nan_in_the_mapped_word_embedding_is_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = tiny_xlmr.build(tmp_path / "x")
    tensors = load_file(str(folder / "model.safetensors"))
    tensors[bert.WORD][37, 5] = np.nan
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(attn_models.ModelError, match="embeddings.word_embeddings.weight holds a value that is not"):
        attn_models.load(str(folder))


# ---- hostile configs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "message"), [
    ({"pad_token_id": 41}, "config.json: pad_token_id 41 must be a whole number from 0 to 40"),
    ({"pad_token_id": 41, "max_position_embeddings": 8}, "config.json: pad_token_id 41 must be a whole number "
                                                         "from 0 to 6"),
    ({"pad_token_id": -1}, "config.json: pad_token_id -1 must be a whole number"),
    ({"pad_token_id": True}, "config.json: pad_token_id True must be a whole number"),
    ({"pad_token_id": "1"}, "config.json: pad_token_id 1 must be a whole number"),
    ({"max_position_embeddings": 2}, "config.json: pad_token_id 1 must be a whole number from 0 to 0"),
    ({"vocab_size": 300_000}, "config.json: vocab_size 300000 is over the cap of 262144"),
    ({"max_position_embeddings": 10**6}, "config.json: max_position_embeddings 1000000 is over the cap of 8192"),
    ({"type_vocab_size": 17}, "config.json: type_vocab_size 17 is over the cap of 16"),
    ({"num_hidden_layers": 25}, "config.json: num_hidden_layers 25 is over the cap of 24"),
    ({"num_hidden_layers": 24, "hidden_size": 510, "num_attention_heads": 10, "intermediate_size": 4096},
     "config.json: this model would take"),
    ({"model_type": "gpt2"}, "config.json: model_type 'gpt2' is not BERT-family; this app runs BERT encoders "
                             "(model_type bert, xlm-roberta, roberta)."),
])
def test_a_hostile_config_is_refused_naming_the_field(change, message):
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.parse_config({**tiny_xlmr.CONFIG, **change})
    assert str(err.value).startswith(message)


def test_a_hostile_config_is_refused_before_the_weights_are_read(tmp_path, monkeypatch):
    folder = tiny_xlmr.build(tmp_path / "x")
    (folder / "config.json").write_text(json.dumps({**tiny_xlmr.CONFIG, "vocab_size": 10**9}))
    read = []
    monkeypatch.setattr(bert, "read_header", lambda *a: read.append(a))
    with pytest.raises(attn_models.ModelError, match="^config.json: vocab_size 1000000000 is over the cap"):
        attn_models.load(str(folder))
    assert not read


def test_a_bert_checkpoint_under_roberta_says_so(tmp_path):
    # BERT's weights (two token types) with an XLM-R config of one: the shape is named
    folder = tiny_bert.build(tmp_path / "b", config={**tiny_bert.CONFIG, "model_type": "xlm-roberta",
                                                      "pad_token_id": 0})
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "type_vocab_size": 1}))
    with pytest.raises(attn_models.ModelError, match="token_type_embeddings.weight has shape \\(2, 16\\), config.json "
                                                     "implies \\(1, 16\\)"):
        attn_models.load(str(folder))


def test_roberta_without_the_families_specials_in_its_tokenizer_says_so(tmp_path):
    # a BERT WordPiece tokenizer.json (no <s>) under an XLM-R config: the missing token is named
    folder = tiny_xlmr.build(tmp_path / "x")
    (folder / "tokenizer.json").write_text(tiny_bert.tokenizer_json())
    model = attn_models.load(str(folder))
    with pytest.raises(attn_models.ModelError, match="The tokenizer has no <s> token"):
        model.encode("the cat")
