"""Save a chart (attn_ui.infra.export, issue 39): time, bytes and peak memory of a chart drawn as PNG and SVG by
vl-convert in its child process, for the largest charts the app draws. Prints figures; never a timed assertion.

- a weights heatmap of 64 × 64 cells (attn_ui.widgets.heatmap.MAX_SIDE: larger matrices are drawn in blocks);
- the model view of a 12-layer, 12-head model (gpt2's shape) at 64 tokens (views.model_views.model_view).

For each: the spec's JSON bytes (against export.MAX_SPEC_BYTES), each format's time and image bytes, and the peak
resident memory (ru_maxrss) of this process (the server's part: the spec written out, the image read back) and of the
children (vl-convert's JavaScript engine). Last, for comparison, the same PNG made by vl-convert inside this process:
its peak stays with the process.

Run: ``.venv/bin/python bench/export.py`` (``--in-process`` off with ``--no-in-process``).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attn_ui.infra import export  # noqa: E402
from attn_ui.shell import save_chart  # noqa: E402
from attn_ui.views import model_views  # noqa: E402
from attn_ui.widgets import heatmap  # noqa: E402


def mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


#: the worker started by a small Python of its own, which prints its child's peak: a child's ru_maxrss counts the
#: memory of the process that started it (Linux counts the copy before exec), so this process's own children would
#: all read at least this process's peak
MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")


def child_peak(spec: dict, fmt: str) -> int:
    """The worker's peak resident memory in MiB, making ``spec`` as ``fmt``."""
    done = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-I", str(export.WORKER), fmt,
                           str(export.MAX_IMAGE_BYTES)], input=json.dumps(spec).encode(), capture_output=True,
                          check=True)
    return int(done.stdout)


def charts() -> dict[str, dict]:
    rng = np.random.default_rng(0)
    n = heatmap.MAX_SIDE
    w = rng.random((n, n))
    w /= w.sum(axis=1, keepdims=True)
    labels = [f"{i}: token{i}" for i in range(n)]
    weights = heatmap.heatmap(w, labels, labels, title="Weights", kind="weights", x_title="key", y_title="query")
    a = rng.random((12, 12, 64, 64))
    a /= a.sum(axis=-1, keepdims=True)
    view = model_views.model_view(a, tuple(f"t{i}" for i in range(64)))
    return {"weights 64 × 64": save_chart.printable(weights.spec(), "Weights"),
            "model view 12 × 12 heads, 64 tokens": save_chart.printable(view.spec(), "Model view")}


def main() -> None:
    specs = charts()
    print(f"caps: spec {export.MAX_SPEC_BYTES / 1e6:.0f} MB, image {export.MAX_IMAGE_BYTES / 1e6:.0f} MB, "
          f"{export.TIMEOUT_S:.0f} s")
    print(f"this process before any export: peak {mib(resource.RUSAGE_SELF):.0f} MiB")
    for name, spec in specs.items():
        size = len(json.dumps(spec, separators=(",", ":")))
        print(f"{name}: spec {size / 1e6:.2f} MB")
        for fmt in ("svg", "png"):
            t = time.perf_counter()
            out = export.to_image(spec, fmt)
            print(f"  {fmt}: {time.perf_counter() - t:.2f} s, {len(out) / 1e6:.2f} MB; peak of this process "
                  f"{mib(resource.RUSAGE_SELF):.0f} MiB, of the child {child_peak(spec, fmt)} MiB")
    if "--no-in-process" not in sys.argv:
        import vl_convert as vlc

        spec = json.dumps(next(iter(specs.values())))
        t = time.perf_counter()
        vlc.vegalite_to_png(spec, scale=2)
        print(f"in this process instead (vl-convert imported here): png {time.perf_counter() - t:.2f} s, peak "
              f"{mib(resource.RUSAGE_SELF):.0f} MiB, and it stays: the engine is kept by the module")


if __name__ == "__main__":
    main()
