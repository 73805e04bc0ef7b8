"""One intermediate on a page: its title and shape, its formula, a note, and its heatmap.

The words and formulas of a block are one Markdown element (each element costs Streamlit ≈ 0.2 ms a run and the
browser ≈ 1.5 ms to draw, bench/RESULTS.md): a formula is KaTeX display math (``$$`` on lines of their own, as
``st.latex`` writes it), a note small grey text (``:small[:gray[…]]``, the look of ``st.caption``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import streamlit as st

from attn_ui.app.i18n import _
from attn_ui.widgets import charts, controls, heatmap, text


def formula_markdown(latex: str) -> str:
    r"""Markdown of a display formula: one ``$$`` block per part set apart with ``\qquad``, so each part is drawn
    whole and centred on a line of its own where the row has no room for it (a phone's 390 px) rather than cut off.

    >>> print(formula_markdown(r"S = Q K^\top, \qquad s_{ij} = q_i \cdot k_j"))
    $$
    S = Q K^\top,
    $$
    <BLANKLINE>
    $$
    s_{ij} = q_i \cdot k_j
    $$
    """
    parts = [p.strip() for p in latex.split(r"\qquad") if p.strip()]
    return "\n\n".join(f"$$\n{part}\n$$" for part in parts)


def note_markdown(note: str) -> str:
    r"""Markdown of a note (Markdown, no ``$…$`` formula) drawn as ``st.caption`` draws one, small and grey, inside
    other Markdown: its square brackets not yet escaped (:func:`attn_ui.widgets.text.md_escape` escapes a label's)
    are, so none can close the directive.

    >>> print(note_markdown(r"Rows [0, 2] of \[x\] sum to 1."))
    :small[:gray[Rows \[0, 2\] of \[x\] sum to 1.]]
    """
    return ":small[:gray[" + re.sub(r"\\.|[\[\]]", lambda m: m[0] if len(m[0]) == 2 else "\\" + m[0], note) + "]]"


def heading_markdown(title: str, level: int = 2) -> str:
    """Markdown of a heading drawn as ``st.header`` (level 2) or ``st.subheader`` (3) draws one, its anchor made
    from its text alike."""
    return "#" * level + " " + title


def block_markdown(*parts: str) -> str:
    """Markdown paragraphs (title, formula, note, ...) as one text: the empty ones left out."""
    return "\n\n".join(filter(None, parts))


def formula(latex: str, note: str = "", *, intro: str = "") -> None:
    """A display formula (see :func:`formula_markdown`) and a note under it if any, as one Markdown element; ``intro``
    (Markdown: a heading, words) above them in the same element."""
    st.markdown(block_markdown(intro, formula_markdown(latex), note_markdown(note) if note else ""))


def matrix_block(
    title: str,
    latex: str,
    values: np.ndarray,
    rows: list[str],
    cols: list[str],
    *,
    kind: heatmap.Kind = "signed",
    y_title: str = "",
    x_title: str = "",
    note: str = "",
    domain: tuple[float, float] | None = None,
    key: str | None = None,
    select: str | None = None,
    on_select: str | Callable[[], None] = "rerun",
    masked: np.ndarray | None = None,
    most: int | None = None,
    intro: str = "",
) -> object:
    """One intermediate: its title and shape, formula and note as one Markdown element, then its heatmap. Returns the
    chart's selection event if any.

    ``title``, ``note`` and the axis titles are shown as they are: the caller translates them (matrix names stay).

    With ``select``, ``on_select`` is "rerun" or a callback run (before the page) when the selection changes.
    ``masked`` (bool, the shape of ``values``) draws those cells grey as masked. ``most``: see heatmap.heatmap.
    ``intro``: Markdown drawn above the title in the same element (a step's heading and words, :func:`block_markdown`).
    """
    st.markdown(block_markdown(
        intro, _("**{title}** · shape {rows} × {cols}").format(title=title, rows=values.shape[0], cols=values.shape[1]),
        formula_markdown(latex), note_markdown(note) if note else ""))
    chart = heatmap.heatmap(values, rows, cols, kind=kind, precision=controls.precision(), domain=domain,
                            x_title=x_title, y_title=y_title, select=select, masked=masked,
                            name=text.md_unescape(title), most=most)  # the title is Markdown; the name plain
    if select:
        return charts.show_chart(chart, key=key, on_select=on_select, selection_mode=select)
    return charts.show_chart(chart, key=key)
