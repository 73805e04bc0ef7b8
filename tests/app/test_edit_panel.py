"""The edit panel (issue 28): X and the weights edited in the sidebar of the pages that show their effect, every
step on the page recomputed in the same run; Inputs & weights shows what its grids give.

Expected numbers are numpy written out here (tests/app/test_steps.reference), independent of attn_core.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import MATRIX_NAMES
from attn_ui.app import state

from .apptools import APP, edit_cells, editor_key, new_app, plain
from .test_steps import SEED_W_K, SEED_W_Q, SEED_W_V, SEED_X, charts, grid, reference, steps_app

PANEL = "edit_matrix"  # attn_ui.app.state.EDIT_MATRIX: the panel's matrix picker


def sidebar_texts(at) -> str:
    return "\n".join(str(getattr(el, "value", "")) for el in at.sidebar)


def pick(at, name: str):
    at.button_group(key=PANEL).set_value(name).run()
    assert not at.exception, at.exception
    return at


def test_step_by_step_has_the_panel_with_every_matrix_of_the_configuration_but_w_o():
    """W_O is edited on Multi-head, beside the output it makes: on the pages with the panel an edit of it changed
    nothing shown (a reviewer)."""
    at = steps_app()
    picker = at.button_group(key=PANEL)
    assert list(picker.options) == [MATRIX_NAMES[n] for n in ("x", "w_q", "w_k", "w_v")]
    assert picker.value == "x"  # X first
    assert ":material/edit: **Edit the numbers**" in [m.value for m in at.sidebar.markdown]
    assert "3 × 4" in sidebar_texts(at)  # X's shape under the picker


def test_an_edit_of_x_in_the_panel_recomputes_every_step_on_the_page():
    at = steps_app()
    edit_cells(at, "x", {1: {2: "3.5"}})
    x = SEED_X.copy()
    x[1, 2] = 3.5
    np.testing.assert_array_equal(at.session_state["config"].x, x)
    want, found = reference(x, SEED_W_Q, SEED_W_K, SEED_W_V), charts(at)
    np.testing.assert_allclose(grid(found["Q"]), want["Q"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grid(found["Weights"]), want["weights"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grid(found["Output"]), want["output"], rtol=0, atol=1e-12)


def test_the_picker_chooses_the_matrix_and_its_edit_reaches_the_scores():
    at = pick(steps_app(), "w_k")
    assert "4 × 3" in sidebar_texts(at) and "K = X W_K" in sidebar_texts(at)
    edit_cells(at, "w_k", {0: {0: "-2"}})
    w_k = SEED_W_K.copy()
    w_k[0, 0] = -2
    want = reference(SEED_X, SEED_W_Q, w_k, SEED_W_V)
    np.testing.assert_allclose(grid(charts(at)["Scores QKᵀ"]), want["scores"], rtol=0, atol=1e-12)
    at.switch_page("pages/scaling.py").run()  # the choice is kept for the next page with the panel
    at.switch_page("pages/steps.py").run()
    assert at.button_group(key=PANEL).value == "w_k"


def test_a_refused_cell_in_the_panel_is_named_there_and_kept_as_typed():
    at = steps_app()
    edit_cells(at, "x", {2: {1: "two"}})
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)  # the last valid values stay
    assert any("X, row 2 (input3), column 1 is 'two', not a number." in plain(e.value) for e in at.sidebar.error)
    banner = " ".join(plain(w.value) for w in at.main.warning)
    assert "Fix it in the sidebar, under Edit the numbers." in banner
    assert not [link for link in at.main.get("page_link") if "Inputs" in link.proto.label]  # fixed here, not there

    edit_cells(at, "x", {2: {1: "two"}, 0: {3: ""}})  # two cells to fix: "them"
    banner = " ".join(plain(w.value) for w in at.main.warning)
    assert "column 3 is empty" in banner and banner.endswith("Fix them in the sidebar, under Edit the numbers.")


def test_a_cell_whose_number_overflows_a_step_is_refused_in_the_panel_as_a_bad_cell_is():
    """1e308 typed in X is a float, but V = X W_V overflows: it was taken, and every page then said only "This
    configuration cannot be computed … Change it on Inputs & weights", while NaN and "abc" were refused where they
    were typed (a fresh reviewer). Now the same: the last valid values stay, the panel's grid keeps what was typed."""
    at = steps_app()
    edit_cells(at, "x", {0: {0: "1e308"}})
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)  # the last valid values stay
    said = " ".join(plain(w.value) for w in [*at.main.warning, *at.sidebar.error])
    assert "V: cell (0, 1) is +inf; it overflowed float64" in said, said
    assert "Fix it in the sidebar, under Edit the numbers." in said
    assert not [e for e in at.main.error if "cannot be computed" in plain(e.value)]  # the page still shows the steps
    assert at.get("vega_lite_chart")


def test_randomise_in_the_panel_fills_the_chosen_matrix():
    at = pick(steps_app(), "w_v")
    at.session_state["panel_w_v_randomise"] = True  # open the popover
    at.run()
    at.selectbox(key="panel_w_v_init").set_value("gaussian").run()
    at.number_input(key="panel_w_v_seed").set_value(7).run()
    at.button(key="panel_w_v_fill").click().run()
    w_v = at.session_state["config"].w_v
    assert w_v.shape == SEED_W_V.shape and not np.array_equal(w_v, SEED_W_V)
    np.testing.assert_allclose(grid(charts(at)["V"]), SEED_X @ w_v, rtol=0, atol=1e-12)


def test_inputs_and_weights_shows_what_its_grids_give():
    at = new_app("pages/inputs.py")
    found = charts(at)
    want = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)
    np.testing.assert_allclose(grid(found["Weights"]), want["weights"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grid(found["Output"]), want["output"], rtol=0, atol=1e-12)  # W_O = identity
    edit_cells(at, "w_q", {0: {1: "2"}})
    w_q = SEED_W_Q.copy()
    w_q[0, 1] = 2
    want = reference(SEED_X, w_q, SEED_W_K, SEED_W_V)
    np.testing.assert_allclose(grid(charts(at)["Weights"]), want["weights"], rtol=0, atol=1e-12)
    assert PANEL not in [b.key for b in at.button_group]  # its grids are on the page itself


def test_inputs_and_weights_opens_on_its_grids():
    """The first thing under the preset is X's grid: before dimensions, tokens and the query source."""
    at = new_app("pages/inputs.py")
    headers = [h.value for h in at.header]
    assert headers.index("X and the weights") < headers.index("Dimensions") < headers.index("Tokens")


def test_inputs_and_weights_names_a_refused_cell_and_shows_the_last_valid_result():
    at = new_app("pages/inputs.py")
    edit_cells(at, "x", {0: {0: "1,5"}})
    assert not at.exception
    assert any("X, row 0 (input1), column 0 is '1,5', not a number." in plain(e.value) for e in at.error)
    want = reference(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)
    np.testing.assert_allclose(grid(charts(at)["Weights"]), want["weights"], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("lang", "title"), [("zh", "编辑数值"), ("ko", "숫자 편집")])
def test_the_panel_speaks_the_learners_language(lang, title):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page("pages/steps.py").run()
    assert not at.exception
    assert f":material/edit: **{title}**" in [m.value for m in at.sidebar.markdown]
    assert not [m for m in at.sidebar.markdown if "Edit the numbers" in m.value]


def test_the_panels_grid_is_as_wide_as_its_texts_column_by_column():
    import json
    from dataclasses import replace

    from attn_ui.widgets.grid_editor import COMPACT_LABELS_PX, column_px

    at = steps_app()
    x = at.session_state["config"].x.copy()
    x[0, 1], x[1, 2] = -0.000012, 12.5  # columns of texts of other widths
    at.session_state["config"] = replace(at.session_state["config"], x=x)
    at.run()
    (shown,) = [d for d in at.sidebar.dataframe if d.key]  # the grid (not the Every digit table beside it)
    widths = {c: spec["width"] for c, spec in json.loads(shown.proto.columns).items()}
    assert widths == {"_index": min(column_px(list(shown.value.index)), COMPACT_LABELS_PX),
                      **{c: column_px(list(shown.value[c])) for c in shown.value.columns}}
    assert len(set(widths.values())) > 2


def test_a_long_token_label_leaves_the_panels_numbers_in_view():
    import json
    from dataclasses import replace

    from attn_ui.widgets.grid_editor import COMPACT_LABELS_PX, column_px

    at = steps_app()
    long = "the quick brown fox jumps over the lazy"  # 39 characters: a label the app takes
    at.session_state["config"] = replace(at.session_state["config"], tokens=(long, "b", "c"))
    at.run()
    (shown,) = [d for d in at.sidebar.dataframe if d.key]
    widths = {c: spec["width"] for c, spec in json.loads(shown.proto.columns).items()}
    assert column_px(list(shown.value.index)) > COMPACT_LABELS_PX == widths["_index"]  # cut, not 330 px of 240
    assert widths["_index"] + sum(w for c, w in widths.items() if c != "_index") <= 240  # the numbers in view


def test_whether_the_browser_is_a_phones_is_read_once_a_session():
    at = steps_app()
    assert at.session_state["on_phone"] is False  # AppTest sends no user agent: not a phone
    assert [d for d in at.sidebar.dataframe if d.key]  # the panel's grid in the sidebar
    at.session_state["on_phone"] = True  # as a phone's first run would have kept it
    at.run()
    assert not [d for d in at.sidebar.dataframe if d.key] and [d for d in at.main.dataframe if d.key]  # in the page


@pytest.mark.parametrize("kwargs", [{"label": "3", "alignment": "right"}, {"label": "12", "alignment": "right",
                                                                           "width": 44}, {"width": 88},
                                    {"width": 60, "disabled": True}, {"disabled": True}])
def test_a_grids_text_column_is_what_streamlit_makes_of_textcolumn(kwargs):
    """grid_editor.text_column: the dict st.column_config.TextColumn gives, its None fields left out as Streamlit leaves
    them out before it sends the column (the grids send the same column configuration, byte for byte)."""
    import json

    import streamlit as st
    from streamlit.elements.lib.column_config_utils import process_config_mapping
    from streamlit.elements.lib.dicttools import remove_none_values

    from attn_ui.widgets.grid_editor import text_column

    ours, theirs = text_column(**kwargs), st.column_config.TextColumn(**kwargs)
    assert ours == remove_none_values(theirs)
    assert json.dumps(remove_none_values(process_config_mapping({"c": ours}))) == json.dumps(
        remove_none_values(process_config_mapping({"c": theirs})))


def page_heading(at) -> str:
    return at.title[0].value


def test_an_edit_sent_back_from_the_page_just_left_goes_on_to_the_page_clicked(monkeypatch):
    """A cell still open in the panel when the learner taps another page: the browser runs the page clicked, then
    (0.05–0.2 s later) commits the cell in a run of the page left, with the address it still had. The edit counts, the
    learner lands where they clicked, and every grid is drawn afresh (the browser's grid lost the edit it had sent:
    its next edit would put the old value back). The page clicked here draws no grid, so the edit comes from a grid
    the last run did not draw, as in the browser (tests/e2e/test_edit_panel.py: a page with the panel)."""
    from attn_ui.shell import frame

    monkeypatch.setattr(frame, "LATE_EDIT_S", 60.0)  # AppTest's runs take longer than the browser's crossing
    at = steps_app()
    version = at.session_state["editor_version"]
    at.switch_page("pages/overview.py").run()  # the click: the page clicked runs first, without the edit
    assert page_heading(at) == "Self-Attention Explorer"  # Overview's heading
    at.switch_page("pages/steps.py")  # the late commit, under the address of the page left
    edit_cells(at, "x", {1: {1: "5"}})
    assert not at.exception, at.exception
    assert page_heading(at) == "Self-Attention Explorer"  # Overview: the click is followed, not swallowed
    assert at.session_state["config"].x[1, 1] == 5.0  # the edit counts
    assert at.session_state["editor_version"] > version  # the grids drawn from the configuration
    assert at.button(key="frame_undo").label == "Undo: X, row 1 (input2), column 1 set to 5"


def test_a_page_left_and_come_back_to_later_keeps_its_edit_there(monkeypatch):
    """The same crossing, past LATE_EDIT_S: a learner who comes back to a page and edits it stays on it."""
    from attn_ui.shell import frame

    monkeypatch.setattr(frame, "LATE_EDIT_S", 0.0)
    at = steps_app()
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/steps.py")
    edit_cells(at, "x", {1: {1: "5"}})
    assert page_heading(at) == "Step by step"
    assert at.session_state["config"].x[1, 1] == 5.0


def test_an_edit_sent_with_a_click_back_to_the_page_before_stays_there(monkeypatch):
    """An edit typed on a page and sent with a click on the page before it: the grid was drawn by the last run, so the
    edit is the learner's, not a late commit, however soon it comes; the learner goes where they clicked."""
    from attn_ui.shell import frame

    monkeypatch.setattr(frame, "LATE_EDIT_S", 60.0)
    at = steps_app()
    at.switch_page("pages/inputs.py").run()
    at.session_state[f"w_k_editor_{at.session_state['editor_version']}"] = {
        "edited_rows": {0: {"0": "7"}}, "added_rows": [], "deleted_rows": []}
    at.switch_page("pages/steps.py").run()
    assert page_heading(at) == "Step by step"
    assert at.session_state["config"].w_k[0, 0] == 7.0


def test_a_grid_drawn_anew_by_the_browser_does_not_put_an_old_value_back():
    """The browser can draw a grid anew from its first values after it sent an edit (a page switch that crossed the
    edit, on a loaded machine: a fresh reviewer, 2 of 12): its next edit then holds only the new cell. That edit goes
    onto the matrix held: the first value stays, and the grids are drawn again from the configuration."""
    at = steps_app()
    key = editor_key(at, "x")
    edit_cells(at, "x", {1: {1: "7"}})
    assert at.session_state["config"].x[1, 1] == 7.0
    at.session_state[key] = {"edited_rows": {0: {"0": "3"}}, "added_rows": [], "deleted_rows": []}  # 7 forgotten
    at.run()
    x = SEED_X.copy()
    x[1, 1], x[0, 0] = 7, 3
    np.testing.assert_array_equal(at.session_state["config"].x, x)
    assert editor_key(at, "x") != key  # drawn again: the grid shows 7
    np.testing.assert_allclose(grid(charts(at)["Q"]), x @ SEED_W_Q, rtol=0, atol=1e-12)


def test_a_cell_typed_back_to_its_first_text_takes_its_first_value_again():
    """Streamlit drops the edit of a cell typed back to its first text: the grid's other edits stay (or none is
    left), which is not a grid drawn anew."""
    at = steps_app()
    key = editor_key(at, "x")
    edit_cells(at, "x", {1: {1: "7"}, 0: {0: "3"}})
    at.session_state[key] = {"edited_rows": {0: {"0": "3"}}, "added_rows": [], "deleted_rows": []}  # 7 typed back to 2
    at.run()
    x = SEED_X.copy()
    x[0, 0] = 3
    np.testing.assert_array_equal(at.session_state["config"].x, x)
    at.session_state[key] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}  # and 3 back to 1
    at.run()
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)
    assert editor_key(at, "x") == key  # the grid kept: its cursor and selection stay


@pytest.mark.parametrize("phone", [False, True])
def test_a_refused_value_is_said_once_on_a_phone(phone):
    """On a phone the panel stands in the page: its grid's message and, right under it, the banner saying the same
    took the first screen (a reviewer: Q's heatmap went below it). The banner is for a grid elsewhere: the sidebar's
    (desktop), or a matrix the phone's panel does not show now."""
    at = steps_app(before=lambda at: at.session_state.__setitem__("on_phone", phone))
    edit_cells(at, "x", {0: {0: "abc"}})
    banner = [w for w in at.warning if "Showing the last valid values" in w.value]
    assert [e for e in at.error if "not a number" in e.value]  # the grid's own message
    assert bool(banner) is not phone, [w.value for w in at.warning]
    if phone:  # the panel on W_Q: X's refused value is said where the page is
        at.segmented_control(key=state.EDIT_MATRIX).set_value("w_q").run()
        assert [w for w in at.warning if "Showing the last valid values" in w.value]
