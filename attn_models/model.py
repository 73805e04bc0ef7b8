"""A loaded BERT-family model: its tokenizer, its forward pass, and one layer as an explorer configuration."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_core import LIMITS, Config, make_config

from .access import DEFAULT_MODEL, Access
from .checkpoint import BertConfig, Embeddings, check_id, read_config, read_tokenizer, read_weights
from .encoder import EncoderOutput, LayerWeights, encode, layer_norm, with_bias_column
from .errors import N_, ModelError, ModelUnavailableError
from .hub import CheckpointFiles, Progress, checkpoint_files, discard, mark

CLS, SEP, PAD = "[CLS]", "[SEP]", "[PAD]"


@dataclass(frozen=True, eq=False)
class Encoded:
    """A sentence as the model reads it: tokens, their ids, token types and which are padding (length n_seq)."""

    tokens: tuple[str, ...]
    ids: np.ndarray  # int [n_seq]
    type_ids: np.ndarray  # int [n_seq]
    is_pad: np.ndarray  # bool [n_seq]


@dataclass(frozen=True, eq=False)
class Model:
    """A BERT-family encoder in float64 numpy (see :func:`load`).

    Attributes
    ----------
    name : str
        The source it was loaded from (a Hub repo id or a folder).
    config : BertConfig
    embeddings : Embeddings
    layers : tuple of LayerWeights, one per layer
    tokenizer : tokenizers.Tokenizer
        WordPiece, no truncation and no padding (the caps are checked here instead).
    load_seconds : float
        How long reading the files took.
    """

    name: str
    config: BertConfig
    embeddings: Embeddings
    layers: tuple[LayerWeights, ...]
    tokenizer: object
    load_seconds: float = 0.0

    @property
    def n_layers(self) -> int:
        return self.config.n_layers

    @property
    def n_heads(self) -> int:
        return self.config.n_heads

    # ---- tokens -------------------------------------------------------------------------------------------

    def encode(self, text: str, pad_to: int | None = None) -> Encoded:
        """The sentence's WordPiece tokens with ``[CLS]`` and ``[SEP]``, then ``[PAD]`` up to ``pad_to`` tokens.

        No length check here (:meth:`forward` checks): a page can show how long a sentence is.
        """
        if not isinstance(text, str):
            raise ModelError(N_("The sentence must be text, got {kind}."), kind=type(text).__name__)
        enc = self.tokenizer.encode(text)
        tokens, ids, types = list(enc.tokens), list(enc.ids), list(enc.type_ids)
        if not tokens or tokens[0] != CLS:  # a tokenizer.json without BERT's post-processor
            tokens, ids, types = [CLS, *tokens, SEP], [self._id(CLS), *ids, self._id(SEP)], [0, *types, 0]
        n_pad = max(0, (pad_to or 0) - len(tokens))
        if n_pad:
            tokens, ids, types = tokens + [PAD] * n_pad, ids + [self._id(PAD)] * n_pad, types + [0] * n_pad
        for token, i in zip(tokens, ids, strict=True):  # a post-processor's ids are not in the vocabulary read at load
            check_id(token, i, self.config)
        is_pad = np.arange(len(tokens)) >= len(tokens) - n_pad
        return Encoded(tuple(tokens), np.array(ids, dtype=np.intp), np.array(types, dtype=np.intp), is_pad)

    def _id(self, token: str) -> int:
        i = self.tokenizer.token_to_id(token)
        if i is None:
            raise ModelError(N_("The tokenizer has no {token} token; is it a BERT tokenizer?"), token=token)
        return i

    def tokenize(self, text: str, pad_to: int | None = None) -> list[str]:
        """The WordPiece tokens the model reads: ``[CLS]``, the sentence (``##`` pieces, ``[UNK]``), ``[SEP]``.

        ``pad_to``: append ``[PAD]`` tokens up to that many tokens.
        """
        return list(self.encode(text, pad_to).tokens)

    def check_length(self, n_seq: int) -> None:
        """ModelError when ``n_seq`` tokens are more than the app (n_seq cap) or the model's positions allow."""
        cap = self.config.max_tokens
        if n_seq > cap and cap == LIMITS.n_seq:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the cap of {most} (n_seq) "
                                "allows {cap}. Shorten it."), n=n_seq, most=LIMITS.n_seq, cap=cap)
        if n_seq > cap:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the model's {positions} "
                                "positions allow {cap}. Shorten it."), n=n_seq, positions=self.config.max_positions,
                             cap=cap)

    # ---- the forward pass ------------------------------------------------------------------------------------

    def embed(self, enc: Encoded) -> np.ndarray:  # -> [n_seq, d_model]
        """LayerNorm(word + token type + position embeddings), in float64."""
        e, n = self.embeddings, len(enc.tokens)
        x = e.word[enc.ids].astype(np.float64) + e.token_type[enc.type_ids]  # [n_seq, d_model]
        x = x + e.position[:n]
        return layer_norm(x, e.ln_g, e.ln_b, self.config.eps)

    def run(self, enc: Encoded, layers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(hidden_states [k + 1, n_seq, d_model], attentions [k, n_heads, n_seq, n_seq]) of the first k layers."""
        self.check_length(len(enc.tokens))
        return encode(self.embed(enc), self.layers[:layers], self.n_heads, enc.is_pad, self.config.eps)

    def forward(self, text: str, pad_to: int | None = None) -> EncoderOutput:
        """The whole encoder on one sentence (float64); ``attentions`` and ``hidden_states`` as transformers names them.

        Raises ModelError for a sentence longer than the caps allow.
        """
        enc = self.encode(text, pad_to)
        hidden, attentions = self.run(enc)
        return EncoderOutput(enc.tokens, attentions, hidden, enc.is_pad)

    # ---- one layer in the explorer -------------------------------------------------------------------------------

    def layer_config(self, text: str, layer: int, pad_to: int | None = None, *, head: int = 0,
                     hidden: np.ndarray | None = None) -> Config:
        """Layer ``layer``'s self-attention on ``text`` as an attn_core configuration.

        X is the layer's input (``hidden_states[layer]``) with a constant-1 column appended (column d_model: the
        bias feature); W_Q, W_K, W_V are the projections (transposed) with their bias as the last row; W_O the
        attention output weights (its bias b_O is not part of attention: ``run(cfg).output + b_O`` is the model's
        attention output); the model's n_heads; scaled by √d_k; a padding mask when there is padding.
        ``run(cfg)`` gives this layer's attention weights, head by head, bit for bit as :meth:`forward`.
        ``origin`` records the model, layer, sentence, padding and ``head`` (the head the learner opened).

        ``hidden``: this sentence's ``hidden_states[layer]`` when already computed (else it is computed here).
        """
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
            raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=layer,
                             last=self.n_layers - 1)
        enc = self.encode(text, pad_to)
        if hidden is None:
            hidden = self.run(enc, layers=int(layer))[0][layer]  # [n_seq, d_model]
        w = self.layers[layer]
        padded = bool(enc.is_pad.any())
        return make_config(
            [token_label(t) for t in enc.tokens], with_bias_column(hidden), w.w_q, w.w_k, w.w_v, w.w_o,
            n_heads=self.n_heads, scale="sqrt_dk", mask_kind="padding" if padded else "none",
            is_pad=tuple(bool(p) for p in enc.is_pad),
            origin={"model": self.name, "layer": int(layer), "sentence": text, "pad_to": int(pad_to or 0),
                    "head": int(head), "bias_column": self.config.d_model},
        )

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of layer ``layer``: the model's attention output is ``concat @ W_O + b_O``."""
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
            raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=layer,
                             last=self.n_layers - 1)
        return self.layers[layer].b_o


def token_label(token: str) -> str:
    """A token as an explorer label (labels are at most LIMITS.token_chars characters).

    >>> token_label("##ing"), len(token_label("x" * 100))
    ('##ing', 40)
    """
    cap = LIMITS.token_chars
    return token if len(token) <= cap else token[: cap - 1] + "…"


def fetch(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
          access: Access | None = None) -> CheckpointFiles:
    """The checkpoint's files on this machine, downloaded into the Hub cache if need be (judged from the Hub's
    metadata, then config.json first: a model over the caps is refused before its weights are downloaded, and what
    was downloaded of it is removed). :func:`load` calls it; a page may call it first, with ``progress``, to show a
    download. Raises as :func:`load`."""
    return checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_config, access=access)


def load(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
         access: Access | None = None, local_only: bool = False) -> Model:
    """Read a BERT-family checkpoint (``config.json``, ``model.safetensors``, ``tokenizer.json``).

    Parameters
    ----------
    source : str
        A folder on this machine, or a Hugging Face Hub repo id. A repo's files come from huggingface_hub's cache;
        what is missing is downloaded into it (not with ``HF_HUB_OFFLINE=1``).
    cache_dir : path, optional
        Another Hub cache than the standard one.
    progress : callable, optional
        ``progress(file name, bytes done, bytes in all or None)`` while a file downloads.
    access : Access, optional
        What may be loaded (attn_models.Access; default: anything within the caps).
    local_only : bool
        Never download: a repo not in the cache raises NotFetchedError.

    Raises
    ------
    ModelUnavailableError
        Not on this machine and not downloadable (offline, no network).
    NotFetchedError
        ``local_only`` and the repo is not in the cache.
    ModelError
        Not a BERT-family checkpoint, over the app's caps (the message names the file or field and the cap),
        malformed (the message names the file), or only a pickle. A repo the app downloaded is then removed from
        the cache.
    """
    start = time.perf_counter()
    files = checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_config,
                             access=access, local_only=local_only)
    try:
        cfg = read_config(files.config)
        embeddings, layers = read_weights(files.weights, cfg)
        tokenizer = read_tokenizer(files.tokenizer, cfg)
    except ModelUnavailableError:
        raise
    except ModelError:
        if files.from_hub:
            discard(files.source, cache_dir)
        raise
    if files.from_hub:
        mark(files.source, cache_dir)  # its last use, for the disk budget
    return Model(files.source, cfg, embeddings, layers, tokenizer, time.perf_counter() - start)
