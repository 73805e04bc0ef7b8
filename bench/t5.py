"""The T5 translator (attn_models.t5): load time, memory, encoder forward, translation per token; against
transformers' T5ForConditionalGeneration in float64 where torch and transformers are installed.

Prints figures; never a timed assertion.

- The checkpoint: ``--model FOLDER`` (e.g. a copy of t5-small), else a random checkpoint of t5-small's shapes (6 + 6
  layers, d_model 512, 8 heads × 64, d_ff 2048, vocab 32,128, float32: a 242 MB model.safetensors) written to a
  temporary folder: time and memory depend on the shapes, not on the values.
- load: ``load_translator`` on the folder, best of 3; memory: the process's resident set (VmRSS) before and after
  the first load, and ``t5_resident_bytes`` (the weights in their float32).
- encoder: ``run_encoder`` on 16 and 64 source tokens, best of ``--repeats``.
- translation: greedy decoding of ``--new`` tokens (a random checkpoint never says </s>: every step runs), the time
  per generated token, best of ``--repeats``: before (``cache=False``: each step reruns the decoder on the whole
  prefix) and after (the key/value cache, issue 37: the decoder on the newest input alone, the cross-attentions' keys
  and values of the source made once), every attention through attn_core either way, and whether both write the same
  tokens; transformers' ``generate(do_sample=False, num_beams=1)`` with its cache beside (in this process when torch
  is importable, or ``--torch-python``: a separate venv's Python runs bench/torch_generate.py on the same folder).

Run: ``.venv/bin/python bench/t5.py`` (``--repeats 3 --new 20``); with the torch column:
``PYTHONPATH=/tmp/tf .venv/bin/python bench/t5.py``, or ``--torch-python /tmp/torchenv/bin/python``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench/model.py: torch's idle threads spin otherwise
# one BLAS thread unless told (bench/core.py): on this shared 2-core machine OpenBLAS's threads made the encoder
# 10 × slower (2.4 s against 0.27 s at 16 tokens, load average 11); torch gets as many threads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from attn_models.t5 import load_translator, t5_resident_bytes  # noqa: E402
from tests import tiny_t5  # noqa: E402

T5_SMALL = {**tiny_t5.CONFIG, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_decoder_layers": 6,
            "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
            "vocab_size": 32128}


def rss_mb(field: str = "VmRSS") -> float:
    """The process's resident set (VmRSS), or its peak so far (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def best(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="a T5 checkpoint folder (default: a random one of t5-small's shapes)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new", type=int, default=20, help="tokens to generate")
    parser.add_argument("--torch-python", help="a Python with torch and transformers (a separate venv): transformers' "
                        "generate on the same folder (bench/torch_generate.py)")
    args = parser.parse_args()
    folder = Path(args.model) if args.model else tiny_t5.build(Path(tempfile.mkdtemp(prefix="t5_bench_")) / "t5",
                                                              config=T5_SMALL)
    size = (folder / "model.safetensors").stat().st_size
    before = rss_mb()
    tr = load_translator(str(folder))
    after = rss_mb()
    text = "The cat sat on the mat."
    tr.translate(text, max_new=args.new)
    peak, held = rss_mb("VmHWM"), rss_mb()
    load = min([tr.load_seconds] + [load_translator(str(folder)).load_seconds for _ in range(2)])
    c = tr.config
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}; load average {os.getloadavg()[0]:.1f}")
    print(f"checkpoint: {folder} ({size / 1e6:.0f} MB model.safetensors), {c.n_layers}+{c.n_decoder_layers} layers, "
          f"d_model {c.d_model}, {c.n_heads} heads × {c.d_kv}, d_ff {c.d_ff}, vocab {c.vocab_size}")
    print(f"load: {load:.2f} s (best of 3); RSS {before:.0f} → {after:.0f} MB (+{after - before:.0f}); "
          f"t5_resident_bytes {t5_resident_bytes(c, tr.weights.shared.itemsize) / 1e6:.0f} MB")
    print(f"one translation of {args.new} tokens after the load: peak RSS {peak:.0f} MB, {held:.0f} MB held after it")
    rng = np.random.default_rng(0)
    torch_model = None
    try:
        import torch
        from transformers import T5ForConditionalGeneration

        torch.set_grad_enabled(False)
        torch.set_num_threads(int(os.environ["OPENBLAS_NUM_THREADS"]))
        torch_model = T5ForConditionalGeneration.from_pretrained(folder, attn_implementation="eager").double().eval()
    except ImportError:
        print("(torch or transformers not installed: no torch column)")
    for n in (16, 64):
        ids = rng.integers(3, c.vocab_size, n)
        mine = best(lambda ids=ids: tr.run_encoder(ids), args.repeats)
        line = f"encoder, {n} tokens: {mine * 1e3:.1f} ms"
        if torch_model is not None:
            t_ids = torch.tensor(np.array([ids]))
            theirs = best(lambda t_ids=t_ids: torch_model.encoder(input_ids=t_ids, output_attentions=True),
                          args.repeats)
            line += f" (transformers float64: {theirs * 1e3:.1f} ms)"
        print(line)
    src_ids = tr.encode(tiny_t5.PREFIX + text)[1]
    n_src = len(src_ids)
    before = best(lambda: tr.translate(text, max_new=args.new, cache=False), max(1, args.repeats - 1))
    mine = best(lambda: tr.translate(text, max_new=args.new), args.repeats)
    out = tr.translate(text, max_new=args.new)
    n_out = len(out.output_ids)
    same = out.output_ids.tolist() == tr.translate(text, max_new=args.new, cache=False).output_ids.tolist()
    print(f"translation, {n_src} source tokens, {n_out} generated: before (the decoder on the whole prefix each step) "
          f"{before:.2f} s, {before / n_out * 1e3:.0f} ms a token; after (the key/value cache) {mine:.2f} s, "
          f"{mine / n_out * 1e3:.0f} ms a token ({before / mine:.1f} × faster); the same tokens: {same} "
          f"(RSS now {rss_mb():.0f} MB)")
    if torch_model is not None:
        src = torch.tensor(np.array([src_ids]))
        theirs = best(lambda: torch_model.generate(src, do_sample=False, num_beams=1, max_new_tokens=args.new),
                      args.repeats)
        print(f"transformers float64 generate (in this process): {theirs:.2f} s, {theirs / n_out * 1e3:.0f} ms a token")
    if args.torch_python:
        import json
        import subprocess

        run = subprocess.run([args.torch_python, str(Path(__file__).with_name("torch_generate.py")), "t5", str(folder),
                              "--ids", *map(str, src_ids), "--new", str(args.new), "--repeats", str(args.repeats)],
                             check=True, capture_output=True, text=True,
                             env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        theirs = json.loads(run.stdout.strip().splitlines()[-1])
        t = min(theirs["seconds"])
        print(f"transformers float64 generate, its cache, {theirs['threads']} thread (--torch-python): {t:.2f} s, "
              f"{t / n_out * 1e3:.0f} ms a token; ours / transformers {mine / t:.2f} ×; the same tokens: "
              f"{theirs['ids'] == out.output_ids.tolist()}")

if __name__ == "__main__":
    main()
