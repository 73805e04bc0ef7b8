"""The exported NumPy script: it runs on its own and prints attn_core's numbers."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attn_core import PRESETS, load_preset, make_config, run
from attn_core.codegen import numpy_script, parse_output

from ..seeds import SEED000_OUTPUT, SEED000_WEIGHTS, SEED004_SCORES

STAGES = ("q", "k", "v", "scores", "scaled", "masked", "weights", "output")


def run_script(cfg, tmp_path: Path) -> dict[str, np.ndarray]:
    """Write the script to a file and run it in a fresh, isolated interpreter (attn_core not importable)."""
    path = tmp_path / "attention.py"
    path.write_text(numpy_script(cfg), encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return parse_output(done.stdout)


def expected_blocks(cfg) -> dict[str, np.ndarray]:
    trace = run(cfg)
    extra = {"dot": (), "general": ("q_a",), "additive": ("q_1", "k_2")}[cfg.score]  # the score function's own
    stages = (*STAGES[:3], *extra, *STAGES[3:])
    out = {f"head{h}_{s}": getattr(head, s) for h, head in enumerate(trace.heads) for s in stages}
    return out | {"concat": trace.concat, "output": trace.output}


def assert_same_numbers(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert list(got) == list(want)
    for name, m in want.items():
        assert got[name].shape == m.shape, name
        assert got[name].tobytes() == m.tobytes(), name  # the same operations in the same order: equal bits


def masked_variants():
    base = load_preset("seed001_sentence")  # 6 tokens
    n = base.n_seq
    custom = np.tri(n, dtype=bool).T
    custom[2] = False  # query 2 may attend to nothing: its weights and output are zeros
    return {
        "causal": replace(base, mask_kind="causal"),
        "padding": replace(base, mask_kind="padding", is_pad=(False, False, False, False, True, True)),
        "custom with a fully masked row": replace(base, mask_kind="custom", custom_mask=custom),
        "heads, causal, divisor 2.5": replace(load_preset("seed003_heads"), mask_kind="causal", scale=2.5),
    }


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_the_script_of_every_preset_prints_attn_cores_numbers(key, tmp_path):
    cfg = load_preset(key)
    assert_same_numbers(run_script(cfg, tmp_path), expected_blocks(cfg))


@pytest.mark.parametrize("name", sorted(masked_variants()))
def test_the_script_of_masked_configurations_prints_attn_cores_numbers(name, tmp_path):
    cfg = masked_variants()[name]
    got = run_script(cfg, tmp_path)
    assert_same_numbers(got, expected_blocks(cfg))
    if cfg.mask_kind == "custom":
        assert got["head0_weights"][2].tolist() == [0.0] * cfg.n_seq
        assert np.isneginf(got["head0_masked"][2]).all()


def test_the_script_of_seed_000_prints_the_seeds_numbers(tmp_path):
    got = run_script(load_preset("seed000"), tmp_path)
    assert got["head0_scores"].tolist() == SEED004_SCORES  # seed 004
    np.testing.assert_allclose(got["head0_weights"], SEED000_WEIGHTS, rtol=1e-6)
    np.testing.assert_allclose(got["output"], SEED000_OUTPUT, rtol=1e-6)  # seed 000's print


def test_the_script_imports_numpy_only_and_rebuilds_the_configuration():
    cfg = load_preset("seed002_causal")
    tree = ast.parse(numpy_script(cfg))
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [alias.name for n in imports for alias in n.names] == ["numpy"]
    namespace: dict = {}
    assignments = [n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
    for node in assignments:
        if node.targets[0].id in ("tokens", "n_heads", "X", "W_Q", "W_K", "W_V", "W_O"):
            exec(compile(ast.Module([node], []), "<script>", "exec"), {"np": np}, namespace)
    assert namespace["tokens"] == list(cfg.tokens) and namespace["n_heads"] == 1
    for name in ("x", "w_q", "w_k", "w_v", "w_o"):
        assert namespace[name.upper()].tobytes() == cfg.matrix(name).tobytes()  # the literals are exact


def test_token_labels_cannot_inject_code(tmp_path):
    labels = ['"]; print("pwned"); x = ["', "line\nbreak # print('pwned')", "'''", "\\"]
    x = np.arange(8.0).reshape(4, 2)
    cfg = make_config(labels, x, np.eye(2), np.eye(2), np.eye(2))
    tokens_line = next(line for line in numpy_script(cfg).splitlines() if line.startswith("tokens = "))
    assert ast.literal_eval(tokens_line.removeprefix("tokens = ")) == labels
    got = run_script(cfg, tmp_path)  # parse_output would fail on a stray "pwned" line
    assert_same_numbers(got, expected_blocks(cfg))


@pytest.mark.parametrize(
    "text", ["pwned\n", "## x 2 2\n1.0 2.0\n", "## x 1 2\n1.0\n", "## x 1 1\nabc\n", "## x one 1\n1.0\n"]
)
def test_parse_output_refuses_text_that_does_not_match_its_headers(text):
    with pytest.raises(ValueError):
        parse_output(text)
