"""BERT, RoBERTa and XLM-RoBERTa encoders (transformers' ``modeling_bert.py`` / ``modeling_roberta.py``) in float64
numpy: config.json and its caps, the tensors' names, the weights, the forward pass, the masked-language-model head,
and a loaded :class:`Model` (:func:`load_encoder`).

The forward pass, stage by stage with transformers' names (BertEmbeddings, BertSelfAttention, BertSelfOutput,
BertIntermediate, BertOutput, BertLayer, BertEncoder, BertOnlyMLMHead)::

    h = LayerNorm(word[ids] + token_type[types] + position[positions])   # [n_seq, d_model]  embeddings
    for each layer:                                                       # encoder: each a layer
        a = MHA(X₁ = [h, 1], W_Q, W_K, W_V, W_O, padding mask)             # attention (attn_models.intervene.attend)
        h = LayerNorm(a + b_O + h)                                        # self_output
        h = LayerNorm(GELU(h W₁ + b₁) W₂ + b₂ + h)                         # feed_forward (intermediate, output)
    probs = softmax(LayerNorm(GELU(h W_t + b_t)) Eᵀ + b)                  # [n_masks, vocab]  mlm_probs

Every self-attention runs through attn_core's multi-head attention (at attn_models.intervene's one intervention
point), on the same matrices :meth:`Model.layer_config` hands to the explorer: X with a constant-1 column appended,
and W_Q, W_K, W_V with their bias as the last row. So the explorer's numbers for a layer are, bit for bit, the ones
this forward pass used. RoBERTa is BERT with its positions counted past the padding id, one token type, and
``<s> </s> <pad>`` as its specials.

Weights are float64 (transposed to [in, out] at load) but the word embedding, memory-mapped from model.safetensors in
its own dtype: a sentence reads its rows only. The tokenizer is tokenizer.json, or vocab.txt (WordPiece) when the
checkpoint has no tokenizer.json (attn_models.tokenizer).

Shapes use the project's names: ``n_seq`` tokens, ``d_model`` (hidden_size), ``n_heads``, ``d_k = d_model /
n_heads`` and ``d_ff`` (intermediate_size).

>>> model = load_encoder("sentence-transformers/all-MiniLM-L6-v2")   # doctest: +SKIP
>>> model.forward("The cat sat.").attentions.shape                   # doctest: +SKIP
(6, 12, 6, 6)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from attn_core import LIMITS, Config, make_config, softmax

from .access import DEFAULT_MODEL, Access
from .errors import N_, ModelError
from .hub import Progress, opened
from .intervene import Intervention, Site, ablate_heads, attend, check_layer, edits_refused, owns
from .limits import MODEL_LIMITS
from .ops import gelu, layer_norm, tied_logits, top_words, with_bias_column
from .origin import Origin, Role, expect_role
from .pretrained import Pretrained
from .reader import Fields, Header, check_field_caps, check_memory, check_tensors, map_tensor, read_json, tensors
from .reader import read_header as read_safetensors_header
from .tokenizer import TOKENIZER, VOCAB, check_id, token_label

T = TypeVar("T")  # what a part of a scan returns (in_turn)
BERT_TYPES = ("bert",)  # config.json model_type values read as BERT (same weight names, same forward pass)
#: model_type values read as RoBERTa: BERT's layers and names (under "roberta." or no prefix), positions offset past
#: the padding id (transformers' create_position_ids_from_input_ids), one token type, <s> </s> <pad> as specials
ROBERTA_TYPES = ("xlm-roberta", "roberta")
#: each family's special tokens: the sentence's first and last, the padding
SPECIALS = {"bert": ("[CLS]", "[SEP]", "[PAD]"), "roberta": ("<s>", "</s>", "<pad>")}
MASK = "[MASK]"
F64 = 8  # bytes of a float64: every weight but the word embedding is held in float64


# ---- config.json -------------------------------------------------------------------------------------------------


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
    family : str
        "bert", or "roberta" (model_type xlm-roberta or roberta): which special tokens, which positions.
    pad_id : int
        pad_token_id (RoBERTa: the padding's id, and the position of every padding token; real tokens' positions
        start at pad_id + 1). BERT's padding is the tokenizer's [PAD].
    model_type : str
        config.json's model_type: "bert", "roberta" or "xlm-roberta".
    """

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float
    family: str = "bert"
    pad_id: int = 0
    model_type: str = "bert"
    #: the tokenizer files read, the first the checkpoint has (attn_models.hub picks it)
    tokenizer_files: ClassVar[tuple[str, ...]] = (TOKENIZER, VOCAB)

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def position_offset(self) -> int:
        """The first real token's position: 0 (BERT), pad_id + 1 (RoBERTa)."""
        return self.pad_id + 1 if self.family == "roberta" else 0

    @property
    def max_tokens(self) -> int:
        """The longest input: the app's n_seq cap, or the model's positions if fewer (RoBERTa's past its offset)."""
        return min(LIMITS.n_seq, self.max_positions - self.position_offset)

    @property
    def specials(self) -> tuple[str, str, str]:
        """The family's first, last and padding tokens: ("[CLS]", "[SEP]", "[PAD]") or ("<s>", "</s>", "<pad>")."""
        return SPECIALS[self.family]


#: config.json field -> (the BertConfig attribute, the ModelLimits cap): every field that sizes the model
FIELD_CAPS = {
    "num_hidden_layers": ("n_layers", "n_layers"),
    "vocab_size": ("vocab_size", "vocab_size"),
    "intermediate_size": ("d_ff", "d_ff"),
    "max_position_embeddings": ("max_positions", "max_positions"),
    "type_vocab_size": ("type_vocab_size", "type_vocab_size"),
}


def resident_bytes(cfg: BertConfig, word_itemsize: int = 4, *, mlm: bool = False, decoder_itemsize: int = 0,
                   word_mapped: bool = True) -> int:
    """Private bytes the model takes once loaded: everything in float64 (:func:`read_weights`) but the
    word embedding, which is memory-mapped from model.safetensors (``word_mapped``: 0 private bytes; its pages are the
    file's, shared and dropped by the kernel when memory is short, and a run reads only its sentence's rows); with
    ``word_mapped=False``, held in memory in its checkpoint's dtype (``word_itemsize`` bytes a number).

    Per layer: W_Q, W_K, W_V [d_model + 1, d_model] (the bias as the last row), W_O [d_model, d_model], b_O,
    two LayerNorms, W_ff1 [d_model, d_ff] + b_ff1, W_ff2 [d_ff, d_model] + b_ff2.

    ``mlm``: with a masked-LM head (:class:`MlmHead`): its transform [d_model, d_model] + bias, LayerNorm and
    output bias [vocab_size] in float64, and its own decoder [vocab_size, d_model] of ``decoder_itemsize`` bytes a
    number (0: tied to the word embedding, nothing more).

    >>> mini = BertConfig(n_layers=6, n_heads=12, d_model=384, d_ff=1536, vocab_size=30522, max_positions=512,
    ...                   type_vocab_size=2, eps=1e-12)
    >>> round(resident_bytes(mini) / 1e6, 1), round(resident_bytes(mini, word_mapped=False) / 1e6, 1)
    (86.8, 133.6)
    >>> multi = BertConfig(n_layers=12, n_heads=12, d_model=384, d_ff=1536, vocab_size=250002, max_positions=514,
    ...                    type_vocab_size=1, eps=1e-5, family="roberta", pad_id=1)
    >>> round(resident_bytes(multi) / 1e6, 1), round(resident_bytes(multi, word_mapped=False) / 1e6, 1)
    (171.9, 555.9)
    >>> round(resident_bytes(mini, mlm=True) / 1e6, 1)  # a masked-LM head, its decoder tied to the word embedding
    88.2
    >>> round(resident_bytes(mini, mlm=True, decoder_itemsize=4) / 1e6, 1)  # its own float32 decoder
    135.1
    """
    d, ff = cfg.d_model, cfg.d_ff
    layer = 3 * (d + 1) * d + d * d + d + 2 * d + d * ff + ff + ff * d + d + 2 * d  # numbers of one layer
    embeddings = (cfg.max_positions + cfg.type_vocab_size + 2) * d  # position, token type, LayerNorm
    head = (d * d + 3 * d + cfg.vocab_size) * F64 + cfg.vocab_size * d * decoder_itemsize if mlm else 0
    word = 0 if word_mapped else cfg.vocab_size * d * word_itemsize
    return word + (embeddings + cfg.n_layers * layer) * F64 + head


def config_cells(d_model: int, n_seq: int) -> int:
    """Cells of one layer's explorer configuration: X [n_seq, d+1], W_Q, W_K, W_V [d+1, d], W_O [d, d].

    >>> config_cells(384, 256)
    689536
    """
    return n_seq * (d_model + 1) + 3 * (d_model + 1) * d_model + d_model * d_model


def largest_hidden(n_seq: int = LIMITS.n_seq) -> int:
    """The largest hidden_size whose layer opens whole in the explorer at ``n_seq`` tokens: X with its bias column
    within LIMITS.d_model, W_Q within LIMITS.width, the layer's cells within LIMITS.total_cells.

    >>> largest_hidden(), largest_hidden(64)
    (516, 539)
    """
    d = min(LIMITS.d_model - 1, LIMITS.width)
    while d > 1 and config_cells(d, n_seq) > LIMITS.total_cells:
        d -= 1
    return d


def parse_config(doc: object, where: str = "config.json") -> BertConfig:
    """A :class:`BertConfig` from config.json's dict, or ModelError: not BERT-family, or over the app's caps.

    Examples
    --------
    >>> c = parse_config({"model_type": "bert", "num_hidden_layers": 6, "num_attention_heads": 12,
    ...                   "hidden_size": 384, "intermediate_size": 1536, "vocab_size": 30522})
    >>> c.d_k, c.max_tokens, c.eps
    (32, 256, 1e-12)
    >>> parse_config({"model_type": "bert", "num_hidden_layers": 12, "num_attention_heads": 16,
    ...               "hidden_size": 1024, "intermediate_size": 3072, "vocab_size": 30522})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: hidden_size 1024 + 1 (the bias column) = 1025 ... (d_model)...
    """
    fields = Fields(doc, where)
    kind = fields.kind(BERT_TYPES + ROBERTA_TYPES, N_("{where}: model_type {kind} is not BERT-family; this app runs "
                                                      "BERT encoders (model_type {types})."))
    family = "roberta" if kind in ROBERTA_TYPES else "bert"
    act = fields.get("hidden_act", "gelu")
    if act != "gelu":
        raise ModelError(N_("{where}: hidden_act {act}: only the exact (erf) GELU, 'gelu', is run here."),
                         where=where, act=repr(str(act)[:40]))
    if fields.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(N_("{where}: only absolute position embeddings are run here."), where=where)
    if fields.get("is_decoder") or fields.get("add_cross_attention"):
        raise ModelError(N_("{where}: a decoder; this app runs encoders."), where=where)
    whole = fields.whole
    eps = fields.small("layer_norm_eps", 1e-12)
    cfg = BertConfig(
        n_layers=whole("num_hidden_layers"), n_heads=whole("num_attention_heads"), d_model=whole("hidden_size"),
        d_ff=whole("intermediate_size"), vocab_size=whole("vocab_size"),
        max_positions=whole("max_position_embeddings", 512), type_vocab_size=whole("type_vocab_size", 2),
        eps=eps, family=family, pad_id=pad_id(fields.doc, family, where), model_type=kind,
    )
    check_caps(cfg, where)
    check_size(cfg, where)
    return cfg


def pad_id(doc: dict, family: str, where: str = "config.json") -> int:
    """config.json's pad_token_id for RoBERTa (1 if absent): a whole number below vocab_size that leaves at least
    one position for a real token (they start at pad_token_id + 1), else ModelError naming the field. BERT: 0 (its
    padding is the tokenizer's [PAD]; the field is not read).

    >>> pad_id({"vocab_size": 100, "max_position_embeddings": 10, "pad_token_id": 9}, "roberta")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: pad_token_id 9 must be a whole number from 0 to 8: ...
    """
    if family != "roberta":
        return 0
    value = doc.get("pad_token_id", 1)
    vocab, n_positions = doc.get("vocab_size"), doc.get("max_position_embeddings", 512)
    last = min(vocab, n_positions - 1) - 1 if isinstance(vocab, int) and isinstance(n_positions, int) else -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= last:
        raise ModelError(N_("{where}: pad_token_id {value} must be a whole number from 0 to {last}: a padding "
                            "token's id below vocab_size, and RoBERTa's positions start after it (at pad_token_id + "
                            "1, of max_position_embeddings)."), where=where, value=str(value)[:40], last=max(last, 0))
    return value


def check_caps(cfg: BertConfig, where: str = "config.json") -> None:
    """ModelError naming the cap (attn_core.LIMITS) that one layer's explorer configuration would exceed."""
    d = cfg.d_model
    if d % cfg.n_heads:
        raise ModelError(N_("{where}: hidden_size {d} is not a multiple of num_attention_heads {heads}."),
                         where=where, d=d, heads=cfg.n_heads)
    if d + 1 > LIMITS.d_model:
        raise ModelError(N_("{where}: hidden_size {d} + 1 (the bias column) = {columns} columns of X is over the cap "
                            "of {cap} (d_model). This app's caps fit models up to hidden_size {most}."),
                         where=where, d=d, columns=d + 1, cap=LIMITS.d_model, most=largest_hidden(cfg.max_tokens))
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


def check_size(cfg: BertConfig, where: str = "config.json", word_itemsize: int = 4, *, mlm: bool = False,
               decoder_itemsize: int = 0, word_mapped: bool = True) -> None:
    """ModelError naming the config field over its cap (attn_models.MODEL_LIMITS), or saying how much memory the
    whole model would take when that is over the cap (``mlm``, ``decoder_itemsize``: with a masked-LM head, see
    :func:`resident_bytes`).

    >>> from dataclasses import replace
    >>> mini = parse_config({"model_type": "bert", "num_hidden_layers": 6, "num_attention_heads": 12,
    ...                      "hidden_size": 384, "intermediate_size": 1536, "vocab_size": 30522})
    >>> check_size(replace(mini, vocab_size=10**9))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: vocab_size 1000000000 is over the cap of 262144 ...
    >>> check_size(replace(mini, n_layers=24, d_ff=4096))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: this model would take 720 MB of memory once loaded; the cap is 300 MB...
    """
    check_field_caps(cfg, FIELD_CAPS, where)
    check_memory(resident_bytes(cfg, word_itemsize, mlm=mlm, decoder_itemsize=decoder_itemsize,
                                word_mapped=word_mapped), MODEL_LIMITS.resident_bytes, where)


def read_config(path: Path) -> BertConfig:
    """config.json (at most MODEL_LIMITS.config_bytes) as a :class:`BertConfig`, or ModelError."""
    return parse_config(read_json(path))


# ---- model.safetensors -------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer, float64, laid out for ``x @ w`` (the checkpoint stores [out, in]: transposed here).

    Attributes
    ----------
    w_q, w_k, w_v : ndarray of shape (d_model + 1, d_model)
        The projection weights with their bias as the last row (it meets X's constant-1 column).
    w_o : ndarray of shape (d_model, d_model)
        The attention output projection; ``b_o`` (d_model,) its bias.
    ln1_g, ln1_b : ndarray of shape (d_model,)
        LayerNorm after attention + residual.
    w_ff1 : ndarray of shape (d_model, d_ff); b_ff1 (d_ff,)
    w_ff2 : ndarray of shape (d_ff, d_model); b_ff2 (d_model,)
    ln2_g, ln2_b : ndarray of shape (d_model,)
        LayerNorm after the feed-forward + residual.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    w_ff1: np.ndarray
    b_ff1: np.ndarray
    w_ff2: np.ndarray
    b_ff2: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True, eq=False)
class Embeddings:
    """The embedding tables. ``word`` keeps the checkpoint's dtype, memory-mapped from model.safetensors (an
    np.memmap: rows become float64 when looked up, exactly; the table is never copied).

    word [vocab_size, d_model], position [max_positions, d_model], token_type [type_vocab_size, d_model],
    ln_g, ln_b [d_model].
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_g: np.ndarray
    ln_b: np.ndarray


@dataclass(frozen=True, eq=False)
class MlmHead:
    """The masked-LM head, float64 but for ``decoder`` (its checkpoint's dtype, as the word embeddings).

    Attributes
    ----------
    w_t : ndarray of shape (d_model, d_model)
        ``cls.predictions.transform.dense`` transposed (for ``h @ w_t``); ``b_t`` (d_model,) its bias.
    ln_g, ln_b : ndarray of shape (d_model,)
        ``cls.predictions.transform.LayerNorm``.
    decoder : ndarray of shape (vocab_size, d_model), or None
        ``cls.predictions.decoder.weight`` when the file has its own; None: tied to the word embeddings (as
        BertForMaskedLM saves it).
    bias : ndarray of shape (vocab_size,)
        ``cls.predictions.decoder.bias`` when the file has one (an untied decoder's), else ``cls.predictions.bias``.
    """

    w_t: np.ndarray
    b_t: np.ndarray
    ln_g: np.ndarray
    ln_b: np.ndarray
    decoder: np.ndarray | None
    bias: np.ndarray


def _normalise(name: str) -> str:
    """Weight names as all-MiniLM-L6-v2 has them: no "bert." (or "roberta.") prefix, LayerNorm weight/bias (not
    gamma/beta)."""
    name = name.removeprefix("bert.").removeprefix("roberta.")
    if ".LayerNorm." in name:
        name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    return name


WORD = "embeddings.word_embeddings.weight"
MLM = "cls.predictions."  # BertForMaskedLM's head (its encoder's names have the "bert." prefix _normalise drops)
DECODER, DECODER_BIAS, MLM_BIAS = MLM + "decoder.weight", MLM + "decoder.bias", MLM + "bias"


def expected_tensors(cfg: BertConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the encoder reads (names as all-MiniLM-L6-v2 has them) and its shape, as the checkpoint stores
    it ([out, in] for a projection)."""
    d, ff = cfg.d_model, cfg.d_ff
    shapes = {WORD: (cfg.vocab_size, d), "embeddings.position_embeddings.weight": (cfg.max_positions, d),
              "embeddings.token_type_embeddings.weight": (cfg.type_vocab_size, d),
              "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,)}
    for i in range(cfg.n_layers):
        p = f"encoder.layer.{i}"
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[f"{p}.{m}.weight"], shapes[f"{p}.{m}.bias"] = (d, d), (d,)
        shapes[f"{p}.intermediate.dense.weight"], shapes[f"{p}.intermediate.dense.bias"] = (ff, d), (ff,)
        shapes[f"{p}.output.dense.weight"], shapes[f"{p}.output.dense.bias"] = (d, ff), (d,)
        for m in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}.{m}.weight"], shapes[f"{p}.{m}.bias"] = (d,), (d,)
    return shapes


def mlm_tensors(cfg: BertConfig, names: dict[str, str] | set[str]) -> dict[str, tuple[int, ...]]:
    """The masked-LM head's tensors and shapes when the checkpoint has one (any ``cls.predictions.`` tensor among
    the normalised ``names``), else {}: the transform (dense, LayerNorm), the output bias and the decoder when the
    file has its own (else it is tied to the word embeddings).

    The output bias is ``cls.predictions.decoder.bias`` when the file has it (what the decoder adds: an untied
    BertForMaskedLM saves its own), else ``cls.predictions.bias`` (a tied one saves only this one, the same tensor).
    """
    if not any(k.startswith(MLM) for k in names):
        return {}
    d, vocab = cfg.d_model, cfg.vocab_size
    p = MLM + "transform."
    bias = DECODER_BIAS if DECODER_BIAS in names else MLM_BIAS
    shapes = {p + "dense.weight": (d, d), p + "dense.bias": (d,), p + "LayerNorm.weight": (d,),
              p + "LayerNorm.bias": (d,), bias: (vocab,)}
    if DECODER in names:
        shapes[DECODER] = (vocab, d)
    return shapes


def read_header(path: Path, cfg: BertConfig) -> Header:
    """Check model.safetensors' header against ``cfg`` before any tensor is read: every tensor the encoder reads there
    with config.json's shape, a dtype read here (F16, F32, F64) and its bytes inside the file, likewise a masked-LM
    head's when it has one (:func:`mlm_tensors`); then the memory the model takes with its word embedding's dtype and
    its head. Returns the header, its names normalised (:func:`_normalise`); ModelError naming the file and the fault.
    """
    header = read_safetensors_header(path, _normalise)
    check_tensors(header, expected_tensors(cfg), N_("model.safetensors has no tensor {name}; is it a BERT checkpoint?"))
    head = mlm_tensors(cfg, header.names)
    check_tensors(header, head, N_("model.safetensors has a masked-language-model head (cls.predictions) without its "
                                   "tensor {name}."))
    check_size(cfg, "model.safetensors", header.itemsize(WORD), mlm=bool(head),
               decoder_itemsize=header.itemsize(DECODER) if DECODER in head else 0)
    return header


def read_weights(path: Path, cfg: BertConfig) -> tuple[Embeddings, tuple[LayerWeights, ...], MlmHead | None]:
    """The embeddings, every layer and the masked-LM head (None when the file has none) of model.safetensors,
    checked against ``cfg``'s shapes (the header first, see :func:`read_header`), every value finite; float64 and laid
    out for ``x @ w`` (a projection's [out, in] transposed, the Q, K, V biases as its last row) but the word embedding
    (memory-mapped in its own dtype) and a decoder of the head's own (its dtype)."""
    header = read_header(path, cfg)
    with tensors(header) as get:

        def f64(name: str) -> np.ndarray:  # a float64 copy, its stored shape
            return get(name).astype(np.float64)

        def dense(p: str) -> np.ndarray:  # [out, in] -> [in, out]
            return np.ascontiguousarray(f64(f"{p}.weight").T)

        def projection(p: str) -> np.ndarray:  # [out, in] + [out] -> [in + 1, out]: the bias as the last row
            return np.vstack([f64(f"{p}.weight").T, f64(f"{p}.bias")])

        emb = Embeddings(word=map_tensor(header, WORD),  # [vocab_size, d_model], its dtype, not copied
                         position=f64("embeddings.position_embeddings.weight"),
                         token_type=f64("embeddings.token_type_embeddings.weight"),
                         ln_g=f64("embeddings.LayerNorm.weight"), ln_b=f64("embeddings.LayerNorm.bias"))
        layers = []
        for i in range(cfg.n_layers):
            p = f"encoder.layer.{i}"
            layers.append(LayerWeights(
                w_q=projection(f"{p}.attention.self.query"),  # [d_model + 1, d_model]
                w_k=projection(f"{p}.attention.self.key"),
                w_v=projection(f"{p}.attention.self.value"),
                w_o=dense(f"{p}.attention.output.dense"),  # [d_model, d_model]
                b_o=f64(f"{p}.attention.output.dense.bias"),
                ln1_g=f64(f"{p}.attention.output.LayerNorm.weight"),
                ln1_b=f64(f"{p}.attention.output.LayerNorm.bias"),
                w_ff1=dense(f"{p}.intermediate.dense"),  # [d_model, d_ff]
                b_ff1=f64(f"{p}.intermediate.dense.bias"),
                w_ff2=dense(f"{p}.output.dense"),  # [d_ff, d_model]
                b_ff2=f64(f"{p}.output.dense.bias"),
                ln2_g=f64(f"{p}.output.LayerNorm.weight"),
                ln2_b=f64(f"{p}.output.LayerNorm.bias"),
            ))
        head = None
        shapes = mlm_tensors(cfg, header.names)
        if shapes:
            t = MLM + "transform."
            head = MlmHead(w_t=dense(t + "dense"), b_t=f64(t + "dense.bias"),  # [d_model, d_model], [d_model]
                           ln_g=f64(t + "LayerNorm.weight"), ln_b=f64(t + "LayerNorm.bias"),
                           decoder=get(DECODER) if DECODER in shapes else None,  # [vocab, d_model], its dtype
                           bias=f64(DECODER_BIAS if DECODER_BIAS in shapes else MLM_BIAS))
    return emb, tuple(layers), head


# ---- the forward pass (transformers' stage names) ----------------------------------------------------------------


def positions(ids: np.ndarray, cfg: BertConfig) -> np.ndarray:  # int [n_seq] -> int [n_seq]
    """Each token's position id. BERT: 0, 1, 2, … RoBERTa: as transformers' create_position_ids_from_input_ids,
    pad_id + 1, pad_id + 2, … for every token whose id is not pad_id (counting those only), pad_id for those.

    >>> roberta = BertConfig(1, 1, 4, 4, 10, 12, 1, 1e-5, family="roberta", pad_id=1)
    >>> positions(np.array([0, 5, 6, 2, 1, 1]), roberta).tolist()
    [2, 3, 4, 5, 1, 1]
    """
    if cfg.family != "roberta":
        return np.arange(len(ids))
    real = (np.asarray(ids) != cfg.pad_id).astype(np.intp)
    return np.cumsum(real) * real + cfg.pad_id


def embeddings(e: Embeddings, ids: np.ndarray, type_ids: np.ndarray, cfg: BertConfig) -> np.ndarray:  # -> [n_seq, d]
    """BertEmbeddings: LayerNorm(word + token type + position embeddings), in float64; only the sentence's rows of the
    word embedding are read (its table stays memory-mapped in the checkpoint's dtype)."""
    x = np.asarray(e.word[ids], dtype=np.float64) + e.token_type[type_ids]  # [n_seq, d_model]
    x = x + e.position[positions(ids, cfg)]
    return layer_norm(x, e.ln_g, e.ln_b, cfg.eps)


def attention(x: np.ndarray, w: LayerWeights, n_heads: int, is_pad: np.ndarray, intervention: Intervention,
              layer: int, own: bool) -> tuple[np.ndarray, np.ndarray]:  # -> [n_seq, d_model], [n_heads, n_seq, n_seq]
    """BertSelfAttention (and BertSelfOutput's dense, without its bias): X₁ = [x, 1] through attn_core with the padding
    mask, at the intervention point (attn_models.intervene.attend). Returns concat @ W_O and the weights."""
    site = Site(with_bias_column(x), w.w_q, w.w_k, w.w_v, w.w_o, n_heads, is_pad=is_pad)
    return attend(site, intervention, layer, own=own)


def self_output(attn_out: np.ndarray, residual: np.ndarray, w: LayerWeights,
                eps: float) -> np.ndarray:  # [n_seq, d_model] × 2 -> [n_seq, d_model]
    """BertSelfOutput: LayerNorm(attention + b_O + residual)."""
    return layer_norm(attn_out + w.b_o + residual, w.ln1_g, w.ln1_b, eps)


def feed_forward(h: np.ndarray, w: LayerWeights, eps: float) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, d_model]
    """BertIntermediate and BertOutput: LayerNorm(GELU(h W₁ + b₁) W₂ + b₂ + h), each sum in that order, in place (one
    array of [n_seq, d_ff] alive: the same numbers as with a new array for each step)."""
    inner = h @ w.w_ff1  # [n_seq, d_ff]
    inner += w.b_ff1
    gelu(inner, out=inner)
    out = inner @ w.w_ff2  # [n_seq, d_model]
    out += w.b_ff2
    out += h
    return layer_norm(out, w.ln2_g, w.ln2_b, eps)


def layer(x: np.ndarray, w: LayerWeights, cfg: BertConfig, is_pad: np.ndarray, intervention: Intervention,
          index: int, own: bool) -> tuple[np.ndarray, np.ndarray]:  # -> [n_seq, d_model], [n_heads, n_seq, n_seq]
    """BertLayer ``index`` on its input ``x``: attention, self_output, feed_forward; returns its output and its
    attention weights. A configuration run whole on its own sentence (``own``) brings its own X, edits included, as
    the residual."""
    out, weights = attention(x, w, cfg.n_heads, is_pad, intervention, index, own)
    replaced = intervention.config_of(index)
    residual = replaced.x[:, :-1] if replaced is not None and own else x  # [n_seq, d_model]
    return feed_forward(self_output(out, residual, w, cfg.eps), w, cfg.eps), weights


def encoder(hidden: np.ndarray, layers: Sequence[LayerWeights], cfg: BertConfig, is_pad: np.ndarray,
            intervention: Intervention = Intervention.NONE, first: int = 0,
            own: bool = True) -> tuple[np.ndarray, np.ndarray]:  # -> [k + 1, n_seq, d], [k, n_heads, n_seq, n_seq]
    """BertEncoder: ``layers`` (layers ``first``, ``first`` + 1, … of the model) in turn on ``hidden``, their first
    layer's input; returns (hidden_states, attentions), the input first.

    ``intervention`` acts at each layer's attention (``own``: this sentence is the one its configuration was opened
    on).
    """
    n_seq, d_model = hidden.shape
    states = np.empty((len(layers) + 1, n_seq, d_model))  # [k + 1, n_seq, d_model]
    attentions = np.empty((len(layers), cfg.n_heads, n_seq, n_seq))  # [k, n_heads, n_seq, n_seq]
    states[0] = hidden
    for i, w in enumerate(layers):
        states[i + 1], attentions[i] = layer(states[i], w, cfg, is_pad, intervention, first + i, own)
    return states, attentions


# ---- which heads matter: the model with each head switched off, the variants side by side ------------------------

#: bytes one run of variants may hold at once in :func:`head_variants`, as :func:`variant_bytes` counts them (measured
#: with tracemalloc: 0.7 of the count); heads run together as many at a time as fit, at least one, at most half of a
#: layer's (:func:`head_chunks`). all-MiniLM-L6-v2 at 64 tokens: 6 heads at once (counted 35 MB); a BERT-base-shaped
#: encoder (d_model 768, d_ff 3,072) at the caps' 256 tokens: one at a time (counted 47 MB). Beside a forward pass
#: (≈ 43 MB at 256 tokens) it keeps a run within the ≈ 100 MB of intermediates a model's computing slot is sized for
#: (attn_ui.infra.budget). Two runs may be alive at once, each within SCAN_BYTES, when a scan's ``run_parts`` runs them
#: on two threads (attn_ui.infra.budget.spare_core): then the computation holds two slots, one for each run.
SCAN_BYTES = 80_000_000


def variant_bytes(cfg: BertConfig, n_seq: int) -> int:
    """Bytes one variant (the model with one head switched off) holds at the widest point of :func:`batched_layer`,
    counted: its layer input, X₁, Q, K, V and the heads' outputs (6 arrays of about [n_seq, d_model]), and the larger
    of the scores with softmax's temporaries (3 × [n_heads, n_seq, n_seq]) and the feed-forward's inner activations
    counted as 6 arrays of [n_seq, d_ff], in float64. (Since issue 37's GELU works in place, a block at a time, the
    feed-forward holds one such array and its GELU 4 of ERF_BLOCK elements: the count is kept as it was, an upper
    bound, so that the runs of heads stay as they were.)

    >>> variant_bytes(BertConfig(6, 12, 384, 1536, 30522, 512, 2, 1e-12), 64)  # all-MiniLM-L6-v2, 64 tokens
    5901312
    """
    d, f, h = cfg.d_model + 1, cfg.d_ff, cfg.n_heads
    return F64 * n_seq * (6 * d + max(3 * h * n_seq, 6 * f))


def head_chunks(n_heads: int, per_variant: int, bound: int | None = None) -> list[range]:
    """The heads 0 … n_heads − 1 in runs of as many as ``bound`` bytes (default :data:`SCAN_BYTES`) hold,
    ``per_variant`` each (at least one), and at most half of them (rounded up): a layer is two runs or more, which a
    scan's ``run_parts`` may run side by side (:meth:`Model._scan`).

    >>> head_chunks(12, 30_000_000)
    [range(0, 2), range(2, 4), range(4, 6), range(6, 8), range(8, 10), range(10, 12)]
    >>> head_chunks(12, 1_000), head_chunks(3, 1_000), head_chunks(1, 1_000)
    ([range(0, 6), range(6, 12)], [range(0, 2), range(2, 3)], [range(0, 1)])
    """
    fit = (SCAN_BYTES if bound is None else bound) // max(per_variant, 1)
    size = max(1, min((n_heads + 1) // 2, fit))
    return [range(h, min(h + size, n_heads)) for h in range(0, n_heads, size)]


#: what runs a scan's parts (:meth:`Model._scan`): given zero-argument callables, returns their results in order. Each
#: part is independent of the others (numpy only, no shared state written), so a runner may call them in any order, on
#: any threads; the results do not depend on it, bit for bit.
PartRunner = Callable[[Sequence[Callable[[], Any]]], list[Any]]


def in_turn(parts: Sequence[Callable[[], T]]) -> list[T]:
    """The default :data:`PartRunner`: each part in turn, in the calling thread.

    >>> in_turn([lambda: 1, lambda: 2])
    [1, 2]
    """
    return [part() for part in parts]


def batched_heads(x: np.ndarray, w: LayerWeights, n_heads: int,
                  is_pad: np.ndarray) -> np.ndarray:  # [V, n_seq, d_model] -> [V, n_seq, d_model]
    """The heads' outputs side by side (before W_O) of BertSelfAttention on V inputs at once: the computation of
    attn_core's multi-head attention (X₁ = [x, 1], scores ÷ √d_k, padding keys masked, softmax, weights @ V) with a
    leading variant axis, every product one matrix product over all V·n_seq rows (or a stack of them per head)."""
    n_var, n_seq, d = x.shape
    d_k = w.w_q.shape[1] // n_heads
    x1 = with_bias_column(x.reshape(-1, d))  # [V·n_seq, d_model + 1]

    def split(w_x: np.ndarray) -> np.ndarray:  # [d_model + 1, n_heads·d_k] -> [V, n_heads, n_seq, d_k]
        return (x1 @ w_x).reshape(n_var, n_seq, n_heads, d_k).transpose(0, 2, 1, 3)

    q, k, v = split(w.w_q), split(w.w_k), split(w.w_v)
    scores = q @ k.transpose(0, 1, 3, 2)  # [V, n_heads, n_seq, n_seq]
    scores /= np.sqrt(d_k)
    if np.any(is_pad):
        scores[..., np.asarray(is_pad, dtype=bool)] = -np.inf  # no query attends to a pad
    weights = softmax(scores, out=scores)  # [V, n_heads, n_seq, n_seq]
    return (weights @ v).transpose(0, 2, 1, 3).reshape(n_var, n_seq, n_heads * d_k)  # [V, n_seq, n_heads·d_k]


def batched_rest(concat: np.ndarray, x: np.ndarray, w: LayerWeights,
                 eps: float) -> np.ndarray:  # [V, n_seq, n_heads·d_k], [V or 1, n_seq, d] -> [V, n_seq, d]
    """The rest of BertLayer on V variants at once: concat @ W_O, self_output (``x`` the residual, one for all
    variants or one each), feed_forward; every product over all V·n_seq rows."""
    n_var, n_seq, _ = concat.shape
    d = w.w_o.shape[1]
    out = (concat.reshape(n_var * n_seq, -1) @ w.w_o).reshape(n_var, n_seq, d)  # [V, n_seq, d_model]
    h = self_output(out, x, w, eps).reshape(n_var * n_seq, d)  # [V·n_seq, d_model]
    return feed_forward(h, w, eps).reshape(n_var, n_seq, d)


def batched_layer(x: np.ndarray, w: LayerWeights, cfg: BertConfig,
                  is_pad: np.ndarray) -> np.ndarray:  # [V, n_seq, d_model] -> [V, n_seq, d_model]
    """BertLayer (as trained) on V inputs at once: :func:`layer`'s numbers, to rounding (tests/models/test_scan.py)."""
    return batched_rest(batched_heads(x, w, cfg.n_heads, is_pad), x, w, cfg.eps)


def head_variants(hidden: np.ndarray, layers: Sequence[LayerWeights], cfg: BertConfig, is_pad: np.ndarray,
                  heads: Sequence[int], how: str) -> np.ndarray:  # [n_seq, d] -> [len(heads), n_seq, d]
    """The last hidden state with each of ``heads`` of ``layers[0]`` switched off alone (``how``: "mean" or
    "zero", attn_models.intervene.ablate_heads), from ``hidden``, that layer's input in the model as trained
    (nothing before it changes): the layer's heads are computed once, each variant replaces one head's columns, and
    the variants run the layers after side by side, [len(heads), n_seq, d_model] at a time (hold
    len(heads) × :func:`variant_bytes`)."""
    w = layers[0]
    concat = batched_heads(hidden[None], w, cfg.n_heads, is_pad)[0]  # [n_seq, n_heads·d_k]: every head, once
    real = ~np.asarray(is_pad, dtype=bool)
    variants = np.stack([ablate_heads(concat, cfg.n_heads, frozenset({h}), how, real) for h in heads])
    x = batched_rest(variants, hidden[None], w, cfg.eps)  # [V, n_seq, d_model]
    for w in layers[1:]:
        x = batched_layer(x, w, cfg, is_pad)
    return x


def mlm_probs(h: np.ndarray, head: MlmHead, word: np.ndarray, eps: float) -> np.ndarray:  # [n, d] -> [n, vocab]
    """BertOnlyMLMHead: every word's probability at each row of ``h`` (last hidden states); ``word`` the word
    embeddings [vocab, d_model], the decoder when the head's is tied to them.

        t = LayerNorm(GELU(h W_t + b_t))            # [n, d_model]
        probs = softmax(t Eᵀ + b)                   # [n, vocab]: float64, the largest logit subtracted first

    Examples
    --------
    >>> d, vocab = 2, 3
    >>> head = MlmHead(np.eye(d), np.zeros(d), np.ones(d), np.zeros(d), None, np.zeros(vocab))
    >>> p = mlm_probs(np.array([[1.0, -1.0]]), head, np.array([[1.0, 0], [0, 1], [0, 0]], dtype=np.float32), 0.0)
    >>> p.shape, round(float(p.sum()), 12), int(p.argmax())
    ((1, 3), 1.0, 0)
    """
    t = layer_norm(gelu(h @ head.w_t + head.b_t), head.ln_g, head.ln_b, eps)  # [n, d_model]
    logits = tied_logits(t, word if head.decoder is None else head.decoder)  # [n, vocab]
    logits += head.bias
    return softmax(logits, out=logits)


# ---- what the API returns ----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Encoded:
    """A sentence as the model reads it: tokens, their ids, token types and which are padding (length n_seq)."""

    tokens: tuple[str, ...]
    ids: np.ndarray  # int [n_seq]
    type_ids: np.ndarray  # int [n_seq]
    is_pad: np.ndarray  # bool [n_seq]
    text: str | None = None  # the sentence, and the padding asked for (an Intervention's configuration is
    pad_to: int = 0  # one sentence's: attn_models.intervene.owns)


@dataclass(frozen=True, eq=False)
class EncoderOutput:
    """What :meth:`attn_models.Model.forward` returns (the names Hugging Face transformers uses).

    Attributes
    ----------
    tokens : tuple of str, length n_seq
        The WordPiece tokens, ``[CLS]`` first and ``[SEP]`` after the sentence (then any ``[PAD]``).
    attentions : ndarray of shape (n_layers, n_heads, n_seq, n_seq)
        Every layer's attention weights; row = query, column = key.
    hidden_states : ndarray of shape (n_layers + 1, n_seq, d_model)
        The embeddings' output, then every layer's output.
    is_pad : ndarray of bool, shape (n_seq,)
        Which tokens are padding (no query attends to them).
    """

    tokens: tuple[str, ...]
    attentions: np.ndarray
    hidden_states: np.ndarray
    is_pad: np.ndarray


@dataclass(frozen=True, eq=False)
class MaskFill:
    """The model's top words for one ``[MASK]`` of a sentence (:meth:`attn_models.Model.fill_mask`).

    Attributes
    ----------
    position : int
        The [MASK]'s index among the sentence's tokens ([CLS] is 0).
    tokens : tuple of str, length top_k
        The most probable tokens, most probable first (WordPiece: a ``##`` piece continues a word).
    probs : ndarray of shape (top_k,)
        Their probabilities (float64, of the whole vocabulary's softmax).
    ids : ndarray of int, shape (top_k,)
        Their vocabulary ids.
    """

    position: int
    tokens: tuple[str, ...]
    probs: np.ndarray
    ids: np.ndarray


# ---- the model ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Model(Pretrained):
    """A BERT-family encoder in float64 numpy (see :func:`load_encoder`).

    Attributes
    ----------
    name : str
        The source it was loaded from (a Hub repo id or a folder).
    config : BertConfig
    embeddings : Embeddings
    layers : tuple of LayerWeights, one per layer
    tokenizer : tokenizers.Tokenizer
        WordPiece (BERT) or sentencepiece (XLM-R), no truncation and no padding (the caps are checked here instead).
    load_seconds : float
        How long reading the files took.
    mlm : MlmHead or None
        The masked-language-model head (BertForMaskedLM's ``cls.predictions``) when the checkpoint has one.
    """

    config: BertConfig
    embeddings: Embeddings
    layers: tuple[LayerWeights, ...]
    tokenizer: object
    load_seconds: float = 0.0
    mlm: MlmHead | None = None
    role: ClassVar[Role] = "encoder"  # what it does (attn_models.origin.Role): A real model reads it

    @property
    def has_mlm(self) -> bool:
        """Whether the checkpoint has a masked-LM head: :meth:`fill_mask` works."""
        return self.mlm is not None

    # ---- tokens -------------------------------------------------------------------------------------------

    def encode(self, text: str, pad_to: int | None = None) -> Encoded:
        """The sentence's tokens with the family's first and last tokens (BERT: WordPiece, ``[CLS]`` and ``[SEP]``;
        XLM-RoBERTa: sentencepiece, ``<s>`` and ``</s>``), then padding (``[PAD]``, ``<pad>``) up to ``pad_to`` tokens.
        RoBERTa's token types are all 0 (it has one).

        No length check here (:meth:`forward` checks): a page can show how long a sentence is.
        """
        if not isinstance(text, str):
            raise ModelError(N_("The sentence must be text, got {kind}."), kind=type(text).__name__)
        cls, sep, pad = self.config.specials
        enc = self.tokenizer.encode(text)
        tokens, ids, types = list(enc.tokens), list(enc.ids), list(enc.type_ids)
        if not tokens or tokens[0] != cls:  # a tokenizer.json without the family's post-processor
            tokens, ids, types = [cls, *tokens, sep], [self._id(cls), *ids, self._id(sep)], [0, *types, 0]
        if self.config.family == "roberta":
            types = [0] * len(tokens)
            # the vocabulary's piece for each id: sentencepiece's unknown character shows as <unk> (what the model
            # reads), not as the character itself
            tokens = [self.tokenizer.id_to_token(i) or t for t, i in zip(tokens, ids, strict=True)]
            pad_id = self.config.pad_id  # config.json's pad_token_id: what transformers' positions are counted from
            pad = self.tokenizer.id_to_token(pad_id) or pad
        else:
            pad_id = self._id(pad)
        n_pad = max(0, (pad_to or 0) - len(tokens))
        if n_pad:
            tokens, ids, types = tokens + [pad] * n_pad, ids + [pad_id] * n_pad, types + [0] * n_pad
        for token, i in zip(tokens, ids, strict=True):  # a post-processor's ids are not in the vocabulary read at load
            check_id(token, i, self.config.vocab_size)
        is_pad = np.arange(len(tokens)) >= len(tokens) - n_pad
        return Encoded(tuple(tokens), np.array(ids, dtype=np.intp), np.array(types, dtype=np.intp), is_pad, text,
                       int(pad_to or 0))

    def _id(self, token: str) -> int:
        i = self.tokenizer.token_to_id(token)
        if i is None:
            raise ModelError(N_("The tokenizer has no {token} token; is it a BERT tokenizer?"), token=token)
        return i

    def tokenize(self, text: str, pad_to: int | None = None) -> list[str]:
        """The tokens the model reads: BERT's WordPiece ``[CLS]``, the sentence (``##`` pieces, ``[UNK]``), ``[SEP]``;
        XLM-RoBERTa's ``<s>``, sentencepiece pieces (``▁`` starts a word), ``</s>``.

        ``pad_to``: append padding tokens up to that many tokens.
        """
        return list(self.encode(text, pad_to).tokens)

    def check_length(self, n_seq: int) -> None:
        """ModelError when ``n_seq`` tokens are more than the app (n_seq cap) or the model's positions allow."""
        cap = self.config.max_tokens
        if self.config.family != "bert" and n_seq > cap:
            first, last, _ = self.config.specials
            raise ModelError(N_("The sentence is {n} tokens with {first} and {last}; at most {cap} fit (the cap of "
                                "{most} (n_seq), and the model's {positions} positions). Shorten it."), n=n_seq,
                             first=first, last=last, cap=cap, most=LIMITS.n_seq,
                             positions=self.config.max_positions)
        if n_seq > cap and cap == LIMITS.n_seq:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the cap of {most} (n_seq) "
                                "allows {cap}. Shorten it."), n=n_seq, most=LIMITS.n_seq, cap=cap)
        if n_seq > cap:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the model's {positions} "
                                "positions allow {cap}. Shorten it."), n=n_seq, positions=self.config.max_positions,
                             cap=cap)

    # ---- the forward pass ------------------------------------------------------------------------------------

    def embed(self, enc: Encoded) -> np.ndarray:  # -> [n_seq, d_model]
        """The embeddings' output (:func:`embeddings`): layer 0's input."""
        return embeddings(self.embeddings, enc.ids, enc.type_ids, self.config)

    def positions(self, ids: np.ndarray) -> np.ndarray:  # int [n_seq] -> int [n_seq]
        """Each token's position id (:func:`positions`)."""
        return positions(ids, self.config)

    def run(self, enc: Encoded, layers: int | None = None, *, intervention: Intervention | None = None,
            start: int = 0, hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(hidden_states, attentions) of layers ``start`` … k − 1 (the first k = ``layers`` layers, default all).

        Returns ``hidden_states`` [k − start + 1, n_seq, d_model] (layer ``start``'s input first) and ``attentions``
        [k − start, n_heads, n_seq, n_seq]; with ``start`` 0, every layer's as :meth:`forward` names them.

        ``intervention``: heads switched off, a layer replaced by the explorer's configuration (see
        :class:`attn_models.Intervention`); None or ``Intervention.NONE``: the model as trained, bit for bit.
        ``hidden``: layer ``start``'s input [n_seq, d_model] (``hidden_states[start]``) when already computed, taken
        as it is (with whatever the intervention changed before ``start``); else it is computed here. So a change in
        layer L reruns only layers L and after: ``run(enc, intervention=iv, start=L, hidden=clean[L])``.
        """
        self.check_length(len(enc.tokens))
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        end = self.n_layers if layers is None else len(self.layers[:layers])
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start <= end:
            raise ModelError(N_("A run starts at a layer 0 … {last}, got {start}."), last=end, start=repr(start))
        if hidden is None:
            hidden = self.embed(enc) if start == 0 else self.run(enc, start, intervention=iv)[0][start]
        own = iv.config is not None and owns(iv.config, enc.text, enc.pad_to)
        with edits_refused(iv):
            return encoder(hidden, self.layers[start:end], self.config, enc.is_pad, iv, start, own)

    def forward(self, text: str, pad_to: int | None = None, *,
                intervention: Intervention | None = None) -> EncoderOutput:
        """The whole encoder on one sentence (float64); ``attentions`` and ``hidden_states`` as transformers names them.

        ``intervention``: run with heads switched off or a layer replaced (see :class:`attn_models.Intervention`);
        None: the model as trained.

        Raises ModelError for a sentence longer than the caps allow, or an intervention that does not fit.
        """
        enc = self.encode(text, pad_to)
        hidden, attentions = self.run(enc, intervention=intervention)
        return EncoderOutput(enc.tokens, attentions, hidden, enc.is_pad)

    # ---- what the model does: sentence embeddings, fill-in-the-blank, which heads matter ---------------------------

    def embed_sentences(self, texts: Sequence[str], *, intervention: Intervention | None = None) -> np.ndarray:
        """Sentence embeddings [n, d_model], as sentence-transformers computes them (what all-MiniLM-L6-v2 was
        trained for): the last hidden state averaged over the sentence's tokens ([CLS] and [SEP] included, no
        padding), then scaled to length 1. Compare them with :func:`cosine_similarities`.

        ``intervention`` applies to every sentence (an explorer configuration's X to its own sentence only: see
        :class:`attn_models.Intervention`).
        """
        encs = self._encode_all(texts)
        return np.stack([pool(self.run(enc, intervention=intervention)[0][-1], enc.is_pad) for enc in encs])

    def mask_probs(self, text: str, *, intervention: Intervention | None = None) -> np.ndarray:
        """Every vocabulary word's probability at each ``[MASK]`` of ``text``, in order: [n_masks, vocab_size].

        Raises ModelError when the model has no masked-LM head, or the sentence has no [MASK].
        """
        enc, positions = self._masks(text)
        last = self.run(enc, intervention=intervention)[0][-1]  # [n_seq, d_model]
        return mlm_probs(last[positions], self.mlm, self.embeddings.word, self.config.eps)

    def fill_mask(self, text: str, *, top_k: int = 5, intervention: Intervention | None = None) -> tuple[MaskFill, ...]:
        """The ``top_k`` most probable tokens at each ``[MASK]`` of ``text``, in order (BertForMaskedLM's
        fill-in-the-blank, in float64).

        Raises ModelError when the model has no masked-LM head, the sentence has no [MASK], or ``top_k`` is not a
        whole number from 1 to the vocabulary's size.
        """
        vocab = self.config.vocab_size
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= vocab:
            raise ModelError(N_("top_k must be a whole number from 1 to {vocab}, got {top_k}."), vocab=vocab,
                             top_k=repr(top_k)[:40])
        _, positions = self._masks(text)
        fills = []
        for position, probs in zip(positions, self.mask_probs(text, intervention=intervention), strict=True):
            ids = top_words(probs, int(top_k))
            fills.append(MaskFill(int(position), tuple(self.tokenizer.id_to_token(int(i)) for i in ids), probs[ids],
                                  ids))
        return tuple(fills)

    def head_effects(self, texts: Sequence[str], measure: Callable[[np.ndarray], float], *, how: str = "mean",
                     layers: Sequence[int] | None = None, on_layer: Callable[[int], None] | None = None,
                     run_parts: PartRunner = in_turn) -> np.ndarray:
        """``measure(embeddings)`` with each head switched off alone: [len(layers), n_heads] (all layers by default,
        rows in the order given); ``embeddings`` are :meth:`embed_sentences` of ``texts`` with that head ablated
        (``how``: "mean" or "zero", see :class:`attn_models.Intervention`).

        Each ablation in layer L reruns layers L and after only, from the model's own input to layer L, the heads of
        a layer side by side in two runs or more (:meth:`_scan`); ``on_layer(row)`` is called as each row is done,
        in the calling thread. ``run_parts`` runs each layer's runs (default :func:`in_turn`: one after another; a
        :data:`PartRunner` may use two threads, as attn_ui.infra.budget.spare_core: ``measure`` is called where a
        run is, so it must be numpy only). The numbers do not depend on ``run_parts``, bit for bit.

        >>> sim = model.head_effects(["A cat.", "A dog."], lambda e: float(e[0] @ e[1]))  # doctest: +SKIP
        """
        encs = self._encode_all(texts)
        return self._scan(encs, how, layers, lambda last: float(measure(
            np.stack([pool(h, enc.is_pad) for h, enc in zip(last, encs, strict=True)]))), on_layer, run_parts)

    def similarity_effects(self, texts: Sequence[str], pair: tuple[int, int] = (0, 1), *, how: str = "mean",
                           layers: Sequence[int] | None = None, on_layer: Callable[[int], None] | None = None,
                           run_parts: PartRunner = in_turn) -> np.ndarray:
        """The cosine similarity of sentences ``pair`` with each head switched off alone: [len(layers), n_heads]
        (see :meth:`head_effects`)."""
        i, j = pair
        n = len(texts)
        if not (-n <= i < n and -n <= j < n):
            raise ModelError(N_("The pair {pair} names a sentence that is not among the {n} given."), pair=str(pair),
                             n=n)
        return self.head_effects(texts, lambda e: float(e[i] @ e[j]), how=how, layers=layers, on_layer=on_layer,
                                 run_parts=run_parts)

    def mask_effects(self, text: str, token_id: int, *, mask: int = 0, how: str = "mean",
                     layers: Sequence[int] | None = None, on_layer: Callable[[int], None] | None = None,
                     run_parts: PartRunner = in_turn) -> np.ndarray:
        """The probability of token ``token_id`` at ``text``'s ``mask``-th [MASK] with each head switched off alone:
        [len(layers), n_heads] (see :meth:`head_effects`)."""
        enc, positions = self._masks(text)
        vocab = self.config.vocab_size
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < vocab:
            raise ModelError(N_("Token id {id} is not in the vocabulary (ids 0 … {last})."), id=repr(token_id)[:40],
                             last=vocab - 1)
        if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or not 0 <= mask < len(positions):
            raise ModelError(N_("The sentence has {n} [MASK] tokens; there is no number {mask} (counted from 0)."),
                             n=len(positions), mask=repr(mask)[:40])
        at = positions[mask]
        return self._scan([enc], how, layers, lambda last: float(
            mlm_probs(last[0][at:at + 1], self.mlm, self.embeddings.word, self.config.eps)[0, token_id]), on_layer,
            run_parts)

    def _scan(self, encs: list[Encoded], how: str, layers: Sequence[int] | None,
              measure: Callable[[list[np.ndarray]], float], on_layer: Callable[[int], None] | None = None,
              run_parts: PartRunner = in_turn) -> np.ndarray:  # -> [len(layers), n_heads]
        """``measure(last hidden state of each sentence)`` with each head of ``layers`` switched off alone; after each
        row ``on_layer(row)``. One clean pass per sentence keeps every layer's input; a head switched off in layer L
        leaves layers < L as they were, so its variants start there (:func:`head_variants`: the layer's heads once,
        then the variants side by side). A layer's heads are split in runs (:func:`head_chunks`: two or more, each
        within SCAN_BYTES), each run one part for ``run_parts`` (every sentence's variants of those heads, measured);
        the runs are the same whoever runs them, so every runner gives the same numbers bit for bit. Equal to one
        whole forward pass per head with ``Intervention(ablate={(L, h)}, how=how)`` to 1e-12
        (tests/models/test_scan.py)."""
        rows = list(range(self.n_layers)) if layers is None else list(layers)
        for layer in rows:
            check_layer(layer, self.n_layers)
        Intervention(how=how)  # ModelError unless "mean" or "zero"
        clean = [self.run(enc)[0] for enc in encs]  # [n_layers + 1, n_seq, d_model] each
        per_variant = variant_bytes(self.config, max(len(enc.tokens) for enc in encs))
        effects = np.empty((len(rows), self.n_heads))  # [len(layers), n_heads]

        def measured(layer: int, heads: range) -> list[float]:  # one part: each of ``heads`` off, measured
            lasts = [head_variants(hs[layer], self.layers[layer:], self.config, enc.is_pad, heads, how)
                     for enc, hs in zip(encs, clean, strict=True)]  # [len(heads), n_seq, d_model] each
            return [measure([last[i] for last in lasts]) for i in range(len(heads))]

        for r, layer in enumerate(rows):
            chunks = head_chunks(self.n_heads, per_variant)
            done = run_parts([functools.partial(measured, layer, heads) for heads in chunks])
            for heads, values in zip(chunks, done, strict=True):
                effects[r, list(heads)] = values
            if on_layer is not None:
                on_layer(r)
        return effects

    def _encode_all(self, texts: Sequence[str]) -> list[Encoded]:
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ModelError(N_("Give a list of sentences (at least one)."))
        return [self.encode(t) for t in texts]

    def _masks(self, text: str) -> tuple[Encoded, np.ndarray]:  # -> the sentence, int [n_masks] its [MASK] positions
        if self.mlm is None:
            raise ModelError(N_("{name} has no masked-language-model head (a BertForMaskedLM's cls.predictions "
                                "weights): it cannot fill in a [MASK]. Load a BERT masked-LM checkpoint."),
                             name=self.name)
        enc = self.encode(text)
        positions = np.flatnonzero(enc.ids == self._id(MASK))  # [n_masks]
        if not len(positions):
            raise ModelError(N_("The sentence has no [MASK]: write [MASK] where the model should fill in a word."))
        return enc, positions

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
        check_layer(layer, self.n_layers)
        enc = self.encode(text, pad_to)
        if hidden is None:
            hidden = self.run(enc, layers=int(layer))[0][layer]  # [n_seq, d_model]
        w = self.layers[layer]
        padded = bool(enc.is_pad.any())
        return make_config(
            [token_label(t) for t in enc.tokens], with_bias_column(hidden), w.w_q, w.w_k, w.w_v, w.w_o,
            n_heads=self.n_heads, scale="sqrt_dk", mask_kind="padding" if padded else "none",
            is_pad=tuple(bool(p) for p in enc.is_pad),
            origin=Origin("encoder", self.name, int(layer), int(head), text, pad_to=int(pad_to or 0),
                          bias_column=self.config.d_model).as_dict(),
        )

    def config_for(self, origin: Origin) -> Config:
        """The configuration ``origin`` names (:meth:`layer_config` on its sentence, padding, layer and head), as the
        model computes it; ModelError when it is another family's."""
        expect_role(self, origin.role)
        return self.layer_config(origin.sentence, origin.layer, origin.pad_to or None, head=origin.head)

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of layer ``layer``: the model's attention output is ``concat @ W_O + b_O``."""
        check_layer(layer, self.n_layers)
        return self.layers[layer].b_o


def pool(last: np.ndarray, is_pad: np.ndarray) -> np.ndarray:  # [n_seq, d_model], bool [n_seq] -> [d_model]
    """A sentence embedding as sentence-transformers makes it: the mean of the real tokens' rows, scaled to length 1
    (a length under 1e-12 is taken as 1e-12, as torch's ``F.normalize``).

    >>> pool(np.array([[3.0, 0.0], [1.0, 2.0], [9.0, 9.0]]), np.array([False, False, True])).tolist()
    [0.8944271909999159, 0.4472135954999579]
    """
    real = ~np.asarray(is_pad, dtype=bool)
    mean = last[real].sum(axis=0) / max(int(real.sum()), 1e-9)  # [d_model]
    return mean / max(float(np.sqrt(mean @ mean)), 1e-12)


def cosine_similarities(emb: np.ndarray) -> np.ndarray:  # [n, d] -> [n, n]
    """The cosine similarity of every pair of rows (each row scaled to length 1 first, a length under 1e-12 taken as
    1e-12: sentence-transformers' ``util.cos_sim``).

    >>> cosine_similarities(np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    """
    e = np.asarray(emb, dtype=np.float64)  # [n, d]
    unit = e / np.maximum(np.sqrt(np.einsum("ij,ij->i", e, e)), 1e-12)[:, None]
    return unit @ unit.T


def load_encoder(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None,
                 progress: Progress | None = None, access: Access | None = None, local_only: bool = False) -> Model:
    """Read a BERT-family encoder (``config.json``, ``model.safetensors``, ``tokenizer.json`` or ``vocab.txt``):
    BERT, RoBERTa, XLM-RoBERTa. :func:`attn_models.load` reads any family the app runs.

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
    with opened(source, read_config, cache_dir=cache_dir, progress=progress, access=access,
                local_only=local_only) as checkpoint:
        embeddings, layers, mlm = read_weights(checkpoint.files.weights, checkpoint.config)
        tokenizer = checkpoint.tokenizer()
    return Model(checkpoint.files.source, checkpoint.config, embeddings, layers, tokenizer, checkpoint.seconds, mlm)
