"""The logit lens (attn_models.CausalModel.logit_lens, issue 39): its peak memory and time on a distilgpt2-shaped
random GPT-2 (6 layers, d_model 768, 12 heads, vocab 50,257; float32 weights as model.safetensors stores them; no
download: bench/gpt2.py's random_weights, tests/tiny_gpt2.py's tokenizer). Prints figures; never a timed assertion.

- the bytes a lens of every layer, position and token would take at once ([n_layers + 1, n_seq, vocab] float64),
  against the peak the lens adds (tracemalloc: numpy's allocations; the forward pass's own stream and attentions
  included) while it keeps only the top tokens, a block of at most LOGIT_ROWS positions of logits at a time;
- the time of the lens at every position and at the last 12 (what A model that writes draws), beside ``forward``'s
  (which computes every position's logits too) and ``run`` alone (the blocks, no logits), best of ``--repeats``; and
  the lens alone (its blocks' stream given: the peak and time of its own logits, probabilities and top tokens);
- ``forward``'s logits before this issue (one product of every position with wte) against the blocks of
  LOGIT_ROWS positions it computes now (so that the lens's last row is forward's, bit for bit).

Run: ``.venv/bin/python bench/lens.py`` (``--tokens 64 256``, ``--repeats 2``, ``--threads 1``).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
from functools import partial
from pathlib import Path
from unittest import mock

THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "1"
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy is imported
    os.environ.setdefault(var, THREADS)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from attn_models import causal, gpt2, ops  # noqa: E402
from bench.gpt2 import best, prompt_of, random_weights  # noqa: E402
from tests import tiny_gpt2  # noqa: E402

PAGE_COLUMNS = 12  # the positions the page's lens grid shows at most


def peak_of(fn) -> tuple[int, object]:
    """(the peak bytes numpy and Python allocated while ``fn`` ran, above what was held before; its result)."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def lens_calls(lm: gpt2.CausalLM, prompt: str, last: list[int]) -> list[tuple[str, object]]:
    """(what, the call) for each figure of a prompt; "alone": the blocks' stream given (run once before), so the
    figure is the lens's own: its blocks of logits and probabilities."""
    stream = lm.run(lm.encode(prompt).ids)

    def alone(**kwargs):
        with mock.patch.object(gpt2.CausalLM, "run", lambda self, ids, **_: stream):
            return lm.logit_lens(prompt, top=5, **kwargs)

    return [("run (the blocks alone)", partial(lm.run, lm.encode(prompt).ids)),
            ("forward (every position's logits)", partial(lm.forward, prompt)),
            ("logit lens, every position", partial(lm.logit_lens, prompt, top=5)),
            (f"logit lens, the last {len(last)} positions", partial(lm.logit_lens, prompt, top=5, positions=last)),
            ("  the lens alone, every position", alone),
            (f"  the lens alone, the last {len(last)}", partial(alone, positions=last))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", default="1")
    args = parser.parse_args()
    cfg = gpt2.Gpt2Config(n_layers=6, n_heads=12, d_model=768, vocab_size=50257, max_positions=1024, eps=1e-5)
    lm = gpt2.CausalLM("random distilgpt2 shape", cfg, random_weights(cfg, np.float32), tiny_gpt2.tokenizer())
    mb = 1e6
    print(f"distilgpt2's shape: {cfg.n_layers} layers, d_model {cfg.d_model}, vocab {cfg.vocab_size:,}; "
          f"LOGIT_ROWS {causal.LOGIT_ROWS}; {args.threads} BLAS thread(s)")
    for n in args.tokens:
        prompt = prompt_of(lm, n)
        n = len(lm.encode(prompt).ids)
        whole = (cfg.n_layers + 1) * n * cfg.vocab_size * 8
        print(f"\n{n} tokens: every layer × position × token at once would be {whole / mb:,.1f} MB")
        last = list(range(max(0, n - PAGE_COLUMNS), n))
        for what, fn in lens_calls(lm, prompt, last):
            peak, _ = peak_of(fn)
            seconds = best(fn, args.repeats)
            print(f"  {what:<38} peak {peak / mb:7.1f} MB   {seconds:6.2f} s")
        normed = lm.final_norm(lm.run(lm.encode(prompt).ids)[0][-1])  # [n, d_model]
        one = best(partial(ops.tied_logits, normed, lm.unembedding), args.repeats)
        blocks = best(partial(lm.logits, normed), args.repeats)
        print(f"  forward's logits: one product of {n} rows {one:.2f} s; in blocks of {causal.LOGIT_ROWS} "
              f"(now) {blocks:.2f} s")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - start:.0f} s in all)")
