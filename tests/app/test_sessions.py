"""attn_ui.infra.sessions: a disconnected session is kept for a reconnect, then shut down (its uploads freed)."""

from streamlit.runtime.session_manager import SessionInfo

from attn_ui.infra import sessions


class FakeSession:
    """What the storage uses of an AppSession: its id and shutdown()."""

    def __init__(self, sid: str) -> None:
        self.id, self.closed = sid, 0

    def shutdown(self) -> None:
        self.closed += 1


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def info(sid: str) -> SessionInfo:
    return SessionInfo(client=None, session=FakeSession(sid))


def test_a_session_is_kept_for_its_ttl_then_shut_down_by_reap():
    clock = Clock()
    storage = sessions.ClosingSessionStorage(ttl=20, clock=clock)
    a, b = info("a"), info("b")
    storage.save(a)
    clock.now += 5
    storage.save(b)
    assert storage.get("a") is a and [i.session.id for i in storage.list()] == ["a", "b"]
    clock.now += 15  # a: 20 s, b: 15 s
    assert storage.get("a") is None and storage.list() == [b]  # expired: no longer offered for a reconnect ...
    assert a.session.closed == 0  # ... and shut down only by reap (on the event loop)
    assert storage.reap() == 1
    assert a.session.closed == 1 and b.session.closed == 0 and storage.shut_down == 1
    clock.now += 5
    assert storage.reap() == 1 and b.session.closed == 1
    assert storage.reap() == 0 and storage.list() == []


def test_a_resumed_session_is_never_shut_down():
    clock = Clock()
    storage = sessions.ClosingSessionStorage(ttl=20, clock=clock)
    a = info("a")
    storage.save(a)
    clock.now += 10
    storage.delete("a")  # Streamlit resumed it (a reconnect within the time): it is an active session again
    clock.now += 60
    assert storage.reap() == 0 and a.session.closed == 0
    storage.delete("never saved")  # no error


def test_over_maxsize_the_oldest_is_shut_down_at_once():
    storage = sessions.ClosingSessionStorage(ttl=20, maxsize=2, clock=Clock())
    kept = [info(str(i)) for i in range(3)]
    for i in kept:
        storage.save(i)
    assert [i.session.closed for i in kept] == [1, 0, 0] and storage.list() == kept[1:]


def test_a_failing_shutdown_does_not_stop_the_others():
    clock = Clock()
    storage = sessions.ClosingSessionStorage(ttl=1, clock=clock)
    bad, good = info("bad"), info("good")

    def boom() -> None:
        raise RuntimeError("broken")
    bad.session.shutdown = boom
    storage.save(bad)
    storage.save(good)
    clock.now += 2
    assert storage.reap() == 2 and good.session.closed == 1


def test_install_without_a_server_runtime_changes_nothing():
    assert sessions.install() is None  # pytest has no Streamlit server runtime (AppTest has none either)


def test_the_router_installs_it():
    from pathlib import Path

    assert "sessions.install()" in (Path(sessions.__file__).parents[2] / "streamlit_app.py").read_text()


def test_a_shut_down_session_releases_its_cached_results(monkeypatch):
    import numpy as np

    from attn_ui.infra import budget

    b = budget.Budget(10**6)
    monkeypatch.setattr(budget, "BUDGET", b)
    b.put(("trace", 1), np.zeros(100), user="a")
    b.put(("trace", 2), np.zeros(100), user="b")
    clock = Clock()
    storage = sessions.ClosingSessionStorage(ttl=20, clock=clock)
    storage.save(info("a"))
    clock.now += 21
    assert storage.reap() == 1
    assert b.usage() == {"trace": (1, 800)} and b.get(("trace", 2)) is not budget.MISSING
