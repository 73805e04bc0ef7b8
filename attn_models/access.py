"""Which checkpoints a server lets its visitors load: the operator decides, in environment variables.

- ``ATTN_MODEL``: the model the page reads unless the visitor names another (a repo id, or a folder on the server:
  the operator's choice is always allowed), in every language. Unset: :func:`default_model` of the learner's
  language: :data:`DEFAULT_MODEL` (English), :data:`MULTILINGUAL_MODEL` in Chinese and Korean.
- ``ATTN_CAUSAL_MODEL``, ``ATTN_TRANSLATOR_MODEL``, ``ATTN_MASKED_MODEL``: likewise for A model that writes (a
  GPT-2; unset: :data:`CAUSAL_MODEL`), A model that translates (a T5; unset: :data:`TRANSLATOR_MODEL`) and what
  fills in a [MASK] (a BertForMaskedLM, for Learn's masked-word lesson; unset: :data:`MASKED_MODEL`).
- ``ATTN_MODELS``: unset or ``*``: any Hub repo id that fits the caps; ``default``: only the default models (and the
  operator's choices above); otherwise a comma-separated list of repo ids (a folder in it stays in the list, but a
  visitor is never shown it).
- ``ATTN_ALLOW_FOLDERS=1`` (or true, yes, on): visitors may name folders on the server (off unless set).
- ``ATTN_DOWNLOAD_MB`` (default 1000, a number from 0 to :data:`DOWNLOAD_MOST`): the most megabytes of the Hub cache
  the models visitors chose may take; the least recently used of them is removed to make room (never a default,
  never ATTN_MODEL).

No value raises. A value that is not understood is logged once (a WARNING of this module's logger, naming the
variable, the value and what is done instead) by :meth:`Access.from_env`: a number out of range or not a number
(``inf``, ``nan``, ``1e400``, ``abc``) gives the default; an entry of ``ATTN_MODELS`` that is neither a valid repo id
nor a folder is left out; an ``ATTN_ALLOW_FOLDERS`` not understood leaves folders off. An operator's model that is
neither a folder nor a valid repo id is logged too, and refused when a page reads it with the message a visitor's
name gets (:meth:`Access.check`), never with huggingface_hub's traceback.
"""

from __future__ import annotations

import logging
import math
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
#: the masked-language model (a BertForMaskedLM: 4 layers × 4 heads, hidden 256, a 45 MB model.safetensors; vocab.txt
#: and no tokenizer.json), so that Learn's masked-word lesson works as the server comes
MASKED_MODEL = "gaunernst/bert-mini-uncased"
DEFAULTS = (DEFAULT_MODEL, MULTILINGUAL_MODEL, CAUSAL_MODEL, TRANSLATOR_MODEL, MASKED_MODEL)
MULTILINGUAL_LANGUAGES = ("zh", "ko")  # the app's languages the English default does not read
ENV_MODEL, ENV_MODELS, ENV_FOLDERS, ENV_DOWNLOAD = "ATTN_MODEL", "ATTN_MODELS", "ATTN_ALLOW_FOLDERS", "ATTN_DOWNLOAD_MB"
ENV_CAUSAL, ENV_TRANSLATOR, ENV_MASKED = "ATTN_CAUSAL_MODEL", "ATTN_TRANSLATOR_MODEL", "ATTN_MASKED_MODEL"
DOWNLOAD_MB = 1000  # ATTN_DOWNLOAD_MB's default
DOWNLOAD_MOST = 10_000_000  # ATTN_DOWNLOAD_MB's largest value (10 TB)
ON, OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")  # ATTN_ALLOW_FOLDERS, in any case
#: a Hub repo id's shape: owner/name, or a name alone (a legacy id such as gpt2 or bert-base-uncased, which the Hub
#: and huggingface_hub's validate_repo_id take); each part at most :data:`PART_MOST` characters
_REPO_ID = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
PART_MOST = 96  # the Hub's longest owner and longest name (huggingface_hub's validate_repo_id)
#: the repo id a refusal gives as an example, by the kind of model the page reads (None: a program's, the encoder's)
EXAMPLES = {"encoder": DEFAULT_MODEL, "masked": MASKED_MODEL, "causal": CAUSAL_MODEL, "translator": TRANSLATOR_MODEL}
QUOTED_CHARS = 40  # the most characters of a name a refusal quotes
log = logging.getLogger(__name__)


def shown(value: str, most: int = 80) -> str:
    """An operator's value as a log line shows it: its repr, cut to ``most`` characters.

    >>> shown("inf"), shown("x" * 100)[-3:]
    ("'inf'", "x'…")
    """
    return repr(value[:most]) + ("…" if len(value) > most else "")


def megabytes(env: Mapping[str, str], name: str, default: int, least: int, most: int) -> tuple[float, str | None]:
    """The number of megabytes ``env[name]`` says, and None; or, when it is not a finite number from ``least`` to
    ``most``, ``default`` and the problem (one line for the log, naming the variable, the value and the default).
    Unset or blank: ``default``, no problem. Never raises.

    >>> megabytes({"X": " 64 "}, "X", 256, 1, 1000), megabytes({}, "X", 256, 1, 1000)
    ((64.0, None), (256.0, None))
    >>> megabytes({"X": "1e400"}, "X", 256, 1, 1000)
    (256.0, "X='1e400' is not a finite number of megabytes from 1 to 1000: using 256.")
    >>> [megabytes({"X": v}, "X", 256, 1, 1000)[0] for v in ("inf", "nan", "-5", "0", "abc", "1001")]
    [256.0, 256.0, 256.0, 256.0, 256.0, 256.0]
    """
    text = env.get(name) or ""
    if not text.strip():
        return float(default), None
    try:
        mb = float(text)
    except ValueError:
        mb = math.nan
    if math.isfinite(mb) and least <= mb <= most:
        return mb, None
    return float(default), (f"{name}={shown(text)} is not a finite number of megabytes from {least} to {most}: "
                            f"using {default}.")


@dataclass(frozen=True)
class Access:
    """What may be loaded: the repos (None: any), whether folders may be named, the operator's own sources (always
    allowed, downloaded without asking, never evicted), the disk the visitors' repos may take (None: no cap) and the
    names in ``repos`` a visitor is never shown (the operator's folders: :attr:`offered`).

    ``Access()`` allows everything (a program using attn_models); the app reads ``Access.from_env(os.environ)``
    (through attn_ui.infra.settings, once).
    """

    repos: frozenset[str] | None = None
    folders: bool = True
    operator: tuple[str, ...] = DEFAULTS
    download_bytes: int | None = None
    hidden: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Access:
        """The operator's choices in ``env`` (see the module's text); each value not understood is logged (a
        WARNING: :meth:`parse`'s problems).

        >>> a = Access.from_env({"ATTN_MODELS": "default", "ATTN_MODEL": "/srv/bert", "ATTN_CAUSAL_MODEL": "me/gpt"})
        >>> sorted(a.repos), a.folders, a.download_bytes  # doctest: +NORMALIZE_WHITESPACE
        (['/srv/bert', 'distilbert/distilgpt2', 'gaunernst/bert-mini-uncased', 'google-t5/t5-small', 'me/gpt',
          'sentence-transformers/all-MiniLM-L6-v2', 'sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2'],
          False, 1000000000)
        >>> sorted(Access.from_env({"ATTN_MODELS": " a/b, c/d ,"}).repos)[:3]
        ['a/b', 'c/d', 'distilbert/distilgpt2']
        >>> Access.from_env({"ATTN_MODELS": "*"}).repos is None
        True
        """
        access, problems = cls.parse(env)
        for problem in problems:
            log.warning(problem)
        return access

    @classmethod
    def parse(cls, env: Mapping[str, str]) -> tuple[Access, list[str]]:
        """The operator's choices in ``env``, and what was not understood in it (one line each, for the log: the
        variable, its value, what is done instead). Never raises.

        >>> a, problems = Access.parse({"ATTN_MODELS": "a/b, ../x, c/d..e", "ATTN_DOWNLOAD_MB": "inf",
        ...                             "ATTN_ALLOW_FOLDERS": "ture"})
        >>> sorted(a.repos)[:1], a.download_bytes, a.folders
        (['a/b'], 1000000000, False)
        >>> for p in problems: print(p)
        ATTN_MODELS lists '../x', neither a valid Hugging Face repo id nor a folder on this machine: left out.
        ATTN_MODELS lists 'c/d..e', neither a valid Hugging Face repo id nor a folder on this machine: left out.
        ATTN_ALLOW_FOLDERS='ture' is not one of 1, true, yes, on (allowed) or 0, false, no, off: folders stay off.
        ATTN_DOWNLOAD_MB='inf' is not a finite number of megabytes from 0 to 10000000: using 1000.
        """
        problems: list[str] = []
        chosen, folders_named = [], set()
        for name in (ENV_MODEL, ENV_CAUSAL, ENV_TRANSLATOR, ENV_MASKED):
            if not (value := (env.get(name) or "").strip()):
                continue
            chosen.append(value)
            if is_folder(value):
                folders_named.add(value)
            elif not is_repo_id(value):
                problems.append(f"{name}={shown(value)} is neither a folder on this machine nor a valid Hugging Face "
                                "repo id: the page that reads it refuses it with a message.")
        operator = tuple(dict.fromkeys([*DEFAULTS, *chosen]))
        listed = (env.get(ENV_MODELS) or "").strip() or "*"
        if listed == "*":
            repos = None
        elif listed == "default":
            repos = frozenset(operator)
        else:
            kept = set()
            for entry in dict.fromkeys(r.strip() for r in listed.split(",") if r.strip()):
                if is_folder(entry):  # kept in the list, never shown to a visitor
                    kept.add(entry)
                    folders_named.add(entry)
                elif is_repo_id(entry):
                    kept.add(entry)
                else:
                    problems.append(f"{ENV_MODELS} lists {shown(entry)}, neither a valid Hugging Face repo id nor a "
                                    "folder on this machine: left out.")
            repos = frozenset(operator) | kept
        flag = (env.get(ENV_FOLDERS) or "").strip()
        folders = flag.lower() in ON
        if flag and not folders and flag.lower() not in OFF:
            problems.append(f"{ENV_FOLDERS}={shown(flag)} is not one of {', '.join(ON)} (allowed) or {', '.join(OFF)}: "
                            "folders stay off.")
        mb, problem = megabytes(env, ENV_DOWNLOAD, DOWNLOAD_MB, 0, DOWNLOAD_MOST)
        problems += [problem] if problem else []
        return cls(repos, folders, operator, round(mb * 1e6), frozenset(folders_named)), problems

    @property
    def offered(self) -> tuple[str, ...] | None:
        """The models a visitor may pick, as a visitor may be told them: the valid repo ids of :attr:`repos`, sorted
        (never a folder, never a name that is no repo id); None: any repo id.

        >>> Access(repos=frozenset({"a/b", "/srv/bert", "a/b..c"})).offered
        ('a/b',)
        """
        if self.repos is None:
            return None
        return tuple(sorted(r for r in self.repos if r not in self.hidden and is_repo_id(r)))

    def is_operators(self, source: str) -> bool:
        """Whether the operator chose ``source`` (the default model, or ATTN_MODEL)."""
        return source.strip() in self.operator

    def check(self, source: object, role: str | None = None, language: str | None = None) -> str:
        """``source`` stripped when it may be loaded, else ModelError. When folders are off, a name that is no repo id
        is refused by its text alone (:func:`not_a_repo_id`: a web address, a path, an empty name or part, too long, a
        character no repo id has, a rule of the Hub's broken; its example is :func:`example` of ``role``, the page's
        kind, and ``language``, the learner's where the page reads that language's default): nothing
        on disk is looked at, so every path gets one message whatever is there, and at most
        :data:`QUOTED_CHARS` characters of the name are echoed. A repo id may be a name alone (gpt2). The
        operator's own sources are allowed when they are a folder or a valid repo id; another is refused as a
        visitor's name is, so no malformed id ever reaches huggingface_hub. The refusal of a repo not offered names
        :attr:`offered` only.

        >>> Access(folders=False).check("/etc")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        attn_models.errors.ModelError: The name typed is a path, and this server loads models from the Hugging Face...
        >>> Access(repos=frozenset({"a/b"})).check("c/d")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        attn_models.errors.ModelError: 'c/d' is not one of the models this server offers: a/b.
        >>> Access(operator=("a/b..c",)).check("a/b..c")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        attn_models.errors.ModelError: 'a/b..c' is not a valid Hugging Face repo id: ...
        """
        if not isinstance(source, str) or not source.strip():
            raise ModelError(N_("Name a model: a Hugging Face repo id (owner/name) or a folder on this machine.")
                             if self.folders else N_("Name a model: a Hugging Face repo id (owner/name)."))
        source = source.strip()
        if self.is_operators(source) and (is_repo_id(source) or is_folder(source)):
            return source  # else the operator's name is judged as a visitor's (a malformed id: invalid_repo_id)
        if self.folders and is_folder(source):
            return source
        if not self.folders and not is_repo_id(source):
            raise not_a_repo_id(source, example(role, language))  # by its text alone, as above
        if not _REPO_ID.fullmatch(source):
            if (empty := empty_part(source, example(role, language))) is not None:
                raise empty
            raise ModelError(N_("{source} is neither a folder on this machine nor a Hugging Face repo id "
                                "(owner/name)."), source=quoted(source))
        check_repo_id(source)
        if self.repos is not None and source not in self.repos:
            raise ModelError(N_("{repo_id} is not one of the models this server offers: {models}."),
                             repo_id=repr(source), models=", ".join(self.offered or ()))
        return source


def example(role: str | None, language: str | None = None) -> str:
    """The repo id a refusal gives as an example on a page that reads a model of ``role``: the model such a page reads
    unless told otherwise (:data:`EXAMPLES`). A sentence encoder read in ``language`` (A real model reads
    :func:`default_model` of the learner's language) has that language's default: in Chinese and Korean the
    multilingual MiniLM the page loads, not the English one. ``language`` None: the English default (Learn's lessons
    read the English encoder in every language).

    >>> example("encoder", "zh") == MULTILINGUAL_MODEL, example("encoder"), example("causal", "ko")
    (True, 'sentence-transformers/all-MiniLM-L6-v2', 'distilbert/distilgpt2')
    """
    if role in (None, "", "encoder") and language in MULTILINGUAL_LANGUAGES:
        return MULTILINGUAL_MODEL
    return EXAMPLES.get(role or "", DEFAULT_MODEL)


def causal_model(env: Mapping[str, str] | None = None) -> str:
    """The GPT-2 A model that writes reads unless the learner names another: $ATTN_CAUSAL_MODEL, else
    :data:`CAUSAL_MODEL`."""
    return (env or {}).get(ENV_CAUSAL, "").strip() or CAUSAL_MODEL


def translator_model(env: Mapping[str, str] | None = None) -> str:
    """The T5 A model that translates reads unless the learner names another: $ATTN_TRANSLATOR_MODEL, else
    :data:`TRANSLATOR_MODEL`."""
    return (env or {}).get(ENV_TRANSLATOR, "").strip() or TRANSLATOR_MODEL


def masked_model(env: Mapping[str, str] | None = None) -> str:
    """The masked-language model (a BertForMaskedLM) Learn's masked-word lesson reads unless the learner names
    another: $ATTN_MASKED_MODEL, else :data:`MASKED_MODEL`.

    >>> masked_model(), masked_model({"ATTN_MASKED_MODEL": " me/bert-mlm "})
    ('gaunernst/bert-mini-uncased', 'me/bert-mlm')
    """
    return (env or {}).get(ENV_MASKED, "").strip() or MASKED_MODEL


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
    if not is_repo_id(repo_id):
        raise invalid_repo_id(repo_id)


def is_repo_id(source: str) -> bool:
    """Whether ``source`` is a Hub repo id huggingface_hub takes (owner/name, or a legacy name alone such as gpt2; by
    its text alone: nothing on disk or on the network is looked at).

    >>> [is_repo_id(s) for s in ("a/b", "gpt2", "a/b..c", "a--b/c", "a/b.git", "a/b.", "/srv/bert", "a/", "用户/模型")]
    [True, True, False, False, False, False, False, False, False]
    """
    if not _REPO_ID.fullmatch(source):
        return False
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(source)
    except HFValidationError:
        return False
    return not any(part.endswith((".", "-")) for part in source.split("/"))


def looks_like_repo_id(source: str) -> bool:
    """Whether a name that is no valid repo id was meant as one (one ``/``, not a path's start), by its text alone.

    >>> [looks_like_repo_id(s) for s in ("用户/模型", "a/b?x=1", "/etc", "../..", "~", "a/b/c", "C:" + chr(92) + "x")]
    [True, True, False, False, False, False, False]
    """
    return source.count("/") == 1 and not source.startswith(("/", ".", "~")) and "\\" not in source


#: says that a name is a path (by its text alone): a path's start, a Windows drive or a backslash; or more than one
#: '/' (:data:`_PATHS`) in a name whose characters a repo id could have (``<b>hi</b>/x`` is told its '<' and '>')
_PATH = re.compile(r"[/.~]|[A-Za-z]:|.*\\")
_PATHS = re.compile(r"[^/]*/[^/]*/")
SHOWN_CHARS = 8  # the most characters no repo id has that a refusal names
#: says that a name is a web address: a scheme (https://, file://, hf://), or www. or huggingface.co/ at its start
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://|www\.|(?:[A-Za-z0-9-]+\.)*(?:huggingface|hf)\.co(?:/|$)", re.IGNORECASE)
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9_.\-/]")


def quoted(name: str) -> str:
    """A name as a refusal quotes it: its repr, cut at :data:`QUOTED_CHARS` characters with "…".

    >>> quoted("a/b"), quoted("x" * 300) == repr("x" * 40 + "…")
    ("'a/b'", True)
    """
    return repr(name if len(name) <= QUOTED_CHARS else name[:QUOTED_CHARS] + "…")


def not_a_repo_id(source: str, example: str = DEFAULT_MODEL) -> ModelError:
    """The refusal of a name that is no valid repo id where folders cannot be named, saying what is wrong with it by
    its text alone (never by the disk), quoting at most :data:`QUOTED_CHARS` characters of it: a web address, an empty
    name or part (:func:`empty_part`), a path, a part (owner or name) longer than the Hub takes, a character no repo id
    has, or else the Hub's rule it breaks (:func:`invalid_repo_id`). ``example``: a repo id of the kind the page reads.

    >>> [str(not_a_repo_id(s)).split(":")[0] for s in ("https://x.org/m", "/etc", "a" * 3000, "a b")]
    ['The name typed is a web address', 'The name typed is a path, and this server loads models from the Hugging Face
     Hub only', 'The name typed is too long for a Hugging Face repo id', "The name typed has ' ', which a Hugging Face
     repo id cannot have"]

    A name with two '/' is a path only when its other characters could be a repo id's: ``<b>hi</b>/x`` is told its
    characters.

    >>> str(not_a_repo_id("<b>hi</b>/x")).split(":")[0], str(not_a_repo_id("a/b/c")).split(",")[0]
    ("The name typed has the characters '<' '>', which a Hugging Face repo id cannot have", 'The name typed is a path')
    """
    if _URL.match(source):
        return ModelError(N_("The name typed is a web address: this server takes a Hugging Face repo id, not an "
                             "address. A repo id is owner/name (for example {example}): on the Hub, what follows "
                             "huggingface.co/ in a model's address."), example=example)
    if (empty := empty_part(source, example)) is not None:
        return empty
    if _PATH.match(source) or (_PATHS.match(source) and not _NOT_IN_ID.search(source.replace("/", ""))):
        return ModelError(N_("The name typed is a path, and this server loads models from the Hugging Face Hub "
                             "only: name one by its repo id (owner/name). Folders on the server cannot be named."))
    if long := next((part for part in source.split("/") if len(part) > PART_MOST), None):
        return ModelError(N_("The name typed is too long for a Hugging Face repo id: {part} has {n:,} characters, and "
                             "the Hub takes at most {most} for the owner and as many for the model's name "
                             "(owner/name)."), part=quoted(long), n=len(long), most=PART_MOST)
    bad = list(dict.fromkeys(_NOT_IN_ID.findall(source)))  # each character no repo id has, once, in order
    if len(bad) == 1:
        return ModelError(N_("The name typed has {char}, which a Hugging Face repo id cannot have: a repo id is "
                             "owner/name (for example {example}), each of the letters A–Z and a–z, digits, '-', '_' "
                             "and '.'."), char=repr(bad[0]), example=example)
    if bad:
        return ModelError(N_("The name typed has the characters {chars}, which a Hugging Face repo id cannot have: a "
                             "repo id is owner/name (for example {example}), each of the letters A–Z and a–z, digits, "
                             "'-', '_' and '.'."),
                          chars=" ".join(map(repr, bad[:SHOWN_CHARS])) + (" …" if len(bad) > SHOWN_CHARS else ""),
                          example=example)
    return invalid_repo_id(source)


def empty_part(source: str, example: str) -> ModelError | None:
    """The refusal of a name meant as a repo id with an empty part, saying which, or None: nothing after its one '/'
    (``owner/``), a '/' after the name (``owner/name/``), or two '/' in a row between an owner and a name
    (``owner//name``); they had the Hub's rules, or were told they are a path. ``example``: a repo id of the kind the
    page reads. A name with nothing before its '/' (``/name``) is a path, and told so (folders off, every such name
    gets one message: :func:`not_a_repo_id`).

    >>> for s in ("me/", "me//bert", "me/bert/"):
    ...     print(str(empty_part(s, "a/b")).split(":")[0])
    The name typed has nothing after its '/'
    The name typed has two '/' in a row
    The name typed ends with a '/'
    >>> str(empty_part("me/bert/", "a/b")).split("(")[-1]
    "here 'me/bert')."
    >>> [empty_part(s, "a/b") for s in ("/bert", "a/b", "/", "a///b", "./", "a/b/c/", "C:/", "用户/")]
    [None, None, None, None, None, None, None, None]
    """
    owner, slash, name = source.partition("/")
    if not slash or _NOT_IN_ID.search(source) or source.startswith((".", "~")):  # a path (C:/, ./), a bad character
        return None
    if owner and not name:
        return ModelError(N_("The name typed has nothing after its '/': the model's name is missing. A Hugging Face "
                             "repo id is owner/name (for example {example})."), example=example)
    if owner and name.endswith("/") and (rest := name[:-1]) and "/" not in rest:  # copied with an address's end
        return ModelError(N_("The name typed ends with a '/': a Hugging Face repo id is owner/name with nothing "
                             "after the name (here {repo_id})."), repo_id=quoted(f"{owner}/{rest}"))
    if owner and name.startswith("/") and (rest := name[1:]) and "/" not in rest:
        return ModelError(N_("The name typed has two '/' in a row: the part between them is empty. A Hugging Face "
                             "repo id has one '/', between the owner and the name (for example {example})."),
                          example=example)
    return None


def invalid_repo_id(repo_id: str) -> ModelError:
    return ModelError(N_("{repo_id} is not a valid Hugging Face repo id: owner/name, each of letters, digits, "
                         "'-', '_' and '.', neither starting nor ending with '-' or '.', without '--' or '..', not "
                         "ending in '.git'."), repo_id=quoted(repo_id))


def is_folder(source: str) -> bool:
    """Whether ``source`` names a folder on this machine (else it must be a Hub repo id).

    >>> is_folder("a " * 300)  # a name longer than the system takes is no folder (not an OSError)
    False
    """
    try:
        return Path(source).expanduser().is_dir()
    except (OSError, ValueError):  # a name too long for the system, a NUL character
        return False
