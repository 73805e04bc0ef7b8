"""Hostile and malformed checkpoints, from a folder and from a fake Hub (tests/fake_hub.py): each is refused with
one clear ModelError naming the file or field and the cap, a refused repo's large file is never requested, and a
refused download leaves nothing in the Hub cache. Also the operator's Access (ATTN_MODELS, ATTN_ALLOW_FOLDERS) and
the disk budget of the visitors' repos (ATTN_DOWNLOAD_MB)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attn_models
from attn_models import MODEL_LIMITS, Access, hub

from .. import fake_hub, tiny_bert

REPO = Path(__file__).resolve().parents[2]
BIG = 700_000_000  # bytes the Hub claims for a file: over every cap


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert.build(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def fake(monkeypatch):
    with fake_hub.FakeHub() as h:
        fake_hub.use(monkeypatch, h.url)
        yield h


def copy(tiny_dir: Path, to: Path, **files: bytes) -> Path:
    """The tiny checkpoint in ``to``, with some files replaced (config_json=..., model_safetensors=...)."""
    to.mkdir(parents=True, exist_ok=True)
    for f in tiny_dir.iterdir():
        (to / f.name).write_bytes(files.get(f.name.replace(".", "_"), f.read_bytes()))
    return to


def config(**change) -> bytes:
    return json.dumps({**tiny_bert.CONFIG, **change}).encode()


def repos_in(cache: Path) -> list[str]:
    """The repo folders left in a Hub cache (and their lock folders)."""
    return sorted(str(p.relative_to(cache)) for p in [*cache.glob("models--*"), *cache.glob(".locks/models--*")])


def safetensors(tensors: dict[str, np.ndarray], edit=None) -> bytes:
    """A safetensors file of ``tensors``; ``edit(header dict)`` changes its header (after the offsets are set)."""
    from safetensors.numpy import save

    data = save(tensors)
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    if edit is None:
        return data
    edit(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data[8 + n:]


# ---- malformed files, from a folder ------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    (b'{"model_type": "bert", "vocab_size": ' + b"9" * 5000 + b"}", "config.json holds a number too long to be read."),
    (b"[" * 200_000 + b"]" * 200_000, "config.json is nested too deeply to be read."),
    (b"model_type = bert", "config.json: not valid JSON (a value was expected at line 1, column 1)."),
    (b'{\n  "model_type": "bert"\n  "hidden_size": 8\n}',  # json's own words never: share.json_problem's
     "config.json: not valid JSON (a comma was expected at line 3, column 3)."),
    (b"[1, 2]", "config.json: not a JSON object."),
    (b"\xff\xfe{}", "config.json is not UTF-8 text."),
    (b" " * 1_000_001 + b"{}", "config.json is 1.0 MB; the cap is 1.0 MB (attn_models.MODEL_LIMITS)."),
    (config(num_hidden_layers=25),
     "config.json: num_hidden_layers 25 is over the cap of 24 (attn_models.MODEL_LIMITS)."),
    (config(vocab_size=10**40), "config.json: vocab_size 10000000000000000000000000000000000000000 is over the cap of "
                                "262144 (attn_models.MODEL_LIMITS)."),
    (config(intermediate_size=5000), "config.json: intermediate_size 5000 is over the cap of 4096"),
    (config(max_position_embeddings=10**6), "config.json: max_position_embeddings 1000000 is over the cap of 8192"),
    (config(type_vocab_size=17), "config.json: type_vocab_size 17 is over the cap of 16"),
    (config(num_hidden_layers=24, hidden_size=480, num_attention_heads=16, intermediate_size=4096, vocab_size=250002),
     "config.json: this model would take 934 MB of memory once loaded; the cap is 300 MB"),
])
def test_a_malformed_or_oversized_config_is_refused_naming_it(tmp_path, tiny_dir, text, message):
    folder = copy(tiny_dir, tmp_path / "m", config_json=text)
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value).startswith(message)


def test_a_huge_config_is_never_read_whole(tmp_path, tiny_dir):
    """A 400 MB config.json (sparse, so it costs no disk) is refused after reading 1 MB of it: peak memory of a fresh
    process stays near what importing the packages takes."""
    folder = copy(tiny_dir, tmp_path / "m")
    with open(folder / "config.json", "r+b") as f:
        f.truncate(400_000_000)
    script = (f"import attn_models\ntry:\n    attn_models.load({str(folder)!r})\nexcept attn_models.ModelError as e:\n"
              "    print(e)\nprint([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    said, peak_kb = done.stdout.splitlines()
    assert said == "config.json is 400.0 MB; the cap is 1.0 MB (attn_models.MODEL_LIMITS)."
    assert int(peak_kb) < 200_000, peak_kb  # far below the 400 MB a whole read would take


def tokenizer(tiny_dir: Path, **change) -> bytes:
    """The tiny checkpoint's tokenizer.json with top-level fields changed (None: left out), on lines as saved."""
    doc = json.loads((tiny_dir / "tokenizer.json").read_bytes())
    doc = {k: change.get(k, v) for k, v in {**doc, **change}.items() if change.get(k, v) is not None}
    return json.dumps(doc, indent=2).encode()


def test_a_tokenizer_that_does_not_parse_is_refused_naming_the_file_and_field(tmp_path, tiny_dir):
    """The tokenizers library's English ("key must be a string at line 1 column 2", "Model missing.", "'utf-8' codec
    can't decode byte 0xff …") was the message; now the file and the field at fault are named in words marked for the
    catalogs, with the library's words only as a detail where no word of the app's says more."""
    model = json.loads((tiny_dir / "tokenizer.json").read_bytes())["model"]
    cases = {
        b"not json": "tokenizer.json: not valid JSON (a value was expected at line 1, column 1).",
        b"{\n  \"model\": {}\n  \"version\": 1\n}": "tokenizer.json: not valid JSON (a comma was expected at line 3, "
                                                     "column 3).",
        b"\xff" * 10: "tokenizer.json is not UTF-8 text.",
        b"[1, 2]": "tokenizer.json: not a JSON object.",
        b"{}": "tokenizer.json has no field model, which a tokenizer must have.",
        tokenizer(tiny_dir, model=None): "tokenizer.json has no field model, which a tokenizer must have.",
        tokenizer(tiny_dir, model={k: v for k, v in model.items() if k != "vocab"}):
            "tokenizer.json has no field vocab, which a tokenizer must have.",
        tokenizer(tiny_dir, model={**model, "vocab": "x"}):
            "tokenizer.json: its field model is not what the tokenizers library reads there (line ",
        tokenizer(tiny_dir, normalizer={"type": "Bogus"}):
            "tokenizer.json: its field normalizer is not what the tokenizers library reads there (line ",
        tokenizer(tiny_dir, added_tokens=[{"id": 3}]):
            "tokenizer.json has no field added_tokens.content, which a tokenizer must have.",
    }
    for i, (text, message) in enumerate(cases.items()):
        folder = copy(tiny_dir, tmp_path / f"m{i}", tokenizer_json=text)
        with pytest.raises(attn_models.ModelError) as err:
            attn_models.load(str(folder))
        assert str(err.value).startswith(message), (text[:80], str(err.value))
        assert "could not be read" not in str(err.value)
        assert "codec" not in str(err.value) and "Model missing" not in str(err.value)


def test_a_checkpoint_file_the_system_cannot_read_is_said_without_its_english_or_path(tmp_path, tiny_dir):
    """An OSError's text ("[Errno 21] Is a directory: '/srv/…/config.json'") was the message, with the server's path."""
    from attn_models import reader

    (tmp_path / "tokenizer.json").mkdir()  # (the folder's check says a file is missing before it is opened)
    for path, reason in ((tmp_path / "tokenizer.json", "it is a folder, not a file"),
                         (tmp_path / "gone.json", "it is not there")):
        with pytest.raises(attn_models.ModelError) as err:
            reader.read_capped(path, "tokenizer.json", 1000)
        assert str(err.value) == f"tokenizer.json could not be read: {reason}."
        assert str(tmp_path) not in str(err.value)


def test_a_tokenizer_with_ids_past_the_vocabulary_is_refused_at_load(tmp_path):
    small = {**tiny_bert.CONFIG, "vocab_size": 10}  # the tokenizer has 27 tokens: ids up to 26
    folder = tiny_bert.build(tmp_path / "m", config=small)
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value) == ("tokenizer.json gives the token '?' the id 26; config.json's vocab_size 10 has ids 0 … 9 "
                              "only.")


TENSORS = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
           "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.bias",
           "encoder.layer.0.attention.self.query.weight", "encoder.layer.1.attention.self.value.bias",
           "encoder.layer.0.attention.output.dense.weight", "encoder.layer.1.attention.output.LayerNorm.weight",
           "encoder.layer.0.intermediate.dense.weight", "encoder.layer.1.output.dense.bias",
           "encoder.layer.1.output.LayerNorm.bias"]


@pytest.mark.parametrize("name", TENSORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_in_any_weight_is_refused_at_load(tmp_path, name, bad):
    tensors = tiny_bert.weights(tiny_bert.CONFIG)
    tensors[name].flat[-1] = bad
    folder = tiny_bert.build(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(safetensors(tensors))
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value) == f"model.safetensors: {name} holds a value that is not a finite number (NaN or infinity)."


def _shape(h):
    h["encoder.layer.0.attention.self.key.weight"]["shape"] = [16, 17]


def _dtype(h):
    h["embeddings.LayerNorm.weight"]["dtype"] = "I8"


def _offsets(h):
    h["encoder.layer.1.output.dense.bias"]["data_offsets"] = [0, 10**12]


def _entry(h):
    h["embeddings.LayerNorm.bias"] = "zeros"


def _missing(h):
    del h["encoder.layer.1.output.LayerNorm.weight"]


@pytest.mark.parametrize("edit, message", [
    (_shape, "model.safetensors: encoder.layer.0.attention.self.key.weight has shape (16, 17), config.json implies "
             "(16, 16)."),
    (_dtype, "model.safetensors: embeddings.LayerNorm.weight holds I8 numbers; only F16, BF16, F32, F64 are read "
             "here."),
    (_offsets, "model.safetensors: its header puts encoder.layer.1.output.dense.bias at bytes 0 … 1000000000000 of "
               "its "),
    (_entry, "model.safetensors: the header's entry for embeddings.LayerNorm.bias is malformed."),
    (_missing, "model.safetensors has no tensor encoder.layer.1.output.LayerNorm.weight; is it a BERT checkpoint?"),
])
def test_a_safetensors_header_that_lies_is_refused_before_any_tensor_is_read(tmp_path, edit, message):
    folder = tiny_bert.build(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(safetensors(tiny_bert.weights(tiny_bert.CONFIG), edit))
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("keep, message", [
    (4, "model.safetensors is cut short: its 0-byte header does not fit in its 4 bytes."),
    (200, "model.safetensors is cut short: its "),
    (-100, "model.safetensors: its header puts "),  # the data cut short: the last tensor does not fit
])
def test_a_truncated_safetensors_is_refused(tmp_path, keep, message):
    folder = tiny_bert.build(tmp_path / "m")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:keep])
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value).startswith(message)


def test_a_header_length_over_its_cap_is_refused_unread(tmp_path):
    folder = tiny_bert.build(tmp_path / "m")
    with open(folder / "model.safetensors", "r+b") as f:
        f.write(struct.pack("<Q", MODEL_LIMITS.header_bytes + 1))
        f.truncate(MODEL_LIMITS.header_bytes + 100)  # sparse: the header length fits the file, not the cap
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(str(folder))
    assert str(err.value) == "model.safetensors: its header is 10,000,001 bytes; the cap is 10,000,000 " \
                             "(attn_models.MODEL_LIMITS)."


# ---- a masked-LM head (cls.predictions): its header and values checked as the encoder's, its bytes counted -----------


def masked_lm(own_decoder: bool = False) -> dict[str, np.ndarray]:
    """The tiny BertForMaskedLM's tensors, as tiny_bert.write_mlm saves them."""
    cfg = {**tiny_bert.CONFIG, "tie_word_embeddings": not own_decoder}
    return {"bert." + k: v for k, v in tiny_bert.weights(cfg).items()} | tiny_bert.mlm_weights(cfg,
                                                                                               own_decoder=own_decoder)


def load_with(tmp_path: Path, tensors: dict[str, np.ndarray], edit=None) -> attn_models.Model:
    folder = tiny_bert.write_mlm(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(safetensors(tensors, edit))
    return attn_models.load(str(folder))


HEAD = ["cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.decoder.weight", "cls.predictions.decoder.bias"]


@pytest.mark.parametrize("name", HEAD)
def test_a_non_finite_value_in_the_heads_weights_is_refused_at_load(tmp_path, name):
    tensors = masked_lm(own_decoder=True)
    tensors[name].flat[-1] = np.nan
    with pytest.raises(attn_models.ModelError) as err:
        load_with(tmp_path, tensors)
    assert str(err.value) == f"model.safetensors: {name} holds a value that is not a finite number (NaN or infinity)."


def test_a_non_finite_output_bias_is_refused_at_load(tmp_path):
    tensors = masked_lm()
    tensors["cls.predictions.bias"][3] = -np.inf
    with pytest.raises(attn_models.ModelError, match="^model.safetensors: cls.predictions.bias holds a value that is"):
        load_with(tmp_path, tensors)


@pytest.mark.parametrize("name, shape, message", [
    ("cls.predictions.transform.dense.weight", (16, 17),
     "model.safetensors: cls.predictions.transform.dense.weight has shape (16, 17), config.json implies (16, 16)."),
    ("cls.predictions.decoder.weight", (30, 16),  # a decoder of another vocabulary
     "model.safetensors: cls.predictions.decoder.weight has shape (30, 16), config.json implies (27, 16)."),
    ("cls.predictions.decoder.bias", (30,),
     "model.safetensors: cls.predictions.decoder.bias has shape (30,), config.json implies (27,)."),
    ("cls.predictions.transform.LayerNorm.bias", (15,),
     "model.safetensors: cls.predictions.transform.LayerNorm.bias has shape (15,), config.json implies (16,)."),
])
def test_a_head_of_the_wrong_shape_is_refused(tmp_path, name, shape, message):
    tensors = masked_lm(own_decoder=True)
    tensors[name] = np.zeros(shape, dtype=np.float32)
    with pytest.raises(attn_models.ModelError) as err:
        load_with(tmp_path, tensors)
    assert str(err.value) == message


def test_an_output_bias_of_another_vocabulary_is_refused(tmp_path):
    tensors = masked_lm()
    tensors["cls.predictions.bias"] = np.zeros(28, dtype=np.float32)
    with pytest.raises(attn_models.ModelError) as err:
        load_with(tmp_path, tensors)
    assert str(err.value) == "model.safetensors: cls.predictions.bias has shape (28,), config.json implies (27,)."


def test_an_incomplete_head_is_refused_naming_what_is_missing(tmp_path):
    tensors = masked_lm()
    del tensors["cls.predictions.bias"]
    with pytest.raises(attn_models.ModelError) as err:
        load_with(tmp_path, tensors)
    assert str(err.value) == ("model.safetensors has a masked-language-model head (cls.predictions) without its tensor "
                              "cls.predictions.bias.")


def _head_offsets(h):
    h["cls.predictions.transform.dense.weight"]["data_offsets"] = [0, 10**12]


def _head_dtype(h):
    h["cls.predictions.decoder.weight"]["dtype"] = "I8"


@pytest.mark.parametrize("edit, message", [
    (_head_offsets, "model.safetensors: its header puts cls.predictions.transform.dense.weight at bytes 0 … "
                    "1000000000000 of its "),
    (_head_dtype, "model.safetensors: cls.predictions.decoder.weight holds I8 numbers; only F16, BF16, F32, F64 are "
                  "read here."),
])
def test_a_header_that_lies_about_the_head_is_refused(tmp_path, edit, message):
    with pytest.raises(attn_models.ModelError) as err:
        load_with(tmp_path, masked_lm(own_decoder=True), edit)
    assert str(err.value).startswith(message)


def test_the_heads_bytes_count_against_the_memory_cap(tmp_path, monkeypatch):
    from dataclasses import replace

    from attn_models import bert

    cfg = attn_models.parse_config(tiny_bert.CONFIG)
    encoder_only = attn_models.resident_bytes(cfg)
    with_head = attn_models.resident_bytes(cfg, mlm=True, decoder_itemsize=4)
    assert with_head - encoder_only == (16 * 16 + 3 * 16 + 27) * 8 + 27 * 16 * 4
    monkeypatch.setattr(bert, "MODEL_LIMITS", replace(MODEL_LIMITS, resident_bytes=with_head - 1))
    assert not attn_models.load(str(tiny_bert.build(tmp_path / "plain"))).has_mlm  # the encoder alone fits
    assert attn_models.load(str(tiny_bert.write_mlm(tmp_path / "tied"))).has_mlm  # and with a tied decoder
    with pytest.raises(attn_models.ModelError, match="^model.safetensors: this model would take 0 MB of memory"):
        attn_models.load(str(tiny_bert.write_mlm(tmp_path / "own", own_decoder=True)))


def test_old_names_and_no_prefix_are_read_as_the_same_head(tmp_path):
    # LayerNorm gamma/beta (older BERT checkpoints) and no "bert." prefix: the same model, the same probabilities
    tensors = {k.removeprefix("bert.").replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias",
                                                                                             "LayerNorm.beta"): v
               for k, v in masked_lm().items()}
    renamed = load_with(tmp_path / "a", tensors)
    model = attn_models.load(str(tiny_bert.write_mlm(tmp_path / "b")))
    np.testing.assert_array_equal(renamed.mask_probs(tiny_bert.MASKED[1]), model.mask_probs(tiny_bert.MASKED[1]))


# ---- the Hub: judged from its metadata, refused repos leave nothing behind ---------------------------------------


@pytest.mark.parametrize("name, message", [
    ("model.safetensors", f"model.safetensors is 700.0 MB; the cap is {MODEL_LIMITS.weights_bytes / 1e6:.1f} MB "
                          "(attn_models.MODEL_LIMITS)."),
    ("config.json", "config.json is 700.0 MB; the cap is 1.0 MB (attn_models.MODEL_LIMITS)."),
    ("tokenizer.json", "tokenizer.json is 700.0 MB; the cap is 20.0 MB (attn_models.MODEL_LIMITS)."),
])
def test_a_file_over_its_cap_in_the_metadata_is_never_requested(tmp_path, tiny_dir, fake, name, message):
    fake.add_folder("someone/big", tiny_dir, claimed={name: BIG})
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load("someone/big", cache_dir=tmp_path)
    assert str(err.value) == message
    assert not any("/resolve/" in p for _m, p in fake.requests)  # not one file asked for
    assert repos_in(tmp_path) == []


def test_a_file_whose_metadata_lies_is_stopped_at_its_cap(tmp_path, tiny_dir, fake):
    """The metadata says 1 kB, the download says 700 MB: stopped before its bytes are read, nothing kept."""
    fake.add_folder("someone/liar", tiny_dir, length={"model.safetensors": BIG})
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load("someone/liar", cache_dir=tmp_path)
    assert str(err.value) == (f"model.safetensors is 700.0 MB; the cap is {MODEL_LIMITS.weights_bytes / 1e6:.1f} MB "
                              "(attn_models.MODEL_LIMITS).")
    assert repos_in(tmp_path) == []


@pytest.mark.parametrize("change, message", [
    ({"num_hidden_layers": 100}, "config.json: num_hidden_layers 100 is over the cap of 24"),
    ({"vocab_size": 250002, "num_hidden_layers": 24, "intermediate_size": 4096, "hidden_size": 480,
      "num_attention_heads": 16}, "config.json: this model would take 934 MB of memory once loaded"),
    ({"hidden_size": 1024, "num_attention_heads": 16}, "config.json: hidden_size 1024 + 1 (the bias column)"),
])
def test_a_config_over_the_caps_stops_before_the_weights(tmp_path, tiny_dir, fake, change, message):
    fake.add("someone/huge", {"config.json": config(**change), "tokenizer.json": b"{}", "model.safetensors": b"x"})
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load("someone/huge", cache_dir=tmp_path)
    assert str(err.value).startswith(message)
    assert fake.fetched("config.json") and not fake.fetched("model.safetensors") and not fake.fetched("tokenizer.json")
    assert repos_in(tmp_path) == []


def test_a_repo_refused_after_its_download_is_removed_from_the_cache(tmp_path, tiny_dir, fake):
    tensors = tiny_bert.weights(tiny_bert.CONFIG)
    tensors["embeddings.word_embeddings.weight"][3, 5] = np.nan
    fake.add("someone/nan", {"config.json": config(), "tokenizer.json": tiny_bert.tokenizer_json().encode(),
                             "model.safetensors": safetensors(tensors)})
    with pytest.raises(attn_models.ModelError, match="word_embeddings.weight holds a value that is not a finite"):
        attn_models.load("someone/nan", cache_dir=tmp_path)
    assert repos_in(tmp_path) == []


def test_a_repo_the_operator_put_in_the_cache_is_never_removed(tmp_path, tiny_dir, monkeypatch):
    broken = copy(tiny_dir, tmp_path / "broken", config_json=b"[]")
    tiny_bert.fake_hub_cache(tmp_path / "hub", "someone/theirs", broken)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(attn_models.ModelError, match="not a JSON object"):
        attn_models.load("someone/theirs", cache_dir=tmp_path / "hub")
    assert repos_in(tmp_path / "hub") == ["models--someone--theirs"]  # no mark: not the app's to remove


@pytest.mark.parametrize("repo_id, message", [
    ("someone/missing", "There is no public model someone/missing on the Hugging Face Hub."),
    ("someone/no-tokenizer", "someone/no-tokenizer has no tokenizer.json on the Hugging Face Hub."),
])
def test_a_missing_repo_or_file_is_said(tmp_path, tiny_dir, fake, repo_id, message):
    fake.add("someone/no-tokenizer", {"config.json": config(), "model.safetensors": b"x"})
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(repo_id, cache_dir=tmp_path)
    assert str(err.value) == message and repos_in(tmp_path) == []


@pytest.mark.parametrize("repo_id", ["a/b..c", "a--b/c", "a/b.git", "a/b.", "a./b", "a/b-"])
def test_ids_the_hub_would_refuse_are_a_model_error_before_any_request(tmp_path, fake, repo_id):
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(repo_id, cache_dir=tmp_path)
    assert str(err.value).startswith(f"{repo_id!r} is not a valid Hugging Face repo id: owner/name")
    assert fake.requests == []


def test_an_unknown_id_in_the_cache_lookup_is_no_traceback(tmp_path):
    """in_cache on an id the Hub's validator refuses (huggingface_hub raises HFValidationError) never runs: check
    first. And "-a/b" is neither a repo id nor a folder."""
    with pytest.raises(attn_models.ModelError, match="neither a folder on this machine nor a Hugging Face repo id"):
        attn_models.load("-a/b", cache_dir=tmp_path)


# ---- the operator's Access -----------------------------------------------------------------------------------------


HOSTILE_NAMES = ["/root", "/etc", "/proc/self/cwd", "../..", "/nonexistent", "~", ".", "C:\\Windows", "a/b/c"]


def test_folders_off_one_message_whatever_exists_and_nothing_is_looked_at(tmp_path, tiny_dir, monkeypatch):
    def no_look(*_a, **_k):
        raise AssertionError("a folder was looked at")

    monkeypatch.setattr("attn_models.access.is_folder", no_look)
    access = Access.from_env({})  # ATTN_ALLOW_FOLDERS unset: off
    said = set()
    for name in [*HOSTILE_NAMES, str(tiny_dir)]:
        with pytest.raises(attn_models.ModelError) as err:
            attn_models.load(name, access=access)
        said.add(str(err.value))
    assert said == {"The name typed is a path, and this server loads models from the Hugging Face Hub only: name one "
                    "by its repo id (owner/name). Folders on the server cannot be named."}


EMPTY_NAME = ("The name typed has nothing after its '/': the model's name is missing. A Hugging Face repo id is "
              "owner/name (for example sentence-transformers/all-MiniLM-L6-v2).")
EMPTY_PART = ("The name typed has two '/' in a row: the part between them is empty. A Hugging Face repo id has one "
              "'/', between the owner and the name (for example sentence-transformers/all-MiniLM-L6-v2).")


@pytest.mark.parametrize(("name", "said"), [("owner/", EMPTY_NAME), (" owner/ ", EMPTY_NAME), ("a//b", EMPTY_PART)])
def test_folders_on_a_repo_id_with_an_empty_part_is_told_which_part(name, said, monkeypatch):
    """With folders on, 'owner/' and 'a//b' (no folders here) were 'neither a folder on this machine nor a Hugging Face
    repo id'."""
    monkeypatch.setattr("attn_models.access.is_folder", lambda *_a: False)
    with pytest.raises(attn_models.ModelError) as err:
        Access(folders=True).check(name, "encoder")
    assert str(err.value) == said


@pytest.mark.parametrize(("name", "said"), [
    ("a b/c", "The name typed has ' ', which a Hugging Face repo id cannot have: a repo id is owner/name (for example "
              "sentence-transformers/all-MiniLM-L6-v2), each of the letters A–Z and a–z, digits, '-', '_' and '.'."),
    ("用户/模型", "The name typed has the characters '用' '户' '模' '型', which a Hugging Face repo id cannot have"),
    ("<b>hi</b>/x", "The name typed has the characters '<' '>', which a Hugging Face repo id cannot have: a repo id is "
                    "owner/name (for example sentence-transformers/all-MiniLM-L6-v2), each of the letters A–Z and "
                    "a–z, digits, '-', '_' and '.'."),  # was told it is a path (two '/')
    ("a" * 20 + "<>&\"' ;(){}[]|", "The name typed has the characters '<' '>' '&' '\"' \"'\" ' ' ';' '(' …, which"),
    ("a/b/c", "The name typed is a path"),  # repo id characters and two '/': a path still
    ("a/b?x=1", "The name typed has the characters '?' '=', which a Hugging Face repo id cannot have"),
    ("a/" + "b" * 200, "The name typed is too long for a Hugging Face repo id: '" + "b" * 40 + "…' has 200 characters, "
                       "and the Hub takes at most 96 for the owner and as many for the model's name (owner/name)."),
    ("a" * 97, "The name typed is too long for a Hugging Face repo id: '" + "a" * 40 + "…' has 97 characters"),
    ("https://huggingface.co/a/b", "The name typed is a web address: this server takes a Hugging Face repo id, not an "
                                   "address. A repo id is owner/name (for example sentence-transformers/all-MiniLM-L6"
                                   "-v2): on the Hub, what follows huggingface.co/ in a model's address."),
    ("a/b-", "'a/b-' is not a valid Hugging Face repo id: owner/name, each of letters, digits, '-', '_' and '.', "
             "neither starting nor ending with '-' or '.', without '--' or '..', not ending in '.git'."),
    ("owner/", EMPTY_NAME),  # had the Hub's rules, which it obeys
    ("owner//name", EMPTY_PART),  # was told it is a path
    ("owner/name/", "The name typed ends with a '/': a Hugging Face repo id is owner/name with nothing after the name "
                    "(here 'owner/name')."),  # copied with an address's end: was told it is a path
])
def test_folders_off_a_name_meant_as_a_repo_id_is_told_what_is_wrong_with_it(name, said, monkeypatch):
    """Said by the name's text alone, never by what is on the disk: the fault itself (a character, a part over the
    Hub's 96, a web address), else the Hub's rules; at most 40 characters of the name quoted."""
    monkeypatch.setattr("attn_models.access.is_folder", lambda *_a: pytest.fail("a folder was looked at"))
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load(name, access=Access.from_env({}))
    assert str(err.value).startswith(said)
    assert name[:41] not in str(err.value) or len(name) <= 40


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "distilgpt2", "t5-small"])
def test_a_legacy_repo_id_without_an_owner_is_a_repo_id(name, monkeypatch):
    """huggingface_hub's validate_repo_id takes a name alone, as the Hub does: folders off or on, it is asked for."""
    from huggingface_hub.utils import validate_repo_id

    validate_repo_id(name)
    monkeypatch.setattr("attn_models.access.is_folder", lambda *_a: False)
    assert Access.from_env({}).check(name) == Access(folders=True).check(name) == name
    assert {name, "a/b"} <= set(Access.from_env({"ATTN_MODELS": f"{name}, a/b"}).offered)  # no longer left out


def test_a_gated_repo_says_what_this_server_cannot_do_and_whoever_runs_it_can():
    """It said "download it yourself and give its folder", which a server with folders off refuses (a fresh
    reviewer found the same advice in the offline message)."""
    from types import SimpleNamespace

    from huggingface_hub.errors import GatedRepoError

    err = GatedRepoError("gated", response=SimpleNamespace(headers={}, request=None))
    assert str(hub._hub_error("meta-llama/Llama-3.2-1B", "config.json", err, None)) == (
        "meta-llama/Llama-3.2-1B is gated on the Hugging Face Hub (it needs an account's consent), so this server "
        "cannot download it; whoever runs the server can, with an account, and point the app at its folder.")


@pytest.mark.parametrize("env, said", [
    ({}, "Name a model: a Hugging Face repo id (owner/name)."),
    ({"ATTN_ALLOW_FOLDERS": "1"}, "Name a model: a Hugging Face repo id (owner/name) or a folder on this machine."),
])
def test_an_empty_name_is_asked_for_what_this_server_takes(env, said):
    with pytest.raises(attn_models.ModelError) as err:
        Access.from_env(env).check("  ")
    assert str(err.value) == said


def test_folders_on_and_the_operators_folder(tiny_dir):
    assert attn_models.load(str(tiny_dir), access=Access.from_env({"ATTN_ALLOW_FOLDERS": "1"})).n_layers == 2
    assert attn_models.load(str(tiny_dir), access=Access.from_env({"ATTN_MODEL": str(tiny_dir)})).n_layers == 2


@pytest.mark.parametrize("env, allowed, refused", [
    ({}, ["x/y", attn_models.DEFAULT_MODEL], []),
    ({"ATTN_MODELS": "*"}, ["x/y"], []),
    ({"ATTN_MODELS": "default"}, [attn_models.DEFAULT_MODEL], ["x/y"]),
    ({"ATTN_MODELS": "default", "ATTN_MODEL": "me/mine"}, ["me/mine", attn_models.DEFAULT_MODEL], ["x/y"]),
    ({"ATTN_MODELS": "a/b, c/d"}, ["a/b", "c/d", attn_models.DEFAULT_MODEL], ["x/y", "a/bb"]),
])
def test_attn_models_lists_what_may_be_loaded(env, allowed, refused):
    access = Access.from_env(env)
    assert [access.check(s) for s in allowed] == allowed
    for s in refused:
        with pytest.raises(attn_models.ModelError) as err:
            access.check(s)
        offered = ", ".join(sorted(access.repos))
        assert str(err.value) == f"{s!r} is not one of the models this server offers: {offered}."


# ---- the disk budget of the visitors' repos --------------------------------------------------------------------------


def test_the_least_recently_used_visitor_repo_makes_room_never_the_operators(tmp_path, tiny_dir, fake):
    size = sum(f.stat().st_size for f in tiny_dir.iterdir())
    for name in ("v/one", "v/two", "v/three", "op/default"):
        fake.add_folder(name, tiny_dir)
    access = Access(operator=("op/default",), download_bytes=int(2.5 * size))  # room for two visitor repos
    attn_models.load("op/default", cache_dir=tmp_path, access=access)
    attn_models.load("v/one", cache_dir=tmp_path, access=access)
    attn_models.load("v/two", cache_dir=tmp_path, access=access)
    os.utime(hub.storage("v/one", tmp_path) / hub.MARK, (1, 1))  # v/one: used longest ago
    attn_models.load("v/three", cache_dir=tmp_path, access=access)
    assert [p for p in repos_in(tmp_path) if not p.startswith(".")] == [
        "models--op--default", "models--v--three", "models--v--two"]  # v/one's lock folder went too
    assert [p for p in repos_in(tmp_path) if p.startswith(".")] == [
        ".locks/models--op--default", ".locks/models--v--three", ".locks/models--v--two"]
    with pytest.raises(attn_models.ModelError) as err:
        attn_models.load("v/one", cache_dir=tmp_path, access=Access(download_bytes=size // 2))
    assert str(err.value).startswith("v/one needs ") and "this server keeps at most" in str(err.value)
    assert "models--v--one" not in repos_in(tmp_path) and "models--v--two" in repos_in(tmp_path)


def test_judge_repo_gives_the_download_size_without_downloading(tmp_path, tiny_dir, fake):
    fake.add_folder("someone/tiny", tiny_dir)
    plan = attn_models.judge_repo("someone/tiny", cache_dir=tmp_path)
    assert plan.to_download(tmp_path) == sum(f.stat().st_size for f in tiny_dir.iterdir())
    assert [m for m, _p in fake.requests if _p.startswith("/api/models/")] == ["GET"]
    assert not any("/resolve/" in p for _m, p in fake.requests) and repos_in(tmp_path) == []


def test_a_link_or_lesson_never_downloads(tmp_path, tiny_dir, fake):
    fake.add_folder("someone/tiny", tiny_dir)
    with pytest.raises(attn_models.NotFetchedError) as err:
        attn_models.load("someone/tiny", cache_dir=tmp_path, local_only=True)
    assert str(err.value) == "someone/tiny is not on this server yet: its model page offers to download it."
    assert fake.requests == []
