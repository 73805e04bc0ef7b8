"""What every causal language model shares, whatever its family (attn_models.gpt2, attn_models.llama): the prompt's
tokens (byte-level BPE through the ``tokenizers`` package, reading tokenizer.json), the next token at a temperature,
generation on a key/value cache (or the whole text at each step), which heads matter, and the results' dataclasses.

A family's model is a :class:`CausalModel` that adds its own forward pass: ``run`` (the blocks on token ids: the
residual stream and every attention), ``extend`` (the blocks on new tokens over a KVCache), ``final_norm`` (GPT-2's
ln_f, a Llama's norm), ``unembedding`` (the LM head's table: GPT-2's wte, a Llama's lm_head, tied or not),
``layer_config`` and ``output_bias``; ``forward``, the logits and the logit lens are computed here from those. Families
never import each other; both import this.

The logit lens (:meth:`CausalModel.logit_lens`) reads each layer's residual stream through the final norm and the
unembedding, as if the blocks after it were skipped: the next tokens the model would say after each layer. Its last
layer is the model's own logits, bit for bit: both are :meth:`CausalModel.logits` on the same rows.

Token labels: byte-level pieces ("Ġcat") are shown as the text they stand for (" cat"); a piece that is only white
space shows it (" " → "␣", a newline → "↵", a tab → "⇥"), and a piece that is part of a character's UTF-8 bytes
shows them (``\\xe4``), as a control character shows its byte (``\\x05``: a box on the screen otherwise).
:attr:`CausalEncoded.pieces` holds the exact text of each piece.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import numpy as np

from attn_core import LIMITS, Config
from attn_core import softmax as attn_softmax

from .errors import N_, ModelError
from .intervene import Intervention, cacheable, check_layer, each_head_off, owns
from .kv import KVCache
from .ops import block_logits, tied_logits, top_words
from .origin import Origin, Role, expect_role
from .pretrained import Pretrained
from .tokenizer import check_id

EOT = "<|endoftext|>"
#: positions whose logits one product with the vocabulary computes: a [64, vocab] float64 block, 25.7 MB at GPT-2's
#: 50,257 tokens (the whole text's [256, vocab] at once would be 103 MB); blocks end at the last position
LOGIT_ROWS = 64

# ---- what the API returns ----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CausalEncoded:
    """A prompt as the model reads it: ``tokens`` (labels, see the module's doc), ``pieces`` (each token's exact text),
    ``ids`` int [n_seq]."""

    tokens: tuple[str, ...]
    pieces: tuple[str, ...]
    ids: np.ndarray
    text: str | None = None


@dataclass(frozen=True, eq=False)
class CausalOutput:
    """:meth:`CausalLM.forward`'s result, named as transformers' GPT2LMHeadModel names it.

    tokens (labels), ids int [n_seq], logits [n_seq, vocab_size] (row i: the next token after token i),
    attentions [n_layers, n_heads, n_seq, n_seq] (row = query; causal: zero above the diagonal), hidden_states
    [n_layers + 1, n_seq, d_model] (each block's input, then ln_f of the last block's output, as transformers).
    """

    tokens: tuple[str, ...]
    ids: np.ndarray
    logits: np.ndarray
    attentions: np.ndarray
    hidden_states: np.ndarray


@dataclass(frozen=True, eq=False)
class NextToken:
    """The ``top_k`` most probable next tokens: labels, ids int [k], probs [k] (of softmax(logits / temperature) over
    the whole vocabulary; most probable first, a tie: the smaller id first)."""

    tokens: tuple[str, ...]
    ids: np.ndarray
    probs: np.ndarray
    temperature: float


@dataclass(frozen=True, eq=False)
class GenStep:
    """One generated token: its label, id, probability (under the temperature), the step's top tokens, and
    ``attention`` [n_layers, n_heads, n_ctx]: the attention row of the query that predicted it (the last position)
    over the n_ctx tokens before it."""

    token: str
    id: int
    prob: float
    top: NextToken
    attention: np.ndarray
    piece: str = ""


@dataclass(frozen=True, eq=False)
class Generation:
    """:meth:`CausalLM.generate`'s result: the prompt's tokens and the steps; ``stopped``: "length" (n_new tokens),
    "eot" (the model wrote <|endoftext|>, the last step) or "cap" (the context reached max_tokens)."""

    prompt_tokens: tuple[str, ...]
    steps: tuple[GenStep, ...]
    text: str
    stopped: str

    @property
    def ids(self) -> np.ndarray:
        return np.array([s.id for s in self.steps], dtype=np.intp)


@dataclass(frozen=True, eq=False)
class LogitLens:
    """:meth:`CausalModel.logit_lens`'s result: the most probable next tokens read from the residual stream after each
    layer, through the model's final norm and unembedding (temperature 1).

    Row l of each array: l = 0 the embeddings (the first block's input), l = 1 … n_layers the output of layer l − 1;
    the last row is the model's own next-token distribution.

    tokens : the prompt's labels; positions : int [P], the positions read (in order; the next token after each);
    ids : int [n_layers + 1, P, top], most probable first (a tie: the smaller id first); labels : their labels
    (``labels[l][p][j]``: piece_label of ids[l, p, j]); probs, logits : [n_layers + 1, P, top];
    final_ids : int [P], the model's own most probable next token at each position (ids[-1, :, 0]);
    final_probs : [n_layers + 1, P] and final_ranks : int [n_layers + 1, P], that token's probability and rank (1: the
    most probable; a tie ranked as the ids are) after each layer.
    """

    tokens: tuple[str, ...]
    positions: np.ndarray
    ids: np.ndarray
    labels: tuple[tuple[tuple[str, ...], ...], ...]
    probs: np.ndarray
    logits: np.ndarray
    final_ids: np.ndarray
    final_probs: np.ndarray
    final_ranks: np.ndarray

    @property
    def n_layers(self) -> int:
        return len(self.ids) - 1

    def first_top(self, column: int = -1) -> int:
        """The first row (0: the embeddings, l: after layer l − 1) from which the model's own top token at position
        ``positions[column]`` is the most probable at every later row too; the last row at the latest.

        >>> lens = LogitLens((), np.array([4]), np.zeros((4, 1, 1)), (), np.zeros((4, 1, 1)), np.zeros((4, 1, 1)),
        ...                  np.array([7]), np.zeros((4, 1)), np.array([[1], [3], [1], [1]]))
        >>> lens.first_top()
        2
        """
        ranks = self.final_ranks[:, column]  # int [n_layers + 1]
        later = np.flatnonzero(ranks != 1)
        return 0 if not len(later) else int(later[-1]) + 1


def piece_label(piece: str) -> str:
    """A token's text as an explorer label: white space alone made visible, at most LIMITS.token_chars characters.

    >>> piece_label(" cat"), piece_label(" "), piece_label("\\n\\n"), piece_label("\\\\xe4")
    (' cat', '␣', '↵↵', '\\\\xe4')

    A control character that is not white space (a byte 0x00 … 0x1f or 0x7f alone) shows as its byte, as bytes do:

    >>> piece_label("\\x05"), piece_label("a\\x7f")
    ('\\\\x05', 'a\\\\x7f')
    """
    label = piece if piece.strip() else piece.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥").replace(
        "\r", "⏎")
    label = "".join(f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" and not c.isspace() else c for c in label)
    if not label.strip():  # other white space (a no-break space, …): its code point
        label = "".join(f"U+{ord(c):04X}" for c in label)
    cap = LIMITS.token_chars
    return label if len(label) <= cap else label[: cap - 1] + "…"



# ---- the model -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CausalModel(Pretrained):
    """The base of each family's causal language model (attn_models.CausalLM for GPT-2, attn_models.LlamaLM): what
    they share (tokens, the next token, generation, which heads matter); the family adds its forward pass (see the
    module's text).

    name (the source), config, weights (the checkpoint's dtype), tokenizer (tokenizers.Tokenizer: byte-level BPE,
    no truncation, no padding), load_seconds.
    """

    config: object
    weights: object
    tokenizer: object
    load_seconds: float = 0.0
    role: ClassVar[Role] = "causal"  # what it does (attn_models.origin.Role): A model that writes reads it

    @property
    def eot_id(self) -> int | None:
        """The id of <|endoftext|> (None: the tokenizer has none)."""
        return self.tokenizer.token_to_id(EOT)

    # ---- tokens ---------------------------------------------------------------------------------------------------

    def piece(self, token_id: int) -> str:
        """The exact text of one token (bytes that are not a whole UTF-8 character: as ``\\xe4``)."""
        token = self.tokenizer.id_to_token(int(token_id))
        if token is None:
            return ""
        table = _byte_decoder()
        if all(c in table for c in token):
            return bytes(table[c] for c in token).decode("utf-8", errors="backslashreplace")
        return token

    def encode(self, prompt: str) -> CausalEncoded:
        """The prompt's byte-level BPE tokens (no length check here: :meth:`forward` checks)."""
        if not isinstance(prompt, str):
            raise ModelError(N_("The prompt must be text, got {kind}."), kind=type(prompt).__name__)
        ids = list(self.tokenizer.encode(prompt).ids)
        return self._encoded(ids, prompt)

    def _encoded(self, ids: Sequence[int], text: str | None = None) -> CausalEncoded:
        for i in ids:
            check_id(self.piece(i), i, self.config.vocab_size)
        pieces = tuple(self.piece(i) for i in ids)
        return CausalEncoded(tuple(piece_label(p) for p in pieces), pieces, np.array(ids, dtype=np.intp), text)

    def check_length(self, n_seq: int) -> None:
        """ModelError for an empty prompt, or more tokens than the app (n_seq cap) or the model's positions allow."""
        if n_seq < 1:
            raise ModelError(N_("The prompt is empty: type a few words for the model to continue."))
        cap = self.config.max_tokens
        if n_seq > cap and cap == LIMITS.n_seq:
            raise ModelError(N_("The text is {n} tokens; the cap of {most} (n_seq) allows {cap}. Shorten it."),
                             n=n_seq, most=LIMITS.n_seq, cap=cap)
        if n_seq > cap:
            raise ModelError(N_("The text is {n} tokens; the model's {positions} positions allow {cap}. Shorten it."),
                             n=n_seq, positions=self.config.max_positions, cap=cap)

    # ---- the forward pass ------------------------------------------------------------------------------------------

    # ---- what each family computes -------------------------------------------------------------------------------

    def run(self, ids: np.ndarray, *, intervention: Intervention | None = None, own: bool = True, start: int = 0,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The blocks ``start`` … on token ids: (residual stream [n_layers − start + 1, n_seq, d_model], attentions
        [n_layers − start, n_heads, n, n]); the family's."""
        raise NotImplementedError

    def extend(self, ids: np.ndarray, cache: KVCache, *,
               intervention: Intervention | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The blocks on new tokens over ``cache``: ([n_new, d_model], [n_layers, n_heads, n_new, past + n_new]);
        the family's."""
        raise NotImplementedError

    def final_norm(self, h: np.ndarray) -> np.ndarray:  # [n, d_model] -> [n, d_model], float64
        """The norm between the last block and the LM head (GPT-2's ln_f, a Llama's norm), row by row; the family's."""
        raise NotImplementedError

    @property
    def unembedding(self) -> np.ndarray:  # [vocab_size, d_model], the checkpoint's dtype
        """The LM head's table, one row per token (GPT-2's wte, tied; a Llama's lm_head, tied or its own); the
        family's."""
        raise NotImplementedError

    def forward(self, prompt: str, *, intervention: Intervention | None = None) -> CausalOutput:
        """The whole model on ``prompt`` (float64): logits (:meth:`logits`), every attention, hidden states (each
        block's input, then the final norm of the last block's output, as transformers)."""
        enc = self.encode(prompt)
        stream, attentions = self.run(enc.ids, intervention=intervention, own=own_prompt(intervention, prompt))
        last = self.final_norm(stream[-1])  # [n_seq, d_model]
        hidden = np.concatenate([stream[:-1], last[None]])  # [n_layers + 1, n_seq, d_model]
        return CausalOutput(enc.tokens, enc.ids, self.logits(last), attentions, hidden)

    def logits(self, normed: np.ndarray) -> np.ndarray:  # [n_seq, d_model] -> [n_seq, vocab]
        """The logits of every position from the final norm's output: the unembedding's products with
        :func:`logit_blocks`' blocks of positions (attn_models.ops.block_logits). A product's last bits depend on how
        many rows it has, so the logit lens computes the same blocks and its last row is these logits bit for bit."""
        return block_logits(normed, self.unembedding, logit_blocks(len(normed)))

    def _last_logits(self, stream_last: np.ndarray) -> np.ndarray:  # [n_seq, d_model] -> [vocab]
        """The LM head on the last position of the last block's output (one row: a generation's step)."""
        return tied_logits(self.final_norm(stream_last[-1:]), self.unembedding)[0]

    # ---- the logit lens ------------------------------------------------------------------------------------------

    def logit_lens(self, prompt: str, *, intervention: Intervention | None = None, top: int = 5,
                   positions: int | Sequence[int] | None = None) -> LogitLens:
        """The ``top`` most probable next tokens after each layer (the logit lens): each layer's residual stream
        through the final norm and the unembedding, softmax at temperature 1, at every position or those given
        (``positions``: one or several; −1 the last). The last row is the model's own: its logits are
        :meth:`forward`'s bit for bit (the same :meth:`logits` blocks). With ``intervention`` (heads switched off,
        an explorer configuration run back), the lens of the changed model.

        Bounded: never a [n_layers + 1, n_seq, vocab] array (50,257 × 7 × 256 × 8 bytes = 720 MB at distilgpt2's
        shape); one block of at most LOGIT_ROWS rows of logits (and its probabilities) at a time, only the top
        tokens kept (bench/lens.py measures it)."""
        self._check_sampling(1.0, top)
        enc = self.encode(prompt)
        stream, _ = self.run(enc.ids, intervention=intervention, own=own_prompt(intervention, prompt))
        where = self._positions(positions, len(enc.ids))  # int [P]
        top = int(top)
        n_rows, n_pos, d = len(stream), len(where), stream.shape[-1]
        ids = np.empty((n_rows, n_pos, top), dtype=np.intp)
        probs, logits = np.empty((n_rows, n_pos, top)), np.empty((n_rows, n_pos, top))
        final_probs, final_ranks = np.empty((n_rows, n_pos)), np.empty((n_rows, n_pos), dtype=np.intp)

        def keep(layer: int, column: int, row: np.ndarray, final: int | None) -> None:  # row: logits [vocab]
            p = temperature_probs(row, 1.0)  # [vocab]
            ids[layer, column] = top_words(p, top)
            probs[layer, column], logits[layer, column] = p[ids[layer, column]], row[ids[layer, column]]
            final = int(ids[layer, column, 0]) if final is None else final
            final_probs[layer, column], final_ranks[layer, column] = p[final], rank_of(p, final)

        last = self.final_norm(stream[-1])  # [n_seq, d_model]: the model's own, as forward
        for rows in logit_blocks(len(last)):  # the blocks of :meth:`logits` that hold a position asked for
            inside = np.flatnonzero((where >= rows.start) & (where < rows.stop))
            if len(inside):
                block = block_logits(last[rows], self.unembedding, [slice(0, rows.stop - rows.start)])  # [rows, vocab]
                for c in inside:
                    keep(n_rows - 1, int(c), block[where[c] - rows.start], None)
                del block  # one block of logits at a time
        finals = ids[-1, :, 0].copy()  # int [P]
        earlier = stream[:-1, where].reshape(-1, d)  # [n_layers · P, d_model], layer-major (no larger than the stream)
        for start in range(0, len(earlier), LOGIT_ROWS):
            normed = self.final_norm(earlier[start:start + LOGIT_ROWS])  # [≤ LOGIT_ROWS, d_model]
            block = tied_logits(normed, self.unembedding)  # [≤ LOGIT_ROWS, vocab]
            for i in range(len(block)):
                layer, column = divmod(start + i, n_pos)
                keep(layer, column, block[i], int(finals[column]))
            del block  # (no view of it kept either)
        labels = tuple(tuple(tuple(piece_label(self.piece(i)) for i in at) for at in layer) for layer in ids)
        return LogitLens(enc.tokens, where, ids, labels, probs, logits, finals, final_probs, final_ranks)

    def _positions(self, positions: int | Sequence[int] | None, n_seq: int) -> np.ndarray:  # -> int [P]
        """The positions a lens reads, in order without repeats (negative: from the end); ModelError for one outside
        the prompt."""
        if positions is None:
            return np.arange(n_seq)
        asked = [positions] if isinstance(positions, (int, np.integer)) else list(positions)
        if not asked:
            raise ModelError(N_("Choose at least one position to read."))
        for p in asked:
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not -n_seq <= p < n_seq:
                raise ModelError(N_("Position {position} is not in the prompt (positions 0 … {last})."),
                                 position=repr(p)[:40], last=n_seq - 1)
        return np.array(sorted({int(p) % n_seq for p in asked}), dtype=np.intp)

    def layer_config(self, prompt: str, layer: int, *, head: int = 0) -> Config:
        """Layer ``layer`` (or head ``head``) on ``prompt`` as an attn_core configuration; the family's."""
        raise NotImplementedError

    # ---- the next token, and generation --------------------------------------------------------------------------

    def next_token(self, prompt: str, *, temperature: float = 1.0, top_k: int = 10,
                   intervention: Intervention | None = None) -> NextToken:
        """The ``top_k`` most probable next tokens after ``prompt``: softmax(logits of the last position /
        temperature). Temperature above 1 flattens the distribution, below 1 sharpens it."""
        self._check_sampling(temperature, top_k)
        enc = self.encode(prompt)
        stream, _ = self.run(enc.ids, intervention=intervention, own=own_prompt(intervention, prompt))
        return self._top(self._last_logits(stream[-1]), temperature, top_k)[0]

    def probs(self, prompt: str, *, temperature: float = 1.0, intervention: Intervention | None = None) -> np.ndarray:
        """softmax(last logits / temperature) over the whole vocabulary [vocab_size]."""
        self._check_sampling(temperature, 1)
        stream, _ = self.run(self.encode(prompt).ids, intervention=intervention, own=own_prompt(intervention, prompt))
        return temperature_probs(self._last_logits(stream[-1]), temperature)

    def _top(self, logits: np.ndarray, temperature: float, top_k: int) -> tuple[NextToken, np.ndarray]:
        probs = temperature_probs(logits, temperature)  # [vocab]
        ids = top_words(probs, int(top_k))
        return NextToken(tuple(piece_label(self.piece(i)) for i in ids), ids, probs[ids], float(temperature)), probs

    def _check_sampling(self, temperature: float, top_k: int) -> None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not (
                math.isfinite(temperature) and temperature > 0):
            raise ModelError(N_("The temperature must be a number above 0, got {value}."), value=repr(temperature)[:40])
        vocab = self.config.vocab_size
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= vocab:
            raise ModelError(N_("top_k must be a whole number from 1 to {vocab}, got {top_k}."), vocab=vocab,
                             top_k=repr(top_k)[:40])

    def generate(self, prompt: str, n_new: int, *, sample: bool = False, temperature: float = 1.0, seed: int = 0,
                 top_k: int = 10, intervention: Intervention | None = None,
                 on_step: Callable[[int, GenStep], None] | None = None, cache: bool = True) -> Generation:
        """Up to ``n_new`` tokens after ``prompt``, one at a time: the most probable (``sample`` False: greedy, as
        transformers' ``do_sample=False``), or drawn from softmax(logits / temperature) with numpy's
        ``default_rng(seed)`` (the same seed, the same tokens). Stops after <|endoftext|> or when the context is
        full (max_tokens).

        With a key/value cache (attn_models.kv.KVCache, made here and dropped on return): the first step runs the
        prompt, each later one the new token alone over the keys and values kept (:meth:`extend`), every attention
        through attn_core; each step's logits and attention row are the whole text's to rounding (within 1e-12 in
        tests/models/test_kv_cache.py). It holds at most 2 · n_layers · n_ctx · d_model · 8 bytes (n_ctx: the prompt
        and the tokens written; 18.9 MB at distilgpt2's shape and 256 tokens, 2.6 MB for 20 after 16). ``cache``
        False, or an intervention a cache cannot keep exact (attn_models.intervene.cacheable: a head switched off by
        its mean over the text, which every new token changes at every earlier position; a configuration without a
        mask), reruns the whole forward pass on the context at every step instead (bench/gpt2.py measures both).

        ``intervention`` applies at every step; an explorer configuration's X belongs to the prompt (the first step:
        run whole, the cache then made on the prompt's own X), its weights apply to the longer context after (see
        attn_models.Intervention). ``on_step(i, step)``, if given, is called as step i is chosen (a page draws it as
        it comes; a server lets others compute meanwhile), with the step's intermediates already freed (the cache is
        kept); an exception it raises stops the generation.
        """
        self._check_sampling(temperature, top_k)
        if isinstance(n_new, bool) or not isinstance(n_new, (int, np.integer)) or not 1 <= n_new <= LIMITS.n_seq:
            raise ModelError(N_("The number of tokens to generate must be a whole number from 1 to {most}, got "
                                "{value}."), most=LIMITS.n_seq, value=repr(n_new)[:40])
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ModelError(N_("The seed must be a whole number of at least 0, got {value}."), value=repr(seed)[:40])
        enc = self.encode(prompt)
        self.check_length(len(enc.ids))
        iv = intervention or Intervention.NONE
        iv.check(self.n_layers, self.n_heads)
        rng = np.random.default_rng(int(seed))
        ids, steps, stopped = list(enc.ids), [], "length"
        if cache and cacheable(iv):
            step_rows = self._cached_steps(enc.ids, int(n_new), iv, own_prompt(intervention, prompt))
        else:
            step_rows = self._whole_steps(iv, own_prompt(intervention, prompt))
        for step in range(int(n_new)):
            if len(ids) >= self.config.max_tokens:
                stopped = "cap"
                break
            last, attention = step_rows(step, ids)  # [1, d_model], [n_layers, n_heads, n_ctx]
            top, probs = self._top(self._last_logits(last), temperature, top_k)
            new = int(rng.choice(len(probs), p=probs)) if sample else int(np.argmax(probs))
            piece = self.piece(new)
            steps.append(GenStep(piece_label(piece), new, float(probs[new]), top, attention, piece))
            del last, probs  # the step's intermediates ([vocab] probabilities): not held in on_step
            if on_step is not None:
                on_step(step, steps[-1])
            ids.append(new)
            if new == self.eot_id:
                stopped = "eot"
                break
        text = self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)
        return Generation(enc.tokens, tuple(steps), text, stopped)

    def _cached_steps(self, prompt_ids: np.ndarray, n_new: int, iv: Intervention,
                      own: bool) -> Callable[[int, list[int]], tuple[np.ndarray, np.ndarray]]:
        """A generation's step on one key/value cache: (the last block's output at the last position [1, d_model],
        its attention row [n_layers, n_heads, n_ctx]). Step 0 runs the prompt; a configuration opened on it (``own``)
        runs whole there on its own X, and the cache is made on the prompt's X, as every later step sees it."""
        kv = KVCache(min(len(prompt_ids) + n_new - 1, self.config.max_tokens))  # the tokens the steps feed

        def step_rows(step: int, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
            if step == 0 and own and iv.config is not None:
                stream, attentions = self.run(prompt_ids, intervention=iv, own=True)  # [L + 1, n, d], [L, H, n, n]
                if n_new > 1:
                    self.extend(prompt_ids, kv, intervention=iv)
                return stream[-1][-1:], attentions[:, :, -1, :].copy()
            new = prompt_ids if step == 0 else np.array(ids[-1:], dtype=np.intp)
            hidden, attentions = self.extend(new, kv, intervention=iv)  # [n_new, d_model], [L, H, n_new, n_ctx]
            return hidden[-1:], attentions[:, :, -1, :].copy()

        return step_rows

    def _whole_steps(self, iv: Intervention, own: bool) -> Callable[[int, list[int]], tuple[np.ndarray, np.ndarray]]:
        """A generation's step without a cache: the whole forward pass on the context (the first step on the prompt,
        ``own``: a configuration opened on it runs there on its own X), as :meth:`_cached_steps` returns it."""

        def step_rows(step: int, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
            stream, attentions = self.run(np.array(ids, dtype=np.intp), intervention=iv, own=step == 0 and own)
            return stream[-1][-1:], attentions[:, :, -1, :].copy()  # [L + 1, n, d] and [L, H, n, n] freed here

        return step_rows

    # ---- which heads matter, and one layer in the explorer -------------------------------------------------------

    def head_effects(self, prompt: str, token_id: int, *, how: str = "mean",
                     layers: Sequence[int] | None = None) -> np.ndarray:
        """The next-token probability of ``token_id`` (temperature 1) with each head switched off alone:
        [len(layers), n_heads] (every layer by default, rows in the order given). Each ablation in layer L reruns
        layers L and after only, from the model's own input to layer L."""
        vocab = self.config.vocab_size
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < vocab:
            raise ModelError(N_("Token id {id} is not in the vocabulary (ids 0 … {last})."), id=repr(token_id)[:40],
                             last=vocab - 1)
        rows = list(range(self.n_layers)) if layers is None else list(layers)
        for layer in rows:
            check_layer(layer, self.n_layers)
        Intervention(how=how)  # ModelError unless "mean" or "zero"
        ids = self.encode(prompt).ids
        clean = self.run(ids)[0]  # [n_layers + 1, n_seq, d_model]
        return each_head_off(rows, self.n_heads, how, lambda layer, iv: temperature_probs(self._last_logits(
            self.run(ids, intervention=iv, start=layer, hidden=clean[layer])[0][-1]), 1.0)[token_id])

    def config_for(self, origin: Origin) -> Config:
        """The configuration ``origin`` names (:meth:`layer_config` on its prompt, layer and head), as the model
        computes it; ModelError when it is another family's."""
        expect_role(self, origin.role)
        return self.layer_config(origin.sentence, origin.layer, head=origin.head)


def temperature_probs(logits: np.ndarray, temperature: float) -> np.ndarray:  # [vocab] -> [vocab]
    """softmax(logits / temperature) (attn_core.softmax: the largest subtracted first).

    >>> temperature_probs(np.array([0.0, np.log(3.0)]), 1.0).round(6).tolist()
    [0.25, 0.75]
    """
    return attn_softmax(logits / temperature)


def logit_blocks(n_seq: int) -> list[slice]:
    """The blocks of positions whose logits one product computes (:meth:`CausalModel.logits`): at most
    :data:`LOGIT_ROWS` each, the last ending at the last position (so the last positions share one block).

    >>> logit_blocks(150)
    [slice(0, 22, None), slice(22, 86, None), slice(86, 150, None)]
    >>> logit_blocks(5)
    [slice(0, 5, None)]
    """
    return [slice(max(0, end - LOGIT_ROWS), end) for end in range(n_seq, 0, -LOGIT_ROWS)][::-1]


def rank_of(probs: np.ndarray, token_id: int) -> int:  # [vocab] -> 1 …
    """The rank of ``token_id`` among ``probs`` (1: the most probable), ties ranked by id as
    attn_models.ops.top_words orders them.

    >>> rank_of(np.array([0.1, 0.4, 0.1, 0.4]), 3), rank_of(np.array([0.1, 0.4, 0.1, 0.4]), 2)
    (2, 4)
    """
    p = probs[token_id]
    return 1 + int(np.count_nonzero(probs > p)) + int(np.count_nonzero(probs[:token_id] == p))


def own_prompt(iv: Intervention | None, prompt: str) -> bool:
    """Whether ``iv``'s configuration (if any) was opened on ``prompt``: its X and mask are this prompt's."""
    return iv is None or iv.config is None or owns(iv.config, prompt, 0)


@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level symbol → byte (the printable bytes stand for themselves; the others are shifted to
    U+0100 …, as GPT-2's ``bytes_to_unicode``)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, shifted = {}, 0
    for b in range(256):
        if b in keep:
            table[chr(b)] = b
        else:
            table[chr(256 + shifted)] = b
            shifted += 1
    return table

