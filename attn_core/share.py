"""A configuration as JSON (schema version 1), as a permalink value, and as CSV tables.

The JSON document is one object::

    {"format": "self-attention-explorer", "version": 1, "page": "steps",
     "tokens": ["input1", ...], "n_heads": 1, "scale": "sqrt_dk", "mask_kind": "none",
     "is_pad": [false, ...], "custom_mask": [[1, 1, ...], ...],
     "x": [[1.0, 0.0, ...], ...], "w_q": [...], "w_k": [...], "w_v": [...], "w_o": [...]}

``page`` is optional (the page a link opens on), and so is ``origin`` (where the numbers came from, e.g.
``{"model": ..., "layer": 2, "sentence": ..., "head": 5}``: :class:`attn_core.Config`). So are ``score`` ("dot",
"general" or "additive"; "dot" when absent) with the score function's weights (``w_a``; ``w_1``, ``w_2``, ``v_a``),
and ``y_tokens`` with ``y`` (cross-attention's query sequence): a file or link written before they existed opens as
the dot-product self-attention it was. So are the modern options (:class:`attn_core.Config`), each written only when
it is not its default: ``n_kv_heads`` (a whole number), ``rope`` (``{"base": 10000.0, "layout": "half"}``),
``qk_norm`` and ``alibi`` (true), ``window`` (a whole number), ``softcap`` (a number). Every other field is required
and no other field is allowed. ``scale``
is "sqrt_dk", "none" or a positive number; ``custom_mask`` holds 0/1 (1 = may attend). A permalink value is that
JSON, compact, compressed with zlib, in unpadded base64url.

Why matrices are JSON numbers, not base64 of little-endian float64 bytes: Python's ``json`` writes a
float with ``float.__repr__``, the shortest decimal that reads back as the same float64, and reads it
with ``float()``, so every value (including -0.0 and subnormals) round-trips bit for bit, as
:func:`attn_core.configs_equal` checks. Decimals stay readable and editable in a text editor, and
after zlib they are about as compact as raw bytes (8 bytes per float64 that does not compress, and
much less for the small round numbers learners type).

Every decoder is hardened: text over the caps, bad base64, bad or truncated zlib, output that would
inflate past :data:`attn_core.limits.LIMITS` ``.permalink_json_bytes``, invalid or deeply nested
JSON, too many items, wrong types, ragged or oversized matrices, NaN and unknown versions all raise
:class:`AttentionInputError`; nothing is evaluated or unpickled. Every decoded configuration goes
through :func:`attn_core.validate_config`.
"""

from __future__ import annotations

import base64
import binascii
import io
import itertools
import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from functools import partial

import numpy as np

from .config import MATRICES, MATRIX_NAMES, SCORE_MATRICES, Config, config_mask, validate_config
from .errors import N_, AttentionInputError
from .limits import LIMITS
from .modern import ModernTrace, RoPE
from .multihead import MultiHeadTrace
from .validation import MORE_CELLS, naming_all

FORMAT = "self-attention-explorer"
VERSION = 1
FIELDS = ("tokens", "n_heads", "scale", "mask_kind", "is_pad", "custom_mask", *MATRICES)
OPTIONAL_FIELDS = ("page", "origin", "score", "y_tokens", "y", "w_a", "w_1", "w_2", "v_a", "score_bias",
                   *("n_kv_heads", "rope", "qk_norm", "alibi", "window", "softcap"))  # the modern options
STAGES = ("q", "k", "v", "scores", "scaled", "masked", "weights", "output")  # per head, as in AttentionTrace
#: the optional fields whose "off" is None: JSON's null says it as well as leaving the field out (an export omits it)
NULLABLE_FIELDS = ("page", "origin", "y_tokens", "y", "w_a", "w_1", "w_2", "v_a", "score_bias",
                   *("n_kv_heads", "rope", "window", "softcap"))
#: json.JSONDecodeError's reasons (the start of its ``msg``), each in words the app translates; any other reason is
#: :data:`_JSON_OTHER`
_JSON_PROBLEMS = (
    ("Expecting value", N_("a value was expected")),
    ("Expecting property name enclosed in double quotes", N_("a field name in double quotes was expected")),
    ("Expecting ',' delimiter", N_("a comma was expected")),
    ("Expecting ':' delimiter", N_("a colon was expected")),
    ("Unterminated string starting at", N_("a string that is never closed starts")),
    ("Extra data", N_("more text follows the end of the JSON")),
    ("Invalid control character", N_("a line break or another control character is inside a string")),
    ("Invalid \\escape", N_("a backslash escape is not valid")),
    ("Invalid \\uXXXX escape", N_("a backslash escape is not valid")),
    ("Illegal trailing comma", N_("a comma comes before the end of a list or object")),
)
_JSON_OTHER = N_("the text is not valid JSON")

_PAGE = re.compile(r"[a-z][a-z0-9_]{0,31}")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
_NUMBERS_CAP = LIMITS.total_cells + LIMITS.n_seq**2 + 16  # matrix cells, the custom mask, n_heads and scale
_SHAPE_CAPS = {  # matrix -> (most rows, most columns), before validate_config checks the exact rules
    "x": (LIMITS.n_seq, LIMITS.d_model),
    "w_q": (LIMITS.d_model, LIMITS.width),
    "w_k": (LIMITS.d_model, LIMITS.width),
    "w_v": (LIMITS.d_model, LIMITS.width),
    "w_o": (LIMITS.width, LIMITS.width),
    "y": (LIMITS.n_seq, LIMITS.d_model),
    "w_a": (LIMITS.width, LIMITS.width),
    "w_1": (LIMITS.width, LIMITS.width),
    "w_2": (LIMITS.width, LIMITS.width),
    "v_a": (1, LIMITS.width),
    "score_bias": (LIMITS.n_seq, LIMITS.n_seq),  # one head's
}


# ---- configuration <-> JSON dict --------------------------------------------------------------


def config_to_dict(cfg: Config, page: str | None = None) -> dict:
    """The JSON-ready dict of a configuration (schema version 1).

    Examples
    --------
    >>> from attn_core import load_preset
    >>> d = config_to_dict(load_preset("seed000"), page="steps")
    >>> d["format"], d["version"], d["page"], d["x"][0]
    ('self-attention-explorer', 1, 'steps', [1.0, 0.0, 1.0, 0.0])
    """
    doc: dict = {"format": FORMAT, "version": VERSION}
    if page is not None:
        doc["page"] = _check_page(page)
    doc |= {
        "tokens": list(cfg.tokens),
        "n_heads": int(cfg.n_heads),
        "scale": cfg.scale if isinstance(cfg.scale, str) else float(cfg.scale),
        "mask_kind": cfg.mask_kind,
        "is_pad": [bool(p) for p in cfg.is_pad],
        "custom_mask": np.asarray(cfg.custom_mask).astype(int).tolist(),  # [n_seq, n_seq] of 0/1
    }
    for name in MATRICES:
        doc[name] = cfg.matrix(name).tolist()  # Python floats: json writes them with repr, exactly
    if cfg.origin is not None:
        doc["origin"] = dict(cfg.origin)
    if cfg.score != "dot":
        doc["score"] = cfg.score
        doc |= {name: cfg.matrix(name).tolist() for name in SCORE_MATRICES[cfg.score]}
    if cfg.cross:
        doc |= {"y_tokens": list(cfg.y_tokens), "y": cfg.y.tolist()}
    if cfg.score_bias is not None:
        doc["score_bias"] = cfg.score_bias.tolist()  # [n_heads][n_q][n_seq]
    if cfg.n_kv_heads is not None:
        doc["n_kv_heads"] = int(cfg.n_kv_heads)
    if cfg.rope is not None:
        doc["rope"] = {"base": float(cfg.rope.base), "layout": cfg.rope.layout}
    doc |= {name: True for name in ("qk_norm", "alibi") if getattr(cfg, name)}
    if cfg.window is not None:
        doc["window"] = int(cfg.window)
    if cfg.softcap is not None:
        doc["softcap"] = float(cfg.softcap)
    return doc


def config_from_dict(doc: object) -> tuple[Config, str | None]:
    """The validated configuration and page (or None) of a decoded JSON document.

    Raises
    ------
    AttentionInputError
        Not a version-1 document, a missing or unknown field, a value of the wrong type or shape,
        a matrix over the caps, or anything :func:`attn_core.validate_config` rejects.

    Examples
    --------
    >>> from attn_core import configs_equal, load_preset
    >>> cfg = load_preset("seed002_causal")
    >>> back, page = config_from_dict(config_to_dict(cfg))
    >>> configs_equal(cfg, back), page
    (True, None)
    >>> config_from_dict({"format": "self-attention-explorer", "version": 2})
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: version: this app reads version 1 configurations, not version 2.
    """
    if not isinstance(doc, dict):
        raise AttentionInputError(N_("configuration: expected a JSON object {{...}}, got {got}."), got=_json_type(doc))
    if doc.get("format") != FORMAT:
        raise AttentionInputError(N_('configuration: not a Self-Attention Explorer file (needs "format": "{format}").'),
                                  format=FORMAT)
    version = doc.get("version")
    if type(version) is not int or version != VERSION:
        raise AttentionInputError(
            N_("version: this app reads version {version} configurations, not version {got}."), version=VERSION,
            got=_short(version),
        )
    unknown = sorted(set(doc) - {"format", "version", *OPTIONAL_FIELDS, *FIELDS})
    if unknown:
        raise AttentionInputError(N_("configuration: unknown field(s) {fields}."),
                                  fields=", ".join(map(_short, unknown[:5])))
    doc = {k: v for k, v in doc.items() if not (v is None and k in NULLABLE_FIELDS)}  # null: off, as if left out
    missing = [f for f in FIELDS if f not in doc]
    if missing:
        raise AttentionInputError(N_("configuration: missing field(s) {fields}."), fields=", ".join(map(repr, missing)))
    page = _check_page(doc["page"]) if "page" in doc else None
    mats = {name: _matrix(name, doc[name]) for name in (*MATRICES, "y", "w_a", "w_1", "w_2", "v_a") if name in doc}
    if ("y" in doc) != ("y_tokens" in doc):
        raise AttentionInputError(N_('configuration: "y" and "y_tokens" come together (cross-attention), or neither.'))
    cfg = Config(
        tokens=_tokens(doc["tokens"]),
        n_heads=_n_heads(doc["n_heads"]),
        scale=_scale(doc["scale"]),
        mask_kind=doc["mask_kind"] if _is_short_text(doc["mask_kind"]) else _Shown(_short(doc["mask_kind"])),
        is_pad=_is_pad(doc["is_pad"]),
        custom_mask=_custom_mask(doc["custom_mask"]),
        origin=doc.get("origin"),  # checked by validate_config
        score=doc.get("score", "dot") if _is_short_text(doc.get("score", "dot")) else _Shown(_short(doc["score"])),
        y_tokens=_tokens(doc["y_tokens"], "y_tokens") if "y_tokens" in doc else None,
        score_bias=_score_bias(doc["score_bias"]) if "score_bias" in doc else None,
        **mats,
        **_modern_options(doc),
    )
    return validate_config(cfg), page


def _modern_options(doc: dict) -> dict:
    """The modern options present in ``doc``, typed as JSON should have them (validate_config checks the rest)."""
    out: dict = {}
    for name in ("n_kv_heads", "window"):
        if name in doc:
            if type(doc[name]) is not int or not 1 <= doc[name] <= max(LIMITS.n_heads, LIMITS.n_seq):
                raise AttentionInputError(N_("{name}: must be a whole number from 1 to {most}, got {got}."),
                                          name=name, most=max(LIMITS.n_heads, LIMITS.n_seq), got=_short(doc[name]))
            out[name] = doc[name]
    for name in ("qk_norm", "alibi"):
        if name in doc:
            if type(doc[name]) is not bool:
                raise AttentionInputError(N_("{name}: must be true or false, got {got}."), name=name,
                                          got=_json_type(doc[name]))
            out[name] = doc[name]
    if "softcap" in doc:
        cap = doc["softcap"]
        if type(cap) not in (int, float) or (type(cap) is int and not _fits_float(cap)):
            raise AttentionInputError(N_("softcap: must be a number above 0, got {got}."), got=_json_type(cap))
        out["softcap"] = float(cap)
    if "rope" in doc:
        rope = doc["rope"]
        if type(rope) is not dict:
            raise AttentionInputError(N_('rope: must be an object with "base" and "layout", got {got}.'),
                                      got=_json_type(rope))
        if set(rope) != {"base", "layout"}:
            raise AttentionInputError(N_('rope: has the keys {keys}; it takes exactly "base" and "layout".'),
                                      keys=", ".join(repr(k)[:40] for k in sorted(rope)[:5]))
        base = rope["base"]
        if type(base) not in (int, float):
            raise AttentionInputError(N_("RoPE base: must be a number above 1, got {got}."), got=_json_type(base))
        if type(base) is int and not _fits_float(base):
            raise AttentionInputError(N_("RoPE base: is too large for a float64 number."))
        if not _is_short_text(rope["layout"]):
            raise AttentionInputError(N_("RoPE layout: must be \"half\" or \"interleaved\", got {got}."),
                                      got=_json_type(rope["layout"]))
        out["rope"] = RoPE(float(rope["base"]), rope["layout"])  # checks the base and the layout
    return out


def _short(value: object) -> str:
    """A value for a message: its repr (null, true and false as JSON writes them), or what it is when that would be
    long (a message must stay readable).

    >>> _short(None), _short(True), _short(2.5), _short("x" * 50)
    ('null', 'true', '2.5', 'a string')
    """
    text = json.dumps(value) if value is None or type(value) is bool else repr(value)
    return text if len(text) <= 40 else _json_type(value)


class _Shown(str):
    """A value that is no text (null, a number, a list), as a message shows it: its repr is itself, so the refusal
    that quotes it says null, not 'null'."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _is_short_text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 40


def _check_page(page: object) -> str:
    if not isinstance(page, str) or not _PAGE.fullmatch(page):
        raise AttentionInputError(N_("page: {page} is not a page name (lower-case letters, digits and _)."),
                                  page=_short(page))
    return page


def _json_type(v: object) -> str:
    """What a JSON value is, for a message (marked for the catalogs: the app translates it with the message)."""
    names = {dict: N_("an object"), list: N_("a list"), str: N_("a string"), bool: "true/false", type(None): "null"}
    return names.get(type(v), N_("a number"))


def _score_bias(heads: object) -> np.ndarray:  # [n_heads][n_q][n_seq] lists -> [n_heads, n_q, n_seq] float64
    """A score bias from JSON: a list of one matrix per head, each checked against the caps before it is built."""
    if type(heads) is not list or not heads or len(heads) > LIMITS.n_heads:
        raise AttentionInputError(N_("score bias: expected a list of 1 to {most} matrices (one per head), got {got}."),
                                  most=LIMITS.n_heads, got=_json_type(heads) if type(heads) is not list else len(heads),
                                  matrix="score bias")
    mats = [_matrix("score_bias", rows) for rows in heads]
    if len({m.shape for m in mats}) > 1:
        raise AttentionInputError(N_("score bias: the heads' matrices differ in shape; each is n_q × n_seq."),
                                  matrix="score bias")
    return np.stack(mats)


def _matrix(name: str, rows: object) -> np.ndarray:  # list of rows -> [n_rows, n_cols] float64
    """A JSON list of rows of numbers as float64, checked against the caps before any array is built."""
    label = MATRIX_NAMES.get(name, "score bias")
    max_rows, max_cols = _SHAPE_CAPS[name]
    if type(rows) is not list or not rows or type(rows[0]) is not list:
        raise AttentionInputError(
            N_("{name}: expected a non-empty list of rows of numbers, got {got}."), name=label, got=_json_type(rows),
            matrix=label,
        )
    n_cols = len(rows[0])
    if len(rows) > max_rows or n_cols > max_cols:
        raise AttentionInputError(
            N_("{name}: {rows} × {cols} is over the cap of {max_rows} × {max_cols}."), name=label, rows=len(rows),
            cols=n_cols, max_rows=max_rows, max_cols=max_cols, matrix=label,
        )
    for i, row in enumerate(rows):
        if type(row) is list and len(row) != n_cols:
            raise AttentionInputError(
                N_("{name}: row {i} has {n} values but row 0 has {cols}; a matrix needs equal rows."), name=label,
                i=i, n=len(row), cols=n_cols, matrix=label,
            )
        if type(row) is not list:
            raise AttentionInputError(
                N_("{name}: row {i} has {got} but row 0 has {cols}; a matrix needs equal rows."), name=label, i=i,
                got=_json_type(row), cols=n_cols, matrix=label,
            )
    if not all(set(map(type, row)) <= {int, float} for row in rows):  # every such cell named, the first few said
        bad = ((i, j, v) for i, row in enumerate(rows) for j, v in enumerate(row) if type(v) not in (int, float))
        found = [AttentionInputError(N_("{name}: cell ({i}, {j}) is {got}, not a number."), name=label, i=i, j=j,
                                     got=_json_type(v), matrix=label, cell=(i, j))
                 for i, j, v in itertools.islice(bad, MORE_CELLS + 1)]
        raise naming_all(found, len(found) + sum(1 for _ in bad))
    try:
        return np.array(rows, dtype=np.float64)  # NaN/inf pass here; validate_config names the cell
    except OverflowError:  # an integer beyond float64
        i, j = next((i, j) for i, row in enumerate(rows) for j, v in enumerate(row) if not _fits_float(v))
        raise AttentionInputError(
            N_("{name}: cell ({i}, {j}) is too large for a float64 number."), name=label, i=i, j=j, matrix=label,
            cell=(i, j),
        ) from None


def _fits_float(v: int | float) -> bool:
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _tokens(tokens: object, field: str = "tokens") -> tuple[str, ...]:
    if type(tokens) is not list or not all(type(t) is str for t in tokens):
        raise AttentionInputError(N_("{field}: expected a list of labels (strings)."), field=field, matrix=field)
    for i, t in enumerate(tokens):
        try:
            t.encode("utf-8")
        except UnicodeEncodeError:
            raise AttentionInputError(N_("{field}: label {i} is not valid text."), field=field, i=i,
                                      matrix=field) from None
    return tuple(tokens)


def _n_heads(n_heads: object) -> object:
    """Whole numbers over the cap are refused here (a huge one would fill the message with digits)."""
    if type(n_heads) is int and n_heads > LIMITS.n_heads:
        raise AttentionInputError(N_("n_heads: {n_heads} is over the cap of {cap}."), n_heads=_short(n_heads),
                                  cap=LIMITS.n_heads)
    if type(n_heads) is bool or not (isinstance(n_heads, (int, float)) or _is_short_text(n_heads)):
        raise AttentionInputError(N_("n_heads: must be a whole number of at least 1, got {got}."),
                                  got=_json_type(n_heads))
    return n_heads  # check_heads rejects anything but a whole number >= 1


def _scale(scale: object) -> object:
    if type(scale) is int:  # JSON 2 means 2.0; an integer beyond float64 is refused here, not by float()
        if not _fits_float(scale):
            raise AttentionInputError(N_("scale: the divisor is too large for a float64 number."))
        return float(scale)
    if not (isinstance(scale, float) or _is_short_text(scale)):
        raise AttentionInputError(N_('scale: must be "sqrt_dk", "none" or a number above 0, got {got}.'),
                                  got=_json_type(scale))
    return scale  # "sqrt_dk", "none", a float, or something validate_config rejects


def _is_pad(is_pad: object) -> tuple:
    if type(is_pad) is not list or not all(type(p) is bool for p in is_pad):
        raise AttentionInputError(N_("mask: is_pad must be a list of true/false, one per token."), matrix="mask")
    return tuple(is_pad)


def _custom_mask(rows: object) -> np.ndarray:  # list of rows of 0/1 -> bool [n_q, n_k]
    if (
        type(rows) is not list
        or not rows
        or not all(type(r) is list and len(r) == len(rows[0]) for r in rows)
        or not all(set(map(type, r)) <= {int} and set(r) <= {0, 1} for r in rows)
    ):
        raise AttentionInputError(
            N_("mask: custom_mask must be a list of equally long rows of 0 and 1 (1 = may attend)."), matrix="mask"
        )
    return np.array(rows, dtype=np.int8).reshape(len(rows), len(rows[0])).astype(bool)


# ---- JSON text ----------------------------------------------------------------------------------


def to_json(cfg: Config, page: str | None = None) -> str:
    """The configuration as a readable JSON document (one matrix row per line).

    Examples
    --------
    >>> from attn_core import load_preset
    >>> to_json(load_preset("seed000")).splitlines()[:3]
    ['{', '  "format": "self-attention-explorer",', '  "version": 1,']
    """
    return "".join(_json_chunks(config_to_dict(cfg, page), pretty=True))


def _json_chunks(doc: dict, *, pretty: bool) -> Iterator[str]:
    """``doc`` as JSON text, a few pieces at a time (a matrix row per piece).

    Compact, the pieces join to ``json.dumps(doc, separators=(",", ":"), ensure_ascii=False)``;
    pretty, each field and each matrix row is on a line of its own.

    Examples
    --------
    >>> doc = {"a": [[1.0, 2.0], [3.0, 4.0]], "b": "é"}
    >>> "".join(_json_chunks(doc, pretty=False)) == json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    True
    >>> print("".join(_json_chunks(doc, pretty=True)), end="")
    {
      "a": [
        [1.0, 2.0],
        [3.0, 4.0]
      ],
      "b": "é"
    }
    """
    field_sep, key_sep, row_start, row_sep, matrix_end = (
        (",\n  ", ": ", "[\n    ", ",\n    ", "\n  ]") if pretty else (",", ":", "[", ",", "]")
    )
    separators = (", ", ": ") if pretty else (",", ":")
    yield "{\n  " if pretty else "{"
    for n, (key, value) in enumerate(doc.items()):
        yield (field_sep if n else "") + json.dumps(key) + key_sep
        if isinstance(value, list) and value and isinstance(value[0], list):  # a matrix
            yield row_start
            for i, row in enumerate(value):
                yield (row_sep if i else "") + json.dumps(row, separators=separators, allow_nan=False)
            yield matrix_end
        else:
            yield json.dumps(value, separators=separators, ensure_ascii=False, allow_nan=False)
    yield "\n}\n" if pretty else "}"


def from_json(data: bytes | str, *, max_bytes: int = LIMITS.file_bytes) -> tuple[Config, str | None]:
    """The validated configuration and page of a JSON document (the text of a file).

    Raises
    ------
    AttentionInputError
        Over ``max_bytes``, not UTF-8, not JSON, or anything :func:`config_from_dict` rejects.

    Examples
    --------
    >>> from_json(b"[1, 2]")
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: configuration: expected a JSON object {...}, got a list.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise AttentionInputError(N_("JSON file: {size:,} bytes is over the cap of {cap:,} bytes."), size=len(raw),
                                  cap=max_bytes)
    return config_from_dict(parse_json(raw, N_("JSON file")))


def parse_json(raw: bytes, what: str) -> object:
    """Strict, bounded ``json.loads``: UTF-8, no duplicate keys, item counts under the caps.

    ``what`` names the text in a message ("JSON file", "link"; marked with N_ where it is written).

    ``NaN`` and ``Infinity`` are read as floats, so the validation names the matrix cell that holds them.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise AttentionInputError(N_("{what}: not UTF-8 text (its byte at position {byte}, counted from 0, is not "
                                     "valid)."), what=what,
                                  byte=err.start) from None
    if not text.strip():
        raise AttentionInputError(N_("{what}: there is nothing in it."), what=what)
    for template, count in (
        (N_("{what}: {count:,} lists or objects; a configuration has at most {cap:,}."),
         text.count("[") + text.count("{")),
        (N_("{what}: {count:,} strings; a configuration has at most {cap:,}."), text.count('"') // 2),
        (N_("{what}: {count:,} true/false/null values; a configuration has at most {cap:,}."),
         text.count("true") + text.count("false") + text.count("null")),
    ):
        if count > LIMITS.json_items:
            raise AttentionInputError(template, what=what, count=count, cap=LIMITS.json_items)
    numbers = 0

    def number(convert):
        def parse(s: str):
            nonlocal numbers
            numbers += 1
            if numbers > _NUMBERS_CAP:
                raise AttentionInputError(N_("{what}: more than {cap:,} numbers. A configuration holds at most "
                                             "{cells:,} cells in X and the weights together, and a mask of at most "
                                             "{n_seq} × {n_seq}."),
                                          what=what, cap=_NUMBERS_CAP, cells=LIMITS.total_cells, n_seq=LIMITS.n_seq)
            return convert(s)
        return parse

    try:
        return json.loads(
            text,
            parse_float=number(float),
            parse_int=number(int),
            parse_constant=number(float),  # NaN, Infinity, -Infinity
            object_pairs_hook=_no_duplicate_keys,
        )
    except AttentionInputError:
        raise
    except json.JSONDecodeError as err:
        raise AttentionInputError(N_("{what}: not valid JSON ({problem} at line {line}, column {column})."),
                                  what=what, problem=json_problem(err), line=err.lineno, column=err.colno) from None
    except RecursionError:
        raise AttentionInputError(N_("{what}: the JSON is nested too deeply."), what=what) from None
    except ValueError:  # an integer with more digits than Python converts (4300)
        raise AttentionInputError(N_("{what}: a number has too many digits to read."), what=what) from None


def json_problem(err: json.JSONDecodeError) -> str:
    """What a JSON syntax error says, in words marked for the catalogs (never json's English in a translated
    sentence).

    >>> try:
    ...     json.loads('{"a" 1}')
    ... except json.JSONDecodeError as err:
    ...     json_problem(err)
    'a colon was expected'
    """
    return next((words for start, words in _JSON_PROBLEMS if err.msg.startswith(start)), _JSON_OTHER)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise AttentionInputError(N_("configuration: the field {field!r} appears twice."), field=dup)
    return doc


# ---- permalink value ----------------------------------------------------------------------------


def encode_link(cfg: Config, page: str | None = None, *, max_chars: int | None = None) -> str:
    """The permalink value: compact JSON → zlib (level 9) → base64url without padding.

    With ``max_chars``, compression stops as soon as the value is sure to be longer, and raises:
    a large configuration is refused in a fraction of the time compressing all of it would take.

    Examples
    --------
    >>> from attn_core import configs_equal, load_preset
    >>> cfg = load_preset("seed000")
    >>> value = encode_link(cfg, "steps")
    >>> len(value) < 400, set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    (True, True)
    >>> back, page = decode_link(value)
    >>> configs_equal(cfg, back), page
    (True, 'steps')
    >>> encode_link(cfg, max_chars=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: link: this configuration needs more than 100 characters; share ...
    """
    budget = None if max_chars is None else max_chars * 3 // 4  # base64 writes 4 characters per 3 bytes
    compressor = zlib.compressobj(9)
    packed, size, batch, batch_chars = [], 0, [], 0
    for piece in _json_chunks(config_to_dict(cfg, page), pretty=False):
        batch.append(piece)
        batch_chars += len(piece)
        if batch_chars < 16_384:
            continue
        packed.append(compressor.compress("".join(batch).encode("utf-8")))
        size, batch, batch_chars = size + len(packed[-1]), [], 0
        if budget is not None and size > budget:
            break
    else:
        packed.append(compressor.compress("".join(batch).encode("utf-8")) + compressor.flush())
        value = base64.urlsafe_b64encode(b"".join(packed)).decode("ascii").rstrip("=")
        if max_chars is None or len(value) <= max_chars:
            return value
    raise AttentionInputError(N_("link: this configuration needs more than {chars:,} characters; share a JSON file "
                                 "instead."), chars=max_chars)


def decode_link(
    value: object, *, max_chars: int = LIMITS.permalink_bytes, max_json: int = LIMITS.permalink_json_bytes
) -> tuple[Config, str | None]:
    """The validated configuration and page of a permalink value.

    Raises
    ------
    AttentionInputError
        Longer than ``max_chars``, not base64url, not zlib data (or cut short), inflating past
        ``max_json`` bytes, or anything :func:`parse_json` and :func:`config_from_dict` reject.

    Examples
    --------
    >>> decode_link("not a link!")
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: link: not base64url text (only letters, digits, - and _); was it changed?
    """
    if not isinstance(value, str):
        raise AttentionInputError(N_("link: expected text, got {type}."), type=type(value).__name__)
    value = value.strip()
    if not value:
        raise AttentionInputError(N_("link: the configuration value is empty."))
    if len(value) > max_chars:
        raise AttentionInputError(
            N_("link: {chars:,} characters is over the cap of {cap:,}; share a JSON file instead."), chars=len(value),
            cap=max_chars,
        )
    if not _BASE64URL.fullmatch(value):
        raise AttentionInputError(N_("link: not base64url text (only letters, digits, - and _); was it changed?"))
    try:
        packed = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise AttentionInputError(N_("link: not valid base64url (its length is wrong); was it cut short?")) from None
    return config_from_dict(parse_json(inflate(packed, max_json), N_("link")))


def inflate(packed: bytes, max_bytes: int) -> bytes:
    """zlib-decompress at most ``max_bytes`` bytes; refuse more (a zip bomb), bad or truncated data.

    Examples
    --------
    >>> inflate(zlib.compress(b"abc"), 10)
    b'abc'
    >>> inflate(zlib.compress(bytes(100)), 10)
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: link: the data inflates to more than 10 bytes; refused.
    """
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(packed, max_bytes + 1)  # never holds more than max_bytes + 1 bytes
    except zlib.error:
        raise AttentionInputError(N_("link: the data is not zlib-compressed, or is damaged.")) from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise AttentionInputError(N_("link: the data inflates to more than {size:,} bytes; refused."), size=max_bytes)
    if not inflater.eof:
        raise AttentionInputError(N_("link: the compressed data ends early; the link was probably cut short."))
    if inflater.unused_data:
        raise AttentionInputError(N_("link: there are extra bytes after the compressed data."))
    return out


# ---- CSV tables -----------------------------------------------------------------------------------


def named_matrices(cfg: Config, trace: MultiHeadTrace) -> dict[str, np.ndarray]:
    """Every matrix of the configuration and every intermediate, by file-friendly name.

    Names: the configuration's matrices (``x, w_q, w_k, w_v, w_o``, and ``y``, ``w_a``, ``w_1``, ``w_2``, ``v_a``
    where present), ``mask`` (0/1, when a mask applies), per head ``head{h}_{q,k,v,scores,scaled,masked,weights,
    output}`` (with ``head{h}_q_a`` for a general score, ``head{h}_q_1`` and ``head{h}_k_2`` for an additive one;
    ``head{h}_capped`` after ``scaled`` with a soft cap and ``head{h}_biased`` with ALiBi), then ``concat`` and
    ``output``. A head's q and k are the ones it scored (QK-normed and rotated with those options); with grouped-query
    heads, head h's k and v are its key/value head's. ``mask`` is the one the heads used (with a window, the mask kind
    and the window together).

    Examples
    --------
    >>> from attn_core import load_preset, run
    >>> cfg = load_preset("seed000")
    >>> list(named_matrices(cfg, run(cfg)))[4:8]
    ['w_o', 'head0_q', 'head0_k', 'head0_v']
    """
    out = {name: cfg.matrix(name) for name in cfg.matrix_names()}
    mask = trace.mask if isinstance(trace, ModernTrace) else config_mask(cfg)  # the mask the heads used
    if mask is not None:
        out["mask"] = mask.astype(np.float64)  # [n_q, n_seq] of 0/1
    extra = {"dot": (), "general": ("q_a",), "additive": ("q_1", "k_2")}[cfg.score]
    after = ("scaled", *(("capped",) if cfg.softcap is not None else ()), *(("biased",) if cfg.alibi else ()))
    stages = (*STAGES[:3], *extra, *STAGES[3:5], *after[1:], *STAGES[5:])  # q k v [extra] scores scaled [..] masked
    for h, head in enumerate(trace.heads):
        out |= {f"head{h}_{stage}": getattr(head, stage) for stage in stages}
    out["concat"] = trace.concat  # [n_q, n_heads·d_v]
    out["output"] = trace.output  # [n_q, d_out]
    return out


_KEY_ROWS = ("x", "k", "v", "k_2")  # matrices with a row per key token (X's)
_QUERY_ROWS = ("y", "q", "q_a", "q_1", "mask", "scores", "scaled", "masked", "weights", "output", "concat")
_KEY_COLUMNS = ("mask", "scores", "scaled", "masked", "weights")


def _row_col_labels(name: str, shape: tuple[int, int], tokens: tuple[str, ...],
                    query_tokens: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Rows of X, K, V are the tokens, rows of Q, the scores, the weights, the output... the queries' (the same but
    with cross-attention); key columns of the scores and weights are the tokens; weights' rows and columns numbers."""
    stage = name.split("_", 1)[1] if name.startswith("head") else name
    rows = list(tokens) if stage in _KEY_ROWS else list(query_tokens) if stage in _QUERY_ROWS else None
    rows = rows or [str(i) for i in range(shape[0])]
    cols = list(tokens) if stage in _KEY_COLUMNS else [str(j) for j in range(shape[1])]
    return rows, cols


def to_csv(name: str, matrix: np.ndarray, tokens: tuple[str, ...], query_tokens: tuple[str, ...] | None = None) -> str:
    """One matrix as CSV: a header of column labels, then a label and the values of each row.

    ``tokens`` label X's rows (the keys); ``query_tokens`` the queries' when they differ (cross-attention).

    Values are written with ``repr`` (exact float64; ``-inf`` for a masked score); labels are quoted
    as the ``csv`` module would quote them.

    Examples
    --------
    >>> print(to_csv("head0_weights", np.array([[1.0, 0.0], [0.25, 0.75]]), ("a", "b,c")), end="")
    ,a,"b,c"
    a,1.0,0.0
    "b,c",0.25,0.75
    """
    rows, cols = _row_col_labels(name, matrix.shape, tokens, tokens if query_tokens is None else query_tokens)
    lines = [",".join(["", *map(_csv_field, cols)])]
    for label, row in zip(rows, matrix.tolist(), strict=True):
        lines.append(_csv_field(label) + "," + ",".join(map(repr, row)))
    return "\n".join(lines) + "\n"


def _csv_field(text: str) -> str:
    """A label as one CSV cell (quoted when it holds a comma, a quote or a line break)."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def csv_zip(cfg: Config, trace: MultiHeadTrace) -> bytes:
    """A zip of one CSV per matrix and intermediate, plus ``config.json`` (byte-identical for equal input).

    Examples
    --------
    >>> from attn_core import load_preset, run
    >>> cfg = load_preset("seed000")
    >>> names = zipfile.ZipFile(io.BytesIO(csv_zip(cfg, run(cfg)))).namelist()
    >>> names[0], names[-2], names[-1]
    ('x.csv', 'output.csv', 'config.json')
    """
    files = [(f"{name}.csv", partial(to_csv, name, m, cfg.tokens, cfg.query_tokens))
             for name, m in named_matrices(cfg, trace).items()]
    files.append(("config.json", partial(to_json, cfg)))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for file_name, text in files:  # one table's text in memory at a time
            info = zipfile.ZipInfo(file_name, date_time=(1980, 1, 1, 0, 0, 0))  # fixed time: same input, same bytes
            info.external_attr = 0o644 << 16  # rw-r--r-- when unzipped
            zf.writestr(info, text().encode("utf-8"), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
    return buf.getvalue()
