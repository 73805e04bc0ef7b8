"""A tiny random GPT-2 checkpoint, made here (no download): config.json, model.safetensors, tokenizer.json.

Used by tests/models/test_gpt2.py and tests/models/make_gpt2_reference.py (transformers' GPT2LMHeadModel reads the
same folder). 3 layers, 4 heads, d_model 16, 40 positions; a byte-level BPE tokenizer trained with the tokenizers
package on :data:`CORPUS` (the 256 byte symbols, a few dozen merges, ``<|endoftext|>`` last as in GPT-2), so a word
after a space is one ``Ġ``-piece ("Ġcat") and an unknown word splits into byte pieces. Weights are random float32
(as real checkpoints store them), under GPT2LMHeadModel's names ("transformer.h.0.attn.c_attn.weight", the LM head
tied to wte: not in the file) or, with ``prefix=""``, the Hub gpt2 repo's (GPT2Model's: "h.0.attn.c_attn.weight").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

EOT = "<|endoftext|>"
CORPUS = ["The cat sat on the mat.", "The dog sat on the rug.", "A cat was tired because it ran.",
          "It was the cat that sat there.", "The dog ran after the cat.", "the mat, the rug, the cat!"] * 4
PROMPTS = ("The cat sat on the", "A dog ran", "It was tired because the zebra")  # the last: byte pieces
N_LAYERS, N_HEADS, D_MODEL, N_POSITIONS = 3, 4, 16, 40


def tokenizer():
    """The byte-level BPE tokenizer (a tokenizers.Tokenizer), trained on CORPUS; deterministic."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers, processors, trainers
    from tokenizers.models import BPE

    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=300, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    tok.add_special_tokens([EOT])  # the last id, as GPT-2's 50256
    return tok


def config(vocab_size: int) -> dict:
    """config.json as transformers' GPT2Config saves it (the fields that matter here)."""
    eot = vocab_size - 1
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": N_LAYERS, "n_head": N_HEADS,
            "n_embd": D_MODEL, "n_positions": N_POSITIONS, "n_ctx": N_POSITIONS, "n_inner": None,
            "vocab_size": vocab_size, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
            "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False,
            "bos_token_id": eot, "eos_token_id": eot, "tie_word_embeddings": True, "resid_pdrop": 0.1,
            "embd_pdrop": 0.1, "attn_pdrop": 0.1, "initializer_range": 0.02}


def weights(cfg: dict, seed: int = 0, *, buffers: bool = False) -> dict[str, np.ndarray]:
    """Random float32 tensors under GPT2Model's names (Conv1D weights are [in, out]); ``buffers``: also the
    ``attn.bias`` / ``attn.masked_bias`` buffers older checkpoints (the Hub's gpt2) carry."""
    rng = np.random.default_rng(seed)
    d, n_pos, vocab = cfg["n_embd"], cfg["n_positions"], cfg["vocab_size"]
    ff = cfg["n_inner"] or 4 * d

    def r(*shape: int, scale: float = 0.4) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {"wte.weight": r(vocab, d, scale=1.0), "wpe.weight": r(n_pos, d, scale=0.5),
         "ln_f.weight": 1 + r(d, scale=0.1), "ln_f.bias": r(d, scale=0.1)}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}"
        t[f"{p}.ln_1.weight"], t[f"{p}.ln_1.bias"] = 1 + r(d, scale=0.1), r(d, scale=0.1)
        t[f"{p}.attn.c_attn.weight"], t[f"{p}.attn.c_attn.bias"] = r(d, 3 * d), r(3 * d, scale=0.2)
        t[f"{p}.attn.c_proj.weight"], t[f"{p}.attn.c_proj.bias"] = r(d, d), r(d, scale=0.2)
        t[f"{p}.ln_2.weight"], t[f"{p}.ln_2.bias"] = 1 + r(d, scale=0.1), r(d, scale=0.1)
        t[f"{p}.mlp.c_fc.weight"], t[f"{p}.mlp.c_fc.bias"] = r(d, ff), r(ff, scale=0.2)
        t[f"{p}.mlp.c_proj.weight"], t[f"{p}.mlp.c_proj.bias"] = r(ff, d), r(d, scale=0.2)
        if buffers:
            t[f"{p}.attn.bias"] = np.tril(np.ones((n_pos, n_pos), dtype=np.uint8))[None, None]
            t[f"{p}.attn.masked_bias"] = np.array(-1e4, dtype=np.float32)
    return t


def build(folder: Path, *, prefix: str = "transformer.", seed: int = 0, buffers: bool = False,
          change: dict | None = None, tensors: dict[str, np.ndarray] | None = None) -> Path:
    """Write the tiny GPT-2 into ``folder`` (created): ``prefix`` before every weight name ("transformer." as
    GPT2LMHeadModel saves, "" as the Hub's gpt2 repo), ``change`` merged into config.json, ``tensors`` in place of
    the random ones (names without the prefix)."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tokenizer()
    cfg = config(tok.get_vocab_size())
    (folder / "config.json").write_text(json.dumps({**cfg, **(change or {})}, indent=2))
    (folder / "tokenizer.json").write_text(tok.to_str())
    t = weights(cfg, seed, buffers=buffers) if tensors is None else tensors
    save_file({prefix + k: v for k, v in t.items()}, str(folder / "model.safetensors"))
    return folder
