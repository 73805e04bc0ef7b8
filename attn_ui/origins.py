"""Where the configuration came from, on the pages: a model's layer or head (attn_models.Origin), read and checked
where a link or a file brings it in, and the page that reads that model.

A configuration's origin is untrusted when a link or a file brings it: :func:`admitted` checks it whole, field by
field (attn_models.parse_origin), before any page reads it; one that is not one this app makes is dropped (the
numbers stay) and the learner is told why. Pages then ask :func:`origin_of` for the typed value and
:func:`page_of` for the page that reads its model; never the origin's dict keys.
"""

from __future__ import annotations

from dataclasses import replace

import attn_models
from attn_core import Config

from . import registry
from .i18n import _, error_text, sentences
from .text import md_escape

#: each kind of model (attn_models.Role) -> the page that reads it
PAGES: dict[str, registry.Page] = {"encoder": registry.MODEL, "causal": registry.GENERATE,
                                   "translator": registry.TRANSLATE}


def origin_of(cfg: Config) -> attn_models.Origin | None:
    """The model's layer ``cfg`` is (attn_models.Origin), or None: made by the learner, or an origin no page may
    read (:func:`admitted` keeps those out; this is the same check again, for a configuration made elsewhere)."""
    try:
        return attn_models.parse_origin(cfg.origin)
    except attn_models.OriginError:
        return None


def admitted(cfg: Config) -> tuple[Config, str | None]:
    """``cfg`` as a link or a file may bring it into the explorer, and None; or, when its origin is not one this app
    makes, ``cfg`` without it and why (in the learner's language): its numbers are kept either way."""
    try:
        attn_models.parse_origin(cfg.origin)
    except attn_models.OriginError as err:
        return replace(cfg, origin=None), error_text(err)
    return cfg, None


def page_of(role: str) -> registry.Page:
    """The page that reads a model of kind ``role`` (attn_models.Role; a model's ``role``, an origin's).

    >>> page_of("causal").name, page_of("translator").name, page_of("encoder").name
    ('generate', 'translate', 'model')
    """
    return PAGES[role]


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
    model = md_escape(attn_models.shown_name(origin.model))
    shown = md_escape(origin.sentence[:200]) + "…" * (len(origin.sentence) > 200)
    out = _("From **{model}**, layer {layer}, on “{sentence}”.").format(model=model, layer=layer, sentence=shown)
    if origin.of_heads is not None:  # a GPT-2's head, alone: the whole layer is over the caps
        out = sentences(out, _("Head {head} alone, of the layer's {n} heads: the whole layer is over the app's "
                               "caps.").format(head=origin.head, n=origin.of_heads))
    side = origin.side  # a T5's layer
    if side == "cross":
        out = sentences(out, _("The decoder's cross-attention: the queries come from the translation being written "
                               "(Y), the keys and values from the encoder's output on the source (X)."))
    elif side in ("encoder", "decoder"):
        out = sentences(out, _("The {side}'s self-attention, with T5's learned relative positions as the score bias "
                               "B, and no scaling.").format(side=_("encoder") if side == "encoder" else _("decoder")))
    if bias is not None:
        out = sentences(out, _("X's column {bias} is a constant 1 (the bias feature): the last row of W_Q, W_K and "
                               "W_V is their bias.").format(bias=bias))
    return out
