"""One memory budget for the server's shared caches: whatever a visitor's clicks put in them is bounded in bytes.

Streamlit's ``st.cache_data(max_entries=...)`` bounds a cache's entries, not its bytes: one learner stepping
A real model's padding through 20 values (256, 255, … tokens; a forward pass of ≈ 43 MB each) took a server from
333 MB to 1.4 GB (issue 27). Here every cache whose entries grow with a configuration (attention traces, the
model's forward passes and layer configurations, the address store of large configurations, a page's derived
arrays) is one :class:`Budget`: a least-recently-used map of values with their sizes in bytes, shared by all
caches of the process. A new entry evicts the least recently used ones, of any cache, until the total fits; a value
larger than the whole budget is returned but not kept.

The budget is ``ATTN_CACHE_MB`` megabytes (10⁶ bytes; default :data:`DEFAULT_MB`, sized for Streamlit Community
Cloud's ≈ 1 GB: bench/RESULTS.md), as attn_ui.infra.settings parses it: once, again only if the variable changes, and a
value that is not a finite number from 1 to 1,000,000 is logged and gives the default. Sizes are counted, not
estimated: every numpy array reachable from a value (through dataclasses, tuples, lists and dicts), each buffer once,
plus strings.

An evicted value is often still held by garbage that only Python's cyclic collector frees: the namespace of a
page's finished run (its functions and globals refer to each other) keeps the value the page read, and Streamlit's
collection after every run is switched off (``runner.postScriptGC``, ≈ 60 ms a run). So once the entries dropped
add up to :data:`COLLECT_AFTER` bytes, the budget runs ``gc.collect()`` and gives malloc's free memory back to
the system (:func:`attn_ui.infra.memory.trim`) (measured: a pad sweep on A real model
peaked at 650 MiB with it, 861 without; bench/RESULTS.md).

A cached value is shared by every session that asks for the same arguments, never copied: its arrays are made
read-only (:func:`freeze`), so no page can change another learner's numbers by accident. The budget remembers which
sessions used an entry; when a session ends (attn_ui.infra.sessions), :meth:`Budget.release` drops the entries no other
session used, so a closed tab's results do not outlive it. An entry kept without a session (put outside a script
run) stays until it is evicted.

Computing is bounded too, and fair (issue 40): a cached result is computed while holding a slot of one of two pools,
:data:`MODEL_SLOTS` (a model's forward passes, its writing and translating: up to ≈ 100 MB of intermediates each) and
:data:`EXPLORER_SLOTS` (the explorer's attention traces, grid texts and chart data: ≈ 17 MB at the caps), 2 slots each.
So at most 2 model computations and 2 explorer computations run at once in the process, whatever the number of
learners: the intermediates held at once are bounded by 2 × ≈ 100 MB + 2 × ≈ 17 MB, and the explorer's cheap work never
queues behind a model's. Each pool is a :class:`FairSlots`, served first come first served; a long computation made
of steps (a text written token by token, a translation) gives its slot back between two steps, once it has held it
:data:`QUANTUM` (1 s), and queues again (:func:`taking_turns`): it holds a pool for about a second or one step's work
at a time, whichever is longer, not for the whole write (while it waits it holds the steps done and the call's
key/value cache, at most 2 · n_layers · n_tokens · d_model · 8 bytes: 18.9 MB for distilgpt2 at 256 tokens, 2.6 MB
for 20 tokens after 16; not a step's intermediates: attn_models frees them first); between steps it also stops if
its learner's browser has gone. A
result being computed is computed once: another session asking for it meanwhile waits for it (holding no slot)
instead of computing it again. The server's numpy runs one BLAS thread per computation (:func:`one_blas_thread`):
many learners share the machine's cores. A computation made of independent parts may use a second slot of its pool
when one is free and nobody waits (:func:`spare_core`: A real model's "Which heads matter", a layer at a time): two
parts at once on two threads, one per slot held, so the bounds above stay.

The one cache: every result that grows with what a visitor sends (a trace, a forward pass, a chart's spec, a lesson
worked out, a repo judged from the Hub's metadata) is kept here, through :func:`cached`; nothing of the app uses
``st.cache_data`` or ``functools.lru_cache`` for them. One thing is not: the loaded models
(attn_ui.views.model_views, ``st.cache_resource(max_entries=2)``). A model is not a result of a visitor's numbers
but the server's resource, read from disk, shared by every session and never copied; its bound is its count, two,
each within attn_models' caps (≈ 570 MB for the two largest defaults: bench/RESULTS.md), and evicting one to make room
for a trace would only read it again.

Examples
--------
>>> b = Budget(1000)
>>> b.put(("a", 1), np.zeros(100))  # 800 bytes
True
>>> b.put(("b", 1), np.zeros(50))  # 400 more: "a" goes
True
>>> b.get(("a", 1)) is MISSING, b.bytes
(True, 400)
>>> b.put(("c", 1), np.zeros(200))  # 1600 bytes: more than the whole budget, not kept
False
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import hashlib
import inspect
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
import threadpoolctl

from attn_ui.infra import memory, settings, st_internals
from attn_ui.infra.st_internals import session_id

ENV, DEFAULT_MB = settings.ENV_CACHE, settings.CACHE_MB  # ATTN_CACHE_MB and its default, 256
ENDED_KEPT = 4096  # ended sessions remembered (their ids), so that a run still going keeps nothing for them
COLLECT_AFTER = 64_000_000  # bytes dropped from the budget after which Python's cyclic collector runs
MISSING = object()  # what Budget.get returns for a key it does not hold
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")  # what a part returns (spare_core)


#: types :func:`nbytes` counts as 32 bytes and :func:`freeze` leaves alone without looking further (exact types: a
#: subclass takes the general path)
_SCALARS = frozenset({type(None), bool, int, float, complex, np.float64, np.int64, np.bool_})
_TEXTS = (str, bytes, bytearray)
_SEQUENCES = (list, tuple, set, frozenset)


def _dataclass_fields(kind: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type (an instance's ``type``), None for any other type: what
    ``dataclasses.fields`` gives, read from the class once (``fields`` walks them on every call)."""
    try:
        return _FIELDS[kind]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None
        _FIELDS[kind] = names  # one entry per type in the code: a bounded set
        return names


_FIELDS: dict[type, tuple[str, ...] | None] = {}


def nbytes(value: object) -> int:
    """The bytes ``value`` holds: every numpy array's buffer once (a view counts its base), strings and bytes.

    >>> x = np.zeros((10, 10))
    >>> nbytes(x), nbytes((x, x, x[:2])), nbytes({"k": "abc"}) > 0  # the tuple: its 3 arrays' one buffer + 56
    (800, 856, True)
    """
    seen: set[int] = set()

    def walk(v: object, depth: int) -> int:
        kind = type(v)
        if kind in _SCALARS:  # most of what a trace holds besides its arrays: nothing to look into
            return 32
        if depth > 20 or id(v) in seen:
            return 0
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            base = v
            while isinstance(base.base, np.ndarray):
                base = base.base
            if base is not v:
                return walk(base, depth + 1)
            return v.nbytes + (sum(walk(x, depth + 1) for x in v.flat) if v.dtype == object else 0)
        if isinstance(v, _TEXTS):
            return len(v) + 49
        if isinstance(v, _COUNTED):  # a chart's data; a value counted by its maker
            return int(v.nbytes)
        if isinstance(v, pd.DataFrame):
            return int(v.memory_usage(index=True, deep=True).sum())
        if (fields := _dataclass_fields(kind)) is not None:
            return 64 + sum(walk(getattr(v, name), depth + 1) for name in fields)
        if isinstance(v, dict):
            return 64 + sum(walk(k, depth + 1) + walk(x, depth + 1) for k, x in v.items())
        if isinstance(v, _SEQUENCES):
            return 56 + sum(walk(x, depth + 1) for x in v)
        return 32

    return walk(value, 0)


@dataclasses.dataclass(frozen=True, eq=False)
class Counted:
    """A value whose bytes the code that made it counted, for one that :func:`nbytes` would count slowly: a DataFrame
    of texts (pandas' ``memory_usage`` took 1 ms for 12 cells, 5 ms for 4,096, more than making the frame); count
    what it holds (the texts' UTF-8 bytes and their offsets, as Arrow keeps them)."""

    value: Any
    nbytes: int


_COUNTED = (pa.Table, Counted)


def freeze(value: object) -> object:
    """Make every numpy array reachable from ``value`` read-only (in place); returns ``value``.

    >>> a = freeze((np.zeros(2),))[0]
    >>> a.flags.writeable
    False
    """
    seen: set[int] = set()

    def walk(v: object, depth: int) -> None:
        kind = type(v)
        if kind in _SCALARS or depth > 20 or id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
        elif (fields := _dataclass_fields(kind)) is not None:
            for name in fields:
                walk(getattr(v, name), depth + 1)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x, depth + 1)

    walk(value, 0)
    return value


class Budget:
    """Values by key, the least recently used evicted first so that their sizes add up to at most ``limit`` bytes
    (None: the operator's ``ATTN_CACHE_MB``, :func:`attn_ui.infra.settings.settings`, read at each :meth:`put`).

    Thread-safe (Streamlit runs each session's script in a thread of its own). A key is ``(cache name, ...)``.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._limit = None if limit is None else int(limit)
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._users: dict[Hashable, set[str]] = {}  # key -> the sessions that used it (keys put with a user only)
        self._ended: OrderedDict[str, None] = OrderedDict()  # sessions released lately: nothing is kept for them
        self._bytes = 0
        self._dropped = 0  # bytes dropped since the last gc.collect()
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        """The most bytes held: the limit given, else the server's settings' (ATTN_CACHE_MB)."""
        return settings.settings().cache_bytes if self._limit is None else self._limit

    @property
    def bytes(self) -> int:
        """The bytes held now."""
        return self._bytes

    def get(self, key: Hashable, user: str | None = None) -> object:
        """The value kept under ``key`` (now the most recently used, and used by session ``user``), or
        :data:`MISSING`."""
        with self._lock:
            if key not in self._items:
                return MISSING
            self._items.move_to_end(key)
            if user is not None and key in self._users:
                self._users[key].add(user)
            return self._items[key][0]

    def put(self, key: Hashable, value: object, size: int | None = None, user: str | None = None) -> bool:
        """Keep ``value`` (``size`` bytes, counted by :func:`nbytes` if not given), evicting the least recently used
        entries until everything fits; ``user``: the session it is kept for (None: no session, see the module).
        Returns False, keeping nothing, when ``value`` alone is over the limit."""
        size, limit = nbytes(value) if size is None else int(size), self.limit
        with self._lock:
            self._drop(key)
            if size > limit or user in self._ended:  # a run that outlived its session keeps nothing
                return False
            while self._items and self._bytes + size > limit:
                self._drop(next(iter(self._items)))
            self._items[key] = (value, size)
            self._bytes += size
            if user is not None:
                self._users[key] = {user}
        self._collect_if_due()
        return True

    def release(self, user: str) -> int:
        """Session ``user`` has ended: drop the entries that only it used. Returns the bytes freed.

        >>> b = Budget(10_000)
        >>> _ = b.put("mine", np.zeros(10), user="s1"), b.put("shared", np.zeros(10), user="s1")
        >>> _ = b.get("shared", user="s2"), b.put("address", np.zeros(10))
        >>> b.release("s1"), sorted(b.usage())
        (80, ['address', 'shared'])
        """
        with self._lock:
            self._ended[user] = None
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
            before = self._bytes
            for key in [k for k, users in self._users.items() if user in users]:
                self._users[key].discard(user)
                if not self._users[key]:
                    self._drop(key)
            freed = before - self._bytes
        self._collect_if_due()
        return freed
    def discard(self, key: Hashable) -> None:
        with self._lock:
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        self._users.pop(key, None)
        if (item := self._items.pop(key, None)) is not None:
            self._bytes -= item[1]
            self._dropped += item[1]

    def _collect_if_due(self) -> None:
        """gc.collect() once COLLECT_AFTER bytes were dropped (outside the lock: other sessions keep reading)."""
        with self._lock:
            due = self._dropped >= COLLECT_AFTER
            if due:
                self._dropped = 0
        if due:
            gc.collect()
            memory.trim()  # what was freed in malloc's arenas goes back to the system

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._users.clear()
            self._bytes = 0

    def usage(self) -> dict[str, tuple[int, int]]:
        """{cache name: (entries, bytes)}, for benchmarks and tests."""
        with self._lock:
            out: dict[str, tuple[int, int]] = {}
            for key, (_value, size) in self._items.items():
                name = key[0] if isinstance(key, tuple) and key else str(key)
                n, b = out.get(name, (0, 0))
                out[name] = (n + 1, b + size)
            return out


def limit_from_env(environ: dict[str, str] | None = None) -> int:
    """The budget in bytes: ``ATTN_CACHE_MB`` megabytes if it is a finite number from 1 to 1,000,000, else
    :data:`DEFAULT_MB` (attn_ui.infra.settings.cache_bytes); ``environ`` None: the server's settings (a value not
    understood
    is logged there, once).

    >>> limit_from_env({}), limit_from_env({"ATTN_CACHE_MB": "64"}), limit_from_env({"ATTN_CACHE_MB": "lots"})
    (256000000, 64000000, 256000000)
    >>> limit_from_env({"ATTN_CACHE_MB": "inf"}), limit_from_env({"ATTN_CACHE_MB": "1e400"})
    (256000000, 256000000)
    """
    return settings.settings().cache_bytes if environ is None else settings.cache_bytes(environ)[0]


BUDGET = Budget()  # the one budget of this process: ATTN_CACHE_MB (attn_ui.infra.settings)


def fingerprint(value: object) -> Hashable:
    """A hashable key for an argument: numpy arrays by their dtype, shape and a hash of their bytes.

    >>> fingerprint(np.eye(2)) == fingerprint(np.eye(2)), fingerprint(np.eye(2)) == fingerprint(np.eye(2).T * 2)
    (True, False)
    >>> fingerprint({"b": 1, "a": (None, 2.5)})
    ('dict', (('a', ('tuple', (None, 2.5))), ('b', 1)))
    """
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(value).data if value.dtype != object else
                                 repr(value.tolist()).encode(), digest_size=16).hexdigest()
        return ("ndarray", value.dtype.str, value.shape, digest)
    if isinstance(value, np.generic):
        return fingerprint(value.item())
    if isinstance(value, tuple | list):
        return (type(value).__name__, tuple(fingerprint(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), fingerprint(v)) for k, v in value.items())))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple(fingerprint(getattr(value, f.name)) for f in dataclasses.fields(value)))
    raise TypeError(f"budget.cached cannot key an argument of type {type(value).__name__}")


# ---- computing: fair slots, one BLAS thread ---------------------------------------------------------------------

BLAS_THREADS = 1  # per computation: with OpenBLAS's default (one per core) numpy ran ≈ 10× slower on a loaded server
_LOG = st_internals.logger(__name__)  # Streamlit's: printed at its log level (info by default) in the server's log


def one_blas_thread() -> None:
    """Limit numpy's BLAS (and any OpenMP pool loaded) to :data:`BLAS_THREADS` thread, in the whole process.

    Many learners share the server's 2 cores: each computation is one thread already, and OpenBLAS's own threads
    (one per core by default) spin waiting for work, fighting the other computations for the cores (bench/RESULTS.md:
    a T5 encoder 0.27 s with one thread, 2.4 s with two on a loaded machine). OPENBLAS_NUM_THREADS and its kin are
    read only when the library loads: Streamlit 1.67's server does not import numpy before the app's script, but any
    import of numpy before ours (another release, an extension, a test) would leave them unread, silently;
    threadpoolctl sets the loaded library's own setting, whenever it is called. Called when this module is imported,
    before any result is computed. (OpenBLAS built with pthreads, as numpy's wheels, has one
    setting for the process; tests/app/test_fair.py checks it from another thread, as a script run's.)
    """
    threadpoolctl.threadpool_limits(limits=BLAS_THREADS)


one_blas_thread()


class FairSlots:
    """At most ``n`` holders at a time, served in the order they asked (a ticket queue).

    Not threading.Semaphore, which is not fair: a thread that releases it and acquires it again at once usually gets
    it again (it never slept, the woken waiter has not run yet), so a text written token by token would keep its
    slot to the end. Here a thread that gives its slot back and asks again queues behind everyone already waiting.

    >>> slots = FairSlots(2, "demo")
    >>> slots.acquire(); (slots.held, slots.waiting)
    (1, 0)
    >>> slots.release(); slots.held
    0
    """

    def __init__(self, n: int, name: str) -> None:
        if n < 1:
            raise ValueError(f"{name}: at least one slot, got {n}")
        self.n, self.name = int(n), name
        self._held = 0
        self._queue: deque[object] = deque()  # one ticket per waiting thread, first come first
        self._cond = threading.Condition()

    @property
    def held(self) -> int:
        """The slots taken now."""
        return self._held

    @property
    def waiting(self) -> int:
        """The threads queued for a slot now."""
        return len(self._queue)

    def acquire(self) -> None:
        """Wait until every thread that asked before has a slot and one is free; take it."""
        with self._cond:
            ticket = object()
            self._queue.append(ticket)
            try:
                while self._queue[0] is not ticket or self._held >= self.n:
                    self._cond.wait()
            except BaseException:  # interrupted while waiting: leave the queue, let the next one in
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._held += 1
            self._cond.notify_all()  # the next in line may find a slot free too

    def try_acquire(self) -> bool:
        """Take a slot now if one is free and nobody is waiting for one (never ahead of a thread in the queue);
        else take nothing. Never waits. Returns whether a slot was taken.

        >>> slots = FairSlots(1, "demo")
        >>> slots.try_acquire(), slots.try_acquire(), slots.held
        (True, False, 1)
        """
        with self._cond:
            if self._queue or self._held >= self.n:
                return False
            self._held += 1
            return True

    def release(self) -> None:
        with self._cond:
            if self._held <= 0:
                raise ValueError(f"{self.name}: released more often than taken")
            self._held -= 1
            self._cond.notify_all()


MODEL_SLOTS = FairSlots(2, "model")  # a model's passes, its writing and translating (≈ 100 MB of intermediates each)
EXPLORER_SLOTS = FairSlots(2, "explorer")  # the explorer's attention traces, grid texts, chart data (≤ ≈ 17 MB each)
QUANTUM = 1.0  # s: a computation made of steps holds its slot at least this long before it lends it (lent_slot)
_held = threading.local()  # .depth: cached computations this thread is in; .slots: the pool of the slot it holds
_inflight: dict[tuple[int, Hashable], threading.Event] = {}  # (id(budget), key) -> set when its computation ends
_inflight_lock = threading.Lock()


@contextlib.contextmanager
def compute_slot(slots: FairSlots | None = None) -> Iterator[None]:
    """Hold one of ``slots`` (default :data:`MODEL_SLOTS`) while computing; a thread that holds one already (a cached
    function calling another, as layer_config calls forward) does not take a second, of either pool, so two sessions
    never wait on each other.

    >>> with compute_slot(MODEL_SLOTS), compute_slot(EXPLORER_SLOTS):  # nested: one slot, the outer one's
    ...     held = MODEL_SLOTS.held, EXPLORER_SLOTS.held
    >>> held, MODEL_SLOTS.held
    ((1, 0), 0)
    """
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    slots = slots or MODEL_SLOTS
    slots.acquire()
    _held.depth, _held.slots, _held.since = 1, slots, time.monotonic()
    try:
        yield
    finally:
        if _held.slots is not None:  # None: lent (lent_slot) when the computation stopped
            _held.slots.release()
        _held.depth, _held.slots = 0, None


@contextlib.contextmanager
def lent_slot() -> Iterator[None]:
    """Inside a cached computation that has held its slot :data:`QUANTUM` seconds or more: give the slot back for
    the block, then queue for one again (behind whoever asked meanwhile). Nothing is lent sooner, nor by a
    computation called from another (its caller's intermediates are alive), nor outside one. If the block raises,
    the slot is not taken again: the computation is ending.

    Why a quantum, not every step: steps differ 10-fold in cost (a token of t5-small ≈ 0.1 s, one of distilgpt2 after
    150 tokens ≈ 1.3 s). Lending after every step, a translation beside two writes got one cheap token per writer's
    expensive token, and took as long as the writes (bench/RESULTS.md, "Fair compute"); with turns of about a second
    each computation gets about equal time, and others wait at most about a second or one step.
    """
    slots = getattr(_held, "slots", None)
    if getattr(_held, "depth", 0) != 1 or slots is None or time.monotonic() - _held.since < QUANTUM:
        yield
        return
    slots.release()
    _held.depth, _held.slots = 0, None  # a cached call in the block takes a slot of its own, as any other
    yield
    slots.acquire()
    _held.depth, _held.slots, _held.since = 1, slots, time.monotonic()


def taking_turns(on_step: Callable[..., None] | None = None) -> Callable[..., None]:
    """An ``on_step`` callback for a computation made of steps, run by a cached function (attn_models'
    CausalLM.generate, Translator.translate): after each step it gives the slot back (:func:`lent_slot`: once held
    QUANTUM s), so the computation holds its pool about a second or one step at a time; stops the script run if the
    session's browser is gone (st_internals.session_connected; st.stop(): an exception, so nothing is kept of the
    half-finished result); calls ``on_step`` with the step (a page drawing it, which needs no slot held); then
    queues for a slot again if it gave it back."""

    def turn(*args: Any) -> None:
        with lent_slot():
            if not st_internals.session_connected():
                _LOG.info("session %s: its browser has gone, its computation stops between two steps", session_id())
                st.stop()
            if on_step is not None:
                on_step(*args)

    return turn


def spare_core(parts: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``parts`` (zero-argument callables, independent of each other) and return their results in order, on two
    cores when the server has one to spare: attn_models' :data:`~attn_models.bert.PartRunner` for a computation that
    holds a slot (A real model's "Which heads matter", each layer's runs of heads: views.model_output.head_effects).

    If this thread holds a computing slot (:func:`compute_slot`) and its pool has another free with nobody waiting
    (:meth:`FairSlots.try_acquire`), it takes that second slot and a worker thread runs parts beside this one, both
    taking the next part not yet started, each with one BLAS thread (:func:`one_blas_thread`); the worker stops
    taking parts as soon as a thread queues for the pool, and gives the second slot back when it stops (try/finally),
    so a learner who arrives meanwhile waits at most for one part. Otherwise (no slot held, none free, someone
    waiting, one part) the parts run one after another in this thread. Each slot held bounds one part's
    intermediates (attn_models.bert.SCAN_BYTES): two parts at once, two slots.

    An exception from a part, in either thread, stops both from taking more, and is raised here once the worker has
    ended. The worker calls nothing of Streamlit's (it has no script run context): parts must be plain computing.
    """
    parts = list(parts)
    slots = getattr(_held, "slots", None)
    if len(parts) < 2 or slots is None or not slots.try_acquire():
        return [part() for part in parts]
    return _beside(parts, slots)


def _beside(parts: list[Callable[[], T]], slots: FairSlots) -> list[T]:
    """:func:`spare_core`'s two threads, ``slots`` holding one slot more for the worker (which gives it back)."""
    results: list[Any] = [None] * len(parts)
    todo, errors, lock = deque(range(len(parts))), [], threading.Lock()

    def run(worker: bool) -> None:
        while True:
            with lock:
                if errors or not todo or (worker and slots.waiting):
                    return
                i = todo.popleft()
            try:
                results[i] = parts[i]()
            except BaseException as e:  # raised in the caller's thread, once both have stopped
                with lock:
                    errors.append(e)
                return

    def worker() -> None:
        try:
            run(worker=True)
        finally:
            slots.release()

    thread = threading.Thread(target=worker, name=f"{slots.name} spare core", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # no thread to be had: the parts in turn
        slots.release()
        return [part() for part in parts]
    try:
        run(worker=False)
    finally:
        thread.join()
    if errors:
        raise errors[0]
    return results


def cached(name: str, *, budget: Budget | None = None, copy: Callable[[Any], Any] | None = None,
           slots: FairSlots | None = None, key: Callable[..., Hashable] | None = None) -> Callable[[F], F]:
    """Decorator: keep the function's results in the process's :class:`Budget` (``budget``, default :data:`BUDGET`)
    under ``(name, its arguments)``. Parameters whose names start with ``_`` are not part of the key (as in
    st.cache_data). An exception is not kept. A result is computed holding a slot of ``slots`` (default
    :data:`MODEL_SLOTS`; :data:`EXPLORER_SLOTS` for the explorer's cheap work), so many learners never hold many
    intermediates (see the module). A result another session is computing now is waited for, not computed again
    (a waiting call holds no slot; a call from inside another computation does not wait: it computes). Results are
    frozen (:func:`freeze`); ``copy``, if given, is applied to what is returned (for a value that cannot be frozen,
    such as a DataFrame a widget might change).

    ``key``, if given, makes the key from the call's arguments instead (called with them, as the function is), for
    a function called many times a run whose arguments are hashable values already (a chart's layout: a frozen
    dataclass of strings, tuples and numbers): they are used as they are, not walked and fingerprinted on every
    call. Only for arguments whose equality means the same result (1 == 1.0 == True: none of them may tell those
    apart), and never arrays (they cannot be hashed).
    """

    def decorate(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            store, user = budget or BUDGET, session_id()
            if key is not None:
                k = (name, key(*args, **kwargs))
            else:
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                k = (name, tuple((a, fingerprint(v)) for a, v in bound.arguments.items() if not a.startswith("_")))
            value = store.get(k, user)
            while value is MISSING:
                with _inflight_lock:
                    running = _inflight.get((id(store), k))
                    if running is None:
                        _inflight[(id(store), k)] = done = threading.Event()
                if running is not None and not getattr(_held, "depth", 0):
                    running.wait()  # another session computes it; if it fails or stops, this one computes it
                    value = store.get(k, user)
                    continue
                try:
                    with compute_slot(slots):  # a few at a time: each holds its intermediates (a forward pass ≈ 100 MB)
                        value = store.get(k, user)  # computed by another session while this one waited?
                        if value is MISSING:
                            value = freeze(fn(*args, **kwargs))
                            store.put(k, value, user=user)
                finally:
                    if running is None:
                        with _inflight_lock:
                            del _inflight[(id(store), k)]
                        done.set()
                break
            return copy(value) if copy is not None else value

        return wrapper  # type: ignore[return-value]

    return decorate
