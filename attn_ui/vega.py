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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import Any

import altair as alt
import pandas as pd

Builder = Callable[[Any, list, list], alt.TopLevelMixin]

#: numbers no chart draws; each stands for one of the builder's ``numbers`` in the cached spec
SENTINELS = tuple(float(f"-9.87654321{i:02d}e+300") for i in range(16))
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
    template = _template(build, layout, len(data), len(numbers))
    out = _fill(template, {s: float(v) for s, v in zip(SENTINELS, numbers, strict=False)})
    out["datasets"] = {slot_name(i): frame for i, frame in enumerate(data)}
    return out


@lru_cache(maxsize=512)
def _template(build: Builder, layout: Hashable, n_data: int, n_numbers: int) -> dict:
    """Altair's spec of the builder on placeholders (validated), without datasets or the default theme."""
    chart = build(layout, [alt.NamedData(name=slot_name(i)) for i in range(n_data)], list(SENTINELS[:n_numbers]))
    out = chart.to_dict()  # validates against the Vega-Lite schema, once per layout
    if out.get("config") == _THEME_CONFIG:  # st.altair_chart converts without Altair's default theme
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
