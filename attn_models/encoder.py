"""A BERT-family encoder in float64 numpy: embeddings, LayerNorm, exact GELU, and the encoder layers.

Every self-attention runs through :func:`attn_core.multi_head_attention`, on the same matrices
:meth:`attn_models.Model.layer_config` hands to the explorer: X with a constant-1 column appended, and
W_Q, W_K, W_V with their bias as the last row. So the explorer's numbers for a layer are, bit for bit,
the ones this forward pass used.

Shapes use the project's names: ``n_seq`` tokens, ``d_model`` (BERT's hidden_size), ``n_heads``,
``d_k = d_model / n_heads`` and ``d_ff`` (intermediate_size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attn_core import multi_head_attention, padding_mask


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer, float64, laid out for ``x @ w`` (the checkpoint stores [out, in]: transposed here).

    Attributes
    ----------
    w_q, w_k, w_v : ndarray of shape (d_model + 1, d_model)
        The projection weights with their bias as the last row (it meets X's constant-1 column).
    w_o : ndarray of shape (d_model, d_model)
        The attention output projection; ``b_o`` (d_model,) its bias.
    ln1_g, ln1_b : ndarray of shape (d_model,)
        LayerNorm after attention + residual.
    w_ff1 : ndarray of shape (d_model, d_ff); b_ff1 (d_ff,)
    w_ff2 : ndarray of shape (d_ff, d_model); b_ff2 (d_model,)
    ln2_g, ln2_b : ndarray of shape (d_model,)
        LayerNorm after the feed-forward + residual.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    w_ff1: np.ndarray
    b_ff1: np.ndarray
    w_ff2: np.ndarray
    b_ff2: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True, eq=False)
class EncoderOutput:
    """What :meth:`attn_models.Model.forward` returns (the names Hugging Face transformers uses).

    Attributes
    ----------
    tokens : tuple of str, length n_seq
        The WordPiece tokens, ``[CLS]`` first and ``[SEP]`` after the sentence (then any ``[PAD]``).
    attentions : ndarray of shape (n_layers, n_heads, n_seq, n_seq)
        Every layer's attention weights; row = query, column = key.
    hidden_states : ndarray of shape (n_layers + 1, n_seq, d_model)
        The embeddings' output, then every layer's output.
    is_pad : ndarray of bool, shape (n_seq,)
        Which tokens are padding (no query attends to them).
    """

    tokens: tuple[str, ...]
    attentions: np.ndarray
    hidden_states: np.ndarray
    is_pad: np.ndarray


# ---- exact GELU ----------------------------------------------------------------------------------------

_ERF_STEP = 1 / 32  # erf on [0, 6) is a Taylor polynomial of degree _ERF_DEGREE around each step's centre
_ERF_DEGREE = 9
_ERF_TOP = 6.0  # float64 erf(x) rounds to 1 for x >= 5.93


def _erf_table() -> tuple[np.ndarray, np.ndarray]:  # -> centres [n_steps], coefficients [degree + 1, n_steps]
    """Taylor coefficients of erf around the centre of each step, highest degree first (for Horner).

    erf⁽ᵏ⁾(c) = (2/√π) (−1)ᵏ⁻¹ Hₖ₋₁(c) e^(−c²), with Hₙ the physicists' Hermite polynomials.
    """
    n = round(_ERF_TOP / _ERF_STEP)
    c = (np.arange(n) + 0.5) * _ERF_STEP  # [n_steps]
    coef = np.empty((_ERF_DEGREE + 1, n))  # [degree + 1, n_steps], lowest degree first while built
    coef[0] = [math.erf(v) for v in c]
    g = 2 / math.sqrt(math.pi) * np.exp(-c * c)
    h_prev, h = np.zeros(n), np.ones(n)  # H₋₁ = 0, H₀ = 1
    factorial = 1.0
    for k in range(1, _ERF_DEGREE + 1):
        factorial *= k
        coef[k] = g * (-1) ** (k - 1) * h / factorial
        h_prev, h = h, 2 * c * h - 2 * (k - 1) * h_prev  # Hₖ = 2c Hₖ₋₁ − 2(k−1) Hₖ₋₂
    return c, coef[::-1].copy()


_ERF_CENTRES, _ERF_COEF = _erf_table()


def erf(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The error function, elementwise, within 2.3e-16 of ``math.erf`` (numpy has none; scipy is not needed).

    A degree-9 Taylor polynomial around the centre of each 1/32-wide step of [0, 6), odd symmetry, and 1 beyond.

    Examples
    --------
    >>> import math
    >>> xs = np.linspace(-7, 7, 1001)
    >>> float(np.abs(erf(xs) - [math.erf(v) for v in xs]).max()) <= 2.3e-16
    True
    """
    a = np.abs(x)
    near = np.minimum(a, _ERF_TOP)  # beyond 6 the result is 1 whatever the polynomial says
    i = np.minimum((near * (1 / _ERF_STEP)).astype(np.intp), len(_ERF_CENTRES) - 1)  # the step of each element
    s = near - _ERF_CENTRES[i]  # offset from the step's centre, |s| <= 1/64
    y = _ERF_COEF[0][i]
    for row in _ERF_COEF[1:]:  # Horner
        y *= s
        y += row[i]
    y[a >= _ERF_TOP] = 1.0
    return np.copysign(y, x)


def gelu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    """The exact GELU BERT uses: x · ½ · (1 + erf(x / √2)) (not the tanh approximation).

    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.158655, 0.0, 0.841345]
    """
    return x * 0.5 * (1.0 + erf(x * math.sqrt(0.5)))


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:  # [n_seq, d] -> [n_seq, d]
    """(x − mean) / √(var + eps) · g + b over each row (biased variance, as torch.nn.LayerNorm).

    >>> layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), 0.0).tolist()
    [[-1.0, 1.0]]
    """
    mean = x.mean(axis=-1, keepdims=True)  # [n_seq, 1]
    centred = x - mean  # [n_seq, d]
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # [n_seq, 1]
    return centred / np.sqrt(var + eps) * g + b


def with_bias_column(x: np.ndarray) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, d_model + 1]
    """X with a constant-1 column appended: ``X₁ @ [W; b] = X @ W + b``, a bias as one more input feature.

    >>> with_bias_column(np.zeros((2, 1))).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    return np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)


# ---- the encoder -----------------------------------------------------------------------------------------


def attention_block(
    x: np.ndarray, w: LayerWeights, n_heads: int, is_pad: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray]:  # [n_seq, d_model] -> [n_seq, d_model], weights [n_heads, n_seq, n_seq]
    """Self-attention (through attn_core) + output bias, residual, LayerNorm; returns the result and the weights."""
    mask = padding_mask(is_pad) if is_pad.any() else None  # bool [n_seq, n_seq]: no query attends to a pad
    trace = multi_head_attention(with_bias_column(x), w.w_q, w.w_k, w.w_v, w.w_o, n_heads, mask=mask)
    attn_out = trace.output + w.b_o  # [n_seq, d_model]: concat @ W_O + b_O
    weights = np.stack([t.weights for t in trace.heads])  # [n_heads, n_seq, n_seq]
    return layer_norm(attn_out + x, w.ln1_g, w.ln1_b, eps), weights


def feed_forward_block(x: np.ndarray, w: LayerWeights, eps: float) -> np.ndarray:  # [n_seq, d_model] -> same
    """GELU(x W₁ + b₁) W₂ + b₂, residual, LayerNorm."""
    inner = gelu(x @ w.w_ff1 + w.b_ff1)  # [n_seq, d_ff]
    return layer_norm(inner @ w.w_ff2 + w.b_ff2 + x, w.ln2_g, w.ln2_b, eps)


#: a layer's self-attention changed (attn_models.intervene.layer_step): x [n_seq, d_model] -> (the attention output
#: with b_O [n_seq, d_model], the residual it is added to [n_seq, d_model], weights [n_heads, n_seq, n_seq])
Attend = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def encode(
    embedded: np.ndarray, layers: tuple[LayerWeights, ...], n_heads: int, is_pad: np.ndarray, eps: float,
    steps: Sequence[Attend | None] = (),
) -> tuple[np.ndarray, np.ndarray]:  # [n_seq, d_model] -> [n_layers + 1, n_seq, d_model], [n_layers, n_heads, n, n]
    """Every layer in turn on ``embedded`` (the embeddings' output, or a later layer's input); returns
    (hidden_states, attentions).

    ``steps[i]``, when given and not None, computes layer i's self-attention instead (an intervention: see
    attn_models.intervene); then the residual, LayerNorm and feed-forward as always.
    """
    n_seq, d_model = embedded.shape
    hidden = np.empty((len(layers) + 1, n_seq, d_model))  # [n_layers + 1, n_seq, d_model]
    attentions = np.empty((len(layers), n_heads, n_seq, n_seq))  # [n_layers, n_heads, n_seq, n_seq]
    hidden[0] = embedded
    for i, w in enumerate(layers):
        step = steps[i] if i < len(steps) else None
        if step is None:
            h, attentions[i] = attention_block(hidden[i], w, n_heads, is_pad, eps)
        else:
            attn_out, residual, attentions[i] = step(hidden[i])  # [n_seq, d_model] × 2, [n_heads, n_seq, n_seq]
            h = layer_norm(attn_out + residual, w.ln1_g, w.ln1_b, eps)
        hidden[i + 1] = feed_forward_block(h, w, eps)
    return hidden, attentions
