"""The drill-down into one query: its scores, its softmax and its weighted values written out number by number.

Used by Step by step and Multi-head. The text builders are pure (no st) and write the arithmetic out with the
numbers of an ``AttentionTrace``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import partial

import numpy as np
import streamlit as st

from attn_core import AttentionTrace, Config, ModernTrace, MultiHeadTrace
from attn_ui.app import i18n
from attn_ui.app.i18n import N_, _
from attn_ui.widgets import controls, text
from attn_ui.widgets.matrix_display import (
    block_markdown,
    formula_markdown,
    heading_markdown,
    matrix_block,
    note_markdown,
)
from attn_ui.widgets.numbers import MINUS, format_number, format_numbers

MAX_TERMS = 6  # products written out in q_i·k_j before "…"
MAX_ITEMS = 6  # entries of a vector written out before "…"
SCROLL_ROWS = 12  # drill-down tables with more keys than this scroll in a box
KEYS_PER_PAGE = 16  # drill-down tables with more keys than this show them a page at a time (3 tables of 16 rows:
# each row costs the browser on every run, ≈ 100 ms of main-thread time for 3 × 32 at the caps: bench/RESULTS.md)

fmt = partial(format_number, style="short")  # 2, 0.5, 1.8639, −∞: numbers inside sentences and sums


def _factors(v: np.ndarray, precision: int) -> list[str]:  # [d] -> d strings
    """Factors of products, each in brackets when negative: "(−1)"."""
    return [f"({t})" if t.startswith(MINUS) else t for t in format_numbers(np.asarray(v, dtype=float), precision,
                                                                           "short")]


def dot_product_text(a: np.ndarray, b: np.ndarray, total: float, precision: int, max_terms: int = MAX_TERMS) -> str:
    """``a·b`` as a sum of products with its total: "1·0 + 0·1 + 2·1 = 2".  # [d], [d]

    ``total`` is the dot product as attn_core computed it. Beyond ``max_terms`` products the rest are
    summarised as "… (n more)".

    Examples
    --------
    >>> dot_product_text(np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0]), 2.0, 4)
    '1·0 + 0·1 + 2·1 = 2'
    >>> dot_product_text(np.array([1.0, -1.0, 1.0]), np.array([2.0, 3.0, 4.0]), 3.0, 4, max_terms=2)
    '1·2 + (−1)·3 + … (1 more) = 3'
    """
    return dot_product_texts(np.asarray(a)[None, :], np.asarray(b)[None, :], np.array([total]), precision,
                             max_terms)[0]


def dot_product_texts(a: np.ndarray, b: np.ndarray, totals: np.ndarray, precision: int,
                      max_terms: int = MAX_TERMS) -> list[str]:  # [n, d], [n, d], [n] -> n strings
    """:func:`dot_product_text` of each row of ``a`` with the same row of ``b`` (a row may be one vector for every
    row: ``np.broadcast_to``), every number written at once (a table of keys at a time: one call, not one per key).

    >>> dot_product_texts(np.broadcast_to([1.0, -1.0], (2, 2)), np.array([[2.0, 3.0], [0.5, 0.0]]),
    ...                   np.array([-1.0, 0.5]), 4)
    ['1·2 + (−1)·3 = −1', '1·0.5 + (−1)·0 = 0.5']
    """
    n, d = a.shape
    w = min(d, max_terms)
    xs, ys = (_factors(m[:, :max_terms].ravel(), precision) for m in (a, b))  # each matrix's numbers at once
    more = [_("… ({n} more)").format(n=d - max_terms)] if d > max_terms else []
    return [" + ".join([*(f"{x}·{y}" for x, y in zip(xs[r * w:(r + 1) * w], ys[r * w:(r + 1) * w], strict=True)),
                        *more]) + f" = {total}"
            for r, total in enumerate(format_numbers(np.asarray(totals, dtype=float), precision, "short"))]


def vector_text(v: np.ndarray, precision: int, max_items: int = MAX_ITEMS) -> str:
    """A row vector as "[1.8639, 6.3194, 1.7042]", cut after ``max_items`` entries.  # [d]

    Examples
    --------
    >>> vector_text(np.array([2.0, 7.0, 1.5]), 4)
    '[2, 7, 1.5]'
    >>> vector_text(np.arange(8.0), 2, max_items=3)
    '[0, 1, 2, … (5 more)]'
    """
    return vector_texts(np.asarray(v)[None, :], precision, max_items)[0]


def vector_texts(m: np.ndarray, precision: int, max_items: int = MAX_ITEMS) -> list[str]:  # [n, d] -> n strings
    """:func:`vector_text` of each row of ``m``, every number written at once.

    >>> vector_texts(np.array([[2.0, -7.0], [0.25, 1e-9]]), 4)
    ['[2, −7]', '[0.25, 1e-09]']
    """
    n, d = m.shape
    w = min(d, max_items)
    items = format_numbers(np.asarray(m[:, :max_items], dtype=float).ravel(), precision, "short")
    more = [_("… ({n} more)").format(n=d - max_items)] if d > max_items else []
    return ["[" + ", ".join([*items[r * w:(r + 1) * w], *more]) + "]" for r in range(n)]


def softmax_parts(row: np.ndarray) -> tuple[float | None, np.ndarray, np.ndarray, float]:  # [n_k] -> ..., [n_k] x2
    """The pieces of a stable softmax of one row: max, row − max, exp(row − max) and their sum.

    A row with every entry −∞ (every key masked) has no max: (None, all −∞, all 0, 0.0).

    Examples
    --------
    >>> m, shifted, e, total = softmax_parts(np.array([2.0, 4.0, -np.inf]))
    >>> m, shifted.tolist(), np.round(e, 4).tolist(), round(total, 4)
    (4.0, [-2.0, 0.0, -inf], [0.1353, 1.0, 0.0], 1.1353)
    """
    if np.isneginf(row).all():
        return None, np.full(row.shape, -np.inf), np.zeros(row.shape), 0.0
    m = float(row.max())
    shifted = row - m  # [n_k], -inf where masked
    e = np.exp(shifted)  # [n_k], 0 where masked
    return m, shifted, e, float(e.sum())


#: a Σ whose parts, as shown, add up to within this share of it gets no note: 0.1361 + 0.4319 + 0.4319 = 0.9999 under
#: a Σ of 1 is read as the rounding it is; 1 + 0 + 0 under a Σ of 2 is not
NOTED_SHARE = Decimal("0.01")


def shown_sum(parts: list[str], total: str) -> str | None:
    """What the ``parts`` add up to as they are shown (their digits added exactly, written with as many decimals as
    the most precise of them), when that is more than :data:`NOTED_SHARE` away from the Σ shown, ``total`` (or from
    one unit of its last digit, for a Σ of 0): the Σ adds the values before rounding, so at few decimals the parts
    shown ("0", "0", "1"; "0.3", "1", "1") need not add up to it ("2"). None when they do, or when a part or the Σ is
    not written in decimals ("−∞", "1e−5", "<0.0001").

    >>> shown_sum(["1", "0", "0"], "2"), shown_sum(["0.3", "1", "1"], "2"), shown_sum(["0.5", "0.25", "0.25"], "1")
    ('1', '2.3', None)
    >>> shown_sum(["0.3333", "0.3333", "0.3333"], "1"), shown_sum(["−∞", "1"], "1"), shown_sum(["1e−5", "1"], "1")
    (None, None, None)
    >>> shown_sum(["0.4", "0", "1"], "2"), shown_sum(["0.3", "0"], "0")
    ('1.4', '0.3')
    """
    if any("e" in t.lower() for t in (*parts, total)):
        return None
    try:
        *values, said = (Decimal(t.strip().replace(MINUS, "-")) for t in (*parts, total))
    except InvalidOperation:
        return None
    if not all(v.is_finite() for v in (*values, said)):
        return None
    unit = Decimal(1).scaleb(said.as_tuple().exponent)  # one unit of the Σ's last digit
    if abs(sum(values) - said) <= NOTED_SHARE * max(abs(said), unit):
        return None
    decimals = max((-v.as_tuple().exponent for v in values), default=0)
    return f"{sum(values):.{max(decimals, 0)}f}".replace("-", MINUS)


#: the columns whose parts the drill-down's Σ rows add, as a note names them
SUMMED = {"exp": N_("the exponentials"), "weights": N_("the weights"), "weighted": N_("the weighted values")}


def rounded_note(column: str, parts: str, total: str) -> str:
    """The note under a table whose ``column``'s parts, as shown, add up to ``parts``, not to its Σ shown, ``total``."""
    return _("As shown, {column} add up to {parts}, not to their Σ, {total}, which adds them before rounding.").format(
        column=_(SUMMED[column]), parts=parts, total=total)


def _table(parts: list[str], header: list[str], rows: list[list[str]]) -> None:
    """A markdown table after the Markdown ``parts`` waiting to be drawn: added to them, or, long, drawn in a box of its
    own that scrolls (after them: :func:`_flush`)."""
    table = text.md_table(header, rows)
    if len(rows) > SCROLL_ROWS:
        _flush(parts)
        st.container(height=460).markdown(table)
    else:
        parts.append(table)


def _flush(parts: list[str]) -> None:
    """Draw the Markdown ``parts`` waiting (headings, formulas, tables) as one element, and empty the list: the
    drill-down's words, formulas and short tables are drawn as few elements as they can be (each costs Streamlit
    ≈ 0.2 ms a run, bench/RESULTS.md)."""
    if parts:
        st.markdown(block_markdown(*parts))
        parts.clear()


def drill_down_section(t: AttentionTrace, cfg: Config, *, prefix: str, mt: MultiHeadTrace | None = None) -> int:
    """Heading, query picker (and, for many keys, a page of keys) and the drill-down; returns the query index.

    The picker offers the n_q queries (Y's tokens with cross-attention); the keys are X's tokens. ``mt``: the whole
    trace (its modern options are said where they change the numbers).
    """
    st.header(_("Drill-down: one query, number by number"), anchor="drill-down")
    i = controls.query_selector(text.query_labels(cfg), prefix)
    show_drill_down(t, cfg, i, keys_page(t.k.shape[0], text.token_labels(cfg), prefix), mt=mt)
    return i


KEYS_OPTION = N_("keys {first}–{last}: {first_label} … {last_label}")  # a page of keys in the selectbox


def keys_page(n_k: int, labels: list[str], prefix: str) -> range:
    """All keys when they are few; else a selectbox of pages of KEYS_PER_PAGE keys (the tables stay light)."""
    pages = controls.pages_of(n_k, KEYS_PER_PAGE)
    if len(pages) == 1:
        return pages[0]
    tr = i18n.translator()  # the options' labels: format_func runs outside the run too
    k = st.selectbox(_("Keys shown ({n} in all, {per} at a time)").format(n=n_k, per=KEYS_PER_PAGE), range(len(pages)),
                     format_func=lambda p: tr(KEYS_OPTION).format(
                         first=pages[p].start, last=pages[p].stop - 1, first_label=labels[pages[p].start],
                         last_label=labels[pages[p].stop - 1]),
                     key=f"{prefix}_keys_page", width=420)
    return pages[k]


def _masked_notes(scaled: np.ndarray, masked: np.ndarray, p: int) -> list[str]:  # [n], bool [n] -> n strings
    """Each scaled score, and "→ −∞ (masked)" after a masked one's."""
    marked = _("{number} → −∞ (masked)")
    return [marked.format(number=number) if m else number
            for number, m in zip(format_numbers(np.asarray(scaled, dtype=float), p, "short"), masked.tolist(),
                                 strict=True)]


def _score_rows(t: AttentionTrace, i: int, keys: range, labels: dict[int, str], masked: np.ndarray,
                p: int) -> tuple[list[str], list[list[str]]]:
    """Section a's table for the trace's score function: each score of query ``i`` as a sum of products; with a soft
    cap or a score bias, the scaled score as it is and what the cap and the bias make of it (what the softmax takes)."""
    header, rows = _products(t, i, keys, labels, masked if t.softcap is None and t.bias is None else np.zeros_like(
        masked), p)
    if t.softcap is None and t.bias is None:
        return header, rows
    after = (r"$c \tanh(\tilde s / c) + b$" if t.softcap is not None and t.bias is not None else
             r"$c \tanh(\tilde s / c)$" if t.bias is None else r"$\tilde s + b$")
    page = slice(keys.start, keys.stop)
    return [*header, after], [[*row, note] for row, note in zip(rows, _masked_notes(t.biased[i, page], masked[page], p),
                                                                strict=True)]


def _products(t: AttentionTrace, i: int, keys: range, labels: dict[int, str], masked: np.ndarray,
              p: int) -> tuple[list[str], list[list[str]]]:
    """Each score of query ``i`` as a sum of products, and its scaled value (masked ones said): each column's texts
    written at once for the keys shown."""
    scaled, key = _(r"scaled $\tilde s$"), _(r"key $j$")
    products = _("{formula} (sum of products)")  # the formula: $…$
    page = slice(keys.start, keys.stop)  # the keys shown: a range of step 1
    n, scores = len(keys), t.scores[i, page]  # [n]
    if t.score_fn == "general":  # (q_i W_a) · k_j
        header = [key, r"$k_j$", products.format(formula=rf"$(q_{{{i}}} W_a) \cdot k_j$"), scaled]
        columns = [vector_texts(t.k[page], p), dot_product_texts(np.broadcast_to(t.q_a[i], (n, t.q_a.shape[1])),
                                                                  t.k[page], scores, p)]
    elif t.score_fn == "additive":  # f_ij · v_a with f_ij = tanh(q_i W_1 + k_j W_2)
        f = t.features(i)[page]  # [n, d_a]
        header = [key, r"$k_j W_2$", rf"$f_{{{i}j}}$", products.format(formula=rf"$f_{{{i}j}} \cdot v_a$"), scaled]
        columns = [vector_texts(t.k_2[page], p), vector_texts(f, p),
                   dot_product_texts(f, np.broadcast_to(t.v_a, f.shape), scores, p)]
    else:  # q_i · k_j
        header = [key, r"$k_j$", products.format(formula=rf"$q_{{{i}}} \cdot k_j$"), scaled]
        columns = [vector_texts(t.k[page], p), dot_product_texts(np.broadcast_to(t.q[i], (n, t.q.shape[1])),
                                                                  t.k[page], scores, p)]
    notes = _masked_notes(t.scaled[i, page], masked[page], p)
    return header, [[labels[j], *cells] for j, *cells in zip(keys, *columns, notes, strict=True)]


def after_scaling_latex(t: AttentionTrace, i: int) -> str:
    """What happens to query ``i``'s scaled scores before the softmax, in LaTeX (a soft cap, a bias), or ""."""
    parts = []
    if t.softcap is not None:
        parts.append(rf"\tilde s_{{{i}j}} \leftarrow c \tanh(\tilde s_{{{i}j}} / c),\; c = {t.softcap:g}")
    if t.bias is not None:
        parts.append(rf"\tilde s_{{{i}j}} \leftarrow \tilde s_{{{i}j}} + b_{{{i}j}}")
    return "".join(r", \quad " + part for part in parts)


def scored_rows_note(mt: MultiHeadTrace | None) -> str:
    """When the head's q and k were QK-normed or rotated (a ModernTrace), say that the rows below are those."""
    if not isinstance(mt, ModernTrace):
        return ""
    normed, rotated = mt.q_normed is not None, mt.q_rotated is not None
    if normed and rotated:
        return _("q_i and every k_j here are the rows as scored: QK-normed, then rotated by RoPE to their "
                 "positions (Step by step, steps 1a and 1b), not the rows of Q = X W_Q and K = X W_K.")
    if rotated:
        return _("q_i and every k_j here are the rows as scored: rotated by RoPE to their positions (Step by "
                 "step, step 1a), not the rows of Q = X W_Q and K = X W_K.")
    if normed:
        return _("q_i and every k_j here are the rows as scored: QK-normed (Step by step, step 1a), not the rows "
                 "of Q = X W_Q and K = X W_K.")
    return ""


SCORE_LATEX_I = {  # query i's score with key j, per score function (i filled in)
    "dot": r"s_{{{i}j}} = q_{{{i}}} \cdot k_j = \sum_d q_{{{i},d}}\, k_{{j,d}}",
    "general": r"s_{{{i}j}} = (q_{{{i}}} W_a) \cdot k_j = \sum_d (q_{{{i}}} W_a)_d\, k_{{j,d}}",
    "additive": r"s_{{{i}j}} = f_{{{i}j}} \cdot v_a = \sum_d f_{{{i}j,d}}\, v_{{a,d}}, \quad "
                r"f_{{{i}j}} = \tanh(q_{{{i}}} W_1 + k_j W_2)",
}


def show_drill_down(t: AttentionTrace, cfg: Config, i: int, keys: range | None = None, *,
                    mt: MultiHeadTrace | None = None) -> None:
    """Query ``i``'s row written out: each score as a sum of products (q_i·k_j for the dot product, (q_i W_a)·k_j
    for "general", f_ij·v_a with the tanh features f_ij for "additive"), its softmax, its weighted values.

    The tables list the keys in ``keys`` (default: all); their Σ rows always sum over every key. The q_i and k_j
    written out are the rows as scored (QK-normed and rotated by RoPE when ``mt`` did so); a soft cap and a score
    bias (ALiBi's, a T5 layer's) get a column of their own before the softmax.
    """
    p = controls.precision()
    n_k = t.k.shape[0]
    keys = range(n_k) if keys is None else keys
    every = text.token_labels(cfg)  # the keys: X's tokens
    labels = {j: text.md_escape(every[j]) for j in keys}  # those shown, as Markdown
    query = text.md_escape(text.query_labels(cfg)[i])
    sigma = "**Σ**" if len(keys) == n_k else _("**Σ (all {n} keys)**").format(n=n_k)
    masked = np.isneginf(t.masked[i])  # [n_k]

    # the sections' headings, formulas, words and short tables: one Markdown element where nothing else comes between
    parts = [block_markdown(
        heading_markdown(_("a · Scores of query {query} with every key").format(query=query) if len(keys) == n_k
                         else _("a · Scores of query {query} with keys {first}–{last} (of {n})").format(
                             query=query, first=keys.start, last=keys.stop - 1, n=n_k), 3),
        formula_markdown(SCORE_LATEX_I[t.score_fn].format(i=i) + rf", \qquad \tilde s_{{{i}j}} = s_{{{i}j}} \,/\, s, "
                         rf"\quad s = {text.divisor_latex(cfg, t.divisor, p)}" + after_scaling_latex(t, i)),
        f"$q_{{{i}}}$ = {vector_text(t.q[i], p)}",
        note_markdown(note) if (note := scored_rows_note(mt)) else "",
        f"$q_{{{i}}} W_a$ = {vector_text(t.q_a[i], p)}" if t.score_fn == "general" else
        f"$q_{{{i}}} W_1$ = {vector_text(t.q_1[i], p)} · $v_a$ = {vector_text(t.v_a, p)}" if t.score_fn == "additive"
        else "")]
    if t.score_fn == "additive":
        _flush(parts)
        f = t.features(i)  # [n_k, d_a]
        matrix_block(_("Features of query {query}").format(query=query),
                     rf"f_{{{i}j}} = \tanh(q_{{{i}}} W_1 + k_j W_2)", f, every,
                     text.dim_labels(f.shape[1]), y_title=_("key"), x_title=_("feature (d_a)"),
                     note=_("Row j: tanh of query {query}'s row of Q W_1 plus key j's row of K W_2. Each score below "
                            "is the dot product of a row with v_a.").format(query=query))
    header, rows = _score_rows(t, i, keys, labels, masked, p)
    _table(parts, header, rows)

    m, shifted, e, total = softmax_parts(t.masked[i])
    b_heading = heading_markdown(_("b · Softmax of row {i}").format(i=i), 3)
    if m is None:
        parts.append(b_heading)
        _flush(parts)
        st.info(_("Every key is masked for this query: exp(−∞) = 0 for every key, so the weights are all 0 "
                  "(not NaN) and the output row is 0."), icon=":material/info:")
    else:
        parts.append(block_markdown(b_heading, formula_markdown(
            rf"m = \max_j \tilde s_{{{i}j}} = {fmt(m, p)}, \qquad "
            rf"\sum_j e^{{\tilde s_{{{i}j}} - m}} = {fmt(total, p)}, \qquad "
            rf"a_{{{i}j}} = e^{{\tilde s_{{{i}j}} - m}} \big/ {fmt(total, p)}")))
    page = slice(keys.start, keys.stop, keys.step)  # the keys shown
    columns = [format_numbers(m, p, "short") for m in (t.masked[i, page], shifted[page], e[page], t.weights[i, page])]
    rows = [[labels[j], *cells] for j, *cells in zip(keys, *columns, strict=True)]
    sums = {"exp": fmt(total, p), "weights": fmt(t.weights[i].sum(), p)}
    rows.append([sigma, "", "", f"**{sums['exp']}**", f"**{sums['weights']}**"])
    _table(parts, [_(r"key $j$"), r"$\tilde s_{ij}$", r"$\tilde s_{ij} - m$", r"$e^{\tilde s_{ij} - m}$",
                   _(r"weight $a_{ij}$")], rows)
    if m is not None and len(keys) == n_k:  # every part shown: the Σ shown is theirs, or the note says why not
        said = [rounded_note(name, added, sums[name]) for name, shown in (("exp", columns[2]), ("weights", columns[3]))
                if (added := shown_sum(shown, sums[name]))]
        if said:
            parts.append(note_markdown(i18n.sentences(*said)))
    # the table's note, then section c's heading and formula
    parts.append(block_markdown(
        note_markdown(_("Subtracting the row's largest score m first keeps every exp at most 1 (nothing overflows) and "
                        "does not change the weights.")),
        heading_markdown(_("c · Weighted values of query {query} (the English illustrated tutorial's “alignment "
                           "vectors”)").format(query=query), 3),
        formula_markdown(rf"o_{{{i}}} = \sum_j a_{{{i}j}}\, v_j")))
    c = t.contributions(i)  # [n_k, d_v]
    total_c = c.sum(axis=0)  # [d_v]
    rows = [[labels[j], *cells] for j, *cells in zip(keys, format_numbers(t.weights[i, page], p, "short"),
                                                       vector_texts(t.v[page], p), vector_texts(c[page], p),
                                                       strict=True)]
    rows.append([sigma, f"**{fmt(t.weights[i].sum(), p)}**", "", f"**{vector_text(total_c, p)}**"])
    _table(parts, [_(r"key $j$"), _(r"weight $a_{ij}$"), _(r"value $v_j$"), r"$a_{ij}\, v_j$"], rows)
    if m is not None and len(keys) == n_k:  # each component's parts, as shown, against the Σ shown
        w = min(c.shape[1], MAX_ITEMS)
        shown = np.array(format_numbers(c[:, :w].ravel(), p, "short"), dtype=object).reshape(n_k, w)
        sums_c = format_numbers(total_c[:w], p, "short")
        added = [shown_sum(list(shown[:, d]), sums_c[d]) or sums_c[d] for d in range(w)]
        if added != sums_c:
            more = [_("… ({n} more)").format(n=c.shape[1] - w)] if c.shape[1] > w else []
            parts.append(note_markdown(rounded_note("weighted", "[" + ", ".join([*added, *more]) + "]",
                                                    vector_text(total_c, p))))
    _flush(parts)
    gap = float(np.abs(total_c - t.output[i]).max())
    same = np.allclose(total_c, t.output[i], rtol=1e-12, atol=1e-12)
    check = st.success if same else st.error
    check(_("Sum of the weighted values {total} = output row {i} of O = AV {output} {mark} (largest difference "
            "{gap}).").format(total=vector_text(total_c, p), i=i, output=vector_text(t.output[i], p),
                              mark="✓" if same else "✗", gap=f"{gap:.1e}"))
