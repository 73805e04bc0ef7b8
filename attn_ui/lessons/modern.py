"""The lessons on modern attention (what Llama, Mistral, Gemma 2 and FlashAttention change): grouped-query heads, RoPE,
a sliding window, the key/value cache, the online softmax and the soft cap. Each a small configuration built here, its
solver (the answer and the facts, from attn_core's traces: the configuration's own, and decode_step's, apply_rope's,
online_softmax_attention's run on it) and its entry, in the course's order; Try it yourself opens Modern attention.

Content only: what a lesson is and how it is judged and written is attn_ui.lessons.engine.
"""

from __future__ import annotations

import numpy as np

from attn_core import (
    Config,
    ModernTrace,
    MultiHeadTrace,
    RoPE,
    apply_rope,
    cached_decode,
    embed,
    initialize,
    initialize_heads,
    kv_head_of,
    make_config,
    online_softmax_attention,
    sliding_window_mask,
    softmax,
)
from attn_ui.app import registry
from attn_ui.app.i18n import N_
from attn_ui.lessons.engine import (
    BarsView,
    Choice,
    Difference,
    Lesson,
    MatrixView,
    Number,
    Solution,
    chart_labels,
)

# ---- the lessons' configurations ------------------------------------------------------------------------------

WORDS = ("a", "small", "dog", "ran", "to", "the", "old", "park")  # eight distinct words: one label each


def _grouped() -> Config:
    """8 query heads sharing 2 key/value heads (as Llama 2's and Mistral's larger models group them), each 2 wide."""
    n_heads, n_kv, d_model, d_head = 8, 2, 8, 2
    tokens = WORDS[:4]
    w_q = initialize_heads("xavier_uniform", (d_model, n_heads * d_head), n_heads, seed=1)  # [8, 16]
    w_k = initialize_heads("xavier_uniform", (d_model, n_kv * d_head), n_kv, seed=2)  # [8, 4]
    w_v = initialize_heads("xavier_uniform", (d_model, n_kv * d_head), n_kv, seed=3)  # [8, 4]
    return make_config(tokens, embed(list(tokens), d_model, seed=0), w_q, w_k, w_v, np.eye(n_heads * d_head),
                       n_heads=n_heads, n_kv_heads=n_kv)


SHIFT = 3  # the RoPE lesson moves every position this much later


def _rope() -> Config:
    """Six words, one head of width 4 with RoPE (base 10000, transformers' half layout)."""
    tokens = WORDS[:6]
    d = 4
    return make_config(tokens, embed(list(tokens), d, seed=0), initialize("xavier_uniform", (d, d), seed=1),
                       initialize("xavier_uniform", (d, d), seed=2), initialize("xavier_uniform", (d, d), seed=3),
                       rope=RoPE())


WINDOW, WINDOW_QUERY = 4, 6  # the sliding-window lesson: a window of 4 keys, the query at position 6 ("old")


def _window() -> Config:
    d = 4
    return make_config(WORDS, embed(list(WORDS), d, seed=0), initialize("xavier_uniform", (d, d), seed=1),
                       initialize("xavier_uniform", (d, d), seed=2), initialize("xavier_uniform", (d, d), seed=3),
                       mask_kind="causal", window=WINDOW)


DECODED = 101  # the KV-cache lesson: the text is this long, its last token the one being generated


def _decoding() -> Config:
    """101 tokens (t1 … t101) of width 4, one causal head of width 2 with RoPE: small enough to decode for real."""
    tokens = tuple(f"t{i}" for i in range(1, DECODED + 1))
    x = initialize("gaussian", (DECODED, 4), seed=7)  # [101, 4]
    return make_config(tokens, x, initialize("xavier_uniform", (4, 2), seed=1),
                       initialize("xavier_uniform", (4, 2), seed=2), initialize("xavier_uniform", (4, 2), seed=3),
                       mask_kind="causal", rope=RoPE())


BLOCK, ONLINE_QUERY = 2, 0  # the online-softmax lesson: tiles of 2 keys, following the first token
ONLINE_SCORES = (1.0, 2.0, 0.5, 1.5, 3.0, 0.2)  # the first token's scaled scores: tile 1 brings no new largest one


def _online() -> Config:
    """Six words; W_Q and W_K make the first token's scaled scores X's first column, ONLINE_SCORES, so that its largest
    score arrives in the last tile and the middle tile brings none."""
    tokens = WORDS[:6]
    d = 4
    x = embed(list(tokens), d, seed=0)  # [6, 4]
    x[:, 0] = ONLINE_SCORES
    w_q = initialize("xavier_uniform", (d, d), seed=1)
    w_q[:, 0] = 0.0
    w_q[1, 0] = np.sqrt(d) / x[0, 1]  # the first token's query is (√d, 0, ...) on the keys' first feature ...
    w_q[:, 1:] = 0.0  # ... and 0 on the others
    w_k = np.eye(d)  # the keys are the inputs
    return make_config(tokens, x, w_q, w_k, initialize("xavier_uniform", (d, d), seed=3))


CAP = 5.0  # the soft-cap lesson's cap (Gemma 2 uses 50 on scores of a larger scale)


def _softcap() -> Config:
    tokens = WORDS[:5]
    d = 4
    return make_config(tokens, 2.0 * embed(list(tokens), d, seed=0), initialize("xavier_uniform", (d, d), seed=1),
                       initialize("xavier_uniform", (d, d), seed=2), initialize("xavier_uniform", (d, d), seed=3),
                       scale="none", softcap=CAP)


# ---- the lessons' solvers: the answer and the facts, from the traces ------------------------------------------


def _heatmaps(cfg: Config, *views: tuple[str, np.ndarray, str]) -> tuple[MatrixView, ...]:
    """Query × key heatmaps of the configuration's tokens: (title, values, "signed" or "weights")."""
    return tuple(MatrixView(title, values, chart_labels(cfg), chart_labels(cfg), kind) for title, values, kind in views)


def _modern(trace: MultiHeadTrace) -> ModernTrace:
    if not isinstance(trace, ModernTrace):  # a lesson here always sets a modern option
        raise TypeError("a modern-attention lesson needs modern_attention's trace")
    return trace


def _distinct(arrays: list[np.ndarray]) -> int:
    """How many different matrices there are among ``arrays`` (equal numbers are one matrix)."""
    return len({(a.shape, a.tobytes()) for a in arrays})


GROUPED_OPTIONS = (  # the right one is not always first: in each lesson's own place
    N_("{n_heads} of each: {mha_total} in all, one pair per query head"),
    N_("{n_kv} of W_K and {n_kv} of W_V: {kv_total} in all, each pair shared by {group} query heads"),
    N_("one of each: 2 in all, shared by every query head"),
    N_("{n_heads} of W_K but only {n_kv} of W_V: {mixed_total} in all"),
)


def _solve_grouped(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = _modern(trace)
    n_heads, n_kv = t.n_heads, len(set(t.kv_heads))
    n_k = _distinct([h.k for h in t.heads])  # the key matrices the query heads read
    n_v = _distinct([h.v for h in t.heads])
    counts = ((n_heads, n_heads), (n_kv, n_kv), (1, 1), (n_heads, n_kv))  # in the order of GROUPED_OPTIONS
    d_k, d_v = cfg.w_k.shape[1] // n_kv, cfg.w_v.shape[1] // n_kv
    per_token_gqa = cfg.w_k.shape[1] + cfg.w_v.shape[1]  # one token's cached key and value rows, every K/V head
    per_token_mha = n_heads * (d_k + d_v)  # the same with one key/value head per query head
    if list(t.kv_heads) != [kv_head_of(h, n_heads, n_kv) for h in range(n_heads)]:
        raise AssertionError("the trace's grouping is not kv_head_of's")
    reads = np.zeros((n_heads, n_kv))  # [n_heads, n_kv]: 1 where query head h reads key/value head g
    reads[np.arange(n_heads), list(t.kv_heads)] = 1.0
    first_group = np.array([h for h in range(n_heads) if t.kv_heads[h] == 0])  # the query heads of K/V head 0
    return Solution(
        answer=counts.index((n_k, n_v)),
        facts={"n_heads": n_heads, "n_kv": n_kv, "group": n_heads // n_kv, "d_k": d_k, "d_v": d_v,
               "n_seq": cfg.n_seq, "d_model": cfg.d_model,
               "w_q_shape": cfg.w_q.shape, "w_k_shape": cfg.w_k.shape, "w_v_shape": cfg.w_v.shape,
               "kv_total": 2 * n_kv, "mha_total": 2 * n_heads, "mixed_total": n_heads + n_kv,
               "kv_of": np.array(t.kv_heads), "first_group": first_group,
               "n_k": n_k, "n_v": n_v,
               "cache_gqa": per_token_gqa, "cache_mha": per_token_mha, "saved": per_token_mha - per_token_gqa,
               "ratio": per_token_mha / per_token_gqa, "cache_gqa_all": per_token_gqa * cfg.n_seq,
               "cache_mha_all": per_token_mha * cfg.n_seq,
               "mha_width": n_heads * d_k, "mqa_width": d_k},
        numbers=(("W_Q", "w_q_shape"), ("W_K", "w_k_shape"), ("W_V", "w_v_shape"),
                 (N_("the key/value head each query head reads"), "kv_of"),
                 (N_("different key matrices the heads read"), "n_k"),
                 (N_("cached numbers per token: grouped-query"), "cache_gqa"),
                 (N_("… with one key/value head per query head"), "cache_mha")),
        views=(MatrixView(N_("Which key/value head each query head reads"), reads,
                          tuple(f"{h}" for h in range(n_heads)), tuple(f"{g}" for g in range(n_kv)), "weights",
                          y_title=N_("query head"), x_title=N_("key/value head")),),
    )


ROPE_OPTIONS = (
    N_("all of them"),
    N_("only the scores of tokens far apart"),
    N_("none: every score stays as it was"),
    N_("only the scores of tokens close together"),
)


def _solve_rope(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = _modern(trace)
    head, rope = t.heads[0], t.rope
    pos = np.asarray(t.positions)  # [n_seq]: 0 … n_seq − 1
    turn = {"base": rope.base, "layout": rope.layout}
    q_moved = apply_rope(t.q, pos + SHIFT, **turn)  # [n_seq, d_k]: the same queries, SHIFT positions later
    k_moved = apply_rope(t.k, pos + SHIFT, **turn)  # [n_seq, d_k]
    moved = q_moved @ k_moved.T  # [n_seq, n_seq]: the scores with every position moved
    keys_only = head.q @ k_moved.T  # [n_seq, n_seq]: only the keys moved
    change = np.abs(moved - head.scores)  # [n_seq, n_seq]
    tiny = 1e-9
    far = np.abs(pos[:, None] - pos[None, :]) > 1  # [n_seq, n_seq]
    answer = (2 if (change <= tiny).all() else 0 if (change > tiny).all()  # in the order of ROPE_OPTIONS
              else 1 if (change[~far] <= tiny).all() else 3)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "last": int(pos[-1]), "d_k": head.q.shape[1], "base": rope.base, "shift": SHIFT,
               "n_scores": head.scores.size, "first": cfg.tokens[0], "scores_first": head.scores[0],
               "moved_first": moved[0], "diff": Difference(float(change.max())),
               "keys_only": float(np.abs(keys_only - head.scores).max()),
               "last_moved": int(pos[-1]) + SHIFT},
        numbers=((N_("the first token's scores, positions from 0"), "scores_first"),
                 (N_("… with every position moved by {shift}"), "moved_first"),
                 (N_("the largest change of any score"), "diff"),
                 (N_("the largest change when only the keys move"), "keys_only")),
        views=_heatmaps(cfg, (N_("Scores, positions 0 to {last}"), head.scores, "signed"),
                        (N_("Scores, positions {shift} to {last_moved}"), moved, "signed")),
    )


WINDOW_OPTIONS = (
    N_("positions {lo_wide} to {pos}: {wide} keys"),
    N_("positions {lo_wide} to {before}: the {window} keys before it, not itself"),
    N_("positions {lo} to {pos}: {window} keys, counting itself"),
    N_("positions 0 to {pos}: itself and every key before it"),
)


def _solve_window(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = _modern(trace)
    i, w = WINDOW_QUERY, t.window
    seen = np.flatnonzero(t.mask[i])  # the keys query i may attend to
    if not np.array_equal(t.mask, sliding_window_mask(cfg.n_seq, cfg.n_seq, w, causal=True)):
        raise AssertionError("the trace's mask is not the causal sliding window's")
    ranges = ((i - w, i), (i - w, i - 1), (i - w + 1, i), (0, i))  # in the order of WINDOW_OPTIONS
    weights = t.heads[0].weights
    return Solution(
        answer=ranges.index((int(seen.min()), int(seen.max()))) if np.array_equal(
            seen, np.arange(seen.min(), seen.max() + 1)) else 3,
        facts={"n_seq": cfg.n_seq, "window": w, "pos": i, "token": cfg.tokens[i], "lo": i - w + 1, "lo_wide": i - w,
               "wide": w + 1, "before": i - 1, "n_seen": int(seen.size), "row": t.mask[i].astype(int),
               "weights": weights[i], "seen_per_row": t.mask.sum(axis=1)},
        numbers=((N_("“{token}”'s row of the mask (1: may attend)"), "row"), (N_("its weights"), "weights"),
                 (N_("keys each query sees, row by row"), "seen_per_row")),
        views=(MatrixView(N_("Weights, causal with a window of {window}"), weights, chart_labels(cfg),
                          chart_labels(cfg), "weights", masked=~t.mask),),
    )


def _solve_decoding(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = _modern(trace)
    decoded = cached_decode(cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=cfg.n_heads,
                            n_kv_heads=cfg.n_kv_heads, rope=cfg.rope)  # every token in turn, the cache growing
    step = decoded.steps[-1]  # the last token's step
    row = step.trace.heads[0].scores  # [1, t + 1]: its one query against the cached keys and its own
    n_dots = row.shape[1]
    if step.dot_products != cfg.n_heads * n_dots:
        raise AssertionError("decode_step's count and its row of scores disagree")
    n = cfg.n_seq
    triangle = int(t.mask.sum())  # the causal triangle a whole forward pass scores
    return Solution(
        answer=n_dots,
        facts={"n_seq": n, "n_prev": step.k_cached.shape[0], "last_prev": step.position - 1, "pos": step.position,
               "n_dots": n_dots, "row_shape": row.shape, "cache_shape": step.k_cache.shape,
               "triangle": triangle, "square": n * n, "token": cfg.tokens[-1],
               "diff": Difference(float(np.abs(decoded.output[-1] - t.output[-1]).max())),
               "total_cached": sum(s.dot_products for s in decoded.steps) // cfg.n_heads},
        numbers=((N_("keys taken from the cache"), "n_prev"), (N_("the new token's row of scores"), "row_shape"),
                 (N_("the cache of keys after this step"), "cache_shape"),
                 (N_("without a cache: the causal triangle"), "triangle"),
                 (N_("largest difference from the whole text's output row"), "diff")),
        views=(BarsView(N_("Dot products for the new token, one head"), (cfg.tokens[-1],),
                        ((N_("with a KV cache"), np.array([n_dots])),
                         (N_("without: the causal triangle"), np.array([triangle])),
                         (N_("without: the whole square"), np.array([n * n]))),
                        y_title=N_("dot products")),),
    )


ONLINE_OPTIONS = (
    N_("m rises, and the old l and O stay as they are: the tile's terms are added to them"),
    N_("m stays where it was; l and O simply grow by the tile's terms"),
    N_("m rises to the new largest score, and the old l and O are multiplied by exp(m_old − m_new), a number below 1, "
       "before the tile's own terms are added"),
    N_("the tiles before are read again with the new m"),
)


def _solve_online(cfg: Config, trace: MultiHeadTrace) -> Solution:
    head, r = trace.heads[0], ONLINE_QUERY
    online = online_softmax_attention(head.q, head.k, head.v, block=BLOCK, scale=cfg.scale)
    top = int(np.argmax(head.scaled[r]))  # the row's largest score
    tile = online.tiles[top // BLOCK]  # the tile that brings it
    if top // BLOCK == 0:
        raise AssertionError("the online-softmax lesson needs the largest score in a later tile")
    m_old, m_new, rescale = float(tile.m_old[r]), float(tile.m_new[r]), float(tile.rescale[r])
    p = tile.p[r] @ online.v[tile.start:tile.stop]  # [d_v]: the tile's own terms
    kept = np.allclose(tile.o_new[r], rescale * tile.o_old[r] + p, rtol=0, atol=1e-12)
    answer = (1 if m_new == m_old else 2 if rescale < 1 and kept else 0)  # in the order of ONLINE_OPTIONS
    n_tiles = len(online.tiles)
    return Solution(
        answer=answer,
        facts={"block": BLOCK, "query": cfg.tokens[r], "n_seq": cfg.n_seq, "n_tiles": n_tiles,
               "tiles": np.stack([tl.scores[r] for tl in online.tiles]), "tile": top // BLOCK,
               "start": tile.start, "stop": tile.stop - 1, "s_top": float(head.scaled[r, top]),
               "m_old": m_old, "m_new": m_new, "rescale": rescale, "l_old": float(tile.l_old[r]),
               "l_new": float(tile.l_new[r]), "p_sum": float(tile.p[r].sum()), "o_old": tile.o_old[r],
               "o_new": tile.o_new[r], "m_pair": np.array([m_old, m_new]),
               "l_pair": np.array([tile.l_old[r], tile.l_new[r]]), "out": online.output[r],
               "factors": np.array([tl.rescale[r] for tl in online.tiles]),
               "diff": Difference(float(np.abs(online.output[r] - head.output[r]).max()))},
        numbers=((N_("m before and after tile {tile}"), "m_pair"), (N_("the factor exp(m_old − m_new)"), "rescale"),
                 (N_("l before and after"), "l_pair"), (N_("O before tile {tile}"), "o_old"),
                 (N_("O after it"), "o_new"), (N_("the factor at each tile"), "factors"),
                 (N_("O ÷ l after the last tile"), "out")),
        views=(BarsView(N_("“{query}”, tile by tile"), tuple(str(k) for k in range(n_tiles)),
                        ((N_("m after the tile"), np.array([tl.m_new[r] for tl in online.tiles])),
                         (N_("the factor exp(m_old − m_new)"), np.array([tl.rescale[r] for tl in online.tiles]))),
                        y_title=N_("value"), category_label=N_("tile {category}")),
               *_heatmaps(cfg, (N_("Weights"), head.weights, "weights"))),
    )


SOFTCAP_OPTIONS = (
    N_("{smallest}, the score nearest 0"),
    N_("{largest}, the score farthest from 0"),
    N_("none more than another: every score moves by the same amount"),
)


def _solve_softcap(cfg: Config, trace: MultiHeadTrace) -> Solution:
    head, r = trace.heads[0], 0
    scaled, capped = head.scaled[r], head.capped[r]  # [n_k] each: before and after cap · tanh(s / cap)
    change = np.abs(scaled - capped)  # [n_k]
    far, near = int(np.argmax(np.abs(scaled))), int(np.argmin(np.abs(scaled)))
    moved = int(np.argmax(change))
    same = bool(np.ptp(change) < 1e-12)  # every score moved alike
    answer = (2 if same else 1 if moved == far else 0 if moved == near else 2)  # in the order of SOFTCAP_OPTIONS
    plain_w = softmax(scaled)  # [n_k]: the same row without the cap
    return Solution(
        answer=answer,
        facts={"cap": cfg.softcap, "n_seq": cfg.n_seq, "query": cfg.tokens[r], "scaled": scaled, "capped": capped,
               "change": change, "largest": float(scaled[far]), "smallest": float(scaled[near]),
               "largest_to": float(capped[far]), "smallest_to": float(capped[near]),
               "key": cfg.tokens[far], "w_top": float(head.weights[r].max()), "w_plain": float(plain_w.max())},
        numbers=((N_("“{query}”'s scores"), "scaled"), (N_("soft-capped"), "capped"),
                 (N_("how much each moved"), "change"),
                 (N_("its largest weight, with the cap"), "w_top"), (N_("… without it"), "w_plain")),
        views=_heatmaps(cfg, (N_("Scores before the cap"), head.scaled, "signed"),
                        (N_("Scores after the cap"), head.capped, "signed")),
    )


# ---- the lessons, in the course's order ------------------------------------------------------------------------

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="grouped-query", title=N_("Grouped-query attention"),
        build=_grouped,
        setup=N_("A layer with {n_heads} query heads, each with queries and keys {d_k} wide, as Llama and Mistral "
                 "build their larger models: the query heads are grouped, and each group shares one key/value head. "
                 "W_Q is {w_q_shape}, while W_K is {w_k_shape} and W_V {w_v_shape}."),
        question=N_("How many key and value matrices (slices of W_K and W_V) does the layer have?"),
        ask=Choice(GROUPED_OPTIONS), solve=_solve_grouped,
        explanation=N_("Query head h reads key/value head h ÷ {group}, rounded down: heads {first_group} share the "
                       "first pair, and so on ({kv_of}). So W_K and W_V are cut into {n_kv} slices each, {kv_total} "
                       "matrices instead of the {mha_total} of multi-head attention with {n_heads} heads. A KV cache "
                       "keeps each token's keys and values once per key/value head: {cache_gqa} numbers per token and "
                       "layer here instead of {cache_mha}, {ratio} times fewer ({cache_gqa_all} instead of "
                       "{cache_mha_all} for these {n_seq} tokens)."),
        page=registry.MODERN,
        hint=N_("On Modern attention, set the key/value heads to {n_heads} (multi-head attention) or to 1 (multi-query "
                "attention) and watch W_K and W_V widen to {mha_width} columns or narrow to {mqa_width}."),
    ),
    Lesson(
        key="rope-shift", title=N_("RoPE: moving every token"),
        build=_rope,
        setup=N_("{n_seq} tokens at positions 0 to {last}, one head with queries and keys {d_k} wide, and RoPE: each "
                 "pair of a query's or a key's features is turned by an angle proportional to the token's position "
                 "(base {base}). Now count the positions from {shift} instead of 0, so that every token, as a query "
                 "and as a key, sits {shift} positions later."),
        question=N_("Which of the {n_scores} scores QKᵀ change?"),
        ask=Choice(ROPE_OPTIONS), solve=_solve_rope,
        explanation=N_("RoPE turns a query at position m by m·θ and a key at position n by n·θ, pair by pair, and the "
                       "dot product of two turned vectors depends only on the angle between them, (m − n)·θ. Moving "
                       "both by {shift} adds the same angle to both and leaves every difference as it was, so no score "
                       "changes: the largest change is {diff}, float64's rounding. Move only the keys by {shift} and "
                       "the scores change by up to {keys_only}: RoPE tells attention how far apart two tokens are, "
                       "not where they stand."),
        page=registry.MODERN,
        hint=N_("On Modern attention, switch RoPE off and on, or change its base, and compare the scores: with RoPE a "
                "score depends on the two tokens and on how far apart they are."),
    ),
    Lesson(
        key="sliding-window", title=N_("A sliding window"),
        build=_window, query=WINDOW_QUERY,
        setup=N_("{n_seq} tokens, their positions counted from 0, with a causal mask and a sliding window of {window} "
                 "keys, as Mistral uses it: each query sees only the most recent keys. The token at position {pos} is "
                 "“{token}”."),
        question=N_("Which keys does “{token}” (position {pos}) see?"),
        ask=Choice(WINDOW_OPTIONS), solve=_solve_window,
        explanation=N_("The rule counts the query itself: a query at position i sees the key at position j when "
                       "i − W < j ≤ i, with W = {window}. For i = {pos} that is {lo} ≤ j ≤ {pos}, {n_seen} keys, and "
                       "its row of the mask is {row}. Its weights, {weights}, are 0 outside the window; every other "
                       "row slides along the diagonal, so no query sees more than {window} keys however long the "
                       "text."),
        page=registry.MODERN,
        hint=N_("On Modern attention, set the window to 1 (each token sees only itself) or to {n_seq} (the plain "
                "causal mask) and watch the band of weights."),
    ),
    Lesson(
        key="kv-cache", title=N_("A KV cache"),
        build=_decoding, query=DECODED - 1,
        setup=N_("A causal model has written {n_prev} tokens, at positions 0 to {last_prev}, and now writes token "
                 "number {n_seq}, “{token}”, at position {pos}. With a KV cache, the keys and values of the {n_prev} "
                 "tokens before it are kept from the earlier steps (already turned by RoPE), so this step projects "
                 "only the new token's query, key and value."),
        question=N_("How many query-key dot products does one head compute for token number {n_seq}?"),
        ask=Number(tolerance=0.5, low=0.0, high=100_000.0, step=1.0), solve=_solve_decoding,
        explanation=N_("The new token's query meets the {n_prev} cached keys and its own: {n_dots} dot products, one "
                       "row of scores, as many as its position ({pos}, counted from 0) plus one. Its output equals the "
                       "last row of the whole text's attention (the largest difference is {diff}), because under a "
                       "causal mask nothing before a token depends on it. Without a cache, the whole {n_seq} × {n_seq} "
                       "causal triangle would be scored again for this one token: {triangle} dot products, or "
                       "{square} when the masked half is computed and thrown away, as one matrix product QKᵀ does."),
        page=registry.MODERN,
        hint=N_("On Modern attention, follow the last token's step with the KV cache; with the cache, writing all "
                "{n_seq} tokens costs {total_cached} dot products per head, the one triangle."),
    ),
    Lesson(
        key="online-softmax", title=N_("Online softmax, tile by tile"),
        build=_online, query=ONLINE_QUERY,
        setup=N_("Online softmax (FlashAttention) reads the keys in tiles of {block} and keeps, for each query, a "
                 "running m, the largest score so far, l, the sum of exp(score − m), and O, the sum of "
                 "exp(score − m) times the value rows. The scaled scores of “{query}” arrive tile by tile: {tiles}. "
                 "Tile {tile} (keys {start} to {stop}, counted from 0) brings {s_top}, larger than m = {m_old} so "
                 "far."),
        question=N_("What happens to m, l and O when tile {tile} arrives?"),
        ask=Choice(ONLINE_OPTIONS), solve=_solve_online,
        explanation=N_("m rises from {m_old} to {m_new}. Everything summed so far was exp(score − m_old), so the old l "
                       "and O are multiplied by exp(m_old − m_new) = {rescale}: l goes from {l_old} to {rescale} × "
                       "{l_old} plus the tile's {p_sum}, that is {l_new}, and O likewise to {o_new}. After the last "
                       "tile, O ÷ l is the output row, {out}, the ordinary softmax's (the largest difference is "
                       "{diff}), without the whole row of weights ever existing at once."),
        page=registry.MODERN,
        hint=N_("On Modern attention, follow “{query}” through the online softmax tile by tile: a tile that brings no "
                "new largest score keeps the factor at 1."),
    ),
    Lesson(
        key="soft-cap", title=N_("Soft-capping the scores"),
        build=_softcap,
        setup=N_("{n_seq} tokens whose scores are not divided by anything, and a soft cap of {cap}, as Gemma 2 uses "
                 "one: each score s becomes cap · tanh(s ÷ cap), which is close to s near 0 and never beyond ±cap. "
                 "“{query}”'s scores are {scaled}."),
        question=N_("Which of “{query}”'s scores does the cap change most?"),
        ask=Choice(SOFTCAP_OPTIONS), solve=_solve_softcap,
        explanation=N_("tanh is nearly a straight line near 0 and flattens far from it, so {smallest} only becomes "
                       "{smallest_to} while {largest} is pulled in to {largest_to}. The changes, {change}, grow with "
                       "the size of the score. Capping the largest score lowers the largest weight from {w_plain} to "
                       "{w_top}: no single key can take every weight however large its score."),
        page=registry.MODERN,
        hint=N_("On Modern attention, move the soft cap down toward 1 and up past the largest score: the weights "
                "flatten, then return to the uncapped ones."),
    ),
)
