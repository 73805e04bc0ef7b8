"""attn_core.check_computable: numbers attention cannot be computed on in float64 are refused before they are kept."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import attn_core.config as config_module
from attn_core import AttentionInputError, check_computable, load_preset


def with_x00(value: float, preset: str = "seed000"):
    cfg = load_preset(preset)
    x = cfg.x.copy()
    x[0, 0] = value
    return replace(cfg, x=x)


def test_the_seeds_are_computable_and_come_back_validated():
    cfg = check_computable(load_preset("seed000"))
    assert cfg.n_seq == 3 and cfg.x.dtype == np.float64


def test_a_number_that_makes_a_step_overflow_is_refused_naming_the_step():
    """1e308 is a float64 (validate_config takes it), but V = X W_V overflows: refused with run's own words."""
    with pytest.raises(AttentionInputError, match=r"V: cell \(0, 1\) is \+inf; it overflowed float64"):
        check_computable(with_x00(1e308))


@pytest.mark.parametrize("value", [1e40, -1e60, 1e70])
def test_large_numbers_whose_steps_stay_finite_are_kept(value):
    """Past the cheap bound, the computation decides: 1e70 in X gives scores of about 1e140, finite."""
    assert check_computable(with_x00(value)).x[0, 0] == value


def test_under_the_bound_nothing_is_computed(monkeypatch):
    """The bound (D · M)^6 < 1e150 keeps the edit of an ordinary number cheap: run is not called (at the caps it is
    hundreds of ms)."""
    def no_run(_cfg):
        raise AssertionError("run called")

    monkeypatch.setattr(config_module, "run", no_run)
    for value in (3.5, -1e10, 1e20):
        check_computable(with_x00(value))
    check_computable(replace(load_preset("seed000"), scale=1e-20))  # the divisor's inverse counts: 1e20
    with pytest.raises(AssertionError, match="run called"):
        check_computable(with_x00(1e30))  # (4 · 1e30)^6 is past 1e150: computed
