"""Save a chart: the sidebar's menu offering each chart of the page as a PNG or an SVG file (issue 39).

Every chart is drawn through attn_ui.widgets.charts.show_chart, which keeps this run's list of them
(:func:`charts.shown`); after the page has run, the frame (attn_ui.shell.frame.run) calls :func:`menu`. Closed, as it
mostly is, the menu costs a run one element: its contents are made only while it is open (opening it reruns the
page, as the sidebar's Share this). Open, it offers the page's charts by name and two download buttons whose data is
a callable: nothing is drawn until a visitor clicks one, and a click does not rerun the app (``on_click="ignore"``).
The image is made by attn_ui.infra.export in a short-lived child process.

The image is the chart in the light theme on white (``config.background``), whatever the visitor's theme: a file that
reads anywhere (Streamlit's theme is applied in the browser, not in the spec).
"""

from __future__ import annotations

import math
import re
from functools import partial

import pandas as pd
import pyarrow as pa
import streamlit as st

from attn_ui.app.i18n import _
from attn_ui.infra import export, st_internals
from attn_ui.widgets import charts

OPEN = "save_chart_open"  # the expander open (its contents are made only then)
CHOICE = "save_chart_choice"
BACKGROUND = "white"
#: layers a still image leaves out, unless the chart's focus is held (:func:`still`): a heatmap's "hover or tap a cell"
#: hint (attn_ui.widgets.heatmap.focus_layers; a pinned cell's outlines and its line stay)
POINTER_ONLY = frozenset({"focus_hint"})
#: px: the width of a chart that took its column's on the page (width "container", the column's width unknown here);
#: Vega's default (300 px) would crowd an axis until it hides labels the page shows
CONTAINER_PX = 480
_LOG = st_internals.logger(__name__)


def menu(page: str) -> None:
    """In the sidebar, under everything else: "Save a chart", for the charts ``page`` (its URL name) drew in this run
    (nothing on a page without charts)."""
    drawn = charts.shown()
    if not drawn:
        return
    # an expander, not a popover: at the sidebar's foot a popover opened below the window, its buttons out of reach
    with st.sidebar.expander(_("Save a chart"), icon=":material/image:", key=OPEN, on_change="rerun") as box:
        if not box.open:
            return
        names = chart_names(drawn)
        pick = st.selectbox(_("Chart"), range(len(names)), format_func=names.__getitem__, key=CHOICE)
        chart = drawn[pick]
        stem = file_stem(page, chart.name and names[pick], pick)  # a name that comes again: with its place
        for fmt, mime in (("png", "image/png"), ("svg", "image/svg+xml")):
            st.download_button(fmt.upper(), image_maker(chart.spec, fmt, chart.name), file_name=f"{stem}.{fmt}",
                               mime=mime, key=f"save_chart_{fmt}", icon=":material/download:", on_click="ignore",
                               width="stretch")
        st.caption(_("PNG at twice the chart's size; SVG scales to any size. Light colours on white."))


def chart_names(drawn: list[charts.Shown]) -> list[str]:
    """Each chart's name as the menu lists it: its own, else "Chart 3" (its place on the page); a name that comes
    again gets its place too."""
    names = [c.name or _("Chart {n}").format(n=i + 1) for i, c in enumerate(drawn)]
    return [f"{n} ({i + 1})" if names.count(n) > 1 else n for i, n in enumerate(names)]


def file_stem(page: str, name: str, index: int) -> str:
    """``page-chart``, ASCII letters, digits and dashes only (a name without an ASCII letter: ``chart-3``, its place).

    >>> file_stem("steps", "Scores QKᵀ", 3), file_stem("steps", "权重 (6)", 5), file_stem("steps", "Weights (6)", 5)
    ('steps-scores-qk', 'steps-chart-6', 'steps-weights-6')
    """
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60].strip("-")
    return f"{page}-{slug if re.search('[a-z]', slug) else f'chart-{index + 1}'}"


def image_maker(spec: dict, fmt: export.Format, title: str):
    """The download's data: a callable making the image when the visitor clicks (in a thread of Streamlit's, not a
    script run: the spec holds its words, in the learner's language). It holds the spec sent (no copy) until the
    session's next run replaces the button."""
    return partial(image, spec, fmt, title)


def image(spec: dict, fmt: export.Format, title: str) -> bytes:
    """The chart as a PNG or SVG file. An export.ExportError is logged and raised: Streamlit tells the visitor the
    file could not be made (its own words: a deferred download has no way to show the app's)."""
    try:
        return export.to_image(printable(spec, title), fmt)
    except export.ExportError as e:
        _LOG.warning("save a chart: %s", e)
        raise


#: what a saved image sets of the params a chart is drawn with on the page: the focus ink of the light theme (the
#: image is on white), and a held focus without how to release it (charts.RELEASE: an image has no control to set)
PRINTED = {charts.INK: charts.INKS["light"], charts.RELEASE: False}


def printable(spec: dict, title: str = "") -> dict:
    """A copy of a spec as show_chart sent it, ready to draw outside the browser: its datasets as rows (JSON, NaN and
    infinities as null), on white, its params as :data:`PRINTED` sets them, and ``title`` as its title if it has none
    (a heatmap's title is written above it on the page), :data:`CONTAINER_PX` wide if it took its column's width. The
    spec itself is not changed.

    >>> s = printable({"datasets": {"slot0": pa.table({"v": [1.0, math.nan]})}, "params": [
    ...     {"name": charts.INK, "value": charts.INKS["dark"]}, {"name": charts.RELEASE, "value": True}]}, "Weights")
    >>> s["datasets"], s["title"], s["config"]["background"], [p["value"] for p in s["params"]]
    ({'slot0': [{'v': 1.0}, {'v': None}]}, 'Weights', 'white', ['#b5361c', False])
    """
    out = still({k: v for k, v in spec.items() if k not in ("datasets", "usermeta")})
    out["datasets"] = {name: rows(frame) for name, frame in spec.get("datasets", {}).items()}
    if title and not out.get("title"):
        out["title"] = title
    if out.get("width") == "container":  # no page around it here
        out["width"] = CONTAINER_PX
    out["config"] = {**out.get("config", {}), "background": BACKGROUND}
    if "params" in out:
        out["params"] = [{**p, "value": PRINTED[p["name"]]} if p.get("name") in PRINTED else p for p in out["params"]]
    return out


def still(spec: dict, held: bool = False) -> dict:
    """The spec as a still image shows it: what the page shows when no pointer is on it, less the words only a pointer
    acts on (the layers of :data:`POINTER_ONLY`, in it or its parts: copied where one is left out).

    A chart whose focus the page's control holds (Focus on a token: a value in :data:`attn_ui.widgets.charts.HELD`,
    here or ``held`` above) keeps its hint's layer: it then says what pinned the lit row and column ("pinned by Focus
    on a token", attn_ui.widgets.heatmap.held_expr) beside the lit cell's line, as the page does, and never what a
    pointer does (the control outranks hovering and clicking). A pin by a click is the browser's alone: the spec sent
    has none.

    >>> still({"layer": [{"name": "cells"}, {"name": "focus_hint"}]})
    {'layer': [{'name': 'cells'}]}
    >>> still({"params": [{"name": "held", "value": [{"row": "1: b", "col": None}]}],
    ...        "layer": [{"name": "cells"}, {"name": "focus_hint"}]})["layer"]
    [{'name': 'cells'}, {'name': 'focus_hint'}]
    """
    out = dict(spec)
    held = held or any(p.get("name") == charts.HELD and p.get("value") is not None for p in out.get("params", ()))
    for key in ("layer", "concat", "hconcat", "vconcat"):
        if isinstance(out.get(key), list):
            out[key] = [still(part, held) for part in out[key] if held or part.get("name") not in POINTER_ONLY]
    if isinstance(out.get("spec"), dict):  # facet, repeat
        out["spec"] = still(out["spec"], held)
    return out


def rows(frame: object) -> object:
    """A dataset as a list of rows (dicts), non-finite numbers as None; anything else as it is."""
    if isinstance(frame, pd.DataFrame):
        frame = pa.Table.from_pandas(frame, preserve_index=False)
    if not isinstance(frame, pa.Table):
        return frame
    return [{k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
            for row in frame.to_pylist()]
