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
from pathlib import Path

from attn_core import LIMITS

from .errors import N_, ModelError
from .limits import MODEL_LIMITS
from .reader import read_capped, read_json

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
        raise ModelError(N_("tokenizer.json could not be read: {err}"), err=str(err)[:300]) from None


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
