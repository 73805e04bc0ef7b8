"""Any input a user can give attn_core ends in a correct trace or an AttentionInputError (issue 7).

hypothesis draws shapes within small caps and values from the whole zoo: ordinary numbers, finite extremes
(±1e300, ±1e-300, ±1.7e308), NaN, ±inf, huge ints, strings, None, bools, objects, nested lists, ragged rows,
wrong dtypes; masks of any shape and dtype including fully masked rows; any scale and head count. Never another
exception, never a NaN or inf in a returned weight or output, and whatever is returned is checked against
numpy written out here.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attn_core import (
    LIMITS,
    AttentionInputError,
    make_config,
    multi_head_attention,
    run,
    scaled_dot_product_attention,
    self_attention,
    validate_config,
)
from attn_core.config import Config

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NUMBERS = st.floats(-5, 5, allow_nan=False) | st.integers(-3, 3)
EXTREMES = st.sampled_from([1e300, -1e300, 1e-300, -1e-300, 1.7e308, -1.7e308, 5e-324, 0.0, -0.0])
NON_FINITE = st.sampled_from([float("nan"), float("inf"), float("-inf"), np.nan, np.float64("inf")])
HOSTILE = st.one_of(
    st.text(max_size=3), st.none(), st.booleans(), st.just(object()), st.just([1.0]), st.just({}),
    st.just(10**400), st.just(-(10**400)), st.just(complex(1, 1)), st.just(b"1"), st.just(np.bool_(True)),
)
CELL = st.one_of(NUMBERS, NUMBERS, NUMBERS, NUMBERS, EXTREMES, NON_FINITE, HOSTILE)


@st.composite
def matrix_like(draw, rows=None, cols=None):
    """A well-formed matrix most of the time; sometimes cells from the zoo, ragged rows, wrong nesting."""
    rows = draw(st.integers(1, 4)) if rows is None else rows
    cols = draw(st.integers(1, 4)) if cols is None else cols
    kind = draw(st.sampled_from(["clean", "clean", "clean", "cells", "ragged", "array", "odd"]))
    if kind == "clean":
        return draw(st.lists(st.lists(NUMBERS, min_size=cols, max_size=cols), min_size=rows, max_size=rows))
    if kind == "cells":
        return draw(st.lists(st.lists(CELL, min_size=cols, max_size=cols), min_size=rows, max_size=rows))
    if kind == "ragged":
        return draw(st.lists(st.lists(NUMBERS, min_size=0, max_size=4), min_size=1, max_size=4))
    if kind == "array":
        dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.complex128, np.str_, object]))
        values = draw(st.lists(st.one_of(NUMBERS, EXTREMES, NON_FINITE), min_size=rows * cols, max_size=rows * cols))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # float32 overflow of 1e300 while building the input
            return np.array(values).astype(dtype).reshape(rows, cols)
    return draw(st.one_of(
        st.just([]), st.just([[]]), NUMBERS, st.text(max_size=4), st.none(),
        st.lists(NUMBERS, min_size=1, max_size=3),  # one dimension
        st.just(np.zeros((2, 2, 2))), st.just(np.zeros((0, 3))), st.just([[[1.0, 2.0]], [[3.0, 4.0]]]),
    ))


@st.composite
def mask_like(draw, n_q, n_k):
    kind = draw(st.sampled_from(["none", "bool", "bool", "full_row", "wrong_shape", "ints", "ragged", "odd"]))
    if kind == "none":
        return None
    if kind in ("bool", "full_row"):
        m = np.array(draw(st.lists(st.booleans(), min_size=n_q * n_k, max_size=n_q * n_k))).reshape(n_q, n_k)
        if kind == "full_row":
            m[draw(st.integers(0, n_q - 1))] = False
        return m
    if kind == "wrong_shape":
        return np.ones((n_q + draw(st.integers(0, 2)), n_k + draw(st.integers(1, 2))), dtype=bool)
    if kind == "ints":
        return np.ones((n_q, n_k), dtype=int)
    if kind == "ragged":
        return [[True] * n_k] + [[True] * (n_k + 1)] * max(1, n_q - 1)
    return draw(st.one_of(st.none(), st.booleans(), st.text(max_size=2), st.just([[None]]), st.just(object())))


SCALES = st.one_of(
    st.sampled_from(["sqrt_dk", "none", "SQRT", "", 0, -1, 0.0, True, None, [2.0], float("nan"), float("inf")]),
    st.floats(1e-300, 1e300), st.floats(allow_nan=True), st.integers(-3, 10**6),
)
HEADS = st.one_of(st.integers(-1, 9), st.sampled_from([1.0, 2.5, "2", None, True, np.int64(2), 10**20]))


def assert_sound(trace_heads, mask=None):
    """Every returned weight row sums to 1 or is all 0 (and reported); everything is finite."""
    for t in trace_heads:
        for arr in (t.q, t.k, t.v, t.scores, t.scaled, t.weights, t.output):
            assert np.isfinite(arr).all()
        assert not np.isnan(t.masked).any()
        sums = t.weights.sum(axis=1)
        for i, s in enumerate(sums):
            if i in t.fully_masked_rows:
                assert s == 0 and (t.output[i] == 0).all()
            else:
                assert abs(s - 1) < 1e-9
        if t.mask is not None:
            assert (t.weights[~t.mask] == 0).all()
            assert t.fully_masked_rows == tuple(int(i) for i in np.flatnonzero(~t.mask.any(axis=1)))


def reference_attention(q, k, v, divisor, mask):  # numpy written out: softmax(mask(QKᵀ / s)) V
    s = (q @ k.T) / divisor
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    m[np.isneginf(m)] = 0
    e = np.exp(s - m)
    tot = e.sum(axis=1, keepdims=True)
    w = np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)
    return w, w @ v


def call(fn, *args, **kwargs):
    """Run ``fn``: return its result or the AttentionInputError; any other exception fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow warnings before the check raises
        try:
            return fn(*args, **kwargs)
        except AttentionInputError as err:
            assert str(err)  # a message, naming what is wrong
            if err.cell is not None:
                assert f"({err.cell[0]}, {err.cell[1]})" in str(err)
                assert err.matrix and str(err).startswith(err.matrix)
            return err


@FUZZ
@given(st.data())
def test_scaled_dot_product_attention_never_crashes(data):
    n_q, n_k, d_k = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    q = data.draw(matrix_like(n_q, d_k))
    k = data.draw(matrix_like(n_k, data.draw(st.sampled_from([d_k, d_k, d_k + 1]))))
    v = data.draw(matrix_like(data.draw(st.sampled_from([n_k, n_k, n_k + 1])), None))
    mask = data.draw(mask_like(n_q, n_k))
    scale = data.draw(SCALES)
    result = call(scaled_dot_product_attention, q, k, v, scale=scale, mask=mask)
    if isinstance(result, AttentionInputError):
        return
    assert_sound([result])
    w, out = reference_attention(np.asarray(q, float), np.asarray(k, float), np.asarray(v, float),
                                 result.divisor, None if mask is None else np.asarray(mask))
    np.testing.assert_allclose(result.weights, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.output, out, rtol=1e-9, atol=1e-9 * (1 + np.abs(out).max()))


@FUZZ
@given(st.data())
def test_self_attention_never_crashes(data):
    n, d_model = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    x = data.draw(matrix_like(n, d_model))
    w = [data.draw(matrix_like(data.draw(st.sampled_from([d_model, d_model, 1])), None)) for _ in range(3)]
    mask = data.draw(mask_like(n, n))
    result = call(self_attention, x, *w, scale=data.draw(SCALES), mask=mask)
    if not isinstance(result, AttentionInputError):
        assert_sound([result])
        np.testing.assert_allclose(result.q, np.asarray(x, float) @ np.asarray(w[0], float), rtol=1e-12)


@FUZZ
@given(st.data())
def test_multi_head_attention_never_crashes(data):
    n, d_model = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    n_heads_true = data.draw(st.integers(1, 3))
    d_k, d_v = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    x = data.draw(matrix_like(n, d_model))
    w_q = data.draw(matrix_like(d_model, n_heads_true * d_k))
    w_k = data.draw(matrix_like(d_model, data.draw(st.sampled_from([n_heads_true * d_k, 1]))))
    w_v = data.draw(matrix_like(d_model, n_heads_true * d_v))
    w_o = data.draw(matrix_like(data.draw(st.sampled_from([n_heads_true * d_v, 2])), None))
    n_heads = data.draw(st.one_of(st.just(n_heads_true), HEADS))
    mask = data.draw(mask_like(n, n))
    result = call(multi_head_attention, x, w_q, w_k, w_v, w_o, n_heads, scale=data.draw(SCALES), mask=mask)
    if isinstance(result, AttentionInputError):
        return
    assert_sound(result.heads)
    assert np.isfinite(result.concat).all() and np.isfinite(result.output).all()
    np.testing.assert_array_equal(result.concat, np.hstack([h.output for h in result.heads]))
    np.testing.assert_allclose(result.output, result.concat @ np.asarray(w_o, float), rtol=1e-12, atol=1e-300)


@FUZZ
@given(st.data())
def test_extreme_finite_values_never_give_nan(data):
    """Only finite extremes: a trace, or an overflow error naming the intermediate; never NaN."""
    n, d = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    cells = st.one_of(EXTREMES, NUMBERS)
    x, w_q, w_k, w_v = (np.array(data.draw(st.lists(st.lists(cells, min_size=c, max_size=c), min_size=r, max_size=r)),
                                 dtype=float) for r, c in ((n, d), (d, d), (d, d), (d, d)))
    mask = data.draw(mask_like(n, n).filter(lambda m: m is None or (isinstance(m, np.ndarray) and m.dtype == bool
                                                                       and m.shape == (n, n))))
    result = call(self_attention, x, w_q, w_k, w_v, mask=mask)
    if isinstance(result, AttentionInputError):
        assert result.matrix in {"Q", "K", "V", "scores QKᵀ", "scaled scores", "output"}
        assert "overflow" in str(result)
        assert result.cell is not None
    else:
        assert_sound([result])


CONFIG_FIELDS = {
    "tokens": st.one_of(st.none(), st.text(max_size=3), st.lists(st.text(max_size=45), max_size=5),
                        st.integers(), st.lists(st.integers(), max_size=3)),
    "n_heads": HEADS,
    "scale": SCALES,
    "mask_kind": st.one_of(st.sampled_from(["none", "causal", "padding", "custom", "diag", ""]), st.none(),
                           st.integers(), st.lists(st.text(max_size=2), max_size=2)),
    "is_pad": st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.booleans(), max_size=5),
                        st.lists(st.one_of(st.booleans(), st.integers(0, 1), st.none()), max_size=5)),
    "custom_mask": st.one_of(st.none(), st.just([[True], [True, False]]), st.just([["x"]]), st.integers(),
                             st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=3, max_size=3)),
}


@FUZZ
@given(st.data())
def test_validate_config_and_run_never_crash(data):
    """The one validation path a configuration takes (grid edits, permalinks, JSON files...)."""
    n = data.draw(st.integers(1, 3))
    base = dict(
        tokens=[f"t{i}" for i in range(n)], x=data.draw(matrix_like(n, 3)), w_q=data.draw(matrix_like(3, 2)),
        w_k=data.draw(matrix_like(3, 2)), w_v=data.draw(matrix_like(3, 2)), w_o=data.draw(matrix_like(2, 2)),
        n_heads=1, scale="sqrt_dk", mask_kind="none", is_pad=(False,) * n, custom_mask=np.ones((n, n), bool),
    )
    for name in data.draw(st.sets(st.sampled_from(sorted(CONFIG_FIELDS)), max_size=3)):
        base[name] = data.draw(CONFIG_FIELDS[name])
    via_make = data.draw(st.booleans())
    if via_make:
        cfg = call(make_config, **base)
    else:
        cfg = call(validate_config, Config(**base))
    if isinstance(cfg, AttentionInputError):
        return
    assert isinstance(cfg, Config)
    for name in ("x", "w_q", "w_k", "w_v", "w_o"):
        assert cfg.matrix(name).dtype == np.float64
    result = call(run, cfg)
    if not isinstance(result, AttentionInputError):  # only an overflow may stop a validated configuration
        assert_sound(result.heads)
    else:
        assert "overflow" in str(result)


def test_caps_in_a_hostile_config_are_rejected_before_any_arithmetic():
    n = LIMITS.n_seq + 1
    err = call(make_config, [f"t{i}" for i in range(n)], np.ones((n, 2)), np.eye(2), np.eye(2), np.eye(2))
    assert isinstance(err, AttentionInputError) and str(LIMITS.n_seq) in str(err)
