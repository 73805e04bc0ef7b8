"""The fast chart path (attn_ui.vega, charts.heatmap_spec, layout.cached_chart) draws what Altair would.

References are independent of the fast path: Streamlit's own conversion of the Altair chart (what
st.altair_chart sends), and block means written out here in numpy.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest
from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

from attn_ui import charts, vega

from .apptools import new_app


def _structure(spec: dict) -> dict:
    """The spec without its data (names differ between the two paths) and with Altair's view names unified."""
    text = re.sub(r"view_[0-9a-f]+_", "view_", json.dumps(spec, default=str))

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("data", "datasets")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(json.loads(text))


def _only_frame(spec: dict):
    (data,) = spec["datasets"].values()
    if isinstance(data, bytes):  # Streamlit's conversion holds Arrow bytes
        data = pa.ipc.open_stream(data).read_all().to_pandas()
    return data.reset_index(drop=True)


CASES = [
    (3, 4, {}),
    (3, 3, {"kind": "weights", "select": "cell", "x_title": "key", "y_title": "query"}),
    (4, 4, {"domain": (-2.0, 2.0), "precision": 2, "title": "T"}),
    (6, 6, {"kind": "weights", "masked": np.tril(np.ones((6, 6), dtype=bool)) == 0}),
    (64, 64, {}),
    (100, 30, {"kind": "weights"}),  # drawn in blocks
]


@pytest.mark.parametrize(("r", "c", "options"), CASES)
def test_heatmap_spec_is_what_st_altair_chart_sends(r, c, options):
    rng = np.random.default_rng(r * 100 + c)
    values = rng.normal(size=(r, c))
    values[rng.random((r, c)) < 0.2] = -np.inf  # masked scores
    rows, cols = [f"{i}: t{i}" for i in range(r)], [str(j) for j in range(c)]
    for _ in range(2):  # the second call is served from the cached template
        fast = charts.heatmap_spec(values, rows, cols, **options)
        slow = _convert_altair_to_vega_lite_spec(charts.heatmap(values, rows, cols, **options))
        assert _structure(fast) == _structure(slow)
        assert _only_frame(fast).astype(str).equals(_only_frame(slow).astype(str))
        values = values * 3 + 1  # new numbers, same layout: only the data and the colour domain change


def test_a_large_heatmap_draws_block_means_and_says_so():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(256, 100))
    values[:, 0] = -np.inf  # a masked key: the first column of blocks averages the others
    spec = charts.heatmap_spec(values, [f"t{i}" for i in range(256)], [str(j) for j in range(100)], title="S")
    frame = _only_frame(spec)
    assert len(frame) == 64 * 50  # 256 rows in blocks of 4, 100 columns in blocks of 2
    expected = np.empty((64, 50))
    for i in range(64):
        for j in range(50):
            block = values[4 * i:4 * i + 4, 2 * j:2 * j + 2]
            expected[i, j] = block[np.isfinite(block)].mean()
    got = np.empty((64, 50))
    got[frame.row_i // 4, frame.col_i // 2] = frame.value
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert spec["title"] == "S · each cell: the mean of a block of 4 × 2"
    assert frame.row[0] == "0–3" and frame.col_i.max() == 98  # a block's first column, for a click


def test_numbers_placeholders_are_replaced_everywhere():
    import altair as alt
    import pandas as pd

    def build(title, data, numbers):
        return alt.Chart(data[0], title=title).mark_point().encode(
            x=alt.X("a:Q", scale=alt.Scale(domain=[numbers[0], numbers[1]])), y="b:Q")

    frame = pd.DataFrame({"a": [1.0], "b": [2.0]})
    first = vega.spec(build, "t", [frame], [0.0, 5.0])
    second = vega.spec(build, "t", [frame], [-1.5, 2.5])
    assert first["encoding"]["x"]["scale"]["domain"] == [0.0, 5.0]
    assert second["encoding"]["x"]["scale"]["domain"] == [-1.5, 2.5]
    assert not any(str(s) in json.dumps(second, default=str) for s in vega.SENTINELS[:2])


def test_the_pages_draw_through_the_fast_path_without_errors():
    at = new_app()
    for page in ("pages/steps.py", "pages/scaling.py", "pages/masking.py", "pages/multihead.py"):
        at.switch_page(page).run()
        assert not at.exception
        assert at.get("vega_lite_chart")
