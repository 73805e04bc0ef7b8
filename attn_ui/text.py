"""The words pages put around the numbers: token and dimension labels, the scale in words, Markdown tables.

Pure functions (no st). Text that can come from a learner, a link or a file (token labels, file names, what was
typed into a grid, and every message that quotes them) goes into Markdown only through :func:`md_escape`: it is
shown as the characters it is, never as a link, an image, HTML, a formula or an icon.
"""

from __future__ import annotations

import string

import numpy as np

from attn_core import Config

from .numbers import format_number


def token_labels(cfg: Config) -> list[str]:
    """Unique labels for the tokens, "0: input1", ... (a word may occur twice)."""
    return [f"{i}: {t}" for i, t in enumerate(cfg.tokens)]


def dim_labels(n: int) -> list[str]:
    return [str(j) for j in range(n)]


def scale_text(cfg: Config) -> str:
    """What the scores are divided by, in words: "÷ √d_k = √3 = 1.732", "none (÷ 1)", "÷ 2.5"."""
    if cfg.scale == "sqrt_dk":
        return f"÷ √d_k = √{cfg.d_k} = {np.sqrt(cfg.d_k):.4g}"
    if cfg.scale == "none":
        return "none (÷ 1)"
    return f"÷ {float(cfg.scale):.4g}"


_PUNCTUATION = frozenset(string.punctuation)  # CommonMark: every ASCII punctuation character can be escaped


def md_escape(text: str) -> str:
    r"""Text shown in Markdown (st.markdown, st.caption, st.info, …, a table cell) as the characters it is.

    Every ASCII punctuation character is backslash-escaped, so nothing in it is read as Markdown (a link, an
    image, emphasis, a table cell's end), HTML, a ``$…$`` formula, a ``:material/…:`` icon or a colour
    directive; a line break or tab becomes a space (it would end a table row or a list item).

    Examples
    --------
    >>> print(md_escape("a|b*c"))
    a\|b\*c
    >>> print(md_escape("[![i](http://x.test/i)](http://x.test)"))
    \[\!\[i\]\(http\:\/\/x\.test\/i\)\]\(http\:\/\/x\.test\)
    """
    return "".join("\\" + ch if ch in _PUNCTUATION else " " if ch.isspace() else ch for ch in text)


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (cells are used as given)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def divisor_latex(cfg: Config, divisor: float, precision: int) -> str:
    """How the scores were divided: √d_k with its value, 1 (no scaling), or the chosen number."""
    value = format_number(divisor, precision, "short")
    if cfg.scale == "sqrt_dk":
        return rf"\sqrt{{d_k}} = \sqrt{{{cfg.d_k}}} = {value}"
    if cfg.scale == "none":
        return r"1 \text{ (no scaling)}"
    return rf"{value} \text{{ (a divisor you chose)}}"
