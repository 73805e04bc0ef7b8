"""A Llama-family model at HuggingFaceTB/SmolLM2-135M's shape (30 layers, d_model 576, 9 heads of 64, 3 key/value
heads, d_ff 1,536, vocab 49,152, tied, bfloat16): random weights of that shape written to a temporary checkpoint
(tests/tiny_llama.py's writer and tokenizer; the real model is not downloaded), then read by attn_models.load_llama.
Prints the load time, the resident memory (llama_resident_bytes and the process's RSS growth) and the time a token
takes when writing on the key/value cache and when rerunning the whole text. Figures, never assertions.

    python bench/llama.py
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attn_models import llama_resident_bytes, load_llama  # noqa: E402
from tests import tiny_llama  # noqa: E402
from tests.models.test_llama import smol_config  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1e3


def main() -> None:
    from threadpoolctl import threadpool_limits

    folder = Path(tempfile.mkdtemp()) / "smol"
    folder.mkdir()
    tok = tiny_llama.tokenizer()
    cfg = smol_config(vocab_size=49152)
    import json

    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "tokenizer.json").write_text(tok.to_str())
    rng = np.random.default_rng(0)
    base = tiny_llama.config(49152)
    shapes = {**base, **{k: cfg[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                              "num_key_value_heads", "intermediate_size", "tie_word_embeddings")}}
    t = {}
    for name, a in tiny_llama.weights({**shapes, "vocab_size": 1}).items():  # names only; shapes below
        rows = 49152 if name == "model.embed_tokens.weight" else a.shape[0]
        shape = (rows, *a.shape[1:])
        t[name] = tiny_llama.to_bf16_values((rng.standard_normal(shape) * 0.05).astype(np.float32))
    tiny_llama.save(t, folder / "model.safetensors", "BF16")
    del t
    size = (folder / "model.safetensors").stat().st_size
    before = rss_mb()
    start = time.perf_counter()
    lm = load_llama(str(folder))
    load = time.perf_counter() - start
    print(f"model.safetensors {size / 1e6:.1f} MB; load {load:.2f} s; llama_resident_bytes "
          f"{llama_resident_bytes(lm.config) / 1e6:.1f} MB (float32 would be "
          f"{llama_resident_bytes(lm.config, 4) / 1e6:.1f}); RSS +{rss_mb() - before:.0f} MB; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")
    prompt = "The cat sat on the mat. The dog ran after the cat"
    n = len(lm.encode(prompt).ids)
    with threadpool_limits(1):
        for cache in (True, False):
            start = time.perf_counter()
            gen = lm.generate(prompt, 8, cache=cache)
            took = time.perf_counter() - start
            print(f"write 8 tokens after a {n}-token prompt, one BLAS thread, cache={cache}: {took:.2f} s "
                  f"({took / len(gen.steps) * 1e3:.0f} ms a token, the prompt's pass included)")
        start = time.perf_counter()
        lm.forward(prompt)
        print(f"forward on the prompt: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
