"""The multilingual MiniLM's memory, measured: a random XLM-RoBERTa checkpoint of its real shapes
(sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2: 12 layers, hidden 384, 12 heads, d_ff 1,536, vocab
250,002, 514 positions, one token type, float32, a pooler) written to a temporary folder with tests/tiny_xlmr.py's
tokenizer, loaded by attn_models in a fresh process; prints its file size, load time, the process's resident memory
(private: RssAnon; the file's pages: RssFile) before and after loading and after a forward pass, and what
attn_models.resident_bytes counts (word embedding memory-mapped, and as a private float32 copy).

    .venv/bin/python bench/multilingual.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
REAL = {"model_type": "xlm-roberta", "architectures": ["XLMRobertaModel"], "num_hidden_layers": 12,
        "num_attention_heads": 12, "hidden_size": 384, "intermediate_size": 1536, "vocab_size": 250002,
        "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "hidden_act": "gelu",
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
SENTENCE = "어텐션은 트랜스포머의 핵심입니다 注意力很重要 " * 4


def write(folder: Path) -> Path:
    from safetensors.numpy import save_file

    sys.path.insert(0, str(ROOT))
    from tests import tiny_bert, tiny_xlmr

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(REAL))
    (folder / "tokenizer.json").write_text(tiny_xlmr.tokenizer_json())
    tensors = {k: v for k, v in tiny_bert.weights(REAL).items() if k != "embeddings.position_ids"}
    rng = np.random.default_rng(1)
    tensors["pooler.dense.weight"] = rng.standard_normal((384, 384)).astype(np.float32)
    tensors["pooler.dense.bias"] = np.zeros(384, np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def status() -> dict[str, float]:  # MB
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def child(folder: str) -> None:
    sys.path.insert(0, str(ROOT))
    import attn_models

    before = status()
    start = time.perf_counter()
    model = attn_models.load(folder)
    loaded = time.perf_counter() - start
    after = status()
    start = time.perf_counter()
    out = model.forward(SENTENCE)
    forward = time.perf_counter() - start
    ran = status()
    cfg = model.config
    print(json.dumps({"before": before, "loaded": after, "after_forward": ran, "load_s": loaded, "forward_s": forward,
                      "n_tokens": len(out.tokens), "mapped": type(model.embeddings.word).__name__,
                      "resident_bytes_mapped": attn_models.resident_bytes(cfg),
                      "resident_bytes_copy": attn_models.resident_bytes(cfg, word_mapped=False),
                      "cap": attn_models.MODEL_LIMITS.resident_bytes,
                      "weights_cap": attn_models.MODEL_LIMITS.weights_bytes}))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    with tempfile.TemporaryDirectory(prefix="multilingual_") as tmp:
        folder = write(Path(tmp) / "m")
        size = (folder / "model.safetensors").stat().st_size
        r = json.loads(subprocess.run([sys.executable, __file__, "--child", str(folder)], check=True,
                                      capture_output=True, text=True).stdout)
    mb = 1e6
    print(f"model.safetensors: {size / mb:.1f} MB (cap {r['weights_cap'] / mb:.0f} MB); word embedding "
          f"{250002 * 384 * 4 / mb:.1f} MB of it, {r['mapped']}")
    print(f"load: {r['load_s']:.2f} s; forward on {r['n_tokens']} tokens: {r['forward_s'] * 1e3:.0f} ms")
    for when in ("before", "loaded", "after_forward"):
        s = r[when]
        print(f"{when:>14}: VmRSS {s['VmRSS']:.0f} MiB = RssAnon {s['RssAnon']:.0f} + RssFile {s['RssFile']:.0f}")
    anon = r["loaded"]["RssAnon"] - r["before"]["RssAnon"]
    print(f"private memory added by load: {anon * 1.048576:.0f} MB; resident_bytes counts "
          f"{r['resident_bytes_mapped'] / mb:.1f} MB (cap {r['cap'] / mb:.0f} MB); with the word embedding as a "
          f"private float32 copy it would be {r['resident_bytes_copy'] / mb:.1f} MB")


if __name__ == "__main__":
    main()
