"""The neuron view of every family against transformers (tests/models/reference_neuron.npz, made by
make_neuron_reference.py): for each tiny checkpoint, every layer, head, query and key, the q_i and k_j the view shows
(attn_core.head_neuron on attn_core.run of the model's own configuration of that head, as the model pages show it)
are transformers' query and key projections (a Llama's after apply_rotary_pos_emb, and before it), and the score ÷
the divisor (+ T5's position bias) is the score transformers' softmax reads, whose weights are the view's weight.
The Llama (RoPE, grouped K/V heads) in the quick tier, the other families in the full tier."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import head_neuron, run

from .. import tiny_bert, tiny_gpt2, tiny_llama, tiny_t5, tiny_xlmr
from .make_neuron_reference import T5_TARGET

REF = np.load(Path(__file__).resolve().parent / "reference_neuron.npz")
ATOL = 1e-10  # float64 both sides; the hidden states before a layer come from two implementations

CASES = {  # family -> (build, text, [(attention name in the npz, origin fields)])
    "bert": (tiny_bert.build, tiny_bert.SENTENCE, [("self", {"role": "encoder"})]),
    "xlmr": (tiny_xlmr.build, tiny_xlmr.SENTENCES[0], [("self", {"role": "encoder"})]),
    "gpt2": (tiny_gpt2.build, tiny_gpt2.PROMPTS[0], [("self", {"role": "causal"})]),
    "llama": (lambda folder: tiny_llama.build(folder, "llama"), tiny_llama.PROMPTS[0],
              [("self", {"role": "causal", "family": "llama"})]),
    "t5": (tiny_t5.build, tiny_t5.SENTENCES[0], [
        ("encoder", {"role": "translator", "side": "encoder", "prefix": tiny_t5.PREFIX}),
        ("decoder", {"role": "translator", "side": "decoder", "prefix": tiny_t5.PREFIX, "target": T5_TARGET}),
        ("cross", {"role": "translator", "side": "cross", "prefix": tiny_t5.PREFIX, "target": T5_TARGET})]),
}


@pytest.mark.parametrize("family", [f if f == "llama" else pytest.param(f, marks=pytest.mark.full) for f in CASES])
def test_the_vectors_and_scores_shown_are_transformers(family, tmp_path):
    build, text, attentions = CASES[family]
    model = attn_models.load(str(build(tmp_path / family)))
    for name, fields in attentions:
        q_ref, k_ref = REF[f"{family}_{name}_q"], REF[f"{family}_{name}_k"]  # [L, H, n_q, d_k], [L, KV, n_k, d_k]
        logits, weights = REF[f"{family}_{name}_logits"], REF[f"{family}_{name}_weights"]  # [L, H, n_q, n_k] each
        before = (REF[f"{family}_{name}_q_before"], REF[f"{family}_{name}_k_before"]) if family == "llama" else None
        n_layers, n_heads, n_q, n_k = logits.shape
        for layer in range(n_layers):
            layer_trace = None
            for h in range(n_heads):
                if layer_trace is None:  # the whole layer, unless the model opens a head alone (then each head's)
                    origin = attn_models.Origin(model=model.name, layer=layer, head=h, sentence=text, **fields)
                    trace = run(model.config_for(origin))
                    layer_trace = trace if trace.n_heads > 1 else None
                trace = layer_trace or trace
                hh = h if trace.n_heads > 1 else 0
                g = model.kv_head(h)
                np.testing.assert_allclose(trace.heads[hh].q, q_ref[layer, h], rtol=0, atol=ATOL)  # every row
                np.testing.assert_allclose(trace.heads[hh].k, k_ref[layer, g], rtol=0, atol=ATOL)
                for i in range(n_q):  # every query, with its first, strongest and last key (and every key in layer 0)
                    for j in range(n_k) if layer == 0 else {0, int(np.argmax(weights[layer, h, i])), n_k - 1}:
                        v = head_neuron(trace, hh, i, j)
                        np.testing.assert_allclose(v.q_i, q_ref[layer, h, i], rtol=0, atol=ATOL)
                        np.testing.assert_allclose(v.k_j, k_ref[layer, g, j], rtol=0, atol=ATOL)
                        if before is not None:
                            np.testing.assert_allclose(v.q_before, before[0][layer, h, i], rtol=0, atol=ATOL)
                            np.testing.assert_allclose(v.k_before, before[1][layer, g, j], rtol=0, atol=ATOL)
                        assert v.allowed == (logits[layer, h, i, j] > -1e30), (layer, h, i, j)
                        if v.allowed:
                            assert abs(v.biased - logits[layer, h, i, j]) <= ATOL, (name, layer, h, i, j)
                        assert abs(v.weight - weights[layer, h, i, j]) <= ATOL
                if h == 0 and layer == 0:  # the view's score is the trace's cell, to 1e-12
                    assert abs(head_neuron(trace, hh, n_q - 1, 0).score - trace.heads[hh].scores[n_q - 1, 0]) <= 1e-12


def test_the_reference_texts_are_the_models():
    """The ids transformers ran are the ones attn_models reads from each text (else the comparison above is moot)."""
    import tempfile

    root = Path(tempfile.mkdtemp())
    for family, (build, text, _) in CASES.items():
        model = attn_models.load(str(build(root / family)))
        if family == "t5":
            ids = model.encode(tiny_t5.PREFIX + text)[1]
        else:
            ids = model.encode(text).ids
        np.testing.assert_array_equal(np.asarray(ids), REF[f"{family}_ids"], err_msg=family)
