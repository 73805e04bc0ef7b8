"""A real model, on a tiny random BERT made here (no network): sentence, tokens, every head, one head opened in the
explorer (Step by step shows its weights), back to the model's weights after an edit, a link to it, and the
messages when there is no model to read."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import numpy as np
import pyarrow as pa
import pytest
from streamlit.proto.Block_pb2 import Block
from streamlit.testing.v1 import AppTest

import attn_models
from attn_core import configs_equal, share
from attn_ui.app import registry, state
from attn_ui.views import generate_views, model_views, translate_views
from attn_ui.widgets import text

from .. import fake_hub, tiny_bert, tiny_gpt2, tiny_t5
from .apptools import APP, edit_cells, plain
from .test_languages import english_left

MODEL, STEPS = registry.MODEL.file, registry.STEPS.file
SMALL = {**tiny_bert.CONFIG, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8}  # fits a link


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory):
    return tiny_bert.build(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def tiny(tiny_dir) -> attn_models.Model:
    return attn_models.load(str(tiny_dir))


@pytest.fixture(autouse=True)
def folders_allowed(monkeypatch):
    """These tests name checkpoint folders (made here, or all-MiniLM-L6-v2's): the operator's switch on."""
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")


def model_app(source: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["model_source"] = source
    at.run()
    at.switch_page(MODEL).run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info]))


def png_pixels(data: bytes) -> np.ndarray:  # -> uint8 [h, w, 3]
    """The RGB pixels of a PNG as model_views.png writes it (one IDAT, filter 0 on every row)."""
    w, h = struct.unpack(">II", data[16:24])
    idat = data.index(b"IDAT")
    size = struct.unpack(">I", data[idat - 4:idat])[0]
    rows = np.frombuffer(zlib.decompress(data[idat + 4:idat + 4 + size]), np.uint8).reshape(h, 1 + 3 * w)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, 3)


def chart_data(el) -> pa.Table:
    """A chart's own data (dataset slot0, attn_ui.widgets.charts), not the frames its builder made."""
    data = next(d for d in el.proto.datasets if d.name in ("slot0", "")) if len(el.proto.datasets) > 1 else \
        el.proto.datasets[0]
    return pa.ipc.open_stream(data.data.data).read_all()


def test_sentence_tokens_every_head_and_one_head(tiny_dir, tiny):
    at = model_app(str(tiny_dir))
    at.text_input(key="model_sentence").input(tiny_bert.TRICKY).run()
    assert not at.exception
    shown = texts(at)
    assert "10 WordPiece tokens" in shown
    assert "[CLS] · token · ##ize · ##r · ##s · play · ##ing · [UNK] · ! · [SEP]" in shown
    view = at.get("vega_lite_chart")[0]
    out = tiny.forward(tiny_bert.TRICKY)
    n = out.attentions.shape[-1]
    data = chart_data(view).to_pydict()  # the model view: one image per layer × head, its pixels the weights
    assert (data["layer"], data["head"]) == ([0] * 4 + [1] * 4, [0, 1, 2, 3] * 2)
    for layer, head, url, what in zip(data["layer"], data["head"], data["url"], data["what"], strict=True):
        pixels = png_pixels(base64.b64decode(url.removeprefix("data:image/png;base64,")))
        np.testing.assert_array_equal(pixels, model_views.blues(out.attentions[layer, head]))
        assert what == attn_models.describe_head(out.attentions[layer, head], out.tokens)

    at.selectbox(key="model_layer").select(1).run()
    at.selectbox(key="model_head").select(2).run()
    big = chart_data(at.get("vega_lite_chart")[1]).to_pydict()
    np.testing.assert_array_equal(np.array(big["value"]).reshape(n, n), out.attentions[1, 2])
    assert attn_models.describe_head(out.attentions[1, 2], out.tokens) in texts(at)


def side_by_side(at: AppTest):
    """The two boxes of the horizontal container that holds the model view: (its box, the box beside it)."""
    for block in at.main.children.values():
        if getattr(block, "type", "") == "flex_container" and len(block.children) == 2 \
                and block.proto.flex_container.direction == Block.FlexContainer.HORIZONTAL:
            grid, one = block.children.values()
            if grid.get("vega_lite_chart"):
                assert block.proto.flex_container.wrap  # on a narrow screen the large view comes right under
                return grid, one
    raise AssertionError("no horizontal container holds the model view")


@pytest.mark.parametrize("how", ["selectboxes", "a click"])
def test_the_head_picked_is_drawn_beside_the_grid(tiny_dir, tiny, how):
    """Layer 1, head 2 picked (by its Layer and Head boxes, or as a click on its thumbnail sets them): its large
    view is the next chart after the grid, in the box beside it, with its boxes, its words and its weights."""
    at = model_app(str(tiny_dir))
    at.text_input(key="model_sentence").input(tiny_bert.TRICKY).run()
    if how == "selectboxes":
        at.selectbox(key="model_layer").select(1).run()
        at.selectbox(key="model_head").select(2).run()
    else:  # what pick_from_view does with the click's selection (model_views.picked; e2e clicks for real)
        at.session_state["kept"]["model_layer"], at.session_state["kept"]["model_head"] = model_views.picked(
            {"pick": [{"layer": 1, "head": 2}]})
        at.run()
    assert not at.exception
    out = tiny.forward(tiny_bert.TRICKY)
    grid, one = side_by_side(at)
    assert [c.proto.id for c in at.get("vega_lite_chart")[:2]] == [grid.get("vega_lite_chart")[0].proto.id,
                                                                  one.get("vega_lite_chart")[0].proto.id]
    assert "url" in chart_data(grid.get("vega_lite_chart")[0]).column_names  # the grid: one image per head
    assert [b.key for b in one.selectbox] == ["model_layer", "model_head"]
    assert [b.value for b in one.selectbox] == [1, 2]
    assert one.subheader[0].value == "One head"
    assert plain(one.markdown[0].value).startswith("**Layer 1, head 2**: ")
    big = chart_data(one.get("vega_lite_chart")[0]).to_pydict()
    n = out.attentions.shape[-1]
    np.testing.assert_array_equal(np.array(big["value"]).reshape(n, n), out.attentions[1, 2])
    assert one.button[0].key == "model_open"
    spec = json.loads(grid.get("vega_lite_chart")[0].proto.spec)  # its hover cells name the sentence's tokens
    assert json.dumps(text.numbered(out.tokens)) in pair_expression(spec)


def pair_expression(spec: dict) -> str:
    """The Vega expression that writes a hover cell's "query → key" (the model view's calculate transform)."""
    hover = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rect" and "transform" in layer)
    return next(t["calculate"] for t in hover["transform"] if t.get("as") == "pair")


def hover_layer(spec: dict) -> dict:
    return next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rect" and "transform" in layer)


def test_thumbnail_rows_name_their_query_and_the_key_it_weighs_most():
    """Each thumbnail row's tooltip: layer, head, "query → key with the most weight" in text.numbered's labels (a
    right-to-left label isolated), that weight, what the head mostly does; one hover band per row of the image."""
    tokens = ("[CLS]", "שלום", "cat", "a\u202eb", "[SEP]")
    att = np.random.default_rng(0).dirichlet(np.ones(5), size=(2, 3, 5))  # [2 layers, 3 heads, 5, 5]
    chart = model_views.model_view(att, tokens)
    spec = chart.to_dict()
    hover = hover_layer(spec)
    assert [(t["field"], t["title"]) for t in hover["encoding"]["tooltip"]] == [
        ("layer", "layer"), ("head", "head"), ("pair", "query → key with the most weight"), ("weight", "weight"),
        ("what", "mostly")]
    assert "xOffset" not in hover["encoding"] and hover["encoding"]["yOffset"]["field"] == "q"  # a band per row
    names = ["0: [CLS]", "1: \u2068שלום\u2069", "2: cat", "3: \u2068a\u202eb\u2069", "4: [SEP]"]
    assert list(chart.layout.cells) == names
    assert pair_expression(spec) == f"{json.dumps(names)}[datum.q] + ' → ' + {json.dumps(names)}[datum.k]"
    calc = {t["as"]: t["calculate"] for t in hover["transform"] if "calculate" in t}
    assert (calc["layer"], calc["head"]) == ("floor(datum.panel / 3)", "datum.panel % 3")
    cells = chart.data[1].to_pydict()
    panel, q, k = (np.array(cells[c]) for c in ("panel", "q", "k"))
    assert sorted(zip(panel.tolist(), q.tolist(), strict=True)) == [(p, i) for p in range(6) for i in range(5)]
    weights = att.reshape(6, 5, 5)[panel, q]  # [30, 5]: each row's weights, written out
    np.testing.assert_array_equal(k, [int(np.argmax(row)) for row in weights])
    np.testing.assert_allclose(cells["weight"], weights.max(axis=1), rtol=1e-6)
    pick = spec["params"][0]
    assert pick["name"] == model_views.PICK and pick["views"] == [hover["name"]]  # a click on a band picks its head


def test_thumbnails_above_16_tokens_are_block_means_and_their_rows_name_the_block():
    tokens = tuple(f"t{i}" for i in range(40))  # 40 tokens: blocks of ⌈40/16⌉ = 3, 14 a side (the last: 1 token)
    att = np.random.default_rng(1).dirichlet(np.ones(40), size=(1, 2, 40))
    chart = model_views.model_view(att, tokens)
    names = chart.layout.cells
    assert (len(names), names[0], names[12], names[13]) == (14, "0: t0 … 2: t2", "36: t36 … 38: t38", "39: t39")
    means = np.array([[[[att[0, h, 3 * a:3 * a + 3, 3 * b:3 * b + 3].mean() for b in range(14)] for a in range(14)]
                       for h in range(2)]])  # [1, 2, 14, 14]
    cells = chart.data[1].to_pydict()
    panel, q, k = (np.array(cells[c]) for c in ("panel", "q", "k"))
    np.testing.assert_array_equal(k, means[0, panel, q].argmax(axis=1))
    np.testing.assert_allclose(cells["weight"], means[0, panel, q].max(axis=1), rtol=1e-6)
    for h, url in enumerate(chart.data[0].column("url").to_pylist()):
        pixels = png_pixels(base64.b64decode(url.removeprefix("data:image/png;base64,")))
        np.testing.assert_array_equal(pixels, model_views.blues(means[0, h]))
    spec = chart.to_dict()
    assert hover_layer(spec)["encoding"]["tooltip"][3]["title"] == "mean weight"
    assert spec["title"]["text"] == "each pixel: the mean of 3 × 3 tokens"


def test_open_in_the_explorer_shows_that_heads_weights_on_step_by_step(tiny_dir, tiny):
    at = model_app(str(tiny_dir))
    at.text_input(key="model_sentence").input(tiny_bert.SENTENCE).run()
    at.selectbox(key="model_layer").select(1).run()
    at.selectbox(key="model_head").select(3).run()
    at.button(key="model_open").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == registry.STEPS.page_heading  # opened on Step by step
    cfg = at.session_state["config"]
    assert configs_equal(cfg, tiny.layer_config(tiny_bert.SENTENCE, 1, head=3)) and at.session_state["head"] == 3
    weights = next(el for el in at.get("vega_lite_chart") if "steps_weights" in el.proto.id)
    data = chart_data(weights).to_pydict()
    expected = tiny.forward(tiny_bert.SENTENCE).attentions[1, 3]
    np.testing.assert_array_equal(np.array(data["value"]).reshape(9, 9), expected)
    sidebar = plain("\n".join(c.value for c in at.sidebar.caption)).replace("**", "")
    assert f"From {tiny_dir.name}, layer 1, on “{tiny_bert.SENTENCE}”" in sidebar and "constant 1" in sidebar
    assert str(tiny_dir.parent) not in sidebar  # the folder by its name: no server path for a visitor to see


def test_back_to_the_models_weights_after_an_edit(tiny_dir, tiny):
    at = model_app(str(tiny_dir))
    at.button(key="model_open").click().run()
    original = at.session_state["config"]
    at.switch_page(registry.INPUTS.file).run()
    edit_cells(at, "w_q", {0: {0: 5.0}})
    assert not at.exception and at.session_state["config"].w_q[0, 0] == 5.0
    at.switch_page(MODEL).run()
    assert "no longer the model's" in texts(at)
    at.button(key="model_back").click().run()
    assert not at.exception
    assert configs_equal(at.session_state["config"], original)
    assert "no longer the model's" not in texts(at)
    assert "b_O" in texts(at)


def test_a_link_to_a_model_layer_opens_the_same_thing(tmp_path):
    small = attn_models.load(str(tiny_bert.build(tmp_path, config=SMALL)))
    cfg = small.layer_config("the cat sat", 1, head=1)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["c"] = share.encode_link(cfg, "steps")
    at.run()
    assert not at.exception
    assert configs_equal(at.session_state["config"], cfg) and at.session_state["head"] == 1
    assert at.title[0].value == registry.STEPS.page_heading
    assert "layer 1, on “the cat sat”" in plain("\n".join(c.value for c in at.sidebar.caption)).replace("**", "")
    assert json.loads(share.to_json(cfg))["origin"]["layer"] == 1  # large ones travel as the file, origin and all


def test_no_network_and_no_cache_says_so_and_the_app_keeps_working(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = model_app("nobody-here/no-such-model")
    shown = texts(at)
    assert "could not be loaded" in shown and "give that folder" in shown
    at.switch_page(STEPS).run()
    assert not at.exception and at.title[0].value == registry.STEPS.page_heading


def test_a_model_over_the_caps_is_refused_naming_the_cap(tmp_path):
    big = tiny_bert.build(tmp_path, config={**tiny_bert.CONFIG, "num_attention_heads": 17, "hidden_size": 34})
    at = model_app(str(big))
    assert "over the cap of 16 (heads)" in texts(at)


def test_a_sentence_over_the_cap_is_refused(tiny_dir):
    at = model_app(str(tiny_dir))
    at.text_input(key="model_sentence").input("the cat " * 30).run()
    assert not at.exception
    assert "62 WordPiece tokens" in texts(at) and "allow 40" in texts(at)


# ---- a public server: hostile names, folders, a link's origin, downloads on a click ---------------------------------

HOSTILE_NAMES = ["/root", "/etc", "/proc/self/cwd", "../..", "/nonexistent"]
FOLDERS_OFF = ("The name typed is a path, and this server loads models from the Hugging Face Hub only: name one by "
               "its repo id (owner/name). Folders on the server cannot be named.")


@pytest.mark.parametrize("repo_id", ["a/b..c", "a--b/c", "a/b.git", "a/b."])
def test_an_id_the_hub_refuses_is_a_message_and_the_page_keeps_working(tiny_dir, repo_id):
    at = model_app(repo_id)
    assert f"{repo_id!r} is not a valid Hugging Face repo id" in texts(at)
    at.text_input(key="model_other").input(str(tiny_dir)).run()  # the box to name another is there: it works again
    captions = plain("\n".join(c.value for c in at.caption))
    assert not at.exception and f"**{tiny_dir.name}** · 2 layers × 4 heads" in captions


def test_folders_off_every_name_gets_the_same_message(tiny_dir, monkeypatch):
    monkeypatch.delenv("ATTN_ALLOW_FOLDERS")
    said = set()
    for name in [*HOSTILE_NAMES, str(tiny_dir)]:
        at = model_app(name)
        said.add(tuple(plain(e.value) for e in at.error))
    assert said == {(FOLDERS_OFF,)}
    box = at.text_input(key="model_other")
    assert box.label == "A Hugging Face repo id (owner/name)" and "Folders on the server cannot be named" in box.help


@pytest.fixture
def hub_small(tmp_path, tiny_dir, monkeypatch):
    """A fake Hub serving someone/small, an empty Hugging Face cache, the operator's model the tiny folder."""
    from huggingface_hub import constants

    with fake_hub.FakeHub() as hub:
        fake_hub.use(monkeypatch, hub.url)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
        monkeypatch.setenv("ATTN_MODEL", str(tiny_dir))
        hub.add_folder("someone/small", tiny_bert.build(tmp_path / "small", config=SMALL))
        yield hub


def test_a_links_origin_is_downloaded_only_on_a_click_naming_its_size(tmp_path, hub_small):
    small = attn_models.load(str(tmp_path / "small"))
    cfg = small.layer_config("the cat sat", 1, head=1)
    cfg = type(cfg)(**{**cfg.__dict__, "origin": {**cfg.origin, "model": "someone/small"}})
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["c"] = share.encode_link(cfg, "steps")
    at.run()
    assert not at.exception and hub_small.requests == []  # the link opened Step by step: nothing asked of the Hub
    at.switch_page(MODEL).run()
    assert not at.exception
    assert plain(at.info[0].value) == ("The configuration in the explorer came from another model, someone/small: see "
                                       "**In the explorer now** at the end of this page.")  # said at the top
    size = sum(f.stat().st_size for f in (tmp_path / "small").iterdir()) / 1e6
    button = at.button(key="model_origin_download")
    assert plain(button.label) == f"Download someone/small ({size:.1f} MB)"
    assert not hub_small.fetched("model.safetensors") and not hub_small.fetched("config.json")  # metadata only
    button.click().run()
    assert not at.exception and hub_small.fetched("model.safetensors")
    assert "b_O" in texts(at) and "no longer the model's" not in texts(at)


def test_another_model_from_the_hub_asks_before_downloading(tmp_path, hub_small):
    at = model_app(str(tmp_path / "nothing"))  # starts on a missing folder: an error, the box open
    at.text_input(key="model_other").input("someone/small").run()
    assert not at.exception and not hub_small.fetched("config.json")
    assert "someone/small is not on this server yet" in texts(at)
    at.button(key="model_download").click().run()
    assert not at.exception
    assert "**someone/small** · 2 layers × 2 heads" in plain("\n".join(c.value for c in at.caption))
    at.run()  # in the cache now: no button, no second download
    assert not at.exception and len(hub_small.fetched("model.safetensors")) == 2  # one HEAD, one GET
    assert not [b for b in at.button if b.key == "model_download"]


def test_a_hostile_repo_is_refused_with_its_message_and_leaves_nothing(tmp_path, tiny_dir, hub_small):
    hub_small.add_folder("someone/huge", tiny_dir, claimed={"model.safetensors": 700_000_000})
    at = model_app("someone/huge")
    assert "model.safetensors is 700.0 MB; the cap is 500.0 MB" in texts(at)
    assert not hub_small.fetched("model.safetensors") and not list((tmp_path / "hub").glob("models--*"))


# ---- a broken config.json, on each model page: the file and the field named in the learner's words ----------------

NOT_JSON = '{\n  "model_type": "bert"\n  "hidden_size": 8\n}'  # a comma missing at the end of line 2
#: page -> (its source's state key, the tiny checkpoint it reads, a field that sizes it)
MODEL_PAGES = {registry.MODEL: (model_views.SOURCE, tiny_bert.build, "num_hidden_layers"),
               registry.GENERATE: (generate_views.SOURCE, tiny_gpt2.build, "n_layer"),
               registry.TRANSLATE: (translate_views.SOURCE, tiny_t5.build, "num_layers")}


def broken_configs(folder, build, field) -> dict[str, str]:
    """Three copies of a tiny checkpoint, each with a broken config.json: not JSON, not an object, a field that is
    text -> the copy's folder."""
    good = json.loads((build(folder / "good") / "config.json").read_text())
    broken = {"syntax": NOT_JSON, "list": "[1, 2]", "field": json.dumps({**good, field: "two"})}
    for name, text_ in broken.items():
        (build(folder / name) / "config.json").write_text(text_)
    return {name: str(folder / name) for name in broken}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", list(MODEL_PAGES), ids=lambda p: p.name)
def test_a_broken_config_json_is_said_in_the_learners_words_naming_the_file_and_field(page, lang, tmp_path):
    """json's English ("Expecting ',' delimiter: line 3 column 3 (char 27)") used to be inside the message."""
    key, build, field = MODEL_PAGES[page]
    folders = broken_configs(tmp_path, build, field)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[state.LANG] = lang
    at.run()
    said = {}
    for name, folder in folders.items():
        at.session_state[key] = folder
        at.switch_page(page.file).run()
        assert not at.exception, [e.value for e in at.exception]
        said[name] = [plain(e.value) for e in at.error]
    assert said == {"en": {
        "syntax": ["config.json: not valid JSON (a comma was expected at line 3, column 3)."],
        "list": ["config.json: not a JSON object."],
        "field": [f"config.json: {field} must be a whole number of at least 1, got two."],
    }, "zh": {
        "syntax": ["config.json：不是有效的 JSON（第 3 行第 3 列：此处应为逗号）。"],
        "list": ["config.json：不是 JSON 对象。"],
        "field": [f"config.json：{field} 必须是不小于 1 的整数，实际为 two。"],
    }}[lang]
    if lang != "en":  # no English of json's or Python's left
        assert not english_left([m for ms in said.values() for m in ms], ["config.json", "JSON", field, "two"])


@pytest.mark.parametrize("lang", ["en", "zh", "ko"])
def test_a_broken_tokenizer_json_is_said_in_the_learners_words_naming_the_file_and_field(lang, tmp_path):
    """The tokenizers library's English ("tokenizer.json could not be read: data did not match any variant of untagged
    enum NormalizerUntagged at line 1 column 933") was the message in every language."""
    good = json.loads((tiny_bert.build(tmp_path / "good") / "tokenizer.json").read_text())
    broken = {"missing": {k: v for k, v in good.items() if k != "model"},
              "field": {**good, "normalizer": {"type": "X"}}}
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[state.LANG] = lang
    at.run()
    said = {}
    for name, doc in broken.items():
        folder = tiny_bert.build(tmp_path / name)
        (folder / "tokenizer.json").write_text(json.dumps(doc))
        at.session_state[model_views.SOURCE] = str(folder)
        at.switch_page(registry.MODEL.file).run()
        assert not at.exception, [e.value for e in at.exception]
        said[name] = [plain(e.value) for e in at.error]
    if lang == "en":
        assert said["missing"] == ["tokenizer.json has no field model, which a tokenizer must have."]
        assert said["field"][0].startswith("tokenizer.json: its field normalizer is not what the tokenizers library "
                                           "reads there (line 1, column ")
    else:  # the sentence in the learner's language; the library's words a detail in parentheses
        assert said["missing"] == [{"zh": "tokenizer.json 没有字段 model，而分词器必须有这个字段。",
                                    "ko": "tokenizer.json에 model 필드가 없습니다. 토크나이저에는 이 필드가 꼭 있어야 "
                                          "합니다."}[lang]]
        assert "normalizer" in said["field"][0] and "tokenizers" in said["field"][0]
        library = said["field"][0].rsplit(":", 1)[-1]  # the library's own words, after the last colon
        assert not english_left([said["field"][0].replace(library, "")], ["tokenizer.json", "normalizer", "tokenizers"])


def test_a_hub_snapshot_whose_config_json_is_broken_is_said_in_the_learners_words(tmp_path, hub_small):
    hub_small.add("someone/broken", {**{f.name: f.read_bytes() for f in (tmp_path / "small").iterdir()},
                                     "config.json": NOT_JSON.encode()})
    at = model_app("someone/broken")
    at.button(key="model_download").click().run()
    assert not at.exception and hub_small.fetched("config.json") and not hub_small.fetched("model.safetensors")
    assert [plain(e.value) for e in at.error] == [
        "config.json: not valid JSON (a comma was expected at line 3, column 3)."]


# ---- no network: the advice says only what this server allows (a fresh reviewer) -----------------------------------


@pytest.mark.parametrize(("page", "variable"), [
    (registry.MODEL, "ATTN_MODEL"), (registry.GENERATE, "ATTN_CAUSAL_MODEL"),
    (registry.TRANSLATE, "ATTN_TRANSLATOR_MODEL"),
])
def test_no_network_with_folders_off_the_advice_is_what_whoever_runs_the_server_can_do(page, variable, monkeypatch):
    """The message used to tell the visitor to give a folder's path, which this server then refused. The learner reads
    first that the model is not here and the other pages work; what the server's operator can do is folded under it
    (a reviewer: on a phone the operator's variables and commands took the first screen, the learner's line after)."""
    monkeypatch.delenv("ATTN_ALLOW_FOLDERS")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(variable, "nobody-here/no-such-model")  # the operator's: not cached, no network
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(page.file).run()
    assert not at.exception
    assert [plain(w.value) for w in at.warning] == [
        "The model nobody-here/no-such-model is not on this server, and the server cannot download it now."]
    (folded,) = [e for e in at.expander if e.label == "Why, and what whoever runs this server can do"]
    shown = plain("\n".join(m.value for m in folded.markdown))
    assert "nobody-here/no-such-model could not be loaded" in shown
    assert "whoever runs this server can copy the model's folder" in shown
    assert f"set {variable} to that folder's path" in shown
    assert "give that folder's path instead" not in shown
    at.session_state["lang"] = "zh"
    at.run()
    folded = [plain("\n".join(m.value for m in e.markdown)) for e in at.expander]
    (shown,) = [text for text in folded if "运行本服务器的人可以" in text]
    assert variable in shown and "Folders" not in shown


def test_no_network_with_folders_on_the_advice_names_a_folder(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = model_app("nobody-here/no-such-model")
    assert "give that folder's path instead" in texts(at) and "whoever runs" not in texts(at)


@pytest.mark.parametrize(("name", "said"), [
    ("<img src=x onerror=alert(1)>", "The name typed has the characters '<' ' ' '=' '(' ')' '>', which a Hugging Face "
                                     "repo id cannot have: a repo id is owner/name (for example "
                                     "sentence-transformers/all-MiniLM-L6-v2)"),
    ("a" * 3000, "The name typed is too long for a Hugging Face repo id: '" + "a" * 40 + "…' has 3,000 characters, and "
                 "the Hub takes at most 96 for the owner and as many for the model's name (owner/name)."),
    ("/etc", FOLDERS_OFF),
])
def test_folders_off_a_name_that_is_no_repo_id_is_told_what_is_wrong_with_it(name, said, monkeypatch):
    """A fresh reviewer: HTML and 3,000 a's were told that folders cannot be named."""
    monkeypatch.delenv("ATTN_ALLOW_FOLDERS")
    monkeypatch.setattr("attn_models.access.is_folder", lambda *_a: pytest.fail("a folder was looked at"))
    at = model_app(name)
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(said)
    assert name[:41] not in errors[0]  # at most 40 characters of the name echoed


# ---- folders off: the name box says what is wrong with a name (a fresh reviewer, after the change above) ----------

PAGES = {"encoder": (registry.MODEL, model_views.SOURCE, model_views.OTHER, attn_models.DEFAULT_MODEL),
         "causal": (registry.GENERATE, generate_views.SOURCE, generate_views.OTHER, attn_models.access.CAUSAL_MODEL),
         "translator": (registry.TRANSLATE, translate_views.SOURCE, translate_views.OTHER,
                        attn_models.access.TRANSLATOR_MODEL)}


def typed_in_the_box(role: str, name: str, monkeypatch, lang: str = "en") -> AppTest:
    """The page of ``role`` with folders off and no network, ``name`` typed in its box to name another model."""
    monkeypatch.delenv("ATTN_ALLOW_FOLDERS")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("attn_models.access.is_folder", lambda *_a: pytest.fail("a folder was looked at"))
    page, _source, other, _example = PAGES[role]
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page(page.file).run()
    at.text_input(key=other).input(name).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("role", list(PAGES))
@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "distilgpt2", "t5-small"])
def test_folders_off_a_legacy_repo_id_without_an_owner_is_a_repo_id(role, name, monkeypatch):
    """The Hub and huggingface_hub's validate_repo_id take a name alone: it was refused as "not a repo id". Offline,
    what follows is the message of a repo neither cached nor downloadable."""
    at = typed_in_the_box(role, name, monkeypatch)
    assert at.session_state[PAGES[role][1]] == name
    assert [e.value for e in at.error] == []
    assert [plain(w.value) for w in at.warning] == [
        f"The model {name} is not on this server, and the server cannot download it now."]
    shown = plain("\n".join(m.value for e in at.expander for m in e.markdown))
    assert f"The model {name} could not be loaded: its config.json is not in the server's Hugging Face cache" in shown
    assert "not a Hugging Face repo id" not in texts(at)


URLS = ["https://evil.example.com/model", "file:///etc/passwd", "hf://x/y", "https://huggingface.co/a/b/tree/main"]


@pytest.mark.parametrize("role", list(PAGES))
@pytest.mark.parametrize("url", URLS)
def test_folders_off_a_web_address_is_told_it_is_one_with_the_pages_own_example(role, url, monkeypatch):
    """A URL was told it is a path; the example was the GPT-2 on every page."""
    at = typed_in_the_box(role, url, monkeypatch)
    example = PAGES[role][3]
    assert [plain(e.value) for e in at.error] == [
        "The name typed is a web address: this server takes a Hugging Face repo id, not an address. A repo id is "
        f"owner/name (for example {example}): on the Hub, what follows huggingface.co/ in a model's address."]
    assert "path" not in texts(at)


@pytest.mark.parametrize("role", list(PAGES))
def test_folders_off_a_name_of_html_is_told_its_characters_not_that_it_is_a_path(role, monkeypatch):
    """A fresh reviewer: <b>hi</b>/x (two '/') was told "The name typed is a path"; its fault is '<' and '>'."""
    at = typed_in_the_box(role, "<b>hi</b>/x", monkeypatch)
    assert [plain(e.value) for e in at.error] == [
        f"The name typed has the characters '<' '>', which a Hugging Face repo id cannot have: a repo id is owner/name "
        f"(for example {PAGES[role][3]}), each of the letters A–Z and a–z, digits, '-', '_' and '.'."]
    assert "path" not in texts(at)


@pytest.mark.parametrize("role", list(PAGES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_name_of_only_spaces_is_said_to_be_read_as_the_empty_box(role, lang, monkeypatch):
    """A fresh reviewer: a box of spaces silently loaded the default model, the box still showing the spaces (and not
    the placeholder that names the default)."""
    at = typed_in_the_box(role, "   ", monkeypatch, lang=lang)
    assert at.text_input(key=PAGES[role][2]).value == "   "  # kept as typed
    assert at.session_state[PAGES[role][1]] is None  # the page's own model
    model = attn_models.access.example(role, lang)  # the page's own: in Chinese the encoder is the multilingual one
    said = [plain(i.value) for i in at.info if model in plain(i.value)]
    assert said == [{"en": f"The box holds only spaces, which name no model: the page reads its own model, {model}, as "
                           "when the box is empty.",
                     "zh": f"输入框中只有空格，没有指定任何模型：页面读取它自己的模型 {model}，"
                           "与输入框为空时一样。"}[lang]]
    assert [e.value for e in at.error] == []


@pytest.mark.parametrize("role", list(PAGES))
def test_folders_off_a_bad_character_gives_the_pages_own_example(role, monkeypatch):
    at = typed_in_the_box(role, "me/my model", monkeypatch)
    example = PAGES[role][3]
    assert [plain(e.value) for e in at.error] == [
        f"The name typed has ' ', which a Hugging Face repo id cannot have: a repo id is owner/name (for example "
        f"{example}), each of the letters A–Z and a–z, digits, '-', '_' and '.'."]
    assert (attn_models.access.CAUSAL_MODEL in texts(at)) == (role == "causal")


@pytest.mark.parametrize("role", list(PAGES))
@pytest.mark.parametrize(("name", "said"), [
    ("owner/", "The name typed has nothing after its '/': the model's name is missing. A Hugging Face repo id is "
               "owner/name (for example {example})."),
    ("owner//name", "The name typed has two '/' in a row: the part between them is empty. A Hugging Face repo id has "
                    "one '/', between the owner and the name (for example {example})."),
])
def test_folders_off_an_empty_part_is_named_with_the_pages_own_example(role, name, said, monkeypatch):
    """'owner/' had the Hub's generic rules (which it obeys); 'owner//name' was told it is a path."""
    at = typed_in_the_box(role, name, monkeypatch)
    assert [plain(e.value) for e in at.error] == [said.format(example=PAGES[role][3])]


@pytest.mark.parametrize("lang", ["zh", "ko"])
@pytest.mark.parametrize("name", ["owner/", "me/my model", "https://huggingface.co/a/b"])
def test_the_encoder_pages_example_is_the_model_it_reads_in_the_learners_language(lang, name, monkeypatch):
    """In Chinese and Korean A real model reads the multilingual MiniLM (attn_models.default_model): a refusal's
    example was the English all-MiniLM-L6-v2, which that page does not read for them."""
    at = typed_in_the_box("encoder", name, monkeypatch, lang=lang)
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and attn_models.access.MULTILINGUAL_MODEL in errors[0], errors
    assert attn_models.DEFAULT_MODEL not in errors[0]
    assert "The name typed" not in errors[0]  # in the learner's language


@pytest.mark.parametrize("role", list(PAGES))
def test_folders_off_a_long_name_is_told_it_is_too_long_and_quoted_short(role, monkeypatch):
    """A 300-character owner/xxx… name was given the Hub's rules it obeys, and quoted whole."""
    name = "owner/" + "x" * 294
    at = typed_in_the_box(role, name, monkeypatch)
    assert [plain(e.value) for e in at.error] == [
        "The name typed is too long for a Hugging Face repo id: '" + "x" * 40 + "…' has 294 characters, and the Hub "
        "takes at most 96 for the owner and as many for the model's name (owner/name)."]
    assert "x" * 41 not in texts(at)


@pytest.mark.parametrize(("name", "said"), [
    ("https://evil.example.com/model", "输入的是一个网址：本服务器接受的是 Hugging Face 仓库 ID，而不是网址。"),
    ("owner/" + "x" * 294, "输入的名称作为 Hugging Face 仓库 ID 太长了：'" + "x" * 40 + "…' 有 294 个字符"),
    ("me/my model", "输入的名称含有 ' '，Hugging Face 仓库 ID 中不能有这个字符"),
])
def test_folders_off_the_refusals_in_chinese(name, said, monkeypatch):
    at = typed_in_the_box("translator", name, monkeypatch, lang="zh")
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(said), errors
    assert attn_models.access.TRANSLATOR_MODEL in errors[0] or "x" * 40 in errors[0]
    assert not english_left(errors, ["Hugging Face", "Hub", "ID", "owner/name", "huggingface.co/",
                                     attn_models.access.TRANSLATOR_MODEL, "A–Z", "a–z", "x" * 40])


def test_folders_off_a_legacy_repo_id_in_chinese_is_the_hubs_message_not_a_refusal(monkeypatch):
    at = typed_in_the_box("causal", "gpt2", monkeypatch, lang="zh")
    assert [e.value for e in at.error] == []
    shown = plain("\n".join(w.value for w in at.warning))
    assert "gpt2" in shown and "仓库 ID" not in shown


@pytest.mark.parametrize("typed", ["", "   "])
def test_a_sentence_of_nothing_but_spaces_asks_for_a_sentence(tiny_dir, typed):
    """A sentence box left empty (or of spaces only) read only the family's two special tokens and drew their
    attention without a word (a second reviewer); the page asks for a sentence, as the other model pages do."""
    at = model_app(str(tiny_dir))
    at.text_input(key="model_sentence").input(typed).run()
    assert not at.exception and not at.error
    assert "Type a sentence: the model reads it and every head's attention on it is drawn here." in texts(at)
    assert not at.get("vega_lite_chart")
