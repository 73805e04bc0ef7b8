"""Make tests/models/reference_gpt2.npz: the tiny random GPT-2 of tests/tiny_gpt2.py run by Hugging Face transformers'
GPT2LMHeadModel + PyTorch in float64 (eager attention: an implementation independent of attn_models), for
tests/models/test_gpt2.py, on each of tests/tiny_gpt2.PROMPTS (``p{i}_...``):

- ``ids``, ``logits`` [n, vocab], ``attentions`` [n_layers, n_heads, n, n], ``hidden`` [n_layers + 1, n, d];
- ``probs_t07``: softmax(last logits / 0.7) over the vocabulary;
- ``greedy``: ``generate(max_new_tokens=8, do_sample=False)``'s new token ids (with its key/value cache);
- ``ablate_{name}_logits``: the logits with ABLATIONS' heads switched off by a forward pre-hook on ``attn.c_proj``
  replacing the head's slice of its input (the heads' outputs side by side) with zeros, or its mean over the prompt;
- ``edited_logits``: the logits with layer EDIT_LAYER's W_Q changed as EDITS says (the explorer's edit, run back).

Run once, when the cases or the tiny checkpoint change (the test suite needs neither torch nor transformers)::

    PYTHONPATH=/tmp/tf /work/main/.venv/bin/python tests/models/make_gpt2_reference.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_gpt2.npz"
TEMPERATURE = 0.7
N_NEW = 8
#: name -> ((layer, head) pairs switched off, how)
ABLATIONS = {"one_mean": (((1, 2),), "mean"), "one_zero": (((1, 2),), "zero"),
             "two_mean": (((0, 1), (2, 3)), "mean")}
EDIT_LAYER = 1
#: (input feature, output feature, added): W_Q[row, column] += added in the explorer's layout [17, 16] (row 16: the
#: bias row); transformers' c_attn.weight[row, column] (c_attn.bias[column] for row 16): Q is c_attn's first 16 columns
EDITS = ((2, 1, 2.0), (16, 0, -1.5), (5, 9, 1.25))


def ablation_hooks(blocks, pairs, how: str, n_heads: int) -> list:
    """Forward pre-hooks on each block's ``attn.c_proj``: the heads in ``pairs`` replaced by zeros or their mean over
    the prompt's tokens."""
    import torch

    handles = []
    for layer in sorted({lay for lay, _ in pairs}):
        heads = [h for lay, h in pairs if lay == layer]

        def hook(module, args, heads=heads):
            ctx = args[0].clone()  # [batch, n, n_heads·d_k]
            d_k = ctx.shape[-1] // n_heads
            for h in heads:
                part = ctx[..., h * d_k:(h + 1) * d_k]
                ctx[..., h * d_k:(h + 1) * d_k] = torch.zeros_like(part) if how == "zero" else part.mean(
                    1, keepdim=True).expand_as(part)
            return (ctx, *args[1:])

        handles.append(blocks[layer].attn.c_proj.register_forward_pre_hook(hook))
    return handles


def main() -> None:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_gpt2

    folder = tiny_gpt2.build(Path(tempfile.mkdtemp()) / "gpt2")
    model = transformers.GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager")
    model = model.to(torch.float64).eval()
    tok = tiny_gpt2.tokenizer()
    n_heads, d = model.config.n_head, model.config.n_embd
    out: dict[str, np.ndarray] = {}
    for i, prompt in enumerate(tiny_gpt2.PROMPTS):
        ids = torch.tensor([tok.encode(prompt).ids])
        with torch.no_grad():
            res = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
            out[f"p{i}_ids"] = ids[0].numpy()
            out[f"p{i}_logits"] = res.logits[0].numpy()
            out[f"p{i}_attentions"] = torch.stack(res.attentions)[:, 0].numpy()
            out[f"p{i}_hidden"] = torch.stack(res.hidden_states)[:, 0].numpy()
            out[f"p{i}_probs_t07"] = torch.softmax(res.logits[0, -1] / TEMPERATURE, -1).numpy()
            gen = model.generate(ids, max_new_tokens=N_NEW, do_sample=False, pad_token_id=model.config.eos_token_id,
                                 attention_mask=torch.ones_like(ids))
            out[f"p{i}_greedy"] = gen[0, ids.shape[1]:].numpy()
            for name, (pairs, how) in ABLATIONS.items():
                handles = ablation_hooks(model.transformer.h, pairs, how, n_heads)
                try:
                    out[f"p{i}_ablate_{name}_logits"] = model(input_ids=ids).logits[0].numpy()
                finally:
                    for h in handles:
                        h.remove()
            attn = model.transformer.h[EDIT_LAYER].attn.c_attn
            saved_w, saved_b = attn.weight.detach().clone(), attn.bias.detach().clone()
            for row, col, added in EDITS:
                if row == d:
                    attn.bias[col] += added
                else:
                    attn.weight[row, col] += added
            out[f"p{i}_edited_logits"] = model(input_ids=ids).logits[0].numpy()
            attn.weight.copy_(saved_w)
            attn.bias.copy_(saved_b)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes, {len(out)} arrays); transformers {transformers.__version__}, "
          f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
