"""A key/value cache: the keys and values of the tokens a generation has run so far, so that each new token's queries
attend to them (attn_core.projected_multi_head_attention) instead of the whole text running again at every token.

A new token t changes nothing before it in a causal model: its query row over the keys and values of tokens 0 … t is
row t of the whole text's attention, and the keys and values of tokens 0 … t − 1 are the ones the steps before made.
So a step runs every layer on the new token's row alone, appending its keys and values (:meth:`KVCache.keys_values`).
A cross-attention's keys and values (T5's decoder reading the encoder's output) are made once.

One :class:`KVCache` lives for one call of CausalLM.generate or Translator.translate: made there, dropped when it
returns, never kept in a global or between calls.

>>> cache = KVCache(n_max=4)
>>> k, v = cache.keys_values("self", np.ones((3, 2)), np.eye(2), 2 * np.eye(2))   # the prompt: 3 positions
>>> cache.advance(3)
>>> k, v = cache.keys_values("self", np.zeros((1, 2)), np.eye(2), 2 * np.eye(2))  # one new token
>>> k.shape, v[-1].tolist(), cache.nbytes
((4, 2), [0.0, 0.0], 128)
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from .ops import product


@dataclass(eq=False)
class KVCache:
    """The keys and values of every attention of one generation, position by position; bounded by ``n_max``.

    One slot per attention and set of weights (the model's, or an explorer configuration's in the layer it replaces):
    K [n_max, width_k] and V [n_max, width_v] in float64, rows 0 … ``past`` − 1 filled. A step appends its positions'
    rows to every self-attention's slot it reads, then the model calls :meth:`advance`; a cross-attention's slot
    (``fixed``) holds its source's rows, made on its first step.

    Bytes (:attr:`nbytes`): each slot holds n_max rows of K and of V, 8 bytes a number; for a model whose heads are
    d_model wide together, 2 · n_layers · n_max · d_model · 8 in all: GPT-2 of distilgpt2's shape (6 layers × 768)
    at the app's 256 tokens 18.9 MB (at its 1,024 positions it would be 75.5 MB), 2.6 MB for 20 tokens written after
    a 16-token prompt (35 positions fed). An explorer configuration of a whole layer has its slot in place of the
    model's there (its widths within attn_core.LIMITS.width), one of one head adds that head's; T5 adds its
    cross-attentions' keys and values of the source (2 · n_decoder_layers · n_src · n_heads·d_kv · 8 bytes).

    Attributes
    ----------
    n_max : int
        The most positions a self-attention slot holds (the prompt and every token the call may write).
    past : int
        Positions whose keys and values every self-attention slot holds.
    """

    n_max: int
    past: int = 0
    _slots: dict[Hashable, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def keys_values(self, key: Hashable, x: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, *,
                    fixed: bool = False) -> tuple[np.ndarray, np.ndarray]:  # [n_new, d_in] -> [n_k, w_k], [n_k, w_v]
        """K and V of every position so far in slot ``key``, after x's rows: ``x @ w_k`` and ``x @ w_v``
        (attn_models.ops.product: the weights in any float dtype) written at positions ``past`` … (n_k = past +
        n_new). ``fixed`` (a cross-attention): ``x`` is the source, projected on the first call only (n_k = n_src).
        """
        if fixed:
            if key not in self._slots:
                self._slots[key] = (product(x, w_k), product(x, w_v))  # [n_src, w_k], [n_src, w_v]
            return self._slots[key]
        return self.append(key, product(x, w_k), product(x, w_v))

    def append(self, key: Hashable, k_new: np.ndarray,
               v_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # [n_new, w_k], [n_new, w_v] -> [n_k, ·] each
        """K and V of every position so far in slot ``key``, after the new positions' rows already made (a Llama's
        keys after RoPE, which :meth:`keys_values`' projection alone cannot give), written at ``past`` … ."""
        end = self.past + len(k_new)
        if end > self.n_max:
            raise ValueError(f"a key/value cache of {self.n_max} positions cannot take positions up to {end}")
        if key not in self._slots:
            if self.past:
                raise ValueError(f"slot {key!r} is new after {self.past} positions: it would miss their keys")
            self._slots[key] = (np.empty((self.n_max, k_new.shape[1])), np.empty((self.n_max, v_new.shape[1])))
        k, v = self._slots[key]  # [n_max, w_k], [n_max, w_v]
        k[self.past:end] = k_new
        v[self.past:end] = v_new
        return k[:end], v[:end]

    def advance(self, n_new: int) -> None:
        """The step's ``n_new`` positions are in every self-attention slot: the next step's start after them."""
        self.past += int(n_new)

    @property
    def nbytes(self) -> int:
        """Bytes of every slot's K and V (each self-attention slot at its n_max rows)."""
        return sum(k.nbytes + v.nbytes for k, v in self._slots.values())
