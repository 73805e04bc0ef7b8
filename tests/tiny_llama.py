"""Tiny random Llama-family checkpoints, made here (no download, no torch): config.json, model.safetensors,
tokenizer.json.

Used by tests/models/test_llama.py and tests/models/make_llama_reference.py (transformers' LlamaForCausalLM,
Qwen2ForCausalLM and MistralForCausalLM read the same folders). Each of :data:`VARIANTS` is 3 layers, 4 query heads,
d_model 16, 40 positions, with grouped-query attention (fewer key/value heads than query heads), and the byte-level
BPE tokenizer of tests/tiny_gpt2.py (SmolLM2, Llama 3 and Qwen 2 use byte-level BPE too):

- ``llama``: 2 key/value heads, its own lm_head (untied), float32;
- ``smol``: SmolLM2's layout — the lm_head tied to the embedding, weights stored as bfloat16 (the values are float32
  rounded to bfloat16 first, so both readers see the same numbers) — with 1 key/value head and head_dim 6 (not
  d_model / heads: config.json's ``head_dim``), rope_theta 100,000 as SmolLM2's;
- ``qwen2``: Qwen 2's biases on q, k and v (none on o), rope_theta 1,000,000, untied;
- ``mistral``: a sliding window of 5 tokens (each query sees itself and the 4 before), untied.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from tests import tiny_gpt2

PROMPTS = ("The cat sat on the", "A dog ran", "It was tired because the zebra", "the cat sat on the mat, the dog")
N_LAYERS, N_HEADS, D_MODEL, N_POSITIONS, D_FF = 3, 4, 16, 40, 24
EOT = tiny_gpt2.EOT

#: name -> (config.json's changes from :func:`config`'s, the weights' safetensors dtype)
VARIANTS: dict[str, tuple[dict, str]] = {
    "llama": ({}, "F32"),
    "smol": ({"num_key_value_heads": 1, "head_dim": 6, "tie_word_embeddings": True, "rope_theta": 100000.0}, "BF16"),
    "qwen2": ({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "rope_theta": 1000000.0,
               "use_sliding_window": False, "sliding_window": None, "max_window_layers": N_LAYERS}, "F32"),
    "mistral": ({"model_type": "mistral", "architectures": ["MistralForCausalLM"], "sliding_window": 5}, "F32"),
}


def tokenizer():
    """tests/tiny_gpt2.py's byte-level BPE tokenizer (``<|endoftext|>`` its last id)."""
    return tiny_gpt2.tokenizer()


def config(vocab_size: int, variant: str = "llama") -> dict:
    """config.json as transformers' LlamaConfig (Qwen2Config, MistralConfig) saves it (the fields that matter)."""
    eot = vocab_size - 1
    base = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": D_MODEL,
            "num_hidden_layers": N_LAYERS, "num_attention_heads": N_HEADS, "num_key_value_heads": 2,
            "intermediate_size": D_FF, "hidden_act": "silu", "max_position_embeddings": N_POSITIONS,
            "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_scaling": None, "attention_bias": False,
            "attention_dropout": 0.0, "mlp_bias": False, "tie_word_embeddings": False, "vocab_size": vocab_size,
            "bos_token_id": eot, "eos_token_id": eot, "initializer_range": 0.02, "torch_dtype": "float32"}
    change, dtype = VARIANTS[variant]
    return {**base, **change, **({"torch_dtype": "bfloat16"} if dtype == "BF16" else {})}


def head_dim(cfg: dict) -> int:
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def to_bf16_values(a: np.ndarray) -> np.ndarray:  # float32 -> float32 whose values bfloat16 holds exactly
    """float32 rounded to the nearest bfloat16 (ties to even), still as float32."""
    bits = a.astype(np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def weights(cfg: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 tensors under LlamaForCausalLM's names (torch Linear weights: [out, in]); q/k/v biases for a
    Qwen 2; lm_head.weight unless the embedding is tied."""
    rng = np.random.default_rng(seed)
    d, ff, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    h, kv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)

    def r(*shape: int, scale: float = 0.4) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {"model.embed_tokens.weight": r(vocab, d, scale=1.0), "model.norm.weight": 1 + r(d, scale=0.1)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + r(d, scale=0.1)
        t[p + "self_attn.q_proj.weight"] = r(h * hd, d)
        t[p + "self_attn.k_proj.weight"] = r(kv * hd, d)
        t[p + "self_attn.v_proj.weight"] = r(kv * hd, d)
        t[p + "self_attn.o_proj.weight"] = r(d, h * hd)
        if cfg["model_type"] == "qwen2":
            t[p + "self_attn.q_proj.bias"] = r(h * hd, scale=0.2)
            t[p + "self_attn.k_proj.bias"] = r(kv * hd, scale=0.2)
            t[p + "self_attn.v_proj.bias"] = r(kv * hd, scale=0.2)
        t[p + "post_attention_layernorm.weight"] = 1 + r(d, scale=0.1)
        t[p + "mlp.gate_proj.weight"] = r(ff, d)
        t[p + "mlp.up_proj.weight"] = r(ff, d)
        t[p + "mlp.down_proj.weight"] = r(d, ff)
    if not cfg.get("tie_word_embeddings"):
        t["lm_head.weight"] = r(vocab, d, scale=0.5)
    return t


def save(tensors: dict[str, np.ndarray], path: Path, dtype: str = "F32") -> None:
    """A safetensors file written here (safetensors' numpy writer has no bfloat16): ``dtype`` "BF16" stores each
    float32 tensor's top 16 bits (its values must be bfloat16's: :func:`to_bf16_values`), "F32" as they are;
    a tensor of another numpy dtype (a hostile test's) is stored in its own."""
    names = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<f2"): "F16", np.dtype("<i4"): "I32"}
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        if dtype == "BF16" and a.dtype == np.float32:
            data, kind = (a.view(np.uint32) >> 16).astype("<u2").tobytes(), "BF16"
        else:
            data, kind = a.astype(a.dtype.newbyteorder("<")).tobytes(), names[a.dtype]
        header[name] = {"dtype": kind, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def build(folder: Path, variant: str = "llama", *, seed: int = 0, change: dict | None = None,
          tensors: dict[str, np.ndarray] | None = None) -> Path:
    """Write the tiny model ``variant`` into ``folder`` (created): ``change`` merged into config.json, ``tensors`` in
    place of the random ones."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tokenizer()
    cfg = config(tok.get_vocab_size(), variant)
    (folder / "config.json").write_text(json.dumps({**cfg, **(change or {})}, indent=2))
    (folder / "tokenizer.json").write_text(tok.to_str())
    dtype = VARIANTS[variant][1]
    t = weights(cfg, seed) if tensors is None else tensors
    if dtype == "BF16":
        t = {k: to_bf16_values(v) if v.dtype == np.float32 else v for k, v in t.items()}
    save(t, folder / "model.safetensors", dtype)
    return folder
