"""BERT's masked-language-model head (BertForMaskedLM's ``cls.predictions``): the last hidden state of a [MASK]
token → a probability for every word of the vocabulary.

    t = LayerNorm(GELU(h W_t + b_t))            # [n_masks, d_model]
    logits = t Eᵀ + b                           # [n_masks, vocab]: E the word embeddings (tied) or its own decoder
    probs = softmax(logits)                     # float64, the largest logit subtracted first (attn_core.softmax)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attn_core import softmax

from .encoder import gelu, layer_norm

MASK = "[MASK]"
CHUNK = 4096  # rows of the decoder made float64 at a time (the whole of all-MiniLM's would be 94 MB)


@dataclass(frozen=True, eq=False)
class MlmHead:
    """The masked-LM head, float64 but for ``decoder`` (its checkpoint's dtype, as the word embeddings).

    Attributes
    ----------
    w_t : ndarray of shape (d_model, d_model)
        ``cls.predictions.transform.dense`` transposed (for ``h @ w_t``); ``b_t`` (d_model,) its bias.
    ln_g, ln_b : ndarray of shape (d_model,)
        ``cls.predictions.transform.LayerNorm``.
    decoder : ndarray of shape (vocab_size, d_model), or None
        ``cls.predictions.decoder.weight`` when the file has its own; None: tied to the word embeddings (as
        BertForMaskedLM saves it).
    bias : ndarray of shape (vocab_size,)
        ``cls.predictions.decoder.bias`` when the file has one (an untied decoder's), else ``cls.predictions.bias``.
    """

    w_t: np.ndarray
    b_t: np.ndarray
    ln_g: np.ndarray
    ln_b: np.ndarray
    decoder: np.ndarray | None
    bias: np.ndarray


@dataclass(frozen=True, eq=False)
class MaskFill:
    """The model's top words for one ``[MASK]`` of a sentence (:meth:`attn_models.Model.fill_mask`).

    Attributes
    ----------
    position : int
        The [MASK]'s index among the sentence's tokens ([CLS] is 0).
    tokens : tuple of str, length top_k
        The most probable tokens, most probable first (WordPiece: a ``##`` piece continues a word).
    probs : ndarray of shape (top_k,)
        Their probabilities (float64, of the whole vocabulary's softmax).
    ids : ndarray of int, shape (top_k,)
        Their vocabulary ids.
    """

    position: int
    tokens: tuple[str, ...]
    probs: np.ndarray
    ids: np.ndarray


def mlm_probs(h: np.ndarray, head: MlmHead, word: np.ndarray, eps: float) -> np.ndarray:  # [n, d] -> [n, vocab]
    """Every word's probability at each row of ``h`` (last hidden states); ``word`` the word embeddings [vocab, d],
    used when the head's decoder is tied to them.

    Examples
    --------
    >>> d, vocab = 2, 3
    >>> head = MlmHead(np.eye(d), np.zeros(d), np.ones(d), np.zeros(d), None, np.zeros(vocab))
    >>> p = mlm_probs(np.array([[1.0, -1.0]]), head, np.array([[1.0, 0], [0, 1], [0, 0]], dtype=np.float32), 0.0)
    >>> p.shape, round(float(p.sum()), 12), int(p.argmax())
    ((1, 3), 1.0, 0)
    """
    t = layer_norm(gelu(h @ head.w_t + head.b_t), head.ln_g, head.ln_b, eps)  # [n, d_model]
    decoder = word if head.decoder is None else head.decoder  # [vocab, d_model], its checkpoint's dtype
    logits = np.empty((len(h), len(decoder)))  # [n, vocab]
    for i in range(0, len(decoder), CHUNK):  # float32 → float64 is exact; a chunk at a time keeps memory small
        logits[:, i:i + CHUNK] = t @ decoder[i:i + CHUNK].astype(np.float64).T
    logits += head.bias
    return softmax(logits, out=logits)


def top_words(probs: np.ndarray, k: int) -> np.ndarray:  # [vocab] -> int [k]
    """The ids of the ``k`` largest probabilities, largest first (a tie: the smaller id first).

    >>> top_words(np.array([0.1, 0.4, 0.1, 0.4]), 3).tolist()
    [1, 3, 0]
    """
    return np.argsort(-probs, kind="stable")[:k]
