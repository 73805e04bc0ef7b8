"""What a heatmap's and the model view's spec cost a page's run: the first build (a new layout: Altair builds and
(on a server) does not check it against the schema, attn_ui.widgets.charts.spec; ``ATTN_CHECK_CHARTS=1`` times it
as the tests build it, checked) and a rerun (the same layout, new numbers: the cached template refilled).

For a 3 × 3, 16 × 16 and 64 × 64 heatmap (Step by step's scores: numbers on the cells up to 16 × 16; colour only, on
a canvas, at 64 × 64) and the model view's thumbnails (12 layers × 12 heads of 16 tokens, as a BERT-base on a short
sentence, and of 64 tokens), each the median of N repeats after a warm-up (Altair's schema loaded once):

- ``first``: ``Chart.spec()`` on labels never seen (the template cache cold for that layout);
- ``rerun``: the same layout with new numbers (the template served from the cache).

Prints figures; asserts nothing. ``--tree PATH`` times another checkout of the app (a ``git archive`` of an older
commit, say) with this same script: its attn_ui is imported instead of this one's.

Run: ``.venv/bin/python bench/chart_build.py [--repeats 5] [--tree PATH]``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout whose attn_ui is timed")
    return parser.parse_args()


ARGS = _args()
sys.path.insert(0, str(ARGS.tree.resolve()))

import numpy as np  # noqa: E402

from attn_ui.views import model_views  # noqa: E402
from attn_ui.widgets import heatmap  # noqa: E402

FRESH = itertools.count()  # a new word for every first build: labels (so layouts) never seen


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def heatmap_times(n: int, repeats: int) -> tuple[float, float]:
    """Median ms of the first build and of a rerun of an n × n heatmap of scores (key × query labels)."""
    rng = np.random.default_rng(n)
    firsts, reruns = [], []
    for _ in range(repeats):
        word = f"w{next(FRESH):04d}"  # as wide every time: the same cell widths and label angles
        labels = [f"{i}: {word}" for i in range(n)]

        def build(values, labels=labels):
            return heatmap.heatmap(values, labels, labels, x_title="key", y_title="query").spec()

        firsts.append(_ms(lambda: build(rng.normal(size=(n, n)))))
        reruns.append(_ms(lambda: build(rng.normal(size=(n, n)))))
    return statistics.median(firsts), statistics.median(reruns)


def model_view_times(layers: int, heads: int, n: int, repeats: int) -> tuple[float, float]:
    """Median ms of the first build and of a rerun of the model view's thumbnails (softmax rows of random scores)."""
    rng = np.random.default_rng(n)

    def weights():
        a = np.exp(rng.normal(size=(layers, heads, n, n)))
        return a / a.sum(-1, keepdims=True)

    firsts, reruns = [], []
    for _ in range(repeats):
        word = f"w{next(FRESH):04d}"

        def build(tokens=[word] * n):
            return model_views.model_view(weights(), tokens).spec()

        firsts.append(_ms(build))
        reruns.append(_ms(build))
    return statistics.median(firsts), statistics.median(reruns)


def main() -> None:
    heatmap_times(3, 1)  # warm-up: Altair's schema and validators loaded
    rows = [(f"heatmap {n} × {n}", *heatmap_times(n, ARGS.repeats)) for n in (3, 16, 64)]
    rows += [(f"model view {la} × {h} heads of {n} tokens", *model_view_times(la, h, n, ARGS.repeats))
             for la, h, n in ((12, 12, 16), (12, 12, 64))]
    print(f"tree: {ARGS.tree.resolve()}; median of {ARGS.repeats} (ms)")
    print("| chart | first build (new layout) | rerun (cached template) |\n|---|---|---|")
    for name, first, rerun in rows:
        print(f"| {name} | {first:.0f} | {rerun:.1f} |")


if __name__ == "__main__":
    main()
