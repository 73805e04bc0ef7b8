"""The drill-down on Step by step at few decimals: its Σ rows add the values before rounding, so the parts shown,
rounded, may add up to something else (a reviewer saw exponentials 0.5, 0.5 and 1 shown "0", "0", "1" above a Σ of
"2"). Under a table whose parts shown do not add up to the Σ shown, a note says so, with what they add up to: every
table's parts add up to its Σ, or the note says they do not."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from attn_core import load_preset
from attn_ui.widgets.numbers import format_number

from .apptools import NOTE, plain
from .test_steps import elements, steps_app, tables


def notes(at) -> list[str]:
    """The drill-down's notes about a Σ (their text as read)."""
    return [plain(note) for el in elements(at.main) if el.type == "markdown"
            for note in NOTE.findall(str(el.value)) if "Σ" in note]


def added(column: list[str]) -> float:
    return sum(float(t.replace("\u2212", "-")) for t in column)


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


def test_exponentials_shown_0_0_1_under_a_sum_of_2_are_said_to_be_rounded():
    at = at_decimals(halves(), 0)
    b = tables(at)["b"]
    assert [row[3] for row in b] == ["1", "0", "0", "**2**"]  # as the reviewer saw them: 1 + 0 + 0 is not 2
    assert ("Rounded to 0 decimals, the exponentials shown add up to 1, not to their Σ, 2, which adds them before "
            "rounding.") in " ".join(notes(at))


def test_at_four_decimals_parts_that_add_up_get_no_note():
    at = at_decimals(halves(), 4)
    b = tables(at)["b"]
    assert [row[3] for row in b] == ["1", "0.5", "0.5", "**2**"] and [row[4] for row in b][-1] == "**1**"
    assert not [n for n in notes(at) if "exponentials" in n or "the weights" in n]


@pytest.mark.parametrize("p", [0, 1, 2, 4])
def test_every_sum_shown_is_its_parts_or_a_note_says_they_are_rounded(p):
    at = at_decimals(load_preset("seed000"), p)
    found, said = tables(at), " ".join(notes(at))
    for column, words in ((3, "the exponentials"), (4, "the weights")):
        parts, total = [row[column] for row in found["b"][:-1]], found["b"][-1][column].strip("*")
        if format_number(added(parts), p, "short") != total:
            assert f"{words} shown add up to {format_number(added(parts), p, 'short')}, not to their Σ, {total}" \
                in said, (p, parts, total, said)
    components = [[float(t.replace("\u2212", "-")) for t in row[3].strip("[]").split(", ")] for row in found["c"][:-1]]
    sums = [format_number(sum(col), p, "short") for col in zip(*components, strict=True)]
    total = found["c"][-1][3].strip("*")
    if "[" + ", ".join(sums) + "]" != total:
        assert f"the weighted values shown add up to [{', '.join(sums)}], not to their Σ, {total}" in said


@pytest.mark.parametrize(("lang", "start"), [("zh", "四舍五入到 0 位小数"), ("ko", "소수 0자리로 반올림하면")])
def test_the_note_in_chinese_and_korean(lang, start):
    at = steps_app(halves(), before=lambda at: at.session_state.__setitem__("lang", lang))
    at.slider(key="steps_precision").set_value(0).run()
    assert any(n.startswith(start) for n in notes(at)), notes(at)
