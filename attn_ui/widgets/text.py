"""The words pages put around the numbers: token and dimension labels, the scale in words, Markdown tables.

Pure functions (no st). Text that can come from a learner, a link or a file (token labels, file names, what was
typed into a grid, and every message that quotes them) goes into Markdown only through :func:`md_escape`: it is
shown as the characters it is, never as a link, an image, HTML, a formula or an icon. A token label becomes display
text (a sentence, a chart's axis, a table's header) only through :func:`isolate`, which :func:`token_labels`,
:func:`query_labels` and :func:`md_escape` apply: whatever direction controls or right-to-left letters it holds,
they never reorder the text that follows it. The configuration, links and files keep the label as typed.

The words are in the learner's language (attn_ui.app.i18n).
"""

from __future__ import annotations

import re
import string
import unicodedata

import numpy as np
import pyarrow as pa

from attn_core import Config
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.widgets.numbers import format_number


def token_labels(cfg: Config) -> list[str]:
    """Unique labels for the tokens of X (the keys and values), "0: input1", ... (a word may occur twice)."""
    return numbered(cfg.tokens)


def query_labels(cfg: Config) -> list[str]:
    """Unique labels for the queries: X's tokens, or Y's with cross-attention ("0: the", ...)."""
    return numbered(cfg.query_tokens)


def numbered(tokens: tuple[str, ...]) -> list[str]:
    """Each token as the pages name it: its position and its label, isolated (:func:`isolate`).

    >>> numbered(("the", "cat"))
    ['0: the', '1: cat']
    """
    return [f"{i}: {isolate(t)}" for i, t in enumerate(tokens)]


FSI, PDI = "\u2068", "\u2069"  # FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE (Unicode's bidi algorithm, UAX #9)
_OPEN_ISOLATES = frozenset("\u2066\u2067\u2068")  # LRI, RLI, FSI: each is closed by a PDI
#: bidi classes that can move text about: right-to-left letters and Arabic digits, the explicit embeddings and
#: overrides (LRE, RLE, LRO, RLO) with their end (PDF), the isolates with theirs (PDI); RLM and ALM are R and AL
_MOVES_TEXT = frozenset({"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})


class Typed(str):
    """What a learner typed, as a message's ``{v!r}`` quotes it: its repr isolated (:func:`isolate`), so that a
    right-to-left value moves no character of the sentence around it (the whole message isolated, its quotes and the
    comma after them were laid out with the Arabic: "column 0 is 'مرحبا',not a number.").

    >>> "is {v!r}, not".format(v=Typed("ab")), "is {v!r}, not".format(v=Typed("שלום")) == f"is {FSI}'שלום'{PDI}, not"
    ("is 'ab', not", True)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return isolate(super().__repr__())


def isolate(label: str) -> str:
    r"""``label`` as it is put into text a learner reads, so that it never reorders the text around it.

    A label that holds a right-to-left letter, an Arabic digit or a direction control is wrapped in FSI … PDI: it
    is laid out on its own, in the direction of its first letter (Arabic and Hebrew right to left), and the text
    around it sees one neutral character. A PDI inside it that closes nothing is dropped (it would close the
    wrap), and an isolate it leaves open is closed at its end; an embedding or override it leaves open (U+202A,
    U+202B, U+202D, U+202E) ends at the wrap's PDI, and a stray PDF (U+202C) cannot reach past the wrap (UAX #9,
    rules X6a and X7). Any other label is returned as it is: in the app's left-to-right sentences it moves nothing.

    >>> isolate("abc")
    'abc'
    >>> [hex(ord(c)) for c in isolate("\u202edef")]
    ['0x2068', '0x202e', '0x64', '0x65', '0x66', '0x2069']
    >>> isolate("a\u2069b\u2067c") == FSI + "ab\u2067c" + PDI + PDI
    True
    """
    if not any(unicodedata.bidirectional(ch) in _MOVES_TEXT for ch in label):
        return label
    out, open_isolates = [], 0
    for ch in label:
        if ch == PDI:
            if not open_isolates:
                continue
            open_isolates -= 1
        elif ch in _OPEN_ISOLATES:
            open_isolates += 1
        out.append(ch)
    return FSI + "".join(out) + PDI * open_isolates + PDI


def dim_labels(n: int) -> list[str]:
    return [str(j) for j in range(n)]


def scale_text(cfg: Config) -> str:
    """What the scores are divided by, in words: "÷ √d_k = √3 = 1.732", "none (÷ 1)", "÷ 2.5"."""
    if cfg.scale == "sqrt_dk":
        return f"÷ √d_k = √{cfg.d_k} = {np.sqrt(cfg.d_k):.4g}"
    if cfg.scale == "none":
        return _("none (÷ 1)")
    return f"÷ {float(cfg.scale):.4g}"


def modern_options(cfg: Config) -> list[str]:
    """The options of Modern attention the heads run with, in short words ([] when none is on): "sharing 1
    key/value head", "QK-norm", "RoPE (half, base 10000)", "soft cap 9.2", "ALiBi" (a window is the mask's: the
    pages say it beside the mask)."""
    return [part for part in (
        ngettext("sharing {n} key/value head", "sharing {n} key/value heads", cfg.kv_heads).format(n=cfg.kv_heads)
        if cfg.n_kv_heads else "",
        "QK-norm" if cfg.qk_norm else "", f"RoPE ({cfg.rope.layout}, base {cfg.rope.base:g})" if cfg.rope else "",
        _("soft cap {c}").format(c=f"{cfg.softcap:g}") if cfg.softcap is not None else "",
        "ALiBi" if cfg.alibi else "") if part]


_PUNCTUATION = frozenset(string.punctuation)  # CommonMark: every ASCII punctuation character can be escaped
#: text Streamlit's Markdown would turn into a link even with every character escaped (GFM's autolink literals are
#: found in the text after its escapes are read): web addresses and e-mail addresses
_AUTOLINK = re.compile(r"(?i)(?:https?://|www\.)\S*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


#: each score function as the pages write it (attn_core.SCORE_WORDS names them)
SCORE_TEXT = {"dot": "QKᵀ", "general": "(Q W_a) Kᵀ", "additive": "v_a · tanh(Q W_1 + K W_2)"}
SCORE_LATEX = {"dot": r"QK^\top", "general": r"(Q W_a) K^\top", "additive": r"v_a \cdot \tanh(Q W_1 + K W_2)"}
#: the score functions' names, in English (marked for the catalogs): show them with :func:`score_name`
SCORE_NAMES = {"dot": N_("dot product"), "general": N_("general (Luong)"), "additive": N_("additive (Bahdanau)")}


def score_name(score_fn: str) -> str:
    """A score function's name in the learner's language: "dot product", "general (Luong)", "additive (Bahdanau)"."""
    return _(SCORE_NAMES[score_fn])


def md_escape(text: str) -> str:
    r"""Text shown in Markdown (st.markdown, st.caption, st.info, …, a table cell) as the characters it is.

    Every ASCII punctuation character is backslash-escaped, so nothing in it is read as Markdown (a link, an
    image, emphasis, a table cell's end), HTML, a ``$…$`` formula, a ``:material/…:`` icon or a colour
    directive; a line break or tab becomes a space (it would end a table row or a list item). A web or e-mail
    address goes in a code span: the same characters, in a monospace font, never a link. Text with right-to-left
    letters or direction controls is isolated (:func:`isolate`): a token label given here (Overview's list of
    tokens, a lesson's sentence) never reorders the words after it.

    Examples
    --------
    >>> print(md_escape("a|b*c"))
    a\|b\*c
    >>> print(md_escape("[![i](x.test/i)](x.test)"))
    \[\!\[i\]\(x\.test\/i\)\]\(x\.test\)
    >>> print(md_escape("see http://x.test/`a` or me@x.test"))
    see `` http://x.test/`a` `` or `me@x.test`
    """
    out, start = [], 0
    for m in _AUTOLINK.finditer(text):
        out += [_escape_chars(text[start:m.start()]), _code_span(m.group())]
        start = m.end()
    return isolate("".join([*out, _escape_chars(text[start:])]))


def md_unescape(text: str) -> str:
    r"""Markdown text as plain text again, for where it is not read as Markdown (a chart's text alternative, a file's
    name): the backslashes :func:`md_escape` puts before punctuation taken out.

    >>> md_unescape(md_escape("0: a*b")), md_unescape(r"a \\ b")
    ('0: a*b', 'a \\ b')
    """
    return _ESCAPED.sub(r"\1", text)


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before an ASCII punctuation character (CommonMark)


def _escape_chars(text: str) -> str:
    return "".join("\\" + ch if ch in _PUNCTUATION else " " if ch.isspace() else ch for ch in text)


def bold_tail(head: str, tail: str) -> str:
    r"""Markdown: ``head``, then ``tail`` in bold, each shown as the characters it is (:func:`md_escape`).

    CommonMark opens ``**`` only before a character that is not a space and, right after a letter, not before
    punctuation (GPT-2's tokens start with their space: " sat", ", and"): the tail's spaces stand outside the markers,
    and a zero-width space before a tail that starts with punctuation. A blank tail gets no markers.

    >>> bold_tail("The cat", " sat down "), bold_tail("The cat", ", and"), bold_tail("a", "")
    ('The cat **sat down** ', 'The cat**\u200b\\, and**', 'a')
    """
    body = tail.strip()
    if not body:
        return md_escape(head + tail)
    lead, trail = tail[:len(tail) - len(tail.lstrip())], tail[len(tail.rstrip()):]
    start = "\u200b" if unicodedata.category(body[0])[0] in "PS" else ""
    return md_escape(head + lead) + "**" + start + md_escape(body) + "**" + md_escape(trail)


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span: fenced by more backticks than any run inside, spaced when it starts or ends
    with one (CommonMark strips one space on each side)."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (cells are used as given)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(columns: dict[str, list[str]]) -> pa.Table:
    """A table of texts for ``st.dataframe(..., hide_index=True)``, column by column, as an Arrow table: Streamlit
    sends it as it is, where a pandas DataFrame of the same texts cost ≈ 2 ms more a table (making it, then
    converting it: bench/RESULTS.md, issue 37).

    >>> text_table({"a": ["x", "y"], "b": ["1", "2"]}).to_pydict()
    {'a': ['x', 'y'], 'b': ['1', '2']}
    """
    return pa.Table.from_pydict({name: pa.array(values, pa.string()) for name, values in columns.items()})


def rows_table(header: list[str], rows: list[list[str]] | list[tuple[str, ...]]) -> pa.Table:
    """:func:`text_table` of rows of texts under ``header``.

    >>> rows_table(["a", "b"], [["x", "1"], ["y", "2"]]).to_pydict()
    {'a': ['x', 'y'], 'b': ['1', '2']}
    """
    return text_table({name: [row[j] for row in rows] for j, name in enumerate(header)})


def divisor_latex(cfg: Config, divisor: float, precision: int) -> str:
    """How the scores were divided: √d_k with its value, 1 (no scaling), or the chosen number."""
    value = format_number(divisor, precision, "short")
    if cfg.scale == "sqrt_dk":
        return rf"\sqrt{{d_k}} = \sqrt{{{cfg.d_k}}} = {value}"
    if cfg.scale == "none":
        words = _("no scaling")
        return rf"1 \text{{ ({words})}}"
    words = _("a divisor you chose")
    return rf"{value} \text{{ ({words})}}"
