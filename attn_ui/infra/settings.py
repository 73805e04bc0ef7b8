"""The operator's settings: every ``ATTN_*`` environment variable the server reads, parsed in one place.

:func:`settings` is what the rest of the app asks (the memory budget, the model pages): it parses ``os.environ`` the
first time, and again only when one of the variables (:data:`NAMES`) has changed since, so a server reads them once
and a test that sets them sees its own values. No value raises: each one that is not understood is logged once, a
WARNING naming the variable, the value and what is used instead, e.g.

    ATTN_CACHE_MB='inf' is not a finite number of megabytes from 1 to 1000000: using 256.

- ``ATTN_CACHE_MB``: the memory budget of the shared caches (attn_ui.infra.budget), a finite number of megabytes from
1 to
  :data:`CACHE_MB_MOST`; anything else (``inf``, ``nan``, ``0``, ``-5``, ``abc``): :data:`CACHE_MB`.
- The models and what visitors may load (``ATTN_MODEL``, ``ATTN_CAUSAL_MODEL``, ``ATTN_TRANSLATOR_MODEL``,
  ``ATTN_MODELS``, ``ATTN_ALLOW_FOLDERS``, ``ATTN_DOWNLOAD_MB``): :class:`attn_models.Access` and its module's text,
  which parses and logs them (a program using attn_models alone reads them the same way).

Examples
--------
>>> s = parse({"ATTN_CACHE_MB": "64", "ATTN_CAUSAL_MODEL": " me/gpt "})
>>> s.cache_bytes, s.causal_model, s.translator_model, s.default_model("ko")
(64000000, 'me/gpt', 'google-t5/t5-small', 'sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2')
>>> cache_bytes({"ATTN_CACHE_MB": "1e400"})
(256000000, "ATTN_CACHE_MB='1e400' is not a finite number of megabytes from 1 to 1000000: using 256.")
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import attn_models
from attn_models.access import (
    ENV_CAUSAL,
    ENV_DOWNLOAD,
    ENV_FOLDERS,
    ENV_MASKED,
    ENV_MODEL,
    ENV_MODELS,
    ENV_TRANSLATOR,
    megabytes,
)

ENV_CACHE = "ATTN_CACHE_MB"
CACHE_MB = 256  # ATTN_CACHE_MB's default, sized for Streamlit Community Cloud's ≈ 1 GB (bench/RESULTS.md)
CACHE_MB_MOST = 1_000_000  # ATTN_CACHE_MB's largest value (1 TB)
#: the variables :func:`settings` reads: a change of any of them is parsed again
NAMES = (ENV_CACHE, ENV_MODEL, ENV_CAUSAL, ENV_TRANSLATOR, ENV_MASKED, ENV_MODELS, ENV_FOLDERS, ENV_DOWNLOAD)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """The operator's choices, parsed.

    Attributes
    ----------
    cache_bytes : int
        The memory budget of the shared caches, in bytes (``ATTN_CACHE_MB``).
    access : attn_models.Access
        What visitors may load, the operator's models among it, and the disk their downloads may take.
    model : str
        ``ATTN_MODEL``, stripped; empty: the learner's language's default (:meth:`default_model`).
    causal_model, translator_model : str
        The models A model that writes and A model that translates read unless the learner names another.
    masked_model : str
        The masked-language model Learn's masked-word lesson reads unless the learner names one on A real model.
    """

    cache_bytes: int
    access: attn_models.Access
    model: str
    causal_model: str
    translator_model: str
    masked_model: str

    def default_model(self, language: str) -> str:
        """The encoder read unless the learner names another: ``ATTN_MODEL``, else ``language``'s default."""
        return attn_models.default_model(language, {ENV_MODEL: self.model})


def cache_bytes(env: Mapping[str, str]) -> tuple[int, str | None]:
    """The memory budget ``ATTN_CACHE_MB`` in ``env`` says, in bytes, and None; or the default and the problem (a line
    for the log) when it is not a finite number of megabytes from 1 to :data:`CACHE_MB_MOST`.

    >>> cache_bytes({}), cache_bytes({"ATTN_CACHE_MB": "0.5e3"})[0], cache_bytes({"ATTN_CACHE_MB": "-5"})[0]
    ((256000000, None), 500000000, 256000000)
    """
    mb, problem = megabytes(env, ENV_CACHE, CACHE_MB, 1, CACHE_MB_MOST)
    return round(mb * 1e6), problem


def parse(env: Mapping[str, str]) -> Settings:
    """The settings ``env`` holds; each value not understood is logged (a WARNING) and replaced (module's text)."""
    limit, problem = cache_bytes(env)
    if problem:
        log.warning(problem)
    return Settings(limit, attn_models.Access.from_env(env), (env.get(ENV_MODEL) or "").strip(),
                    attn_models.causal_model(env), attn_models.translator_model(env), attn_models.masked_model(env))


_lock = threading.Lock()
_last: tuple[tuple[str | None, ...], Settings] | None = None  # (the values of NAMES, their settings)


def settings() -> Settings:
    """The server's settings: ``os.environ`` parsed (:func:`parse`) the first time, and again only when one of
    :data:`NAMES` has changed since (so each value not understood is logged once)."""
    global _last
    values = tuple(os.environ.get(name) for name in NAMES)
    with _lock:
        if _last is None or _last[0] != values:
            _last = values, parse({n: v for n, v in zip(NAMES, values, strict=True) if v is not None})
        return _last[1]
