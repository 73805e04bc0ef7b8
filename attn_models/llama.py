"""Llama-family causal language models (transformers' ``modeling_llama.py``, ``modeling_mistral.py``,
``modeling_qwen2.py``: Llama, SmolLM, Mistral, Qwen 2) in float64 numpy: config.json and its caps, the tensors'
names, the weights, the forward pass, the LM head, and a loaded :class:`LlamaLM` (:func:`load_llama`); every attention
through attn_core at attn_models.intervene.attend, the one intervention point, as GPT-2's.

The pass, stage by stage (transformers' names: embed_tokens, layers.L.input_layernorm, self_attn.{q,k,v,o}_proj,
post_attention_layernorm, mlp.{gate,up,down}_proj, norm, lm_head)::

    h = embed_tokens[ids]                                               # [n_seq, d_model]
    for each layer:
        x = [rms_norm(h), 1]                                            # [n_seq, d_model + 1]   (input_layernorm)
        q, k, v = x W_Q, x W_K, x W_V                                   # [n, H·d_k], [n, KV·d_k], [n, KV·d_v]
        q, k = RoPE(q, positions), RoPE(k, positions)                   # each head: rotate_half layout
        h = h + GQA-attention(q, k, v, causal) W_O + b_O                # query head h reads KV head h // (H / KV)
        h = h + down(silu(gate(x')) * up(x')),  x' = rms_norm(h)         # post_attention_layernorm, SwiGLU
    logits = rms_norm(h) @ lm_headᵀ                                     # lm_head tied to embed_tokens or its own

RoPE is attn_core.apply_rope (θ_i = rope_theta^(−2i/d_k), the "half" layout of transformers' rotate_half), on each
query head and each key/value head after their projection; the key/value cache keeps the keys after it. Grouped-query
attention: W_K and W_V hold n_kv_heads heads; query head h reads key/value head attn_core.kv_head_of(h, H, KV)
(:meth:`LlamaLM.kv_head`). A Qwen 2 has biases on q, k and v (the last row of W_Q, W_K, W_V, meeting X's constant-1
column, as GPT-2's); a Llama with ``attention_bias`` on o too; a Llama without has a zero bias row. A Mistral's
``sliding_window`` lets each query see itself and the window − 1 tokens before it. Refused by name: rope scaling
other than the default (llama3, linear, dynamic, yarn … change the angles per frequency; not run here), a Qwen 2's
``use_sliding_window`` (its window applies to some layers only), ``mlp_bias``, an activation other than SiLU.

**The default small model and the caps.** HuggingFaceTB/SmolLM2-135M (30 layers, d_model 576, 9 heads of 64, 3
key/value heads, d_ff 1,536, vocab 49,152, tied embeddings, 8,192 positions, bfloat16: a 269 MB model.safetensors) is
what this family is sized for. Its weights stay as bfloat16 bits (attn_models.reader.BF16, 2 bytes a number) and are
widened exactly to float64 a layer at a time for a whole text, a slab at a time on the key/value cache
(attn_models.ops.f64, ops.product, ops.tied_logits): :func:`llama_resident_bytes` 269.1 MB, under
MODEL_LIMITS.causal_resident_bytes (340 MB), where float32 copies would be 538 MB. Its 30 layers are over
MODEL_LIMITS.n_layers (24, every family's), so a causal Llama-family model has its own cap,
MODEL_LIMITS.causal_layers = 32: the layers' count sets the time a token takes, not memory, which the resident cap
bounds (bench/llama.py measures load, memory and time a token at SmolLM2-135M's shape). The server's default causal
model stays distilgpt2 (ATTN_CAUSAL_MODEL may name a Llama-family checkpoint instead).

**The explorer.** :meth:`LlamaLM.layer_config` opens a layer (or, SmolLM2's width, one head with its key/value
head) as an attn_core configuration that carries the layer's attention whole: X = [input_layernorm(h), 1], W_Q and
W_K, W_V of the key/value heads (n_kv_heads) with their bias row, W_O, RoPE (rope_theta, the "half" layout), the
causal mask and a Mistral's window. ``attn_core.run`` of it is the model's attention of that layer bit for bit (the
model computes it with attn_core.modern_attention, as run does); an edit runs back through the configuration's own
pipeline (attn_models.intervene.attend), so an edit of a shared key/value head reaches every query head of its
group.

>>> lm = load_llama("HuggingFaceTB/SmolLM2-135M")                       # doctest: +SKIP
>>> lm.next_token("The cat sat on the").tokens[:3]                       # doctest: +SKIP
>>> lm.kv_head(4), lm.n_kv_heads                                         # doctest: +SKIP
(1, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attn_core import LIMITS, Config, RoPE, make_config, rms_norm

from .access import Access
from .causal import CausalModel
from .errors import N_, ModelError
from .hub import Progress, opened
from .intervene import Intervention, Site, attend, check_layer, edits_refused, head_weights
from .kv import KVCache
from .limits import MODEL_LIMITS
from .ops import f64, product, silu, with_bias_column
from .origin import Origin
from .reader import Fields, Header, check_field_caps, check_memory, check_tensors, read_json, tensors
from .reader import read_header as read_safetensors_header
from .tokenizer import TOKENIZER

LLAMA_TYPES = ("llama", "mistral", "qwen2")  # config.json model_type values read as the Llama family
#: the largest rope_theta read (Llama 3: 500,000; Qwen 2: 1,000,000); beyond, every angle but the first few is ~0
ROPE_THETA_MAX = 1e9
LLAMA_MODEL = "HuggingFaceTB/SmolLM2-135M"  # the small model this family is sized for (see the module's text)


# ---- config.json -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LlamaConfig:
    """The hyper-parameters of a Llama-family model (config.json's num_hidden_layers, num_attention_heads,
    num_key_value_heads, hidden_size, head_dim, intermediate_size, vocab_size, max_position_embeddings, rms_norm_eps,
    rope_theta, tie_word_embeddings, the biases, sliding_window, eos_token_id)."""

    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    d_ff: int
    vocab_size: int
    max_positions: int
    eps: float
    rope_theta: float
    tied: bool
    qkv_bias: bool = False  # a Qwen 2's (or a Llama's attention_bias)
    o_bias: bool = False  # a Llama's attention_bias
    window: int | None = None  # a Mistral's sliding_window
    eos_ids: tuple[int, ...] = ()
    tokenizer_files: ClassVar[tuple[str, ...]] = (TOKENIZER,)  # byte-level BPE: tokenizer.json only

    @property
    def d_k(self) -> int:
        return self.d_head

    @property
    def max_tokens(self) -> int:
        """The longest context: the app's n_seq cap, or the model's positions if fewer."""
        return min(LIMITS.n_seq, self.max_positions)

    @property
    def head_only(self) -> bool:
        """Whether a layer opens in the explorer one head at a time: a whole layer's configuration (X [n, d + 1],
        W_Q, W_K, W_V [d + 1, H·d_k], W_O [H·d_k, d]) at :attr:`max_tokens` tokens is over attn_core.LIMITS."""
        d, n, w = self.d_model, self.max_tokens, self.n_heads * self.d_head
        return w > LIMITS.width or n * (d + 1) + 3 * (d + 1) * w + w * d > LIMITS.total_cells


#: config.json field -> (the LlamaConfig attribute, the ModelLimits cap): every field that sizes the model
FIELD_CAPS = {
    "num_hidden_layers": ("n_layers", "causal_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "intermediate_size": ("d_ff", "d_ff"),
    "max_position_embeddings": ("max_positions", "max_positions"),
}


def llama_resident_bytes(cfg: LlamaConfig, itemsize: int = 2) -> int:
    """Bytes a Llama-family model (:class:`LlamaLM`) takes once loaded: every weight as its checkpoint holds it
    (``itemsize`` bytes a number: bfloat16 kept as its bits, 2; float32, 4), widened to float64 a layer at a time
    when it runs.

    embed_tokens [vocab, d], lm_head [vocab, d] unless tied, norm [d]; per layer: two norms [d], W_Q [d + 1, H·d_k],
    W_K and W_V [d + 1, KV·d_k] (the bias row, zeros when there is none), W_O [H·d_k, d] and b_O [d], gate and up
    [d, d_ff], down [d_ff, d].

    >>> smol = LlamaConfig("llama", n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, d_head=64, d_ff=1536,
    ...                    vocab_size=49152, max_positions=8192, eps=1e-5, rope_theta=100000.0, tied=True)
    >>> round(llama_resident_bytes(smol) / 1e6, 1), round(llama_resident_bytes(smol, 4) / 1e6, 1)
    (269.1, 538.2)
    """
    d, ff, w, kv = cfg.d_model, cfg.d_ff, cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
    layer = 2 * d + (d + 1) * (w + 2 * kv) + w * d + d + 3 * d * ff
    tables = (1 if cfg.tied else 2) * cfg.vocab_size * d
    return (tables + d + cfg.n_layers * layer) * itemsize


def head_cells(d_model: int, d_k: int, n_seq: int) -> int:
    """Cells of one head's explorer configuration: X [n_seq, d+1], W_Q, W_K, W_V [d+1, d_k], W_O [d_k, d].

    >>> head_cells(576, 64, 256)
    295360
    """
    return n_seq * (d_model + 1) + 3 * (d_model + 1) * d_k + d_k * d_model


def _rope_theta(fields: Fields, where: str) -> float:
    """rope_theta (transformers 5 keeps it in rope_parameters), a number from 1 to :data:`ROPE_THETA_MAX`; the rope
    scaling none or the default; else ModelError naming the field."""
    params = fields.get("rope_parameters")
    params = params if isinstance(params, dict) else {}
    scaling = fields.get("rope_scaling")
    for key, spec in (("rope_scaling", scaling), ("rope_parameters", params)):
        if spec is None:
            continue
        if not isinstance(spec, dict):
            raise ModelError(N_("{where}: {key} must be a JSON object or null."), where=where, key=key)
        kind = spec.get("rope_type", spec.get("type", "default"))
        if kind != "default":
            raise ModelError(N_("{where}: {key} has rope_type {kind}: only the default RoPE (no scaling) is run "
                                "here."), where=where, key=key, kind=repr(str(kind)[:40]))
    theta = params.get("rope_theta", fields.get("rope_theta", 10000.0))
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 1 <= theta <= ROPE_THETA_MAX:
        raise ModelError(N_("{where}: rope_theta must be a number from 1 to {most:g}, got {value}."), where=where,
                         most=ROPE_THETA_MAX, value=str(theta)[:40])
    return float(theta)


def parse_llama_config(doc: object, where: str = "config.json") -> LlamaConfig:
    """A :class:`LlamaConfig` from config.json's dict, or ModelError naming the field: not of the family, a variant
    not run here, or over the caps (attn_models.MODEL_LIMITS, attn_core.LIMITS).

    >>> c = parse_llama_config({"model_type": "llama", "num_hidden_layers": 30, "num_attention_heads": 9,
    ...     "num_key_value_heads": 3, "hidden_size": 576, "intermediate_size": 1536, "vocab_size": 49152,
    ...     "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 100000, "tie_word_embeddings": True})
    >>> c.d_k, c.max_tokens, c.head_only, c.tied
    (64, 256, True, True)
    >>> parse_llama_config({"model_type": "gpt2"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: model_type 'gpt2' is not of the Llama family; ...
    """
    fields = Fields(doc, where)
    kind = fields.kind(LLAMA_TYPES, N_("{where}: model_type {kind} is not of the Llama family; this runs model_type "
                                       "{types}."))
    act = fields.get("hidden_act", "silu")
    if act != "silu":
        raise ModelError(N_("{where}: hidden_act {act}: only SiLU (SwiGLU's gate), 'silu', is run here."),
                         where=where, act=repr(str(act)[:40]))
    for key in ("mlp_bias", "use_sliding_window"):
        if fields.get(key):
            raise ModelError(N_("{where}: {key} is true; this variant is not run here."), where=where, key=key)
    theta = _rope_theta(fields, where)
    whole = fields.whole
    n_heads = whole("num_attention_heads")
    d = whole("hidden_size")
    d_head = d // n_heads if fields.get("head_dim") is None else whole("head_dim")
    window = fields.get("sliding_window") if kind == "mistral" else None
    eos = fields.get("eos_token_id")
    eos_ids = tuple(e for e in (eos if isinstance(eos, list) else [eos]) if isinstance(e, int)
                    and not isinstance(e, bool) and e >= 0)
    bias = fields.get("attention_bias", False) is True
    cfg = LlamaConfig(model_type=kind, n_layers=whole("num_hidden_layers"), n_heads=n_heads,
                      n_kv_heads=whole("num_key_value_heads", n_heads), d_model=d, d_head=d_head,
                      d_ff=whole("intermediate_size"), vocab_size=whole("vocab_size"),
                      max_positions=whole("max_position_embeddings", 2048), eps=fields.small("rms_norm_eps", 1e-6),
                      rope_theta=theta, tied=fields.get("tie_word_embeddings", True) is True,
                      qkv_bias=kind == "qwen2" or bias, o_bias=kind != "qwen2" and bias,
                      window=None if window is None else whole("sliding_window"), eos_ids=eos_ids)
    check_llama_caps(cfg, where)
    return cfg


def check_llama_caps(cfg: LlamaConfig, where: str = "config.json", itemsize: int = 2) -> None:
    """ModelError naming the config field over its cap or not fitting another (heads, head_dim), or the memory the
    model would take (weights of ``itemsize`` bytes a number), or the attn_core.LIMITS cap a layer's (or a head's)
    configuration would exceed."""
    check_field_caps(cfg, FIELD_CAPS, where)
    d, w = cfg.d_model, cfg.n_heads * cfg.d_head
    if cfg.n_heads % cfg.n_kv_heads:
        raise ModelError(N_("{where}: num_key_value_heads {kv} does not divide num_attention_heads {heads}: each "
                            "key/value head serves the same number of query heads."), where=where, kv=cfg.n_kv_heads,
                         heads=cfg.n_heads)
    if cfg.d_head % 2:
        raise ModelError(N_("{where}: head_dim {d_head} is odd; RoPE turns a head's features in pairs."), where=where,
                         d_head=cfg.d_head)
    if cfg.n_heads > LIMITS.n_heads:
        raise ModelError(N_("{where}: num_attention_heads {heads} is over the cap of {cap} (heads)."), where=where,
                         heads=cfg.n_heads, cap=LIMITS.n_heads)
    if d + 1 > LIMITS.d_model:
        raise ModelError(N_("{where}: hidden_size {d} + 1 (the bias column) = {columns} columns of X is over the cap "
                            "of {cap} (d_model)."), where=where, d=d, columns=d + 1, cap=LIMITS.d_model)
    if max(d, w) > LIMITS.width:
        raise ModelError(N_("{where}: hidden_size {d} and heads × head_dim {w} are W_O's rows and columns; the cap is "
                            "{cap} (widths)."), where=where, d=d, w=w, cap=LIMITS.width)
    cells = head_cells(d, cfg.d_head, cfg.max_tokens)
    if cells > LIMITS.total_cells:
        raise ModelError(N_("{where}: one head at {n} tokens is {cells:,} cells; the cap is {cap:,} (total cells)."),
                         where=where, n=cfg.max_tokens, cells=cells, cap=LIMITS.total_cells)
    check_memory(llama_resident_bytes(cfg, itemsize), MODEL_LIMITS.causal_resident_bytes, where)


def read_llama_config(path: Path) -> LlamaConfig:
    """config.json (at most MODEL_LIMITS.config_bytes) as a :class:`LlamaConfig`, or ModelError."""
    return parse_llama_config(read_json(path))


# ---- model.safetensors -----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Block:
    """One decoder layer as its checkpoint holds it (bfloat16 as its bits, float32, …; :meth:`f64` widens it), laid
    out for ``x @ w``.

    in_norm, post_norm [d_model] (input_layernorm, post_attention_layernorm); w_q [d_model + 1, H·d_k], w_k, w_v
    [d_model + 1, KV·d_k] (their bias as the last row, zeros when the checkpoint has none); w_o [H·d_k, d_model] and
    b_o [d_model] (zeros unless attention_bias); w_gate, w_up [d_model, d_ff]; w_down [d_ff, d_model].
    """

    in_norm: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    post_norm: np.ndarray
    w_gate: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray

    def f64(self) -> Block:
        """The same layer in float64 (exact from bfloat16, float16 and float32)."""
        return Block(**{k: f64(v) for k, v in vars(self).items()})

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in vars(self).values())


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    """embed [vocab_size, d_model] (embed_tokens), the blocks, norm [d_model], lm_head [vocab_size, d_model] (the
    embedding itself when tied)."""

    embed: np.ndarray
    blocks: tuple[Block, ...]
    norm: np.ndarray
    lm_head: np.ndarray

    @property
    def nbytes(self) -> int:
        head = 0 if self.lm_head is self.embed else self.lm_head.nbytes
        return self.embed.nbytes + self.norm.nbytes + head + sum(b.nbytes for b in self.blocks)


def llama_tensors(cfg: LlamaConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the model reads (LlamaForCausalLM's names) and its shape as stored (torch Linear: [out, in])."""
    d, ff, w, kv = cfg.d_model, cfg.d_ff, cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
    shapes = {"model.embed_tokens.weight": (cfg.vocab_size, d), "model.norm.weight": (d,)}
    if not cfg.tied:
        shapes["lm_head.weight"] = (cfg.vocab_size, d)
    for i in range(cfg.n_layers):
        p = f"model.layers.{i}."
        shapes |= {p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                   p + "self_attn.q_proj.weight": (w, d), p + "self_attn.k_proj.weight": (kv, d),
                   p + "self_attn.v_proj.weight": (kv, d), p + "self_attn.o_proj.weight": (d, w),
                   p + "mlp.gate_proj.weight": (ff, d), p + "mlp.up_proj.weight": (ff, d),
                   p + "mlp.down_proj.weight": (d, ff)}
        if cfg.qkv_bias:
            shapes |= {p + "self_attn.q_proj.bias": (w,), p + "self_attn.k_proj.bias": (kv,),
                       p + "self_attn.v_proj.bias": (kv,)}
        if cfg.o_bias:
            shapes[p + "self_attn.o_proj.bias"] = (d,)
    return shapes


def read_llama_header(path: Path, cfg: LlamaConfig) -> Header:
    """model.safetensors' header checked against ``cfg`` before any tensor is read (its length, every tensor the
    model reads with config.json's shape, a dtype read here, its bytes inside the file; then the memory the model
    takes with its weights' dtypes, bfloat16 kept as 2 bytes); ModelError otherwise."""
    header = read_safetensors_header(path)
    shapes = llama_tensors(cfg)
    check_tensors(header, shapes, N_("model.safetensors has no tensor {name}; is it a Llama-family checkpoint?"))
    check_llama_caps(cfg, "model.safetensors", max(header.itemsize(k, keep_bf16=True) for k in shapes))
    return header


def read_llama_weights(path: Path, cfg: LlamaConfig) -> LlamaWeights:
    """Every weight of model.safetensors in its dtype (bfloat16 kept as its bits; checked first:
    :func:`read_llama_header`), every value finite; Linear weights transposed to [in, out], q/k/v with their bias
    (or zeros) as the last row."""
    header = read_llama_header(path, cfg)
    with tensors(header, keep_bf16=True) as get:

        def linear(name: str, bias: bool | None = None) -> np.ndarray:  # [out, in] -> [in (+ 1), out]
            w = get(name + ".weight").T
            if bias is None:
                return np.ascontiguousarray(w)
            row = get(name + ".bias")[None] if bias else np.zeros((1, w.shape[1]), dtype=w.dtype)
            return np.concatenate([w, row.astype(w.dtype, copy=False)])

        blocks = []
        for i in range(cfg.n_layers):
            p = f"model.layers.{i}."
            a = p + "self_attn."
            w_o = linear(a + "o_proj")
            blocks.append(Block(
                in_norm=get(p + "input_layernorm.weight"), w_q=linear(a + "q_proj", cfg.qkv_bias),
                w_k=linear(a + "k_proj", cfg.qkv_bias), w_v=linear(a + "v_proj", cfg.qkv_bias), w_o=w_o,
                b_o=get(a + "o_proj.bias") if cfg.o_bias else np.zeros(cfg.d_model, dtype=w_o.dtype),
                post_norm=get(p + "post_attention_layernorm.weight"), w_gate=linear(p + "mlp.gate_proj"),
                w_up=linear(p + "mlp.up_proj"), w_down=linear(p + "mlp.down_proj")))
        embed = get("model.embed_tokens.weight")
        return LlamaWeights(embed, tuple(blocks), get("model.norm.weight"),
                            embed if cfg.tied else get("lm_head.weight"))


# ---- the forward pass --------------------------------------------------------------------------------------------


def attention(x1: np.ndarray, w: Block, cfg: LlamaConfig, intervention: Intervention, layer: int, own: bool,
              cache: KVCache | None = None) -> tuple[np.ndarray, np.ndarray]:  # [n, d + 1] -> [n, d], weights
    """LlamaAttention: causal grouped-query self-attention of X₁ = [rms_norm(h), 1] with RoPE (and a Mistral's
    window) through attn_core at the intervention point (attn_models.intervene.attend: attn_core.modern_attention, as
    attn_core.run runs :meth:`LlamaLM.layer_config`'s configuration; on a cache, Site.rotated). Returns concat @ W_O
    (o_proj without its bias) and the weights [n_heads, n, n]; with a ``cache``, X₁'s rows are the new tokens' and the
    weights [n_heads, n, past + n]."""
    site = Site(x1, w.w_q, w.w_k, w.w_v, w.w_o, cfg.n_heads, causal=True, by_head=cfg.head_only, cache=cache,
                cache_key=layer, rope_base=cfg.rope_theta, n_kv_heads=cfg.n_kv_heads, window=cfg.window)
    return attend(site, intervention, layer, own=own)


def mlp(h: np.ndarray, w: Block, eps: float) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, d_model]
    """LlamaMLP on post_attention_layernorm: down(silu(gate(x)) · up(x)) (SwiGLU; attn_models.ops.product: ``@`` for
    float64 weights, a slab at a time for the checkpoint's)."""
    x = rms_norm(h, f64(w.post_norm), eps)  # [n_seq, d_model]
    return product(silu(product(x, w.w_gate)) * product(x, w.w_up), w.w_down)


def block(h: np.ndarray, w: Block, cfg: LlamaConfig, intervention: Intervention, layer: int, own: bool,
          cache: KVCache | None = None) -> tuple[np.ndarray, np.ndarray]:  # [n, d_model] -> [n, d_model], weights
    """LlamaDecoderLayer: h + attention(input_layernorm(h)) + b_O, then + mlp; returns the layer's output and its
    attention weights ([n_heads, n, n]; with a key/value ``cache``: [n_heads, n, past + n])."""
    x1 = with_bias_column(rms_norm(h, f64(w.in_norm), cfg.eps))  # [n_seq, d_model + 1]
    out, weights = attention(x1, w, cfg, intervention, layer, own, cache)
    h = h + (out + f64(w.b_o))
    return h + mlp(h, w, cfg.eps), weights


# ---- the model -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LlamaLM(CausalModel):
    """A Llama-family causal language model (see :func:`load_llama`): attn_models.causal.CausalModel (tokens, the
    next token, generation, which heads matter) with the Llama forward pass.

    name (the source), config, weights (the checkpoint's dtype; bfloat16 as its bits), tokenizer (tokenizers.Tokenizer:
    byte-level BPE, no truncation, no padding), load_seconds.
    """

    config: LlamaConfig
    weights: LlamaWeights

    @property
    def eot_id(self) -> int | None:
        """config.json's eos_token_id (the first, when it lists several), else the tokenizer's <|endoftext|>."""
        return self.config.eos_ids[0] if self.config.eos_ids else super().eot_id

    def _embed(self, ids: np.ndarray) -> np.ndarray:  # int [n] -> [n, d_model]
        return f64(self.weights.embed[ids])

    def run(self, ids: np.ndarray, *, intervention: Intervention | None = None, own: bool = True, start: int = 0,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The layers ``start`` … on token ids ``ids``: (residual stream [n_layers − start + 1, n_seq, d_model]: each
        layer's input, then the last layer's output (before the final norm); attentions
        [n_layers − start, n_heads, n, n]). ``intervention``, ``own``, ``hidden`` as GPT-2's CausalLM.run."""
        n = len(ids)
        self.check_length(n)
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        cfg = self.config
        if hidden is None:
            hidden = self.run(ids, intervention=iv, own=own)[0][start] if start else self._embed(ids)
        stream = np.empty((cfg.n_layers - start + 1, n, cfg.d_model))
        attentions = np.empty((cfg.n_layers - start, cfg.n_heads, n, n))
        stream[0] = hidden
        with edits_refused(iv):
            for i, layer in enumerate(range(start, cfg.n_layers)):
                stream[i + 1], attentions[i] = block(stream[i], self.weights.blocks[layer].f64(), cfg, iv, layer, own)
        return stream, attentions

    def extend(self, ids: np.ndarray, cache: KVCache, *,
               intervention: Intervention | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The layers on the tokens ``ids`` after the ``cache.past`` tokens whose keys (after RoPE) and values
        ``cache`` holds: ([n_new, d_model] before the final norm, attention rows [n_layers, n_heads, n_new,
        past + n_new]), the whole text's last rows to rounding, as GPT-2's CausalLM.extend."""
        past, n_new = cache.past, len(ids)
        self.check_length(past + n_new)
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        cfg = self.config
        h = self._embed(ids)  # [n_new, d_model]
        attentions = np.empty((cfg.n_layers, cfg.n_heads, n_new, past + n_new))
        with edits_refused(iv):
            for layer in range(cfg.n_layers):
                h, attentions[layer] = block(h, self.weights.blocks[layer], cfg, iv, layer, False, cache)
        cache.advance(n_new)
        return h, attentions

    def final_norm(self, h: np.ndarray) -> np.ndarray:  # [n, d_model] -> [n, d_model]
        """The final RMSNorm (``norm``) of the last layer's output, row by row."""
        return rms_norm(h, f64(self.weights.norm), self.config.eps)

    @property
    def unembedding(self) -> np.ndarray:  # [vocab_size, d_model]
        """lm_head: the embedding itself when tied (SmolLM2), else its own table."""
        return self.weights.lm_head

    def layer_config(self, prompt: str, layer: int, *, head: int = 0) -> Config:
        """Layer ``layer``'s attention on ``prompt`` as an attn_core configuration (see the module's text): X =
        [input_layernorm(h), 1]; W_Q [d + 1, H·d_k] and W_K, W_V [d + 1, KV·d_k] of the key/value heads
        (``n_kv_heads``: grouped-query attention, query head h reading kv_head(h)), each with its bias row; W_O; the
        layer's RoPE (``rope=RoPE(rope_theta, "half")``); causal, with a Mistral's ``window``; √d_k.

        The whole layer when it fits attn_core.LIMITS, else head ``head`` alone (origin "of_heads"): n_heads 1 (no
        grouping: its W_K and W_V are its key/value head's columns, shared with the other heads of its group), RoPE
        on. ``attn_core.run`` of it gives the layer's (or that head's) weights and outputs bit for bit as
        :meth:`forward` computes them (both are attn_core.modern_attention on the same numbers); run back
        (attn_models.Intervention(config=…)) its edits go through the model with the configuration's own pipeline:
        an edit of a key/value head's W_K reaches every query head of its group."""
        check_layer(layer, self.n_layers)
        if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 0 <= head < self.n_heads:
            raise ModelError(N_("Head {head} of layer {layer} does not exist: each layer has heads 0 … {last}."),
                             head=repr(head)[:40], layer=layer, last=self.n_heads - 1)
        enc = self.encode(prompt)
        self.check_length(len(enc.ids))
        cfg = self.config
        h_in = self.run(enc.ids)[0][layer] if layer else self._embed(enc.ids)
        w = self.weights.blocks[layer].f64()
        x1 = with_bias_column(rms_norm(h_in, w.in_norm, cfg.eps))  # [n_seq, d_model + 1]
        origin = Origin("causal", self.name, int(layer), int(head), prompt, bias_column=cfg.d_model,
                        of_heads=self.n_heads if cfg.head_only else None, family=cfg.model_type)
        if cfg.head_only:  # one query head with its key/value head: [d + 1, d_k] each, W_O [d_k, d]
            w_q, w_k, w_v, w_o = head_weights(w.w_q, w.w_k, w.w_v, w.w_o, int(head), self.n_heads, cfg.n_kv_heads)
            n_heads, n_kv = 1, None
        else:
            w_q, w_k, w_v, w_o, n_heads = w.w_q, w.w_k, w.w_v, w.w_o, self.n_heads
            n_kv = None if cfg.n_kv_heads == cfg.n_heads else cfg.n_kv_heads
        return make_config(list(enc.tokens), x1, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv,
                           scale="sqrt_dk", mask_kind="causal", rope=RoPE(cfg.rope_theta, "half"), window=cfg.window,
                           origin=origin.as_dict())

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of layer ``layer`` (float64; zeros unless attention_bias): the attention output is concat @ W_O + b_O."""
        check_layer(layer, self.n_layers)
        return f64(self.weights.blocks[layer].b_o)


# ---- loading -------------------------------------------------------------------------------------------------------


def load_llama(source: str = LLAMA_MODEL, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
               access: Access | None = None, local_only: bool = False) -> LlamaLM:
    """Read a Llama-family checkpoint (config.json, model.safetensors, tokenizer.json) from a folder or the Hugging
    Face Hub (judged from its metadata and config.json before the weights are downloaded), as attn_models.load does
    for every family; raises the same errors (ModelError naming the file or field, ModelUnavailableError,
    NotFetchedError)."""
    with opened(source, read_llama_config, cache_dir=cache_dir, progress=progress, access=access,
                local_only=local_only) as checkpoint:
        weights, tokenizer = read_llama_weights(checkpoint.files.weights, checkpoint.config), checkpoint.tokenizer()
    return LlamaLM(checkpoint.files.source, checkpoint.config, weights, tokenizer, checkpoint.seconds)


__all__ = ["LLAMA_MODEL", "LLAMA_TYPES", "LlamaConfig", "LlamaLM", "llama_resident_bytes", "load_llama",
           "parse_llama_config", "read_llama_config"]
