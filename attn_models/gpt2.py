"""GPT-2 (transformers' ``modeling_gpt2.py``) in float64 numpy: config.json and its caps, the tensors' names, the
weights, the forward pass, the LM head, and a loaded :class:`CausalLM` (:func:`load_causal_lm`); every attention
through attn_core with the causal mask.

picoGPT's pass, stage by stage (transformers' names: wte, wpe, h.L.ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
mlp.c_proj, ln_f; the LM head tied to wte)::

    h = wte[ids] + wpe[:n]                                   # [n_seq, d_model]
    for each block:                                          # block
        x = ln_1(h)                                          # [n_seq, d_model]
        h = h + MHA(X₁ = [x, 1], W_Q, W_K, W_V, W_O, causal) + b_O      # attention
        h = h + gelu_new(ln_2(h) W_fc + b_fc) W_proj + b_proj           # mlp
    logits = ln_f(h) @ wteᵀ                                  # [n_seq, vocab]   (attn_models.ops.tied_logits)

c_attn's fused [d_model, 3·d_model] weight (Conv1D: already [in, out]) is split into W_Q, W_K, W_V columns, each
with its bias as the last row, meeting X's constant-1 column (attn_models.ops.with_bias_column), as for BERT. Every
attention runs through attn_models.intervene.attend, the one intervention point (:func:`attention`).

Weights stay in the checkpoint's dtype (float32 for every published GPT-2): each block is cast to float64 when it
runs, and wte a chunk at a time for the logits. A float32 → float64 cast is exact, so the numbers are the ones a
float64 copy would give, in half the memory (bench/gpt2.py measures both).

Writing (:meth:`CausalLM.generate`) runs on a key/value cache (attn_models.kv): the prompt, then each new token's row
alone over the keys and values kept (:meth:`CausalLM.extend`), no block cast whole: each product casts a slab of its
weight at a time (attn_models.ops.product). A mean ablation, or an explorer configuration without a mask, changes
the earlier positions at every token; with those it reruns the whole text each step (attn_models.intervene.cacheable).

A layer opens in the explorer whole when one layer's configuration fits attn_core.LIMITS (the tiny test model), else
one head at a time (GPT-2 small: X [n_seq, 769], that head's W_Q, W_K, W_V columns [769, 64], its W_O rows [64, 768]);
the forward pass computes attention in the same pieces, so ``run(layer_config(...))`` is the forward pass's own
numbers, bit for bit.

Token labels: GPT-2's byte-level pieces ("Ġcat") are shown as the text they stand for (" cat"); a piece that is only
white space shows it (" " → "␣", a newline → "↵", a tab → "⇥"), and a piece that is part of a character's UTF-8 bytes
shows them (``\\xe4``). :attr:`CausalEncoded.pieces` holds the exact text of each piece.

>>> lm = load_causal_lm("distilgpt2")                         # doctest: +SKIP
>>> out = lm.forward("The cat sat on the")                    # doctest: +SKIP
>>> out.attentions.shape, out.logits.shape                    # doctest: +SKIP
((6, 12, 5, 5), (5, 50257))
>>> lm.next_token("The cat sat on the", temperature=0.7).tokens[:3]   # doctest: +SKIP
>>> lm.generate("The cat sat on the", 8).text                 # doctest: +SKIP
>>> cfg = lm.layer_config("The cat sat on the", layer=2, head=5)      # one head: d_model 768 # doctest: +SKIP
>>> attn_core.run(cfg).heads[0].weights  # == out.attentions[2, 5]    # doctest: +SKIP
>>> lm.next_token("The cat sat on the", intervention=Intervention(ablate={(2, 5)}))   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attn_core import LIMITS, Config, make_config

from .access import CAUSAL_MODEL, Access
from .causal import (
    EOT,
    CausalEncoded,
    CausalModel,
    CausalOutput,
    Generation,
    GenStep,
    NextToken,
    piece_label,
    temperature_probs,
)
from .errors import N_, ModelError
from .hub import Progress, opened
from .intervene import Intervention, Site, attend, check_layer, edits_refused, head_weights
from .kv import KVCache
from .limits import MODEL_LIMITS
from .ops import f64, gelu_tanh, layer_norm, product, with_bias_column
from .origin import Origin
from .reader import Fields, Header, check_field_caps, check_memory, check_tensors, read_json, tensors
from .reader import read_header as read_safetensors_header
from .tokenizer import TOKENIZER

__all__ = ["EOT", "CausalEncoded", "CausalLM", "CausalOutput", "GenStep", "Generation", "Gpt2Config", "NextToken",
           "gpt2_resident_bytes", "load_causal_lm", "parse_gpt2_config", "piece_label", "read_gpt2_config",
           "temperature_probs"]

GPT2_TYPES = ("gpt2",)  # config.json model_type values read as GPT-2
GELU_TANH = ("gelu_new", "gelu_pytorch_tanh")  # GPT-2's activation_function: the tanh approximation (same formula)
DEFAULT_CAUSAL_MODEL = CAUSAL_MODEL  # distilgpt2 (6 layers) fits MODEL_LIMITS; GPT-2 small does not (bench/gpt2.py)


# ---- config.json -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gpt2Config:
    """The hyper-parameters of a GPT-2-family model (config.json's n_layer, n_head, n_embd, n_inner, vocab_size,
    n_positions, layer_norm_epsilon)."""

    n_layers: int
    n_heads: int
    d_model: int
    vocab_size: int
    max_positions: int
    eps: float
    d_ff: int = 0  # n_inner (0: 4 · d_model, GPT-2's default)
    model_type: ClassVar[str] = "gpt2"  # config.json's
    tokenizer_files: ClassVar[tuple[str, ...]] = (TOKENIZER,)  # byte-level BPE: tokenizer.json only

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def d_inner(self) -> int:
        return self.d_ff or 4 * self.d_model

    @property
    def max_tokens(self) -> int:
        """The longest context: the app's n_seq cap, or the model's positions if fewer."""
        return min(LIMITS.n_seq, self.max_positions)

    @property
    def head_only(self) -> bool:
        """Whether a layer opens in the explorer one head at a time: a whole layer's configuration (X [n, d + 1],
        W_Q, W_K, W_V [d + 1, d], W_O [d, d]) at :attr:`max_tokens` tokens is over attn_core.LIMITS."""
        d, n = self.d_model, self.max_tokens
        return d > LIMITS.width or n * (d + 1) + 3 * (d + 1) * d + d * d > LIMITS.total_cells


#: config.json field -> (the Gpt2Config attribute, the ModelLimits cap): every field that sizes the model
FIELD_CAPS = {
    "n_layer": ("n_layers", "n_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "n_inner": ("d_inner", "d_ff"),
    "n_positions": ("max_positions", "max_positions"),
}


def gpt2_resident_bytes(cfg: Gpt2Config, itemsize: int = 4) -> int:
    """Bytes a GPT-2 (:class:`CausalLM`) takes once loaded: every weight in its checkpoint's dtype
    (``itemsize`` bytes a number; float32 for every published GPT-2), cast to float64 one block at a time when it runs.

    wte [vocab, d], wpe [positions, d], ln_f; per block: ln_1, c_attn [d + 1, 3d] (its bias as the last row), c_proj
    [d, d] + bias, ln_2, c_fc [d, d_ff] + bias, the MLP's c_proj [d_ff, d] + bias.

    >>> distil = Gpt2Config(n_layers=6, n_heads=12, d_model=768, vocab_size=50257, max_positions=1024, eps=1e-5)
    >>> round(gpt2_resident_bytes(distil) / 1e6, 1), round(gpt2_resident_bytes(distil, 8) / 1e6, 1)
    (327.7, 655.3)
    >>> from dataclasses import replace
    >>> round(gpt2_resident_bytes(replace(distil, n_layers=12)) / 1e6, 1)  # GPT-2 small
    497.8
    """
    d, ff = cfg.d_model, cfg.d_inner
    block = 2 * d + (d + 1) * 3 * d + d * d + d + 2 * d + d * ff + ff + ff * d + d
    return ((cfg.vocab_size + cfg.max_positions) * d + 2 * d + cfg.n_layers * block) * itemsize


def head_cells(d_model: int, d_k: int, n_seq: int) -> int:
    """Cells of one head's explorer configuration: X [n_seq, d+1], W_Q, W_K, W_V [d+1, d_k], W_O [d_k, d].

    >>> head_cells(768, 64, 256)
    393664
    """
    return n_seq * (d_model + 1) + 3 * (d_model + 1) * d_k + d_k * d_model


def parse_gpt2_config(doc: object, where: str = "config.json") -> Gpt2Config:
    """A :class:`Gpt2Config` from config.json's dict, or ModelError naming the field: not GPT-2, an activation or
    attention variant not run here, or over the caps (attn_models.MODEL_LIMITS, attn_core.LIMITS).

    >>> c = parse_gpt2_config({"model_type": "gpt2", "n_layer": 6, "n_head": 12, "n_embd": 768,
    ...                        "vocab_size": 50257, "n_positions": 1024})
    >>> c.d_k, c.max_tokens, c.eps, c.head_only
    (64, 256, 1e-05, True)
    >>> parse_gpt2_config({"model_type": "bert"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: model_type 'bert' is not GPT-2; this runs GPT-2 models ...
    """
    fields = Fields(doc, where)
    fields.kind(GPT2_TYPES, N_("{where}: model_type {kind} is not GPT-2; this runs GPT-2 models (model_type {types})."))
    act = fields.get("activation_function", "gelu_new")
    if act not in GELU_TANH:
        raise ModelError(N_("{where}: activation_function {act}: only GPT-2's tanh GELU, 'gelu_new', is run here."),
                         where=where, act=repr(str(act)[:40]))
    if fields.get("scale_attn_weights", True) is not True:
        raise ModelError(N_("{where}: scale_attn_weights is not true; only attention scaled by √d_k is run here."),
                         where=where)
    for key in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"):
        if fields.get(key):
            raise ModelError(N_("{where}: {key} is true; this GPT-2 variant is not run here."), where=where, key=key)
    whole = fields.whole
    cfg = Gpt2Config(n_layers=whole("n_layer"), n_heads=whole("n_head"), d_model=whole("n_embd"),
                     vocab_size=whole("vocab_size"), max_positions=whole("n_positions", 1024),
                     eps=fields.small("layer_norm_epsilon", 1e-5),
                     d_ff=0 if fields.get("n_inner") is None else whole("n_inner"))
    check_gpt2_caps(cfg, where)
    return cfg


def check_gpt2_caps(cfg: Gpt2Config, where: str = "config.json", itemsize: int = 4) -> None:
    """ModelError naming the config field over its cap, or the memory the model would take (weights of
    ``itemsize`` bytes a number), or the attn_core.LIMITS cap a layer's (or a head's) configuration would exceed."""
    check_field_caps(cfg, FIELD_CAPS, where)
    d = cfg.d_model
    if d % cfg.n_heads:
        raise ModelError(N_("{where}: n_embd {d} is not a multiple of n_head {heads}."), where=where, d=d,
                         heads=cfg.n_heads)
    if cfg.n_heads > LIMITS.n_heads:
        raise ModelError(N_("{where}: n_head {heads} is over the cap of {cap} (heads)."), where=where,
                         heads=cfg.n_heads, cap=LIMITS.n_heads)
    if d + 1 > LIMITS.d_model:
        raise ModelError(N_("{where}: n_embd {d} + 1 (the bias column) = {columns} columns of X is over the cap of "
                            "{cap} (d_model)."), where=where, d=d, columns=d + 1, cap=LIMITS.d_model)
    if d > LIMITS.width:
        raise ModelError(N_("{where}: n_embd {d} columns of W_O is over the cap of {cap} (widths)."), where=where,
                         d=d, cap=LIMITS.width)
    cells = head_cells(d, cfg.d_k, cfg.max_tokens)
    if cells > LIMITS.total_cells:
        raise ModelError(N_("{where}: one head at {n} tokens is {cells:,} cells; the cap is {cap:,} (total cells)."),
                         where=where, n=cfg.max_tokens, cells=cells, cap=LIMITS.total_cells)
    check_memory(gpt2_resident_bytes(cfg, itemsize), MODEL_LIMITS.causal_resident_bytes, where)


def read_gpt2_config(path: Path) -> Gpt2Config:
    """config.json (at most MODEL_LIMITS.config_bytes) as a :class:`Gpt2Config`, or ModelError."""
    return parse_gpt2_config(read_json(path))


# ---- model.safetensors -----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Block:
    """One GPT-2 block, in the checkpoint's dtype (cast to float64 when it runs: :meth:`f64`), laid out for ``x @ w``.

    w_q, w_k, w_v [d_model + 1, d_model] (c_attn's columns, the bias as the last row); w_o [d_model, d_model] and
    b_o (attn.c_proj); ln1_g, ln1_b, ln2_g, ln2_b [d_model]; w_fc [d_model, d_ff], b_fc; w_proj [d_ff, d_model],
    b_proj (the MLP).
    """

    ln1_g: np.ndarray
    ln1_b: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray
    w_fc: np.ndarray
    b_fc: np.ndarray
    w_proj: np.ndarray
    b_proj: np.ndarray

    def f64(self) -> Block:
        """The same block in float64 (exact: every float32 and float16 is a float64)."""
        return Block(**{k: f64(v) for k, v in vars(self).items()})

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in vars(self).values())


@dataclass(frozen=True, eq=False)
class Gpt2Weights:
    """wte [vocab_size, d_model], wpe [max_positions, d_model], the blocks, ln_f_g, ln_f_b [d_model]."""

    wte: np.ndarray
    wpe: np.ndarray
    blocks: tuple[Block, ...]
    ln_f_g: np.ndarray
    ln_f_b: np.ndarray

    @property
    def nbytes(self) -> int:
        return (self.wte.nbytes + self.wpe.nbytes + self.ln_f_g.nbytes + self.ln_f_b.nbytes
                + sum(b.nbytes for b in self.blocks))


SKIPPED = (".attn.bias", ".attn.masked_bias")  # causal-mask buffers older checkpoints carry: not weights


def gpt2_tensors(cfg: Gpt2Config) -> dict[str, tuple[int, ...]]:
    """Every tensor the model reads (GPT2Model's names, no "transformer." prefix) and its shape as stored (Conv1D:
    [in, out])."""
    d, ff = cfg.d_model, cfg.d_inner
    shapes = {"wte.weight": (cfg.vocab_size, d), "wpe.weight": (cfg.max_positions, d), "ln_f.weight": (d,),
              "ln_f.bias": (d,)}
    for i in range(cfg.n_layers):
        p = f"h.{i}."
        for name, shape in (("ln_1", None), ("attn.c_attn", (d, 3 * d)), ("attn.c_proj", (d, d)), ("ln_2", None),
                            ("mlp.c_fc", (d, ff)), ("mlp.c_proj", (ff, d))):
            shapes[p + name + ".weight"] = shape or (d,)
            shapes[p + name + ".bias"] = ((shape or (d,))[-1],)
    return shapes


def _gpt2_name(name: str) -> str | None:
    """A stored name as GPT2Model has it (GPT2LMHeadModel saves "transformer." before each); None for a causal-mask
    buffer."""
    return None if name.endswith(SKIPPED) else name.removeprefix("transformer.")


def read_gpt2_header(path: Path, cfg: Gpt2Config) -> Header:
    """model.safetensors' header checked against ``cfg`` before any tensor is read (its length, every tensor the model
    reads with config.json's shape, a dtype read here, its bytes inside the file; then the memory the model takes
    with its weights' dtype), its names GPT2Model's; ModelError otherwise."""
    header = read_safetensors_header(path, _gpt2_name)
    shapes = gpt2_tensors(cfg)
    check_tensors(header, shapes, N_("model.safetensors has no tensor {name}; is it a GPT-2 checkpoint?"))
    check_gpt2_caps(cfg, "model.safetensors", max(header.itemsize(k) for k in shapes))
    return header


def read_gpt2_weights(path: Path, cfg: Gpt2Config) -> Gpt2Weights:
    """Every weight of model.safetensors in its dtype (checked first: :func:`read_gpt2_header`), every value finite;
    c_attn split into W_Q, W_K, W_V with their biases as the last row."""
    header = read_gpt2_header(path, cfg)
    d = cfg.d_model
    with tensors(header) as get:
        blocks = []
        for i in range(cfg.n_layers):
            p = f"h.{i}."
            w_attn = np.vstack([get(p + "attn.c_attn.weight"), get(p + "attn.c_attn.bias")])  # [d + 1, 3d]
            blocks.append(Block(
                ln1_g=get(p + "ln_1.weight"), ln1_b=get(p + "ln_1.bias"),
                w_q=np.ascontiguousarray(w_attn[:, :d]), w_k=np.ascontiguousarray(w_attn[:, d:2 * d]),
                w_v=np.ascontiguousarray(w_attn[:, 2 * d:]),  # [d_model + 1, d_model] each
                w_o=get(p + "attn.c_proj.weight"), b_o=get(p + "attn.c_proj.bias"),
                ln2_g=get(p + "ln_2.weight"), ln2_b=get(p + "ln_2.bias"),
                w_fc=get(p + "mlp.c_fc.weight"), b_fc=get(p + "mlp.c_fc.bias"),
                w_proj=get(p + "mlp.c_proj.weight"), b_proj=get(p + "mlp.c_proj.bias")))
        return Gpt2Weights(get("wte.weight"), get("wpe.weight"), tuple(blocks), get("ln_f.weight"), get("ln_f.bias"))


# ---- the forward pass --------------------------------------------------------------------------------------------


def attention(x1: np.ndarray, w: Block, cfg: Gpt2Config, intervention: Intervention, layer: int, own: bool,
              cache: KVCache | None = None) -> tuple[np.ndarray, np.ndarray]:  # [n, d + 1] -> [n, d], weights
    """GPT2Attention: causal self-attention of X₁ = [ln_1(h), 1] through attn_core at the intervention point
    (attn_models.intervene.attend): every head at once, or (``cfg.head_only``) one head at a time on its columns and
    W_O rows, the pieces :meth:`CausalLM.layer_config` opens. Returns concat @ W_O (c_proj without its bias) and the
    weights [n_heads, n, n]; with a ``cache``, X₁'s rows are the new tokens' and the weights [n_heads, n, past + n]."""
    site = Site(x1, w.w_q, w.w_k, w.w_v, w.w_o, cfg.n_heads, causal=True, by_head=cfg.head_only, cache=cache,
                cache_key=layer)
    return attend(site, intervention, layer, own=own)


def mlp(h: np.ndarray, w: Block, eps: float) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, d_model]
    """GPT2MLP on ln_2: gelu_new(ln_2(h) W_fc + b_fc) W_proj + b_proj (attn_models.ops.product: ``@`` for float64
    weights)."""
    return product(gelu_tanh(product(layer_norm(h, w.ln2_g, w.ln2_b, eps), w.w_fc) + w.b_fc), w.w_proj) + w.b_proj


def block(h: np.ndarray, w: Block, cfg: Gpt2Config, intervention: Intervention, layer: int, own: bool,
          cache: KVCache | None = None) -> tuple[np.ndarray, np.ndarray]:  # [n, d_model] -> [n, d_model], weights
    """GPT2Block: h + attention(ln_1(h)) + b_O, then + mlp; returns the block's output and its attention weights
    ([n_heads, n, n]). ``w`` in float64 (the whole text: :meth:`CausalLM.run`), or with a key/value ``cache`` (h: the
    new tokens' rows, weights [n_heads, n, past + n]: :meth:`CausalLM.extend`) in the checkpoint's dtype."""
    x1 = with_bias_column(layer_norm(h, w.ln1_g, w.ln1_b, cfg.eps))  # [n_seq, d_model + 1]
    out, weights = attention(x1, w, cfg, intervention, layer, own, cache)
    h = h + (out + w.b_o)  # transformers adds c_proj's bias to the product, then the residual
    return h + mlp(h, w, cfg.eps), weights


# ---- the model -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CausalLM(CausalModel):
    """A GPT-2-family causal language model (see :func:`load_causal_lm`): attn_models.causal.CausalModel (tokens, the
    next token, generation, which heads matter) with GPT-2's forward pass.

    name (the source), config, weights (the checkpoint's dtype), tokenizer (tokenizers.Tokenizer: byte-level BPE,
    no truncation, no padding), load_seconds.
    """

    config: Gpt2Config
    weights: Gpt2Weights

    def run(self, ids: np.ndarray, *, intervention: Intervention | None = None, own: bool = True, start: int = 0,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The blocks ``start`` … on token ids ``ids``: (residual stream [n_layers − start + 1, n_seq, d_model]: each
        block's input, then the last block's output (before ln_f); attentions [n_layers − start, n_heads, n, n]).

        ``intervention``: heads switched off, a layer replaced by an explorer configuration (attn_models.Intervention;
        ``own``: these ids are the prompt it was opened on). ``hidden``: block ``start``'s input when known.
        """
        n = len(ids)
        self.check_length(n)
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        cfg = self.config
        if hidden is None:
            hidden = self.run(ids, intervention=iv, own=own)[0][start] if start else (
                self.weights.wte[ids].astype(np.float64) + self.weights.wpe[:n])  # [n_seq, d_model]
        stream = np.empty((cfg.n_layers - start + 1, n, cfg.d_model))
        attentions = np.empty((cfg.n_layers - start, cfg.n_heads, n, n))
        stream[0] = hidden
        with edits_refused(iv):
            for i, layer in enumerate(range(start, cfg.n_layers)):
                stream[i + 1], attentions[i] = block(stream[i], self.weights.blocks[layer].f64(), cfg, iv, layer, own)
        return stream, attentions

    def extend(self, ids: np.ndarray, cache: KVCache, *,
               intervention: Intervention | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The blocks on the tokens ``ids`` that come after the ``cache.past`` tokens whose keys and values ``cache``
        holds (a generation's step; its prompt first): each new token's queries attend, through attn_core, to the
        cached keys and values and to the new ones up to their own; the new keys and values join the cache.

        Returns the last block's output on the new tokens [n_new, d_model] (before ln_f) and their attention rows
        [n_layers, n_heads, n_new, past + n_new]: the whole text's last n_new rows (:meth:`run`) to rounding (within
        1e-12 in tests/models/test_kv_cache.py). The weights stay in the checkpoint's dtype (attn_models.ops.product).
        ``intervention`` applies on this text's own X, as :meth:`run`'s with ``own=False``; one whose numbers a cache
        cannot keep (attn_models.intervene.cacheable: a mean ablation, a configuration without a mask) is a ValueError.
        """
        past, n_new = cache.past, len(ids)
        self.check_length(past + n_new)
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        cfg, w = self.config, self.weights
        h = w.wte[ids].astype(np.float64) + w.wpe[past:past + n_new]  # [n_new, d_model]
        attentions = np.empty((cfg.n_layers, cfg.n_heads, n_new, past + n_new))
        with edits_refused(iv):
            for layer in range(cfg.n_layers):
                h, attentions[layer] = block(h, w.blocks[layer], cfg, iv, layer, False, cache)
        cache.advance(n_new)
        return h, attentions

    def final_norm(self, h: np.ndarray) -> np.ndarray:  # [n, d_model] -> [n, d_model]
        """ln_f of the last block's output, row by row."""
        w = self.weights
        return layer_norm(h, w.ln_f_g.astype(np.float64), w.ln_f_b.astype(np.float64), self.config.eps)

    @property
    def unembedding(self) -> np.ndarray:  # [vocab_size, d_model]
        """wte: GPT-2's LM head is tied to its token embedding."""
        return self.weights.wte

    def layer_config(self, prompt: str, layer: int, *, head: int = 0) -> Config:
        """Layer ``layer``'s causal self-attention on ``prompt`` as an attn_core configuration.

        X is ln_1 of the layer's input with a constant-1 column; W_Q, W_K, W_V are c_attn's columns with their bias as
        the last row; W_O is c_proj's weight (its bias b_O is added after attention); the causal mask
        (``mask_kind="causal"``); scaled by √d_k. The whole layer (n_heads heads) when it fits attn_core.LIMITS, else
        head ``head`` alone (its columns of W_Q, W_K, W_V, its rows of W_O; origin "of_heads" says how many the layer
        has). ``run(cfg)`` gives the layer's (or that head's) attention weights bit for bit as :meth:`forward`.
        """
        check_layer(layer, self.n_layers)
        if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 0 <= head < self.n_heads:
            raise ModelError(N_("Head {head} of layer {layer} does not exist: each layer has heads 0 … {last}."),
                             head=repr(head)[:40], layer=layer, last=self.n_heads - 1)
        enc = self.encode(prompt)
        self.check_length(len(enc.ids))
        stream = self.run(enc.ids)[0] if layer else None
        w = self.weights.blocks[layer].f64()
        h_in = stream[layer] if stream is not None else (
            self.weights.wte[enc.ids].astype(np.float64) + self.weights.wpe[:len(enc.ids)])
        x1 = with_bias_column(layer_norm(h_in, w.ln1_g, w.ln1_b, self.config.eps))
        origin = Origin("causal", self.name, int(layer), int(head), prompt, bias_column=self.config.d_model,
                        of_heads=self.n_heads if self.config.head_only else None)
        if self.config.head_only:
            w_q, w_k, w_v, w_o = head_weights(w.w_q, w.w_k, w.w_v, w.w_o, int(head), self.n_heads)
            n_heads = 1
        else:
            w_q, w_k, w_v, w_o, n_heads = w.w_q, w.w_k, w.w_v, w.w_o, self.n_heads
        return make_config(list(enc.tokens), x1, w_q, w_k, w_v, w_o, n_heads=n_heads, scale="sqrt_dk",
                           mask_kind="causal", origin=origin.as_dict())

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of layer ``layer`` (float64): the layer's attention output is ``concat @ W_O + b_O``."""
        check_layer(layer, self.n_layers)
        return self.weights.blocks[layer].b_o.astype(np.float64)



# ---- loading -------------------------------------------------------------------------------------------------------


def load_causal_lm(source: str = DEFAULT_CAUSAL_MODEL, *, cache_dir: str | Path | None = None,
                   progress: Progress | None = None, access: Access | None = None,
                   local_only: bool = False) -> CausalLM:
    """Read a GPT-2-family checkpoint (config.json, model.safetensors, tokenizer.json) from a folder or the Hugging
    Face Hub (judged from its metadata and config.json before the weights are downloaded), as attn_models.load
    does for every family; raises the same errors (ModelError naming the file or field, ModelUnavailableError,
    NotFetchedError)."""
    with opened(source, read_gpt2_config, cache_dir=cache_dir, progress=progress, access=access,
                local_only=local_only) as checkpoint:
        weights, tokenizer = read_gpt2_weights(checkpoint.files.weights, checkpoint.config), checkpoint.tokenizer()
    return CausalLM(checkpoint.files.source, checkpoint.config, weights, tokenizer, checkpoint.seconds)
