"""A sentence into tokens, deterministic embeddings, sinusoidal positional encoding."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han: written without spaces
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
#: the Unicode categories of characters that show nothing: controls (NUL), formats (zero-width space, the
#: right-to-left override), surrogates, unassigned code points, and every kind of space and line or paragraph break
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Cn", "Zs", "Zl", "Zp"))
#: letters and symbols drawn as nothing: the Hangul fillers and the blank Braille pattern
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def visible(token: str) -> bool:
    r"""Whether ``token`` has a character that shows: not only controls, formats, spaces, blanks and variation
    selectors.

    >>> visible("abc"), visible("\u202e"), visible("\u200b\x00"), visible("\u3164"), visible("שלום")
    (True, False, False, False, True)
    """
    return any(unicodedata.category(c) not in _INVISIBLE and c not in _BLANK and not _selector(c) for c in token)


def _selector(c: str) -> bool:
    return "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"


def tokenize(sentence: str) -> list[str]:
    r"""Split into words and punctuation marks; Chinese (and Japanese) text, written without spaces, one
    character a token. Korean words are separated by spaces, as English words are. A token with no visible
    character (a zero-width space, a direction mark, a control character such as NUL) is no word: it is left out.

    Examples
    --------
    >>> tokenize("Slow but steady, wins!")
    ['Slow', 'but', 'steady', ',', 'wins', '!']
    >>> tokenize("猫坐在垫子上。"), tokenize("고양이가 매트에 앉았다.")
    (['猫', '坐', '在', '垫', '子', '上', '。'], ['고양이가', '매트에', '앉았다', '.'])
    >>> tokenize("\u202e \u200b \x00 abc"), tokenize("\u200b\x00")
    (['abc'], [])
    """
    return [t for t in _TOKEN.findall(sentence) if visible(t)]


def embed(tokens: list[str], d_model: int, seed: int = 0) -> np.ndarray:  # n_seq tokens -> [n_seq, d_model]
    """One N(0, 1) vector per token; the same word (case-insensitive) always gets the same vector
    for a given seed and width, wherever it stands in the sentence.

    Examples
    --------
    >>> e = embed(["the", "cat", "The"], 4)
    >>> e.shape, bool((e[0] == e[2]).all()), bool((e[0] == e[1]).all())
    ((3, 4), True, False)
    """
    rows = []
    for tok in tokens:
        digest = hashlib.sha256(f"{seed}\x00{d_model}\x00{tok.lower()}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        rows.append(rng.standard_normal(d_model))
    return np.array(rows, dtype=np.float64).reshape(len(tokens), d_model)


def positional_encoding(n_seq: int, d_model: int) -> np.ndarray:  # -> [n_seq, d_model]
    """Sinusoidal positions (Vaswani et al. 2017): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...).

    Examples
    --------
    >>> positional_encoding(2, 2).round(4).tolist()
    [[0.0, 1.0], [0.8415, 0.5403]]
    """
    return positional_encoding_at(np.arange(n_seq), d_model)


def positional_encoding_at(positions: object, d_model: int) -> np.ndarray:  # [n] -> [n, d_model]
    """The rows of :func:`positional_encoding` at these positions only (a row far down costs no more than the first:
    RoPE's shift check asks for position 100,255 and needs four rows, not 100,256).

    >>> positional_encoding_at([1, 0], 2).round(4).tolist()
    [[0.8415, 0.5403], [0.0, 1.0]]
    """
    pos = np.asarray(positions, dtype=np.float64)[:, None]  # [n, 1]
    i = np.arange(d_model)[None, :]  # [1, d_model]
    angle = pos / np.power(10000.0, (2 * (i // 2)) / d_model)  # [n, d_model]
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))
