"""Hover to focus, click to pin (issue 39), in the specs: the selections every heatmap and the model view carry, the
layers that read them, and the keyboard's focus they hold (charts.HELD) while the control is set; and the words
above the cells, read from the charts drawn by vl-convert (Vega's own evaluation of their expressions)."""

from __future__ import annotations

import json
import re
from html import unescape

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
    for lit in (heatmap.LIT_ROW, heatmap.LIT_COL):  # the control's token's, else the pinned cell's, else the hovered
        assert params[lit]["expr"].startswith("isArray(held) ? held[0].")
        assert "isArray(pin.row) ? pin." in params[lit]["expr"]
    assert params[heatmap.HELD]["value"] is None  # nothing held until the control is set
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


def test_the_keyboard_focus_is_held_where_the_chart_has_the_token_and_the_pin_stays_the_clicks():
    square = heatmap.heatmap(np.eye(3), LABELS, LABELS)
    tall = heatmap.heatmap(np.ones((3, 2)), LABELS, ["0", "1"])  # tokens × dimensions: the row only
    assert square.layout.pin_value("1: b") == [{"row": "1: b", "col": "1: b"}]
    assert tall.layout.pin_value("1: b") == [{"row": "1: b", "col": None}]
    assert tall.layout.pin_value("9: z") is None
    params = _params(charts.pinned(square.spec(), square.layout.pin_value("2: c")))
    assert params[charts.HELD]["value"] == [{"row": "2: c", "col": "2: c"}]
    assert "value" not in params[charts.PIN]  # a click pins (and releases) in the browser, under the held focus


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
    pins = [_params(json.loads(el.proto.spec)).get(charts.HELD, {}).get("value") for el in at.get("vega_lite_chart")]
    assert [{"row": "1: input2", "col": "1: input2"}] in pins  # the scores and the weights
    assert [{"row": "1: input2", "col": None}] in pins  # Q, K, V, the output: its row
    at.sidebar.selectbox(key="steps_focus").set_value("").run()  # none: nothing held
    assert not any(_params(json.loads(el.proto.spec)).get(charts.HELD, {}).get("value")
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
    pins = [_params(json.loads(el.proto.spec)).get(charts.HELD, {}).get("value") for el in at.get("vega_lite_chart")]
    assert [{"q": 1}] in pins  # the model view: the second query's row of cells, in every head
    assert [{"row": token, "col": token}] in pins  # the large head's heatmap


# --- the words above the cells, as Vega draws them --------------------------------------------------------------------

def drawn_lines(spec: dict) -> list[tuple[float, str]]:
    """The lines Vega draws for a spec's focus layers (its "focus_cell" and "focus_hint" marks), by vl-convert (the
    spec's expressions evaluated as in the browser, nothing hovered): each line's baseline (px) and text, in order."""
    vl_convert = pytest.importorskip("vl_convert", reason="pip install vl-convert-python (requirements.txt)")
    spec = {**spec, "datasets": {k: v.to_pylist() for k, v in spec["datasets"].items()}}
    return lines_in(vl_convert.vegalite_to_svg(spec))


def lines_in(svg: str) -> list[tuple[float, str]]:
    """The lines of the focus layers ("focus_cell", "focus_hint") in an SVG Vega drew: baseline (px) and text."""
    lines = []
    for name in ("focus_cell", "focus_hint"):
        block = re.search(rf'<g class="mark-text role-mark {name}_marks"[^>]*?(?<!/)>(.*?)</g>', svg, re.S)
        texts = re.findall(r"<text[^>]*translate\([^,]+,([^)]+)\)[^>]*>(.*?)</text>", block[1] if block else "")
        for y, drawn in texts:
            parts = re.findall(r'<tspan(?: x="0" dy="([^"]+)")?>(.*?)</tspan>', drawn) or [("", drawn)]
            for i, (_dy, text) in enumerate(parts):  # a line of several: tspans, each dy below the one before
                lines.append((float(y) + sum(float(d or 0) for d, _ in parts[:i + 1]), unescape(text)))
    return [(y, text) for y, text in lines if text]


def drawn_words(spec: dict) -> list[str]:
    """:func:`drawn_lines`' texts, checked apart: no two lines closer than a line's height."""
    lines = drawn_lines(spec)
    ys = sorted(y for y, _ in lines)
    assert all(b - a >= heatmap.LABEL_LINE_PX for a, b in zip(ys, ys[1:], strict=False)), lines
    return [text for _, text in lines]


def _pinned_by_a_click(spec: dict, value: list[dict]) -> dict:
    """The spec as a click on a cell leaves it: its pin's store holds that cell (Vega-Lite's initial value of a point
    selection is what a click would put there)."""
    for param in spec["params"]:
        if param["name"] == charts.PIN:
            param["value"] = value
    return spec


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_held_chart_says_the_control_holds_it_and_a_clicked_one_says_click_the_lit_cell(lang, monkeypatch):
    """The words are true for each chart: a token held by Focus on a token is released there, for every chart at once
    (a click leaves it); a chart's own pin, a cell, by a click on that cell."""
    tr = i18n.catalog(lang).gettext
    monkeypatch.setattr(i18n, "language", lambda: lang)
    square = heatmap.heatmap(np.arange(9.0).reshape(3, 3), LABELS, LABELS, x_title="key", y_title="query")
    held = drawn_words(charts.pinned(square.spec(), square.layout.pin_value("2: c")))
    clicked = drawn_words(_pinned_by_a_click(square.spec(), [{"row": "1: b", "col": "0: a"}]))
    free = drawn_words(square.spec())
    assert held[1:] == [tr(w) for w in heatmap.FOCUS_HELD] and held[0].count("2: c") == 2  # its query and key
    assert "".join(clicked[1:]).replace(" ", "") == tr(heatmap.FOCUS_PINNED).replace(" ", "")  # one line or two
    assert "1: b" in clicked[0] and "0: a" in clicked[0]
    assert "".join(free).replace(" ", "") == tr(heatmap.FOCUS_HINT).replace(" ", "")  # on one line or two


@pytest.mark.parametrize("lang", ["en", "zh", "ko"])
def test_a_narrow_heatmaps_words_are_never_cut_short(lang, monkeypatch):
    """On a heatmap three columns wide (Learn's W_Q and W_K) the Korean hint was cut: "칸 위에 마우스를 올리면 그 행과
    열이 강조…". Words that do not fit on one line take two, drawn apart, the same with a cell lit and pinned."""
    tr = i18n.catalog(lang).gettext
    monkeypatch.setattr(i18n, "language", lambda: lang)
    narrow = heatmap.heatmap(np.arange(12.0).reshape(4, 3), [str(i) for i in range(4)], ["0", "1", "2"],
                             x_title=tr("column"), y_title=tr("row"))
    assert narrow.layout.width_px * 3 + heatmap.LEGEND_PX < heatmap.WIDE_LINE_PX  # the narrow layout
    free = drawn_words(narrow.spec())
    clicked = drawn_words(_pinned_by_a_click(narrow.spec(), [{"row": "1", "col": "2"}]))
    assert not any("…" in line for line in free + clicked), (free, clicked)
    assert " ".join(free).replace(" ", "") == tr(heatmap.FOCUS_HINT).replace(" ", "")
    assert " ".join(clicked[1:]).replace(" ", "") == tr(heatmap.FOCUS_PINNED).replace(" ", "")
    if lang == "ko":  # this one does not fit on one line: two
        assert len(free) == 2


@pytest.mark.parametrize("dims", [2, 12])  # narrow: the words over the rows' title; wide: beside it, on one line
def test_a_held_row_alone_is_told_without_a_cell(dims):
    """Q, K, V and the output (tokens × dimensions) light the held token's row alone: no cell is lit, none named."""
    tall = heatmap.heatmap(np.ones((3, dims)), LABELS, [str(j) for j in range(dims)], y_title="token")
    assert (tall.layout.width_px * dims + heatmap.LEGEND_PX >= heatmap.WIDE_LINE_PX) == (dims == 12)
    held = drawn_words(charts.pinned(tall.spec(), tall.layout.pin_value("1: b")))
    assert held == ([heatmap.held_words()] if dims == 12 else list(heatmap.FOCUS_HELD))
    assert "cell" not in heatmap.held_words()


def test_the_model_view_says_row_for_its_own_pin_and_names_the_control_for_a_held_one():
    chart = model_views.model_view(np.full((2, 12, 4, 4), 0.25), [f"t{i}" for i in range(4)])  # BERT's 12 heads
    clicked = " ".join(drawn_words(_pinned_by_a_click(chart.spec(), [{"q": 1}])))
    held = " ".join(drawn_words(charts.pinned(chart.spec(), chart.layout.pin_value("2: t2"))))
    assert clicked.endswith(heatmap.FOCUS_PINNED_ROW) and "1: t1" in clicked
    assert held.endswith(heatmap.held_words()) and "2: t2" in held
