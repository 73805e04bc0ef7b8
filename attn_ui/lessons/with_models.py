"""The lessons that look inside a pretrained model: an encoder's heads (A real model), and the models that generate
(a GPT-2's next word, a T5's translation). Each builds its configuration from the model it is given (a layer of it)
and solves on that model's numbers.

Content only: what a lesson is and how it is judged and written is attn_ui.lessons.engine.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from attn_core import (
    Config,
    MultiHeadTrace,
    softmax,
)
from attn_ui.app import registry
from attn_ui.app.i18n import N_
from attn_ui.widgets.text import isolate

if TYPE_CHECKING:  # attn_models is only needed by the model lessons, which receive a loaded model
    from attn_models import Model


from attn_ui.lessons.engine import (
    BarsView,
    Choice,
    Difference,
    Lesson,
    MatrixView,
    ModelPage,
    Solution,
    Token,
    chart_labels,
    token_choices,
)

MODEL_SENTENCE = "The cat sat on the mat."
MODEL_LAYER = 2  # all-MiniLM-L6-v2: every head of this layer gives [CLS] the largest share on this sentence


def _model_layer(model: Model) -> Config:
    """Layer MODEL_LAYER on the lesson's sentence, or the last layer of an encoder with fewer layers (the answer is
    computed on whichever layer it is)."""
    return model.layer_config(MODEL_SENTENCE, min(MODEL_LAYER, model.n_layers - 1))


# what a real model does: the lessons that run it with a head switched off or a layer replaced
MODEL_OTHER = "A cat was lying on a rug."  # compared with MODEL_SENTENCE (A real model's first other sentence)
MASKED_SENTENCE = "The cat sat on the [MASK]."
SMALL = 0.005  # a change of the similarity smaller than this is "no change" in the options


def _encoder(model: Model) -> Model:
    """The model, when it is a sentence encoder (what the similarity lessons need); else ModelError saying so."""
    from attn_models import DEFAULT_MODEL, ROLE_WORDS, ModelError, shown_name

    if model.role != "encoder":
        raise ModelError(N_("{name} is {kind}. This lesson needs a sentence encoder such as {encoder}."),
                         name=shown_name(model.name), kind=ROLE_WORDS[model.role], encoder=DEFAULT_MODEL)
    if model.has_mlm:
        raise ModelError(N_("{name} is a masked-language model: it was trained to fill in a [MASK], not to compare "
                            "sentences. This lesson needs a sentence encoder such as {encoder}."),
                         name=shown_name(model.name), encoder=DEFAULT_MODEL)
    return model


def _scanned(model: Model) -> tuple[int, int]:
    """The two layers whose heads the head lesson switches off one by one: the two in the middle."""
    return max(model.n_layers // 2 - 1, 0), model.n_layers // 2


def _middle_layer(model: Model) -> Config:
    """The later of the two layers scanned, on the lesson's sentence (Try it yourself opens it)."""
    return _encoder(model).layer_config(MODEL_SENTENCE, _scanned(model)[1])


def _query_zero(model: Model, layer: int | None = None) -> Config:
    """Layer ``layer`` (the middle one by default) on the lesson's sentence with W_Q all zeros, its bias row too:
    every query is 0."""
    cfg = _encoder(model).layer_config(MODEL_SENTENCE, model.n_layers // 2 if layer is None else layer)
    return replace(cfg, w_q=np.zeros_like(cfg.w_q))


def _masked_last_layer(model: Model) -> Config:
    """The last layer on the masked sentence; ModelError when the model cannot fill in a [MASK]."""
    from attn_models import ModelError, shown_name

    if model.role != "encoder" or not model.has_mlm:
        raise ModelError(N_("{name} has no masked-language-model head (the cls.predictions weights of a "
                            "BertForMaskedLM): it cannot fill in a [MASK]. This lesson needs a BERT checkpoint that "
                            "has one."), name=shown_name(model.name))
    return model.layer_config(MASKED_SENTENCE, model.n_layers - 1)



SINK_OPTIONS = (
    N_("[CLS], the token the tokenizer puts before the sentence"),
    N_("[SEP], the token it puts after the sentence"),
    N_("one of the words ({words})"),
)


def _solve_sink(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:  # the layer alone says it
    tokens = cfg.tokens
    real = ~np.array(cfg.is_pad) if cfg.is_pad else np.ones(cfg.n_seq, dtype=bool)  # [n_seq]: not padding
    cls, sep = 0, int(np.flatnonzero(real)[-1])  # [CLS] opens the sentence, [SEP] closes it
    words = [j for j in range(cfg.n_seq) if real[j] and j not in (cls, sep)]
    weights = np.stack([h.weights for h in trace.heads])  # [n_heads, n_seq, n_seq]
    share = weights[:, real, :].mean(axis=1)  # [n_heads, n_seq]: each key's weight, averaged over the queries
    groups = (share[:, cls], share[:, sep], share[:, words].sum(axis=1))  # in the order of SINK_OPTIONS
    top = share.argmax(axis=1)  # [n_heads]: the key each head gives the most
    counts = (int(np.sum(top == cls)), int(np.sum(top == sep)), int(np.isin(top, words).sum()))
    best = int(np.argmax(counts))
    names = ("[CLS]", "[SEP]", N_("the words"))
    o = _origin(cfg)
    sharpest = int(np.argmax(groups[best]))  # the head that gives the answer's token(s) the most
    return Solution(
        answer=best,
        facts={"model": _model_name(o), "sentence": o.sentence,
               "layer": o.layer, "n_heads": cfg.n_heads, "tokens": " ".join(map(isolate, tokens)),
               "words": ", ".join(isolate(tokens[j]) for j in words), "n_best": counts[best], "best": names[best],
               "n_cls": counts[0], "n_sep": counts[1], "n_words": counts[2], "share_cls": float(groups[0].mean()),
               "share_sep": float(groups[1].mean()), "share_words": float(groups[2].mean()), "sharpest": sharpest},
        numbers=((N_("heads whose largest share goes to [CLS]"), "n_cls"), (N_("… to [SEP]"), "n_sep"),
                 (N_("… to one of the words"), "n_words"),
                 (N_("weight on [CLS], averaged over the heads"), "share_cls"),
                 (N_("weight on [SEP], averaged over the heads"), "share_sep"),
                 (N_("weight on all the words together, averaged over the heads"), "share_words")),
        views=(BarsView(N_("Where each head's weight goes (averaged over the queries)"),
                        tuple(map(str, range(cfg.n_heads))), tuple(zip(names, groups, strict=True)),
                        y_title=N_("share of the weight"), stacked=True, category_label=N_("head {category}")),
               MatrixView(N_("Head {sharpest}'s attention weights"), trace.heads[sharpest].weights, chart_labels(cfg),
                          chart_labels(cfg), "weights")),
    )


def _similarity(model: Model, intervention=None) -> float:  # attn_models.Intervention or None
    """The cosine similarity of the lesson's two sentences, with ``intervention``."""
    from attn_models import cosine_similarities

    emb = model.embed_sentences((MODEL_SENTENCE, MODEL_OTHER), intervention=intervention)  # [2, d_model]
    return float(cosine_similarities(emb)[0, 1])


WHICH_HEAD_OPTIONS = (
    N_("head {head_a} of layer {layer_a}"),
    N_("head {head_b} of layer {layer_b}"),
    N_("neither: each moves it by less than {small}"),
)


def _solve_which_head(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    layers = _scanned(model)
    sim = _similarity(model)
    from attn_ui.infra import budget  # here: importing the course imports no Streamlit (attn_ui.lessons)

    # on two cores when the server has one to spare, as A real model's "Which heads matter" (the same numbers)
    after = model.similarity_effects((MODEL_SENTENCE, MODEL_OTHER), layers=list(layers),
                                     run_parts=budget.spare_core)  # [2, n_heads]
    change = after - sim  # [2, n_heads]
    top = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(change)), change.shape))  # (row, head): moves it most
    other = 1 - top[0]
    least = (other, int(np.argmin(np.abs(change[other]))))  # the head of the other layer that moves it least
    a, b = sorted([top, least])  # in layer order
    changes = np.array([change[a], change[b]])
    answer = 2 if np.abs(changes).max() < SMALL else int(np.argmax(np.abs(changes)))
    o = _origin(cfg)
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MODEL_SENTENCE, "other": MODEL_OTHER, "sim": sim,
               "layer_a": layers[a[0]], "head_a": a[1], "layer_b": layers[b[0]], "head_b": b[1],
               "after_a": after[a], "after_b": after[b], "change_a": changes[0], "change_b": changes[1],
               "small": SMALL, "n_heads": model.n_heads, "n_scanned": change.size, "layer_1": layers[0],
               "layer_2": layers[1], "layer_top": layers[top[0]], "head_top": top[1],
               "change_top": float(change[top])},
        numbers=((N_("the similarity, as trained"), "sim"),
                 (N_("with head {head_a} of layer {layer_a} switched off"), "after_a"),
                 (N_("… a change of"), "change_a"),
                 (N_("with head {head_b} of layer {layer_b} switched off"), "after_b"),
                 (N_("… a change of"), "change_b")),
        views=(MatrixView(N_("Change in the similarity when each head alone is switched off"), change,
                          tuple(map(str, layers)), tuple(map(str, range(model.n_heads))), y_title=N_("layer"),
                          x_title=N_("head")),),
        model_page=ModelPage(others=(MODEL_OTHER,), ablate=((layers[top[0]], top[1]),), scan=layers[top[0]]),
    )


MASK_OPTIONS = (
    N_("“{top}” stays the top word, with a higher probability"),
    N_("“{top}” stays the top word, with a lower probability"),
    N_("another word takes the top place"),
)


def _solve_masked_word(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    from attn_models import Intervention

    layer = model.n_layers - 1
    before = model.mask_probs(MASKED_SENTENCE)[0]  # [vocab]: the first [MASK]
    top = int(np.argmax(before))
    effects = model.mask_effects(MASKED_SENTENCE, top, layers=[layer])[0] - before[top]  # [n_heads]
    head = int(np.argmax(np.abs(effects)))  # the head of the last layer that moves the top word most
    after = model.mask_probs(MASKED_SENTENCE, intervention=Intervention(ablate={(layer, head)}))[0]  # [vocab]
    new_top = int(np.argmax(after))
    answer = 2 if new_top != top else 0 if after[top] > before[top] else 1
    word = model.tokenizer.id_to_token
    shown = list(dict.fromkeys([*np.argsort(-before, kind="stable")[:5], *np.argsort(-after, kind="stable")[:5]]))
    o = _origin(cfg)
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MASKED_SENTENCE, "layer": layer, "head": head,
               "n_heads": model.n_heads, "top": word(top), "p_top": before[top], "p_top_after": after[top],
               "new_top": word(new_top), "p_new": after[new_top], "change": float(effects[head]),
               "tops_before": ", ".join(word(int(i)) for i in np.argsort(-before, kind="stable")[:5]),
               "tops_after": ", ".join(word(int(i)) for i in np.argsort(-after, kind="stable")[:5])},
        numbers=((N_("the probability of “{top}”, as trained"), "p_top"),
                 (N_("… with head {head} of layer {layer} switched off"), "p_top_after"),
                 (N_("the top words, as trained"), "tops_before"),
                 (N_("… with the head switched off"), "tops_after")),
        views=(BarsView(N_("The words for the [MASK]"), tuple(word(int(i)) for i in shown),
                        ((N_("as trained"), before[shown]), (N_("the head switched off"), after[shown])),
                        N_("probability")),),
        model_page=ModelPage(ablate=((layer, head),)),
    )


ZERO_OPTIONS = (
    N_("it rises, by at least {small}"),
    N_("it falls, by at least {small}"),
    N_("it changes by less than {small}"),
)


def _solve_query_zero(cfg: Config, trace: MultiHeadTrace, model: Model) -> Solution:
    from attn_models import Intervention

    sim = _similarity(model)
    layer = _origin(cfg).layer
    every = np.array([_similarity(model, Intervention(config=cfg if i == layer else _query_zero(model, i)))
                      for i in range(model.n_layers)])  # [n_layers]: W_Q = 0 in that layer, the rest as trained
    after = float(every[layer])
    change = after - sim
    answer = 2 if abs(change) < SMALL else 0 if change > 0 else 1
    weights = np.stack([h.weights for h in trace.heads])  # [n_heads, n_seq, n_seq]
    o = _origin(cfg)
    return Solution(
        answer=answer,
        facts={"model": _model_name(o), "sentence": MODEL_SENTENCE, "other": MODEL_OTHER,
               "layer": layer, "n_heads": cfg.n_heads, "n_seq": cfg.n_seq, "sim": sim, "every": every,
               "sim_low": float(every.min()), "layer_low": int(np.argmin(every)), "sim_high": float(every.max()),
               "layer_high": int(np.argmax(every)),
               "sim_after": after, "change": change, "small": SMALL, "weight": 1 / cfg.n_seq,
               "spread": Difference(float(np.abs(weights - 1 / cfg.n_seq).max())),
               "out_spread": Difference(float(np.abs(trace.concat - trace.concat[0]).max()))},
        numbers=((N_("the similarity, as trained"), "sim"), (N_("… with W_Q of layer {layer} all zeros"), "sim_after"),
                 (N_("the change"), "change"), (N_("every attention weight in layer {layer}"), "weight"),
                 (N_("the similarity with W_Q all zeros in layer 0, 1, … in turn"), "every")),
        views=(MatrixView(N_("Head 0's attention weights with W_Q = 0"), trace.heads[0].weights, chart_labels(cfg),
                          chart_labels(cfg), "weights"),
               BarsView(N_("The similarity with W_Q all zeros in one layer"), tuple(map(str, range(model.n_layers))),
                        ((N_("as trained"), np.full(model.n_layers, sim)), (N_("W_Q all zeros"), every)),
                        N_("cosine similarity"), category_label=N_("layer {category}"))),
        model_page=ModelPage(others=(MODEL_OTHER,)),
    )


# ---- the models that generate: a GPT-2 writes the next word, a T5 translates --------------------------------------

WRITE_PROMPT = "The cat sat on the"  # English, as the model reads it (also tests/tiny_gpt2.PROMPTS[0], the reference's)
#: the sentence the translation lesson reads: the Korean tutorial's (its transformers pipeline translates it to
#: French), else, for a model whose vocabulary lacks its words (a tiny test checkpoint), a plainer one
TRANSLATE_SENTENCES = ("It is easy to translate languages with transformers", "The cat sat on the mat.")
TRANSLATE_MAX = 24  # the most tokens of the translation the lesson writes (the tutorial's is about 15 in t5-small)


def _origin(cfg: Config):  # -> attn_models.Origin: the lesson's configuration is a model's layer
    """The model's layer a model lesson's configuration is (attn_models.Origin)."""
    from attn_models import parse_origin

    return parse_origin(cfg.origin)


def _model_name(origin) -> str:  # attn_models.Origin
    """The model a lesson's configuration came from, as a page names it (a folder on the server by its name only)."""
    from attn_models import shown_name

    return shown_name(origin.model)


def _word(label: str) -> str:
    """A token label as a word in a sentence: without the space or ▁ that marks a word's start (GPT-2, T5)."""
    return label.replace("▁", " ").strip() or label


def _most_concentrated(rows: np.ndarray) -> int:  # [n_heads, n_k] -> a head
    """The head whose row puts the largest weight on a single key (the first such head on a tie)."""
    return int(np.argmax(rows.max(axis=1)))


def _causal_lm(model):  # -> attn_models.CausalLM
    """The model, when it writes (a GPT-2-family causal language model); else ModelError saying so."""
    from attn_models import CAUSAL_MODEL, ModelError, shown_name

    if model.role != "causal":
        raise ModelError(N_("{name} is not a causal language model: it does not write the next word. This lesson "
                            "needs one of the GPT-2 family, such as {causal}."), name=shown_name(model.name),
                         causal=CAUSAL_MODEL)
    return model


def _writing_head(model) -> Config:
    """On WRITE_PROMPT, the head of the last layer whose last query (the position that predicts the next word) puts
    the largest weight on a single token, with its causal mask."""
    lm = _causal_lm(model)
    last = lm.forward(WRITE_PROMPT).attentions[-1, :, -1, :]  # [n_heads, n_seq]: each head's last row
    return lm.layer_config(WRITE_PROMPT, lm.n_layers - 1, head=_most_concentrated(last))


def _solve_next_word(cfg: Config, trace: MultiHeadTrace, model) -> Solution:
    lm = _causal_lm(model)
    o = _origin(cfg)
    layer, head = o.layer, o.head
    out = lm.forward(WRITE_PROMPT)  # the logits, and every head's last row for the rule
    t = trace.heads[head if cfg.n_heads > 1 else 0]  # the whole layer, or the head alone (a wide model)
    row = t.weights[-1]  # [n_seq]: the last query's weights
    top, second = (int(j) for j in np.argsort(-row, kind="stable")[:2])
    probs = softmax(out.logits[-1])  # [vocab]: the next token, at temperature 1
    nxt = int(np.argmax(probs))
    hidden = t.weights[~t.mask]  # the weights of the cells the causal mask hides (above the diagonal)
    labels = token_choices(cfg)
    return Solution(
        answer=top,
        facts={"model": _model_name(o), "prompt": WRITE_PROMPT, "n_seq": cfg.n_seq, "layer": layer,
               "head": head, "n_heads": lm.n_heads, "last": _word(cfg.tokens[-1]), "top": _word(cfg.tokens[top]),
               "w_top": row[top], "second": _word(cfg.tokens[second]), "w_second": row[second], "w_row": row,
               "n_masked": int(hidden.size), "masked_max": Difference(float(np.abs(hidden).max())),
               "w_first": t.weights[0, 0], "next": _word(lm.piece(nxt)), "p_next": probs[nxt],
               "head_max": out.attentions[layer, :, -1, :].max(axis=1)},
        numbers=((N_("the last position's weights, token by token"), "w_row"), (N_("the largest"), "w_top"),
                 (N_("each head's largest weight in the last row, layer {layer}"), "head_max"),
                 (N_("the largest weight above the diagonal (masked)"), "masked_max"),
                 (N_("the probability of the next word, “{next}”"), "p_next")),
        views=(MatrixView(N_("Head {head} of layer {layer}: attention weights"), t.weights, labels, labels, "weights",
                          masked=~t.mask),
               BarsView(N_("The last position's weights"), labels, ((N_("weight"), row),), N_("weight"))),
        follow=(head if cfg.n_heads > 1 else 0, cfg.n_seq - 1),
    )


def _translator(model):  # -> attn_models.Translator
    """The model, when it translates (a T5 encoder-decoder); else ModelError saying so."""
    from attn_models import TRANSLATOR_MODEL, ModelError, shown_name

    if model.role != "translator":
        raise ModelError(N_("{name} is not a translator: it has no decoder that writes French. This lesson needs an "
                            "encoder-decoder of the T5 family, such as {t5}."), name=shown_name(model.name),
                         t5=TRANSLATOR_MODEL)
    return model


def readable_sentence(model) -> str:
    """The first of TRANSLATE_SENTENCES the model's tokenizer reads without an unknown token (<unk>), with the task's
    prefix; the last when none is."""
    from attn_models.t5 import PREFIX

    unk = model.tokenizer.token_to_id("<unk>")
    return next((s for s in TRANSLATE_SENTENCES if unk is None or unk not in model.encode(PREFIX + s)[1]),
                TRANSLATE_SENTENCES[-1])


#: the last model's translation for the lesson, by the model's name: {name: (sentence, attn_models.Translation)}, one
#: entry (≤ TRANSLATE_MAX tokens: a few kB), so that build and solve, run one after the other, translate once
_LAST_TRANSLATION: dict[str, tuple] = {}


def _translated(model):  # attn_models.Translator -> (sentence, attn_models.Translation)
    """The lesson's sentence and its greedy translation (once per model: build and solve both read it)."""
    if model.name not in _LAST_TRANSLATION:
        sentence = readable_sentence(_translator(model))
        translation = model.translate(sentence, max_new=TRANSLATE_MAX)
        _LAST_TRANSLATION.clear()
        _LAST_TRANSLATION[model.name] = (sentence, translation)
    return _LAST_TRANSLATION[model.name]


def _translation_head(model) -> Config:
    """The last decoder layer's cross-attention on the lesson's sentence, one query row per output token, with the
    head whose row for the first output token puts the largest weight on a single source token."""
    sentence, t = _translated(_translator(model))
    layer = model.config.n_decoder_layers - 1
    return model.cross_config(sentence, t.output_ids[:-1], layer, head=_most_concentrated(t.cross[layer, :, 0, :]))


def _solve_source_word(cfg: Config, trace: MultiHeadTrace, model) -> Solution:
    sentence, t = _translated(_translator(model))
    o = _origin(cfg)
    layer, head = o.layer, o.head
    rows = np.stack([h.weights[0] for h in trace.heads])  # [n_heads, n_src]: each head's row for output token 0
    row, mean = rows[head], rows.mean(axis=0)  # [n_src] each
    top, second = (int(j) for j in np.argsort(-row, kind="stable")[:2])
    top_mean = int(np.argmax(mean))
    out = _word(t.output_tokens[0])
    labels = token_choices(cfg)
    which = (N_("It is the sentence the Korean tutorial translates with a transformers pipeline.")
             if sentence == TRANSLATE_SENTENCES[0] else
             N_("The Korean tutorial's sentence has words this model's vocabulary does not know, so the lesson "
                "reads a plainer one."))
    return Solution(
        answer=top,
        facts={"model": _model_name(o), "source": o.prefix + sentence,
               "n_src": cfg.n_seq, "translation": t.text, "which": which, "out": out, "p_out": t.probs[0],
               "layer": layer, "head": head, "n_heads": cfg.n_heads, "top": _word(cfg.tokens[top]),
               "w_top": row[top], "second": _word(cfg.tokens[second]), "w_second": row[second],
               "row_sum": float(row.sum()), "top_mean": _word(cfg.tokens[top_mean]), "w_top_mean": mean[top_mean],
               "w_row": row, "w_mean": mean, "head_max": rows.max(axis=1), "start": cfg.y_tokens[0]},
        numbers=((N_("“{out}”'s weights over the English tokens"), "w_row"), (N_("the largest"), "w_top"),
                 (N_("each head's largest weight for “{out}”, layer {layer}"), "head_max"),
                 (N_("the weights averaged over the heads"), "w_mean"),
                 (N_("the probability the model gave “{out}”"), "p_out")),
        views=(MatrixView(N_("Every head of layer {layer}: the weights for “{out}”"), rows,
                          tuple(map(str, range(cfg.n_heads))), labels, "weights", y_title=N_("head"),
                          x_title=N_("English token")),),  # bars of 2 × n_src tokens would not fit a phone
        follow=(head, 0),
    )



# ---- the lessons, in the course's order ------------------------------------------------------------------------

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="real-model", title=N_("A real model: where the heads look"),
        build=_model_layer, family="encoder", page=registry.MODEL,
        setup=N_("The model that A real model reads, {model}, is a pretrained transformer encoder. Its "
                 "tokenizer cuts “{sentence}” into {tokens}: it adds [CLS] before the sentence and [SEP] after it. "
                 "This lesson looks at its layer {layer}, whose {n_heads} heads this app computes on the model's real "
                 "weights."),
        question=N_("Each head spreads every query's weight over the keys. Which token gets the largest share in most "
                    "of the {n_heads} heads?"),
        ask=Choice(SINK_OPTIONS), solve=_solve_sink,
        explanation=N_("{n_best} of the {n_heads} heads give their largest share to {best}. Averaged over the heads, "
                       "[CLS] takes {share_cls} of each query's weight, [SEP] {share_sep}, and all the words together "
                       "{share_words}. A head must put every query's weight somewhere, since each row of softmax sums "
                       "to 1. When what a head looks for is not in the sentence, a trained model parks the weight on a "
                       "token that is always there and means little by itself, [CLS] or [SEP]: such a token is called "
                       "an attention sink."),
        hint=N_("A real model shows every layer and head on this sentence. Type another sentence, compare the layers, "
                "and open a head in the explorer to change its numbers."),
    ),
    Lesson(
        key="head-off", title=N_("A real model: which head matters"),
        build=_middle_layer, family="encoder", page=registry.MODEL,
        setup=N_("{model} turns a sentence into one vector, its embedding; two sentences that mean much the same get "
                 "embeddings whose cosine similarity is near 1. “{sentence}” and “{other}” have a similarity of {sim}. "
                 "Switching a head off replaces its output by its mean over the sentence's tokens: what the head says "
                 "about each token is gone, its average stays."),
        question=N_("Which of these two heads, switched off alone, moves the similarity more?"),
        ask=Choice(WHICH_HEAD_OPTIONS), solve=_solve_which_head,
        explanation=N_("With head {head_a} of layer {layer_a} switched off the similarity becomes {after_a}, a change "
                       "of {change_a}; with head {head_b} of layer {layer_b} it becomes {after_b}, a change of "
                       "{change_b}. Of the {n_scanned} heads of layers {layer_1} and {layer_2}, the one that moves it "
                       "most is head {head_top} of layer {layer_top}, with a change of {change_top}. Each layer adds "
                       "its heads' output to what the layers before computed (the residual path), so switching one "
                       "head off takes away only its own part of what the model builds, and the other heads keep "
                       "theirs."),
        hint=N_("A real model opens on these two sentences with head {head_top} of layer {layer_top} switched off, "
                "and “Which heads matter” switches off each head of layer {layer_top} in turn. Switch off several "
                "heads at once, or choose zeros instead of the mean, and watch the similarity move further."),
    ),
    Lesson(
        key="masked-word", title=N_("A real model: a masked word without one head"),
        build=_masked_last_layer, family="masked", page=registry.MODEL,
        setup=N_("{model} has a masked-language-model head: for “{sentence}” it puts “{top}” in the [MASK], with a "
                 "probability of {p_top}. Now switch off head {head} of layer {layer}, its last layer: the head's "
                 "output is replaced by its mean over the sentence's tokens. Of that layer's {n_heads} heads, it is "
                 "the one that moves the probability of “{top}” most."),
        question=N_("What does the model put in the [MASK] with that head switched off?"),
        ask=Choice(MASK_OPTIONS), solve=_solve_masked_word,
        explanation=N_("With head {head} of layer {layer} switched off, the probability of “{top}” goes from {p_top} "
                       "to {p_top_after}, and the most probable word is now “{new_top}”, with {p_new}. The last "
                       "layer's output goes straight to the masked-language-model head: what its heads say about the "
                       "[MASK] token passes only W_O, the feed-forward block and that head (with their LayerNorms) "
                       "on its way to the prediction. The mean keeps what the head adds on average, so the change "
                       "comes from what it said about each token."),
        hint=N_("A real model opens on this sentence with head {head} of layer {layer} switched off, the top words "
                "before and after side by side. Switch off other heads, or choose zeros instead of the mean."),
    ),
    Lesson(
        key="query-zero", title=N_("A real model: W_Q set to zero"),
        build=_query_zero, family="encoder", page=registry.MODEL,
        setup=N_("{model} gives “{sentence}” and “{other}” a cosine similarity of {sim}. Now set W_Q of its layer "
                 "{layer} to zeros, its bias row too: every query is a row of zeros and every score is 0, so each of "
                 "the layer's {n_heads} heads spreads every query's weight evenly over the sentence's tokens. The "
                 "rest of the model stays as trained."),
        question=N_("What happens to the similarity of the two sentences?"),
        ask=Choice(ZERO_OPTIONS), solve=_solve_query_zero,
        explanation=N_("The similarity goes from {sim} to {sim_after}, a change of {change}. In layer {layer} every "
                       "weight is now {weight} for the {n_seq} tokens of “{sentence}” (the largest difference is "
                       "{spread}), so each head's output is the plain average of its value rows, the same for every "
                       "token (the largest difference between two tokens' outputs is {out_spread}). The layer no "
                       "longer tells the tokens apart, and the layers after it work on what is left. Set to zero in "
                       "each layer in turn, W_Q gives similarities from {sim_low} (layer {layer_low}) to {sim_high} "
                       "(layer {layer_high}): what a layer's attention adds depends on the layer."),
        hint=N_("A real model opens with this layer in the explorer, its W_Q at zero: “Your edits, run through the "
                "model” compares the similarities with the model as trained. Press Back to the model's weights, "
                "then change only a few cells of W_Q on Inputs & weights and come back to see how far the "
                "similarity moves."),
    ),
    Lesson(
        key="next-word", title=N_("Which earlier token does the next word look at?"),
        build=_writing_head, family="causal", page=registry.GENERATE,
        setup=N_("{model} is a decoder of the GPT-2 family: it reads “{prompt}” as {n_seq} tokens and writes what "
                 "comes next, one token at a time. The last position, “{last}”, is the one whose output predicts the "
                 "next word. This lesson looks at head {head} of layer {layer}, the last layer: of its {n_heads} "
                 "heads, it is the one whose last query puts the largest weight on a single token."),
        question=N_("Which token does the last position's query weigh most in this head?"),
        ask=Token(), solve=_solve_next_word,
        explanation=N_("Head {head} of layer {layer} gives “{top}” {w_top} of the last position's weight, and the "
                       "runner-up, “{second}”, {w_second}. The causal mask lets each position read itself and the "
                       "tokens before it, never a later one: the largest of the {n_masked} weights above the diagonal "
                       "is {masked_max}, and the first token, which sees only itself, gives itself {w_first}. Only "
                       "the last position has read the whole prompt, so its output is the one the model turns into "
                       "the next word: “{next}”, with a probability of {p_next}."),
        hint=N_("A model that writes opens on this prompt with head {head} of layer {layer} drawn large, and the "
                "explorer holds this head with its causal mask. Type another prompt and see where the last row's "
                "weight goes, or write on and watch each new token's row."),
    ),
    Lesson(
        key="source-word", title=N_("Which English word does this French word come from?"),
        build=_translation_head, family="translator", page=registry.TRANSLATE,
        setup=N_("{model} is an encoder-decoder that translates: its encoder reads “{source}” ({n_src} tokens with "
                 "the task's prefix and the end token), and its decoder writes “{translation}” one token at a time. "
                 "{which} This lesson follows the first token the decoder writes, “{out}”, in head {head} of layer "
                 "{layer}, the last decoder layer: of its {n_heads} heads, the one whose weights for that token put "
                 "the most on a single English token."),
        question=N_("Which English token does “{out}” give the most weight in this head?"),
        ask=Token(), solve=_solve_source_word,
        explanation=N_("Head {head} of layer {layer} gives “{top}” {w_top} of the weight of “{out}”, and the "
                       "runner-up, “{second}”, {w_second}. This is cross-attention: the queries come from the French "
                       "being written (the decoder's position that chose “{out}”), the keys and values from the "
                       "English the encoder read, so the row of weights is spread over the {n_src} English tokens "
                       "and sums to {row_sum}. No mask hides any of them: the whole English sentence is there before "
                       "the first French word is written. Averaged over the layer's {n_heads} heads, “{top_mean}” "
                       "takes the most, {w_top_mean}."),
        hint=N_("Try it yourself opens A model that translates on this sentence, decoder layer {layer} and head "
                "{head}; there, Open this cross-attention head in the explorer puts it on Score functions. Y's first "
                "row, {start}, is the decoder's start, whose output chose “{out}”: the queries are the rows of Y (the "
                "French being written), the keys and values the rows of X (the English); change a row of X and watch "
                "the weights move."),
    ),
)
