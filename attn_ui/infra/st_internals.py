"""What the app needs from Streamlit that has no public API, in one place.

Each use says why no public API serves. An internal module may change in any Streamlit release:
tests/core/test_imports.py keeps every other module of the app on the public API, tests/app/test_st_internals.py
fails with a clear message when the installed Streamlit lacks what this module relies on, and CI runs the oldest and
the newest Streamlit that requirements.txt allows.

- :func:`session_id`: the running session's id. The byte budget (attn_ui.infra.budget) remembers which sessions used
  a cached result, to drop it when they end; ``st.context`` has no session id.
- :func:`session_connected`: whether that session's browser is still connected, so a long write stops when its tab
  has closed; ``st.context`` describes the request that opened the session, not its websocket now.
- :func:`free_upload`: drop an uploaded file's bytes at once; ``st.file_uploader`` keeps them until the file is
  removed from the widget or the session ends.
- :func:`running`: whether this code runs in a Streamlit server (not plain Python, tests, AppTest between its runs),
  where ``st.context`` may be read without "missing ScriptRunContext" warnings.
- :func:`run_token`: an object that stands for the script run going on now (Streamlit makes the run's cursors anew
  at every run's start), so a value worked out once in a run (the learner's language) is known to be this run's;
  Streamlit has no run id.
- :func:`asked_page`: the page name the browser asked for by its address in this run, which ``st.navigation`` found no
  page for when it runs the default page for it (attn_ui.shell.frame.unknown_address). Streamlit tells the browser
  (its English "Page not found" dialog) but not the app; ``st.context.url`` is the browser's whole address, which
  holds the server's base path and, on Community Cloud, the iframe's, and which it edits (a page's name cut off its
  end, also where it only ends a longer word: /mysteps gave /my).
- :func:`logger`: a logger printed by Streamlit's own handler at the server's ``--logger.level`` (Streamlit sets up
  its own loggers only).
- :func:`prepare_grid`, :func:`refill_grid` and :func:`show_grid`: a grid (``st.data_editor`` of a DataFrame, its
  rows fixed, keyed) whose element is made once and sent again on later runs. ``st.data_editor`` turns its frame
  into Arrow on every run, with pandas' per-column work four times over (≈ 20 ms a run for a 64 × 64 grid of texts,
  when the matrix has not changed); Streamlit has no way to hand it the element it made last run. And a frame of new
  texts in the same structure is made into Arrow by pyarrow alone, in the schema pandas gave the first.
  tests/app/test_st_internals.py checks that the elements are the ones st.data_editor sends, byte for byte.
- :func:`grid_edits`: a grid's edits as the browser sent them, whichever page drew the grid. A widget's id hashes
  the page it was drawn on, and ``st.session_state[key]`` reads the id the last run drew under that key: a grid of
  the page being left (the sidebar's, on every page with the edit panel) that commits its open cell just after a
  click on another page sends it in a run that follows the other page's, which drew the key under its own id.
  Streamlit keeps no way from a key to the other pages' ids, and drops such a value without a word.
- :func:`prepare_chart` and :func:`show_chart`: a Vega-Lite chart whose spec is prepared once and sent again on later
  runs with new data. ``st.vega_lite_chart`` serialises the spec, parses it back and serialises it again (to rename
  Altair's counters) on every run: ≈ 0.4 ms a chart of a ≈ 5 kB spec, with its checks ≈ 1 ms, where the app's charts
  keep one spec per layout and change only their data. tests/app/test_st_internals.py checks that the elements are
  the ones st.vega_lite_chart sends, byte for byte, with and without a selection.
- :class:`SessionStorage`, :class:`SessionInfo` and :func:`install_session_storage`: the runtime's storage of
  disconnected sessions, replaced by attn_ui.infra.sessions so that a closed tab's session is shut down (Streamlit
  has no setting for it, and on its own keeps such sessions, and their uploads, for the process's life).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streamlit import runtime
from streamlit.logger import get_logger
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.session_manager import SessionInfo, SessionStorage

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["PreparedChart", "PreparedGrid", "SessionInfo", "SessionStorage", "asked_page", "free_upload", "grid_edits",
           "install_session_storage",
           "logger", "prepare_chart", "prepare_grid", "refill_grid", "run_token", "running", "session_connected",
           "session_id", "show_chart", "show_grid"]


def session_id() -> str | None:
    """The id of the Streamlit session running this code, or None outside a script run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def run_token() -> object | None:
    """An object that is the same throughout one script run and another in every other run (of any session), or
    None outside a run: the run's ``ScriptRunContext.cursors``, a dict Streamlit makes anew in ``reset()`` at the
    start of every run. Compare it with ``is`` while holding it (so it cannot be freed and its id reused)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return getattr(ctx, "cursors", None) if ctx is not None else None


def session_connected() -> bool:
    """Whether the browser of the session running this code is still connected; True outside a server's script run
    (AppTest, a test, a benchmark).

    A closed tab's session lives on for ``server.disconnectedSessionTTL`` seconds (attn_ui.infra.sessions), and a
    computation it started goes on meanwhile unless it asks: the runtime's ``is_active_session`` is False once the
    websocket has gone (the session manager moves it from its active sessions to the storage kept for a reconnect).
    tests/app/test_fair.py checks this on a real Runtime of the installed Streamlit.
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


def running() -> bool:
    """Whether a Streamlit server runs this process (``runtime.exists()``: what Streamlit itself checks for
    `streamlit run` against plain Python; it replaced ``st._is_running_with_streamlit``, and the API reference
    documents neither)."""
    return runtime.exists()


def asked_page() -> str | None:
    """The page name (the address's path under the app's base, as the browser sent it) this run was asked for by name,
    or None: no run, or a run asked for a page by its script hash (a click on a page's link, a rerun), or for the
    root. The run's ``PagesManager.intended_page_name``, which ``st.navigation`` matches against its pages' URL paths
    (and runs the default page when none has it) unless ``intended_page_script_hash`` names the page."""
    ctx = get_script_run_ctx(suppress_warning=True)
    pages = getattr(ctx, "pages_manager", None) if ctx is not None else None
    if pages is None or getattr(pages, "intended_page_script_hash", None):
        return None
    return getattr(pages, "intended_page_name", None) or None


def logger(name: str) -> logging.Logger:
    """The logger ``name``, printed in the server's log with Streamlit's format and at its level."""
    return get_logger(name)


def install_session_storage(make: Callable[[float], SessionStorage], reap: Callable[[SessionStorage], object],
                            every: float) -> SessionStorage | None:
    """Replace the runtime's storage of disconnected sessions by ``make(ttl)`` (``ttl``: the server's
    ``server.disconnectedSessionTTL``), moving the sessions it held over, and call ``reap(storage)`` every ``every``
    seconds on the runtime's event loop (where Streamlit reads and writes its storage; the storage need not be
    thread-safe). Returns the new storage, or None where there is no server runtime (plain Python, AppTest) or its
    storage is not the one this was written for (Streamlit's MemorySessionStorage): then nothing changes.

    What it touches: ``Runtime.instance()._session_mgr._session_storage`` and ``Runtime._get_async_objs().eventloop``
    (the runtime's session manager takes its storage at start and offers no way to change it).
    """
    from streamlit import config
    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_session_storage import MemorySessionStorage

    log = logger(__name__)
    try:
        if not Runtime.exists():
            return None
        rt = Runtime.instance()
        manager = rt._session_mgr
        old = manager._session_storage
        loop = rt._get_async_objs().eventloop
    except Exception as err:  # noqa: BLE001 - no server runtime here (AppTest), or another Streamlit
        log.debug("closed sessions are left to Streamlit: %s", err)
        return None
    if not isinstance(old, MemorySessionStorage):
        log.warning("closed sessions are left to Streamlit: its session storage is a %s", type(old).__name__)
        return None
    storage = make(float(config.get_option("server.disconnectedSessionTTL")))

    def swap() -> None:  # on the event loop
        for info in old.list():
            storage.save(info)
        manager._session_storage = storage

    def reaper() -> None:
        while not loop.is_closed():
            time.sleep(every)
            try:
                loop.call_soon_threadsafe(reap, storage)
            except RuntimeError:  # the loop closed meanwhile: the server is stopping
                return

    loop.call_soon_threadsafe(swap)
    threading.Thread(target=reaper, name="attn-session-reaper", daemon=True).start()
    return storage


@dataclass(frozen=True)
class PreparedGrid:
    """A grid's element as ``st.data_editor`` makes it, less what each run adds (its id, its form)."""

    proto: bytes  #: the serialised Dataframe proto: the frame as Arrow, the columns' configuration as JSON
    signature: str  #: the frame's structure, hashed: a keyed grid's identity (a new signature resets its edits)
    schema: pa.Schema  #: the frame's Arrow schema, pandas' metadata with it (its columns, index and dtypes)


def prepare_grid(frame: pd.DataFrame, column_config: dict, *, placeholder: str | None = None) -> PreparedGrid:
    """What ``st.data_editor(frame, num_rows="fixed", column_config=column_config, placeholder=placeholder, key=...)``
    makes of the frame before the run's part: the same steps, in its order, by its own functions (streamlit/elements/
    widgets/data_editor.py, ``DataEditorMixin.data_editor``), for a DataFrame whose every column is editable. A frame
    it would refuse raises what it raises. ``placeholder``: what a cell without a value shows (None: Streamlit's
    grey "None"; a cell emptied with the Delete key is one, until the grid is drawn anew)."""
    import pandas as pd
    import pyarrow as pa
    from streamlit import dataframe_util
    from streamlit.elements.lib.column_config_utils import (
        INDEX_IDENTIFIER,
        apply_data_specific_configs,
        determine_dataframe_schema,
        process_config_mapping,
        update_column_config,
    )
    from streamlit.elements.widgets import data_editor as editor

    data_format = dataframe_util.determine_data_format(frame)
    data_df = dataframe_util.convert_anything_to_pandas_df(frame, ensure_copy=True)
    editor._check_column_names(data_df)
    mapping = process_config_mapping(column_config)
    apply_data_specific_configs(mapping, data_format)
    editor._fix_column_headers(data_df)
    editor._stringify_arrow_incompatible_columns(data_df, mapping, trial_conversion=False)
    if not isinstance(data_df.index, pd.RangeIndex):
        update_column_config(mapping, INDEX_IDENTIFIER, {"required": True})
    table = pa.Table.from_pandas(data_df)
    schema = determine_dataframe_schema(data_df, table.schema)
    editor._check_type_compatibilities(data_df, mapping, schema)
    signature = editor._compute_data_editor_signature(
        data_df=data_df, data_format=data_format, arrow_schema=table.schema, dataframe_schema=schema, disabled=False,
        disabled_columns=[c for c, config in mapping.items() if config.get("disabled") is True],
        include_row_count=True)
    return PreparedGrid(_grid_proto(table, mapping, placeholder), signature, table.schema)


def refill_grid(grid: PreparedGrid, columns: list[list[str]], index: list[str], column_config: dict, *,
                placeholder: str | None = None) -> PreparedGrid:
    """The element :func:`prepare_grid` makes of a frame of texts of the same structure as the one ``grid`` was
    prepared from (a DataFrame of pandas' strings: the same columns, index labels and number of rows: all that its
    signature and Arrow schema hold), holding ``columns`` (each column's texts, in order) and labelled ``index``, with
    ``column_config`` and ``placeholder``: its Arrow table made from the texts in ``grid``'s schema (≈ 2 ms at
    64 × 64, where pandas took ≈ 25 ms to make the same bytes)."""
    import pyarrow as pa
    from streamlit import dataframe_util
    from streamlit.elements.lib.column_config_utils import (
        INDEX_IDENTIFIER,
        apply_data_specific_configs,
        process_config_mapping,
        update_column_config,
    )

    fields = list(grid.schema)
    if len(fields) != len(columns) + 1:  # the texts' columns and the index, as pandas turns them into Arrow
        raise ValueError(f"a grid of {len(fields) - 1} columns and an index, given {len(columns)} columns")
    table = pa.Table.from_arrays([pa.array(texts, type=field.type) for texts, field in zip([*columns, index], fields,
                                                                                          strict=True)],
                                 schema=grid.schema)
    mapping = process_config_mapping(column_config)
    apply_data_specific_configs(mapping, dataframe_util.DataFormat.PANDAS_DATAFRAME)
    update_column_config(mapping, INDEX_IDENTIFIER, {"required": True})  # the index is not a RangeIndex: it has labels
    return PreparedGrid(_grid_proto(table, mapping, placeholder), grid.signature, grid.schema)


def _grid_proto(table: pa.Table, mapping: dict, placeholder: str | None) -> bytes:
    """st.data_editor's Dataframe proto of fixed rows, every column editable, less its id and form."""
    from streamlit import dataframe_util
    from streamlit.elements.lib.column_config_utils import marshall_column_config
    from streamlit.proto.Dataframe_pb2 import Dataframe as DataframeProto

    proto = DataframeProto()
    if placeholder is not None:
        proto.placeholder = placeholder
    proto.disabled = False
    proto.editing_mode = DataframeProto.EditingMode.FIXED
    proto.arrow_data.data = dataframe_util.convert_arrow_table_to_arrow_bytes(table)
    marshall_column_config(proto, mapping)
    return proto.SerializeToString()


def show_grid(grid: PreparedGrid, *, key: str, height: int | str = "auto", width: int | str = "stretch") -> None:
    """Draw a prepared grid where ``st.data_editor`` would draw it (the container of the ``with`` block), as the
    same widget: the run's part of ``st.data_editor`` with ``num_rows="fixed"`` and no callback. Its edits are read
    from ``st.session_state[key]``, as the app reads every grid's. Left out: the grid's description for Streamlit's
    agent API (1.67's ``agent_props``, None in every session that API did not make) and its usage metrics."""
    import streamlit as st
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.layout_utils import LayoutConfig, validate_height, validate_width
    from streamlit.elements.lib.policies import check_widget_policies
    from streamlit.elements.lib.utils import compute_and_register_element_id
    from streamlit.elements.widgets.data_editor import DataEditorSerde
    from streamlit.proto.Dataframe_pb2 import Dataframe as DataframeProto
    from streamlit.runtime.state import register_widget

    dg = st._main  # what st.data_editor is bound to: it draws into the active container
    validate_width(width, allow_content=True)
    validate_height(height, allow_content=True, allow_stretch=True, additional_allowed=["auto"])
    check_widget_policies(dg, key, None, default_value=None, writes_allowed=False)
    proto = DataframeProto.FromString(grid.proto)
    # a keyed grid of fixed rows: its id hashes the key, num_rows and the data signature, in st.data_editor's order
    # (its other arguments are not part of it)
    proto.id = compute_and_register_element_id("data_editor", user_key=key, dg=dg,
                                               key_as_main_identity={"data_signature", "num_rows"},
                                               num_rows="fixed", data_signature=grid.signature)
    proto.form_id = current_form_id(dg)
    serde = DataEditorSerde()
    register_widget(proto.id, on_change_handler=None, args=None, kwargs=None, deserializer=serde.deserialize,
                    serializer=serde.serialize, ctx=get_script_run_ctx(), value_type="string_value", disabled=False)
    layout = LayoutConfig(width=width, height=height if height != "auto" else None)  # "auto": Streamlit's default
    dg._enqueue("dataframe", proto, layout_config=layout)


@dataclass(frozen=True)
class PreparedChart:
    """A chart's spec as ``st.vega_lite_chart`` sends it, its datasets apart (they change from run to run)."""

    spec: str  #: the spec's JSON, datasets left out, Altair's counters renamed: the element's ``spec``
    selection_modes: tuple[str, ...]  #: the selections a click reports (empty: the chart takes no clicks)


def grid_edits(key: str) -> tuple[dict | None, bool]:
    """The value of the grid keyed ``key`` (``{"edited_rows": ..., ...}``) the browser sent for this run, or None;
    and whether it came under another id than the one ``st.session_state[key]`` reads.

    ``st.session_state[key]`` when it has one; else the value sent under an id of ``key`` that another page drew (see
    the module's doc), if any."""
    import streamlit as st
    from streamlit.elements.widgets.data_editor import DataEditorSerde
    from streamlit.runtime.state.common import GENERATED_ELEMENT_ID_PREFIX
    from streamlit.runtime.state.session_state import Value
    from streamlit.runtime.state.session_state_proxy import get_session_state

    if key in st.session_state:
        return st.session_state[key], False
    sent = get_session_state()._state._new_widget_state.states  # {widget id: Value or Serialized}
    for widget_id, value in list(sent.items()):  # "$$ID-<hash of the element and its page>-<key>"
        if widget_id.startswith(GENERATED_ELEMENT_ID_PREFIX + "-") and widget_id.endswith("-" + key):
            if isinstance(value, Value):
                return value.value, True
            if value.value.WhichOneof("value") == "string_value":
                return DataEditorSerde().deserialize(value.value.string_value), True
    return None, False


def prepare_chart(spec: dict, *, stretch: bool = False, selection_mode: str | None = None,
                  selectable: bool = False) -> PreparedChart:
    """What ``st.vega_lite_chart(spec=spec, width=...)`` makes of the spec, less its datasets: its own steps, in its
    order (streamlit/elements/vega_charts.py, ``VegaChartsMixin._vega_lite_chart``). ``stretch``: drawn with
    ``width="stretch"``; ``selectable``: drawn with ``on_select`` (then ``selection_mode`` names the selections, or
    None for every one of the spec's). ``spec`` is not changed. A spec it would refuse raises what it raises."""
    from streamlit.elements import vega_charts

    plain = vega_charts._prepare_vega_lite_spec({k: v for k, v in spec.items() if k != "datasets"}, stretch)
    text = vega_charts._stabilize_vega_json_spec(json.dumps(plain))
    modes = tuple(vega_charts._parse_selection_mode(json.loads(text), selection_mode)) if selectable else ()
    return PreparedChart(text, modes)


def show_chart(chart: PreparedChart, datasets: dict[str, Any], *, theme: str | None, width: int | str = "content",
               key: str | None = None, on_select: str | Callable[[], None] = "ignore",
               selection_mode: str | None = None) -> object:
    """Draw a prepared chart with these datasets (name: a pyarrow Table or a DataFrame, in the spec's order) where
    ``st.vega_lite_chart`` would draw it, as the same element: the run's part of ``st.vega_lite_chart(spec=...,
    theme=theme, width=width, key=key, on_select=on_select, selection_mode=selection_mode)``. Returns what it returns:
    the selection's state with ``on_select``, else the element's DeltaGenerator. Prepare the chart with the same
    width, ``on_select`` and ``selection_mode`` (:func:`prepare_chart`). Left out: the chart's description for
    Streamlit's agent API (1.67's ``agent_props``) and its usage metrics."""
    import streamlit as st
    from streamlit import dataframe_util
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.layout_utils import LayoutConfig, validate_height, validate_width
    from streamlit.elements.lib.policies import check_widget_policies
    from streamlit.elements.lib.utils import compute_and_register_element_id, to_key
    from streamlit.elements.vega_charts import VegaLiteStateSerde
    from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart as VegaLiteChartProto
    from streamlit.runtime.state import register_widget, validate_on_change_mode

    dg = st._main  # what st.vega_lite_chart is bound to: it draws into the active container
    callback = validate_on_change_mode(on_select, supported_modes=("rerun", "ignore"), none_supported=False,
                                       param_name="on_select")
    key = to_key(key)
    selecting = on_select != "ignore"
    if selecting:
        check_widget_policies(dg, key, on_change=callback, default_value=None, writes_allowed=False,
                              enable_check_callback_rules=callback is not None)
    validate_width(width, allow_content=True)
    validate_height("content", allow_content=True)
    proto = VegaLiteChartProto()
    for name, data in datasets.items():
        dataset = proto.datasets.add()
        dataset.name = name
        dataset.has_name = True
        dataset.data.data = dataframe_util.convert_anything_to_arrow_bytes(data)
    proto.spec = chart.spec
    proto.theme = theme or ""
    layout = LayoutConfig(width=width, height="content")
    if not selecting:
        return dg._enqueue("vega_lite_chart", proto, layout_config=layout)
    proto.selection_mode.extend(chart.selection_modes)
    proto.form_id = current_form_id(dg)
    ctx = get_script_run_ctx()
    proto.id = compute_and_register_element_id(
        "vega_lite_chart", user_key=key, key_as_main_identity={"selection_mode"}, dg=dg, vega_lite_spec=proto.spec,
        vega_lite_data=proto.data.data, named_datasets=[d.name for d in proto.datasets], theme=theme,
        use_container_width=None, selection_mode=list(chart.selection_modes), alt=None)
    serde = VegaLiteStateSerde(list(chart.selection_modes))
    state = register_widget(proto.id, on_change_handler=callback, deserializer=serde.deserialize,
                            serializer=serde.serialize, ctx=ctx, value_type="string_value")
    dg._enqueue("vega_lite_chart", proto, layout_config=layout)
    return state.value
