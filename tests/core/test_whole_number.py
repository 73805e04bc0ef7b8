"""attn_core.whole_number and number_in_range: what a number box holds, as typed, checked against its bounds; the
message names the box and says why (whole_size, the sizes' rule, is whole_number from 1)."""

from __future__ import annotations

import math

import pytest

from attn_core import N_, AttentionInputError, number_in_range, whole_number, whole_size

SEED_HIGH = 2**31 - 1


def refusal(check, *args, **kwargs) -> AttentionInputError:
    with pytest.raises(AttentionInputError) as caught:
        check(*args, **kwargs)
    return caught.value


@pytest.mark.parametrize(("value", "low", "high", "whole"), [
    (0, 0, SEED_HIGH, 0),  # a seed may be 0
    (0.0, 0, SEED_HIGH, 0),
    (1e3, 0, SEED_HIGH, 1000),  # "1e3" typed arrives as 1000.0
    (1e1, 1, 20, 10),
    (SEED_HIGH, 0, SEED_HIGH, SEED_HIGH),  # both bounds are allowed
    (float(SEED_HIGH), 0, SEED_HIGH, SEED_HIGH),
    (1, 1, 20, 1),
    (-0.0, 0, 4, 0),
])
def test_a_whole_number_within_its_bounds_is_its_int(value, low, high, whole):
    got = whole_number("Seed", value, low, high)
    assert got == whole and type(got) is int


@pytest.mark.parametrize(("value", "low", "high", "said"), [
    (None, 0, SEED_HIGH, "Seed holds no number that can be read: type a whole number."),
    (2.5, 0, SEED_HIGH, "Seed: 2.5 is not a whole number."),
    (math.nan, 0, SEED_HIGH, "Seed: nan is not a whole number."),
    (math.inf, 0, SEED_HIGH, "Seed: inf is not a whole number."),
    (-math.inf, 0, SEED_HIGH, "Seed: -inf is not a whole number."),
    (-1, 0, SEED_HIGH, "Seed: -1 is under 0."),  # low - 1
    (-1.0, 0, SEED_HIGH, "Seed: -1 is under 0."),
    (SEED_HIGH + 1, 0, SEED_HIGH, "Seed: 2147483648 is over the cap of 2147483647."),  # high + 1
    (1e20, 0, SEED_HIGH, "Seed: 100000000000000000000 is over the cap of 2147483647."),
    (0, 1, 20, "Seed: 0 is under 1."),
    (21.0, 1, 20, "Seed: 21 is over the cap of 20."),
])
def test_what_is_no_whole_number_within_its_bounds_is_refused_by_name(value, low, high, said):
    err = refusal(whole_number, "Seed", value, low, high)
    assert str(err) == said
    assert err.params["what"] == "Seed"


def test_a_reason_for_a_number_under_its_low_bound_is_the_callers():
    err = refusal(whole_number, N_("n_heads"), 0, 1, 16, under=N_("{what}: {value} is under 1; at least one head."))
    assert str(err) == "n_heads: 0 is under 1; at least one head."
    assert err.template == "{what}: {value} is under 1; at least one head." and "low" not in err.params


@pytest.mark.parametrize("value", [None, 2.5, math.nan, 0, -3, 300, 1e3])
def test_whole_size_is_whole_number_from_one(value):
    """The sizes' rule says what it said before whole_number: the same templates, the same values."""
    under = N_("{what}: {value} is under 1; a sequence has at least one token.")
    a = refusal(whole_size, N_("n_seq (tokens)"), value, 256, under)
    b = refusal(whole_number, N_("n_seq (tokens)"), value, 1, 256, under=under)
    assert (str(a), a.template, a.params) == (str(b), b.template, b.params)
    assert whole_size(N_("n_seq (tokens)"), 1e2, 256, under) == 100


@pytest.mark.parametrize(("value", "low", "high", "number"), [
    (0.5, 0.0, 100.0, 0.5), (0, 0.0, 100.0, 0.0), (100.0, 0.0, 100.0, 100.0), (1e3, 0.0, None, 1000.0),
    (-7.25, None, None, -7.25),
])
def test_a_number_within_its_range_is_its_float(value, low, high, number):
    got = number_in_range("std", value, low, high)
    assert got == number and type(got) is float


@pytest.mark.parametrize(("value", "low", "high", "said"), [
    (None, 0.0, 100.0, "std holds no number that can be read: type a number."),
    (math.nan, 0.0, 100.0, "std: nan is not a finite number."),
    (math.inf, 0.0, None, "std: inf is not a finite number."),
    (150.0, 0.0, 100.0, "std: 150 is over 100."),
    (100.5, 0.0, 100.0, "std: 100.5 is over 100."),
    (-0.5, 0.0, 100.0, "std: -0.5 is under 0."),
    (-1, 0.5, 1.5, "std: -1 is under 0.5."),
])
def test_a_number_outside_its_range_is_refused_by_name(value, low, high, said):
    assert str(refusal(number_in_range, "std", value, low, high)) == said


@pytest.mark.parametrize(("value", "said"), [
    (0.0, "Cap: 0 is not above 0: type a number above 0."),
    (-1.0, "Cap: -1 is not above 0: type a number above 0."),
    (None, "Cap holds no number that can be read: type a number above 0."),
    (math.inf, "Cap: inf is not a finite number."),
])
def test_a_number_that_must_be_above_its_low_bound_refuses_the_bound_itself(value, said):
    """A soft cap must be above 0: 0 itself is refused, and the message says what to type."""
    assert str(refusal(number_in_range, "Cap", value, 0.0, None, above=True)) == said


def test_a_number_above_its_low_bound_is_taken():
    assert number_in_range("Cap", 1e-300, 0.0, None, above=True) == 1e-300
    assert number_in_range("Cap", 0.0, 0.0, None) == 0.0  # without above, the bound itself is in range
