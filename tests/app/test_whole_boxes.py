"""Every whole-number box beyond the sizes (controls.whole_box, attn_core.whole_number), and the float boxes with a
range (Randomise's std, Learn's prediction): what is typed arrives as typed (an integer box's browser side read "2.5"
as 2 and "1e3" as 1 without a word, and left a number out of range in a red box with an English tooltip).

For each box: 2.5, a number out of its range and a box left empty are refused in words under it, naming the box, and
the page keeps using the last value it took (and says so); the box keeps what was typed; a whole float (1e1) is its
int. Seeds may be 0.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.testing.v1 import AppTest

import attn_models
from attn_core import embed, initialize, load_preset, with_dimensions
from attn_ui import lessons
from attn_ui.app import registry
from attn_ui.lessons import lesson_ui
from attn_ui.views import generate_views, model_views
from attn_ui.views import modern_views as mv

from .. import tiny_bert, tiny_gpt2
from .apptools import APP, app_on, new_app, plain, too_large_for_a_grid

SEED_HIGH = 2**31 - 1


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


def assert_typed_as_typed(at: AppTest, key: str) -> None:
    """The box's browser side reads what is typed as a float, unbounded ("1e1" comes as 10.0, "2.5" as 2.5, 150 as
    150): an integer box read "1e1" as 1, and bounds left a number out of them in a red box with an English tooltip."""
    proto = at.number_input(key=key).proto
    assert (proto.data_type, proto.has_min, proto.has_max, proto.format) == (NumberInput.FLOAT, False, False, "%g")


def type_into(at: AppTest, key: str, typed: float | None) -> AppTest:
    at.number_input(key=key).set_value(typed).run()
    assert not at.exception, at.exception
    return at


#: what a seed box says for each refused value (its label first), the seed in use being 0
def seed_refusals(label: str) -> list[tuple[float | None, str]]:
    return [(2.5, f"{label}: 2.5 is not a whole number. Still using seed 0."),
            (SEED_HIGH + 1.0, f"{label}: {SEED_HIGH + 1} is over the cap of {SEED_HIGH}. Still using seed 0."),
            (-1.0, f"{label}: -1 is under 0. Still using seed 0."),
            (None, f"{label} holds no number that can be read: type a whole number. Still using seed 0.")]


# ---- Inputs & weights: the embedding seed and the seed for new cells ------------------------------------------------
def use_sentence(at: AppTest) -> np.ndarray:
    at.text_input(key="inputs_sentence").input("the cat sat").run()
    at.button(key="inputs_use_sentence").click().run()
    assert not at.exception, at.exception
    return at.session_state["config"].x


@pytest.mark.parametrize(("typed", "said"), seed_refusals("Embedding seed"))
def test_an_embedding_seed_refused_is_said_and_seed_0_still_embeds(typed, said):
    at = type_into(new_app(registry.INPUTS.file), "inputs_embed_seed", typed)
    assert warnings(at) == [said]
    assert at.number_input(key="inputs_embed_seed").value == typed  # what was typed stays in the box
    np.testing.assert_array_equal(use_sentence(at), embed(["the", "cat", "sat"], 4, seed=0))
    assert at.number_input(key="inputs_embed_seed").value == typed and warnings(at) == [said]


def test_an_embedding_seed_of_1e1_is_seed_10_and_0_is_a_seed():
    at = type_into(new_app(registry.INPUTS.file), "inputs_embed_seed", 1e1)
    assert_typed_as_typed(at, "inputs_embed_seed")
    assert not at.warning
    np.testing.assert_array_equal(use_sentence(at), embed(["the", "cat", "sat"], 4, seed=10))
    type_into(at, "inputs_embed_seed", 0.0)
    assert not at.warning
    np.testing.assert_array_equal(use_sentence(at), embed(["the", "cat", "sat"], 4, seed=0))


def five_tokens(at: AppTest):
    before = at.session_state["config"]
    type_into(at, "inputs_n_seq", 5.0)
    return before, at.session_state["config"]


@pytest.mark.parametrize(("typed", "said"), seed_refusals("Seed for new cells"))
def test_a_seed_for_new_cells_refused_is_said_and_seed_0_still_fills_them(typed, said):
    at = type_into(new_app(registry.INPUTS.file), "inputs_fill_seed", typed)
    assert warnings(at) == [said]
    before, after = five_tokens(at)
    assert warnings(at) == [said] and at.number_input(key="inputs_fill_seed").value == typed
    np.testing.assert_array_equal(after.x, with_dimensions(before, n_seq=5, d_model=4, d_qk=3, d_v=3, seed=0).x)


def test_a_seed_for_new_cells_of_1e1_is_seed_10():
    at = type_into(new_app(registry.INPUTS.file), "inputs_fill_seed", 1e1)
    assert_typed_as_typed(at, "inputs_fill_seed")
    before, after = five_tokens(at)
    assert not at.warning
    np.testing.assert_array_equal(after.x, with_dimensions(before, n_seq=5, d_model=4, d_qk=3, d_v=3, seed=10).x)
    assert not np.array_equal(after.x, with_dimensions(before, n_seq=5, d_model=4, d_qk=3, d_v=3, seed=0).x)


# ---- Randomise: its seed and a Gaussian's std -----------------------------------------------------------------------
def randomise_open(init: str = "xavier_uniform") -> AppTest:
    at = new_app(registry.INPUTS.file)
    at.session_state["inputs_w_v_randomise"] = True
    at.run()
    at.selectbox(key="inputs_w_v_init").set_value(init).run()
    return at


def fill_w_v(at: AppTest) -> np.ndarray:
    at.button(key="inputs_w_v_fill").click().run()
    assert not at.exception, at.exception
    return at.session_state["config"].w_v


@pytest.mark.parametrize(("typed", "said"), seed_refusals("Seed"))
def test_a_randomise_seed_refused_is_said_and_the_last_seed_taken_still_fills(typed, said):
    at = type_into(randomise_open(), "inputs_w_v_seed", 7.0)
    type_into(at, "inputs_w_v_seed", typed)
    assert warnings(at) == [said.replace("seed 0", "seed 7")]
    np.testing.assert_array_equal(fill_w_v(at), initialize("xavier_uniform", (4, 3), seed=7))
    assert at.number_input(key="inputs_w_v_seed").value == typed


def test_a_randomise_seed_of_1e1_is_seed_10_and_0_is_a_seed():
    at = type_into(randomise_open(), "inputs_w_v_seed", 1e1)
    assert_typed_as_typed(at, "inputs_w_v_seed")
    np.testing.assert_array_equal(fill_w_v(at), initialize("xavier_uniform", (4, 3), seed=10))
    type_into(at, "inputs_w_v_seed", 0.0)
    np.testing.assert_array_equal(fill_w_v(at), initialize("xavier_uniform", (4, 3), seed=0))
    assert not at.warning


@pytest.mark.parametrize(("typed", "said"), [
    (150.0, "std: 150 is over 100. Still using std 1."),
    (-0.5, "std: -0.5 is under 0. Still using std 1."),
    (None, "std holds no number that can be read: type a number. Still using std 1."),
])
def test_a_std_out_of_its_range_is_said_and_the_last_std_still_draws(typed, said):
    at = type_into(randomise_open("gaussian"), "inputs_w_v_std", typed)
    assert warnings(at) == [said]
    np.testing.assert_array_equal(fill_w_v(at), initialize("gaussian", (4, 3), seed=0, std=1.0))
    assert at.number_input(key="inputs_w_v_std").value == typed


def test_a_std_typed_as_it_is_draws_with_it():
    at = type_into(randomise_open("gaussian"), "inputs_w_v_std", 2.5)
    assert_typed_as_typed(at, "inputs_w_v_std")
    assert not at.warning
    np.testing.assert_array_equal(fill_w_v(at), initialize("gaussian", (4, 3), seed=0, std=2.5))


# ---- Exact input: row and column of a matrix too large for a grid ---------------------------------------------------
def big_inputs() -> AppTest:
    return app_on(too_large_for_a_grid(), registry.INPUTS.file)


def cell_shown(at: AppTest) -> tuple[int, int]:
    """The cell W_Q's value box is of (its key: w_q_cell_value_{i}_{j}_{version})."""
    key = next(t.key for t in at.text_input if t.key.startswith("w_q_cell_value_"))
    i, j = key.removeprefix("w_q_cell_value_").split("_")[:2]
    return int(i), int(j)


@pytest.mark.parametrize(("box", "typed", "said"), [
    ("row", 2.5, "Row: 2.5 is not a whole number. Still showing row 7."),
    ("row", 150.0, "Row: 150 is over the cap of 149. Still showing row 7."),
    ("row", -1.0, "Row: -1 is under 0. Still showing row 7."),
    ("row", None, "Row holds no number that can be read: type a whole number. Still showing row 7."),
    ("col", 2.5, "Column: 2.5 is not a whole number. Still showing column 42."),
    ("col", 1e3, "Column: 1000 is over the cap of 149. Still showing column 42."),
    ("col", None, "Column holds no number that can be read: type a whole number. Still showing column 42."),
])
def test_a_row_or_column_refused_is_said_and_the_cell_shown_stays(box, typed, said):
    at = big_inputs()
    type_into(at, "w_q_cell_row", 7.0)
    type_into(at, "w_q_cell_col", 42.0)
    type_into(at, f"w_q_cell_{box}", typed)
    assert warnings(at) == [said]
    assert cell_shown(at) == (7, 42)
    assert at.number_input(key=f"w_q_cell_{box}").value == typed


def test_a_row_of_1e1_is_row_10():
    at = type_into(big_inputs(), "w_q_cell_row", 1e1)
    assert_typed_as_typed(at, "w_q_cell_row")
    assert_typed_as_typed(at, "w_q_cell_col")
    assert cell_shown(at) == (10, 0) and not at.warning


# ---- Modern attention: RoPE's shift s -------------------------------------------------------------------------------
def rope_shift_page() -> AppTest:
    at = new_app()
    at.session_state["config"] = load_preset("seed000")
    at.switch_page(registry.MODERN.file).run()
    at.button(key="modern_preset_llama").click().run()  # d_k = 3 is odd: W_Q and W_K widened, the preset applied
    at.session_state["kept"][mv.SECTION] = mv.ROPE_S
    at.run()
    assert not at.exception and at.session_state["config"].rope is not None
    return at


def shifted_pair(at: AppTest) -> str:
    return at.dataframe[0].value.iloc[1, 0]


@pytest.mark.parametrize(("typed", "said"), [
    (2.5, "shift s: 2.5 is not a whole number. Still using s = 5."),
    (100_001.0, "shift s: 100001 is over the cap of 100000. Still using s = 5."),
    (-1.0, "shift s: -1 is under 0. Still using s = 5."),
    (None, "shift s holds no number that can be read: type a whole number. Still using s = 5."),
])
def test_a_shift_refused_is_said_and_s_5_still_shifts(typed, said):
    at = type_into(rope_shift_page(), mv.SHIFT, typed)
    assert warnings(at) == [said]
    assert shifted_pair(at) == "(m+s, n+s) = (7, 5)"  # m 2, n 0, s 5
    assert at.number_input(key=mv.SHIFT).value == typed


def test_a_shift_of_1e1_is_10_and_0_is_a_shift():
    at = type_into(rope_shift_page(), mv.SHIFT, 1e1)
    assert_typed_as_typed(at, mv.SHIFT)
    assert shifted_pair(at) == "(m+s, n+s) = (12, 10)" and not at.warning
    assert shifted_pair(type_into(at, mv.SHIFT, 0.0)) == "(m+s, n+s) = (2, 0)"


# ---- the model pages: A real model's padding, A model that writes' tokens and seed ---------------------------------
@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("boxes")
    return {"bert": str(tiny_bert.build(root / "bert")), "gpt2": str(tiny_gpt2.build(root / "gpt2"))}


@pytest.fixture
def models(monkeypatch, folders) -> dict[str, str]:
    monkeypatch.setenv("ATTN_ALLOW_FOLDERS", "1")
    monkeypatch.setenv("ATTN_CAUSAL_MODEL", folders["gpt2"])
    return folders


def model_page(folders: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[model_views.SOURCE] = folders["bert"]
    at.run()
    at.switch_page(registry.MODEL.file).run()
    assert not at.exception, at.exception
    return at


def n_tokens(at: AppTest) -> int:
    """The tokens the page runs: its tokens line (“**13 WordPiece tokens** …”)."""
    line = next(plain(m.value) for m in at.markdown if "WordPiece tokens" in m.value)
    return int(re.match(r"\W*(\d+)", line).group(1))


@pytest.mark.parametrize(("typed", "said"), [
    (14.5, "Pad to (tokens): 14.5 is not a whole number. Still padding to 16 tokens."),
    (1e6, "Pad to (tokens): 1000000 is over the cap of {most}. Still padding to 16 tokens."),
    (-1.0, "Pad to (tokens): -1 is under 0. Still padding to 16 tokens."),
    (None, "Pad to (tokens) holds no number that can be read: type a whole number. Still padding to 16 tokens."),
])
def test_a_padding_refused_is_said_and_the_padding_in_use_stays(models, typed, said):
    at = model_page(models)
    unpadded = n_tokens(at)
    type_into(at, model_views.PAD_TO, 1.6e1)  # "1.6e1": 16 tokens
    assert_typed_as_typed(at, model_views.PAD_TO)
    assert n_tokens(at) == 16 > unpadded and not at.warning
    type_into(at, model_views.PAD_TO, typed)
    assert warnings(at) == [said.format(most=attn_models.load(models["bert"]).config.max_tokens)]
    assert n_tokens(at) == 16
    assert at.number_input(key=model_views.PAD_TO).value == typed


def test_no_padding_refused_says_so(models):
    at = type_into(model_page(models), model_views.PAD_TO, 2.5)
    assert warnings(at) == ["Pad to (tokens): 2.5 is not a whole number. Still without padding."]


def generate_page(folders: dict[str, str], mode: str = "greedy") -> AppTest:
    at = new_app()
    at.session_state["kept"][generate_views.MODE] = mode
    at.switch_page(registry.GENERATE.file).run()
    assert not at.exception, at.exception
    return at


def write(at: AppTest) -> tuple:
    at.button(key="gen_write").click().run()
    assert not at.exception, at.exception
    return at.session_state[generate_views.WRITTEN]


@pytest.mark.parametrize(("typed", "said"), [
    (2.5, "Tokens to write: 2.5 is not a whole number. Still writing 8 tokens per click."),
    (21.0, "Tokens to write: 21 is over the cap of 20. Still writing 8 tokens per click."),
    (0.0, "Tokens to write: 0 is under 1. Still writing 8 tokens per click."),
    (None, "Tokens to write holds no number that can be read: type a whole number. Still writing 8 tokens per click."),
])
def test_tokens_to_write_refused_are_said_and_8_are_still_written(models, typed, said):
    at = type_into(generate_page(models), generate_views.N_NEW, typed)
    assert warnings(at) == [said]
    assert write(at)[2] == 8
    assert at.number_input(key=generate_views.N_NEW).value == typed


def test_tokens_to_write_of_1e1_are_10(models):
    at = type_into(generate_page(models), generate_views.N_NEW, 1e1)
    assert_typed_as_typed(at, generate_views.N_NEW)
    assert write(at)[2] == 10 and not at.warning


@pytest.mark.parametrize(("typed", "said"), seed_refusals("Seed"))
def test_a_sampling_seed_refused_is_said_and_seed_0_still_samples(models, typed, said):
    at = type_into(generate_page(models, "sample"), generate_views.SEED, typed)
    assert warnings(at) == [said]
    asked = write(at)
    assert asked[3] is True and asked[5] == 0
    assert at.number_input(key=generate_views.SEED).value == typed


def test_a_sampling_seed_of_1e1_is_10(models):
    at = type_into(generate_page(models, "sample"), generate_views.SEED, 1e1)
    assert_typed_as_typed(at, generate_views.SEED)
    assert write(at)[5] == 10 and not at.warning


def test_a_seed_refused_is_not_said_while_greedy_writing_disables_the_box(models):
    """The seed box is disabled in greedy mode (the seed draws nothing): its refusal waits until sampling is on."""
    at = type_into(generate_page(models, "sample"), generate_views.SEED, 2.5)
    assert warnings(at)
    at.segmented_control(key=generate_views.MODE).set_value("greedy").run()
    assert not at.exception and not warnings(at)
    assert at.number_input(key=generate_views.SEED).value == 2.5  # still what was typed


# ---- Learn: a prediction out of its range ---------------------------------------------------------------------------
def weight_lesson() -> AppTest:
    at = new_app(registry.LEARN.file)
    at.selectbox(key="learn_pick").set_value(lessons.index_of("match-weight")).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(("typed", "said"), [
    (1.5, "Your prediction: 1.5 is over 1. Type a number from 0 to 1."),
    (-0.25, "Your prediction: -0.25 is under 0. Type a number from 0 to 1."),
])
def test_a_prediction_out_of_its_range_is_said_in_words_and_not_judged(typed, said):
    at = weight_lesson()
    assert_typed_as_typed(at, "learn_match-weight_guess")
    at.number_input(key="learn_match-weight_guess").set_value(typed)
    at.button(key=lesson_ui.CHECK).click().run()
    assert not at.exception, at.exception
    assert warnings(at) == [said]
    assert not at.session_state[lesson_ui.ANSWERS].get("match-weight")  # no answer recorded
    assert at.number_input(key="learn_match-weight_guess").value == typed  # what was typed stays
    at.number_input(key="learn_match-weight_guess").set_value(0.5)
    at.button(key=lesson_ui.CHECK).click().run()
    assert not at.warning and len(at.session_state[lesson_ui.ANSWERS]["match-weight"]) == 1
