"""Score functions and cross-attention in links, JSON files, CSV tables and the NumPy script.

A configuration with a general or additive score keeps ``score`` and its weights (``w_a``; ``w_1``, ``w_2``,
``v_a``), one with Y keeps ``y_tokens`` and ``y``; a document without them (written before they existed) opens as
the dot-product self-attention it was.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attn_core import (
    LIMITS,
    MATRICES,
    AttentionInputError,
    ScoreFunction,
    config_mask,
    configs_equal,
    load_preset,
    make_config,
    multi_head_attention,
    multi_head_cross_attention,
    run,
)
from attn_core.share import config_to_dict, csv_zip, decode_link, encode_link, from_json, to_json

from ..seeds import SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X
from .test_codegen import assert_same_numbers, expected_blocks, run_script


def pack(text: str) -> str:
    """A permalink value built by hand from JSON text (so the tests do not trust encode_link)."""
    return base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")


def both_decoders(doc: dict):
    """The configuration a hand-written document gives through a JSON file and through a link (they must agree)."""
    text = json.dumps(doc)
    from_file, _ = from_json(text.encode())
    from_link, _ = decode_link(pack(text))
    assert configs_equal(from_file, from_link)
    return from_file


def rejected(doc: dict) -> str:
    """Both decoders refuse the document with the same message; returns it."""
    text = json.dumps(doc)
    with pytest.raises(AttentionInputError) as from_file:
        from_json(text.encode())
    with pytest.raises(AttentionInputError) as from_link:
        decode_link(pack(text))
    assert str(from_file.value).removeprefix("JSON file: ") == str(from_link.value).removeprefix("link: ")
    return str(from_file.value)


def version_1_doc(**changes) -> dict:
    """Seed 000 as a version-1 document written before score functions and Y existed (written out by hand)."""
    doc = {
        "format": "self-attention-explorer", "version": 1, "tokens": ["input1", "input2", "input3"],
        "n_heads": 1, "scale": "sqrt_dk", "mask_kind": "causal", "is_pad": [False, False, False],
        "custom_mask": [[1, 1, 1], [1, 1, 1], [1, 1, 1]], "x": SEED000_X, "w_q": SEED000_W_Q, "w_k": SEED000_W_K,
        "w_v": SEED000_W_V, "w_o": np.eye(3).tolist(),
    }
    return doc | changes


def round_trip(cfg, page=None):
    """Through a link and through a JSON file: both give back ``cfg`` bit for bit."""
    for back, back_page in (decode_link(encode_link(cfg, page), max_chars=10**6), from_json(to_json(cfg, page))):
        assert configs_equal(cfg, back) and back_page == page
        assert back.score == cfg.score and back.y_tokens == cfg.y_tokens
        for name in cfg.matrix_names():
            assert back.matrix(name).tobytes() == cfg.matrix(name).tobytes(), name
    return back


# ---- round trips ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["cross_translation", "additive"])
def test_the_new_presets_round_trip_bit_for_bit(key):
    cfg = load_preset(key)
    assert len(encode_link(cfg)) <= LIMITS.permalink_bytes
    back = round_trip(cfg, "steps")
    assert run(back).output.tobytes() == run(cfg).output.tobytes()
    doc = config_to_dict(cfg)
    if key == "additive":
        assert doc["score"] == "additive" and len(doc["v_a"]) == 1 and "y" not in doc
    else:
        assert "score" not in doc and doc["y_tokens"] == ["the", "cat", "sleeps"] and len(doc["y"]) == 3


@st.composite
def score_configs(draw):
    """Random valid configurations with a general or additive score, or with Y, or both (any finite float64)."""
    kind = draw(st.sampled_from(["dot", "general", "additive"]))
    cross = draw(st.booleans()) if kind != "dot" else True
    n_seq, d_model, n_heads = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_q, d_v, d_out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_k = draw(st.integers(1, 3)) if kind == "additive" else d_q  # per head
    d_a = draw(st.integers(1, 3))
    n_y = draw(st.integers(1, 4)) if cross else n_seq
    cells = st.floats(allow_nan=False, allow_infinity=False, width=64)

    def matrix(r, c):
        return np.array(draw(st.lists(cells, min_size=r * c, max_size=r * c)), dtype=np.float64).reshape(r, c)

    labels = st.text(min_size=1, max_size=LIMITS.token_chars).filter(lambda t: t.strip())
    options = {
        "general": {"w_a": matrix(d_q, n_heads * d_k)},  # [d_q, n_heads·d_k]
        "additive": {"w_1": matrix(d_q, n_heads * d_a), "w_2": matrix(d_k, n_heads * d_a),  # [d_q | d_k, n_heads·d_a]
                     "v_a": matrix(1, n_heads * d_a)},  # [1, n_heads·d_a]
        "dot": {},
    }[kind]
    if cross:
        options |= {"y_tokens": draw(st.lists(labels, min_size=n_y, max_size=n_y)), "y": matrix(n_y, d_model)}
    mask_kind = draw(st.sampled_from(["none", "padding", "custom"] + ([] if cross else ["causal"])))
    return make_config(
        draw(st.lists(labels, min_size=n_seq, max_size=n_seq)),
        matrix(n_seq, d_model), matrix(d_model, n_heads * d_q), matrix(d_model, n_heads * d_k),
        matrix(d_model, n_heads * d_v), matrix(n_heads * d_v, d_out),
        n_heads=n_heads, score=kind,
        scale=draw(st.one_of(st.sampled_from(["sqrt_dk", "none"]), st.floats(min_value=5e-324, allow_infinity=False))),
        mask_kind=mask_kind,
        is_pad=tuple(draw(st.lists(st.booleans(), min_size=n_seq, max_size=n_seq))),
        custom_mask=np.array(draw(st.lists(st.booleans(), min_size=n_y * n_seq, max_size=n_y * n_seq)),
                             dtype=bool).reshape(n_y, n_seq),
        **options,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=score_configs(), page=st.one_of(st.none(), st.sampled_from(["steps", "multihead"])))
def test_random_general_additive_and_cross_configurations_round_trip_bit_for_bit(cfg, page):
    round_trip(cfg, page)


def test_awkward_floats_in_the_score_weights_and_y_come_back_bit_for_bit():
    special = np.array([[-0.0, 5e-324], [1.7976931348623157e308, 0.1 + 0.2]])  # [2, 2]
    cfg = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2), score="additive", w_1=special,
                      w_2=special.T.copy(), v_a=[[-0.0, 1e-300]], y_tokens=["p", "q", "r"],
                      y=np.vstack([special, [[-1 / 3, np.pi]]]))
    back = round_trip(cfg)
    assert np.signbit(back.w_1[0, 0]) and np.signbit(back.v_a[0, 0]) and back.w_1[0, 1] == 5e-324
    general = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2), score="general", w_a=special)
    round_trip(general)


# ---- older documents and hostile ones -----------------------------------------------------------------------


def test_a_version_1_document_without_the_new_fields_opens_as_dot_product_self_attention():
    cfg = both_decoders(version_1_doc())
    assert cfg.score == "dot" and not cfg.cross and cfg.y is None and cfg.y_tokens is None
    assert cfg.w_a is cfg.w_1 is cfg.w_2 is cfg.v_a is None
    assert cfg.matrix_names() == MATRICES and cfg.query_tokens == cfg.tokens
    expected = make_config(("input1", "input2", "input3"), SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V,
                           mask_kind="causal")
    assert configs_equal(cfg, expected)
    want = multi_head_attention(np.array(SEED000_X, float), np.array(SEED000_W_Q, float), np.array(SEED000_W_K, float),
                                np.array(SEED000_W_V, float), np.eye(3), 1, mask=np.tri(3, dtype=bool))
    assert run(cfg).output.tobytes() == want.output.tobytes()
    doc = config_to_dict(cfg)  # written back, it is the same kind of document: no new fields
    assert not {"score", "w_a", "w_1", "w_2", "v_a", "y", "y_tokens"} & set(doc)
    assert both_decoders(version_1_doc(score="dot")).score == "dot"  # "dot" spelt out is the same


def test_a_hand_written_document_with_the_new_fields_opens_as_written():
    cfg = both_decoders(version_1_doc(
        mask_kind="padding", is_pad=[False, False, True], custom_mask=[[1, 1, 1], [1, 1, 1]],
        score="general", w_a=np.eye(3).tolist(), y_tokens=["out1", "out2"], y=[[1, 1, 0, 0], [0, 0, 1, 1]]))
    assert cfg.score == "general" and cfg.cross and cfg.n_q == 2 and cfg.query_tokens == ("out1", "out2")
    assert config_mask(cfg).tolist() == [[True, True, False]] * 2
    t = run(cfg)
    want = multi_head_cross_attention(cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, 1, mask=config_mask(cfg),
                                      score=ScoreFunction("general", w_a=np.eye(3)))
    assert t.heads[0].score_fn == "general" and t.output.tobytes() == want.output.tobytes()
    assert t.heads[0].weights.shape == (2, 3) and (t.heads[0].weights[:, 2] == 0).all()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"y": [[1, 0, 1, 0]]}, 'configuration: "y" and "y_tokens" come together (cross-attention), or neither.'),
        ({"y_tokens": ["a"]}, 'configuration: "y" and "y_tokens" come together (cross-attention), or neither.'),
        ({"y_tokens": ["a", "b"], "y": [[1, 0, 1, 0]]}, "y_tokens: need one label per row of Y (1), got 2."),
        ({"y_tokens": ["a"], "y": [[1, 0, 1]]}, "Y: has 3 columns but X has 4 (d_model)"),
        ({"y_tokens": "a", "y": [[1, 0, 1, 0]]}, "y_tokens: expected a list of labels (strings)."),
        ({"y_tokens": ["a"], "y": [[1, 0, "1", 0]]}, "Y: cell (0, 2) is a string, not a number."),
        ({"score": "general"}, "W_a: the general score function needs W_a."),
        ({"score": "additive", "w_1": [[1.0]] * 3, "v_a": [[1.0]]}, "W_2: the additive score function needs"),
        ({"score": "bahdanau"}, "score function: 'bahdanau' is not one of dot, general, additive."),
        ({"score": 3}, "score function: 3 is not one of"),
        ({"score": None}, "score function: null is not one of"),
        ({"score": "general", "w_a": [[1, 0], [0, 1]]}, "W_a: has 2 rows but each head's queries are 3 wide"),
        ({"score": "additive", "w_1": [[1.0]] * 3, "w_2": [[1.0]] * 3, "v_a": [[1.0], [2.0]]},
         f"v_a: 2 × 1 is over the cap of 1 × {LIMITS.width}."),
        ({"score": "additive", "w_1": [[1.0]] * 3, "w_2": [[1.0]] * 3, "v_a": [1.0]},
         "v_a: expected a non-empty list of rows of numbers, got a list."),
        ({"custom_mask": [[1, 1, 1]] * 2, "y_tokens": ["a", "b", "c"], "y": [[1, 0, 1, 0]] * 3},
         "mask: the custom mask must be True/False of shape (3, 3)"),
        ({"y_tokens": ["a"], "y": [[1, 0, 1, 0]]}, "mask: causal needs the queries and the keys from one sequence"),
    ],
)
def test_documents_with_bad_new_fields_are_refused_by_name(changes, message):
    doc = version_1_doc(**changes)
    if "y" in changes and "causal" not in message:
        doc["mask_kind"] = "none"
        doc["custom_mask"] = changes.get("custom_mask", [[1, 1, 1]] * len(changes["y"]))
    assert message in rejected(doc)


# ---- CSV tables of a cross configuration ----------------------------------------------------------------------


def read_csv(text: str) -> tuple[list[str], list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0][1:], [r[0] for r in rows[1:]], np.array([[float(v) for v in r[1:]] for r in rows[1:]])


def test_the_csv_zip_of_a_cross_configuration_labels_queries_with_y_and_keys_with_x():
    cfg = make_config(["le", "chat", "noir", "dort"], np.arange(12.0).reshape(4, 3) / 10, np.eye(3), np.eye(3),
                      np.eye(3), n_heads=1, y_tokens=["the", "cat"], y=[[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]],
                      mask_kind="padding", is_pad=(False, False, False, True))
    x_tokens, y_tokens = ["le", "chat", "noir", "dort"], ["the", "cat"]
    numbers = [str(j) for j in range(3)]
    trace = run(cfg)
    with zipfile.ZipFile(io.BytesIO(csv_zip(cfg, trace))) as zf:
        tables = {name.removesuffix(".csv"): read_csv(zf.read(name).decode()) for name in zf.namelist()
                  if name.endswith(".csv")}
        assert configs_equal(from_json(zf.read("config.json"))[0], cfg)
    expected_labels = {  # name -> (columns, rows)
        "x": (numbers, x_tokens), "y": (numbers, y_tokens), "w_q": (numbers, numbers),
        "mask": (x_tokens, y_tokens),
        "head0_q": (numbers, y_tokens), "head0_k": (numbers, x_tokens), "head0_v": (numbers, x_tokens),
        "head0_scores": (x_tokens, y_tokens), "head0_scaled": (x_tokens, y_tokens),
        "head0_masked": (x_tokens, y_tokens), "head0_weights": (x_tokens, y_tokens),
        "head0_output": (numbers, y_tokens), "concat": (numbers, y_tokens), "output": (numbers, y_tokens),
    }
    for name, (cols, rows) in expected_labels.items():
        assert tables[name][:2] == (cols, rows), name
    assert tables["head0_weights"][2].tobytes() == trace.heads[0].weights.tobytes()  # [n_y, n_x], exact
    assert tables["mask"][2].tolist() == [[1.0, 1.0, 1.0, 0.0]] * 2
    assert np.isneginf(tables["head0_masked"][2][:, 3]).all()


def test_the_csv_zip_of_score_functions_holds_their_intermediates():
    general = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2), score="general",
                          w_a=[[1.0, 2.0], [3.0, 4.0]])
    additive = load_preset("additive")
    for cfg, extra in ((general, ["w_a", "head0_q_a"]), (additive, ["w_1", "w_2", "v_a", "head0_q_1", "head0_k_2"])):
        trace = run(cfg)
        with zipfile.ZipFile(io.BytesIO(csv_zip(cfg, trace))) as zf:
            names = [n.removesuffix(".csv") for n in zf.namelist()]
            for name in extra:
                assert name in names, name
            if cfg.score == "additive":
                cols, rows, k_2 = read_csv(zf.read("head0_k_2.csv").decode())
                assert rows == list(cfg.tokens) and k_2.tobytes() == trace.heads[0].k_2.tobytes()
                cols, rows, v_a = read_csv(zf.read("v_a.csv").decode())
                assert rows == ["0"] and v_a.tobytes() == cfg.v_a.tobytes()
            else:
                _, rows, q_a = read_csv(zf.read("head0_q_a.csv").decode())
                assert rows == list(cfg.tokens) and q_a.tobytes() == trace.heads[0].q_a.tobytes()
        assert names.index("head0_q") < names.index(extra[-1]) < names.index("head0_scores")


# ---- the NumPy script -------------------------------------------------------------------------------------------


def script_configs():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5))  # [n_seq, d_model]
    w = {s: rng.standard_normal(shape) for s, shape in (("q", (5, 4)), ("k", (5, 6)), ("v", (5, 4)), ("o", (4, 3)))}
    tokens, pads = ["a", "b", "c", "d"], (False, True, False, False)
    return {
        "general, 2 heads, causal": make_config(
            tokens, x, w["q"], w["q"][:, ::-1].copy(), w["v"], w["o"], n_heads=2, score="general",
            w_a=rng.standard_normal((2, 4)), mask_kind="causal"),
        "additive, 2 heads, d_q ≠ d_k, padding": make_config(
            tokens, x, w["q"], w["k"], w["v"], w["o"], n_heads=2, score="additive", scale="none",
            w_1=rng.standard_normal((2, 6)), w_2=rng.standard_normal((3, 6)), v_a=rng.standard_normal((1, 6)),
            mask_kind="padding", is_pad=pads),
        "cross, dot, 2 heads, padding": make_config(
            tokens, x, w["q"], w["q"] + 1, w["v"], w["o"], n_heads=2, y_tokens=["p", "q", "r"],
            y=rng.standard_normal((3, 5)), mask_kind="padding", is_pad=pads),
        "cross, additive, custom with an empty row": make_config(
            tokens, x, w["q"], w["k"], w["v"], w["o"], n_heads=1, score="additive", scale=2.5,
            w_1=rng.standard_normal((4, 3)), w_2=rng.standard_normal((6, 3)), v_a=rng.standard_normal((1, 3)),
            y_tokens=["p", "q"], y=rng.standard_normal((2, 5)), mask_kind="custom",
            custom_mask=np.array([[1, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)),
        "cross, general, padding": make_config(
            tokens, x, w["q"], w["q"] * 2, w["v"], w["o"], n_heads=1, score="general",
            w_a=rng.standard_normal((4, 4)), y_tokens=["p", "q", "r"], y=rng.standard_normal((3, 5)),
            mask_kind="padding", is_pad=pads),
    }


@pytest.mark.parametrize("name", sorted(script_configs()))
def test_the_numpy_script_prints_attn_cores_numbers_bit_for_bit(name, tmp_path):
    cfg = script_configs()[name]
    got = run_script(cfg, tmp_path)
    assert_same_numbers(got, expected_blocks(cfg))
    if cfg.cross:
        assert got["head0_weights"].shape == (cfg.n_q, cfg.n_seq) and got["output"].shape[0] == cfg.n_q
    if cfg.mask_kind == "padding":
        assert (got["head0_weights"][:, 1] == 0).all()
    if cfg.mask_kind == "custom":
        assert (got["head0_weights"][1] == 0).all() and (got["output"][1] == 0).all()
