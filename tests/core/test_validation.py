"""Every AttentionInputError path: the message names the matrix and, where one cell is at fault, the cell."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

import attn_core.config as config_module
from attn_core import (
    LIMITS,
    AttentionInputError,
    Limits,
    causal_mask,
    make_config,
    multi_head_attention,
    padding_mask,
    run,
    scaled_dot_product_attention,
    self_attention,
    validate_config,
)
from attn_core.validation import MORE_CELLS, as_matrix, check_dim, check_inner

I3 = np.eye(3)
MATRICES = ("X", "W_Q", "W_K", "W_V", "W_O")


def mha(**changes):
    """multi_head_attention on 3 tokens, d_model 3, with one argument replaced."""
    args = {"X": I3, "W_Q": I3, "W_K": I3, "W_V": I3, "W_O": I3, "n_heads": 1, "scale": "sqrt_dk", "mask": None}
    args.update(changes)
    return multi_head_attention(args["X"], args["W_Q"], args["W_K"], args["W_V"], args["W_O"], args["n_heads"],
                                scale=args["scale"], mask=args["mask"])


def error_of(fn, *args, **kwargs) -> AttentionInputError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(AttentionInputError) as info:
            fn(*args, **kwargs)
    return info.value


# ---- non-finite cells ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", MATRICES)
@pytest.mark.parametrize(("value", "word"), [(np.nan, "NaN"), (np.inf, "+inf"), (-np.inf, "-inf")])
@pytest.mark.parametrize("cell", [(0, 0), (1, 2), (2, 1)])
def test_non_finite_cell_is_named(name, value, word, cell):
    m = I3.copy()
    m[cell] = value
    err = error_of(mha, **{name: m})
    assert err.matrix == name
    assert err.cell == cell
    msg = str(err)
    assert msg.startswith(f"{name}:")
    assert f"({cell[0]}, {cell[1]})" in msg
    assert word in msg


def test_the_first_bad_cell_in_reading_order_is_named():
    m = np.ones((3, 4))
    m[2, 0] = np.nan
    m[1, 3] = np.inf
    err = error_of(self_attention, m, np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)))
    assert err.cell == (1, 3) and "(1, 3) is +inf" in str(err)


@pytest.mark.parametrize("name", ["Q", "K", "V"])
def test_non_finite_q_k_v_cell_is_named(name):
    args = {"Q": [[1.0, 2.0]], "K": [[1.0, 2.0], [3.0, 4.0]], "V": [[1.0], [2.0]]}
    bad = [row[:] for row in args[name]]
    bad[0][len(bad[0]) - 1] = float("nan")
    args[name] = bad
    err = error_of(scaled_dot_product_attention, args["Q"], args["K"], args["V"])
    assert err.matrix == name
    assert err.cell == (0, len(bad[0]) - 1)
    assert str(err).startswith(f"{name}: cell (0, {len(bad[0]) - 1}) is NaN")


# ---- cells that are not numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1", "abc", None, True, False, np.bool_(True), [1.0], {}, object(), 1 + 2j, b"1"])
def test_a_cell_that_is_not_a_number_is_named(value):
    rows = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    rows[1][2] = value
    err = error_of(self_attention, rows, I3, I3, I3)
    assert err.matrix == "X"
    assert err.cell == (1, 2)
    assert str(err).startswith("X: cell (1, 2) is ")
    assert "not a number" in str(err)


def test_an_int_too_large_for_float64_is_named():
    rows = [[1, 2, 3], [4, 5, 10**400], [7, 8, 9]]
    err = error_of(self_attention, I3, rows, I3, I3)
    assert (err.matrix, err.cell) == ("W_Q", (1, 2))
    assert "(1, 2)" in str(err) and "1.8e308" in str(err)


def cells_said(err: AttentionInputError) -> list[tuple[tuple[int, int], str]]:
    """Each cell an error names (the first, then ``err.more``) with its message."""
    return [(e.cell, str(e)) for e in (err, *err.more)]


def test_every_bad_cell_of_a_grid_is_named_in_reading_order():
    """Text, an empty cell (None), an int beyond float64 and non-finite numbers, mixed: each named by the core as
    it names one alone, row by row; the first is the error itself, as before."""
    rows = [[1.0, "abc", None], [float("inf"), 2, 10**400], [3.0, 4.0, float("nan")]]
    err = error_of(as_matrix, "X", rows)
    assert cells_said(err) == [
        ((0, 1), "X: cell (0, 1) is 'abc', not a number."),
        ((0, 2), "X: cell (0, 2) is None, not a number."),
        ((1, 0), "X: cell (1, 0) is +inf; every cell must be a finite number."),
        ((1, 2), "X: cell (1, 2) is beyond ±1.8e308, too large for a float64."),
        ((2, 2), "X: cell (2, 2) is NaN; every cell must be a finite number."),
    ]
    assert err.n_more == 4 and all(e.matrix == "X" and e.n_more == 0 for e in err.more)


def test_every_non_finite_cell_of_a_float_matrix_is_named():
    m = np.ones((3, 4))
    m[2, 0], m[1, 3], m[1, 1] = np.nan, np.inf, -np.inf
    err = error_of(as_matrix, "W_Q", m)
    assert [(e.cell, e.params["what"]) for e in (err, *err.more)] == [((1, 1), "-inf"), ((1, 3), "+inf"),
                                                                       ((2, 0), "NaN")]
    assert err.n_more == 2


@pytest.mark.parametrize("kind", ["text", "nan"])
def test_an_error_describes_a_few_bad_cells_and_counts_them_all(kind):
    """A 40 × 50 matrix with every cell of rows 3 to 39 bad (1,850 cells): the first named, the next MORE_CELLS
    described, all counted."""
    m = np.ones((40, 50)) if kind == "nan" else np.ones((40, 50)).astype(object)
    m[3:] = np.nan if kind == "nan" else "x"
    err = error_of(as_matrix, "X", m)
    expected = [(3 + k // 50, k % 50) for k in range(MORE_CELLS + 1)]  # reading order: row 3, columns 0, 1, ...
    assert [e.cell for e in (err, *err.more)] == expected
    assert err.n_more == 37 * 50 - 1


def test_one_bad_cell_has_no_more():
    err = error_of(as_matrix, "X", [[1.0, "a"], [2.0, 3.0]])
    assert err.cell == (0, 1) and err.more == () and err.n_more == 0
    assert AttentionInputError("{name}: x", name="X").more == ()  # every error has them


def test_large_but_representable_python_ints_are_numbers():
    t = scaled_dot_product_attention([[10**20]], [[0]], [[2]])
    assert t.q[0, 0] == 1e20 and t.output[0, 0] == 2.0


@pytest.mark.parametrize("cells", [
    [0.1, -0.0, 3, 2**53 + 1, 2**64 + 3, -(2**63) - 5, 10**300 + 7],  # Python floats and ints: one conversion
    [0.5, np.float64(0.25), np.int64(7), np.float32(0.1), 2**70 + 1, 1.0],  # numpy scalars: cell by cell
])
def test_an_object_grid_of_numbers_is_float_of_each_cell(cells):
    """A grid's object matrix (as the editor reads it) is float64 of each cell, whichever path converts it."""
    got = as_matrix("X", np.array([cells], dtype=object))
    assert got.dtype == np.float64
    assert got[0].tolist() == [float(v) for v in cells]


@pytest.mark.parametrize("array", [np.array([["1", "2"], ["3", "4"]]), np.ones((2, 2), dtype=bool),
                                   np.ones((2, 2), dtype=complex)])
def test_an_array_of_the_wrong_dtype_names_the_matrix_and_dtype(array):
    err = error_of(scaled_dot_product_attention, np.eye(2), np.eye(2), array)
    assert err.matrix == "V"
    assert str(err).startswith("V: cells must be numbers") and str(array.dtype) in str(err)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64, np.uint16])
def test_numeric_dtypes_are_accepted_as_float64(dtype):
    x = np.array([[1, 0], [0, 2]], dtype=dtype)
    t = scaled_dot_product_attention(x, x, x, scale="none")
    assert t.q.dtype == np.float64
    np.testing.assert_array_equal(t.scores, [[1, 0], [0, 4]])


# ---- shapes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "detail"), [
    ([], "expected a matrix (2 dimensions), got 1"),
    ([[]], "empty (shape 1 × 0)"),
    (np.zeros((0, 3)), "empty (shape 0 × 3)"),
    (np.zeros((3, 0)), "empty (shape 3 × 0)"),
    ([1.0, 2.0, 3.0], "expected a matrix (2 dimensions), got 1"),
    (5.0, "expected a matrix (2 dimensions), got 0"),
    ("abc", "expected a matrix (2 dimensions), got 0"),
    (None, "expected a matrix (2 dimensions), got 0"),
    (np.zeros((2, 2, 2)), "expected a matrix (2 dimensions), got 3"),
    ([[1.0, 2.0], [3.0]], "rows of different lengths"),
    ([[1.0, 2.0], [3.0, 4.0, 5.0], [6.0]], "rows of different lengths"),
])
@pytest.mark.parametrize("name", ["X", "W_O"])
def test_empty_ragged_and_wrongly_nested_matrices(value, detail, name):
    err = error_of(mha, **{name: value})
    assert err.matrix == name
    assert str(err).startswith(f"{name}: ")
    assert detail in str(err)
    assert err.cell is None


def test_mismatched_shapes_name_the_matrix_at_fault():
    cases = [
        (lambda: self_attention(I3, np.ones((2, 3)), I3, I3), "W_Q", "has 2 rows but X has 3 columns"),
        (lambda: self_attention(I3, I3, np.ones((3, 2)), I3), "W_K", "has 2 columns but W_Q has 3"),
        (lambda: self_attention(I3, I3, I3, np.ones((4, 3))), "W_V", "has 4 rows but X has 3 columns"),
        (lambda: scaled_dot_product_attention(I3, np.ones((3, 2)), I3), "K", "has width 2 but Q has width 3"),
        (lambda: scaled_dot_product_attention(I3, I3, np.ones((2, 3))), "V", "has 2 rows but K has 3"),
        (lambda: mha(W_O=np.ones((2, 3))), "W_O", "has 2 rows but the heads concatenate to 3 columns"),
        (lambda: mha(W_K=np.ones((3, 2))), "W_K", "has 2 columns but W_Q has 3"),
        (lambda: mha(W_V=np.ones((2, 3))), "W_V", "has 2 rows but X has 3 columns"),
    ]
    for fn, name, detail in cases:
        err = error_of(fn)
        assert err.matrix == name, str(err)
        assert str(err).startswith(f"{name}: ") and detail in str(err)


@pytest.mark.parametrize(("fn", "message"), [
    (lambda: self_attention(I3, np.ones((2, 3)), I3, I3),
     "W_Q: has 2 rows but X has 3 columns; X @ W_Q needs them equal."),
    (lambda: self_attention(I3, I3, np.ones((3, 2)), I3),
     "W_K: has 2 columns but W_Q has 3; queries and keys need the same width d_k."),
    (lambda: scaled_dot_product_attention(I3, np.ones((3, 2)), I3),
     "K: has width 2 but Q has width 3; queries and keys need the same width d_k."),
    (lambda: scaled_dot_product_attention(I3, I3, np.ones((2, 3))),
     "V: has 2 rows but K has 3; every key needs one value row."),
    (lambda: mha(W_V=np.ones((2, 3))), "W_V: has 2 rows but X has 3 columns; X @ W_V needs them equal."),
    (lambda: mha(W_K=np.ones((3, 2))), "W_K: has 2 columns but W_Q has 3; queries and keys need the same width d_k."),
    (lambda: mha(W_O=np.ones((2, 3))),
     "W_O: has 2 rows but the heads concatenate to 3 columns (n_heads · d_v); they must match."),
    (lambda: validate_config(replace(good_config(), w_q=np.ones((2, 3)))),
     "W_Q: has 2 rows but X has 3 columns (d_model); they must match."),
    (lambda: validate_config(replace(good_config(), w_k=np.ones((3, 2)))),
     "W_K: has 2 columns but W_Q has 3; queries and keys need the same width d_k."),
    (lambda: validate_config(replace(good_config(), w_o=np.ones((2, 3)))),
     "W_O: has 2 rows but W_V has 3 columns (n_heads · d_v); they must match."),
])
def test_every_shape_mismatch_message_in_full(fn, message):
    err = error_of(fn)
    assert str(err) == message
    assert err.matrix == message.split(":")[0] and err.cell is None


def test_check_dim_is_silent_when_the_sizes_agree():
    assert check_dim("V", 3, "K", 3, "has {size} rows but {other} has {other_size}.") is None


@pytest.mark.parametrize(("args", "message"), [
    (("V", 2, "K", 3, "has {size} rows but {other} has {other_size}; every key needs one value row."),
     "V: has 2 rows but K has 3; every key needs one value row."),
    (("K (head 1)", 4, "Q (head 1)", 2, "has width {size} but {other} has width {other_size}."),
     "K (head 1): has width 4 but Q (head 1) has width 2."),
    (("W_Q", 2, "X", 3, "has {size} rows but {other} has {other_size} columns; {other} @ {name} needs them equal."),
     "W_Q: has 2 rows but X has 3 columns; X @ W_Q needs them equal."),
    (("W_O", 5, "W_V", 6, "has {size} rows but the heads concatenate to {other_size} columns."),
     "W_O: has 5 rows but the heads concatenate to 6 columns."),
])
def test_check_dim_names_the_first_matrix_as_the_one_at_fault(args, message):
    err = error_of(check_dim, *args)
    assert str(err) == message
    assert err.matrix == args[0]
    assert err.cell is None


def test_check_inner_names_the_right_hand_matrix():
    check_inner("X", np.ones((3, 4)), "W_V", np.ones((4, 2)))  # [3, 4] @ [4, 2] is defined: no error
    err = error_of(check_inner, "X", np.ones((3, 4)), "W_V", np.ones((5, 2)))  # [3, 4] @ [5, 2] is not
    assert str(err) == "W_V: has 5 rows but X has 4 columns; X @ W_V needs them equal."
    assert err.matrix == "W_V" and err.cell is None


def test_values_may_be_wider_or_narrower_than_keys():
    t = self_attention(I3, I3, I3, np.ones((3, 5)))
    assert t.output.shape == (3, 5)


# ---- heads -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_heads", "w_qk", "w_v", "name", "choices"), [
    (4, 6, 6, "W_Q", "choose one of 1, 2, 3, 6"),
    (5, 12, 12, "W_Q", "choose one of 1, 2, 3, 4, 6, 12"),
    (2, 4, 3, "W_V", "choose one of 1, or change"),
    (3, 6, 4, "W_V", "choose one of 1, 2, or change"),
    (7, 3, 3, "W_Q", "choose one of 1, 3"),
])
def test_n_heads_that_do_not_divide_the_widths_list_the_valid_choices(n_heads, w_qk, w_v, name, choices):
    err = error_of(multi_head_attention, I3, np.ones((3, w_qk)), np.ones((3, w_qk)), np.ones((3, w_v)),
                   np.eye(w_v), n_heads)
    assert err.matrix == name
    assert str(err).startswith(f"n_heads: {n_heads} heads do not divide")
    assert choices in str(err)


@pytest.mark.parametrize("n_heads", [0, -1, 1.0, 2.5, True, "1", None, [1]])
def test_n_heads_must_be_a_whole_number_of_at_least_one(n_heads):
    err = error_of(mha, n_heads=n_heads)
    assert str(err).startswith("n_heads: must be a whole number of at least 1") and repr(n_heads) in str(err)


def test_numpy_integer_head_counts_are_accepted():
    assert mha(n_heads=np.int64(3)).n_heads == 3


# ---- mask ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mask", "detail"), [
    (np.ones((3, 3)), "must be boolean (True = may attend), got dtype float64"),
    (np.ones((3, 3), dtype=int), "must be boolean (True = may attend), got dtype int"),
    ([[1, 0, 0], [1, 1, 0], [1, 1, 1]], "must be boolean"),
    ([["a", "b", "c"]] * 3, "must be boolean"),
    ([[None] * 3] * 3, "must be boolean"),
    (np.ones((2, 3), dtype=bool), "shape (2, 3) does not match the scores' shape (3, 3)"),
    (np.ones((3, 4), dtype=bool), "shape (3, 4) does not match"),
    (np.ones(3, dtype=bool), "shape (3,) does not match"),
    (True, "shape () does not match"),
    ([[True, True, True], [True], [True, False, True]], "rows of different lengths"),
])
def test_a_bad_mask_is_named(mask, detail):
    for fn in (lambda: mha(mask=mask), lambda: self_attention(I3, I3, I3, I3, mask=mask),
               lambda: scaled_dot_product_attention(I3, I3, I3, mask=mask)):
        err = error_of(fn)
        assert err.matrix == "mask"
        assert str(err).startswith("mask: ") and detail in str(err)


def test_mask_helpers_reject_bad_input():
    assert error_of(causal_mask, 0).matrix == "mask"
    assert error_of(causal_mask, "3").matrix == "mask"
    assert error_of(causal_mask, 2.5).matrix == "mask"
    for bad in ([], [0, 1], [[True, False]], "TF", [[True], [False, True]]):
        err = error_of(padding_mask, bad)
        assert err.matrix == "mask" and "one True/False per token" in str(err)


# ---- scale ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0, 0.0, -1, -1e-9, float("nan"), float("inf"), -float("inf"), True, False,
                                   None, [2.0], "2", np.nan])
def test_a_bad_divisor_is_refused(scale):
    err = error_of(self_attention, I3, I3, I3, I3, scale=scale)
    assert str(err).startswith("scale: ")
    assert "above 0" in str(err) or "is not one of" in str(err)


@pytest.mark.parametrize("scale", ["SQRT_DK", "sqrt", "", "None"])
def test_an_unknown_scale_mode_lists_the_known_ones(scale):
    err = error_of(self_attention, I3, I3, I3, I3, scale=scale)
    assert '"sqrt_dk", "none" or a positive number' in str(err)


@pytest.mark.parametrize(("scale", "divisor"), [(2, 2.0), (0.5, 0.5), (np.float32(4.0), 4.0), (np.int64(3), 3.0),
                                                ("none", 1.0), ("sqrt_dk", np.sqrt(3))])
def test_good_divisors(scale, divisor):
    t = self_attention(I3, I3, I3, I3, scale=scale)
    assert t.divisor == pytest.approx(divisor, rel=1e-15)
    np.testing.assert_allclose(t.scaled, np.eye(3) / divisor, rtol=1e-15)


# ---- overflow of intermediates ---------------------------------------------------------------------------


def test_scores_that_overflow_are_named_not_nan():
    x = np.full((3, 3), 1e200)
    err = error_of(self_attention, x, I3, I3, I3)
    assert err.matrix == "scores QKᵀ" and err.cell == (0, 0)
    assert str(err).startswith("scores QKᵀ: cell (0, 0) is +inf; it overflowed float64")
    assert "make the entries of Q and K smaller" in str(err)


def test_scores_that_overflow_to_nan_are_named():
    # +inf and -inf products in one dot product: inf - inf = NaN, still reported as an overflow
    q = [[1e200, 1e200]]
    k = [[1e200, -1e200]]
    err = error_of(scaled_dot_product_attention, q, k, [[1.0]])
    assert err.matrix == "scores QKᵀ" and err.cell == (0, 0) and "overflowed" in str(err)


def test_projections_that_overflow_are_named():
    err = error_of(self_attention, np.full((2, 2), 1e200), np.full((2, 2), 1e200), np.eye(2), np.eye(2))
    assert err.matrix == "Q" and "X and W_Q" in str(err) and err.cell == (0, 0)
    err = error_of(mha, X=np.full((3, 3), 1e300), W_V=np.full((3, 3), 1e300))
    assert err.matrix in {"Q", "K", "V"} and "overflowed" in str(err)


def test_scaled_scores_that_overflow_name_the_divisor():
    err = error_of(scaled_dot_product_attention, [[1e300]], [[10.0]], [[1.0]], scale=1e-10)
    assert err.matrix == "scaled scores" and err.cell == (0, 0)
    assert "raise the divisor" in str(err)


def test_output_projection_that_overflows_is_named():
    err = error_of(mha, W_V=I3 * 1e10, W_O=np.full((3, 3), 1e300))
    assert err.matrix == "output" and "W_O" in str(err)


def test_huge_but_finite_scores_give_one_hot_weights_not_nan():
    t = scaled_dot_product_attention([[1e150]], [[1e150], [-1e150], [1e149]], [[1.0], [2.0], [3.0]])
    np.testing.assert_array_equal(t.weights, [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(t.output, [[1.0]])


# ---- validate_config: one path, the caps in one place -----------------------------------------------------


def good_config(n=3, d_model=3, width=3, **options):
    tokens = [f"t{i}" for i in range(n)]
    return make_config(tokens, np.ones((n, d_model)), np.ones((d_model, width)), np.ones((d_model, width)),
                       np.ones((d_model, width)), **options)


def test_a_good_config_is_normalised():
    cfg = make_config(["a", "b"], [[1, 2], [3, 4]], [[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 0], [0, 1]])
    for name in ("x", "w_q", "w_k", "w_v", "w_o"):
        assert cfg.matrix(name).dtype == np.float64
    np.testing.assert_array_equal(cfg.w_o, np.eye(2))
    assert cfg.is_pad == (False, False) and cfg.custom_mask.dtype == bool and cfg.custom_mask.all()
    assert cfg.tokens == ("a", "b")
    np.testing.assert_allclose(run(cfg).output, self_attention(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v).output)


@pytest.mark.parametrize(("field", "value", "matrix", "detail"), [
    ("x", np.ones((2, 3)), "tokens", "need one label per row of X (2), got 3"),
    ("x", [[1, 2, 3], [1, "a", 3], [1, 2, 3]], "X", "cell (1, 1) is 'a', not a number"),
    ("w_q", np.ones((2, 3)), "W_Q", "has 2 rows but X has 3 columns"),
    ("w_k", np.ones((3, 2)), "W_K", "has 2 columns but W_Q has 3"),
    ("w_o", np.ones((2, 3)), "W_O", "has 2 rows but W_V has 3 columns"),
    ("w_v", [[1, 2, float("inf")]] * 3, "W_V", "cell (0, 2) is +inf"),
    ("tokens", ("a", "b"), "tokens", "need one label per row of X (3), got 2"),
    ("tokens", ("a", " ", "c"), "tokens", "label 1 is empty"),
    ("tokens", ("a", 5, "c"), "tokens", "label 1 is 5, not text"),
    ("tokens", "abc", "tokens", "got str"),
    ("tokens", None, "tokens", "got NoneType"),
    ("tokens", ("a", "b", "x" * (LIMITS.token_chars + 1)), "tokens", f"the cap is {LIMITS.token_chars}"),
    ("mask_kind", "diagonal", "mask", "kind 'diagonal' is not one of none, causal, padding, custom"),
    ("mask_kind", ["causal"], "mask", "is not one of"),
    ("is_pad", (True,), "mask", "padding needs one True/False per token (3)"),
    ("is_pad", (1, 0, 0), "mask", "padding needs one True/False per token (3)"),
    ("is_pad", 5, "mask", "padding needs one True/False per token (3)"),
    ("custom_mask", np.ones((3, 3)), "mask", "custom mask must be True/False of shape (3, 3), got float64"),
    ("custom_mask", np.ones((2, 2), dtype=bool), "mask", "of shape (2, 2)"),
    ("custom_mask", [[True, True, True], [True]], "mask", "custom mask must be True/False"),
    ("n_heads", 2, "W_Q", "n_heads: 2 heads do not divide the 3 columns"),
    ("n_heads", "2", None, "n_heads: must be a whole number"),
    ("scale", -2.0, None, "scale: the divisor must be a finite number above 0"),
    ("scale", "sqrt", None, 'scale: "sqrt" is not one of'),
])
def test_validate_config_names_what_is_wrong(field, value, matrix, detail):
    cfg = good_config()
    err = error_of(validate_config, replace(cfg, **{field: value}))
    assert err.matrix == matrix
    assert detail in str(err)


def test_make_config_with_a_bad_token_list_or_w_v_raises_the_input_error():
    err = error_of(make_config, None, I3, I3, I3, I3)
    assert err.matrix == "tokens"
    err = error_of(make_config, ["a", "b", "c"], I3, I3, I3, [[1, 2, 3], [4, 5]])
    assert err.matrix == "W_V" and "rows of different lengths" in str(err)


@pytest.mark.parametrize(("what", "build", "cap"), [
    ("n_seq (tokens)", lambda: good_config(n=LIMITS.n_seq + 1), LIMITS.n_seq),
    ("d_model (columns of X)", lambda: good_config(d_model=LIMITS.d_model + 1), LIMITS.d_model),
    ("columns of W_Q", lambda: good_config(width=LIMITS.width + 1), LIMITS.width),
    ("columns of W_O", lambda: good_config(w_o=np.ones((3, LIMITS.width + 1))), LIMITS.width),
    ("n_heads", lambda: good_config(width=LIMITS.n_heads + 1, n_heads=LIMITS.n_heads + 1), LIMITS.n_heads),
])
def test_validate_config_caps(what, build, cap):
    err = error_of(build)
    assert str(err).startswith(f"{what}: {cap + 1} is over the cap of {cap}")


@pytest.mark.parametrize("d, w, d_out", [
    (512, 512, 512),  # the largest square configuration within the total cells (1,179,648)
    (LIMITS.d_model, 64 * LIMITS.n_heads // 4, LIMITS.width),  # every cap of a dimension, as a GPT-2 layer's head
])
def test_the_largest_configuration_within_the_caps_validates(d, w, d_out):
    n = LIMITS.n_seq
    cfg = make_config([f"t{i}" for i in range(n)], np.zeros((n, d)), np.zeros((d, w)), np.zeros((d, w)),
                      np.zeros((d, w)), np.zeros((w, d_out)), n_heads=LIMITS.n_heads)
    assert (cfg.n_seq, cfg.d_model, cfg.n_heads, cfg.d_out) == (n, d, LIMITS.n_heads, d_out)


def test_total_cells_cap(monkeypatch):
    """The total-cell cap is read from LIMITS; lowered here, since the per-dimension caps reach it first."""
    cells = 3 * 3 + 3 * (3 * 3) + 3 * 3  # X + W_Q, W_K, W_V + W_O
    monkeypatch.setattr(config_module, "LIMITS", Limits(total_cells=cells - 1))
    err = error_of(good_config)
    assert f"{cells:,} cells" in str(err) and f"the cap is {cells - 1:,}" in str(err)
    monkeypatch.setattr(config_module, "LIMITS", Limits(total_cells=cells))
    assert good_config().n_seq == 3


def test_validation_happens_before_any_arithmetic():
    """A bad cell late in W_O is reported even though X would overflow the scores first."""
    w_o = I3.copy()
    w_o[2, 2] = np.nan
    err = error_of(mha, X=np.full((3, 3), 1e200), W_O=w_o)
    assert err.matrix == "W_O" and err.cell == (2, 2)
