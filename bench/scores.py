"""Cost of each score function and of cross-attention in attn_core, against the dot product on the same numbers.

For each size (seed 000's: 3 tokens, d_model 4; then n_seq = 64, 256, 1024 with d_model 64, one head of d_k 64,
d_a 64 for the additive score) it times ``run(cfg)`` for dot, general and additive self-attention and for dot
cross-attention (Y with as many rows as X), the median of several repeats after a warm-up, and the peak memory
of one call under tracemalloc. The additive score is computed a block of queries at a time
(attn_core.attention.ADDITIVE_BLOCK numbers of tanh features at once), so its memory stays O(n_q·n_k).
A benchmark that prints figures, never a timed assertion.

Run: ``.venv/bin/python bench/scores.py`` (``--quick``: the two smallest sizes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attn_core import initialize, load_preset, make_config, run  # noqa: E402

SIZES = (3, 64, 256)  # n_seq; 3 is seed 000's configuration itself; 256 is the cap
WIDTH = 64  # d_model, d_k, d_v and d_a of the larger sizes


def configs(n_seq: int) -> dict:
    """dot, general, additive and cross-attention configurations of one size, on the same X and weights."""
    if n_seq == 3:
        dot = load_preset("seed000")
    else:
        x = initialize("gaussian", (n_seq, WIDTH), seed=1)
        w = [initialize("xavier_uniform", (WIDTH, WIDTH), seed=s) for s in (2, 3, 4)]
        dot = make_config([f"t{i}" for i in range(n_seq)], x, *w)
    d_q, d_k, d_a = dot.d_q, dot.d_k, max(dot.d_k, 4)
    general = replace(dot, score="general", w_a=np.eye(d_q, d_k))
    additive = replace(dot, score="additive", w_1=initialize("xavier_uniform", (d_q, d_a), seed=5),
                       w_2=initialize("xavier_uniform", (d_k, d_a), seed=6),
                       v_a=initialize("xavier_uniform", (1, d_a), seed=7))
    cross = replace(dot, y=dot.x[::-1].copy(), y_tokens=dot.tokens[::-1],
                    custom_mask=np.ones((dot.n_seq, dot.n_seq), bool))
    return {name: make_config(**vars(c)) for name, c in
            (("dot", dot), ("general", general), ("additive", additive), ("cross (dot)", cross))}


def median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two smallest sizes only")
    sizes = SIZES[:2] if parser.parse_args().quick else SIZES
    print(f"{'n_seq':>6} {'score':>12} {'median ms':>10} {'× dot':>7} {'peak MiB':>9}")
    for n_seq in sizes:
        cfgs = configs(n_seq)
        repeats = 200 if n_seq <= 64 else 20 if n_seq <= 256 else 5
        base = None
        for name, cfg in cfgs.items():
            seconds = median_seconds(lambda cfg=cfg: run(cfg), repeats)
            base = base or seconds
            peak = peak_bytes(lambda cfg=cfg: run(cfg)) / 2**20
            print(f"{n_seq:>6} {name:>12} {1e3 * seconds:>10.3f} {seconds / base:>7.2f} {peak:>9.2f}")


if __name__ == "__main__":
    main()
