"""Where an explorer configuration came from: a model's layer (or one head of it), as a typed value.

A configuration a model makes (``Model.layer_config``, ``CausalLM.layer_config``, ``Translator.cross_config`` and
``self_config``) carries its origin as a small JSON object, ``attn_core.Config.origin`` (text and whole numbers), so
that a link or a file keeps it. Coming back from a link or a file it is untrusted input: :func:`parse_origin` reads
it into an :class:`Origin`, every field checked (its type, its range, and that it belongs to the family), or raises
:class:`OriginError` naming the field. The app reads a configuration's origin only through it.

The objects, as the families write them (links made since issue 30 read as they were):

- an encoder's layer (BERT, RoBERTa, XLM-R): ``model, layer, sentence, pad_to, head, bias_column``;
- a causal model's layer or head: ``family`` (its model_type: "gpt2", or a Llama family's "llama", "mistral",
  "qwen2"), ``model, layer, sentence, head, bias_column`` and, for a head opened
  alone, ``of_heads``; links made before carry ``pad_to: 0`` too;
- a T5's attention: ``model, layer, sentence, prefix, head, side`` ("encoder", "decoder" or "cross") and, for the
  decoder's two, ``target`` (the output ids before, as text: "3 17 9").

>>> o = parse_origin({"model": "org/m", "layer": 2, "sentence": "Hi", "pad_to": 0, "head": 1, "bias_column": 4})
>>> o.role, o.layer, o.head, o.as_dict() == {"model": "org/m", "layer": 2, "sentence": "Hi", "pad_to": 0,
...                                         "head": 1, "bias_column": 4}
('encoder', 2, 1, True)
>>> parse_origin({"model": "t/5", "layer": 0, "sentence": "Hi", "head": 0, "side": "cross", "target": "9" * 20})
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
attn_models.origin.OriginError: The configuration's origin is not one this app makes: target must be ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from attn_core import LIMITS, Phrase

from .access import looks_like_repo_id
from .errors import N_, ModelError
from .limits import MODEL_LIMITS

Role = Literal["encoder", "causal", "translator"]  # what a model does: which page reads it
Side = Literal["encoder", "decoder", "cross"]  # a T5's attention
SIDES = ("encoder", "decoder", "cross")
CAUSAL_FAMILIES = ("gpt2", "llama", "mistral", "qwen2")  # a causal origin's family: its model's model_type
MODEL_CHARS = 1_000  # the longest model name (a repo id, or the operator's folder)
SENTENCE_CHARS = 4_000  # as attn_core.config.ORIGIN_CHARS
PREFIX_CHARS = 200  # a T5's task prefix ("translate English to French: ")

#: the fields each kind of origin may have: (required, optional)
FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "encoder": (frozenset({"model", "layer", "sentence", "head"}), frozenset({"pad_to", "bias_column"})),
    "causal": (frozenset({"family", "model", "layer", "sentence", "head"}),
               frozenset({"bias_column", "of_heads", "pad_to"})),
    "translator": (frozenset({"model", "layer", "sentence", "head", "side"}), frozenset({"prefix", "target"})),
}


#: each role in words, as a message names a model's kind
ROLE_WORDS = {"encoder": N_("an encoder (BERT family)"),
              "causal": N_("a causal language model (GPT-2 or Llama family)"),
              "translator": N_("an encoder-decoder translator (T5)")}


class KindError(ModelError):
    """A model of another kind than the one asked for (a GPT-2 where an encoder is read): :func:`expect_role`."""


class OriginError(ModelError):
    """A configuration's origin that is not one this app makes (a hand-made link or file)."""


@dataclass(frozen=True)
class Origin:
    """A model's layer (or head) that a configuration is: what model, which layer and head, on which text.

    role : "encoder", "causal" or "translator"
        The family's kind: the page that reads the model (A real model, A model that writes, A model that
        translates).
    model : str
        The checkpoint it was read from: a Hub repo id, or a folder on the server (``Model.name``).
    layer, head : int
        The layer, and the head the learner opened (a GPT-2 head opened alone: the layer's head it is).
    sentence : str
        The text the layer ran on (a prompt; a T5's source sentence, without its prefix).
    pad_to : int
        An encoder's padding (0: none).
    bias_column : int or None
        X's constant-1 column (the bias feature), for the encoders and GPT-2.
    of_heads : int or None
        A GPT-2 head opened alone: how many heads its layer has.
    side : "encoder", "decoder", "cross" or None
        A T5's attention.
    prefix : str
        A T5's task prefix.
    target : tuple of int or None
        A T5 decoder's inputs after its start token: the output ids written before.
    """

    role: Role
    model: str
    layer: int
    head: int
    sentence: str
    pad_to: int = 0
    bias_column: int | None = None
    of_heads: int | None = None
    side: Side | None = None
    prefix: str = ""
    target: tuple[int, ...] | None = None
    family: str = "gpt2"  # a causal model's config.json model_type (:data:`CAUSAL_FAMILIES`)

    @property
    def runs_back(self) -> bool:
        """Whether its model's page runs edits of it back through the model: every layer of an encoder and a GPT-2,
        and a T5's cross-attention (its encoder's and decoder's self-attentions open in the explorer, not run back)."""
        return self.role != "translator" or self.side == "cross"

    def as_dict(self) -> dict[str, str | int]:
        """The JSON object a configuration keeps (:func:`parse_origin` reads it back to an equal Origin)."""
        out: dict[str, str | int] = {"model": self.model, "layer": self.layer, "sentence": self.sentence}
        if self.role == "causal":
            out["family"] = self.family
        if self.role == "encoder":
            out["pad_to"] = self.pad_to
        out["head"] = self.head
        if self.bias_column is not None:
            out["bias_column"] = self.bias_column
        if self.of_heads is not None:
            out["of_heads"] = self.of_heads
        if self.role == "translator":
            out |= {"prefix": self.prefix, "side": str(self.side)}
            if self.target is not None:
                out["target"] = " ".join(map(str, self.target))
        return out


def expect_role(model: object, role: Role) -> None:
    """ModelError unless ``model`` (any family's: it has ``role`` and ``name``) is of kind ``role``."""
    if (kind := getattr(model, "role", None)) != role:
        raise KindError(N_("{name} is {kind}, not {wanted}."), name=shown_name(str(getattr(model, "name", "?"))),
                         kind=ROLE_WORDS.get(kind, N_("another kind of model")), wanted=ROLE_WORDS[role])


def shown_name(source: str) -> str:
    """A model's name as a page shows it to a visitor: a Hub repo id as it is, a folder on the server by its last
    part only (the server's paths are not the visitor's business).

    >>> shown_name("sentence-transformers/all-MiniLM-L6-v2"), shown_name("/srv/models/gpt2/"), shown_name("~/m")
    ('sentence-transformers/all-MiniLM-L6-v2', 'gpt2', 'm')
    """
    if looks_like_repo_id(source):
        return source
    parts = [p for p in source.replace("\\", "/").split("/") if p not in ("", ".", "..", "~")]
    return parts[-1] if parts else "?"


def role_of(origin: dict) -> Role:
    """The kind of model an origin object names, by the fields its family writes (see the module's text)."""
    if "family" in origin:
        if origin["family"] not in CAUSAL_FAMILIES:
            raise _refused(N_("family must be {what}"), what=", ".join(CAUSAL_FAMILIES))
        return "causal"
    return "translator" if "side" in origin else "encoder"


def parse_origin(origin: object) -> Origin | None:
    """``origin`` (a Config's, None or a JSON object) as an :class:`Origin`, every field checked; None for None.

    Raises :class:`OriginError` (a ModelError) naming the first field that is missing, of the wrong type, out of
    range, or not one this kind of origin has.

    >>> parse_origin(None) is None
    True
    >>> parse_origin({"model": "m", "layer": 1, "sentence": "Hi", "head": 0, "side": "up"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attn_models.origin.OriginError: ...: side must be one of encoder, decoder, cross. Its numbers are kept; ...
    """
    if origin is None:
        return None
    if not isinstance(origin, dict):
        raise _refused(N_("it must be a JSON object"))
    role = role_of(origin)
    required, optional = FIELDS[role]
    if missing := sorted(required - origin.keys()):
        raise _refused(N_("{field} is missing"), field=missing[0])
    if extra := sorted(origin.keys() - required - optional):
        raise _refused(N_("{field} is not part of such an origin"), field=str(extra[0])[:40])
    model = _text(origin, "model", MODEL_CHARS, least=1)
    layer = _whole(origin, "layer", 0, max(MODEL_LIMITS.n_layers, MODEL_LIMITS.causal_layers) - 1)
    head = _whole(origin, "head", 0, LIMITS.n_heads - 1)
    sentence = _text(origin, "sentence", SENTENCE_CHARS)
    bias_column = _whole(origin, "bias_column", 1, LIMITS.d_model - 1) if "bias_column" in origin else None
    if role == "encoder":
        return Origin(role, model, layer, head, sentence, pad_to=_whole(origin, "pad_to", 0, LIMITS.n_seq, 0),
                      bias_column=bias_column)
    if role == "causal":
        _whole(origin, "pad_to", 0, 0, 0)  # links made before issue 40 carry 0 (BERT's field): nothing else
        of_heads = _whole(origin, "of_heads", 2, LIMITS.n_heads) if "of_heads" in origin else None
        if of_heads is not None and head >= of_heads:
            raise _refused(N_("head must be below of_heads ({n})"), n=of_heads)
        return Origin(role, model, layer, head, sentence, bias_column=bias_column, of_heads=of_heads,
                      family=origin["family"])
    side = origin["side"]
    if side not in SIDES:
        raise _refused(N_("side must be one of {sides}"), sides=", ".join(SIDES))
    target = _ids(origin["target"]) if "target" in origin else None
    if (target is None) != (side == "encoder"):
        raise _refused(N_("target is for the decoder's attentions (side decoder or cross) only, and they need it"))
    return Origin(role, model, layer, head, sentence, side=side, prefix=_text(origin, "prefix", PREFIX_CHARS, 0, ""),
                  target=target)


def _refused(why: str, **values: object) -> OriginError:
    return OriginError(N_("The configuration's origin is not one this app makes: {why}. Its numbers are kept; "
                          "open the layer again on its model's page to work with the model."),
                       why=Phrase(why, **values))


def _whole(origin: dict, field: str, least: int, most: int, default: int | None = None) -> int:
    value = origin.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise _refused(N_("{field} must be a whole number from {least} to {most}"), field=field, least=least,
                       most=most)
    return value


def _text(origin: dict, field: str, most: int, least: int = 0, default: str | None = None) -> str:
    value = origin.get(field, default)
    if not isinstance(value, str) or not least <= len(value) <= most:
        raise _refused(N_("{field} must be a text of {least} to {most} characters"), field=field, least=least,
                       most=most)
    return value


def _ids(text: object) -> tuple[int, ...]:
    """A T5 origin's target: token ids written as text, "3 17 9" ([] for "")."""
    words = text.split() if isinstance(text, str) else None
    if (words is None or len(words) > LIMITS.n_seq - 1  # the decoder reads its start token before them
            or not all(w.isascii() and w.isdigit() and len(w) <= 7 and int(w) < MODEL_LIMITS.vocab_size
                       for w in words)):
        raise _refused(N_("target must be at most {n} token ids from 0 to {last}, as text with spaces between"),
                       n=LIMITS.n_seq - 1, last=MODEL_LIMITS.vocab_size - 1)
    return tuple(int(w) for w in words)
