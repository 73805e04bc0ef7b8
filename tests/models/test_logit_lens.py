"""The logit lens (attn_models.CausalModel.logit_lens) of every causal family against transformers in float64
(tests/models/reference_lens.npz, made by make_lens_reference.py on tests/tiny_gpt2.py's and tests/tiny_llama.py's
checkpoints: each hidden state through the final norm and lm_head); its last row against the model's own forward
bit for bit; with a head switched off, against numpy written out here on the changed model's hidden states; its
logits computed a bounded block at a time. No torch here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import softmax as core_softmax
from attn_models import Intervention, ModelError, causal

from .. import tiny_gpt2, tiny_llama
from .make_lens_reference import ABLATED

REF = np.load(Path(__file__).with_name("reference_lens.npz"))
TOL = 1e-10
TOP = 5
MODELS = ("gpt2", *tiny_llama.VARIANTS)
PROMPTS = {"gpt2": tiny_gpt2.PROMPTS, **{v: tiny_llama.PROMPTS for v in tiny_llama.VARIANTS}}
CASES = [(m, i) for m in MODELS for i in range(len(PROMPTS[m]))]
LONG = "the cat sat on the mat, the dog ran after the cat because it was tired"  # more tokens than a small block


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, causal.CausalModel]:
    root = tmp_path_factory.mktemp("lens")
    built = {"gpt2": tiny_gpt2.build(root / "gpt2")} | {v: tiny_llama.build(root / v, v) for v in tiny_llama.VARIANTS}
    return {name: attn_models.load(str(folder)) for name, folder in built.items()}


def check_against(lens: attn_models.LogitLens, key: str) -> None:
    """``lens`` (every position) against the reference's arrays under ``key``."""
    ids = REF[key + "ids"][..., :TOP]  # int [L + 1, n, TOP]
    assert np.array_equal(lens.ids, ids)
    assert np.abs(lens.logits - REF[key + "logits"][..., :TOP]).max() <= TOL
    assert np.abs(lens.probs - np.exp(REF[key + "logits"][..., :TOP] - REF[key + "lse"][..., None])).max() <= TOL
    assert np.array_equal(lens.final_ranks, REF[key + "final_ranks"])
    assert np.array_equal(lens.final_ids, ids[-1, :, 0])


@pytest.mark.parametrize(("name", "i"), CASES)
def test_lens_equals_transformers(models, name, i):
    lm = models[name]
    lens = lm.logit_lens(PROMPTS[name][i], top=TOP)
    assert lens.ids.shape == (lm.n_layers + 1, len(lens.tokens), TOP)
    assert np.array_equal(lens.positions, np.arange(len(lens.tokens)))
    check_against(lens, f"{name}_p{i}_")
    assert lens.labels[0][0] == tuple(causal.piece_label(lm.piece(t)) for t in lens.ids[0, 0])


@pytest.mark.parametrize("name", MODELS)
def test_lens_with_a_head_off_equals_transformers(models, name):
    (layer, head), how = ABLATED
    off = Intervention(ablate={(layer, head)}, how=how)
    lens = models[name].logit_lens(PROMPTS[name][0], intervention=off, top=TOP)
    check_against(lens, f"{name}_p0_ablate_")
    assert not np.array_equal(lens.logits, models[name].logit_lens(PROMPTS[name][0], top=TOP).logits)


def final_norm_here(lm, h: np.ndarray) -> np.ndarray:  # [n, d] -> [n, d]: written out from the weights
    w = lm.weights
    if lm.family == "gpt2":
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) / np.sqrt(var + lm.config.eps) * w.ln_f_g.astype(np.float64) + w.ln_f_b.astype(np.float64)
    norm = np.asarray(w.norm.astype(np.float32) if w.norm.dtype.kind == "f" else
                      (w.norm.view(np.uint16).astype(np.uint32) << 16).view(np.float32), dtype=np.float64)
    return h / np.sqrt((h * h).mean(-1, keepdims=True) + lm.config.eps) * norm


def table_here(lm) -> np.ndarray:  # [vocab, d] float64
    t = lm.unembedding
    return t.astype(np.float64) if t.dtype.kind == "f" else (t.view(np.uint16).astype(np.uint32) << 16).view(
        np.float32).astype(np.float64)


def edited(lm, prompt: str) -> Intervention:
    """Layer 1's configuration on ``prompt`` with W_Q changed, as the explorer's edit run back."""
    from dataclasses import replace

    cfg = lm.layer_config(prompt, 1)
    w_q = cfg.w_q.copy()
    w_q[2, 1] += 3.0
    w_q[5, 0] -= 2.0
    return Intervention(config=replace(cfg, w_q=w_q))


@pytest.mark.parametrize("change", ["off", "edited"])
@pytest.mark.parametrize("name", ["gpt2", "llama", "smol"])
def test_lens_after_a_change_is_the_changed_hidden_states_through_the_head(models, name, change):
    """The lens with heads switched off, and with the explorer's edit of a layer run back: the changed forward's
    hidden states (each block's input; the last already normed) through the final norm and the unembedding, in numpy
    here."""
    lm = models[name]
    prompt = PROMPTS[name][3 if name != "gpt2" else 0]
    off = Intervention(ablate={(0, 1), (2, 3)}, how="zero") if change == "off" else edited(lm, prompt)
    out = lm.forward(prompt, intervention=off)
    lens = lm.logit_lens(prompt, intervention=off, top=TOP)
    table = table_here(lm)
    for layer, h in enumerate(out.hidden_states):
        normed = h if layer == lm.n_layers else final_norm_here(lm, h)
        logits = normed @ table.T  # [n, vocab]
        e = np.exp(logits - logits.max(-1, keepdims=True))
        probs = e / e.sum(-1, keepdims=True)
        order = np.argsort(-probs, axis=-1, kind="stable")[:, :TOP]
        assert np.array_equal(lens.ids[layer], order)
        assert np.abs(lens.probs[layer] - np.take_along_axis(probs, order, -1)).max() <= 1e-12
        assert np.abs(lens.logits[layer] - np.take_along_axis(logits, order, -1)).max() <= 1e-12
    assert not np.array_equal(lens.probs, lm.logit_lens(prompt, top=TOP).probs)  # the change changed the lens


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("rows", [causal.LOGIT_ROWS, 4, pytest.param(7, marks=pytest.mark.full)])
def test_the_last_row_is_the_models_own_logits_bit_for_bit(models, name, rows, monkeypatch):
    """The lens's last row is forward()'s logits and their softmax (attn_core's), bit for bit, at every position or
    a few, whatever the blocks' size (small blocks: the prompt spans several)."""
    monkeypatch.setattr(causal, "LOGIT_ROWS", rows)
    lm = models[name]
    for prompt in (LONG, PROMPTS[name][1]):
        out = lm.forward(prompt)
        for positions in (None, -1, [0, 2, len(out.ids) - 1]):
            lens = lm.logit_lens(prompt, top=TOP, positions=positions)
            for c, p in enumerate(lens.positions):
                own = out.logits[p]  # [vocab]
                assert np.array_equal(lens.logits[-1, c], own[lens.ids[-1, c]])
                assert np.array_equal(lens.probs[-1, c], core_softmax(own)[lens.ids[-1, c]])
                assert lens.final_ids[c] == int(np.argmax(own)) and (lens.final_ranks[-1, c] == 1)
    nxt = lm.next_token(LONG, top_k=TOP)  # the next token's own path (one row): the same to rounding
    lens = lm.logit_lens(LONG, top=TOP, positions=-1)
    assert np.array_equal(nxt.ids, lens.ids[-1, 0]) and np.abs(nxt.probs - lens.probs[-1, 0]).max() <= 1e-12


def test_positions_and_a_subset_agree(models):
    lm = models["gpt2"]
    whole = lm.logit_lens(LONG, top=3)
    some = lm.logit_lens(LONG, top=3, positions=[-1, 3, 3, 5])
    assert some.positions.tolist() == [3, 5, len(whole.tokens) - 1]
    cols = some.positions
    assert np.array_equal(some.ids, whole.ids[:, cols])
    assert np.abs(some.probs - whole.probs[:, cols]).max() <= 1e-12
    assert np.array_equal(some.final_ranks, whole.final_ranks[:, cols])


def test_first_top_is_where_the_final_token_stays_on_top(models):
    lens = models["llama"].logit_lens(LONG, top=3)
    for c in range(len(lens.positions)):
        first = lens.first_top(c)
        assert (lens.final_ranks[first:, c] == 1).all()
        assert first == 0 or lens.final_ranks[first - 1, c] != 1


def test_the_logits_are_computed_a_bounded_block_at_a_time(models, monkeypatch):
    """Never a [n_layers + 1, n_seq, vocab] array: each product with the unembedding has at most LOGIT_ROWS rows."""
    monkeypatch.setattr(causal, "LOGIT_ROWS", 6)
    seen = []
    tied, blocks = causal.tied_logits, causal.block_logits

    def counting_tied(h, table):
        seen.append(len(h))
        return tied(h, table)

    def counting_blocks(h, table, rows):
        seen.append(len(h))
        return blocks(h, table, rows)

    monkeypatch.setattr(causal, "tied_logits", counting_tied)
    monkeypatch.setattr(causal, "block_logits", counting_blocks)
    lm = models["gpt2"]
    lens = lm.logit_lens(LONG, top=2)
    n = len(lens.tokens)
    assert max(seen) <= 6 and sum(seen) == (lm.n_layers + 1) * n
    seen.clear()
    lm.logit_lens(LONG, top=2, positions=-1)
    assert seen == [6, lm.n_layers]  # the last layer's block of the last position, then the last row of each layer


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"top": 0}, "top_k must be a whole number"), ({"top": 10**6}, "top_k must be a whole number"),
    ({"positions": 99}, "Position 99 is not in the prompt"), ({"positions": [0, "a"]}, "Position 'a'"),
    ({"positions": []}, "at least one position"), ({"positions": True}, "Position True")])
def test_bad_arguments_are_named(models, kwargs, words):
    with pytest.raises(ModelError, match=words):
        models["gpt2"].logit_lens("The cat sat", **kwargs)


def test_an_empty_prompt_is_refused(models):
    with pytest.raises(ModelError, match="empty"):
        models["llama"].logit_lens("")
