"""A tiny random BERT checkpoint, made here (no download): config.json, model.safetensors, tokenizer.json (or, by
:func:`vocab_only`, vocab.txt in its place).

Used by tests/models (the loader, the forward pass, layer_config, the Hub cache) and tests/app (the A real model
page on a checkpoint that needs no network). The vocabulary is a few words and ## pieces, so ``##`` pieces and
``[UNK]`` both occur; the weights are random float32 (as real checkpoints store them). :func:`write_mlm` writes a
masked-language model (BertForMaskedLM's names: "bert." before the encoder's, the ``cls.predictions`` head), for
fill-in-the-blank; the tokenizer keeps ``[MASK]`` whole (a special token, as in BERT's tokenizer.json).
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "it", "was", "tired", "because", "token", "##s", "##ize",
         "##r", "##ing", "play", "run", ".", ",", "!", "?"]
VOCAB = SPECIALS + WORDS
SENTENCE = "The cat sat on the mat."
MASKED = ("The cat sat on the [MASK].", "The [MASK] sat on a [MASK]!")  # one [MASK], and two
TRICKY = "Tokenizers playing zyx!"  # token ##ize ##r ##s, play ##ing, [UNK], !
CONFIG = {"model_type": "bert", "architectures": ["BertModel"], "num_hidden_layers": 2, "num_attention_heads": 4,
          "hidden_size": 16, "intermediate_size": 24, "vocab_size": len(VOCAB), "max_position_embeddings": 40,
          "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 0}


def tokenizer_json() -> str:
    """A BERT WordPiece tokenizer over VOCAB, as tokenizer.json text (made with the tokenizers package)."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    tok = Tokenizer(WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB.index("[CLS]")), ("[SEP]", VOCAB.index("[SEP]"))])
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(SPECIALS)  # matched whole, before the normaliser: "[MASK]" stays one token
    tok.enable_truncation(8)  # as real tokenizer.json files carry: the loader must switch these off
    tok.enable_padding(length=12)
    return tok.to_str()


def weights(config: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 tensors under BERT's names (no "bert." prefix, as all-MiniLM-L6-v2)."""
    rng = np.random.default_rng(seed)
    d, ff = config["hidden_size"], config["intermediate_size"]

    def r(*shape: int, scale: float = 0.4) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {
        "embeddings.word_embeddings.weight": r(config["vocab_size"], d, scale=1.0),
        "embeddings.position_embeddings.weight": r(config["max_position_embeddings"], d, scale=0.5),
        "embeddings.token_type_embeddings.weight": r(config["type_vocab_size"], d, scale=0.5),
        "embeddings.LayerNorm.weight": 1 + r(d, scale=0.1), "embeddings.LayerNorm.bias": r(d, scale=0.1),
        "embeddings.position_ids": np.arange(config["max_position_embeddings"], dtype=np.int64)[None],
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            t[f"{p}.{name}.weight"], t[f"{p}.{name}.bias"] = r(d, d), r(d, scale=0.2)
        t[f"{p}.intermediate.dense.weight"], t[f"{p}.intermediate.dense.bias"] = r(ff, d), r(ff, scale=0.2)
        t[f"{p}.output.dense.weight"], t[f"{p}.output.dense.bias"] = r(d, ff), r(d, scale=0.2)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[f"{p}.{name}.weight"], t[f"{p}.{name}.bias"] = 1 + r(d, scale=0.1), r(d, scale=0.1)
    return t


def mlm_weights(config: dict, seed: int = 1, own_decoder: bool = False) -> dict[str, np.ndarray]:
    """BertForMaskedLM's head (``cls.predictions``), random float32; its decoder tied to the word embeddings (not in
    the file) unless ``own_decoder`` (then its weight and bias are in the file)."""
    rng = np.random.default_rng(seed)
    d, vocab = config["hidden_size"], config["vocab_size"]

    def r(*shape: int, scale: float = 0.4) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    p = "cls.predictions."
    t = {p + "transform.dense.weight": r(d, d), p + "transform.dense.bias": r(d, scale=0.2),
         p + "transform.LayerNorm.weight": 1 + r(d, scale=0.1), p + "transform.LayerNorm.bias": r(d, scale=0.1),
         p + "bias": r(vocab, scale=0.5)}
    if own_decoder:  # as an untied BertForMaskedLM saves it: the decoder's bias is its own too (the one it uses)
        t[p + "decoder.weight"], t[p + "decoder.bias"] = r(vocab, d, scale=1.0), r(vocab, scale=0.5)
    return t


def build(folder: Path, *, config: dict | None = None, seed: int = 0, prefix: str = "",
          extra: dict[str, np.ndarray] | None = None) -> Path:
    """Write a tiny checkpoint into ``folder`` (created); ``prefix`` (e.g. "bert.") goes before every weight name;
    ``extra`` tensors are added as named."""
    from safetensors.numpy import save_file

    config = config or CONFIG
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "tokenizer.json").write_text(tokenizer_json())
    tensors = {prefix + k: v for k, v in weights(config, seed).items()} | (extra or {})
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def write_mlm(folder: Path, *, own_decoder: bool = False) -> Path:
    """A tiny BertForMaskedLM in ``folder`` (created), named as transformers saves it: "bert." before the encoder's
    weights, ``cls.predictions`` for the head (its decoder tied to the word embeddings unless ``own_decoder``)."""
    config = {**CONFIG, "architectures": ["BertForMaskedLM"], "tie_word_embeddings": not own_decoder}
    return build(folder, config=config, prefix="bert.", extra=mlm_weights(config, own_decoder=own_decoder))


def vocab_txt() -> str:
    """VOCAB as BERT's vocab.txt: one token a line, its line number its id."""
    return "".join(f"{token}\n" for token in VOCAB)


def vocab_only(folder: Path, *, settings: dict | None = None) -> Path:
    """``folder``'s checkpoint with vocab.txt in place of tokenizer.json, as gaunernst/bert-mini-uncased ships it
    (``settings``: a tokenizer_config.json beside it)."""
    folder = Path(folder)
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text(vocab_txt(), encoding="utf-8")
    if settings is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    return folder


@cache
def mlm_folder() -> Path:
    """:func:`write_mlm`'s checkpoint (decoder tied), written once per test process in a folder removed at its end:
    the masked-language model Learn's masked-word lesson reads in the tests."""
    folder = Path(tempfile.mkdtemp(prefix="tiny_mlm_"))
    atexit.register(shutil.rmtree, folder, True)
    return write_mlm(folder / "mlm")


def fake_hub_cache(cache: Path, repo_id: str, folder: Path, commit: str = "0123456789abcdef" * 2 + "01234567") -> Path:
    """Lay ``folder``'s files out as huggingface_hub's cache does: blobs, snapshots/<commit> links, refs/main.

    Returns the snapshot folder.
    """
    repo = Path(cache) / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for f in Path(folder).iterdir():
        blob = repo / "blobs" / f"blob-{f.name}"
        shutil.copyfile(f, blob)
        (snapshot / f.name).symlink_to(Path("..") / ".." / "blobs" / blob.name)
    return snapshot
