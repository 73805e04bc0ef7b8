"""What Across tokens and layers costs on a rerun (attn_ui.views.across_views): attention rollout and several queries
summed, at the caps a model page allows (LIMITS.n_seq tokens), on random attention weights of real models' shapes.

For each shape it prints the median time of ``attention_rollout`` (every layer's [n, n] joint attention: n³ a
layer), of ``rollout_row`` (the one token's row the page draws: n² a layer) and of ``summed_attention`` (one layer, 8
queries), and the peak memory each rollout allocates beyond its input (tracemalloc; with a quarter of the tokens
padding): the input [n_layers, n_heads, n, n] is the page's run, already held. On a machine whose cores are busy,
BLAS's threads make the n³ matrix products much slower than their flops say.

Run: ``.venv/bin/python bench/rollout.py``. A benchmark that prints figures, never a timed assertion.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attn_core import LIMITS, attention_rollout, rollout_row, softmax, summed_attention  # noqa: E402

SHAPES = {  # name: (n_layers, n_heads)
    "all-MiniLM-L6-v2 / distilgpt2 (6 × 12)": (6, 12),
    "multilingual MiniLM-L12 (12 × 12)": (12, 12),
    "SmolLM2-135M (30 × 9)": (30, 9),
    "the caps: 32 layers × 16 heads": (32, 16),
}


def timed(fn, repeat: int = 5) -> float:
    """Median seconds of ``fn()`` over ``repeat`` runs after one warm-up."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak_mb(fn) -> float:
    """Peak MB that ``fn()`` allocates (tracemalloc)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    n = LIMITS.n_seq
    rng = np.random.default_rng(0)
    is_pad = np.zeros(n, dtype=bool)
    is_pad[-n // 4:] = True  # a quarter of the tokens padding
    print(f"{'shape':42} {'input MB':>9} {'rollout ms':>11} {'peak MB':>8} {'row ms':>7} {'peak MB':>8} "
          f"{'summed ms':>10}")
    for name, (layers, heads) in SHAPES.items():
        a = softmax(rng.standard_normal((layers, heads, n, n)))  # [L, H, n, n]
        whole_s = timed(lambda a=a: attention_rollout(a), repeat=3)
        whole_mb = peak_mb(lambda a=a: attention_rollout(a, is_pad=is_pad))
        row_s = timed(lambda a=a: rollout_row(a, 0))
        row_mb = peak_mb(lambda a=a: rollout_row(a, 0, is_pad=is_pad))
        summed_s = timed(lambda a=a: summed_attention(a[-1], list(range(0, n, n // 8)), "mean"))
        print(f"{name:42} {a.nbytes / 1e6:9.1f} {whole_s * 1e3:11.1f} {whole_mb:8.1f} {row_s * 1e3:7.1f} "
              f"{row_mb:8.1f} {summed_s * 1e3:10.2f}")
        del a

if __name__ == "__main__":
    main()
