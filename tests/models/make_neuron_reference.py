"""Make tests/models/reference_neuron.npz: the query and key vectors of every head of every layer, and the scores
the softmax reads, as Hugging Face transformers + PyTorch compute them in float64 (eager attention), for the neuron
view of every family (tests/models/test_neuron_families.py). One text per tiny checkpoint of tests/tiny_*.py:

- ``{family}_ids``: the token ids run;
- ``{family}_{attn}_q`` [n_layers, n_heads, n_q, d_k] and ``_k`` [n_layers, n_kv_heads, n_k, d_k]: what a forward
  hook on the attention's query and key projections returns (BERT, XLM-R: ``query``, ``key``; GPT-2: ``c_attn``'s
  first two thirds; T5: ``q``, ``k``), for a Llama what transformers' ``apply_rotary_pos_emb`` returns (q and k
  after RoPE) and ``_q_before``, ``_k_before`` the ``q_proj`` and ``k_proj`` outputs;
- ``{family}_{attn}_logits`` [n_layers, n_heads, n_q, n_k]: the input of ``nn.functional.softmax`` in the eager
  attention (the scaled scores plus T5's position bias and any mask), recorded by wrapping the softmax;
- ``{family}_{attn}_weights``: transformers' attentions (its softmax of those).

``attn`` is "self" for the encoders and the causal models; a T5's are "encoder", "decoder" and "cross" (decoder input:
the start token, then T5_TARGET).

Run once, when the cases or the tiny checkpoints change (the test suite needs neither torch nor transformers)::

    /tmp/torchenv/bin/python tests/models/make_neuron_reference.py
"""

from __future__ import annotations

import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_neuron.npz"
T5_TARGET = (21, 22, 23, 4)  # the decoder's inputs after its start token (make_t5_reference.TARGET's)


@contextmanager
def recorded_softmax(into: list):
    """Every 4-d input of torch.nn.functional.softmax (the eager attentions' [batch, heads, n_q, n_k] scores) appended
    to ``into``, in float64 (a ``dtype`` asked for is left out: the scores' own, as make_llama_reference.in_float64)."""
    import torch

    original = torch.nn.functional.softmax

    def softmax(x, dim=None, _stacklevel=3, dtype=None):
        if x.dim() == 4:
            into.append(x[0].detach().clone().numpy())
        return original(x, dim=dim)

    torch.nn.functional.softmax = softmax
    try:
        yield
    finally:
        torch.nn.functional.softmax = original


def heads(t, n_heads: int) -> np.ndarray:  # [1, n, n_heads·d] -> [n_heads, n, d]
    x = t[0].detach().numpy()
    return x.reshape(x.shape[0], n_heads, -1).transpose(1, 0, 2)


def keep(store: dict, name: str):
    """A forward hook keeping a module's output under ``name`` (a list: one per call)."""
    def hook(_module, _args, out):
        store.setdefault(name, []).append(out.detach().clone())
    return hook


def encoder(family: str, folder: Path, text: str, out: dict) -> None:
    """A BERT or an XLM-R: each layer's query and key Linear outputs, the softmax's inputs and the attentions."""
    import torch
    import transformers
    from tokenizers import Tokenizer

    model = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    model = model.to(torch.float64).eval()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    ids = tok.encode(text).ids
    kept: dict = {}
    for i, layer in enumerate(model.encoder.layer):
        layer.attention.self.query.register_forward_hook(keep(kept, f"q{i}"))
        layer.attention.self.key.register_forward_hook(keep(kept, f"k{i}"))
    logits: list = []
    with torch.no_grad(), recorded_softmax(logits):
        res = model(input_ids=torch.tensor([ids]), output_attentions=True)
    n, n_layers = model.config.num_attention_heads, model.config.num_hidden_layers
    out[f"{family}_ids"] = np.array(ids)
    out[f"{family}_self_q"] = np.stack([heads(kept[f"q{i}"][0], n) for i in range(n_layers)])
    out[f"{family}_self_k"] = np.stack([heads(kept[f"k{i}"][0], n) for i in range(n_layers)])
    out[f"{family}_self_logits"] = np.stack(logits)
    out[f"{family}_self_weights"] = torch.stack(res.attentions)[:, 0].numpy()


def gpt2(folder: Path, text: str, out: dict) -> None:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_gpt2

    model = transformers.GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").to(torch.float64).eval()
    ids = tiny_gpt2.tokenizer().encode(text).ids
    kept: dict = {}
    for i, block in enumerate(model.transformer.h):
        block.attn.c_attn.register_forward_hook(keep(kept, f"qkv{i}"))
    logits: list = []
    with torch.no_grad(), recorded_softmax(logits):
        res = model(input_ids=torch.tensor([ids]), output_attentions=True)
    n, d = model.config.n_head, model.config.n_embd
    out["gpt2_ids"] = np.array(ids)
    out["gpt2_self_q"] = np.stack([heads(kept[f"qkv{i}"][0][..., :d], n) for i in range(model.config.n_layer)])
    out["gpt2_self_k"] = np.stack([heads(kept[f"qkv{i}"][0][..., d:2 * d], n) for i in range(model.config.n_layer)])
    out["gpt2_self_logits"] = np.stack(logits)
    out["gpt2_self_weights"] = torch.stack(res.attentions)[:, 0].numpy()


def llama(folder: Path, text: str, out: dict) -> None:
    """A Llama: q and k as transformers' apply_rotary_pos_emb returns them (after RoPE), and q_proj's and k_proj's
    outputs (before); RoPE's angles, RMSNorm and the softmax in float64 (make_llama_reference.in_float64)."""
    import torch
    import transformers
    from transformers.models.llama import modeling_llama

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_llama
    from tests.models.make_llama_reference import in_float64

    model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                                              dtype=torch.float64).eval()
    in_float64(model)
    ids = tiny_llama.tokenizer().encode(text).ids
    kept: dict = {}
    for i, layer in enumerate(model.model.layers):
        layer.self_attn.q_proj.register_forward_hook(keep(kept, f"q{i}"))
        layer.self_attn.k_proj.register_forward_hook(keep(kept, f"k{i}"))
    rotate, rotated = modeling_llama.apply_rotary_pos_emb, []

    def apply_rotary_pos_emb(q, k, *args, **kwargs):
        q_r, k_r = rotate(q, k, *args, **kwargs)
        rotated.append((q_r[0].detach().clone().numpy(), k_r[0].detach().clone().numpy()))  # [H, n, d], [KV, n, d]
        return q_r, k_r

    modeling_llama.apply_rotary_pos_emb = apply_rotary_pos_emb
    logits: list = []
    try:
        with torch.no_grad(), recorded_softmax(logits):
            res = model(input_ids=torch.tensor([ids]), output_attentions=True)
    finally:
        modeling_llama.apply_rotary_pos_emb = rotate
    cfg = model.config
    layers = range(cfg.num_hidden_layers)
    out["llama_ids"] = np.array(ids)
    out["llama_self_q"] = np.stack([q for q, _ in rotated])
    out["llama_self_k"] = np.stack([k for _, k in rotated])
    out["llama_self_q_before"] = np.stack([heads(kept[f"q{i}"][0], cfg.num_attention_heads) for i in layers])
    out["llama_self_k_before"] = np.stack([heads(kept[f"k{i}"][0], cfg.num_key_value_heads) for i in layers])
    out["llama_self_logits"] = np.stack(logits)
    out["llama_self_weights"] = torch.stack(res.attentions)[:, 0].numpy()


def t5(folder: Path, text: str, out: dict) -> None:
    """A T5: its encoder's self-attention, its decoder's self-attention and cross-attention (decoder input: the start
    token, then T5_TARGET); T5LayerNorm in float64 (make_t5_reference.float64_norm)."""
    import torch
    from tokenizers import Tokenizer
    from transformers import T5ForConditionalGeneration

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_t5
    from tests.models.make_t5_reference import float64_norm

    float64_norm()
    model = T5ForConditionalGeneration.from_pretrained(folder, attn_implementation="eager").to(torch.float64).eval()
    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(tiny_t5.PREFIX + text).ids
    kept: dict = {}
    attns = {"encoder": [b.layer[0].SelfAttention for b in model.encoder.block],
             "decoder": [b.layer[0].SelfAttention for b in model.decoder.block],
             "cross": [b.layer[1].EncDecAttention for b in model.decoder.block]}
    for side, modules in attns.items():
        for i, m in enumerate(modules):
            m.q.register_forward_hook(keep(kept, f"{side}_q{i}"))
            m.k.register_forward_hook(keep(kept, f"{side}_k{i}"))
    logits: list = []
    with torch.no_grad(), recorded_softmax(logits):
        res = model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([(0, *T5_TARGET)]),
                    output_attentions=True)
    n, n_enc = model.config.num_heads, model.config.num_layers
    out["t5_ids"] = np.array(ids)
    order = {"encoder": logits[:n_enc], "decoder": logits[n_enc::2], "cross": logits[n_enc + 1::2]}
    weights = {"encoder": res.encoder_attentions, "decoder": res.decoder_attentions, "cross": res.cross_attentions}
    for side, modules in attns.items():
        out[f"t5_{side}_q"] = np.stack([heads(kept[f"{side}_q{i}"][0], n) for i in range(len(modules))])
        out[f"t5_{side}_k"] = np.stack([heads(kept[f"{side}_k{i}"][0], n) for i in range(len(modules))])
        out[f"t5_{side}_logits"] = np.stack(order[side])
        out[f"t5_{side}_weights"] = torch.stack(weights[side])[:, 0].numpy()


def main() -> None:
    import torch
    import transformers

    sys.path.insert(0, str(HERE.parents[1]))
    from tests import tiny_bert, tiny_gpt2, tiny_llama, tiny_t5, tiny_xlmr

    tmp = Path(tempfile.mkdtemp(prefix="neuron_ref_"))
    out: dict[str, np.ndarray] = {}
    encoder("bert", tiny_bert.build(tmp / "bert"), tiny_bert.SENTENCE, out)
    encoder("xlmr", tiny_xlmr.build(tmp / "xlmr"), tiny_xlmr.SENTENCES[0], out)
    gpt2(tiny_gpt2.build(tmp / "gpt2"), tiny_gpt2.PROMPTS[0], out)
    llama(tiny_llama.build(tmp / "llama", "llama"), tiny_llama.PROMPTS[0], out)
    t5(tiny_t5.build(tmp / "t5"), tiny_t5.SENTENCES[0], out)
    for key, value in out.items():
        if key.endswith("_weights"):  # the softmax recorded is the one whose weights transformers returned
            logits = out[key.replace("_weights", "_logits")]
            e = np.exp(logits - logits.max(-1, keepdims=True))
            assert np.abs(e / e.sum(-1, keepdims=True) - value).max() < 1e-12, key
    out["versions"] = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes): {', '.join(sorted(out))}", file=sys.stderr)


if __name__ == "__main__":
    main()
