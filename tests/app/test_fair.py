"""Fair compute (issue 40): one learner's long write must not freeze everyone.

attn_ui.infra.budget's slots are first come first served, in two pools (a model's work, the explorer's), each bounded; a
text written token by token (and a translation) gives its slot back between two tokens (once it has held it a
second) and queues again; a write whose browser has gone stops between two tokens and keeps nothing; the server's
numpy runs one BLAS thread; a computation of independent parts (Which heads matter) takes a second slot for a second
thread only when one is free and nobody waits, and gives it back as soon as someone does.

No assertion here is about time: threads are ordered by events, and every wait has a generous timeout so that a bug
fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import streamlit

import attn_models
from attn_ui.app import registry
from attn_ui.infra import budget, st_internals
from attn_ui.views import generate_views, translate_views

from .. import tiny_bert, tiny_gpt2, tiny_t5
from .apptools import in_own_thread, new_app, plain

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30.0  # seconds: only ever reached when something is broken


def until(condition, what: str) -> None:
    """Wait until ``condition()`` is true (another thread has got somewhere), or fail saying ``what``."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.002)


def started(target, *args) -> threading.Thread:
    t = threading.Thread(target=target, args=args, daemon=True)
    t.start()
    return t


def joined(*threads: threading.Thread) -> None:
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"


# ---- the slots ---------------------------------------------------------------------------------------------------


def test_a_thread_that_gives_its_slot_back_queues_behind_the_one_waiting():
    slots, order = budget.FairSlots(1, "test"), []
    slots.acquire()  # this thread: a write, between two tokens

    def other() -> None:
        slots.acquire()
        order.append("other")
        slots.release()

    t = started(other)
    until(lambda: slots.waiting == 1, "the other thread queues")
    slots.release()
    slots.acquire()  # at once: threading.Semaphore would usually hand it straight back to this thread
    order.append("writer")
    slots.release()
    joined(t)
    assert order == ["other", "writer"]


def test_waiting_threads_get_their_slots_in_the_order_they_asked():
    slots, order = budget.FairSlots(2, "test"), []
    slots.acquire()
    slots.acquire()
    threads = []
    for name in "abcd":
        threads.append(started(lambda n=name: (slots.acquire(), order.append(n))))
        queued = len(threads)
        until(lambda k=queued: slots.waiting == k, f"{name} queues")
    for k in range(4):
        slots.release()
        until(lambda k=k: len(order) == k + 1, "the next one gets a slot")
    joined(*threads)
    assert order == list("abcd") and slots.held == 2 and slots.waiting == 0
    with pytest.raises(ValueError, match="released more often"):
        for _ in range(3):
            slots.release()


def test_nested_cached_calls_take_one_slot_of_either_pool(monkeypatch):
    model, explorer = budget.FairSlots(1, "model"), budget.FairSlots(1, "explorer")
    monkeypatch.setattr(budget, "MODEL_SLOTS", model)
    monkeypatch.setattr(budget, "EXPLORER_SLOTS", explorer)
    b, seen = budget.Budget(10**6), []

    @budget.cached("inner", budget=b, slots=explorer)
    def inner(n: int) -> np.ndarray:
        seen.append((model.held, explorer.held))
        return np.zeros(n)

    @budget.cached("outer", budget=b)  # the model's pool by default
    def outer(n: int) -> np.ndarray:
        return inner(n) + 1  # with one slot per pool, a second slot taken here would wait for ever

    assert outer(3).tolist() == [1.0, 1.0, 1.0]
    assert seen == [(1, 0)] and (model.held, explorer.held) == (0, 0)


def test_each_pool_is_bounded_and_the_explorer_never_waits_for_a_model(monkeypatch):
    model, explorer = budget.FairSlots(2, "model"), budget.FairSlots(2, "explorer")
    monkeypatch.setattr(budget, "MODEL_SLOTS", model)
    b, lock, running, most = budget.Budget(10**6), threading.Lock(), {"model": 0, "explorer": 0}, {}
    go = threading.Event()

    def work(pool: str, n: int) -> np.ndarray:
        with lock:
            running[pool] += 1
            most[pool] = max(most.get(pool, 0), running[pool])
        if pool == "model":
            go.wait(WAIT)  # the models compute until the explorer's work is done
        with lock:
            running[pool] -= 1
        return np.full(2, float(n))

    slow = budget.cached("slow", budget=b)(lambda n: work("model", n))
    cheap = budget.cached("cheap", budget=b, slots=explorer)(lambda n: work("explorer", n))
    models = [started(slow, n) for n in range(5)]
    until(lambda: model.held == 2 and model.waiting == 3, "two models compute, three wait")
    explorers = [started(cheap, n) for n in range(6)]
    joined(*explorers)  # done while both model slots are taken
    assert most["explorer"] <= 2 and model.held == 2 and model.waiting == 3
    go.set()
    joined(*models)
    assert most == {"model": 2, "explorer": most["explorer"]} and (model.held, explorer.held) == (0, 0)
    assert b.usage() == {"slow": (5, 80), "cheap": (6, 96)}


def test_a_result_being_computed_is_waited_for_not_computed_again(monkeypatch):
    """Two learners ask for the same write at once: the second waits for the first's result, holding no slot (a
    write gives its slot back between tokens, so without this the second would compute it all again)."""
    slots = budget.FairSlots(2, "model")
    monkeypatch.setattr(budget, "MODEL_SLOTS", slots)
    b, calls, release = budget.Budget(10**6), [], threading.Event()

    @budget.cached("once", budget=b)
    def once(n: int) -> np.ndarray:
        calls.append(n)
        release.wait(WAIT)
        return np.arange(n)

    class Watched:  # the running computation's event, counting who waits on it
        def __init__(self, event: threading.Event) -> None:
            self.event, self.waiters = event, 0

        def wait(self, timeout: float | None = None) -> bool:
            self.waiters += 1
            return self.event.wait(timeout)

    first = started(once, 3)
    until(lambda: calls == [3], "the first call computes")
    (key, event), = budget._inflight.items()
    budget._inflight[key] = watched = Watched(event)
    got = []
    second = started(lambda: got.append(once(3)))
    until(lambda: watched.waiters == 1, "the second call waits for the first's result")
    assert slots.held == 1 and slots.waiting == 0  # the first's slot only
    release.set()
    joined(first, second)
    assert calls == [3] and got[0].tolist() == [0, 1, 2] and budget._inflight == {}


# ---- a spare core: a computation of parts takes a second slot when nobody needs it ------------------------------


def meeting(n: int = 2) -> threading.Barrier:
    """Parts that wait for each other: they pass only if they run at once, on two threads (else it breaks)."""
    return threading.Barrier(n, timeout=WAIT)


def test_a_free_slot_with_nobody_waiting_runs_parts_on_two_threads():
    slots, me, seen = budget.FairSlots(2, "test"), threading.get_ident(), []
    meet = meeting()

    def part(i: int):
        meet.wait()  # the other part runs at the same time
        seen.append((threading.get_ident(), slots.held))
        return i * 10

    with budget.compute_slot(slots):
        assert budget.spare_core([lambda: part(0), lambda: part(1), lambda: 2, lambda: 3]) == [0, 10, 2, 3]
        assert slots.held == 1  # the second slot given back
    assert {t for t, _ in seen} - {me} and me in {t for t, _ in seen}
    assert [held for _, held in seen] == [2, 2] and (slots.held, slots.waiting) == (0, 0)


def test_a_free_slot_is_not_taken_ahead_of_a_thread_in_line():
    """A slot free while a thread is in the queue: the moment a waiter has been woken and not yet run (made here by
    hand, as it cannot be waited for). try_acquire leaves the slot to it."""
    slots = budget.FairSlots(2, "test")
    slots.acquire()
    slots._queue.append(object())  # a thread in line, about to take the free slot
    assert not slots.try_acquire() and slots.held == 1
    slots._queue.clear()
    assert slots.try_acquire() and not slots.try_acquire() and slots.held == 2


@pytest.mark.parametrize("state", ["both held", "one waiting", "no slot held", "one part"])
def test_otherwise_parts_run_in_turn_in_the_callers_thread(state):
    slots, me, seen = budget.FairSlots(2, "test"), threading.get_ident(), []
    n_parts = 1 if state == "one part" else 3
    parts = [lambda i=i: seen.append((i, threading.get_ident(), slots.held)) or i for i in range(n_parts)]
    others: list[threading.Thread] = []
    if state in ("both held", "one waiting"):
        slots.acquire()  # another learner's computation
    if state == "no slot held":
        assert budget.spare_core(parts) == list(range(n_parts))
    else:
        with budget.compute_slot(slots):
            if state == "one waiting":
                others.append(started(lambda: (slots.acquire(), slots.release())))
                until(lambda: slots.waiting == 1, "a third learner queues")
            assert budget.spare_core(parts) == list(range(n_parts))
    held = {"both held": 2, "one waiting": 2, "no slot held": 0, "one part": 1}[state]
    assert seen == [(i, me, held) for i in range(n_parts)]
    if state in ("both held", "one waiting"):
        slots.release()
    joined(*others)
    assert (slots.held, slots.waiting) == (0, 0)


def test_the_spare_core_stops_taking_parts_once_someone_queues():
    """A learner who arrives while the layer's parts run on two threads waits for one part, not for the layer: the
    worker takes no part after it queued, gives its slot back, and the caller does the rest."""
    slots, me, ran, got = budget.FairSlots(2, "test"), threading.get_ident(), {}, threading.Event()
    meet, done = meeting(), threading.Event()
    other: list[threading.Thread] = []

    def learner() -> None:
        slots.acquire()
        got.set()
        done.wait(WAIT)
        slots.release()

    def first(i: int) -> int:
        meet.wait()  # both threads in a part
        if threading.get_ident() == me:
            other.append(started(learner))
        until(lambda: slots.waiting == 1 or got.is_set(), "the learner queues")
        ran[i] = threading.get_ident()
        return i

    def later(i: int) -> int:
        ran[i] = threading.get_ident()
        return i

    parts = [lambda: first(0), lambda: first(1)] + [lambda i=i: later(i) for i in range(2, 6)]
    with budget.compute_slot(slots):
        assert budget.spare_core(parts) == list(range(6))
        until(got.is_set, "the learner gets the spare slot")
        assert slots.held == 2  # the caller's and the learner's
    assert len({ran[0], ran[1]}) == 2 and all(ran[i] == me for i in range(2, 6))
    done.set()
    joined(*other)
    assert (slots.held, slots.waiting) == (0, 0)


@pytest.mark.parametrize("where", ["worker", "caller"])
def test_an_exception_in_either_thread_is_raised_and_the_slots_come_back(where):
    slots, me = budget.FairSlots(2, "test"), threading.get_ident()
    meet, later = meeting(), []

    def part() -> int:
        meet.wait()
        if (threading.get_ident() == me) == (where == "caller"):
            raise ValueError(f"broken in the {where}'s thread")
        return 1

    with pytest.raises(ValueError, match=f"broken in the {where}'s thread"):
        with budget.compute_slot(slots):
            try:
                budget.spare_core([part, part, lambda: later.append(1)])
            finally:
                assert slots.held == 1  # the worker has ended and given its slot back
    assert later in ([], [1]) and (slots.held, slots.waiting) == (0, 0)


def test_which_heads_matter_on_two_threads_equals_one_bit_for_bit(tmp_path):
    model = attn_models.load(str(tiny_bert.build(tmp_path / "bert")))
    slots, texts = budget.FairSlots(2, "test"), (tiny_bert.SENTENCE, "A dog was tired.")
    threads, layers, meet = set(), [], meeting()

    def met(part):  # each of a layer's two runs (the tiny model's 4 heads, 2 and 2) waits for the other
        meet.wait()
        threads.add(threading.get_ident())
        return part()

    with budget.compute_slot(slots):
        effects = model.similarity_effects(texts, on_layer=layers.append, run_parts=lambda parts: budget.spare_core(
            [lambda p=p: met(p) for p in parts]))
    assert np.array_equal(effects, model.similarity_effects(texts))
    assert threading.get_ident() in threads and len(threads) >= 2  # a worker thread each layer
    assert layers == list(range(model.n_layers)) and slots.held == 0


# ---- writing and translating take turns --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> str:
    return str(tiny_gpt2.build(tmp_path_factory.mktemp("gpt2")))


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory) -> str:
    return str(tiny_t5.build(tmp_path_factory.mktemp("t5")))


def test_a_write_gives_its_slot_back_between_tokens(monkeypatch, gpt2_dir):
    """One model slot: another learner's computation, asked while the write draws its first token, gets the slot;
    the write queues for its second token behind it, and goes on once it is done. The draw holds no slot."""
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", gpt2_dir)  # the operator's model: a folder it may read
    monkeypatch.setattr(budget, "QUANTUM", 0.0)  # the tiny model's tokens take far less than a second each
    slots = budget.FairSlots(1, "model")
    monkeypatch.setattr(budget, "MODEL_SLOTS", slots)
    monkeypatch.setattr(budget, "BUDGET", budget.Budget(10**8))
    events, threads = [], []

    @budget.cached("other")  # another learner's page: a model computation
    def other(n: int) -> np.ndarray:
        until(lambda: slots.waiting == 1, "the write queues for its next token")
        events.append("other")
        return np.zeros(n)

    def draw(i: int, step) -> None:
        events.append((i, slots.held))
        if i == 0:
            threads.append(started(other, 4))
            until(lambda: slots.held == 1, "the other learner's computation has the slot")

    gen = generate_views.generation(gpt2_dir, tiny_gpt2.PROMPTS[0], 3, False, 1.0, 0, _on_step=draw)
    joined(*threads)
    assert len(gen.steps) == 3 and events == [(0, 0), "other", (1, 0), (2, 0)]
    assert slots.held == 0 and slots.waiting == 0


@pytest.mark.parametrize(("quantum", "held"), [(0.0, 0), (3600.0, 1)])
def test_a_translation_lends_its_slot_between_tokens_once_it_held_it_a_quantum(monkeypatch, t5_dir, quantum, held):
    """After every token a translation (attn_models' on_step) offers its slot back; it gives it once it has held it
    QUANTUM seconds (0: at every token; an hour: never in a short translation)."""
    monkeypatch.setattr(budget, "QUANTUM", quantum)
    slots = budget.FairSlots(1, "model")
    monkeypatch.setattr(budget, "MODEL_SLOTS", slots)
    monkeypatch.setattr(budget, "BUDGET", budget.Budget(10**8))
    lent = []
    turns = budget.taking_turns(lambda i, token: lent.append((i, token, slots.held)))
    model = attn_models.load(t5_dir)

    @budget.cached("t")
    def translate(sentence: str):
        return model.translate(sentence, max_new=5, on_step=turns)

    out = translate(tiny_t5.SENTENCES[0])
    assert [(i, t) for i, t, _held in lent] == list(enumerate(int(t) for t in out.output_ids))
    assert {h for *_x, h in lent} == {held} and slots.held == 0


def test_translation_views_take_turns(monkeypatch, t5_dir):
    """translate_views.translation hands attn_models a taking_turns callback (each token: the slot lent)."""
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", t5_dir)
    monkeypatch.setattr(budget, "BUDGET", budget.Budget(10**8))
    seen = []
    real = budget.lent_slot

    def counting():
        seen.append(budget.MODEL_SLOTS.held)
        return real()

    monkeypatch.setattr(budget, "lent_slot", counting)
    out = translate_views.translation(t5_dir, tiny_t5.SENTENCES[0])
    assert len(seen) == len(out.output_ids) and set(seen) == {1}


def test_a_write_stops_when_the_browser_has_gone_and_keeps_nothing(monkeypatch, gpt2_dir):
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", gpt2_dir)
    b = budget.Budget(10**8)
    monkeypatch.setattr(budget, "BUDGET", b)
    at = new_app(registry.GENERATE.file)
    at.text_input(key="gen_prompt").set_value(tiny_gpt2.PROMPTS[0]).run()
    at.number_input(key="gen_n_new").set_value(8).run()
    asked = []
    monkeypatch.setattr(st_internals, "session_connected", lambda: asked.append(1) or False)
    at.button(key="gen_write").click().run()
    assert asked == [1]  # asked after the first token, and stopped there
    assert not at.exception and "causal_generation" not in b.usage()
    assert not any("tokens written" in plain(c.value) for c in at.caption)
    monkeypatch.setattr(st_internals, "session_connected", lambda: asked.append(1) or True)
    at.run()  # the browser is back (a reconnect reruns): the write is done again, all of it
    assert len(asked) == 9 and b.usage()["causal_generation"][0] == 1
    assert any("8 tokens written" in plain(c.value) for c in at.caption)


def test_a_translation_stops_when_the_browser_has_gone(monkeypatch, t5_dir):
    monkeypatch.setenv("ATTN_TRANSLATOR_MODEL", t5_dir)
    b = budget.Budget(10**8)
    monkeypatch.setattr(budget, "BUDGET", b)
    monkeypatch.setattr(st_internals, "session_connected", lambda: False)
    at = new_app(registry.TRANSLATE.file)
    at.text_input(key="trans_sentence").set_value(tiny_t5.SENTENCES[0]).run()
    assert not at.exception and "translation" not in b.usage()
    assert not any(m.value.startswith("> ") for m in at.markdown)  # no translation quoted


# ---- what session_connected relies on in Streamlit ---------------------------------------------------------------


def test_session_connected_is_true_outside_a_server():
    assert st_internals.session_connected()


def test_session_connected_follows_a_real_runtime(monkeypatch, tmp_path):
    """On a real Runtime of the installed Streamlit (its event loop, its session manager): a connected session is
    active, a disconnected one (its websocket gone, kept for a reconnect) is not. If a Streamlit release changes
    that, this fails and says where to look."""
    from streamlit.runtime import Runtime, RuntimeConfig
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    script = tmp_path / "app.py"
    script.write_text("pass\n")
    seen = {}

    class Client:  # what a websocket gives the runtime
        def write_forward_msg(self, msg) -> None:
            pass

    async def main() -> None:
        runtime = Runtime(RuntimeConfig(script_path=str(script), media_file_storage=MemoryMediaFileStorage("/m"),
                                        uploaded_file_manager=MemoryUploadedFileManager("/u")))
        try:
            await runtime.start()
            sid = runtime.connect_session(client=Client(), user_info={})
            monkeypatch.setattr(st_internals, "session_id", lambda: sid)
            seen["connected"] = st_internals.session_connected()
            runtime.disconnect_session(sid)
            seen["disconnected"] = st_internals.session_connected()
            seen["kept for a reconnect"] = runtime._session_mgr.get_session_info(sid) is not None
            runtime.stop()
            await runtime.stopped
        finally:
            Runtime._instance = None  # no runtime left behind for the other tests

    in_own_thread(lambda: asyncio.run(main()))  # a test in this process may already run an event loop (Playwright)
    assert seen == {"connected": True, "disconnected": False, "kept for a reconnect": True}, (
        f"Streamlit {streamlit.__version__}: {seen}. attn_ui/st_internals.session_connected asks "
        "runtime.get_instance().is_active_session(id) whether a session's browser is still there; in this release "
        "that no longer tells a closed tab from an open one: find what does and change session_connected")


# ---- one BLAS thread -------------------------------------------------------------------------------------------


def test_the_server_computes_with_one_blas_thread_even_when_numpy_came_first():
    """In a fresh process: numpy (and its OpenBLAS, with its default threads) loaded before the app, as Streamlit or
    another import may do; importing the app's budget sets one thread, seen from another thread (a script run's)."""
    code = ("import json, threading, numpy\n"
            "from threadpoolctl import threadpool_info\n"
            "seen = {'before': [(p['user_api'], p['num_threads']) for p in threadpool_info()]}\n"
            "import attn_ui.infra.budget\n"
            "t = threading.Thread(target=lambda: seen.update(after=[(p['user_api'], p['num_threads']) "
            "for p in threadpool_info()]))\n"
            "t.start(); t.join()\n"
            "print(json.dumps(seen))\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}  # numpy's defaults, as a server's
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    after = [tuple(p) for p in seen["after"]]
    assert ("blas", 1) in after and all(n == budget.BLAS_THREADS for _api, n in after), seen
