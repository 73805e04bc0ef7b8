"""What the model does with your sentence, and what a change to its attention does to that.

The result A real model shows is what its checkpoint was trained for (attn_models computes it, float64 numpy):

- a sentence encoder (all-MiniLM-L6-v2): the cosine similarity of your sentence's embedding with other sentences';
- a masked-language model (a BERT checkpoint with its ``cls.predictions`` head): the words it puts in each [MASK].

The same result with heads switched off, with the layer you edited in the explorer run back through the model, and
how much switching off each head alone moves it ("which heads matter"). Results are kept in the server's budget
(attn_ui.infra.budget), keyed by everything they are computed from, like the forward passes of
attn_ui.views.model_views.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

import attn_models
from attn_core import Config
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import budget
from attn_ui.views import model_views
from attn_ui.widgets import numbers, text

Task = Literal["similarity", "mask"]
How = Literal["mean", "zero"]

#: the sentences your sentence is compared with until you type others (inputs of an English model: not translated)
OTHERS = ("A cat was lying on a rug.", "The dog was too tired to play.", "Prices rose again this year.")
MAX_OTHERS = 8  # other sentences compared at once (each one more forward pass per result)
TOP_K = 5  # words shown for a [MASK]
#: "which heads matter" over every layer at once only for sentences up to this many tokens. Before issue 37 it was 64:
#: about 8 s for all-MiniLM-L6-v2's 72 heads at 64 tokens, one visitor holding a computing slot that long. The heads
#: of a layer now run side by side from the layer's cached input (attn_models.bert.head_variants: 0.65 of the CPU
#: time before, measured in alternation, bench/scan.py), the cost grows about linearly with the tokens (the
#: feed-forward and projections dominate; bench/RESULTS.md, issue 37), and the slot is lent between layers
#: (budget.taking_turns): at 96 tokens every layer costs about what 64 did before, and others wait about a second at
#: a time. Longer sentences are scanned one layer at a time.
SCAN_ALL_TOKENS = 96

HOW_TEXT = {
    "mean": N_("its mean over the sentence's tokens"),
    "zero": N_("zeros"),
}


def task(model: attn_models.Model) -> Task:
    """What the model's result is: the words for a [MASK] when it has a masked-language-model head, else the
    similarity of sentence embeddings (what sentence encoders such as all-MiniLM-L6-v2 are trained for)."""
    return "mask" if model.has_mlm else "similarity"


def still_comparing(others: str) -> str:
    """What A real model says it keeps comparing with while the other sentences' box holds more than
    model_views.OTHERS_MOST characters (controls.text_box): ``others``, the box's text in use."""
    n = len(others_from(others))
    return ngettext("Still comparing yours with {n} other sentence, the one typed before.",
                    "Still comparing yours with {n} other sentences, those typed before.", n).format(n=n)


def others_from(typed: str) -> tuple[str, ...]:
    """The other sentences typed one per line: blank lines dropped, at most MAX_OTHERS.

    >>> others_from(" A cat.\\n\\n  Two dogs. \\n")
    ('A cat.', 'Two dogs.')
    """
    return tuple(line.strip() for line in typed.splitlines() if line.strip())[:MAX_OTHERS]


def head_name(layer: int, head: int) -> str:
    """A head as the page names it.

    >>> head_name(2, 5)
    'L2 · H5'
    """
    return f"L{layer} · H{head}"


def parse_head(name: str) -> tuple[int, int]:
    """(layer, head) from :func:`head_name`'s text.

    >>> parse_head("L2 · H5")
    (2, 5)
    """
    layer, head = name.split(" · ")
    return int(layer[1:]), int(head[1:])


@dataclass(frozen=True)
class Change:
    """What is changed in the model: heads switched off (``ablate``: (layer, head) pairs; each one's output
    replaced by ``how``), and/or one layer's attention replaced by an edited explorer configuration (``edited``,
    its origin's layer). Nothing: the model as trained."""

    ablate: tuple[tuple[int, int], ...] = ()
    how: How = "mean"
    edited: Config | None = None

    @property
    def none(self) -> bool:
        return not self.ablate and self.edited is None


def intervention(change: Change) -> attn_models.Intervention | None:
    """attn_models' intervention (None: the model as trained). The edited configuration runs whole (X and a drawn
    mask too) on the sentence it was opened on, unpadded; on any other sentence its weights, heads, scale, score
    function and causal mask run on that sentence's own X (attn_models.Intervention)."""
    if change.none:
        return None
    return attn_models.Intervention(ablate=frozenset(change.ablate), how=change.how, config=change.edited)


@dataclass(frozen=True, eq=False)
class Outcome:
    """The model's result on a sentence.

    similarities : ndarray [n_others] or None
        cos(your sentence's embedding, each other sentence's), for a sentence encoder.
    fills : tuple of attn_models.MaskFill or None
        The top words of each [MASK], for a masked-language model.
    """

    similarities: np.ndarray | None = None
    fills: tuple | None = None


@budget.cached("model_outcome")  # a few hundred bytes: the model's passes are not kept
def outcome(source: str, sentence: str, others: tuple[str, ...], change: Change) -> Outcome:
    """The model's result on ``sentence`` (and ``others``) with ``change``. Raises attn_models.ModelError."""
    model = model_views.model(source)
    if task(model) == "mask":
        return Outcome(fills=model.fill_mask(sentence, top_k=TOP_K, intervention=intervention(change)))
    emb = model.embed_sentences((sentence, *others), intervention=intervention(change))  # [1 + n_others, d_model]
    return Outcome(similarities=attn_models.cosine_similarities(emb)[0, 1:])


@budget.cached("model_head_effects")  # [len(layers), n_heads] floats
def head_effects(source: str, sentence: str, other: str | None, how: How, layers: tuple[int, ...],
                 _on_layer: Callable[[int], None] | None = None) -> np.ndarray:  # -> [len(layers), n_heads]
    """How much switching off each head of ``layers`` alone moves the result: the similarity of ``sentence`` and
    ``other``, or (a masked-language model, ``other`` None) the probability of the model's top word for the first
    [MASK]; after minus before. Each head reruns the layers from its own, a layer's heads side by side in two runs
    (attn_models.Model.head_effects), on two cores when the server has one to spare (budget.spare_core: a second
    computing slot, free and wanted by nobody, taken a layer at a time). bench/scan.py, every layer of MiniLM at
    64 tokens beside 9 tokens: 5.85 s on one idle core, 3.25 s on two (bench/RESULTS.md). ``_on_layer(row)`` as each
    row is done, in this thread, the computing slot lent between rows (budget.taking_turns). Raises
    attn_models.ModelError."""
    model = model_views.model(source)
    turns = budget.taking_turns(_on_layer)
    if task(model) == "mask":
        top = model.fill_mask(sentence, top_k=1)[0]  # the first [MASK]'s top word, as trained
        after = model.mask_effects(sentence, int(top.ids[0]), how=how, layers=list(layers), on_layer=turns,
                                   run_parts=budget.spare_core)
        return after - top.probs[0]  # [len(layers), n_heads]
    after = model.similarity_effects((sentence, other), how=how, layers=list(layers), on_layer=turns,
                                     run_parts=budget.spare_core)
    return after - outcome(source, sentence, (other,), Change()).similarities[0]


# ---- in words ------------------------------------------------------------------------------------------------


def percent(p: float) -> str:
    """A probability as the page writes it.

    >>> percent(0.31234), percent(0.0004), percent(1.0)
    ('31.2 %', '0.04 %', '100 %')
    """
    value = p * 100
    if value >= 99.95:
        return "100 %"
    return f"{value:.1f} %" if value >= 0.1 else f"{value:.2g} %"


def similarity_words(other: str, before: float, after: float) -> str:
    """The change of one similarity, in a sentence: 2 decimals, or 4 when the 2 are the same (the table has 4).

    >>> similarity_words("A dog", 0.7123, 0.5198)
    'The similarity of your sentence and “A dog” fell from 0.71 to 0.52.'
    >>> similarity_words("A dog", 0.7123, 0.7149)
    'The similarity of your sentence and “A dog” stayed 0.71 (0.7123 → 0.7149).'
    >>> similarity_words("A dog", -0.0994, -0.0930)
    'The similarity of your sentence and “A dog” rose from −0.10 to −0.09.'
    >>> similarity_words("A dog", -0.0024, -0.0071)
    'The similarity of your sentence and “A dog” fell from 0.00 to −0.01.'
    """
    a, b = fixed(before, 2), fixed(after, 2)
    quoted = text.md_escape(other)
    if a == b:
        return _("The similarity of your sentence and “{other}” stayed {a} ({before} → {after}).").format(
            other=quoted, a=a, before=fixed(before), after=fixed(after))
    if after < before:
        return _("The similarity of your sentence and “{other}” fell from {a} to {b}.").format(other=quoted, a=a, b=b)
    return _("The similarity of your sentence and “{other}” rose from {a} to {b}.").format(other=quoted, a=a, b=b)


def fill_words(before, after) -> str:  # attn_models.MaskFill × 2
    """What happened to a [MASK]'s top word, in a sentence.

    >>> from types import SimpleNamespace as F
    >>> fill_words(F(position=5, tokens=("mat", "floor"), probs=np.array([0.4, 0.2]), ids=np.array([7, 9])),
    ...            F(position=5, tokens=("floor", "mat"), probs=np.array([0.3, 0.25]), ids=np.array([9, 7])))
    'Token 5 ([MASK]): the top word changed from “mat” (40.0 %) to “floor” (30.0 %).'
    """
    if before.ids[0] == after.ids[0]:
        return _("Token {position} ([MASK]): the top word stayed “{word}”, its probability from {p} to {q}.").format(
            position=before.position, word=text.md_escape(before.tokens[0]), p=percent(float(before.probs[0])),
            q=percent(float(after.probs[0])))
    return _("Token {position} ([MASK]): the top word changed from “{word}” ({p}) to “{new}” ({q}).").format(
        position=before.position, word=text.md_escape(before.tokens[0]), p=percent(float(before.probs[0])),
        new=text.md_escape(after.tokens[0]), q=percent(float(after.probs[0])))


def effects_words(effects: np.ndarray, what: str, layers: list[int]) -> str:  # effects [len(layers), n_heads]
    """The heads that move the result most, in a sentence (``what``: the measure, in words; ``layers``: the layer of
    each row).

    >>> for line in effects_words(np.array([[0.0, -0.2], [0.05, 0.0004]]), "the similarity", [0, 1]).split(". "):
    ...     print(line)
    Switched off alone, L0 · H1 moves the similarity most (by −0.2000), then L1 · H0 (+0.0500)
    2 of the 4 heads move it by less than 0.001.
    """
    order = [divmod(int(i), effects.shape[1]) for i in np.argsort(-np.abs(effects), axis=None, kind="stable")]
    names = [head_name(layers[r], h) for r, h in order]
    small = int((np.abs(effects) < 1e-3).sum())
    if len(order) == 1:
        most = _("Switched off, {first} moves {what} by {a}.").format(first=names[0], what=what,
                                                                     a=signed(effects[order[0]]))
    else:
        most = _("Switched off alone, {first} moves {what} most (by {a}), then {second} ({b}).").format(
            first=names[0], what=what, a=signed(effects[order[0]]), second=names[1], b=signed(effects[order[1]]))
    return " ".join((most, _("{n} of the {total} heads move it by less than 0.001.").format(n=small,
                                                                                           total=effects.size)))


def signed(value: float) -> str:
    """A change with its sign, 4 decimals, the minus the app prints.

    >>> signed(-0.25), signed(0.0)
    ('−0.2500', '+0.0000')
    """
    return f"{value:+.4f}".replace("-", numbers.MINUS)


def fixed(value: float, decimals: int = 4) -> str:
    """A similarity as the page writes it, with the minus the app prints (none on a value that rounds to 0).

    >>> fixed(-0.09936), fixed(0.7123, 2), fixed(-0.0024, 2)
    ('−0.0994', '0.71', '0.00')
    """
    written = f"{value:.{decimals}f}"
    return written.lstrip("-") if float(written) == 0 else written.replace("-", numbers.MINUS)


def similarity_table(others: tuple[str, ...], before: np.ndarray, after: np.ndarray | None,
                     after_title: str = "") -> str:
    """Markdown: each other sentence's similarity with yours (and after a change, with the difference); the
    closest marked.

    >>> print(similarity_table(("A", "B"), np.array([0.5, 0.25]), None))
    | other sentence | similarity |
    |---|---|
    | A **(closest)** | 0.5000 |
    | B | 0.2500 |
    """
    closest = int(np.argmax(after if after is not None else before))
    header = [_("other sentence"), _("similarity")]
    if after is not None:
        header = [_("other sentence"), _("as trained"), after_title, _("change")]
    rows = []
    for i, other in enumerate(others):
        name = text.md_escape(other) + (" **" + _("(closest)") + "**" if i == closest else "")
        row = [name, fixed(before[i])]
        if after is not None:
            row += [fixed(after[i]), signed(after[i] - before[i])]
        rows.append(row)
    return text.md_table(header, rows)


def fill_table(fill, after=None, after_title: str = "") -> str:  # attn_models.MaskFill (× 2)
    """Markdown: a [MASK]'s top words and their probabilities (and after a change, its own top words beside)."""
    header = ["#", _("word"), _("probability")]
    if after is not None:
        header = ["#", _("as trained"), _("probability"), after_title, _("probability")]
    rows = []
    for r in range(len(fill.tokens)):
        row = [str(r + 1), text.md_escape(fill.tokens[r]), percent(float(fill.probs[r]))]
        if after is not None:
            row += [text.md_escape(after.tokens[r]), percent(float(after.probs[r]))]
        rows.append(row)
    return text.md_table(header, rows)
