"""A model that writes: a causal language model (GPT-2 or Llama family: attn_models.CausalLM, LlamaLM) on a prompt,
its next-token distribution at a temperature, token-by-token generation, heads switched off, the heads' groups: cached
computations and their words.

Chart factories come from attn_ui.lessons.lesson_views (bars) and attn_ui.widgets.heatmap; the rest is Streamlit glue
for
pages/generate.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import streamlit as st

import attn_models
from attn_ui.app import state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import budget, settings
from attn_ui.views import model_views
from attn_ui.views.model_output import Change, intervention, percent
from attn_ui.widgets import controls, text
from attn_ui.widgets.numbers import format_number

# A model that writes (pages/generate.py): a causal language model's checkpoint and the page's widgets
SOURCE = "gen_source"  # str or None: the causal model the page reads (repo id or folder; tests set it)
OTHER = "gen_other"  # text_input: another causal checkpoint
PROMPT = "gen_prompt"  # text_input: the prompt
#: the most characters of the prompt the page reads (controls.text_box: a longer one stays in the box, refused in
#: words); the tokens are capped after (attn_models: n_seq), this bounds the tokenizer's work and the caches' keys
PROMPT_MOST = 2_000
TEMPERATURE = "gen_temperature"  # slider: the temperature the logits are divided by
N_NEW = "gen_n_new"  # whole number box: how many tokens a click writes
MODE = "gen_mode"  # segmented control: "greedy" or "sample"
SEED = "gen_seed"  # whole number box: the seed of a sampled text
WRITTEN = "gen_written"  # the arguments of the last text written (attn_ui.views.generate_views.generation), or None
LAYER, HEAD = "gen_layer", "gen_head"  # selectboxes: the head whose attention the page draws
VIEW = "gen_view"  # the model view chart (its click selection)
ABLATE = "gen_ablate"  # multiselect: the heads switched off ("L2 · H5" names)
ABLATE_HOW = "gen_ablate_how"  # segmented control: "mean" or "zero"

DEFAULT_PROMPT = "The cat sat on the"  # input of an English model: not translated
TOP_K = 10  # the most probable next tokens shown
COMPARED = 8  # tokens in a chart of two distributions side by side (two bars each: 8 groups fit the main column)
MAX_NEW = 20  # the most tokens one click writes (each a step on the key/value cache: attn_models.CausalLM.generate)
TEMPERATURES = (0.1, 2.0)  # the slider's ends
MODES = {"greedy": N_("greedy"), "sample": N_("sampled")}  # each next token: the most probable, or drawn at random


def still_continuing(prompt: str) -> str:
    """What the page says it keeps using while the box holds more than it reads (controls.text_box): the last text
    within the limit, not that the model can read it (its tokens are checked after, and said)."""
    return _("The prompt in use is still the last one within the limit: {text}.").format(
        text=controls.quoted_text(prompt))


def still_writing(n_new: int) -> str:
    """What the page says it keeps using while the box of tokens to write holds what is refused (controls.whole_box)."""
    return ngettext("Still writing {n} token per click.", "Still writing {n} tokens per click.", n_new).format(n=n_new)


def operator_source() -> str:
    """The operator's causal model: $ATTN_CAUSAL_MODEL, else attn_models.CAUSAL_MODEL (distilgpt2)."""
    return settings.settings().causal_model


@budget.cached("causal_forward")  # [n_layers, n_heads, n, n] attentions and the hidden states: as model_forward
def forward(source: str, prompt: str, change: Change = Change()):  # noqa: B008 - a frozen value
    """The model's forward pass on the prompt (attn_models.CausalOutput), once per (model, prompt, change)."""
    return model_views.model(source).forward(prompt, intervention=intervention(change))


@budget.cached("causal_next")  # a few hundred bytes
def next_token(source: str, prompt: str, temperature: float, change: Change = Change()):  # noqa: B008
    """The TOP_K most probable next tokens at ``temperature`` (attn_models.NextToken)."""
    return model_views.model(source).next_token(prompt, temperature=temperature, top_k=TOP_K,
                                                intervention=intervention(change))


@budget.cached("causal_generation")  # one attention row per step and layer × head: ≈ n_new · L · H · n · 8 bytes
def generation(source: str, prompt: str, n_new: int, sample: bool, temperature: float, seed: int,
               change: Change = Change(), _on_step: Callable | None = None):  # noqa: B008
    """``n_new`` tokens written after the prompt (attn_models.Generation); ``_on_step(i, step)`` is called as each
    comes (the page draws it), the first time only: later runs read the kept result. Between two tokens the write
    gives its computing slot back and stops if the learner's browser has gone (budget.taking_turns)."""
    return model_views.model(source).generate(prompt, n_new, sample=sample, temperature=temperature, seed=seed,
                                              intervention=intervention(change), on_step=budget.taking_turns(_on_step))


def compared_ids(before: np.ndarray, after: np.ndarray, n: int = COMPARED) -> list[int]:  # int [k] each -> n ids
    """The tokens a chart of two distributions shows: the top half of each one's most probable tokens (both top
    tokens, whatever they are), then the rest of each, in order, without repeats, at most ``n``.

    >>> compared_ids(np.array([1, 2, 3, 4]), np.array([9, 1, 8, 7]), 4)
    [1, 2, 9, 3]
    """
    half = n // 2
    order = [*before[:half].tolist(), *after[:half].tolist(), *before[half:].tolist(), *after[half:].tolist()]
    return list(dict.fromkeys(int(i) for i in order))[:n]


def entropy_bits(probs: np.ndarray) -> float:  # [vocab] -> bits
    """The entropy of a distribution in bits (0 · log 0 taken as 0).

    >>> entropy_bits(np.array([0.5, 0.5, 0.0]))
    1.0
    """
    p = probs[probs > 0]
    return float(-(p * np.log2(p)).sum())


def label(token: str) -> str:
    """A token as a chart names it: its spaces made visible (“␣cat”: GPT-2's tokens carry the space before a word),
    a line break as ↵.

    >>> label(" cat"), label("\\n"), label("")
    ('␣cat', '↵', '∅')
    """
    return token.replace(" ", "␣").replace("\n", "↵") or "∅"


def shown(token: str) -> str:
    """:func:`label`, Markdown escaped: a token in a sentence or a table on the page."""
    return text.md_escape(label(token))


def temperature_words(temperature: float, top: float, top_at_1: float, bits: float, bits_at_1: float) -> str:
    """What the temperature did, on the numbers shown: the top token's probability and the entropy at ``temperature``
    and at 1."""
    t = format_number(temperature, 2, "short")
    if math.isclose(temperature, 1.0):
        return _("At temperature 1 the probabilities are the model's own: softmax of its logits. The entropy of the "
                 "whole distribution is {bits} bits.").format(bits=f"{bits:.2f}")
    if temperature < 1:
        how = _("The logits are divided by T = {t} before the softmax: below 1, the differences grow and the "
                "distribution sharpens (as a divisor below 1 sharpens attention on Scaling).")
    else:
        how = _("The logits are divided by T = {t} before the softmax: above 1, the differences shrink and the "
                "distribution flattens (as √d_k flattens attention on Scaling).")
    return " ".join([how.format(t=t), _(
        "The most probable token has {top} (at T = 1: {top_1}); the entropy is {bits} bits (at T = 1: {bits_1})."
    ).format(top=percent(top), top_1=percent(top_at_1), bits=f"{bits:.2f}", bits_1=f"{bits_at_1:.2f}")])


def ablation_words(before, after, after_top_before: float, before_top_after: float, n_off: int) -> str:
    """What switching heads off did to the next token, on the numbers shown: ``before`` and ``after`` are the
    NextToken of the model as trained and with the heads off; ``after_top_before`` is the probability the trained
    model gives to the new top token, ``before_top_after`` the one the changed model gives to the old top token."""
    off = ngettext("With {n} head off", "With {n} heads off", n_off).format(n=n_off)
    return change_words(off, before, after, after_top_before, before_top_after)


def edit_words(before, after, after_top_before: float, before_top_after: float) -> str:
    """:func:`ablation_words` for the learner's edits of a layer run back."""
    return change_words(_("With your edits"), before, after, after_top_before, before_top_after)


def change_words(off: str, before, after, after_top_before: float, before_top_after: float) -> str:
    """“{off}, the most probable next token is still …” or “… changes from … to …”, on the numbers shown."""
    if int(before.ids[0]) == int(after.ids[0]):
        return _("{off}, the most probable next token is still “{token}”: {p_before} as trained, {p_after} "
                 "now.").format(off=off, token=shown(before.tokens[0]), p_before=percent(float(before.probs[0])),
            p_after=percent(float(after.probs[0])))
    return _("{off}, the most probable next token changes from “{old}” ({old_before} as trained, {old_after} now) to "
             "“{new}” ({new_after} now, {new_before} as trained).").format(
        off=off, old=shown(before.tokens[0]), old_before=percent(float(before.probs[0])),
        old_after=percent(before_top_after), new=shown(after.tokens[0]), new_after=percent(float(after.probs[0])),
        new_before=percent(after_top_before))


def kv_groups(model) -> tuple[int, ...] | None:
    """The key/value head each query head reads (``model.kv_head``), when the model's heads share them (grouped-query
    attention); None when each head has its own."""
    if model.n_kv_heads >= model.n_heads:
        return None
    return tuple(model.kv_head(h) for h in range(model.n_heads))


def kv_group_words(groups: tuple[int, ...]) -> str:
    """Which query heads share which key/value head, from :func:`kv_groups`.

    >>> print(kv_group_words((0, 0, 0, 1, 1, 1)))
    Heads 0–2 share K/V head 0 · heads 3–5 share K/V head 1.
    >>> print(kv_group_words((0, 0, 0, 0)))
    Heads 0–3 share K/V head 0.
    """
    parts = []
    for g in dict.fromkeys(groups):
        heads = [h for h, k in enumerate(groups) if k == g]
        parts.append(_("heads {first}–{last} share K/V head {g}").format(first=heads[0], last=heads[-1], g=g)
                     if len(heads) > 1 else _("head {first} has K/V head {g} alone").format(first=heads[0], g=g))
    text_ = " · ".join(parts)
    return text_[:1].upper() + text_[1:] + "."


def attention_words(model) -> str:
    """The model's attention in a sentence, from what it says of itself (RoPE, grouped-query heads, a window)."""
    cfg = model.config
    parts = []
    if model.rope_base is not None:
        parts.append(_("RoPE turns each head's queries and keys by their positions (base {base})").format(
            base=f"{model.rope_base:,.0f}" if float(model.rope_base).is_integer() else f"{model.rope_base:g}"))
    else:
        parts.append(_("positions are added to the input before the first layer"))
    if model.n_kv_heads < cfg.n_heads:
        parts.append(_("grouped-query attention (GQA): {heads} query heads share {kv} K/V heads").format(
            heads=cfg.n_heads, kv=model.n_kv_heads))
    else:
        parts.append(_("{heads} heads, each with its own keys and values").format(heads=cfg.n_heads))
    if model.window is not None:
        parts.append(_("a sliding window: each query sees itself and the {before} tokens before it").format(
            before=model.window - 1))
    joined = parts[0]
    for part in parts[1:]:  # "; " in English, "；" in Chinese: the joiner is a message of its own
        joined = _("{first}; {then}").format(first=joined, then=part)
    return _("Its attention: {parts}.").format(parts=joined)


def head_choice(model, head: int) -> str:
    """A head as the page's head picker names it: its number, and its K/V head when heads share them."""
    if model.n_kv_heads >= model.n_heads:
        return str(head)
    return _("{head} (K/V {g})").format(head=head, g=model.kv_head(head))


def follow_origin(o: attn_models.Origin) -> None:
    """Set A model that writes' prompt, layer and head to a GPT-2 head's origin, so the page shows what the explorer
    holds (Learn's Try it yourself)."""
    st.session_state[state.KEPT].update({PROMPT: o.sentence, LAYER: o.layer, HEAD: o.head})
