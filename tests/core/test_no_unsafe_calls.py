"""No eval, exec or unpickling of anything a user supplied, and attn_core stays numpy only (issues 2 and 7).

The app's own code is parsed with ``ast`` (not grepped as text, so comments and docs do not count and an alias
does not hide a call). Streamlit's own caching is Streamlit's code, not ours, and is not scanned.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP_CODE = ["attn_core", "attn_models", "attn_ui", "pages", "streamlit_app.py"]

FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "breakpoint"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib", "yaml"}
FORBIDDEN_ATTRIBUTE_CALLS = {
    ("yaml", "load"), ("yaml", "unsafe_load"), ("yaml", "full_load"), ("importlib", "import_module"),
    ("os", "system"), ("os", "popen"), ("pickle", "loads"), ("pickle", "load"), ("marshal", "loads"),
}
FORBIDDEN_METHODS = {"read_pickle", "to_pickle"}  # pandas' pickle readers and writers, whatever the receiver


def python_files() -> list[Path]:
    files = []
    for entry in APP_CODE:
        path = ROOT / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def unsafe_uses(source: str, filename: str = "<source>") -> list[str]:
    """Every forbidden call, import or keyword in ``source``, as 'file:line: what'."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if module in FORBIDDEN_MODULES:
                found.append(f"{where}: from {node.module} import ...")
            found += [f"{where}: import {a.name}" for a in node.names if a.name in FORBIDDEN_CALLS]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                found.append(f"{where}: {func.id}(...)")
            if isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else None
                if (owner, func.attr) in FORBIDDEN_ATTRIBUTE_CALLS or func.attr in FORBIDDEN_METHODS:
                    found.append(f"{where}: {owner}.{func.attr}(...)")
                if func.attr in FORBIDDEN_CALLS and owner in {"builtins", "__builtins__"}:
                    found.append(f"{where}: {owner}.{func.attr}(...)")
            for kw in node.keywords:
                is_true = isinstance(kw.value, ast.Constant) and kw.value.value is True
                if kw.arg in {"allow_pickle", "shell"} and is_true:
                    found.append(f"{where}: {kw.arg}=True")
        elif isinstance(node, ast.Name) and node.id in {"eval", "exec"} and isinstance(node.ctx, ast.Load):
            found.append(f"{where}: reference to {node.id}")  # e.g. f = eval; f(text)
    return sorted(set(found))


def test_the_scanner_finds_what_it_looks_for():
    """The scanner is not vacuous: each forbidden pattern, planted in a snippet, is reported."""
    planted = {
        "eval(text)": "eval(...)",
        "exec(code)": "exec(...)",
        "f = eval": "reference to eval",
        "__import__(name)": "__import__(...)",
        "import pickle": "import pickle",
        "import marshal as m": "import marshal",
        "from shelve import open": "from shelve import",
        "import yaml\nyaml.load(s)": "yaml.load(...)",
        "import importlib\nimportlib.import_module(name)": "importlib.import_module(...)",
        "np.load(path, allow_pickle=True)": "allow_pickle=True",
        "df = pd.read_pickle(f)": "pd.read_pickle(...)",
        "import builtins\nbuiltins.eval(s)": "builtins.eval(...)",
        "subprocess.run(cmd, shell=True)": "shell=True",
    }
    for snippet, expected in planted.items():
        hits = unsafe_uses(snippet)
        assert any(expected in h for h in hits), (snippet, hits)
    assert unsafe_uses("import json\njson.loads(text)\nnp.load(path)\nast.literal_eval(s)\nx.evaluate()") == []


def test_app_code_has_no_eval_exec_or_unpickling():
    files = python_files()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    # the scan covers the whole app: the core, the UI glue, every page and the router
    assert {"attn_core/attention.py", "attn_core/validation.py", "attn_ui/app/state.py", "streamlit_app.py"} <= names
    assert any(n.startswith("pages/") for n in names)
    problems = [hit for path in files
                for hit in unsafe_uses(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())]
    assert problems == []


def test_attn_core_imports_only_numpy_and_the_standard_library():
    allowed = {"numpy"} | set(sys.stdlib_module_names)
    for path in sorted((ROOT / "attn_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert module.split(".")[0] in allowed, f"{path.name} imports {module}"


IMPORT_PROBE = """
import importlib, json, pkgutil, sys
import attn_core
for info in pkgutil.walk_packages(attn_core.__path__, "attn_core."):
    importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"streamlit", "pandas", "altair"})))
"""


def test_importing_attn_core_imports_no_ui_library():
    """In a fresh interpreter: attn_core and every one of its modules import neither streamlit, pandas nor altair."""
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("library", ["streamlit", "pandas.core", "altair"])
def test_the_probe_would_see_a_ui_library(library):
    """The same probe reports a UI module when one is loaded, so an empty answer above means something.

    A stand-in module is put in sys.modules (importing the real libraries would take seconds each).
    """
    probe = f"import sys, types\nsys.modules[{library!r}] = types.ModuleType({library!r})\n" + IMPORT_PROBE
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert library in json.loads(done.stdout.strip().splitlines()[-1])
