"""Who may import whom (ARCHITECTURE.md): the layers of the app, and inside attn_ui its subpackages by role.

- attn_core imports numpy only; attn_models imports attn_core; attn_ui imports both; pages import all three.
- attn_ui's subpackages stand in layers, each importing only its own and the ones below it:
  infra → app → widgets → views → lessons → shell (infra at the bottom). A module at attn_ui's top level is
  ``__init__`` only.
- No two modules of a package import each other in a circle.

The imports are read with ``ast``: an import written inside a function counts as much as one at the top, and so does
one under ``if TYPE_CHECKING:`` in attn_ui (a type checker reads it; a circle closed by it is still a circle).
Streamlit's internal API stays out of the app's code but for one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: attn_ui's subpackages, bottom first: each may import its own and the ones before it
LAYERS = ("infra", "app", "widgets", "views", "lessons", "shell")


def modules_of(package: str) -> dict[str, Path]:
    """Each module of ``package`` by its dotted name inside it ("infra.budget"; a package's ``__init__``: its
    name, "lessons"; the package's own ``__init__``: "__init__")."""
    out = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = list(path.relative_to(ROOT / package).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(package: str, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of the same package it imports, anywhere in its code (those under
    ``if TYPE_CHECKING:`` too when ``type_checking``)."""
    modules = modules_of(package)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else type_checking_only(tree)
        parts = [] if name == "__init__" else name.split(".")
        here = parts if path.name == "__init__.py" else parts[:-1]  # the package it is in
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                    target = [*base, *(node.module.split(".") if node.module else [])]
                elif (node.module or "").split(".")[0] == package:
                    target = node.module.split(".")[1:]
                else:
                    continue
                found.update(resolve([*target, alias.name], modules) for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(resolve(a.name.split(".")[1:], modules) for a in node.names
                             if a.name.split(".")[0] == package)
        graph[name] = {m for m in found if m and m != name}
    return graph


def resolve(parts: list[str], modules: dict[str, Path]) -> str | None:
    """The longest module name ``parts`` starts with (``from x import y``: y a module, or a name in x)."""
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (read by type checkers only, never run)."""
    blocks = [n for n in ast.walk(tree) if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"]
    return {id(inner) for block in blocks for stmt in block.body for inner in ast.walk(stmt)}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path (first module repeated at the end), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            if found := visit(nxt, [*path, node]):
                return found
        done.add(node)
        return None

    return next(filter(None, (visit(n, []) for n in sorted(graph))), None)


def layer(module: str) -> int:
    """The layer of an attn_ui module (its subpackage's place in LAYERS)."""
    return LAYERS.index(module.split(".")[0])


def test_cycle_finder_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_import_reader_follows_relative_and_absolute_imports_and_packages():
    graph = imports_of("attn_ui", type_checking=True)
    assert "infra.budget" in graph["views.compute"] and "app.state" in graph["views.compute"]
    assert "app.i18n" in graph["app.state"]
    assert {"lessons", "views.model_views"} <= graph["lessons.lesson_ui"]


@pytest.mark.parametrize("package", ["attn_ui", "attn_models", "attn_core"])
def test_no_import_cycles(package):
    graph = imports_of(package, type_checking=True)  # a circle closed by type checkers' imports is still a circle
    assert graph, package
    assert cycle(graph) is None, f"{package} modules import each other in a circle: {' → '.join(cycle(graph))}"


def test_type_checking_imports_count_when_asked():
    """The circle attn_models had (checkpoint → limits → gpt2 → checkpoint) was closed by ``if TYPE_CHECKING:``
    imports: counted, such an import is an edge of the graph."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n")
    assert type_checking_only(tree)  # what imports_of skips unless type_checking
    assert not imports_of("attn_models", type_checking=True)["limits"] - {"errors"}  # the caps import no family


def test_attn_models_families_import_shared_modules_never_each_other():
    graph = imports_of("attn_models", type_checking=True)
    families = {"bert", "gpt2", "llama", "t5"}
    for family in families:
        assert not graph[family] & families, f"attn_models.{family} imports {graph[family] & families}"
    importers = {name for name, deps in graph.items() if "family" in deps}
    assert importers == {"__init__"}, f"only the package imports attn_models.family, not {importers - {'__init__'}}"


def test_attn_ui_is_in_subpackages_by_role():
    top = sorted(p.name for p in (ROOT / "attn_ui").glob("*.py"))
    assert top == ["__init__.py"], f"attn_ui holds modules {top} at its top: each belongs in its role's subpackage"
    assert sorted(p.name for p in (ROOT / "attn_ui").iterdir() if p.is_dir() and p.name[0] not in "._") == sorted(
        [*LAYERS, "locales"])


def test_each_attn_ui_module_imports_only_its_layer_and_the_ones_below():
    """infra → app → widgets → views → lessons → shell: a module imports its own subpackage and the ones before it,
    never one after it (the shell draws the frame around the pages from views; no view imports the shell)."""
    wrong = [f"attn_ui.{m} imports attn_ui.{t}" for m, targets in imports_of("attn_ui", type_checking=True).items()
             if m != "__init__" for t in targets if t != "__init__" and layer(t) > layer(m)]
    assert not wrong, f"imports against the layers {' → '.join(LAYERS)}: {wrong}"


def test_the_state_module_imports_only_the_translation_function():
    """state is read by every other module of attn_ui; it imports only the translation function."""
    assert imports_of("attn_ui", type_checking=True)["app.state"] <= {"app.i18n"}


def test_attn_core_and_attn_models_import_no_layer_above():
    for package, above in (("attn_core", ("attn_models", "attn_ui", "streamlit", "pages")),
                           ("attn_models", ("attn_ui", "streamlit", "pages"))):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                         else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                assert not [n for n in names if n.split(".")[0] in above], f"{path.relative_to(ROOT)} imports {names}"


def test_no_streamlit_internals():
    """Only Streamlit's public API (``streamlit`` and ``streamlit.testing``/``components`` in tests): an internal
    module (``streamlit.runtime…``, ``streamlit.web…``, ``from streamlit import runtime``) may change in any release.
    attn_ui/infra/st_internals.py is the one exception: it says, for each use, why no public API serves, and
    tests/app/test_st_internals.py fails with a clear message when a Streamlit release changes what it relies on."""
    allowed = {"attn_ui/infra/st_internals.py"}
    internal = ("streamlit.runtime", "streamlit.web", "streamlit.elements", "streamlit.proto", "streamlit.logger")
    offenders = []
    for path in [*ROOT.glob("attn_*/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "streamlit_app.py"]:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.startswith(internal) for n in names):
                offenders.append(f"{rel}: {names}")
    assert not [o for o in offenders if o.split(":")[0] not in allowed], offenders
