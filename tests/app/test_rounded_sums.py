"""The drill-down on Step by step at few decimals: its Σ rows add the values before rounding, so the parts shown may
add up to something else (a reviewer saw exponentials 0.5, 0.5 and 1 shown "0", "0", "1" above a Σ of "2"). Under a
table whose parts, as shown, do not add up to the Σ shown, a note says so, with what the digits shown add up to (a
second reviewer: the note said [2, 6, 1] of parts shown 0.1 + 1 + 1, 0.3 + 3 + 3, 0.4 + 0 + 1, which add up to
[2.1, 6.3, 1.4]): every table's parts add up to its Σ, or the note says what they add up to."""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest

from attn_core import load_preset

from .apptools import NOTE, plain
from .test_steps import elements, steps_app, tables


def notes(at) -> list[str]:
    """The drill-down's notes about a Σ (their text as read)."""
    return [plain(note) for el in elements(at.main) if el.type == "markdown"
            for note in NOTE.findall(str(el.value)) if "Σ" in note]


def added(column: list[str]) -> str:
    """The numbers of ``column`` as shown, added exactly, written with the decimals of the most precise of them."""
    values = [Decimal(t.replace("\u2212", "-")) for t in column]
    return f"{sum(values):.{max(0, *(-v.as_tuple().exponent for v in values))}f}".replace("-", "\u2212")


def halves():
    """Seed 000 with query 0's scaled scores 0, −ln 2, −ln 2: exponentials 1, 0.5, 0.5 (Σ 2), weights 0.5, 0.25,
    0.25."""
    cfg = load_preset("seed000")
    x = np.eye(3, 4)
    w_q, w_k = np.zeros((4, 3)), np.zeros((4, 3))
    w_q[0, 0] = math.sqrt(3)  # q_0 = [√3, 0, 0]: scaled by √3, q_0 · k_j / √3 = k_j[0]
    w_k[:3, 0] = [0.0, -math.log(2), -math.log(2)]
    return replace(cfg, x=x, w_q=w_q, w_k=w_k)


def at_decimals(cfg, p: int):
    at = steps_app(cfg)
    at.slider(key="steps_precision").set_value(p).run()
    assert not at.exception, at.exception
    return at


def test_exponentials_shown_0_0_1_under_a_sum_of_2_are_said_to_add_up_to_1():
    at = at_decimals(halves(), 0)
    b = tables(at)["b"]
    assert [row[3] for row in b] == ["1", "0", "0", "**2**"]  # as the reviewer saw them: 1 + 0 + 0 is not 2
    assert ("As shown, the exponentials add up to 1, not to their Σ, 2, which adds them before rounding."
            in " ".join(notes(at)))


def test_at_four_decimals_parts_that_add_up_get_no_note():
    at = at_decimals(halves(), 4)
    b = tables(at)["b"]
    assert [row[3] for row in b] == ["1", "0.5", "0.5", "**2**"] and [row[4] for row in b][-1] == "**1**"
    assert not [n for n in notes(at) if "exponentials" in n or "the weights" in n]


@pytest.mark.parametrize(("p", "noted"), [(0, True), (4, False)])
def test_a_sum_whose_parts_shown_add_up_to_something_else_says_what_they_add_up_to(p, noted):
    """Seed 000's query 0: at 0 decimals the exponentials read 0.3, 1, 1 under a Σ of 2 (2.3), the weights 0.1, 0.4,
    0.4 under 1 (0.9), the weighted values [2.1, 6.3, 1.4] under [2, 6, 2]: each note gives the exact sum of the
    digits shown. At 4 decimals 0.1361 + 0.4319 + 0.4319 = 0.9999 under a Σ of 1 is rounding a reader sees as such:
    no note (the default page said three)."""
    at = at_decimals(load_preset("seed000"), p)
    found, said = tables(at), " ".join(notes(at))
    expected = []
    for column, words in ((3, "the exponentials"), (4, "the weights")):
        parts, total = [row[column] for row in found["b"][:-1]], found["b"][-1][column].strip("*")
        expected.append(f"As shown, {words} add up to {added(parts)}, not to their Σ, {total}")
    components = [row[3].strip("[]").split(", ") for row in found["c"][:-1]]
    total = found["c"][-1][3].strip("*")
    sums = [added(list(col)) for col in zip(*components, strict=True)]
    expected.append(f"As shown, the weighted values add up to [{', '.join(sums)}], not to their Σ, {total}")
    if noted:
        assert expected[0].endswith("2.3, not to their Σ, 2") and expected[1].endswith("0.9, not to their Σ, 1")
        assert all(e in said for e in expected), (expected, said)
    else:
        assert not said, said


@pytest.mark.parametrize(("lang", "start"), [("zh", "表中显示的指数"), ("ko", "표에 보이는 지수")])
def test_the_note_in_chinese_and_korean(lang, start):
    at = steps_app(halves(), before=lambda at: at.session_state.__setitem__("lang", lang))
    at.slider(key="steps_precision").set_value(0).run()
    assert any(n.startswith(start) for n in notes(at)), notes(at)
