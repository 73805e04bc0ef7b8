"""One head's attention drawn step by step: every intermediate with its formula, shape and heatmap.

Used by the Step by step page and reused by Multi-head and Scaling: every function takes a widget-key
``prefix`` ("steps", "heads", ...) so two pages never share a widget key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from attn_core import AttentionTrace, Config, ModernTrace, MultiHeadTrace, alibi_slopes, head_slice
from attn_ui.app import i18n, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.views import compute
from attn_ui.widgets import controls, heatmap, text
from attn_ui.widgets.matrix_display import (
    block_markdown,
    formula,
    formula_markdown,
    heading_markdown,
    matrix_block,
    note_markdown,
)
from attn_ui.widgets.numbers import format_number

CELL = "cell"  # name of the click selection on the scores and weights heatmaps


def query_from_selection(selection: dict[str, Any], name: str = CELL) -> int | None:
    """The query (row) of a clicked heatmap cell in a Streamlit selection state, or None.

    Examples
    --------
    >>> query_from_selection({"cell": [{"row_i": 2, "col_i": 0}]})
    2
    >>> query_from_selection({"cell": []}) is None
    True
    """
    points = selection.get(name) or []
    return int(points[0]["row_i"]) if points and "row_i" in points[0] else None


def _on_cell_click(chart_key: str) -> Callable[[], None]:
    def pick() -> None:
        i = query_from_selection(st.session_state[chart_key]["selection"])
        if i is not None:
            st.session_state[state.QUERY] = i

    return pick


def _clickable(prefix: str, name: str) -> str:
    """The key of a heatmap whose cells choose the query: new after each choice in the query selectbox."""
    return f"{prefix}_{name}_chart_{st.session_state[state.QUERY_PICKS]}"


def _sup(head: int | None) -> str:
    """LaTeX superscript naming the head, or nothing for a single head."""
    return "" if head is None else f"^{{({head})}}"


MASK_NOTES = {  # marked for the catalogs: show them with _(...)
    "causal": N_("Causal mask: each token may attend to itself and the tokens before it."),
    "padding": N_("Padding mask: no query may attend to a padding token of X."),
    "custom": N_("Custom mask: the cells it switches off are set on the Masking page."),
}

#: how each score function is written: in words (titles, captions) and in LaTeX (Q, K: the whole matrices)


def score_title(score_fn: str) -> str:
    """The title of the scores' heatmap: "Scores QKᵀ", "Scores (Q W_a) Kᵀ", "Scores v_a · tanh(Q W_1 + K W_2)"."""
    return _("Scores {formula}").format(formula=text.SCORE_TEXT[score_fn])


def query_source(cfg: Config) -> str:
    """The matrix the queries are projected from: "Y" with cross-attention, else "X"."""
    return "Y" if cfg.cross else "X"


def head_columns(t: AttentionTrace, head: int) -> str:
    """Which columns of the weights head ``head`` uses, in words (its trace gives the per-head widths)."""
    d_q, d_k, d_v = t.q.shape[1], t.k.shape[1], t.v.shape[1]

    def cols(d: int) -> str:
        return f"{head * d}…{(head + 1) * d - 1}"

    same = d_q == d_k
    if t.score_fn == "general":
        message = (_("Head {head} uses columns {qk} of W_Q and W_K, columns {a} of W_a, and columns {v} of W_V.")
                   if same else _("Head {head} uses columns {q} of W_Q, columns {k} of W_K, columns {a} of W_a, and "
                                  "columns {v} of W_V."))
    elif t.score_fn == "additive":
        message = (_("Head {head} uses columns {qk} of W_Q and W_K, columns {a} of W_1, W_2 and v_a, and columns {v} "
                     "of W_V.")
                   if same else _("Head {head} uses columns {q} of W_Q, columns {k} of W_K, columns {a} of W_1, W_2 "
                                  "and v_a, and columns {v} of W_V."))
    else:
        message = (_("Head {head} uses columns {qk} of W_Q and W_K, and columns {v} of W_V.") if same
                   else _("Head {head} uses columns {q} of W_Q, columns {k} of W_K, and columns {v} of W_V."))
    d_a = t.v_a.shape[0] if t.score_fn == "additive" else d_k
    return message.format(head=head, qk=cols(d_k), q=cols(d_q), k=cols(d_k), a=cols(d_a), v=cols(d_v))


def in_blocks(values: np.ndarray) -> bool:
    """Whether the heatmap of ``values`` draws block means (more than heatmap.MAX_SIDE rows or columns).

    >>> in_blocks(np.zeros((64, 64))), in_blocks(np.zeros((256, 64)))
    (False, True)
    """
    return max(values.shape) > heatmap.block_limit(*values.shape)


def scaled_in_words(t: AttentionTrace, precision: int) -> str:
    """The scaled scores of a matrix drawn in blocks, in words: their range, and why no heatmap (a signed heatmap's
    colours run from −max|value| to +max|value|, so dividing every value by one s > 0 gives the same picture).

    >>> from attn_core import scaled_dot_product_attention
    >>> t = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), scale=4.0)
    >>> print(scaled_in_words(t, 4)[:54])
    **Scaled scores**, shape 2 × 2: from 0 to 0.25. Drawn
    """
    finite = t.scaled[np.isfinite(t.scaled)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    return _("**Scaled scores**, shape {rows} × {cols}: from {lo} to {hi}. Drawn in blocks, their heatmap would be the "
             "scores' heatmap above, colour for colour: its colours end at the largest |value|, which the division "
             "scales too. The drill-down below gives one query's scaled scores.").format(
        rows=t.scaled.shape[0], cols=t.scaled.shape[1], lo=format_number(lo, precision, "short"),
        hi=format_number(hi, precision, "short"))


def sharing(mt: MultiHeadTrace | None, head: int) -> tuple[int, list[int]] | None:
    """With grouped-query heads, (the key/value head query head ``head`` reads, every query head reading it); None
    without grouping.

    >>> from attn_core import make_config, run
    >>> c = make_config(["a", "b"], np.eye(2), np.eye(2, 4), np.eye(2), np.eye(2), w_o=np.eye(4), n_heads=2,
    ...                 n_kv_heads=1)
    >>> sharing(run(c), 1)
    (0, [0, 1])
    """
    if mt is None or not mt.n_kv_heads or mt.n_kv_heads == mt.n_heads:
        return None
    g = mt.kv_heads[head]
    return g, [h for h, kv in enumerate(mt.kv_heads) if kv == g]


def kv_head_columns(t: AttentionTrace, head: int, g: int, readers: list[int]) -> str:
    """Which columns grouped-query head ``head`` uses: its own of W_Q, and those of key/value head ``g`` (shared by
    the query heads ``readers``) of W_K and W_V."""
    d_q, d_k, d_v = t.q.shape[1], t.k.shape[1], t.v.shape[1]

    def cols(d: int, h: int) -> str:
        return f"{h * d}…{(h + 1) * d - 1}"

    return _("Query head {head} uses columns {q} of W_Q. It reads key/value head {g}, columns {k} of W_K and {v} of "
             "W_V, which query heads {readers} share (grouped-query attention).").format(
        head=head, q=cols(d_q, head), g=g, k=cols(d_k, g), v=cols(d_v, g), readers=", ".join(map(str, readers)))


def projections(t: AttentionTrace, mt: MultiHeadTrace | None, head: int) -> tuple[np.ndarray, np.ndarray]:
    """Head ``head``'s Q and K as projected (X W_Q, X W_K of its key/value head), before any QK-norm or RoPE: the
    trace's own q, k unless a ModernTrace normed or rotated them."""
    if not isinstance(mt, ModernTrace) or (mt.q_normed is None and mt.q_rotated is None):
        return t.q, t.k
    d_k = t.q.shape[1]
    return mt.q[:, head_slice(head, d_k)], mt.k[:, head_slice(mt.kv_heads[head], d_k)]


def latex_number(x: float) -> str:
    r"""A small or large number in LaTeX, its exponent as a power of ten: 1e-06 → "10^{-6}", 2.5e-05 → "2.5 \cdot
    10^{-5}".

    >>> latex_number(1e-6), latex_number(2.5e-5), latex_number(0.5)
    ('10^{-6}', '2.5 \\cdot 10^{-5}', '0.5')
    """
    mantissa, _e, exponent = f"{x:g}".partition("e")
    if not exponent:
        return mantissa
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa} \cdot {power}"


def rope_latex(layout: str) -> str:
    """RoPE's rotation of one pair of a row at position p, in LaTeX, for the layout's pairs."""
    pair = (r"(x_i,\, x_{i + d/2})" if layout == "half" else r"(x_{2i},\, x_{2i+1})")
    return (rf"{pair} \mapsto (a\cos\varphi - b\sin\varphi,\; a\sin\varphi + b\cos\varphi), \quad "
            r"\varphi = p\,\theta_i, \quad \theta_i = \mathrm{base}^{-2i/d}")


def _pre_score_steps(mt: ModernTrace, *, head: int, prefix: str,
                     pair_rows: tuple[list[str], list[str]], q_title: str, kv_title: str) -> list[str]:
    """QK-norm's and RoPE's steps (1a, 1b) for head ``head``: its q and k normed, then rotated, each a heatmap.
    Returns the steps shown ("norm", "rope"), in order."""
    queries, keys = pair_rows
    g = mt.kv_heads[head]
    letters = iter("abc")
    shown = []
    parts = []
    if mt.q_normed is not None:
        parts.append(("norm", mt.q_normed[head], mt.k_normed[g]))
    if mt.q_rotated is not None:
        parts.append(("rope", mt.q_rotated[head], mt.k_rotated[g]))
    for kind, q, k in parts:
        step = "1" + next(letters)
        if kind == "norm":
            heading = _("{step} · QK-norm: each row of q and k divided by its root mean square").format(step=step)
            latex = (rf"\hat q_i = \frac{{q_i}}{{\sqrt{{\tfrac{{1}}{{d_k}}\sum_d q_{{i,d}}^2 + \varepsilon}}}}, "
                     rf"\quad \varepsilon = {latex_number(mt.qk_norm_eps)} \quad(\text{{likewise }} \hat k_j)")
            note = _("RMSNorm over each head's d_k features (Qwen 3's q_norm and k_norm, no gain here): every row now "
                     "has a root mean square just under 1 (ε keeps a zero row from dividing by 0), so no query or key "
                     "can make the scores large by its length alone.")
            names = ("Q (QK-norm)", "K (QK-norm)")
            shown.append(kind)
        else:
            heading = _("{step} · RoPE: q and k turned by their position").format(step=step)
            latex = rope_latex(mt.rope.layout)
            note = i18n.sentences(
                (_("Layout “half” (transformers' rotate_half: Llama, Mistral, Qwen): feature i pairs with feature "
                   "i + d/2.") if mt.rope.layout == "half" else
                 _("Layout “interleaved” (RoFormer, Meta's Llama): features 2i and 2i + 1 make a pair.")),
                _("Token p's row (p = 0 for the first) has each pair turned by the angle p·θ_i, base = {base}. A "
                  "rotation keeps each row's length; the dot product of a query at position m with a key at "
                  "position n depends on their offset m − n, not on where they are.").format(base=f"{mt.rope.base:g}"))
            names = ("Q (RoPE)", "K (RoPE)")
            shown.append(kind)
        formula(latex, note, intro=heading_markdown(heading))
        dom = heatmap.shared_domain(q, k)
        items = ((names[0], q, queries, q_title), (names[1], k, keys, kv_title))
        widths = [heatmap.heatmap_width(m, rows, controls.precision(), text.dim_labels(m.shape[1]))
                  for _n, m, rows, _t in items]
        for col, (name, m, rows, y_title) in zip(controls.side_by_side(widths), items, strict=True):
            with col:
                matrix_block(name, "", m, rows, text.dim_labels(m.shape[1]), y_title=y_title,
                             x_title=_("dimension ({dim})").format(dim="d_k"), domain=dom,
                             key=f"{prefix}_{kind}_{name[0].lower()}_chart")
    return shown


def bias_words(mt: MultiHeadTrace | None, cfg: Config, head: int) -> str:
    """Where head ``head``'s score bias comes from, in words: ALiBi (its slope), a given bias (a T5 layer's), or
    both added."""
    alibi = isinstance(mt, ModernTrace) and mt.alibi is not None
    t5 = _("This configuration adds a number to each scaled score before the mask: B, one matrix per head (a T5 "
           "layer's learned relative positions: one number per head and distance between query and key). It is the "
           "mask's finite sibling: where a mask adds −∞ and rules a key out, a bias favours or penalises a key and "
           "never rules it out.")
    if not alibi:
        return t5
    m = float(alibi_slopes(mt.n_heads)[head])
    words = _("ALiBi (BLOOM) adds B_ij = −m·(i − j) to each scaled score before the mask: a penalty that grows with "
              "the distance of key j behind query i (and, without a causal mask, a bonus of the same size for a key "
              "ahead of it). Each head has its own slope; this head's m = {m}. It is the mask's finite sibling: it "
              "favours near keys, never rules one out.").format(m=f"{m:.6g}")
    if cfg.score_bias is None:
        return words
    return i18n.sentences(words, _("The configuration's own score bias is added to ALiBi's: B is their sum."))


def window_words(cfg: Config, window: int) -> str:
    """The sliding window's rule in words (causal with a causal mask, else both sides)."""
    if cfg.mask_kind == "causal":
        return _("Sliding window of {w} keys: query i sees key j only if i − {w} < j ≤ i, the {w} keys ending at "
                 "itself.").format(w=window)
    return _("Sliding window of {w} keys: query i sees key j only if |i − j| < {w}, up to {w} − 1 keys on each "
             "side.").format(w=window)


def mask_words(cfg: Config, mt: MultiHeadTrace | None) -> str:
    """What the mask of this configuration is made of, in words: the mask kind's note, and the sliding window."""
    window = mt.window if isinstance(mt, ModernTrace) else None
    kind = _(MASK_NOTES[cfg.mask_kind]) if cfg.mask_kind in MASK_NOTES else ""
    if window is None:
        return kind or _("Masked")
    return i18n.sentences(kind, window_words(cfg, window),
                          _("The mask used is the two together: a key is allowed where both allow it.") if kind else "")


def show_steps(t: AttentionTrace, cfg: Config, *, prefix: str, head: int | None = None,
               mt: MultiHeadTrace | None = None) -> None:
    """Every intermediate of one head, in order, each with its formula, shape and heatmap.

    ``head`` names the head in the formulas (None for single-head attention). Clicking a cell of the
    scores or weights heatmap chooses that row's query for :func:`show_drill_down`. Rows of Q, the scores, the
    weights and the output are the queries (Y's tokens with cross-attention); rows of K and V, and the scores'
    columns, are X's tokens (the keys).

    ``mt``: the whole trace, when it has the modern options: grouped-query heads (K and V are the key/value head's,
    shared by the query heads said), QK-norm and RoPE (steps 1a, 1b between the projections and the scores, which are
    computed from them), a soft cap (step 3b), ALiBi (with the score bias) and a sliding window (in the mask).
    """
    hh = 0 if head is None else head
    p = controls.precision()
    queries, keys = text.query_labels(cfg), text.token_labels(cfg)
    h = _sup(head)
    d_v = t.v.shape[1]
    pair = {"rows": queries, "cols": keys, "y_title": _("query"), "x_title": _("key")}
    src = query_source(cfg)
    q_title, kv_title = (_("query (Y)"), _("token (X)")) if cfg.cross else (_("token"), _("token"))

    shared = sharing(mt, hh)
    columns = (kv_head_columns(t, hh, *shared) if shared is not None else
               head_columns(t, head) if head is not None else "")
    cross = (_("Cross-attention: the queries are the {n_q} rows of Y (Q = Y W_Q), the keys and values the {n_k} rows "
               "of X (K = X W_K, V = X W_V).").format(n_q=cfg.n_q, n_k=cfg.n_seq) if cfg.cross else "")
    st.markdown(block_markdown(heading_markdown(_("1 · Queries, keys, values")),
                               *(note_markdown(words) for words in (columns, cross) if words)))
    q_raw, k_raw = projections(t, mt, hh)
    domain = heatmap.shared_domain(q_raw, k_raw, t.v)
    q_dim = "d_q" if t.score_fn == "additive" else "d_k"
    qkv = (("Q", q_raw, q_dim, queries, q_title, src), ("K", k_raw, "d_k", keys, kv_title, "X"),
           ("V", t.v, "d_v", keys, kv_title, "X"))
    shown = controls.one_at_a_time(_("Projection shown"), [name for name, *_ in qkv], key=f"{prefix}_qkv_shown",
                                   large=any(in_blocks(m) for _, m, *_ in qkv), format_func=str)
    qkv = tuple(item for item in qkv if item[0] in shown)
    widths = [heatmap.heatmap_width(m, rows, p, text.dim_labels(m.shape[1])) for _, m, _, rows, _, _ in qkv]
    for col, (name, m, dim, rows, y_title, source) in zip(controls.side_by_side(widths), qkv, strict=True):
        with col:
            kv = shared is not None and name != "Q"  # K and V of the key/value head this query head reads
            sup = _sup(shared[0]) if kv else h
            matrix_block(
                name if head is None else _("{name} (key/value head {g})").format(name=name, g=shared[0]) if kv
                else _("{name} (head {head})").format(name=name, head=head),
                rf"{name}{sup} = {source}\,W_{name}{sup}", m, rows, text.dim_labels(m.shape[1]), y_title=y_title,
                x_title=_("dimension ({dim})").format(dim=dim), domain=domain,
                key=f"{prefix}_{name.lower()}_chart",
            )

    scored = (_pre_score_steps(mt, head=hh, prefix=prefix, pair_rows=(queries, keys), q_title=q_title,
                               kv_title=kv_title) if isinstance(mt, ModernTrace) else [])

    click = _("Click or tap a cell to explain its query row in the drill-down below.")
    intro = block_markdown(heading_markdown(_("2 · Scores")), note_markdown(
        _("Score function: {name}, {formula} (see Score functions).").format(
            name=text.score_name(t.score_fn), formula=text.SCORE_TEXT[t.score_fn])) if t.score_fn != "dot" else "")
    if t.score_fn == "general":
        matrix_block(
            "Q W_a", rf"Q_a{h} = Q{h} W_a{h}", t.q_a, queries, text.dim_labels(t.q_a.shape[1]), y_title=_("query"),
            x_title=_("dimension ({dim})").format(dim="d_k"), key=f"{prefix}_q_a_chart",
            note=_("W_a turns each query into a row as wide as the keys; its dot product with a key is the score."),
            intro=intro,
        )
        intro = ""  # drawn above Q W_a
        latex = rf"S{h} = (Q{h} W_a{h})\, K{h}{{}}^\top, \qquad s_{{ij}} = (q_i W_a) \cdot k_j"
        note = _("Row i holds the dot products of query i's row of Q W_a with every key.")
    elif t.score_fn == "additive":
        halves = (("Q W_1", t.q_1, queries, _("query"), rf"Q{h} W_1{h}"),
                  ("K W_2", t.k_2, keys, _("key"), rf"K{h} W_2{h}"),
                  ("v_a", t.v_a[None, :], ["v_a"], "", ""))
        dom = heatmap.shared_domain(t.q_1, t.k_2, t.v_a[None, :])
        st.markdown(intro)  # above the three side by side
        intro = ""
        widths = [heatmap.heatmap_width(m, rows, p) for _, m, rows, _, _ in halves]
        for col, (name, m, rows, y_title, latex) in zip(controls.side_by_side(widths), halves, strict=True):
            with col:
                matrix_block(name, latex, m, rows, text.dim_labels(m.shape[1]), y_title=y_title,
                             x_title=_("feature (d_a)"), domain=dom, key=f"{prefix}_{name[0].lower()}_{name[-1]}_chart")
        latex = (rf"s_{{ij}} = v_a{h} \cdot \tanh\big(q_i W_1{h} + k_j W_2{h}\big) = "
                 r"\sum_d v_{a,d}\, \tanh\big((q_i W_1)_d + (k_j W_2)_d\big)")
        note = _("Each score adds query i's row of Q W_1 to key j's row of K W_2, takes tanh of each of the d_a "
                 "numbers (the features) and weighs them with v_a. The drill-down shows one query's features.")
    elif scored:
        latex = rf"S{h} = \tilde Q{h} \tilde K{h}{{}}^\top, \qquad s_{{ij}} = \tilde q_i \cdot \tilde k_j"
        note = {("norm",): _("Row i holds the dot products of query i with every key, both QK-normed (step 1a): "
                             "the rows of the heatmaps just above, not of Q and K."),
                ("rope",): _("Row i holds the dot products of query i with every key, both rotated by RoPE (step "
                             "1a): the rows of the heatmaps just above, not of Q and K."),
                ("norm", "rope"): _("Row i holds the dot products of query i with every key, both QK-normed and then "
                                    "rotated by RoPE (steps 1a, 1b): the rows of the heatmaps just above, not of Q "
                                    "and K.")}[tuple(scored)]
    else:
        latex = rf"S{h} = Q{h} K{h}{{}}^\top, \qquad s_{{ij}} = q_i \cdot k_j"
        note = _("Row i holds the dot products of query i with every key.")
    matrix_block(
        score_title(t.score_fn), latex, t.scores, **pair, note=i18n.sentences(note, click),
        key=(k := _clickable(prefix, "scores")), select=CELL, on_select=_on_cell_click(k), intro=intro,
    )

    heading = heading_markdown(_("3 · Scaled scores"))
    latex = rf"\tilde S{h} = \frac{{S{h}}}{{s}}, \qquad s = {text.divisor_latex(cfg, t.divisor, p)}"
    note = (_("Every score is divided by the same number s = {s}, larger than 1, so the softmax is less peaked.")
            if t.divisor > 1 else
            _("Every score is divided by the same number s = {s}, smaller than 1, so the softmax is more peaked.")
            if t.divisor < 1 else
            _("Every score is divided by s = 1: the scaled scores are the scores.")).format(s=f"{t.divisor:.4g}")
    if in_blocks(t.scaled):  # in blocks, its heatmap would be the scores' again, colour for colour: its numbers instead
        st.markdown(block_markdown(heading, formula_markdown(latex), i18n.sentences(note, scaled_in_words(t, p))))
    else:
        matrix_block(_("Scaled scores"), latex, t.scaled, **pair, note=note, key=f"{prefix}_scaled_chart",
                     intro=heading)

    if t.softcap is not None:
        c = f"{t.softcap:g}"
        matrix_block(
            _("Soft-capped scores"), rf"\tilde S{h} \leftarrow c \tanh\big(\tilde S{h} / c\big), \qquad c = {c}",
            t.capped, **pair, key=f"{prefix}_capped_chart", intro=heading_markdown(_("3b · Soft-capped scores")),
            note=_("Gemma 2's soft cap, after the scaling and before any bias and the mask: every score now lies "
                   "strictly between −{c} and {c}; a score much smaller than {c} barely changes (tanh x ≈ x near 0), a "
                   "large one is squeezed toward ±{c}, so no key can take all the weight by one huge score.").format(
                c=c),
        )

    step = 4
    if t.bias is not None:
        matrix_block(_("Score bias B"), rf"B{h}", t.bias, **pair, key=f"{prefix}_bias_chart",
                     intro=block_markdown(heading_markdown(_("{step} · Score bias added").format(step=step)),
                                          bias_words(mt, cfg, hh)))
        matrix_block(_("Scaled scores + B"), rf"\tilde S{h} \leftarrow \tilde S{h} + B{h}", t.biased, **pair,
                     key=f"{prefix}_biased_chart")
        step += 1
    if t.mask is not None:
        matrix_block(
            _("Masked scores"),
            _(r"\tilde S_{ij} \leftarrow -\infty \quad \text{where query } i \text{ may not attend to key } j"),
            t.masked, **pair,
            note=i18n.sentences(mask_words(cfg, mt), _("Grey cells (−∞) get weight exp(−∞) = 0.")),
            key=f"{prefix}_masked_chart", intro=heading_markdown(_("{step} · Masked scores").format(step=step)),
        )
        step += 1

    formula(rf"A{h} = \mathrm{{softmax}}(\tilde S{h}), \qquad a_{{ij}} = "
            r"\frac{\exp(\tilde s_{ij} - m_i)}{\sum_{k} \exp(\tilde s_{ik} - m_i)}, \quad m_i = \max_k \tilde s_{ik}",
            intro=heading_markdown(_("{step} · Attention weights (softmax of each row)").format(step=step)),
            note=i18n.sentences(_("Each weight is between 0 and 1 and each row sums to 1 (see the row sums).")
                                if not t.fully_masked_rows else
                                _("Each weight is between 0 and 1, and each row sums to 1 (see the row sums) except a "
                                  "row whose every key is masked: it sums to 0."),
                                 _("Grey cells are masked keys: weight 0.") if t.mask is not None else "", click))
    sums = t.weights.sum(axis=1)[:, None]  # [n_q, 1]
    if in_blocks(t.weights):  # a column of block means of the row sums would say less than their range, in words
        matrix_block(
            _("Weights"), "", t.weights, **pair, kind="weights",
            key=(k := _clickable(prefix, "weights")), select=CELL, on_select=_on_cell_click(k),
            masked=None if t.mask is None else ~t.mask,
        )
        st.markdown(_("**Row sums Σⱼ aᵢⱼ** of the {n} rows: from {lo} to {hi}.").format(
            n=sums.shape[0], lo=format_number(float(sums.min()), p, "short"),
            hi=format_number(float(sums.max()), p, "short")))
    else:
        left, right = controls.side_by_side([heatmap.heatmap_width(m, queries, p) for m in (t.weights, sums)])
        with left:
            matrix_block(
                _("Weights"), "", t.weights, **pair, kind="weights",
                key=(k := _clickable(prefix, "weights")), select=CELL, on_select=_on_cell_click(k),
                masked=None if t.mask is None else ~t.mask,
            )
        with right:
            matrix_block(_("Row sums Σⱼ aᵢⱼ"), "", sums, queries, ["Σⱼ"], kind="weights", y_title=_("query"),
                         key=f"{prefix}_rowsums_chart")
    if t.fully_masked_rows:
        names = ", ".join(text.md_escape(queries[r]) for r in t.fully_masked_rows)
        st.info(ngettext("Every key is masked for query {names}: there is nothing to attend to, so that row's "
                         "weights are all 0 (not NaN) and its row sum is 0, and its output row is 0.",
                         "Every key is masked for queries {names}: there is nothing to attend to, so their rows' "
                         "weights are all 0 (not NaN), their row sums are 0, and their output rows are 0.",
                         len(t.fully_masked_rows)).format(names=names),
                icon=":material/info:")
    step += 1

    matrix_block(
        _("Output"), rf"O{h} = A{h} V{h}, \qquad o_i = \sum_j a_{{ij}}\, v_j", t.output, queries,
        text.dim_labels(d_v), y_title=_("query") if cfg.cross else _("token"),
        x_title=_("dimension ({dim})").format(dim="d_v"), key=f"{prefix}_output_chart",
        note=_("Each output row is the weighted average of the value rows, with that query's weights."),
        intro=heading_markdown(_("{step} · Output").format(step=step)),
    )


def show_result(mt: MultiHeadTrace, cfg: Config, *, prefix: str) -> None:
    """What a configuration gives, side by side: the attention weights (of head 0, said so with several heads)
    and the layer's output (every head, concatenated and multiplied by W_O). For a page that edits the numbers
    without showing the steps (Inputs & weights)."""
    p = controls.precision()
    t, queries = mt.heads[0], text.query_labels(cfg)
    most = heatmap.BLOCKS  # redrawn on every edit of the grids above: blocks above 32 a side (4 × fewer marks at 64)
    weights, output = N_("Weights"), N_("Output")
    shown = controls.one_at_a_time(_("Result shown"), [weights, output], key=f"{prefix}_result_shown",
                                   large=max(*t.weights.shape, *mt.output.shape) > most)
    parts = [m for name, m in ((weights, t.weights), (output, mt.output)) if name in shown]
    places = iter(controls.side_by_side([heatmap.heatmap_width(m, queries, p, most=most) for m in parts]))
    if weights in shown:
        with next(places):
            matrix_block(
                _("Weights") if cfg.n_heads == 1 else _("Weights of head 0 (of {n})").format(n=cfg.n_heads), "",
                t.weights, queries, text.token_labels(cfg), kind="weights", y_title=_("query"), x_title=_("key"),
                masked=None if t.mask is None else ~t.mask, key=f"{prefix}_result_weights", most=most,
            )
    if output in shown:
        with next(places):
            matrix_block(
                _("Output"), "", mt.output, queries, text.dim_labels(mt.output.shape[1]),
                y_title=_("query") if cfg.cross else _("token"), x_title=_("dimension"),
                note="" if cfg.n_heads == 1 and compute.is_identity(cfg.w_o)
                else _("Every head's output side by side, times W_O."), key=f"{prefix}_result_output", most=most,
            )
