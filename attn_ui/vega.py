"""Vega-Lite specs of Altair charts, built and validated by Altair once per layout, then refilled with data.

Building an Altair chart and converting it (``to_dict`` checks it against the Vega-Lite schema) costs tens of
milliseconds per chart: most of a page's run, and paid again on every edit. A chart's structure depends on its
*layout* (shape, labels, pixel sizes, titles), not on its numbers, so :func:`spec` asks Altair once per layout,
with named placeholder datasets and placeholder numbers, keeps that spec, and on every later call copies it with
the real numbers and data frames put in. The result is what ``st.vega_lite_chart`` takes; the datasets travel as
Arrow, as with ``st.altair_chart``.

A builder is ``build(layout, data, numbers) -> alt chart``: ``data`` a list of data sources (data frames, or
the placeholders) to pass to ``alt.Chart``, ``numbers`` a list of floats to put in the spec as they are (a colour
domain, say). Its structure must depend on ``layout`` alone: no reading of the data, no arithmetic on the numbers.
Data frames it builds itself from the layout (a legend's rows, say) are kept with the cached spec.

No Altair global is touched (data transformers, themes): data frames are swapped for names before conversion,
so this is safe in Streamlit's script threads.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import Any

import altair as alt
import pandas as pd

Builder = Callable[[Any, list, list], alt.TopLevelMixin]

#: numbers no chart draws; each stands for one of the builder's ``numbers`` in the cached spec
SENTINELS = tuple(float(f"-9.87654321{i:02d}e+300") for i in range(64))
_THEME_CONFIG = {"view": {"continuousWidth": 300, "continuousHeight": 300}}  # Altair's default theme adds this


def slot_name(i: int) -> str:
    return f"slot{i}"


def spec(build: Builder, layout: Hashable, data: Sequence[pd.DataFrame], numbers: Sequence[float] = ()) -> dict:
    """The Vega-Lite spec of ``build(layout, data, numbers)``, its datasets named ``slot0``, ``slot1``, ...

    Examples
    --------
    >>> def bars(title, data, numbers):
    ...     return alt.Chart(data[0], title=title).mark_bar().encode(
    ...         x="k:N", y=alt.Y("v:Q", scale=alt.Scale(domain=[0, numbers[0]])))
    >>> s = spec(bars, "sales", [pd.DataFrame({"k": ["a", "b"], "v": [1.0, 3.0]})], [4.0])
    >>> s["data"], s["encoding"]["y"]["scale"]["domain"], list(s["datasets"]["slot0"]["v"])
    ({'name': 'slot0'}, [0, 4.0], [1.0, 3.0])
    """
    if len(numbers) > len(SENTINELS):
        raise ValueError(f"at most {len(SENTINELS)} numbers, got {len(numbers)}")
    template, constants = _template(build, layout, len(data), len(numbers))
    out = _fill(template, {s: float(v) for s, v in zip(SENTINELS, numbers, strict=False)})
    out["datasets"] = {**constants, **{slot_name(i): frame for i, frame in enumerate(data)}}
    return out


@lru_cache(maxsize=512)
def _template(build: Builder, layout: Hashable, n_data: int, n_numbers: int) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Altair's spec of the builder on placeholders (validated, once per layout), and the data frames the builder
    made itself (named const0, const1, ...)."""
    chart = build(layout, [alt.NamedData(name=slot_name(i)) for i in range(n_data)], list(SENTINELS[:n_numbers]))
    constants = _name_frames(chart, "const")
    return _to_dict(chart), constants


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


def _name_frames(chart: alt.TopLevelMixin, prefix: str) -> dict[str, pd.DataFrame]:
    """Swap every data frame in the chart (and its layers and panels) for a name; return {name: frame}."""
    frames: dict[int, tuple[str, pd.DataFrame]] = {}

    def swap(node: Any) -> None:
        data = getattr(node, "data", None)
        if isinstance(data, pd.DataFrame):
            name, _ = frames.setdefault(id(data), (f"{prefix}{len(frames)}", data))
            node.data = alt.NamedData(name=name)
        for attr in ("layer", "concat", "hconcat", "vconcat"):
            for sub in getattr(node, attr, None) or ():
                swap(sub)
        if isinstance(getattr(node, "spec", None), alt.SchemaBase):  # facet / repeat
            swap(node.spec)

    swap(chart)
    return dict(frames.values())


def _to_dict(chart: alt.TopLevelMixin) -> dict:
    """chart.to_dict() (validated) as st.altair_chart has it: without Altair's default theme."""
    out = chart.to_dict()
    if out.get("config") == _THEME_CONFIG:
        del out["config"]
    return out


def _fill(node: Any, numbers: dict[float, float]) -> Any:
    """A copy of a JSON-like structure with every placeholder number replaced."""
    if isinstance(node, dict):
        return {k: _fill(v, numbers) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, numbers) for v in node]
    if isinstance(node, float):
        return numbers.get(node, node)
    return node
