"""transformers' greedy generate with its key/value cache, in float64 on one thread, on a checkpoint folder: the
reference column of bench/gpt2.py and bench/t5.py (issue 37). Run by a Python that has torch and transformers (a
separate venv: they are no requirement of the app), never imported by the app or the tests.

Prints one JSON line: {"seconds": [each run's time], "ids": [the new tokens' ids], "threads": torch's threads}.

    OPENBLAS_NUM_THREADS=1 /tmp/torchenv/bin/python bench/torch_generate.py gpt2 FOLDER --ids 1 2 3 --new 20
    OPENBLAS_NUM_THREADS=1 /tmp/torchenv/bin/python bench/torch_generate.py t5 FOLDER --ids 4 5 1 --new 20
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # torch's idle threads spin otherwise (bench/model.py)
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family", choices=("gpt2", "t5"))
    ap.add_argument("folder")
    ap.add_argument("--ids", type=int, nargs="+", required=True, help="the prompt's (gpt2) or source's (t5) ids")
    ap.add_argument("--new", type=int, default=20, help="tokens to write")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import torch
    import transformers

    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    kind = transformers.GPT2LMHeadModel if args.family == "gpt2" else transformers.T5ForConditionalGeneration
    model = kind.from_pretrained(args.folder, attn_implementation="eager").to(torch.float64).eval()
    x = torch.tensor([args.ids])
    options = {"do_sample": False, "num_beams": 1, "max_new_tokens": args.new, "attention_mask": torch.ones_like(x)}
    if args.family == "gpt2":  # every step runs: a random model never says <|endoftext|> on purpose
        options.update(min_new_tokens=args.new, pad_token_id=0)
    seconds, out = [], None
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = model.generate(x, **options)
        seconds.append(time.perf_counter() - start)
    new = out[0, x.shape[1]:] if args.family == "gpt2" else out[0, 1:]  # t5's output starts with the start token
    print(json.dumps({"seconds": seconds, "ids": new.tolist(), "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
