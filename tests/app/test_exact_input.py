"""What a learner types is exactly what the app holds and shows: grid text, refused edits, sharing them, undo,
the preset box (issue 21). The browser's typing is in tests/e2e/test_exact_input.py."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import numpy as np
import pyarrow.ipc
import pytest

from attn_core import PRESETS, configs_equal, load_preset, make_config
from attn_core.share import decode_link

from ..seeds import SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X
from .apptools import edit_cells, new_app, open_share, plain

SEED_X = np.array(SEED000_X, dtype=float)


def grid(at, first_row: str = "0: input1"):
    """The data of the grid whose first row is labelled ``first_row`` (X's, by default), as shown."""
    (frame,) = [d.value for d in at.dataframe if d.key and len(d.value) and d.value.index[0] == first_row]
    return frame


def link_x(at) -> np.ndarray:
    """X as a link made now would carry it (the sidebar's Share this)."""
    open_share(at).button(key="share_sidebar_link").click().run()
    cfg, _ = decode_link(parse_qs(urlparse(at.sidebar.code[0].value).query)["c"][0])  # beside it: &lang=
    return cfg.x


@pytest.mark.parametrize(("typed", "stored"), [
    ("1e-3", 0.001), ("-2.5E+2", -250.0), ("2.5E+2", 250.0), (".5", 0.5), ("1e20", 1e20), ("1_000", 1000.0),
    ("\u22123", -3.0), ("  7 ", 7.0), ("123456789012345678", 123456789012345678.0), ("1e-300", 1e-300),
])
def test_a_number_as_python_reads_it_lands_exactly_in_its_cell(typed, stored):
    at = edit_cells(new_app("pages/inputs.py"), "x", {1: {2: typed}})
    assert not at.exception and not at.error
    x = SEED_X.copy()
    x[1, 2] = stored
    np.testing.assert_array_equal(at.session_state["config"].x, x)  # that cell, bit for bit, and no other
    assert at.session_state["config"].x[1, 2] == float(typed.replace("\u2212", "-"))


@pytest.mark.parametrize("typed", ["abc", "1,5", "1e", "--1", "0x10", "½"])
def test_anything_else_is_refused_naming_the_matrix_the_cell_and_what_was_typed(typed):
    at = edit_cells(new_app("pages/inputs.py"), "x", {1: {2: typed}})
    assert not at.exception
    assert any(f"X, row 1 (input2), column 2 is {typed!r}, not a number" in plain(e.value) for e in at.error)
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)  # the last valid values
    assert at.session_state["drafts"]["x"][1, 2] == typed  # the cell keeps what was typed (the browser's grid
    at.switch_page("pages/steps.py").run()  # holds the edit; e2e checks it there) ...
    at.switch_page("pages/inputs.py").run()
    assert grid(at).iloc[1, 2] == typed  # ... and a grid drawn anew shows it too, until it is fixed
    edit_cells(at, "x", {1: {2: "4"}})
    assert not at.error and at.session_state["config"].x[1, 2] == 4.0


def test_non_finite_numbers_are_refused_by_name():
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {0: "nan"}})
    assert any("X, row 0 (input1), column 0" in plain(e.value) and "NaN" in plain(e.value) for e in at.error)
    edit_cells(at, "x", {0: {0: "1e999"}})  # float() reads it as inf
    assert any("X, row 0 (input1), column 0" in plain(e.value) and "+inf" in plain(e.value) for e in at.error)
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)
    at.switch_page("pages/steps.py").run()
    at.switch_page("pages/inputs.py").run()
    assert grid(at).iloc[0, 0] == "1e999"  # the grid drawn anew shows the text typed, not "+∞"
    assert any("X, row 0 (input1), column 0" in plain(e.value) and "+inf" in plain(e.value) for e in at.error)


def test_an_empty_cell_is_refused_as_empty():
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {0: "  "}})
    assert any("X, row 0 (input1), column 0 is empty" in plain(e.value) for e in at.error)


def test_a_cell_emptied_with_the_delete_key_is_refused_as_empty_and_shows_empty():
    """The Delete key sends None for the cell: named as empty; the grid draws a missing value as empty (its
    placeholder, which the browser's grid uses for the None it keeps: tests/e2e/test_exact_input.py), and a grid
    drawn anew from the draft shows "" there."""
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {2: None}})
    said = "X, row 0 (input1), column 2 is empty, not a number."
    assert [plain(e.value) for e in at.error] == [f"{said} Until this is fixed, the results on this page and the "
                                                   "other pages use the last valid values."]
    assert at.session_state["drafts"]["x"][0, 2] is None
    assert all(d.proto.placeholder == "" for d in at.dataframe if d.key and d.key.startswith("x_editor_"))
    at.switch_page("pages/steps.py").run()
    assert any(said in plain(w.value) for w in at.warning)  # the banner on another page
    at.switch_page("pages/inputs.py").run()
    assert grid(at).iloc[0, 2] == "" and (d := [d for d in at.dataframe if d.key == "x_editor_0"]) \
        and d[0].proto.placeholder == ""


def test_every_bad_cell_of_one_edit_is_named_and_every_text_kept():
    """A block pasted (or several cells typed before the rerun): each bad cell named with what is wrong with it, in
    reading order, under the grid and in the banner of another page; every text typed stays in the draft, the good
    cell's number too."""
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {1: "abc", 2: None}, 1: {0: "1e999", 1: "7"}})
    said = ("X, row 0 (input1), column 1 is 'abc', not a number. X, row 0 (input1), column 2 is empty, not a number. "
            "X, row 1 (input2), column 0 is +inf; every cell must be a finite number.")
    assert [plain(e.value) for e in at.error] == [f"{said} Until this is fixed, the results on this page and the "
                                                   "other pages use the last valid values."]
    np.testing.assert_array_equal(at.session_state["config"].x, SEED_X)
    draft = at.session_state["drafts"]["x"]
    assert (draft[0, 1], draft[0, 2], draft[1, 0].text, draft[1, 1]) == ("abc", None, "1e999", 7.0)
    at.switch_page("pages/steps.py").run()
    assert any(f"Showing the last valid values: {said} Fix them in the sidebar" in plain(w.value) for w in at.warning)
    at.switch_page("pages/inputs.py").run()
    assert list(grid(at).iloc[0]) == ["1", "abc", "", "0"] and list(grid(at).iloc[1]) == ["1e999", "7", "0", "2"]
    edit_cells(at, "x", {0: {1: "5"}})  # one fixed: the other two are still named
    assert [plain(e.value) for e in at.error][0].startswith("X, row 0 (input1), column 2 is empty, not a number. X, "
                                                            "row 1 (input2), column 0 is +inf")


def test_a_long_refused_text_is_quoted_in_part_and_kept_whole():
    """Five cells of pasted prose: each named with its first 40 characters and "…", so the message stays short; the
    draft (and the grid) keep every character."""
    prose = "attention is all you need " * 400  # 10,400 characters
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {j: prose for j in range(4)}, 1: {0: prose}})
    (message,) = [plain(e.value) for e in at.error]
    assert message.count(f"is '{prose[:40]}…', not a number.") == 5 and len(message) < 800, len(message)
    assert at.session_state["drafts"]["x"][1, 0] == prose


@pytest.mark.parametrize(("n_bad", "named", "counted"), [(5, 5, None), (6, 4, 2), (12, 4, 8)])
def test_a_message_names_up_to_four_bad_cells_or_five_and_counts_the_rest(n_bad, named, counted):
    """Named one by one up to NAMED_CELLS (4), or all five when naming the fifth takes no more room than counting
    it; beyond, the rest counted ("X has 8 more cells to fix.")."""
    cells = [(i, j) for i in range(3) for j in range(4)][:n_bad]  # X is 3 × 4: reading order
    edits: dict[int, dict[int, object]] = {}
    for i, j in cells:
        edits.setdefault(i, {})[j] = f"t{i}{j}"
    at = edit_cells(new_app("pages/inputs.py"), "x", edits)
    (message,) = [plain(e.value) for e in at.error]
    tokens = ("input1", "input2", "input3")
    sentences = [f"X, row {i} ({tokens[i]}), column {j} is 't{i}{j}', not a number." for i, j in cells[:named]]
    tail = f" X has {counted} more cells to fix." if counted else ""
    assert message == " ".join(sentences) + tail + (" Until this is fixed, the results on this page and the other "
                                                          "pages use the last valid values.")


def test_the_grid_writes_a_matrix_in_one_notation_and_offers_every_digit():
    x = SEED_X.copy()
    x[0, :] = [1 / 3, 0.00001, 4.9999999999999994e29, -0.0]
    at = new_app()
    at.session_state["config"] = make_config(["a", "b", "c"], x, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    at.switch_page("pages/inputs.py").run()
    assert list(grid(at, "0: a").iloc[0]) == ["3.3333e−1", "1.0000e−5", "5.0000e29", "0"]  # 5e29: scientific
    assert list(grid(at, "0: a").iloc[1]) == ["0", "2.0000e0", "0", "2.0000e0"]
    x[0, :] = [1 / 3, 0.00001, 0.5, -0.0]
    at.session_state["config"] = make_config(["a", "b", "c"], x, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    at.session_state["editor_version"] += 1  # as a change of configuration does: the grids drawn afresh
    at.run()
    assert list(grid(at, "0: a").iloc[0]) == ["0.3333", "<0.0001", "0.5000", "0.0000"]  # fixed, no "…"
    assert list(grid(at, "0: a").iloc[1]) == ["0.0000", "2.0000", "0.0000", "2.0000"]
    assert not [d for d in at.dataframe if d.key is None]  # the popover is closed: its table is made when it opens
    at.session_state["x_every_digit"] = True
    at.run()
    every = [d for d in at.dataframe if d.key is None and "0.3333333333333333" in d.value.to_numpy().ravel()]
    assert len(every) == 1 and list(every[0].value.iloc[0]) == ["0.3333333333333333", "1e-05", "0.5", "0"]


def test_a_seed_preset_is_written_in_whole_numbers():
    at = new_app("pages/inputs.py")
    assert list(grid(at, "0: input1").iloc[0]) == ["1", "0", "1", "0"]  # the seed's X, not "1.0000"
    assert "x_every_digit" not in at.session_state  # no Every digit popover: the grid shows every digit already
    at.switch_page("pages/steps.py").run()
    q = [texts for texts in chart_frames(at) if texts.get("title") == "Q"]
    assert q and list(q[0]["text"])[:3] == ["1", "0", "2"]  # Q = X W_Q of the seed: [[1, 0, 2], ...]


def test_a_rounded_cell_typed_back_unchanged_keeps_its_exact_value_and_new_digits_are_read_exactly():
    x = SEED_X.copy()
    x[0, 0], x[0, 3] = 1 / 3, -0.0
    at = new_app()
    at.session_state["config"] = make_config(["a", "b", "c"], x, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    at.switch_page("pages/inputs.py").run()
    edit_cells(at, "x", {0: {0: "0.3333", 3: "0.0000"}, 1: {0: "5"}})  # what the grid showed, as it was
    got = at.session_state["config"].x
    assert got[0, 0] == 1 / 3 and np.signbit(got[0, 3]) and got[1, 0] == 5.0
    edit_cells(at, "x", {0: {0: "0.33330"}})  # new digits the learner typed
    assert at.session_state["config"].x[0, 0] == 0.3333


def chart_frames(at) -> list[dict]:
    """Every heatmap on the page: {"title": its title or name, "text": the numbers drawn on its cells}."""
    out = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        for ds in chart.proto.datasets:
            df = pyarrow.ipc.open_stream(ds.data.data).read_all().to_pandas()
            if "text" in df.columns:
                out.append({"title": spec.get("title") or spec.get("description", "").split(":")[0], "text": df.text})
    return out


def chart_texts(at) -> dict[float, set[str]]:
    """Every number drawn on a heatmap's cells on the page: {value: the texts it is drawn as}."""
    out: dict[float, set[str]] = {}
    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            df = pyarrow.ipc.open_stream(ds.data.data).read_all().to_pandas()
            if {"value", "text"} <= set(df.columns):
                for value, text in zip(df.value, df.text, strict=True):
                    out.setdefault(float(value), set()).add(text)
    return out


def test_the_charts_show_small_and_large_numbers_with_significant_digits():
    x = np.zeros((3, 4))
    x[:, 0] = [0.00001, -0.00002, 3e12]
    at = new_app()
    at.session_state["config"] = make_config(["a", "b", "c"], x, np.eye(4)[:, :3], SEED000_W_K, SEED000_W_V)
    at.switch_page("pages/steps.py").run()
    assert not at.exception
    texts = chart_texts(at)  # Q = X W_Q keeps X's first column: one notation for the chart, from its range
    assert texts[0.00001] == {"1.0000e−5"} and texts[-0.00002] == {"\u22122.0000e−5"} and texts[3e12] == {"3.0000e12"}
    assert texts[0.0] == {"0"}


def test_a_refused_edit_is_never_exported_silently():
    at = edit_cells(new_app("pages/inputs.py"), "w_v", {1: {2: "abc"}})
    at.switch_page("pages/share.py").run()
    warnings = [plain(w.value) for w in at.warning]
    assert any(w.startswith("Not shared: W_V, row 1, column 2 is 'abc'") and "last valid values" in w for w in warnings)
    # the sidebar's Share this says it too, once opened
    assert not at.sidebar.warning
    assert any(plain(w.value).startswith("Not shared: W_V") for w in open_share(at).sidebar.warning)
    np.testing.assert_array_equal(link_x(at), SEED_X)
    edit_cells(at.switch_page("pages/inputs.py").run(), "w_v", {1: {2: "2"}})
    at.switch_page("pages/share.py").run()
    assert not any("Not shared" in plain(w.value) for w in at.warning)


def undo(at):
    """Press the sidebar's undo button; returns its label before the press."""
    button = at.button(key="frame_undo")
    label = button.label
    button.click().run()
    assert not at.exception
    return label


def test_undo_takes_back_each_change_in_turn():
    at = new_app("pages/inputs.py")
    assert at.button(key="frame_undo").disabled
    states = [at.session_state["config"]]
    edit_cells(at, "x", {0: {0: "2"}})
    states.append(at.session_state["config"])
    at.number_input(key="inputs_d_model").set_value(3).run()  # drops X's and the weights' last row/column
    states.append(at.session_state["config"])
    at.number_input(key="inputs_d_model").set_value(4).run()  # back up: the tutorial's values are gone
    assert at.session_state["config"].w_v[3, 0] != SEED000_W_V[3][0]
    states.append(at.session_state["config"])
    at.selectbox(key="inputs_preset").set_value("seed002_causal").run()
    assert at.session_state["preset"] == "seed002_causal"

    labels = [undo(at) for _ in range(4)]
    assert labels == [f"Undo: preset “{PRESETS['seed002_causal'].title}” loaded", "Undo: dimensions changed",
                      "Undo: dimensions changed", "Undo: X, row 0 (input1), column 0 set to 2"]
    assert configs_equal(at.session_state["config"], states[0])
    assert at.session_state["preset"] == "seed000"
    assert at.button(key="frame_undo").disabled


def test_an_edit_taken_back_in_the_grid_restores_the_value():
    """The browser drops an edit that puts a cell's first text back: the grid then reports no edits at all."""
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {0: "2"}})
    at.session_state[f"x_editor_{at.session_state['editor_version']}"] = {
        "edited_rows": {}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert at.session_state["config"].x[0, 0] == 1.0


def test_undo_steps_back_one_at_a_time_and_grids_show_the_values():
    at = new_app("pages/inputs.py")
    for v in ("2", "3", "4"):
        edit_cells(at, "x", {0: {0: v}})
    for expected in (3.0, 2.0, 1.0):
        undo(at)
        assert at.session_state["config"].x[0, 0] == expected
        assert grid(at).iloc[0, 0] == f"{expected:.0f}"  # whole numbers, as the seed's


def test_undo_drops_a_refused_edit_with_the_change_it_takes_back():
    at = edit_cells(new_app("pages/inputs.py"), "x", {0: {0: "2"}})
    edit_cells(at, "x", {0: {1: "abc"}})
    assert at.error
    undo(at)
    assert not at.error and at.session_state["config"].x[0, 0] == 1.0 and grid(at).iloc[0, 1] == "0"


def test_the_preset_box_says_when_the_configuration_no_longer_equals_its_preset():
    at = new_app("pages/inputs.py")
    assert not any("Edited" in plain(c.value) for c in at.caption) and at.button(key="inputs_reset").disabled
    edit_cells(at, "x", {0: {0: "2"}})
    assert any("your numbers differ from this preset" in plain(c.value) for c in at.caption)
    assert at.selectbox(key="inputs_preset").value == "seed000" and not at.button(key="inputs_reset").disabled
    edit_cells(at, "x", {0: {0: "2", 1: "3"}})  # a second edit on the same page (the box keeps its choice)
    assert not at.exception and at.session_state["config"].x[0, 1] == 3.0
    at.button(key="inputs_reset").click().run()
    assert configs_equal(at.session_state["config"], load_preset("seed000"))
    assert not any("Edited" in plain(c.value) for c in at.caption)
    undo(at)  # the reset itself can be taken back
    assert at.session_state["config"].x[0, 0] == 2.0
