"""A tiny random XLM-RoBERTa checkpoint, made here (no download): config.json, model.safetensors, tokenizer.json.

As sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 is laid out, in small: model_type "xlm-roberta",
weights under BERT's names without a prefix (``prefix="roberta."``: as XLMRobertaForMaskedLM saves its encoder),
one token type, padding id 1 (real tokens' positions start at 2), and a Unigram (sentencepiece) tokenizer.json
with ``<s> <pad> </s> <unk> <mask>`` and RoBERTa's post-processor. The vocabulary holds a few Chinese and Korean
pieces (and ``▁`` pieces, the start of a word), so that SENTENCES tokenize into real pieces; a character it does not
hold becomes ``<unk>``. The weights are random float32 (as real checkpoints store them).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import tiny_bert

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]  # ids 0 … 3, as XLM-R's; <mask> is the last id
PIECES = ["▁", "▁注意", "注意", "力", "很", "重要", "▁重要", "模型", "是", "的", "▁我", "我", "喜欢", "猫",
          "▁어텐션", "어텐션", "은", "▁핵심", "핵심", "입니다", "▁트랜스포머", "트랜스포머", "의", "는",
          "▁The", "▁the", "▁cat", "▁sat", "▁on", "▁mat", "▁a", "▁dog", ".", "s", "a", "t"]
VOCAB = [*SPECIALS, *PIECES, "<mask>"]
PAD_ID = 1
#: one padded batch in the reference: different lengths, Chinese, Korean, English, a character not in the vocabulary
SENTENCES = ("注意力很重要", "어텐션은 트랜스포머의 핵심입니다", "我喜欢猫!", "The cat sat on the mat.")
CONFIG = {"model_type": "xlm-roberta", "architectures": ["XLMRobertaModel"], "num_hidden_layers": 2,
          "num_attention_heads": 4, "hidden_size": 16, "intermediate_size": 24, "vocab_size": len(VOCAB),
          "max_position_embeddings": 42, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "hidden_act": "gelu",
          "pad_token_id": PAD_ID, "bos_token_id": 0, "eos_token_id": 2, "position_embedding_type": "absolute"}


def tokenizer_json() -> str:
    """A Unigram tokenizer over VOCAB with XLM-R's pre-tokenizer (Metaspace: ``▁`` before each word) and
    post-processor (``<s> $A </s>``), as tokenizer.json text (made with the tokenizers package)."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    scores = [(t, 0.0) for t in SPECIALS] + [(p, -1.0 - 0.1 * len(p)) for p in PIECES] + [("<mask>", 0.0)]
    tok = Tokenizer(Unigram(scores, unk_id=VOCAB.index("<unk>"), byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("  ", " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True,
                                                      add_prefix_space=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens([*SPECIALS, "<mask>"])
    tok.enable_truncation(8)  # as real tokenizer.json files may carry: the loader must switch these off
    tok.enable_padding(length=12, pad_id=PAD_ID, pad_token="<pad>")
    return tok.to_str()


def build(folder: Path, *, config: dict | None = None, seed: int = 0, prefix: str = "") -> Path:
    """Write the tiny XLM-R checkpoint into ``folder`` (created); ``prefix`` (e.g. "roberta.") goes before every
    weight name. The weights are tests/tiny_bert.weights' for this config (BERT's names and layout)."""
    from safetensors.numpy import save_file

    config = config or CONFIG
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "tokenizer.json").write_text(tokenizer_json())
    tensors = {prefix + k: v for k, v in tiny_bert.weights(config, seed).items() if k != "embeddings.position_ids"}
    save_file(tensors, str(folder / "model.safetensors"))
    return folder
