"""attn_ui.infra.budget: the one byte budget of the server's shared caches (sizes counted here by hand)."""

import numpy as np
import pandas as pd
import pytest

from attn_core import load_preset, run
from attn_ui.infra import budget
from attn_ui.views import compute


def test_entries_are_evicted_least_recently_used_first_until_the_bytes_fit():
    b = budget.Budget(3_000)
    for name in "abc":
        assert b.put((name,), np.zeros(100))  # 800 bytes each
    assert b.get(("a",)) is not budget.MISSING  # "a" used again: "b" is now the oldest
    assert b.put(("d",), np.zeros(100)) and b.bytes == 2_400 + 800 - 800
    assert b.get(("b",)) is budget.MISSING
    assert [k for k in "acd" if b.get((k,)) is budget.MISSING] == []
    assert b.usage() == {"a": (1, 800), "c": (1, 800), "d": (1, 800)}


def test_a_value_over_the_whole_budget_is_not_kept_and_evicts_nothing():
    b = budget.Budget(1_000)
    b.put(("small",), np.zeros(10))
    assert not b.put(("huge",), np.zeros(1_000))
    assert b.get(("huge",)) is budget.MISSING and b.get(("small",)) is not budget.MISSING and b.bytes == 80


def test_a_key_put_again_is_counted_once():
    b = budget.Budget(10_000)
    b.put(("k",), np.zeros(100))
    b.put(("k",), np.zeros(200))
    assert b.bytes == 1_600 and b.usage() == {"k": (1, 1_600)}


def test_nbytes_counts_every_buffer_once():
    x = np.ones((4, 8))  # 256 bytes
    assert budget.nbytes(x) == 256
    assert budget.nbytes([x, x.T, x[:2]]) == 256 + 56  # views count their base; the list itself 56
    trace = run(load_preset("seed000"))
    arrays = sum(a.nbytes for h in trace.heads for a in (h.q, h.k, h.v, h.scores, h.scaled, h.masked, h.weights,
                                                         h.output))
    assert budget.nbytes(trace) >= arrays + trace.concat.nbytes + trace.output.nbytes
    frame = pd.DataFrame({"a": ["x" * 1000, "y"]})
    assert budget.nbytes(frame) > 1000


def test_the_environment_sets_the_budget():
    assert budget.limit_from_env({"ATTN_CACHE_MB": "100"}) == 100_000_000
    assert budget.limit_from_env({"ATTN_CACHE_MB": "-5"}) == budget.DEFAULT_MB * 1_000_000
    assert budget.limit_from_env({}) == budget.DEFAULT_MB * 1_000_000


def test_cached_keys_on_values_skips_underscored_parameters_and_keeps_no_exception():
    b = budget.Budget(10**6)
    calls = []

    @budget.cached("f", budget=b)
    def f(x: np.ndarray, n: int, _note: object = None) -> np.ndarray:
        calls.append(n)
        if n < 0:
            raise ValueError("negative")
        return x * n

    first = f(np.arange(3.0), 2, _note=object())
    assert f(np.arange(3.0), 2, _note="other") is first  # same values, a different _note: one entry, shared
    assert f(np.arange(3.0), 3) is not first and calls == [2, 3]
    with pytest.raises(ValueError):
        f(np.arange(3.0), -1)
    with pytest.raises(ValueError):
        f(np.arange(3.0), -1)
    assert calls == [2, 3, -1, -1] and b.usage() == {"f": (2, 48)}
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 7.0  # shared by every session that asks: no one may change it


def test_cached_copy_gives_each_caller_its_own():
    b = budget.Budget(10**6)

    @budget.cached("frame", budget=b, copy=pd.DataFrame.copy)
    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame({"a": range(n)})

    one, two = frame(3), frame(3)
    one.iloc[0, 0] = 99
    assert two.iloc[0, 0] == 0 and b.usage()["frame"][0] == 1


def test_a_key_function_keys_on_hashable_arguments_as_they_are(monkeypatch):
    b = budget.Budget(10**6)
    walked = []
    monkeypatch.setattr(budget, "fingerprint", lambda v: walked.append(v))

    @budget.cached("spec", budget=b, key=lambda layout, lang, *, _build: (layout, lang))
    def spec(layout: tuple, lang: str, *, _build: object) -> str:
        return f"{layout}-{lang}"

    first = spec(("a", ("x", "y"), 44), "en", _build=object())
    assert spec(("a", ("x", "y"), 44), "en", _build=None) is first  # equal values: one entry
    assert spec(("a", ("x", "y"), 44), "zh", _build=None) == "('a', ('x', 'y'), 44)-zh"
    assert walked == [] and b.usage()["spec"][0] == 2  # nothing fingerprinted


def test_a_counted_value_is_kept_at_the_size_its_maker_counted():
    b = budget.Budget(10**6)
    assert budget.nbytes(budget.Counted(pd.DataFrame({"a": ["x"]}), 1234)) == 1234
    from attn_ui.widgets import grid_editor

    values = np.arange(12.0).reshape(3, 4) / 7
    values[0, 1] = -values[0, 1]  # "−0.1429": 3 bytes in UTF-8 for its minus sign
    kept = grid_editor._number_texts.__wrapped__(values, 4)  # the grid's texts, as Arrow holds them
    texts = kept.value[0].to_pylist()
    assert kept.nbytes >= sum(len(t.encode()) for t in texts) + 8 * (len(texts) + 1)  # UTF-8 and 8-byte offsets
    assert b.put(("grid",), kept) and b.bytes == kept.nbytes


def test_an_argument_it_cannot_key_is_an_error_not_a_wrong_hit():
    with pytest.raises(TypeError, match="cannot key"):
        budget.fingerprint(object())


def test_a_sessions_results_are_released_when_it_ends_unless_another_used_them(monkeypatch):
    b = budget.Budget(10**8)
    monkeypatch.setattr(budget, "BUDGET", b)
    who = iter(["s1", "s1", "s2"])
    monkeypatch.setattr(budget, "session_id", lambda: next(who))
    seed, other = load_preset("seed000"), load_preset("seed002_causal")
    compute.trace(seed)  # s1
    only_s1 = compute.trace(other)  # s1
    compute.trace(seed)  # s2 uses seed 000's trace too
    b.put(("address", "key"), seed)  # kept outside any session: only eviction removes it
    assert b.usage()["trace"][0] == 2
    assert b.release("s1") == budget.nbytes(only_s1)  # seed002's trace went; seed000's stays for s2
    assert b.usage()["trace"][0] == 1
    assert b.release("s2") > 0 and b.release("s1") == 0
    assert set(b.usage()) == {"address"}


def test_a_run_that_outlives_its_session_keeps_nothing():
    b = budget.Budget(10**6)
    b.put(("trace", 1), np.zeros(10), user="gone")
    b.release("gone")  # the session was shut down while one of its runs was still computing ...
    assert not b.put(("trace", 2), np.zeros(10), user="gone")  # ... which then finishes: nothing kept for no one
    assert b.usage() == {} and b.put(("trace", 2), np.zeros(10), user="alive")


def test_at_most_two_results_are_computed_at_once_and_nested_calls_never_wait_on_each_other():
    import threading

    b = budget.Budget(10**6)
    lock, running, most = threading.Lock(), [0], [0]

    @budget.cached("inner", budget=b)
    def inner(n: int) -> np.ndarray:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.05)  # long enough for the other threads to try
        with lock:
            running[0] -= 1
        return np.full(3, float(n))

    @budget.cached("outer", budget=b)
    def outer(n: int) -> np.ndarray:
        return inner(n) * 2  # a cached function calling another, as layer_config calls forward

    threads = [threading.Thread(target=outer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)  # no deadlock
    assert most[0] == 2 and b.usage() == {"inner": (6, 144), "outer": (6, 144)}
