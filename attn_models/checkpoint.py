"""Reading a BERT-family checkpoint: config.json (and the app's caps), model.safetensors, tokenizer.json.

The weights become float64 numpy arrays laid out as :class:`attn_models.encoder.LayerWeights` wants them
(transposed to [in, out]; the Q, K, V biases as the projections' last row). Only safetensors is read.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_core import LIMITS

from .encoder import LayerWeights
from .errors import N_, ModelError
from .limits import FIELD_CAPS, MODEL_LIMITS, resident_bytes, too_large
from .mlm import MlmHead

BERT_TYPES = ("bert",)  # config.json model_type values read as BERT (same weight names, same forward pass)
#: model_type values read as RoBERTa: BERT's layers and names (under "roberta." or no prefix), positions offset past
#: the padding id (transformers' create_position_ids_from_input_ids), one token type, <s> </s> <pad> as specials
ROBERTA_TYPES = ("xlm-roberta", "roberta")
#: each family's special tokens: the sentence's first and last, the padding
SPECIALS = {"bert": ("[CLS]", "[SEP]", "[PAD]"), "roberta": ("<s>", "</s>", "<pad>")}


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
    >>> parse_config({"model_type": "bert", "num_hidden_layers": 12, "num_attention_heads": 16,
    ...               "hidden_size": 1024, "intermediate_size": 3072, "vocab_size": 30522})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: hidden_size 1024 + 1 (the bias column) = 1025 ... (d_model)...
    """
    if not isinstance(doc, dict):
        raise ModelError(N_("{where}: not a JSON object."), where=where)
    kind = doc.get("model_type")
    if kind not in BERT_TYPES + ROBERTA_TYPES:
        raise ModelError(N_("{where}: model_type {kind} is not BERT-family; this app runs BERT encoders "
                            "(model_type {types})."), where=where, kind=repr(str(kind)[:40]),
                         types=", ".join(BERT_TYPES + ROBERTA_TYPES))
    family = "roberta" if kind in ROBERTA_TYPES else "bert"
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
        eps=float(eps), family=family, pad_id=pad_id(doc, family, where),
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
    vocab, positions = doc.get("vocab_size"), doc.get("max_position_embeddings", 512)
    last = min(vocab, positions - 1) - 1 if isinstance(vocab, int) and isinstance(positions, int) else -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= last:
        raise ModelError(N_("{where}: pad_token_id {value} must be a whole number from 0 to {last}: a padding "
                            "token's id below vocab_size, and RoBERTa's positions start after it (at pad_token_id + "
                            "1, of max_position_embeddings)."), where=where, value=str(value)[:40], last=max(last, 0))
    return value


def check_size(cfg: BertConfig, where: str = "config.json", word_itemsize: int = 4, *, mlm: bool = False,
               decoder_itemsize: int = 0, word_mapped: bool = True) -> None:
    """ModelError naming the config field over its cap (attn_models.MODEL_LIMITS), or saying how much memory the
    whole model would take when that is over the cap (``mlm``, ``decoder_itemsize``: with a masked-LM head, see
    :func:`attn_models.limits.resident_bytes`).

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
    for key, (field, cap_name) in FIELD_CAPS.items():
        value, cap = getattr(cfg, field), getattr(MODEL_LIMITS, cap_name)
        if value > cap:
            raise ModelError(N_("{where}: {key} {value} is over the cap of {cap} (attn_models.MODEL_LIMITS)."),
                             where=where, key=key, value=value, cap=cap)
    size = resident_bytes(cfg, word_itemsize, mlm=mlm, decoder_itemsize=decoder_itemsize, word_mapped=word_mapped)
    cap = MODEL_LIMITS.resident_bytes
    if size > cap:
        raise ModelError(N_("{where}: this model would take {size:.0f} MB of memory once loaded; the cap is {cap:.0f} "
                            "MB (attn_models.MODEL_LIMITS)."), where=where, size=size / 1e6, cap=cap / 1e6)


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


def read_capped(path: Path, name: str, cap: int) -> bytes:
    """The bytes of a file of at most ``cap`` bytes (never more than ``cap + 1`` are read), or ModelError."""
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as err:
        raise ModelError(N_("{name} could not be read: {err}"), name=name, err=str(err)) from None
    if len(data) > cap:
        raise too_large(name, os.path.getsize(path), cap)
    return data


def parse_json(data: bytes, name: str) -> object:
    """JSON text of a checkpoint's file, or ModelError saying why it cannot be read (not UTF-8, not JSON, a number
    of more digits than Python reads, nested too deeply).

    >>> parse_json(b"[" * 200_000, "config.json")
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json is nested too deeply to be read.
    >>> parse_json(b"{'a': 1}", "config.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json is not valid JSON: Expecting property name ...
    """
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ModelError(N_("{name} is not UTF-8 text."), name=name) from None
    except json.JSONDecodeError as err:
        raise ModelError(N_("{name} is not valid JSON: {err}"), name=name, err=str(err)[:200]) from None
    except RecursionError:
        raise ModelError(N_("{name} is nested too deeply to be read."), name=name) from None
    except ValueError:  # an integer of more digits than sys.get_int_max_str_digits() allows
        raise ModelError(N_("{name} holds a number too long to be read."), name=name) from None


def read_config(path: Path) -> BertConfig:
    """config.json (at most MODEL_LIMITS.config_bytes) as a :class:`BertConfig`, or ModelError."""
    return parse_config(parse_json(read_capped(path, "config.json", MODEL_LIMITS.config_bytes), "config.json"))


def read_tokenizer(path: Path, cfg: BertConfig) -> object:
    """tokenizer.json (at most MODEL_LIMITS.tokenizer_bytes) as a tokenizers.Tokenizer, no truncation and no
    padding, every id it can give below ``cfg.vocab_size`` (else ModelError)."""
    from tokenizers import Tokenizer

    data = read_capped(path, "tokenizer.json", MODEL_LIMITS.tokenizer_bytes)
    try:
        tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    except Exception as err:  # noqa: BLE001 - tokenizers raises its own Exception type for a malformed file
        raise ModelError(N_("tokenizer.json could not be read: {err}"), err=str(err)[:300]) from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    vocab = tokenizer.get_vocab(with_added_tokens=True)  # token -> id
    if vocab:
        token, top = max(vocab.items(), key=lambda kv: kv[1])
        check_id(token, top, cfg)
    return tokenizer


def check_id(token: str, token_id: int, cfg: BertConfig) -> None:
    """ModelError when the tokenizer gives ``token`` an id the word embedding has no row for.

    >>> check_id("[CLS]", 30522, parse_config({"model_type": "bert", "num_hidden_layers": 1,  # doctest: +ELLIPSIS
    ...     "num_attention_heads": 1, "hidden_size": 4, "intermediate_size": 4, "vocab_size": 30522}))
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: tokenizer.json gives the token '[CLS]' the id 30522; config.json's vocab_size ...
    """
    if not 0 <= token_id < cfg.vocab_size:
        raise ModelError(N_("tokenizer.json gives the token {token} the id {id}; config.json's vocab_size {vocab} "
                            "has ids 0 … {last} only."), token=repr(token[:40]), id=token_id, vocab=cfg.vocab_size,
                         last=cfg.vocab_size - 1)


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


def _normalise(name: str) -> str:
    """Weight names as all-MiniLM-L6-v2 has them: no "bert." (or "roberta.") prefix, LayerNorm weight/bias (not
    gamma/beta)."""
    name = name.removeprefix("bert.").removeprefix("roberta.")
    if ".LayerNorm." in name:
        name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    return name


DTYPES = {"F16": 2, "F32": 4, "F64": 8}  # safetensors dtypes read, and their bytes a number
WORD = "embeddings.word_embeddings.weight"
MLM = "cls.predictions."  # BertForMaskedLM's head (its encoder's names have the "bert." prefix _normalise removes)
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


def safetensors_header(path: Path) -> tuple[dict, int]:
    """model.safetensors' JSON header (its length checked against the file and MODEL_LIMITS.header_bytes, before it
    is read) and the bytes of tensor data after it; ModelError naming the file and the fault otherwise. Every family's
    reader checks its own tensors in it (:func:`check_entry`)."""
    name = "model.safetensors"
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
            if n < 0 or n > size - 8:
                raise ModelError(N_("model.safetensors is cut short: its {n:,}-byte header does not fit in its "
                                    "{size:,} bytes."), n=max(n, 0), size=size)
            if n > MODEL_LIMITS.header_bytes:
                raise ModelError(N_("model.safetensors: its header is {n:,} bytes; the cap is {cap:,} "
                                    "(attn_models.MODEL_LIMITS)."), n=n, cap=MODEL_LIMITS.header_bytes)
            header = parse_json(f.read(n), name)
    except OSError as err:
        raise ModelError(N_("model.safetensors could not be read: {err}"), err=str(err)) from None
    if not isinstance(header, dict):
        raise ModelError(N_("{where}: not a JSON object."), where=name + " (header)")
    return header, size - 8 - n


def read_header(path: Path, cfg: BertConfig) -> dict[str, str]:
    """Check model.safetensors' header against ``cfg`` before any tensor is read: its length (first 8 bytes, at most
    MODEL_LIMITS.header_bytes), every tensor the encoder reads there with config.json's shape, a dtype read here
    (F16, F32, F64) and its bytes inside the file, likewise a masked-LM head's when it has one (:func:`mlm_tensors`);
    then the memory the model takes with its word embedding's dtype and its head.

    Returns the normalised name -> the stored name of every tensor. Raises ModelError naming the file and the fault.
    """
    name = "model.safetensors"
    header, data_bytes = safetensors_header(path)
    names = {_normalise(k): k for k in header if k != "__metadata__"}
    for key, shape in expected_tensors(cfg).items():
        if key not in names:
            raise ModelError(N_("model.safetensors has no tensor {name}; is it a BERT checkpoint?"), name=key)
        check_entry(header[names[key]], key, shape, data_bytes)
    head = mlm_tensors(cfg, names)
    for key, shape in head.items():
        if key not in names:
            raise ModelError(N_("model.safetensors has a masked-language-model head (cls.predictions) without its "
                                "tensor {name}."), name=key)
        check_entry(header[names[key]], key, shape, data_bytes)
    decoder = header[names[DECODER]]["dtype"] if DECODER in head else None
    check_size(cfg, name, DTYPES[header[names[WORD]]["dtype"]], mlm=bool(head),
               decoder_itemsize=DTYPES[decoder] if decoder else 0)
    return names


def check_entry(entry: object, key: str, shape: tuple[int, ...], data_bytes: int) -> None:
    """ModelError unless the header's ``entry`` for tensor ``key`` has ``shape``, a dtype read here and its bytes
    inside the file's ``data_bytes`` bytes of data."""
    ok = isinstance(entry, dict) and isinstance(entry.get("shape"), list) and isinstance(
        entry.get("data_offsets"), list) and len(entry["data_offsets"]) == 2 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in [*entry["shape"], *entry["data_offsets"]])
    if not ok:
        raise ModelError(N_("model.safetensors: the header's entry for {name} is malformed."), name=key)
    if tuple(entry["shape"]) != shape:
        raise ModelError(N_("model.safetensors: {name} has shape {shape}, config.json implies {wanted}."),
                         name=key, shape=str(tuple(entry["shape"])), wanted=str(shape))
    if entry.get("dtype") not in DTYPES:
        raise ModelError(N_("model.safetensors: {name} holds {dtype} numbers; only {dtypes} are read here."),
                         name=key, dtype=str(entry.get("dtype"))[:20], dtypes=", ".join(DTYPES))
    begin, end = entry["data_offsets"]
    if not 0 <= begin <= end <= data_bytes or end - begin != int(np.prod(shape)) * DTYPES[entry["dtype"]]:
        raise ModelError(N_("model.safetensors: its header puts {name} at bytes {begin} … {end} of its {size:,} "
                            "bytes of data, where its {dtype} numbers of shape {shape} do not fit (the file is cut "
                            "short, or its header is wrong)."), name=key, begin=begin, end=end, size=data_bytes,
                         dtype=entry["dtype"], shape=str(shape))


def map_tensor(path: Path, stored: str) -> np.memmap:
    """Tensor ``stored`` of model.safetensors memory-mapped read-only, in its own dtype (little-endian, as the format
    stores it): no private copy; a row is read from the file (the page cache) when it is looked up. Its header entry
    was checked by :func:`read_header` (shape, dtype, bytes inside the file)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        entry = json.loads(f.read(n).decode("utf-8"))[stored]
    begin = entry["data_offsets"][0]
    dtype = np.dtype({"F16": "<f2", "F32": "<f4", "F64": "<f8"}[entry["dtype"]])
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + n + begin, shape=tuple(entry["shape"]))


def check_finite_file(name: str, t: np.memmap, rows: int = 4096) -> None:
    """:func:`check_finite` for a memory-mapped tensor, read from its file a chunk at a time (``rows`` rows into a
    private buffer) so the check does not leave the whole table's pages in the process's resident memory."""
    row_bytes = t.dtype.itemsize * int(np.prod(t.shape[1:], dtype=np.int64))
    with open(t.filename, "rb") as f:
        f.seek(t.offset)
        for i in range(0, max(len(t), 1), rows):
            chunk = np.fromfile(f, dtype=t.dtype, count=min(rows, len(t) - i) * row_bytes // t.dtype.itemsize)
            if not np.isfinite(chunk).all():
                raise ModelError(N_("model.safetensors: {name} holds a value that is not a finite number (NaN or "
                                    "infinity)."), name=name)


def check_finite(name: str, t: np.ndarray, rows: int = 4096) -> None:
    """ModelError when a tensor holds NaN or ±inf; checked ``rows`` rows at a time (no float64 copy of a large
    float32 table)."""
    for i in range(0, max(len(t), 1), rows):
        if not np.isfinite(t[i:i + rows]).all():
            raise ModelError(N_("model.safetensors: {name} holds a value that is not a finite number (NaN or "
                                "infinity)."), name=name)


def read_weights(path: Path, cfg: BertConfig) -> tuple[Embeddings, tuple[LayerWeights, ...], MlmHead | None]:
    """The embeddings, every layer and the masked-LM head (None when the file has none) of model.safetensors,
    checked against ``cfg``'s shapes (the header first, see :func:`read_header`), every value finite."""
    from safetensors import SafetensorError, safe_open

    names = read_header(path, cfg)
    try:
        with safe_open(str(path), framework="numpy") as f:

            def get(name: str, shape: tuple[int, ...], *, keep_dtype: bool = False) -> np.ndarray:  # -> shape
                try:
                    t = f.get_tensor(names[name])
                except (TypeError, ValueError) as err:  # e.g. bfloat16, which numpy has no type for
                    raise ModelError(N_("model.safetensors: {name} could not be read as numbers ({err})."),
                                     name=name, err=str(err)) from None
                check_finite(name, t)  # its shape and dtype were checked in the header (read_header)
                return t if keep_dtype else t.astype(np.float64)

            d, ff = cfg.d_model, cfg.d_ff
            word = map_tensor(path, names[WORD])  # [vocab_size, d_model], its dtype, not copied (resident_bytes)
            check_finite_file(WORD, word)
            emb = Embeddings(
                word=word,
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
            head = None
            shapes = mlm_tensors(cfg, names)
            if shapes:
                t, bias = MLM + "transform.", DECODER_BIAS if DECODER_BIAS in shapes else MLM_BIAS
                head = MlmHead(
                    w_t=np.ascontiguousarray(get(t + "dense.weight", (d, d)).T),  # [d_model, d_model]
                    b_t=get(t + "dense.bias", (d,)), ln_g=get(t + "LayerNorm.weight", (d,)),
                    ln_b=get(t + "LayerNorm.bias", (d,)),
                    decoder=get(DECODER, (cfg.vocab_size, d), keep_dtype=True) if DECODER in shapes else None,
                    bias=get(bias, (cfg.vocab_size,)),
                )
    except (OSError, SafetensorError) as err:
        raise ModelError(N_("model.safetensors could not be read: {err}"), err=str(err)[:300]) from None
    return emb, tuple(layers), head
