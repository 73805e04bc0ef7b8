"""A matrix too large for a grid (a real model's W_Q: 385 × 384) is edited one cell at a time: row, column, the
value exactly, a new value set; a value that is not a number is refused by matrix and cell, and nothing changes."""

from __future__ import annotations

import numpy as np

from attn_ui.app import registry
from attn_ui.widgets import grid_editor

from .apptools import app_on, plain, too_large_for_a_grid


def test_a_cell_of_a_matrix_too_large_for_a_grid_is_set_exactly_and_only_it():
    cfg = too_large_for_a_grid()
    assert cfg.w_q.size > grid_editor.MAX_EDITABLE_CELLS
    at = app_on(cfg, registry.INPUTS.file)
    at.number_input(key="w_q_cell_row").set_value(7).run()
    at.number_input(key="w_q_cell_col").set_value(42).run()
    box = next(t for t in at.text_input if t.key.startswith("w_q_cell_value_7_42_"))
    assert box.value == repr(float(cfg.w_q[7, 42]))  # its value, every digit
    box.set_value("1e-3").run()
    next(b for b in at.button if b.key == f"{box.key}_set").click().run()
    assert not at.exception
    w_q = at.session_state["config"].w_q
    expected = cfg.w_q.copy()
    expected[7, 42] = 0.001
    np.testing.assert_array_equal(w_q, expected)
    assert next(t for t in at.text_input if t.key.startswith("w_q_cell_value_7_42_")).value == "0.001"
    assert any("W_Q, row 7, column 42 set to 0.001" in b.label for b in at.button if b.key == "frame_undo")


def test_a_value_that_is_not_a_number_is_refused_by_matrix_and_cell():
    cfg = too_large_for_a_grid()
    at = app_on(cfg, registry.INPUTS.file)
    at.number_input(key="w_q_cell_row").set_value(2).run()
    box = next(t for t in at.text_input if t.key.startswith("w_q_cell_value_2_0_"))
    box.set_value("1,5").run()
    next(b for b in at.button if b.key == f"{box.key}_set").click().run()
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].w_q, cfg.w_q)
    said = [plain(e.value) for e in at.error]
    assert "W_Q, row 2, column 0: '1,5' is not a number; the matrix keeps its values." in said
