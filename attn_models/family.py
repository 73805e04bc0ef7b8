"""The one interface of every model family, and the registry of the families: what the app may ask any loaded model
(:class:`LoadedModel`), which family a checkpoint is (:data:`FAMILIES`, :func:`model_family`), and reading one
(:func:`fetch`, :func:`load`).

Each family is one module holding only its own specifics (attn_models.bert, attn_models.gpt2, attn_models.llama,
attn_models.t5); none
imports another. This module imports them all and nothing imports it but the package itself.

>>> import attn_models
>>> model = attn_models.load("distilbert/distilgpt2")                 # doctest: +SKIP
>>> isinstance(model, LoadedModel), model.role, model.family          # doctest: +SKIP
(True, 'causal', 'gpt2')
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from attn_core import Config

from .access import DEFAULT_MODEL, Access
from .bert import Model, load_encoder, read_config
from .errors import N_
from .gpt2 import CausalLM, load_causal_lm, read_gpt2_config
from .hub import CheckpointFiles, Progress, checkpoint_files
from .intervene import Intervention
from .llama import LlamaLM, load_llama, read_llama_config
from .origin import Origin, Role
from .reader import Fields, read_json
from .t5 import Translator, load_translator, read_t5_config


@runtime_checkable
class FamilyConfig(Protocol):
    """What every family's config says of the model's size (BertConfig, Gpt2Config, T5Config)."""

    @property
    def n_layers(self) -> int: ...  # the layers (a T5: its encoder's; its decoder's are n_decoder_layers)

    @property
    def n_heads(self) -> int: ...

    @property
    def d_model(self) -> int: ...


@runtime_checkable
class LoadedModel(Protocol):
    """The questions the app asks a loaded model of any family (attn_models.Model, CausalLM, Translator), and nothing
    else: never its class, never an origin's dict keys.

    Attributes
    ----------
    name : str
        The source it was loaded from (a Hub repo id, or a folder on the server).
    role : "encoder", "causal" or "translator"
        What it does: the page that reads it (attn_models.origin.Role).
    family : str
        config.json's model_type ("bert", "roberta", "xlm-roberta", "gpt2", "llama", "mistral", "qwen2", "t5").
    config : FamilyConfig
        Its size: n_layers, n_heads, d_model.
    n_kv_heads : int
        A layer's key/value heads: n_heads, or fewer when query heads share them (grouped-query attention).
    rope_base : float or None
        RoPE's base when the attention turns queries and keys by their positions (a Llama family's), else None.
    window : int or None
        The attention's sliding window (a Mistral's), else None.
    """

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> Role: ...

    @property
    def family(self) -> str: ...

    @property
    def config(self) -> FamilyConfig: ...

    @property
    def n_kv_heads(self) -> int: ...

    @property
    def rope_base(self) -> float | None: ...

    @property
    def window(self) -> int | None: ...

    def kv_head(self, head: int) -> int:
        """The key/value head query ``head`` reads (itself without grouped-query attention): a page groups the heads
        that share one by it."""
        ...

    def config_for(self, origin: Origin) -> Config:
        """The explorer configuration ``origin`` names (a layer, or a head, on a text), as the model computes it."""
        ...

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of ``layer``: the layer's attention output is ``concat @ W_O + b_O`` (zeros where there is none)."""
        ...

    def forward(self, text: str, /, *, intervention: Intervention | None = None) -> object:
        """The whole model on ``text`` (float64), with or without an intervention: its attentions and hidden states
        (and logits, for a language model), as transformers names them."""
        ...


#: config.json's model_type -> the family's role: an encoder (attn_models.Model), a causal language model
#: (attn_models.CausalLM for GPT-2, attn_models.LlamaLM for Llama, Mistral, Qwen 2) or a translator
#: (attn_models.Translator)
FAMILIES: dict[str, Role] = {"bert": "encoder", "roberta": "encoder", "xlm-roberta": "encoder", "gpt2": "causal",
                             "llama": "causal", "mistral": "causal", "qwen2": "causal", "t5": "translator"}
#: each model_type's config reader (caps included) and loader
READERS = {"bert": read_config, "roberta": read_config, "xlm-roberta": read_config, "gpt2": read_gpt2_config,
           "llama": read_llama_config, "mistral": read_llama_config, "qwen2": read_llama_config,
           "t5": read_t5_config}
LOADERS = {"bert": load_encoder, "roberta": load_encoder, "xlm-roberta": load_encoder, "gpt2": load_causal_lm,
           "llama": load_llama, "mistral": load_llama, "qwen2": load_llama, "t5": load_translator}


def model_type(path: Path) -> str:
    """config.json's model_type at ``path``, one of :data:`FAMILIES`, or ModelError naming it and the ones this app
    runs."""
    return Fields(read_json(path)).kind(tuple(FAMILIES), N_("config.json: model_type {kind} is not one this app runs "
                                                            "({types})."))


def model_family(path: Path) -> Role:
    """The family's role of the checkpoint whose config.json is ``path`` (a value of :data:`FAMILIES`), or
    ModelError naming its model_type and the ones this app runs."""
    return FAMILIES[model_type(path)]


def read_any_config(path: Path) -> object:
    """config.json read by its family's rules (caps included): BertConfig, Gpt2Config, LlamaConfig or T5Config; or
    ModelError."""
    return READERS[model_type(path)](path)


def fetch(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
          access: Access | None = None) -> CheckpointFiles:
    """The checkpoint's files on this machine, downloaded into the Hub cache if need be (judged from the Hub's
    metadata, then config.json first: a model over the caps is refused before its weights are downloaded, and what
    was downloaded of it is removed). :func:`load` calls it; a page may call it first, with ``progress``, to show a
    download. Raises as :func:`load`."""
    return checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_any_config,
                            access=access)


def load(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
         access: Access | None = None, local_only: bool = False) -> Model | CausalLM | LlamaLM | Translator:
    """Read a checkpoint (``config.json``, ``model.safetensors``, ``tokenizer.json`` or a BERT's ``vocab.txt``) of
    the family its config.json names (:data:`FAMILIES`): a BERT-family encoder as an attn_models.Model
    (:func:`attn_models.bert.load_encoder`), a GPT-2 as an attn_models.CausalLM, a Llama, Mistral or Qwen 2 as an
    attn_models.LlamaLM, a T5 as an attn_models.Translator;
    each a :class:`LoadedModel`. Parameters and errors as :func:`attn_models.bert.load_encoder`'s; a model_type the
    app does not run is refused by name before anything but config.json is downloaded.
    """
    files = checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_any_config,
                             access=access, local_only=local_only)
    loader = LOADERS[model_type(files.config)]
    return loader(files.source, cache_dir=cache_dir, access=access, local_only=True)  # judged, checked, on this machine
