"""attn_models: a pretrained BERT-family encoder run through attn_core, in float64 numpy.

Reads ``config.json``, ``model.safetensors`` and ``tokenizer.json`` from a folder or the Hugging Face Hub (through
its cache), runs the encoder with every self-attention computed by :func:`attn_core.multi_head_attention`, and
turns one layer into an attn_core configuration the explorer can open. No torch, no transformers, no Streamlit.

>>> import attn_models
>>> model = attn_models.load()                       # doctest: +SKIP
>>> out = model.forward("The cat sat.")              # doctest: +SKIP
>>> out.attentions.shape                             # doctest: +SKIP
(6, 12, 6, 6)
>>> cfg = model.layer_config("The cat sat.", layer=2)  # doctest: +SKIP
>>> attn_core.run(cfg).heads[5].weights  # == out.attentions[2, 5]   # doctest: +SKIP
"""

from .access import DEFAULT_MODEL, Access, check_repo_id, is_folder
from .checkpoint import BertConfig, config_cells, parse_config
from .encoder import EncoderOutput, erf, gelu, layer_norm, with_bias_column
from .errors import ModelError, ModelUnavailableError, NotFetchedError
from .hub import RepoPlan, check_source, in_cache, judge_repo, repo_cached
from .limits import MODEL_LIMITS, ModelLimits, resident_bytes
from .model import Encoded, Model, fetch, load, token_label
from .patterns import describe_head, head_description, head_pattern

__all__ = [
    "MODEL_LIMITS", "Access", "BertConfig", "DEFAULT_MODEL", "Encoded", "EncoderOutput", "Model", "ModelError",
    "ModelLimits", "ModelUnavailableError", "NotFetchedError", "RepoPlan", "check_repo_id", "check_source",
    "config_cells", "describe_head", "erf", "fetch", "gelu", "head_description", "head_pattern", "in_cache",
    "is_folder", "judge_repo", "layer_norm", "load", "parse_config", "repo_cached", "resident_bytes", "token_label",
    "with_bias_column",
]
