"""Make tests/models/reference_t5.npz: the tiny random T5s of tests/tiny_t5.py run by Hugging Face transformers'
T5ForConditionalGeneration + PyTorch in float64 (eager attention; an implementation independent of attn_models.t5),
for tests/models/test_t5.py:

- for each checkpoint (``relu``: t5-small's layout, LM head tied; ``gated``: T5 v1.1's gated-gelu, its own LM head)
  and each of tests/tiny_t5.SENTENCES (after tiny_t5.PREFIX): the encoder's attentions, the decoder's self and cross
  attentions and the logits for the fixed decoder input TARGET; the greedy ids of ``generate(do_sample=False,
  num_beams=1, max_new_tokens=10)``;
- cross-attention heads switched off (ABLATIONS): a forward pre-hook on ``EncDecAttention.o`` replaces each head's
  slice of its input by zeros, or by the mean over the source tokens of that head's value rows (a forward hook on
  ``EncDecAttention.v`` keeps them): the logits at TARGET and the greedy ids (``use_cache=False``);
- the relative-position buckets of ``T5Attention._relative_position_bucket`` for -300 … 300, both directions, for
  the tiny config's (8, 16) and t5-small's (32, 128).

transformers' ``T5LayerNorm`` computes its variance in float32 even in a float64 model; here that one line is made
float64 (as attn_models.t5 computes it), and ``unpatched_logits_diff_{kind}_{i}`` records how far the unchanged
transformers' logits are (up to 2e-5 here; ``unpatched_same_ids_{kind}_{i}``: its greedy ids are the same).

Run once, when the cases or the tiny checkpoints change (the tests need neither torch nor transformers)::

    PYTHONPATH=/tmp/tf .venv/bin/python tests/models/make_t5_reference.py
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests import tiny_t5  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_t5.npz"
TARGET = (0, 21, 22, 23, 4)  # decoder input: the start token, then ▁est ▁assis ▁sur ▁English
ABLATIONS = {"one_mean": (((1, 2),), "mean"), "two_zero": (((0, 1), (1, 3)), "zero")}
CHECKPOINTS = {"relu": tiny_t5.CONFIG, "gated": {**tiny_t5.GATED, "tie_word_embeddings": False}}
BUCKET_CASES = ((8, 16), (32, 128))
MAX_NEW = 10


def float64_norm() -> None:
    """T5LayerNorm with its variance in float64 (transformers casts to float32 there)."""
    import torch
    from transformers.models.t5 import modeling_t5

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))

    modeling_t5.T5LayerNorm.forward = forward


def ablation_hooks(model, ablate, how):
    """Hooks switching cross-attention heads off (see the module's text); returns their handles."""
    d_kv = model.config.d_kv
    handles, values = [], {}
    for layer in {lay for lay, _ in ablate}:
        attn = model.decoder.block[layer].layer[1].EncDecAttention
        heads = [h for lay, h in ablate if lay == layer]

        def keep_v(_module, _args, out, layer=layer):
            values[layer] = out  # [1, n_src, inner]

        def replace(_module, args, layer=layer, heads=heads):
            (x,) = args  # [1, n_t, inner]
            x = x.clone()
            for h in heads:
                cols = slice(h * d_kv, (h + 1) * d_kv)
                x[..., cols] = 0.0 if how == "zero" else values[layer][0, :, cols].mean(0)
            return (x,)

        handles += [attn.v.register_forward_hook(keep_v), attn.o.register_forward_pre_hook(replace)]
    return handles


def main() -> None:
    import torch
    import transformers
    from tokenizers import Tokenizer
    from transformers import T5ForConditionalGeneration
    from transformers.models.t5.modeling_t5 import T5Attention

    torch.manual_seed(0)
    arrays: dict[str, np.ndarray] = {}
    for n, d in BUCKET_CASES:
        rel = torch.arange(-300, 301)
        for bidirectional in (True, False):
            b = T5Attention._relative_position_bucket(rel, bidirectional=bidirectional, num_buckets=n, max_distance=d)
            arrays[f"buckets_{n}_{d}_{'bi' if bidirectional else 'causal'}"] = b.numpy()
    tmp = Path(tempfile.mkdtemp(prefix="t5_ref_"))
    unpatched = {}
    for patched in (False, True):
        if patched:
            float64_norm()
        for kind, config in CHECKPOINTS.items():
            folder = tiny_t5.build(tmp / kind, config=config)
            arrays[f"{kind}_sha256"] = np.array(hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest())
            model = T5ForConditionalGeneration.from_pretrained(folder, attn_implementation="eager")
            model = model.to(torch.float64).eval()
            assert all(p.dtype == torch.float64 for p in model.parameters())
            tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
            for i, text in enumerate(tiny_t5.SENTENCES):
                ids = torch.tensor([tok.encode(tiny_t5.PREFIX + text).ids])
                target = torch.tensor([TARGET])
                with torch.no_grad():
                    out = model(input_ids=ids, decoder_input_ids=target, output_attentions=True)
                    gen = model.generate(ids, do_sample=False, num_beams=1, max_new_tokens=MAX_NEW)
                if not patched:
                    unpatched[(kind, i)] = (out.logits[0].numpy(), gen[0].numpy())
                    continue
                key = f"{kind}_{i}"
                arrays[f"{key}_ids"] = ids[0].numpy()
                arrays[f"{key}_logits"] = out.logits[0].numpy()  # [n_t, vocab]
                arrays[f"{key}_encoder"] = torch.stack(out.encoder_attentions)[:, 0].numpy()  # [L, H, n_src, n_src]
                arrays[f"{key}_self"] = torch.stack(out.decoder_attentions)[:, 0].numpy()  # [L, H, n_t, n_t]
                arrays[f"{key}_cross"] = torch.stack(out.cross_attentions)[:, 0].numpy()  # [L, H, n_t, n_src]
                arrays[f"{key}_generated"] = gen[0].numpy()  # the start token first
                old_logits, old_gen = unpatched[(kind, i)]
                arrays[f"unpatched_logits_diff_{key}"] = np.array(np.abs(old_logits - out.logits[0].numpy()).max())
                arrays[f"unpatched_same_ids_{key}"] = np.array(np.array_equal(old_gen, gen[0].numpy()))
                for name, (ablate, how) in ABLATIONS.items():
                    handles = ablation_hooks(model, ablate, how)
                    with torch.no_grad():
                        ab = model(input_ids=ids, decoder_input_ids=target)
                        ab_gen = model.generate(ids, do_sample=False, num_beams=1, max_new_tokens=MAX_NEW,
                                                use_cache=False)
                    for h in handles:
                        h.remove()
                    arrays[f"{key}_{name}_logits"] = ab.logits[0].numpy()
                    arrays[f"{key}_{name}_generated"] = ab_gen[0].numpy()
    arrays["versions"] = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    np.savez_compressed(OUT, **arrays)
    diffs = [float(v) for k, v in arrays.items() if k.startswith("unpatched_logits_diff")]
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes); unchanged transformers' logits differ by at most "
          f"{max(diffs):.2e}; greedy ids the same: {all(bool(v) for k, v in arrays.items() if 'same_ids' in k)}",
          file=sys.stderr)
    for k in sorted(arrays):
        if k.endswith("generated"):
            print(k, arrays[k].tolist(), file=sys.stderr)


if __name__ == "__main__":
    main()
