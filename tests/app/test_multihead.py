"""AppTest of the Multi-head page: every number it draws checked against numpy written out here."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow.ipc
import pytest
from streamlit.testing.v1 import AppTest

from attn_core import load_preset, make_config

from .apptools import APP, edit_cells, new_app, plain

PAGE = "pages/multihead.py"


# ---- the reference: PyTorch's multi-head formulation, written out in numpy -------------------------
def reference(cfg, *, mask=None, divisor=None):  # -> per-head weights, concat, output
    """softmax(Q_h K_hᵀ / √d_k) V_h per head (column slices), heads side by side, then @ W_O."""
    n = cfg.n_heads
    d_k, d_v = cfg.w_q.shape[1] // n, cfg.w_v.shape[1] // n
    q, k, v = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k, cfg.x @ cfg.w_v
    weights, outputs = [], []
    for h in range(n):
        q_h, k_h = q[:, h * d_k:(h + 1) * d_k], k[:, h * d_k:(h + 1) * d_k]
        v_h = v[:, h * d_v:(h + 1) * d_v]
        s = q_h @ k_h.T / (np.sqrt(d_k) if divisor is None else divisor)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        weights.append(a)
        outputs.append(a @ v_h)
    concat = np.concatenate(outputs, axis=1)
    return weights, concat, concat @ cfg.w_o


def wide_config(**options):
    """4 tokens, d_model 5, W_Q/W_K 8 wide, W_V 16 wide, W_O 16 × 3: 1, 2, 4 and 8 heads all divide."""
    rng = np.random.default_rng(7)
    return make_config(
        ["the", "cat", "sat", "down"], rng.normal(size=(4, 5)), rng.normal(size=(5, 8)), rng.normal(size=(5, 8)),
        rng.normal(size=(5, 16)), w_o=rng.normal(size=(16, 3)), **options,
    )


# ---- helpers ------------------------------------------------------------------------------------
def open_page(cfg=None) -> AppTest:
    """The app with ``cfg`` as its configuration (default: the app's own), on the Multi-head page."""
    at = AppTest.from_file(APP, default_timeout=60)
    if cfg is not None:
        at.session_state["config"] = cfg
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def _frames(chart) -> dict[str, pd.DataFrame]:
    return {d.name: pyarrow.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def _matrix(frame: pd.DataFrame) -> np.ndarray:
    """A heatmap's long frame (row_i, col_i, value) back into a matrix."""
    m = np.full((frame["row_i"].max() + 1, frame["col_i"].max() + 1), np.nan)
    m[frame["row_i"], frame["col_i"]] = frame["value"]
    return m


SECTION_SHOWN, WEIGHTS_SHOWN = "heads_section_shown", "heads_weights_shown"


def choose(at: AppTest, key: str, label: str) -> AppTest:
    """Click ``label`` on the segmented control ``key`` (a page's view picker), as the browser does."""
    picker = at.button_group(key=key)
    assert label in picker.options, picker.options
    if picker.value != label:
        picker.set_value(label).run()
        assert not at.exception
    return at


def open_section(at: AppTest, number: int) -> AppTest:
    """Choose section ``number`` (3 to 7) above the sections: only the chosen one runs."""
    (label,) = [o for o in at.button_group(key=SECTION_SHOWN).options if o.startswith(f"{number} ·")]
    return choose(at, SECTION_SHOWN, label)


def chart_matrix(at: AppTest, title: str) -> np.ndarray:
    """The matrix drawn by the chart titled ``title`` (its one dataset with cell values): concat (section 4) or
    the output (section 5)."""
    open_section(at, 4 if title.startswith("concat") else 5)
    for chart in at.get("vega_lite_chart"):
        if json.loads(chart.proto.spec).get("title") == title:
            (frame,) = [f for f in _frames(chart).values() if "value" in f.columns]
            return _matrix(frame)
    raise AssertionError(f"no chart titled {title!r}")


def head_panels(at: AppTest) -> list[np.ndarray]:
    """The per-head small multiples (section 3), in order: each panel's attention weights."""
    open_section(at, 3)
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if "concat" in spec:
            frames = _frames(chart)
            panels = []
            for panel in spec["concat"]:
                assert (panel.get("title") or panel["layer"][0]["title"]) == f"head {len(panels)}"
                name = (panel.get("data") or panel["layer"][0].get("data") or spec["data"])["name"]
                panels.append(_matrix(frames[name]))
            return panels
    raise AssertionError("no per-head small multiples")


def choose_heads(at: AppTest, n: int) -> AppTest:
    at.number_input(key="heads_wanted").set_value(n).run()
    assert not at.exception
    return at


def metric(at: AppTest, label_start: str) -> str:
    if label_start.startswith("max |"):  # the check, section 7
        open_section(at, 7)
    (m,) = [m for m in at.metric if m.label.startswith(label_start)]
    return m.value


# ---- the tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
def test_heads_weights_concat_and_output_equal_numpy(n_heads):
    at = choose_heads(open_page(wide_config()), n_heads)
    cfg = at.session_state["config"]
    assert cfg.n_heads == n_heads
    weights, concat, output = reference(cfg)

    panels = head_panels(at)
    assert len(panels) == n_heads
    for got, want in zip(panels, weights, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chart_matrix(at, "concat = [head 0 | head 1 | …]"), concat, rtol=1e-12, atol=1e-12)

    assert f"**concat** · shape 4 × 16 = [n_seq, n_heads·d_v] = [4, {n_heads}·{16 // n_heads}]" in [
        plain(m.value) for m in at.markdown
    ]
    heads = "heads" if n_heads > 1 else "head"
    assert any(m.value.startswith(
        f"**{n_heads} {heads}** (valid for these widths: **1, 2, 4, 8**) · d_k per head **{8 // n_heads}** (8 columns "
        f"of W_Q and W_K ÷ {n_heads}) · d_v per head **{16 // n_heads}** (16 columns of W_V ÷ {n_heads}) · concat "
        "width n_heads·d_v **16**  \n") for m in at.markdown)


def chart_titles(at: AppTest) -> list[str]:
    return [str(json.loads(chart.proto.spec).get("title", "")) for chart in at.get("vega_lite_chart")]


def test_only_the_chosen_weight_matrix_and_grid_are_built():
    """W_Q, W_K or W_V is chosen on a segmented control and its grid is a lazy expander: an edit reruns one chart,
    no hidden grid."""
    at = open_page(wide_config())
    assert [t.split(" ·")[0] for t in chart_titles(at) if t.startswith("W_")] == ["W_Q"]
    assert "w_q_editor_0" not in at.session_state  # the sidebar's edit panel shows X's grid, the one grid drawn
    choose(at, WEIGHTS_SHOWN, "W_K")
    assert [t.split(" ·")[0] for t in chart_titles(at) if t.startswith("W_")] == ["W_K"]
    at.button_group(key="edit_matrix").set_value("w_k").run()
    assert not at.exception and "w_k_editor_0" in at.session_state and "x_editor_0" not in at.session_state


def test_the_chosen_views_are_kept_across_page_visits():
    """The weight matrix and the section the learner chose are still chosen when they come back to the page."""
    at = choose(open_section(open_page(wide_config()), 5), WEIGHTS_SHOWN, "W_V")
    at.switch_page("pages/steps.py").run()
    at.switch_page("pages/multihead.py").run()
    assert not at.exception
    assert at.button_group(key=WEIGHTS_SHOWN).value == "W_V"
    assert at.button_group(key=SECTION_SHOWN).value == "5 · Project with W_O"
    assert [t.split(" ·")[0] for t in chart_titles(at) if t.startswith(("W_", "output"))] == ["W_V", "output = concat"]


def test_head_bands_are_labelled_on_the_weights():
    at = choose_heads(open_page(wide_config()), 2)
    choose(at, WEIGHTS_SHOWN, "W_V")
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if str(spec.get("title", "")).startswith("W_V"):
            labels = [f for f in _frames(chart).values() if "label" in f.columns]
            assert [list(f["label"]) for f in labels] == [["head 0", "head 1"]]
            rules = [f for f in _frames(chart).values() if list(f.columns) == ["col_i"]]
            assert [list(f["col_i"]) for f in rules] == [[8]]  # the boundary between the two 8-column slices
            break
    else:
        raise AssertionError("no W_V chart")


def test_a_head_count_that_does_not_divide_gives_a_message_and_nearest_choices():
    at = choose_heads(open_page(wide_config()), 3)
    assert at.session_state["config"].n_heads == 1  # unchanged
    (warning,) = at.warning
    assert "3 heads do not fit" in warning.value
    assert "Valid choices: 1, 2, 4, 8" in warning.value
    assert "Nearest: 2 or 4" in warning.value
    assert not at.error

    at.button(key="heads_use_4").click().run()
    assert not at.exception
    assert at.session_state["config"].n_heads == 4
    assert at.number_input(key="heads_wanted").value == 4
    assert not at.warning


def test_seed003_heads_shows_the_3_by_512_concatenation():
    cfg = load_preset("seed003_heads")
    at = open_page(cfg)
    open_section(at, 4)
    assert "**concat** · shape 3 × 512 = [n_seq, n_heads·d_v] = [3, 8·64]" in [plain(m.value) for m in at.markdown]
    table = open_section(at, 6).main.dataframe[-1].value.set_index("array")
    assert table.loc["concat", "here"] == "3 × 512"
    assert table.loc["Q_h", "here"] == "3 × 64"
    assert table.loc["head_h", "how many"] == "8 (one per head)"
    assert table.loc["output", "here"] == "3 × 4"
    weights, concat, output = reference(cfg)
    np.testing.assert_allclose(chart_matrix(at, "concat = [head 0 | head 1 | …]"), concat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), output, rtol=1e-12, atol=1e-12)
    assert len(head_panels(at)) == 8


def test_one_head_with_identity_w_o_equals_single_head_attention():
    at = open_page(wide_config(n_heads=2))
    assert float(metric(at, "max |head 0's block")) < 1e-12  # each head is attention on its own slices
    at.button(key="heads_try_single").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.n_heads == 1
    np.testing.assert_array_equal(cfg.w_o, np.eye(16))
    assert float(metric(at, "max |multi-head output − single-head output|")) < 1e-12
    assert at.success
    # single-head attention written out: softmax(X W_Q (X W_K)ᵀ / √8) X W_V
    s = (cfg.x @ cfg.w_q) @ (cfg.x @ cfg.w_k).T / np.sqrt(8)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), a @ (cfg.x @ cfg.w_v), rtol=1e-12)


def test_scale_and_mask_apply_to_every_head():
    at = open_page(wide_config(n_heads=4, scale="none", mask_kind="causal"))
    weights, _, output = reference(at.session_state["config"], mask=np.tril(np.ones((4, 4), dtype=bool)), divisor=1)
    for got, want in zip(head_panels(at), weights, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert np.all(np.triu(got, 1) == 0)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), output, rtol=1e-12, atol=1e-12)
    (line,) = [plain(m.value) for m in at.markdown if "apply to every head" in plain(m.value)]
    assert "the causal mask apply to every head" in line
    assert line.startswith("**4 heads** (valid for these widths: **1, 2, 4, 8**)")


def test_w_o_edited_and_randomised_here():
    at = open_section(open_page(wide_config(n_heads=2)), 5)
    edit_cells(at, "w_o", {0: {0: 2.5}})
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.w_o[0, 0] == 2.5
    _, concat, _ = reference(cfg)
    w_o = cfg.w_o.copy()
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), concat @ w_o, rtol=1e-12, atol=1e-12)

    at.session_state["heads_w_o_randomise"] = True  # open the popover
    at.run()
    at.selectbox(key="heads_w_o_init").set_value("ones")
    at.button(key="heads_w_o_fill").click().run()
    assert not at.exception
    np.testing.assert_array_equal(at.session_state["config"].w_o, np.ones((16, 3)))
    want = np.repeat(concat.sum(axis=1, keepdims=True), 3, axis=1)  # every output column: the sum of concat's row
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), want, rtol=1e-12, atol=1e-12)


def test_a_rejected_w_o_value_is_named_on_other_pages_with_where_to_fix_it():
    at = open_section(open_page(wide_config(n_heads=2)), 5)
    before = at.session_state["config"]
    edit_cells(at, "w_o", {1: {2: "abc"}})
    assert at.session_state["config"] is before
    here = [plain(w.value) for w in at.warning if plain(w.value).startswith("Showing the last valid values")]
    assert len(here) == 1 and "W_O, row 1, column 2" in here[0]  # the banner on top, in the run of the edit
    for page in ("pages/steps.py", "pages/overview.py"):  # Step by step's panel does not offer W_O; Overview has none
        at.switch_page(page).run()
        (banner,) = [plain(w.value) for w in at.warning if plain(w.value).startswith("Showing the last valid values")]
        assert "W_O, row 1, column 2 is 'abc', not a number." in banner
    (banner,) = [plain(w.value) for w in at.warning if plain(w.value).startswith("Showing the last valid values")]
    assert banner.endswith("Fix it on Multi-head (section 5).")
    links = [el.proto.label for el in at.main if el.type == "page_link"]
    assert "Go to Multi-head (section 5)" in links and "Go to Inputs & weights" not in links


def test_editing_w_q_in_the_panel_changes_the_heads_on_this_page():
    at = open_page(wide_config(n_heads=2))
    at.button_group(key="edit_matrix").set_value("w_q").run()  # the sidebar's Edit the numbers
    edit_cells(at, "w_q", {1: {5: -3.0}})
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.w_q[1, 5] == -3.0
    weights, _, _ = reference(cfg)
    np.testing.assert_allclose(head_panels(at)[1], weights[1], rtol=1e-12, atol=1e-12)


def test_picking_a_head_opens_it_on_step_by_step():
    at = open_page(wide_config(n_heads=4))
    at.button_group(key="heads_pick").set_value(2).run()
    assert at.session_state["head"] == 2
    assert "Head 2 uses columns 4–5 of W_Q and W_K and columns 8–11 of W_V." in [plain(c.value) for c in at.caption]
    at.button(key="heads_open_steps").click().run()
    assert not at.exception
    assert at.session_state["head"] == 2
    assert "Multi-head attention" not in [t.value for t in at.title]


def test_largest_configuration_draws_a_bounded_number_of_cells():
    rng = np.random.default_rng(3)
    n_seq, d_model, width = 64, 256, 512
    cfg = make_config([f"t{i}" for i in range(n_seq)], rng.normal(size=(n_seq, d_model)),
                      *(rng.normal(size=(d_model, width)) * 0.05 for _ in range(3)), n_heads=16)
    at = open_page(cfg)
    _, concat, output = reference(cfg)
    drawn = chart_matrix(at, "concat = [head 0 | head 1 | …]")
    assert drawn.shape == (4, 512)  # 2,048 cells: 4 tokens at a time, every column
    np.testing.assert_allclose(drawn, concat[:4], rtol=1e-10, atol=1e-12)
    rows = at.selectbox(key="heads_concat_rows")
    assert len(rows.options) == 16 and rows.options[2] == "rows 8–11"
    rows.set_value(2).run()
    np.testing.assert_allclose(chart_matrix(at, "concat = [head 0 | head 1 | …]"), concat[8:12], rtol=1e-10,
                               atol=1e-12)
    assert sum(p.size for p in head_panels(at)) <= 12_000


def test_sections_3_to_7_are_built_one_at_a_time_and_section_5_compares_with_single_head():
    """Only the chosen section runs; section 5 shows the output and its distance from single-head attention."""
    from dataclasses import replace

    at = open_page(replace(wide_config(n_heads=2), w_o=np.random.default_rng(1).normal(size=(16, 16))))
    assert [t for t in chart_titles(at) if not t.startswith("W_")] == [""]  # section 3: the heads' panels
    open_section(at, 5)
    assert [t for t in chart_titles(at) if not t.startswith("W_")] == ["output = concat · W_O"]
    cfg = at.session_state["config"]
    q, k, v = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k, cfg.x @ cfg.w_v  # one head over all 8 / 16 columns
    s = q @ k.T / np.sqrt(8)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    single = e / e.sum(axis=1, keepdims=True) @ v
    _, _, output = reference(cfg)
    (m,) = [m for m in at.metric if m.label == "max |multi-head output − single-head output|"]
    assert m.value == f"{np.abs(output - single).max():.3g}"


# ---- how the page starts: several heads and a W_O that mixes them, one click away -------------------------
def xavier_w_o(shape: tuple[int, int]) -> np.ndarray:
    """The W_O "Split" and "Mix the heads" give: Xavier uniform √(6 / (rows + cols)), seed 0, written out."""
    limit = np.sqrt(6 / (shape[0] + shape[1]))
    return np.random.default_rng(0).uniform(-limit, limit, shape)


def test_one_head_offers_a_split_with_a_mixing_w_o_that_keeps_every_value():
    at = open_page()  # the app's own configuration: seed 000, one head, W_O = I (3 × 3)
    before = at.session_state["config"]
    (box,) = [plain(m.value) for m in at.markdown if "Your configuration has 1 head" in plain(m.value)]
    assert box.startswith("**Your configuration has 1 head and W_O = I** (the identity), so multi-head attention is "
                          "plain attention here")
    split = at.button(key="heads_split")
    assert split.label == "Split into 3 heads, with a W_O that mixes them"  # 3 columns: 3 is the only split
    assert ("Every value of X, W_Q, W_K and W_V is kept: each head takes its own slice of their columns, d_k = 1 of "
            "W_Q and W_K and d_v = 1 of W_V. W_O becomes Xavier/Glorot uniform, seed 0 (Randomise W_O in section 5 "
            "gives it back). Undo in the sidebar takes the split back.") in [plain(c.value) for c in at.caption]
    assert before.n_heads == 1  # opening the page changed nothing
    split.click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert cfg.n_heads == 3 and at.number_input(key="heads_wanted").value == 3
    for name in ("x", "w_q", "w_k", "w_v"):
        np.testing.assert_array_equal(cfg.matrix(name), before.matrix(name))
    np.testing.assert_array_equal(cfg.w_o, xavier_w_o((3, 3)))
    weights, concat, output = reference(cfg)
    np.testing.assert_allclose(chart_matrix(at, "concat = [head 0 | head 1 | …]"), concat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), output, rtol=1e-12, atol=1e-12)
    assert np.abs(output - concat).max() > 0.5  # the projection is not the concatenation again
    assert not [m for m in at.markdown if "Your configuration has 1 head" in m.value]
    assert "heads_mix_w_o" not in [b.key for b in at.button]  # W_O mixes: nothing to offer
    # the W_O popover, as it opens, gives the same W_O back
    at.session_state["heads_w_o_randomise"] = True
    at.run()
    assert (at.selectbox(key="heads_w_o_init").value, at.number_input(key="heads_w_o_seed").value) == (
        "xavier_uniform", 0)
    at.button(key="heads_w_o_fill").click().run()
    np.testing.assert_array_equal(at.session_state["config"].w_o, xavier_w_o((3, 3)))


def test_the_split_is_the_smallest_count_above_one_and_keeps_a_w_o_of_the_learner():
    at = open_page(wide_config())  # widths 8 and 16: 2 divides both; W_O 16 × 3, not the identity
    split = at.button(key="heads_split")
    assert split.label == "Split into 2 heads (your W_O kept)"
    w_o = at.session_state["config"].w_o
    split.click().run()
    assert at.session_state["config"].n_heads == 2
    np.testing.assert_array_equal(at.session_state["config"].w_o, w_o)


def test_widths_without_a_common_divisor_say_so_instead_of_offering_a_split():
    rng = np.random.default_rng(2)
    at = open_page(make_config(["a", "b"], rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 3)),
                               rng.normal(size=(3, 5))))
    assert "heads_split" not in [b.key for b in at.button]
    (box,) = [plain(m.value) for m in at.markdown if "Your configuration has 1 head" in plain(m.value)]
    assert "No head count above 1 divides these widths (W_Q and W_K have 3 columns, W_V has 5)" in box


def test_with_w_o_the_identity_the_page_says_concat_and_output_are_the_same_matrix():
    at = open_page(replace(wide_config(n_heads=2), w_o=np.eye(16)))
    open_section(at, 4)
    assert "W_O is the identity, so the output (section 5) is this same matrix: concat · I = concat." in [
        plain(c.value) for c in at.caption]
    open_section(at, 5)
    assert any("W_O is the identity: the output below is concat (section 4) unchanged" in plain(i.value)
               for i in at.info)
    at.button(key="heads_mix_w_o").click().run()
    assert not at.exception
    cfg = at.session_state["config"]
    np.testing.assert_array_equal(cfg.w_o, xavier_w_o((16, 16)))
    _, concat, output = reference(cfg)
    np.testing.assert_allclose(chart_matrix(at, "output = concat · W_O"), output, rtol=1e-12, atol=1e-12)
    assert not at.info and "heads_mix_w_o" not in [b.key for b in at.button]


def test_changing_heads_keeps_the_general_score_weights_that_fit():
    """with_heads: W_a [d_q, n_heads·d_k] follows the per-head widths; every value that still fits is kept."""
    base = wide_config()
    w_a = np.arange(64, dtype=float).reshape(8, 8) / 10  # one head: d_q = d_k = 8
    at = choose_heads(open_page(replace(base, score="general", w_a=w_a)), 2)
    cfg = at.session_state["config"]
    assert cfg.n_heads == 2 and cfg.w_a.shape == (4, 8)  # d_q = 4 per head, 2 heads of d_k = 4
    np.testing.assert_array_equal(cfg.w_a, w_a[:4, :8])


@pytest.mark.parametrize(("typed", "said"), [
    (2.5, "n_heads: 2.5 is not a whole number. Still showing 1 head."),
    (99.0, "n_heads: 99 is over the cap of 16. Still showing 1 head."),
    (0.0, "n_heads: 0 is under 1; attention has at least one head. Still showing 1 head."),
    (None, "n_heads holds no number that can be read: type a whole number. Still showing 1 head."),
])
def test_a_head_count_that_is_no_head_count_is_refused_in_words(typed, said):
    """The box takes what is typed as typed (a browser's integer box read "1e1" as 1 and "2.5" as 2 without a word):
    what is not a whole head count from 1 to the cap is said, and the heads stay."""
    at = new_app("pages/multihead.py")
    before = at.session_state["config"]
    at.number_input(key="heads_wanted").set_value(typed).run()
    assert not at.exception, at.exception
    assert at.session_state["config"] is before
    assert [plain(w.value) for w in at.warning] == [said]


def test_a_head_count_typed_as_1e1_is_ten_heads():
    """"1e1" comes as 10.0: with widths of 30 columns, 10 heads of 3."""
    at = new_app("pages/multihead.py")
    rng = np.random.default_rng(5)
    cfg = at.session_state["config"]
    at.session_state["config"] = replace(cfg, w_q=rng.normal(size=(4, 30)), w_k=rng.normal(size=(4, 30)),
                                         w_v=rng.normal(size=(4, 30)), w_o=np.eye(30), n_heads=3)
    at.run()
    choose_heads(at, 10.0)
    assert at.session_state["config"].n_heads == 10 and not at.warning
