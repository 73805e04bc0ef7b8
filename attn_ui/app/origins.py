"""Where the configuration came from, on the pages: a model's layer or head (attn_models.Origin), read and checked
where a link or a file brings it in, and the page that reads that model.

A configuration's origin is untrusted when a link or a file brings it: :func:`admitted` checks it whole, field by
field (attn_models.parse_origin), before any page reads it; one that is not one this app makes is dropped (the
numbers stay) and the learner is told why. Pages then ask :func:`origin_of` for the typed value and
:func:`page_of` for the page that reads its model; never the origin's dict keys.

A configuration leaves the server (a link, the address bar, a JSON file) through :func:`exported`: an origin that
names one of the operator's folders names it by its role, ``server:causal`` (the server's paths are not a visitor's
business), and :func:`admitted` reads that back to the folder this server uses for the role now.
"""

from __future__ import annotations

from dataclasses import replace

import attn_models
from attn_core import Config
from attn_ui.app import registry
from attn_ui.app.i18n import N_, error_text
from attn_ui.infra import settings

SERVER = "server:"  # an operator's folder as a link or a file names it: "server:" and its role


def _operators() -> dict[str, str]:
    """{role: the operator's source of that role}, for the roles whose source is a folder (not a Hub repo id)."""
    s = settings.settings()
    roles = {"encoder": s.model, "causal": s.causal_model, "translator": s.translator_model, "masked": s.masked_model}
    return {role: source for role, source in roles.items() if source and not attn_models.access.is_repo_id(source)}


def exported(cfg: Config) -> Config:
    """``cfg`` as it leaves the server: an origin naming one of the operator's folders names its role instead
    (``server:encoder``, ``server:causal``, ``server:translator``, ``server:masked``)."""
    if not cfg.origin or not isinstance(model := cfg.origin.get("model"), str):
        return cfg
    role = next((r for r, source in _operators().items() if source == model.strip()), None)
    return cfg if role is None else replace(cfg, origin={**cfg.origin, "model": SERVER + role})

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
        origin = attn_models.parse_origin(cfg.origin)
    except attn_models.OriginError as err:
        return replace(cfg, origin=None), error_text(err)
    if origin is not None and origin.model.startswith(SERVER):  # one of the operator's folders, by its role
        source = _operators().get(origin.model[len(SERVER):])
        if source is None:
            return replace(cfg, origin=None), error_text(attn_models.OriginError(N_(
                "The configuration came from a model of the server it was made on, {model}, which this server does "
                "not have. Its numbers are kept."), model=origin.model))
        cfg = replace(cfg, origin={**cfg.origin, "model": source})
    return cfg, None


def page_of(role: str) -> registry.Page:
    """The page that reads a model of kind ``role`` (attn_models.Role; a model's ``role``, an origin's).

    >>> page_of("causal").name, page_of("translator").name, page_of("encoder").name
    ('generate', 'translate', 'model')
    """
    return PAGES[role]
