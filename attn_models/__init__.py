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

What the model does, and what a change does to it (an :class:`Intervention`: heads switched off, a layer replaced by
the explorer's configuration, edited or not):

>>> emb = model.embed_sentences(["A cat sat.", "A dog ran."])           # doctest: +SKIP
>>> attn_models.cosine_similarities(emb)[0, 1]                         # doctest: +SKIP
>>> off = attn_models.Intervention(ablate={(2, 5)})                     # doctest: +SKIP
>>> model.embed_sentences(["A cat sat.", "A dog ran."], intervention=off)   # doctest: +SKIP
>>> model.similarity_effects(["A cat sat.", "A dog ran."], layers=[2])  # each head of layer 2 off  # doctest: +SKIP
>>> bert.fill_mask("The cat sat on the [MASK].")[0].tokens             # a BertForMaskedLM   # doctest: +SKIP

A GPT-2-family causal language model (attn_models.gpt2): the next token, generation, every attention causal:

>>> lm = attn_models.load_causal_lm("distilgpt2")                        # doctest: +SKIP
>>> lm.next_token("The cat sat on the", temperature=0.7).tokens          # doctest: +SKIP

A T5 translator (attn_models.t5): the translation, and each output token's cross-attention over the source:

>>> t5 = attn_models.load_translator("google-t5/t5-small")                 # doctest: +SKIP
>>> t = t5.translate("The cat sat on the mat.")                           # doctest: +SKIP
>>> t.text, t.cross.shape           # [decoder layers, heads, output tokens, source tokens]   # doctest: +SKIP
>>> attn_core.run(t5.cross_config("The cat sat on the mat.", t.output_ids[:-1], layer=5))  # doctest: +SKIP
"""

from .access import (
    CAUSAL_MODEL,
    DEFAULT_MODEL,
    MULTILINGUAL_MODEL,
    TRANSLATOR_MODEL,
    Access,
    causal_model,
    check_repo_id,
    default_model,
    is_folder,
    translator_model,
)
from .checkpoint import BertConfig, config_cells, parse_config
from .encoder import EncoderOutput, erf, gelu, layer_norm, with_bias_column
from .errors import ModelError, ModelUnavailableError, NotFetchedError
from .families import FAMILIES, fetch, load, model_family
from .gpt2 import (
    DEFAULT_CAUSAL_MODEL,
    CausalEncoded,
    CausalLM,
    CausalOutput,
    Generation,
    GenStep,
    Gpt2Config,
    NextToken,
    load_causal_lm,
    parse_gpt2_config,
)
from .hub import RepoPlan, check_source, in_cache, judge_repo, repo_cached
from .intervene import Intervention, ablate_heads
from .limits import MODEL_LIMITS, ModelLimits, gpt2_resident_bytes, resident_bytes
from .mlm import MaskFill, MlmHead
from .model import Encoded, Model, cosine_similarities, load_encoder, pool, token_label
from .origin import ROLE_WORDS, KindError, Origin, OriginError, Role, expect_role, parse_origin, shown_name
from .patterns import describe_head, head_description, head_pattern
from .t5 import DecoderOutput, T5Config, Translation, Translator, load_translator, parse_t5_config

__all__ = [
    "FAMILIES", "load_encoder", "model_family", "CAUSAL_MODEL", "TRANSLATOR_MODEL", "causal_model", "translator_model",
    "DEFAULT_CAUSAL_MODEL", "CausalEncoded", "CausalLM", "CausalOutput", "GenStep", "Generation", "Gpt2Config",
    "NextToken", "gpt2_resident_bytes", "load_causal_lm", "parse_gpt2_config",
    "MODEL_LIMITS", "Access", "BertConfig", "DEFAULT_MODEL", "Encoded", "EncoderOutput", "Intervention", "MaskFill",
    "MULTILINGUAL_MODEL", "MlmHead", "Model", "ModelError", "ModelLimits", "ModelUnavailableError", "NotFetchedError",
    "RepoPlan",
    "ablate_heads", "check_repo_id", "check_source", "config_cells", "cosine_similarities", "default_model",
    "describe_head", "erf", "fetch", "gelu", "head_description", "head_pattern", "in_cache", "is_folder",
    "judge_repo", "layer_norm", "load", "parse_config", "pool", "repo_cached", "resident_bytes", "token_label",
    "with_bias_column",
    # where an explorer configuration came from (attn_models.origin), and what kind of model a family is
    "ROLE_WORDS", "KindError", "Origin", "OriginError", "Role", "expect_role", "parse_origin", "shown_name",
    # T5 (attn_models.t5): an encoder-decoder translator
    "DecoderOutput", "T5Config", "Translation", "Translator", "load_translator", "parse_t5_config",
]
