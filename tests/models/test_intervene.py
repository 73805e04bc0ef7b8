"""Interventions on a tiny random BERT (numpy only; transformers' numbers are in test_outputs.py): nothing changed is
the model bit for bit, a rerun from layer L equals the whole run, padding is kept out of a head's mean, an explorer
configuration's X belongs to its sentence and its weights to the model, and every input that cannot run is one
clear ModelError."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import make_config, with_dimensions
from attn_models import Intervention, ModelError

from .. import tiny_bert

OTHER = "A dog was tired."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> attn_models.Model:
    return attn_models.load(str(tiny_bert.build(tmp_path_factory.mktemp("tiny"))))


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> attn_models.Model:
    return attn_models.load(str(tiny_bert.write_mlm(tmp_path_factory.mktemp("mlm"))))


def assert_same(a: attn_models.EncoderOutput, b: attn_models.EncoderOutput) -> None:
    np.testing.assert_array_equal(a.hidden_states, b.hidden_states)
    np.testing.assert_array_equal(a.attentions, b.attentions)


# ---- the model as trained ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("pad_to", [None, 12])
def test_no_intervention_is_the_model_bit_for_bit(tiny, pad_to):
    plain = tiny.forward(tiny_bert.SENTENCE, pad_to)
    assert_same(tiny.forward(tiny_bert.SENTENCE, pad_to, intervention=None), plain)
    assert_same(tiny.forward(tiny_bert.SENTENCE, pad_to, intervention=Intervention.NONE), plain)
    assert Intervention() == Intervention.NONE and Intervention.NONE.is_none


def test_an_intervention_is_hashable_and_takes_any_pairs():
    a, b = Intervention(ablate=[(0, 1), [1, 2]]), Intervention(ablate={(1, 2), (0, 1)})
    assert a == b and hash(a) == hash(b) and a.ablate == frozenset({(0, 1), (1, 2)})
    assert a.layers == (0, 1) and a.heads_in(1) == frozenset({2}) and not a.is_none
    assert Intervention(ablate={(0, 1)}, how="zero") != a


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_a_rerun_from_the_ablated_layer_equals_the_whole_run(tiny, how):
    iv = Intervention(ablate={(1, 2), (1, 0)}, how=how)
    enc = tiny.encode(tiny_bert.SENTENCE)
    whole_h, whole_a = tiny.run(enc, intervention=iv)
    clean_h, _ = tiny.run(enc)
    part_h, part_a = tiny.run(enc, intervention=iv, start=1, hidden=clean_h[1])
    assert part_h.shape == (2, 9, 16) and part_a.shape == (1, 4, 9, 9)
    np.testing.assert_array_equal(part_h, whole_h[1:])
    np.testing.assert_array_equal(part_a, whole_a[1:])
    np.testing.assert_array_equal(tiny.run(enc, intervention=iv, start=1)[0], whole_h[1:])  # hidden computed here
    np.testing.assert_array_equal(whole_h[:2], clean_h[:2])  # layer 0 untouched
    assert np.abs(whole_h[2] - clean_h[2]).max() > 1e-3


def test_switching_off_every_head_leaves_the_output_bias(tiny):
    # all of layer 0's heads zeroed: its attention output is b_O on every token, whatever the sentence
    iv = Intervention(ablate={(0, h) for h in range(4)}, how="zero")
    w = tiny.layers[0]
    for text in (tiny_bert.SENTENCE, OTHER):
        out = tiny.forward(text, intervention=iv)
        x = out.hidden_states[0]
        h = attn_models.layer_norm(w.b_o + x, w.ln1_g, w.ln1_b, 1e-12)
        inner = attn_models.gelu(h @ w.w_ff1 + w.b_ff1)
        np.testing.assert_allclose(out.hidden_states[1],
                                   attn_models.layer_norm(inner @ w.w_ff2 + w.b_ff2 + h, w.ln2_g, w.ln2_b, 1e-12),
                                   rtol=0, atol=1e-13)


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_padding_is_kept_out_of_an_ablation(tiny, how):
    # the real tokens of a padded run equal the unpadded run's: the mean is over the sentence's real tokens only
    iv = Intervention(ablate={(0, 1), (1, 3)}, how=how)
    plain = tiny.forward(tiny_bert.SENTENCE, intervention=iv)
    padded = tiny.forward(tiny_bert.SENTENCE, 14, intervention=iv)
    np.testing.assert_allclose(padded.hidden_states[:, :9], plain.hidden_states, rtol=0, atol=1e-12)


def test_ablate_heads_replaces_real_rows_only():
    concat = np.arange(24.0).reshape(4, 6)  # 3 heads of d_v 2; the last token is a pad
    real = np.array([True, True, True, False])
    out = attn_models.ablate_heads(concat, 3, frozenset({1}), "mean", real)
    np.testing.assert_array_equal(out[:3, 2:4], np.tile(concat[:3, 2:4].mean(axis=0), (3, 1)))
    np.testing.assert_array_equal(np.delete(out, [2, 3], axis=1), np.delete(concat, [2, 3], axis=1))
    np.testing.assert_array_equal(out[3], concat[3])
    zero = attn_models.ablate_heads(concat, 3, frozenset({0, 2}), "zero", real)
    assert (zero[:3, [0, 1, 4, 5]] == 0).all() and (zero[:3, 2:4] == concat[:3, 2:4]).all()


# ---- sentence embeddings -------------------------------------------------------------------------------------------


def test_embeddings_are_the_normalised_mean_of_the_last_hidden_state(tiny):
    emb = tiny.embed_sentences([tiny_bert.SENTENCE, OTHER])
    for row, text in zip(emb, (tiny_bert.SENTENCE, OTHER), strict=True):
        mean = tiny.forward(text).hidden_states[-1].mean(axis=0)
        np.testing.assert_allclose(row, mean / np.linalg.norm(mean), rtol=0, atol=1e-15)
    sims = attn_models.cosine_similarities(emb)
    np.testing.assert_allclose(sims, emb @ emb.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.diag(sims), 1.0, rtol=0, atol=1e-15)
    # a padded sentence pools its real tokens only
    padded = tiny.forward(tiny_bert.SENTENCE, 14)
    assert attn_models.pool(padded.hidden_states[-1], padded.is_pad) == pytest.approx(emb[0], abs=1e-12)


def test_cosine_similarities_of_unnormalised_rows():
    e = np.array([[3.0, 4.0], [4.0, 3.0], [0.0, 0.0]])
    np.testing.assert_allclose(attn_models.cosine_similarities(e), [[1, 0.96, 0], [0.96, 1, 0], [0, 0, 0]],
                               rtol=0, atol=1e-15)


# ---- an explorer configuration run back ---------------------------------------------------------------------------


def test_an_edited_x_runs_back_through_its_own_sentence_only(tiny):
    cfg = tiny.layer_config(tiny_bert.SENTENCE, 1)
    x = cfg.x.copy()
    x[2, 5] += 1.0
    iv = Intervention(config=replace(cfg, x=x))
    emb = tiny.embed_sentences([tiny_bert.SENTENCE, OTHER], intervention=iv)
    plain = tiny.embed_sentences([tiny_bert.SENTENCE, OTHER])
    np.testing.assert_array_equal(emb[1], plain[1])
    assert np.abs(emb[0] - plain[0]).max() > 1e-4
    # the residual is the edited X: layer 1's output differs on token 2 even with the attention left as trained
    out = tiny.forward(tiny_bert.SENTENCE, intervention=iv)
    assert np.abs(out.hidden_states[2] - tiny.forward(tiny_bert.SENTENCE).hidden_states[2])[2].max() > 1e-4


def test_an_edited_weight_reaches_every_sentence_as_if_opened_there(tiny):
    def edit(cfg):
        w_k = cfg.w_k.copy()
        w_k[3] *= -2
        return replace(cfg, w_k=w_k, scale=2.5)

    opened_on_a = Intervention(config=edit(tiny.layer_config(tiny_bert.SENTENCE, 0)))
    opened_on_b = Intervention(config=edit(tiny.layer_config(OTHER, 0)))
    assert_same(tiny.forward(OTHER, intervention=opened_on_a), tiny.forward(OTHER, intervention=opened_on_b))
    assert np.abs(tiny.forward(OTHER, intervention=opened_on_a).attentions[0]
                  - tiny.forward(OTHER).attentions[0]).max() > 1e-3


def test_a_causal_mask_reaches_other_sentences_with_their_padding(tiny):
    iv = Intervention(config=replace(tiny.layer_config(tiny_bert.SENTENCE, 1), mask_kind="causal"))
    out = tiny.forward(OTHER, 10, intervention=iv)  # 7 tokens and 3 pads
    w = out.attentions[1]  # [n_heads, 10, 10]
    assert (np.triu(w, k=1) == 0).all()  # causal
    assert (w[:, :, 7:] == 0).all()  # and nobody attends to a pad
    np.testing.assert_array_equal(out.attentions[0], tiny.forward(OTHER, 10).attentions[0])


def test_ablation_and_a_replaced_layer_together(tiny):
    cfg = tiny.layer_config(tiny_bert.SENTENCE, 1)
    both = tiny.forward(tiny_bert.SENTENCE, intervention=Intervention(ablate={(1, 2)}, config=cfg))
    assert_same(both, tiny.forward(tiny_bert.SENTENCE, intervention=Intervention(ablate={(1, 2)})))


@pytest.mark.parametrize("change, message", [
    (lambda c: replace(c, y=c.x[:3], y_tokens=c.tokens[:3]),
     "The configuration is cross-attention (its queries come from Y); the model's layers attend to their own "
     "sentence. Switch back to self-attention to run it through the model."),
    (lambda c: with_dimensions(c, n_seq=9, d_model=18, d_qk=16, d_v=16),
     "X has 18 columns; the model's layer takes 17 (its 16 features and the bias column). Set d_model back to 17, or "
     "open the layer again."),
    (lambda c: replace(c, w_o=c.w_o[:, :12]),
     "W_O has 12 columns; the model's layer needs 16 (d_model), one per feature the next step adds back. Give W_O 16 "
     "columns, or open the layer again."),
    (lambda c: replace(c, n_heads=2), "The configuration has 2 heads; the model's layers have 4 (every layer's "
                                      "attention is stored head by head). Set the heads back to 4."),
    (lambda c: with_dimensions(c, n_seq=10, d_model=17, d_qk=16, d_v=16),
     "X has 10 rows; the sentence has 9 tokens, one row each. Set n_seq back to 9, or open the layer again."),
])
def test_a_configuration_that_cannot_run_back_says_why(tiny, change, message):
    iv = Intervention(config=change(tiny.layer_config(tiny_bert.SENTENCE, 1)))
    with pytest.raises(ModelError) as err:
        tiny.forward(tiny_bert.SENTENCE, intervention=iv)
    assert str(err.value) == message


def test_a_configuration_without_an_origin_needs_its_layer_and_fits_every_sentence(tiny):
    cfg = tiny.layer_config(tiny_bert.SENTENCE, 1)
    bare = make_config(cfg.tokens, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=4)
    with pytest.raises(ModelError, match="needs both the layer and its configuration"):
        Intervention(config=bare)
    assert_same(tiny.forward(tiny_bert.SENTENCE, intervention=Intervention(layer=1, config=bare)),
                tiny.forward(tiny_bert.SENTENCE))
    with pytest.raises(ModelError, match="^X has 9 rows; the sentence has 7 tokens"):
        tiny.forward(OTHER, intervention=Intervention(layer=1, config=bare))


# ---- refusals -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"ablate": [(0,)]}, "Heads to switch off are (layer, head) pairs of whole numbers, got [(0,)]."),
    ({"ablate": [(0, 1.5)]}, "Heads to switch off are (layer, head) pairs of whole numbers, got [(0, 1.5)]."),
    ({"ablate": 3}, "Heads to switch off are (layer, head) pairs of whole numbers, got 3."),
    ({"how": "half"}, "A head is switched off by mean or zero, not 'half'."),
    ({"layer": 1}, "A layer to replace needs both the layer and its configuration (the explorer's)."),
])
def test_a_malformed_intervention_is_refused(kwargs, message):
    with pytest.raises(ModelError) as err:
        Intervention(**kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize("iv, message", [
    (Intervention(ablate={(2, 0)}), "Layer 2 does not exist: the model has layers 0 … 1."),
    (Intervention(ablate={(1, 4)}), "Head 4 of layer 1 does not exist: each layer has heads 0 … 3."),
])
def test_a_head_not_in_the_model_is_refused(tiny, iv, message):
    with pytest.raises(ModelError) as err:
        tiny.forward(tiny_bert.SENTENCE, intervention=iv)
    assert str(err.value) == message
    with pytest.raises(ModelError):
        tiny.embed_sentences([tiny_bert.SENTENCE], intervention=iv)


def test_fill_mask_refusals(tiny, masked):
    assert not tiny.has_mlm and masked.has_mlm
    with pytest.raises(ModelError) as err:
        tiny.fill_mask("The [MASK] sat.")
    assert str(err.value).endswith("has no masked-language-model head (a BertForMaskedLM's cls.predictions weights): "
                                   "it cannot fill in a [MASK]. Load a BERT masked-LM checkpoint.")
    with pytest.raises(ModelError, match=r"^The sentence has no \[MASK\]: write \[MASK\] where"):
        masked.fill_mask("The cat sat.")
    for k in (0, 28, 2.0, True):
        with pytest.raises(ModelError, match="^top_k must be a whole number from 1 to 27, got"):
            masked.fill_mask(tiny_bert.MASKED[0], top_k=k)
    assert len(masked.fill_mask(tiny_bert.MASKED[0], top_k=27)[0].ids) == 27


def test_effects_refusals(tiny, masked):
    with pytest.raises(ModelError, match=r"^The pair \(0, 2\) names a sentence that is not among the 2 given."):
        tiny.similarity_effects([tiny_bert.SENTENCE, OTHER], pair=(0, 2))
    with pytest.raises(ModelError, match="^Layer 3 does not exist"):
        tiny.similarity_effects([tiny_bert.SENTENCE, OTHER], layers=[3])
    with pytest.raises(ModelError, match="^Layer '1' does not exist"):
        tiny.similarity_effects([tiny_bert.SENTENCE, OTHER], layers=["1"])
    with pytest.raises(ModelError, match="^A head is switched off by mean or zero, not 'half'."):
        tiny.similarity_effects([tiny_bert.SENTENCE, OTHER], how="half")
    with pytest.raises(ModelError, match="^Give a list of sentences"):
        tiny.embed_sentences(tiny_bert.SENTENCE)
    with pytest.raises(ModelError, match=r"^Token id 27 is not in the vocabulary \(ids 0 … 26\)."):
        masked.mask_effects(tiny_bert.MASKED[0], 27)
    with pytest.raises(ModelError, match=r"^The sentence has 1 \[MASK\] tokens; there is no number 1"):
        masked.mask_effects(tiny_bert.MASKED[0], 3, mask=1)
    with pytest.raises(ModelError, match="^A run starts at a layer 0 … 2, got 3."):
        tiny.run(tiny.encode(OTHER), start=3)


def test_the_effects_of_a_layer_are_its_heads_one_by_one(tiny):
    texts = [tiny_bert.SENTENCE, OTHER]
    effects = tiny.similarity_effects(texts, layers=[1, 0], how="zero")
    assert effects.shape == (2, 4)
    for r, layer in enumerate((1, 0)):
        for h in range(4):
            emb = tiny.embed_sentences(texts, intervention=Intervention(ablate={(layer, h)}, how="zero"))
            assert effects[r, h] == pytest.approx(float(emb[0] @ emb[1]), abs=1e-14)


def test_the_mask_token_stays_whole_in_the_tiny_tokenizer(tiny):
    assert tiny.tokenize("The [MASK] sat.") == ["[CLS]", "the", "[MASK]", "sat", ".", "[SEP]"]
    assert Path(tiny.name).is_dir()
