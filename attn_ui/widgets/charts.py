"""Charts on the page: what a chart factory returns (:class:`Chart`), and :func:`show_chart`, which draws it.

A chart factory (attn_ui.widgets.heatmap, attn_ui.views.multihead_views, attn_ui.views.scaling_views,
attn_ui.views.masking_views) is one public
function: it takes arrays and labels and returns a :class:`Chart` (never calls st). ``Chart.altair()`` is the
Altair chart, testable through ``to_dict()``; :func:`show_chart` draws the spec Altair built once per layout.

Why a chart is split into a layout and its data: Vega-Lite specs of Altair charts are built by Altair once per
layout, then refilled with data.

Building an Altair chart and converting it (``to_dict``; checking it against the Vega-Lite schema, done in the tests
only: :data:`CHECK_ENV`) costs tens of milliseconds per chart: most of a page's run, and paid again on every edit. A
chart's structure depends on its *layout* (shape, labels, pixel sizes, titles), not on its numbers, so :func:`spec`
asks Altair once per layout, with named placeholder datasets, keeps that spec, and on every later call copies it with
the real data frames put in. The result is what ``st.vega_lite_chart`` takes; the datasets travel as Arrow, as with
``st.altair_chart``.

The data are Arrow tables built straight from numpy (:func:`table`): what Streamlit sends, without a pandas
DataFrame in between (building one and converting it to Arrow cost ≈ 2 ms a chart, a fifth of a small page's run).

Colour domains travel with the data too (:func:`data_domain`), not as numbers in the spec: a spec that stays the
same from one run to the next lets the browser update the drawn chart with the new data, where a changed spec
makes it compile and draw the chart from scratch (≈ 30 ms per chart in Chromium, measured in bench/).

A builder is ``build(layout, data, domains) -> alt chart``: ``data`` a list of data sources (data frames, or the
placeholders) to pass to ``alt.Chart``, ``domains`` one entry per data source: the scale domain to use with it,
``[lo, hi]`` or, from :func:`spec`, :func:`data_domain` of that source (``None`` where a source has none). Its
structure must depend on ``layout`` alone: no reading of the data. Data frames it builds itself from the layout (a
legend's rows, say) are kept with the cached spec.

No Altair global is touched (data transformers, themes): data frames are swapped for names before conversion,
so this is safe in Streamlit's script threads.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attn_ui.app import i18n, state
from attn_ui.infra import budget, st_internals

Builder = Callable[[Any, list, list], alt.TopLevelMixin]
Frame = pd.DataFrame | pa.Table  # a chart's data: Altair and Streamlit take either

#: the columns :func:`spec` adds to a data frame to carry its scale domain (every row holds the same two numbers)
DOMAIN_LO, DOMAIN_HI = "domain_lo", "domain_hi"
_THEME_CONFIG = {"view": {"continuousWidth": 300, "continuousHeight": 300}}  # Altair's default theme adds this
#: the theme charts are drawn in (st.vega_lite_chart's ``theme``): Streamlit's, so they follow light and dark
THEME = "streamlit"
#: on top of Streamlit's theme (a spec's config wins over it): axis and legend labels of 12 px, titles of 13 px (read
#: at a glance; the heatmaps' cell widths and label angles are worked out for them: attn_ui.widgets.heatmap.label_px)
FONT_PX = 12
#: the name of a chart's pinned focus: a click selection, the browser's alone (attn_ui.widgets.heatmap.focus_params)
PIN = "pin"
#: the name of the focus the page's control holds in a chart (a variable param, null by default, outranking the pin):
#: the keyboard's focus (state.FOCUS) where the chart's layout gives one (its ``pin_value(label)``), set where the
#: chart is drawn (:func:`pinned`). Not the pin's initial value: a click would release it in that chart alone while
#: the control and every other chart still held it
HELD = "held"
#: the colour of a chart's focus (its outlines and lines, a param whose value :func:`show_chart` sets): red-orange,
#: dark on a light page and light on a dark one (6.0:1 on white, 8.2:1 on Streamlit's dark background)
INK = "focus_ink"
INKS = {"light": "#b5361c", "dark": "#ff8a65"}
#: whether a chart whose focus the page's control holds says how to release it (a param, true as drawn on the page;
#: false in a saved image, where that instruction means nothing: attn_ui.shell.save_chart.printable)
RELEASE = "focus_release"
CONFIG = {"axis": {"labelFontSize": FONT_PX, "titleFontSize": FONT_PX + 1},
          "legend": {"labelFontSize": FONT_PX, "titleFontSize": FONT_PX + 1},
          "title": {"fontSize": FONT_PX + 2, "subtitleFontSize": FONT_PX}}


@dataclass(frozen=True, eq=False)
class Chart:
    """A chart, as a chart factory returns it: its builder, its layout and its data.

    ``build(layout, data, domains)`` makes the Altair chart (its structure depends on ``layout`` alone, see
    :func:`spec`); ``data`` are its data frames; ``domains`` one colour domain (lo, hi) per frame that carries one
    (None where the builder needs none or has it in the layout).
    """

    build: Builder
    layout: Hashable
    data: tuple[Frame, ...]
    domains: tuple[tuple[float, float] | None, ...] = ()
    canvas: bool = False  # many marks and no text: drawn on a canvas (:func:`on_canvas`)
    #: ``extra(layout) -> {"params": [...], "layer": [...]}``: plain Vega-Lite params and layers appended to the
    #: layered chart Altair built (:func:`with_extra`), neither built nor validated by Altair on the page's path
    extra: Callable[[Any], dict] | None = None

    def altair(self) -> alt.TopLevelMixin:
        """The Altair chart itself, domains as numbers (for tests and ``st.altair_chart``), with its :attr:`extra`
        (validated with it by ``to_dict``)."""
        domains = [list(d) if d is not None else None for d in self._domains()]
        chart = self.build(self.layout, list(self.data), domains)
        if self.extra is not None:
            more = self.extra(self.layout)
            params = [(alt.TopLevelSelectionParameter if "select" in p else alt.VariableParameter)(**p)
                      for p in more.get("params", [])]
            chart.params = [*([] if chart.params is alt.Undefined else chart.params), *params]
            chart.layer = [*chart.layer, *map(_altair_layer, more.get("layer", []))]
        return chart

    def to_dict(self) -> dict:
        """The Altair chart's Vega-Lite dict (validated by Altair)."""
        return self.altair().to_dict()

    def spec(self) -> dict:
        """The Vega-Lite spec for ``st.vega_lite_chart``, Altair building it once per layout (:func:`spec`)."""
        out = spec(self.build, self.layout, self.data, self._domains(), extra=self.extra)
        return on_canvas(out) if self.canvas else out

    def parts(self) -> tuple[str, dict[str, Frame]]:
        """:meth:`spec` in two parts: the template's JSON (one string object per layout, kept) and the datasets."""
        return spec_parts(self.build, self.layout, self.data, self._domains(), extra=self.extra)

    def _domains(self) -> tuple[tuple[float, float] | None, ...]:
        return tuple(self.domains) + (None,) * (len(self.data) - len(self.domains))


def _altair_layer(layer: dict) -> alt.Chart:
    """A plain Vega-Lite layer (:attr:`Chart.extra`) as the Altair chart LayerChart takes (its inline data kept
    inline, as ``alt.Data`` has it)."""
    parts = {**layer, "encoding": alt.FacetedEncoding(**layer.get("encoding", {}))}
    if "data" in layer:
        parts["data"] = alt.Data(**layer["data"])
    return alt.Chart(**parts)


def show_chart(chart: Chart | SpecParts, *, name: str = "", **kwargs) -> object:
    """Draw a :class:`Chart` (or a plain chart's spec from :func:`cached_chart`) in Streamlit's theme.

    ``theme="streamlit"``: the axes, legends and titles take the app's light or dark theme (the learner's system
    setting, .streamlit/config.toml), where Vega's own defaults write black labels on a dark page. The colour
    schemes stay the factories' own (colour-blind-safe, set on each scale); a heatmap picks the colour of each
    cell's number from its fill (attn_ui.widgets.heatmap.cell_ink).

    The keyboard's focus (state.FOCUS: a token's label) is held in every chart that has that token (:func:`pinned`),
    until the control lets it go.

    ``name``: what *Save a chart* calls it, for a chart the page titles in its own words (default: its layout's title
    or its spec's, :func:`chart_name`).

    Width "content" by default: Streamlit's default "stretch" overrides the heatmaps' alt.Step cell size. Other
    keyword arguments go to ``st.vega_lite_chart`` (``key``, ``on_select``, ``selection_mode``).

    The chart's spec, finished as above, is prepared for Streamlit once per template, focus, ink and selection
    (:func:`_prepared`) and sent with this run's data (attn_ui.infra.st_internals.show_chart: the element
    ``st.vega_lite_chart`` sends, without serialising and parsing the same spec again on every run).
    """
    kwargs.setdefault("width", "content")
    ink = INKS.get(getattr(st.context.theme, "type", None) or "light", INKS["light"])
    template, datasets = chart.parts()
    layout = getattr(chart, "layout", None)
    token = st.session_state.get(state.FOCUS)
    pin = getattr(layout, "pin_value", lambda _token: None)(token) if token is not None else None
    selectable = kwargs.get("on_select", "ignore") != "ignore"
    prepared, title = _prepared(template, getattr(chart, "canvas", False), None if pin is None else json.dumps(pin),
                                ink, kwargs["width"] == "stretch", kwargs.get("selection_mode") if selectable else None,
                                selectable)
    _record(name or chart_name(layout, title),
            lambda: as_drawn({**json.loads(prepared.spec), "datasets": datasets}, kwargs["width"]))
    return st_internals.show_chart(prepared, datasets, theme=THEME, **kwargs)


def finished(chart_spec: dict, pin: list[dict] | None, ink: str) -> dict:
    """The spec (changed in place) as it is drawn: in the app's :data:`CONFIG` (:func:`themed`), described
    (:func:`describe`), the control's focus held at ``pin`` (:func:`pinned`) and drawn in ``ink`` (:data:`INK`)."""
    out = pinned(themed(describe(chart_spec)), pin)
    for param in out.get("params", []):
        if param.get("name") == INK:  # the learner's theme, as the browser reports it (light if it does not)
            param["value"] = ink
    return out


@budget.cached("chart_prepared", slots=budget.EXPLORER_SLOTS, key=lambda *args: args)  # hashable values only
def _prepared(template: str, canvas: bool, pin: str | None, ink: str, stretch: bool, selection_mode: str | None,
              selectable: bool) -> tuple[st_internals.PreparedChart, str]:
    """A template's spec finished (:func:`finished`; ``pin``: its focus as JSON) and prepared for Streamlit, with its
    name (:func:`name_of`). The template is one string object per layout (:func:`_template`), so the key finds it at
    once; an entry outliving its template's keeps that string in its key, no larger than the prepared spec it counts."""
    out = finished(on_canvas(json.loads(template)) if canvas else json.loads(template),
                   None if pin is None else json.loads(pin), ink)
    return (st_internals.prepare_chart(out, stretch=stretch, selection_mode=selection_mode, selectable=selectable),
            name_of(out))


def as_drawn(chart_spec: dict, width: int | str) -> dict:
    """The spec (changed in place) with the width in px it was drawn at, where it takes its box's width
    ("container") and the page gave the box a width in px: outside the browser there is no box, and Save a chart
    would draw it at Vega's default width, where an axis can hide a label the page shows (Scaling's "512").

    >>> as_drawn({"width": "container"}, 495), as_drawn({"width": "container"}, "stretch"), as_drawn({}, 495)
    ({'width': 495}, {'width': 'container'}, {})
    """
    if chart_spec.get("width") == "container" and isinstance(width, int):
        chart_spec["width"] = width
    return chart_spec


def _record(name: str, make_spec: Callable[[], dict]) -> None:
    """Add a drawn chart to this run's list (:func:`shown`), if the frame keeps one."""
    if (drawn := getattr(_RUN, "shown", None)) is not None:
        drawn.append(Shown(name, make_spec))


class Shown(NamedTuple):
    """A chart drawn in this run (:func:`shown`): its name ("" if it has none) and how to make the spec it was drawn
    with (:attr:`spec`), made only when asked (the sidebar's *Save a chart*, once a visitor picks a format)."""

    name: str
    make_spec: Callable[[], dict]

    @property
    def spec(self) -> dict:
        """The chart's spec as drawn, its datasets the run's data frames (held by this run only: nothing to free)."""
        return self.make_spec()


#: this script run's own (a run has its own thread): the charts :func:`show_chart` has drawn, from :func:`new_run` on
_RUN = threading.local()


def new_run(*, narrow: bool = False) -> None:
    """Start this run's list of the charts drawn (:func:`shown`): called by the frame at the start of every run.
    ``narrow``: this run draws for a phone's narrow screen (:func:`narrow`)."""
    _RUN.shown = []
    _RUN.narrow = narrow


def narrow() -> bool:
    """Whether this run draws for a phone's narrow screen, as the frame said at its start (:func:`new_run`); False
    outside a run (a test, a benchmark): a factory that lays a chart out for it takes it as its default."""
    return getattr(_RUN, "narrow", False)


def shown() -> list[Shown]:
    """The charts drawn in this run so far, in page order (attn_ui.shell.save_chart offers them as images). The specs
    are the dicts sent to Streamlit (which copies what it changes), held by this run only: nothing to free later."""
    return list(getattr(_RUN, "shown", None) or ())


def chart_name(layout: Hashable | None, spec_title: str) -> str:
    """A chart's name: its layout's title or matrix name (a heatmap's, written above it), else its spec's title
    (:func:`title_text`)."""
    return getattr(layout, "title", "") or getattr(layout, "name", "") or spec_title


def title_text(chart_spec: dict) -> str:
    """The text of a spec's title, its lines joined ("" without one).

    >>> title_text({"title": {"text": ["Weights", "per head"]}}), title_text({})
    ('Weights per head', '')
    """
    title = chart_spec.get("title") or ""
    text = title.get("text", "") if isinstance(title, dict) else title
    return (" ".join(text) if isinstance(text, list) else str(text)).strip()


def name_of(chart_spec: dict) -> str:
    """A chart's name for the learner (*Save a chart*): its title (:func:`title_text`), else its first view's that has
    one (a layered or concatenated chart titled in its parts), "" if none has.

    >>> name_of({"vconcat": [{"mark": "bar"}, {"layer": [{"title": "head 0"}]}]}), name_of({"mark": "bar"})
    ('head 0', '')
    """
    if text := title_text(chart_spec):
        return text
    for part in (p for key in ("layer", "concat", "hconcat", "vconcat") for p in chart_spec.get(key, ())):
        if text := name_of(part):
            return text
    return name_of(chart_spec["spec"]) if isinstance(chart_spec.get("spec"), dict) else ""


def pinned(chart_spec: dict, value: list[dict] | None) -> dict:
    """The spec (changed in place) with the control's focus :data:`HELD` at ``value`` (nothing changed for None, or
    in a chart without one): the keyboard's way to what a click on a cell does, lit until the control lets it go.

    >>> pinned({"params": [{"name": "held", "value": None}]}, [{"row": "0: a"}])["params"][0]["value"]
    [{'row': '0: a'}]
    """
    for param in chart_spec.get("params", []) if value is not None else ():
        if param.get("name") == HELD:
            param["value"] = value
    return chart_spec


def themed(chart_spec: dict) -> dict:
    """The spec with :data:`CONFIG` under its own config (the spec's own settings win), in place.

    >>> themed({"config": {"axis": {"labelFontSize": 14}}})["config"]["axis"]
    {'labelFontSize': 14, 'titleFontSize': 13}
    """
    own = chart_spec.get("config", {})
    chart_spec["config"] = {**CONFIG, **own, **{k: {**CONFIG[k], **own[k]} for k in CONFIG if k in own}}
    return chart_spec


class SpecParts(NamedTuple):
    """A spec in two parts (:func:`cached_chart`): its JSON without the datasets, and the datasets."""

    template: str
    datasets: dict[str, Frame]

    def parts(self) -> tuple[str, dict[str, Frame]]:
        return self.template, dict(self.datasets)

    def spec(self) -> dict:
        """The spec as ``st.vega_lite_chart`` takes it (a fresh copy)."""
        return {**json.loads(self.template), "datasets": dict(self.datasets)}


def cached_chart(factory: Callable[..., alt.TopLevelMixin], *args, **kwargs) -> SpecParts:
    """The spec of a plain Altair chart ``factory(*args, **kwargs)``, built once per distinct arguments.

    For a chart whose every part changes with its data (e.g. the variance sweep): Altair builds and validates it
    only when an argument changes. Show it with :func:`show_chart`. One spec per language: the factory writes its
    titles in the learner's language.
    """
    return SpecParts(*_chart_spec(_name(factory), i18n.language(), *args, _factory=factory, **kwargs))


@budget.cached("chart_spec", slots=budget.EXPLORER_SLOTS)  # the factory is in the key by its name; lang: its texts
def _chart_spec(name: str, lang: str, *args, _factory: Callable[..., alt.TopLevelMixin] | None = None,
                **kwargs) -> tuple[str, dict[str, Frame]]:
    spec = altair_spec(_factory(*args, **kwargs))
    datasets = {name: _arrow(frame) for name, frame in spec.pop("datasets", {}).items()}  # converted once
    return json.dumps(spec), datasets


def _arrow(frame: Frame) -> pa.Table:
    """A chart's data frame as an Arrow table (its columns; a DataFrame's index left out, as Vega never reads it)."""
    return pa.Table.from_pandas(frame, preserve_index=False) if isinstance(frame, pd.DataFrame) else frame


def _name(fn: Callable) -> str:
    """A function by its module and name: how a cache key names a builder or a factory."""
    return f"{fn.__module__}.{fn.__qualname__}"


def slot_name(i: int) -> str:
    return f"slot{i}"


def table(columns: dict[str, Any]) -> pa.Table:
    """A chart's data from its columns (numpy arrays of numbers, lists of str: :func:`repeated`, :func:`tiled`), as an
    Arrow table.

    >>> table({"k": np.array(["a", "b"]), "v": np.arange(2.0)}).to_pydict()
    {'k': ['a', 'b'], 'v': [0.0, 1.0]}
    """
    return pa.Table.from_pydict(columns)  # the same table as pa.table(columns), in half the time (≈ 100 µs less)


def repeated(labels: Sequence[str], n: int) -> list[str]:
    """Each label ``n`` times in a row (``np.repeat``'s order), for a chart's column of labels: a list of str, which
    Arrow reads 2–3× faster than the numpy array of str (UCS-4) ``np.repeat`` makes.

    >>> repeated(["a", "b"], 2)
    ['a', 'a', 'b', 'b']
    """
    return [label for label in labels for _ in range(n)]


def tiled(labels: Sequence[str], n: int) -> list[str]:
    """The labels ``n`` times over (``np.tile``'s order), as a list of str (see :func:`repeated`).

    >>> tiled(["a", "b"], 2)
    ['a', 'b', 'a', 'b']
    """
    return list(labels) * n


def data_domain(slot: int) -> dict:
    """A scale domain ``[lo, hi]`` read, when the chart is drawn, from dataset ``slot``'s DOMAIN_LO/DOMAIN_HI
    (a Vega-Lite expression; ``[0, 1]`` until the data has arrived). For ``alt.Scale(domain=...)``.

    >>> data_domain(0)["expr"][:28]
    "length(data('slot0')) ? [dat"
    """
    rows = f"data('{slot_name(slot)}')"
    return {"expr": f"length({rows}) ? [{rows}[0].{DOMAIN_LO}, {rows}[0].{DOMAIN_HI}] : [0, 1]"}


def spec(
    build: Builder, layout: Hashable, data: Sequence[Frame], domains: Sequence[tuple[float, float] | None] = (),
    extra: Callable[[Any], dict] | None = None,
) -> dict:
    """The Vega-Lite spec of ``build(layout, data, domains)``, its datasets named ``slot0``, ``slot1``, ...

    ``domains[i]`` (if given and not None) is data frame i's scale domain (lo, hi): it goes into the frame's
    DOMAIN_LO/DOMAIN_HI columns and the builder gets ``data_domain(i)``, so the spec does not change with it.
    ``extra`` (:attr:`Chart.extra`) adds its plain params and layers to the cached spec (:func:`with_extra`).

    Examples
    --------
    >>> def bars(title, data, domains):
    ...     return alt.Chart(data[0], title=title).mark_bar().encode(
    ...         x="k:N", y=alt.Y("v:Q", scale=alt.Scale(domain=domains[0])))
    >>> s = spec(bars, "sales", [table({"k": ["a", "b"], "v": [1.0, 3.0]})], [(0.0, 4.0)])
    >>> s["data"], s["encoding"]["y"]["scale"]["domain"] == data_domain(0)
    ({'name': 'slot0'}, True)
    >>> s["datasets"]["slot0"].select(["v", DOMAIN_LO, DOMAIN_HI]).to_pylist()[1]
    {'v': 3.0, 'domain_lo': 0.0, 'domain_hi': 4.0}
    """
    template, datasets = spec_parts(build, layout, data, domains, extra)
    out = json.loads(template)  # a fresh copy each time: Streamlit patches the spec it is given
    out["datasets"] = datasets
    return out


def spec_parts(
    build: Builder, layout: Hashable, data: Sequence[Frame], domains: Sequence[tuple[float, float] | None] = (),
    extra: Callable[[Any], dict] | None = None,
) -> tuple[str, dict[str, Frame]]:
    """:func:`spec` in two parts: the template's JSON, kept per layout (the same string object on every call), and the
    datasets (the builder's constants, then ``slot0``, ``slot1``, ...)."""
    has_domain = tuple(i < len(domains) and domains[i] is not None for i in range(len(data)))
    name = _name(build) + (f"+{_name(extra)}" if extra is not None else "")
    template, constants = _template(name, layout, has_domain, i18n.language(), _build=build, _extra=extra)
    frames = {slot_name(i): _with_domain(frame, domains[i]) if has_domain[i] else frame
              for i, frame in enumerate(data)}
    return template, {**constants, **frames}


def _with_domain(frame: Frame, domain: tuple[float, float]) -> Frame:
    """A copy of the frame with the DOMAIN_LO and DOMAIN_HI columns (every row the same two numbers)."""
    lo, hi = float(domain[0]), float(domain[1])
    if isinstance(frame, pd.DataFrame):
        return frame.assign(**{DOMAIN_LO: lo, DOMAIN_HI: hi})
    n = frame.num_rows
    return frame.append_column(DOMAIN_LO, pa.array(np.full(n, lo))).append_column(DOMAIN_HI, pa.array(np.full(n, hi)))


def _template_key(name: str, layout: Hashable, has_domain: tuple[bool, ...], lang: str, **_build) -> Hashable:
    """:func:`_template`'s cache key: its arguments as they are (a layout is a hashable value: a frozen dataclass or
    a tuple of strings and numbers). Fingerprinting them (walking every label of the layout) on each of a page's
    charts, on every run, cost more than the spec it found (bench/RESULTS.md, issue 37)."""
    return name, layout, has_domain, lang


# a layout holds the learner's labels: kept in bytes
@budget.cached("chart_template", slots=budget.EXPLORER_SLOTS, key=_template_key)
def _template(name: str, layout: Hashable, has_domain: tuple[bool, ...], lang: str, *,
              _build: Builder, _extra: Callable[[Any], dict] | None = None) -> tuple[str, dict[str, Frame]]:
    """Altair's spec of the builder on placeholders (once per layout and language; checked in the tests:
    :data:`CHECK_ENV`) as JSON, and the data
    frames the builder made itself (named const0, const1, ...).

    ``lang`` (the session's, attn_ui.app.i18n.language()) is part of the key: a builder writes the words it adds itself
    (tooltip titles, text alternatives) in the learner's language, so two languages never share a spec."""
    slots = range(len(has_domain))
    chart = _build(layout, [alt.NamedData(name=slot_name(i)) for i in slots],
                  [data_domain(i) if has_domain[i] else None for i in slots])
    constants = {name: _arrow(frame) for name, frame in _name_frames(chart, "const").items()}  # converted once
    out = _to_dict(chart)
    return json.dumps(with_extra(out, _extra(layout)) if _extra is not None else out), constants


def with_extra(chart_spec: dict, more: dict) -> dict:
    """A layered spec (changed in place) with ``more["params"]`` after its params and ``more["layer"]`` after its
    layers: plain Vega-Lite that Altair neither builds nor validates (:attr:`Chart.extra`; Altair building and
    validating a heatmap's focus layers made its first spec ≈ 100 ms slower, a 64 × 64 one's 5 times slower:
    bench/chart_build.py, bench/RESULTS.md).

    >>> with_extra({"layer": [{"mark": "rect"}]}, {"params": [{"name": "p", "value": 1}], "layer": [{"mark": "text"}]})
    {'layer': [{'mark': 'rect'}, {'mark': 'text'}], 'params': [{'name': 'p', 'value': 1}]}
    """
    if more.get("params"):
        chart_spec["params"] = [*chart_spec.get("params", []), *more["params"]]
    chart_spec["layer"] = [*chart_spec["layer"], *more.get("layer", [])]
    return chart_spec


def on_canvas(chart_spec: dict) -> dict:
    """The spec drawn on a canvas instead of SVG (Streamlit's default below 2,000 data rows): for charts of many
    marks without text, a canvas draws them in a fraction of the time SVG's one DOM node per mark takes."""
    chart_spec["usermeta"] = {**chart_spec.get("usermeta", {}), "embedOptions": {"renderer": "canvas"}}
    return chart_spec


def altair_spec(chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of a built Altair chart for ``st.vega_lite_chart``, its data frames as named datasets.

    What ``st.altair_chart`` sends, converted without Altair's global data transformer (so safe in any thread).
    The chart's data frames are swapped for names in place: use the chart for nothing else afterwards.

    Examples
    --------
    >>> c = alt.Chart(pd.DataFrame({"k": ["a"], "v": [1.0]})).mark_bar().encode(x="k:N", y="v:Q")
    >>> s = altair_spec(c)
    >>> s["data"], list(s["datasets"]["slot0"].columns)
    ({'name': 'slot0'}, ['k', 'v'])
    """
    frames = _name_frames(chart, "slot")
    out = _to_dict(chart)
    out["datasets"] = frames
    return out


def _name_frames(chart: alt.TopLevelMixin, prefix: str) -> dict[str, Frame]:
    """Swap every data frame in the chart (and its layers and panels) for a name; return {name: frame}."""
    frames: dict[int, tuple[str, Frame]] = {}

    def swap(node: Any) -> None:
        data = getattr(node, "data", None)
        if isinstance(data, (pd.DataFrame, pa.Table)):
            name, _ = frames.setdefault(id(data), (f"{prefix}{len(frames)}", data))
            node.data = alt.NamedData(name=name)
        for attr in ("layer", "concat", "hconcat", "vconcat"):
            for sub in getattr(node, attr, None) or ():
                swap(sub)
        if isinstance(getattr(node, "spec", None), alt.SchemaBase):  # facet / repeat
            swap(node.spec)

    swap(chart)
    return dict(frames.values())


#: set to "1" in the environment, Altair checks every spec it builds for a page against the Vega-Lite schema: the
#: tests set it (tests/conftest.py), so each template the suite builds, on every page, in AppTest and in Chromium, is
#: checked. A server leaves it unset: the check cost ≈ 70 ms per new layout (of a 3 × 3 heatmap's ≈ 125 ms first
#: spec), paid by every chart whose shape or labels an edit changed, and Altair's first check loads its 1 MB schema.
#: A template's structure depends on its layout alone, never on the numbers (:func:`spec`).
CHECK_ENV = "ATTN_CHECK_CHARTS"


def _to_dict(chart: alt.TopLevelMixin) -> dict:
    """chart.to_dict() as st.altair_chart has it (without Altair's default theme); checked against the schema when
    :data:`CHECK_ENV` says so."""
    out = chart.to_dict(validate=os.environ.get(CHECK_ENV) == "1")
    if out.get("config") == _THEME_CONFIG:
        del out["config"]
    return out


def describe(chart_spec: dict) -> dict:
    """The spec (changed in place) with a top-level ``description`` (what Vega gives screen readers as the chart's
    aria-label): the factory's own if it set one, else the chart's title. A chart with neither keeps none: its
    factory must say what it shows (attn_ui.widgets.heatmap.describe does for heatmaps).

    >>> describe({"title": {"text": ["Weights", "per head"]}})["description"]
    'Weights per head'
    >>> describe({"title": "S", "description": "mine"})["description"], "description" in describe({})
    ('mine', False)
    """
    if "description" not in chart_spec and (text := title_text(chart_spec)):
        chart_spec["description"] = text
    return chart_spec
