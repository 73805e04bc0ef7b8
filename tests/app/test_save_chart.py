"""Save a chart (issue 39): a chart as PNG and SVG through vl-convert in a child process, its caps and errors, and the
sidebar's menu listing the page's charts."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import DEFAULT_PRESET, load_preset, self_attention
from attn_ui.app import i18n, registry
from attn_ui.infra import export
from attn_ui.shell import save_chart
from attn_ui.views import model_views, neuron_views, scaling_views
from attn_ui.widgets import charts, heatmap, text

from .apptools import APP
from .test_focus import lines_in

pytest.importorskip("vl_convert", reason="pip install vl-convert-python (requirements.txt)")


@pytest.fixture(scope="module")
def weights_spec() -> dict:
    """Step by step's weights heatmap of the default preset, as show_chart sends it, made printable."""
    cfg = load_preset(DEFAULT_PRESET)
    t = self_attention(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v)
    chart = heatmap.heatmap(t.weights, text.query_labels(cfg), text.token_labels(cfg), title="Weights",
                            kind="weights", x_title="key", y_title="query")
    return save_chart.printable(chart.spec(), "Weights")


def test_png_and_svg_of_a_real_chart(weights_spec):
    png = export.to_image(weights_spec, "png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 200 and height > 150  # at scale 2: not a collapsed strip
    svg = export.to_image(weights_spec, "svg").decode()
    assert svg.startswith("<svg") and "0: input1" in svg and "Weights" in svg
    assert 'fill="white"' in svg  # the background: the file reads on any viewer
    assert "hover or tap a cell" not in svg  # a still image has no pointer


def test_the_model_view_and_the_neuron_view_as_images():
    """The model view's image has no "hover a row" line (its hint is a layer of its own), the query line stays for a
    pin; the neuron view is listed by a name of its own, not "Chart 3"."""
    view = model_views.model_view(np.full((2, 3, 4, 4), 0.25), [f"t{i}" for i in range(4)])
    hint = view.layout.focus_words[4]
    names = [layer.get("name") for layer in view.spec()["layer"]]
    assert "focus_hint" in names and "focus_cell" in names
    still = save_chart.printable(view.spec(), "every head")
    assert [layer.get("name") for layer in still["layer"]] == [n for n in names if n != "focus_hint"]
    svg = export.to_image(still, "svg").decode()
    assert "every head" in svg and hint not in svg
    vectors = neuron_views.vectors_chart({"q_i": np.ones(4), "k_j": np.arange(4.0)}, np.arange(4.0), x_title="f")
    name = charts.chart_name(vectors.layout, charts.title_text(vectors.spec()))
    assert save_chart.chart_names([charts.Shown(name, dict)]) == ["The query and key vectors, feature by feature"]


def test_the_model_view_saved_with_a_held_row_says_what_pinned_it_not_how_to_release_it():
    """The words of a held focus are a Vega param's choice (charts.RELEASE), which a saved image sets: the model view's
    line read "set it to none to release" in the image until its text was replaced in the spec's expressions."""
    view = model_views.model_view(np.full((2, 3, 4, 4), 0.25), [f"t{i}" for i in range(4)])
    held = charts.pinned(view.spec(), view.layout.pin_value("2: t2"))
    said = " ".join(text for _y, text in lines_in(export.to_image(save_chart.printable(held, "every head"), "svg")
                                                    .decode()))
    assert heatmap.FOCUS_HELD[0] in said and heatmap.FOCUS_HELD[1] not in said and "2: t2" in said, said


TOKENS = [f"{i}: t{i}" for i in range(12)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("shape", "cols"), [
    ((3, 3), TOKENS[:3]),  # narrow: the lit cell's line, the words over it
    ((3, 2), ["0", "1"]),  # narrow, tokens × dimensions: the held row alone, no cell
    ((12, 12), TOKENS),  # wide: one line beside the rows' title
    ((3, 12), [str(j) for j in range(12)]),  # wide, a row alone
], ids=["narrow", "narrow-row", "wide", "wide-row"])
def test_a_held_focus_is_saved_lit_with_the_words_saying_what_pinned_it(shape, cols, lang, monkeypatch):
    """A saved image cannot be hovered: it has no "hover or tap" words, nor a click's. A focus held by Focus on a
    token (the one pin a spec sent carries: a click's is the browser's alone) is saved as the page shows it: its row
    (and column) outlined, the lit cell named, and the words that it is pinned and by what. Its hint's layer was left
    out of every image, and a held narrow heatmap had no word of it (a held row alone: none at all)."""
    tr = i18n.catalog(lang).gettext
    monkeypatch.setattr(i18n, "language", lambda: lang)
    chart = heatmap.heatmap(np.arange(float(np.prod(shape))).reshape(shape), TOKENS[:shape[0]], cols,
                            x_title="key", y_title="query")
    held = charts.pinned(chart.spec(), chart.layout.pin_value("2: t2"))
    saved = export.to_image(save_chart.printable(held, "W"), "svg").decode()
    said = " ".join(text for _y, text in lines_in(saved))
    assert tr(heatmap.FOCUS_HELD[0]) in said, said  # what pinned it
    assert tr(heatmap.FOCUS_HELD[1]) not in said, said  # not how to release it: an image has no control to set
    assert said.count("2: t2") == (2 if cols == TOKENS[:shape[1]] else 0)  # the cell lit: its query and key
    assert re.search(r'focus_row_marks"[^>]*>\s*<path', saved)  # the held row outlined
    pointer = [tr(w) for w in (heatmap.FOCUS_HINT, heatmap.FOCUS_CLICK, heatmap.FOCUS_PINNED)]
    assert not [w for w in pointer if w in said] and not re.search(r"hover|tap|click", said), said
    free = export.to_image(save_chart.printable(chart.spec(), "W"), "svg").decode()
    assert not lines_in(free) and not re.search(r'focus_row_marks"[^>]*>\s*<path', free)  # nothing lit, no words


def test_printable_leaves_the_spec_sent_as_it_is(weights_spec):
    cfg = load_preset(DEFAULT_PRESET)
    chart = heatmap.heatmap(cfg.x, text.token_labels(cfg), ["0", "1", "2", "3"], title="X")
    sent = chart.spec()
    before = json.dumps({k: v for k, v in sent.items() if k != "datasets"}, sort_keys=True)
    out = save_chart.printable(sent, "X")
    json.dumps(out, allow_nan=False)  # JSON as it is
    assert json.dumps({k: v for k, v in sent.items() if k != "datasets"}, sort_keys=True) == before
    assert out["config"]["background"] == "white" and set(out["datasets"]) == set(sent["datasets"])


def test_a_bad_spec_is_an_export_error():
    with pytest.raises(export.ExportError, match="could not be drawn"):
        export.to_image({"mark": "bar", "encoding": {"x": {"field": "a", "type": "nonsense"}},
                         "data": {"values": [{"a": 1}]}}, "svg")
    with pytest.raises(export.ExportError, match="cannot be written out"):
        export.to_image({"data": {"values": [{"a": float("nan")}]}, "mark": "bar"}, "png")


def test_caps_in_and_out(monkeypatch):
    monkeypatch.setattr(export, "MAX_SPEC_BYTES", 100)
    with pytest.raises(export.ExportError, match="too large to save"):
        export.to_image({"data": {"values": [{"a": i} for i in range(50)]}, "mark": "bar"}, "svg")
    monkeypatch.setattr(export, "MAX_SPEC_BYTES", 4_000_000)
    monkeypatch.setattr(export, "MAX_IMAGE_BYTES", 1000)  # the child writes nothing larger
    with pytest.raises(export.ExportError, match="larger than"):
        export.to_image({"data": {"values": [{"a": 1}]}, "mark": "bar", "encoding": {"x": {"field": "a"}}}, "png")


def test_timeout_and_missing_converter(monkeypatch):
    def too_slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], export.TIMEOUT_S)

    monkeypatch.setattr(subprocess, "run", too_slow)
    with pytest.raises(export.ExportError, match="longer than 30 s"):
        export.to_image({"mark": "bar"}, "png")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a[0], 2, b"", b""))
    with pytest.raises(export.ExportError, match="vl-convert-python is not installed"):
        export.to_image({"mark": "bar"}, "png")
    assert export.SLOTS.held == 0  # the slot given back on every path


def test_a_full_queue_refuses_at_once(monkeypatch):
    monkeypatch.setattr(export, "MAX_WAITING", 0)
    with pytest.raises(export.ExportError, match="try again in a moment"):
        export.to_image({"mark": "bar"}, "png")


def test_the_download_data_is_a_callable_making_the_image(weights_spec, monkeypatch):
    made = save_chart.image_maker(weights_spec, "png", "Weights")
    assert callable(made) and made().startswith(b"\x89PNG")


def steps_through_router(lang: str, open_menu: bool = True) -> AppTest:
    """Step by step run by the router (streamlit_app.py: frame.run draws the menu after the page). AppTest runs a
    page it switched to without the router, so the router's default page is made Step by step for this run."""
    at = AppTest.from_file(APP, default_timeout=60)
    if open_menu:
        at.session_state[save_chart.OPEN] = True
    at.query_params["lang"] = lang
    return at.run()


@pytest.mark.parametrize(("page", "names"), [
    ("scaling", ["Why √d_k: measured", "Softmax saturation (6)", "Softmax saturation (7)"]),
    ("masking", ["Boolean mask", "Weights, masked, and each row's sum"]),
    ("multihead", ["head 0"]),  # titled in the chart's parts
    ("scores", ["q of query 0: input1"]),  # the title as the page writes it in Markdown, its escapes taken out
])
def test_every_chart_of_a_page_has_a_name_of_its_own(monkeypatch, page, names):
    monkeypatch.setattr(registry, "DEFAULT", registry.by_name(page))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[save_chart.OPEN] = True
    at.run()
    menu = next(s for s in at.sidebar.selectbox if s.key == save_chart.CHOICE).options
    assert set(names) <= set(menu) and not [n for n in menu if n.startswith("Chart ") or "\\" in n], menu


@pytest.mark.parametrize(("lang", "weights"), [("en", "Weights"), ("zh", "权重")])
def test_the_menu_lists_the_pages_charts_by_title(monkeypatch, lang, weights):
    monkeypatch.setattr(registry, "DEFAULT", registry.STEPS)
    at = steps_through_router(lang)
    assert not at.exception and at.title[0].value == ("Step by step" if lang == "en" else "逐步计算")
    menu = next(s for s in at.sidebar.selectbox if s.key == save_chart.CHOICE)
    names = menu.options  # as the visitor reads them (format_func applied)
    assert names[:3] == ["Q", "K", "V"] and weights in names and len(names) == len(at.get("vega_lite_chart"))
    assert [b.key for b in at.sidebar.get("download_button")] == ["save_chart_png", "save_chart_svg"]


def test_a_closed_menu_is_one_element(monkeypatch):
    monkeypatch.setattr(registry, "DEFAULT", registry.STEPS)
    at = steps_through_router("en", open_menu=False)
    assert not at.exception
    assert not [s for s in at.sidebar.selectbox if s.key == save_chart.CHOICE]
    assert not at.sidebar.get("download_button")


def test_file_names_are_ascii():
    assert save_chart.file_stem("steps", "Row sums Σⱼ aᵢⱼ", 6) == "steps-row-sums-a"
    assert save_chart.file_stem("model", "注意力", 0) == "model-chart-1"


def test_a_chart_as_wide_as_its_box_is_saved_at_the_width_drawn():
    """Scaling's variance sweep takes its box's width (495 px on the page): saved at Vega's default width outside
    the browser (300 px), its d_k axis hid the label 512 that the page shows (drawn with opacity 0)."""
    sweep = scaling_views.variance_sweep((1, 2, 4, 8, 16, 32, 64, 128, 256, 512), 300, 0)
    template, datasets = charts.cached_chart(scaling_views.variance_sweep_chart, sweep.d_k, sweep.raw, sweep.scaled,
                                             current_d_k=3).parts()
    sent = {**charts.finished(json.loads(template), None, charts.INKS["light"]), "datasets": datasets}
    assert sent["width"] == "container"

    def shown(svg: bytes, label: str) -> bool:  # the axis label is drawn, not hidden by the overlap rule
        return re.search(rf'<text [^>]*opacity="1"[^>]*>{label}</text>', svg.decode()) is not None

    drawn = charts.as_drawn(dict(sent), scaling_views.SWEEP_MAX_PX)
    assert drawn["width"] == scaling_views.SWEEP_MAX_PX
    assert all(shown(export.to_image(save_chart.printable(drawn, "Why"), "svg"), n) for n in ("1", "256", "512"))
    box = save_chart.printable(sent)  # a chart in a column of a width unknown here: a width of its own
    assert box["width"] == save_chart.CONTAINER_PX and shown(export.to_image(box, "svg"), "512")
    assert not shown(export.to_image({**box, "width": "container"}, "svg"), "512")  # Vega's default: hidden
