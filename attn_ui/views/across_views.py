"""Across tokens and layers, on every model page (A real model, A model that writes, A model that translates): several
query tokens' attention summed or averaged, per head and over the heads, and attention rollout (Abnar & Zuidema
2020) beside the last layer's own attention. The numbers come from attn_core (summed_attention, head_mean,
rollout_row) on the run the page already made: no model runs here. Widget keys are here, by the page's prefix.

A page builds its :class:`Side` list once (:func:`encoder_sides`, :func:`causal_sides`, :func:`translator_sides`)
and calls :func:`tokens_summed` and :func:`rollout` with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attn_core import AttentionInputError, head_mean, rollout_row, summed_attention
from attn_ui.app import i18n, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.widgets import charts, controls, heatmap, text
from attn_ui.widgets.numbers import format_numbers

# Widget keys: each formatted with a side's prefix ("model", "gen", "trans_enc", "trans_dec", "trans_cross")
QUERIES = "{side}_sum_queries"  # multiselect: the query tokens summed, by position
HOW = "{side}_sum_how"  # segmented control: "sum" or "mean"
TOKEN = "{side}_rollout_token"  # selectbox: the token whose rollout is drawn, by position
AFTER = "{side}_rollout_layer"  # selectbox: the rollout after this layer
PICKED = "{side}_across_{section}"  # segmented control: which of a page's attentions (the translator has three)

HOW_TEXT = {"sum": N_("sum"), "mean": N_("mean")}
PRECISION = 2  # at most this many decimals on the cells (as the pages' one-head heatmaps)


@dataclass(frozen=True, eq=False)
class Side:
    """One attention of a page's run that the sections read.

    key : the widget keys' prefix; name : what it is, as shown (a text marked with N_)
    attentions : [n_layers, n_heads, n_q, n_k]; layer : the layer the page has chosen
    rows, cols : the query and key tokens as the page names them (numbered, unique)
    allowed : bool [n_q, n_k], True where a query may attend (the padding or the causal mask)
    real : bool [n_q]: the queries that are tokens of the text (not padding)
    self_attention : rollout applies (not to cross-attention); causal : no query reads a later token (a decoder's)
    """

    key: str
    name: str
    attentions: np.ndarray
    layer: int
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    allowed: np.ndarray
    real: np.ndarray
    self_attention: bool = True
    causal: bool = False

    @property
    def is_pad(self) -> np.ndarray | None:
        """bool [n]: the padding tokens of an encoder's run, or None when there are none."""
        return None if self.real.all() else ~self.real


def encoder_sides(attentions: np.ndarray, tokens: Sequence[str], is_pad: np.ndarray, layer: int) -> list[Side]:
    """A real model's one side: the encoder's self-attention, the padding keys masked."""
    n = len(tokens)
    labels = tuple(text.numbered(tuple(tokens)))
    return [Side("model", N_("self-attention"), attentions, layer, labels, labels,
                 np.broadcast_to(~is_pad, (n, n)), ~is_pad)]


def causal_sides(attentions: np.ndarray, labels: Sequence[str], layer: int) -> list[Side]:
    """A model that writes: the decoder's causal self-attention (``labels`` as the page shows tokens)."""
    n = len(labels)
    named = tuple(text.numbered(tuple(labels)))
    return [Side("gen", N_("self-attention"), attentions, layer, named, named, np.tri(n, dtype=bool),
                 np.ones(n, dtype=bool), causal=True)]


def translator_sides(trained, enc_layer: int, dec_layer: int) -> list[Side]:
    """A model that translates: the encoder's self-attention (the page's encoder layer), the decoder's causal
    self-attention and its cross-attention (the page's decoder layer); ``trained`` an attn_models.Translation."""
    src, dec, out = (tuple(text.numbered(t)) for t in (trained.source_tokens, trained.decoder_tokens,
                                                       trained.output_tokens))
    n_src, n_out = len(src), len(out)
    return [
        Side("trans_enc", N_("the encoder's self-attention"), trained.encoder_attentions, enc_layer, src, src,
             np.ones((n_src, n_src), dtype=bool), np.ones(n_src, dtype=bool)),
        Side("trans_dec", N_("the decoder's self-attention"), trained.decoder_attentions, dec_layer, dec, dec,
             np.tri(n_out, dtype=bool), np.ones(n_out, dtype=bool), causal=True),
        Side("trans_cross", N_("cross-attention"), trained.cross, dec_layer, out, src,
             np.ones((n_out, n_src), dtype=bool), np.ones(n_out, dtype=bool), self_attention=False),
    ]


def _pick_side(sides: list[Side], section: str) -> Side:
    """The side the learner reads, with a choice when the page has more than one (its key: the first side's)."""
    if len(sides) == 1:
        return sides[0]
    page_key = PICKED.format(side=sides[0].key, section=section)
    keys = [s.key for s in sides]
    names = {s.key: s.name for s in sides}
    picked = st.segmented_control(_("Attention"), keys, format_func=i18n.option_labels(names),
                                  **state.bind(page_key, state.kept(page_key, keys[0], keys)))
    return sides[keys.index(picked)] if picked in keys else sides[0]


# ---- several tokens summed -----------------------------------------------------------------------------------------
def default_queries(side: Side) -> list[int]:
    """Two real tokens to start with: the last two of a causal model (they have read the most), else positions 1 and
    2 (the first words after [CLS]); fewer when there are fewer."""
    real = [int(i) for i in np.flatnonzero(side.real)]
    return real[-2:] if side.causal else (real[1:3] or real[:1])


def tokens_summed(sides: list[Side]) -> None:
    """The section *Several tokens together*: query tokens chosen, their rows summed or averaged in the page's
    layer, per head (a heads × keys heatmap) and over the heads (its last row)."""
    st.subheader(_("Several tokens together"))
    st.caption(_("Choose query tokens: their attention rows are added up (or averaged), per head and over the heads, "
                 "in the layer chosen above. Where do these tokens, together, look?"))
    side = _pick_side(sides, "sum")
    key_q, key_how = QUERIES.format(side=side.key), HOW.format(side=side.key)
    choices = [int(i) for i in np.flatnonzero(side.real)]
    row = st.container(horizontal=True, vertical_alignment="bottom")
    queries = row.multiselect(
        _("Query tokens"), choices, format_func=dict(enumerate(side.rows)).__getitem__, width=420,
        placeholder=_("choose tokens"),
        **state.bind(key_q, [q for q in state.kept(key_q, default_queries(side)) if q in choices]))
    how = row.segmented_control(_("Combine them by"), list(HOW_TEXT), format_func=i18n.option_labels(HOW_TEXT),
                                **state.bind(key_how, state.kept(key_how, "sum", list(HOW_TEXT)))) or "sum"
    if not queries:
        st.info(_("Choose at least one query token."), icon=":material/info:")
        return
    queries = sorted(queries)
    layer = side.layer
    try:
        per_head = summed_attention(side.attentions[layer], queries, how)  # [n_heads, n_k]
        over = summed_attention(head_mean(side.attentions[layer]), queries, how)  # [n_k]
    except AttentionInputError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        return
    values = np.vstack([per_head, over])  # [n_heads + 1, n_k]
    masked = ~side.allowed[queries].any(axis=0)  # [n_k]: keys none of the chosen queries may read
    row_labels = [_(controls.HEAD_OPTION).format(h=h) for h in range(len(per_head))] + [_("mean of the heads")]
    title = (ngettext("layer {layer}: {n} query token summed", "layer {layer}: {n} query tokens summed", len(queries))
             if how == "sum" else
             ngettext("layer {layer}: {n} query token averaged", "layer {layer}: {n} query tokens averaged",
                      len(queries))).format(layer=layer, n=len(queries))
    with st.container(horizontal=True, wrap=False):  # on a phone, wider than the screen: it scrolls sideways
        charts.show_chart(heatmap.heatmap(
            values, row_labels, list(side.cols), kind="weights", precision=min(controls.precision(), PRECISION),
            domain=(0.0, float(len(queries)) if how == "sum" else 1.0), x_title=_("key"), y_title=_("head"),
            title=title, masked=np.broadcast_to(masked, values.shape)))
    st.markdown(summed_words(per_head, over, queries, side, how))
    h = int(np.unravel_index(int(np.argmax(per_head)), per_head.shape)[0])
    single_tokens(values, row_labels, side.cols, [len(per_head), h])


def summed_words(per_head: np.ndarray, over: np.ndarray, queries: list[int], side: Side, how: str) -> str:
    """One sentence on the numbers shown: the key the chosen tokens weigh most over the heads, and the head that puts
    the most on one key (``per_head`` [n_heads, n_k], ``over`` [n_k])."""
    k = int(np.argmax(over))
    h, hk = (int(i) for i in np.unravel_index(int(np.argmax(per_head)), per_head.shape))
    w, hw = as_shown(np.vstack([per_head, over]), [(len(per_head), k), (h, hk)])
    said = {"key": text.md_escape(side.cols[k]), "w": w, "head": h, "head_key": text.md_escape(side.cols[hk]),
            "hw": hw}
    if how == "sum":
        first = ngettext("Over the heads, the {n} token chosen puts the most weight on “{key}” ({w}; at most {n}).",
                         "Over the heads, the {n} tokens chosen put the most weight together on “{key}” ({w}; at most "
                         "{n}).", len(queries))
    else:
        first = ngettext("Over the heads, the {n} token chosen puts on average the most weight on “{key}” ({w}).",
                         "Over the heads, the {n} tokens chosen put on average the most weight on “{key}” ({w}).",
                         len(queries))
    return i18n.sentences(first.format(n=len(queries), **said),
                          _("Of all heads, head {head} puts the most on one key: “{head_key}” ({hw}).").format(**said))


# ---- attention rollout ---------------------------------------------------------------------------------------------
def rollout(sides: list[Side]) -> None:
    """The section *Attention rollout*: one token's rolled-out attention after a layer beside that layer's own
    attention averaged over its heads, and one sentence comparing them."""
    st.subheader(_("Attention rollout"))
    st.caption(_("Attention rollout (Abnar & Zuidema 2020, “Quantifying Attention Flow in Transformers”) follows "
                 "attention down through the layers: each layer's heads are averaged, the residual connection is "
                 "counted by adding the identity (A + I, each row rescaled to sum to 1), and the layers are multiplied "
                 "from the first up. A token's row then says how much of it, after that layer, comes from each input "
                 "token, if attention alone mixed the tokens."))
    rolled = [s for s in sides if s.self_attention]
    if len(rolled) < len(sides):
        st.caption(_("Cross-attention has no rollout: the paper rolls out self-attention, where each layer's queries "
                     "and keys are the same tokens; it defines no way through the decoder's cross-attention, so none "
                     "is drawn here."))
    side = _pick_side(rolled, "rollout")
    key_t, key_l = TOKEN.format(side=side.key), AFTER.format(side=side.key)
    choices = [int(i) for i in np.flatnonzero(side.real)]
    layers = list(range(side.attentions.shape[0]))
    row = st.container(horizontal=True, vertical_alignment="bottom")
    token = row.selectbox(_("Token"), choices, format_func=dict(enumerate(side.rows)).__getitem__, width=260,
                          **state.bind(key_t, state.kept(key_t, choices[-1] if side.causal else choices[0], choices)))
    after = row.selectbox(_("After layer"), layers, width=140,
                          **state.bind(key_l, state.kept(key_l, layers[-1], layers)))
    # [n]: the token's row after the layers up to the one chosen (the padding left out: attn_core.rollout_row)
    try:
        rolled_row = rollout_row(side.attentions[:after + 1], token, is_pad=side.is_pad)
    except AttentionInputError as err:  # weights whose rows do not sum to 1: a family's bug, said, not a traceback
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        return
    own = head_mean(side.attentions[after])[token]  # [n]: that layer alone, its heads averaged
    values = np.vstack([rolled_row, own])  # [2, n]
    row_labels = [_("rollout to layer {layer}").format(layer=after),  # short: Streamlit's theme cuts axis labels
                  _("layer {layer} alone").format(layer=after)]
    masked = np.broadcast_to(~side.allowed[token], values.shape)
    with st.container(horizontal=True, wrap=False):
        charts.show_chart(heatmap.heatmap(
            values, row_labels, list(side.cols), kind="weights", precision=min(controls.precision(), PRECISION),
            x_title=_("input token"), title=_("where “{token}” comes from").format(token=side.rows[token]),
            masked=masked))
    st.markdown(rollout_words(rolled_row, own, side, after))
    single_tokens(values, row_labels, side.cols, [0, 1])
    if side.is_pad is not None:
        st.caption(_("Computed over the real tokens only: the padding mask gives the padding tokens no weight from "
                     "any real token, so they never feed one (their columns are grey), and their own rows are left "
                     "out."))
    elif side.causal:
        st.caption(_("In a causal model a token's rollout covers only itself and the tokens before it (grey: after "
                     "it)."))


def rollout_words(rolled: np.ndarray, own: np.ndarray, side: Side, after: int) -> str:
    """One sentence on the numbers shown: the input token the rollout puts most on, and the one the layer alone
    does (``rolled``, ``own`` [n])."""
    a, b = int(np.argmax(rolled)), int(np.argmax(own))
    wa, wb, wa_own = as_shown(np.vstack([rolled, own]), [(0, a), (1, b), (1, a)])
    said = {"layer": after, "a": text.md_escape(side.cols[a]), "b": text.md_escape(side.cols[b]), "wa": wa, "wb": wb,
            "wa_own": wa_own}
    if a == b:
        return _("Both put the most on “{a}”: {wa} rolled out through layer {layer}, {wb} in layer {layer} alone "
                 "(its heads averaged).").format(**said)
    return _("Rolled out through layer {layer}, the most comes from “{a}” ({wa}; layer {layer} alone, its heads "
             "averaged, gives it {wa_own}); layer {layer} alone puts the most on “{b}” ({wb}).").format(**said)


TOP = 5  # keys listed per row when the heatmap draws blocks of tokens


def single_tokens(values: np.ndarray, row_labels: list[str], cols: tuple[str, ...], rows: list[int]) -> None:
    """Above heatmap.MAX_SIDE tokens the heatmap draws the mean of each block of tokens: then the TOP keys of the
    ``rows`` the sentence speaks of, token by token, so that its numbers are on the screen (``values`` [r, c])."""
    if len(cols) <= heatmap.MAX_SIDE:
        return
    st.caption(_("Above {most} tokens the chart draws the mean of each block of tokens; the {k} keys each row named "
                 "above weighs most, token by token:").format(most=heatmap.MAX_SIDE, k=TOP))
    texts = format_numbers(values.ravel(), min(controls.precision(), PRECISION))
    cells = [[f"{text.md_escape(cols[j])} ({texts[i * values.shape[1] + j]})"
              for j in np.argsort(-values[i], kind="stable")[:TOP]] for i in rows]
    st.markdown(text.md_table([_("row"), *[str(k + 1) for k in range(TOP)]],
                              [[text.md_escape(row_labels[i]), *c] for i, c in zip(rows, cells, strict=True)]))


def as_shown(values: np.ndarray, cells: list[tuple[int, int]]) -> list[str]:  # values [r, c]
    """Cells of a heatmap's ``values`` written as the heatmap writes them (one notation for the whole matrix)."""
    texts = format_numbers(values.ravel(), min(controls.precision(), PRECISION))
    return [texts[i * values.shape[1] + j] for i, j in cells]
