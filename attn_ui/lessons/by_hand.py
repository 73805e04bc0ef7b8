"""The lessons done by hand: each a small configuration (the tutorials' example, a few made for one idea), its
solver (the answer and the facts, from the attention trace) and its entry, in the course's order.

Content only: what a lesson is and how it is judged and written is attn_ui.lessons.engine.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from attn_core import (
    Config,
    MultiHeadTrace,
    analysis,
    embed,
    initialize,
    load_preset,
    make_config,
    positional_encoding,
    run,
    softmax,
)
from attn_ui.app import registry
from attn_ui.app.i18n import N_

if TYPE_CHECKING:  # attn_models is only needed by the model lessons, which receive a loaded model
    pass


from attn_ui.lessons.engine import (
    BarsView,
    Cell,
    Choice,
    Difference,
    Lesson,
    MatrixView,
    Number,
    Solution,
    chart_labels,
)

# ---- the lessons' configurations ------------------------------------------------------------------------------

TUTORIAL = "seed000"  # the tutorials' example: 3 inputs, d_model 4, W_Q, W_K, W_V of 4 × 3, scaled by √3


def _all_scores_equal() -> Config:
    tokens = ("the", "cat", "sat", "down")
    w_k = initialize("xavier_uniform", (4, 3), seed=1)  # [d_model, d_k]
    w_v = initialize("xavier_uniform", (4, 3), seed=2)  # [d_model, d_v]
    return make_config(tokens, embed(list(tokens), 4, seed=0), np.zeros((4, 3)), w_k, w_v)


FRUITS = ("apple", "banana", "cherry", "date")
LOOKUP_KEY = 2  # every query equals cherry's key


def _lookup() -> Config:
    eye = np.eye(4)  # one-hot inputs and keys
    w_q = np.zeros((4, 4))
    w_q[:, LOOKUP_KEY] = 1.0  # [d_model, d_k]: every token's query is cherry's key
    w_v = np.array([[10.0], [20.0], [30.0], [40.0]])  # [d_model, d_v = 1]: each fruit's value
    return make_config(FRUITS, eye, w_q, eye, w_v)


def _wide_random() -> Config:
    """32 tokens of 128 N(0, 1) inputs; the queries are the first 64 columns, the keys the other 64."""
    eye = np.eye(128)
    x = initialize("gaussian", (32, 128), seed=0)  # [n_seq, d_model]
    return make_config(tuple(f"t{i}" for i in range(1, 33)), x, eye[:, :64], eye[:, 64:], eye[:, :8])


def _huge_scores() -> Config:
    """Scores near 1000: queries 1000, 1001, 1002 (d_k = 1) meet keys 1, 1.001, 1.002."""
    x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])  # [3, 2]
    return make_config(("big", "bigger", "biggest"), x, np.array([[1000.0], [1.0]]), np.array([[1.0], [0.001]]),
                       np.eye(2))


PADDED = ("I", "like", "tea", "[PAD]")


def _padded() -> Config:
    t = load_preset(TUTORIAL)
    return make_config(PADDED, embed(list(PADDED), 4, seed=3), t.w_q, t.w_k, t.w_v, mask_kind="padding",
                       is_pad=(False, False, False, True))


SENTENCE = ("dog", "bites", "man")
SWAP = [2, 1, 0]  # "dog bites man" -> "man bites dog"


def _sentence(tokens: tuple[str, ...], positions: bool) -> Config:
    """Deterministic embeddings of width 4 (seed 0, as Inputs & weights makes them), the tutorials' weights."""
    t = load_preset(TUTORIAL)
    x = embed(list(tokens), 4, seed=0)  # [3, 4]
    if positions:
        x = x + positional_encoding(len(tokens), 4)
    return make_config(tokens, x, t.w_q, t.w_k, t.w_v)


def _two_heads() -> Config:
    """The tutorials' inputs; head 0 has the tutorials' weights, head 1 three seeded random ones."""
    t = load_preset(TUTORIAL)
    more = [initialize("xavier_uniform", (4, 3), seed=s) for s in (11, 12, 13)]  # [4, 3] each
    return make_config(t.tokens, t.x, np.hstack([t.w_q, more[0]]), np.hstack([t.w_k, more[1]]),
                       np.hstack([t.w_v, more[2]]), n_heads=2)  # W_O: the identity [6, 6]


def _wide_values() -> Config:
    """The tutorials' inputs with d_k = 2 (their first two columns) and d_v = 5 (two more value columns)."""
    t = load_preset(TUTORIAL)
    w_v = np.hstack([t.w_v, initialize("xavier_uniform", (4, 2), seed=5)])  # [4, 5]
    return make_config(t.tokens, t.x, t.w_q[:, :2], t.w_k[:, :2], w_v)



# ---- the lessons' solvers: the answer and the facts, from the trace -------------------------------------------


def _heatmaps(cfg: Config, *views: tuple[str, np.ndarray, str]) -> tuple[MatrixView, ...]:
    """Query × key heatmaps of the configuration's tokens: (title, values, "signed" or "weights")."""
    return tuple(MatrixView(title, values, chart_labels(cfg), chart_labels(cfg), kind) for title, values, kind in views)


def _outputs(cfg: Config, *views: tuple[str, np.ndarray, tuple[str, ...]]) -> tuple[MatrixView, ...]:
    """Token × column heatmaps: (title, values [n_seq, d], row labels)."""
    return tuple(MatrixView(title, values, rows, tuple(map(str, range(values.shape[1]))), y_title=N_("token"),
                            x_title=N_("column")) for title, values, rows in views)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(a, b, rtol=0.0, atol=1e-9))



FOCUS = 1  # the by-hand lessons follow input2


def _solve_best_match(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, i = trace.heads[0], FOCUS
    best = int(np.argmax(t.weights[i]))
    return Solution(
        answer=best,
        facts={"query": cfg.tokens[i], "x_row": cfg.x[i], "q_row": t.q[i], "scores": t.scores[i],
               "n_seq": cfg.n_seq, "d_model": cfg.d_model, "w_shape": cfg.w_q.shape, "d_k": cfg.d_k,
               "divisor": t.divisor, "weights": t.weights[i], "best": cfg.tokens[best], "s_best": t.scores[i, best],
               "w_best": t.weights[i, best]},
        numbers=((N_("input2's query (its row of Q)"), "q_row"),
                 (N_("its scores against input1, input2, input3"), "scores"),
                 (N_("divided by √d_k = √{d_k}"), "divisor"), (N_("its weights"), "weights")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ"), t.scores, "signed"), (N_("Weights"), t.weights, "weights")),
    )


def _solve_match_weight(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, i = trace.heads[0], FOCUS
    best = int(np.argmax(t.weights[i]))
    runner_up = np.sort(t.scaled[i])[-2]
    raw = softmax(t.scores[i])  # [n_k]: the same row without the division
    return Solution(
        answer=float(t.weights[i, best]),
        facts={"scores": t.scores[i], "d_k": cfg.d_k, "divisor": t.divisor, "n_seq": cfg.n_seq,
               "n_others": cfg.n_seq - 1, "gap_raw": t.scores[i, best] - np.sort(t.scores[i])[-2],
               "best": cfg.tokens[best], "scaled": t.scaled[i],
               "exps": np.exp(t.scaled[i]), "total": float(np.exp(t.scaled[i]).sum()),
               "gap": t.scaled[i, best] - runner_up, "ratio": float(np.exp(t.scaled[i, best] - runner_up)),
               "w_best": t.weights[i, best], "weights": t.weights[i], "w_raw": raw[best]},
        numbers=((N_("scores ÷ √d_k"), "scaled"), (N_("e to the power of each"), "exps"), (N_("their sum"), "total"),
                 (N_("weights: each e^s divided by the sum"), "weights")),
        views=_heatmaps(cfg, (N_("Weights"), t.weights, "weights")),
    )


def _solve_uniform(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    return Solution(
        answer=float(t.weights[0, 0]),
        facts={"n": cfg.n_seq, "weight": t.weights[0, 0], "v_mean": t.v.mean(axis=0), "out_row": t.output[0],
               "spread": Difference(float(np.abs(t.output - t.output[0]).max())), "q_row": t.q[0]},
        numbers=((N_("a query (the first row of Q)"), "q_row"), (N_("every weight"), "weight"),
                 (N_("the average of the value rows"), "v_mean"), (N_("every token's output"), "out_row")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ"), t.scores, "signed"), (N_("Weights"), t.weights, "weights")),
    )


LOOKUP_OPTIONS = (
    N_("exactly cherry's value, {v_hit}"),
    N_("between the average of the {n} values ({v_mean}) and cherry's value ({v_hit})"),
    N_("exactly the average of the {n} values, {v_mean}"),
    N_("more than cherry's value"),
)


HINT_DIVISOR = 0.1  # the lookup lesson's hint: the divisor that makes it nearly exact


def _solve_lookup(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t, hit = trace.heads[0], LOOKUP_KEY
    out, v = float(t.output[0, 0]), t.v[:, 0]  # d_v = 1: one number per token
    v_hit, v_mean = float(v[hit]), float(v.mean())
    answer = (0 if np.isclose(out, v_hit, rtol=0, atol=1e-9) else 2 if np.isclose(out, v_mean, rtol=0, atol=1e-9)
              else 3 if out > v_hit else 1)
    other = 0 if hit != 0 else 1
    return Solution(
        answer=answer,
        facts={"n": cfg.n_seq, "d_k": cfg.d_k, "hint_divisor": HINT_DIVISOR,
               "w_hint": softmax(t.scores[0] / HINT_DIVISOR)[hit], "values": v, "v_hit": v_hit, "v_mean": v_mean,
               "out": out, "dot_hit": t.scores[0, hit],
               "dot_other": t.scores[0, other], "divisor": t.divisor, "gap": t.scaled[0, hit] - t.scaled[0, other],
               "w_hit": t.weights[0, hit], "w_other": t.weights[0, other], "weights": t.weights[0],
               "scores_row": t.scores[0]},
        numbers=((N_("a query's scores against apple, banana, cherry, date"), "scores_row"),
                 (N_("divided by √d_k = √{d_k}"), "divisor"), (N_("its weights"), "weights"),
                 (N_("the values"), "values"),
                 (N_("the output (every token's)"), "out")),
        views=_heatmaps(cfg, (N_("Weights"), t.weights, "weights")),
    )


def _solve_largest_cell(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    row, col = (int(i) for i in np.unravel_index(np.argmax(t.weights), t.weights.shape))
    runner_up = np.sort(t.scaled[row])[-2]
    return Solution(
        answer=(row, col),
        facts={"scores": t.scores, "row": cfg.tokens[row], "col": cfg.tokens[col], "w": t.weights[row, col],
               "s_best": t.scaled[row, col], "s_next": runner_up, "gap": t.scaled[row, col] - runner_up,
               "ratio": float(np.exp(t.scaled[row, col] - runner_up)), "rounded": np.round(t.weights, 1),
               "w_scaled": float(softmax(t.scores / np.sqrt(cfg.d_k)).max()), "d_k": cfg.d_k,
               "weights": t.weights},
        numbers=((N_("the scores QKᵀ, row by row"), "scores"), (N_("the weights, row by row"), "weights"),
                 (N_("the largest weight"), "w")),
        views=_heatmaps(cfg, (N_("Scores QKᵀ (not divided)"), t.scores, "signed"),
                        (N_("Weights"), t.weights, "weights")),
    )


FACTOR = 10  # the temperature lesson multiplies the scores by this
SHARPNESS_OPTIONS = (
    N_("they get sharper: closer to all the weight on one key"),
    N_("they get flatter: closer to equal weights"),
    N_("nothing changes: softmax ignores a common factor"),
    N_("sharper in some rows, flatter in others"),
)


def _solve_temperature(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    after = softmax(FACTOR * t.masked)  # [n_q, n_k]
    h_before, h_after = analysis.row_entropy(t.weights), analysis.row_entropy(after)  # [n_q] each
    answer = (2 if np.allclose(h_before, h_after) else 0 if (h_after < h_before).all()
              else 1 if (h_after > h_before).all() else 3)
    return Solution(
        answer=answer,
        facts={"factor": FACTOR, "d_k": cfg.d_k, "n_seq": cfg.n_seq, "h_max": float(np.log(cfg.n_seq)),
               "h_before": h_before, "h_after": h_after,
               "mean_before": float(h_before.mean()), "mean_after": float(h_after.mean()),
               "var_before": float(t.scaled.var()), "var_after": float((FACTOR * t.scaled).var()),
               "top_before": t.weights.max(axis=1), "top_after": after.max(axis=1)},
        numbers=((N_("entropy of each row (nats), as they are"), "h_before"),
                 (N_("… with the scores times {factor}"), "h_after"),
                 (N_("largest weight of each row, as they are"), "top_before"),
                 (N_("… with the scores times {factor}"), "top_after"),
                 (N_("variance of the scores, as they are"), "var_before"), (N_("… times {factor}"), "var_after")),
        views=(*_heatmaps(cfg, (N_("Weights"), t.weights, "weights"),
                          (N_("Weights, scores times 10"), after, "weights")),
               BarsView(N_("Entropy of each row of weights"), cfg.tokens,
                        ((N_("as they are"), h_before), (N_("scores times 10"), h_after)), N_("entropy (nats)"))),
    )


def _solve_sqrt_dk(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    v = analysis.variance_stats(t.q, t.k)
    return Solution(
        answer=v.var_scores,
        facts={"n_seq": cfg.n_seq, "d_model": cfg.d_model, "d_k": cfg.d_k, "n_scores": t.scores.size,
               "var_q": v.var_q, "var_k": v.var_k, "var_scores": v.var_scores, "var_scaled": v.var_scaled,
               "sqrt_dk": float(np.sqrt(cfg.d_k))},
        numbers=(("var(Q)", "var_q"), ("var(K)", "var_k"), ("var(QKᵀ)", "var_scores"),
                 ("var(QKᵀ / √d_k)", "var_scaled")),
        views=(BarsView(N_("Variance of the entries"), ("Q", "K", "QKᵀ", "QKᵀ / √d_k"),
                        ((N_("variance"), np.array([v.var_q, v.var_k, v.var_scores, v.var_scaled])),),
                        N_("variance")),),
    )


NAIVE_OPTIONS = (
    N_("the same weights as the other formula"),
    N_("NaN (not a number) in every cell"),
    N_("zeros in every cell"),
    N_("all the weight on the largest score"),
)


def _solve_stable_softmax(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    cmp = analysis.compare_softmax(t.masked[0])
    naive, stable = cmp.naive_weights, cmp.stable_weights  # [n_k] each
    one_hot = np.zeros_like(stable)
    one_hot[np.argmax(cmp.scores)] = 1.0
    answer = (1 if np.isnan(naive).all() else 0 if np.allclose(naive, stable) else 2 if (naive == 0).all()
              else 3 if np.allclose(naive, one_hot) else 0)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "s_low": float(t.scores.min()), "s_high": float(t.scores.max()),
               "row": cmp.scores, "max_exp": analysis.MAX_EXP, "naive_exp": cmp.naive_exp, "naive": naive,
               "shifted": cmp.shifted, "stable_exp": cmp.stable_exp, "stable": stable},
        numbers=((N_("the first row of scores, x"), "row"), ("exp(x)", "naive_exp"), (N_("exp(x) ÷ its sum"), "naive"),
                 ("x − max", "shifted"), ("exp(x − max)", "stable_exp"), (N_("exp(x − max) ÷ its sum"), "stable")),
        views=_heatmaps(cfg, (N_("Weights (with the largest score subtracted)"), t.weights, "weights")),
    )


CAUSAL_OPTIONS = (
    N_("exactly its own value row"),
    N_("the average of all {n_seq} value rows"),
    N_("a blend of all {n_seq} value rows, weighted by its scores"),
    N_("zeros: the mask hides every key from it"),
)


def _solve_causal(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    out, v = t.output[0], t.v  # [d_v], [n_k, d_v]
    answer = (0 if _close(out, v[0]) else 3 if _close(out, 0 * out) else 1 if _close(out, v.mean(axis=0)) else 2)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "d_k": cfg.d_k, "d_v": cfg.d_v, "first": cfg.tokens[0], "last": cfg.tokens[-1],
               "w_first": t.weights[0], "w_last": t.weights[-1],
               "out": out, "v_first": v[0], "diff": Difference(float(np.abs(out - v[0]).max())),
               "scores_first": t.masked[0]},
        numbers=((N_("the first token's scores after the mask"), "scores_first"), (N_("its weights"), "w_first"),
                 (N_("its value row"), "v_first"), (N_("its output"), "out"),
                 (N_("the last token's weights"), "w_last")),
        views=(MatrixView(N_("Weights"), t.weights, chart_labels(cfg), chart_labels(cfg), "weights", masked=~t.mask),),
    )


def _solve_padding(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    pad, i = cfg.is_pad.index(True), cfg.tokens.index("tea")
    open_ = run(make_config(cfg.tokens, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v)).heads[0]  # the same, no mask
    return Solution(
        answer=float(t.weights[i, pad]),
        facts={"n_words": cfg.n_seq - sum(cfg.is_pad), "pad": cfg.tokens[pad], "w_pad": t.weights[i, pad],
               "pad_col": t.weights[:, pad],
               "w_open": open_.weights[i, pad], "w_tea": t.weights[i], "open_tea": open_.weights[i],
               "row_sum": float(t.weights[i].sum())},
        numbers=((N_("tea's weights, with the mask"), "w_tea"), (N_("… without it"), "open_tea"),
                 (N_("the padding token's column of weights"), "pad_col")),
        views=(MatrixView(N_("Weights, padding mask"), t.weights, chart_labels(cfg), chart_labels(cfg), "weights",
                          masked=~t.mask),
               *_heatmaps(cfg, (N_("Weights, no mask"), open_.weights, "weights"))),
    )


SWAP_OPTIONS = (
    N_("the same rows as before, with dog's and man's swapped"),
    N_("every row has new numbers"),
    N_("nothing changes: the same rows in the same order"),
    N_("some rows change, the others stay"),
)


def _solve_swap(positions: bool, cfg: Config, trace: MultiHeadTrace) -> Solution:
    swapped_cfg = _sentence(tuple(cfg.tokens[j] for j in SWAP), positions)
    before, after = trace.output, run(swapped_cfg).output  # [n_seq, d_out] each
    moved = before[SWAP]  # the old rows, in the new order
    # each new row against every old row: the smallest difference says whether it is an old row
    nearest = np.abs(after[:, None, :] - before[None, :, :]).max(axis=2).min(axis=1)  # [n_seq]
    answer = (2 if _close(after, before) else 0 if _close(after, moved)
              else 1 if (nearest > 1e-9).all() else 3)
    return Solution(
        answer=answer,
        facts={"n_seq": cfg.n_seq, "d_model": cfg.d_model, "before": before, "after": after,
               "diff_moved": Difference(float(np.abs(after - moved).max())),
               "least_change": float(nearest.min()), "bites_change": float(np.abs(after[1] - before[1]).max())},
        numbers=((N_("outputs of “dog bites man”"), "before"), (N_("outputs of “man bites dog”"), "after"),
                 (N_("largest difference from the old rows, swapped"), "diff_moved")),
        views=_outputs(cfg, (N_("Outputs of “dog bites man”"), before, cfg.tokens),
                       (N_("Outputs of “man bites dog”"), after, swapped_cfg.tokens)),
    )


def _solve_heads(cfg: Config, trace: MultiHeadTrace) -> Solution:
    tutorial = load_preset("seed003_heads")  # the Korean Python tutorial's 8 heads of 64
    widths = (cfg.w_q.shape[1], cfg.w_v.shape[1])
    more = next(h for h in range(cfg.n_heads + 1, widths[0] + 1) if all(w % h == 0 for w in widths))  # the hint's
    return Solution(
        answer=float(trace.concat.shape[1]),
        facts={"n_heads": cfg.n_heads, "d_v": cfg.d_v, "d_k": cfg.d_k, "n_seq": cfg.n_seq,
               "width": trace.concat.shape[1], "concat_shape": trace.concat.shape,
               "head_shape": trace.heads[0].output.shape,
               "diff": Difference(float(np.abs(trace.output - trace.concat).max())), "h3": tutorial.n_heads,
               "more_heads": more, "d_k_more": cfg.d_k * cfg.n_heads // more, "d_v_more": cfg.d_v * cfg.n_heads // more,
               "d3": tutorial.d_v,
               "w3": run(tutorial).concat.shape[1]},
        numbers=((N_("each head's output"), "head_shape"), (N_("the concatenation"), "concat_shape"),
                 (N_("largest difference between the output (times W_O = I) and the concatenation"), "diff")),
        views=(MatrixView(N_("The heads side by side"), trace.concat, cfg.tokens,
                          tuple(map(str, range(trace.concat.shape[1]))), y_title=N_("token"), x_title=N_("column"),
                          n_heads=cfg.n_heads),),
    )


WIDTH_OPTIONS = (
    N_("{d_k}, the width of the queries and keys"),
    N_("{d_v}, the width of the values"),
    N_("{d_model}, the width of the inputs"),
    N_("{n_seq}, the number of tokens"),
)


def _solve_value_width(cfg: Config, trace: MultiHeadTrace) -> Solution:
    t = trace.heads[0]
    widths = (cfg.d_k, cfg.d_v, cfg.d_model, cfg.n_seq)  # in the order of WIDTH_OPTIONS
    return Solution(
        answer=widths.index(t.output.shape[1]),
        facts={"d_k": cfg.d_k, "d_v": cfg.d_v, "d_model": cfg.d_model, "n_seq": cfg.n_seq,
               "q_shape": t.q.shape, "v_shape": t.v.shape, "w_shape": t.weights.shape, "out_shape": t.output.shape},
        numbers=((N_("Q and K"), "q_shape"), ("V", "v_shape"), (N_("the weights"), "w_shape"),
                 (N_("the output"), "out_shape")),
        views=_outputs(cfg, ("V", t.v, cfg.tokens), (N_("Output"), t.output, cfg.tokens)),
    )



# ---- the lessons, in the course's order ------------------------------------------------------------------------

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="best-match", title=N_("By hand: the best match"),
        build=partial(load_preset, TUTORIAL), preset=TUTORIAL, query=FOCUS, shows=("x", "w_q", "w_k"),
        setup=N_("This is the example that the Chinese, Korean and English tutorials work through by hand: {n_seq} "
                 "inputs of {d_model} numbers and weights W_Q, W_K of shape {w_shape} (below). The query of input2 is "
                 "its row of X, {x_row}, times W_Q; each key is a row of X times W_K. A key's score is the dot "
                 "product of the query with it."),
        question=N_("Which key does input2's query match best, that is, which key gets the largest weight?"),
        ask=Choice(("input1", "input2", "input3")), solve=_solve_best_match,
        explanation=N_("input2's query is {q_row}, and its dot products with the {n_seq} keys are {scores}. {best}'s "
                       "key gives the largest score, {s_best}. Softmax keeps the order of the scores, so the largest "
                       "score gets the largest weight: {w_best} of the row {weights}."),
        page=registry.STEPS,
        hint=N_("Step by step follows input2 in its drill-down at the bottom. Change input2's row of X on Inputs & "
                "weights and come back to see which key wins then."),
    ),
    Lesson(
        key="match-weight", title=N_("By hand: how much weight"),
        build=partial(load_preset, TUTORIAL), preset=TUTORIAL, query=FOCUS,
        setup=N_("The same example: input2's query scores the {n_seq} keys {scores}, and the scores are divided by "
                 "√d_k = √{d_k} = {divisor} before softmax. Softmax turns a row of scores s into weights e^s divided "
                 "by the sum of e^s over the row, so only the gaps between the scores matter."),
        question=N_("How much weight does input2 give to its best match, {best}? (a number between 0 and 1)"),
        ask=Number(tolerance=0.05, low=0.0, high=1.0, step=0.01), solve=_solve_match_weight,
        explanation=N_("Divided by √d_k = {divisor}, the scores become {scaled}. The best stands {gap} above the "
                       "runner-up, and softmax turns a gap g into a weight ratio of e^g, here {ratio}: so {best} "
                       "takes {w_best} of the row and the other {n_others} share the rest. Without the division the "
                       "gap would be {gap_raw} and {best}'s weight {w_raw}."),
        page=registry.STEPS,
        hint=N_("The drill-down at the bottom of Step by step writes out this softmax number by number. Change the "
                "scale on Scaling and watch the weight move."),
    ),
    Lesson(
        key="uniform", title=N_("All scores equal"),
        build=_all_scores_equal,
        setup=N_("{n} tokens, each with its own input, and random W_K and W_V. W_Q is all zeros, so every query is a "
                 "row of zeros."),
        question=N_("What weight does each query give to each key?"),
        ask=Number(tolerance=0.01, low=0.0, high=1.0, step=0.01), solve=_solve_uniform,
        explanation=N_("A zero query has a dot product of 0 with every key, so every score is 0, and softmax of {n} "
                       "equal scores gives each key the same weight, {weight} = 1/{n}. Each output row is then the "
                       "plain average of the value rows, {v_mean}, the same for every token (the largest difference "
                       "between two of them is {spread}). This is uniform attention: the layer cannot tell the tokens "
                       "apart."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, set one cell of W_Q to 1 and come back: the rows of weights stop being equal."),
    ),
    Lesson(
        key="lookup", title=N_("A soft dictionary lookup"),
        build=_lookup,
        setup=N_("{n} tokens with one-hot inputs, and W_K is the identity, so the keys are one-hot too: a dictionary "
                 "with {n} entries. Each fruit's value is a single number, {values}. W_Q gives every token the same "
                 "query, equal to cherry's key."),
        question=N_("What does the lookup return, that is, what is each token's output?"),
        ask=Choice(LOOKUP_OPTIONS), solve=_solve_lookup,
        explanation=N_("The query meets cherry's key with a dot product of {dot_hit} and every other key with "
                       "{dot_other}; divided by √d_k = √{d_k} = {divisor}, that is a gap of only {gap}. Softmax gives "
                       "cherry {w_hit} and each other fruit {w_other}, so the output, {out}, is an average pulled "
                       "toward cherry's value: a soft lookup. With larger scores, cherry's weight goes to 1 and the "
                       "lookup becomes exact."),
        page=registry.SCALING,
        hint=N_("Choose a custom divisor on Scaling and move it down to {hint_divisor}: cherry's weight grows to "
                "{w_hint}."),
    ),
    Lesson(
        key="largest-cell", title=N_("No scaling: the largest weight"),
        build=partial(load_preset, "seed004_unscaled"), preset="seed004_unscaled",
        setup=N_("The English illustrated tutorial takes the softmax of the raw scores, without dividing them by "
                 "anything. Its scores QKᵀ, row by row (one row per query, one column per key), are {scores}."),
        question=N_("Which cell of the weights is the largest?"),
        ask=Cell(), solve=_solve_largest_cell,
        explanation=N_("Row {row}'s best score, {s_best}, stands {gap} above its runner-up, {s_next}, the widest gap "
                       "in the matrix. Softmax turns that gap into a weight ratio of e^{gap} = {ratio}, so the cell of "
                       "query {row} and key {col} takes {w} of its row. The tutorial goes on with these weights "
                       "roughly rounded; to one decimal they are {rounded}."),
        page=registry.SCALING,
        hint=N_("Scaling shows these weights beside the ones divided by √d_k: choose ÷ √d_k = √{d_k} and see the "
                "largest weight drop from {w} to {w_scaled}."),
    ),
    Lesson(
        key="temperature", title=N_("Scores times 10"),
        build=partial(load_preset, "seed001_sentence"), preset="seed001_sentence",
        setup=N_("The Korean blog post's sentence, {n_seq} words, each a vector of width {d_k}, with Q = K = V = X and "
                 "the scores divided by √d_k = √{d_k} as usual. Now multiply every score by {factor} before the "
                 "softmax."),
        question=N_("What happens to each row of weights?"),
        ask=Choice(SHARPNESS_OPTIONS), solve=_solve_temperature,
        explanation=N_("Every row gets sharper: its entropy, which is {h_max} for equal weights and 0 when one key "
                       "takes everything, falls from {mean_before} to {mean_after} on average. Multiplying the scores "
                       "by {factor} multiplies the gaps between them by {factor}, and softmax turns gaps into ratios "
                       "e^gap, so the largest score takes nearly everything. This is the English notebook tutorial's "
                       "variance argument: the variance of the scores grows from {var_before} to {var_after}, and at "
                       "that spread softmax is nearly one-hot and its gradient nearly vanishes."),
        page=registry.SCALING,
        hint=N_("Choose a custom divisor on Scaling and move it from √d_k down to a tenth of it; the saturation "
                "curves at the bottom show the entropy of every row as the divisor changes."),
    ),
    Lesson(
        key="sqrt-dk", title=N_("Why divide by √d_k"),
        build=_wide_random,
        setup=N_("{n_seq} tokens whose inputs are {d_model} random numbers each, with mean 0 and variance 1. W_Q "
                 "picks the first half of them as the query and W_K the other half as the key, so d_k = {d_k} and "
                 "every entry of Q and K has a variance of about 1."),
        question=N_("What is the variance of the scores QKᵀ (all {n_scores} of them), before any division?"),
        ask=Number(tolerance=0.25, relative=True, low=0.0, high=100_000.0, step=1.0), solve=_solve_sqrt_dk,
        explanation=N_("Each score is a sum of {d_k} products of two independent numbers of variance 1, and the "
                       "variances of independent terms add up: var(QKᵀ) ≈ d_k = {d_k}. Measured here it is "
                       "{var_scores}, with var(Q) = {var_q} and var(K) = {var_k}. Dividing by √d_k = {sqrt_dk} divides "
                       "the variance by d_k, back to {var_scaled}: that is why the Transformer divides by √d_k, "
                       "whatever the width."),
        page=registry.SCALING,
        hint=N_("On Scaling, choose none (÷ 1) and see nearly every row of weights go one-hot; the chart under "
                "“Why √d_k: measured” repeats this for every width from 1 to 512."),
    ),
    Lesson(
        key="stable-softmax", title=N_("Scores around 1000"),
        build=_huge_scores,
        setup=N_("{n_seq} tokens whose scores all lie between {s_low} and {s_high}; the first row is {row}. The "
                 "English notebook tutorial computes softmax as exp(x) divided by the sum of exp(x). The Korean blog "
                 "post first subtracts the row's largest score, as this app does."),
        question=N_("What does the first formula, exp(x) divided by the sum of exp(x), give for the first row?"),
        ask=Choice(NAIVE_OPTIONS), solve=_solve_stable_softmax,
        explanation=N_("exp of anything above {max_exp} is more than a float64 can hold, so every exp(x) becomes +∞, "
                       "and +∞ divided by +∞ is NaN. Subtracting the largest score first turns the row into {shifted}: "
                       "every exponent is 0 or less, so exp stays between 0 and 1. The weights, {stable}, are the "
                       "exact ones, because the common factor e^max cancels between the top and the bottom of the "
                       "fraction."),
        page=registry.MASKING,
        hint=N_("At the bottom of Masking, “Why softmax subtracts the row maximum” compares both formulas: set the "
                "factor to × 1 and try the other queries."),
    ),
    Lesson(
        key="causal", title=N_("The causal mask"),
        build=partial(load_preset, "seed002_causal"), preset="seed002_causal", query=0,
        setup=N_("The English notebook tutorial's {n_seq} tokens, “My name is Kishor”, with queries and keys of width "
                 "{d_k} and values of width {d_v}. A causal mask lets each token attend only to itself and to the "
                 "tokens before it, as a decoder must: it cannot read words it has not produced yet."),
        question=N_("What is the first token's output?"),
        ask=Choice(CAUSAL_OPTIONS), solve=_solve_causal,
        explanation=N_("The first token, {first}, may see only itself: its other scores become −∞, and softmax gives "
                       "its weights {w_first}. Its output is therefore exactly its own value row, {out} (the largest "
                       "difference is {diff}). Each later token sees one more key; the last, {last}, spreads its "
                       "weight over all {n_seq}: {w_last}."),
        page=registry.MASKING,
        hint=N_("On Masking, choose none and then causal, and compare the first row of weights; or make a custom "
                "mask that hides a token from itself."),
    ),
    Lesson(
        key="padding", title=N_("A padding token"),
        build=_padded,
        setup=N_("{n_words} words and a padding token, [PAD], which only fills the sequence up to a fixed length (the "
                 "sentences of a batch must be equally long). The padding mask is on."),
        question=N_("How much weight does tea give to [PAD]?"),
        ask=Number(tolerance=0.005, low=0.0, high=1.0, step=0.01), solve=_solve_padding,
        explanation=N_("The mask sets every score in [PAD]'s column to −∞ before softmax, and e^−∞ is exactly 0, so "
                       "tea gives [PAD] {w_pad}, and so does every other query: its column is {pad_col}. Without the "
                       "mask, tea would give it {w_open}. The other weights grow to fill the gap: tea's row, {w_tea}, "
                       "still sums to {row_sum}."),
        page=registry.MASKING,
        hint=N_("On Masking, pick another token as padding, or choose none and see how much [PAD] takes."),
    ),
    Lesson(
        key="permutation", title=N_("Swapping two tokens"),
        build=partial(_sentence, SENTENCE, False),
        setup=N_("The sentence “dog bites man”, each word a random vector of width {d_model} that says nothing about "
                 "its position, with the tutorials' W_Q, W_K, W_V and no mask. Swap the first and the last word: “man "
                 "bites dog”."),
        question=N_("What happens to the {n_seq} output rows?"),
        ask=Choice(SWAP_OPTIONS), solve=partial(_solve_swap, False),
        explanation=N_("Each output row depends on its own query and on the set of keys and values, not on their "
                       "order, so dog's output moves with dog and bites' output stays as it was (the largest "
                       "difference between the old rows, swapped, and the new ones is {diff_moved}). Attention is "
                       "permutation-equivariant: shuffle the inputs and the outputs shuffle the same way. On its own "
                       "it cannot tell “dog bites man” from “man bites dog”."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, type “man bites dog” as the sentence (embedding seed 0, no positional "
                "encoding), press Use this sentence, and compare the output on Step by step."),
    ),
    Lesson(
        key="positions", title=N_("Swapping with positions"),
        build=partial(_sentence, SENTENCE, True),
        setup=N_("The same sentence, but now each word's vector has the sinusoidal positional encoding of the "
                 "original Transformer added to it, so each input also says where the word stands. Swap dog and man "
                 "again."),
        question=N_("What happens to the {n_seq} output rows?"),
        ask=Choice(SWAP_OPTIONS), solve=partial(_solve_swap, True),
        explanation=N_("Now a word's input depends on where it stands, so after the swap no output row is one of the "
                       "old ones (each differs from every old row by at least {least_change}). Even bites, which did "
                       "not move, changes by up to {bites_change}, because the keys and values it reads have changed. "
                       "Positional encoding is what lets attention tell “dog bites man” from “man bites dog”."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, type “man bites dog” with Add positional encoding ticked, press Use this "
                "sentence, and compare the output on Step by step."),
    ),
    Lesson(
        key="heads", title=N_("Two heads side by side"),
        build=_two_heads,
        setup=N_("The tutorials' {n_seq} inputs, now with {n_heads} heads: each head has its own slice of W_Q, W_K and "
                 "W_V, with queries and keys {d_k} wide and values {d_v} wide. The heads' outputs are laid side by "
                 "side, and W_O is the identity."),
        question=N_("How many columns does the concatenation of the heads' outputs have?"),
        ask=Number(tolerance=0.5, low=0.0, high=10_000.0, step=1.0), solve=_solve_heads,
        explanation=N_("Each head outputs {n_seq} rows of {d_v} numbers, and the concatenation puts the {n_heads} "
                       "heads side by side: {n_heads} × {d_v} = {width} columns. With W_O = I, the layer's output is "
                       "exactly that concatenation (the largest difference is {diff}); a trained W_O mixes the heads' "
                       "columns. The Korean Python tutorial does the same at full size: {h3} heads of {d3} columns "
                       "give {h3} × {d3} = {w3}, the width of the original Transformer."),
        page=registry.MULTIHEAD,
        hint=N_("Set the number of heads to {more_heads} on Multi-head: each head's queries and keys are then "
                "{d_k_more} wide and its values {d_v_more} wide, and the concatenation keeps its width, {width}."),
    ),
    Lesson(
        key="value-width", title=N_("Values wider than keys"),
        build=_wide_values,
        setup=N_("The tutorials' {n_seq} inputs, {d_model} numbers each. This time the queries and keys are narrower "
                 "and the values wider: W_Q and W_K have {d_k} columns, W_V has {d_v}."),
        question=N_("How wide is each output row?"),
        ask=Choice(WIDTH_OPTIONS), solve=_solve_value_width,
        explanation=N_("The output is the weights times V: a {w_shape} matrix times a {v_shape} one gives {out_shape}. "
                       "Queries and keys only meet in dot products, each a single number, so their width never "
                       "reaches the output; it only has to be the same for both. The English illustrated tutorial "
                       "says so too: the values may have another width, and the output follows it."),
        page=registry.STEPS,
        hint=N_("On Inputs & weights, change the width of W_V and watch the output's shape follow it on Step by "
                "step, while the weights keep theirs."),
    ),
)
