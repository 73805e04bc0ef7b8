"""Interventions, and the one point of every forward pass where they act: each head's output before W_O.

As TransformerLens's ``blocks.L.attn.hook_z``, one place in each attention of every family is open to change: the
heads' outputs (each head's weighted values, [n_q, d_v], side by side) before they are multiplied by W_O. Every
attention of every family runs through :func:`attend`, with or without an :class:`Intervention`; every feature that
changes a model (a head switched off, "which heads matter", an edited layer run back) is an Intervention, so the
model as trained and the model changed are one code path. :func:`attend`, for one layer's attention:

(a) replaces the attention by the explorer's configuration when the intervention names the layer: run whole on the
    text it was opened on (:func:`owns`: its X, its mask, its edits), else its weights, scale and score function on
    this text's input (the model's mask, changed as the configuration's mask kind says); a configuration of one head
    (a GPT-2 too wide to open whole) replaces that head only; a cross-attention's always on this run's X and Y
    (they change with every generated token);
(b) replaces the outputs of the heads switched off: zeros, or the mean of the head's output over the text's real
    tokens (self-attention), or the mean of its value rows over the source (cross-attention: a mean over the decoder's
    positions would let a position see the ones after it);
(c) multiplies by W_O.

Where each family calls it: attn_models.bert.attention (BertSelfAttention), attn_models.gpt2.attention
(GPT2Attention), attn_models.t5.attention (every T5Attention: the encoder's and decoder's self-attentions, and the
decoder's EncDecAttention, the one an intervention addresses).

With a key/value cache (a :class:`Site` whose ``cache`` is an attn_models.kv.KVCache: a generation's step), the
queries are the new positions' rows only and every head attends over the keys and values kept so far and the new
ones (attn_core.projected_multi_head_attention); (a), (b) and (c) act on those rows as on the whole text's.
:func:`cacheable` says which interventions keep the whole text's numbers that way: not a self-attention head switched
off by its mean (the mean is over every position, and a new token changes it at all the earlier ones), nor an
explorer configuration without a mask in a causal model (every position would see the ones after it); there the
family runs the whole text at every step.

>>> Intervention(ablate={(2, 5)}).heads_in(2), Intervention.NONE.is_none
(frozenset({5}), True)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import numpy as np

from attn_core import (
    AttentionInputError,
    Config,
    MultiHeadTrace,
    Phrase,
    RoPE,
    apply_rope,
    causal_mask,
    head_slice,
    kv_head_of,
    modern_attention,
    multi_head_cross_attention,
    padding_mask,
    projected_multi_head_attention,
    run,
)

from .errors import N_, ModelError
from .kv import KVCache
from .ops import f64, product

HOW = ("mean", "zero")


def ablate_heads(concat: np.ndarray, n_heads: int, heads: frozenset[int], how: str,
                 is_real: np.ndarray) -> np.ndarray:  # [n_seq, n_heads·d_v] -> [n_seq, n_heads·d_v]
    """The heads' outputs side by side with the ``heads`` given switched off.

    A head switched off gives, on every real (non-pad) token, zeros (``how="zero"``) or its output's mean over the
    sentence's real tokens (``how="mean"``); its rows of padding keep what the model computed (no real token
    attends to a pad, and pads are never pooled). The other heads' columns are copied unchanged.

    Parameters
    ----------
    concat : ndarray of shape (n_seq, n_heads·d_v)
        Every head's output, in order (attn_core's ``MultiHeadTrace.concat``).
    n_heads : int
    heads : frozenset of int
        The heads switched off (0 … n_heads − 1).
    how : "mean" or "zero"
    is_real : ndarray of bool, shape (n_seq,)
        Which tokens are the sentence's own (not padding).

    Examples
    --------
    >>> c = np.array([[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]])   # 2 heads of d_v 1; the last token is a pad
    >>> ablate_heads(c, 2, frozenset({1}), "mean", np.array([True, True, False])).tolist()
    [[1.0, 3.0], [3.0, 3.0], [9.0, 9.0]]
    >>> ablate_heads(c, 2, frozenset({0}), "zero", np.array([True, True, False])).tolist()
    [[0.0, 2.0], [0.0, 4.0], [9.0, 9.0]]
    """
    out = concat.copy()  # [n_seq, n_heads·d_v]
    d_v = concat.shape[1] // n_heads
    for h in sorted(heads):
        cols = head_slice(h, d_v)
        if how == "zero":
            out[is_real, cols] = 0.0
        else:
            out[is_real, cols] = concat[is_real, cols].mean(axis=0)  # [d_v]: the head's average over the sentence
    return out


def _pairs(ablate: object) -> frozenset[tuple[int, int]] | None:
    """``ablate`` as a frozenset of (layer, head) pairs of ints, or None when it is not pairs of whole numbers."""
    try:
        items = list(ablate)  # type: ignore[call-overload]
    except TypeError:
        return None
    pairs = set()
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2 or any(
                isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in item):
            return None
        pairs.add((int(item[0]), int(item[1])))
    return frozenset(pairs)


@dataclass(frozen=True)
class Intervention:
    """What is changed in the model for one run: heads switched off, and one layer's attention replaced (an
    encoder's or a GPT-2's self-attention; a T5 decoder layer's cross-attention, whose heads the pairs name too).

    ``Intervention()`` (or ``Intervention.NONE``) is the model as trained. Hashable: a page can cache on it. Every
    family applies it at one point of its forward pass, :func:`attend`.

    Attributes
    ----------
    ablate : frozenset of (layer, head)
        The heads switched off (any iterable of pairs is taken). A head switched off gives, in place of its output
        (its weighted values, before concatenation and W_O), zeros or its mean over the sentence's real tokens (a
        cross-attention's: the mean of its value rows over the source).
    how : "mean" or "zero"
        Mean is the default. Zero feeds W_O (and every layer after) an input it never saw in training: the head's
        average contribution, a constant offset the rest of the model relies on, disappears along with what the
        head says about each token, so the result moves for two reasons at once. Mean ablation keeps the head's
        average contribution and removes only what it says about each token (TransformerLens's mean ablation;
        here the mean is over this sentence's tokens, not over a dataset).
    layer : int, optional
        The layer whose attention ``config`` replaces (taken from ``config.origin["layer"]`` when not given).
    config : attn_core.Config, optional
        The explorer's configuration of layer ``layer`` (as the family's ``layer_config`` or ``cross_config`` made
        it, edited or not). ``attn_core.run(config).output + b_O`` is that layer's attention output; for an encoder,
        ``config.x`` without its last (bias) column is the layer's input for the residual: edits of W_Q, W_K, W_V,
        W_O, the scale, the mask, the score function and X all run through the rest of the model. A GPT-2
        configuration of one head (origin "of_heads") replaces that head only.

        Its X and mask belong to the text it was opened on (``config.origin["sentence"]`` and ``"pad_to"``; every
        text, when it has no origin). On any other text (:meth:`attn_models.Model.embed_sentences` compares several;
        a generation's longer contexts) the layer uses the configuration's weights, scale, score function and head
        count on that text's own input, with the model's mask there (a causal one added when the configuration's
        mask is causal, dropped when it has none; padding is always masked): the edit changes the model, X belongs
        to one text. A T5 cross-attention's configuration always meets the run's own X and Y.

    Examples
    --------
    >>> Intervention(ablate=[(0, 1), (3, 2)], how="zero").layers
    (0, 3)
    >>> Intervention() == Intervention.NONE
    True
    """

    ablate: frozenset[tuple[int, int]] = frozenset()
    how: Literal["mean", "zero"] = "mean"
    layer: int | None = None
    config: Config | None = None

    NONE: ClassVar[Intervention]

    def __post_init__(self) -> None:
        pairs = _pairs(self.ablate)
        if pairs is None:
            raise ModelError(N_("Heads to switch off are (layer, head) pairs of whole numbers, got {ablate}."),
                             ablate=repr(self.ablate)[:80])
        object.__setattr__(self, "ablate", pairs)
        if self.how not in HOW:
            raise ModelError(N_("A head is switched off by {hows}, not {how}."), hows=" or ".join(HOW),
                             how=repr(self.how)[:40])
        layer = self.layer
        if self.config is not None and layer is None:
            layer = (self.config.origin or {}).get("layer")
        if (self.config is None) != (layer is None):
            raise ModelError(N_("A layer to replace needs both the layer and its configuration (the explorer's)."))
        if layer is not None and (isinstance(layer, bool) or not isinstance(layer, (int, np.integer))):
            raise ModelError(N_("Layer {layer} does not exist: a layer is a whole number."), layer=repr(layer)[:40])
        object.__setattr__(self, "layer", None if layer is None else int(layer))

    @property
    def is_none(self) -> bool:
        """Nothing changed: the model as trained."""
        return not self.ablate and self.config is None

    @property
    def layers(self) -> tuple[int, ...]:
        """The layers it changes, in order (the first is where a rerun must start)."""
        return tuple(sorted({layer for layer, _ in self.ablate} | ({self.layer} if self.config is not None else set())))

    def heads_in(self, layer: int) -> frozenset[int]:
        """The heads switched off in ``layer``."""
        return frozenset(h for lay, h in self.ablate if lay == layer)

    def config_of(self, layer: int) -> Config | None:
        """The configuration that replaces ``layer``'s attention, or None."""
        return self.config if self.layer == layer else None

    def check(self, n_layers: int, n_heads: int) -> None:
        """ModelError when a layer or head is not in a model of ``n_layers`` layers of ``n_heads`` heads."""
        for layer in self.layers:
            if not 0 <= layer < n_layers:
                raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=layer,
                                 last=n_layers - 1)
        for layer, h in sorted(self.ablate):
            if not 0 <= h < n_heads:
                raise ModelError(N_("Head {head} of layer {layer} does not exist: each layer has heads 0 … {last}."),
                                 head=h, layer=layer, last=n_heads - 1)


Intervention.NONE = Intervention()


@contextmanager
def edits_refused(intervention: Intervention | None) -> Iterator[None]:
    """Run a model with ``intervention``: when its configuration (the learner's numbers for one layer) cannot be
    computed, attn_core's refusal (a score that overflowed float64; a NaN or ±inf it sent on to a later layer) becomes
    a ModelError naming the layer, as every other refusal of the model's. The model as trained never meets one (its
    weights are checked finite at load), so there the error goes on as it is.

    >>> from attn_core import N_
    >>> with edits_refused(Intervention(layer=2, config=object())):  # doctest: +ELLIPSIS
    ...     raise AttentionInputError(N_("scores QKᵀ: cell ({i}, {j}) is +inf."), i=0, j=0)
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: Your numbers for layer 2 do not run through the model: scores QKᵀ: cell (0, 0) is...
    """
    try:
        yield
    except AttentionInputError as err:
        if intervention is None or intervention.config is None:
            raise
        raise ModelError(N_("Your numbers for layer {layer} do not run through the model: {why} Change them on the "
                            "explorer's pages, or go back to the model's weights."), layer=intervention.layer,
                         why=Phrase(err.template, **err.params)) from None


def owns(cfg: Config, text: str | None, pad_to: int) -> bool:
    """Whether ``cfg``'s X and mask are this sentence's (see :class:`Intervention`: its origin names it)."""
    origin = cfg.origin or {}
    if "sentence" not in origin:
        return True
    return origin["sentence"] == text and int(origin.get("pad_to", 0) or 0) == int(pad_to or 0)


def check_runs_back(cfg: Config, d_model: int, n_heads: int, n_seq: int, own: bool) -> None:
    """ModelError saying what keeps ``cfg`` from replacing a layer of a model of width ``d_model`` and
    ``n_heads`` heads on a sentence of ``n_seq`` tokens (``own``: the sentence it was opened on), and how to fix it."""
    if cfg.y is not None:
        raise ModelError(N_("The configuration is cross-attention (its queries come from Y); the model's layers attend "
                            "to their own sentence. Switch back to self-attention to run it through the model."))
    if cfg.d_model != d_model + 1:
        raise ModelError(N_("X has {columns} columns; the model's layer takes {width} (its {d_model} features and the "
                            "bias column). Set d_model back to {width}, or open the layer again."),
                         columns=cfg.d_model, width=d_model + 1, d_model=d_model)
    if cfg.d_out != d_model:
        raise ModelError(N_("W_O has {columns} columns; the model's layer needs {d_model} (d_model), one per feature "
                            "the next step adds back. Give W_O {d_model} columns, or open the layer again."),
                         columns=cfg.d_out, d_model=d_model)
    check_heads(cfg, n_heads)
    if own and cfg.n_seq != n_seq:
        raise ModelError(N_("X has {rows} rows; the sentence has {n_seq} tokens, one row each. Set n_seq back to "
                            "{n_seq}, or open the layer again."), rows=cfg.n_seq, n_seq=n_seq)


def check_cross_runs_back(cfg: Config, d_model: int, n_heads: int) -> None:
    """ModelError saying what keeps ``cfg`` from replacing a decoder layer's cross-attention of width ``d_model`` and
    ``n_heads`` heads, and how to fix it."""
    if not cfg.cross:
        raise ModelError(N_("The configuration is self-attention; a decoder layer's cross-attention takes queries "
                            "from Y. Open the layer's cross-attention again."))
    if cfg.d_model != d_model or cfg.w_q.shape[0] != d_model or cfg.d_out != d_model:
        raise ModelError(N_("X, Y and W_O must keep the model's width {d_model} (d_model) to run back through "
                            "the decoder. Open the layer again."), d_model=d_model)
    check_heads(cfg, n_heads)


def check_heads(cfg: Config, n_heads: int) -> None:
    """ModelError unless ``cfg`` has the layer's ``n_heads`` heads."""
    if cfg.n_heads != n_heads:
        raise ModelError(N_("The configuration has {heads} heads; the model's layers have {n_heads} (every layer's "
                            "attention is stored head by head). Set the heads back to {n_heads}."),
                         heads=cfg.n_heads, n_heads=n_heads)


def one_head_of(cfg: Config) -> int | None:
    """The head a configuration of one head replaces (its origin's "head", when its origin says how many heads the
    layer has: "of_heads"), or None: it is a whole layer's."""
    origin = cfg.origin or {}
    return origin.get("head") if "of_heads" in origin else None


# ---- the intervention point -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Site:
    """One attention of one layer as the model computes it, in attn_core's layout (``x @ w``, float64): what
    :func:`attend` reads.

    Attributes
    ----------
    x : ndarray of shape (n_k, d_in)
        The keys' and values' input, and the queries' for self-attention (BERT's and GPT-2's with the bias column).
    w_q, w_k : ndarray of shape (d_in, n_heads·d_k)
    w_v : ndarray of shape (d_in, n_heads·d_v)
    w_o : ndarray of shape (n_heads·d_v, d_model)
    n_heads : int
    scale : "sqrt_dk", "none" or a number
        As attn_core's (T5 does not scale: "none").
    bias : ndarray of shape (n_heads, n_q, n_k), optional
        An additive score bias (T5's relative positions).
    y : ndarray of shape (n_q, d_in), optional
        The queries' input of a cross-attention (T5's decoder states); None: self-attention.
    is_pad : ndarray of bool, shape (n_k,), optional
        Padding tokens: no query attends to them, and a head's mean leaves them out.
    causal : bool
        Each query attends to itself and the keys before it (GPT-2, T5's decoder).
    by_head : bool
        Computed one head at a time, each head on its own columns of W_Q, W_K, W_V and rows of W_O (a GPT-2 layer
        too wide to open whole: the pieces the explorer opens).
    cache : attn_models.kv.KVCache, optional
        A generation's keys and values so far (no padding then). Self-attention: ``x`` is the new positions' rows
        (``cache.past`` … on), their keys and values are appended, their queries attend to every key up to their
        own. Cross-attention: the keys and values of ``x`` (the source) are made on the first step and kept.
        Weights may then stay in the checkpoint's dtype (attn_models.ops.product makes them float64).
    cache_key : hashable
        The attention's name in the cache (its layer and side).
    rope_base : float, optional
        Rotary position embedding (a Llama's): each head's queries and keys, once projected, turned by their
        positions' angles (attn_core.apply_rope, transformers' rotate_half layout, θ_i = base^(−2i/d_k)); with a
        cache, the keys are kept after their turn. None: no RoPE.
    n_kv_heads : int, optional
        Grouped-query attention: w_k and w_v hold this many key/value heads, query head h reads key/value head
        attn_core.kv_head_of(h, n_heads, n_kv_heads). None: as many as query heads.
    window : int, optional
        A sliding window (a Mistral's): each query attends to itself and the window − 1 positions before it.
    """

    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    n_heads: int
    scale: str | float = "sqrt_dk"
    bias: np.ndarray | None = None
    y: np.ndarray | None = None
    is_pad: np.ndarray | None = None
    causal: bool = False
    by_head: bool = False
    cache: KVCache | None = None
    cache_key: Hashable = None
    rope_base: float | None = None
    n_kv_heads: int | None = None
    window: int | None = None

    @property
    def queries(self) -> np.ndarray:  # [n_q, d_in]
        return self.x if self.y is None else self.y

    @property
    def past(self) -> int:
        """Positions before x's rows whose keys and values a self-attention's cache holds (0 without a cache)."""
        return 0 if self.cache is None or self.y is not None else self.cache.past

    @property
    def is_real(self) -> np.ndarray:  # bool [n_k]: the text's own tokens (not padding)
        return np.ones(len(self.x), dtype=bool) if self.is_pad is None else ~np.asarray(self.is_pad, dtype=bool)

    def mask(self, causal: bool | None = None) -> np.ndarray | None:  # -> bool [n_q, n_k] (True: may attend) or None
        """The padding mask when there is padding, with the causal mask when ``causal`` (default: the model's); with
        a cache, the new rows' causal mask over every position so far (row i: positions up to past + i; None for one
        new row, which sees them all)."""
        pad = self.is_pad
        mask = padding_mask(np.asarray(pad, dtype=bool)) if pad is not None and np.any(pad) else None
        if mask is not None and self.cache is not None:
            raise ValueError("a key/value cache runs a text without padding")
        n, past = len(self.x), self.past
        if (self.causal if causal is None else causal) and self.window is not None:
            at = past + np.arange(n)[:, None]  # [n, 1]: each query's position
            seen = at - np.arange(past + n)[None, :]  # [n, past + n]: how far back each key is
            causal_rows = (seen >= 0) & (seen < self.window)  # bool [n, past + n]: itself and window − 1 before
            mask = causal_rows if mask is None else mask & causal_rows
        elif (self.causal if causal is None else causal) and not (past and n == 1):
            causal_rows = np.tri(n, past + n, past, dtype=bool) if past else causal_mask(n)  # bool [n, past + n]
            mask = causal_rows if mask is None else mask & causal_rows
        return mask

    def projections(self, weights: str, w_q: np.ndarray, w_k: np.ndarray,
                    w_v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # -> [n_q, ·], [n_k, ·], [n_k, ·]
        """With a cache: Q of the queries' rows, and K, V of every position so far (the new rows' appended to the
        cache's slot of ``weights``, "model" or "config"; a cross-attention's made once)."""
        q = product(self.queries, w_q)  # [n_q, n_heads·d_k]
        k, v = self.cache.keys_values((self.cache_key, weights), self.x, w_k, w_v, fixed=self.y is not None)
        return q, k, v

    @property
    def modern(self) -> bool:
        """Whether its queries and keys are turned (RoPE) or its heads share keys and values (GQA): the model's
        attention is attn_core.modern_attention (:func:`model_traces`), on a cache :meth:`rotated`."""
        return self.rope_base is not None or self.n_kv_heads is not None

    @property
    def rope(self) -> RoPE | None:
        """The model's RoPE (transformers' rotate_half layout), or None."""
        return None if self.rope_base is None else RoPE(self.rope_base, "half")

    def rotated(self, weights: str, x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                n_heads: int, n_kv_heads: int,
                rope: RoPE | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """With a key/value cache: Q [n_q, n_heads·d_k] of ``x`` (the new rows), K [n_k, n_kv_heads·d_k] and V
        [n_k, n_kv_heads·d_v] of every position so far (the cache's slot of ``weights``, "model" or "config"):
        projected, each head's Q and K turned by their positions by ``rope`` (None: not turned), the new keys kept
        after their turn. attn_core.projected_multi_head_attention(…, n_kv_heads=…) then gives query head h key/value
        head kv_head_of(h)."""
        q, k, v = product(x, w_q), product(x, w_k), product(x, w_v)  # [n, H·d_k], [n, KV·d_k], [n, KV·d_v]
        d_q, d_k = q.shape[1] // n_heads, k.shape[1] // n_kv_heads
        if rope is not None:
            at = self.past + np.arange(len(x))  # int [n]: the rows' positions
            for h in range(n_heads):
                q[:, head_slice(h, d_q)] = apply_rope(q[:, head_slice(h, d_q)], at, base=rope.base,
                                                      layout=rope.layout, name=f"Q (head {h})")
            for g in range(n_kv_heads):
                k[:, head_slice(g, d_k)] = apply_rope(k[:, head_slice(g, d_k)], at, base=rope.base,
                                                      layout=rope.layout, name=f"K (head {g})")
        if self.cache is not None:
            k, v = self.cache.append((self.cache_key, weights), k, v)  # [past + n, KV·d_k], [past + n, KV·d_v]
        return q, k, v

    def modern_trace(self, x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray,
                     n_heads: int, n_kv_heads: int | None) -> MultiHeadTrace:
        """attn_core.modern_attention of ``x`` (the whole text, no cache) with the model's RoPE, causal mask, window,
        padding and scale: the pipeline an explorer configuration of this layer runs (attn_core.run), so the two
        are one computation, bit for bit."""
        pad = self.is_pad
        mask = padding_mask(np.asarray(pad, dtype=bool)) if pad is not None and np.any(pad) else None
        return modern_attention(x, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv_heads, rope=self.rope,
                                causal=self.causal, window=self.window, scale=self.scale, mask=mask, bias=self.bias)

    def mask_for(self, cfg: Config) -> np.ndarray | None:
        """The mask ``cfg``'s weights meet on this text: the model's, made causal when the configuration's mask is
        causal and not when it has none (the padding stays: no query attends to a pad); a cross-attention's stays
        the model's."""
        if self.y is not None:
            return self.mask()
        kind = cfg.mask_kind
        return self.mask(kind == "causal" or (self.causal and kind != "none"))


def head_weights(w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, h: int, n_heads: int,
                 n_kv_heads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Head ``h``'s columns of W_Q [d_in, d_k], its key/value head's columns of W_K, W_V [d_in, d_k], [d_in, d_v]
    (head ``h``'s own without grouped-query attention: ``n_kv_heads`` None; else kv_head_of(h)) and its rows of W_O
    [d_v, d_model] (contiguous copies): one head as the explorer opens it alone."""
    n_kv = n_heads if n_kv_heads is None else n_kv_heads
    g = kv_head_of(h, n_heads, n_kv)
    cols, kv_cols = head_slice(h, w_q.shape[1] // n_heads), head_slice(g, w_k.shape[1] // n_kv)
    v_cols, rows = head_slice(g, w_v.shape[1] // n_kv), head_slice(h, w_v.shape[1] // n_kv)
    return (np.ascontiguousarray(w_q[:, cols]), np.ascontiguousarray(w_k[:, kv_cols]),
            np.ascontiguousarray(w_v[:, v_cols]), np.ascontiguousarray(w_o[rows]))


def model_traces(site: Site, by_head: bool) -> list[MultiHeadTrace]:
    """The attention as the model computes it, through attn_core: one trace of every head, or (``by_head``) one per
    head on its own columns and W_O rows; with a cache, on the layer's projections of the new rows and the cached
    keys and values (:func:`cached_traces`)."""
    mask = site.mask()
    if site.modern and site.cache is not None:  # the new rows over the keys (turned) and values kept
        n_kv = site.n_kv_heads or site.n_heads
        q, k, v = site.rotated("model", site.x, site.w_q, site.w_k, site.w_v, site.n_heads, n_kv, site.rope)
        return cached_traces(q, k, v, f64(site.w_o), site.n_heads, by_head, scale=site.scale, mask=mask,
                             bias=site.bias, n_kv_heads=n_kv)  # W_O widened: bfloat16 bits are not numbers here
    if site.modern:  # attn_core.modern_attention, as attn_core.run runs the layer's (or one head's) configuration
        w_q, w_k, w_v, w_o = (f64(w) for w in (site.w_q, site.w_k, site.w_v, site.w_o))
        if not by_head:
            return [site.modern_trace(site.x, w_q, w_k, w_v, w_o, site.n_heads, site.n_kv_heads)]
        return [site.modern_trace(site.x, *head_weights(w_q, w_k, w_v, w_o, h, site.n_heads, site.n_kv_heads), 1, None)
                for h in range(site.n_heads)]
    if site.cache is not None:
        q, k, v = site.projections("model", site.w_q, site.w_k, site.w_v)
        return cached_traces(q, k, v, site.w_o, site.n_heads, by_head, scale=site.scale, mask=mask, bias=site.bias)

    def heads(w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, n_heads: int,
              bias: np.ndarray | None) -> MultiHeadTrace:
        return multi_head_cross_attention(site.queries, site.x, w_q, w_k, w_v, w_o, n_heads, scale=site.scale,
                                          mask=mask, bias=bias)

    if not by_head:
        return [heads(site.w_q, site.w_k, site.w_v, site.w_o, site.n_heads, site.bias)]
    return [heads(*head_weights(site.w_q, site.w_k, site.w_v, site.w_o, h, site.n_heads), 1,
                  None if site.bias is None else site.bias[h:h + 1]) for h in range(site.n_heads)]


def cached_traces(q: np.ndarray, k: np.ndarray, v: np.ndarray, w_o: np.ndarray, n_heads: int, by_head: bool,
                  **options: object) -> list[MultiHeadTrace]:  # [n_q, H·d_k], [n_k, H·d_k], [n_k, H·d_v], [H·d_v, d]
    """attn_core.projected_multi_head_attention of a cache's step: one trace of every head, or (``by_head``) one per
    head on its column slices and W_O rows (a bias [n_heads, n_q, n_k] sliced alike); ``options``: scale, mask,
    bias."""
    if not by_head:
        return [projected_multi_head_attention(q, k, v, w_o, n_heads, **options)]
    n_kv = options.pop("n_kv_heads", None) or n_heads
    d_k, d_v, bias = q.shape[1] // n_heads, v.shape[1] // n_kv, options.pop("bias", None)
    return [projected_multi_head_attention(
        q[:, head_slice(h, d_k)], k[:, head_slice(kv_head_of(h, n_heads, n_kv), d_k)],
        v[:, head_slice(kv_head_of(h, n_heads, n_kv), d_v)], w_o[head_slice(h, d_v)], 1,
        bias=None if bias is None else bias[h:h + 1], **options) for h in range(n_heads)]


def replaced(traces: list[MultiHeadTrace], cfg: Config, site: Site, own: bool) -> list[MultiHeadTrace]:
    """(a) The traces with ``cfg`` in place of the layer (or of its one head), checked first: run whole when ``own``
    (the text it was opened on), else its weights, scale and score function on this text's input."""
    n_q, d_model, head = len(site.queries), site.w_o.shape[1], one_head_of(cfg)
    if site.y is not None:
        check_cross_runs_back(cfg, d_model, site.n_heads)
    elif head is None:
        check_runs_back(cfg, d_model, site.n_heads, n_q, own)
    else:
        if cfg.n_heads != 1 or not isinstance(head, int) or not 0 <= head < site.n_heads:
            raise ModelError(N_("The configuration has {heads} heads; the model's layers have {n_heads}. Open the "
                                "layer again."), heads=cfg.n_heads, n_heads=site.n_heads)
        check_runs_back(cfg, d_model, 1, n_q, own)
    modern = site.y is None and (site.modern or cfg.modern)  # RoPE, grouped K/V, window …: the model's or the edit's
    if modern and site.cache is not None:  # the configuration's own pipeline (its RoPE, its key/value heads,
        # window, soft cap, scale, score) on the new rows, its keys (turned) and values kept in its slot
        q, k, v = site.rotated("config", site.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.n_heads, cfg.kv_heads, cfg.rope)
        mask = replace(site, window=cfg.window).mask_for(cfg)
        trace = projected_multi_head_attention(q, k, v, cfg.w_o, cfg.n_heads, scale=cfg.scale, mask=mask,
                                               score=cfg.score_function(), n_kv_heads=cfg.n_kv_heads,
                                               softcap=cfg.softcap)
    elif modern and not own:  # the configuration's own pipeline (attn_core.run's) on this text's X
        mask = replace(site, window=None).mask_for(cfg)  # the model's mask on this text; the window is the config's
        trace = modern_attention(site.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, n_heads=cfg.n_heads,
                                 n_kv_heads=cfg.n_kv_heads, rope=cfg.rope, qk_norm=cfg.qk_norm, alibi=cfg.alibi,
                                 window=cfg.window, causal=False, softcap=cfg.softcap, scale=cfg.scale, mask=mask,
                                 score=cfg.score_function())
    elif site.cache is not None:  # the configuration's weights on the new rows, its keys and values kept in its slot
        q, k, v = site.projections("config", cfg.w_q, cfg.w_k, cfg.w_v)
        trace = projected_multi_head_attention(q, k, v, cfg.w_o, cfg.n_heads, scale=cfg.scale, mask=site.mask_for(cfg),
                                               score=cfg.score_function())
    else:
        trace = run(cfg) if own else multi_head_cross_attention(
            site.queries, site.x, cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads, scale=cfg.scale,
            mask=site.mask_for(cfg), score=cfg.score_function())
    if head is None:
        return [trace]
    return [trace if h == head else t for h, t in enumerate(traces)]


def switched_off(traces: list[MultiHeadTrace], heads: frozenset[int], how: str,
                 site: Site) -> np.ndarray:  # -> [n_q, n_heads·d_v]
    """(b) The heads' outputs side by side, ``heads`` switched off: :func:`ablate_heads` for a self-attention (the
    mean over the text's real tokens), for a cross-attention zeros or the mean of the head's value rows over the
    source, at every query."""
    every = [t for trace in traces for t in trace.heads]  # each head's AttentionTrace, in order
    if len({t.output.shape[1] for t in every}) != 1:
        raise ModelError(N_("A head is switched off only when every head of the layer has the same d_v."))
    concat = np.concatenate([t.concat for t in traces], axis=1) if len(traces) > 1 else traces[0].concat
    if site.y is None:
        return ablate_heads(concat, len(every), heads, how, site.is_real)
    out = concat.copy()  # [n_q, n_heads·d_v]
    d_v = concat.shape[1] // len(every)
    for h in sorted(heads):
        out[:, head_slice(h, d_v)] = 0.0 if how == "zero" else every[h].v.mean(axis=0)  # [d_v]: its values' mean
    return out


def attend(site: Site, intervention: Intervention | None = None, layer: int = 0, *,
           own: bool = True) -> tuple[np.ndarray, np.ndarray]:  # -> [n_q, d_model], [n_heads, n_q, n_k]
    """Layer ``layer``'s attention at ``site`` with ``intervention`` (None: the model as trained, bit for bit): the
    heads' outputs times W_O (no output bias: the family adds its own), and every head's weights.

    (a) the explorer's configuration in place of the attention when the intervention names this layer (``own``: this
    text is the one it was opened on; see :func:`replaced`), (b) the heads switched off (:func:`switched_off`),
    (c) ``concat @ W_O``. Raises ModelError when the configuration does not fit the model.

    With ``site.cache`` (a generation's step): the new rows' output and weights [n_heads, n_q, past + n_q], each row
    the whole text's (to rounding) where :func:`cacheable` says so; ValueError where it does not, or with ``own``.
    """
    iv = intervention or Intervention.NONE
    cfg, heads = iv.config_of(layer), iv.heads_in(layer)
    if site.cache is not None and site.y is None and (not cacheable(iv) or (own and cfg is not None)):
        raise ValueError("this intervention changes earlier positions at every new token: run the whole text")
    one_head = cfg is not None and one_head_of(cfg) is not None
    # head by head as the explorer opens the layer (its configurations equal these traces bit for bit); on a cache,
    # whose rows equal the whole text's to rounding only, every head at once unless one head is replaced
    by_head = (site.by_head and site.cache is None) or one_head
    traces = [] if cfg is not None and not one_head else model_traces(site, by_head)
    if cfg is not None:
        traces = replaced(traces, cfg, site, own)
    weights = np.stack([t.weights for trace in traces for t in trace.heads])  # [n_heads, n_q, n_k]
    if not heads and (cfg is None or one_head):  # the model as trained, or one head replaced in a layer computed
        # head by head: attn_core's concat @ W_O (head by head: their sum, as the model's own; bit for bit unedited)
        return (traces[0].output if len(traces) == 1 else np.sum([t.output for t in traces], axis=0)), weights
    if not heads and len(traces) == 1:
        return traces[0].output, weights  # the configuration's own concat @ W_O
    concat = switched_off(traces, heads, iv.how, site) if heads else np.concatenate([t.concat for t in traces], axis=1)
    w_o = traces[0].w_o if len(traces) == 1 else np.vstack([t.w_o for t in traces])  # [n_heads·d_v, d_model]
    return concat @ w_o, weights


def cacheable(intervention: Intervention | None) -> bool:
    """Whether a causal model's self-attentions run with ``intervention`` on a key/value cache (attn_models.kv) give
    the whole text's numbers: each position's output must not depend on the positions after it. Not so for a head
    switched off by its mean (``how="mean"``: the mean over every position changes with each new token, at every
    earlier position), nor for an explorer configuration whose mask kind is "none" (its weights would let every
    position see the ones after it). Heads switched off to zeros, and a configuration's weights on the text's own X
    (causal, or any other mask kind, which keeps the model's causal mask: :meth:`Site.mask_for`), can. A configuration
    run on the text it was opened on (its own X: the first step of a generation) runs whole, outside the cache. A
    configuration with QK-norm or ALiBi runs the whole text too (the cache's step turns and groups the keys, caps and
    masks the scores, as attn_core.run does, but has neither).

    A cross-attention's intervention always can (T5's: the mean of a head's values is over the source, which stays).

    >>> cacheable(Intervention(ablate={(0, 1)}, how="zero")), cacheable(Intervention(ablate={(0, 1)}))
    (True, False)
    """
    iv = intervention or Intervention.NONE
    cfg = iv.config
    return not (iv.ablate and iv.how == "mean") and (cfg is None or (
        cfg.mask_kind != "none" and not (cfg.y is None and (cfg.qk_norm or cfg.alibi))))


def check_layer(layer: object, n_layers: int) -> None:
    """ModelError unless ``layer`` is a whole number from 0 to ``n_layers`` − 1.

    >>> check_layer("1", 2)
    Traceback (most recent call last):
    ...
    attn_models.errors.ModelError: Layer '1' does not exist: the model has layers 0 … 1.
    """
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n_layers:
        whole = isinstance(layer, (int, np.integer)) and not isinstance(layer, bool)
        shown = int(layer) if whole else repr(layer)[:40]
        raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=shown,
                         last=n_layers - 1)


def each_head_off(layers: Sequence[int], n_heads: int, how: str,
                  effect: Callable[[int, Intervention], float]) -> np.ndarray:  # -> [len(layers), n_heads]
    """``effect(layer, intervention)`` with each head of ``layers`` switched off alone (``how``: "mean" or "zero"),
    row by row in the order given: which heads matter."""
    Intervention(how=how)  # ModelError unless "mean" or "zero"
    effects = np.empty((len(layers), n_heads))  # [len(layers), n_heads]
    for r, layer in enumerate(layers):
        for h in range(n_heads):
            effects[r, h] = effect(layer, Intervention(ablate={(layer, h)}, how=how))
    return effects
