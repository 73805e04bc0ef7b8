"""A tiny random T5 checkpoint, made here (no download): config.json, model.safetensors, tokenizer.json.

Two encoder and two decoder layers, 4 heads, d_model 16, d_kv 4, d_ff 24, 8 relative-position buckets (max distance
16), weights named as T5ForConditionalGeneration saves them, random float32 (as t5-small stores them). The tokenizer
is a Unigram model (as t5-small's) over a few English and French words with ▁ pieces, single letters so any word can
be spelled, ``<pad>`` = 0, ``</s>`` = 1, ``<unk>`` = 2, and a post-processor that appends ``</s>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SPECIALS = ["<pad>", "</s>", "<unk>"]
WORDS = ["▁translate", "▁English", "▁to", "▁French", ":", "▁The", "▁the", "▁cat", "▁sat", "▁on", "▁mat", "▁dog",
         "▁is", "▁tired", ".", "▁Le", "▁le", "▁chat", "▁est", "▁assis", "▁sur", "▁tapis", "▁chien", "▁fatigué",
         "▁", "s", "e", "a", "t", "o", "n", "r", "i", "l", "c", "d", "h", "m", "u", "g"]
VOCAB = SPECIALS + WORDS
PREFIX = "translate English to French: "
SENTENCES = ("The cat sat on the mat.", "The dog is tired.", "A zebra sat.")  # the last has pieces and an <unk>
CONFIG = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 16, "d_kv": 4, "d_ff": 24,
          "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4, "relative_attention_num_buckets": 8,
          "relative_attention_max_distance": 16, "vocab_size": len(VOCAB), "layer_norm_epsilon": 1e-6,
          "feed_forward_proj": "relu", "tie_word_embeddings": True, "is_encoder_decoder": True, "pad_token_id": 0,
          "eos_token_id": 1, "decoder_start_token_id": 0, "dropout_rate": 0.1}
GATED = {**CONFIG, "feed_forward_proj": "gated-gelu"}


def tokenizer_json() -> str:
    """A Unigram tokenizer over VOCAB with ▁ word starts and ``</s>`` appended, as tokenizer.json text."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    scores = [(t, 0.0) for t in SPECIALS] + [(t, -1.0 - 0.1 * len(t) if len(t) > 2 else -8.0) for t in WORDS]
    tok = Tokenizer(Unigram(scores, unk_id=2, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens(SPECIALS)
    return tok.to_str()


def weights(config: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 tensors under T5ForConditionalGeneration's names (``lm_head.weight`` when untied)."""
    rng = np.random.default_rng(seed)
    d, inner, ff = config["d_model"], config["num_heads"] * config["d_kv"], config["d_ff"]
    gated = config.get("feed_forward_proj", "relu").startswith("gated")

    def r(*shape: int, scale: float = 0.5) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {"shared.weight": r(config["vocab_size"], d, scale=2.0)}
    for side, n in (("encoder", config["num_layers"]), ("decoder", config["num_decoder_layers"])):
        for i in range(n):
            p = f"{side}.block.{i}.layer"
            blocks = [("0", "SelfAttention")] + ([("1", "EncDecAttention")] if side == "decoder" else [])
            for j, name in blocks:
                for m in "qkv":
                    t[f"{p}.{j}.{name}.{m}.weight"] = r(inner, d)
                t[f"{p}.{j}.{name}.o.weight"] = r(d, inner)
                t[f"{p}.{j}.layer_norm.weight"] = 1 + r(d, scale=0.1)
            f = "2" if side == "decoder" else "1"
            if gated:
                t[f"{p}.{f}.DenseReluDense.wi_0.weight"], t[f"{p}.{f}.DenseReluDense.wi_1.weight"] = r(ff, d), r(ff, d)
            else:
                t[f"{p}.{f}.DenseReluDense.wi.weight"] = r(ff, d)
            t[f"{p}.{f}.DenseReluDense.wo.weight"] = r(d, ff)
            t[f"{p}.{f}.layer_norm.weight"] = 1 + r(d, scale=0.1)
        t[f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = r(
            config["relative_attention_num_buckets"], config["num_heads"], scale=1.0)
        t[f"{side}.final_layer_norm.weight"] = 1 + r(d, scale=0.1)
    if config.get("tie_word_embeddings", True) is False:
        t["lm_head.weight"] = r(config["vocab_size"], d, scale=1.0)
    return t


def build(folder: Path, *, config: dict | None = None, seed: int = 0, drop: tuple[str, ...] = (),
          extra: dict[str, np.ndarray] | None = None) -> Path:
    """Write a tiny T5 into ``folder`` (created); ``drop`` leaves tensors out, ``extra`` adds or replaces some."""
    from safetensors.numpy import save_file

    config = config or CONFIG
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "tokenizer.json").write_text(tokenizer_json())
    tensors = {k: v for k, v in weights(config, seed).items() if k not in drop} | (extra or {})
    save_file(tensors, str(folder / "model.safetensors"))
    return folder
