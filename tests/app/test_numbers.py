"""How the app writes numbers (attn_ui.widgets.numbers): one notation per chart, chosen from its range; every digit on
demand.

Expectations written out by hand, not computed with the formatter."""

from __future__ import annotations

import numpy as np
import pytest

from attn_ui.widgets.numbers import SMALL, exact_texts, format_numbers, grid_texts, notation, parse_number, write

from ..seeds import SEED000_X


def test_whole_numbers_are_written_without_decimals_at_any_precision():
    seed_x = np.array(SEED000_X, dtype=float)  # the seeds' X
    assert format_numbers(seed_x.ravel(), 4)[:6] == ["1", "0", "1", "0", "0", "2"]
    assert format_numbers(np.array([16.0, -3.0, 999_999.0]), 8) == ["16", "−3", "999999"]
    assert format_numbers(np.array([16.0, -3.0]), 0) == ["16", "−3"]


def test_a_weights_heatmap_keeps_fixed_decimals_and_writes_tiny_weights_as_below_the_last_digit():
    weights = np.array([0.98, 0.0014, 6.034e-06, 1.526e-11, 0.0])  # the mixed heatmap, and a masked 0
    assert format_numbers(weights, 4) == ["0.9800", "0.0014", "<0.0001", "<0.0001", "0.0000"]
    assert format_numbers(weights, 2) == ["0.98", "<0.01", "<0.01", "<0.01", "0.00"]
    assert format_numbers(np.array([0.5, -2e-9]), 3) == ["0.500", ">−0.001"]
    assert not any("e" in t for t in format_numbers(weights, 4))  # never 1e-11 beside 0.98


def test_a_matrix_with_large_values_is_written_in_scientific_notation_throughout():
    values = np.array([1e6, 2.5, -0.125, 0.0, 123456.789])
    assert notation(values, 4) == "scientific"
    assert format_numbers(values, 4) == ["1.0000e6", "2.5000e0", "−1.2500e−1", "0", "1.2346e5"]
    assert format_numbers(values, 1) == ["1.0e6", "2.5e0", "−1.2e−1", "0", "1.2e5"]
    assert format_numbers(np.array([12345.5, 1.0]), 2) == ["1.23e4", "1.00e0"]
    assert format_numbers(np.array([9999.5, 1.0]), 2) == ["9999.5", "1.0"]  # below 10,000: fixed


def test_values_that_would_all_read_zero_are_written_in_scientific_notation():
    assert format_numbers(np.array([2e-5, -1e-6]), 4) == ["2.0000e−5", "−1.0000e−6"]
    assert format_numbers(np.array([2e-5, -1e-6]), 6) == ["0.000020", "−0.000001"]


def test_the_decimals_shown_choose_the_digits():
    v = np.array([0.123456, -1.5])
    assert [format_numbers(v, p) for p in (0, 2, 6)] == [["<1", "−2"], ["0.12", "−1.50"], ["0.123456", "−1.500000"]]


def test_infinities_and_nan_are_spelled_out_in_every_notation():
    assert format_numbers(np.array([-np.inf, 0.5, np.nan]), 2) == ["−∞", "0.5", "NaN"]
    assert format_numbers(np.array([-np.inf, 1.0, np.inf]), 2) == ["−∞", "1", "+∞"]
    assert format_numbers(np.array([-np.inf, 1e7, 0.5]), 1) == ["−∞", "1.0e7", "5.0e−1"]


@pytest.mark.parametrize("text,value", [("1", 1.0), ("<0.0001", None), ("1.0000e6", 1e6), ("−1.2500e−1", -0.125)])
def test_written_numbers_read_back(text, value):
    if value is None:
        with pytest.raises(ValueError):
            parse_number(text)
    else:
        assert parse_number(text) == value


def test_every_digit_reads_back_exactly():
    values = np.array([0.023612345678901234, 1 / 3, -2.0, 1e-11, 4.9999999999999994e29])
    texts = exact_texts(values)
    assert texts == ["0.023612345678901234", "0.3333333333333333", "−2", "1e-11", "4.9999999999999994e+29"]
    assert [parse_number(t) for t in texts] == values.tolist()


def test_grid_texts_carry_no_ellipsis():
    assert grid_texts(np.array([0.0236123, 1 / 3, 1.0]), 4) == ["0.0236", "0.3333", "1.0000"]
    assert grid_texts(np.array([1.0, 16.0]), 4) == ["1", "16"]
    # some cells of a matrix, written in the matrix's notation
    assert grid_texts(np.array([1.0]), 4, "fixed") == ["1.0000"]


def _fixed_one_by_one(values: np.ndarray, precision: int) -> list[str]:
    """The "fixed" notation written value by value, as the app's rules say (the reference for numbers.write)."""
    tiny, step, out = 0.5 * 10.0**-precision, f"{10.0**-precision:.{precision}f}", []
    for v in values.tolist():
        if 0 < v < tiny:
            out.append("<" + step)
        elif -tiny < v < 0:
            out.append(">−" + step)
        elif v != v:
            out.append("NaN")
        elif v in (float("inf"), float("-inf")):
            out.append("+∞" if v > 0 else "−∞")
        else:
            text = f"{v:.{precision}f}"
            out.append(("−" + text[1:] if text.strip("-0.") else text[1:]) if text.startswith("-") else text)
    return out


@pytest.mark.parametrize("precision", [0, 1, 2, 4, 6])
def test_fixed_texts_are_each_value_written_on_its_own(precision):
    rng = np.random.default_rng(precision)
    edge = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-5, -5e-5, 4.9e-5, -4.9e-5, 0.99995, -0.99995, 1e-300]
    for values in (rng.normal(size=500), rng.normal(size=500) * 1e-4, np.array(edge), rng.choice(edge, 200)):
        assert grid_texts(values, precision, "fixed") == _fixed_one_by_one(values, precision)


@pytest.mark.parametrize("precision", [0, 1, 2, 4, 6])
def test_a_few_values_are_written_as_many_are(precision):
    """Up to numbers.SMALL values are looked at one by one in Python, more with numpy: the same notation and texts."""
    rng = np.random.default_rng(10 + precision)
    tiny = 0.5 * 10.0**-precision
    edge = [0.0, -0.0, 1.0, -1.0, 16.0, np.inf, -np.inf, np.nan, tiny, -tiny, np.nextafter(tiny, 0),
            -np.nextafter(tiny, 0), 0.99995, -0.99995, 1e-300, -1e-300, 2e6, -1e4]
    for values in (np.array(edge), rng.normal(size=3), rng.normal(size=12) * 1e-4, rng.normal(size=SMALL) * 1e5,
                   np.round(rng.normal(size=9) * 10), rng.choice(edge, 40), np.array([np.nan, -np.inf]), np.arange(5)):
        assert len(values) <= SMALL
        assert grid_texts(values.astype(float), precision, "fixed") == _fixed_one_by_one(values, precision)
        many = np.tile(values, SMALL // len(values) + 1)  # the same values, past SMALL
        assert notation(values, precision) == notation(many, precision)
        for how in ("integer", "fixed", "scientific"):
            assert write(values, how, precision) == write(many, how, precision)[:len(values)]
