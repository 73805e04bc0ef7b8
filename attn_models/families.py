"""Which family a checkpoint is, and reading any of them: :func:`load` reads config.json's model_type and hands the
files to the family's loader (an encoder: attn_models.model; a GPT-2: attn_models.gpt2; a T5: attn_models.t5), after
the Hub's metadata and config.json were judged by that family's caps, before the weights are downloaded."""

from __future__ import annotations

from pathlib import Path

from .access import DEFAULT_MODEL, Access
from .checkpoint import parse_json, read_capped, read_config
from .errors import N_, ModelError
from .gpt2 import CausalLM, load_causal_lm, read_gpt2_config
from .hub import CheckpointFiles, Progress, checkpoint_files
from .limits import MODEL_LIMITS
from .model import Model, load_encoder
from .t5 import Translator, load_translator, read_t5_config

#: config.json's model_type -> the family it is read as: an encoder (:class:`Model`), a causal language model
#: (attn_models.gpt2.CausalLM) or a translator (attn_models.t5.Translator)
FAMILIES = {"bert": "encoder", "roberta": "encoder", "xlm-roberta": "encoder", "gpt2": "causal", "t5": "translator"}


def model_family(path: Path) -> str:
    """The family of the checkpoint whose config.json is ``path`` (a value of :data:`FAMILIES`), or ModelError naming
    its model_type and the ones this app runs."""
    doc = parse_json(read_capped(path, "config.json", MODEL_LIMITS.config_bytes), "config.json")
    if not isinstance(doc, dict):
        raise ModelError(N_("{where}: not a JSON object."), where="config.json")
    kind = doc.get("model_type")
    if not isinstance(kind, str) or kind not in FAMILIES:
        raise ModelError(N_("config.json: model_type {kind} is not one this app runs ({types})."),
                         kind=repr(str(kind)[:40]), types=", ".join(FAMILIES))
    return FAMILIES[kind]


def read_any_config(path: Path) -> object:
    """config.json read by its family's rules (caps included): BertConfig, Gpt2Config or T5Config; or ModelError."""
    return {"encoder": read_config, "causal": read_gpt2_config, "translator": read_t5_config}[model_family(path)](path)


def fetch(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
          access: Access | None = None) -> CheckpointFiles:
    """The checkpoint's files on this machine, downloaded into the Hub cache if need be (judged from the Hub's
    metadata, then config.json first: a model over the caps is refused before its weights are downloaded, and what
    was downloaded of it is removed). :func:`load` calls it; a page may call it first, with ``progress``, to show a
    download. Raises as :func:`load`."""
    return checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_any_config,
                            access=access)


def load(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
         access: Access | None = None, local_only: bool = False) -> Model | CausalLM | Translator:
    """Read a checkpoint (``config.json``, ``model.safetensors``, ``tokenizer.json``) of the family its config.json
    names (:data:`FAMILIES`): a BERT-family encoder as an attn_models.Model (:func:`attn_models.model.load_encoder`),
    a GPT-2 as an attn_models.CausalLM, a T5 as an attn_models.Translator. Parameters and errors as
    :func:`attn_models.model.load_encoder`'s; a model_type the app does not run is refused by name before anything
    but config.json is downloaded.
    """
    files = checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_any_config,
                             access=access, local_only=local_only)
    loader = {"encoder": load_encoder, "causal": load_causal_lm, "translator": load_translator}[
        model_family(files.config)]
    return loader(files.source, cache_dir=cache_dir, access=access, local_only=True)  # judged, checked, on this machine
