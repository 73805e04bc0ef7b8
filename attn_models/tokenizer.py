"""A checkpoint's tokenizer, read within the caps: tokenizer.json (every family), or a WordPiece vocab.txt (a BERT that
ships no tokenizer.json, such as gaunernst/bert-mini-uncased); and a token as an explorer label.

vocab.txt is read as transformers' BertTokenizer reads it (one token a line, its line number its id) into the
``tokenizers`` package's WordPiece with BERT's normaliser, pre-tokenizer and post-processor (as
``tokenizers.BertWordPieceTokenizer`` builds them): ``[CLS] … [SEP]`` added, ``[MASK]`` kept whole. Lower case or not
is tokenizer_config.json's ``do_lower_case`` when the checkpoint has one, else whether the vocabulary has any
upper-case word piece.

>>> lowercase({"[CLS]": 0, "the": 1, "##s": 2}), lowercase({"[CLS]": 0, "The": 1})
(True, False)
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from attn_core import LIMITS

from .errors import N_, ModelError
from .limits import MODEL_LIMITS
from .reader import library_words, parse_json, read_capped, read_json

TOKENIZER, VOCAB, TOKENIZER_CONFIG = "tokenizer.json", "vocab.txt", "tokenizer_config.json"
#: BERT's special tokens, as BertWordPieceTokenizer adds them (matched whole, before the normaliser)
BERT_SPECIALS = ("[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]")


def read_tokenizer(path: Path, vocab_size: int, settings: Path | None = None) -> object:
    """The tokenizer at ``path`` (tokenizer.json, or vocab.txt: :func:`wordpiece` with ``settings``, its
    tokenizer_config.json or None), at most MODEL_LIMITS.tokenizer_bytes, as a tokenizers.Tokenizer without
    truncation or padding (the caps are checked by the model instead), every id it can give below ``vocab_size``
    (else ModelError)."""
    tokenizer = wordpiece(path, settings) if Path(path).name == VOCAB else from_json(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    vocab = tokenizer.get_vocab(with_added_tokens=True)  # token -> id
    if vocab:
        token, top = max(vocab.items(), key=lambda kv: kv[1])
        check_id(token, top, vocab_size, Path(path).name)
    return tokenizer


def from_json(path: Path) -> object:
    """tokenizer.json as a tokenizers.Tokenizer, or ModelError."""
    from tokenizers import Tokenizer

    data = read_capped(path, TOKENIZER, MODEL_LIMITS.tokenizer_bytes)
    try:
        return Tokenizer.from_str(data.decode("utf-8"))
    except Exception as err:  # noqa: BLE001 - tokenizers raises its own Exception type for a malformed file
        raise tokenizer_problem(data, str(err)) from None


def tokenizer_problem(data: bytes, said: str) -> ModelError:
    """Why the tokenizers library could not read tokenizer.json (``data``; ``said``: the library's message), in the
    learner's words, naming the file and the field at fault where the library's message says where: not UTF-8, not
    JSON (as config.json's: attn_models.reader.parse_json), a field missing, a field the library does not read as it
    is. The library's own words (English) follow as a detail, without the place they name.

    >>> str(tokenizer_problem(b'{"version": "1.0"}', "Model missing. at line 1 column 18"))
    'tokenizer.json has no field model, which a tokenizer must have.'
    >>> str(tokenizer_problem(b'{"model": {"type": "Nope"}}', "data did not match any variant of untagged enum "
    ...                       "ModelUntagged at line 1 column 26"))  # doctest: +NORMALIZE_WHITESPACE
    "tokenizer.json: its field model is not what the tokenizers library reads there (line 1, column 26; the
     library's own words: data did not match any variant of untagged enum ModelUntagged)."
    """
    doc = parse_json(data, TOKENIZER)  # not UTF-8, not JSON: said as config.json's are
    if not isinstance(doc, dict):
        return ModelError(N_("{where}: not a JSON object."), where=TOKENIZER)
    detail, line, column = library_words(said)
    missing = "model" if detail.startswith("Model missing") else (m.group(1) if (m := MISSING.match(detail)) else None)
    # a value the library could not read is named at its end, or just after it (a value it read whole first); a
    # field missing from an object, at that object's closing brace (the file's last: no field)
    top = (field_at(data.decode("utf-8"), line, column, just_after=missing is None)
           if line is not None and column is not None else None)
    if missing is not None:
        field = f"{top}.{missing}" if top not in (None, missing) else missing
        return ModelError(N_("{name} has no field {field}, which a tokenizer must have."), name=TOKENIZER, field=field)
    if top is not None:
        return ModelError(N_("{name}: its field {field} is not what the tokenizers library reads there (line {line}, "
                             "column {column}; the library's own words: {detail})."), name=TOKENIZER, field=top,
                          line=line, column=column, detail=detail)
    return ModelError(N_("{name} is not a tokenizer the tokenizers library can read (its own words: {detail})."),
                      name=TOKENIZER, detail=detail)


#: serde's words for a field that is missing: "missing field `vocab`"
MISSING = re.compile(r"missing field `([^`]{1,80})`")


def field_at(text: str, line: int, column: int, *, just_after: bool = False) -> str | None:
    r"""The top-level field of the JSON object ``text`` whose value holds the place at ``line`` and ``column`` (1-based,
    as serde names a place: in characters), or, with ``just_after``, ends just before it (but for whitespace); or None
    (outside every field's value, or not an object).

    >>> text = '{"a": 1,\n "model": {"type": "x"}}'
    >>> field_at(text, 2, 20), field_at(text, 1, 7), field_at(text, 1, 1), field_at(text, 2, 24)
    ('model', 'a', None, None)
    >>> field_at(text, 2, 24, just_after=True), field_at(text, 1, 8, just_after=True)  # the brace, the comma after
    ('model', 'a')
    """
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    at = sum(len(s) + 1 for s in lines[:line - 1]) + column - 1
    decoder, i = json.JSONDecoder(), _skip(text, 0)
    if not text.startswith("{", i):
        return None
    i = _skip(text, i + 1)
    while i < len(text) and text[i] == '"':
        key, i = json.decoder.scanstring(text, i + 1)
        i = _skip(text, i)
        if not text.startswith(":", i):
            return None
        start = _skip(text, i + 1)
        try:
            _value, end = decoder.raw_decode(text, start)
        except ValueError:
            return None
        if start <= at < end or just_after and at == _skip(text, end):
            return key
        i = _skip(text, end)
        if not text.startswith(",", i):
            return None
        i = _skip(text, i + 1)
    return None


def _skip(text: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is no JSON whitespace."""
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def read_vocab(path: Path) -> dict[str, int]:
    """vocab.txt as transformers' ``load_vocab`` reads it: token -> its line number (universal newlines; a token that
    comes twice keeps its last line), or ModelError."""
    data = read_capped(path, VOCAB, MODEL_LIMITS.tokenizer_bytes)
    try:
        lines = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").readlines()
    except UnicodeDecodeError:
        raise ModelError(N_("{name} is not UTF-8 text."), name=VOCAB) from None
    return {line.rstrip("\n"): i for i, line in enumerate(lines)}


def lowercase(vocab: dict[str, int], settings: Path | None = None) -> bool:
    """Whether a WordPiece vocabulary is lower-cased: tokenizer_config.json's ``do_lower_case`` when ``settings`` is
    one and says it (true or false), else whether no word piece (a token outside ``[…]``) has an upper-case letter."""
    if settings is not None:
        doc = read_json(settings, TOKENIZER_CONFIG)
        if isinstance(doc, dict) and isinstance(doc.get("do_lower_case"), bool):
            return doc["do_lower_case"]
    return not any(c.isupper() for token in vocab if not (token.startswith("[") and token.endswith("]"))
                   for c in token)


def wordpiece(path: Path, settings: Path | None = None) -> object:
    """vocab.txt as a BERT WordPiece tokenizers.Tokenizer (see the module's text), or ModelError: not UTF-8, over
    its cap, or without [UNK], [CLS] or [SEP]."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = read_vocab(path)
    for token in ("[UNK]", "[CLS]", "[SEP]"):
        if token not in vocab:
            raise ModelError(N_("The tokenizer has no {token} token; is it a BERT tokenizer?"), token=token)
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.add_special_tokens([t for t in BERT_SPECIALS if t in vocab])
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=lowercase(vocab, settings))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def check_id(token: str, token_id: int, vocab_size: int, source: str = TOKENIZER) -> None:
    """ModelError when the tokenizer (read from ``source``) gives ``token`` an id the word embedding has no row for.

    >>> check_id("[CLS]", 30522, 30522)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: tokenizer.json gives the token '[CLS]' the id 30522; config.json's vocab_size ...
    """
    if not 0 <= token_id < vocab_size:
        raise ModelError(N_("{name} gives the token {token} the id {id}; config.json's vocab_size {vocab} has ids "
                            "0 … {last} only."), name=source, token=repr(token[:40]), id=token_id, vocab=vocab_size,
                         last=vocab_size - 1)


def token_label(token: str) -> str:
    """A token as an explorer label (labels are at most LIMITS.token_chars characters).

    >>> token_label("##ing"), len(token_label("x" * 100))
    ('##ing', 40)
    """
    cap = LIMITS.token_chars
    return token if len(token) <= cap else token[: cap - 1] + "…"
