"""The key/value cache (attn_models.kv, issue 37) against the whole text rerun at every step, on the tiny checkpoints:
every step's logits and attention rows within 1e-12, with no intervention and with every intervention the cache takes
(heads switched off to zeros, an explorer configuration's weights, edited or not, opened on the prompt or elsewhere;
T5's cross-attention heads switched off by their mean over the source, or replaced); the interventions it cannot
keep exact (a GPT-2 head switched off by its mean over the text, a configuration without a mask) fall back to the
whole text, bit for bit. transformers' own numbers: tests/models/test_gpt2.py and test_t5.py run the cached path
against reference_gpt2.npz and reference_t5.npz (greedy tokens, first-step probabilities)."""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_models import Intervention, causal, gpt2, kv, t5
from attn_models.intervene import cacheable

from .. import tiny_gpt2, tiny_t5
from . import make_t5_reference as t5_cases
from .make_gpt2_reference import EDIT_LAYER, EDITS

REF_GPT2 = np.load(Path(__file__).with_name("reference_gpt2.npz"))
PROMPTS = tiny_gpt2.PROMPTS
TOL = 1e-12
N_NEW = 8


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> gpt2.CausalLM:
    return attn_models.load_causal_lm(str(tiny_gpt2.build(tmp_path_factory.mktemp("gpt2") / "tiny")))


@pytest.fixture(scope="module", params=list(t5_cases.CHECKPOINTS))
def translator(request, tmp_path_factory) -> t5.Translator:
    folder = tiny_t5.build(tmp_path_factory.mktemp(request.param) / "t5", config=t5_cases.CHECKPOINTS[request.param])
    return attn_models.load_translator(str(folder))


@pytest.fixture(params=[False, True], ids=["whole layer", "head by head"])
def head_only(request, monkeypatch) -> bool:
    """Both ways a GPT-2 layer runs: whole (the tiny model), or one head at a time (a model too wide to open whole:
    distilgpt2)."""
    if request.param:
        monkeypatch.setattr(gpt2.Gpt2Config, "head_only", property(lambda self: True))
    return request.param


def edited(cfg):
    """make_gpt2_reference's edits of W_Q (a configuration of one head: in its columns)."""
    w_q = cfg.w_q.copy()
    for row, col, added in EDITS:
        w_q[row, col % w_q.shape[1]] += added
    return replace(cfg, w_q=w_q)


def assert_same_writing(a: gpt2.Generation, b: gpt2.Generation, tol: float = TOL) -> float:
    """Two generations wrote the same tokens, each step's probabilities and attention rows within ``tol``; the
    largest difference."""
    assert a.ids.tolist() == b.ids.tolist() and a.stopped == b.stopped and a.text == b.text
    worst = 0.0
    for x, y in zip(a.steps, b.steps, strict=True):
        assert x.top.ids.tolist() == y.top.ids.tolist()
        worst = max(worst, abs(x.prob - y.prob), np.abs(x.top.probs - y.top.probs).max(),
                    np.abs(x.attention - y.attention).max())
    assert worst <= tol
    return worst


# ---- GPT-2: each step on the cache is the whole text's last row -------------------------------------------------


@pytest.mark.parametrize("i", range(len(PROMPTS)))
def test_every_step_on_the_cache_is_the_whole_texts_last_rows(lm, head_only, i):
    """The prompt, then one token at a time: the hidden states, logits and attention rows of the new positions are
    those of the whole context run again (CausalLM.run), within 1e-12."""
    ids = list(lm.encode(PROMPTS[i]).ids)
    cache = kv.KVCache(len(ids) + N_NEW)
    new = np.array(ids, dtype=np.intp)
    for _ in range(N_NEW):
        hidden, rows = lm.extend(new, cache)  # [n_new, d_model], [n_layers, n_heads, n_new, n_ctx]
        stream, attentions = lm.run(np.array(ids, dtype=np.intp))
        n_new = len(new)
        assert cache.past == len(ids) and rows.shape == (lm.n_layers, lm.n_heads, n_new, len(ids))
        assert np.abs(hidden - stream[-1][-n_new:]).max() <= TOL
        assert np.abs(rows - attentions[:, :, -n_new:, :]).max() <= TOL
        logits = lm._last_logits(hidden)
        assert np.abs(logits - lm._last_logits(stream[-1])).max() <= TOL
        token = int(np.argmax(logits))
        ids.append(token)
        new = np.array([token], dtype=np.intp)


def test_the_cache_holds_its_bound_and_no_more(lm):
    """2 · n_layers · n_max · d_model · 8 bytes: every layer's K and V, as wide as the model."""
    ids = lm.encode(PROMPTS[0]).ids
    cache = kv.KVCache(len(ids) + 3)
    lm.extend(ids, cache)
    for token in (5, 6, 7):
        lm.extend(np.array([token]), cache)
    c = lm.config
    assert cache.past == cache.n_max and cache.nbytes == 2 * c.n_layers * cache.n_max * c.d_model * 8
    with pytest.raises(ValueError, match="cannot take positions up to"):
        lm.extend(np.array([8]), cache)


def test_the_cache_lives_for_one_call_and_on_step_comes_after_each_token(lm, monkeypatch):
    made = weakref.WeakSet()

    class Recorded(kv.KVCache):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.add(self)

    monkeypatch.setattr(causal, "KVCache", Recorded)
    seen = []
    gen = lm.generate(PROMPTS[0], 5, on_step=lambda i, step: seen.append((i, step.id, len(made))))
    assert [i for i, _, _ in seen] == list(range(5)) and [t for _, t, _ in seen] == gen.ids.tolist()
    assert all(n == 1 for _, _, n in seen)  # one cache, alive while the tokens are written
    gc.collect()
    assert len(made) == 0  # and dropped with the call


# ---- GPT-2: interventions through the cache, and where it falls back -------------------------------------------


def intervention(lm: gpt2.CausalLM, name: str) -> Intervention:
    own = lm.layer_config(PROMPTS[0], EDIT_LAYER, head=1)  # opened on PROMPTS[0]: its X there
    return {
        "none": lambda: Intervention(),
        "zero": lambda: Intervention(ablate={(1, 2), (0, 3)}, how="zero"),
        "config unedited": lambda: Intervention(config=own),
        "config edited": lambda: Intervention(config=edited(own)),
        "config edited, X too": lambda: Intervention(config=replace(edited(own), x=own.x + 0.25)),  # step 0: its X
        # opened on another prompt: its weights on PROMPTS[0]'s own X from the first step
        "config of another prompt": lambda: Intervention(config=edited(lm.layer_config(PROMPTS[1], EDIT_LAYER))),
        "config scaled, heads off": lambda: Intervention(ablate={(2, 1)}, how="zero",
                                                         config=replace(edited(own), scale=3.0)),
    }[name]()


@pytest.mark.parametrize("name", ["none", "zero", "config unedited", "config edited", "config edited, X too",
                                  "config of another prompt", "config scaled, heads off"])
def test_an_intervention_through_the_cache_equals_the_whole_text(lm, head_only, name):
    """Whole layers, or (head by head) a configuration of one head in place of that head only."""
    iv = intervention(lm, name)
    assert cacheable(iv)
    cached = lm.generate(PROMPTS[0], N_NEW, intervention=iv)
    whole = lm.generate(PROMPTS[0], N_NEW, intervention=iv, cache=False)
    assert_same_writing(cached, whole)
    if name not in ("none", "config unedited"):
        assert cached.steps[0].prob != lm.generate(PROMPTS[0], 1).steps[0].prob  # it changed the model


def test_one_head_of_a_layer_replaced_through_the_cache(lm, monkeypatch):
    monkeypatch.setattr(gpt2.Gpt2Config, "head_only", property(lambda self: True))
    cfg = lm.layer_config(PROMPTS[2], 1, head=2)
    w_k = cfg.w_k.copy()
    w_k[4, 1] += 2.0
    iv = Intervention(config=replace(cfg, w_k=w_k))
    assert_same_writing(lm.generate(PROMPTS[2], N_NEW, intervention=iv),
                        lm.generate(PROMPTS[2], N_NEW, intervention=iv, cache=False))


def test_the_first_step_of_an_edited_x_is_transformers_edited_layer(lm):
    """A configuration opened on the prompt runs there whole (REF's edited W_Q: transformers with the same edit)."""
    gen = lm.generate(PROMPTS[0], 2, intervention=Intervention(config=edited(lm.layer_config(PROMPTS[0], EDIT_LAYER))))
    e = np.exp(REF_GPT2["p0_edited_logits"][-1] - REF_GPT2["p0_edited_logits"][-1].max())
    assert abs(gen.steps[0].prob - (e / e.sum())[gen.steps[0].id]) <= 1e-9


@pytest.mark.parametrize("iv", [
    Intervention(ablate={(1, 2)}, how="mean"),
    Intervention(ablate={(0, 1), (2, 3)}),  # "mean" is the default
], ids=["one mean", "two mean"])
def test_a_mean_ablation_falls_back_to_the_whole_text_bit_for_bit(lm, iv):
    """A head switched off by its mean over the text: each new token changes the mean at every earlier position, so
    no cache keeps it; generate reruns the whole text at each step, and its numbers are exactly that."""
    assert not cacheable(iv)
    assert_same_writing(lm.generate(PROMPTS[1], N_NEW, intervention=iv),
                        lm.generate(PROMPTS[1], N_NEW, intervention=iv, cache=False), tol=0.0)
    ids = lm.encode(PROMPTS[1]).ids
    with pytest.raises(ValueError, match="run the whole text"):
        lm.extend(ids, kv.KVCache(len(ids)), intervention=iv)


def test_a_configuration_without_a_mask_falls_back_to_the_whole_text_bit_for_bit(lm):
    """Mask kind "none": every position sees the ones after it, so a new token changes the earlier ones."""
    iv = Intervention(config=replace(edited(lm.layer_config(PROMPTS[0], EDIT_LAYER)), mask_kind="none"))
    assert not cacheable(iv)
    gen = lm.generate(PROMPTS[0], N_NEW, intervention=iv)
    assert_same_writing(gen, lm.generate(PROMPTS[0], N_NEW, intervention=iv, cache=False), tol=0.0)
    ids = list(lm.encode(PROMPTS[0]).ids) + [gen.steps[0].id]
    _, rows = lm.run(np.array(ids), intervention=iv, own=False)
    assert np.abs(rows[EDIT_LAYER, :, 0, 1:]).max() > 0  # the first token does see the ones after it


# ---- T5: each decoder step on the cache is the whole decoder's last row ----------------------------------------


@pytest.mark.parametrize("i", range(len(tiny_t5.SENTENCES)))
def test_every_decoder_step_on_the_cache_is_the_whole_decoders_last_row(translator, i):
    _, src = translator.encode(tiny_t5.PREFIX + tiny_t5.SENTENCES[i])
    enc = translator.run_encoder(src)
    inputs = [translator.config.start_id]
    cache = kv.KVCache(t5_cases.MAX_NEW)
    for _ in range(t5_cases.MAX_NEW):
        step = translator.run_decoder(enc, np.array(inputs[-1:]), last_only=True, cache=cache)
        whole = translator.run_decoder(enc, np.array(inputs))
        assert step.self_attentions.shape == (2, 4, 1, len(inputs)) and step.cross_attentions.shape[2] == 1
        assert np.abs(step.logits[0] - whole.logits[-1]).max() <= TOL
        assert np.abs(step.self_attentions[:, :, 0] - whole.self_attentions[:, :, -1]).max() <= TOL
        assert np.abs(step.cross_attentions[:, :, 0] - whole.cross_attentions[:, :, -1]).max() <= TOL
        inputs.append(int(np.argmax(step.logits[0])))
    n_src, inner, layers = len(src), translator.config.inner, translator.config.n_decoder_layers
    assert cache.nbytes == 2 * layers * (t5_cases.MAX_NEW + n_src) * inner * 8  # self: n_max rows; cross: the source


def t5_interventions(tr: t5.Translator) -> dict[str, Intervention]:
    text = tiny_t5.SENTENCES[0]
    plain = tr.translate(text, max_new=6, cache=False)
    cfg = tr.cross_config(text, plain.output_ids[:-1], 1)
    w_q = cfg.w_q.copy()
    w_q[3, 2] += 1.5
    return {**{name: Intervention(ablate=pairs, how=how) for name, (pairs, how) in t5_cases.ABLATIONS.items()},
            "config unedited": Intervention(config=cfg), "config edited": Intervention(config=replace(cfg, w_q=w_q)),
            "mean and config": Intervention(ablate={(0, 2)}, how="mean", config=replace(cfg, w_q=w_q))}


@pytest.mark.parametrize("name", [*t5_cases.ABLATIONS, "config unedited", "config edited", "mean and config"])
@pytest.mark.parametrize("i", range(len(tiny_t5.SENTENCES)))
def test_a_translation_on_the_cache_equals_the_whole_decoder_at_each_step(translator, name, i):
    """Cross-attention heads switched off (by their mean over the source, which stays, or zeros), a cross-attention
    replaced by the explorer's configuration: through the cache, the whole decoder's numbers within 1e-12."""
    iv = None if name == "none" else t5_interventions(translator)[name]
    cached = translator.translate(tiny_t5.SENTENCES[i], max_new=t5_cases.MAX_NEW, intervention=iv)
    whole = translator.translate(tiny_t5.SENTENCES[i], max_new=t5_cases.MAX_NEW, intervention=iv, cache=False)
    assert cached.output_ids.tolist() == whole.output_ids.tolist() and cached.text == whole.text
    assert np.abs(cached.probs - whole.probs).max() <= TOL
    assert cached.cross.shape == whole.cross.shape and np.abs(cached.cross - whole.cross).max() <= TOL


def test_translate_calls_on_step_after_each_token(translator):
    seen = []
    t = translator.translate(tiny_t5.SENTENCES[1], max_new=t5_cases.MAX_NEW,
                             on_step=lambda i, token: seen.append((i, token)))
    assert seen == list(enumerate(t.output_ids.tolist()))


# ---- a write's other work at each token ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_top_words_are_the_whole_vocabularys_stable_sort(seed):
    """ops.top_words partitions, then sorts the candidates: the same ids, in the same order (a tie: the smaller id
    first), as a stable sort of every probability."""
    rng = np.random.default_rng(seed)
    probs = rng.integers(0, 40, 5000) / 40.0  # many ties
    probs[rng.integers(0, 5000, 30)] = 1.0
    for k in (1, 10, 31, 4999, 5000, 6000):
        assert attn_models.ops.top_words(probs, k).tolist() == np.argsort(-probs, kind="stable")[:k].tolist()
