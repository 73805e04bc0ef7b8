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
from attn_ui.app import registry
from attn_ui.app.i18n import error_text

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
