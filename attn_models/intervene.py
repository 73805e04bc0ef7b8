"""Interventions: heads switched off, or one layer's self-attention replaced by the explorer's configuration.

One place in the forward pass is open to change, as TransformerLens's ``blocks.L.attn.hook_z``: each head's output
(its weighted values, [n_seq, d_v], before the heads are concatenated and multiplied by W_O). Every feature that
changes the model (ablating a head, "which heads matter", an edited layer run back) goes through
:func:`layer_step`, on the same forward pass as the model as trained (:func:`attn_models.encoder.encode`).

>>> Intervention(ablate={(2, 5)}).heads_in(2), Intervention.NONE.is_none
(frozenset({5}), True)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from attn_core import (
    AttentionInputError,
    Config,
    MultiHeadTrace,
    Phrase,
    causal_mask,
    head_slice,
    multi_head_attention,
    padding_mask,
    run,
)

from .encoder import LayerWeights, with_bias_column
from .errors import N_, ModelError

if TYPE_CHECKING:
    from .encoder import Attend

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
    """What is changed in the model for one run: heads switched off, and one layer's self-attention replaced.

    ``Intervention()`` (or ``Intervention.NONE``) is the model as trained. Hashable: a page can cache on it.

    Attributes
    ----------
    ablate : frozenset of (layer, head)
        The heads switched off (any iterable of pairs is taken). A head switched off gives, in place of its output
        (its weighted values, before concatenation and W_O), zeros or its mean over the sentence's real tokens.
    how : "mean" or "zero"
        Mean is the default. Zero feeds W_O (and every layer after) an input it never saw in training: the head's
        average contribution, a constant offset the rest of the model relies on, disappears along with what the
        head says about each token, so the result moves for two reasons at once. Mean ablation keeps the head's
        average contribution and removes only what it says about each token (TransformerLens's mean ablation;
        here the mean is over this sentence's tokens, not over a dataset).
    layer : int, optional
        The layer whose self-attention ``config`` replaces (taken from ``config.origin["layer"]`` when not given).
    config : attn_core.Config, optional
        The explorer's configuration of layer ``layer`` (as :meth:`attn_models.Model.layer_config` made it,
        edited or not). ``attn_core.run(config).output + b_O`` is that layer's attention output, and ``config.x``
        without its last (bias) column is the layer's input for the residual: edits of W_Q, W_K, W_V, W_O, the
        scale, the mask, the score function and X all run through the rest of the model.

        Its X and mask belong to the sentence it was opened on (``config.origin["sentence"]`` and ``"pad_to"``;
        every sentence, when it has no origin). On any other sentence (:meth:`attn_models.Model.embed_sentences`
        compares several) the layer uses the configuration's weights, scale, score function and head count on
        that sentence's own input, with that sentence's padding mask (and a causal mask when the configuration's
        mask is causal): the edit changes the model, X belongs to one sentence.

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
    if cfg.n_heads != n_heads:
        raise ModelError(N_("The configuration has {heads} heads; the model's layers have {n_heads} (every layer's "
                            "attention is stored head by head). Set the heads back to {n_heads}."),
                         heads=cfg.n_heads, n_heads=n_heads)
    if own and cfg.n_seq != n_seq:
        raise ModelError(N_("X has {rows} rows; the sentence has {n_seq} tokens, one row each. Set n_seq back to "
                            "{n_seq}, or open the layer again."), rows=cfg.n_seq, n_seq=n_seq)


def layer_step(intervention: Intervention, layer: int, w: LayerWeights, n_heads: int, is_pad: np.ndarray,
               own: bool) -> Attend | None:
    """Layer ``layer``'s self-attention with ``intervention`` (None: the layer as trained, untouched).

    Returns ``step(x [n_seq, d_model]) -> (attention output with b_O [n_seq, d_model], residual [n_seq, d_model],
    weights [n_heads, n_seq, n_seq])``, for :func:`attn_models.encoder.encode`. ``own``: the sentence is the one
    the intervention's configuration was opened on (see :class:`Intervention`).
    """
    heads = intervention.heads_in(layer)
    cfg = intervention.config if intervention.layer == layer else None
    if not heads and cfg is None:
        return None
    d_model = w.w_o.shape[1]
    if cfg is not None:
        check_runs_back(cfg, d_model, n_heads, len(is_pad), own)
    pad = np.asarray(is_pad, dtype=bool)  # [n_seq]
    plain_mask = padding_mask(pad) if pad.any() else None  # bool [n_seq, n_seq] or None

    def attend(x: np.ndarray) -> MultiHeadTrace:  # [n_seq, d_model] -> its trace
        if cfg is None:
            return multi_head_attention(with_bias_column(x), w.w_q, w.w_k, w.w_v, w.w_o, n_heads, mask=plain_mask)
        if own:
            return run(cfg)
        mask = plain_mask
        if cfg.mask_kind == "causal":
            mask = causal_mask(len(pad)) if mask is None else mask & causal_mask(len(pad))
        return multi_head_attention(with_bias_column(x), cfg.w_q, cfg.w_k, cfg.w_v, cfg.w_o, cfg.n_heads,
                                    scale=cfg.scale, mask=mask, score=cfg.score_function())

    def step(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        trace = attend(x)
        out = trace.output  # [n_seq, d_model]: concat @ W_O
        if heads:
            out = ablate_heads(trace.concat, trace.n_heads, heads, intervention.how, ~pad) @ trace.w_o
        residual = cfg.x[:, :-1] if cfg is not None and own else x  # [n_seq, d_model]
        return out + w.b_o, residual, np.stack([t.weights for t in trace.heads])

    return step

