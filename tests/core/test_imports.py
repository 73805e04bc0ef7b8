"""The app's modules import each other in one direction: no two attn_ui modules (or attn_models modules) need each
other, not even through imports inside a function (issue 28's housekeeping: state, address, grid_editor and
controls imported each other in a circle). Streamlit's internal API stays out of the app's code.

The imports are read with ``ast``, so an import written inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imports_of(package: str, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of the same package it imports (anywhere in its code; under ``if
    TYPE_CHECKING:`` too when ``type_checking``: a circle closed there is still a circle of the design)."""
    modules = {p.stem: p for p in (ROOT / package).glob("*.py")}
    graph = {}
    for name, path in modules.items():
        found, tree = set(), ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level == 0 and not target.startswith(package):
                    continue
                parts = target.split(".")[1:] if node.level == 0 else ([target.split(".")[0]] if target else [])
                found.update(parts[:1] or [alias.name for alias in node.names])
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[1] for a in node.names if a.name.startswith(f"{package}."))
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


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
        for nxt in sorted(graph[node]):
            if found := visit(nxt, [*path, node]):
                return found
        done.add(node)
        return None

    return next(filter(None, (visit(n, []) for n in sorted(graph))), None)


def test_cycle_finder_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", ["attn_ui", "attn_models", "attn_core"])
def test_no_import_cycles(package):
    graph = imports_of(package, type_checking=package == "attn_models")  # attn_models: type checkers' imports count
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
    families = {"bert", "gpt2", "t5"}
    for family in families:
        assert not graph[family] & families, f"attn_models.{family} imports {graph[family] & families}"
    importers = {name for name, deps in graph.items() if "family" in deps}
    assert importers == {"__init__"}, f"only the package imports attn_models.family, not {importers - {'__init__'}}"


def test_the_state_module_imports_no_page_glue():
    """state is read by every other module of attn_ui; it imports only the translation function."""
    assert imports_of("attn_ui")["state"] <= {"i18n"}


def test_no_streamlit_internals():
    """Only Streamlit's public API (``streamlit`` and ``streamlit.testing``/``components`` in tests): an internal
    module (``streamlit.runtime…``, ``streamlit.web…``) may change in any release. attn_ui/sessions.py is the one
    exceptions: sessions.py replaces the session storage, and st_internals.py reads the running session's id and
    whether its browser is still connected, and frees an uploaded file; Streamlit has no public API for these."""
    allowed = {"attn_ui/sessions.py", "attn_ui/st_internals.py"}
    offenders = []
    for path in [*ROOT.glob("attn_*/*.py"), *ROOT.glob("pages/*.py"), ROOT / "streamlit_app.py"]:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n.startswith(("streamlit.runtime", "streamlit.web", "streamlit.elements")) for n in names):
                offenders.append(f"{rel}: {names}")
    assert not [o for o in offenders if o.split(":")[0] not in allowed], offenders
