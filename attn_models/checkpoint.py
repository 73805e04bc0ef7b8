"""Reading a BERT-family checkpoint: config.json (and the app's caps), model.safetensors, tokenizer.json.

The weights become float64 numpy arrays laid out as :class:`attn_models.encoder.LayerWeights` wants them
(transposed to [in, out]; the Q, K, V biases as the projections' last row). Only safetensors is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_core import LIMITS

from .encoder import LayerWeights
from .errors import N_, ModelError

BERT_TYPES = ("bert",)  # config.json model_type values read as BERT (same weight names, same forward pass)


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT-family encoder (from config.json).

    Attributes
    ----------
    n_layers, n_heads, d_model, d_ff : int
        num_hidden_layers, num_attention_heads, hidden_size, intermediate_size.
    vocab_size, max_positions, type_vocab_size : int
    eps : float
        layer_norm_eps.
    """

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def max_tokens(self) -> int:
        """The longest input: the app's n_seq cap, or the model's positions if fewer."""
        return min(LIMITS.n_seq, self.max_positions)


def config_cells(d_model: int, n_seq: int) -> int:
    """Cells of one layer's explorer configuration: X [n_seq, d+1], W_Q, W_K, W_V [d+1, d], W_O [d, d].

    >>> config_cells(384, 256)
    689536
    """
    return n_seq * (d_model + 1) + 3 * (d_model + 1) * d_model + d_model * d_model


def parse_config(doc: object, where: str = "config.json") -> BertConfig:
    """A :class:`BertConfig` from config.json's dict, or ModelError: not BERT-family, or over the app's caps.

    Examples
    --------
    >>> c = parse_config({"model_type": "bert", "num_hidden_layers": 6, "num_attention_heads": 12,
    ...                   "hidden_size": 384, "intermediate_size": 1536, "vocab_size": 30522})
    >>> c.d_k, c.max_tokens, c.eps
    (32, 256, 1e-12)
    >>> parse_config({"model_type": "bert", "num_hidden_layers": 12, "num_attention_heads": 12,
    ...               "hidden_size": 768, "intermediate_size": 3072, "vocab_size": 30522})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: hidden_size 768 + 1 (the bias column) = 769 ... cap of 512 (d_model)...
    """
    if not isinstance(doc, dict):
        raise ModelError(N_("{where}: not a JSON object."), where=where)
    kind = doc.get("model_type")
    if kind not in BERT_TYPES:
        raise ModelError(N_("{where}: model_type {kind} is not BERT-family; this app runs BERT encoders "
                            "(model_type {types})."), where=where, kind=repr(str(kind)[:40]),
                         types=", ".join(BERT_TYPES))
    act = doc.get("hidden_act", "gelu")
    if act != "gelu":
        raise ModelError(N_("{where}: hidden_act {act}: only the exact (erf) GELU, 'gelu', is run here."),
                         where=where, act=repr(str(act)[:40]))
    if doc.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(N_("{where}: only absolute position embeddings are run here."), where=where)
    if doc.get("is_decoder") or doc.get("add_cross_attention"):
        raise ModelError(N_("{where}: a decoder; this app runs encoders."), where=where)

    def whole(key: str, default: int | None = None) -> int:
        value = doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelError(N_("{where}: {key} must be a whole number of at least 1, got {value}."), where=where,
                             key=key, value=str(value)[:40])
        return value

    eps = doc.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps < 1:
        raise ModelError(N_("{where}: layer_norm_eps must be a small number, got {value}."), where=where,
                         value=str(eps)[:40])
    cfg = BertConfig(
        n_layers=whole("num_hidden_layers"), n_heads=whole("num_attention_heads"), d_model=whole("hidden_size"),
        d_ff=whole("intermediate_size"), vocab_size=whole("vocab_size"),
        max_positions=whole("max_position_embeddings", 512), type_vocab_size=whole("type_vocab_size", 2),
        eps=float(eps),
    )
    check_caps(cfg, where)
    return cfg


def check_caps(cfg: BertConfig, where: str = "config.json") -> None:
    """ModelError naming the cap (attn_core.LIMITS) that one layer's explorer configuration would exceed."""
    d = cfg.d_model
    if d % cfg.n_heads:
        raise ModelError(N_("{where}: hidden_size {d} is not a multiple of num_attention_heads {heads}."),
                         where=where, d=d, heads=cfg.n_heads)
    if d + 1 > LIMITS.d_model:
        raise ModelError(N_("{where}: hidden_size {d} + 1 (the bias column) = {columns} columns of X is over the cap "
                            "of {cap} (d_model). This app's caps fit models up to hidden_size {most}."),
                         where=where, d=d, columns=d + 1, cap=LIMITS.d_model, most=LIMITS.d_model - 1)
    if d > LIMITS.width:
        raise ModelError(N_("{where}: hidden_size {d} columns of W_Q is over the cap of {cap} (widths)."),
                         where=where, d=d, cap=LIMITS.width)
    if cfg.n_heads > LIMITS.n_heads:
        raise ModelError(N_("{where}: num_attention_heads {heads} is over the cap of {cap} (heads)."),
                         where=where, heads=cfg.n_heads, cap=LIMITS.n_heads)
    cells = config_cells(d, cfg.max_tokens)
    if cells > LIMITS.total_cells:
        raise ModelError(N_("{where}: one layer at {n} tokens is {cells:,} cells; the cap is {cap:,} (total cells)."),
                         where=where, n=cfg.max_tokens, cells=cells, cap=LIMITS.total_cells)


def read_config(path: Path) -> BertConfig:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelError(N_("config.json could not be read: {err}"), err=str(err)) from None
    return parse_config(doc)


@dataclass(frozen=True, eq=False)
class Embeddings:
    """The embedding tables. ``word`` keeps the checkpoint's dtype (rows become float64 when looked up: exact).

    word [vocab_size, d_model], position [max_positions, d_model], token_type [type_vocab_size, d_model],
    ln_g, ln_b [d_model].
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_g: np.ndarray
    ln_b: np.ndarray


def _normalise(name: str) -> str:
    """Weight names as all-MiniLM-L6-v2 has them: no "bert." prefix, LayerNorm weight/bias (not gamma/beta)."""
    name = name.removeprefix("bert.")
    if ".LayerNorm." in name:
        name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    return name


def read_weights(path: Path, cfg: BertConfig) -> tuple[Embeddings, tuple[LayerWeights, ...]]:
    """The embeddings and every layer of model.safetensors, checked against ``cfg``'s shapes."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="numpy") as f:
            names = {_normalise(k): k for k in f.keys()}  # noqa: SIM118 - safe_open is not a mapping

            def get(name: str, shape: tuple[int, ...], *, keep_dtype: bool = False) -> np.ndarray:
                if name not in names:
                    raise ModelError(N_("model.safetensors has no tensor {name}; is it a BERT checkpoint?"),
                                     name=name)
                try:
                    t = f.get_tensor(names[name])
                except (TypeError, ValueError) as err:  # e.g. bfloat16, which numpy has no type for
                    raise ModelError(N_("model.safetensors: {name} could not be read as numbers ({err})."),
                                     name=name, err=str(err)) from None
                if t.shape != shape:
                    raise ModelError(N_("model.safetensors: {name} has shape {shape}, config.json implies {wanted}."),
                                     name=name, shape=str(t.shape), wanted=str(shape))
                if not np.issubdtype(t.dtype, np.floating):
                    raise ModelError(N_("model.safetensors: {name} holds {dtype}, not floating-point numbers."),
                                     name=name, dtype=str(t.dtype))
                return t if keep_dtype else t.astype(np.float64)

            d, ff = cfg.d_model, cfg.d_ff
            emb = Embeddings(
                word=get("embeddings.word_embeddings.weight", (cfg.vocab_size, d), keep_dtype=True),
                position=get("embeddings.position_embeddings.weight", (cfg.max_positions, d)),
                token_type=get("embeddings.token_type_embeddings.weight", (cfg.type_vocab_size, d)),
                ln_g=get("embeddings.LayerNorm.weight", (d,)),
                ln_b=get("embeddings.LayerNorm.bias", (d,)),
            )

            def projection(p: str) -> np.ndarray:  # [out, in] + [out] -> [in + 1, out]: bias as the last row
                return np.vstack([get(f"{p}.weight", (d, d)).T, get(f"{p}.bias", (d,))])

            layers = []
            for i in range(cfg.n_layers):
                p = f"encoder.layer.{i}"
                layers.append(LayerWeights(
                    w_q=projection(f"{p}.attention.self.query"),  # [d_model + 1, d_model]
                    w_k=projection(f"{p}.attention.self.key"),
                    w_v=projection(f"{p}.attention.self.value"),
                    w_o=np.ascontiguousarray(get(f"{p}.attention.output.dense.weight", (d, d)).T),  # [d_model, d_model]
                    b_o=get(f"{p}.attention.output.dense.bias", (d,)),
                    ln1_g=get(f"{p}.attention.output.LayerNorm.weight", (d,)),
                    ln1_b=get(f"{p}.attention.output.LayerNorm.bias", (d,)),
                    w_ff1=np.ascontiguousarray(get(f"{p}.intermediate.dense.weight", (ff, d)).T),  # [d_model, d_ff]
                    b_ff1=get(f"{p}.intermediate.dense.bias", (ff,)),
                    w_ff2=np.ascontiguousarray(get(f"{p}.output.dense.weight", (d, ff)).T),  # [d_ff, d_model]
                    b_ff2=get(f"{p}.output.dense.bias", (d,)),
                    ln2_g=get(f"{p}.output.LayerNorm.weight", (d,)),
                    ln2_b=get(f"{p}.output.LayerNorm.bias", (d,)),
                ))
    except (OSError, SafetensorError) as err:
        raise ModelError(N_("model.safetensors could not be read: {err}"), err=str(err)) from None
    for w in (emb.position, emb.token_type, *(getattr(layer, f) for layer in layers for f in ("w_q", "w_k", "w_v"))):
        if not np.isfinite(w).all():
            raise ModelError(N_("model.safetensors holds a weight that is not a finite number."))
    return emb, tuple(layers)
