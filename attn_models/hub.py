"""Where a checkpoint's files come from: a folder on this machine, or the Hugging Face Hub (through its cache).

A source is either a folder holding ``config.json``, ``tokenizer.json`` and ``model.safetensors``, or a Hub repo
id (``owner/name``). A repo's files are looked up in huggingface_hub's standard cache first (``HF_HUB_CACHE``, by
default ``~/.cache/huggingface/hub``), without touching the network; only what is missing is downloaded, into that
cache, unless ``HF_HUB_OFFLINE=1``. Nothing but safetensors is read: a checkpoint that has only
``pytorch_model.bin`` (a pickle) is refused, never unpickled.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from attn_core import Words

from .errors import N_, ModelError, ModelUnavailableError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
CONFIG, TOKENIZER, WEIGHTS = "config.json", "tokenizer.json", "model.safetensors"
PICKLES = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")  # never read
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")

#: the system's usual reasons why an address cannot be reached, marked for the app's catalogs: a reason that is one
#: of them is shown in the learner's language (attn_ui.i18n.error_text translates the values of an error)
UNREACHABLE_REASONS = (
    N_("Name or service not known"), N_("Temporary failure in name resolution"), N_("Network is unreachable"),
    N_("No route to host"), N_("Connection refused"), N_("Connection timed out"), N_("TimeoutError"),
)

#: progress(file name, bytes done, bytes in all or None): called while a file downloads (maybe from another thread)
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class CheckpointFiles:
    """The three files of a checkpoint on this machine, and where they came from."""

    source: str  # what was asked for: a folder or a repo id
    config: Path
    tokenizer: Path
    weights: Path
    from_hub: bool


def is_folder(source: str) -> bool:
    """Whether ``source`` names a folder on this machine (else it must be a Hub repo id).

    >>> is_folder("a " * 300)  # a name longer than the system takes is no folder (not an OSError)
    False
    """
    try:
        return Path(source).expanduser().is_dir()
    except (OSError, ValueError):  # a name too long for the system, a NUL character
        return False


def check_source(source: object) -> str:
    """``source`` as text, or ModelError when it is neither a folder here nor shaped like a repo id.

    >>> check_source("sentence-transformers/all-MiniLM-L6-v2")
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> check_source("no such thing")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: 'no such thing' is neither a folder on this machine nor a Hugging Face repo id ...
    """
    if not isinstance(source, str) or not source.strip():
        raise ModelError(N_("Name a model: a Hugging Face repo id (owner/name) or a folder on this machine."))
    source = source.strip()
    if is_folder(source) or _REPO_ID.fullmatch(source):
        return source
    raise ModelError(N_("{source} is neither a folder on this machine nor a Hugging Face repo id (owner/name)."),
                     source=repr(source[:200]))


def offline() -> bool:
    """Whether downloads are switched off (``HF_HUB_OFFLINE`` set to 1/true/yes/on, read now)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def folder_files(folder: str) -> CheckpointFiles:
    """The checkpoint files of a local folder, or ModelError naming what is missing."""
    root = Path(folder).expanduser()
    found = {name: root / name for name in (CONFIG, TOKENIZER, WEIGHTS) if (root / name).is_file()}
    if WEIGHTS not in found:
        raise _no_safetensors(folder, [p for p in PICKLES if (root / p).is_file()])
    for name in (CONFIG, TOKENIZER):
        if name not in found:
            raise ModelError(N_("{folder} has no {name}; a checkpoint folder needs config.json, tokenizer.json and "
                                "model.safetensors."), folder=folder, name=name)
    return CheckpointFiles(folder, found[CONFIG], found[TOKENIZER], found[WEIGHTS], from_hub=False)


def _no_safetensors(folder: str, pickles: list[str]) -> ModelError:
    """The refusal of a folder without model.safetensors (naming the pickles it has instead)."""
    if pickles:
        return ModelError(N_("{folder} has no model.safetensors. It has {pickles}: a pickle, which this app never "
                             "unpickles (it can run code). Only safetensors checkpoints are read."),
                          folder=folder, pickles=", ".join(pickles))
    return ModelError(N_("{folder} has no model.safetensors. Only safetensors checkpoints are read."), folder=folder)


def cached_file(repo_id: str, name: str, cache_dir: str | Path | None = None) -> Path | None:
    """The path of ``name`` of ``repo_id`` in the Hub cache (main revision), or None; never uses the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, name, cache_dir=cache_dir)
    return Path(found) if isinstance(found, str) else None


def in_cache(source: str, cache_dir: str | Path | None = None) -> bool:
    """Whether the checkpoint can be read without the network (a folder, or every file already in the cache)."""
    return is_folder(source) or all(cached_file(source, n, cache_dir) for n in (CONFIG, TOKENIZER, WEIGHTS))


def hub_file(repo_id: str, name: str, *, cache_dir: str | Path | None = None, progress: Progress | None = None,
             required: bool = True) -> Path | None:
    """One file of a Hub repo: from the cache, else downloaded into it (with ``progress``).

    Returns None for a file the repo does not have when not ``required``. Raises ModelUnavailableError when the
    file is not cached and cannot be downloaded (offline, no network), ModelError for a repo that does not exist.
    """
    if (path := cached_file(repo_id, name, cache_dir)) is not None:
        return path
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    if offline():
        raise _unavailable(repo_id, name, N_("HF_HUB_OFFLINE is set"), cache_dir)
    if (unreachable := _unreachable()) is not None:  # fail in a moment, not after huggingface_hub's retries
        raise _unavailable(repo_id, name, "", cache_dir, unreachable=unreachable)
    try:
        return Path(hf_hub_download(repo_id, name, cache_dir=cache_dir, etag_timeout=10,
                                    tqdm_class=_reporting_bar(progress, name) if progress else None))
    except GatedRepoError:
        raise ModelError(N_("{repo_id} is gated on the Hugging Face Hub (it needs an account's consent); "
                            "download it yourself and give its folder."), repo_id=repo_id) from None
    except RepositoryNotFoundError:
        raise ModelError(N_("There is no public model {repo_id} on the Hugging Face Hub."), repo_id=repo_id) from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled) as err:  # no network (LocalEntry… is an EntryNotFound…)
        raise _unavailable(repo_id, name, _reason(err), cache_dir) from None
    except EntryNotFoundError:  # the repo has no such file
        if required:
            raise ModelError(N_("{repo_id} has no {name} on the Hugging Face Hub."), repo_id=repo_id,
                             name=name) from None
        return None
    except (OSError, ValueError) as err:  # connection errors, timeouts, a full disk
        raise _unavailable(repo_id, name, _reason(err), cache_dir) from None


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


def _unavailable(repo_id: str, name: str, why: str, cache_dir: str | Path | None, *,
                 unreachable: tuple[str, str] | None = None) -> ModelUnavailableError:
    """The error for a file neither cached nor downloadable: ``why`` (an N_-marked text or a technical reason), or
    ``unreachable`` = (host, why) when the Hub's address cannot be reached."""
    from huggingface_hub import constants

    cache = str(cache_dir or constants.HF_HUB_CACHE)
    if unreachable is not None:
        host, reason = unreachable
        return ModelUnavailableError(
            N_("The model {repo_id} could not be loaded: its {name} is not in the Hugging Face cache ({cache}) and "
               "could not be downloaded ({host} cannot be reached: {reason}). Without a network, copy the model's "
               "folder (config.json, tokenizer.json, model.safetensors) to this machine and give that folder's path "
               "instead, or fill the cache on a machine with a network (hf download {repo_id}) and set "
               "HF_HUB_OFFLINE=1."), repo_id=repo_id, name=name, cache=cache, host=host, reason=reason)
    return ModelUnavailableError(
        N_("The model {repo_id} could not be loaded: its {name} is not in the Hugging Face cache ({cache}) and could "
           "not be downloaded ({why}). Without a network, copy the model's folder (config.json, tokenizer.json, "
           "model.safetensors) to this machine and give that folder's path instead, or fill the cache on a machine "
           "with a network (hf download {repo_id}) and set HF_HUB_OFFLINE=1."),
        repo_id=repo_id, name=name, cache=cache, why=why)


def _reporting_bar(progress: Progress, name: str) -> type:
    """A tqdm class for hf_hub_download that reports bytes to ``progress`` and draws nothing."""
    from tqdm import tqdm

    class Reporting(tqdm):
        def __init__(self, *args, **kwargs) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.done, self.expected = int(kwargs.get("initial") or 0), kwargs.get("total")
            progress(name, self.done, self.expected)

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            progress(name, self.done, self.expected)
            return None

    return Reporting


def checkpoint_files(source: str, *, cache_dir: str | Path | None = None,
                     progress: Progress | None = None, check_config: Callable[[Path], None] | None = None,
                     ) -> CheckpointFiles:
    """The files of ``source`` on this machine, downloading a Hub repo's into the cache if need be.

    ``check_config`` is called on config.json before the weights are fetched, so a model over the caps is refused
    before its weights are downloaded.
    """
    source = check_source(source)
    if is_folder(source):
        files = folder_files(source)
        if check_config:
            check_config(files.config)
        return files
    config = hub_file(source, CONFIG, cache_dir=cache_dir, progress=progress)
    if check_config:
        check_config(config)
    tokenizer = hub_file(source, TOKENIZER, cache_dir=cache_dir, progress=progress)
    weights = hub_file(source, WEIGHTS, cache_dir=cache_dir, progress=progress, required=False)
    if weights is None:
        raise ModelError(N_("{repo_id} on the Hugging Face Hub has no model.safetensors. Only safetensors checkpoints "
                            "are read. (Its weights are probably only in pytorch_model.bin.)"), repo_id=source)
    return CheckpointFiles(source, config, tokenizer, weights, from_hub=True)
