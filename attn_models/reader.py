"""Reading a checkpoint's files within the caps, the same way for every family: JSON (config.json), config.json's
fields and their caps, and model.safetensors (its header checked against the tensors a family reads before any
tensor is read, then one getter for them all). Each family says what it reads (its field table, its tensor names
and shapes); how a file is read, capped and refused is written here once.

>>> fields = Fields({"model_type": "bert", "num_hidden_layers": 0})
>>> fields.whole("num_hidden_layers")
Traceback (most recent call last):
...
attn_models.errors.ModelError: config.json: num_hidden_layers must be a whole number of at least 1, got 0.
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_core import Words, share

from .errors import N_, ModelError
from .limits import MODEL_LIMITS, too_large

WEIGHTS = "model.safetensors"
DTYPES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8}  # safetensors dtypes read, and their bytes a number in the file
NUMPY_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}  # as the format stores them: little-endian
#: bfloat16 kept as its bits (numpy has no bfloat16): a record of one little-endian uint16, so that no arithmetic takes
#: it for a number by mistake; attn_models.ops.f64 and ops.product widen it (:func:`bf16_to_f32`)
BF16 = np.dtype([("bf16", "<u2")])


# ---- bfloat16 ----------------------------------------------------------------------------------------------------


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:  # [...] uint16 or BF16 -> [...] float32
    """bfloat16 numbers (their 16 bits, as uint16 or :data:`BF16`) as float32: the bits are float32's top half, so
    shifting them 16 places up is exact.

    >>> bf16_to_f32(np.array([0x3F80, 0xC040, 0x7F80], dtype=np.uint16)).tolist()  # 1, -3, +inf
    [1.0, -3.0, inf]
    """
    bits = np.asarray(bits)
    if bits.dtype == BF16:
        bits = bits.view("<u2")
    return (bits.astype("<u4") << 16).view("<f4")


def bf16_finite(bits: np.ndarray) -> bool:
    """Whether every bfloat16 number (as uint16 bits) is finite: its 8 exponent bits are not all ones (NaN, ±inf)."""
    return not np.any((np.asarray(bits).view("<u2") & 0x7F80) == 0x7F80)


# ---- capped files, JSON ------------------------------------------------------------------------------------------


#: why the system could not open or read a file, by its errno, in words marked for the catalogs: never the system's
#: English (nor the server's path, which its message holds)
_OS_REASONS = {errno.ENOENT: N_("it is not there"), errno.EACCES: N_("the server is not allowed to read it"),
               errno.EPERM: N_("the server is not allowed to read it"), errno.EISDIR: N_("it is a folder, not a file"),
               errno.ELOOP: N_("it is a link that leads to itself")}
_OS_OTHER = N_("the system could not read it")


def os_problem(err: OSError) -> Words:
    """What an OSError says about a file, in the learner's words.

    >>> os_problem(FileNotFoundError(2, "No such file or directory", "/srv/x")), os_problem(OSError(5, "I/O error"))
    ('it is not there', 'the system could not read it')
    """
    return _OS_REASONS.get(err.errno, _OS_OTHER)


def not_readable(name: str, err: OSError) -> ModelError:
    """The refusal of a checkpoint's file ``name`` the system could not open or read."""
    return ModelError(N_("{name} could not be read: {reason}."), name=name, reason=os_problem(err))


#: where a Rust library (tokenizers, safetensors: serde) says its message's place: " at line 3 column 14" at its end
_AT_LINE = re.compile(r"\s+at line (\d+) column (\d+)\s*$")


def library_words(message: str, most: int = 200) -> tuple[str, int | None, int | None]:
    """A library's own message, cut to ``most`` characters, without the place it names at its end; and that place
    (its line and column, or None).

    >>> library_words("missing field `vocab` at line 1 column 40")
    ('missing field `vocab`', 1, 40)
    """
    if m := _AT_LINE.search(message):
        message, line, column = message[:m.start()], int(m.group(1)), int(m.group(2))
    else:
        line = column = None
    message = " ".join(message.split())
    return (message if len(message) <= most else message[:most - 1] + "…"), line, column


def read_capped(path: Path, name: str, cap: int) -> bytes:
    """The bytes of a file of at most ``cap`` bytes (never more than ``cap + 1`` are read), or ModelError."""
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as err:
        raise not_readable(name, err) from None
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
    >>> parse_json(b'{"a": 1 "b": 2}', "config.json")  # a syntax error in the learner's words (attn_core.share's)
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: not valid JSON (a comma was expected at line 1, column 9).
    """
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ModelError(N_("{name} is not UTF-8 text."), name=name) from None
    except json.JSONDecodeError as err:
        raise ModelError(N_("{what}: not valid JSON ({problem} at line {line}, column {column})."), what=name,
                         problem=share.json_problem(err), line=err.lineno, column=err.colno) from None
    except RecursionError:
        raise ModelError(N_("{name} is nested too deeply to be read."), name=name) from None
    except ValueError:  # an integer of more digits than sys.get_int_max_str_digits() allows
        raise ModelError(N_("{name} holds a number too long to be read."), name=name) from None


def read_json(path: Path, name: str = "config.json", cap: int = MODEL_LIMITS.config_bytes) -> object:
    """A JSON file of at most ``cap`` bytes (config.json, tokenizer_config.json), parsed; or ModelError."""
    return parse_json(read_capped(path, name, cap), name)


# ---- config.json's fields and their caps -----------------------------------------------------------------------


class Fields:
    """config.json's fields as a family reads them: each one checked as it is read, and refused by name.

    >>> Fields({"layer_norm_eps": "small"}).small("layer_norm_eps", 1e-12)
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: layer_norm_eps must be a small number, got small.
    """

    def __init__(self, doc: object, where: str = "config.json") -> None:
        if not isinstance(doc, dict):
            raise ModelError(N_("{where}: not a JSON object."), where=where)
        self.doc, self.where = doc, where

    def get(self, key: str, default: object = None) -> object:
        return self.doc.get(key, default)

    def kind(self, types: tuple[str, ...], refusal: str) -> str:
        """model_type, one of ``types``; else ModelError with the family's ``refusal`` (an N_ template of
        ``where``, ``kind`` and ``types``)."""
        kind = self.doc.get("model_type")
        if kind not in types:
            raise ModelError(refusal, where=self.where, kind=repr(str(kind)[:40]), types=", ".join(types))
        return kind

    def whole(self, key: str, default: int | None = None, least: int = 1) -> int:
        """A whole number of at least ``least`` (``default`` when absent)."""
        value = self.doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ModelError(N_("{where}: {key} must be a whole number of at least {least}, got {value}."),
                             where=self.where, key=key, least=least, value=str(value)[:40])
        return value

    def small(self, key: str, default: float) -> float:
        """A number from 0 up to (not including) 1, such as a norm's epsilon (``default`` when absent)."""
        value = self.doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            raise ModelError(N_("{where}: {key} must be a small number, got {value}."), where=self.where, key=key,
                             value=str(value)[:40])
        return float(value)


def check_field_caps(cfg: object, caps: Mapping[str, tuple[str, str]], where: str = "config.json") -> None:
    """ModelError naming the first config.json field over its cap: ``caps`` maps each field that sizes the model to
    (the attribute of ``cfg`` that holds it, the attn_models.MODEL_LIMITS cap).

    >>> from types import SimpleNamespace
    >>> check_field_caps(SimpleNamespace(n_layers=99), {"num_hidden_layers": ("n_layers", "n_layers")})
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: config.json: num_hidden_layers 99 is over the cap of 24 (attn_models.MODEL_LIMITS).
    """
    for key, (field, cap_name) in caps.items():
        value, cap = getattr(cfg, field), getattr(MODEL_LIMITS, cap_name)
        if value > cap:
            raise ModelError(N_("{where}: {key} {value} is over the cap of {cap} (attn_models.MODEL_LIMITS)."),
                             where=where, key=key, value=value, cap=cap)


def check_memory(size: int, cap: int, where: str = "config.json") -> None:
    """ModelError when a model would take ``size`` bytes of memory once loaded, over ``cap``."""
    if size > cap:
        raise ModelError(N_("{where}: this model would take {size:.0f} MB of memory once loaded; the cap is {cap:.0f} "
                            "MB (attn_models.MODEL_LIMITS)."), where=where, size=size / 1e6, cap=cap / 1e6)


# ---- model.safetensors: the header, then the tensors ------------------------------------------------------------


def safetensors_header(path: Path) -> tuple[dict, int]:
    """model.safetensors' JSON header (its length checked against the file and MODEL_LIMITS.header_bytes, before it
    is read) and the byte where its tensor data starts; ModelError naming the file and the fault otherwise."""
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
            header = parse_json(f.read(n), WEIGHTS)
    except OSError as err:
        raise not_readable(WEIGHTS, err) from None
    if not isinstance(header, dict):
        raise ModelError(N_("{where}: not a JSON object."), where=WEIGHTS + " (header)")
    return header, 8 + n


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


@dataclass(frozen=True, eq=False)
class Header:
    """model.safetensors' header as a family reads it.

    Attributes
    ----------
    path : Path
    entries : dict
        The stored name -> its entry (dtype, shape, data_offsets), as the file has them.
    names : dict of str to str
        The family's name of each tensor -> its stored name (a family renames: "bert." dropped, …).
    data_start : int
        The byte where the tensor data starts (after the 8-byte length and the header).
    data_bytes : int
        The bytes of tensor data.
    """

    path: Path
    entries: dict
    names: dict[str, str]
    data_start: int
    data_bytes: int

    def entry(self, key: str) -> dict:
        return self.entries[self.names[key]]

    def itemsize(self, key: str, *, keep_bf16: bool = False) -> int:
        """Bytes a number of tensor ``key`` once read (its entry checked: :func:`check_tensors`): its dtype's, except
        bfloat16, which :func:`tensors` widens to float32 (4 bytes) unless the family keeps its bits (``keep_bf16``:
        2 bytes)."""
        dtype = self.entry(key)["dtype"]
        return 4 if dtype == "BF16" and not keep_bf16 else DTYPES[dtype]


def read_header(path: Path, rename: Callable[[str], str | None] = lambda name: name) -> Header:
    """model.safetensors' header (:func:`safetensors_header`), every stored name given the family's name by
    ``rename`` (None: a tensor the family does not read, such as GPT-2's causal-mask buffers)."""
    header, data_start = safetensors_header(path)
    names = {}
    for stored in header:
        if stored != "__metadata__" and (name := rename(stored)) is not None:
            names[name] = stored
    return Header(Path(path), header, names, data_start, os.path.getsize(path) - data_start)


def check_tensors(header: Header, shapes: Mapping[str, tuple[int, ...]], missing: str) -> None:
    """Every tensor of ``shapes`` (the family's name -> its shape as stored) in ``header``, with that shape, a dtype
    read here and its bytes inside the file; else ModelError naming it (``missing``: the family's N_ template, of
    ``name``, for a tensor the file does not have)."""
    for key, shape in shapes.items():
        if key not in header.names:
            raise ModelError(missing, name=key)
        check_entry(header.entry(key), key, shape, header.data_bytes)


def check_finite(name: str, t: np.ndarray) -> None:
    """ModelError when a tensor holds NaN or ±inf (bfloat16 as its bits: :data:`BF16`); checked 4096 rows at a time
    (no copy of a large table)."""
    finite = bf16_finite if t.dtype == BF16 else (lambda part: np.isfinite(part).all())
    for i in range(0, max(len(t), 1), 4096):
        if not finite(t[i:i + 4096]):
            raise ModelError(N_("model.safetensors: {name} holds a value that is not a finite number (NaN or "
                                "infinity)."), name=name)


def read_bf16(header: Header, key: str) -> np.ndarray:  # -> [shape] BF16
    """Tensor ``key``, stored as bfloat16 (its entry checked), read from the file as its bits (:data:`BF16`):
    safetensors' numpy loader has no bfloat16."""
    entry = header.entry(key)
    with open(header.path, "rb") as f:
        f.seek(header.data_start + entry["data_offsets"][0])
        bits = np.fromfile(f, dtype=BF16, count=int(np.prod(entry["shape"], dtype=np.int64)))
    return bits.reshape(tuple(entry["shape"]))


@contextmanager
def tensors(header: Header, *, keep_bf16: bool = False) -> Iterator[Callable[[str], np.ndarray]]:
    """The one tensor getter of every family: ``get(name)`` is tensor ``name`` (the family's name; its entry checked
    by :func:`check_tensors`) in its checkpoint's dtype, every value checked finite; ModelError naming the file or the
    tensor otherwise. A bfloat16 tensor (numpy has no such type) is widened to float32, exactly, or with
    ``keep_bf16`` kept as its bits (:data:`BF16`, 2 bytes a number; attn_models.ops widens it where it is used)."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(header.path), framework="numpy") as f:

            def get(name: str) -> np.ndarray:  # -> its stored shape and dtype
                if header.entry(name).get("dtype") == "BF16":
                    bits = read_bf16(header, name)
                    check_finite(name, bits)
                    return bits if keep_bf16 else bf16_to_f32(bits)
                try:
                    t = f.get_tensor(header.names[name])
                except (TypeError, ValueError) as err:  # e.g. bfloat16, which numpy has no type for
                    raise ModelError(N_("model.safetensors: the numbers of the tensor {name} could not be read (the "
                                        "library's own words: {detail})."),
                                     name=name, detail=library_words(str(err))[0]) from None
                check_finite(name, t)
                return t

            yield get
    except OSError as err:
        raise not_readable(WEIGHTS, err) from None
    except SafetensorError as err:
        raise ModelError(N_("model.safetensors is not a file the safetensors library can read (its own words: "
                            "{detail})."), detail=library_words(str(err))[0]) from None


def map_tensor(header: Header, key: str, rows: int = 4096) -> np.memmap:
    """Tensor ``key`` memory-mapped read-only, in its own dtype: no private copy; a row is read from the file (the
    page cache) when it is looked up. Its values are checked finite first, read from the file ``rows`` rows at a time
    into a private buffer, so the check does not leave the whole table's pages in the process's resident memory.
    A bfloat16 table is refused by name (numpy cannot map it as numbers)."""
    entry = header.entry(key)
    if entry["dtype"] not in NUMPY_DTYPES:  # bfloat16: numpy cannot map it as numbers
        raise ModelError(N_("model.safetensors: {name} holds {dtype} numbers; only {dtypes} are read here."),
                         name=key, dtype=entry["dtype"], dtypes=", ".join(NUMPY_DTYPES))
    dtype, shape = np.dtype(NUMPY_DTYPES[entry["dtype"]]), tuple(entry["shape"])
    offset = header.data_start + entry["data_offsets"][0]
    row_numbers = int(np.prod(shape[1:], dtype=np.int64))
    with open(header.path, "rb") as f:
        f.seek(offset)
        for i in range(0, max(shape[0], 1), rows):
            check_finite(key, np.fromfile(f, dtype=dtype, count=min(rows, shape[0] - i) * row_numbers))
    return np.memmap(header.path, dtype=dtype, mode="r", offset=offset, shape=shape)
