"""The caps on a checkpoint a visitor may name: its files' sizes and every config field that sizes the model, and
the memory a loaded model may take (each family counts its own: attn_models.bert.resident_bytes,
attn_models.gpt2.gpt2_resident_bytes, attn_models.t5.t5_resident_bytes). One place, as attn_core.LIMITS is for
configurations; the caps loop that reads them is attn_models.reader.check_field_caps.

Sized so that sentence-transformers/all-MiniLM-L6-v2 (6 layers, vocab 30,522, d_ff 1,536, 512 positions, a 90 MB
model.safetensors: ≈ 87 MB of private memory loaded) and sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2
(the zh and ko default: 12 layers, hidden 384, vocab 250,002, d_ff 1,536, a 470.6 MB model.safetensors: ≈ 172 MB)
fit, and no model a visitor names adds more than 300 MB of private memory to the server (issue 27's aim for one
learner). The word embedding is memory-mapped from model.safetensors in its own dtype (attn_models.bert
.read_weights): file-backed pages the kernel shares and may drop, read a row at a time (a sentence's rows), so it
counts 0 here; the file's size is capped instead (weights_bytes, judged before download). bench/multilingual.py
measures both. The field caps name the field at fault before the sum does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import N_, ModelError


@dataclass(frozen=True)
class ModelLimits:
    """The caps of :data:`MODEL_LIMITS` (bytes, or a config field's largest value)."""

    config_bytes: int = 1_000_000  # config.json (a BERT's is under 1 kB)
    # tokenizer.json or vocab.txt (all-MiniLM-L6-v2's tokenizer.json: 0.7 MB; the multilingual one's: 9 MB)
    tokenizer_bytes: int = 20_000_000
    # model.safetensors (all-MiniLM-L6-v2's: 90 MB; paraphrase-multilingual-MiniLM-L12-v2's, the zh and ko default:
    # 470.6 MB, 384 MB of it the memory-mapped word embedding; distilgpt2's: 353 MB; GPT-2 small's: 548 MB, over it)
    weights_bytes: int = 500_000_000
    header_bytes: int = 10_000_000  # the safetensors header (its format allows 100 MB; a BERT's is about 20 kB)
    n_layers: int = 24  # num_hidden_layers
    vocab_size: int = 262_144  # vocab_size (the multilingual MiniLM has 250,002)
    d_ff: int = 4_096  # intermediate_size (4 × the largest hidden size the explorer takes is 2,044)
    max_positions: int = 8_192  # max_position_embeddings (BERT has 512)
    type_vocab_size: int = 16  # type_vocab_size (BERT has 2)
    resident_bytes: int = 300_000_000  # a loaded encoder or translator, as its family's resident_bytes counts it
    # a loaded GPT-2 (attn_models.gpt2.gpt2_resident_bytes): distilgpt2 kept in float32 takes 327.7 MB
    causal_resident_bytes: int = 340_000_000  # (GPT-2 small: 497.8 MB, over it); see bench/gpt2.py and bench/RESULTS.md
    # a causal Llama-family model's num_hidden_layers (attn_models.llama): HuggingFaceTB/SmolLM2-135M has 30; the
    # layers set a token's time, its memory is capped by causal_resident_bytes (bench/llama.py)
    causal_layers: int = 32
    relative_buckets: int = 256  # T5's relative_attention_num_buckets (attn_models.t5; t5-small has 32)
    relative_distance: int = 8_192  # T5's relative_attention_max_distance (attn_models.t5; t5-small has 128)


MODEL_LIMITS = ModelLimits()


def too_large(name: str, size: int, cap: int) -> ModelError:
    """The refusal of a file over its cap (sizes in bytes, said in MB).

    >>> str(too_large("config.json", 2_500_000, 1_000_000))
    'config.json is 2.5 MB; the cap is 1.0 MB (attn_models.MODEL_LIMITS).'
    """
    return ModelError(N_("{name} is {size:.1f} MB; the cap is {cap:.1f} MB (attn_models.MODEL_LIMITS)."), name=name,
                      size=size / 1e6, cap=cap / 1e6)
