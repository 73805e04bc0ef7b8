"""attn_core: scaled dot-product and multi-head attention in numpy, with every intermediate kept.

Pure numpy: importing it imports neither streamlit, pandas nor altair.

This package is the only door: code outside attn_core imports from ``attn_core`` (the names below, and the
submodules ``analysis``, ``share`` and ``codegen`` as namespaces), never ``from attn_core.<module> import``.
"""

from . import analysis, codegen, share
from .alibi import alibi_bias, alibi_slopes
from .attention import (
    SCORE_FUNCTIONS,
    SCORE_WORDS,
    AttentionTrace,
    ScoreFunction,
    add_bias,
    additive_features,
    additive_scores,
    apply_mask,
    cross_attention,
    general_scores,
    project,
    scale_scores,
    scaled_dot_product_attention,
    scores,
    self_attention,
    soft_cap,
    softmax,
    weighted_sum,
)
from .config import (
    ALL_MATRICES,
    MASK_KINDS,
    MATRICES,
    MATRIX_NAMES,
    SCORE_MATRICES,
    Config,
    check_computable,
    config_mask,
    configs_equal,
    make_config,
    number_in_range,
    run,
    validate_config,
    whole_number,
    whole_size,
    with_dimensions,
    with_query_rows,
)
from .errors import N_, AttentionInputError, Phrase, Words
from .initializers import INITIALIZERS, SCORE_STARTS, initialize, initialize_heads, resize, score_weights
from .kvcache import DecodeStep, DecodeTrace, cached_decode, decode_step
from .limits import LIMITS, Limits
from .masks import additive_mask, causal_mask, padding_mask, sliding_window_mask
from .modern import ModernTrace, RoPE, modern_attention
from .multihead import (
    MultiHeadTrace,
    head_biases,
    head_score,
    head_slice,
    kv_head_of,
    merge_heads,
    multi_head_attention,
    multi_head_cross_attention,
    projected_multi_head_attention,
    split_heads,
    valid_head_counts,
)
from .neuron import NeuronView, head_neuron, neuron_view
from .norms import rms_norm
from .online import OnlineTile, OnlineTrace, online_softmax_attention
from .presets import DEFAULT_PRESET, PRESETS, Preset, load_preset
from .rollout import attention_rollout, head_mean, rollout_row, summed_attention
from .rope import ROPE_LAYOUTS, ShiftCheck, apply_rope, rope_angles, rope_frequencies, rotation_angles, shift_check
from .tokens import embed, positional_encoding, positional_encoding_at, tokenize
from .validation import as_matrix, divisor_for

__all__ = [
    "ALL_MATRICES", "SCORE_FUNCTIONS", "SCORE_MATRICES", "ScoreFunction", "add_bias", "additive_features",
    "additive_scores",
    "cross_attention", "general_scores", "head_biases", "head_score", "multi_head_cross_attention",
    "AttentionInputError", "AttentionTrace", "Config", "MASK_KINDS", "MATRICES", "MATRIX_NAMES", "DEFAULT_PRESET",
    "INITIALIZERS", "LIMITS", "Limits", "MultiHeadTrace", "PRESETS", "Preset", "additive_mask", "analysis",
    "apply_mask", "as_matrix", "codegen", "causal_mask", "check_computable", "config_mask", "configs_equal",
    "divisor_for", "embed",
    "head_slice", "initialize", "initialize_heads", "load_preset", "make_config", "merge_heads",
    "multi_head_attention", "padding_mask",
    "positional_encoding", "positional_encoding_at", "project", "projected_multi_head_attention", "resize", "run",
    "SCORE_STARTS",
    "scale_scores", "score_weights",
    "scaled_dot_product_attention", "scores",
    "self_attention", "share", "softmax", "split_heads", "tokenize", "valid_head_counts", "validate_config",
    "weighted_sum", "whole_number", "whole_size", "number_in_range", "with_dimensions", "with_query_rows",
    # modern attention (issue 38): RoPE, RMSNorm / QK-norm, grouped-query heads
    "ROPE_LAYOUTS", "apply_rope", "kv_head_of", "rms_norm", "rope_angles", "rope_frequencies",
    "rotation_angles", "ShiftCheck", "shift_check",
    "DecodeStep", "DecodeTrace", "ModernTrace", "OnlineTile", "OnlineTrace", "RoPE", "alibi_bias", "alibi_slopes",
    "cached_decode", "decode_step", "modern_attention", "online_softmax_attention", "sliding_window_mask", "soft_cap",
    # across layers and tokens (issue 39): attention rollout (Abnar & Zuidema 2020), several queries summed
    "attention_rollout", "head_mean", "rollout_row", "summed_attention",
    # the neuron view (issue 39): one query and one key of a head, feature by feature
    "NeuronView", "head_neuron", "neuron_view",
    # texts marked for the app's catalogs (an error's hint, a preset's note, a score function's name): the app
    # translates them, attn_core (numpy only) never does
    "N_", "SCORE_WORDS", "Words", "Phrase",
]
