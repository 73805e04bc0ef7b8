"""The caps on a checkpoint a visitor may name: its files' sizes and every config field that sizes the model, and
the memory the loaded model takes (:func:`resident_bytes`). One place, as attn_core.LIMITS is for configurations.

Sized so that sentence-transformers/all-MiniLM-L6-v2 (6 layers, vocab 30,522, d_ff 1,536, 512 positions, a 90 MB
model.safetensors: ≈ 87 MB of private memory loaded) and sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2
(the zh and ko default: 12 layers, hidden 384, vocab 250,002, d_ff 1,536, a 470.6 MB model.safetensors: ≈ 172 MB)
fit, and no model a visitor names adds more than 300 MB of private memory to the server (issue 27's aim for one
learner). The word embedding is memory-mapped from model.safetensors in its own dtype (attn_models.checkpoint
.read_weights): file-backed pages the kernel shares and may drop, read a row at a time (a sentence's rows), so it
counts 0 here; the file's size is capped instead (weights_bytes, judged before download). bench/multilingual.py
measures both. The field caps name the field at fault before the sum does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import N_, ModelError

if TYPE_CHECKING:
    from .checkpoint import BertConfig
    from .gpt2 import Gpt2Config

F64 = 8  # bytes of a float64: every weight but the word embedding is held in float64


@dataclass(frozen=True)
class ModelLimits:
    """The caps of :data:`MODEL_LIMITS` (bytes, or a config field's largest value)."""

    config_bytes: int = 1_000_000  # config.json (a BERT's is under 1 kB)
    tokenizer_bytes: int = 20_000_000  # tokenizer.json (all-MiniLM-L6-v2's: 0.7 MB; the multilingual one's: 9 MB)
    # model.safetensors (all-MiniLM-L6-v2's: 90 MB; paraphrase-multilingual-MiniLM-L12-v2's, the zh and ko default:
    # 470.6 MB, 384 MB of it the memory-mapped word embedding; distilgpt2's: 353 MB; GPT-2 small's: 548 MB, over it)
    weights_bytes: int = 500_000_000
    header_bytes: int = 10_000_000  # the safetensors header (its format allows 100 MB; a BERT's is about 20 kB)
    n_layers: int = 24  # num_hidden_layers
    vocab_size: int = 262_144  # vocab_size (the multilingual MiniLM has 250,002)
    d_ff: int = 4_096  # intermediate_size (4 × the largest hidden size the explorer takes is 2,044)
    max_positions: int = 8_192  # max_position_embeddings (BERT has 512)
    type_vocab_size: int = 16  # type_vocab_size (BERT has 2)
    resident_bytes: int = 300_000_000  # the loaded model, as resident_bytes() counts it
    causal_resident_bytes: int = 340_000_000  # a loaded GPT-2 (gpt2_resident_bytes): distilgpt2 kept in float32
    # takes 327.7 MB (GPT-2 small: 497.8 MB, over it); see bench/gpt2.py and bench/RESULTS.md
    relative_buckets: int = 256  # T5's relative_attention_num_buckets (attn_models.t5; t5-small has 32)
    relative_distance: int = 8_192  # T5's relative_attention_max_distance (attn_models.t5; t5-small has 128)


MODEL_LIMITS = ModelLimits()

#: config.json field -> (the BertConfig attribute, the ModelLimits cap): every field that sizes the model
FIELD_CAPS = {
    "num_hidden_layers": ("n_layers", "n_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "intermediate_size": ("d_ff", "d_ff"),
    "max_position_embeddings": ("max_positions", "max_positions"),
    "type_vocab_size": ("type_vocab_size", "type_vocab_size"),
}


def resident_bytes(cfg: BertConfig, word_itemsize: int = 4, *, mlm: bool = False, decoder_itemsize: int = 0,
                   word_mapped: bool = True) -> int:
    """Private bytes the model takes once loaded: everything in float64 (attn_models.checkpoint.read_weights) but the
    word embedding, which is memory-mapped from model.safetensors (``word_mapped``: 0 private bytes; its pages are the
    file's, shared and dropped by the kernel when memory is short, and a run reads only its sentence's rows); with
    ``word_mapped=False``, held in memory in its checkpoint's dtype (``word_itemsize`` bytes a number).

    Per layer: W_Q, W_K, W_V [d_model + 1, d_model] (the bias as the last row), W_O [d_model, d_model], b_O,
    two LayerNorms, W_ff1 [d_model, d_ff] + b_ff1, W_ff2 [d_ff, d_model] + b_ff2.

    ``mlm``: with a masked-LM head (attn_models.mlm.MlmHead): its transform [d_model, d_model] + bias, LayerNorm and
    output bias [vocab_size] in float64, and its own decoder [vocab_size, d_model] of ``decoder_itemsize`` bytes a
    number (0: tied to the word embedding, nothing more).

    >>> from attn_models.checkpoint import BertConfig
    >>> mini = BertConfig(n_layers=6, n_heads=12, d_model=384, d_ff=1536, vocab_size=30522, max_positions=512,
    ...                   type_vocab_size=2, eps=1e-12)
    >>> round(resident_bytes(mini) / 1e6, 1), round(resident_bytes(mini, word_mapped=False) / 1e6, 1)
    (86.8, 133.6)
    >>> multi = BertConfig(n_layers=12, n_heads=12, d_model=384, d_ff=1536, vocab_size=250002, max_positions=514,
    ...                    type_vocab_size=1, eps=1e-5, family="roberta", pad_id=1)
    >>> round(resident_bytes(multi) / 1e6, 1), round(resident_bytes(multi, word_mapped=False) / 1e6, 1)
    (171.9, 555.9)
    >>> round(resident_bytes(mini, mlm=True) / 1e6, 1)  # a masked-LM head, its decoder tied to the word embedding
    88.2
    >>> round(resident_bytes(mini, mlm=True, decoder_itemsize=4) / 1e6, 1)  # its own float32 decoder
    135.1
    """
    d, ff = cfg.d_model, cfg.d_ff
    layer = 3 * (d + 1) * d + d * d + d + 2 * d + d * ff + ff + ff * d + d + 2 * d  # numbers of one layer
    embeddings = (cfg.max_positions + cfg.type_vocab_size + 2) * d  # position, token type, LayerNorm
    head = (d * d + 3 * d + cfg.vocab_size) * F64 + cfg.vocab_size * d * decoder_itemsize if mlm else 0
    word = 0 if word_mapped else cfg.vocab_size * d * word_itemsize
    return word + (embeddings + cfg.n_layers * layer) * F64 + head


#: config.json field -> (the Gpt2Config attribute, the ModelLimits cap) of a GPT-2 (attn_models.gpt2)
GPT2_FIELD_CAPS = {
    "n_layer": ("n_layers", "n_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "n_inner": ("d_inner", "d_ff"),
    "n_positions": ("max_positions", "max_positions"),
}


def gpt2_resident_bytes(cfg: Gpt2Config, itemsize: int = 4) -> int:
    """Bytes a GPT-2 (attn_models.gpt2.CausalLM) takes once loaded: every weight in its checkpoint's dtype
    (``itemsize`` bytes a number; float32 for every published GPT-2), cast to float64 one block at a time when it runs.

    wte [vocab, d], wpe [positions, d], ln_f; per block: ln_1, c_attn [d + 1, 3d] (its bias as the last row), c_proj
    [d, d] + bias, ln_2, c_fc [d, d_ff] + bias, the MLP's c_proj [d_ff, d] + bias.

    >>> from attn_models.gpt2 import Gpt2Config
    >>> distil = Gpt2Config(n_layers=6, n_heads=12, d_model=768, vocab_size=50257, max_positions=1024, eps=1e-5)
    >>> round(gpt2_resident_bytes(distil) / 1e6, 1), round(gpt2_resident_bytes(distil, 8) / 1e6, 1)
    (327.7, 655.3)
    >>> from dataclasses import replace
    >>> round(gpt2_resident_bytes(replace(distil, n_layers=12)) / 1e6, 1)  # GPT-2 small
    497.8
    """
    d, ff = cfg.d_model, cfg.d_inner
    block = 2 * d + (d + 1) * 3 * d + d * d + d + 2 * d + d * ff + ff + ff * d + d
    return ((cfg.vocab_size + cfg.max_positions) * d + 2 * d + cfg.n_layers * block) * itemsize


def too_large(name: str, size: int, cap: int) -> ModelError:
    """The refusal of a file over its cap (sizes in bytes, said in MB).

    >>> str(too_large("config.json", 2_500_000, 1_000_000))
    'config.json is 2.5 MB; the cap is 1.0 MB (attn_models.MODEL_LIMITS).'
    """
    return ModelError(N_("{name} is {size:.1f} MB; the cap is {cap:.1f} MB (attn_models.MODEL_LIMITS)."), name=name,
                      size=size / 1e6, cap=cap / 1e6)
