"""A loaded BERT-family model: its tokenizer, its forward pass, and one layer as an explorer configuration."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attn_core import LIMITS, Config, make_config

from .access import DEFAULT_MODEL, Access
from .checkpoint import (
    BertConfig,
    Embeddings,
    check_id,
    read_config,
    read_tokenizer,
    read_weights,
)
from .encoder import EncoderOutput, LayerWeights, encode, layer_norm, with_bias_column
from .errors import N_, ModelError
from .hub import Progress, checkpoint_files, reading
from .intervene import Intervention, edits_refused, layer_step, owns
from .mlm import MASK, MaskFill, MlmHead, mlm_probs, top_words
from .origin import Origin, Role, expect_role

CLS, SEP, PAD = "[CLS]", "[SEP]", "[PAD]"  # BERT's; a model's own are its config's specials (RoBERTa: <s> </s> <pad>)


@dataclass(frozen=True, eq=False)
class Encoded:
    """A sentence as the model reads it: tokens, their ids, token types and which are padding (length n_seq)."""

    tokens: tuple[str, ...]
    ids: np.ndarray  # int [n_seq]
    type_ids: np.ndarray  # int [n_seq]
    is_pad: np.ndarray  # bool [n_seq]
    text: str | None = None  # the sentence, and the padding asked for (an Intervention's configuration is
    pad_to: int = 0  # one sentence's: attn_models.intervene.owns)


@dataclass(frozen=True, eq=False)
class Model:
    """A BERT-family encoder in float64 numpy (see :func:`load`).

    Attributes
    ----------
    name : str
        The source it was loaded from (a Hub repo id or a folder).
    config : BertConfig
    embeddings : Embeddings
    layers : tuple of LayerWeights, one per layer
    tokenizer : tokenizers.Tokenizer
        WordPiece, no truncation and no padding (the caps are checked here instead).
    load_seconds : float
        How long reading the files took.
    mlm : MlmHead or None
        The masked-language-model head (BertForMaskedLM's ``cls.predictions``) when the checkpoint has one.
    """

    name: str
    config: BertConfig
    embeddings: Embeddings
    layers: tuple[LayerWeights, ...]
    tokenizer: object
    load_seconds: float = 0.0
    mlm: MlmHead | None = None
    role: ClassVar[Role] = "encoder"  # what it does (attn_models.origin.Role): A real model reads it

    @property
    def n_layers(self) -> int:
        return self.config.n_layers

    @property
    def n_heads(self) -> int:
        return self.config.n_heads

    @property
    def has_mlm(self) -> bool:
        """Whether the checkpoint has a masked-LM head: :meth:`fill_mask` works."""
        return self.mlm is not None

    # ---- tokens -------------------------------------------------------------------------------------------

    def encode(self, text: str, pad_to: int | None = None) -> Encoded:
        """The sentence's tokens with the family's first and last tokens (BERT: WordPiece, ``[CLS]`` and ``[SEP]``;
        XLM-RoBERTa: sentencepiece, ``<s>`` and ``</s>``), then padding (``[PAD]``, ``<pad>``) up to ``pad_to`` tokens.
        RoBERTa's token types are all 0 (it has one).

        No length check here (:meth:`forward` checks): a page can show how long a sentence is.
        """
        if not isinstance(text, str):
            raise ModelError(N_("The sentence must be text, got {kind}."), kind=type(text).__name__)
        cls, sep, pad = self.config.specials
        enc = self.tokenizer.encode(text)
        tokens, ids, types = list(enc.tokens), list(enc.ids), list(enc.type_ids)
        if not tokens or tokens[0] != cls:  # a tokenizer.json without the family's post-processor
            tokens, ids, types = [cls, *tokens, sep], [self._id(cls), *ids, self._id(sep)], [0, *types, 0]
        if self.config.family == "roberta":
            types = [0] * len(tokens)
            # the vocabulary's piece for each id: sentencepiece's unknown character shows as <unk> (what the model
            # reads), not as the character itself
            tokens = [self.tokenizer.id_to_token(i) or t for t, i in zip(tokens, ids, strict=True)]
            pad_id = self.config.pad_id  # config.json's pad_token_id: what transformers' positions are counted from
            pad = self.tokenizer.id_to_token(pad_id) or pad
        else:
            pad_id = self._id(pad)
        n_pad = max(0, (pad_to or 0) - len(tokens))
        if n_pad:
            tokens, ids, types = tokens + [pad] * n_pad, ids + [pad_id] * n_pad, types + [0] * n_pad
        for token, i in zip(tokens, ids, strict=True):  # a post-processor's ids are not in the vocabulary read at load
            check_id(token, i, self.config)
        is_pad = np.arange(len(tokens)) >= len(tokens) - n_pad
        return Encoded(tuple(tokens), np.array(ids, dtype=np.intp), np.array(types, dtype=np.intp), is_pad, text,
                       int(pad_to or 0))

    def _id(self, token: str) -> int:
        i = self.tokenizer.token_to_id(token)
        if i is None:
            raise ModelError(N_("The tokenizer has no {token} token; is it a BERT tokenizer?"), token=token)
        return i

    def tokenize(self, text: str, pad_to: int | None = None) -> list[str]:
        """The tokens the model reads: BERT's WordPiece ``[CLS]``, the sentence (``##`` pieces, ``[UNK]``), ``[SEP]``;
        XLM-RoBERTa's ``<s>``, sentencepiece pieces (``▁`` starts a word), ``</s>``.

        ``pad_to``: append padding tokens up to that many tokens.
        """
        return list(self.encode(text, pad_to).tokens)

    def check_length(self, n_seq: int) -> None:
        """ModelError when ``n_seq`` tokens are more than the app (n_seq cap) or the model's positions allow."""
        cap = self.config.max_tokens
        if self.config.family != "bert" and n_seq > cap:
            first, last, _ = self.config.specials
            raise ModelError(N_("The sentence is {n} tokens with {first} and {last}; at most {cap} fit (the cap of "
                                "{most} (n_seq), and the model's {positions} positions). Shorten it."), n=n_seq,
                             first=first, last=last, cap=cap, most=LIMITS.n_seq,
                             positions=self.config.max_positions)
        if n_seq > cap and cap == LIMITS.n_seq:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the cap of {most} (n_seq) "
                                "allows {cap}. Shorten it."), n=n_seq, most=LIMITS.n_seq, cap=cap)
        if n_seq > cap:
            raise ModelError(N_("The sentence is {n} WordPiece tokens with [CLS] and [SEP]; the model's {positions} "
                                "positions allow {cap}. Shorten it."), n=n_seq, positions=self.config.max_positions,
                             cap=cap)

    # ---- the forward pass ------------------------------------------------------------------------------------

    def embed(self, enc: Encoded) -> np.ndarray:  # -> [n_seq, d_model]
        """LayerNorm(word + token type + position embeddings), in float64: only the sentence's rows of the word
        embedding are read (its table stays memory-mapped in the checkpoint's dtype)."""
        e = self.embeddings
        x = np.asarray(e.word[enc.ids], dtype=np.float64) + e.token_type[enc.type_ids]  # [n_seq, d_model]
        x = x + e.position[self.positions(enc.ids)]
        return layer_norm(x, e.ln_g, e.ln_b, self.config.eps)

    def positions(self, ids: np.ndarray) -> np.ndarray:  # int [n_seq] -> int [n_seq]
        """Each token's position id. BERT: 0, 1, 2, … RoBERTa: as transformers' create_position_ids_from_input_ids,
        pad_id + 1, pad_id + 2, … for every token whose id is not pad_id (counting those only), pad_id for those."""
        if self.config.family != "roberta":
            return np.arange(len(ids))
        real = (np.asarray(ids) != self.config.pad_id).astype(np.intp)
        return np.cumsum(real) * real + self.config.pad_id

    def run(self, enc: Encoded, layers: int | None = None, *, intervention: Intervention | None = None,
            start: int = 0, hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(hidden_states, attentions) of layers ``start`` … k − 1 (the first k = ``layers`` layers, default all).

        Returns ``hidden_states`` [k − start + 1, n_seq, d_model] (layer ``start``'s input first) and ``attentions``
        [k − start, n_heads, n_seq, n_seq]; with ``start`` 0, every layer's as :meth:`forward` names them.

        ``intervention``: heads switched off, a layer replaced by the explorer's configuration (see
        :class:`attn_models.Intervention`); None or ``Intervention.NONE``: the model as trained, bit for bit.
        ``hidden``: layer ``start``'s input [n_seq, d_model] (``hidden_states[start]``) when already computed, taken
        as it is (with whatever the intervention changed before ``start``); else it is computed here. So a change in
        layer L reruns only layers L and after: ``run(enc, intervention=iv, start=L, hidden=clean[L])``.
        """
        self.check_length(len(enc.tokens))
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        end = self.n_layers if layers is None else len(self.layers[:layers])
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start <= end:
            raise ModelError(N_("A run starts at a layer 0 … {last}, got {start}."), last=end, start=repr(start))
        if hidden is None:
            hidden = self.embed(enc) if start == 0 else self.run(enc, start, intervention=iv)[0][start]
        own = iv.config is not None and owns(iv.config, enc.text, enc.pad_to)
        steps = [layer_step(iv, i, self.layers[i], self.n_heads, enc.is_pad, own) for i in range(start, end)]
        with edits_refused(iv):
            return encode(hidden, self.layers[start:end], self.n_heads, enc.is_pad, self.config.eps,
                          steps if any(steps) else ())

    def forward(self, text: str, pad_to: int | None = None, *,
                intervention: Intervention | None = None) -> EncoderOutput:
        """The whole encoder on one sentence (float64); ``attentions`` and ``hidden_states`` as transformers names them.

        ``intervention``: run with heads switched off or a layer replaced (see :class:`attn_models.Intervention`);
        None: the model as trained.

        Raises ModelError for a sentence longer than the caps allow, or an intervention that does not fit.
        """
        enc = self.encode(text, pad_to)
        hidden, attentions = self.run(enc, intervention=intervention)
        return EncoderOutput(enc.tokens, attentions, hidden, enc.is_pad)

    # ---- what the model does: sentence embeddings, fill-in-the-blank, which heads matter ---------------------------

    def embed_sentences(self, texts: Sequence[str], *, intervention: Intervention | None = None) -> np.ndarray:
        """Sentence embeddings [n, d_model], as sentence-transformers computes them (what all-MiniLM-L6-v2 was
        trained for): the last hidden state averaged over the sentence's tokens ([CLS] and [SEP] included, no
        padding), then scaled to length 1. Compare them with :func:`cosine_similarities`.

        ``intervention`` applies to every sentence (an explorer configuration's X to its own sentence only: see
        :class:`attn_models.Intervention`).
        """
        encs = self._encode_all(texts)
        return np.stack([pool(self.run(enc, intervention=intervention)[0][-1], enc.is_pad) for enc in encs])

    def mask_probs(self, text: str, *, intervention: Intervention | None = None) -> np.ndarray:
        """Every vocabulary word's probability at each ``[MASK]`` of ``text``, in order: [n_masks, vocab_size].

        Raises ModelError when the model has no masked-LM head, or the sentence has no [MASK].
        """
        enc, positions = self._masks(text)
        last = self.run(enc, intervention=intervention)[0][-1]  # [n_seq, d_model]
        return mlm_probs(last[positions], self.mlm, self.embeddings.word, self.config.eps)

    def fill_mask(self, text: str, *, top_k: int = 5, intervention: Intervention | None = None) -> tuple[MaskFill, ...]:
        """The ``top_k`` most probable tokens at each ``[MASK]`` of ``text``, in order (BertForMaskedLM's
        fill-in-the-blank, in float64).

        Raises ModelError when the model has no masked-LM head, the sentence has no [MASK], or ``top_k`` is not a
        whole number from 1 to the vocabulary's size.
        """
        vocab = self.config.vocab_size
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= vocab:
            raise ModelError(N_("top_k must be a whole number from 1 to {vocab}, got {top_k}."), vocab=vocab,
                             top_k=repr(top_k)[:40])
        _, positions = self._masks(text)
        fills = []
        for position, probs in zip(positions, self.mask_probs(text, intervention=intervention), strict=True):
            ids = top_words(probs, int(top_k))
            fills.append(MaskFill(int(position), tuple(self.tokenizer.id_to_token(int(i)) for i in ids), probs[ids],
                                  ids))
        return tuple(fills)

    def head_effects(self, texts: Sequence[str], measure: Callable[[np.ndarray], float], *, how: str = "mean",
                     layers: Sequence[int] | None = None) -> np.ndarray:
        """``measure(embeddings)`` with each head switched off alone: [len(layers), n_heads] (all layers by default,
        rows in the order given); ``embeddings`` are :meth:`embed_sentences` of ``texts`` with that head ablated
        (``how``: "mean" or "zero", see :class:`attn_models.Intervention`).

        Each ablation in layer L reruns layers L and after only, from the model's own input to layer L.

        >>> sim = model.head_effects(["A cat.", "A dog."], lambda e: float(e[0] @ e[1]))  # doctest: +SKIP
        """
        encs = self._encode_all(texts)
        return self._scan(encs, how, layers, lambda last: float(measure(
            np.stack([pool(h, enc.is_pad) for h, enc in zip(last, encs, strict=True)]))))

    def similarity_effects(self, texts: Sequence[str], pair: tuple[int, int] = (0, 1), *, how: str = "mean",
                           layers: Sequence[int] | None = None) -> np.ndarray:
        """The cosine similarity of sentences ``pair`` with each head switched off alone: [len(layers), n_heads]
        (see :meth:`head_effects`)."""
        i, j = pair
        n = len(texts)
        if not (-n <= i < n and -n <= j < n):
            raise ModelError(N_("The pair {pair} names a sentence that is not among the {n} given."), pair=str(pair),
                             n=n)
        return self.head_effects(texts, lambda e: float(e[i] @ e[j]), how=how, layers=layers)

    def mask_effects(self, text: str, token_id: int, *, mask: int = 0, how: str = "mean",
                     layers: Sequence[int] | None = None) -> np.ndarray:
        """The probability of token ``token_id`` at ``text``'s ``mask``-th [MASK] with each head switched off alone:
        [len(layers), n_heads] (see :meth:`head_effects`)."""
        enc, positions = self._masks(text)
        vocab = self.config.vocab_size
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < vocab:
            raise ModelError(N_("Token id {id} is not in the vocabulary (ids 0 … {last})."), id=repr(token_id)[:40],
                             last=vocab - 1)
        if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or not 0 <= mask < len(positions):
            raise ModelError(N_("The sentence has {n} [MASK] tokens; there is no number {mask} (counted from 0)."),
                             n=len(positions), mask=repr(mask)[:40])
        at = positions[mask]
        return self._scan([enc], how, layers, lambda last: float(
            mlm_probs(last[0][at:at + 1], self.mlm, self.embeddings.word, self.config.eps)[0, token_id]))

    def _scan(self, encs: list[Encoded], how: str, layers: Sequence[int] | None,
              measure: Callable[[list[np.ndarray]], float]) -> np.ndarray:
        """``measure(last hidden state of each sentence)`` with each head of ``layers`` switched off alone."""
        rows = list(range(self.n_layers)) if layers is None else list(layers)
        for layer in rows:
            if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
                raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."),
                                 layer=repr(layer)[:40], last=self.n_layers - 1)
        Intervention(how=how)  # ModelError unless "mean" or "zero"
        clean = [self.run(enc)[0] for enc in encs]  # [n_layers + 1, n_seq, d_model] each
        effects = np.empty((len(rows), self.n_heads))  # [len(layers), n_heads]
        for r, layer in enumerate(rows):
            for h in range(self.n_heads):
                iv = Intervention(ablate={(layer, h)}, how=how)
                last = [self.run(enc, intervention=iv, start=layer, hidden=hs[layer])[0][-1]
                        for enc, hs in zip(encs, clean, strict=True)]
                effects[r, h] = measure(last)
        return effects

    def _encode_all(self, texts: Sequence[str]) -> list[Encoded]:
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ModelError(N_("Give a list of sentences (at least one)."))
        return [self.encode(t) for t in texts]

    def _masks(self, text: str) -> tuple[Encoded, np.ndarray]:  # -> the sentence, int [n_masks] its [MASK] positions
        if self.mlm is None:
            raise ModelError(N_("{name} has no masked-language-model head (a BertForMaskedLM's cls.predictions "
                                "weights): it cannot fill in a [MASK]. Load a BERT masked-LM checkpoint."),
                             name=self.name)
        enc = self.encode(text)
        positions = np.flatnonzero(enc.ids == self._id(MASK))  # [n_masks]
        if not len(positions):
            raise ModelError(N_("The sentence has no [MASK]: write [MASK] where the model should fill in a word."))
        return enc, positions

    # ---- one layer in the explorer -------------------------------------------------------------------------------

    def layer_config(self, text: str, layer: int, pad_to: int | None = None, *, head: int = 0,
                     hidden: np.ndarray | None = None) -> Config:
        """Layer ``layer``'s self-attention on ``text`` as an attn_core configuration.

        X is the layer's input (``hidden_states[layer]``) with a constant-1 column appended (column d_model: the
        bias feature); W_Q, W_K, W_V are the projections (transposed) with their bias as the last row; W_O the
        attention output weights (its bias b_O is not part of attention: ``run(cfg).output + b_O`` is the model's
        attention output); the model's n_heads; scaled by √d_k; a padding mask when there is padding.
        ``run(cfg)`` gives this layer's attention weights, head by head, bit for bit as :meth:`forward`.
        ``origin`` records the model, layer, sentence, padding and ``head`` (the head the learner opened).

        ``hidden``: this sentence's ``hidden_states[layer]`` when already computed (else it is computed here).
        """
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
            raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=layer,
                             last=self.n_layers - 1)
        enc = self.encode(text, pad_to)
        if hidden is None:
            hidden = self.run(enc, layers=int(layer))[0][layer]  # [n_seq, d_model]
        w = self.layers[layer]
        padded = bool(enc.is_pad.any())
        return make_config(
            [token_label(t) for t in enc.tokens], with_bias_column(hidden), w.w_q, w.w_k, w.w_v, w.w_o,
            n_heads=self.n_heads, scale="sqrt_dk", mask_kind="padding" if padded else "none",
            is_pad=tuple(bool(p) for p in enc.is_pad),
            origin=Origin("encoder", self.name, int(layer), int(head), text, pad_to=int(pad_to or 0),
                          bias_column=self.config.d_model).as_dict(),
        )

    def config_for(self, origin: Origin) -> Config:
        """The configuration ``origin`` names (:meth:`layer_config` on its sentence, padding, layer and head), as the
        model computes it; ModelError when it is another family's."""
        expect_role(self, origin.role)
        return self.layer_config(origin.sentence, origin.layer, origin.pad_to or None, head=origin.head)

    def output_bias(self, layer: int) -> np.ndarray:  # -> [d_model]
        """b_O of layer ``layer``: the model's attention output is ``concat @ W_O + b_O``."""
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
            raise ModelError(N_("Layer {layer} does not exist: the model has layers 0 … {last}."), layer=layer,
                             last=self.n_layers - 1)
        return self.layers[layer].b_o


def pool(last: np.ndarray, is_pad: np.ndarray) -> np.ndarray:  # [n_seq, d_model], bool [n_seq] -> [d_model]
    """A sentence embedding as sentence-transformers makes it: the mean of the real tokens' rows, scaled to length 1
    (a length under 1e-12 is taken as 1e-12, as torch's ``F.normalize``).

    >>> pool(np.array([[3.0, 0.0], [1.0, 2.0], [9.0, 9.0]]), np.array([False, False, True])).tolist()
    [0.8944271909999159, 0.4472135954999579]
    """
    real = ~np.asarray(is_pad, dtype=bool)
    mean = last[real].sum(axis=0) / max(int(real.sum()), 1e-9)  # [d_model]
    return mean / max(float(np.sqrt(mean @ mean)), 1e-12)


def cosine_similarities(emb: np.ndarray) -> np.ndarray:  # [n, d] -> [n, n]
    """The cosine similarity of every pair of rows (each row scaled to length 1 first, a length under 1e-12 taken as
    1e-12: sentence-transformers' ``util.cos_sim``).

    >>> cosine_similarities(np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
    [[1.0, 0.7071], [0.7071, 1.0]]
    """
    e = np.asarray(emb, dtype=np.float64)  # [n, d]
    unit = e / np.maximum(np.sqrt(np.einsum("ij,ij->i", e, e)), 1e-12)[:, None]
    return unit @ unit.T


def token_label(token: str) -> str:
    """A token as an explorer label (labels are at most LIMITS.token_chars characters).

    >>> token_label("##ing"), len(token_label("x" * 100))
    ('##ing', 40)
    """
    cap = LIMITS.token_chars
    return token if len(token) <= cap else token[: cap - 1] + "…"


def load_encoder(source: str = DEFAULT_MODEL, *, cache_dir: str | Path | None = None,
                 progress: Progress | None = None, access: Access | None = None, local_only: bool = False) -> Model:
    """Read a BERT-family encoder (``config.json``, ``model.safetensors``, ``tokenizer.json``): BERT, RoBERTa,
    XLM-RoBERTa. :func:`attn_models.load` reads any family the app runs.

    Parameters
    ----------
    source : str
        A folder on this machine, or a Hugging Face Hub repo id. A repo's files come from huggingface_hub's cache;
        what is missing is downloaded into it (not with ``HF_HUB_OFFLINE=1``).
    cache_dir : path, optional
        Another Hub cache than the standard one.
    progress : callable, optional
        ``progress(file name, bytes done, bytes in all or None)`` while a file downloads.
    access : Access, optional
        What may be loaded (attn_models.Access; default: anything within the caps).
    local_only : bool
        Never download: a repo not in the cache raises NotFetchedError.

    Raises
    ------
    ModelUnavailableError
        Not on this machine and not downloadable (offline, no network).
    NotFetchedError
        ``local_only`` and the repo is not in the cache.
    ModelError
        Not a BERT-family checkpoint, over the app's caps (the message names the file or field and the cap),
        malformed (the message names the file), or only a pickle. A repo the app downloaded is then removed from
        the cache.
    """
    start = time.perf_counter()
    files = checkpoint_files(source, cache_dir=cache_dir, progress=progress, check_config=read_config,
                             access=access, local_only=local_only)
    with reading(files, cache_dir):  # a refused download is removed, a read one marked as used
        cfg = read_config(files.config)
        embeddings, layers, mlm = read_weights(files.weights, cfg)
        tokenizer = read_tokenizer(files.tokenizer, cfg)
    return Model(files.source, cfg, embeddings, layers, tokenizer, time.perf_counter() - start, mlm)
