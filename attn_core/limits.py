"""The caps the app enforces, in one place (shown to the user on Inputs & weights)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    n_seq: int = 256  # tokens
    d_model: int = 769  # width of X (GPT-2's one head: its 768 features + the bias column; attn_models.gpt2)
    width: int = 768  # columns of W_Q, W_K, W_V (n_heads · d_k or n_heads · d_v) and of W_O (a GPT-2 head's: 768)
    n_heads: int = 16
    total_cells: int = 1_200_000  # X + W_Q + W_K + W_V + W_O together
    token_chars: int = 40  # longest token label
    permalink_bytes: int = 8_192  # longest permalink query value
    file_bytes: int = 40_000_000  # largest JSON configuration file accepted
    permalink_json_bytes: int = 8_000_000  # largest JSON a permalink may inflate to (zlib tops out near 1000:1)
    json_items: int = 16_384  # most lists, strings or true/false/null (each) in a configuration JSON


LIMITS = Limits()
