"""Which heads matter, batched (issue 37): each head of a layer switched off alone, the variants run side by side
from the layer's cached input (attn_models.bert.head_variants), equal the model run whole once per head with that
head switched off (Model.run from the embeddings, attn_core's attention at the intervention point), to 1e-12: every
head of every layer, mean and zero, on the tiny BERT (similarity and a [MASK]'s probability) and on the real
all-MiniLM-L6-v2; the batched layer equals the model's layer with padding too; a run of heads holds what
attn_models.bert.variant_bytes counts. A layer's heads are two runs or more, whoever runs them (``run_parts``: in turn,
or on two threads as attn_ui.infra.budget.spare_core): the same numbers bit for bit."""

from __future__ import annotations

import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import attn_models
from attn_models import Intervention, bert

from .. import minilm as minilm_fixture
from .. import tiny_bert

TOL = 1e-12
OTHER = "A dog was tired."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> attn_models.Model:
    return attn_models.load(str(tiny_bert.build(tmp_path_factory.mktemp("tiny"))))


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> attn_models.Model:
    return attn_models.load(str(tiny_bert.write_mlm(tmp_path_factory.mktemp("mlm"))))


def one_by_one(model: attn_models.Model, texts: tuple[str, ...], how: str) -> np.ndarray:  # -> [n_layers, n_heads]
    """cos(embedding 0, embedding 1) with each head switched off alone: one whole forward pass per head per text."""
    out = np.empty((model.n_layers, model.n_heads))
    for layer in range(model.n_layers):
        for h in range(model.n_heads):
            emb = model.embed_sentences(texts, intervention=Intervention(ablate={(layer, h)}, how=how))
            out[layer, h] = float(emb[0] @ emb[1])
    return out


class TwoThreads:
    """A run_parts that runs the parts last first on two threads at once, noting the parts and threads it saw."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.threads: set[int] = set()

    def __call__(self, parts):
        self.sizes.append(len(parts))

        def run(part):
            self.threads.add(threading.get_ident())
            return part()

        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(run, parts[::-1]))[::-1]


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_the_batched_scan_equals_one_whole_pass_per_head(tiny, how):
    texts = (tiny_bert.SENTENCE, OTHER)
    np.testing.assert_allclose(tiny.similarity_effects(texts, how=how), one_by_one(tiny, texts, how), rtol=0,
                               atol=TOL)


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_the_batched_mask_scan_equals_one_whole_pass_per_head(masked, how):
    text, word = tiny_bert.MASKED[1], tiny_bert.VOCAB.index("dog")
    effects = masked.mask_effects(text, word, mask=1, how=how)
    for layer in range(masked.n_layers):
        for h in range(masked.n_heads):
            probs = masked.mask_probs(text, intervention=Intervention(ablate={(layer, h)}, how=how))
            assert abs(effects[layer, h] - probs[1, word]) <= TOL


def test_heads_one_at_a_time_give_the_same_numbers(tiny, monkeypatch):
    texts = (tiny_bert.SENTENCE, OTHER)
    together = tiny.similarity_effects(texts, layers=[1, 0])
    monkeypatch.setattr(bert, "SCAN_BYTES", 1)  # one head per run
    assert bert.head_chunks(4, bert.variant_bytes(tiny.config, 8)) == [range(h, h + 1) for h in range(4)]
    np.testing.assert_allclose(tiny.similarity_effects(texts, layers=[1, 0]), together, rtol=0, atol=TOL)


def test_a_layer_is_two_runs_or_more_each_within_scan_bytes():
    for n_heads in range(1, 17):
        for per_variant in (1, 10**6, 20 * 10**6, 10**9):
            chunks = bert.head_chunks(n_heads, per_variant)
            assert [h for run in chunks for h in run] == list(range(n_heads))
            assert len(chunks) >= min(2, n_heads)
            assert all(len(run) == 1 or len(run) * per_variant <= bert.SCAN_BYTES for run in chunks)


@pytest.mark.parametrize("how", ["mean", "zero"])
def test_runs_on_two_threads_give_the_same_numbers_bit_for_bit(tiny, masked, how):
    texts, runner = (tiny_bert.SENTENCE, OTHER), TwoThreads()
    effects = tiny.similarity_effects(texts, how=how, run_parts=runner)
    assert np.array_equal(effects, tiny.similarity_effects(texts, how=how))
    np.testing.assert_allclose(effects, one_by_one(tiny, texts, how), rtol=0, atol=TOL)
    text, word = tiny_bert.MASKED[1], tiny_bert.VOCAB.index("dog")
    assert np.array_equal(masked.mask_effects(text, word, mask=1, how=how, run_parts=runner),
                          masked.mask_effects(text, word, mask=1, how=how))
    assert runner.sizes == [2] * (tiny.n_layers + masked.n_layers) and threading.get_ident() not in runner.threads


def test_runs_of_heads_equal_all_heads_at_once():
    """Equal bit for bit on the machine that wrote this (OpenBLAS, one thread); not asserted: a product's last bits may
    depend on how many rows it has, and a run of 6 heads has half the rows of 12."""
    minilm_fixture.folder()  # skips when the package is not installed
    model = minilm_fixture.model()
    enc = model.encode(" ".join(["the cat sat on the mat"] * 10))  # 62 tokens
    hidden = model.run(enc)[0][5]
    args = model.layers[5:], model.config, enc.is_pad  # the last layer: the cheapest
    whole = bert.head_variants(hidden, *args, range(12), "mean")
    runs = [bert.head_variants(hidden, *args, heads, "mean") for heads in bert.head_chunks(12, 1)]
    np.testing.assert_allclose(np.concatenate(runs), whole, rtol=0, atol=TOL)


def test_on_layer_is_called_after_each_row(tiny):
    rows = []
    tiny.similarity_effects((tiny_bert.SENTENCE, OTHER), layers=[1, 0], on_layer=rows.append)
    assert rows == [0, 1]


@pytest.mark.parametrize("pad_to", [None, 12])
def test_the_batched_layer_is_the_models_layer(tiny, pad_to):
    enc = tiny.encode(tiny_bert.SENTENCE, pad_to)
    hidden = tiny.run(enc)[0]  # [n_layers + 1, n_seq, d_model]
    rng = np.random.default_rng(3)
    x = hidden[0] + rng.normal(scale=0.1, size=(2, *hidden[0].shape))  # [2, n_seq, d_model]: two inputs
    batched = bert.batched_layer(x, tiny.layers[0], tiny.config, enc.is_pad)
    for v in range(2):
        alone = bert.layer(x[v], tiny.layers[0], tiny.config, enc.is_pad, Intervention.NONE, 0, False)[0]
        np.testing.assert_allclose(batched[v], alone, rtol=0, atol=TOL)


def test_a_run_of_heads_holds_what_variant_bytes_counts():
    minilm_fixture.folder()  # skips when the package is not installed
    model = minilm_fixture.model()
    enc = model.encode(" ".join(["the cat sat on the mat"] * 10))  # 62 tokens
    hidden = model.run(enc)[0]
    heads = range(4)
    tracemalloc.start()
    try:
        bert.head_variants(hidden[2], model.layers[2:], model.config, enc.is_pad, heads, "mean")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= len(heads) * bert.variant_bytes(model.config, len(enc.tokens))


@pytest.mark.full
@pytest.mark.parametrize("how", ["mean", "zero"])
def test_the_batched_scan_of_minilm_equals_one_whole_pass_per_head(how):
    minilm_fixture.folder()  # skips when the package is not installed
    model = minilm_fixture.model()
    texts = ("The cat sat on the mat because it was tired.", "A dog was lying on a rug.")
    effects = model.similarity_effects(texts, how=how)
    np.testing.assert_allclose(effects, one_by_one(model, texts, how), rtol=0, atol=TOL)
    assert np.array_equal(model.similarity_effects(texts, how=how, run_parts=TwoThreads()), effects)
