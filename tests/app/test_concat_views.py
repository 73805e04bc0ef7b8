"""AppTest of Multi-head's section 4 (the concatenation, and one head's block of it with every number printed) and
of the check (section 7 and under the output, section 5): each number against numpy written out here, and no
metric whose value is words."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from attn_core import load_preset, make_config

from .apptools import plain
from .test_follow_config import additive_two_heads
from .test_multihead import _frames, open_page, open_section, reference, wide_config

BLOCK_HEAD, BLOCK_ROWS = "heads_block_head", "heads_block_rows"
NUMBER = re.compile(r"^−?\d+(\.\d+)?(e[+−-]?\d+)?$")  # what a metric's value may be: a number as the app writes it


def pick_block_head(at, head: int) -> None:
    at.button_group(key=BLOCK_HEAD).set_value(head).run()
    assert not at.exception


def block_chart(at):
    """(spec, frame) of the chart of one head's block of concat (section 4), or None when it is not shown."""
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if "facet" in spec:
            (frame,) = [f for f in _frames(chart).values() if "head_col" in f.columns]
            return spec, frame
    return None


def block_matrix(at) -> tuple[np.ndarray, np.ndarray]:
    """The drawn block: (its concat column numbers, its values [rows, columns])."""
    _, frame = block_chart(at)
    cols = np.sort(frame["col_i"].unique())
    m = np.full((frame["row_i"].max() + 1, len(cols)), np.nan)
    m[frame["row_i"], frame["col_i"] - cols[0]] = frame["value"]
    return cols, m


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_each_heads_block_of_concat_is_that_heads_output_every_number_printed():
    """seed003_heads: 8 heads × 64 → concat 3 × 512, too wide to print; head h's block (columns 64h … 64h + 63)
    is printed, and equals head h's output softmax(Q_h K_hᵀ / 8) V_h written out in numpy."""
    cfg = load_preset("seed003_heads")
    at = open_section(open_page(cfg), 4)
    weights, concat, _ = reference(cfg)
    v = cfg.x @ cfg.w_v
    for head in (0, 5, 7):
        pick_block_head(at, head)
        assert at.session_state["head"] == head  # the head followed on the other sections and on Step by step
        cols, drawn = block_matrix(at)
        np.testing.assert_array_equal(cols, np.arange(64 * head, 64 * head + 64))
        head_output = weights[head] @ v[:, 64 * head:64 * head + 64]
        np.testing.assert_allclose(drawn, head_output, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(drawn, concat[:, cols], rtol=0, atol=0)
        spec, frame = block_chart(at)
        assert spec["title"]["text"] == f"head {head} = columns {64 * head}–{64 * head + 63} of concat"
        assert f"head {head}'s output, 3 rows (token) by 64 columns, every number printed" in spec["description"]
        assert list(frame["text"][:1]) == [f"{head_output[0, 0]:.4f}".replace("-", "−")]  # numbers on the cells
        assert frame["line"].max() >= 1  # 64 columns do not fit one line: wrapped


def test_the_block_pages_its_rows_at_the_caps_and_tooltips_name_their_fields():
    rng = np.random.default_rng(5)
    n_seq, d_model, width = 256, 16, 512
    cfg = make_config([f"t{i}" for i in range(n_seq)], rng.normal(size=(n_seq, d_model)),
                      *(rng.normal(size=(d_model, width)) * 0.2 for _ in range(3)), n_heads=16)
    at = open_section(open_page(cfg), 4)
    _, concat, _ = reference(cfg)
    pick_block_head(at, 3)
    rows = at.selectbox(key=BLOCK_ROWS)
    assert len(rows.options) == 16 and rows.value == 0  # 16 rows × 32 columns at a time
    rows.set_value(2).run()
    cols, drawn = block_matrix(at)
    np.testing.assert_array_equal(cols, np.arange(96, 128))
    np.testing.assert_allclose(drawn, concat[32:48, 96:128], rtol=1e-12, atol=1e-12)
    spec, _ = block_chart(at)
    rect = spec["spec"]["layer"][0]["encoding"]
    assert [t["title"] for t in rect["tooltip"]] == ["token", "column of concat", "column of head 3", "value"]


def test_a_small_concatenation_prints_every_number_itself():
    """wide_config, 2 heads: 4 × 16 fits with its numbers printed: no second view of one head."""
    at = open_section(open_page(wide_config(n_heads=2)), 4)
    assert block_chart(at) is None
    assert BLOCK_HEAD not in [b.key for b in at.button_group]


def test_one_head_block_when_the_single_head_is_too_wide():
    rng = np.random.default_rng(2)
    cfg = make_config(["a", "b", "c"], rng.normal(size=(3, 4)), *(rng.normal(size=(4, 40)) for _ in range(3)))
    at = open_section(open_page(cfg), 4)
    assert BLOCK_HEAD not in [b.key for b in at.button_group]  # one head: nothing to pick
    cols, drawn = block_matrix(at)
    _, concat, _ = reference(cfg)
    np.testing.assert_array_equal(cols, np.arange(40))
    np.testing.assert_allclose(drawn, concat, rtol=1e-12, atol=1e-12)
    assert "With one head, concat is that head's output (3 × 40)." in [plain(c.value) for c in at.caption]


def single_head(cfg) -> np.ndarray:
    """Single-head attention on the whole of W_Q, W_K, W_V: softmax(X W_Q (X W_K)ᵀ / √d) X W_V."""
    q, k, v = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k, cfg.x @ cfg.w_v
    s = q @ k.T / np.sqrt(q.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ v


@pytest.mark.parametrize("section", [5, 7])
def test_the_check_compares_concat_when_w_o_changes_the_width_and_says_why(section):
    """seed003_heads: output 3 × 4, single-head attention 3 × 512: concat (3 × 512) is compared, a caption says why;
    no metric's value is words."""
    cfg = load_preset("seed003_heads")
    at = open_section(open_page(cfg), section)
    _, concat, _ = reference(cfg)
    found = metrics(at)
    assert "max |multi-head output − single-head output|" not in found
    assert found["max |concat − single-head output|"] == f"{np.abs(concat - single_head(cfg)).max():.3g}"
    assert any("cannot be compared number for number" in plain(c.value) and "3 × 4" in plain(c.value)
               and "3 × 512" in plain(c.value) for c in at.caption)
    assert all(NUMBER.match(v) for v in found.values()), found
    if section == 7:
        assert float(found["max |head 0's block of concat − attention on its slices|"]) < 1e-12


def test_one_head_with_a_narrowing_w_o_compares_concat_exactly():
    """1 head, W_O 16 × 3: concat is single-head attention exactly (0), whatever W_O does after it."""
    cfg = wide_config()  # 1 head, W_O 16 × 3
    at = open_section(open_page(cfg), 7)
    found = metrics(at)
    assert float(found["max |concat − single-head output|"]) < 1e-12
    assert "W_O is 16 × 3, not the identity" in " ".join(plain(m.value) for m in at.markdown)


def test_the_check_compares_the_output_when_shapes_agree():
    cfg = replace(wide_config(n_heads=2), w_o=np.random.default_rng(1).normal(size=(16, 16)))
    at = open_section(open_page(cfg), 7)
    _, _, output = reference(cfg)
    found = metrics(at)
    assert found["max |multi-head output − single-head output|"] == f"{np.abs(output - single_head(cfg)).max():.3g}"
    assert not any("cannot be compared" in plain(c.value) for c in at.caption)


def test_a_score_without_single_head_form_says_so_in_a_caption_not_a_metric():
    """Additive scores with 2 heads: no single-head attention on the whole weights; the per-head check remains."""
    at = open_section(open_page(additive_two_heads()), 7)
    found = metrics(at)
    assert list(found) == ["max |head 0's block of concat − attention on its slices|"]
    assert float(found["max |head 0's block of concat − attention on its slices|"]) < 1e-12
    assert any("no single-head attention" in plain(c.value) for c in at.caption)


def test_every_chart_of_the_page_has_a_description():
    cfg = load_preset("seed003_heads")
    at = open_page(cfg)
    for number in (3, 4, 5):
        open_section(at, number)
        for chart in at.get("vega_lite_chart"):
            spec = json.loads(chart.proto.spec)
            assert len(spec.get("description", "")) > 40, (number, spec.get("title"))
