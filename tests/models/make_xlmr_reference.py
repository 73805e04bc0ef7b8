"""Make tests/models/reference_xlmr.npz: the tiny random XLM-RoBERTa of tests/tiny_xlmr.py run by Hugging Face
transformers' XLMRobertaModel + PyTorch in float64 (eager attention; an implementation independent of attn_models),
for tests/models/test_xlmr.py:

- tiny_xlmr.SENTENCES in one padded batch, tokenized by transformers' tokenizer (PreTrainedTokenizerFast over the
  checkpoint's tokenizer.json, padding with <pad>): the ids, the attention mask and the tokens
  (convert_ids_to_tokens), and the position ids XLMRobertaEmbeddings computes (create_position_ids_from_input_ids);
- the last hidden states [n, n_seq, d], every attention [n, n_layers, n_heads, n_seq, n_seq] and every hidden state
  [n, n_layers + 1, n_seq, d], padding rows and all;
- the sentence embeddings (sentence-transformers' mean pooling over the real tokens, then L2 normalisation, as
  paraphrase-multilingual-MiniLM-L12-v2's modules.json says) and their cosine similarities;
- the same for the checkpoint saved with the "roberta." prefix (``prefixed_last``), and the safetensors file's
  sha256 (the test checks it wrote the same file).

Run once, when the cases or the tiny checkpoint change (the test suite needs neither torch nor transformers)::

    PYTHONPATH=/tmp/tf .venv/bin/python tests/models/make_xlmr_reference.py
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference_xlmr.npz"


def run(folder: Path, texts: tuple[str, ...]) -> dict[str, np.ndarray]:
    import torch
    import transformers
    from transformers.models.xlm_roberta.modeling_xlm_roberta import XLMRobertaEmbeddings

    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), bos_token="<s>",
                                               eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
                                               mask_token="<mask>", cls_token="<s>", sep_token="</s>")
    tok._tokenizer.no_truncation()
    tok._tokenizer.no_padding()
    batch = tok(list(texts), padding=True, return_tensors="pt")
    ids, mask = batch["input_ids"], batch["attention_mask"]
    model = transformers.XLMRobertaModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False)
    model = model.to(torch.float64).eval()
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
    last = out.last_hidden_state
    m = mask[..., None].to(torch.float64)
    mean = (last * m).sum(1) / m.sum(1).clamp(min=1e-9)
    emb = torch.nn.functional.normalize(mean, p=2, dim=1)
    positions = XLMRobertaEmbeddings.create_position_ids_from_input_ids(ids, model.config.pad_token_id)
    tokens = np.array([tok.convert_ids_to_tokens(row.tolist()) for row in ids], dtype=object).astype(str)
    return {
        "ids": ids.numpy(), "mask": mask.numpy(), "tokens": tokens, "positions": positions.numpy(),
        "last": last.numpy(), "attentions": torch.stack(out.attentions, 1).numpy(),
        "hidden": torch.stack(out.hidden_states, 1).numpy(), "embeddings": emb.numpy(),
        "similarities": (emb @ emb.T).numpy(),
    }


def main() -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from tests import tiny_xlmr

    with tempfile.TemporaryDirectory() as tmp:
        plain = tiny_xlmr.build(Path(tmp) / "plain")
        prefixed = tiny_xlmr.build(Path(tmp) / "prefixed", prefix="roberta.")
        arrays = run(plain, tiny_xlmr.SENTENCES)
        arrays["prefixed_last"] = run(prefixed, tiny_xlmr.SENTENCES)["last"]
        arrays["sha256"] = np.array(hashlib.sha256((plain / "model.safetensors").read_bytes()).hexdigest())
    np.savez_compressed(OUT, **arrays)
    for k, v in arrays.items():
        print(k, v.shape, v.dtype)


if __name__ == "__main__":
    main()
