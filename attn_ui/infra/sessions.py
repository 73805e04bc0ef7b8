"""A closed tab's session is shut down once it can no longer come back, which frees its uploads and its state.

What kept closed tabs alive (issue 27: 10 learners at the caps closed their tabs; 75 s later the server still held
1,886 MB, 10 AppSession objects and 247 MB of uploaded files, though Streamlit listed 0 sessions): when a browser
goes away, Streamlit keeps its AppSession in a MemorySessionStorage for ``server.disconnectedSessionTTL`` seconds
so that a reconnect can resume it. Once that time has passed the storage no longer lists the session, but

- an expired entry is only dropped when something is written to the storage (another tab disconnecting) or it is
  counted, so after the last tab closes the sessions stay in memory for good; and
- dropping it never calls ``AppSession.shutdown()``, which is what removes the session's uploaded files from the
  UploadedFileManager and its media files: those stay even after the AppSession is gone.

:class:`ClosingSessionStorage` is a SessionStorage (Streamlit's protocol: get, save, delete, list) that keeps a
disconnected session for the same time, and then shuts it down (and drops the cached results only it used:
attn_ui.infra.budget): :meth:`ClosingSessionStorage.reap`, called every
:data:`REAP_EVERY` seconds by :func:`install` on the runtime's event loop (where Streamlit touches its session
storage). A reconnect within the time resumes the session as before.

:func:`install` (called by streamlit_app.py, once per process) puts it in place of the runtime's storage, through
attn_ui.infra.st_internals (the one module that touches Streamlit's internals): where they are not as expected it
changes nothing and says so in the log.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

from attn_ui.infra import budget, memory, st_internals
from attn_ui.infra.st_internals import SessionInfo, SessionStorage

REAP_EVERY = 5.0  # seconds between two looks for expired sessions
_LOG = st_internals.logger(__name__)  # printed at Streamlit's log level (info by default) in the server's log
_lock = threading.Lock()
_installed: ClosingSessionStorage | None = None


class ClosingSessionStorage(SessionStorage):
    """Disconnected sessions, each kept ``ttl`` seconds for a reconnect, then shut down by :meth:`reap`.

    At most ``maxsize`` are kept (Streamlit's MemorySessionStorage keeps 128): over that, the oldest is shut down.
    Not thread-safe, as Streamlit's own: call it from the runtime's event loop only.
    """

    def __init__(self, ttl: float, maxsize: int = 128, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.maxsize, self._clock = ttl, maxsize, clock
        self._items: dict[str, tuple[SessionInfo, float]] = {}  # session id -> (info, when it expires)
        self.shut_down = 0  # sessions this storage has shut down (for tests and benchmarks)

    def get(self, session_id: str) -> SessionInfo | None:
        item = self._items.get(session_id)
        return item[0] if item is not None and self._clock() < item[1] else None

    def save(self, session_info: SessionInfo) -> None:
        self._items.pop(session_info.session.id, None)
        self._items[session_info.session.id] = (session_info, self._clock() + self.ttl)
        while len(self._items) > self.maxsize:
            self._shut(next(iter(self._items)))

    def delete(self, session_id: str) -> None:
        self._items.pop(session_id, None)  # resumed or closed by Streamlit: it is Streamlit's again

    def list(self) -> list[SessionInfo]:  # noqa: A003 - the protocol's name
        now = self._clock()
        return [info for info, expires in self._items.values() if now < expires]

    def reap(self) -> int:
        """Shut down every session kept longer than ``ttl``; returns how many."""
        now = self._clock()
        expired = [sid for sid, (_info, expires) in self._items.items() if expires <= now]
        for sid in expired:
            self._shut(sid)
        if expired:  # their state is garbage now: collect it and give the memory back to the system
            gc.collect()
            memory.trim()
        return len(expired)

    def _shut(self, session_id: str) -> None:
        info, _expires = self._items.pop(session_id)
        try:
            info.session.shutdown()  # frees its uploaded and media files, stops its script, clears its caches
        except Exception:  # noqa: BLE001 - one session's shutdown must not stop the others'
            _LOG.exception("shutting down session %s", session_id)
        freed = budget.BUDGET.release(session_id)  # the cached results only this session used
        self.shut_down += 1
        _LOG.info("session %s shut down after its tab closed: its uploads freed, %.1f MB of cached results released",
                  session_id, freed / 1e6)


def install() -> ClosingSessionStorage | None:
    """Once per process: the runtime's session storage becomes a :class:`ClosingSessionStorage` (the sessions it
    held moved over), reaped every :data:`REAP_EVERY` s on the runtime's event loop. Returns it, or None where the
    runtime is not Streamlit's server (AppTest) or its internals are not as expected."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = st_internals.install_session_storage(ClosingSessionStorage, ClosingSessionStorage.reap,
                                                              REAP_EVERY)
        return _installed
