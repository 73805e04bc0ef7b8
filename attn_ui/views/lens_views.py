"""A model that writes' logit lens: the next token the model would say after each layer (attn_models'
CausalModel.logit_lens: each layer's residual stream through the final norm and the unembedding), as a grid of the
prompt's last positions, a table of the last position's top tokens after each layer, a sentence on where the model's
own next token comes to the top, and the same before and after heads switched off or the explorer's edits run back.

:func:`lens_grid` is the grid's chart factory (a charts.Chart; no st); :func:`lens_section` draws the section on
pages/generate.py.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import streamlit as st

import attn_models
from attn_ui.app import i18n, origins, state
from attn_ui.app.i18n import _, ngettext
from attn_ui.infra import budget
from attn_ui.views import model_views
from attn_ui.views.generate_views import ABLATE, ABLATE_HOW, label, shown
from attn_ui.views.model_output import HOW_TEXT, Change, head_name, intervention, parse_head, percent
from attn_ui.widgets import charts, heatmap, text

COLUMNS = 10  # the prompt's positions the grid shows at most: the last ones (10 cells of 84 px fit the main column)
TOP = 5  # tokens a row of the last position's table shows
CELL_CHARS = 9  # a token written in a cell: at most this many characters (the tooltip has it whole)
CELL_PX, ROW_PX = 84, 26  # a cell's width and height


@budget.cached("causal_lens")  # top tokens only: (layers + 1) × COLUMNS × TOP ids, probabilities, logits, labels
def lens(source: str, prompt: str, change: Change = Change()):  # noqa: B008 - a frozen value
    """The logit lens of the prompt's last :data:`COLUMNS` positions (attn_models.LogitLens), once per (model,
    prompt, change). Raises attn_models.ModelError."""
    model = model_views.model(source)
    n = len(model.encode(prompt).ids)
    return model.logit_lens(prompt, intervention=intervention(change), top=TOP,
                            positions=list(range(max(0, n - COLUMNS), n)) or None)


def row_names(n_layers: int) -> list[str]:
    """The lens's rows as the page names them: the embeddings, then each layer's output ("after layer 0" …)."""
    return [_("embeddings"), *(_("after layer {layer}").format(layer=layer) for layer in range(n_layers))]


def read_after(row: int) -> str:
    """Row ``row`` of the lens in a sentence: "the embeddings", "layer 3"."""
    return _("the embeddings") if row == 0 else _("layer {layer}").format(layer=row - 1)


def cell_text(token: str) -> str:
    """A token as a cell writes it: :func:`label` (spaces shown), cut to :data:`CELL_CHARS` characters.

    >>> cell_text(" cat"), cell_text(" extraordinary")
    ('␣cat', '␣extraor…')
    """
    shown_ = label(token)
    return shown_ if len(shown_) <= CELL_CHARS else shown_[:CELL_CHARS - 1] + "…"


def lens_grid(lens_: attn_models.LogitLens, rows: list[str], columns: list[str], *, title: str) -> charts.Chart:
    """The lens as a grid: one row per layer read (``rows``: the embeddings first, the model's own last), one column
    per position (``columns``), each cell the most probable next token there, coloured by its probability (0 … 1).

    >>> from types import SimpleNamespace
    >>> lz = SimpleNamespace(labels=((("a", "b"),), ((" c", "d"),)), probs=np.array([[[0.5, 0.2]], [[0.9, 0.1]]]),
    ...                      final_ranks=np.array([[2], [1]]))
    >>> c = lens_grid(lz, ["emb", "after 0"], ["0: x"], title="t")
    >>> c.data[0].column("text").to_pylist(), c.data[0].column("value").to_pylist()
    (['a', '␣c'], [0.5, 0.9])
    """
    n_rows, n_cols = len(rows), len(columns)
    tops = [lens_.labels[r][c][0] for r in range(n_rows) for c in range(n_cols)]  # row-major
    probs = lens_.probs[:, :, 0].ravel()  # [n_rows · n_cols]
    data = charts.table({
        "row": np.repeat(np.array(rows, dtype=object), n_cols),
        "col": np.tile(np.array(columns, dtype=object), n_rows),
        "value": probs,
        "masked": np.zeros(len(probs), dtype=bool),  # heatmap.cell_ink reads it: no cell is masked here
        "text": [cell_text(t) for t in tops],
        "token": [label(t) for t in tops],
        "shown": [percent(float(p)) for p in probs],
        "rank": lens_.final_ranks.ravel().astype(np.int64),
    })
    words = (_("read after"), _("next token after"), _("most probable"), _("probability"),
             _("rank of the model's own next token"))
    return charts.Chart(lens_grid_build, (title, tuple(rows), tuple(columns), words), (data,))


def lens_grid_build(layout: tuple, data: list, domains: list) -> alt.LayerChart:
    """The chart of a :func:`lens_grid` layout (its builder: the structure depends on the layout only)."""
    title, rows, columns, words = layout
    x = alt.X("col:O", sort=list(columns), title=words[1], axis=alt.Axis(labelAngle=-35, orient="top"))
    y = alt.Y("row:O", sort=list(rows), title=None)
    base = alt.Chart(data[0]).encode(x=x, y=y).properties(width=alt.Step(CELL_PX), height=alt.Step(ROW_PX))
    tooltip = [alt.Tooltip("row:O", title=words[0]), alt.Tooltip("col:O", title=words[1]),
               alt.Tooltip("token:N", title=words[2]), alt.Tooltip("shown:N", title=words[3]),
               alt.Tooltip("rank:Q", title=words[4])]
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("value:Q", scale=alt.Scale(scheme=heatmap.SCHEMES["weights"], domain=[0, 1]),
                        title=words[3], legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=160,
                                                          titleOrient="left")),
        tooltip=tooltip)
    ink = base.mark_text(fontSize=12).encode(text="text:N", color=heatmap.cell_ink(), tooltip=tooltip)
    return alt.layer(rect, ink, title=title, description=title)


def first_top_words(lens_: attn_models.LogitLens) -> str:
    """Where the model's own next token after the last position comes to the top, on the lens's numbers."""
    first, last_row = lens_.first_top(-1), lens_.n_layers
    token, p = shown(lens_.labels[-1][-1][0]), percent(float(lens_.probs[-1, -1, 0]))
    after = shown(lens_.tokens[int(lens_.positions[-1])])
    if first == 0:
        return _("The model's next token after “{last}”, “{token}” ({p}), is already the most probable in the "
                 "embeddings, and stays the most probable after every layer.").format(last=after, token=token, p=p)
    if first == last_row:
        return _("The model's next token after “{last}”, “{token}” ({p}), is the most probable only after the last "
                 "layer; after {before} it ranked {rank} ({p_before}).").format(
            last=after, token=token, p=p, before=read_after(first - 1), rank=int(lens_.final_ranks[first - 1, -1]),
            p_before=percent(float(lens_.final_probs[first - 1, -1])))
    return _("The model's next token after “{last}”, “{token}”, is the most probable after {row} and after every "
             "layer that follows ({p_there} there, {p} after the last layer).").format(
        last=after, token=token, row=read_after(first), p_there=percent(float(lens_.final_probs[first, -1])), p=p)


def token_p(token: str, p: float) -> str:
    """A token and its probability in a table's cell, kept on one line (no-break spaces): “␣cat 31.2 %”.

    >>> token_p(" cat", 0.31234) == "␣cat\u00a031.2\u00a0%"
    True
    """
    return f"{shown(token)}\u00a0{percent(p)}".replace(" ", "\u00a0")


def top_table(lens_: attn_models.LogitLens, rows: list[str]) -> str:
    """The last position's top tokens after each layer, with their probabilities (a Markdown table)."""
    header = [_("read after"), _("most probable next tokens"), _("the model's own next token: rank, probability")]
    body = []
    for r, name in enumerate(rows):
        tops = " · ".join(token_p(t, float(p)) for t, p in zip(lens_.labels[r][-1], lens_.probs[r, -1], strict=True))
        own = _("#{rank}, {p}").format(rank=int(lens_.final_ranks[r, -1]),
                                       p=percent(float(lens_.final_probs[r, -1])).replace(" ", "\u00a0"))
        body.append([name, tops, own])
    return text.md_table(header, body)


def compared_table(before: attn_models.LogitLens, after: attn_models.LogitLens, rows: list[str],
                   changed: str) -> str:
    """The last position's most probable token after each layer, as trained and changed (a Markdown table)."""
    header = [_("read after"), _("as trained"), changed]
    body = [[name, token_p(before.labels[r][-1][0], float(before.probs[r, -1, 0])),
             token_p(after.labels[r][-1][0], float(after.probs[r, -1, 0]))] for r, name in enumerate(rows)]
    return text.md_table(header, body)


def change_words(off: str, before: attn_models.LogitLens, after: attn_models.LogitLens) -> str:
    """At how many of the lens's rows the last position's most probable token changed, on the numbers shown."""
    rows = len(before.ids)
    differ = int(np.count_nonzero(before.ids[:, -1, 0] != after.ids[:, -1, 0]))
    if not differ:
        return _("{off}, the most probable next token at the last position is the same after every layer, the "
                 "embeddings included.").format(off=off)
    return _("{off}, the most probable next token at the last position differs at {k} of the {rows} readings (the "
             "embeddings and each layer).").format(off=off, k=differ, rows=rows)


def changes(source: str, n_layers: int, n_heads: int) -> list[tuple[str, str, Change]]:
    """What the page changes in the model now: the heads switched off above (its widgets' values) and the
    explorer's edits of a layer of this model; each as (a sentence's opening, a column's name, the Change)."""
    out = []
    names = {head_name(la, h) for la in range(n_layers) for h in range(n_heads)}
    off = sorted(parse_head(h) for h in st.session_state.get(ABLATE) or () if h in names)
    if off:
        how = st.session_state.get(ABLATE_HOW) or "mean"
        out.append((ngettext("With {n} head off", "With {n} heads off", len(off)).format(n=len(off)), _("heads off"),
                    Change(tuple(off), how if how in HOW_TEXT else "mean")))
    cfg = state.config()
    origin = origins.origin_of(cfg)
    if origin is not None and origin.role == "causal" and origin.model == source:
        try:
            if model_views.edited(cfg):
                out.append((_("With your edits"), _("with your edits"), Change(edited=cfg)))
        except attn_models.ModelError:  # the page's explorer section says why
            pass
    return out


def lens_section(source: str, prompt: str, model) -> None:
    """The logit lens on A model that writes: the grid, the sentence, the last position's table, and before/after
    for each change the page holds (:func:`changes`)."""
    st.header(_("The logit lens"), anchor="logit-lens")
    try:
        trained = lens(source, prompt)
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        return
    n_seq = len(trained.tokens)
    st.caption(i18n.sentences(
        _("What would the model say next if it stopped after a layer? Each row reads the residual stream after that "
          "layer through the model's final norm and unembedding, as the last layer's output is read; the last row "
          "is the model's own next token. Each cell: the most probable next token there, darker = more probable."),
        _("The grid shows the prompt's last {shown} of its {n} positions.").format(
            shown=len(trained.positions), n=n_seq) if len(trained.positions) < n_seq else "",
        _("On a phone, slide the grid sideways.")))
    rows = row_names(trained.n_layers)
    columns = [text.numbered(tuple(label(t) for t in trained.tokens))[p] for p in trained.positions]  # spaces shown (␣)
    with st.container(horizontal=True, wrap=False):
        charts.show_chart(lens_grid(trained, rows, columns, title=_("The most probable next token after each layer")))
    st.markdown(first_top_words(trained))
    st.markdown(_("**At the last position** (after “{last}”), the {k} most probable next tokens after each "
                  "layer:").format(last=shown(trained.tokens[-1]), k=TOP))
    st.markdown(top_table(trained, rows))
    for off, column, change in changes(source, model.n_layers, model.n_heads):
        try:
            after = lens(source, prompt, change)
        except attn_models.ModelError as err:
            st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
            continue
        st.subheader(_("Before and after: {change}").format(change=column))
        st.markdown(i18n.sentences(change_words(off, trained, after), first_top_words(after)))
        st.markdown(compared_table(trained, after, rows, column))
