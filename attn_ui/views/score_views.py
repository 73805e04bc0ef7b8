"""The Score functions page's numbers and tables: one head's Q, K, V, the weights each score function gives on them,
a summary per function, and how one query's scores are made.

Pure functions (no st): they take the configuration or arrays and return traces, data frames or strings (their
words in the session's language, :mod:`attn_ui.app.i18n`). The page keeps them in the server's byte budget
(attn_ui.infra.budget, the language among the arguments) and draws them; heatmaps come from
:mod:`attn_ui.widgets.heatmap`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from attn_core import (
    INITIALIZERS,
    MATRIX_NAMES,
    SCORE_STARTS,
    AttentionInputError,
    AttentionTrace,
    Config,
    ScoreFunction,
    analysis,
    head_score,
    scaled_dot_product_attention,
)
from attn_ui.app.i18n import _, error_text
from attn_ui.widgets.numbers import format_numbers
from attn_ui.widgets.text import rows_table, score_name, text_table

#: most terms of v_a · tanh(…) written out one by one in the worked table (wider features: the sum only)
MAX_TERMS = 4


def title(kind: str) -> str:
    """The name of a score function at the start of a sentence: "Additive (Bahdanau)" (in the session's language)."""
    name = score_name(kind)
    return name[0].upper() + name[1:]


@dataclass(frozen=True)
class Scored:
    """The attention one score function gives on one head's Q, K, V.

    Attributes
    ----------
    kind : "dot", "general" or "additive"
    trace : AttentionTrace or None
        None where the function cannot score these queries and keys (``why`` says why: e.g. the dot product of
        queries and keys of different widths, which only the additive score allows).
    weights_from : str
        Where its extra weights came from ("" for the dot product).
    why : str
        In the session's language when it was made (the page's cache of :func:`compare` is per language).
    """

    kind: str
    trace: AttentionTrace | None
    weights_from: str = ""
    why: str = ""


def functions(cfg: Config, defaults: dict[str, np.ndarray]) -> dict[str, tuple[ScoreFunction, str]]:
    """The three score functions to compare, with every head's weights, and where those weights came from: the
    configuration's W_a (or W_1, W_2, v_a) when it has them, else ``defaults`` (how the function would start)."""
    w = {name: cfg.matrix(name) if cfg.matrix(name) is not None else defaults[name]
         for name in ("w_a", "w_1", "w_2", "v_a")}
    general = _("your W_a") if cfg.w_a is not None else _("W_a as it starts: {how}").format(how=start_text("w_a"))
    additive = _("your W_1, W_2, v_a") if cfg.w_1 is not None else _(
        "W_1, W_2, v_a as they start, d_a = {d_a} per head: {how}").format(
        d_a=w["w_1"].shape[1] // cfg.n_heads, how=start_text("w_1", "w_2", "v_a"))
    return {
        "dot": (ScoreFunction("dot"), ""),
        "general": (ScoreFunction("general", w_a=w["w_a"]), general),
        "additive": (ScoreFunction("additive", w_1=w["w_1"], w_2=w["w_2"], v_a=w["v_a"][0]), additive),
    }


def start_text(*names: str) -> str:
    """How a score function's weights start (attn_core.SCORE_STARTS), in words: "W_1 Xavier/Glorot uniform, seed 1;
    v_a Kaiming/He uniform, seed 3"."""
    return _("; ").join(_("{name} {init}, seed {seed}").format(name=MATRIX_NAMES[n], init=_(INITIALIZERS[init]),
                                                                seed=seed)
                        for n in names for init, seed in [SCORE_STARTS[n]])


def compare(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, functions: dict[str, tuple[ScoreFunction, str]], *,
    h: int, n_heads: int, scale: str | float, mask: np.ndarray | None, bias: np.ndarray | None = None,
) -> dict[str, Scored]:  # q [n_q, d_q], k [n_k, d_k], v [n_k, d_v], mask bool [n_q, n_k], bias [n_q, n_k]
    """Attention on one head's q, k, v with each score function (weights for every head, with where they came from);
    head ``h`` uses its column slice of them. The scale, the mask and the head's score bias are the same for all."""
    out = {}
    for kind, (fn, source) in functions.items():
        try:
            trace = scaled_dot_product_attention(q, k, v, scale=scale, mask=mask, score=head_score(fn, h, n_heads),
                                                 bias=bias)
        except AttentionInputError as err:
            out[kind] = Scored(kind, None, source, error_text(err))
            continue
        out[kind] = Scored(kind, trace, source)
    return out


def summary(scored: dict[str, Scored], yours: str, precision: int) -> pa.Table:
    """One row per score function: largest weight, mean entropy of the query rows (nats; rows with every key
    masked left out, "–" when that is every row), largest |weight − dot-product weight|; the configuration's function
    marked."""
    dot = scored.get("dot")
    rows = []
    for kind, s in scored.items():
        name = _("{name} (yours)").format(name=score_name(kind)) if kind == yours else score_name(kind)
        if s.trace is None:
            rows.append([name, "–", "–", "–"])
            continue
        w = s.trace.weights  # [n_q, n_k]
        live = np.ones(w.shape[0], dtype=bool)
        live[list(s.trace.fully_masked_rows)] = False
        entropy = float(analysis.row_entropy(w[live]).mean()) if live.any() else 0.0
        diff = "–" if dot is None or dot.trace is None else format_numbers(
            np.array([np.abs(w - dot.trace.weights).max()]), precision)[0]
        largest, mean_h = format_numbers(np.array([w.max(), entropy]), precision)
        if not live.any():  # every query's keys masked: no row to average
            mean_h = "–"
        rows.append([name, largest, mean_h, diff])
    return rows_table([_("score function"), _("largest weight"), _("mean row entropy (nats)"),
                       _("largest |difference| from the dot product's weights")], rows)


def additive_table(trace: AttentionTrace, i: int, key_labels: list[str], precision: int) -> pa.Table:
    """How query ``i``'s additive scores are made, one row per key j: (for d_a ≤ MAX_TERMS) the terms
    v_a[f] · tanh(…)[f], then the score = features(i)[j] · v_a, the score ÷ s, and the weight."""
    feats = trace.features(i)  # [n_k, d_a]
    d_a = feats.shape[1]
    columns: dict[str, list[str]] = {_("key"): key_labels}
    if d_a <= MAX_TERMS:
        v_a, f_text = _factors(trace.v_a, precision), _factors(feats.ravel(), precision)
        columns[_("v_a · tanh(q W_1 + k W_2), term by term")] = [
            " + ".join(f"{v_a[f]} · {f_text[j * d_a + f]}" for f in range(d_a)) for j in range(feats.shape[0])
        ]
    _scores_columns(columns, trace, i, precision)
    return text_table(columns)


def dot_table(trace: AttentionTrace, i: int, key_labels: list[str], precision: int) -> pa.Table:
    """Query ``i``'s scores as dot products (of q, or of q W_a for "general") with every key: one row per key j:
    the score, the score ÷ s, and the weight."""
    columns: dict[str, list[str]] = {_("key"): key_labels}
    _scores_columns(columns, trace, i, precision)
    return text_table(columns)


def _factors(values: np.ndarray, precision: int) -> list[str]:
    """Numbers written as factors of a product: a negative one in parentheses ("0.5 · (−0.2)")."""
    return [f"({t})" if t.startswith("−") else t for t in format_numbers(values, precision)]


def _scores_columns(columns: dict, trace: AttentionTrace, i: int, precision: int) -> None:
    """Query ``i``'s scores, the scores ÷ s (−∞ where masked), and the weights, as attn_core computed them."""
    columns[_("score")] = format_numbers(trace.scores[i], precision)
    divisor = format_numbers(np.array([trace.divisor]), precision, "short")[0]
    columns[_("score ÷ {s}").format(s=divisor)] = format_numbers(trace.masked[i], precision)
    columns[_("weight")] = format_numbers(trace.weights[i], precision)


def shape_text(name: str, m: np.ndarray, formula: str) -> str:
    """'W_a · 3 × 3 = [d_q, n_heads·d_k]'."""
    return f"**{name}** · {m.shape[0]} × {m.shape[1]} = {formula}"
