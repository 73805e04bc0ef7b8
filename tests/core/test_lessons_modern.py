"""The Learn page's lessons on modern attention (attn_ui/lessons/modern.py): each answer marked right is the one the
numbers give, computed here with numpy written out (never attn_core): grouped-query heads by repeating W_K's and W_V's
slices, RoPE with cos and sin pair by pair, the sliding window's mask counted cell by cell, the KV cache's last step
as one query row against every rotated key, the online softmax's m, l and O in a loop over tiles, the soft cap with
tanh.

EXPECTED and SAID are read by tests/core/test_lessons.py too (its every-lesson tests: the judge accepts the answer and
refuses the rest, every number a text states is the one numpy gives); the tests here check the facts themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from attn_core import Config
from attn_ui import lessons
from attn_ui.app import registry
from attn_ui.lessons import Choice, Number
from attn_ui.lessons import modern as modern_lessons
from attn_ui.widgets.numbers import format_number

KEYS = [lesson.key for lesson in modern_lessons.LESSONS]


def fmt(v: float) -> str:
    """A number as the page writes it at 4 decimals (attn_ui.widgets.numbers, "short" style)."""
    return format_number(float(v), 4, "short")


def vec(a) -> str:
    a = np.asarray(a, dtype=float)
    return "[" + ", ".join(fmt(x) if a.ndim == 1 else vec(x) for x in a) + "]" if a.ndim else fmt(a)


def difference(d: float) -> str:
    return "exactly 0" if d == 0 else fmt(d)


# ---- attention written out ------------------------------------------------------------------------------------


def softmax_rows(s: np.ndarray) -> np.ndarray:  # [n_q, n_k] -> [n_q, n_k]; -inf allowed, not a whole row
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rope_by_hand(m: np.ndarray, positions, base: float = 10000.0) -> np.ndarray:  # [n, d] -> [n, d]
    """transformers' rotate_half layout: features i and i + d/2 form pair i, turned by p · base^(−2i/d)."""
    n, d = m.shape
    out = np.empty_like(m)
    for r in range(n):
        for i in range(d // 2):
            angle = positions[r] / base ** (2 * i / d)
            a, b = m[r, i], m[r, i + d // 2]
            out[r, i] = a * np.cos(angle) - b * np.sin(angle)
            out[r, i + d // 2] = a * np.sin(angle) + b * np.cos(angle)
    return out


def causal_by_hand(n: int) -> np.ndarray:  # [n, n]: key j allowed for query i when j <= i
    return np.array([[j <= i for j in range(n)] for i in range(n)])


def window_by_hand(n: int, w: int) -> np.ndarray:  # [n, n]: Mistral's inclusive rule i − w < j <= i
    return np.array([[i - w < j <= i for j in range(n)] for i in range(n)])


def head_widths(cfg: Config) -> tuple[int, int, int, int]:
    """(n_heads, n_kv, d_k, d_v), read from the widths of W_Q, W_K, W_V."""
    n_heads = cfg.n_heads
    d_k = cfg.w_q.shape[1] // n_heads
    n_kv = cfg.w_k.shape[1] // d_k
    return n_heads, n_kv, d_k, cfg.w_v.shape[1] // n_kv


def grouped_by_hand(cfg: Config) -> tuple[list[int], np.ndarray]:
    """Each query head's key/value head (h · n_kv // n_heads), and the layer's output with the K/V slices repeated for
    each query head of their group (transformers' repeat_kv), no mask, ÷ √d_k."""
    n_heads, n_kv, d_k, d_v = head_widths(cfg)
    group = n_heads // n_kv
    reads = [h // group for h in range(n_heads)]
    outs = []
    for h in range(n_heads):
        g = reads[h]
        q = cfg.x @ cfg.w_q[:, h * d_k:(h + 1) * d_k]
        k = cfg.x @ cfg.w_k[:, g * d_k:(g + 1) * d_k]
        v = cfg.x @ cfg.w_v[:, g * d_v:(g + 1) * d_v]
        outs.append(softmax_rows(q @ k.T / np.sqrt(d_k)) @ v)
    return reads, np.hstack(outs) @ cfg.w_o


# ---- each lesson's answer, computed independently: (expected answer, wrong numbers to refuse) --------------------


def grouped_query(cfg):
    n_heads, n_kv, d_k, d_v = head_widths(cfg)
    key_slices = {cfg.w_k[:, g * d_k:(g + 1) * d_k].tobytes() for g in range(n_kv)}
    value_slices = {cfg.w_v[:, g * d_v:(g + 1) * d_v].tobytes() for g in range(n_kv)}
    counts = [(n_heads, n_heads), (n_kv, n_kv), (1, 1), (n_heads, n_kv)]  # the options' order
    assert len(set(counts)) == 4  # one option each
    return counts.index((len(key_slices), len(value_slices))), []


def rope_shift_numbers(cfg):
    """(scores at positions 0 …, scores with every position moved by SHIFT, with only the keys moved), one head."""
    shift = modern_lessons.SHIFT
    base = cfg.rope.base
    assert cfg.rope.layout == "half" and cfg.n_heads == 1
    q, k = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k
    pos = np.arange(cfg.x.shape[0])
    before = rope_by_hand(q, pos, base) @ rope_by_hand(k, pos, base).T
    moved = rope_by_hand(q, pos + shift, base) @ rope_by_hand(k, pos + shift, base).T
    keys_only = rope_by_hand(q, pos, base) @ rope_by_hand(k, pos + shift, base).T
    return before, moved, keys_only


def rope_shift(cfg):
    before, moved, keys_only = rope_shift_numbers(cfg)
    assert np.abs(moved - before).max() < 1e-12  # none changes
    assert np.abs(keys_only - before).max() > 0.1  # but moving one side does
    return 2, []  # "none", third of the options


def sliding_window(cfg):
    n, w, i = cfg.x.shape[0], cfg.window, modern_lessons.WINDOW_QUERY
    allowed = window_by_hand(n, w)
    seen = [j for j in range(n) if allowed[i, j]]
    ranges = [(i - w, i), (i - w, i - 1), (i - w + 1, i), (0, i)]  # the options' order
    assert seen == list(range(seen[0], seen[-1] + 1)) and len(set(ranges)) == 4
    return ranges.index((seen[0], seen[-1])), []


def decode_numbers(cfg):
    """The last token's one query row against every rotated key (what a KV cache step scores), its output, and the
    whole text's causal attention written out: (row of scores, output of the step, whole output)."""
    n = cfg.x.shape[0]
    pos = np.arange(n)
    q = rope_by_hand(cfg.x @ cfg.w_q, pos, cfg.rope.base)
    k = rope_by_hand(cfg.x @ cfg.w_k, pos, cfg.rope.base)
    v = cfg.x @ cfg.w_v
    d_k = q.shape[1]
    row = q[-1:] @ k.T  # [1, n]: the new token at position n − 1, against the n − 1 cached keys and its own
    step_out = softmax_rows(row / np.sqrt(d_k)) @ v @ cfg.w_o  # [1, d_out]
    whole = softmax_rows(np.where(causal_by_hand(n), q @ k.T / np.sqrt(d_k), -np.inf)) @ v @ cfg.w_o
    return row, step_out, whole


def kv_cache(cfg):
    n = cfg.x.shape[0]
    assert cfg.mask_kind == "causal" and cfg.n_heads == 1
    row, _, _ = decode_numbers(cfg)
    triangle = int(causal_by_hand(n).sum())
    return row.shape[1], [n - 1, n + 1, triangle, n * n, 1]


def online_numbers(cfg):
    """The first token's online softmax over tiles of BLOCK keys, written out: per tile (m_old, m_new, factor, l_old,
    l_new, o_old, o_new), and the row's scaled scores, values and output by the ordinary softmax."""
    block, r = modern_lessons.BLOCK, modern_lessons.ONLINE_QUERY
    q, k, v = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k, cfg.x @ cfg.w_v
    s = (q @ k.T)[r] / np.sqrt(q.shape[1])  # [n]
    m, l_sum, o = -np.inf, 0.0, np.zeros(v.shape[1])
    tiles = []
    for start in range(0, len(s), block):
        s_b, v_b = s[start:start + block], v[start:start + block]
        m_new = max(m, s_b.max())
        factor = np.exp(m - m_new)
        p = np.exp(s_b - m_new)
        l_new, o_new = factor * l_sum + p.sum(), factor * o + p @ v_b
        tiles.append((m, m_new, factor, l_sum, l_new, o, o_new))
        m, l_sum, o = m_new, l_new, o_new
    plain = softmax_rows(s[None, :])[0] @ v
    np.testing.assert_allclose(o / l_sum, plain, rtol=0, atol=1e-12)
    return tiles, s, plain


def online_softmax(cfg):
    tiles, s, _ = online_numbers(cfg)
    t = int(np.argmax(s)) // modern_lessons.BLOCK
    m_old, m_new, factor, _, _, o_old, o_new = tiles[t]
    assert t > 0 and m_new > m_old and 0 < factor < 1  # "a number below 1"
    assert not np.allclose(o_new, o_old)
    return 2, []  # "m rises … multiplied by exp(m_old − m_new)", third of the options


def soft_cap_numbers(cfg):
    """The first token's scores (not divided: scale none), soft-capped, and the weights with and without the cap."""
    assert cfg.scale == "none"
    q, k = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k
    s = (q @ k.T)[0]
    capped = cfg.softcap * np.tanh(s / cfg.softcap)
    return s, capped, softmax_rows(capped[None, :])[0], softmax_rows(s[None, :])[0]


def soft_cap(cfg):
    s, capped, *_ = soft_cap_numbers(cfg)
    change = np.abs(s - capped)
    assert np.argmax(np.abs(s)) != np.argmin(np.abs(s))
    return (1 if np.argmax(change) == np.argmax(np.abs(s)) else 0 if np.argmax(change) == np.argmin(np.abs(s))
            else 2), []  # the options' order: the nearest 0, the farthest, all alike


EXPECTED: dict[str, Callable[[Config], tuple[object, list[float]]]] = {
    "grouped-query": grouped_query, "rope-shift": rope_shift, "sliding-window": sliding_window, "kv-cache": kv_cache,
    "online-softmax": online_softmax, "soft-cap": soft_cap,
}


# ---- every sentence that states a number is true on the lesson's numbers ----------------------------------------


def said_grouped_query(cfg):
    n_heads, n_kv, d_k, d_v = head_widths(cfg)
    reads, _ = grouped_by_hand(cfg)
    n, d_model = cfg.x.shape
    per_gqa, per_mha = 2 * n_kv * d_k, 2 * n_heads * d_k  # K and V rows of one token (d_v = d_k here)
    assert d_v == d_k
    first = vec([h for h in range(n_heads) if reads[h] == 0])
    return [f"A layer with {n_heads} query heads, each with queries and keys {d_k} wide",
            f"W_Q is {d_model} × {n_heads * d_k}, while W_K is {d_model} × {n_kv * d_k} and W_V {d_model} × "
            f"{n_kv * d_v}",
            f"{n_kv} of W_K and {n_kv} of W_V: {2 * n_kv} in all, each pair shared by {n_heads // n_kv} query heads",
            f"{n_heads} of each: {2 * n_heads} in all",
            f"key/value head h ÷ {n_heads // n_kv}, rounded down: heads {first} share the first pair, and so on "
            f"({vec(reads)})",
            f"cut into {n_kv} slices each, {2 * n_kv} matrices instead of the {2 * n_heads} of multi-head attention "
            f"with {n_heads} heads",
            f"{per_gqa} numbers per token and layer here instead of {per_mha}, {fmt(per_mha / per_gqa)} times fewer "
            f"({per_gqa * n} instead of {per_mha * n} for these {n} tokens)",
            f"widen to {n_heads * d_k} columns or narrow to {d_k}"]


def said_rope_shift(cfg):
    before, moved, keys_only = rope_shift_numbers(cfg)
    n = cfg.x.shape[0]
    shift = modern_lessons.SHIFT
    return [f"{n} tokens at positions 0 to {n - 1}, one head with queries and keys {cfg.w_q.shape[1]} wide",
            f"(base {fmt(cfg.rope.base)})", f"count the positions from {shift} instead of 0",
            f"sits {shift} positions later", f"Which of the {n * n} scores", f"Moving both by {shift}",
            f"the scores change by up to {fmt(np.abs(keys_only - before).max())}"]


def said_sliding_window(cfg):
    n, w, i = cfg.x.shape[0], cfg.window, modern_lessons.WINDOW_QUERY
    allowed = window_by_hand(n, w)
    q, k = cfg.x @ cfg.w_q, cfg.x @ cfg.w_k
    weights = softmax_rows(np.where(allowed, q @ k.T / np.sqrt(q.shape[1]), -np.inf))
    tok = cfg.tokens[i]
    return [f"{n} tokens, their positions counted from 0, with a causal mask and a sliding window of {w} keys",
            f"The token at position {i} is “{tok}”", f"positions {i - w + 1} to {i}: {w} keys, counting itself",
            f"positions {i - w} to {i}: {w + 1} keys", f"positions {i - w} to {i - 1}: the {w} keys before it",
            f"For i = {i} that is {i - w + 1} ≤ j ≤ {i}, {allowed[i].sum()} keys, and its row of the mask is "
            f"{vec(allowed[i].astype(int))}", f"Its weights, {vec(weights[i])}, are 0 outside the window",
            f"no query sees more than {w} keys"]


def said_kv_cache(cfg):
    n = cfg.x.shape[0]
    row, step_out, whole = decode_numbers(cfg)
    diff = np.abs(step_out[0] - whole[-1]).max()
    assert diff < 1e-12  # "Its output equals the last row of the whole text's attention"
    triangle = int(causal_by_hand(n).sum())
    assert triangle == n * (n + 1) // 2
    return [f"has written {n - 1} tokens, at positions 0 to {n - 2}, and now writes token number {n}, "
            f"“{cfg.tokens[-1]}”, at position {n - 1}",
            f"the {n - 1} cached keys and its own: {row.shape[1]} dot products",
            f"as many as its position ({n - 1}, counted from 0) plus one",
            f"the whole {n} × {n} causal triangle would be scored again for this one token: {triangle} dot products, "
            f"or {n * n} when the masked half", f"writing all {n} tokens costs {triangle} dot products per head"]


def said_online_softmax(cfg):
    tiles, s, plain = online_numbers(cfg)
    block = modern_lessons.BLOCK
    t = int(np.argmax(s)) // block
    m_old, m_new, factor, l_old, l_new, _, o_new = tiles[t]
    tok = cfg.tokens[modern_lessons.ONLINE_QUERY]
    assert all(tiles[u][2] == 1.0 for u in range(1, len(tiles)) if u != t)  # "no new largest score keeps it at 1"
    return [f"reads the keys in tiles of {block}", f"The scaled scores of “{tok}” arrive tile by tile: "
            f"{vec(s.reshape(-1, block))}", f"Tile {t} (keys {t * block} to {t * block + block - 1}, counted from 0) "
            f"brings {fmt(s.max())}, larger than m = {fmt(m_old)} so far", f"m rises from {fmt(m_old)} to {fmt(m_new)}",
            f"exp(m_old − m_new) = {fmt(factor)}: l goes from {fmt(l_old)} to {fmt(factor)} × {fmt(l_old)} plus the "
            f"tile's {fmt(l_new - factor * l_old)}, that is {fmt(l_new)}, and O likewise to {vec(o_new)}",
            f"O ÷ l is the output row, {vec(plain)}"]


def said_soft_cap(cfg):
    s, capped, w_cap, w_plain = soft_cap_numbers(cfg)
    far, near = int(np.argmax(np.abs(s))), int(np.argmin(np.abs(s)))
    return [f"{cfg.x.shape[0]} tokens whose scores are not divided by anything, and a soft cap of {fmt(cfg.softcap)}",
            f"“{cfg.tokens[0]}”'s scores are {vec(s)}", f"{fmt(s[far])}, the score farthest from 0",
            f"{fmt(s[near])}, the score nearest 0", f"so {fmt(s[near])} only becomes {fmt(capped[near])} while "
            f"{fmt(s[far])} is pulled in to {fmt(capped[far])}", f"The changes, {vec(np.abs(s - capped))}",
            f"lowers the largest weight from {fmt(w_plain.max())} to {fmt(w_cap.max())}"]


SAID: dict[str, Callable[[Config], list]] = {
    "grouped-query": said_grouped_query, "rope-shift": said_rope_shift, "sliding-window": said_sliding_window,
    "kv-cache": said_kv_cache, "online-softmax": said_online_softmax, "soft-cap": said_soft_cap,
}


# ---- the facts themselves, against the numbers written out ------------------------------------------------------


def worked(key: str) -> lessons.Worked:
    return lessons.solved(key)


def test_the_modern_lessons_are_in_the_course_after_the_ones_by_hand_and_open_modern_attention():
    keys = [lesson.key for lesson in lessons.LESSONS]
    assert len(KEYS) >= 5 and set(KEYS) <= set(keys) and set(EXPECTED) == set(SAID) == set(KEYS)
    first = keys.index(KEYS[0])
    assert keys[first:first + len(KEYS)] == KEYS  # together, in the module's order
    assert all(lessons.by_key(key).page == registry.MODERN for key in KEYS)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key) for key in KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_each_modern_lesson_sets_the_option_it_is_about(key: str):
    """The configuration's own option; the online softmax is how any configuration can be computed (no option)."""
    cfg = worked(key).config
    option = {"grouped-query": cfg.n_kv_heads, "rope-shift": cfg.rope, "sliding-window": cfg.window,
              "kv-cache": cfg.rope, "soft-cap": cfg.softcap}.get(key)
    assert (option is not None and cfg.modern) or (key == "online-softmax" and not cfg.modern)


def test_grouped_query_facts_and_output():
    w = worked("grouped-query")
    cfg, facts = w.config, w.solution.facts
    n_heads, n_kv, d_k, d_v = head_widths(cfg)
    reads, out = grouped_by_hand(cfg)
    assert (n_heads, n_kv) == (8, 2) and w.solution.answer == 1
    assert list(facts["kv_of"]) == reads and (facts["n_k"], facts["n_v"]) == (n_kv, n_kv)
    assert (facts["kv_total"], facts["mha_total"]) == (2 * n_kv, 2 * n_heads)
    # the cache: one token's key and value rows over every key/value head, against one pair per query head
    assert facts["cache_gqa"] == n_kv * (d_k + d_v) and facts["cache_mha"] == n_heads * (d_k + d_v)
    assert facts["ratio"] == n_heads / n_kv and facts["saved"] == (n_heads - n_kv) * (d_k + d_v)
    np.testing.assert_allclose(w.trace.output, out, rtol=0, atol=1e-12)  # the trace is grouped-query attention


def test_rope_shift_difference_is_float64_rounding():
    w = worked("rope-shift")
    before, moved, keys_only = rope_shift_numbers(w.config)
    np.testing.assert_allclose(w.trace.heads[0].scores, before, rtol=0, atol=1e-12)  # RoPE by hand = the trace's
    diff = w.solution.facts["diff"]
    assert isinstance(diff, lessons.Difference) and diff.value < 1e-13
    assert abs(diff.value - np.abs(moved - before).max()) < 1e-13
    np.testing.assert_allclose(w.solution.facts["moved_first"], moved[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.solution.facts["keys_only"], np.abs(keys_only - before).max(), rtol=0, atol=1e-12)


def test_sliding_window_mask_counted_cell_by_cell():
    w = worked("sliding-window")
    cfg = w.config
    n, win, i = cfg.x.shape[0], cfg.window, modern_lessons.WINDOW_QUERY
    allowed = window_by_hand(n, win)
    mask = w.trace.mask
    assert int(mask.sum()) == int(allowed.sum()) and np.array_equal(mask, allowed)
    assert w.solution.facts["n_seen"] == sum(1 for j in range(n) if i - win < j <= i) == win
    assert list(w.solution.facts["seen_per_row"]) == [min(r + 1, win) for r in range(n)]
    weights = w.trace.heads[0].weights
    assert (weights[~allowed] == 0).all()


def test_kv_cache_counts_and_output():
    w = worked("kv-cache")
    cfg, facts = w.config, w.solution.facts
    n = cfg.x.shape[0]
    assert n == 101  # the token 101, run for real: under the app's cap on tokens
    row, step_out, whole = decode_numbers(cfg)
    assert w.solution.answer == row.shape[1] == n
    assert facts["n_prev"] == n - 1 and facts["pos"] == n - 1 and facts["row_shape"] == (1, n)
    assert facts["triangle"] == n * (n + 1) // 2 == 5151 and facts["square"] == n * n
    assert facts["total_cached"] == n * (n + 1) // 2  # 1 + 2 + … + n over the steps
    np.testing.assert_allclose(w.trace.output[-1], whole[-1], rtol=0, atol=1e-12)
    assert facts["diff"].value < 1e-12


def test_online_softmax_tile_facts():
    w = worked("online-softmax")
    facts = w.solution.facts
    tiles, s, plain = online_numbers(w.config)
    t = int(np.argmax(s)) // modern_lessons.BLOCK
    m_old, m_new, factor, l_old, l_new, o_old, o_new = tiles[t]
    assert facts["tile"] == t
    for name, value in (("m_old", m_old), ("m_new", m_new), ("rescale", factor), ("l_old", l_old),
                        ("l_new", l_new), ("o_old", o_old), ("o_new", o_new), ("out", plain)):
        np.testing.assert_allclose(facts[name], value, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(facts["factors"][1:], [tl[2] for tl in tiles][1:], rtol=0, atol=1e-15)


def test_soft_cap_facts():
    w = worked("soft-cap")
    s, capped, w_cap, w_plain = soft_cap_numbers(w.config)
    np.testing.assert_allclose(w.solution.facts["capped"], capped, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.trace.heads[0].weights[0], w_cap, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.solution.facts["w_plain"], w_plain.max(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("key", KEYS)
def test_the_modern_answers_are_judged(key: str):
    """The same check as tests/core/test_lessons.py's, kept here so this file alone says the answers are right."""
    lesson = lessons.by_key(key)
    sol = worked(key).solution
    expected, wrong = EXPECTED[key](worked(key).config)
    if isinstance(lesson.ask, Number):
        assert sol.answer == expected and lessons.judge(lesson, sol, expected)
        assert not any(lessons.judge(lesson, sol, g) for g in wrong)
    else:
        assert isinstance(lesson.ask, Choice) and sol.answer == expected
        assert [i for i in range(len(lesson.ask.options)) if lessons.judge(lesson, sol, i)] == [expected]


def test_the_right_choice_is_not_always_first():
    """A learner must not learn "pick the first": the modern lessons' right options sit in different places."""
    places = {lesson.key: lessons.solved(lesson.key).solution.answer for lesson in modern_lessons.LESSONS
              if isinstance(lesson.ask, Choice)}
    assert len(set(places.values())) > 1, places
