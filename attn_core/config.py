"""A complete configuration of the explorer and the one path that validates it.

Every way a configuration enters the app (grid edits, dimension changes, presets, a sentence,
the mask editor, a permalink, a JSON file) ends in :func:`validate_config`, so the rules and the
caps (:data:`attn_core.limits.LIMITS`) live in one place.

Beyond X and the four weights, a configuration may hold a score function's weights (W_a for "general"; W_1, W_2
and v_a for "additive") and a second sequence Y whose rows make the queries (cross-attention). They are present
exactly when used: ``cfg.matrix_names()`` lists the matrices a configuration has.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from .attention import SCORE_FUNCTIONS, SCORE_WORDS, Scale, ScoreFunction, check_softcap
from .errors import N_, AttentionInputError, Words
from .initializers import initialize, resize
from .limits import LIMITS
from .masks import _whole, causal_mask, padding_mask
from .modern import RoPE, modern_attention
from .multihead import MultiHeadTrace, check_grouped_heads, check_heads, check_score_heads, multi_head_cross_attention
from .validation import as_matrix, check_dim, divisor_for

MASK_KINDS = ("none", "causal", "padding", "custom")
MATRICES = ("x", "w_q", "w_k", "w_v", "w_o")  # the matrices every configuration has
SCORE_MATRICES = {"dot": (), "general": ("w_a",), "additive": ("w_1", "w_2", "v_a")}  # what each score function adds
ALL_MATRICES = ("x", "y", "w_q", "w_k", "w_v", "w_o", "w_a", "w_1", "w_2", "v_a")  # in the order they are shown
MATRIX_NAMES = {"x": "X", "y": "Y", "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O", "w_a": "W_a",
                "w_1": "W_1", "w_2": "W_2", "v_a": "v_a"}
ORIGIN_ITEMS, ORIGIN_CHARS = 8, 4_000  # Config.origin: most entries, longest text value
_ORIGIN_KEY = re.compile(r"[a-z_]{1,32}")


@dataclass(frozen=True, eq=False)
class Config:
    """Tokens, inputs, weights, heads, scale and mask: everything the pages compute from.

    Attributes
    ----------
    tokens : tuple of str, length n_seq
    x : ndarray of shape (n_seq, d_model)
    w_q, w_k : ndarray of shape (d_model, n_heads·d_k)
    w_v : ndarray of shape (d_model, n_heads·d_v)
    w_o : ndarray of shape (n_heads·d_v, d_out)
    n_heads : int
    scale : "sqrt_dk", "none" or float
    mask_kind : "none", "causal", "padding" or "custom"
    is_pad : tuple of bool, length n_seq
        Which tokens are padding (used when mask_kind is "padding").
    custom_mask : ndarray of bool, shape (n_seq, n_seq)
        True = may attend (used when mask_kind is "custom").
    origin : dict of str to str or int, optional
        Where the numbers came from, when not typed or from a preset: e.g. attn_models' layer of a pretrained
        model, ``{"model": ..., "layer": 2, "sentence": ..., "head": 5, ...}``. Kept through edits, saved in links
        and files; at most ORIGIN_ITEMS entries, names of lower-case letters and _, values text (at most
        ORIGIN_CHARS characters) or whole numbers.
    score : "dot", "general" or "additive"
        How a query and a key make a score (attn_core.ScoreFunction); the scale applies to every one.
    w_a : ndarray of shape (d_q, n_heads·d_k), present for "general"
    w_1 : ndarray of shape (d_q, n_heads·d_a), present for "additive" (likewise w_2, v_a)
    w_2 : ndarray of shape (d_k, n_heads·d_a)
    v_a : ndarray of shape (1, n_heads·d_a)
    y_tokens : tuple of str, length n_y, present for cross-attention
    y : ndarray of shape (n_y, d_model), present for cross-attention
        The sequence whose rows make the queries (Q = Y W_Q); X makes the keys and values. The masks are then
        [n_y, n_seq]: padding marks X's tokens; causal needs self-attention.
    score_bias : ndarray of shape (n_heads, n_q, n_seq), optional
        A finite number per head, query and key added to the scaled scores before the mask (attn_core.add_bias: the
        mask's finite sibling). A T5 layer's learned relative positions arrive as one; no grid edits it. Its cells
        count toward the cap on cells.

    The modern options (attn_core.modern_attention; every default leaves a configuration as it was before them):

    n_kv_heads : int or None
        Grouped-query attention: W_K is [d_model, n_kv_heads·d_k] and W_V [d_model, n_kv_heads·d_v], W_O
        [n_heads·d_v, d_out]; None is n_heads (one key/value head per query head; n_kv_heads = n_heads is stored as
        None). Must divide n_heads; the dot score only.
    rope : RoPE or None
        Rotary position embeddings of each head's queries and keys (d_q, d_k even); self-attention only.
    qk_norm : bool
        RMS-normalise each head's queries and keys over d_k (eps 1e-6, no gain) before RoPE (Qwen 3); self-attention
        only.
    alibi : bool
        ALiBi's bias −m_h · (i − j) added to each head's scores (with the score bias, if any); self-attention only.
    window : int or None
        A sliding window of ``window`` keys (causal when mask_kind is "causal": i − window < j ≤ i; else
        |i − j| < window), and-ed with the mask; self-attention only.
    softcap : float or None
        Soft-cap the scaled scores: softcap · tanh(s / softcap), before the bias and the mask (Gemma 2).
    """

    tokens: tuple[str, ...]
    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    n_heads: int = 1
    scale: Scale = "sqrt_dk"
    mask_kind: str = "none"
    is_pad: tuple[bool, ...] = ()
    custom_mask: np.ndarray | None = None
    origin: dict[str, str | int] | None = None
    score: str = "dot"
    w_a: np.ndarray | None = None
    w_1: np.ndarray | None = None
    w_2: np.ndarray | None = None
    v_a: np.ndarray | None = None
    y_tokens: tuple[str, ...] | None = None
    y: np.ndarray | None = None
    score_bias: np.ndarray | None = None
    n_kv_heads: int | None = None
    rope: RoPE | None = None
    qk_norm: bool = False
    alibi: bool = False
    window: int | None = None
    softcap: float | None = None

    @property
    def n_seq(self) -> int:
        """Tokens of X: the keys and values (and the queries, unless cross)."""
        return self.x.shape[0]

    @property
    def cross(self) -> bool:
        """Whether the queries come from Y (cross-attention) instead of X."""
        return self.y is not None

    @property
    def n_q(self) -> int:
        """Queries: rows of Y when cross, else of X."""
        return self.n_seq if self.y is None else self.y.shape[0]

    @property
    def query_tokens(self) -> tuple[str, ...]:
        """The labels of the queries: Y's tokens when cross, else X's."""
        return self.tokens if self.y_tokens is None else self.y_tokens

    @property
    def d_model(self) -> int:
        return self.x.shape[1]

    @property
    def kv_heads(self) -> int:
        """Key/value heads: n_kv_heads, or n_heads without grouping."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def modern(self) -> bool:
        """Whether any modern option is set (then :func:`run` goes through attn_core.modern_attention)."""
        return (self.n_kv_heads is not None or self.rope is not None or self.qk_norm or self.alibi
                or self.window is not None or self.softcap is not None)

    @property
    def d_k(self) -> int:
        """Per-head width of the keys (and of the queries, but with an additive score)."""
        return self.w_k.shape[1] // self.kv_heads

    @property
    def d_q(self) -> int:
        """Per-head width of the queries."""
        return self.w_q.shape[1] // self.n_heads

    @property
    def d_a(self) -> int:
        """Per-head width of the additive score's features (0 for the other score functions)."""
        return 0 if self.w_1 is None else self.w_1.shape[1] // self.n_heads

    @property
    def d_v(self) -> int:
        """Per-head width of values."""
        return self.w_v.shape[1] // self.kv_heads

    @property
    def d_out(self) -> int:
        return self.w_o.shape[1]

    def matrix(self, name: str) -> np.ndarray:
        """One of ALL_MATRICES ("x", "w_q", ...; None for one the configuration does not have)."""
        return getattr(self, name)

    def matrix_names(self) -> tuple[str, ...]:
        """The matrices this configuration has, in ALL_MATRICES order."""
        return tuple(n for n in ALL_MATRICES if n in MATRICES or getattr(self, n) is not None)

    def score_function(self) -> ScoreFunction:
        """The score function with its weights (v_a as a vector), for attn_core's attention functions."""
        v_a = None if self.v_a is None else self.v_a[0]
        return ScoreFunction(self.score, w_a=self.w_a, w_1=self.w_1, w_2=self.w_2, v_a=v_a)


def make_config(tokens, x, w_q, w_k, w_v, w_o=None, **options) -> Config:
    """Build and validate a configuration; ``w_o`` defaults to the identity; masks default to "nothing masked".

    Examples
    --------
    >>> c = make_config(["a", "b"], np.eye(2), np.eye(2), np.eye(2), np.eye(2))
    >>> c.n_seq, c.d_k, c.w_o.shape
    (2, 2, (2, 2))
    """
    if w_o is None:
        w_o = np.eye(as_matrix("W_V", w_v).shape[1])  # [n_heads·d_v, n_heads·d_v]
    if isinstance(tokens, (list, tuple)):
        tokens = tuple(tokens)
    n = len(tokens) if isinstance(tokens, tuple) else 0  # validate_config names a token list that is not one
    n_q = len(options["y_tokens"]) if isinstance(options.get("y_tokens"), (list, tuple)) else n
    options.setdefault("is_pad", (False,) * n)
    options.setdefault("custom_mask", np.ones((n_q, n), dtype=bool))
    return validate_config(Config(tokens, x, w_q, w_k, w_v, w_o, **options))


def validate_config(cfg: Config) -> Config:
    """Return ``cfg`` with float64 matrices and a normalised mask, or raise AttentionInputError.

    Checks, before any arithmetic: every matrix finite and 2-D, the shapes fit together, the caps,
    the head count, the scale, the tokens and the mask.
    """
    score = cfg.score if isinstance(cfg.score, str) and cfg.score in SCORE_FUNCTIONS else None
    if score is None:
        raise AttentionInputError(N_("score function: {kind!r} is not one of {kinds}."), kind=cfg.score,
                                  kinds=", ".join(SCORE_FUNCTIONS), matrix="score")
    if (cfg.y is None) != (cfg.y_tokens is None):
        given, missing = ("Y", "y_tokens") if cfg.y_tokens is None else ("y_tokens", "Y")
        raise AttentionInputError(N_("{given}: given without {missing}; cross-attention needs both (the query rows "
                                     "and their labels)."), given=given, missing=missing, matrix=given)
    unused = [MATRIX_NAMES[n] for names in SCORE_MATRICES.values() for n in names
              if n not in SCORE_MATRICES[score] and cfg.matrix(n) is not None]
    if unused:
        raise AttentionInputError(N_("{name}: given, but the {score} score function does not use it."),
                                  name=unused[0], score=SCORE_WORDS[score], matrix=unused[0])
    wanted = (*MATRICES, *(("y",) if cfg.y is not None else ()), *SCORE_MATRICES[score])
    mats = {name: _required(cfg, name, score) for name in wanted}  # the others are dropped
    x, w_q, w_k, w_v, w_o = (mats[n] for n in MATRICES)
    n_seq, d_model = x.shape
    _cap(N_("n_seq (tokens): {value} is over the cap of {cap}."), n_seq, LIMITS.n_seq)
    _cap(N_("d_model (columns of X): {value} is over the cap of {cap}."), d_model, LIMITS.d_model)
    if "y" in mats:
        _cap(N_("n_y (rows of Y): {value} is over the cap of {cap}."), mats["y"].shape[0], LIMITS.n_seq)
        check_dim("Y", mats["y"].shape[1], "X", d_model,  # d_model: Y [n_y, d_model], X [n_seq, d_model]
                  N_("{name}: has {size} columns but {other} has {other_size} (d_model); both go through W_Q, W_K, "
                     "W_V."))
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        check_dim(name, w.shape[0], "X", d_model,  # d_model: W [d_model, width], X [n_seq, d_model]
                  N_("{name}: has {size} rows but {other} has {other_size} columns (d_model); they must match."))
        _cap(N_("columns of {name}: {value} is over the cap of {cap}."), w.shape[1], LIMITS.width, name=name)
    grouped = cfg.n_kv_heads is not None and not (isinstance(cfg.n_heads, (int, np.integer))
                                                  and cfg.n_kv_heads == cfg.n_heads)
    if grouped:  # W_K and W_V of n_kv_heads heads, W_O of n_heads: checked by width and count below
        n_heads, n_kv = check_grouped_heads(cfg.n_heads, cfg.n_kv_heads, w_q.shape[1], w_k.shape[1], w_v.shape[1],
                                            ScoreFunction(score))
        check_dim("W_O", w_o.shape[0], "W_V", w_v.shape[1] // n_kv * n_heads,  # W_O [n_heads·d_v, d_out]
                  N_("{name}: has {size} rows but the heads concatenate to {other_size} columns (n_heads · d_v, "
                     "{other} being n_kv_heads · d_v wide); they must match."))
    else:
        if score != "additive":
            check_dim("W_K", w_k.shape[1], "W_Q", w_q.shape[1],  # n_heads·d_k: W_K, W_Q [d_model, n_heads·d_k]
                      N_("{name}: has {size} columns but {other} has {other_size}; queries and keys need the same "
                         "width d_k."))
        check_dim("W_O", w_o.shape[0], "W_V", w_v.shape[1],  # W_O [n_heads·d_v, d_out], W_V [d_model, n_heads·d_v]
                  N_("{name}: has {size} rows but {other} has {other_size} columns (n_heads · d_v); they must match."))
    _cap(N_("columns of {name}: {value} is over the cap of {cap}."), w_o.shape[1], LIMITS.width, name="W_O")
    for name in SCORE_MATRICES[score]:
        _cap(N_("columns of {name}: {value} is over the cap of {cap}."), mats[name].shape[1], LIMITS.width,
             name=MATRIX_NAMES[name])
    if not grouped:
        n_heads = check_heads(cfg.n_heads, w_q.shape[1], w_v.shape[1], w_k.shape[1])
    _cap(N_("n_heads: {value} is over the cap of {cap}."), n_heads, LIMITS.n_heads)
    n_q = n_seq if "y" not in mats else mats["y"].shape[0]
    bias = None if cfg.score_bias is None else _score_bias(cfg.score_bias, n_heads, n_q, n_seq)
    cells = sum(m.size for m in mats.values()) + (0 if bias is None else bias.size)
    if cells > LIMITS.total_cells:
        raise AttentionInputError(
            N_("configuration: {cells:,} cells in X and the weights together; the cap is {cap:,}.") if bias is None
            else N_("configuration: {cells:,} cells in X, the weights and the score bias together; the cap is "
                    "{cap:,}."), cells=cells, cap=LIMITS.total_cells,
        )
    extra = {name: mats.get(name) for name in ("w_a", "w_1", "w_2", "v_a")}
    v_a = extra["v_a"]
    if v_a is not None and v_a.shape[0] != 1:
        raise AttentionInputError(N_("v_a: must be one row of numbers, got {rows} rows."), rows=v_a.shape[0],
                                  matrix="v_a")
    check_score_heads(ScoreFunction(score, extra["w_a"], extra["w_1"], extra["w_2"], None if v_a is None else v_a[0]),
                      n_heads, w_q.shape[1] // n_heads, w_k.shape[1] // n_heads)
    divisor = divisor_for(cfg.scale, 1)  # validates "sqrt_dk" / "none" / a positive number
    scale = cfg.scale if isinstance(cfg.scale, str) else divisor
    tokens = _check_tokens(cfg.tokens, n_seq)
    y_tokens = _check_tokens(cfg.y_tokens, mats["y"].shape[0], "y_tokens", "Y") if "y" in mats else None
    if not isinstance(cfg.mask_kind, str) or cfg.mask_kind not in MASK_KINDS:
        raise AttentionInputError(N_("mask: kind {kind!r} is not one of {kinds}."), kind=cfg.mask_kind,
                                  kinds=", ".join(MASK_KINDS), matrix="mask")
    if cfg.mask_kind == "causal" and y_tokens is not None:
        raise AttentionInputError(N_("mask: causal needs the queries and the keys from one sequence (self-attention); "
                                     "with Y, choose padding or a custom mask."), matrix="mask")
    is_pad = tuple(cfg.is_pad) if isinstance(cfg.is_pad, (list, tuple, np.ndarray)) else ()
    if len(is_pad) != n_seq or not all(isinstance(p, (bool, np.bool_)) for p in is_pad):
        raise AttentionInputError(N_("mask: padding needs one True/False per token ({n_seq})."), n_seq=n_seq,
                                  matrix="mask")
    try:
        custom = np.ones((n_q, n_seq), dtype=bool) if cfg.custom_mask is None else np.asarray(cfg.custom_mask)
    except ValueError:  # ragged rows
        custom = np.array([], dtype=object)
    if custom.dtype != np.bool_ or custom.shape != (n_q, n_seq):
        raise AttentionInputError(
            N_("mask: the custom mask must be True/False of shape ({n_q}, {n_seq}), got {dtype} of shape {shape}."),
            n_q=n_q, n_seq=n_seq, dtype=custom.dtype, shape=custom.shape, matrix="mask",
        )
    modern = _check_modern(cfg, n_heads, w_q.shape[1] // n_heads, w_k.shape[1] // (n_kv if grouped else n_heads),
                           cross=y_tokens is not None)
    return Config(tokens, x, w_q, w_k, w_v, w_o, n_heads, scale, cfg.mask_kind,
                  tuple(bool(p) for p in is_pad), custom.copy(), _check_origin(cfg.origin), score,
                  extra["w_a"], extra["w_1"], extra["w_2"], v_a, y_tokens, mats.get("y"), bias,
                  n_kv if grouped else None, **modern)


def _check_modern(cfg: Config, n_heads: int, d_q: int, d_k: int, *, cross: bool) -> dict:
    """The modern options of ``cfg`` (but n_kv_heads, checked with the widths), checked: a RoPE (even per-head widths),
    flags that are True/False, a window of at least 1 key, a positive soft cap; those that need positions refused
    with cross-attention."""
    if cfg.rope is not None and not isinstance(cfg.rope, RoPE):
        raise AttentionInputError(N_("rope: must be RoPE(base, layout) or none, got {rope!r}."), rope=cfg.rope)
    flags = {}
    for name in ("qk_norm", "alibi"):
        value = getattr(cfg, name)
        if not isinstance(value, (bool, np.bool_)):
            raise AttentionInputError(N_("{name}: must be True or False, got {value!r}."), name=name, value=value)
        flags[name] = bool(value)
    window = None if cfg.window is None else _whole(cfg.window, "window", 1)
    if cross:
        asked = [name for name, on in (("rope", cfg.rope is not None), ("qk_norm", flags["qk_norm"]),
                                       ("alibi", flags["alibi"]), ("window", window is not None)) if on]
        if asked:
            raise AttentionInputError(N_("{name}: works on self-attention (positions of one sequence); with Y, turn "
                                         "it off."), name=asked[0], matrix="Y")
    if cfg.rope is not None:
        for name, width in (("W_Q", d_q), ("W_K", d_k)):
            if width % 2:
                raise AttentionInputError(
                    N_("RoPE turns pairs of features, so each head of {name} needs an even width; it is {width}: "
                       "widen each head (d_k) by one, to {wider}."),
                    name=name, width=width, wider=width + 1, matrix=name)
    return {"rope": cfg.rope, **flags, "window": window, "softcap": check_softcap(cfg.softcap)}


def _score_bias(bias: object, n_heads: int, n_q: int, n_seq: int) -> np.ndarray:  # -> [n_heads, n_q, n_seq]
    """The score bias as float64 [n_heads, n_q, n_seq], or AttentionInputError naming the head and cell."""
    arr = np.asarray(bias) if isinstance(bias, np.ndarray) else np.array(bias, dtype=object)
    if arr.ndim != 3 or arr.shape != (n_heads, n_q, n_seq):
        raise AttentionInputError(
            N_("score bias: shape {shape} does not fit; it needs one {n_q} × {n_seq} matrix per head ({n_heads})."),
            shape=" × ".join(str(n) for n in arr.shape), n_q=n_q, n_seq=n_seq, n_heads=n_heads, matrix="score bias")
    return np.stack([as_matrix(f"score bias (head {h})", arr[h]) for h in range(n_heads)])


def _required(cfg: Config, name: str, score: str) -> np.ndarray:
    """The float64 matrix ``name`` of the configuration, or AttentionInputError (naming what needs it when absent)."""
    value = cfg.matrix(name)
    if value is None and name in SCORE_MATRICES[score]:
        needs = ", ".join(MATRIX_NAMES[n] for n in SCORE_MATRICES[score])
        raise AttentionInputError(N_("{name}: the {score} score function needs {needs}."), name=MATRIX_NAMES[name],
                                  score=SCORE_WORDS[score], needs=needs, matrix=MATRIX_NAMES[name])
    return as_matrix(MATRIX_NAMES[name], value)


def _check_origin(origin: object) -> dict[str, str | int] | None:
    """A copy of ``origin`` (see :class:`Config`), or AttentionInputError.

    >>> _check_origin({"model": "m", "layer": 2})
    {'model': 'm', 'layer': 2}
    >>> _check_origin({"layer": True})
    Traceback (most recent call last):
    ...
    attn_core.errors.AttentionInputError: origin: 'layer' must be text or a whole number.
    """
    if origin is None:
        return None
    if not isinstance(origin, dict) or len(origin) > ORIGIN_ITEMS:
        raise AttentionInputError(N_("origin: must be a JSON object of at most {items} entries."), items=ORIGIN_ITEMS)
    for key, value in origin.items():
        if not isinstance(key, str) or not _ORIGIN_KEY.fullmatch(key):
            raise AttentionInputError(N_("origin: entry names are 1 to 32 lower-case letters or _."))
        if isinstance(value, str):
            if len(value) > ORIGIN_CHARS:
                raise AttentionInputError(N_("origin: {key!r} is over {chars:,} characters."), key=key,
                                          chars=ORIGIN_CHARS)
        elif isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**31:
            raise AttentionInputError(N_("origin: {key!r} must be text or a whole number."), key=key)
    return dict(origin)


def _cap(template: str, value: int, cap: int, **params: object) -> None:
    """Raise ``template`` (marked with N_: "what: {value} is over the cap of {cap}.") if ``value`` is over ``cap``."""
    if value > cap:
        raise AttentionInputError(template, value=value, cap=cap, **params)


def whole_number(what: str, value: int | float | None, low: int, high: int, *, under: str | None = None) -> int:
    """``value``, what the box ``what`` names holds as the learner typed it, as a whole number from ``low`` to
    ``high`` (a whole float is its int: 1e3 typed is 1000); refused when it is None (a number box left empty, or
    holding nothing it reads as a number, letters or 1e400: the message says it holds no number, not that it is
    empty), not a whole number (2.5 is never rounded; nan and inf neither), under ``low`` (``under``, marked with
    N_, when the caller says why: "{what}: {value} is under 1; <why>.") or over ``high``.

    ``what`` is a :class:`Words` (translated by the app) or a label the app has already translated (a plain str
    passes through as it is). Pure Python: no numpy.

    >>> whole_number("Seed", 1e3, 0, 2**31 - 1), whole_number("Seed", 0, 0, 10), whole_number("Row", 4.0, 0, 4)
    (1000, 0, 4)
    >>> whole_number("Row", 5, 0, 4)
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: Row: 5 is over the cap of 4.
    >>> whole_number("Tokens to write", 0, 1, 20)
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: Tokens to write: 0 is under 1.
    >>> whole_number("Seed", None, 0, 10)
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: Seed holds no number that can be read: type a whole number.
    """
    if value is None:
        raise AttentionInputError(N_("{what} holds no number that can be read: type a whole number."), what=what)
    if isinstance(value, float) and not value.is_integer():  # nan and inf too
        raise AttentionInputError(N_("{what}: {value} is not a whole number."), what=what, value=value)
    value = int(value)
    _cap(N_("{what}: {value} is over the cap of {cap}."), value, high, what=what)
    if value < low:
        if under is not None:
            raise AttentionInputError(under, what=what, value=value)
        raise AttentionInputError(N_("{what}: {value} is under {low}."), what=what, value=value, low=low)
    return value


def number_in_range(what: str, value: int | float | None, low: float | None, high: float | None, *,
                    above: bool = False) -> float:
    """``value``, what the box ``what`` names holds as the learner typed it, as a float from ``low`` to ``high``
    (None: no bound that side); refused when it is empty (None), not a finite number (nan, inf), under ``low`` or over
    ``high``. With ``above``, ``low`` itself is refused too (a soft cap must be above 0), and the message says to type
    a number above it. The message writes a whole float as a whole number (150.0 as 150). Pure Python: no numpy.

    >>> number_in_range("std", 0.5, 0.0, 100.0), number_in_range("std", 0, 0.0, None)
    (0.5, 0.0)
    >>> number_in_range("std", 150.0, 0.0, 100.0)
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: std: 150 is over 100.
    >>> number_in_range("Cap", 0.0, 0.0, None, above=True)
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: Cap: 0 is not above 0: type a number above 0.
    """
    if value is None:
        if above and low is not None:
            raise AttentionInputError(N_("{what} holds no number that can be read: type a number above {low}."),
                                      what=what, low=_shown(low))
        raise AttentionInputError(N_("{what} holds no number that can be read: type a number."), what=what)
    value = float(value)
    if not math.isfinite(value):
        raise AttentionInputError(N_("{what}: {value} is not a finite number."), what=what, value=value)
    if above and low is not None and value <= low:
        raise AttentionInputError(N_("{what}: {value} is not above {low}: type a number above {low}."), what=what,
                                  value=_shown(value), low=_shown(low))
    if low is not None and value < low:
        raise AttentionInputError(N_("{what}: {value} is under {low}."), what=what, value=_shown(value),
                                  low=_shown(low))
    if high is not None and value > high:
        raise AttentionInputError(N_("{what}: {value} is over {high}."), what=what, value=_shown(value),
                                  high=_shown(high))
    return value


def _shown(value: float) -> int | float:
    """A number as a message writes it: a whole float as its int (100.0 as 100), any other as it is (0.5)."""
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def whole_size(what: Words, value: int | float | None, cap: int, under: str) -> int:
    """``value``, the size ``what`` names as the learner typed it ("n_seq (tokens)"), as an int (1e3 typed: 1000.0
    is 1000); refused when it is empty (None: a number box left empty, or holding no number), not a whole number
    (2.5 is never rounded), over ``cap`` or under 1 (``under``, marked with N_: "{what}: {value} is under 1; <why>.").

    >>> whole_size("n_seq", 1e3, 1000, "{what}: {value} is under 1."), whole_size("n_seq", 3, 256, "")
    (1000, 3)
    >>> whole_size("n_seq", 2.5, 256, "")
    Traceback (most recent call last):
    attn_core.errors.AttentionInputError: n_seq: 2.5 is not a whole number.
    """
    return whole_number(what, value, 1, cap, under=under)


def _width_names(cfg: Config) -> tuple[Words, Words]:
    """What W_Q's and W_K's widths are called beside their sizes on Inputs & weights: d_k (both), d_q and d_k with
    an additive score (each its own), d_k (W_Q's, W_K following it) with grouped-query heads."""
    if cfg.score == "additive":
        return N_("d_q (columns of W_Q)"), N_("d_k (columns of W_K)")
    if cfg.n_kv_heads:
        return N_("d_k (columns of W_Q)"), N_("d_k (columns of W_K)")
    return N_("d_k (columns of W_Q and W_K)"), N_("d_k (columns of W_K)")


def _check_tokens(tokens: object, n_seq: int, field: str = "tokens", of: str = "X") -> tuple[str, ...]:
    if not isinstance(tokens, (list, tuple)) or len(tokens) != n_seq:
        got = len(tokens) if isinstance(tokens, (list, tuple)) else type(tokens).__name__
        raise AttentionInputError(N_("{field}: need one label per row of {of} ({n_seq}), got {got}."), field=field,
                                  of=of, n_seq=n_seq, got=got, matrix=field)
    for i, t in enumerate(tokens):
        if not isinstance(t, str):
            raise AttentionInputError(N_("{field}: label {i} is {t!r}, not text."), field=field, i=i, t=t, matrix=field)
        if not t.strip():
            raise AttentionInputError(N_("{field}: label {i} is empty; every token needs a label."), field=field, i=i,
                                      matrix=field)
        if len(t) > LIMITS.token_chars:
            raise AttentionInputError(
                N_("{field}: label {i} is {n} characters long; the cap is {cap}."), field=field, i=i, n=len(t),
                cap=LIMITS.token_chars, matrix=field,
            )
    return tuple(tokens)


def config_mask(cfg: Config) -> np.ndarray | None:  # -> bool [n_q, n_seq] or None
    """The boolean mask the configuration asks for (True = may attend), or None."""
    if cfg.mask_kind == "causal":
        return causal_mask(cfg.n_seq)
    if cfg.mask_kind == "padding":
        return padding_mask(np.array(cfg.is_pad, dtype=bool), cfg.n_q)
    if cfg.mask_kind == "custom":
        return cfg.custom_mask
    return None


def run(cfg: Config) -> MultiHeadTrace:
    """Multi-head attention of the configuration (one head: plain self-attention, then ``@ w_o``); queries from Y
    when cross, with the configuration's score function.

    With a modern option (``cfg.modern``), self-attention goes through attn_core.modern_attention (a ModernTrace, a
    MultiHeadTrace with the steps before the scores; causal and the window from the mask kind, a padding or custom
    mask and-ed with the window); cross-attention (grouped-query heads and the soft cap only) through
    multi_head_cross_attention with them.
    """
    if cfg.modern and cfg.y is None:
        causal = cfg.mask_kind == "causal"
        return modern_attention(
            cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=cfg.n_heads, n_kv_heads=cfg.n_kv_heads, rope=cfg.rope,
            qk_norm=cfg.qk_norm, alibi=cfg.alibi, window=cfg.window, causal=causal, softcap=cfg.softcap,
            scale=cfg.scale, mask=None if causal else config_mask(cfg), bias=cfg.score_bias,
            score=cfg.score_function())
    return multi_head_cross_attention(
        cfg.x if cfg.y is None else cfg.y, cfg.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads, scale=cfg.scale,
        mask=config_mask(cfg), score=cfg.score_function(), bias=cfg.score_bias, n_kv_heads=cfg.n_kv_heads,
        softcap=cfg.softcap,
    )


#: log10 of the bound under which no step of attention overflows float64, nor its square (Scaling's variances)
SAFE_LOG10 = 150


def check_computable(cfg: Config) -> Config:
    """``cfg`` (validated) if attention can be computed on its numbers in float64; else AttentionInputError naming the
    step that overflowed (:func:`run`'s own: "V: cell (0, 1) is +inf; it overflowed float64 …").

    A bound first, cheap (one pass over the numbers): no step makes a value larger than (D · M)^6, D the largest
    dimension and M the largest magnitude among the numbers (1 at least; the divisor's inverse and the score bias
    included): the scores of the general score function, q W_a kᵀ / s, are the largest, D⁴M⁶. Under 10^150 nothing
    overflows, nor its square. Past the bound, :func:`run` decides (a 1e308 typed in X makes V infinite).

    >>> from attn_core import load_preset
    >>> check_computable(load_preset("seed000")).n_seq
    3
    """
    cfg = validate_config(cfg)
    arrays = [cfg.matrix(name) for name in cfg.matrix_names()]
    if cfg.score_bias is not None:
        arrays.append(cfg.score_bias)
    largest = max((float(np.abs(a).max()) for a in arrays if a.size), default=0.0)
    magnitude = max(1.0, largest, 1.0 / divisor_for(cfg.scale, cfg.d_k))
    dimension = max(max(a.shape) for a in arrays)
    if 6 * math.log10(dimension * magnitude) < SAFE_LOG10:
        return cfg
    run(cfg)  # raises where a step overflows
    return cfg


def with_dimensions(
    cfg: Config, *, n_seq: int | float, d_model: int | float, d_qk: int | float, d_v: int | float,
    init: str = "xavier_uniform", seed: int = 0, d_k: int | float | None = None,
) -> Config:
    """Resize every matrix, keeping each value that still fits; new cells come from ``init``.

    ``d_qk`` and ``d_v`` are the full widths of W_Q/W_K and W_V (n_heads · per-head width); ``d_k``, W_K's
    when it differs from W_Q's (an additive score allows it). With grouped-query heads (n_kv_heads), W_K and W_V are
    the key/value heads' widths: ``d_v`` is W_V's (n_kv_heads · per-head d_v), W_K defaults to n_kv_heads heads as
    wide as W_Q's, and W_O has n_heads · per-head d_v rows; widths that no longer split into the heads make one head
    (and no grouping).
    A square W_O stays square (new cells from the identity); a rectangular one keeps d_out.
    New tokens are labelled t1, t2, ...; new tokens are not padding and may attend everywhere.
    Y keeps its rows and follows d_model; W_a, W_1 and W_2 follow the widths of the queries and keys.
    A score bias follows the tokens (new cells 0) while the head count stays; it is dropped when the head count
    changes (it was one matrix per head).
    A size that is not a whole number (a whole float is its int), over its cap (n_seq, d_model, a width:
    :data:`LIMITS`) or under 1 is refused before any matrix is made, with the size named as Inputs & weights labels
    it ("d_k (columns of W_Q and W_K)"; d_q and d_k with an additive score); so is a width that leaves a head an odd
    number of features while RoPE is on.
    """
    n_heads, n_kv = cfg.n_heads, cfg.kv_heads
    # each size whole and within its cap before any matrix is made (validate_config checks the whole after): a width
    # of 100,000 would otherwise ask for a 74 GiB W_V first
    n_seq = whole_size(N_("n_seq (tokens)"), n_seq, LIMITS.n_seq,
                       N_("{what}: {value} is under 1; a sequence has at least one token."))
    d_model = whole_size(N_("d_model (columns of X)"), d_model, LIMITS.d_model,
                         N_("{what}: {value} is under 1; X has at least one column."))
    q_name, k_name = _width_names(cfg)
    under = N_("{what}: {value} is under 1; a matrix has at least one column.")
    d_qk = whole_size(q_name, d_qk, LIMITS.width, under)
    if d_k is None:  # within the cap and at least 1 when d_qk is
        d_k = d_qk if d_qk % n_heads else d_qk // n_heads * n_kv  # n_kv_heads heads as wide as W_Q's
    else:
        d_k = whole_size(k_name, d_k, LIMITS.width, under)
    d_v = whole_size(N_("d_v (columns of W_V)"), d_v, LIMITS.width, under)
    if any(w % h for w, h in ((d_qk, n_heads), (d_k, n_kv), (d_v, n_kv))) or (
            n_kv != n_heads and d_k != d_qk // n_heads * n_kv):
        n_heads = n_kv = 1
        d_k = d_qk if cfg.score != "additive" or d_k is None else d_k
    if cfg.rope is not None:  # named here as typed: validate_config's refusal names W_Q and a head, not the size
        for what, width, heads in ((q_name, d_qk, n_heads), (k_name, d_k, n_kv)):
            if width // heads % 2:
                raise AttentionInputError(
                    N_("{what}: {value} leaves each head {width} features, but RoPE turns pairs of features: a head "
                       "needs an even width (or RoPE off)."), what=what, value=width, width=width // heads)
    o_rows = d_v // n_kv * n_heads  # W_O [n_heads·d_v, d_out]

    def grow(a: np.ndarray, shape: tuple[int, int], salt: int) -> np.ndarray:
        return resize(a, shape, initialize(init, shape, seed=seed + salt))

    square_o = cfg.w_o.shape[0] == cfg.w_o.shape[1]
    o_shape = (o_rows, o_rows) if square_o else (o_rows, cfg.d_out)
    o_fill = np.eye(*o_shape) if square_o else initialize(init, o_shape, seed=seed + 4)
    tokens = tuple(cfg.tokens[:n_seq]) + tuple(f"t{i + 1}" for i in range(cfg.n_seq, n_seq))
    pad = tuple(cfg.is_pad[:n_seq]) + (False,) * max(0, n_seq - cfg.n_seq)
    n_q = n_seq if cfg.y is None else cfg.n_q
    custom = resize(cfg.custom_mask.astype(float), (n_q, n_seq), np.ones((n_q, n_seq))).astype(bool)
    extra = {}
    if cfg.y is not None:
        extra["y"] = grow(cfg.y, (cfg.n_q, d_model), 5)
    if cfg.w_a is not None:
        extra["w_a"] = grow(cfg.w_a, (d_qk // n_heads, d_k), 6)
    if cfg.w_1 is not None:
        extra["w_1"] = grow(cfg.w_1, (d_qk // n_heads, cfg.w_1.shape[1]), 7)
        extra["w_2"] = grow(cfg.w_2, (d_k // n_heads, cfg.w_2.shape[1]), 8)
    if cfg.score_bias is not None:
        extra["score_bias"] = None if n_heads != cfg.n_heads else np.stack(
            [resize(b, (n_q, n_seq), np.zeros((n_q, n_seq))) for b in cfg.score_bias])
    return validate_config(replace(
        cfg,
        tokens=tokens,
        x=grow(cfg.x, (n_seq, d_model), 0),
        w_q=grow(cfg.w_q, (d_model, d_qk), 1),
        w_k=grow(cfg.w_k, (d_model, d_k), 2),
        w_v=grow(cfg.w_v, (d_model, d_v), 3),
        w_o=resize(cfg.w_o, o_shape, o_fill),
        n_heads=n_heads,
        n_kv_heads=None if n_kv == n_heads else n_kv,
        is_pad=pad,
        custom_mask=custom,
        **extra,
    ))


def with_query_rows(cfg: Config, n_y: int | float, *, init: str = "xavier_uniform", seed: int = 0) -> Config:
    """A cross-attention configuration with ``n_y`` rows of Y, keeping the rows that still fit (new ones from
    ``init``, labelled q1, q2, ...); the custom mask follows (new rows may attend everywhere). An ``n_y`` that is not
    a whole number, over the cap of n_seq or under 1 is refused before any matrix is made.

    >>> from attn_core import load_preset
    >>> c = with_query_rows(load_preset("cross_translation"), 5)
    >>> c.n_q, c.y_tokens[-1], c.custom_mask.shape
    (5, 'q5', (5, 3))
    """
    if cfg.y is None:
        raise AttentionInputError(N_("Y: this configuration is self-attention; it has no Y to resize."), matrix="Y")
    n_y = whole_size(N_("n_y (rows of Y)"), n_y, LIMITS.n_seq,
                     N_("{what}: {value} is under 1; Y has at least one row."))
    new_rows = initialize(init, (n_y, cfg.d_model), seed=seed + 5)
    tokens = tuple(cfg.y_tokens[:n_y]) + tuple(f"q{i + 1}" for i in range(cfg.n_q, n_y))
    custom = resize(cfg.custom_mask.astype(float), (n_y, cfg.n_seq), np.ones((n_y, cfg.n_seq))).astype(bool)
    bias = None if cfg.score_bias is None else np.stack(
        [resize(b, (n_y, cfg.n_seq), np.zeros((n_y, cfg.n_seq))) for b in cfg.score_bias])
    return validate_config(replace(cfg, y=resize(cfg.y, (n_y, cfg.d_model), new_rows), y_tokens=tokens,
                                   custom_mask=custom, score_bias=bias))


def configs_equal(a: Config, b: Config) -> bool:
    """Bit-for-bit equality of two configurations (float64 values compared as bytes)."""
    same_arrays = a.matrix_names() == b.matrix_names() and all(
        m1.shape == m2.shape and m1.dtype == m2.dtype and m1.tobytes() == m2.tobytes()
        for m1, m2 in ((a.matrix(n), b.matrix(n)) for n in a.matrix_names())
    )
    ba, bb = a.score_bias, b.score_bias
    same_bias = (ba is None and bb is None) or (
        ba is not None and bb is not None and ba.shape == bb.shape and ba.tobytes() == bb.tobytes())
    ca, cb = a.custom_mask, b.custom_mask
    same_mask = (ca is None and cb is None) or (
        ca is not None and cb is not None and ca.shape == cb.shape and bool((ca == cb).all())
    )
    return (
        same_arrays
        and same_bias
        and same_mask
        and a.tokens == b.tokens
        and a.n_heads == b.n_heads
        and type(a.scale) is type(b.scale)
        and a.scale == b.scale
        and a.mask_kind == b.mask_kind
        and tuple(a.is_pad) == tuple(b.is_pad)
        and a.origin == b.origin
        and a.score == b.score
        and a.y_tokens == b.y_tokens
        and a.n_kv_heads == b.n_kv_heads
        and a.rope == b.rope
        and a.qk_norm == b.qk_norm
        and a.alibi == b.alibi
        and a.window == b.window
        and a.softcap == b.softcap
    )
