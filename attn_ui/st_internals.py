"""What the app needs from Streamlit that has no public API, in one place (besides attn_ui/sessions.py, which
replaces the session storage): the running session's id, whether its browser is still connected, and freeing an
uploaded file's bytes.

An internal module may change in any Streamlit release; tests/core/test_imports.py keeps every other module on the
public API, and CI runs the oldest and the newest Streamlit that requirements.txt allows.
"""

from __future__ import annotations

from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx


def session_id() -> str | None:
    """The id of the Streamlit session running this code, or None outside a script run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def session_connected() -> bool:
    """Whether the browser of the session running this code is still connected; True outside a server's script run
    (AppTest, a test, a benchmark).

    No public API says it: st.context describes the request that opened the session, not whether its websocket is
    still open. A closed tab's session lives on for ``server.disconnectedSessionTTL`` seconds (attn_ui/sessions.py),
    and a computation it started goes on meanwhile unless it asks: the runtime's ``is_active_session`` is False once
    the websocket has gone (the session manager moves it from its active sessions to the storage kept for a
    reconnect). tests/app/test_fair.py checks this on a real Runtime of the installed Streamlit.
    """
    session = session_id()
    if session is None or not runtime.exists():
        return True
    return bool(runtime.get_instance().is_active_session(session))


def free_upload(file_id: str | None) -> None:
    """Drop an uploaded file's bytes from the server's memory now (Streamlit keeps them until the learner removes
    the file from the uploader or the session ends)."""
    session = session_id()
    if session is not None and file_id is not None and runtime.exists():
        runtime.get_instance().uploaded_file_mgr.remove_file(session, file_id)
