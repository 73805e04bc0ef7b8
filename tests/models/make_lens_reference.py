"""Make tests/models/reference_lens.npz: the logit lens of the tiny random GPT-2 (tests/tiny_gpt2.py) and of each
tiny Llama-family checkpoint (tests/tiny_llama.py) computed with Hugging Face transformers + PyTorch in float64
(eager attention; a Llama's RMSNorm, RoPE and softmax in float64 as make_llama_reference.in_float64 makes them), for
tests/models/test_logit_lens.py, on each prompt of the family's PROMPTS (``{model}_p{i}_...``):

- each layer's hidden state (``output_hidden_states=True``: the embeddings, each block's output), through the final
  norm (GPT-2's ``ln_f``, a Llama's ``norm``) and the LM head (``lm_head``), in float64. transformers' last hidden
  state already has the final norm applied (both families), so the last row is the model's own logits (checked here:
  the LM head of the last hidden state equals ``logits``), not the norm applied twice;
- ``ids`` int [n_layers + 1, n, TOP]: each row's TOP most probable tokens (a stable sort: a tie, the smaller id
  first); ``logits`` [n_layers + 1, n, TOP] theirs; ``lse`` [n_layers + 1, n]: log Σ exp(logits) over the vocabulary
  (a probability is exp(logit − lse)); ``final_ranks`` int [n_layers + 1, n]: the rank (1: most probable) of the
  model's own top token at that position after each layer;
- ``{model}_p0_ablate_...``: the same with head ABLATED switched off by its mean over the prompt (a forward pre-hook
  on the attention's output projection, as make_gpt2_reference.ablation_hooks).

Run once, when the cases or the tiny checkpoints change (the test suite needs neither torch nor transformers)::

    /tmp/torchenv/bin/python tests/models/make_lens_reference.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_lens.npz"
TOP = 8  # tokens kept a row
ABLATED = ((1, 2), "mean")  # (layer, head) switched off, and how


def lens_arrays(model, final_norm, ids) -> dict[str, np.ndarray]:
    """The lens of ``model`` on ``ids`` ([1, n] tensor): ids, logits, lse, final_ranks (see the module's text)."""
    import torch

    res = model(input_ids=ids, output_hidden_states=True)
    hidden = torch.stack(res.hidden_states)[:, 0]  # [n_layers + 1, n, d]
    head = model.get_output_embeddings()
    rows = [head(final_norm(h)) for h in hidden[:-1]] + [head(hidden[-1])]  # the last: already normed
    assert torch.equal(rows[-1], res.logits[0]), "the last hidden state is not the final norm's output"
    logits = torch.stack(rows).numpy()  # [n_layers + 1, n, vocab]
    order = np.argsort(-logits, axis=-1, kind="stable")  # softmax is monotonic: the same order as the probabilities
    top = order[..., :TOP]
    finals = order[-1, :, 0]  # [n]
    final_logits = np.take_along_axis(logits, np.broadcast_to(finals[None, :, None], logits.shape[:2] + (1,)), -1)
    ranks = 1 + (logits > final_logits).sum(-1)  # [n_layers + 1, n]
    m = logits.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    return {"ids": top, "logits": np.take_along_axis(logits, top, -1), "lse": lse, "final_ranks": ranks}


def ablation_hook(attn_out_proj, head: int, n_heads: int):
    """A forward pre-hook replacing head ``head``'s slice of the output projection's input with its mean over the
    prompt."""

    def hook(module, args):
        ctx = args[0].clone()  # [batch, n, n_heads·d_k]
        d_k = ctx.shape[-1] // n_heads
        part = ctx[..., head * d_k:(head + 1) * d_k]
        ctx[..., head * d_k:(head + 1) * d_k] = part.mean(1, keepdim=True).expand_as(part)
        return (ctx, *args[1:])

    return attn_out_proj.register_forward_pre_hook(hook)


def main() -> None:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_gpt2, tiny_llama
    from tests.models.make_llama_reference import in_float64

    out: dict[str, np.ndarray] = {}
    models = [("gpt2", tiny_gpt2.build(Path(tempfile.mkdtemp()) / "gpt2"), tiny_gpt2.PROMPTS)]
    models += [(v, tiny_llama.build(Path(tempfile.mkdtemp()) / v, v), tiny_llama.PROMPTS)
               for v in tiny_llama.VARIANTS]
    tok = tiny_gpt2.tokenizer()
    (layer, head), _how = ABLATED
    for name, folder, prompts in models:
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                                                  dtype=torch.float64).eval()
        assert next(model.parameters()).dtype == torch.float64
        if name == "gpt2":
            final_norm, proj = model.transformer.ln_f, model.transformer.h[layer].attn.c_proj
        else:
            in_float64(model)
            final_norm, proj = model.model.norm, model.model.layers[layer].self_attn.o_proj
        with torch.no_grad():
            for i, prompt in enumerate(prompts):
                ids = torch.tensor([tok.encode(prompt).ids])
                out |= {f"{name}_p{i}_{k}": v for k, v in lens_arrays(model, final_norm, ids).items()}
                if i == 0:
                    handle = ablation_hook(proj, head, model.config.num_attention_heads)
                    try:
                        out |= {f"{name}_p0_ablate_{k}": v for k, v in lens_arrays(model, final_norm, ids).items()}
                    finally:
                        handle.remove()
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes, {len(out)} arrays); transformers {transformers.__version__}, "
          f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
