"""attn_models: pretrained checkpoints of several families run through attn_core, in float64 numpy.

Reads ``config.json``, ``model.safetensors`` and ``tokenizer.json`` (a BERT's ``vocab.txt`` in its place) from a
folder or the Hugging Face Hub (through its cache, judged before download), runs every attention of the model through
attn_core's public functions, and turns a layer (or a head) into an attn_core configuration the explorer can open.
No torch, no transformers, no Streamlit.

The modules, each importing only those listed before it (tests/core/test_imports.py checks there is no circle):

- ``errors``: ModelError and its kinds, each message an N_ template the app translates;
- ``limits``: the caps on a checkpoint (MODEL_LIMITS), and the refusal of a file over its cap;
- ``access``: which models a server offers (the operator's environment variables) and each role's default model;
- ``origin``: where an explorer configuration came from (Origin, parse_origin), the roles, expect_role;
- ``reader``: capped reading of JSON and model.safetensors (its header, then one tensor getter), config.json's
  fields and the one caps loop;
- ``tokenizer``: tokenizer.json, or a BERT's vocab.txt as WordPiece; a token as an explorer label;
- ``ops``: the numerical stages the families share (GELU both ways, LayerNorm, RMS norm, the bias column, a
  product with a weight kept in its checkpoint's dtype, the tied logits, the top words);
- ``causal``: what every causal language model shares (CausalModel: tokens, the forward pass's logits, the next
  token, generation on a KVCache, which heads matter, the logit lens; NextToken, Generation, LogitLens and the other
  results), GPT-2's and a Llama's alike;
- ``kv``: KVCache, a generation's keys and values so far (one per generate/translate call), so a new token's queries
  attend to them instead of the whole text running again;
- ``intervene``: Intervention, and ``attend``, the one intervention point of every attention (each head's output
  before W_O, as TransformerLens's hook_z; with a KVCache, on the new tokens' rows), and which interventions a cache
  keeps exact (``cacheable``);
- ``hub``: a checkpoint's files from a folder or the Hub's cache, judged before download;
- ``patterns``: what a head mostly does, in words;
- ``pretrained``: the base of each family's loaded model (its name and config; family, n_layers, n_heads);
- ``bert``, ``gpt2``, ``llama``, ``t5``: one module per family (config and caps, tensor names, weights, forward pass,
  heads, the loaded model's class and its loader), importing the shared modules above, never each other;
- ``family``: the interface every loaded model satisfies (LoadedModel) and the registry of families (FAMILIES,
  model_family, fetch, load).

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
>>> mlm = attn_models.load(attn_models.MASKED_MODEL)                    # a BertForMaskedLM   # doctest: +SKIP
>>> mlm.fill_mask("The cat sat on the [MASK].")[0].tokens               # doctest: +SKIP

A GPT-2-family causal language model (attn_models.gpt2): the next token, generation (on a key/value cache: each
new token's row alone), every attention causal:

>>> lm = attn_models.load_causal_lm("distilgpt2")                        # doctest: +SKIP
>>> lm.next_token("The cat sat on the", temperature=0.7).tokens          # doctest: +SKIP
>>> lm.generate("The cat sat on the", 20).text                           # doctest: +SKIP

A Llama-family model (attn_models.llama: Llama, SmolLM, Mistral, Qwen 2: RMSNorm, RoPE, grouped-query heads, SwiGLU)
behind the same interface; its query heads report the key/value head they share:

>>> smol = attn_models.load("HuggingFaceTB/SmolLM2-135M")                # doctest: +SKIP
>>> smol.n_heads, smol.n_kv_heads, [smol.kv_head(h) for h in range(9)]   # doctest: +SKIP
(9, 3, [0, 0, 0, 1, 1, 1, 2, 2, 2])

A T5 translator (attn_models.t5): the translation, and each output token's cross-attention over the source:

>>> t5 = attn_models.load_translator("google-t5/t5-small")                 # doctest: +SKIP
>>> t = t5.translate("The cat sat on the mat.")                           # doctest: +SKIP
>>> t.text, t.cross.shape           # [decoder layers, heads, output tokens, source tokens]   # doctest: +SKIP
>>> attn_core.run(t5.cross_config("The cat sat on the mat.", t.output_ids[:-1], layer=5))  # doctest: +SKIP
"""

from .access import (
    CAUSAL_MODEL,
    DEFAULT_MODEL,
    MASKED_MODEL,
    MULTILINGUAL_MODEL,
    TRANSLATOR_MODEL,
    Access,
    causal_model,
    check_repo_id,
    default_model,
    is_folder,
    masked_model,
    translator_model,
)
from .bert import (
    BertConfig,
    Encoded,
    EncoderOutput,
    MaskFill,
    MlmHead,
    Model,
    config_cells,
    cosine_similarities,
    load_encoder,
    parse_config,
    pool,
    resident_bytes,
)
from .causal import LogitLens
from .errors import ModelError, ModelUnavailableError, NotFetchedError
from .family import FAMILIES, FamilyConfig, LoadedModel, fetch, load, model_family
from .gpt2 import (
    DEFAULT_CAUSAL_MODEL,
    CausalEncoded,
    CausalLM,
    CausalOutput,
    Generation,
    GenStep,
    Gpt2Config,
    NextToken,
    gpt2_resident_bytes,
    load_causal_lm,
    parse_gpt2_config,
)
from .hub import FOLDER_ADVICE, RepoPlan, check_source, in_cache, judge_repo, repo_cached
from .intervene import Intervention, ablate_heads, cacheable
from .kv import KVCache
from .limits import MODEL_LIMITS, ModelLimits
from .llama import LLAMA_MODEL, LlamaConfig, LlamaLM, llama_resident_bytes, load_llama, parse_llama_config
from .ops import erf, gelu, layer_norm, with_bias_column
from .origin import ROLE_WORDS, KindError, Origin, OriginError, Role, expect_role, parse_origin, shown_name
from .patterns import describe_head, head_description, head_pattern
from .t5 import DecoderOutput, T5Config, Translation, Translator, load_translator, parse_t5_config
from .tokenizer import token_label

__all__ = [
    # the interface and the registry of families (attn_models.family)
    "FAMILIES", "FamilyConfig", "LoadedModel", "fetch", "load", "model_family",
    # the defaults and what a server offers (attn_models.access)
    "Access", "CAUSAL_MODEL", "DEFAULT_MODEL", "MASKED_MODEL", "MULTILINGUAL_MODEL", "TRANSLATOR_MODEL",
    "causal_model", "check_repo_id", "default_model", "is_folder", "masked_model", "translator_model",
    # errors, caps, the Hub
    "FOLDER_ADVICE", "MODEL_LIMITS", "ModelError", "ModelLimits", "ModelUnavailableError", "NotFetchedError",
    "RepoPlan", "check_source", "in_cache", "judge_repo", "repo_cached",
    # BERT, RoBERTa, XLM-R (attn_models.bert)
    "BertConfig", "Encoded", "EncoderOutput", "MaskFill", "MlmHead", "Model", "config_cells", "cosine_similarities",
    "load_encoder", "parse_config", "pool", "resident_bytes",
    # GPT-2 (attn_models.gpt2): a causal language model
    "DEFAULT_CAUSAL_MODEL", "CausalEncoded", "CausalLM", "CausalOutput", "GenStep", "Generation", "Gpt2Config",
    "NextToken", "gpt2_resident_bytes", "load_causal_lm", "parse_gpt2_config",
    # what every causal language model reads (attn_models.causal): the logit lens
    "LogitLens",
    # Llama, SmolLM, Mistral, Qwen 2 (attn_models.llama): a causal language model with RoPE and grouped-query heads
    "LLAMA_MODEL", "LlamaConfig", "LlamaLM", "llama_resident_bytes", "load_llama", "parse_llama_config",
    # T5 (attn_models.t5): an encoder-decoder translator
    "DecoderOutput", "T5Config", "Translation", "Translator", "load_translator", "parse_t5_config",
    # interventions, a generation's key/value cache, shared stages, labels, what a head does
    "Intervention", "ablate_heads", "cacheable", "KVCache", "erf", "gelu", "layer_norm", "with_bias_column",
    "token_label", "describe_head", "head_description", "head_pattern",
    # where an explorer configuration came from (attn_models.origin), and what kind of model a family is
    "ROLE_WORDS", "KindError", "Origin", "OriginError", "Role", "expect_role", "parse_origin", "shown_name",
]
