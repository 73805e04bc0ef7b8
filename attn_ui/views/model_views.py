"""A real model: loading a checkpoint (with a download's progress), the cached forward pass, the model view
(every layer × head as small heatmaps) and opening one layer in the explorer.

The chart factory (:func:`model_view`) follows attn_ui.widgets.heatmap: arrays in, a
:class:`attn_ui.widgets.charts.Chart` out,
no st. The rest is Streamlit glue for pages/model.py.
"""

from __future__ import annotations

import base64
import json
import logging
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from functools import partial

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import attn_models
from attn_core import Config, Phrase, configs_equal
from attn_models.access import ENV_CAUSAL, ENV_MASKED, ENV_MODEL, ENV_TRANSLATOR
from attn_ui.app import i18n, origins, state
from attn_ui.app.i18n import N_, _, ngettext
from attn_ui.infra import budget, settings
from attn_ui.widgets import charts, controls, heatmap, text
from attn_ui.widgets.numbers import format_numbers

# A real model (pages/model.py): the checkpoint it reads and its widgets, whose values state.bind() keeps
# (Learn's model lessons set them too)
SOURCE = "model_source"  # str or None: the checkpoint A real model reads (repo id or folder; tests set it)
SENTENCE = "model_sentence"  # text_input: the sentence the model reads
PAD_TO = "model_pad_to"  # whole number box: pad with [PAD] up to this many tokens (0: none)
LAYER, HEAD = "model_layer", "model_head"  # selectboxes: the head looked at closely
OTHER = "model_other"  # text_input: another checkpoint (repo id or folder)
VIEW = "model_view"  # the model view chart (its click selection)
OTHERS = "model_others"  # text_area: the sentences yours is compared with (a sentence encoder), one a line
#: the most characters of the sentence and of the other sentences the page reads (controls.text_box: a longer text
#: stays in its box, refused in words); the tokens are capped after (attn_models: n_seq), this bounds the tokenizer's
#: work and what the caches' keys hold. The sentence's is attn_models.origin.SENTENCE_CHARS, an origin's longest
SENTENCE_MOST, OTHERS_MOST = attn_models.origin.SENTENCE_CHARS, 2_000
ABLATE = "model_ablate"  # multiselect: the heads switched off, as "L2 · H5" names (attn_ui.views.model_output)
ABLATE_HOW = "model_ablate_how"  # segmented control: a head switched off gives its mean ("mean") or "zero"
EFFECTS = "model_effects"  # selectbox: the layer (or "all") whose heads "which heads matter" switches off
EFFECT_ON = "model_effect_on"  # selectbox: the other sentence whose similarity "which heads matter" measures

ENV_SOURCE = attn_models.access.ENV_MODEL  # ATTN_MODEL: the checkpoint read unless the learner names another
PICK = "pick"  # name of the click selection on the model view (fields layer, head)
#: most cells a side of one small heatmap (image pixels and tooltip cells alike): more tokens are block means, as
#: attn_ui.widgets.heatmap. A small heatmap is about 21 px on screen, so finer pixels would not show; and the hover
#: cells,
#: n_layers · n_heads · PANEL_SIDE² of them (18,432 at 6 × 12), stay light for the browser (a canvas)
PANEL_SIDE = 16
GAP_PX = 4  # between two small heatmaps
#: width budget of the model view, in pixels: it fits a 390 px phone, and on a wide page the large view of the
#: head picked stands beside it (pages/model.py), so a click shows that head on the same screen
VIEW_PX = 356
LABEL_PX = 56  # room on the left for "layer l"
#: width of the large view of one head beside the model view (pages/model.py): VIEW_PX, the small gap (16 px) and this
#: fit the page's content at 1400 px beside the 320 px sidebar (920 px; the medium gap's 32 px did not: 928); narrower,
#: the large view wraps under the model view
ONE_PX = 540
LEGEND_PX = 60  # a weights heatmap's colour key
CANVAS_CELLS = 2_000  # more hover cells than this: drawn on a canvas (attn_ui.widgets.charts.on_canvas)
log = logging.getLogger(__name__)


# ---- where the model comes from -------------------------------------------------------------------------


def access() -> attn_models.Access:
    """What the operator lets visitors load (ATTN_MODELS, ATTN_ALLOW_FOLDERS, ATTN_MODEL, ATTN_DOWNLOAD_MB): the
    server's settings' (attn_ui.infra.settings, parsed once)."""
    return settings.settings().access


def source() -> str:
    """The checkpoint the page reads: the learner's choice (state MODEL_SOURCE), else the operator's."""
    return st.session_state.get(SOURCE) or operator_source()


def lesson_source() -> str:
    """The checkpoint Learn's model lessons read: the learner's choice, else the operator's English encoder
    ($ATTN_MODEL, else attn_models.DEFAULT_MODEL) in every language: the lessons' sentences and numbers are English."""
    return st.session_state.get(SOURCE) or settings.settings().default_model("en")


def operator_source() -> str:
    """The operator's checkpoint: $ATTN_MODEL, else the default of the learner's language (attn_models.default_model:
    the multilingual MiniLM in Chinese and Korean, all-MiniLM-L6-v2 in English)."""
    return settings.settings().default_model(i18n.language())


_LOADED: set[str] = set()  # sources _model has read in this process (a cache entry may since have been dropped)


# two models at most (Community Cloud gives an app about 1 GB): the GPT-2 and the T5 defaults together are ≈ 570 MB
# (bench/RESULTS.md); a third page's model takes the place of the one used least recently, read again from the disk
# cache when its page comes back (0.3–1.6 s)
@st.cache_resource(max_entries=2, show_spinner=False)  # the spinner is model()'s, in the learner's language
def _model(source: str) -> attn_models.Model:
    loaded = attn_models.load(source, access=access(), local_only=True)  # never downloads: model() does, when asked
    _LOADED.add(source)
    return loaded


def edited_if_loaded(cfg: Config) -> bool | None:
    """:func:`edited` when the model the configuration came from has been read in this process, else None (the
    sidebar of every page asks: it never reads a model for that); True when the model cannot make the layer its
    origin names (the numbers are not the model's)."""
    o = origins.origin_of(cfg)
    if o is None or o.model not in _LOADED:
        return None
    try:
        return edited(cfg)
    except attn_models.ModelError:
        return True


def needs_download(source: str, role: str | None = None, language: str | None = None) -> bool:
    """Whether ``source`` (allowed by :func:`access`, else ModelError: its example a model of ``role``, the page's
    kind, read in ``language`` when the page reads that language's default: attn_models.example) is a Hub repo not
    yet in the cache."""
    acc = access()
    source = acc.check(source, role, language)
    if (acc.folders or acc.is_operators(source)) and attn_models.is_folder(source):
        return False
    return not attn_models.repo_cached(source)


#: the operator's variable that names the model of each role (attn_models.access): what the advice without a network
#: tells whoever runs the server to set
VARIABLES = {"encoder": ENV_MODEL, "masked": ENV_MASKED, "causal": ENV_CAUSAL, "translator": ENV_TRANSLATOR}


def offline_advice(repo_id: str, role: str | None) -> Phrase:
    """What to do when ``repo_id`` is neither cached nor downloadable, as this server allows: where visitors may
    name folders (ATTN_ALLOW_FOLDERS), copying its folder here and naming it; else what only whoever runs the server
    can do: set the variable of the page that reads it (``role``'s; every one when None) to such a folder, or fill
    the server's Hugging Face cache."""
    if access().folders:
        return Phrase(attn_models.FOLDER_ADVICE, repo_id=repo_id)
    if role in VARIABLES:
        return Phrase(N_("Folders cannot be named here, but whoever runs this server can copy the model's folder "
                         "(config.json, tokenizer.json, model.safetensors) to it and set {variable} to that folder's "
                         "path, or fill its Hugging Face cache on a machine with a network (hf download {repo_id}) "
                         "and set HF_HUB_OFFLINE=1."), variable=VARIABLES[role], repo_id=repo_id)
    return Phrase(N_("Folders cannot be named here, but whoever runs this server can copy the model's folder "
                     "(config.json, tokenizer.json, model.safetensors) to it and set the variable of the page that "
                     "reads it ({variables}) to that folder's path, or fill its Hugging Face cache on a machine with "
                     "a network (hf download {repo_id}) and set HF_HUB_OFFLINE=1."),
                  variables=", ".join(VARIABLES.values()), repo_id=repo_id)


def advised(err: attn_models.ModelUnavailableError, source: str, role: str | None) -> attn_models.ModelError:
    """``err`` with :func:`offline_advice` as what to do."""
    return err.advised(offline_advice(str(err.params.get("repo_id", source.strip())), role))


def model(source: str, *, download: bool = False, role: str | None = None,
          language: str | None = None) -> attn_models.Model:
    """The loaded model (once per source and server process). A Hub repo not yet cached is downloaded first, with a
    progress bar, when the operator chose it (the default, ATTN_MODEL) or ``download`` (the learner clicked);
    otherwise attn_models.NotFetchedError: a link, a lesson or the sidebar never starts a download.

    Raises attn_models.ModelError (ModelUnavailableError without network and cache, saying what this server allows
    for the page that reads a model of ``role``: :func:`offline_advice`), also for an unexpected failure of the
    loading code (logged), so no page shows a traceback.
    """
    try:
        if needs_download(source, role, language):
            if not (download or access().is_operators(source)):
                raise attn_models.NotFetchedError(N_("{repo_id} is not on this server yet: its model page offers "
                                                     "to download it."), repo_id=source.strip())
            _download(source.strip())
        with st.spinner(_("Reading the model's weights …")):
            return _model(access().check(source))
    except attn_models.ModelUnavailableError as err:
        raise advised(err, source, role) from None
    except attn_models.ModelError:
        raise
    except Exception as err:  # noqa: BLE001 - a bug or a failure not foreseen: a message, not a traceback
        log.exception("loading %r", source)
        raise attn_models.ModelError(N_("The model could not be loaded ({err})."),
                                     err=f"{type(err).__name__}: {str(err)[:200]}") from None


def page_model(source: str, key: str, role: attn_models.Role, not_it: str) -> object | None:
    """The model a model page reads, or None after saying why not: not on this server and no network (a warning), a
    refused or unreadable checkpoint (an error), or a model of another kind than ``role`` (``not_it``, a translated
    template with {name} and {page}: the page that reads it). A repo not yet here is offered for download first."""
    try:
        # the page reads the default of the learner's language (operator_source): a refusal's example is that one
        model = model_or_offer(source, key=key, role=role, language=i18n.language())
    except attn_models.ModelUnavailableError as err:  # the learner's words first; the operator's under them, folded
        st.warning(_("The model {model} is not on this server, and the server cannot download it now.").format(
            model=text.md_escape(attn_models.shown_name(source))), icon=":material/cloud_off:")
        st.info(_("The other pages keep working with your own numbers."), icon=":material/info:")
        with st.expander(_("Why, and what whoever runs this server can do")):
            st.markdown(text.md_escape(i18n.error_text(err)))
        return None
    except attn_models.ModelError as err:
        st.error(text.md_escape(i18n.error_text(err)), icon=":material/error:")
        return None
    if model is not None and model.role != role:
        page = origins.page_of(model.role)
        st.error(not_it.format(name=text.md_escape(attn_models.shown_name(model.name)), page=_(page.title)),
                 icon=":material/error:")
        st.page_link(page.file, label=_(page.title), icon=page.icon)
        return None
    return model


JUDGED_FOR = 300  # seconds a repo's judgement (its file list from the Hub) is kept before the Hub is asked again


def _judged(repo_id: str) -> attn_models.RepoPlan:
    return _judgement(repo_id, int(time.time() // JUDGED_FOR))


def model_box(role: attn_models.Role, source: str, *, source_key: str, other_key: str, download_key: str,
              not_it: str, labels: tuple[str, str], help_text: str, placeholder: str) -> object | None:
    """The model a model page reads (:func:`page_model`), and under it the box where the learner names another: a
    repo id, or a folder where the operator allows it (``labels``: the box's label without and with folders; the
    ``help_text`` gets the repos this server offers, when it lists them). None after saying why not: the page stops.
    ``source_key`` is the page's state key of the learner's choice, ``other_key`` the box's widget key."""
    model = page_model(source, download_key, role, not_it)
    acc = access()
    with st.expander(_("Use another model"), icon=":material/swap_horiz:", expanded=model is None):
        if acc.offered is not None:  # the repo ids a visitor may pick (never the operator's folders)
            help_text = i18n.sentences(help_text, _("This server offers: {models}.").format(
                models=", ".join(acc.offered)))
        if not acc.folders:
            help_text = i18n.sentences(help_text, _("Folders on the server cannot be named here."))
        # what is pasted stays in the box; over the limit: said, and the page reads the model it read
        typed = controls.text_box(labels[acc.folders], other_key, "", MODEL_NAME_MOST,
                                  lambda _typed: _("The page still reads {model}.").format(
                                      model=text.md_escape(attn_models.shown_name(source))),
                                  on_change=partial(_use_other, source_key, other_key), placeholder=placeholder,
                                  help=help_text)
        if typed and not typed.strip():  # read as empty (_use_other): said, since the box does not look empty
            st.info(_("The box holds only spaces, which name no model: the page reads its own model, {model}, as "
                      "when the box is empty.").format(model=text.md_escape(attn_models.shown_name(source))),
                    icon=":material/info:")
    return model


def placeholder(operator: str, public: str) -> str:
    """What a model box shows when empty: the operator's model when it is a Hub repo id, else ``public`` (the
    family's published default): a folder of the server is not shown to a visitor.

    >>> placeholder("me/gpt", "distilbert/distilgpt2"), placeholder("/srv/gpt2", "distilbert/distilgpt2")
    ('me/gpt', 'distilbert/distilgpt2')
    """
    return operator if attn_models.access.is_repo_id(operator) else public


#: the most characters of a model page's model box read (controls.text_box): a Hub repo id is at most 96 + 1 + 96
#: characters, a folder's path a few hundred
MODEL_NAME_MOST = 500


def _use_other(source_key: str, other_key: str) -> None:
    """on_change of a model page's box (after controls.text_box has kept what it holds): read the checkpoint typed; an
    empty box goes back to the operator's; a text over :data:`MODEL_NAME_MOST` characters is not read (the box says
    so, and the page reads the model it read)."""
    if len(typed := st.session_state[other_key]) <= MODEL_NAME_MOST:
        st.session_state[source_key] = typed.strip() or None


def pick_from_view(view_key: str, layer_key: str, head_key: str) -> None:
    """on_select of a model view (``partial`` with the page's keys): the clicked small heatmap becomes the head
    drawn large."""
    if (choice := picked(st.session_state[view_key]["selection"])) is not None:
        st.session_state[state.KEPT][layer_key], st.session_state[state.KEPT][head_key] = choice


@budget.cached("model_judged")  # a few hundred bytes; ``period``: a new key, so a new look, every JUDGED_FOR s
def _judgement(repo_id: str, period: int) -> attn_models.RepoPlan:
    return attn_models.judge_repo(repo_id)


def model_or_offer(source: str, key: str, role: str | None = None,
                   language: str | None = None) -> attn_models.Model | None:
    """The model, or None after offering to download it: a Hub repo not on this server, judged from the Hub's
    metadata (its files' sizes; nothing downloaded), gets a button that says what and how much
    ("Download owner/name (87.3 MB)"); the click downloads it (with its progress bar). Raises attn_models.ModelError
    (refused, or no network: what a page reading a model of ``role`` can do, :func:`offline_advice`)."""
    if not needs_download(source, role, language) or access().is_operators(source):
        return model(source, role=role, language=language)
    source = source.strip()
    try:
        plan = _judged(source)
    except attn_models.ModelUnavailableError as err:
        raise advised(err, source, role) from None
    except attn_models.ModelError:
        raise
    except Exception as err:  # noqa: BLE001 - as in model()
        log.exception("judging %r", source)
        raise attn_models.ModelError(N_("The model could not be loaded ({err})."),
                                     err=f"{type(err).__name__}: {str(err)[:200]}") from None
    st.info(_("{source} is not on this server yet. Downloading it puts its files ({size:.1f} MB) into the server's "
              "Hugging Face cache.").format(source=text.md_escape(source), size=plan.to_download() / 1e6),
            icon=":material/cloud_download:")
    if st.button(_("Download {source} ({size:.1f} MB)").format(source=text.md_escape(source),
                                                                size=plan.to_download() / 1e6),
                 key=key, icon=":material/download:"):
        return model(source, download=True, role=role, language=language)
    return None


def _download(source: str) -> None:
    """Fetch a Hub repo's files into the Hugging Face cache in a worker thread, drawing its progress meanwhile."""
    seen: dict[str, tuple[int, int | None]] = {}  # file -> (bytes done, bytes in all)
    failed: list[BaseException] = []
    acc = access()

    def work() -> None:
        try:
            attn_models.fetch(source, access=acc,
                              progress=lambda name, done, total: seen.__setitem__(name, (done, total)))
        except BaseException as err:  # noqa: BLE001 - re-raised in the script thread below
            failed.append(err)

    box = st.empty()
    name = text.md_escape(source)
    bar = box.progress(0.0, text=_("Downloading {source} into the Hugging Face cache …").format(source=name))
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.25)
        done = sum(d for d, _t in seen.values())
        total = sum(t or 0 for _d, t in seen.values())
        if total:
            says = _("Downloading {source} into the Hugging Face cache: {done:.1f} of {total:.1f} MB").format(
                source=name, done=done / 1e6, total=total / 1e6)
        else:
            says = _("Downloading {source} into the Hugging Face cache: {done:.1f} MB").format(
                source=name, done=done / 1e6)
        bar.progress(min(done / total, 1.0) if total else 0.0, text=says)
    box.empty()
    if failed:
        raise failed[0]


# ---- the forward pass, cached on content ------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Run:
    """One sentence through the model: what the page draws (see attn_models.EncoderOutput)."""

    tokens: tuple[str, ...]
    attentions: np.ndarray  # [n_layers, n_heads, n_seq, n_seq]
    hidden_states: np.ndarray  # [n_layers + 1, n_seq, d_model]
    is_pad: np.ndarray  # bool [n_seq]


@budget.cached("model_forward")  # ≈ 43 MB at 256 tokens (6 layers × 12 heads)
def forward(source: str, sentence: str, pad_to: int) -> Run:
    """The model's forward pass on a sentence, once per (model, sentence, padding). Raises attn_models.ModelError."""
    out = _model(source).forward(sentence, pad_to or None)
    return Run(out.tokens, out.attentions, out.hidden_states, out.is_pad)


@budget.cached("model_opened")
def opened(origin: attn_models.Origin) -> Config:
    """The configuration ``origin`` names, as its model computes it (the family's ``config_for``), once per origin."""
    return _model(origin.model).config_for(origin)


def original(cfg: Config) -> Config:
    """The configuration its origin names, as the model computes it (raises attn_models.ModelError; an
    attn_models.OriginError when ``cfg`` came from no model)."""
    o = attn_models.parse_origin(cfg.origin)
    if o is None:
        raise attn_models.OriginError(N_("The configuration did not come from a model."))
    model(o.model)  # read (or refused) with the page's messages
    return opened(o)


def open_layer(source: str, sentence: str, pad_to: int, layer: int, head: int) -> str | None:
    """Load layer ``layer`` of ``source``'s model (an encoder's or a GPT-2's) into the configuration, head ``head``
    chosen; None, or why it could not be."""
    try:
        cfg = opened(attn_models.Origin(model(source).role, source, layer, head, sentence, pad_to=pad_to))
    except attn_models.ModelError as err:
        return i18n.error_text(err)
    what = state.change(N_("layer {layer} of {model} opened"), layer=layer, model=attn_models.shown_name(source))
    if message := state.set_config(cfg, what=what):
        return message
    st.session_state[state.PRESET] = None
    st.session_state[state.HEAD] = head if cfg.n_heads > 1 else 0  # a head opened alone is the configuration's head 0
    return None


def origin_text(origin: attn_models.Origin | None) -> str:
    """Markdown: where a configuration came from, when attn_models made it from a model's layer (else "").

    >>> from attn_models import Origin
    >>> print(origin_text(Origin("encoder", "org/m", 2, 1, "Hi *you*", bias_column=4)))
    ... # doctest: +ELLIPSIS
    From **org\\/m**, layer 2, on “Hi \\*you\\*”. X's column 4 is a constant 1 (the bias feature): ...
    """
    if origin is None:
        return ""
    bias, layer = origin.bias_column, origin.layer
    model = text.md_escape(attn_models.shown_name(origin.model))
    shown = text.md_escape(origin.sentence[:200]) + "…" * (len(origin.sentence) > 200)
    out = _("From **{model}**, layer {layer}, on “{sentence}”.").format(model=model, layer=layer, sentence=shown)
    if origin.of_heads is not None:  # a GPT-2's head, alone: the whole layer is over the caps
        out = i18n.sentences(out, _("Head {head} alone, of the layer's {n} heads: the whole layer is over the "
                                    "app's caps.").format(head=origin.head, n=origin.of_heads))
    side = origin.side  # a T5's layer
    if side == "cross":
        out = i18n.sentences(out, _("The decoder's cross-attention: the queries come from the translation being "
                                    "written (Y), the keys and values from the encoder's output on the source (X)."))
    elif side in ("encoder", "decoder"):
        out = i18n.sentences(out, _("The {side}'s self-attention, with T5's learned relative positions as the "
                                    "score bias B, and no scaling.").format(
            side=_("encoder") if side == "encoder" else _("decoder")))
    if bias is not None:
        out = i18n.sentences(out, _("X's column {bias} is a constant 1 (the bias feature): the last row of W_Q, "
                                    "W_K and W_V is their bias.").format(bias=bias))
    return out


def still_reading(sentence: str) -> str:
    """What the page says it keeps using while the box holds more than it reads (controls.text_box): the last text
    within the limit, not that the model can read it (its tokens are checked after, and said)."""
    return _("The sentence in use is still the last one within the limit: {text}.").format(
        text=controls.quoted_text(sentence))


def still_padding(pad_to: int) -> str:
    """What the page says it keeps using while the padding box holds what is refused (controls.whole_box)."""
    if not pad_to:
        return _("Still without padding.")
    return ngettext("Still padding to {n} token.", "Still padding to {n} tokens.", pad_to).format(n=pad_to)


def follow_origin(o: attn_models.Origin) -> None:
    """Set A real model's sentence, padding, layer and head to an encoder layer's origin, so the page shows what the
    explorer holds (Learn's Try it yourself on a model lesson)."""
    st.session_state[state.KEPT].update({SENTENCE: o.sentence, PAD_TO: o.pad_to, LAYER: o.layer, HEAD: o.head})


def back_to_model() -> None:
    """on_click: replace the edited configuration with its model layer's numbers (the origin kept)."""
    try:
        cfg = original(state.config())
    except attn_models.ModelError as err:
        state.notify(i18n.error_text(err))
        return
    if message := state.set_config(cfg, what=state.change(N_("back to the model's weights"))):
        state.notify(message)


def edited(cfg: Config) -> bool:
    """Whether a model layer's configuration differs from the model's numbers. Raises attn_models.ModelError when its
    origin names a layer the model cannot make (a hand-made link: a head or a length the model does not have), so a
    page says why rather than calling numbers the model's that are not."""
    return not configs_equal(cfg, original(cfg))


# ---- the model view: every layer × head ---------------------------------------------------------------------

#: Vega's "blues" scheme (heatmap.SCHEMES["weights"]), the colours it interpolates from 0 to 1, as in the browser
BLUES = ("cfe1f2", "bed8ec", "a8cee5", "8fc1de", "74b2d7", "5ba3cf", "4592c6", "3181bd", "206fb2", "125ca4", "0a4a90")


def blues(values: np.ndarray) -> np.ndarray:  # [...] in 0 … 1 -> uint8 [..., 3]
    """Weights as the colours of the weights heatmaps (Vega's "blues", piecewise linear in RGB).

    >>> blues(np.array([0.0, 1.0])).tolist()
    [[207, 225, 242], [10, 74, 144]]
    """
    stops = np.array([[int(c[i:i + 2], 16) for i in (0, 2, 4)] for c in BLUES], dtype=float)  # [11, 3]
    t = np.clip(values, 0.0, 1.0) * (len(BLUES) - 1)
    i = np.minimum(t.astype(int), len(BLUES) - 2)
    f = (t - i)[..., None]
    return np.rint(stops[i] * (1 - f) + stops[i + 1] * f).astype(np.uint8)


def png(rgb: np.ndarray) -> bytes:  # uint8 [h, w, 3] -> PNG file bytes
    """A PNG image of RGB pixels (no filter, zlib): small enough to write here, so no imaging package is needed.

    >>> png(np.zeros((1, 1, 3), np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    h, w = rgb.shape[:2]

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    rows = np.concatenate([np.zeros((h, 1), np.uint8), rgb.reshape(h, w * 3)], axis=1)  # filter byte 0 per row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


@dataclass(frozen=True)
class ModelViewLayout:
    """Everything about a model view but its numbers (the key of its cached spec, see attn_ui.widgets.charts); its texts
    are in the learner's language, so two languages never share a spec."""

    n_layers: int
    n_heads: int
    panel_px: int  # side of one small heatmap, in pixels
    note: str  # "" or how tokens were grouped into blocks
    title: str  # what the chart shows (its text alternative)
    head_label: str  # an axis label, {n} the head's number
    layer_label: str
    #: the tooltip's field titles: "layer", "head", "mostly", "query → key", "weight" (a block's: "mean weight")
    tooltip: tuple[str, str, str, str, str]
    cells: tuple[str, ...] = ()  # the name of each cell's tokens along a side: "4: it" or "4: it … 7: tired"
    #: the key/value head each query head reads, when heads share them (grouped-query attention), else ()
    kv_groups: tuple[int, ...] = ()
    kv_label: str = ""  # over each group of heads sharing a key/value head, {n} its number
    step: int = 1  # tokens per cell along a side (PANEL_SIDE cells at most)
    #: the focus line's words: the query row lit ({query}: its tokens), what a click does, and did, what the page's
    #: control did (it holds the row: a Vega expression, attn_ui.widgets.heatmap.held_expr); and what to do while no
    #: row is lit
    focus_words: tuple[str, str, str, str, str] = ("", "", "", "", "")

    def pin_value(self, token: str) -> list[dict] | None:
        """The focus the page's control holds (:data:`attn_ui.widgets.charts.HELD`) for the token labelled ``token``
        (attn_ui.widgets.text.numbered: "4: it"): the row of cells that holds it, in every small heatmap.

        >>> ModelViewLayout(1, 1, 16, "", "", "", "", ("",) * 5, ("0: a … 1: b", "2: c"), step=2).pin_value("2: c")
        [{'q': 1}]
        """
        position = int(token.split(":", 1)[0])
        return [{"q": position // self.step}] if position // self.step < len(self.cells) else None


def head_text(weights: np.ndarray, tokens: tuple[str, ...] | list[str],
              is_pad: np.ndarray | None = None) -> str:
    """attn_models.describe_head in the learner's language (its English when the language is English)."""
    template, values = attn_models.head_description(weights, tokens, is_pad)
    return i18n.filled(template, values)


def label_expr(template: str) -> str:
    """A Vega expression writing an axis label from a translated ``template`` ("head {n}": {n} the value).

    >>> label_expr("head {n}"), label_expr("第 {n} 层")
    ("'head ' + datum.value", "'第 ' + datum.value + ' 层'")
    """
    def quoted(part: str) -> str:
        return "'" + part.replace("\\", "\\\\").replace("'", "\\'") + "'"

    before, _sep, after = template.partition("{n}")
    return " + ".join([*([quoted(before)] if before else []), "datum.value", *([quoted(after)] if after else [])])


def cell_names(labels: list[str], step: int) -> list[str]:
    """The tokens of each block of ``step`` along a side, named by the labels of its first and last token.

    >>> cell_names(["0: a", "1: b", "2: c"], 1), cell_names(["0: a", "1: b", "2: c"], 2)
    (['0: a', '1: b', '2: c'], ['0: a … 1: b', '2: c'])
    """
    n = len(labels)
    return [labels[a] if min(a + step, n) - 1 == a else f"{labels[a]} … {labels[min(a + step, n) - 1]}"
            for a in range(0, n, step)]


def model_view(attentions: np.ndarray, tokens: tuple[str, ...] | list[str] | None = None,
               is_pad: np.ndarray | None = None,
               kv_groups: tuple[int, ...] | None = None) -> charts.Chart:  # [n_layers, n_heads, n_seq, n_seq]
    """BertViz's model view: one small heatmap per layer (row) and head (column), weights 0 … 1.

    Each small heatmap is one image (a PNG of its cells, colours as the weights heatmaps), so the browser draws
    n_layers · n_heads images however long the sentence. More than PANEL_SIDE tokens: each pixel is the mean of a
    block of tokens. Over every row of pixels lies a hover band (invisible) whose tooltip names its query token and
    the key it gives the most weight (text.numbered; a block: its first and last token), and that weight (a block's
    mean). One band per row, not per pixel: 72 heads of 16 × 16 hover cells (18,432 marks) took the browser ≈ 2.8 s
    to redraw on every run of the page. Hovering a row lights that query's row in every head and names it above the
    heads; a click pins it (:func:`focus_params`). Click one to pick it (selection ``pick``: fields layer, head); with
    ``tokens``, its tooltip also says what the head mostly does. ``kv_groups`` (the key/value head each query head
    reads, when heads share them: the model's ``kv_head``) groups the columns: a line between two groups, each
    group's key/value head named above it.

    Examples
    --------
    >>> c = model_view(np.full((2, 3, 4, 4), 0.25))
    >>> c.data[0].num_rows, c.data[0].column("url")[0].as_py()[:22], c.data[1].num_rows
    (6, 'data:image/png;base64,', 24)
    >>> [p["name"] for p in c.to_dict()["params"]]
    ['pick', 'focus', 'pin', 'held', 'lit_q', 'focus_ink', 'focus_release']
    >>> [layer.get("name") for layer in model_view(np.full((2, 4, 3, 3), 1 / 3), kv_groups=(0, 0, 1, 1)).to_dict()[
    ...     "layer"]][-3:]  # after the images, the groups' lines and names, the hover bands and the colour key
    ['focus_row', 'focus_cell', 'focus_hint']
    >>> len(model_view(np.full((2, 4, 3, 3), 1 / 3), kv_groups=(0, 0, 1, 1)).to_dict()["layer"])
    8
    """
    n_layers, n_heads, n = attentions.shape[:3]
    panel_px = int(max(16, min(96, (VIEW_PX - LABEL_PX) // n_heads - GAP_PX)))
    step = -(-n // PANEL_SIDE)
    note = "" if step == 1 else _("each pixel: the mean of {step} × {step} tokens").format(step=step)
    layer, head = np.indices((n_layers, n_heads)).reshape(2, -1)
    urls, what, means = [], [], []
    for li, h in zip(layer, head, strict=True):
        w = heatmap.block_means(attentions[li, h], most=PANEL_SIDE)[0]  # [m, m], m = ⌈n/step⌉
        means.append(w)
        urls.append("data:image/png;base64," + base64.b64encode(png(blues(w))).decode("ascii"))
        what.append(head_text(attentions[li, h], tokens, is_pad) if tokens is not None else "")
    m = means[0].shape[0]
    panel = np.arange(n_layers * n_heads)  # the key shared by an image and its cells: layer · n_heads + head
    data = charts.table({"layer": layer, "head": head, "panel": panel, "url": urls, "what": what})
    rows = np.stack(means)  # [n_panels, m, m]
    top = rows.argmax(axis=2)  # [n_panels, m]: the key (block) each query row gives the most weight
    cells = charts.table({  # one row per (layer, head, query row), in 8 bytes: the browser reads them all
        "panel": np.repeat(panel, m).astype(np.int16),  # the layer and head are worked out from it there
        "q": np.tile(np.arange(m), len(panel)).astype(np.int8), "k": top.ravel().astype(np.int8),
        "weight": np.take_along_axis(rows, top[..., None], axis=2).ravel().astype(np.float32),  # to 3 decimals
    })
    labels = text.numbered(tuple(tokens)) if tokens is not None else [str(i) for i in range(n)]
    layout = ModelViewLayout(
        n_layers, n_heads, panel_px, note,
        title=_("Attention weights of every layer (rows) and head (columns): click one to look closer"),
        head_label=_("head {n}"), layer_label=_("layer {n}"),
        tooltip=(_("layer"), _("head"), _("mostly"), _("query → key with the most weight"),
                 _("weight") if step == 1 else _("mean weight")),
        cells=tuple(cell_names(labels, step)),
        kv_groups=tuple(int(g) for g in kv_groups) if kv_groups is not None and len(set(kv_groups)) < n_heads else (),
        kv_label=_("K/V head {n}"), step=step,
        focus_words=(_("query {query}: lit in every head"), _(heatmap.FOCUS_CLICK), _(heatmap.FOCUS_PINNED_ROW),
                     heatmap.held_expr(), _("hover a row of cells: that query lights up in every head")))
    return charts.Chart(model_view_build, layout, (data, cells), canvas=cells.num_rows > CANVAS_CELLS,
                        extra=focus_extra)


def model_view_build(layout: ModelViewLayout, data: list, domains: list) -> alt.LayerChart:
    """The chart of a :class:`ModelViewLayout` on ``data`` (the images, the hover bands: :func:`model_view`'s
    builder).

    Heads and layers are bands of ``panel_px + GAP_PX`` pixels (alt.Step: Streamlit's autosize would squeeze a chart
    given a width in pixels), each image drawn in the middle of its band; the hover bands divide a band's
    ``panel_px`` into equal rows (yOffset), as the image's rows of pixels do.
    """
    p = layout.panel_px
    gap = GAP_PX / (p + GAP_PX)
    pick = alt.selection_point(name=PICK, fields=["layer", "head"], on="click", clear=False)
    heads = alt.Scale(paddingInner=gap, paddingOuter=gap / 2)
    x, y, within = axes(layout)
    x, y = alt.X(**x), alt.Y(**y)
    t_layer, t_head, t_what, t_pair, t_weight = layout.tooltip
    images = alt.Chart(data[0]).mark_image(width=p, height=p, smooth=False).encode(
        x=x, y=y, url="url:N", opacity=alt.when(pick).then(alt.value(1.0)).otherwise(alt.value(0.55)),
    )
    names = json.dumps(list(layout.cells))
    # a band over each row of pixels (on the layer chart's data, data[1], as the focus's lit rows: focus_extra)
    hover = alt.Chart().mark_rect(opacity=0, cursor="pointer").encode(
        x=x, y=y, yOffset=alt.YOffset(**within),
        tooltip=[alt.Tooltip("layer:O", title=t_layer), alt.Tooltip("head:O", title=t_head),
                 alt.Tooltip("pair:N", title=t_pair), alt.Tooltip("weight:Q", title=t_weight, format=".3f"),
                 alt.Tooltip("what:N", title=t_what)],
    ).transform_calculate(
        layer=f"floor(datum.panel / {layout.n_heads})", head=f"datum.panel % {layout.n_heads}",
        pair=f"{names}[datum.q] + ' → ' + {names}[datum.k]",
    ).transform_lookup(
        lookup="panel", from_=alt.LookupData(data=data[0], key="panel", fields=["what"]),
    ).add_params(pick).properties(name=ROWS)
    legend = alt.Chart(pd.DataFrame({"v": [0.0, 1.0]})).mark_rect(opacity=0).encode(  # the colour key, as elsewhere
        color=alt.Color("v:Q", scale=alt.Scale(scheme=heatmap.SCHEMES["weights"], domain=[0, 1]), title=None,
                        legend=alt.Legend(orient="bottom", direction="horizontal", format="~g",
                                          gradientLength=min(160, layout.n_heads * (p + GAP_PX)),
                                          gradientThickness=8)))
    title = {"title": alt.TitleParams(layout.note, anchor="start", fontSize=11)} if layout.note else {}
    layers = [images, hover, legend]
    if layout.kv_groups:  # heads sharing a key/value head: a line before each group but the first, its number on top
        starts = [h for h, g in enumerate(layout.kv_groups) if h == 0 or layout.kv_groups[h - 1] != g]
        groups = pd.DataFrame({"head": starts, "kv": [layout.kv_groups[h] for h in starts],
                               "label": [layout.kv_label.format(n=layout.kv_groups[h]) for h in starts]})
        edge = alt.X("head:O", bandPosition=0, title=None, scale=heads)  # a group's first band's left edge
        rules = alt.Chart(groups).mark_rule(color="#616161", strokeWidth=2, xOffset=-GAP_PX / 2 - 1).encode(
            x=edge).transform_filter("datum.head > 0")
        names = alt.Chart(groups).mark_text(align="left", baseline="bottom", dy=-20, fontSize=11,
                                            color="#424242").encode(x=edge, y=alt.value(0), text="label:N")
        layers = [images, rules, names, hover, legend]
    return alt.layer(*layers, data=data[1], description=layout.title, **title).properties(
        width=alt.Step(p + GAP_PX), height=alt.Step(p + GAP_PX))


LIT_Q = "lit_q"  # the query row lit in every small heatmap: the pinned one, else the hovered one (or null)


ROWS = "rows"  # the name of the model view's layer of hover bands: where its selections listen (``views``)


def axes(layout: ModelViewLayout) -> tuple[dict, dict, dict]:
    """The model view's x (heads), y (layers) and yOffset (a band's rows of cells) encodings as Vega-Lite: shared
    by its images, hover bands and lit rows. Heads and layers are bands of ``panel_px + GAP_PX`` pixels, padded by
    the gap; a band's rows divide its ``panel_px`` (the image's pixels)."""
    p = layout.panel_px
    gap = GAP_PX / (p + GAP_PX)
    bands = {"paddingInner": gap, "paddingOuter": gap / 2}
    x = {"axis": {"domain": False, "labelAngle": 0, "labelExpr": label_expr(layout.head_label) if p >= 44
                  else "datum.value", "labelPadding": 4, "orient": "top", "ticks": False},
         "field": "head", "scale": bands, "title": None, "type": "ordinal"}
    y = {"axis": {"domain": False, "labelExpr": label_expr(layout.layer_label), "labelPadding": 4, "ticks": False},
         "field": "layer", "scale": dict(bands), "title": None, "type": "ordinal"}
    within = {"field": "q", "scale": {"paddingInner": 0, "paddingOuter": 0, "range": [0, p]}, "type": "ordinal"}
    return x, y, within


def focus_params() -> list[dict]:
    """The model view's focus (as attn_ui.widgets.heatmap.focus_params, on the rows of cells: field q): hovering a row
    of a small heatmap lights that query's row in every head; a click pins it (and picks the head, :data:`PICK`), the
    same click again releases it; the page's control holds a row above both (:data:`attn_ui.widgets.charts.HELD`).
    Plain Vega-Lite, listening on the hover bands."""
    is_pinned = f"!!datum && isValid(datum.q) && vlSelectionTest({json.dumps(charts.PIN + '_store')}, datum)"
    lit = (f"isArray({charts.HELD}) ? {charts.HELD}[0].q : isArray({charts.PIN}.q) ? {charts.PIN}.q[0] : "
           f"(isArray({heatmap.FOCUS}.q) ? {heatmap.FOCUS}.q[0] : null)")
    return [{"name": heatmap.FOCUS, "select": {"type": "point", "clear": "pointerout", "fields": ["q"],
                                               "on": "pointerover"}, "views": [ROWS]},
            {"name": charts.PIN, "select": {"type": "point", "clear": "dblclick", "fields": ["q"], "on": "click",
                                            "toggle": is_pinned}, "views": [ROWS]},
            {"name": charts.HELD, "value": None}, {"name": LIT_Q, "expr": lit},
            {"name": charts.INK, "value": charts.INKS["light"]}, {"name": charts.RELEASE, "value": True}]


def focus_extra(layout: ModelViewLayout) -> dict:
    """The model view's focus (:attr:`attn_ui.widgets.charts.Chart.extra`: plain Vega-Lite added to the spec Altair
    built): its selections, the lit query row in every small heatmap (on the hover bands' data, the layer chart's)
    and the lines naming it (:func:`focus_lines`)."""
    x, y, within = axes(layout)
    panel = [{"calculate": f"floor(datum.panel / {layout.n_heads})", "as": "layer"},
             {"calculate": f"datum.panel % {layout.n_heads}", "as": "head"}]
    lit = {"mark": {"type": "rect", "aria": False, "filled": False, "stroke": heatmap.FOCUS_COLOUR,
                    "strokeWidth": 1.5},
           "encoding": {"x": x, "y": y, "yOffset": within}, "name": "focus_row",
           "transform": [{"filter": f"datum.q === {LIT_Q}"}, *panel]}
    return {"params": focus_params(), "layer": [lit, *focus_lines(layout, json.dumps(list(layout.cells)))]}


def focus_lines(layout: ModelViewLayout, names: str) -> list[dict]:
    """The lines over the model view: the query lit, and under it what a click does (pin) or did (click to release)
    or what the page's control did (how to release it there); or, while none is lit, what to do, on the first line
    (never empty: the chart keeps its height). Two layers in one place, "focus_cell" and "focus_hint" (as a
    heatmap's: a saved image leaves the hint out, attn_ui.shell.save_chart).
    ``names``: the cells' token names as a JSON list."""
    lit, click, pinned, held, hint = layout.focus_words  # held: a Vega expression already (heatmap.held_expr)
    lit, click, pinned, hint = (json.dumps(w, ensure_ascii=False) for w in (lit, click, pinned, hint))
    said = heatmap.vega_text(json.loads(lit), {"query": f"{names}[{LIT_Q}]"})
    status = f"(isArray({charts.HELD}) ? {held} : isArray({charts.PIN}.q) ? {pinned} : {click})"
    # the first line above the heads' labels (and the K/V heads' names), the second under it
    top = -22 - (16 if layout.kv_groups else 0) - heatmap.LABEL_LINE_PX
    width = LABEL_PX + layout.n_heads * (layout.panel_px + GAP_PX)

    def line(name: str, words: str) -> dict:
        return {"data": {"values": [{}]}, "name": name,
                "mark": {"type": "text", "align": "left", "aria": False, "baseline": "bottom",
                         "color": heatmap.FOCUS_COLOUR, "fontSize": 12, "fontWeight": "bold", "limit": width,
                         "lineHeight": heatmap.LABEL_LINE_PX, "text": {"expr": words}},
                "encoding": {"x": {"value": -LABEL_PX}, "y": {"value": top}}}

    # two lines, the query lit then what a click did (on one, the view's 356 px cut it short): the hint's one line
    # in the first's place while none is lit, so the chart keeps its height
    return [line("focus_cell", f"{LIT_Q} === null ? '' : [{said}, {status}]"),
            line("focus_hint", f"{LIT_Q} === null ? {hint} : ''")]


def one_width() -> int:
    """The large view's width: :data:`ONE_PX`, or on a phone (attn_ui.widgets.charts.narrow) its screen's column, so
    that the heatmap is whole on the screen instead of scrolling sideways (670–730 px at 390 px): its cells narrower,
    each number in its cell's tooltip where they no longer fit on the cells."""
    return heatmap.PHONE_COLUMN_PX if charts.narrow() else ONE_PX


def one_room(labels: list[str]) -> int:
    """The pixels the cells of the large view's heatmap may take: :func:`one_width` less its row labels and colour
    key."""
    return one_width() - max(map(heatmap.label_px, labels), default=0) - 30 - LEGEND_PX


def phone_fit(rows: list[str], n_cols: int) -> dict:
    """On a phone (attn_ui.widgets.charts.narrow), the cell size and room (heatmap.heatmap's ``px`` and ``room``) of a
    heatmap of ``rows`` × ``n_cols`` within the screen's column, as the large view's (:func:`one_room`); elsewhere
    nothing: the heatmap's own."""
    if not charts.narrow():
        return {}
    room = one_room(rows)
    return {"px": max(1, min(heatmap.cell_px(len(rows), n_cols), room // max(n_cols, 1))), "room": room}


def one_px(labels: list[str], values: np.ndarray, precision: int) -> int:  # values [n, n]
    """The cell size of the large view's heatmap of ``values`` (n = len(labels) tokens) so that it fits ONE_PX: its
    row labels, cells and colour key. Its numbers are printed on the cells only when they fit (else the cells are
    under heatmap.shows_text's 26 px and each number is in its cell's tooltip); 1 px a token at 256 tokens.

    >>> labels = [f"{i}: the" for i in range(13)]
    >>> one_px(labels, np.full((13, 13), 0.25), 2), one_px(labels, np.full((13, 13), 0.0025), 2)
    (30, 25)
    >>> one_px([f"{i}: the" for i in range(256)], np.full((256, 256), 1 / 256), 2)
    1
    """
    n = max(len(labels), 1)
    budget = one_room(labels)
    px = max(1, min(44, budget // n))
    if heatmap.shows_text(n, n, px):
        longest = max(map(len, format_numbers(values.ravel(), precision)))
        if heatmap.cell_width(px, longest) * n > budget:
            px = min(px, 25)  # the numbers would not fit: the cells without them
    return px


def picked(selection: dict) -> tuple[int, int] | None:
    """The (layer, head) of a click on the model view, from Streamlit's selection state, or None.

    >>> picked({"pick": [{"layer": 2, "head": 5}]}), picked({"pick": []})
    ((2, 5), None)
    """
    points = selection.get(PICK) or []
    return (int(points[0]["layer"]), int(points[0]["head"])) if points and "layer" in points[0] else None
