"""GPT-2 in attn_models (issue 30): memory, forward time, generation per token, and the caps decision. Prints figures;
never a timed assertion.

The model: random weights of GPT-2's published shapes (float32, as model.safetensors stores them; no download):
distilgpt2 (6 layers) and GPT-2 small (12 layers), both d_model 768, 12 heads, vocab 50,257, 1,024 positions.

- memory: the process's RSS (/proc/self/statm) before and after the weights are made: kept in float32 (what
  attn_models.gpt2 does, each block cast to float64 when it runs) against a float64 copy of everything; then the
  highest RSS seen during a forward pass at 256 tokens (the float64 block and the float64 chunk of wte the pass
  makes). attn_models.gpt2_resident_bytes is printed beside it.
- the same numbers: the forward pass's logits and attentions with the float32 weights and with their float64 copy
  (equal bit for bit, or not).
- forward: ``CausalLM.run`` (every block, every attention through attn_core) + the last position's logits at 16, 64
  and 256 tokens, best of ``--repeats``; and what ``forward`` adds (the logits of every position, [n, 50257]) at 64.
  Against transformers' GPT2LMHeadModel in float64 (eager attention) when torch and transformers are importable.
- generation: one step of ``generate`` is a forward pass on the whole context + the last logits + a softmax
  (no key/value cache): its time at contexts 16, 64, 256 is the time per token there. With transformers, its
  ``generate(max_new_tokens=32)`` from 16 tokens (with its cache) per token, beside ours over the same 32 steps.
- the explorer: one head's configuration (X [n, 769], W_Q, W_K, W_V [769, 64], W_O [64, 768]) made and run by
  attn_core at 256 tokens, against attn_core.LIMITS.
- the key/value cache (issue 37): the same random weights written as a checkpoint folder (config.json,
  model.safetensors, tests/tiny_gpt2.py's tokenizer) and read by ``load_causal_lm``; ``generate`` of 20 tokens after
  a 16-token prompt, before (``cache=False``: the whole forward pass on the context every step) and after (the
  cache: the prompt, then one token a step), and 32 tokens after 16 a token; the first step (the prompt) and the
  later ones apart; the cache's bytes; transformers' ``generate`` with its cache in float64 on one thread on the same
  folder (``--torch-python``: a separate venv's Python runs bench/torch_generate.py), and whether its greedy tokens
  are ours.

Run: ``.venv/bin/python bench/gpt2.py`` (``--repeats 3``, ``--layers 6 12``, ``--threads 1``);
``PYTHONPATH=/tmp/tf .venv/bin/python bench/gpt2.py`` adds transformers' column (torch importable here);
``--torch-python /tmp/torchenv/bin/python`` adds transformers' generate from a separate venv; ``--cache-only``: the
key/value cache's figures alone.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "1"
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy is imported
    os.environ.setdefault(var, THREADS)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import attn_core  # noqa: E402
from attn_models import causal, gpt2, kv, load_causal_lm, ops  # noqa: E402
from attn_models.gpt2 import gpt2_resident_bytes  # noqa: E402
from attn_models.intervene import head_weights  # noqa: E402
from attn_models.limits import MODEL_LIMITS  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    """The process's resident bytes now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def random_weights(cfg: gpt2.Gpt2Config, dtype: type, seed: int = 0) -> gpt2.Gpt2Weights:
    """GPT-2-shaped random weights (scaled as GPT-2's init: 0.02), in ``dtype``."""
    rng = np.random.default_rng(seed)
    d, ff = cfg.d_model, cfg.d_inner

    def r(*shape: int, scale: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)

    blocks = tuple(gpt2.Block(1 + r(d), r(d), r(d + 1, d, scale=0.2), r(d + 1, d, scale=0.2), r(d + 1, d), r(d, d),
                              r(d), 1 + r(d), r(d), r(d, ff), r(ff), r(ff, d), r(d)) for _ in range(cfg.n_layers))
    return gpt2.Gpt2Weights(r(cfg.vocab_size, d, scale=0.1), r(cfg.max_positions, d, scale=0.01), blocks,
                            1 + r(d), r(d))


def as_f64(w: gpt2.Gpt2Weights) -> gpt2.Gpt2Weights:
    return gpt2.Gpt2Weights(w.wte.astype(np.float64), w.wpe.astype(np.float64), tuple(b.f64() for b in w.blocks),
                            w.ln_f_g.astype(np.float64), w.ln_f_b.astype(np.float64))


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def step(lm: gpt2.CausalLM, ids: np.ndarray) -> np.ndarray:
    """What one generation step computes: the forward pass on the context, the last logits, their softmax."""
    stream, _ = lm.run(ids)
    return gpt2.temperature_probs(lm._last_logits(stream[-1]), 1.0)


def peak_during(fn) -> tuple[int, object]:
    """(the highest RSS sampled every 2 ms while ``fn`` runs, its result)."""
    import threading

    top, done = [rss()], threading.Event()

    def watch() -> None:
        while not done.is_set():
            top[0] = max(top[0], rss())
            time.sleep(0.002)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        result = fn()
    finally:
        done.set()
        t.join()
    return max(top[0], rss()), result


def torch_model(cfg: gpt2.Gpt2Config, w: gpt2.Gpt2Weights):
    """transformers' GPT2LMHeadModel in float64 with the same weights, or None without torch/transformers."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    tc = transformers.GPT2Config(n_layer=cfg.n_layers, n_head=cfg.n_heads, n_embd=cfg.d_model,
                                 vocab_size=cfg.vocab_size, n_positions=cfg.max_positions, attn_implementation="eager")
    model = transformers.GPT2LMHeadModel(tc).to(torch.float64).eval()
    d = cfg.d_model
    with torch.no_grad():
        t = model.transformer
        t.wte.weight.copy_(torch.from_numpy(w.wte.astype(np.float64)))
        t.wpe.weight.copy_(torch.from_numpy(w.wpe.astype(np.float64)))
        t.ln_f.weight.copy_(torch.from_numpy(w.ln_f_g.astype(np.float64)))
        t.ln_f.bias.copy_(torch.from_numpy(w.ln_f_b.astype(np.float64)))
        for blk, b in zip(t.h, w.blocks, strict=True):
            b = b.f64()
            blk.ln_1.weight.copy_(torch.from_numpy(b.ln1_g))
            blk.ln_1.bias.copy_(torch.from_numpy(b.ln1_b))
            qkv = np.hstack([b.w_q, b.w_k, b.w_v])  # [d + 1, 3d]
            blk.attn.c_attn.weight.copy_(torch.from_numpy(qkv[:d]))
            blk.attn.c_attn.bias.copy_(torch.from_numpy(qkv[d]))
            blk.attn.c_proj.weight.copy_(torch.from_numpy(b.w_o))
            blk.attn.c_proj.bias.copy_(torch.from_numpy(b.b_o))
            blk.ln_2.weight.copy_(torch.from_numpy(b.ln2_g))
            blk.ln_2.bias.copy_(torch.from_numpy(b.ln2_b))
            blk.mlp.c_fc.weight.copy_(torch.from_numpy(b.w_fc))
            blk.mlp.c_fc.bias.copy_(torch.from_numpy(b.b_fc))
            blk.mlp.c_proj.weight.copy_(torch.from_numpy(b.w_proj))
            blk.mlp.c_proj.bias.copy_(torch.from_numpy(b.b_proj))
    return model


def bench(n_layers: int, repeats: int, torch_python: str | None = None, cache_only: bool = False) -> None:
    name = {6: "distilgpt2", 12: "GPT-2 small"}.get(n_layers, f"{n_layers} layers")
    cfg = gpt2.Gpt2Config(n_layers=n_layers, n_heads=12, d_model=768, vocab_size=50257, max_positions=1024, eps=1e-5)
    print(f"\n== {name}: {n_layers} layers, d_model 768, 12 heads, vocab 50,257 ==")
    if cache_only:
        bench_cache(cfg, random_weights(cfg, np.float32), repeats, torch_python)
        return
    print(f"gpt2_resident_bytes: float32 {gpt2_resident_bytes(cfg) / 1e6:.1f} MB, float64 "
          f"{gpt2_resident_bytes(cfg, 8) / 1e6:.1f} MB; the cap (MODEL_LIMITS.causal_resident_bytes) "
          f"{MODEL_LIMITS.causal_resident_bytes / 1e6:.0f} MB")
    gc.collect()
    base = rss()
    w32 = random_weights(cfg, np.float32)
    after32 = rss()
    w64 = as_f64(w32)
    after64 = rss()
    print(f"RSS: weights kept in float32 +{(after32 - base) / 1e6:.1f} MB ({w32.nbytes / 1e6:.1f} MB of arrays); "
          f"a float64 copy +{(after64 - after32) / 1e6:.1f} MB ({w64.nbytes / 1e6:.1f} MB of arrays)")
    lm32 = gpt2.CausalLM(name, cfg, w32, None)
    lm64 = gpt2.CausalLM(name, cfg, w64, None)
    rng = np.random.default_rng(1)
    ids = {n: rng.integers(0, cfg.vocab_size, n).astype(np.intp) for n in (16, 64, 256)}
    s32, a32 = lm32.run(ids[64])
    s64, a64 = lm64.run(ids[64])
    same = np.array_equal(s32, s64) and np.array_equal(a32, a64) and np.array_equal(
        lm32._last_logits(s32[-1]), lm64._last_logits(s64[-1]))
    print(f"float32 kept, cast per block vs all float64: hidden states, attentions and logits at 64 tokens "
          f"{'equal bit for bit' if same else 'DIFFERENT'}")
    del w64, lm64, s64, a64
    gc.collect()
    before = rss()
    top, _ = peak_during(lambda: step(lm32, ids[256]))
    print(f"RSS during a forward pass at 256 tokens: {before / 1e6:.0f} MB before, highest {top / 1e6:.0f} MB "
          f"(+{(top - before) / 1e6:.0f} MB while it runs)")
    cast = best(lambda: ([b.f64() for b in w32.blocks], [w32.wte[i:i + 4096].astype(np.float64)
                                                         for i in range(0, len(w32.wte), 4096)]), repeats)
    print(f"casting every block and wte to float64 (what each forward pass does with float32 weights): {cast:.3f} s")
    model = torch_model(cfg, w32)
    print("tokens | run + last logits (a generation step) | transformers float64 (no cache)")
    for n, i in ids.items():
        ours = best(lambda i=i: step(lm32, i), repeats)
        theirs = ""
        if model is not None:
            import torch

            x = torch.from_numpy(i[None].astype(np.int64))
            with torch.no_grad():
                theirs = f"{best(lambda x=x: model(input_ids=x, output_attentions=True), repeats):.3f} s"
        print(f"{n:6d} | {ours:.3f} s | {theirs}")
    last = s32[-1]  # what forward adds to run at 64 tokens: ln_f and the logits of every position [64, 50257]
    every = best(lambda: ops.tied_logits(ops.layer_norm(last, w32.ln_f_g.astype(np.float64),
                                                         w32.ln_f_b.astype(np.float64), cfg.eps), w32.wte), repeats)
    print(f"forward's logits of every position at 64 tokens [64, 50257]: +{every:.3f} s")
    if model is not None:
        import torch

        x = torch.from_numpy(ids[16][None].astype(np.int64))
        with torch.no_grad():
            t = time.perf_counter()
            model.generate(x, max_new_tokens=32, do_sample=False, min_new_tokens=32, pad_token_id=0,
                           attention_mask=torch.ones_like(x))
            per = (time.perf_counter() - t) / 32
        print(f"transformers generate (key/value cache), 16 → 48 tokens: {per * 1e3:.0f} ms a token")
    t = time.perf_counter()
    ctx = list(ids[16])
    for _ in range(32):
        ctx.append(int(np.argmax(step(lm32, np.array(ctx, dtype=np.intp)))))
    print(f"ours, greedy 16 → 48 tokens (whole forward pass a step): {(time.perf_counter() - t) / 32 * 1e3:.0f} ms a "
          f"token")
    # the explorer: one head at 256 tokens
    b = w32.blocks[0].f64()
    x1 = np.hstack([rng.standard_normal((256, 768)), np.ones((256, 1))])
    wq, wk, wv, wo = head_weights(b.w_q, b.w_k, b.w_v, b.w_o, 5, 12)
    t = time.perf_counter()
    hcfg = attn_core.make_config([f"t{k}" for k in range(256)], x1, wq, wk, wv, wo, n_heads=1, mask_kind="causal")
    attn_core.run(hcfg)
    cells = gpt2.head_cells(768, 64, 256)
    print(f"one head in the explorer at 256 tokens: {cells:,} cells (cap {attn_core.LIMITS.total_cells:,}), made and "
          f"run in {time.perf_counter() - t:.3f} s; a whole layer would be "
          f"{256 * 769 + 3 * 769 * 768 + 768 * 768:,} cells")
    bench_cache(cfg, w32, repeats, torch_python)


def write_checkpoint(cfg: gpt2.Gpt2Config, w: gpt2.Gpt2Weights, folder: Path) -> Path:
    """``w`` as a GPT-2 checkpoint folder transformers and ``load_causal_lm`` both read: config.json (distilgpt2's
    shape), model.safetensors (GPT2LMHeadModel's names, c_attn fused again), tests/tiny_gpt2.py's tokenizer (its ids
    are the first 301 of the vocabulary; the others have no text)."""
    import json

    from safetensors.numpy import save_file

    from tests import tiny_gpt2

    d = cfg.d_model
    t = {"wte.weight": w.wte, "wpe.weight": w.wpe, "ln_f.weight": w.ln_f_g, "ln_f.bias": w.ln_f_b}
    for i, b in enumerate(w.blocks):
        p = f"h.{i}."
        qkv = np.hstack([b.w_q, b.w_k, b.w_v])  # [d + 1, 3d]: the bias as the last row
        t.update({p + "ln_1.weight": b.ln1_g, p + "ln_1.bias": b.ln1_b, p + "attn.c_attn.weight": qkv[:d],
                  p + "attn.c_attn.bias": qkv[d], p + "attn.c_proj.weight": b.w_o, p + "attn.c_proj.bias": b.b_o,
                  p + "ln_2.weight": b.ln2_g, p + "ln_2.bias": b.ln2_b, p + "mlp.c_fc.weight": b.w_fc,
                  p + "mlp.c_fc.bias": b.b_fc, p + "mlp.c_proj.weight": b.w_proj, p + "mlp.c_proj.bias": b.b_proj})
    folder.mkdir(parents=True, exist_ok=True)
    config = {**tiny_gpt2.config(cfg.vocab_size), "n_layer": cfg.n_layers, "n_head": cfg.n_heads, "n_embd": d,
              "n_positions": cfg.max_positions, "n_ctx": cfg.max_positions}
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "tokenizer.json").write_text(tiny_gpt2.tokenizer().to_str())
    save_file({"transformer." + k: np.ascontiguousarray(v) for k, v in t.items()}, str(folder / "model.safetensors"))
    return folder


def prompt_of(lm: gpt2.CausalLM, n_tokens: int) -> str:
    """A prompt of ``n_tokens`` tokens: tests/tiny_gpt2.py's corpus word by word, each word taken only when it keeps
    the prompt within ``n_tokens`` (a word of two pieces may be skipped for one of one)."""
    from tests import tiny_gpt2

    text = ""
    for word in " ".join(tiny_gpt2.CORPUS * 8).split():
        longer = (text + " " + word).strip()
        if len(lm.encode(longer).ids) <= n_tokens:
            text = longer
        if len(lm.encode(text).ids) == n_tokens:
            break
    return text


def timed_write(lm: gpt2.CausalLM, prompt: str, n_new: int, cache: bool) -> tuple[float, list[float], object]:
    """(seconds for ``generate``, the seconds at which each token was chosen, the Generation)."""
    marks: list[float] = []
    start = time.perf_counter()
    gen = lm.generate(prompt, n_new, cache=cache, on_step=lambda i, step: marks.append(time.perf_counter() - start))
    return time.perf_counter() - start, marks, gen


def torch_write(torch_python: str, folder: Path, ids: np.ndarray, n_new: int) -> dict:
    """transformers' generate of ``n_new`` tokens after ``ids`` in a separate venv (bench/torch_generate.py): its
    JSON (the best of 2 runs in one process: the first warms torch up)."""
    import json
    import subprocess

    run = subprocess.run([torch_python, str(Path(__file__).with_name("torch_generate.py")), "gpt2", str(folder),
                          "--ids", *map(str, ids), "--new", str(n_new), "--repeats", "2"], check=True,
                         capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    return json.loads(run.stdout.strip().splitlines()[-1])


def bench_cache(cfg: gpt2.Gpt2Config, w32: gpt2.Gpt2Weights, repeats: int, torch_python: str | None) -> None:
    """Issue 37: writing on the key/value cache against the whole text each step, and against transformers (runs of
    ours and theirs alternate, so a change in the shared machine's load falls on both)."""
    import tempfile

    folder = write_checkpoint(cfg, w32, Path(tempfile.mkdtemp(prefix="gpt2_bench_")) / "gpt2")
    lm = load_causal_lm(str(folder))
    prompt = prompt_of(lm, 16)
    ids = lm.encode(prompt).ids
    print(f"\n-- the key/value cache (issue 37): {folder}, a prompt of {len(ids)} tokens --")
    made: list[kv.KVCache] = []

    class Counted(kv.KVCache):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    causal.KVCache = Counted  # to read the cache's bytes after a write
    before = [timed_write(lm, prompt, 20, False) for _ in range(max(1, repeats - 1))]
    after, long, theirs = [], [], {20: [], 32: []}
    for _ in range(repeats):  # ours and transformers' in turn
        after.append(timed_write(lm, prompt, 20, True))
        held = made[-1]  # the 20-token write's cache
        if torch_python:
            theirs[20].append(torch_write(torch_python, folder, ids, 20))
        long.append(timed_write(lm, prompt, 32, True))
        if torch_python:
            theirs[32].append(torch_write(torch_python, folder, ids, 32))
    causal.KVCache = kv.KVCache
    t_before, t_after = min(b[0] for b in before), min(a[0] for a in after)
    same = all(b[2].ids.tolist() == after[0][2].ids.tolist() for b in before)
    first = min(a[1][0] for a in after)
    later = min((a[1][-1] - a[1][0]) / (len(a[1]) - 1) for a in after)
    print(f"20 tokens after {len(ids)}: before (the whole text each step) {t_before:.2f} s, "
          f"{t_before / 20 * 1e3:.0f} ms a token; after (the cache) {t_after:.2f} s, "
          f"{t_after / 20 * 1e3:.0f} ms a token ({t_before / t_after:.1f} × faster); the same tokens: {same}")
    print(f"  after: the first token (the prompt's {len(ids)} positions) {first * 1e3:.0f} ms, each later one "
          f"{later * 1e3:.1f} ms; the cache held {held.nbytes / 1e6:.2f} MB (its n_max {held.n_max} positions; "
          f"2 · {cfg.n_layers} · {held.n_max} · {cfg.d_model} · 8 = "
          f"{2 * cfg.n_layers * held.n_max * cfg.d_model * 8 / 1e6:.2f} MB)")
    per = min(t for t, _, _ in long) / 32
    print(f"32 tokens after {len(ids)} on the cache: {per * 1e3:.1f} ms a token")
    if not torch_python:
        print("(no --torch-python: no transformers column)")
        return
    t20 = min(min(r["seconds"]) for r in theirs[20])
    t32 = min(min(r["seconds"]) for r in theirs[32]) / 32
    equal = all(r["ids"] == after[0][2].ids.tolist() for r in theirs[20]) and all(
        r["ids"] == long[0][2].ids.tolist() for r in theirs[32])
    print(f"transformers generate, float64, its cache, {theirs[20][0]['threads']} thread: 20 tokens after {len(ids)} "
          f"{t20:.2f} s ({t20 / 20 * 1e3:.0f} ms a token); 32 after {len(ids)}: {t32 * 1e3:.1f} ms a token")
    print(f"ours / transformers, a token (32 after {len(ids)}): {per / t32:.2f} ×; 20 after {len(ids)}: "
          f"{t_after / t20:.2f} ×; greedy tokens equal to transformers': {equal}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--layers", type=int, nargs="+", default=[6, 12])
    ap.add_argument("--threads", default="1", help="BLAS (and torch) threads; on a busy shared machine, 2 OpenBLAS "
                    "threads made a [16, 769] @ [769, 64] product 90 × slower than 1 (load average 10 on 2 cores)")
    ap.add_argument("--torch-python", help="a Python with torch and transformers (a separate venv) for transformers' "
                    "generate on the same checkpoint folder (bench/torch_generate.py)")
    ap.add_argument("--cache-only", action="store_true", help="the key/value cache's figures only (issue 37)")
    args = ap.parse_args()
    try:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    except ImportError:
        pass
    print(f"BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"attn_core.LIMITS: d_model {attn_core.LIMITS.d_model}, width {attn_core.LIMITS.width}, total cells "
          f"{attn_core.LIMITS.total_cells:,}; MODEL_LIMITS.weights_bytes {MODEL_LIMITS.weights_bytes / 1e6:.0f} MB")
    if len(args.layers) > 1:  # one process per model: the RSS figures of one do not hold the other's freed memory
        import subprocess

        more = ["--cache-only"] * args.cache_only + (["--torch-python", args.torch_python] if args.torch_python else [])
        for n in args.layers:
            subprocess.run([sys.executable, __file__, "--layers", str(n), "--repeats", str(args.repeats), "--threads",
                            args.threads, *more], check=True)
        return
    bench(args.layers[0], args.repeats, args.torch_python, args.cache_only)


if __name__ == "__main__":
    main()
