"""Permalinks, JSON files and CSV tables: exact round trips, and hostile input rejected with a message."""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import json
import tracemalloc
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attn_core import LIMITS, PRESETS, AttentionInputError, Words, configs_equal, load_preset, make_config, run
from attn_core.share import (
    NULLABLE_FIELDS,
    OPTIONAL_FIELDS,
    config_from_dict,
    config_to_dict,
    csv_zip,
    decode_link,
    encode_link,
    from_json,
    inflate,
    json_problem,
    named_matrices,
    to_csv,
    to_json,
)

from ..seeds import SEED000_OUTPUT, SEED000_W_K, SEED000_W_Q, SEED000_W_V, SEED000_X


def pack(text: str | bytes) -> str:
    """A permalink value built by hand from JSON text (so the tests do not trust encode_link)."""
    raw = text.encode() if isinstance(text, str) else text
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def seed_doc(**changes) -> dict:
    """A valid version-1 document for seed 000, written out in the test, with some fields changed."""
    doc = {
        "format": "self-attention-explorer", "version": 1, "tokens": ["input1", "input2", "input3"],
        "n_heads": 1, "scale": "sqrt_dk", "mask_kind": "none", "is_pad": [False, False, False],
        "custom_mask": [[1, 1, 1], [1, 1, 1], [1, 1, 1]], "x": SEED000_X, "w_q": SEED000_W_Q, "w_k": SEED000_W_K,
        "w_v": SEED000_W_V, "w_o": np.eye(3).tolist(),
    }
    doc.update(changes)
    return doc


def rejected(doc_or_text: object) -> str:
    """Feed the same document to both decoders; both must reject it the same way. Returns the message."""
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    with pytest.raises(AttentionInputError) as from_file:
        from_json(text.encode())
    with pytest.raises(AttentionInputError) as from_link:
        decode_link(pack(text))
    file_msg, link_msg = str(from_file.value), str(from_link.value)
    assert file_msg.removeprefix("JSON file: ") == link_msg.removeprefix("link: ")
    return file_msg


# ---- round trips ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_preset_round_trips_through_a_link_and_a_file_bit_for_bit(key):
    cfg = load_preset(key)
    value = encode_link(cfg, "steps")
    assert len(value) <= LIMITS.permalink_bytes or key == "seed003_heads"  # 3 × 4 × 512 Gaussians: too long
    back, page = decode_link(value, max_chars=10**6)
    assert configs_equal(cfg, back) and page == "steps"
    back, page = from_json(to_json(cfg).encode())
    assert configs_equal(cfg, back) and page is None


def test_a_hand_written_document_gives_the_seed_000_configuration():
    cfg, page = from_json(json.dumps(seed_doc(page="masking")).encode())
    expected = make_config(("input1", "input2", "input3"), SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    assert configs_equal(cfg, expected) and page == "masking"
    assert cfg.x.dtype == np.float64 and cfg.scale == "sqrt_dk"


def test_awkward_float64_values_come_back_bit_for_bit():
    special = [-0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1 + 0.2, -1 / 3, 1e-300, np.pi]
    x = np.array(special, dtype=np.float64).reshape(2, 4)
    cfg = make_config(["a", "b"], x, np.eye(4), np.eye(4), np.eye(4) * 1e-300, scale=0.1 + 0.7)
    for back, _ in (decode_link(encode_link(cfg)), from_json(to_json(cfg))):
        assert back.x.tobytes() == x.tobytes()  # -0.0 keeps its sign bit, subnormals survive
        assert configs_equal(cfg, back) and back.scale == 0.1 + 0.7


def test_a_link_is_compact_url_safe_text():
    value = encode_link(load_preset("seed000"))
    assert set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(value) < 400
    assert json.loads(zlib.decompress(base64.urlsafe_b64decode(value + "=="))) == json.loads(
        json.dumps(config_to_dict(load_preset("seed000")))
    )


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_a_capped_link_is_the_same_link_or_a_refusal(key):
    cfg = load_preset(key)
    full = encode_link(cfg, "masking")
    assert json.loads(zlib.decompress(base64.urlsafe_b64decode(full + "=="))) == config_to_dict(cfg, "masking")
    if len(full) <= LIMITS.permalink_bytes:
        assert encode_link(cfg, "masking", max_chars=LIMITS.permalink_bytes) == full
    else:
        with pytest.raises(AttentionInputError, match="needs more than 8,192 characters; share a JSON file instead"):
            encode_link(cfg, "masking", max_chars=LIMITS.permalink_bytes)
    with pytest.raises(AttentionInputError, match="needs more than 10 characters"):
        encode_link(cfg, max_chars=10)


def test_a_capped_link_of_the_largest_configuration_is_refused_early():
    rng = np.random.default_rng(0)
    n, d, w = LIMITS.n_seq, 512, 512  # the largest square one within the total cells (1,179,648)
    cfg = make_config([f"t{i}" for i in range(n)], rng.standard_normal((n, d)),
                      *(rng.standard_normal((d, w)) for _ in range(3)), w_o=rng.standard_normal((w, w)))
    with pytest.raises(AttentionInputError, match="needs more than 8,192 characters; share a JSON file instead"):
        encode_link(cfg, max_chars=LIMITS.permalink_bytes)  # stops after the first few kB of compressed output


def test_the_json_file_is_readable_one_matrix_row_per_line():
    text = to_json(load_preset("seed000"), "inputs")
    assert "    [1.0, 0.0, 1.0, 0.0],\n    [0.0, 2.0, 0.0, 2.0]," in text
    assert json.loads(text)["page"] == "inputs"


def test_unicode_token_labels_round_trip():
    cfg = make_config(["naïve", "日本", "😀 x"], SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    assert configs_equal(decode_link(encode_link(cfg))[0], cfg)
    assert configs_equal(from_json(to_json(cfg))[0], cfg)


@st.composite
def configs(draw):
    """Random valid configurations, built with make_config (several heads, any mask, any finite float64)."""
    n_seq, d_model = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    n_heads = draw(st.integers(1, 3))
    d_k, d_v, d_out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    cells = st.floats(allow_nan=False, allow_infinity=False, width=64)

    def matrix(r, c):
        return np.array(draw(st.lists(cells, min_size=r * c, max_size=r * c)), dtype=np.float64).reshape(r, c)

    labels = st.text(min_size=1, max_size=LIMITS.token_chars).filter(lambda t: t.strip())
    scale = draw(st.one_of(st.sampled_from(["sqrt_dk", "none"]),
                           st.floats(min_value=5e-324, allow_infinity=False, allow_nan=False)))
    return make_config(
        draw(st.lists(labels, min_size=n_seq, max_size=n_seq)),
        matrix(n_seq, d_model), matrix(d_model, n_heads * d_k), matrix(d_model, n_heads * d_k),
        matrix(d_model, n_heads * d_v), matrix(n_heads * d_v, d_out),
        n_heads=n_heads, scale=scale,
        mask_kind=draw(st.sampled_from(["none", "causal", "padding", "custom"])),
        is_pad=tuple(draw(st.lists(st.booleans(), min_size=n_seq, max_size=n_seq))),
        custom_mask=np.array(draw(st.lists(st.booleans(), min_size=n_seq**2, max_size=n_seq**2))).reshape(n_seq, n_seq),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(), page=st.one_of(st.none(), st.sampled_from(["overview", "steps", "multihead"])))
def test_random_configurations_round_trip_bit_for_bit(cfg, page):
    back, back_page = decode_link(encode_link(cfg, page))
    assert configs_equal(cfg, back) and back_page == page
    back, back_page = from_json(to_json(cfg, page))
    assert configs_equal(cfg, back) and back_page == page


# ---- hostile permalinks ------------------------------------------------------------------------------


def test_a_truncated_link_is_rejected():
    value = encode_link(load_preset("seed001_sentence"))
    for cut in (len(value) // 2, len(value) - 1, len(value) - 2, len(value) - 3, 5):
        with pytest.raises(AttentionInputError, match="link: "):
            decode_link(value[:cut])


@pytest.mark.parametrize("value", ["not a link!", "abc=", "a+b/", "ab cd", "é", "\x00"])
def test_characters_outside_base64url_are_rejected(value):
    with pytest.raises(AttentionInputError, match="not base64url"):
        decode_link(value)


def test_base64_of_the_wrong_length_is_rejected():
    with pytest.raises(AttentionInputError, match="length is wrong"):
        decode_link("abcde")


def test_bytes_that_are_not_zlib_are_rejected():
    junk = base64.urlsafe_b64encode(b"PK\x03\x04 this is not zlib data at all").decode().rstrip("=")
    with pytest.raises(AttentionInputError, match="not zlib-compressed"):
        decode_link(junk)
    with pytest.raises(AttentionInputError, match="extra bytes"):
        decode_link(base64.urlsafe_b64encode(zlib.compress(b"{}") + b"tail").decode().rstrip("="))


def test_a_zip_bomb_of_100_mb_of_zeros_is_refused_without_inflating_it():
    bomb = base64.urlsafe_b64encode(zlib.compress(bytes(100_000_000), 9)).decode().rstrip("=")
    with pytest.raises(AttentionInputError, match="over the cap of 8,192"):
        decode_link(bomb)  # ~130 kB of text: refused before decoding
    tracemalloc.start()
    try:
        with pytest.raises(AttentionInputError, match="inflates to more than 8,000,000 bytes"):
            decode_link(bomb, max_chars=len(bomb))  # past the length cap, the inflater stops at its own cap
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30_000_000  # the 100 MB are never held
    with pytest.raises(AttentionInputError, match="inflates to more than 1,000 bytes"):
        inflate(zlib.compress(bytes(1001)), 1000)
    assert inflate(zlib.compress(bytes(1000)), 1000) == bytes(1000)


def test_huge_dimensions_are_rejected_before_any_array_is_built():
    wide = [[0.0] * 100_000]
    msg = rejected(seed_doc(x=wide, tokens=["a"], is_pad=[False], custom_mask=[[1]]))
    assert msg == f"X: 1 × 100000 is over the cap of 256 × {LIMITS.d_model}."
    tall = [[0.0]] * 300
    assert f"X: 300 × 1 is over the cap of 256 × {LIMITS.d_model}." == rejected(seed_doc(x=tall))
    assert rejected(seed_doc(n_heads=17, w_q=[[0.0] * 17] * 4, w_k=[[0.0] * 17] * 4, w_v=[[0.0] * 17] * 4,
                             w_o=[[0.0]] * 17)) == "n_heads: 17 is over the cap of 16."


def test_a_link_that_is_too_long_is_refused_with_a_pointer_to_files():
    with pytest.raises(AttentionInputError, match="share a JSON file instead"):
        decode_link("A" * (LIMITS.permalink_bytes + 1))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_heads": -1}, "n_heads: must be a whole number of at least 1, got -1."),
        ({"n_heads": 0}, "n_heads: must be a whole number of at least 1, got 0."),
        ({"n_heads": 1.0}, "n_heads: must be a whole number of at least 1, got 1.0."),
        ({"n_heads": "1"}, "n_heads: must be a whole number of at least 1, got '1'."),
        ({"n_heads": True}, "n_heads: must be a whole number of at least 1, got true/false."),
        ({"n_heads": 2}, "n_heads: 2 heads do not divide the 3 columns of W_Q and W_K"),
        ({"n_heads": 10**40}, "n_heads: a number is over the cap of 16."),
        ({"n_heads": 17}, "n_heads: 17 is over the cap of 16."),
        ({"n_heads": [1] * 1000}, "n_heads: must be a whole number of at least 1, got a list."),
        ({"scale": {"a": 1}}, 'scale: must be "sqrt_dk", "none" or a number above 0, got an object.'),
        ({"scale": "x" * 1000}, 'scale: must be "sqrt_dk", "none" or a number above 0, got a string.'),
        ({"mask_kind": "x" * 1000}, "mask: kind a string is not one of"),
        ({"version": "v" * 1000}, "not version a string."),
        ({"page": "p" * 1000}, "page: a string is not a page name"),
        ({"scale": "huge"}, 'scale: "huge" is not one of'),
        ({"scale": -1}, "scale: the divisor must be a finite number above 0, got -1.0."),
        ({"scale": 0}, "scale: the divisor must be a finite number above 0, got 0.0."),
        ({"scale": True}, 'scale: must be "sqrt_dk", "none" or a number above 0, got true/false.'),
        ({"scale": 10**400}, "scale: the divisor is too large"),
        ({"scale": None}, 'scale: must be "sqrt_dk", "none" or a number above 0, got null.'),
        ({"mask_kind": "diagonal"}, "mask: kind 'diagonal' is not one of"),
        ({"mask_kind": ["causal"]}, "mask: kind ['causal'] is not one of"),
        ({"mask_kind": None}, "mask: kind null is not one of"),
        ({"is_pad": [0, 0, 1]}, "mask: is_pad must be a list of true/false"),
        ({"is_pad": [False]}, "mask: padding needs one True/False per token (3)."),
        ({"custom_mask": [[1, 2, 1], [1, 1, 1], [1, 1, 1]]}, "mask: custom_mask must be a list of equally long rows"),
        ({"custom_mask": [[True] * 3] * 3}, "mask: custom_mask must be a list of equally long rows"),
        ({"custom_mask": [[1, 1], [1, 1]]}, "mask: the custom mask must be True/False of shape (3, 3)"),
        ({"tokens": "input1 input2 input3"}, "tokens: expected a list of labels (strings)."),
        ({"tokens": ["a", 2, "c"]}, "tokens: expected a list of labels (strings)."),
        ({"tokens": ["a", "b"]}, "tokens: need one label per row of X (3), got 2."),
        ({"tokens": ["a", " ", "c"]}, "tokens: label 1 is empty"),
        ({"tokens": ["a", "b", "c" * 41]}, "tokens: label 2 is 41 characters long; the cap is 40."),
        ({"x": [*SEED000_X[:2], [1, 1, "1", 1]]}, "X: cell (2, 2) is a string, not a number."),
        ({"x": [*SEED000_X[:2], [1, 1, True, 1]]}, "X: cell (2, 2) is true/false, not a number."),
        ({"x": [[1, 0, 1, 0], [None, 2, 0, 2], [1, 1, 1, 1]]}, "X: cell (1, 0) is null, not a number."),
        ({"x": [[1, 0, 1, 0], [0, 2, 0], [1, 1, 1, 1]]}, "X: row 1 has 3 values but row 0 has 4"),
        ({"x": [[1, 0, 1, 0], 7, [1, 1, 1, 1]]}, "X: row 1 has a number but row 0 has 4"),
        ({"x": [1, 0, 1, 0]}, "X: expected a non-empty list of rows of numbers, got a list."),
        ({"x": []}, "X: expected a non-empty list of rows of numbers, got a list."),
        ({"x": [[]]}, "X: the matrix is empty"),
        ({"x": {"0": [1]}}, "X: expected a non-empty list of rows of numbers, got an object."),
        ({"x": [*SEED000_X[:2], [1, 1, 10**400, 1]]}, "X: cell (2, 2) is too large for a float64"),
        ({"w_q": [[1, 0, 1], [1, 0, 0], [0, 0, 1]]}, "W_Q: has 3 rows but X has 4 columns (d_model)"),
        ({"w_o": np.eye(2).tolist()}, "W_O: has 2 rows but W_V has 3 columns"),
        ({"version": 2}, "version: this app reads version 1 configurations, not version 2."),
        ({"version": "1"}, "version: this app reads version 1 configurations, not version '1'."),
        ({"version": None}, "not version null."),
        ({"format": "something-else"}, "configuration: not a Self-Attention Explorer file"),
        ({"page": "../../etc/passwd"}, "page: '../../etc/passwd' is not a page name"),
        ({"page": 3}, "page: 3 is not a page name"),
        ({"extra": 1}, "configuration: unknown field(s) 'extra'."),
        ({f"k{i}": i for i in range(1000)}, "configuration: unknown field(s) 'k0', 'k1', 'k10', 'k100', 'k101'."),
    ],
)
def test_wrong_types_shapes_and_values_are_rejected_with_a_clear_message(changes, message):
    text = rejected(seed_doc(**changes))
    assert message in text
    assert len(text) < 250  # a hostile value is named by its kind, not echoed


def test_missing_fields_are_named():
    doc = seed_doc()
    del doc["w_k"], doc["is_pad"]
    assert rejected(doc) == "configuration: missing field(s) 'is_pad', 'w_k'."


@pytest.mark.parametrize(("literal", "what"), [("NaN", "NaN"), ("Infinity", "+inf"), ("-Infinity", "-inf")])
def test_nan_and_infinity_in_the_json_name_the_cell(literal, what):
    text = json.dumps(seed_doc()).replace("[0, 2, 0, 2]", f"[0, 2, {literal}, 2]", 1)
    assert literal in text
    assert rejected(text) == f"X: cell (1, 2) is {what}; every cell must be a finite number."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "JSON file: there is nothing in it."),
        (" \n\t ", "JSON file: there is nothing in it."),
        ("{", "not valid JSON"),
        ("[1, 2]", "configuration: expected a JSON object {...}, got a list."),
        ('"hello"', "got a string."),
        ("null", "got null."),
        ("[" * 100_000 + "]" * 100_000, "lists or objects; a configuration has at most 16,384."),
        ("[" * 5_000 + "]" * 5_000, "the JSON is nested too deeply."),
        ('["' + '", "'.join(["ab"] * 20_000) + '"]', "strings; a configuration has at most 16,384."),
        ("[" + ", ".join(["true"] * 20_000) + "]", "true/false/null values; a configuration has at most 16,384."),
        ("[" + "0," * (LIMITS.total_cells + LIMITS.n_seq**2 + 16) + "0]", "numbers. A configuration holds at most"),
        ("[" + "9" * 5000 + "]", "a number has too many digits to read."),
        ('{"format": "self-attention-explorer", "format": "x"}', "the field 'format' appears twice."),
    ],
)
def test_malformed_or_hostile_json_is_rejected(text, message):
    assert message in rejected(text)


def test_a_file_that_is_not_utf8_or_too_big_is_rejected():
    with pytest.raises(AttentionInputError, match="not UTF-8 text"):
        from_json(b"\xff\xfe{}")
    with pytest.raises(AttentionInputError, match="JSON file: 40,000,001 bytes is over the cap of 40,000,000 bytes."):
        from_json(b" " * (LIMITS.file_bytes + 1))
    with pytest.raises(AttentionInputError, match="bytes is over the cap of 10 bytes"):
        from_json(json.dumps(seed_doc()), max_bytes=10)
    cfg, _ = from_json(b"\xef\xbb\xbf" + json.dumps(seed_doc()).encode())  # a UTF-8 byte-order mark is fine
    assert cfg.n_seq == 3


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: base64.urlsafe_b64encode(b).decode())))
def test_arbitrary_link_text_either_decodes_or_raises_attention_input_error(value):
    try:
        decode_link(value)
    except AttentionInputError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(["tokens", "n_heads", "scale", "mask_kind", "is_pad", "custom_mask", "x", "w_o", "page"]),
       value=json_values)
def test_any_json_value_in_any_field_decodes_or_raises_attention_input_error(field, value):
    text = json.dumps(seed_doc(**{field: value}))
    for decode in (lambda: from_json(text), lambda: decode_link(pack(text))):
        try:
            cfg, _ = decode()
        except AttentionInputError:
            continue
        assert cfg.x.dtype == np.float64  # whatever got through is a valid configuration


# ---- CSV tables and the zip ---------------------------------------------------------------------------


def read_csv(text: str) -> tuple[list[str], list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0][1:], [r[0] for r in rows[1:]], np.array([[float(v) for v in r[1:]] for r in rows[1:]])


def test_csv_of_seed_000_holds_the_numbers_computed_here():
    cfg = load_preset("seed000")
    tables = named_matrices(cfg, run(cfg))
    x, w_q, w_k, w_v = (np.array(m, dtype=float) for m in (SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    s = q @ k.T
    e = np.exp(s / np.sqrt(3) - (s / np.sqrt(3)).max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    cols, rows, values = read_csv(to_csv("head0_weights", tables["head0_weights"], cfg.tokens))
    assert cols == rows == ["input1", "input2", "input3"]
    np.testing.assert_allclose(values, weights, rtol=1e-12)
    cols, rows, values = read_csv(to_csv("head0_output", tables["head0_output"], cfg.tokens))
    assert cols == ["0", "1", "2"] and rows == ["input1", "input2", "input3"]
    np.testing.assert_allclose(values, weights @ v, rtol=1e-12)
    np.testing.assert_allclose(values[0], SEED000_OUTPUT[0], rtol=1e-6)  # seed 000's print
    cols, rows, values = read_csv(to_csv("w_q", tables["w_q"], cfg.tokens))
    assert rows == ["0", "1", "2", "3"] and values.tolist() == w_q.tolist()


def test_csv_values_are_exact_and_masked_scores_read_as_minus_infinity():
    cfg = load_preset("seed002_causal")
    tables = named_matrices(cfg, run(cfg))
    for name in ("x", "head0_scores", "head0_masked", "head0_weights", "output"):
        _, _, values = read_csv(to_csv(name, tables[name], cfg.tokens))
        assert values.tobytes() == tables[name].tobytes()
    _, _, masked = read_csv(to_csv("head0_masked", tables["head0_masked"], cfg.tokens))
    assert np.isneginf(masked[np.triu_indices(4, 1)]).all()
    _, _, mask = read_csv(to_csv("mask", tables["mask"], cfg.tokens))
    assert mask.tolist() == np.tri(4).tolist()


def test_token_labels_with_commas_and_quotes_stay_one_csv_cell():
    cfg = make_config(['a,b', 'say "hi"', "c"], SEED000_X, SEED000_W_Q, SEED000_W_K, SEED000_W_V)
    cols, rows, _ = read_csv(to_csv("head0_scores", run(cfg).heads[0].scores, cfg.tokens))
    assert cols == rows == ['a,b', 'say "hi"', "c"]


def test_the_zip_holds_every_matrix_and_intermediate_of_every_head():
    cfg = replace(load_preset("seed003_heads"), mask_kind="causal")
    data = csv_zip(cfg, run(cfg))
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    stages = ["q", "k", "v", "scores", "scaled", "masked", "weights", "output"]
    expected = ["x", "w_q", "w_k", "w_v", "w_o", "mask"]
    expected += [f"head{h}_{s}" for h in range(8) for s in stages] + ["concat", "output"]
    assert names == [f"{n}.csv" for n in expected] + ["config.json"]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert configs_equal(from_json(zf.read("config.json"))[0], cfg)
        _, _, concat = read_csv(zf.read("concat.csv").decode())
        heads = [read_csv(zf.read(f"head{h}_output.csv").decode())[2] for h in range(8)]
        assert concat.tobytes() == np.hstack(heads).tobytes()  # the heads side by side, in order
    assert csv_zip(cfg, run(cfg)) == data  # the same configuration gives the same bytes


def test_the_readme_limits_table_lists_every_cap_of_attn_core():
    section = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split("## Limits")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line.endswith(" |")]
    listed = sorted(int(row.rsplit("|", 2)[1].strip().replace(",", "")) for row in rows[1:])  # after the header
    assert listed == sorted(dataclasses.astuple(LIMITS))


def test_a_file_names_every_cell_that_is_not_a_number_in_reading_order():
    """Not the first alone: each such cell of a matrix, the first MORE_CELLS + 1 said, all counted (as as_matrix)."""
    doc = json.loads(to_json(load_preset("seed000")))
    doc["w_k"] = [["a", 1, 0], [0, None, 1], [1, 1, True], [0, 1, 0]]
    with pytest.raises(AttentionInputError) as err:
        from_json(json.dumps(doc).encode())
    said = [str(err.value), *map(str, err.value.more)]
    assert said == ["W_K: cell (0, 0) is a string, not a number.", "W_K: cell (1, 1) is null, not a number.",
                    "W_K: cell (2, 2) is true/false, not a number."]
    assert (err.value.matrix, err.value.cell, err.value.n_more) == ("W_K", (0, 0), 2)
    doc["w_k"] = [["a"] * 3] * 4
    with pytest.raises(AttentionInputError) as err:
        from_json(json.dumps(doc).encode())
    assert err.value.n_more == 11 and len(err.value.more) == 10


# ---- what a refusal says: JSON's syntax errors in words, null as off, JSON's literals -----------------------------


@pytest.mark.parametrize(("text", "reason"), [
    ("x", "a value was expected at line 1, column 1"),
    ("{", "a field name in double quotes was expected at line 1, column 2"),
    ('{"a" 1}', "a colon was expected at line 1, column 6"),
    ("[1 2]", "a comma was expected at line 1, column 4"),
    ('{\n  "a": "abc', "a string that is never closed starts at line 2, column 8"),
    ("{} x", "more text follows the end of the JSON at line 1, column 4"),
    ('["a\x01"]', "a line break or another control character is inside a string at line 1, column 4"),
    ('["\\q"]', "a backslash escape is not valid at line 1, column 3"),
    ('["\\u12"]', "a backslash escape is not valid at line 1, column 4"),
])
def test_a_json_syntax_error_says_where_and_why_in_words_the_app_translates(text, reason):
    """A fresh reviewer: json's own English ("Expecting value") was shown inside the translated sentence."""
    assert rejected(text) == f"JSON file: not valid JSON ({reason})."
    with pytest.raises(AttentionInputError) as err:
        from_json(text)
    assert isinstance(err.value.params["problem"], Words)  # marked: the app translates it with the sentence


def test_a_json_syntax_error_not_foreseen_gets_words_too():
    problem = json_problem(json.JSONDecodeError("Something json says one day", "x", 0))
    assert problem == "the text is not valid JSON" and isinstance(problem, Words)


@pytest.mark.parametrize("field", NULLABLE_FIELDS)
def test_null_is_off_for_every_optional_field_whose_off_is_none(field):
    """An export leaves such a field out; null says the same (a fresh reviewer: "window": null was refused)."""
    cfg, page = config_from_dict(seed_doc(**{field: None}))
    assert configs_equal(cfg, config_from_dict(seed_doc())[0]) and page is None
    assert getattr(cfg, field, None) is None


def test_every_optional_field_whose_off_is_none_takes_null():
    empty = make_config(["a"], np.ones((1, 2)), np.eye(2), np.eye(2), np.eye(2))
    off = {f.name for f in dataclasses.fields(empty) if f.name in OPTIONAL_FIELDS and getattr(empty, f.name) is None}
    assert off <= set(NULLABLE_FIELDS) and set(NULLABLE_FIELDS) <= {*OPTIONAL_FIELDS}


def test_a_modern_option_set_to_null_is_off():
    cfg = replace(load_preset("seed000"), window=2, softcap=30.0, n_kv_heads=1)
    doc = json.loads(to_json(cfg)) | {"window": None, "softcap": None, "n_kv_heads": None, "rope": None}
    back = config_from_dict(doc)[0]
    assert (back.window, back.softcap, back.n_kv_heads, back.rope) == (None, None, None, None)


@pytest.mark.parametrize(("changes", "message"), [
    ({"qk_norm": None}, "qk_norm: must be true or false, got null."),
    ({"window": True}, "window: must be a whole number from 1 to 256, got true."),
    ({"n_kv_heads": False}, "n_kv_heads: must be a whole number from 1 to 256, got false."),
    ({"page": False}, "page: false is not a page name"),
    ({"version": True}, "not version true."),
])
def test_a_refusal_quotes_null_true_and_false_as_json_writes_them(changes, message):
    text = rejected(seed_doc(**changes))
    assert message in text and not {"None", "True", "False"} & set(text.replace(".", " ").split())


def test_too_many_numbers_says_the_cap_a_learner_can_fit_in():
    text = rejected("[" + "0," * (LIMITS.total_cells + LIMITS.n_seq**2 + 16) + "0]")
    assert f"at most {LIMITS.total_cells:,} cells in X and the weights together" in text
    assert "the cap is on the cells" not in text
