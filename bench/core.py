"""Cost of attn_core's full trace against bare numpy, over the same arrays in the same run.

For each n_seq and n_heads (d_k = d_v = 64, d_model = n_heads·64, W_O the identity) it times

- ``multi_head_attention`` (validation, every intermediate kept for every head, the trace), and
- a bare numpy version: projections, per head softmax(Q_h K_hᵀ/√d_k) V_h written plainly, concat, @ W_O,

each the median of several repeats after a warm-up (the two alternate, so load from other processes hits
both alike), as wall time and as CPU time of this process, and the peak memory of one call of each under
tracemalloc (numpy reports its buffers to it). The target: ratio ≤ 1.5 at n_seq ≥ 128, and attn_core's memory
O(n_heads·n_seq²) with no [n_q, n_k, d_v] array. A benchmark that prints figures, never a timed assertion.

Run: ``.venv/bin/python bench/core.py`` (``--quick`` for a short smoke run). On a machine shared with other
work, ``OPENBLAS_NUM_THREADS=1`` keeps BLAS threads from spinning against the other load; the CPU-time ratio
is then the steadiest figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attn_core import multi_head_attention  # noqa: E402

D_K = 64
N_SEQS = (3, 16, 64, 128, 256, 512, 1024)
N_HEADS = (1, 4, 8, 12)
SKIP: set[tuple[int, int]] = set()  # (n_seq, n_heads) pairs left out; none needed on the reference machine


def bare_multi_head(x, w_q, w_k, w_v, w_o, n_heads):  # [n, d_model], [d_model, h·d_k] x3, [h·d_v, d_out] -> [n, d_out]
    """Multi-head attention as a numpy user would write it, keeping nothing but the output."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # [n, h·d_k], [n, h·d_k], [n, h·d_v]
    d_k, d_v = q.shape[1] // n_heads, v.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        s = q[:, h * d_k:(h + 1) * d_k] @ k[:, h * d_k:(h + 1) * d_k].T / np.sqrt(d_k)  # [n, n]
        e = np.exp(s - s.max(axis=1, keepdims=True))  # [n, n]
        outs.append((e / e.sum(axis=1, keepdims=True)) @ v[:, h * d_v:(h + 1) * d_v])  # [n, d_v]
    return np.concatenate(outs, axis=1) @ w_o  # [n, h·d_v] -> [n, d_out]


def repeats_for(n_seq: int, n_heads: int) -> int:
    """Fewer repeats where one call is expensive, so the whole run stays within a few minutes."""
    work = n_seq * n_seq * n_heads
    if work <= 64 * 64 * 12:
        return 41
    if work <= 256 * 256 * 12:
        return 15
    if work <= 512 * 512 * 12:
        return 7
    return 5


def timings(fns, repeats: int) -> list[tuple[float, float]]:
    """(median wall time, median CPU time of this process) of each function.

    Calls alternate between the functions, after one warm-up each, so load from other processes falls on
    both alike. CPU time (all threads of this process) is what to compare on a busy shared machine: it does
    not count the time other processes hold the cores.
    """
    for fn in fns:
        fn()
    wall, cpu = [[] for _ in fns], [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            cpu[i].append(time.process_time() - c0)
            wall[i].append(time.perf_counter() - w0)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(wall, cpu, strict=True)]


def peak_bytes(fn) -> int:
    """Peak traced memory during one call, counting what the call returns and drops."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return peak


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n_seq up to 128 and n_heads 1, 4 only")
    args = parser.parse_args()
    n_seqs = [n for n in N_SEQS if n <= 128] if args.quick else N_SEQS
    n_heads_all = N_HEADS[:2] if args.quick else N_HEADS

    print(f"machine: {os.cpu_count()} CPUs ({cpu_model()}); Python {platform.python_version()}; numpy {np.__version__}")
    print("load average before the run: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset (all cores)')}")
    print(f"d_k = d_v = {D_K}, d_model = n_heads·{D_K}, W_O = identity, no mask, scale √d_k; medians after a warm-up; "
          "ratio = attn_core / bare (wall and CPU time); peak = tracemalloc over one call\n")
    header = (f"{'n_seq':>6} {'heads':>5} {'reps':>4} {'core ms':>9} {'bare ms':>9} {'ratio':>6} {'cpu ratio':>9} "
              f"{'core peak MiB':>14} {'bare peak MiB':>14} {'core peak/(h·n²·8B)':>20}")
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for n_seq in n_seqs:
        for n_heads in n_heads_all:
            if (n_seq, n_heads) in SKIP:
                print(f"{n_seq:>6} {n_heads:>5}  skipped")
                continue
            d_model = n_heads * D_K
            x = rng.standard_normal((n_seq, d_model))  # [n_seq, d_model]
            w_q, w_k, w_v = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
            w_o = np.eye(d_model)  # [n_heads·d_v, d_model]

            def core(x=x, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, n_heads=n_heads):
                return multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)

            def bare(x=x, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, n_heads=n_heads):
                return bare_multi_head(x, w_q, w_k, w_v, w_o, n_heads)

            # the two agree before either is timed
            assert np.allclose(core().output, bare(), rtol=1e-9, atol=1e-12), (n_seq, n_heads)
            reps = repeats_for(n_seq, n_heads)
            (t_core, c_core), (t_bare, c_bare) = timings([core, bare], reps)
            m_core, m_bare = peak_bytes(core), peak_bytes(bare)
            per_cell = m_core / (n_heads * n_seq * n_seq * 8)
            print(f"{n_seq:>6} {n_heads:>5} {reps:>4} {t_core * 1e3:>9.3f} {t_bare * 1e3:>9.3f} "
                  f"{t_core / t_bare:>6.2f} {c_core / c_bare:>9.2f} {m_core / 2**20:>14.2f} {m_bare / 2**20:>14.2f} "
                  f"{per_cell:>20.2f}", flush=True)
    print(f"\ntotal bench time {time.perf_counter() - start:.1f} s; "
          "load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
