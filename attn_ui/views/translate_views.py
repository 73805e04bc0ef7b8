"""A model that translates: a T5 encoder-decoder (attn_models.Translator) on an English sentence, its translation,
each output token's cross-attention over the source, cross-attention heads switched off and the explorer's edits of
one decoder layer run back: cached computations and their words, for pages/translate.py."""

from __future__ import annotations

import numpy as np
import streamlit as st

import attn_models
from attn_core import Config
from attn_ui.app import state
from attn_ui.app.i18n import _, ngettext
from attn_ui.infra import budget, settings
from attn_ui.views import model_views
from attn_ui.views.model_output import Change, intervention, percent
from attn_ui.widgets import controls, text

# A model that translates (pages/translate.py): a T5's checkpoint and the page's widgets
SOURCE = "trans_source"  # str or None: the translator the page reads (repo id or folder; tests set it)
OTHER = "trans_other"  # text_input: another T5 checkpoint
SENTENCE = "trans_sentence"  # text_input: the English sentence
#: the most characters of the sentence the page reads (controls.text_box: a longer one stays in the box, refused in
#: words); the tokens are capped after (attn_models.t5: n_seq), this bounds the tokenizer's work and the caches' keys
SENTENCE_MOST = 1_000
LAYER, HEAD = "trans_layer", "trans_head"  # selectboxes: the decoder layer and cross-attention head drawn
ENC_LAYER = "trans_enc_layer"  # selectbox: the encoder layer whose self-attention head opens
ENC_HEAD = "trans_enc_head"  # selectbox: that head
ABLATE = "trans_ablate"  # multiselect: the cross-attention heads switched off ("L2 · H5" names)
ABLATE_HOW = "trans_ablate_how"  # segmented control: "mean" or "zero"

DEFAULT_SENTENCE = "It is easy to translate languages with transformers"  # the Korean tutorial's (seed 003)
MAX_NEW = 40  # the longest translation written, in tokens (as the tutorial's max_length=40)


def still_translating(sentence: str) -> str:
    """What the page says it keeps using while the box holds more than it reads (controls.text_box): the last text
    within the limit, not that the model can read it (its tokens are checked after, and said)."""
    return _("The sentence in use is still the last one within the limit: {text}.").format(
        text=controls.quoted_text(sentence))


def operator_source() -> str:
    """The operator's translator: $ATTN_TRANSLATOR_MODEL, else attn_models.TRANSLATOR_MODEL (t5-small)."""
    return settings.settings().translator_model


# the cross- and the decoder's self-attentions [L, H, n_out, n_src or n_out] (≈ 6 · 8 · 40 · 40 · 8 bytes = 0.6 MB
# each) and the encoder's [L, H, n_src, n_src]: t5-small at the cap of 256 source tokens 25 MB, at 20 tokens 0.15 MB
@budget.cached("translation")
def translation(source: str, sentence: str, change: Change = Change()):  # noqa: B008 - a frozen value
    """The greedy translation (attn_models.Translation), once per (model, sentence, change). Between two tokens it
    gives its computing slot back and stops if the learner's browser has gone (budget.taking_turns)."""
    return model_views.model(source).translate(sentence, max_new=MAX_NEW, intervention=intervention(change),
                                               on_step=budget.taking_turns())


@budget.cached("translation_layer")
def cross_config(source: str, sentence: str, output_ids: tuple[int, ...], layer: int, head: int) -> Config:
    """Decoder layer ``layer``'s cross-attention on the translation so far (``output_ids``) as an explorer
    configuration (attn_models.Translator.cross_config)."""
    return model_views.model(source).cross_config(sentence, list(output_ids), layer, head=head)


@budget.cached("translation_encoder_layer")
def encoder_config(source: str, sentence: str, layer: int, head: int) -> Config:
    """Encoder layer ``layer``'s self-attention, its relative positions as the score bias (Translator.self_config)."""
    return model_views.model(source).self_config(sentence, layer, head=head, side="encoder")


SAID = 16  # the most output tokens whose source token the page names in words (the heatmap has them all)


def alignment_words(cross: np.ndarray, out_tokens: tuple[str, ...], src_tokens: tuple[str, ...]) -> str:
    """For each output token, the source token its query weighs most (``cross`` [n_out, n_src], one head's), in one
    sentence computed on the numbers shown (the first SAID output tokens)."""
    pairs = [_("“{out}” ← “{src}” ({w})").format(out=text.md_escape(o), src=text.md_escape(src_tokens[j]),
                                                 w=percent(float(row[j])))
             for o, row in zip(out_tokens[:SAID], cross[:SAID], strict=True) for j in [int(np.argmax(row))]]
    if len(out_tokens) > SAID:
        return _("The first {n} of the {total} output tokens, and the source token each one's query weighs most: "
                 "{pairs}.").format(n=SAID, total=len(out_tokens), pairs="; ".join(pairs))
    return _("Each output token, and the source token its query weighs most: {pairs}.").format(pairs="; ".join(pairs))


def change_words(before, after, what: str) -> str:
    """What a change (heads off, edits) did to the translation, on the translations shown."""
    if list(before.output_ids) == list(after.output_ids):
        return _("{what}, the translation is the same, token for token; the first token's probability is {after} "
                 "(as trained: {before}).").format(what=what, after=percent(float(after.probs[0])),
                                                   before=percent(float(before.probs[0])))
    a, b = [int(i) for i in before.output_ids], [int(i) for i in after.output_ids]
    same = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))  # tokens alike first
    if same == 0:
        return _("{what}, the translation changes from its first token: “{before}” becomes “{after}”.").format(
            what=what, before=text.md_escape(before.text), after=text.md_escape(after.text))
    return ngettext("{what}, the translation changes after {n} token: “{before}” becomes “{after}”.",
                    "{what}, the translation changes after {n} tokens: “{before}” becomes “{after}”.", same).format(
        what=what, n=same, before=text.md_escape(before.text), after=text.md_escape(after.text))


def follow_origin(o: attn_models.Origin) -> None:
    """Set A model that translates' sentence, decoder layer and head to a cross-attention head's origin (an encoder
    head's: its encoder layer and head), so the page shows what the explorer holds (Learn's Try it yourself)."""
    if o.side == "cross":
        st.session_state[state.KEPT].update({SENTENCE: o.sentence, LAYER: o.layer, HEAD: o.head})
    else:
        st.session_state[state.KEPT].update({SENTENCE: o.sentence, ENC_LAYER: o.layer, ENC_HEAD: o.head})
