"""Which checkpoints a server lets its visitors load: the operator decides, in environment variables.

- ``ATTN_MODEL``: the model the page reads unless the visitor names another (a repo id, or a folder on the server:
  the operator's choice is always allowed), in every language. Unset: :func:`default_model` of the learner's
  language: :data:`DEFAULT_MODEL` (English), :data:`MULTILINGUAL_MODEL` in Chinese and Korean.
- ``ATTN_CAUSAL_MODEL``, ``ATTN_TRANSLATOR_MODEL``: likewise for A model that writes (a GPT-2; unset:
  :data:`CAUSAL_MODEL`) and A model that translates (a T5; unset: :data:`TRANSLATOR_MODEL`).
- ``ATTN_MODELS``: unset or ``*``: any Hub repo id that fits the caps; ``default``: only the default models (and the
  operator's choices above); otherwise a comma-separated list of repo ids.
- ``ATTN_ALLOW_FOLDERS=1``: visitors may name folders on the server (off unless set).
- ``ATTN_DOWNLOAD_MB`` (default 1000): the most megabytes of the Hub cache the models visitors chose may take; the
  least recently used of them is removed to make room (never a default, never ATTN_MODEL).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import N_, ModelError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # English (its WordPiece turns Korean into jamo)
#: the default in Chinese and Korean: XLM-RoBERTa's sentencepiece reads them (12 layers, hidden 384, 470.6 MB)
MULTILINGUAL_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
#: the model A model that writes reads: the one published GPT-2 within the caps (6 layers, 353 MB; bench/gpt2.py)
CAUSAL_MODEL = "distilbert/distilgpt2"
TRANSLATOR_MODEL = "google-t5/t5-small"  # A model that translates: English to French, German, Romanian (242 MB)
DEFAULTS = (DEFAULT_MODEL, MULTILINGUAL_MODEL, CAUSAL_MODEL, TRANSLATOR_MODEL)
MULTILINGUAL_LANGUAGES = ("zh", "ko")  # the app's languages the English default does not read
ENV_MODEL, ENV_MODELS, ENV_FOLDERS, ENV_DOWNLOAD = "ATTN_MODEL", "ATTN_MODELS", "ATTN_ALLOW_FOLDERS", "ATTN_DOWNLOAD_MB"
ENV_CAUSAL, ENV_TRANSLATOR = "ATTN_CAUSAL_MODEL", "ATTN_TRANSLATOR_MODEL"
DOWNLOAD_MB = 1000  # ATTN_DOWNLOAD_MB's default
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


@dataclass(frozen=True)
class Access:
    """What may be loaded: the repos (None: any), whether folders may be named, the operator's own sources (always
    allowed, downloaded without asking, never evicted) and the disk the visitors' repos may take (None: no cap).

    ``Access()`` allows everything (a program using attn_models); the app uses ``Access.from_env(os.environ)``.
    """

    repos: frozenset[str] | None = None
    folders: bool = True
    operator: tuple[str, ...] = DEFAULTS
    download_bytes: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Access:
        """The operator's choices in ``env`` (see the module's text).

        >>> a = Access.from_env({"ATTN_MODELS": "default", "ATTN_MODEL": "/srv/bert", "ATTN_CAUSAL_MODEL": "me/gpt"})
        >>> sorted(a.repos), a.folders, a.download_bytes  # doctest: +NORMALIZE_WHITESPACE
        (['/srv/bert', 'distilbert/distilgpt2', 'google-t5/t5-small', 'me/gpt',
          'sentence-transformers/all-MiniLM-L6-v2', 'sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2'],
          False, 1000000000)
        >>> sorted(Access.from_env({"ATTN_MODELS": " a/b, c/d ,"}).repos)[:3]
        ['a/b', 'c/d', 'distilbert/distilgpt2']
        >>> Access.from_env({"ATTN_MODELS": "*"}).repos is None
        True
        """
        chosen = [c for c in (env.get(name, "").strip() for name in (ENV_MODEL, ENV_CAUSAL, ENV_TRANSLATOR)) if c]
        operator = tuple(dict.fromkeys([*DEFAULTS, *chosen]))
        listed = env.get(ENV_MODELS, "*").strip() or "*"
        if listed == "*":
            repos = None
        elif listed == "default":
            repos = frozenset(operator)
        else:
            repos = frozenset(operator) | {r.strip() for r in listed.split(",") if r.strip()}
        try:
            mb = float(env.get(ENV_DOWNLOAD, DOWNLOAD_MB))
        except ValueError:
            mb = DOWNLOAD_MB
        folders = env.get(ENV_FOLDERS, "").strip().lower() in {"1", "true", "yes", "on"}
        return cls(repos, folders, operator, max(0, int(mb * 1e6)))

    def is_operators(self, source: str) -> bool:
        """Whether the operator chose ``source`` (the default model, or ATTN_MODEL)."""
        return source.strip() in self.operator

    def check(self, source: object) -> str:
        """``source`` stripped when it may be loaded, else ModelError (one message for every name that is not a repo
        id when folders are off: nothing on disk is looked at, nothing of the name is echoed).

        >>> Access(folders=False).check("/etc")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        attn_models.errors.ModelError: This server loads models from the Hugging Face Hub only...
        >>> Access(repos=frozenset({"a/b"})).check("c/d")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        attn_models.errors.ModelError: 'c/d' is not one of the models this server offers: a/b.
        """
        if not isinstance(source, str) or not source.strip():
            raise ModelError(N_("Name a model: a Hugging Face repo id (owner/name) or a folder on this machine."))
        source = source.strip()
        if self.is_operators(source):
            return source
        if self.folders and is_folder(source):
            return source
        if not _REPO_ID.fullmatch(source):
            if not self.folders and looks_like_repo_id(source):  # said by its shape alone, never by the disk
                raise invalid_repo_id(source)
            if not self.folders:
                raise ModelError(N_("This server loads models from the Hugging Face Hub only: name one by its repo "
                                    "id (owner/name). Folders on the server cannot be named."))
            raise ModelError(N_("{source} is neither a folder on this machine nor a Hugging Face repo id "
                                "(owner/name)."), source=repr(source[:200]))
        check_repo_id(source)
        if self.repos is not None and source not in self.repos:
            raise ModelError(N_("{repo_id} is not one of the models this server offers: {models}."),
                             repo_id=repr(source), models=", ".join(sorted(self.repos)))
        return source


def causal_model(env: Mapping[str, str] | None = None) -> str:
    """The GPT-2 A model that writes reads unless the learner names another: $ATTN_CAUSAL_MODEL, else
    :data:`CAUSAL_MODEL`."""
    return (env or {}).get(ENV_CAUSAL, "").strip() or CAUSAL_MODEL


def translator_model(env: Mapping[str, str] | None = None) -> str:
    """The T5 A model that translates reads unless the learner names another: $ATTN_TRANSLATOR_MODEL, else
    :data:`TRANSLATOR_MODEL`."""
    return (env or {}).get(ENV_TRANSLATOR, "").strip() or TRANSLATOR_MODEL


def default_model(language: str, env: Mapping[str, str] | None = None) -> str:
    """The model read unless the learner names another: the operator's ``ATTN_MODEL`` in ``env`` when set, else the
    language's default (:data:`MULTILINGUAL_MODEL` for "zh" and "ko", :data:`DEFAULT_MODEL` otherwise).

    >>> default_model("en"), default_model("ko")
    ('sentence-transformers/all-MiniLM-L6-v2', 'sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2')
    >>> default_model("zh", {"ATTN_MODEL": " /srv/bert "})
    '/srv/bert'
    """
    chosen = (env or {}).get(ENV_MODEL, "").strip()
    if chosen:
        return chosen
    return MULTILINGUAL_MODEL if language in MULTILINGUAL_LANGUAGES else DEFAULT_MODEL


def check_repo_id(repo_id: str) -> None:
    """ModelError when ``repo_id`` breaks the Hub's own rules (huggingface_hub's validate_repo_id: no ``--`` or
    ``..``, no ``.git`` at the end, no ``-`` or ``.`` at either end of a part).

    >>> check_repo_id("a/b..c")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: 'a/b..c' is not a valid Hugging Face repo id: ...
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
        ok = not any(part.endswith((".", "-")) for part in repo_id.split("/"))
    except HFValidationError:
        ok = False
    if not ok:
        raise invalid_repo_id(repo_id)


def looks_like_repo_id(source: str) -> bool:
    """Whether a name that is no valid repo id was meant as one (one ``/``, not a path's start), by its text alone.

    >>> [looks_like_repo_id(s) for s in ("用户/模型", "a/b?x=1", "/etc", "../..", "~", "a/b/c", "C:" + chr(92) + "x")]
    [True, True, False, False, False, False, False]
    """
    return source.count("/") == 1 and not source.startswith(("/", ".", "~")) and "\\" not in source


def invalid_repo_id(repo_id: str) -> ModelError:
    return ModelError(N_("{repo_id} is not a valid Hugging Face repo id: owner/name, each of letters, digits, "
                         "'-', '_' and '.', neither starting nor ending with '-' or '.', without '--' or '..', not "
                         "ending in '.git'."), repo_id=repr(repo_id[:200]))


def is_folder(source: str) -> bool:
    """Whether ``source`` names a folder on this machine (else it must be a Hub repo id).

    >>> is_folder("a " * 300)  # a name longer than the system takes is no folder (not an OSError)
    False
    """
    try:
        return Path(source).expanduser().is_dir()
    except (OSError, ValueError):  # a name too long for the system, a NUL character
        return False
