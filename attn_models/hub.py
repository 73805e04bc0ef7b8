"""Where a checkpoint's files come from: a folder on this machine, or the Hugging Face Hub (through its cache).

A source is either a folder holding ``config.json``, ``tokenizer.json`` and ``model.safetensors``, or a Hub repo
id (``owner/name``). A BERT may have ``vocab.txt`` (and maybe ``tokenizer_config.json``) in place of
``tokenizer.json``: each family's config says which tokenizer files it reads (``tokenizer_files``), and the first of
them the checkpoint has is read. A repo's files are looked up in huggingface_hub's standard cache first
(``HF_HUB_CACHE``, by default ``~/.cache/huggingface/hub``), without touching the network; only what is missing is
downloaded, into that cache, unless ``HF_HUB_OFFLINE=1``. Nothing but safetensors is read: a checkpoint that has only
``pytorch_model.bin`` (a pickle) is refused, never unpickled.

Judge before fetching: a repo's file list with sizes is read from the Hub's metadata (:func:`judge_repo`, no
download) and checked against attn_models.MODEL_LIMITS; config.json is read and checked before the weights are
downloaded; every download is stopped as soon as it is larger than its cap (whatever the metadata said). A repo the
app downloaded carries a mark in its cache folder (:data:`MARK`, its time the last use): a refused one is removed
(:func:`discard`), and the visitors' ones are kept under a disk budget (:func:`make_room`).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar
from urllib.parse import urlsplit

from attn_core import Phrase, Words

from .access import DEFAULT_MODEL, Access, is_folder
from .errors import N_, ModelError, ModelUnavailableError, NotFetchedError
from .limits import MODEL_LIMITS, too_large
from .origin import shown_name
from .tokenizer import TOKENIZER, TOKENIZER_CONFIG, VOCAB, read_tokenizer

log = logging.getLogger(__name__)
# (repo, file) whose absence the log has said; at most SAID_MOST (visitors name repos)
_SAID: set[tuple[str, str]] = set()
SAID_MOST = 1024

__all__ = ["DEFAULT_MODEL", "is_folder"]  # re-exported from .access for the package's users

CONFIG, WEIGHTS = "config.json", "model.safetensors"
#: the tokenizer files read, tokenizer.json first; a family's config says which it reads (BERT's: both)
TOKENIZERS = (TOKENIZER, VOCAB)
PICKLES = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")  # never read
MARK = ".attn-explorer"  # a file in a repo's cache folder: this app downloaded it (its mtime: the last use)
CAPS = {CONFIG: MODEL_LIMITS.config_bytes, TOKENIZER: MODEL_LIMITS.tokenizer_bytes, VOCAB: MODEL_LIMITS.tokenizer_bytes,
        TOKENIZER_CONFIG: MODEL_LIMITS.config_bytes, WEIGHTS: MODEL_LIMITS.weights_bytes}  # the most bytes of each file

#: the system's usual reasons why an address cannot be reached, marked for the app's catalogs: a reason that is one
#: of them is shown in the learner's language (attn_ui.app.i18n.error_text translates the values of an error)
UNREACHABLE_REASONS = (
    N_("Name or service not known"), N_("Temporary failure in name resolution"), N_("Network is unreachable"),
    N_("No route to host"), N_("Connection refused"), N_("Connection timed out"), N_("TimeoutError"),
)

#: progress(file name, bytes done, bytes in all or None): called while a file downloads (maybe from another thread)
Progress = Callable[[str, int, int | None], None]
C = TypeVar("C")  # a family's config (BertConfig, Gpt2Config, T5Config)


@dataclass(frozen=True)
class CheckpointFiles:
    """The files of a checkpoint on this machine, and where they came from."""

    source: str  # what was asked for: a folder or a repo id
    config: Path
    tokenizer: Path  # tokenizer.json, or vocab.txt (attn_models.tokenizer.read_tokenizer reads either)
    weights: Path
    from_hub: bool
    tokenizer_config: Path | None = None  # tokenizer_config.json beside a vocab.txt, when the checkpoint has one


def tokenizer_files(checked: object) -> tuple[str, ...]:
    """The tokenizer files the family of ``checked`` (what a family's config reader returned) reads, in order of
    preference: its ``tokenizer_files``; :data:`TOKENIZERS` when it does not say."""
    return getattr(checked, "tokenizer_files", TOKENIZERS)


def first_of(accepted: tuple[str, ...], present: object) -> str | None:
    """The first of ``accepted`` that is in ``present`` (names, or a mapping of them), or None.

    >>> first_of(TOKENIZERS, {"vocab.txt", "config.json"}), first_of(("tokenizer.json",), {"vocab.txt"})
    ('vocab.txt', None)
    """
    return next((name for name in accepted if name in present), None)


def check_source(source: object, access: Access | None = None) -> str:
    """``source`` as text, or ModelError when ``access`` (default: everything) does not let it be loaded or it is
    neither a folder here nor a valid repo id.

    >>> check_source("sentence-transformers/all-MiniLM-L6-v2")
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> check_source("no such thing")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: 'no such thing' is neither a folder on this machine nor a Hugging Face repo id ...
    """
    return (access or Access()).check(source)


def offline() -> bool:
    """Whether downloads are switched off (``HF_HUB_OFFLINE`` set to 1/true/yes/on, read now)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def folder_files(folder: str, accepted: tuple[str, ...] = TOKENIZERS) -> CheckpointFiles:
    """The checkpoint files of a local folder (its tokenizer: the first of ``accepted`` it has), or ModelError naming
    what is missing."""
    root = Path(folder).expanduser()
    found = {name: root / name for name in (CONFIG, *TOKENIZERS, TOKENIZER_CONFIG, WEIGHTS) if (root / name).is_file()}
    if WEIGHTS not in found:
        raise _no_safetensors(folder, [p for p in PICKLES if (root / p).is_file()])
    tokenizer = first_of(accepted, found)
    for name, there in ((CONFIG, CONFIG in found), (TOKENIZER, tokenizer is not None)):
        if not there:
            raise ModelError(N_("{folder} has no {name}; a checkpoint folder needs config.json, tokenizer.json and "
                                "model.safetensors."), folder=shown_name(folder), name=name)
    return CheckpointFiles(folder, found[CONFIG], found[tokenizer], found[WEIGHTS], from_hub=False,
                           tokenizer_config=found.get(TOKENIZER_CONFIG) if tokenizer == VOCAB else None)


def _no_safetensors(folder: str, pickles: list[str]) -> ModelError:
    """The refusal of a folder without model.safetensors (naming the pickles it has instead)."""
    if pickles:
        return ModelError(N_("{folder} has no model.safetensors. It has {pickles}: a pickle, which this app never "
                             "unpickles (it can run code). Only safetensors checkpoints are read."),
                          folder=shown_name(folder), pickles=", ".join(pickles))
    return ModelError(N_("{folder} has no model.safetensors. Only safetensors checkpoints are read."),
                      folder=shown_name(folder))


def cached_file(repo_id: str, name: str, cache_dir: str | Path | None = None) -> Path | None:
    """The path of ``name`` of ``repo_id`` in the Hub cache (main revision), or None; never uses the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, name, cache_dir=cache_dir)
    return Path(found) if isinstance(found, str) else None


def in_cache(source: str, cache_dir: str | Path | None = None) -> bool:
    """Whether the checkpoint can be read without the network (a folder, or every file already in the cache)."""
    return is_folder(source) or repo_cached(source, cache_dir)


def repo_cached(repo_id: str, cache_dir: str | Path | None = None) -> bool:
    """Whether every file of the Hub repo is in the cache, its tokenizer.json or its vocab.txt (no folder of that name
    is looked at)."""
    return all(cached_file(repo_id, n, cache_dir) for n in (CONFIG, WEIGHTS)) and any(
        cached_file(repo_id, n, cache_dir) for n in TOKENIZERS)


def cached_files(repo_id: str, cache_dir: str | Path | None = None,
                 accepted: tuple[str, ...] = TOKENIZERS) -> CheckpointFiles:
    """The files of a repo in the cache (:func:`repo_cached`; its tokenizer the first of ``accepted`` cached), or
    ModelError when it has none of ``accepted``."""
    found = {n: path for n in (*accepted, TOKENIZER_CONFIG) if (path := cached_file(repo_id, n, cache_dir))}
    tokenizer = first_of(accepted, found)
    if tokenizer is None:
        raise ModelError(N_("{repo_id} has no {name} on the Hugging Face Hub."), repo_id=repo_id, name=TOKENIZER)
    return CheckpointFiles(repo_id, cached_file(repo_id, CONFIG, cache_dir), found[tokenizer],
                           cached_file(repo_id, WEIGHTS, cache_dir), from_hub=True,
                           tokenizer_config=found.get(TOKENIZER_CONFIG) if tokenizer == VOCAB else None)


def _check_online(repo_id: str, name: str, cache_dir: str | Path | None) -> None:
    """ModelUnavailableError when downloads are off (HF_HUB_OFFLINE) or the Hub's address cannot be reached."""
    if offline():
        raise _unavailable(repo_id, name, N_("HF_HUB_OFFLINE is set"), cache_dir)
    if (unreachable := _unreachable()) is not None:  # fail in a moment, not after huggingface_hub's retries
        raise _unavailable(repo_id, name, "", cache_dir, unreachable=unreachable)


def _hub_error(repo_id: str, name: str, err: BaseException, cache_dir: str | Path | None) -> ModelError:
    """The ModelError for a failure of huggingface_hub's while reading ``name`` of ``repo_id`` (or its metadata)."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    if isinstance(err, GatedRepoError):
        return ModelError(N_("{repo_id} is gated on the Hugging Face Hub (it needs an account's consent), so this "
                             "server cannot download it; whoever runs the server can, with an account, and point the "
                             "app at its folder."), repo_id=repo_id)
    if isinstance(err, RepositoryNotFoundError):
        return ModelError(N_("There is no public model {repo_id} on the Hugging Face Hub."), repo_id=repo_id)
    if isinstance(err, EntryNotFoundError) and not isinstance(err, LocalEntryNotFoundError):
        return ModelError(N_("{repo_id} has no {name} on the Hugging Face Hub."), repo_id=repo_id, name=name)
    return _unavailable(repo_id, name, _reason(err), cache_dir)  # no network, timeouts, a full disk, HTTP 5xx…


def hub_file(repo_id: str, name: str, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
             required: bool = True) -> Path | None:
    """One file of a Hub repo: from the cache, else downloaded into it (with ``progress``), stopped as soon as it
    is larger than its cap (:data:`CAPS`), whatever the Hub said its size is.

    Returns None for a file the repo does not have when not ``required``. Raises ModelUnavailableError when the
    file is not cached and cannot be downloaded (offline, no network), ModelError for a repo that does not exist
    or a file over its cap.
    """
    if (path := cached_file(repo_id, name, cache_dir)) is not None:
        return path
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    _check_online(repo_id, name, cache_dir)
    try:
        return Path(hf_hub_download(repo_id, name, cache_dir=cache_dir, etag_timeout=10, endpoint=constants.ENDPOINT,
                                    tqdm_class=_capped_bar(progress, name, CAPS.get(name))))
    except ModelError:  # over the cap (_capped_bar)
        raise
    except EntryNotFoundError as err:
        if required or isinstance(err, LocalEntryNotFoundError):
            raise _hub_error(repo_id, name, err, cache_dir) from None
        return None
    except Exception as err:  # noqa: BLE001 - huggingface_hub's and httpx's errors, said in the learner's words
        raise _hub_error(repo_id, name, err, cache_dir) from None


def _unreachable(timeout: float = 3.0) -> tuple[str, str] | None:
    """(host, why) when the Hub's address cannot be reached (one TCP connection, ``timeout`` seconds), or None.

    Without it, a machine with no network waits through huggingface_hub's retries (over 20 s) for every file.
    """
    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        return host, Words(reason) if reason in UNREACHABLE_REASONS else reason  # Words: the app translates it
    return None


def _reason(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else 'no details'}"


#: what to do without a network where folders may be named (a program using attn_models; a server with
#: ATTN_ALLOW_FOLDERS): the ``advice`` of a ModelUnavailableError, which the app replaces by what its server allows
FOLDER_ADVICE = N_("Without a network, copy the model's folder (config.json, tokenizer.json, model.safetensors) to "
                   "this machine and give that folder's path instead, or fill the cache on a machine with a network "
                   "(hf download {repo_id}) and set HF_HUB_OFFLINE=1.")


def _unavailable(repo_id: str, name: str, why: str, cache_dir: str | Path | None, *,
                 unreachable: tuple[str, str] | None = None) -> ModelUnavailableError:
    """The error for a file neither cached nor downloadable: ``why`` (an N_-marked text or a technical reason), or
    ``unreachable`` = (host, why) when the Hub's address cannot be reached."""
    from huggingface_hub import constants

    # the cache's path is the operator's business, not a visitor's: in the server's log, not in the message
    if (repo_id, name) not in _SAID:  # once per file: a page asks again on every rerun
        if len(_SAID) >= SAID_MOST:
            _SAID.clear()
        _SAID.add((repo_id, name))
        log.warning("%s: %s is not in the Hugging Face cache %s and could not be downloaded (%s)", repo_id, name,
                    cache_dir or constants.HF_HUB_CACHE, why or unreachable)
    advice = Phrase(FOLDER_ADVICE, repo_id=repo_id)  # a program's own Access names folders; the app says its own
    if unreachable is not None:
        host, reason = unreachable
        return ModelUnavailableError(
            N_("The model {repo_id} could not be loaded: its {name} is not in the server's Hugging Face cache and "
               "could not be downloaded ({host} cannot be reached: {reason}). {advice}"), repo_id=repo_id, name=name,
            host=host, reason=reason, advice=advice)
    return ModelUnavailableError(
        N_("The model {repo_id} could not be loaded: its {name} is not in the server's Hugging Face cache and could "
           "not be downloaded ({why}). {advice}"), repo_id=repo_id, name=name, why=why, advice=advice)


def _capped_bar(progress: Progress | None, name: str, cap: int | None) -> type:
    """A tqdm class for hf_hub_download that reports bytes to ``progress``, draws nothing, and stops the download
    (ModelError) when the file announces, or turns out to be, more than ``cap`` bytes."""
    from tqdm import tqdm

    class Capped(tqdm):
        def __init__(self, *args, **kwargs) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.done, self.expected = int(kwargs.get("initial") or 0), kwargs.get("total")
            if cap is not None and self.expected is not None and self.expected > cap:
                raise too_large(name, int(self.expected), cap)
            if progress:
                progress(name, self.done, self.expected)

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            if cap is not None and self.done > cap:
                raise too_large(name, self.done, cap)
            if progress:
                progress(name, self.done, self.expected)
            return None

    return Capped


# ---- judging a repo from the Hub's metadata -------------------------------------------------------------------


@dataclass(frozen=True)
class RepoPlan:
    """A Hub repo judged from its metadata: the size of each file the app reads (None: the Hub did not say)."""

    repo_id: str
    sizes: dict[str, int | None]

    def to_download(self, cache_dir: str | Path | None = None) -> int:
        """Bytes of the files not yet in the cache (a size the Hub did not say counts as its cap)."""
        return sum(CAPS[n] if s is None else s for n, s in self.sizes.items() if cached_file(self.repo_id, n, cache_dir)
                   is None)


def judge_repo(repo_id: str, *, cache_dir: str | Path | None = None) -> RepoPlan:
    """The repo's file list with sizes, from the Hub's metadata (no file is downloaded), checked: config.json,
    tokenizer.json (or, for a BERT, vocab.txt: :data:`TOKENIZERS`; then tokenizer_config.json too when it is there) and
    model.safetensors there, each within its cap (attn_models.MODEL_LIMITS). Which tokenizer files its family reads is
    checked once config.json is read (:func:`checkpoint_files`), before the weights are downloaded.

    Raises ModelError naming the file and the cap; ModelUnavailableError without network.
    """
    from huggingface_hub import HfApi, constants

    _check_online(repo_id, CONFIG, cache_dir)
    try:
        info = HfApi(endpoint=constants.ENDPOINT).model_info(repo_id, files_metadata=True, timeout=10, token=False)
    except Exception as err:  # noqa: BLE001 - huggingface_hub's and httpx's errors, said in the learner's words
        raise _hub_error(repo_id, CONFIG, err, cache_dir) from None
    listed = {s.rfilename: (s.lfs.size if s.lfs else s.size) for s in info.siblings or []}
    if WEIGHTS not in listed:
        pickles = [p for p in PICKLES if p in listed]
        raise ModelError(N_("{repo_id} on the Hugging Face Hub has no model.safetensors. Only safetensors checkpoints "
                            "are read. (Its weights are probably only in {pickles}.)"), repo_id=repo_id,
                         pickles=", ".join(pickles) or "pytorch_model.bin")
    tokenizer = first_of(TOKENIZERS, listed)
    for name, there in ((CONFIG, CONFIG in listed), (TOKENIZER, tokenizer is not None)):
        if not there:
            raise ModelError(N_("{repo_id} has no {name} on the Hugging Face Hub."), repo_id=repo_id, name=name)
    read = [CONFIG, tokenizer, *([TOKENIZER_CONFIG] if tokenizer == VOCAB and TOKENIZER_CONFIG in listed else []),
            WEIGHTS]
    for name in read:
        if isinstance(size := listed[name], int) and size > CAPS[name]:
            raise too_large(name, size, CAPS[name])
    return RepoPlan(repo_id, {n: listed[n] if isinstance(listed[n], int) else None for n in read})


# ---- the app's repos in the Hub cache: marked, discarded when refused, kept under a disk budget ----------------

_cache_lock = threading.Lock()
_in_flight: set[str] = set()  # repo folders being downloaded now (never evicted)


def storage(repo_id: str, cache_dir: str | Path | None = None) -> Path:
    """The repo's folder in the Hub cache (``models--owner--name``)."""
    from huggingface_hub import constants

    return Path(cache_dir or constants.HF_HUB_CACHE).expanduser() / f"models--{repo_id.replace('/', '--')}"


def mark(repo_id: str, cache_dir: str | Path | None = None) -> None:
    """Mark the repo as the app's (made before its first download) and note its use now; a repo already in the cache
    without the mark (put there by the operator) stays unmarked."""
    folder = storage(repo_id, cache_dir)
    if not folder.exists():
        folder.mkdir(parents=True)
        (folder / MARK).touch()
    elif (folder / MARK).exists():
        os.utime(folder / MARK)


def discard(repo_id: str, cache_dir: str | Path | None = None) -> bool:
    """Remove a repo the app downloaded (marked) from the Hub cache, its lock files too; True if it was removed."""
    folder = storage(repo_id, cache_dir)
    if not (folder / MARK).exists():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(folder.parent / ".locks" / folder.name, ignore_errors=True)
    return True


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (links not followed: a snapshot's links point into its blobs)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def make_room(repo_id: str, needed: int, access: Access, cache_dir: str | Path | None = None) -> None:
    """Before downloading ``needed`` bytes of a visitor's repo: remove the least recently used repos of the other
    visitors (marked, not the operator's) until the visitors' repos take at most ``access.download_bytes``; ModelError
    when ``needed`` alone is more."""
    cap = access.download_bytes
    if cap is None or access.is_operators(repo_id):
        return
    if needed > cap:
        raise ModelError(N_("{repo_id} needs {size:.1f} MB of disk; this server keeps at most {cap:.1f} MB of the "
                            "models its visitors choose (ATTN_DOWNLOAD_MB)."), repo_id=repo_id, size=needed / 1e6,
                         cap=cap / 1e6)
    keep = {storage(r, cache_dir).name for r in access.operator} | {storage(repo_id, cache_dir).name} | _in_flight
    root = storage(repo_id, cache_dir).parent
    theirs = sorted(((p / MARK).stat().st_mtime, p) for p in root.glob("models--*") if (p / MARK).exists()
                    and p.name not in keep) if root.is_dir() else []
    held = [(t, p, folder_bytes(p)) for t, p in theirs]
    total = sum(b for *_, b in held) + folder_bytes(storage(repo_id, cache_dir))
    for _t, p, b in held:  # oldest use first
        if total + needed <= cap:
            break
        shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(root / ".locks" / p.name, ignore_errors=True)
        total -= b


@contextmanager
def reading(files: CheckpointFiles, cache_dir: str | Path | None = None) -> Iterator[None]:
    """Around reading a checkpoint's files: a repo the app downloaded is removed from the cache when they are refused
    (ModelError, not ModelUnavailableError), and marked as used (its last use, for the disk budget) when they are
    read."""
    try:
        yield
    except ModelUnavailableError:
        raise
    except ModelError:
        if files.from_hub:
            discard(files.source, cache_dir)
        raise
    if files.from_hub:
        mark(files.source, cache_dir)


@dataclass(frozen=True)
class Opened(Generic[C]):
    """A checkpoint opened by :func:`opened`: its files on this machine and its config (a family's), read from
    ``started`` (time.perf_counter) on."""

    files: CheckpointFiles
    config: C
    started: float

    @property
    def seconds(self) -> float:
        """How long reading it has taken so far."""
        return time.perf_counter() - self.started

    def tokenizer(self) -> object:
        """Its tokenizer (tokenizer.json, or a BERT's vocab.txt: attn_models.tokenizer.read_tokenizer), every id below
        the config's vocab_size."""
        return read_tokenizer(self.files.tokenizer, self.config.vocab_size, self.files.tokenizer_config)


@contextmanager
def opened(source: str, read_config: Callable[[Path], C], *, cache_dir: str | Path | None = None,
           progress: Progress | None = None, access: Access | None = None,
           local_only: bool = False) -> Iterator[Opened[C]]:
    """A checkpoint's files on this machine (:func:`checkpoint_files`, judged by the family's ``read_config``) and
    its config, for the family's loader to read the rest inside (:func:`reading`: a refusal there removes a repo the
    app downloaded; a read one is marked as used)."""
    started = time.perf_counter()
    files = checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_config, access=access,
                             local_only=local_only)
    with reading(files, cache_dir):
        yield Opened(files, read_config(files.config), started)


def checkpoint_files(source: str, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
                     check_config: Callable[[Path], object] | None = None, access: Access | None = None,
                     local_only: bool = False) -> CheckpointFiles:
    """The files of ``source`` on this machine, downloading a Hub repo's into the cache if need be.

    A repo not yet cached is judged from the Hub's metadata first (:func:`judge_repo`), room is made under
    ``access.download_bytes``, then ``check_config`` (a family's config reader: it returns the config, whose
    ``tokenizer_files`` say which tokenizer files the family reads) is called on config.json before the tokenizer and
    the weights are fetched, so a model over the caps is refused before its weights are downloaded. Whatever was
    downloaded of a refused repo is removed. ``local_only``: NotFetchedError instead of a download.
    """
    access = access or Access()
    source = access.check(source)
    if is_folder(source) and (access.folders or access.is_operators(source)):
        files = folder_files(source)
        if check_config:
            files = folder_files(source, tokenizer_files(check_config(files.config)))
        return files
    if not repo_cached(source, cache_dir):
        if local_only:
            raise NotFetchedError(N_("{repo_id} is not on this server yet: its model page offers to download "
                                     "it."),
                                  repo_id=source)
        return _fetch_repo(source, cache_dir=cache_dir, progress=progress, check_config=check_config, access=access)
    files = cached_files(source, cache_dir)
    if check_config:
        try:
            files = cached_files(source, cache_dir, tokenizer_files(check_config(files.config)))
        except ModelError:
            discard(source, cache_dir)
            raise
    return files


def _fetch_repo(repo_id: str, *, cache_dir: str | Path | None, progress: Progress | None,
                check_config: Callable[[Path], object] | None, access: Access) -> CheckpointFiles:
    """Download what is missing of a repo (judged first); a refused repo's downloaded files are removed."""
    plan = judge_repo(repo_id, cache_dir=cache_dir)
    folder = storage(repo_id, cache_dir).name
    with _cache_lock:
        make_room(repo_id, plan.to_download(cache_dir), access, cache_dir)
        mark(repo_id, cache_dir)
        _in_flight.add(folder)
    try:
        config = hub_file(repo_id, CONFIG, cache_dir=cache_dir, progress=progress)
        accepted = tokenizer_files(check_config(config)) if check_config else TOKENIZERS
        if (name := first_of(accepted, plan.sizes)) is None:
            raise ModelError(N_("{repo_id} has no {name} on the Hugging Face Hub."), repo_id=repo_id, name=TOKENIZER)
        tokenizer = hub_file(repo_id, name, cache_dir=cache_dir, progress=progress)
        settings = hub_file(repo_id, TOKENIZER_CONFIG, cache_dir=cache_dir, progress=progress) if (
            name == VOCAB and TOKENIZER_CONFIG in plan.sizes) else None
        weights = hub_file(repo_id, WEIGHTS, cache_dir=cache_dir, progress=progress)
    except ModelError:
        discard(repo_id, cache_dir)
        raise
    finally:
        with _cache_lock:
            _in_flight.discard(folder)
    return CheckpointFiles(repo_id, config, tokenizer, weights, from_hub=True, tokenizer_config=settings)
