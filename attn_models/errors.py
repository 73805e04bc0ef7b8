"""The errors of attn_models: every message says what is wrong and what to do, for a learner to read."""

from __future__ import annotations


class ModelError(ValueError):
    """A checkpoint or an input this package refuses: not BERT-family, over the app's caps, not safetensors,
    a sentence longer than the caps allow, a layer that does not exist."""


class ModelUnavailableError(ModelError):
    """The checkpoint is not on this machine (no folder, not in the Hugging Face cache) and cannot be downloaded."""
