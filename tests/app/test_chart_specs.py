"""The fast chart path (attn_ui.widgets.charts: Chart.spec, cached_chart) draws what Altair would.

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

from attn_ui.widgets import charts, heatmap

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
        data = pa.ipc.open_stream(data).read_all()
    if isinstance(data, pa.Table):
        data = data.to_pandas()
    return data.reset_index(drop=True)


CASES = [
    (3, 4, {}),
    (3, 3, {"kind": "weights", "select": "cell", "x_title": "key", "y_title": "query"}),
    (4, 4, {"domain": (-2.0, 2.0), "precision": 2, "title": "T"}),
    (6, 6, {"kind": "weights", "masked": np.tril(np.ones((6, 6), dtype=bool)) == 0}),
    (64, 64, {}),
    (100, 30, {"kind": "weights"}),  # drawn in blocks
]


def _with_literal_domain(spec: dict, frame) -> dict:
    """The fast spec with its data-driven colour domain (charts.data_domain) replaced by the numbers its data carries.

    Weights and masks have their fixed domain 0 … 1 in the spec already, and no domain columns.
    """
    if charts.DOMAIN_LO not in frame.columns:
        assert json.dumps(charts.data_domain(0)) not in json.dumps(spec, default=str)
        return spec
    lo, hi = frame[charts.DOMAIN_LO].unique(), frame[charts.DOMAIN_HI].unique()
    assert len(lo) == len(hi) == 1  # every row carries the same domain
    text = json.dumps(spec, default=str).replace(json.dumps(charts.data_domain(0)), json.dumps([lo[0], hi[0]]))
    return json.loads(text)


@pytest.mark.parametrize(("r", "c", "options"), CASES)
def test_heatmap_spec_is_what_st_altair_chart_sends(r, c, options):
    """The same chart as Altair's, its colour domain travelling in the data instead of the spec."""
    rng = np.random.default_rng(r * 100 + c)
    values = rng.normal(size=(r, c))
    values[rng.random((r, c)) < 0.2] = -np.inf  # masked scores
    rows, cols = [f"{i}: t{i}" for i in range(r)], [str(j) for j in range(c)]
    for _ in range(2):  # the second call is served from the cached template
        fast = heatmap.heatmap(values, rows, cols, **options).spec()
        slow = _convert_altair_to_vega_lite_spec(heatmap.heatmap(values, rows, cols, **options).altair())
        fast_frame = _only_frame(fast)
        on_canvas = fast.pop("usermeta", None) == {"embedOptions": {"renderer": "canvas"}}
        has_text = "text" in fast_frame.columns  # numbers drawn on the cells
        assert on_canvas == (len(fast_frame) >= heatmap.CANVAS_CELLS and not has_text)  # many cells, no text
        assert _structure(_with_literal_domain(fast, fast_frame)) == _structure(slow)
        data = fast_frame.drop(columns=[charts.DOMAIN_LO, charts.DOMAIN_HI], errors="ignore")
        assert data.astype(str).equals(_only_frame(slow).astype(str))
        values = values * 3 + 1  # new numbers, same layout: only the data and the colour domain change


@pytest.mark.parametrize(("r", "c", "options"), CASES)
def test_new_numbers_in_the_same_layout_keep_the_spec(r, c, options):
    """Only the data changes, so the browser updates the drawn chart instead of building it again."""
    rng = np.random.default_rng(r * 100 + c)
    values = rng.uniform(1.0, 2.0, size=(r, c))  # and + 0.5 below: as many characters per number, new domain
    rows, cols = [f"{i}: t{i}" for i in range(r)], [str(j) for j in range(c)]
    first = heatmap.heatmap(values, rows, cols, **options).spec()
    second = heatmap.heatmap(values + 0.5, rows, cols, **options).spec()
    assert _structure(first) == _structure(second)
    assert not _only_frame(first).equals(_only_frame(second))
    if "domain" not in options and options.get("kind", "signed") == "signed":
        assert _only_frame(second)[charts.DOMAIN_HI].iloc[0] == pytest.approx(values.max() + 0.5)


def test_a_large_heatmap_draws_block_means_and_says_so():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(256, 100))
    values[:, 0] = -np.inf  # a masked key: the first column of blocks averages the others
    spec = heatmap.heatmap(values, [f"t{i}" for i in range(256)], [str(j) for j in range(100)], title="S").spec()
    frame = _only_frame(spec)
    assert len(frame) == 32 * 25  # at most 32 blocks a side: 256 rows in blocks of 8, 100 columns in blocks of 4
    expected = np.empty((32, 25))
    for i in range(32):
        for j in range(25):
            block = values[8 * i:8 * i + 8, 4 * j:4 * j + 4]
            expected[i, j] = block[np.isfinite(block)].mean()
    got = np.empty((32, 25))
    got[frame.row_i // 8, frame.col_i // 4] = frame.value
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert spec["title"] == "S · each cell: the mean of a block of 8 × 4"
    assert frame.row[0] == "0–7" and frame.col_i.max() == 96  # a block's first column, for a click


def test_domains_travel_in_the_data_and_the_spec_reads_them():
    import altair as alt
    import pandas as pd

    def build(title, data, domains):
        return alt.Chart(data[0], title=title).mark_point().encode(
            x=alt.X("a:Q", scale=alt.Scale(domain=domains[0])), y="b:Q")

    frame = pd.DataFrame({"a": [1.0], "b": [2.0]})
    first = charts.spec(build, "t", [frame], [(0.0, 5.0)])
    second = charts.spec(build, "t", [frame], [(-1.5, 2.5)])
    assert first["encoding"]["x"]["scale"]["domain"] == charts.data_domain(0)
    assert {k: v for k, v in first.items() if k != "datasets"} == {k: v for k, v in second.items() if k != "datasets"}
    assert second["datasets"]["slot0"][[charts.DOMAIN_LO, charts.DOMAIN_HI]].values.tolist() == [[-1.5, 2.5]]
    table = charts.spec(build, "t", [charts.table({"a": [1.0], "b": [2.0]})], [(-1.5, 2.5)])["datasets"]["slot0"]
    assert table.select([charts.DOMAIN_LO, charts.DOMAIN_HI]).to_pylist() == [{"domain_lo": -1.5, "domain_hi": 2.5}]
    assert list(frame.columns) == ["a", "b"]  # the caller's frame is left as it was
    first["title"] = "patched"  # what Streamlit may do to the spec it is given
    assert charts.spec(build, "t", [frame], [(0.0, 5.0)])["title"] == "t"


def test_the_pages_draw_through_the_fast_path_without_errors():
    at = new_app()
    for page in ("pages/steps.py", "pages/scaling.py", "pages/masking.py", "pages/multihead.py"):
        at.switch_page(page).run()
        assert not at.exception
        assert at.get("vega_lite_chart")


def test_weights_drawn_in_blocks_take_their_colours_from_0_to_the_largest_mean():
    """Attention over 256 keys: every block mean is about 1/256, one pale colour on a 0 … 1 scale."""
    rng = np.random.default_rng(3)
    w = rng.random((256, 256))
    w /= w.sum(axis=1, keepdims=True)  # rows of weights, each summing to 1
    chart = heatmap.heatmap(w, [f"t{i}" for i in range(256)], [f"t{i}" for i in range(256)], kind="weights")
    frame = _only_frame(chart.spec())
    means = w.reshape(32, 8, 32, 8).mean(axis=(1, 3))  # [32, 32] blocks of 8 × 8
    assert frame[charts.DOMAIN_LO].iloc[0] == 0.0 and frame[charts.DOMAIN_HI].iloc[0] == means.max()
    assert chart.spec()["title"].endswith("colours from 0 to the largest mean")
    small = heatmap.heatmap(w[:4, :4], list("abcd"), list("abcd"), kind="weights")  # drawn cell by cell: 0 … 1
    assert small.layout.fixed_domain == (0.0, 1.0)


def _vega(expr: str, datum: dict) -> str:
    """Evaluate the few Vega expression forms a heatmap's calculate transforms use, for one data row: string
    literals, ``datum.<field>``, ``a + b``, ``cond ? a : b`` and ``format(<number>, "")`` (here Python's 12
    significant digits, with "−": Vega's d3-format writes a few numbers otherwise, 1e-05 as 0.00001, and the
    e2e tests read those in Chromium). Anything else fails the test."""
    expr = expr.strip()
    depth, quoted, parts, start = 0, False, [], 0
    for i, ch in enumerate(expr):  # split on the top level's " + " and " ? ", " : "
        if ch == '"' and (i == 0 or expr[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
        elif not quoted and depth == 0 and expr[i:i + 3] in (" + ", " ? ", " : "):
            parts += [expr[start:i], expr[i + 1]]
            start = i + 3
    parts.append(expr[start:])
    if "?" in parts:  # cond ? a : b (its branches hold no "+" here)
        q, c = parts.index("?"), parts.index(":")
        cond = _vega(" ".join(parts[:q]), datum)
        return _vega(" ".join(parts[q + 1:c]), datum) if cond else _vega(" ".join(parts[c + 1:]), datum)
    if len(parts) > 1:
        return "".join(_vega(p, datum) for p in parts[::2])
    if expr.startswith("(") and expr.endswith(")"):
        return _vega(expr[1:-1], datum)
    if expr.startswith('"'):
        return json.loads(expr)
    if m := re.fullmatch(r"datum\.(\w+)", expr):
        return datum[m[1]] if isinstance(datum[m[1]], bool | np.bool_) else str(datum[m[1]])
    if m := re.fullmatch(r'format\(datum\.(\w+), ""\)', expr):
        return f"{datum[m[1]]:.12g}".replace("-", "−")
    if expr == heatmap.EXACT:
        return _js_string(datum["value"]).replace("-", "−", 1)
    raise AssertionError(f"not a Vega expression this test reads: {expr}")


def _js_string(x: float) -> str:
    """JavaScript's String(x): the shortest digits that read back as x (Python's repr), in decimal notation from
    1e-6 up to 1e21 and "1e-7", "1.5e+21" beyond; whole numbers without ".0"."""
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    if 1e-6 <= abs(x) < 1e21:
        return np.format_float_positional(x, unique=True, trim="-")
    mantissa, exponent = repr(x).split("e")
    return f"{mantissa}e{int(exponent):+d}"


def _descriptions(layer: dict, frame) -> tuple[list[str], str]:
    """A layer's description of every row of its data (its aria-labels) and the field its tooltip's value shows."""
    calcs = {t["as"]: t["calculate"] for t in layer.get("transform", []) if "calculate" in t}
    rows = frame.to_dict("records")
    for name, expr in calcs.items():  # in order: a calculated field may read an earlier one
        for row in rows:
            row[name] = _vega(expr, row)
    described = layer["encoding"]["description"]["field"]
    return [row[described] for row in rows], rows


@pytest.mark.parametrize("kind", ["signed", "weights"])
def test_a_masked_cell_is_described_and_tooltipped_as_masked(kind):
    """A screen reader reading a masked (grey) cell hears "masked", not the number the cell is drawn with (the
    bottom of the colour scale, or a weight 0); so does the tooltip. The other cells are described as Vega-Lite
    describes them by itself (axis titles, labels, then the value), with every digit."""
    values = np.array([[1.5, -np.inf, -np.inf], [-0.25, 2.0, -np.inf], [0.125, 1e-05, 3.0]])
    mask = ~np.isfinite(values)
    if kind == "weights":  # finite weights (0 where masked), drawn grey through ``masked``
        values = np.where(mask, 0.0, np.abs(values) / 4)
    labels = ["0: I", "1: saw", "2: [PAD]"]
    chart = heatmap.heatmap(values, labels, labels, kind=kind, x_title="key", y_title="query",
                            masked=mask if kind == "weights" else None)
    spec = chart.spec()
    frame = _only_frame(spec)
    rect, text = spec["layer"][:2]  # the cells and their numbers (then the focus layers)
    said, rows = _descriptions(rect, frame)
    for (i, j), v in np.ndenumerate(values):
        expected = "masked" if mask[i, j] else f"{v:.12g}".replace("-", "−")
        assert said[3 * i + j] == f"key: {labels[j]}; query: {labels[i]}; value: {expected}"
    assert said[2] == "key: 2: [PAD]; query: 0: I; value: masked"
    tooltip_value = rect["encoding"]["tooltip"][-1]["field"]  # the last field: the cell's number (or "masked")
    shown = [row[tooltip_value] for row in rows]
    assert [s for s, m in zip(shown, mask.ravel(), strict=True) if m] == ["masked"] * 3
    exact = {"signed": ["1.5", "−0.25", "0.125", "2", "0.00001", "3"],  # every digit, written out
             "weights": ["0.375", "0.0625", "0.03125", "0.5", "0.0000025", "0.75"]}[kind]
    assert sorted(s for s, m in zip(shown, mask.ravel(), strict=True) if not m) == sorted(exact)
    drawn, _ = _descriptions(text, frame)  # the number drawn on the cell is read too: "masked" on a masked one
    assert drawn[2] == "key: 2: [PAD]; query: 0: I; text: masked"
    assert drawn[0] == f"key: 0: I; query: 0: I; text: {frame.text[0]}"


def test_a_heatmap_without_masked_cells_keeps_vega_lites_own_descriptions():
    spec = heatmap.heatmap(np.eye(3), list("abc"), list("abc"), x_title="key", y_title="query").spec()
    for layer in spec["layer"]:
        assert "description" not in layer["encoding"]
    assert spec["layer"][0]["transform"] == [{"calculate": heatmap.EXACT, "as": "shown"}]  # the tooltip's only one
    assert "transform" not in spec["layer"][1]
    assert spec["layer"][0]["encoding"]["tooltip"][-1] == {"field": "shown", "title": "value", "type": "nominal"}


# ---- readable at a glance, never wider than the main column ------------------------------------------------------

#: the main column at a 1,400 px window, from Streamlit's layout: the sidebar is 300 px wide and the wide layout pads
#: the main block 5rem (80 px) each side (measured in Chromium: tests/e2e/test_readable.py checks it there)
MAIN_COLUMN_AT_1400 = 1400 - 320 - 2 * 80  # the window, the sidebar (attn_ui.shell.frame), the padding


def _spec_width(spec: dict) -> int:
    """A heatmap's width from its spec: its cells (step × columns), the widest row label it draws (≤ Vega's
    labelLimit of 180 px, 7 px a character; a block's "0–7" for a matrix drawn in blocks), the ticks and padding
    (14 px) and the colour legend (72 px)."""
    frame = _only_frame(spec)
    n_cols = len(set(frame.col))
    widest = min(180, max(7 * len(label) for label in set(frame.row)))
    return spec["width"]["step"] * n_cols + widest + 14 + 72


def _real_model_weights(n: int = 15) -> np.ndarray:
    """Softmax rows as a real head has them: one near 1, others from 1e-2 down to 1e-11."""
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=8.0, size=(n, n))
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("values,precision", [
    (_real_model_weights(), 4),  # the Weights: 15 tokens, 0.98 beside 1e-11
    (_real_model_weights(), 8),
    (np.random.default_rng(1).normal(scale=1e6, size=(15, 15)), 4),  # numbers of a million
    (np.random.default_rng(2).normal(size=(12, 40)), 4),  # wide: 40 columns
    (np.random.default_rng(3).normal(size=(20, 20)), 8),
    # drawn in blocks, no numbers on them (the caps' Q: 256 tokens × d_k 512 was 1,162 px in a 920 px column)
    (np.random.default_rng(4).normal(size=(256, 512)), 4),
    (np.random.default_rng(5).normal(size=(64, 769)), 4),
    (np.random.default_rng(6).normal(size=(3, 512)), 4),
])
def test_no_heatmap_is_wider_than_the_main_column(values, precision):
    rows = [f"{i}: sentence{i}" for i in range(values.shape[0])]
    cols = [f"{j}: sentence{j}" for j in range(values.shape[1])]
    spec = heatmap.heatmap(values, rows, cols, precision=precision, kind="weights" if values.max() <= 1 else "signed",
                           x_title="key", y_title="query").spec()
    assert _spec_width(spec) <= MAIN_COLUMN_AT_1400
    assert heatmap.heatmap_width(values, rows, precision) <= MAIN_COLUMN_AT_1400
    assert heatmap.MAIN_COLUMN_PX == MAIN_COLUMN_AT_1400


def test_the_real_model_weights_keep_their_numbers_in_one_notation():
    w = _real_model_weights()
    spec = heatmap.heatmap(w, [str(i) for i in range(15)], [str(j) for j in range(15)], kind="weights").spec()
    texts = list(_only_frame(spec).text)
    assert spec["layer"][1]["mark"]["fontSize"] >= 12  # written on the cells, at 12 px
    assert not any("e" in t for t in texts) and {len(t) for t in texts} <= {6, 7}  # "0.9800", "<0.0001"
    assert "<0.0001" in texts


def test_chart_text_is_at_least_12_px():
    for part in ("axis", "legend"):
        assert charts.CONFIG[part]["labelFontSize"] >= 12 and charts.CONFIG[part]["titleFontSize"] >= 12
    assert charts.CONFIG["title"]["fontSize"] >= 12
    spec = charts.themed(heatmap.heatmap(np.arange(12.0).reshape(3, 4) / 7, list("abc"), list("defg")).spec())
    assert spec["layer"][1]["mark"]["fontSize"] >= 12
    assert spec["config"]["axis"]["labelFontSize"] >= 12
    from attn_ui.views import multihead_views
    assert multihead_views.FONT >= 12
    block = multihead_views.head_block(np.ones((2, 8)) / 3, ["a", "b"], head=0, first_col=0, precision=2).to_dict()
    assert "labelFontSize" not in json.dumps(block)  # its column numbers as every axis: 12 px (charts.CONFIG)


def test_axis_labels_lie_flat_where_they_fit_and_turn_only_where_they_do_not():
    short = heatmap.heatmap(np.ones((3, 4)) / 3, list("abc"), ["0: a", "1: b", "2: c", "3: d"]).spec()
    assert short["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == 0  # flat (Streamlit's theme would turn them)
    assert short["layer"][0]["encoding"]["y"]["axis"]["titleAngle"] == 0  # the rows' title lies flat too
    tokens = [f"{j}: attention" for j in range(4)]  # wider than a cell: the cells widen to hold them flat
    widened = heatmap.heatmap(np.ones((3, 4)) / 3, list("abc"), tokens).spec()
    assert widened["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == 0
    assert widened["width"]["step"] >= 7 * len("0: attention")
    many = [f"{j}: attention" for j in range(15)]  # 15 of them would not fit the main column flat: turned
    turned = heatmap.heatmap(np.ones((3, 15)) / 3, list("abc"), many).spec()
    assert turned["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == -90


def test_the_tooltip_has_every_digit_and_the_cell_the_decimals_shown():
    values = np.array([[0.023612345678901234, 1 / 3]])
    spec = heatmap.heatmap(values, ["a"], ["x", "y"], precision=4).spec()
    frame = _only_frame(spec)
    assert list(frame.text) == ["0.0236", "0.3333"]
    _, rows = _descriptions({**spec["layer"][0], "encoding": {**spec["layer"][0]["encoding"],
                                                              "description": {"field": "shown"}}}, frame)
    assert [row["shown"] for row in rows] == ["0.023612345678901234", "0.3333333333333333"]


def test_a_heatmap_carries_its_cells_texts_only_where_it_writes_them():
    small = _only_frame(heatmap.heatmap(np.arange(12.0).reshape(3, 4) / 7, list("abc"), list("defg")).spec())
    assert list(small.text[:2]) == ["0.0000", "0.1429"]  # written on the cells
    rows = [str(i) for i in range(64)]
    large = heatmap.heatmap(np.arange(4096.0).reshape(64, 64) / 7, rows, rows)
    assert large.layout.font == 0 and "text" not in _only_frame(large.spec()).columns  # colour only: no texts


def _axes(chart) -> tuple[dict, dict]:
    spec = chart.to_dict()
    encoding = spec["layer"][0]["encoding"] if "layer" in spec else spec["encoding"]
    return encoding["x"]["axis"], encoding["y"]["axis"]


def test_every_token_is_labelled_where_the_cells_give_each_label_its_line():
    tokens = ["input1", "input2", "input3"]  # Learn's lessons: Vega's overlap rule hid input2 (issue 37)
    x, y = _axes(heatmap.heatmap(np.eye(3) / 2, tokens, tokens, kind="weights", x_title="key", y_title="query"))
    assert x["labelAngle"] == 0 and x["labelOverlap"] is False and y["labelOverlap"] is False
    src = ["0: ▁translate", "1: ▁English", "2: ▁to", "3: ▁French", "4: :", "5: ▁It", "6: ▁is", "7: ▁easy"]
    x, y = _axes(heatmap.heatmap(np.full((4, 8), 0.125), [f"{i}: ▁out" for i in range(4)], src, kind="weights",
                                 precision=2))  # A model that translates: turned, and each on a line of its own
    assert x["labelAngle"] == -45 and x["labelOverlap"] is False and y["labelOverlap"] is False
    many = [f"{i}: t{i}" for i in range(64)]  # 10 px cells: too small for every label's line
    x, y = _axes(heatmap.heatmap(np.zeros((64, 64)), many, many))
    assert x["labelOverlap"] == "greedy" and y["labelOverlap"] == "greedy"


def test_the_tests_check_every_spec_against_the_schema_and_a_server_does_not(monkeypatch):
    """charts.CHECK_ENV: on in the suite (tests/conftest.py), so a builder's mistake fails here; off on a server,
    where the same spec comes out unchecked (the check cost ≈ 70 ms per new layout)."""
    import os

    import altair as alt
    import pandas as pd

    def chart(mark: str) -> alt.Chart:
        out = alt.Chart(pd.DataFrame({"v": [1.0]})).mark_bar().encode(x="v:Q")
        out.mark = mark  # a builder's mistake Altair lets through until the spec is checked
        return out

    assert os.environ[charts.CHECK_ENV] == "1"
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        charts._to_dict(chart("wiggle"))
    checked = charts._to_dict(heatmap.heatmap(np.eye(3), list("abc"), list("abc"), title="W").altair())
    monkeypatch.delenv(charts.CHECK_ENV)
    assert charts._to_dict(chart("wiggle"))["mark"] == {"type": "wiggle"}  # sent as built, unchecked
    unchecked = charts._to_dict(heatmap.heatmap(np.eye(3), list("abc"), list("abc"), title="W").altair())
    assert _structure(unchecked) == _structure(checked)  # the same spec either way
