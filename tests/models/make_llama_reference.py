"""Make tests/models/reference_llama.npz: each tiny checkpoint of tests/tiny_llama.py (LlamaForCausalLM,
Qwen2ForCausalLM, MistralForCausalLM) run by Hugging Face transformers + PyTorch in float64 (eager attention: an
implementation independent of attn_models; RoPE's angles, RMSNorm and softmax in float64 too, :func:`in_float64`), for
tests/models/test_llama.py, on each of tests/tiny_llama.PROMPTS (``{variant}_p{i}_...``):

- ``ids``, ``logits`` [n, vocab], ``attentions`` [n_layers, n_heads, n, n], ``hidden`` [n_layers + 1, n, d];
- ``probs_t07``: softmax(last logits / 0.7) over the vocabulary;
- ``greedy``: ``generate(max_new_tokens=8, do_sample=False)``'s new token ids (with its key/value cache);
- ``ablate_{name}_logits``: the logits with ABLATIONS' heads switched off by a forward pre-hook on ``o_proj``
  replacing the head's slice of its input (the heads' outputs side by side) with zeros, or its mean over the prompt;
- ``edited_logits``: the logits with layer EDIT_LAYER's W_Q changed as EDITS says (the explorer's edit, run back).

Run once, when the cases or the tiny checkpoints change (the test suite needs neither torch nor transformers)::

    /tmp/torchenv/bin/python tests/models/make_llama_reference.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_llama.npz"
TEMPERATURE = 0.7
N_NEW = 8
#: name -> ((layer, head) pairs switched off, how)
ABLATIONS = {"one_mean": (((1, 2),), "mean"), "two_zero": (((0, 1), (2, 3)), "zero")}
EDIT_LAYER = 1
#: (input feature, output feature, added): W_Q[row, column] += added in the explorer's layout [d_model (+ 1: the bias
#: row, a Qwen 2's), n_heads·head_dim]; transformers' q_proj.weight[column, row] (q_proj.bias[column] for row 16)
EDITS = ((2, 1, 2.0), (5, 9, 1.25), (11, 14, -1.5))
BIAS_EDIT = (16, 0, -1.5)  # a Qwen 2's q bias, row 16 of its W_Q


def ablation_hooks(layers, pairs, how: str, n_heads: int) -> list:
    """Forward pre-hooks on each layer's ``self_attn.o_proj``: the heads in ``pairs`` replaced by zeros or their mean
    over the prompt's tokens."""
    import torch

    handles = []
    for layer in sorted({lay for lay, _ in pairs}):
        heads = [h for lay, h in pairs if lay == layer]

        def hook(module, args, heads=heads):
            ctx = args[0].clone()  # [batch, n, n_heads·head_dim]
            d = ctx.shape[-1] // n_heads
            for h in heads:
                part = ctx[..., h * d:(h + 1) * d]
                ctx[..., h * d:(h + 1) * d] = torch.zeros_like(part) if how == "zero" else part.mean(
                    1, keepdim=True).expand_as(part)
            return (ctx, *args[1:])

        handles.append(layers[layer].self_attn.o_proj.register_forward_pre_hook(hook))
    return handles


def in_float64(model) -> None:
    """transformers computes RoPE's angles, every RMSNorm and the eager attention's softmax in float32 whatever the
    model's dtype (the rotary embedding's forward calls ``.float()``; LlamaRMSNorm casts
    ``hidden_states.to(torch.float32)``; eager_attention_forward calls ``softmax(..., dtype=torch.float32)``): about
    1e-6 off float64 at these sizes. The same formulas in float64 here (θ_i = 1 / rope_theta^(2i/d), emb =
    cat(freqs, freqs), cos and sin; weight · x · rsqrt(mean(x²) + eps); softmax in the scores' dtype), so the
    reference is float64 through."""
    import torch

    softmax = torch.nn.functional.softmax
    if not getattr(softmax, "in_float64", False):
        def softmax_own_dtype(x, dim=None, _stacklevel=3, dtype=None):
            return softmax(x, dim=dim)

        softmax_own_dtype.in_float64 = True
        torch.nn.functional.softmax = softmax_own_dtype

    def rms_forward(module):
        def forward(hidden_states):
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            return module.weight * (hidden_states * torch.rsqrt(variance + module.variance_epsilon))
        return forward

    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):
            module.forward = rms_forward(module)

    rotary = model.model.rotary_emb
    cfg = model.config
    base = cfg.rope_parameters["rope_theta"] if getattr(cfg, "rope_parameters", None) else cfg.rope_theta
    dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads

    def forward(x, position_ids, *args, **kwargs):
        inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))  # [d/2]
        freqs = position_ids[..., None].to(torch.float64) * inv  # [batch, n, d/2]
        emb = torch.cat((freqs, freqs), dim=-1)  # [batch, n, d]
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    rotary.forward = forward


def edits(variant: str) -> tuple[tuple[int, int, float], ...]:
    return (*EDITS, BIAS_EDIT) if variant == "qwen2" else EDITS


def main() -> None:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_llama

    tok = tiny_llama.tokenizer()
    out: dict[str, np.ndarray] = {}
    for variant in tiny_llama.VARIANTS:
        folder = tiny_llama.build(Path(tempfile.mkdtemp()) / variant, variant)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                                                  dtype=torch.float64).eval()
        assert next(model.parameters()).dtype == torch.float64
        in_float64(model)
        n_heads, d = model.config.num_attention_heads, model.config.hidden_size
        layers = model.model.layers
        for i, prompt in enumerate(tiny_llama.PROMPTS):
            key = f"{variant}_p{i}_"
            ids = torch.tensor([tok.encode(prompt).ids])
            with torch.no_grad():
                res = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
                out[key + "ids"] = ids[0].numpy()
                out[key + "logits"] = res.logits[0].numpy()
                out[key + "attentions"] = torch.stack(res.attentions)[:, 0].numpy()
                out[key + "hidden"] = torch.stack(res.hidden_states)[:, 0].numpy()
                out[key + "probs_t07"] = torch.softmax(res.logits[0, -1] / TEMPERATURE, -1).numpy()
                gen = model.generate(ids, max_new_tokens=N_NEW, do_sample=False, attention_mask=torch.ones_like(ids),
                                     pad_token_id=model.config.eos_token_id, eos_token_id=None)
                out[key + "greedy"] = gen[0, ids.shape[1]:].numpy()
                for name, (pairs, how) in ABLATIONS.items():
                    handles = ablation_hooks(layers, pairs, how, n_heads)
                    try:
                        out[key + f"ablate_{name}_logits"] = model(input_ids=ids).logits[0].numpy()
                    finally:
                        for h in handles:
                            h.remove()
                q = layers[EDIT_LAYER].self_attn.q_proj
                saved_w = q.weight.detach().clone()
                saved_b = None if q.bias is None else q.bias.detach().clone()
                for row, col, added in edits(variant):
                    if row == d:
                        q.bias[col] += added
                    else:
                        q.weight[col, row] += added
                out[key + "edited_logits"] = model(input_ids=ids).logits[0].numpy()
                q.weight.copy_(saved_w)
                if saved_b is not None:
                    q.bias.copy_(saved_b)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes, {len(out)} arrays); transformers {transformers.__version__}, "
          f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
