"""A real model: a pretrained BERT encoder's attention on your sentence, every layer and head, and one layer
opened in the explorer with its real numbers."""

from functools import partial

import numpy as np
import streamlit as st

import attn_models
from attn_core import LIMITS
from attn_ui.app import i18n, origins, registry, state
from attn_ui.app.i18n import _, ngettext
from attn_ui.shell import frame
from attn_ui.views import across_views, model_output, model_views, neuron_views
from attn_ui.views.model_views import (  # the page's widget keys
    ABLATE,
    EFFECT_ON,
    EFFECTS,
    HEAD,
    LAYER,
    OTHER,
    OTHERS,
    PAD_TO,
    SENTENCE,
    VIEW,
)
from attn_ui.views.model_views import ABLATE_HOW as HOW
from attn_ui.widgets import charts, controls, heatmap, text

frame.page_start(registry.MODEL)

DEFAULT_SENTENCE = "The cat sat on the mat because it was tired."  # input of an English model: not translated


st.markdown(_(
    "The same attention you edit on the other pages, in a **pretrained transformer**: a BERT-family encoder reads "
    "your sentence, and every one of its self-attention layers is computed by this app's own core (`attn_core`, "
    "float64 numpy), on the model's real weights. Pick a head, then **open it in the explorer**: every page then "
    "shows and lets you edit that layer's real X, W_Q, W_K, W_V and W_O."
))

# ---- the model ---------------------------------------------------------------------------------------------
source = model_views.source()
model = model_views.model_box(  # a repo not on this server: a button first
    "encoder", source, source_key=model_views.SOURCE, other_key=OTHER, download_key="model_download",
    not_it=_("{name} is not an encoder (BERT family): it is read on {page}."),
    labels=(_("A Hugging Face repo id (owner/name)"),
            _("A Hugging Face repo id (owner/name) or a folder on this machine")),
    help_text=_("A BERT-family encoder with config.json, tokenizer.json and model.safetensors whose widths fit the "
                "app's caps: hidden size up to {most}, so that one layer at {n} tokens (X with its bias column, W_Q, "
                "W_K, W_V, W_O) is within {cells:,} cells; at most {heads} heads. Empty: the default model.").format(
        most=attn_models.bert.largest_hidden(), n=LIMITS.n_seq, cells=LIMITS.total_cells, heads=LIMITS.n_heads),
    placeholder=attn_models.default_model(i18n.language()))
if model is None:
    st.stop()
if (came_from := origins.origin_of(state.config())) is not None and came_from.model != source:
    st.info(_("The configuration in the explorer came from another model, {model}: see **In the explorer now** at "
              "the end of this page.").format(model=text.md_escape(attn_models.shown_name(came_from.model))),
            icon=":material/info:")
cfg_m = model.config
wordpiece = cfg_m.family == "bert"  # else XLM-RoBERTa's sentencepiece, <s> </s> <pad> (attn_models.BertConfig.specials)
first_token, last_token, pad_token = cfg_m.specials
st.caption((_("**{name}** · {layers} layers × {heads} heads · d_model {d_model} · d_k {d_k} per head · feed-forward "
              "{d_ff} · vocabulary {vocab:,} WordPiece tokens") if wordpiece else
            _("**{name}** · {layers} layers × {heads} heads · d_model {d_model} · d_k {d_k} per head · feed-forward "
              "{d_ff} · vocabulary {vocab:,} sentencepiece tokens")).format(
    name=text.md_escape(attn_models.shown_name(model.name)), layers=cfg_m.n_layers, heads=cfg_m.n_heads,
    d_model=cfg_m.d_model, d_k=cfg_m.d_k, d_ff=cfg_m.d_ff, vocab=cfg_m.vocab_size))

# ---- the sentence ----------------------------------------------------------------------------------------------
left, right = st.columns([4, 1], vertical_alignment="bottom")
sentence = controls.text_box(  # what is pasted stays in the box; over the limit: said, the last sentence read kept
    _("Sentence"), SENTENCE, DEFAULT_SENTENCE, model_views.SENTENCE_MOST, model_views.still_reading, where=left)
pad_to = controls.whole_box(  # what is typed, as typed ("1e1" is 10); refused in words, the padding in use kept
    _("Pad to (tokens)"), PAD_TO, 0, 0, cfg_m.max_tokens, model_views.still_padding, where=right,
    help=(_("Append [PAD] tokens up to this length; the padding mask keeps every query from attending to them. "
            "0: no padding. At most {most}.").format(most=cfg_m.max_tokens) if wordpiece else
          _("Append {pad} tokens up to this length; the padding mask keeps every query from attending to them. "
            "0: no padding. At most {most}.").format(pad=pad_token, most=cfg_m.max_tokens)))
if not sentence.strip():  # only [CLS] and [SEP] (or the family's two) would be read: nothing of the learner's
    st.info(_("Type a sentence: the model reads it and every head's attention on it is drawn here."),
            icon=":material/info:")
    st.stop()
enc = model.encode(sentence, pad_to or None)
n_seq = len(enc.tokens)
tokens_line = (_("**{n} WordPiece tokens** (with [CLS] and [SEP]; at most {most})").format(n=n_seq,
                                                                                           most=cfg_m.max_tokens)
               if wordpiece else
               _("**{n} tokens** (with {first} and {last}; at most {most})").format(
                   n=n_seq, first=text.md_escape(first_token), last=text.md_escape(last_token), most=cfg_m.max_tokens))
st.markdown(tokens_line + " · " + " · ".join(text.md_escape(t) for t in enc.tokens[:cfg_m.max_tokens + 1]))
try:
    model.check_length(n_seq)
except attn_models.ModelError as err:
    st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
    st.stop()

run = model_views.forward(source, sentence, pad_to)

# ---- every layer and head, and beside them the one picked ---------------------------------------------------
st.header(_("Every layer and head"))
st.caption(_("One small heatmap per head: row = query token, column = key token, darker = more weight; hover a cell "
             "for its tokens and weight, click a head to see it large beside them (below them on a narrow screen). "
             "Heads of one layer read the same input; each layer reads the one before."))
controls.focus_control(text.numbered(run.tokens), "model", st.sidebar)  # beside: the large view stays on screen
side_by_side = st.container(horizontal=True, gap="small")  # wraps: on a phone the large view comes right under
with side_by_side.container(width="content"):
    charts.show_chart(model_views.model_view(run.attentions, run.tokens, run.is_pad), key=VIEW,
                      on_select=partial(model_views.pick_from_view, VIEW, LAYER, HEAD), selection_mode=model_views.PICK)
with (one := side_by_side.container(width=model_views.ONE_PX)):
    st.subheader(_("One head"))
    pick = st.container(horizontal=True)
    layer = pick.selectbox(_("Layer"), list(range(cfg_m.n_layers)), width=120,
                           **state.bind(LAYER, state.kept(LAYER, 0, list(range(cfg_m.n_layers)))))
    head = pick.selectbox(_("Head"), list(range(cfg_m.n_heads)), width=120,
                          **state.bind(HEAD, state.kept(HEAD, 0, list(range(cfg_m.n_heads)))))
    weights = run.attentions[layer, head]  # [n_seq, n_seq]
    labels = text.numbered(run.tokens)
    precision = min(controls.precision(), 2)
    with st.container(horizontal=True, wrap=False):  # on a phone, narrower than the chart: it scrolls sideways
        charts.show_chart(heatmap.heatmap(
            weights, labels, labels, kind="weights", precision=precision, x_title=_("key"), y_title=_("query"),
            title=_("layer {layer}, head {head}: attention weights").format(layer=layer, head=head),
            masked=np.broadcast_to(run.is_pad, weights.shape), px=model_views.one_px(labels, weights, precision),
            room=model_views.one_room(labels)))
    # under the heatmap, so that the heatmap starts high enough to be whole on the first screen beside the grid
    st.markdown(_("**Layer {layer}, head {head}**: {what}.").format(
        layer=layer, head=head, what=text.md_escape(model_views.head_text(weights, run.tokens, run.is_pad))))
    if st.button(_("Open this head in the explorer"), key="model_open", icon=":material/open_in_new:",
                 help=_("Loads this layer into the configuration: Inputs & weights, Step by step, Scaling, Masking, "
                        "Multi-head and Share & export then work on its real numbers (this head chosen).")):
        if message := model_views.open_layer(source, sentence, pad_to, layer, head):
            st.error(text.md_escape(message), icon=":material/error:")
        else:
            st.switch_page(registry.STEPS.file)
opening = dict(layer=layer, n=n_seq, d_model=cfg_m.d_model, rows=cfg_m.d_model + 1, heads=cfg_m.n_heads, d_k=cfg_m.d_k)
if run.is_pad.any():
    one.caption(_("Opening it puts layer {layer} into the explorer: X = the layer's input ({n} tokens × d_model "
                  "{d_model}) with a constant-1 column appended (the bias feature, column {d_model}); W_Q, W_K, W_V = "
                  "the layer's projections ({rows} × {d_model}, their bias the last row); {heads} heads of d_k {d_k}; "
                  "W_O = its output projection; scaled by √d_k; the padding mask.").format(**opening))
else:
    one.caption(_("Opening it puts layer {layer} into the explorer: X = the layer's input ({n} tokens × d_model "
                  "{d_model}) with a constant-1 column appended (the bias feature, column {d_model}); W_Q, W_K, W_V = "
                  "the layer's projections ({rows} × {d_model}, their bias the last row); {heads} heads of d_k {d_k}; "
                  "W_O = its output projection; scaled by √d_k.").format(**opening))
neuron_views.section(attn_models.Origin("encoder", source, layer, head, sentence, pad_to=pad_to), key="model_neuron",
                     shown=weights, labels=(labels, labels))

# ---- across tokens and layers: several tokens together, attention rollout ----------------------------------------
across = across_views.encoder_sides(run.attentions, run.tokens, run.is_pad, layer)
across_views.tokens_summed(across)
across_views.rollout(across)

# ---- what the model does, and with heads switched off -------------------------------------------------------------
st.header(_("What the model does"))
task = model_output.task(model)
others: tuple[str, ...] = ()
if task == "similarity":
    st.caption(_("This model was trained to turn a sentence into one vector, its **embedding**: the mean of the last "
                 "layer's rows over the sentence's tokens, scaled to length 1. Sentences that mean much the same get "
                 "embeddings that point the same way: their cosine similarity (the dot product of the two) is near 1."))
    others = model_output.others_from(controls.text_box(
        _("Other sentences, one per line (at most {most})").format(most=model_output.MAX_OTHERS), OTHERS,
        "\n".join(model_output.OTHERS), model_views.OTHERS_MOST, model_output.still_comparing, area=True, height=110))
    lengths = [len(model.encode(other).tokens) for other in others]  # with [CLS] and [SEP] (<s> and </s>)
    for i, n_other in enumerate(lengths):  # one too long for the model is left out, named (the others still compare)
        if n_other > cfg_m.max_tokens:
            st.warning((_("Other sentence {i} is {n} WordPiece tokens; the model reads at most {most}: it is left "
                          "out until you shorten it.") if wordpiece else
                        _("Other sentence {i} is {n} tokens; the model reads at most {most}: it is left out until you "
                          "shorten it.")).format(i=i + 1, n=n_other, most=cfg_m.max_tokens),
                       icon=":material/warning:")
    others = tuple(o for o, n_other in zip(others, lengths, strict=True) if n_other <= cfg_m.max_tokens)
    if not others:
        st.info(_("Type at least one other sentence to compare yours with."), icon=":material/info:")
elif "[MASK]" not in enc.tokens:
    st.info(_("This model has a masked-language-model head: put [MASK] in the sentence above (for example “The cat "
              "sat on the [MASK].”) and it says which words fit there."), icon=":material/info:")
can_run = bool(others) if task == "similarity" else "[MASK]" in enc.tokens
if can_run:
    heads = [model_output.head_name(layer, head) for layer in range(cfg_m.n_layers) for head in range(cfg_m.n_heads)]
    st.subheader(_("Switch heads off"))
    controls_row = st.container(horizontal=True, vertical_alignment="bottom")
    off = controls_row.multiselect(
        _("Heads switched off"), heads, placeholder=_("none: the model as trained"), width=420,
        **state.bind(ABLATE, [h for h in state.kept(ABLATE, []) if h in heads]))
    how = controls_row.segmented_control(
        _("A head switched off gives"), list(model_output.HOW_TEXT), format_func=lambda k: _(model_output.HOW_TEXT[k]),
        help=_("Its mean (the default): every token gets the head's average output over this sentence, so what the "
               "head adds on average stays and only what it says about each token is gone. Zeros: the head adds "
               "nothing, an input the next weights never saw in training, so the change is larger and partly that."),
        **state.bind(HOW, state.kept(HOW, "mean", list(model_output.HOW_TEXT))))
    how = how or "mean"
    try:
        trained = model_output.outcome(source, sentence, others, model_output.Change())
        change = model_output.Change(tuple(sorted(map(model_output.parse_head, off))), how)
        after = model_output.outcome(source, sentence, others, change) if off else None
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        st.stop()
    switched = ngettext("{n} head off", "{n} heads off", len(off)).format(n=len(off))
    if task == "similarity":
        if after is not None:
            st.markdown(" ".join(model_output.similarity_words(o, b, a) for o, b, a in
                                 zip(others, trained.similarities, after.similarities, strict=True)))
        st.markdown(model_output.similarity_table(others, trained.similarities,
                                                  None if after is None else after.similarities, switched))
    else:
        for i, fill in enumerate(trained.fills):
            if after is not None:
                st.markdown(model_output.fill_words(fill, after.fills[i]))
            st.markdown(model_output.fill_table(fill, None if after is None else after.fills[i], switched))

    st.subheader(_("Which heads matter"))
    n_all = cfg_m.n_layers * cfg_m.n_heads
    if task == "similarity":
        measured = st.selectbox(_("Measure the similarity of your sentence with"), range(len(others)),
                                format_func=lambda i: others[i],
                                **state.bind(EFFECT_ON, min(int(state.kept(EFFECT_ON, 0)), len(others) - 1)))
        what = _("the similarity of your sentence and “{other}”").format(other=text.md_escape(others[measured]))
    else:
        measured = None
        what = _("the probability of “{word}” at token {position}").format(
            word=text.md_escape(trained.fills[0].tokens[0]), position=trained.fills[0].position)
    longest = max(int((~enc.is_pad).sum()), 0 if measured is None else len(model.encode(others[measured]).tokens))
    scans = [*range(cfg_m.n_layers), *(["all"] if longest <= model_output.SCAN_ALL_TOKENS else [])]
    if longest > model_output.SCAN_ALL_TOKENS:  # a public server's two cores: every layer would take many seconds
        st.caption(_("Sentences of more than {most} tokens are scanned one layer at a time.").format(
            most=model_output.SCAN_ALL_TOKENS))
    scan = st.selectbox(_("Switch off each head of"), scans, placeholder=_("choose a layer: one run per head"),
                        format_func=lambda v: _("every layer ({n} runs)").format(n=n_all) if v == "all" else
                        _("layer {layer} ({n} runs)").format(layer=v, n=cfg_m.n_heads),
                        **state.bind(EFFECTS, state.kept(EFFECTS, None) if state.kept(EFFECTS, None) in scans
                                     else None))
    if scan is not None:  # one run per head of the layers chosen
        rows = list(range(cfg_m.n_layers)) if scan == "all" else [scan]
        other = None if measured is None else others[measured]
        done = _("{done} of {n} layers done")  # layers are numbered from 0: "layer 6 of 6" would name none
        progress = st.progress(0.0, text=done.format(done=0, n=len(rows))) if len(rows) > 1 else None
        try:  # [len(rows), n_heads]
            effects = model_output.head_effects(source, sentence, other, how, tuple(rows), _on_layer=None if
                                                progress is None else lambda i: progress.progress(
                                                    (i + 1) / len(rows), text=done.format(done=i + 1, n=len(rows))))
        except attn_models.ModelError as err:
            st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
            st.stop()
        if progress is not None:
            progress.empty()
        st.markdown(model_output.effects_words(effects, what, rows))
        charts.show_chart(heatmap.heatmap(
            effects, [_("layer {layer}").format(layer=i) for i in rows], [str(h) for h in range(cfg_m.n_heads)],
            precision=4, x_title=_("head"), title=_("Change when the head alone is switched off"), name=_("Change")))

# ---- the configuration, when it came from a model --------------------------------------------------------------
cfg = state.config()
origin = origins.origin_of(cfg)
if origin is not None and origin.role != "encoder":  # another kind of model's: its page
    st.header(_("In the explorer now"))
    page = origins.page_of(origin.role)
    came = _("The configuration in the explorer came from {kind}, {model}: see it on {page}.").format(
        kind=_(attn_models.ROLE_WORDS[origin.role]), model=text.md_escape(attn_models.shown_name(origin.model)),
        page=_(page.title))
    st.info(i18n.sentences(came, _("That page runs your edits of it back through that model.") if origin.runs_back
                           else ""), icon=":material/info:")
    st.page_link(page.file, label=_(page.title), icon=page.icon)
    origin = None
if origin is not None:
    st.header(_("In the explorer now"))
    opened = _("Opened with head {head} chosen.").format(head=origin.head)
    st.markdown(i18n.sentences(model_views.origin_text(origin), opened))
    try:
        if (origin_model := model_views.model_or_offer(origin.model, key="model_origin_download",
                                                           role=origin.role)) is None:
            st.stop()  # not on this server: the button above downloads it
        attn_models.expect_role(origin_model, origin.role)
        is_edited, b_o = model_views.edited(cfg), origin_model.output_bias(origin.layer)
    except attn_models.ModelError as err:
        st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
        st.stop()
    if is_edited:
        st.info(_("You have edited these numbers since: they are no longer the model's."), icon=":material/edit:")
        st.button(_("Back to the model's weights"), key="model_back", icon=":material/restore:",
                  on_click=model_views.back_to_model)
        st.subheader(_("Your edits, run through the model"))
        if origin.pad_to:
            st.caption(_("Layer {layer} computed with your W_Q, W_K, W_V, W_O, scale, score function and causal mask, "
                         "then the rest of the model as trained. Every sentence runs here without padding and brings "
                         "its own X (what the layers before compute from it), yours too: it was opened padded, so "
                         "your edits of X and of a drawn mask are not run back.").format(layer=origin.layer))
        else:
            st.caption(_("Layer {layer} computed with your numbers, then the rest of the model as trained. On the "
                         "sentence it was opened on every edit runs, X and a drawn mask too; another sentence runs "
                         "your W_Q, W_K, W_V, W_O, scale, score function and causal mask on its own X (what the layers "
                         "before compute from it).").format(layer=origin.layer))
        mine, as_trained = model_output.Change(edited=cfg), model_output.Change()
        origin_task = model_output.task(origin_model)
        compared = (others or model_output.OTHERS) if origin_task == "similarity" else ()
        try:
            before = model_output.outcome(origin.model, origin.sentence, compared, as_trained)
            after = model_output.outcome(origin.model, origin.sentence, compared, mine)
        except attn_models.ModelError as err:
            st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
            st.stop()
        if origin_task == "similarity":
            st.markdown(" ".join(model_output.similarity_words(o, b, a) for o, b, a in
                                 zip(compared, before.similarities, after.similarities, strict=True)))
            st.markdown(model_output.similarity_table(compared, before.similarities, after.similarities,
                                                      _("with your edits")))
        else:
            for fill, edited_fill in zip(before.fills, after.fills, strict=True):
                st.markdown(model_output.fill_words(fill, edited_fill))
                st.markdown(model_output.fill_table(fill, edited_fill, _("with your edits")))
    st.markdown(_("**b_O**, the attention output's bias · shape 1 × {size}. The explorer's output is concat · W_O; "
                  "the model adds b_O to it, then the residual (+ X without its bias column) and a LayerNorm, then "
                  "the feed-forward block: that is the next layer's X.").format(size=b_o.size))
    charts.show_chart(heatmap.heatmap(b_o[None, :], ["b_O"], text.dim_labels(b_o.size), title="b_O",
                                      precision=controls.precision(), x_title=_("output dimension")))
