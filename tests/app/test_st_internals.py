"""What attn_ui/infra/st_internals.py relies on in the installed Streamlit, each checked with a message that says what
changed and which function to mend (CI runs this on the oldest and the newest Streamlit requirements.txt allows).

Whether session_connected tells a closed tab from an open one on a real Runtime: tests/app/test_fair.py.
"""

from __future__ import annotations

import asyncio
import inspect

import pytest
import streamlit

from attn_ui.infra import sessions, st_internals

from .apptools import in_own_thread

VERSION = f"Streamlit {streamlit.__version__}"


def test_the_runtime_functions_it_calls_exist():
    from streamlit import runtime
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    assert callable(runtime.exists) and callable(runtime.get_instance), (
        f"{VERSION}: streamlit.runtime.exists / get_instance are gone: mend st_internals.running, session_connected, "
        "free_upload")
    assert hasattr(Runtime, "is_active_session"), (
        f"{VERSION}: Runtime.is_active_session is gone: mend session_connected")
    assert "suppress_warning" in inspect.signature(get_script_run_ctx).parameters, (
        f"{VERSION}: get_script_run_ctx(suppress_warning=...) changed: mend st_internals.session_id")
    assert st_internals.session_id() is None and st_internals.session_connected() and not st_internals.running()


def test_a_run_knows_the_page_name_it_was_asked_for():
    from streamlit.runtime.pages_manager import PagesManager

    pages = PagesManager("streamlit_app.py")
    pages.set_script_intent("", "nonexistent")
    assert (pages.intended_page_name, pages.intended_page_script_hash) == ("nonexistent", ""), (
        f"{VERSION}: PagesManager.set_script_intent / intended_page_name / intended_page_script_hash changed: mend "
        "st_internals.asked_page (an address that names no page would not be said: "
        "attn_ui.shell.frame.unknown_address)")
    assert st_internals.asked_page() is None  # no run


RUN_TOKEN_APP = """
import streamlit as st
from attn_ui.infra import st_internals
token = st_internals.run_token()
runs = st.session_state.setdefault("runs", [])
runs.append((token, token is st_internals.run_token()))
"""


def test_a_run_token_is_one_object_per_script_run():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(RUN_TOKEN_APP)
    at.run()
    at.run()
    (first, same_in_run), (second, same_again) = at.session_state["runs"]
    assert first is not None and same_in_run and same_again and first is not second, (
        f"{VERSION}: ScriptRunContext.cursors is no longer made anew for each run (or is gone): mend "
        "st_internals.run_token (attn_ui.app.i18n.language would keep one run's language for the next)")
    assert st_internals.run_token() is None


def test_the_uploaded_file_manager_can_drop_one_file():
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    assert callable(getattr(MemoryUploadedFileManager, "remove_file", None)), (
        f"{VERSION}: UploadedFileManager.remove_file is gone: mend st_internals.free_upload (a JSON file read on "
        "Share & export would stay in the server's memory until the session ends)")


def test_the_logger_is_streamlits():
    log = st_internals.logger("attn_ui.test")
    assert log.name == "attn_ui.test" and log.handlers, (
        f"{VERSION}: streamlit.logger.get_logger no longer gives a logger with Streamlit's handler: mend "
        "st_internals.logger (the app's log lines would not be printed)")


def test_the_session_storage_protocol_is_the_one_closing_storage_implements():
    for method in ("get", "save", "delete", "list"):
        assert callable(getattr(st_internals.SessionStorage, method, None)), (
            f"{VERSION}: SessionStorage has no {method}(): attn_ui.infra.sessions.ClosingSessionStorage implements "
            "Streamlit's protocol of that name; mend it")
        assert callable(getattr(sessions.ClosingSessionStorage, method))


def test_a_real_runtime_has_the_storage_install_session_storage_replaces(tmp_path):
    """On a real Runtime of the installed Streamlit: its session manager keeps its storage where
    install_session_storage swaps it, that storage is a MemorySessionStorage, and the event loop is where it says."""
    from streamlit.runtime import Runtime, RuntimeConfig
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    script = tmp_path / "app.py"
    script.write_text("pass\n")
    seen = {}

    async def main() -> None:
        rt = Runtime(RuntimeConfig(script_path=str(script), media_file_storage=MemoryMediaFileStorage("/m"),
                                   uploaded_file_manager=MemoryUploadedFileManager("/u")))
        try:
            await rt.start()
            seen["storage"] = type(getattr(getattr(rt, "_session_mgr", None), "_session_storage", None))
            seen["loop"] = getattr(rt._get_async_objs(), "eventloop", None) is not None
            rt.stop()
            await rt.stopped
        finally:
            Runtime._instance = None  # no runtime left behind for the other tests

    in_own_thread(lambda: asyncio.run(main()))  # a test in this process may already run an event loop (Playwright)
    assert seen == {"storage": MemorySessionStorage, "loop": True}, (
        f"{VERSION}: {seen}. st_internals.install_session_storage replaces Runtime._session_mgr._session_storage "
        "(a MemorySessionStorage) on Runtime._get_async_objs().eventloop; in this release they are not there, so "
        "closed tabs' sessions would be left to Streamlit (kept with their uploads): mend it")


@pytest.mark.parametrize("name", ["session_id", "session_connected", "free_upload", "running", "logger",
                                  "install_session_storage", "grid_edits", "prepare_grid", "refill_grid", "show_grid",
                                  "prepare_chart", "show_chart"])
def test_each_use_says_why_no_public_api_serves(name):
    assert name in (st_internals.__doc__ or ""), f"st_internals' module text must say why {name} is needed"


GRID_EDITS_APP = """
import pandas as pd
import streamlit as st
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.session_state import Serialized
from streamlit.runtime.state.session_state_proxy import get_session_state
from attn_ui.infra import st_internals

state = get_session_state()._state
st.data_editor(pd.DataFrame({"a": ["1", "2"]}), key="grid_0")
st.session_state["drawn_id"] = state._key_id_mapper.get_id_from_key("grid_0")
st.session_state["own"] = st_internals.grid_edits("grid_0")
# the same key's value as another page's grid sends it: under an id this run did not draw
sent = WidgetState(id="$$ID-0123456789abcdef-grid_1", string_value='{"edited_rows": {"1": {"a": "5"}}}')
state._new_widget_state.states[sent.id] = Serialized(sent)
st.session_state["other_page"] = st_internals.grid_edits("grid_1")
st.session_state["none"] = st_internals.grid_edits("grid_2")
"""


def test_grid_edits_finds_a_grids_value_sent_under_another_pages_id():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(GRID_EDITS_APP).run()
    assert not at.exception, at.exception
    drawn = at.session_state["drawn_id"]
    assert drawn.startswith("$$ID-") and drawn.endswith("-grid_0"), (
        f"{VERSION}: a keyed widget's id is {drawn!r}, not '$$ID-<hash>-<key>': mend st_internals.grid_edits")
    own, other, none = at.session_state["own"], at.session_state["other_page"], at.session_state["none"]
    assert dict(own[0])["edited_rows"] == {} and not own[1]  # its own key's value: no edits yet
    assert dict(other[0])["edited_rows"] == {1: {"a": "5"}} and other[1], (
        f"{VERSION}: a value sent under another page's id is not where st_internals.grid_edits looks "
        "(SessionState._new_widget_state.states, Serialized string_value): mend it")
    assert none == (None, False)


GRID_APP = """
import numpy as np
import pandas as pd
import streamlit as st
from attn_ui.infra import st_internals
from attn_ui.widgets.grid_editor import text_column

texts = np.array([["0.5000", "−1.2e−5", "3"], ["1", "<0.0001", "+∞"]], dtype=object)
frame = pd.DataFrame(texts, index=["0: the", "1: 注意"], columns=["0", "1", "2"])
config = {c: text_column(c, alignment="right", width=48 + 8 * i) for i, c in enumerate(frame.columns)}
config["_index"] = text_column(width=60)
tokens = pd.DataFrame({"token": ["the", "cat", "sat"]})
token_config = {"token": st.column_config.TextColumn("token", required=True)}
places = {"main": st.container(), "sidebar": st.sidebar, "column": st.columns(2)[1]}
for where, box in places.items():
    with box:
        key, height = f"grid_{where}", 120 if where == "column" else "auto"
        if st.session_state["how"] == "st.data_editor":
            st.data_editor(frame, key=key, num_rows="fixed", height=height, column_config=config, placeholder="")
            st.data_editor(tokens, key=key + "_tokens", num_rows="fixed", column_config=token_config, width="content")
        else:
            grid = st_internals.prepare_grid(frame, config, placeholder="")
            if st.session_state["how"] == "refill_grid":  # other texts' structure, then these texts in it
                blank = st_internals.prepare_grid(pd.DataFrame("", index=frame.index, columns=frame.columns), {})
                grid = st_internals.refill_grid(blank, texts.T.tolist(), list(frame.index), config, placeholder="")
            st_internals.show_grid(grid, key=key, height=height)
            st_internals.show_grid(st_internals.prepare_grid(tokens, token_config), key=key + "_tokens",
                                   width="content")
        st.session_state.setdefault("seen", {})[key] = st.session_state[key]
"""


def app_messages(script: str, how: str, monkeypatch, edit: dict | None = None) -> tuple[list[bytes], dict]:
    """The deltas of ``script``'s last run (their paths and contents, serialised), with its elements drawn ``how``,
    and what it read back into ``st.session_state["seen"]`` (``edit``: widget states, as the browser sends them,
    set before a second run)."""
    import streamlit.testing.v1.local_script_runner as local_script_runner
    from streamlit.testing.v1 import AppTest

    kept: list[list] = []
    parse = local_script_runner.parse_tree_from_messages
    monkeypatch.setattr(local_script_runner, "parse_tree_from_messages",
                        lambda msgs: (kept.append(list(msgs)), parse(msgs))[1])
    at = AppTest.from_string(script)
    at.session_state["how"] = how
    at.run()
    if edit:
        for key, value in edit.items():
            at.session_state[key] = value
        at.run()
    assert not at.exception, at.exception
    deltas = [bytes(m.metadata.delta_path) + m.delta.SerializeToString() for m in kept[-1] if m.HasField("delta")]
    return deltas, dict(at.session_state["seen"])


def grid_messages(how: str, monkeypatch, edit: dict | None = None) -> tuple[list[bytes], dict]:
    """GRID_APP's deltas with its grids drawn ``how``, and the edits each grid read back from the session state
    (``edit``: one grid's edit, as the browser sends it, before a second run)."""
    return app_messages(GRID_APP, how, monkeypatch, edit)


def test_a_prepared_grid_is_the_element_st_data_editor_sends(monkeypatch):
    """st_internals.show_grid(prepare_grid(frame, config)) sends what st.data_editor(frame, num_rows="fixed",
    column_config=config) sends, byte for byte (its Arrow table, columns, id, form, layout), in the main area, the
    sidebar and a column, for a frame with labelled rows (a matrix's) and one numbered from 0 (the tokens'), and
    made by refill_grid from a frame of empty texts of the same structure; and its edits come back in the session
    state as st.data_editor's do."""
    theirs, _ = grid_messages("st.data_editor", monkeypatch)
    ours, _ = grid_messages("show_grid", monkeypatch)
    assert len(theirs) >= 6 and ours == theirs, (
        f"{VERSION}: st.data_editor sends another element than st_internals.show_grid makes: mend prepare_grid and "
        "show_grid after DataEditorMixin.data_editor (streamlit/elements/widgets/data_editor.py)")
    refilled, _ = grid_messages("refill_grid", monkeypatch)
    assert refilled == theirs, (
        f"{VERSION}: a grid refilled with new texts (st_internals.refill_grid) is not the element st.data_editor makes "
        "of them: mend refill_grid after prepare_grid")
    edit = {"grid_column": {"edited_rows": {1: {"2": "7"}}, "added_rows": [], "deleted_rows": []}}
    _, seen_theirs = grid_messages("st.data_editor", monkeypatch, edit)
    _, seen_ours = grid_messages("show_grid", monkeypatch, edit)
    assert seen_ours == seen_theirs and seen_ours["grid_column"]["edited_rows"] == {1: {"2": "7"}}


CHART_APP = """
import numpy as np
import streamlit as st
from attn_ui.infra import st_internals
from attn_ui.widgets import charts, heatmap

plain = heatmap.heatmap(np.array([[0.5, -1.0], [2.0, 0.25]]), ["0: the", "1: 注意"], ["0", "1"], title="X").spec()
clickable = heatmap.heatmap(np.array([[0.1, 0.9], [0.6, 0.4]]), ["0: a", "1: b"], ["0: a", "1: b"], kind="weights",
                            select="cell").spec()
for spec in (plain, clickable):
    charts.finished(spec, None, charts.INKS["light"])
clicked = st.session_state.setdefault("clicked", [])
places = {"main": st.container(), "sidebar": st.sidebar, "column": st.columns(2)[1]}
for where, box in places.items():
    with box:
        draws = [(plain, {}), (plain, {"width": "stretch"}),
                 (clickable, {"key": f"pick_{where}", "on_select": "rerun", "selection_mode": "cell"}),
                 (clickable, {"key": f"call_{where}", "on_select": lambda: clicked.append(1)})]
        for spec, kwargs in draws:
            kwargs = {"width": "content", **kwargs}
            if st.session_state["how"] == "st.vega_lite_chart":
                out = st.vega_lite_chart(spec=dict(spec), theme="streamlit", **kwargs)
            else:
                prepared = st_internals.prepare_chart(
                    spec, stretch=kwargs["width"] == "stretch", selection_mode=kwargs.get("selection_mode"),
                    selectable=kwargs.get("on_select", "ignore") != "ignore")
                out = st_internals.show_chart(prepared, spec["datasets"], theme="streamlit", **kwargs)
            if "key" in kwargs:
                st.session_state.setdefault("seen", {})[kwargs["key"]] = dict(out)
"""


def chart_messages(how: str, monkeypatch) -> tuple[list[bytes], dict]:
    """CHART_APP's deltas with its charts drawn ``how``, and the selections read."""
    return app_messages(CHART_APP, how, monkeypatch)


def test_a_prepared_chart_is_the_element_st_vega_lite_chart_sends(monkeypatch):
    """st_internals.show_chart(prepare_chart(spec), datasets) sends what st.vega_lite_chart(spec=spec) sends, byte
    for byte (its spec, datasets as Arrow, theme, width, and with a selection its id, modes and form), in the main
    area, the sidebar and a column, with and without a click selection (rerun, or a callback), content or stretch
    wide; and a selection's state reads the same."""
    theirs, seen_theirs = chart_messages("st.vega_lite_chart", monkeypatch)
    ours, seen_ours = chart_messages("show_chart", monkeypatch)
    assert len(theirs) >= 12 and ours == theirs, (
        f"{VERSION}: st.vega_lite_chart sends another element than st_internals.show_chart makes: mend prepare_chart "
        "and show_chart after VegaChartsMixin._vega_lite_chart (streamlit/elements/vega_charts.py)")
    assert seen_ours == seen_theirs and len(seen_ours) == 6
