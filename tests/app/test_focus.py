"""Hover to focus, click to pin (issue 39), in the specs: the selections every heatmap and the model view carry, the
layers that read them, and the keyboard's focus given to them as the pin's initial value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attn_ui.app import i18n
from attn_ui.views import model_views
from attn_ui.widgets import charts, heatmap

from .apptools import new_app

LABELS = ["0: a", "1: b", "2: c"]


def _params(spec: dict) -> dict[str, dict]:
    return {p["name"]: p for p in spec.get("params", [])}


def _layers(spec: dict) -> dict[str, dict]:
    return {layer["name"]: layer for layer in spec.get("layer", []) if layer.get("name", "").startswith("focus_")}


def _filters(layer: dict) -> str:
    return " ".join(t["filter"] for t in layer.get("transform", []) if "filter" in t)


@pytest.mark.parametrize("size", [3, 40, 100])  # numbers on the cells; colour only, on a canvas; blocks
def test_a_heatmap_lights_the_hovered_or_pinned_cell_and_names_it(size):
    labels = [f"{i}: t{i}" for i in range(size)]
    chart = heatmap.heatmap(np.arange(size * size, dtype=float).reshape(size, size), labels, labels,
                            x_title="key", y_title="query")
    spec, cells = chart.spec(), chart.data[0]
    params = _params(spec)
    hover, pin = params[heatmap.FOCUS]["select"], params[heatmap.PIN]["select"]
    assert (hover["on"], hover["clear"], hover["fields"]) == ("pointerover", "pointerout", ["row", "col"])
    assert (pin["on"], pin["clear"], pin["fields"]) == ("click", "dblclick", ["row", "col"])
    assert 'vlSelectionTest("pin_store", datum)' in pin["toggle"]  # a click on the pinned cell releases it
    for lit in (heatmap.LIT_ROW, heatmap.LIT_COL):  # the pinned cell's, else the hovered one's
        assert params[lit]["expr"].startswith("isArray(pin.row) ? pin.")
    layers = _layers(spec)
    assert f"datum.row === {heatmap.LIT_ROW}" in _filters(layers["focus_row"])
    assert f"datum.col === {heatmap.LIT_COL}" in _filters(layers["focus_col"])
    # the bands read the labels alone (n and m rows of data), not the n × m cells
    assert layers["focus_row"]["data"]["values"] == [{"row": r} for r in dict.fromkeys(cells["row"].to_pylist())]
    assert layers["focus_col"]["data"]["values"] == [{"col": c} for c in dict.fromkeys(cells["col"].to_pylist())]
    assert _filters(layers["focus_cell"]) == f"datum.row === {heatmap.LIT_ROW} && datum.col === {heatmap.LIT_COL}"
    said = next(t["calculate"] for t in layers["focus_cell"]["transform"] if t.get("as") == "said")
    assert '("query")' in said and "datum.row" in said and '("key")' in said and "datum.col" in said
    assert all(layer["mark"].get("aria") is False for layer in layers.values())  # screen readers: the description


def test_a_single_column_has_no_focus():
    spec = heatmap.heatmap(np.ones((3, 1)), LABELS, ["Σ_j"]).spec()
    assert heatmap.PIN not in _params(spec)


def test_the_keyboard_focus_is_the_pins_initial_value_where_the_chart_has_the_token():
    square = heatmap.heatmap(np.eye(3), LABELS, LABELS)
    tall = heatmap.heatmap(np.ones((3, 2)), LABELS, ["0", "1"])  # tokens × dimensions: the row only
    assert square.layout.pin_value("1: b") == [{"row": "1: b", "col": "1: b"}]
    assert tall.layout.pin_value("1: b") == [{"row": "1: b", "col": None}]
    assert tall.layout.pin_value("9: z") is None
    spec = charts.pinned(square.spec(), square.layout.pin_value("2: c"))
    assert _params(spec)[charts.PIN]["value"] == [{"row": "2: c", "col": "2: c"}]


def test_the_model_view_lights_a_query_row_in_every_head_and_keeps_picking_heads():
    chart = model_views.model_view(np.full((2, 3, 20, 20), 0.05), [f"t{i}" for i in range(20)])
    spec = chart.spec()
    params = _params(spec)
    assert params[model_views.PICK]["select"]["fields"] == ["layer", "head"]
    assert params[charts.PIN]["select"]["fields"] == ["q"]
    assert _filters(_layers(spec)["focus_row"]) == f"datum.q === {model_views.LIT_Q}"
    assert chart.layout.pin_value("13: t13") == [{"q": 6}]  # 20 tokens in cells of 2


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_the_focus_selectbox_pins_its_token_on_step_by_step(lang):
    at = new_app()
    at.query_params["lang"] = lang
    at.switch_page("pages/steps.py").run()
    at.sidebar.selectbox(key="steps_focus").set_value("1: input2").run()
    assert not at.exception
    pins = [_params(json.loads(el.proto.spec)).get(charts.PIN, {}).get("value") for el in at.get("vega_lite_chart")]
    assert [{"row": "1: input2", "col": "1: input2"}] in pins  # the scores and the weights
    assert [{"row": "1: input2", "col": None}] in pins  # Q, K, V, the output: its row
    at.sidebar.selectbox(key="steps_focus").set_value("").run()  # none: no pin
    assert not any("value" in _params(json.loads(el.proto.spec)).get(charts.PIN, {})
                   for el in at.get("vega_lite_chart"))


def test_the_focus_selectbox_pins_its_token_on_a_model_that_writes(monkeypatch, tmp_path):
    """The keyboard's path on A model that writes: its row in every head of the model view and in the large head."""
    from attn_ui.app import registry

    from .. import tiny_gpt2

    monkeypatch.setenv("ATTN_CAUSAL_MODEL", str(tiny_gpt2.build(tmp_path / "gpt2")))
    at = new_app(registry.GENERATE.file)
    at.text_input(key="gen_prompt").set_value(tiny_gpt2.PROMPTS[0]).run()
    box = at.sidebar.selectbox(key="gen_focus")
    token = box.options[2]  # the second token's label (the first option: none)
    box.set_value(token).run()
    assert not at.exception
    pins = [_params(json.loads(el.proto.spec)).get(charts.PIN, {}).get("value") for el in at.get("vega_lite_chart")]
    assert [{"q": 1}] in pins  # the model view: the second query's row of cells, in every head
    assert [{"row": token, "col": token}] in pins  # the large head's heatmap
