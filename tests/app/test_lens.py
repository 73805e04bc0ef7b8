"""A model that writes' logit lens (attn_ui.views.lens_views) with the tiny GPT-2 of tests/tiny_gpt2.py and the tiny
Llama of tests/tiny_llama.py as the operator's causal model: the section renders, its grid and its table are
attn_models' lens (CausalModel.logit_lens, tested against transformers in tests/models/test_logit_lens.py), its last
row is the page's own next token, and with a head switched off (and with the explorer's edits run back) it shows the
lens before and after: the changed model's, as transformers computes it (tests/models/reference_lens.npz)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

import attn_models
from attn_ui.views import lens_views
from attn_ui.views.generate_views import label
from attn_ui.views.model_output import percent

from .. import tiny_gpt2, tiny_llama
from ..models.test_logit_lens import REF
from .apptools import new_app, plain
from .test_generate import GENERATE, bar_charts, text_of
from .test_steps import elements

GRID = "The most probable next token after each layer"
NBSP = "\u00a0"
LONG = "the cat sat on the mat, the dog ran after the cat because it was tired"


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("lens_page")
    return {"gpt2": str(tiny_gpt2.build(root / "gpt2")), "llama": str(tiny_llama.build(root / "llama", "llama"))}


@pytest.fixture(params=["gpt2", pytest.param("llama", marks=pytest.mark.full)])
def family(request, monkeypatch, folders) -> str:
    """The server's causal model: the tiny GPT-2, then the tiny Llama, read from its folder, offline."""
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", folders[request.param])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return request.param


def page(prompt: str):
    at = new_app(GENERATE)
    at.text_input(key="gen_prompt").set_value(prompt).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def grid(at) -> dict[str, list]:
    """The lens grid's data, by column (row-major cells)."""
    for el in elements(at.main):
        if el.type == "vega_lite_chart" and json.loads(el.proto.spec).get("title") == GRID:
            return pa.ipc.open_stream(el.proto.datasets[0].data.data).read_all().to_pydict()
    raise AssertionError("no logit lens grid on the page")


def prompt_of(family: str) -> str:
    return (tiny_gpt2.PROMPTS if family == "gpt2" else tiny_llama.PROMPTS)[0]


def test_the_lens_is_the_models_and_its_last_row_the_next_token(family, folders):
    prompt = prompt_of(family)
    at = page(prompt)
    model = attn_models.load(folders[family])
    want = model.logit_lens(prompt, top=lens_views.TOP)
    cells = grid(at)
    n_rows, n_cols = want.ids.shape[:2]
    assert cells["row"][::n_cols] == lens_views.row_names(model.n_layers)
    assert cells["value"] == want.probs[:, :, 0].ravel().tolist()  # bit for bit
    assert cells["text"] == [lens_views.cell_text(want.labels[r][c][0]) for r in range(n_rows) for c in range(n_cols)]
    assert cells["rank"] == want.final_ranks.ravel().tolist()
    # the columns name the positions as every chart of the page does: the token's spaces shown (␣)
    assert cells["col"][:n_cols] == [f"{p}: {label(want.tokens[p])}" for p in want.positions]
    # the last row is the model's own next token: the page's bars (its next-token numbers) and forward's softmax
    bars = bar_charts(at)["Next token at T = 1"]
    assert label(want.labels[-1][-1][0]) == bars["categories"][0]
    assert abs(cells["value"][-1] - bars["probability"][0]) <= 1e-12
    logits = model.forward(prompt).logits[-1]
    e = np.exp(logits - logits.max())
    assert abs(cells["value"][-1] - (e / e.sum()).max()) <= 1e-14
    said = text_of(at)
    assert "The logit lens" in [h.value for h in at.header]
    assert plain(lens_views.first_top_words(want)) in said
    for r in range(n_rows):  # the last position's table: each layer's top tokens and probabilities
        tops = " · ".join(lens_views.token_p(t, float(p)) for t, p in zip(want.labels[r][-1], want.probs[r, -1],
                                                                               strict=True))
        assert plain(tops) in said and f"{percent(float(want.probs[r, -1, 0]))}".replace(" ", NBSP) in tops
    # against transformers (the lens's reference): the top token of every layer and position
    ref = "gpt2" if family == "gpt2" else "llama"
    assert np.array_equal(want.ids[..., 0], REF[f"{ref}_p0_ids"][..., 0])


@pytest.mark.full
def test_a_long_prompt_shows_its_last_positions_and_says_so(family, folders):
    at = page(LONG)
    n = len(attn_models.load(folders[family]).encode(LONG).ids)
    cells = grid(at)
    assert len(set(cells["col"])) == lens_views.COLUMNS < n
    assert cells["col"][-1].startswith(f"{n - 1}: ")
    assert f"The grid shows the prompt's last {lens_views.COLUMNS} of its {n} positions." in text_of(at)


def test_a_head_off_shows_the_lens_before_and_after(family, folders):
    prompt = prompt_of(family)
    at = page(prompt)
    at.multiselect(key="gen_ablate").select("L1 · H2").run()
    assert not at.exception and not at.error
    assert "Before and after: heads off" in [s.value for s in at.subheader]
    model = attn_models.load(folders[family])
    before = model.logit_lens(prompt, top=lens_views.TOP)
    after = model.logit_lens(prompt, top=lens_views.TOP,
                             intervention=attn_models.Intervention(ablate={(1, 2)}, how="mean"))
    ref = "gpt2" if family == "gpt2" else "llama"
    assert np.array_equal(after.ids[..., 0], REF[f"{ref}_p0_ablate_ids"][..., 0])  # transformers' with the head off
    said = text_of(at)
    assert plain(lens_views.change_words("With 1 head off", before, after)) in said
    for r, name in enumerate(lens_views.row_names(model.n_layers)):
        assert plain(f"| {name} | {lens_views.token_p(before.labels[r][-1][0], float(before.probs[r, -1, 0]))} | "
                     f"{lens_views.token_p(after.labels[r][-1][0], float(after.probs[r, -1, 0]))} |") in said


def test_the_explorers_edits_show_the_lens_before_and_after(folders, monkeypatch):
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", folders["gpt2"])
    at = page(tiny_gpt2.PROMPTS[0])
    at.selectbox(key="gen_layer").set_value(1).run()
    at.button(key="gen_open").click().run()
    cfg = at.session_state["config"]
    w_q = cfg.w_q.copy()
    w_q[2, 1] += 3.0
    edited = replace(cfg, w_q=w_q)
    at.session_state["config"] = edited
    at.switch_page(GENERATE).run()
    assert not at.exception and not at.error
    assert "Before and after: with your edits" in [s.value for s in at.subheader]
    model = attn_models.load(folders["gpt2"])
    after = model.logit_lens(tiny_gpt2.PROMPTS[0], top=lens_views.TOP, intervention=attn_models.Intervention(
        config=edited))
    assert plain(f"{lens_views.token_p(after.labels[-1][-1][0], float(after.probs[-1, -1, 0]))} |") in text_of(at)
