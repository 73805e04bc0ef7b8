"""GELU's erf and GELU itself (attn_models.ops) on the feed-forward's shapes of all-MiniLM-L6-v2 (d_ff 1,536): one
sentence of 64 tokens, 6 variants of it side by side (a run of "which heads matter"), 6 variants of the 9-token
sentence. Prints CPU ms and ns an element (best of ``--repeats``, one BLAS thread; the machine's load beside), and the
largest difference from ``math.erf`` on a sweep of [−6.5, 6.5]. Never a timed assertion.

Run: ``.venv/bin/python bench/erf.py`` (``--repeats 20``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import threadpoolctl  # noqa: E402

from attn_models import ops  # noqa: E402

SHAPES = {"one sentence [64, 1536]": (64, 1536), "6 variants [384, 1536]": (384, 1536),
          "6 variants of 9 tokens [54, 1536]": (54, 1536)}


def best_cpu(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        c = time.process_time()
        f()
        times.append(time.process_time() - c)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    threadpoolctl.threadpool_limits(1)
    rng = np.random.default_rng(0)
    print("load " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    for name, shape in SHAPES.items():
        x = rng.normal(size=shape) * 1.5  # about the spread of MiniLM's feed-forward pre-activations
        for fname, f in (("erf", lambda x=x: ops.erf(x * math.sqrt(0.5))), ("gelu", lambda x=x: ops.gelu(x))):
            t = best_cpu(f, args.repeats)
            print(f"{name:<36} {fname:<5} {t * 1e3:7.2f} ms CPU  {t / x.size * 1e9:5.1f} ns an element")
    xs = np.linspace(-6.5, 6.5, 200_001)
    print(f"max |erf − math.erf| on [−6.5, 6.5] (200,001 points): "
          f"{np.abs(ops.erf(xs) - [math.erf(v) for v in xs]).max():.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
