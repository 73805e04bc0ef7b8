"""A model that writes: a causal decoder (GPT-2 or Llama family) reads your prompt with causal attention, says which
token comes next (at a temperature), writes on token by token, and opens any of its heads in the explorer with its
causal mask (and a Llama's RoPE and grouped key/value heads)."""

from functools import partial

import numpy as np
import streamlit as st

import attn_models
from attn_core import causal_mask, softmax
from attn_ui.app import i18n, origins, registry, state
from attn_ui.app.i18n import _, ngettext
from attn_ui.lessons import lesson_views
from attn_ui.shell import frame
from attn_ui.views import across_views, generate_views, lens_views, model_output, model_views, neuron_views
from attn_ui.views.generate_views import (  # the page's widget keys
    ABLATE,
    HEAD,
    LAYER,
    MODE,
    N_NEW,
    OTHER,
    PROMPT,
    SEED,
    TEMPERATURE,
    VIEW,
    label,
    shown,
)
from attn_ui.views.generate_views import ABLATE_HOW as HOW
from attn_ui.widgets import charts, controls, heatmap, text

frame.page_start(registry.GENERATE)



st.markdown(_(
    "A **decoder** (the GPT-2 or the Llama family) writes text one token at a time. Each token's query may attend "
    "only to itself and the tokens before it, the **causal mask** of the Masking page, so the last position has read "
    "the whole prompt and nothing after it; its output becomes a probability for every token of the vocabulary: the "
    "next token. Every attention here is computed by this app's core, on the model's real weights."
))

# ---- the model ---------------------------------------------------------------------------------------------
source = st.session_state.get(generate_views.SOURCE) or generate_views.operator_source()
model = model_views.model_box(
    "causal", source, source_key=generate_views.SOURCE, other_key=OTHER, download_key="gen_download",
    not_it=_("{name} is not a causal language model (GPT-2 or Llama family): it does not write. It is read on "
             "{page}."),
    labels=(_("A Hugging Face repo id (owner/name) of the GPT-2 or Llama family"),
            _("A Hugging Face repo id (owner/name) of the GPT-2 or Llama family, or a folder on this machine")),
    help_text=_("config.json (model_type gpt2, or llama, mistral or qwen2: the Llama family, SmolLM2 among them), "
                "tokenizer.json and model.safetensors. Empty: this server's causal model."),
    placeholder=model_views.placeholder(generate_views.operator_source(), attn_models.CAUSAL_MODEL))
if model is None:
    st.stop()
cfg_m = model.config
st.caption(_("**{name}** · {layers} layers × {heads} heads · d_model {d_model} · d_k {d_k} per head · vocabulary "
             "{vocab:,} tokens · at most {most} tokens of text").format(
    name=text.md_escape(attn_models.shown_name(model.name)), layers=cfg_m.n_layers, heads=cfg_m.n_heads,
    d_model=cfg_m.d_model, d_k=cfg_m.d_k, vocab=cfg_m.vocab_size, most=cfg_m.max_tokens))
st.caption(generate_views.attention_words(model))
kv_groups = generate_views.kv_groups(model)  # the K/V head each query head reads, when heads share them

# ---- the prompt ------------------------------------------------------------------------------------------------
prompt = controls.text_box(  # what is pasted stays in the box; over the limit: said, the last prompt read kept
    _("Prompt"), PROMPT, generate_views.DEFAULT_PROMPT, generate_views.PROMPT_MOST, generate_views.still_continuing)
if not prompt.strip():
    st.info(_("Type a prompt: the model says which token comes next."), icon=":material/info:")
    st.stop()
try:
    run = generate_views.forward(source, prompt)
except attn_models.ModelError as err:
    st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
    st.stop()
tokens = list(run.tokens)
st.markdown(ngettext("**{n} token**", "**{n} tokens**", len(tokens)).format(n=len(tokens)) + " · "
            + " · ".join(shown(t) for t in tokens))
st.caption(_("␣ marks a space: GPT-2's tokens carry the space before a word."))

# ---- the next token ------------------------------------------------------------------------------------------
st.header(_("The next token"))
temperature = st.slider(_("Temperature T"), *generate_views.TEMPERATURES, step=0.1,
                        help=_("The logits are divided by T before the softmax, as Scaling divides the scores."),
                        **state.bind(TEMPERATURE, state.kept(TEMPERATURE, 1.0)))
nxt = generate_views.next_token(source, prompt, float(temperature))
logits = run.logits[-1]  # [vocab]: the last position's
probs, probs_1 = softmax(logits / temperature), softmax(logits)  # [vocab] each
st.markdown(_("After “{last}”, the model's {k} most probable next tokens:").format(
    last=shown(tokens[-1]), k=generate_views.TOP_K))
charts.show_chart(lesson_views.bars(
    _("Next token at T = {t}").format(t=f"{temperature:g}"), tuple(label(t) for t in nxt.tokens),
    ((_("probability"), nxt.probs),), y_title=_("probability"), precision=3, across=True))
st.markdown(generate_views.temperature_words(float(temperature), float(probs.max()), float(probs_1.max()),
                                             generate_views.entropy_bits(probs),
                                             generate_views.entropy_bits(probs_1)))

# ---- every layer and head on the prompt --------------------------------------------------------------------------
st.header(_("Every layer and head"))
st.caption(_("One small heatmap per head on your prompt: row = query token, column = key token, darker = more "
             "weight. Above the diagonal is empty in every head: the causal mask. Click a head to see it large."))
labels = text.numbered(tuple(label(t) for t in tokens))
controls.focus_control(labels, "gen", st.sidebar)  # beside: the large view stays on screen
side_by_side = st.container(horizontal=True, gap="small")
with side_by_side.container(width="content"):
    charts.show_chart(model_views.model_view(run.attentions, tuple(label(t) for t in tokens), kv_groups=kv_groups),
                      key=VIEW, on_select=partial(model_views.pick_from_view, VIEW, LAYER, HEAD),
                      selection_mode=model_views.PICK)
    if kv_groups is not None:
        st.caption(i18n.sentences(_("A line parts the heads that share their keys and values "
                                    "(grouped-query attention)."), generate_views.kv_group_words(kv_groups)))
with side_by_side.container(width=model_views.ONE_PX):
    st.subheader(_("One head"))
    pick = st.container(horizontal=True)
    v_layer = pick.selectbox(_("Layer"), list(range(cfg_m.n_layers)), width=120,
                             **state.bind(LAYER, state.kept(LAYER, 0, list(range(cfg_m.n_layers)))))
    v_head = pick.selectbox(_("Head"), list(range(cfg_m.n_heads)), width=140,
                            format_func=partial(generate_views.head_choice, model),
                            **state.bind(HEAD, state.kept(HEAD, 0, list(range(cfg_m.n_heads)))))
    weights = run.attentions[v_layer, v_head]  # [n, n]
    precision = min(controls.precision(), 2)
    with st.container(horizontal=True, wrap=False):
        charts.show_chart(heatmap.heatmap(
            weights, labels, labels, kind="weights", precision=precision, x_title=_("key"), y_title=_("query"),
            title=_("layer {layer}, head {head}: attention weights").format(layer=v_layer, head=v_head),
            masked=~causal_mask(len(tokens)), px=model_views.one_px(labels, weights, precision),
            room=model_views.one_room(labels)))
    st.markdown(_("**Layer {layer}, head {head}**: {what}.").format(
        layer=v_layer, head=v_head, what=text.md_escape(model_views.head_text(weights, tokens))))
    if st.button(_("Open this head in the explorer"), key="gen_open", icon=":material/open_in_new:",
                 help=_("Loads this head into the configuration, with its causal mask: Step by step, Scaling, "
                        "Masking and Share & export then work on its real numbers.")):
        if message := model_views.open_layer(source, prompt, 0, v_layer, v_head):
            st.error(text.md_escape(message), icon=":material/error:")
        else:
            st.switch_page(registry.STEPS.file)
neuron_views.section(attn_models.Origin("causal", source, v_layer, v_head, prompt, family=model.family),
                     key="gen_neuron", shown=weights, labels=(labels, labels))

# ---- across tokens and layers: several tokens together, attention rollout ----------------------------------------
across = across_views.causal_sides(run.attentions, [label(t) for t in tokens], v_layer)
across_views.tokens_summed(across)
across_views.rollout(across)

# ---- writing on, token by token -----------------------------------------------------------------------------------
st.header(_("Write on, token by token"))
row = st.container(horizontal=True, vertical_alignment="bottom")
n_new = controls.whole_box(  # what is typed, as typed ("2.5" is not 2): refused in words, the count in use kept
    _("Tokens to write"), N_NEW, 8, 1, generate_views.MAX_NEW, generate_views.still_writing, where=row, width=160)
mode = row.segmented_control(_("Each next token is"), list(generate_views.MODES),
                             format_func=lambda k: _(generate_views.MODES[k]),
                             help=_("Greedy: always the most probable token (the temperature does not matter). "
                                    "Sampled: drawn at random with the probabilities at temperature T."),
                             **state.bind(MODE, state.kept(MODE, "greedy", list(generate_views.MODES)))) or "greedy"
seed = controls.seed_box(_("Seed"), SEED, where=row, width=120, disabled=mode != "sample",
                         help=_("The same seed draws the same tokens."))
asked = (source, prompt, n_new, mode == "sample", float(temperature), seed)
full = len(tokens) >= cfg_m.max_tokens  # the prompt fills every position the model reads: no token can follow
if row.button(_("Write"), key="gen_write", icon=":material/edit_note:", type="primary", disabled=full):
    st.session_state[generate_views.WRITTEN] = asked
if full:
    st.caption(_("The prompt fills all {most} positions the model reads: shorten it to write on.").format(
        most=cfg_m.max_tokens))
written = st.session_state.get(generate_views.WRITTEN)
if written is not None and written[:2] == (source, prompt) and not full:
    live = st.empty()  # each token as it comes, with its query's attention in the head chosen above (the first time;
    so_far = [*tokens]  # later runs read the kept result): the tokens it could read

    def draw(i: int, step) -> None:
        with live.container():
            st.markdown(_("Writing token {i} of {n}: “{token}” ({p})").format(
                i=i + 1, n=written[2], token=shown(step.token), p=model_output.percent(step.prob)))
            charts.show_chart(heatmap.heatmap(
                step.attention[v_layer, v_head][None, :], [label(step.token)],
                text.numbered(tuple(label(t) for t in so_far)), kind="weights", precision=2,
                x_title=_("earlier token"), y_title=_("new token"), title=_("attention of each new token's query")))
        so_far.append(step.token)

    try:
        gen = generate_views.generation(*written, _on_step=draw)
    except attn_models.ModelError as err:
        live.empty()
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        st.stop()
    live.empty()
    new = [step.token for step in gen.steps]
    st.markdown(text.bold_tail(prompt, "".join(new)))
    how_written = (_("greedy: each time the most probable token") if not written[3] else
                   _("sampled at T = {t} with seed {seed}").format(t=f"{written[4]:g}", seed=written[5]))
    st.caption(i18n.sentences(
        ngettext("{n} token written, {how}.", "{n} tokens written, {how}.", len(new)).format(n=len(new),
                                                                                           how=how_written),
        _("It stopped at the end-of-text token <|endoftext|>, which the model chose.") if gen.stopped == "eot" else
        _("It stopped because the text reached the most tokens the model reads ({most}).").format(
            most=cfg_m.max_tokens) if gen.stopped == "cap" else ""))
    if new:
        layer, head = v_layer, v_head  # the head chosen above
        context = [*tokens, *new[:-1]]  # every token a step could read: the prompt and what was written before
        rows = np.zeros((len(new), len(context)))  # [n_new, n_ctx]: row i = the query that chose token i
        for i, step in enumerate(gen.steps):
            rows[i, :step.attention.shape[-1]] = step.attention[layer, head]
        unseen = np.arange(len(context))[None, :] >= (len(tokens) + np.arange(len(new)))[:, None]  # not read yet
        st.markdown(_("**Which earlier tokens each new token came from** · layer {layer}, head {head}: row i is the "
                      "attention of the position that chose the new token i, over the tokens before it (grey: not "
                      "written yet). Choose the head above.").format(layer=layer, head=head))
        charts.show_chart(heatmap.heatmap(
            rows, [f"{i}: {label(t)}" for i, t in enumerate(new)], text.numbered(tuple(label(t) for t in context)),
            kind="weights", precision=min(controls.precision(), 2), masked=unseen, x_title=_("earlier token"),
            y_title=_("new token"), title=_("attention of each new token's query")))

# ---- heads switched off ------------------------------------------------------------------------------------------
st.header(_("Switch heads off"))
heads = [model_output.head_name(la, h) for la in range(cfg_m.n_layers) for h in range(cfg_m.n_heads)]
controls_row = st.container(horizontal=True, vertical_alignment="bottom")
off = controls_row.multiselect(_("Heads switched off"), heads, placeholder=_("none: the model as trained"), width=420,
                               **state.bind(ABLATE, [h for h in state.kept(ABLATE, []) if h in heads]))
how = controls_row.segmented_control(
    _("A head switched off gives"), list(model_output.HOW_TEXT), format_func=lambda k: _(model_output.HOW_TEXT[k]),
    help=_("Its mean (the default): every token gets the head's average output over this prompt. Zeros: the head "
           "adds nothing."), **state.bind(HOW, state.kept(HOW, "mean", list(model_output.HOW_TEXT)))) or "mean"
if off:
    change = generate_views.Change(tuple(sorted(map(model_output.parse_head, off))), how)
    try:
        after = generate_views.next_token(source, prompt, float(temperature), change)
        after_probs = softmax(generate_views.forward(source, prompt, change).logits[-1] / temperature)  # [vocab]
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        st.stop()
    st.markdown(generate_views.ablation_words(nxt, after, float(probs[after.ids[0]]),
                                              float(after_probs[nxt.ids[0]]), len(off)))
    names = dict(zip(nxt.ids.tolist(), nxt.tokens, strict=True)) | dict(zip(after.ids.tolist(), after.tokens,
                                                                            strict=True))
    ids = generate_views.compared_ids(nxt.ids, after.ids)  # both top tokens among them
    charts.show_chart(lesson_views.bars(
        _("Next token at T = {t}, as trained and with heads off").format(t=f"{temperature:g}"),
        tuple(label(names[i]) for i in ids), ((_("as trained"), probs[ids]), (_("heads off"), after_probs[ids])),
        y_title=_("probability"), precision=2, across=True))
else:
    st.caption(_("Choose heads to switch off: the next token's probabilities are computed again without them."))

# ---- the logit lens: the next token after each layer, and before/after the changes above ---------------------------
lens_views.lens_section(source, prompt, model)

# ---- the configuration, when it came from this model ---------------------------------------------------------------
cfg = state.config()
origin = origins.origin_of(cfg)
if origin is not None and origin.role == "causal" and origin.model == source:
    st.header(_("In the explorer now"))
    st.markdown(model_views.origin_text(origin))
    try:
        is_edited = model_views.edited(cfg)
    except attn_models.ModelError as err:  # its origin names a head or a prompt this model cannot make
        st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
        st.stop()
    if is_edited:
        st.info(_("You have edited these numbers since: they are no longer the model's."), icon=":material/edit:")
        st.button(_("Back to the model's weights"), key="gen_back", icon=":material/restore:",
                  on_click=model_views.back_to_model)
        st.subheader(_("Your edits, run through the model"))
        st.caption(_("Layer {layer} computed with your numbers, then the rest of the model as trained. On the prompt "
                     "it was opened on, every edit runs, X too; on another prompt your weights, scale, score function "
                     "and mask run on that prompt's own X.").format(layer=origin.layer))
        try:
            mine = generate_views.next_token(source, prompt, float(temperature), model_output.Change(edited=cfg))
            mine_probs = softmax(generate_views.forward(source, prompt, model_output.Change(edited=cfg)).logits[-1]
                                 / temperature)  # [vocab]
        except attn_models.ModelError as err:
            st.warning(text.md_escape(i18n.error_text(err)), icon=":material/warning:")
            st.stop()
        st.markdown(generate_views.edit_words(nxt, mine, float(probs[mine.ids[0]]), float(mine_probs[nxt.ids[0]])))
        names = dict(zip(nxt.ids.tolist(), nxt.tokens, strict=True)) | dict(zip(mine.ids.tolist(), mine.tokens,
                                                                                strict=True))
        ids = generate_views.compared_ids(nxt.ids, mine.ids)
        charts.show_chart(lesson_views.bars(
            _("Next token at T = {t}, as trained and with your edits").format(t=f"{temperature:g}"),
            tuple(label(names[i]) for i in ids),
            ((_("as trained"), probs[ids]), (_("with your edits"), mine_probs[ids])), y_title=_("probability"),
            precision=2, across=True))
    else:
        st.caption(_("Edit it on Inputs & weights or Step by step: this section then shows what your edits do to the "
                     "next token."))
