"""attn_models on a tiny random BERT made here: the loader (folder, Hub cache offline), the forward pass against an
independent plain implementation, layer_config in attn_core, the refusals (caps, pickles, no network)."""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_core import LIMITS, configs_equal, run, share

from .. import fake_hub, tiny_bert

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert.build(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def tiny(tiny_dir: Path) -> attn_models.Model:
    return attn_models.load(str(tiny_dir))


# ---- an independent forward pass: plain loops, math.erf, the checkpoint's [out, in] weights as stored ----------


def reference_forward(folder: Path, ids: list[int], n_real: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hidden_states, attentions, attention outputs) of BERT written out the plain way (not attn_models' code)."""
    from safetensors.numpy import load_file

    cfg = json.loads((folder / "config.json").read_text())
    t = {k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}
    n, d, h = len(ids), cfg["hidden_size"], cfg["num_attention_heads"]
    dk, eps = d // h, cfg["layer_norm_eps"]

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * t[p + ".weight"] + t[p + ".bias"]

    def lin(x, p):
        return x @ t[p + ".weight"].T + t[p + ".bias"]

    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.token_type_embeddings.weight"][0]
    x = ln(x + t["embeddings.position_embeddings.weight"][:n], "embeddings.LayerNorm")
    hidden, atts, outs = [x], [], []
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (lin(x, f"{p}.attention.self.{m}") for m in ("query", "key", "value"))
        att = np.zeros((h, n, n))
        ctx = np.zeros((n, d))
        for hh in range(h):
            cols = slice(hh * dk, (hh + 1) * dk)
            for a in range(n):
                s = [float(q[a, cols] @ k[b, cols]) / math.sqrt(dk) if b < n_real else -math.inf for b in range(n)]
                top = max(s)
                e = [math.exp(v_ - top) for v_ in s]
                att[hh, a] = np.array(e) / sum(e)
            ctx[:, cols] = att[hh] @ v[:, cols]
        out = lin(ctx, f"{p}.attention.output.dense")
        x1 = ln(out + x, f"{p}.attention.output.LayerNorm")
        inner = lin(x1, f"{p}.intermediate.dense")
        inner = inner * 0.5 * (1 + np.vectorize(math.erf)(inner / math.sqrt(2)))
        x = ln(lin(inner, f"{p}.output.dense") + x1, f"{p}.output.LayerNorm")
        hidden.append(x)
        atts.append(att)
        outs.append(out)
    return np.stack(hidden), np.stack(atts), np.stack(outs)


# ---- tokens --------------------------------------------------------------------------------------------------


def test_tokens_show_cls_sep_pieces_and_unk(tiny):
    assert tiny.tokenize(tiny_bert.TRICKY) == ["[CLS]", "token", "##ize", "##r", "##s", "play", "##ing", "[UNK]",
                                               "!", "[SEP]"]
    # the tokenizer.json asks for truncation to 8 and padding to 12: both are switched off
    assert len(tiny.tokenize(tiny_bert.SENTENCE)) == 9
    assert tiny.tokenize("", pad_to=4) == ["[CLS]", "[SEP]", "[PAD]", "[PAD]"]


# ---- the forward pass ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence, pad_to", [(tiny_bert.SENTENCE, None), (tiny_bert.TRICKY, None),
                                              (tiny_bert.SENTENCE, 13), ("", None)])
def test_forward_matches_an_independent_implementation(tiny, tiny_dir, sentence, pad_to):
    enc = tiny.encode(sentence, pad_to)
    n_real = int((~enc.is_pad).sum())
    hidden, atts, _ = reference_forward(tiny_dir, list(enc.ids), n_real)
    out = tiny.forward(sentence, pad_to)
    assert out.attentions.shape == (2, 4, len(enc.tokens), len(enc.tokens))
    assert out.hidden_states.shape == (3, len(enc.tokens), 16)
    assert out.attentions.dtype == out.hidden_states.dtype == np.float64
    np.testing.assert_allclose(out.attentions, atts, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.hidden_states, hidden, rtol=0, atol=1e-11)
    assert (out.attentions[..., n_real:] == 0).all()  # nobody attends to padding


def test_erf_and_gelu_are_exact():
    xs = np.concatenate([np.linspace(-8, 8, 20_001), [0.0, -0.0, 5.9, 6.0, 1e-300, -1e300]])
    assert np.abs(attn_models.erf(xs) - [math.erf(v) for v in xs]).max() <= 2.3e-16
    exact = xs * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in xs]))
    assert (np.abs(attn_models.gelu(xs) - exact) <= 4e-16 * np.maximum(np.abs(xs), 1)).all()


# ---- one layer in the explorer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pad_to", [None, 12])
def test_layer_config_runs_to_the_models_weights_exactly(tiny, tiny_dir, pad_to):
    out = tiny.forward(tiny_bert.SENTENCE, pad_to)
    enc = tiny.encode(tiny_bert.SENTENCE, pad_to)
    _, _, attn_outputs = reference_forward(tiny_dir, list(enc.ids), int((~enc.is_pad).sum()))
    for layer in range(tiny.n_layers):
        cfg = tiny.layer_config(tiny_bert.SENTENCE, layer, pad_to, head=3)
        n = len(enc.tokens)
        assert cfg.tokens == enc.tokens and cfg.n_heads == 4 and cfg.scale == "sqrt_dk" and cfg.d_k == 4
        assert cfg.x.shape == (n, 17) and (cfg.x[:, 16] == 1).all()  # the bias feature
        np.testing.assert_array_equal(cfg.x[:, :16], out.hidden_states[layer])
        assert cfg.w_q.shape == cfg.w_k.shape == cfg.w_v.shape == (17, 16) and cfg.w_o.shape == (16, 16)
        assert (cfg.mask_kind, cfg.is_pad) == (("padding", tuple(enc.is_pad)) if pad_to else ("none", (False,) * n))
        assert cfg.origin == {"model": str(tiny_dir), "layer": layer, "sentence": tiny_bert.SENTENCE,
                              "pad_to": pad_to or 0, "head": 3, "bias_column": 16}
        trace = run(cfg)
        for h in range(4):
            np.testing.assert_array_equal(trace.heads[h].weights, out.attentions[layer, h])
        # the output differs from the model's attention output by b_O alone
        np.testing.assert_allclose(trace.output + tiny.output_bias(layer), attn_outputs[layer], rtol=0, atol=1e-12)


def test_layer_config_travels_in_links_and_files_with_its_origin(tiny):
    cfg = tiny.layer_config(tiny_bert.TRICKY, 1, head=2)
    back, page = share.decode_link(share.encode_link(cfg, "steps"), max_chars=10**6)  # beyond a link's cap
    assert configs_equal(cfg, back) and back.origin["head"] == 2 and page == "steps"
    assert configs_equal(cfg, share.from_json(share.to_json(cfg))[0])


def test_bad_layer_and_long_sentence_are_refused(tiny):
    with pytest.raises(attn_models.ModelError, match="layers 0 … 1"):
        tiny.layer_config("the cat", 2)
    with pytest.raises(attn_models.ModelError, match="40 positions allow 40"):  # the tiny model has 40 positions
        tiny.forward("the cat " * 20)


# ---- where the files come from ---------------------------------------------------------------------------------


def test_bert_prefixed_names_load_the_same(tmp_path, tiny):
    other = attn_models.load(str(tiny_bert.build(tmp_path, prefix="bert.")))
    np.testing.assert_array_equal(other.forward("the cat").attentions, tiny.forward("the cat").attentions)


def test_hub_cache_offline(tmp_path, tiny_dir, tiny, monkeypatch):
    tiny_bert.fake_hub_cache(tmp_path / "hub", "someone/tiny-bert", tiny_dir)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert attn_models.in_cache("someone/tiny-bert", tmp_path / "hub")
    model = attn_models.load("someone/tiny-bert", cache_dir=tmp_path / "hub")
    assert model.name == "someone/tiny-bert"
    np.testing.assert_array_equal(model.forward("the cat").attentions, tiny.forward("the cat").attentions)
    with pytest.raises(attn_models.ModelUnavailableError, match="server's Hugging Face cache.*give that folder"):
        attn_models.load("someone/missing", cache_dir=tmp_path / "hub")


def test_hub_cache_from_the_environment_in_a_fresh_process(tmp_path, tiny_dir):
    """The real loading code with nothing but HF_HOME and HF_HUB_OFFLINE=1 set, as on a machine without network."""
    tiny_bert.fake_hub_cache(tmp_path / "hf" / "hub", "someone/tiny-bert", tiny_dir)
    script = ("import sys, attn_models; m = attn_models.load('someone/tiny-bert'); "
              "print(m.forward('the cat').attentions.shape, 'torch' in sys.modules, 'transformers' in sys.modules, "
              "'streamlit' in sys.modules)")
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HUB_CACHE", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(2,", "4,", "4,", "4)", "False", "False", "False"]


def test_missing_cache_without_network_says_how_to_give_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(attn_models.ModelUnavailableError) as err:
        attn_models.load(attn_models.DEFAULT_MODEL, cache_dir=tmp_path)
    assert "HF_HUB_OFFLINE" in str(err.value) and "folder" in str(err.value)


class _Trap:
    """Unpickling this touches a file: the sign that a pickle was loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_pickle_only_checkpoint_is_refused_never_unpickled(tmp_path, tiny_dir):
    folder = tmp_path / "pickled"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (folder / name).write_bytes((tiny_dir / name).read_bytes())
    marker = tmp_path / "unpickled"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Trap(marker)))
    with pytest.raises(attn_models.ModelError, match="pytorch_model.bin: a pickle, which this app never unpickles"):
        attn_models.load(str(folder))
    assert not marker.exists()


@pytest.mark.parametrize("change, cap", [
    ({"hidden_size": 1024, "num_attention_heads": 16}, f"over the cap of {LIMITS.d_model} (d_model)"),
    ({"hidden_size": 64, "num_attention_heads": 32}, f"over the cap of {LIMITS.n_heads} (heads)"),
    ({"model_type": "mamba"}, "model_type 'mamba' is not one this app runs"),
    ({"hidden_act": "gelu_new"}, "exact"),
])
def test_models_over_the_caps_are_refused_naming_the_cap(tmp_path, tiny_dir, change, cap):
    folder = tmp_path / "big"
    folder.mkdir()
    for f in tiny_dir.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "config.json").write_text(json.dumps({**tiny_bert.CONFIG, **change}))
    with pytest.raises(attn_models.ModelError, match=cap.replace("(", r"\(").replace(")", r"\)")):
        attn_models.load(str(folder))


def test_the_default_model_fits_the_caps():
    cfg = attn_models.parse_config({"model_type": "bert", "num_hidden_layers": 6, "num_attention_heads": 12,
                                    "hidden_size": 384, "intermediate_size": 1536, "vocab_size": 30522})
    assert attn_models.config_cells(cfg.d_model, cfg.max_tokens) <= LIMITS.total_cells


def test_a_source_that_is_neither_is_refused():
    with pytest.raises(attn_models.ModelError, match="neither a folder"):
        attn_models.load("not a model")


def test_doctests_of_attn_models():
    import doctest
    import importlib

    for name in ("bert", "family", "hub", "intervene", "ops", "patterns", "reader", "tokenizer"):
        result = doctest.testmod(importlib.import_module(f"attn_models.{name}"), optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, name


def test_a_download_reports_its_progress_and_a_repo_without_safetensors_is_refused(tmp_path, tiny_dir, monkeypatch):
    """The download path against a fake Hub on 127.0.0.1 (tests/fake_hub.py: there is no network here)."""
    with fake_hub.FakeHub() as hub:
        fake_hub.use(monkeypatch, hub.url)
        hub.add_folder("someone/tiny-bert", tiny_dir)
        hub.add("someone/pickled", {"config.json": (tiny_dir / "config.json").read_bytes(),
                                    "tokenizer.json": b"{}", "pytorch_model.bin": b"x"})
        seen: list[tuple[str, int, int | None]] = []
        model = attn_models.load("someone/tiny-bert", cache_dir=tmp_path, progress=lambda *a: seen.append(a))
        assert model.n_layers == 2
        size = (tiny_dir / "model.safetensors").stat().st_size
        assert ("model.safetensors", size, size) in seen and ("config.json", 0, (tiny_dir / "config.json").stat(
            ).st_size) in seen
        assert [name for name, *_ in seen][::2] == ["config.json", "tokenizer.json", "model.safetensors"]
        with pytest.raises(attn_models.ModelError, match="no model.safetensors.*pytorch_model.bin"):
            attn_models.load("someone/pickled", cache_dir=tmp_path)
        assert not any("/someone/pickled/resolve/" in p for _m, p in hub.requests)  # judged from its metadata alone
