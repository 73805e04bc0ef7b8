"""A model that translates: a T5 encoder-decoder writes your English sentence in French; each French token's
cross-attention over the English is drawn, heads open in the explorer (a cross-attention head, or an encoder head
with its relative-position bias), and heads switched off or your edits change the translation."""

import streamlit as st

import attn_models
from attn_core import configs_equal
from attn_ui.app import i18n, origins, registry, state
from attn_ui.app.i18n import _, ngettext
from attn_ui.shell import frame
from attn_ui.views import across_views, model_output, model_views, neuron_views, translate_views
from attn_ui.views.translate_views import ABLATE, ENC_LAYER, HEAD, LAYER, OTHER, SENTENCE  # the page's widget keys
from attn_ui.views.translate_views import ABLATE_HOW as HOW
from attn_ui.widgets import charts, controls, heatmap, text

frame.page_start(registry.TRANSLATE)



def open_config(cfg, what: str) -> None:
    """Put a layer of the translator into the explorer, then go to the page that shows it."""
    origin = origins.origin_of(cfg)  # the translator's own: never None here
    if message := state.set_config(cfg, what=state.change(what, layer=origin.layer)):
        st.error(text.md_escape(message), icon=":material/error:")
        return
    st.session_state[state.PRESET] = None
    st.session_state[state.HEAD] = origin.head
    st.switch_page(registry.SCORES.file if cfg.cross else registry.MASKING.file)


st.markdown(_(
    "An **encoder-decoder** (T5) translates. The encoder reads the English with self-attention, every token seeing "
    "every other; the decoder writes the French one token at a time with causal self-attention, and its "
    "**cross-attention** lets each French token's query read the encoder's output: queries from the French (Y), keys "
    "and values from the English (X), as on the Score functions page. Translation is the task the additive score "
    "function was invented for (in an RNN encoder-decoder); T5 uses dot products, no √d_k, and adds a learned bias "
    "for relative positions."
))

# ---- the model ---------------------------------------------------------------------------------------------
source = st.session_state.get(translate_views.SOURCE) or translate_views.operator_source()
model = model_views.model_box(
    "translator", source, source_key=translate_views.SOURCE, other_key=OTHER, download_key="trans_download",
    not_it=_("{name} is not an encoder-decoder translator (T5): it does not translate. It is read on {page}."),
    labels=(_("A Hugging Face repo id (owner/name) of a T5"),
            _("A Hugging Face repo id (owner/name) of a T5, or a folder on this machine")),
    help_text=_("config.json (model_type t5), tokenizer.json and model.safetensors. Empty: this server's translator."),
    placeholder=model_views.placeholder(translate_views.operator_source(), attn_models.TRANSLATOR_MODEL))
if model is None:
    st.stop()
cfg_m = model.config
st.caption(_("**{name}** · encoder {layers} layers, decoder {dec} layers, {heads} heads each · d_model {d_model} · "
             "d_k {d_k} per head · vocabulary {vocab:,} sentencepiece tokens").format(
    name=text.md_escape(attn_models.shown_name(model.name)), layers=cfg_m.n_layers, dec=cfg_m.n_decoder_layers,
    heads=cfg_m.n_heads, d_model=cfg_m.d_model, d_k=cfg_m.d_kv, vocab=cfg_m.vocab_size))

# ---- the sentence and its translation ------------------------------------------------------------------------
sentence = controls.text_box(  # what is pasted stays in the box; over the limit: said, the last sentence read kept
    _("English sentence"), SENTENCE, translate_views.DEFAULT_SENTENCE, translate_views.SENTENCE_MOST,
    translate_views.still_translating)
if not sentence.strip():
    st.info(_("Type an English sentence: the model translates it into French."), icon=":material/info:")
    st.stop()
try:
    trained = translate_views.translation(source, sentence)
except attn_models.ModelError as err:
    st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
    st.stop()
src, out = trained.source_tokens, trained.output_tokens
st.caption(_("The model reads “{prefix}” before your sentence (T5's task prefix, as the tutorial's pipeline writes "
             "it): {n} tokens · {tokens}").format(prefix=text.md_escape(attn_models.t5.PREFIX.strip()), n=len(src),
                                                  tokens=" · ".join(text.md_escape(t) for t in src)))
st.header(_("The translation"))
st.markdown("> " + (text.md_escape(trained.text) or "∅"))
st.caption(_("Written greedily, one token at a time: each time the most probable one, until </s> or {most} tokens. "
             "▁ marks the start of a word.").format(most=translate_views.MAX_NEW))
with st.expander(_("Each token written, and its probability when it was chosen"), icon=":material/list:"):
    st.markdown(text.md_table([_("token"), _("its probability when chosen")],
                              [[text.md_escape(t), model_output.percent(float(p))]
                               for t, p in zip(out, trained.probs, strict=True)]))

# ---- cross-attention: where each output token looked ----------------------------------------------------------------
st.header(_("Where each French token looked"))
pick = st.container(horizontal=True)
n_dec = cfg_m.n_decoder_layers
layer = pick.selectbox(_("Decoder layer"), list(range(n_dec)), width=140,
                       **state.bind(LAYER, state.kept(LAYER, n_dec - 1, list(range(n_dec)))))
head = pick.selectbox(_("Head"), list(range(cfg_m.n_heads)), width=120,
                      **state.bind(HEAD, state.kept(HEAD, 0, list(range(cfg_m.n_heads)))))
cross = trained.cross[layer, head]  # [n_out, n_src]
st.markdown(_("**Cross-attention** · decoder layer {layer}, head {head}: row = the query that chose each output "
              "token, column = a source token: which source words each output token read.").format(
    layer=layer, head=head))
precision = min(controls.precision(), 2)
src_labels, out_labels = text.numbered(src), text.numbered(out)
with st.container(horizontal=True, wrap=False):
    charts.show_chart(heatmap.heatmap(cross, out_labels, src_labels, kind="weights", precision=precision,
                                      x_title=_("source token (key)"), y_title=_("output token (query)"),
                                      title=_("cross-attention weights"),
                                      **model_views.phone_fit(out_labels, len(src_labels))))  # a phone: its width
st.markdown(translate_views.alignment_words(cross, out, src))
if st.button(_("Open this cross-attention head in the explorer"), key="trans_open", icon=":material/open_in_new:",
             help=_("Loads decoder layer {layer}'s cross-attention into the configuration: Y = the decoder's states "
                    "(one row per token written before), X = the encoder's output, W_Q, W_K, W_V, W_O the layer's, "
                    "no scaling.").format(layer=layer)):
    try:
        cfg = translate_views.cross_config(source, sentence, tuple(int(i) for i in trained.output_ids[:-1]), layer,
                                           head)
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
    else:
        open_config(cfg, _("decoder layer {layer}'s cross-attention opened"))
neuron_views.section(attn_models.Origin(
    "translator", source, layer, head, sentence, side="cross", prefix=attn_models.t5.PREFIX,
    target=tuple(int(i) for i in trained.output_ids[:-1])), key="trans_neuron", shown=cross,
    labels=(out_labels, src_labels))

# ---- the encoder's self-attention, with T5's position bias --------------------------------------------------------
st.header(_("The encoder's self-attention and its position bias"))
st.markdown(_("T5 adds a learned number to every score, one per head and relative distance between the query and "
              "the key (bucketed: exact near, logarithmic far): the **score bias**, the mask's finite sibling. Open an "
              "encoder head: Masking draws its bias, Scaling says why T5 does not divide by √d_k."))
enc_row = st.container(horizontal=True, vertical_alignment="bottom")
enc_layer = enc_row.selectbox(_("Encoder layer"), list(range(cfg_m.n_layers)), width=140,
                              **state.bind(ENC_LAYER, state.kept(ENC_LAYER, 0, list(range(cfg_m.n_layers)))))
enc_head = enc_row.selectbox(_("Head"), list(range(cfg_m.n_heads)), width=120,
                             **state.bind(translate_views.ENC_HEAD, state.kept(translate_views.ENC_HEAD, 0,
                                                                           list(range(cfg_m.n_heads)))))
if enc_row.button(_("Open this encoder head in the explorer"), key="trans_open_encoder",
                  icon=":material/open_in_new:"):
    try:
        cfg = translate_views.encoder_config(source, sentence, enc_layer, enc_head)
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
    else:
        open_config(cfg, _("encoder layer {layer} of the translator opened"))

# ---- across tokens and layers: several tokens together, attention rollout ----------------------------------------
across = across_views.translator_sides(trained, enc_layer, layer)
across_views.tokens_summed(across)
across_views.rollout(across)

# ---- cross-attention heads switched off -----------------------------------------------------------------------------
st.header(_("Switch cross-attention heads off"))
heads = [model_output.head_name(la, h) for la in range(n_dec) for h in range(cfg_m.n_heads)]
controls_row = st.container(horizontal=True, vertical_alignment="bottom")
off = controls_row.multiselect(_("Cross-attention heads switched off"), heads, width=420,
                               placeholder=_("none: the model as trained"),
                               **state.bind(ABLATE, [h for h in state.kept(ABLATE, []) if h in heads]))
how = controls_row.segmented_control(
    _("A head switched off gives"), ["mean", "zero"],
    format_func=lambda k: _("the mean of its values") if k == "mean" else _("zeros"),
    help=_("The mean of its values: what the head would give attending evenly to the whole source. Zeros: the head "
           "adds nothing."), **state.bind(HOW, state.kept(HOW, "mean", ["mean", "zero"]))) or "mean"
if off:
    change = model_output.Change(tuple(sorted(map(model_output.parse_head, off))), how)
    try:
        after = translate_views.translation(source, sentence, change)
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        st.stop()
    st.markdown("> " + (text.md_escape(after.text) or "∅"))
    st.markdown(translate_views.change_words(trained, after, ngettext(
        "With {n} head off", "With {n} heads off", len(off)).format(n=len(off))))
else:
    st.caption(_("Choose cross-attention heads to switch off: the sentence is translated again without them."))

# ---- the configuration, when it is this translator's cross-attention -------------------------------------------------
cfg = state.config()
origin = origins.origin_of(cfg)
if origin is not None and origin.role == "translator" and origin.side == "cross" and origin.model == source:
    st.header(_("In the explorer now"))
    st.markdown(model_views.origin_text(origin))
    try:
        as_opened = model_views.original(cfg)
    except attn_models.ModelError as err:
        st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
        st.stop()
    if not configs_equal(cfg, as_opened):
        st.subheader(_("Your edits, run through the translator"))
        st.caption(_("Decoder layer {layer}'s cross-attention computed with your W_Q, W_K, W_V, W_O, scale and score "
                     "function at every step. Its X (the encoder's output) and Y (the decoder's states) still come "
                     "from the run, as they change with every token written: edits of X and Y are not run back."
                     ).format(layer=origin.layer))
        try:
            mine = translate_views.translation(source, origin.sentence, model_output.Change(edited=cfg))
            before = translate_views.translation(source, origin.sentence)
        except attn_models.ModelError as err:
            st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
            st.stop()
        st.markdown("> " + (text.md_escape(mine.text) or "∅"))
        st.markdown(translate_views.change_words(before, mine, _("With your edits")))
    else:
        st.caption(_("Edit its W_Q, W_K, W_V or W_O on Inputs & weights: this section then translates with your "
                     "numbers."))
elif origin is not None and origin.role == "translator" and origin.model == source:  # a self-attention head
    st.header(_("In the explorer now"))
    st.markdown(model_views.origin_text(origin))
    st.caption(_("Edits of a self-attention head of the translator are not run back through it: open a "
                 "cross-attention head above to translate with your numbers."))
