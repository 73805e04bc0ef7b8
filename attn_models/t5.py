"""T5 (transformers' ``modeling_t5.py``), an encoder-decoder translator, in float64 numpy: config.json and its caps,
the tensors' names, the weights, the forward pass, the LM head, and a loaded :class:`Translator`
(:func:`load_translator`); every attention through attn_core.

T5 as transformers runs it (same stage names: layer_norm, SelfAttention, EncDecAttention, DenseReluDense,
final_layer_norm, lm_head):

    encoder:  h = E[ids];  per block:  h += SelfAttn(RMS(h), bias = B_enc);  h += FF(RMS(h));   X = RMS(h)
    decoder:  g = E[[pad] + out];  per block:  g += SelfAttn(RMS(g), causal, bias = B_dec);
              g += CrossAttn(queries RMS(g), keys and values X);  g += FF(RMS(g))
    logits = RMS(g) · d_model^-½ (when the LM head is tied to E) @ Eᵀ

- RMS(x) = x / √(mean(x²) + eps) · g: no mean subtracted, no bias (attn_models.ops.rms_norm).
- No projection has a bias, and the scores are not divided by √d_k (attn_core's ``scale="none"``).
- B: a learned bias per head and relative distance (``relative_attention_bias`` [num_buckets, n_heads] of block 0,
  shared by every block of its stack), added to the scores before the mask: attn_core's additive score bias.
  Distances fall in buckets (:func:`relative_position_bucket`): exact near, logarithmic far; both directions in the
  encoder, only backwards in the decoder. The cross-attention has no bias.
- FF: ReLU(x Wᵢ) W_o (t5-small), or GELU_tanh(x Wᵢ₀) ⊙ (x Wᵢ₁) W_o ("gated-gelu": T5 v1.1, flan-t5).
- Every attention (the encoder's and decoder's self-attentions, the decoder's EncDecAttention) runs through
  attn_models.intervene.attend (:func:`attention`); an Intervention's (layer, head) pairs name the decoder's
  cross-attention heads, and its configuration a decoder layer's cross-attention.

Weights stay in the checkpoint's dtype (t5-small's float32: 242 MB; in float64 it would be 484 MB, over the memory
cap) and each matrix is made float64 when a layer runs, whole or a slab of rows at a time (attn_models.ops.product; a
float32 → float64 cast is exact): the arithmetic is float64. A translation runs the encoder once and the decoder on
a key/value cache (attn_models.kv): each step the newest input's row alone (:meth:`Translator.translate`).

One difference from transformers, on purpose: its ``T5LayerNorm`` computes the variance in float32 even in a float64
model (``hidden_states.to(torch.float32).pow(2).mean(-1)``), which moves its float64 logits by up to 2e-5 (on the
tests' tiny checkpoints; the greedy tokens stay the same). Here the variance is float64;
tests/models/make_t5_reference.py computes transformers' reference with that one line in float64, and records how
far the unchanged transformers is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from attn_core import LIMITS, AttentionInputError, Config, Phrase, make_config, softmax

from .access import TRANSLATOR_MODEL, Access
from .errors import N_, ModelError
from .hub import Progress, opened
from .intervene import Intervention, Site, attend, check_layer, each_head_off, edits_refused
from .kv import KVCache
from .limits import MODEL_LIMITS
from .ops import f64, gelu_tanh, product, rms_norm, tied_logits
from .origin import Origin, Role, expect_role
from .pretrained import Pretrained
from .reader import Fields, Header, check_field_caps, check_memory, check_tensors, read_json, tensors
from .reader import read_header as read_safetensors_header
from .tokenizer import TOKENIZER, check_id, token_label

T5_TYPES = ("t5",)
FF_KINDS = ("relu", "gated-gelu")
T5_MODEL = TRANSLATOR_MODEL  # google-t5/t5-small: the translator a page offers unless the operator names another
PREFIX = "translate English to French: "  # t5-small's task prefix (transformers' translation_en_to_fr pipeline)
MAX_NEW = 64  # the most tokens a translation may generate
#: the attentions of a T5 layer, as a message names them (marked for the app's catalogs)
SIDE_WORDS = {"encoder": N_("encoder self-attention"), "decoder": N_("decoder self-attention"),
              "cross": N_("decoder cross-attention")}


# ---- config --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class T5Config:
    """The hyper-parameters of a T5 (from config.json; transformers' names in brackets).

    n_layers, n_decoder_layers [num_layers, num_decoder_layers], n_heads [num_heads], d_model, d_kv (per head),
    d_ff, vocab_size, num_buckets, max_distance [relative_attention_num_buckets, relative_attention_max_distance],
    eps [layer_norm_epsilon], ff [feed_forward_proj: "relu" or "gated-gelu"], tied [tie_word_embeddings: the LM head
    is the shared embedding and its input is scaled by d_model^-½], pad_id, eos_id, start_id
    [decoder_start_token_id].
    """

    n_layers: int
    n_decoder_layers: int
    n_heads: int
    d_model: int
    d_kv: int
    d_ff: int
    vocab_size: int
    num_buckets: int
    max_distance: int
    eps: float
    ff: str = "relu"
    tied: bool = True
    pad_id: int = 0
    eos_id: int = 1
    start_id: int = 0
    model_type: ClassVar[str] = "t5"  # config.json's
    tokenizer_files: ClassVar[tuple[str, ...]] = (TOKENIZER,)  # sentencepiece (Unigram): tokenizer.json only

    @property
    def inner(self) -> int:
        """n_heads · d_kv: the width of W_Q, W_K, W_V (and the rows of W_O)."""
        return self.n_heads * self.d_kv


#: config.json field -> (T5Config attribute, ModelLimits cap): every field that sizes the model
FIELD_CAPS = {
    "num_layers": ("n_layers", "n_layers"),
    "num_decoder_layers": ("n_decoder_layers", "n_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "d_ff": ("d_ff", "d_ff"),
    "relative_attention_num_buckets": ("num_buckets", "relative_buckets"),
    "relative_attention_max_distance": ("max_distance", "relative_distance"),
}


def t5_resident_bytes(cfg: T5Config, itemsize: int = 4) -> int:
    """Bytes the loaded model takes: every weight in its checkpoint's dtype (``itemsize`` bytes a number).

    >>> small = T5Config(6, 6, 8, 512, 64, 2048, 32128, 32, 128, 1e-6)   # t5-small
    >>> round(t5_resident_bytes(small) / 1e6, 1)
    242.0
    """
    d, inner, ff = cfg.d_model, cfg.inner, cfg.d_ff
    ff_numbers = (3 if cfg.ff == "gated-gelu" else 2) * d * ff
    attention = 4 * d * inner
    encoder = cfg.n_layers * (attention + ff_numbers + 2 * d)
    decoder = cfg.n_decoder_layers * (2 * attention + ff_numbers + 3 * d)
    embeddings = cfg.vocab_size * d * (1 if cfg.tied else 2)
    return itemsize * (embeddings + encoder + decoder + 2 * cfg.num_buckets * cfg.n_heads + 2 * d)


def parse_t5_config(doc: object, where: str = "config.json") -> T5Config:
    """A :class:`T5Config` from config.json's dict, or ModelError naming the field: not T5, a feed-forward this module
    does not run, or over the app's caps (attn_models.MODEL_LIMITS, attn_core.LIMITS).

    >>> c = parse_t5_config({"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
    ...                      "num_heads": 8, "vocab_size": 32128})
    >>> c.n_decoder_layers, c.num_buckets, c.max_distance, c.tied, c.inner
    (6, 32, 128, True, 512)
    """
    fields = Fields(doc, where)
    fields.kind(T5_TYPES, N_("{where}: model_type {kind} is not T5; the translator runs model_type {types}."))
    ff = fields.get("feed_forward_proj", "relu")
    if ff not in FF_KINDS:
        raise ModelError(N_("{where}: feed_forward_proj {ff}: only {kinds} are run here."), where=where,
                         ff=repr(str(ff)[:40]), kinds=", ".join(FF_KINDS))
    if fields.get("is_encoder_decoder", True) is not True or fields.get("is_decoder"):
        raise ModelError(N_("{where}: not an encoder-decoder; the translator runs T5's encoder and decoder."),
                         where=where)
    whole = fields.whole
    eps = fields.small("layer_norm_epsilon", 1e-6)
    tied = fields.get("tie_word_embeddings", True)
    if not isinstance(tied, bool):
        raise ModelError(N_("{where}: tie_word_embeddings must be true or false, got {value}."), where=where,
                         value=str(tied)[:40])
    n_layers = whole("num_layers")
    pad = whole("pad_token_id", 0, least=0)
    cfg = T5Config(
        n_layers=n_layers, n_decoder_layers=whole("num_decoder_layers", n_layers), n_heads=whole("num_heads"),
        d_model=whole("d_model"), d_kv=whole("d_kv"), d_ff=whole("d_ff"), vocab_size=whole("vocab_size"),
        num_buckets=whole("relative_attention_num_buckets", 32, least=4),
        max_distance=whole("relative_attention_max_distance", 128, least=2), eps=eps, ff=ff, tied=tied,
        pad_id=pad, eos_id=whole("eos_token_id", 1, least=0), start_id=whole("decoder_start_token_id", pad, least=0),
    )
    check_t5_caps(cfg, where)
    return cfg


def check_t5_caps(cfg: T5Config, where: str = "config.json", itemsize: int = 4) -> None:
    """ModelError naming the config field over its cap, the attn_core cap one attention would exceed, or the memory
    the whole model would take (weights of ``itemsize`` bytes)."""
    check_field_caps(cfg, FIELD_CAPS, where)
    if cfg.max_distance <= cfg.num_buckets // 2:
        raise ModelError(N_("{where}: relative_attention_max_distance {distance} must be more than half of "
                            "relative_attention_num_buckets ({half})."), where=where, distance=cfg.max_distance,
                         half=cfg.num_buckets // 2)
    for key, value in (("eos_token_id", cfg.eos_id), ("pad_token_id", cfg.pad_id),
                       ("decoder_start_token_id", cfg.start_id)):
        if value >= cfg.vocab_size:
            raise ModelError(N_("{where}: {key} {value} is not below vocab_size {vocab}."), where=where, key=key,
                             value=value, vocab=cfg.vocab_size)
    if cfg.d_model > LIMITS.d_model:
        raise ModelError(N_("{where}: d_model {d} columns of X is over the cap of {cap} (d_model)."), where=where,
                         d=cfg.d_model, cap=LIMITS.d_model)
    if cfg.inner > LIMITS.width:
        raise ModelError(N_("{where}: num_heads × d_kv = {width} columns of W_Q is over the cap of {cap} (widths)."),
                         where=where, width=cfg.inner, cap=LIMITS.width)
    if cfg.n_heads > LIMITS.n_heads:
        raise ModelError(N_("{where}: num_heads {heads} is over the cap of {cap} (heads)."), where=where,
                         heads=cfg.n_heads, cap=LIMITS.n_heads)
    check_memory(t5_resident_bytes(cfg, itemsize), MODEL_LIMITS.resident_bytes, where)


def read_t5_config(path: Path) -> T5Config:
    """config.json (at most MODEL_LIMITS.config_bytes) as a :class:`T5Config`, or ModelError."""
    return parse_t5_config(read_json(path))


# ---- relative positions ---------------------------------------------------------------------------------------


def relative_position_bucket(relative: np.ndarray, bidirectional: bool, num_buckets: int,
                             max_distance: int) -> np.ndarray:  # int [...] -> int [...] in 0 … num_buckets − 1
    """The bucket of each relative position (key position − query position), as transformers'
    ``T5Attention._relative_position_bucket`` (its logarithm in float32, as there).

    Bidirectional: half the buckets for keys after the query. Distances under ``max_exact`` (a quarter of the
    buckets bidirectional, half causal) get a bucket each; farther ones share buckets logarithmically up to
    ``max_distance``, and all beyond share the last. Causal: keys after the query all fall in bucket 0 (the mask
    hides them anyway).

    >>> relative_position_bucket(np.arange(-6, 7), True, 8, 16).tolist()
    [3, 2, 2, 2, 2, 1, 0, 5, 6, 6, 6, 6, 7]
    >>> relative_position_bucket(np.arange(-6, 3), False, 8, 16).tolist()
    [5, 4, 4, 3, 2, 1, 0, 0, 0]
    """
    rel = np.asarray(relative, dtype=np.int64)
    buckets = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    far_rel = np.maximum(rel, max_exact).astype(np.float32)  # the small distances take the other branch
    far = np.log(far_rel / np.float32(max_exact)) / np.float32(math.log(max_distance / max_exact))
    far = max_exact + (far * np.float32(num_buckets - max_exact)).astype(np.int64)
    far = np.minimum(np.maximum(far, max_exact), num_buckets - 1)
    return buckets + np.where(rel < max_exact, rel, far)


def position_bias(table: np.ndarray, n_q: int, n_k: int, bidirectional: bool, num_buckets: int,
                  max_distance: int) -> np.ndarray:  # [num_buckets, n_heads] -> [n_heads, n_q, n_k]
    """The additive score bias of every head: ``table[bucket(key − query)]``, float64."""
    rel = np.arange(n_k)[None, :] - np.arange(n_q)[:, None]  # [n_q, n_k]
    buckets = relative_position_bucket(rel, bidirectional, num_buckets, max_distance)  # [n_q, n_k]
    return np.ascontiguousarray(np.asarray(table, dtype=np.float64)[buckets].transpose(2, 0, 1))


# ---- weights ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class T5Attention:
    """One attention's projections in the checkpoint's dtype, laid out for ``x @ w``: w_q, w_k, w_v [d_model, inner],
    w_o [inner, d_model]. :meth:`matrices` gives them in float64."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return f64(self.w_q), f64(self.w_k), f64(self.w_v), f64(self.w_o)


@dataclass(frozen=True, eq=False)
class T5Block:
    """One block: self-attention (its RMS norm ``ln_self``), the decoder's cross-attention (``ln_cross``; None in
    the encoder), the feed-forward (``ln_ff``; ``wi`` [d_model, d_ff], ``wi_1`` the gate's second input or None,
    ``wo`` [d_ff, d_model])."""

    ln_self: np.ndarray
    self_attn: T5Attention
    ln_ff: np.ndarray
    wi: np.ndarray
    wo: np.ndarray
    wi_1: np.ndarray | None = None
    ln_cross: np.ndarray | None = None
    cross_attn: T5Attention | None = None


@dataclass(frozen=True, eq=False)
class T5Weights:
    """shared [vocab, d_model], the blocks, each stack's relative-position table [num_buckets, n_heads] and final
    norm, and the LM head [vocab, d_model] when untied (None: the shared embedding)."""

    shared: np.ndarray
    encoder: tuple[T5Block, ...]
    decoder: tuple[T5Block, ...]
    encoder_bias: np.ndarray
    decoder_bias: np.ndarray
    encoder_norm: np.ndarray
    decoder_norm: np.ndarray
    lm_head: np.ndarray | None = None


SHARED, LM_HEAD = "shared.weight", "lm_head.weight"
SHARED_ALIASES = (SHARED, "encoder.embed_tokens.weight", "decoder.embed_tokens.weight")


def t5_tensors(cfg: T5Config) -> dict[str, tuple[int, ...]]:
    """Every tensor the translator reads (T5ForConditionalGeneration's names, but the shared embedding, which
    :func:`read_t5_header` finds under any of SHARED_ALIASES) and its stored shape ([out, in] for a projection)."""
    d, inner, ff = cfg.d_model, cfg.inner, cfg.d_ff
    shapes: dict[str, tuple[int, ...]] = {}
    for side, n in (("encoder", cfg.n_layers), ("decoder", cfg.n_decoder_layers)):
        for i in range(n):
            p = f"{side}.block.{i}.layer"
            attns = [("0", "SelfAttention")] + ([("1", "EncDecAttention")] if side == "decoder" else [])
            for j, name in attns:
                for m in "qkv":
                    shapes[f"{p}.{j}.{name}.{m}.weight"] = (inner, d)
                shapes[f"{p}.{j}.{name}.o.weight"] = (d, inner)
                shapes[f"{p}.{j}.layer_norm.weight"] = (d,)
            f = f"{p}.{len(attns)}"
            for m in ("wi_0", "wi_1") if cfg.ff == "gated-gelu" else ("wi",):
                shapes[f"{f}.DenseReluDense.{m}.weight"] = (ff, d)
            shapes[f"{f}.DenseReluDense.wo.weight"] = (d, ff)
            shapes[f"{f}.layer_norm.weight"] = (d,)
        shapes[f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = (cfg.num_buckets, cfg.n_heads)
        shapes[f"{side}.final_layer_norm.weight"] = (d,)
    if not cfg.tied:
        shapes[LM_HEAD] = (cfg.vocab_size, d)
    return shapes


def read_t5_header(path: Path, cfg: T5Config) -> Header:
    """Check model.safetensors' header against ``cfg`` before any tensor is read (every tensor there, its shape,
    dtype and bytes; then the memory with the real dtype). The shared embedding is the first of SHARED_ALIASES the
    file has."""
    header = read_safetensors_header(path)
    shared = next((k for k in SHARED_ALIASES if k in header.names), None)
    if shared is not None:
        header.names[SHARED] = shared
    missing = N_("model.safetensors has no tensor {name}; is it a T5 checkpoint?")
    check_tensors(header, {SHARED: (cfg.vocab_size, cfg.d_model), **t5_tensors(cfg)}, missing)
    check_t5_caps(cfg, "model.safetensors", header.itemsize(SHARED))
    return header


def read_t5_weights(path: Path, cfg: T5Config) -> T5Weights:
    """Every weight of model.safetensors in its own dtype (checked against ``cfg`` first, every value finite)."""
    header = read_t5_header(path, cfg)
    with tensors(header) as get:

        def proj(key: str) -> np.ndarray:  # [out, in] -> [in, out]
            return np.ascontiguousarray(get(key).T)

        def projections(p: str) -> T5Attention:
            return T5Attention(*(proj(f"{p}.{m}.weight") for m in "qkvo"))

        def blocks(side: str, n: int) -> tuple[T5Block, ...]:
            out = []
            for i in range(n):
                p = f"{side}.block.{i}.layer"
                cross = side == "decoder"
                ff = f"{p}.{2 if cross else 1}"
                gated = cfg.ff == "gated-gelu"
                out.append(T5Block(
                    ln_self=get(f"{p}.0.layer_norm.weight"), self_attn=projections(f"{p}.0.SelfAttention"),
                    ln_ff=get(f"{ff}.layer_norm.weight"),
                    wi=proj(f"{ff}.DenseReluDense.{'wi_0' if gated else 'wi'}.weight"),
                    wo=proj(f"{ff}.DenseReluDense.wo.weight"),
                    wi_1=proj(f"{ff}.DenseReluDense.wi_1.weight") if gated else None,
                    ln_cross=get(f"{p}.1.layer_norm.weight") if cross else None,
                    cross_attn=projections(f"{p}.1.EncDecAttention") if cross else None,
                ))
            return tuple(out)

        rel = "block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        return T5Weights(
            shared=get(SHARED), encoder=blocks("encoder", cfg.n_layers),
            decoder=blocks("decoder", cfg.n_decoder_layers), encoder_bias=get(f"encoder.{rel}"),
            decoder_bias=get(f"decoder.{rel}"), encoder_norm=get("encoder.final_layer_norm.weight"),
            decoder_norm=get("decoder.final_layer_norm.weight"), lm_head=None if cfg.tied else get(LM_HEAD),
        )


# ---- the forward pass ---------------------------------------------------------------------------------------------


def attention(x: np.ndarray, w: T5Attention, cfg: T5Config, *, y: np.ndarray | None = None,
              bias: np.ndarray | None = None, causal: bool = False, intervention: Intervention | None = None,
              layer: int = 0, cache: KVCache | None = None) -> tuple[np.ndarray, np.ndarray]:  # -> [n_q, d], weights
    """T5Attention through attn_core at the intervention point (attn_models.intervene.attend), unscaled: a
    self-attention of ``x`` (the relative-position ``bias``; ``causal`` in the decoder) or, with ``y``, the decoder's
    EncDecAttention (queries from ``y``, keys and values from the encoder's output ``x``), the one an
    ``intervention`` changes: its configuration's weights always meet this run's X and Y. Returns concat @ W_O and
    the weights [n_heads, n_q, n_k].

    With a key/value ``cache`` (the decoder's step in :meth:`Translator.translate`): a self-attention's ``x`` is the
    new positions' rows (``bias`` their rows [n_heads, n_new, past + n_new]), attending to the cached keys and values;
    a cross-attention's keys and values of ``x`` are made on the first step and kept; the weights stay in the
    checkpoint's dtype (attn_models.ops.product)."""
    matrices = w.matrices() if cache is None else (w.w_q, w.w_k, w.w_v, w.w_o)
    site = Site(x, *matrices, cfg.n_heads, scale="none", bias=bias, y=y, causal=causal, cache=cache,
                cache_key=(layer, "self" if y is None else "cross"))
    return attend(site, intervention, layer, own=False)


def feed_forward(x: np.ndarray, b: T5Block, kind: str) -> np.ndarray:  # [n, d_model] -> [n, d_model]
    """ReLU(x Wᵢ) W_o, or gelu_tanh(x Wᵢ₀) ⊙ (x Wᵢ₁) W_o for "gated-gelu" (float64: attn_models.ops.product)."""
    if kind == "gated-gelu":
        inner = gelu_tanh(product(x, b.wi)) * product(x, b.wi_1)  # [n, d_ff]
    else:
        inner = np.maximum(product(x, b.wi), 0.0)  # [n, d_ff]
    return product(inner, b.wo)


@dataclass(frozen=True, eq=False)
class EncoderRun:
    """The encoder on one source: ``output`` [n_src, d_model] (after the final norm: the keys' and values' input of
    every cross-attention), ``attentions`` [n_layers, n_heads, n_src, n_src], ``self_inputs`` [n_layers, n_src,
    d_model] (each layer's self-attention input: its normed hidden states)."""

    output: np.ndarray
    attentions: np.ndarray
    self_inputs: np.ndarray


@dataclass(frozen=True, eq=False)
class DecoderOutput:
    """What :meth:`Translator.decode_step` returns (n_t decoder positions, n_src source tokens).

    logits : [n_t, vocab_size]; row t: the scores of the token after decoder input t
    self_attentions : [n_decoder_layers, n_heads, n_t, n_t] (causal, with the relative-position bias)
    cross_attentions : [n_decoder_layers, n_heads, n_t, n_src]
    encoder_attentions : [n_layers, n_heads, n_src, n_src]
    encoder_output : [n_src, d_model]; cross_inputs : [n_decoder_layers, n_t, d_model] (each layer's queries' input Y)
    self_inputs : [n_decoder_layers, n_t, d_model] (each layer's self-attention input)
    """

    logits: np.ndarray
    self_attentions: np.ndarray
    cross_attentions: np.ndarray
    encoder_attentions: np.ndarray
    encoder_output: np.ndarray
    cross_inputs: np.ndarray
    self_inputs: np.ndarray


@dataclass(frozen=True, eq=False)
class Translation:
    """A greedy translation.

    source_tokens, source_ids : the source as the model reads it (the prefix, the sentence, ``</s>``)
    output_tokens, output_ids : the n_out generated tokens (a final ``</s>`` included when it was chosen)
    text : the output decoded, special tokens left out
    cross : [n_decoder_layers, n_heads, n_out, n_src]; row t is decoder position t, whose input is the token before
        output token t (``<pad>``, the start, for t = 0) and whose next-token logits chose output token t: where the
        model looked in the source while choosing that token (on the key/value cache each row is made at its step)
    probs : [n_out]: each chosen token's probability when it was chosen
    encoder_attentions : [n_layers, n_heads, n_src, n_src]: the encoder's self-attentions on the source
    decoder_attentions : [n_decoder_layers, n_heads, n_out, n_out]: the decoder's causal self-attentions, row t
        decoder position t over positions 0 … t (zeros after t); on the key/value cache each row is made at its step
    decoder_tokens : the decoder's n_out inputs: the start token (``<pad>``), then every output token but the last
    """

    source_tokens: tuple[str, ...]
    source_ids: np.ndarray
    output_tokens: tuple[str, ...]
    output_ids: np.ndarray
    text: str
    cross: np.ndarray
    probs: np.ndarray
    encoder_attentions: np.ndarray
    decoder_attentions: np.ndarray
    decoder_tokens: tuple[str, ...]


def causal_rows(rows: list[np.ndarray]) -> np.ndarray:  # n_t arrays [L, H, t + 1] -> [L, H, n_t, n_t]
    """A causal self-attention made one row a step (row t over positions 0 … t) as one array, zeros after t."""
    n_t = len(rows)
    out = np.zeros((*rows[0].shape[:2], n_t, n_t))
    for t, row in enumerate(rows):
        out[:, :, t, :t + 1] = row
    return out


@dataclass(frozen=True, eq=False)
class Translator(Pretrained):
    """A T5 encoder-decoder (see the module's text and :func:`load_translator`).

    name : the source it was loaded from; config : T5Config; weights : T5Weights (the checkpoint's dtype);
    tokenizer : tokenizers.Tokenizer (Unigram, ``</s>`` appended); load_seconds : reading the files.
    """

    config: T5Config
    weights: T5Weights
    tokenizer: object
    load_seconds: float = 0.0
    role: ClassVar[Role] = "translator"  # what it does (attn_models.origin.Role): A model that translates reads it

    # ---- tokens ----------------------------------------------------------------------------------------------

    def label(self, token_id: int) -> str:
        """A token id as a label a person reads (the piece, ▁ marking a word's start)."""
        piece = self.tokenizer.id_to_token(int(token_id))
        return token_label(piece if piece is not None else f"<{int(token_id)}>")

    def encode(self, text: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The text's pieces as labels and their ids [n], ``</s>`` last (appended here if the tokenizer does not)."""
        if not isinstance(text, str):
            raise ModelError(N_("The sentence must be text, got {kind}."), kind=type(text).__name__)
        ids = list(self.tokenizer.encode(text).ids)
        if not ids or ids[-1] != self.config.eos_id:
            ids.append(self.config.eos_id)
        for i in ids:
            check_id(str(i), i, self.config.vocab_size)
        if len(ids) > LIMITS.n_seq:
            raise ModelError(N_("The sentence is {n} tokens with the prefix and </s>; the cap is {cap} (n_seq). "
                                "Shorten it."), n=len(ids), cap=LIMITS.n_seq)
        return tuple(self.label(i) for i in ids), np.array(ids, dtype=np.intp)

    # ---- the forward pass --------------------------------------------------------------------------------------

    def embed(self, ids: np.ndarray) -> np.ndarray:  # int [n] -> [n, d_model]
        return f64(self.weights.shared[np.asarray(ids, dtype=np.intp)])

    def run_encoder(self, source_ids: np.ndarray) -> EncoderRun:
        """The encoder stack: every self-attention through attn_core with the bidirectional position bias."""
        c, w = self.config, self.weights
        h = self.embed(source_ids)  # [n_src, d_model]
        n = len(h)
        bias = position_bias(w.encoder_bias, n, n, True, c.num_buckets, c.max_distance)  # [n_heads, n_src, n_src]
        attentions = np.empty((c.n_layers, c.n_heads, n, n))
        xs = np.empty((c.n_layers, n, c.d_model))
        for i, b in enumerate(w.encoder):
            xs[i] = x = rms_norm(h, b.ln_self, c.eps)  # [n_src, d_model]
            out, attentions[i] = attention(x, b.self_attn, c, bias=bias)
            h = h + out
            h = h + feed_forward(rms_norm(h, b.ln_ff, c.eps), b, c.ff)
        return EncoderRun(rms_norm(h, w.encoder_norm, c.eps), attentions, xs)

    def run_decoder(self, enc: EncoderRun, target_ids: np.ndarray, *, intervention: Intervention | None = None,
                    last_only: bool = False, cache: KVCache | None = None) -> DecoderOutput:
        """The decoder stack on ``target_ids`` (its inputs: the start token first) reading ``enc``; logits of every
        position, or of the last only (``last_only``: one row).

        With a key/value ``cache`` (:meth:`translate`'s step), ``target_ids`` are the inputs after the ``cache.past``
        ones it holds: their rows only are run, each attending to the cached keys and values (the self-attentions'
        [n_heads, n_new, past + n_new]; the cross-attentions' source keys and values made on the first step), and
        their keys and values join the cache: the whole decoder's last rows to rounding (within 1e-12 in
        tests/models/test_kv_cache.py). Every intervention a Translator takes (on the cross-attentions) runs there."""
        c, w = self.config, self.weights
        iv = intervention or Intervention.NONE
        iv.check(c.n_decoder_layers, c.n_heads)
        g = self.embed(target_ids)  # [n_new, d_model]: every position without a cache
        past = 0 if cache is None else cache.past
        n_new, n_t, n_src = len(g), past + len(g), len(enc.output)
        bias = position_bias(w.decoder_bias, n_t, n_t, False, c.num_buckets, c.max_distance)  # [n_heads, n_t, n_t]
        bias = bias[:, past:]  # [n_heads, n_new, n_t]: the new positions' rows
        selfs = np.empty((c.n_decoder_layers, c.n_heads, n_new, n_t))
        crosses = np.empty((c.n_decoder_layers, c.n_heads, n_new, n_src))
        ys = np.empty((c.n_decoder_layers, n_new, c.d_model))
        xs = np.empty((c.n_decoder_layers, n_new, c.d_model))
        with edits_refused(iv):
            for i, b in enumerate(w.decoder):
                xs[i] = x = rms_norm(g, b.ln_self, c.eps)  # [n_new, d_model]
                out, selfs[i] = attention(x, b.self_attn, c, bias=bias, causal=True, layer=i, cache=cache)
                g = g + out
                ys[i] = y = rms_norm(g, b.ln_cross, c.eps)  # [n_new, d_model]: the queries' input
                out, crosses[i] = attention(enc.output, b.cross_attn, c, y=y, intervention=iv, layer=i, cache=cache)
                g = g + out
                g = g + feed_forward(rms_norm(g, b.ln_ff, c.eps), b, c.ff)
        if cache is not None:
            cache.advance(n_new)
        final = rms_norm(g[-1:] if last_only else g, w.decoder_norm, c.eps)  # [n_new or 1, d_model]
        return DecoderOutput(self.lm_logits(final), selfs, crosses, enc.attentions, enc.output, ys, xs)

    def lm_logits(self, h: np.ndarray) -> np.ndarray:  # [n, d_model] -> [n, vocab_size]
        """The LM head: h · d_model^-½ @ Eᵀ when tied (as transformers scales it), else h @ lm_headᵀ; float64, a few
        thousand vocabulary rows at a time (attn_models.ops.tied_logits)."""
        c, w = self.config, self.weights
        if c.tied:
            return tied_logits(h * (c.d_model ** -0.5), w.shared)
        return tied_logits(h, w.lm_head)

    def forward(self, text: str, output_prefix_ids: object = None, *, prefix: str = PREFIX,
                intervention: Intervention | None = None) -> DecoderOutput:
        """The encoder on ``prefix + text`` and the decoder on its start token and ``output_prefix_ids`` (the output
        written so far): transformers' T5ForConditionalGeneration(input_ids, decoder_input_ids), every attention
        returned (:meth:`decode_step` on token ids)."""
        _, src, tgt, _ = self._sides(text, output_prefix_ids, prefix)
        return self.run_decoder(self.run_encoder(src), tgt, intervention=intervention)

    def decode_step(self, source_ids: np.ndarray, target_ids: np.ndarray, *,
                    intervention: Intervention | None = None) -> DecoderOutput:
        """The encoder on ``source_ids`` and the decoder on ``target_ids`` (its inputs, the start token first):
        transformers' T5ForConditionalGeneration(input_ids, decoder_input_ids) with every attention returned."""
        src, tgt = self._ids(source_ids, "source_ids"), self._ids(target_ids, "target_ids")
        return self.run_decoder(self.run_encoder(src), tgt, intervention=intervention)

    def _ids(self, ids: object, name: str) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim != 1 or not len(arr) or not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any() or (
                arr >= self.config.vocab_size).any() or len(arr) > LIMITS.n_seq:
            raise ModelError(N_("{name} must be 1 … {cap} token ids from 0 to {last}."), name=name, cap=LIMITS.n_seq,
                             last=self.config.vocab_size - 1)
        return arr.astype(np.intp)

    def translate(self, text: str, *, prefix: str = PREFIX, max_new: int = 40,
                  intervention: Intervention | None = None,
                  on_step: Callable[[int, int], None] | None = None, cache: bool = True) -> Translation:
        """Greedy decoding of ``prefix + text``, as transformers' ``generate(do_sample=False, num_beams=1,
        max_new_tokens=max_new)``: at each step the most probable token (the first on a tie), until ``</s>`` or
        ``max_new`` tokens. ``intervention``: cross-attention heads switched off, or a decoder layer's
        cross-attention replaced by an explorer configuration, at every step (see :func:`attention`).
        ``on_step(i, token_id)``, if given, is called as output token i is chosen, the step's intermediates freed (a
        server lets others compute between two tokens); an exception it raises stops the translation.

        With a key/value cache (attn_models.kv.KVCache, made here and dropped on return), the encoder runs once and
        each step runs the decoder on the newest input alone (:meth:`run_decoder`): the cross-attentions' keys and
        values of the source are made once, the self-attentions' kept position by position; every intervention runs
        there too (a head's mean is over the source, which stays). It holds 2 · n_decoder_layers · (n_out + n_src) ·
        n_heads·d_kv · 8 bytes (t5-small, 40 tokens out of 40: 3.9 MB). ``cache`` False reruns the decoder on every
        input at every step (bench/t5.py measures both).
        """
        if isinstance(max_new, bool) or not isinstance(max_new, (int, np.integer)) or not 1 <= max_new <= MAX_NEW:
            raise ModelError(N_("max_new must be a whole number from 1 to {cap}, got {value}."), cap=MAX_NEW,
                             value=repr(max_new)[:40])
        tokens, src = self.encode(prefix + text)
        enc = self.run_encoder(src)
        c = self.config
        kv = KVCache(int(max_new)) if cache else None  # the decoder's inputs: the start, every output but the last
        out: list[int] = []
        probs: list[float] = []
        rows: list[np.ndarray] = []  # each step's cross-attention row [n_decoder_layers, n_heads, n_src]
        selves: list[np.ndarray] = []  # each step's self-attention row [n_decoder_layers, n_heads, t + 1]
        while len(out) < max_new:
            if kv is None:
                step = self.run_decoder(enc, np.array([c.start_id, *out], dtype=np.intp), intervention=intervention,
                                        last_only=True)
            else:
                step = self.run_decoder(enc, np.array([out[-1] if out else c.start_id], dtype=np.intp),
                                        intervention=intervention, last_only=True, cache=kv)
            rows.append(step.cross_attentions[:, :, -1].copy())
            selves.append(step.self_attentions[:, :, -1].copy())
            logits = step.logits[0]  # [vocab]
            token = int(np.argmax(logits))
            out.append(token)
            probs.append(float(softmax(logits)[token]))
            last = step if kv is None else None  # every row of every attention, without a cache
            del step, logits  # the step's intermediates: not held in on_step
            if on_step is not None:
                on_step(len(out) - 1, token)
            if token == c.eos_id:
                break
        ids = np.array(out, dtype=np.intp)
        cross = last.cross_attentions if kv is None else np.stack(rows, axis=2)  # [L_dec, n_heads, n_out, n_src]
        selfs = last.self_attentions if kv is None else causal_rows(selves)  # [L_dec, n_heads, n_out, n_out]
        labels = tuple(self.label(i) for i in ids)
        return Translation(tokens, src, labels, ids,
                           self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True), cross,
                           np.array(probs), enc.attentions, selfs, (self.label(c.start_id), *labels[:-1]))

    def head_effects(self, text: str, *, prefix: str = PREFIX, how: str = "mean") -> np.ndarray:
        """The probability of the translation's first token (the model's own choice) with each decoder
        cross-attention head switched off alone: [n_decoder_layers, n_heads]."""
        Intervention(how=how)  # ModelError unless "mean" or "zero"
        _, src = self.encode(prefix + text)
        enc = self.run_encoder(src)
        start = np.array([self.config.start_id], dtype=np.intp)
        first = int(np.argmax(self.run_decoder(enc, start).logits[0]))
        return each_head_off(range(self.config.n_decoder_layers), self.n_heads, how, lambda _layer, iv: softmax(
            self.run_decoder(enc, start, intervention=iv).logits[0])[first])

    # ---- the explorer -----------------------------------------------------------------------------------------

    def cross_config(self, text: str, output_prefix_ids: object, layer: int, *, head: int = 0,
                     prefix: str = PREFIX) -> Config:
        """Decoder layer ``layer``'s cross-attention as an explorer configuration: X the encoder's output on
        ``prefix + text`` (keys and values; its tokens the source's), Y the decoder's normed hidden states before
        that cross-attention (queries; one row per decoder input: the start token, then ``output_prefix_ids``),
        W_Q, W_K, W_V, W_O the layer's (float64), scale "none". ``run(cfg)`` equals the decoder's cross attentions
        bit for bit, and :attr:`Translation.cross` when ``output_prefix_ids`` is the translation's ids but the last
        (bit for bit for ``translate(cache=False)``; within 1e-12 for its rows made one step at a time on the cache).
        """
        check_layer(layer, self.config.n_decoder_layers)
        tokens, src, tgt, out_ids = self._sides(text, output_prefix_ids, prefix)
        run = self.run_decoder(self.run_encoder(src), tgt)
        w = self.weights.decoder[layer].cross_attn
        return self._config(
            layer, "cross", tokens, run.encoder_output, w, y=run.cross_inputs[layer],
            y_tokens=tuple(self.label(i) for i in tgt),
            origin=Origin("translator", self.name, int(layer), int(head), text, side="cross", prefix=prefix,
                          target=tuple(int(i) for i in out_ids)).as_dict())

    def self_config(self, text: str, layer: int, *, head: int = 0, side: str = "encoder",
                    output_prefix_ids: object = None, prefix: str = PREFIX) -> Config:
        """A self-attention layer as an explorer configuration: ``side`` "encoder" (X the layer's normed input on
        ``prefix + text``, the bidirectional position bias) or "decoder" (X the decoder's normed states on the start
        token and ``output_prefix_ids``, the causal mask and the causal position bias); W_Q, W_K, W_V, W_O the
        layer's, scale "none", the bias as the configuration's score bias [n_heads, n, n]. ``run(cfg)`` equals the
        model's attentions of that layer bit for bit."""
        if side not in ("encoder", "decoder"):
            raise ModelError(N_("side must be {sides}, got {side}."), sides="encoder or decoder",
                             side=repr(side)[:40])
        c = self.config
        check_layer(layer, c.n_layers if side == "encoder" else c.n_decoder_layers)
        tokens, src, tgt, out_ids = self._sides(text, output_prefix_ids, prefix)
        enc = self.run_encoder(src)
        origin = Origin("translator", self.name, int(layer), int(head), text, side=side, prefix=prefix)
        if side == "encoder":
            bias = position_bias(self.weights.encoder_bias, len(src), len(src), True, c.num_buckets, c.max_distance)
            return self._config(layer, side, tokens, enc.self_inputs[layer], self.weights.encoder[layer].self_attn,
                                score_bias=bias, origin=origin.as_dict())
        run = self.run_decoder(enc, tgt)
        bias = position_bias(self.weights.decoder_bias, len(tgt), len(tgt), False, c.num_buckets, c.max_distance)
        return self._config(layer, side, tuple(self.label(i) for i in tgt), run.self_inputs[layer],
                            self.weights.decoder[layer].self_attn, score_bias=bias, mask_kind="causal",
                            origin=replace(origin, target=tuple(int(i) for i in out_ids)).as_dict())

    def config_for(self, origin: Origin) -> Config:
        """The configuration ``origin`` names (a decoder layer's cross-attention: :meth:`cross_config`; an encoder's
        or decoder's self-attention: :meth:`self_config`), as the model computes it; ModelError when it is another
        family's."""
        expect_role(self, origin.role)
        if origin.side == "cross":
            return self.cross_config(origin.sentence, origin.target, origin.layer, head=origin.head,
                                     prefix=origin.prefix)
        return self.self_config(origin.sentence, origin.layer, head=origin.head, side=str(origin.side),
                                output_prefix_ids=origin.target, prefix=origin.prefix)

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """Zeros: T5's attentions have no output bias (an attention's output is ``concat @ W_O``)."""
        check_layer(layer, max(self.config.n_layers, self.config.n_decoder_layers))
        return np.zeros(self.config.d_model)

    def _sides(self, text: str, output_prefix_ids: object,
               prefix: str) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
        """(source labels, source ids, decoder inputs: the start token and ``output_prefix_ids``, those ids)."""
        written = ModelError(N_("The translation written before must be at most {cap} token ids from 0 to {last}: the "
                                "decoder reads its start token before them."),
                             cap=LIMITS.n_seq - 1, last=self.config.vocab_size - 1)
        try:
            out_ids = np.asarray([] if output_prefix_ids is None else output_prefix_ids, dtype=np.intp).reshape(-1)
        except (TypeError, ValueError):
            raise written from None
        if len(out_ids) > LIMITS.n_seq - 1 or (out_ids < 0).any() or (out_ids >= self.config.vocab_size).any():
            raise written
        tokens, src = self.encode(prefix + text)
        tgt = np.concatenate([[self.config.start_id], out_ids]).astype(np.intp)
        return tokens, src, tgt, out_ids

    def _config(self, layer: int, side: str, tokens: tuple[str, ...], x: np.ndarray, w: T5Attention,
                **options: object) -> Config:
        """The explorer configuration of one attention (scale "none"), or ModelError when it is over attn_core.LIMITS
        (total cells, for a long sentence)."""
        try:
            return make_config(tokens, x, *w.matrices(), n_heads=self.config.n_heads, scale="none", **options)
        except AttentionInputError as err:
            raise ModelError(N_("Layer {layer}'s {side} does not open in the explorer: {err}"), layer=int(layer),
                             side=SIDE_WORDS[side], err=Phrase(err.template, **err.params)) from None


def load_translator(source: str = T5_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
                    access: Access | None = None, local_only: bool = False) -> Translator:
    """Read a T5 checkpoint (config.json, model.safetensors, tokenizer.json) from a folder or the Hub cache, as
    :func:`attn_models.load` reads any family (same caps, same judging before a download, same errors)."""
    with opened(source, read_t5_config, cache_dir=cache_dir, progress=progress, access=access,
                local_only=local_only) as checkpoint:
        weights, tokenizer = read_t5_weights(checkpoint.files.weights, checkpoint.config), checkpoint.tokenizer()
    return Translator(checkpoint.files.source, checkpoint.config, weights, tokenizer, checkpoint.seconds)
