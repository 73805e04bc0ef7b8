"""What the neuron view (attn_ui.views.neuron_views) costs a model page's run, at the caps' order of size.

A random BERT the size of all-MiniLM-L6-v2 (6 layers × 12 heads, d_model 384, d_k 32) and one with d_k 128 (4
heads, d_model 512), made with tests/tiny_bert.py, on a sentence of N tokens. For the last layer it times, each the
median of a few repeats after a warm-up:

- ``config_for``: the layer's explorer configuration (the model run to that layer; the page caches it per origin);
- ``run``: attn_core's trace of the whole layer (cached per configuration);
- ``head_neuron``: one query and key of one head (every run: a new query or key costs only this);
- ``chart``: the chart factory's Altair chart and its Vega-Lite dict (the page builds it once per layout);

and the peak memory of config_for + run + head_neuron under tracemalloc. Prints figures; asserts nothing.

Run: ``.venv/bin/python bench/neuron.py`` (``--quick``: 64 tokens, one repeat).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attn_models  # noqa: E402
from attn_core import head_neuron, run  # noqa: E402
from attn_ui.views.neuron_views import vectors_chart  # noqa: E402
from tests import tiny_bert  # noqa: E402

SIZES = {"MiniLM-sized (d_k 32)": {"hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6,
                                   "intermediate_size": 1536},
         "d_k 128": {"hidden_size": 512, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 512}}


def timed(fn, repeats: int) -> tuple[float, object]:
    out = fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n_words, repeats = (62, 1) if a.quick else (254, 5)
    sentence = " ".join(["the cat sat on the mat"] * (n_words // 6 + 1)).split()[:n_words]
    text = " ".join(sentence)
    root = Path(tempfile.mkdtemp())
    for name, size in SIZES.items():
        config = {**tiny_bert.CONFIG, **size, "max_position_embeddings": 512}
        model = attn_models.load(str(tiny_bert.build(root / name.split()[0], config=config)))
        layer = model.config.n_layers - 1
        origin = attn_models.Origin("encoder", model.name, layer, 0, text)
        t_cfg, cfg = timed(lambda origin=origin, model=model: model.config_for(origin), repeats)
        t_run, trace = timed(lambda cfg=cfg: run(cfg), repeats)
        n = cfg.n_seq
        t_view, v = timed(lambda trace=trace, n=n: head_neuron(trace, 0, n - 1, n // 2), repeats)
        t_chart, _ = timed(lambda v=v: vectors_chart({"q": v.q_i, "k": v.k_j}, v.product, x_title="feature")
                           .to_dict(), repeats)
        tracemalloc.start()
        head_neuron(run(model.config_for(origin)), 0, n - 1, n // 2)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{name}: {n} tokens, layer {layer} of {model.config.n_layers}, {cfg.n_heads} heads · config_for "
              f"{t_cfg * 1e3:.1f} ms · run {t_run * 1e3:.1f} ms · head_neuron {t_view * 1e3:.3f} ms · chart "
              f"{t_chart * 1e3:.1f} ms · peak {peak / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
