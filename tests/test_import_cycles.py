"""Issue 27 §1: no import cycle among the modules of ``analysis/`` and ``kernels/`` (a static check of the imports).

Counted: every ``import`` and ``from … import`` that runs, at module level or inside a function (a function-level
import still makes the two modules depend on each other; it only delays the import), of a module of the package;
``from . import name`` counts as an import of ``name`` when it is a submodule, else of the package's
``__init__``; importing ``a.b.c`` counts as importing ``a`` and ``a.b`` too (Python runs their ``__init__``
first, and what they import).  Not counted: imports under ``if TYPE_CHECKING:`` (never run), and the import of a
module's own parent packages, which Python has started before the module (a package's ``__init__`` may import its
submodules).

``kernels/`` too: its Epic kernel is the package ``kernels/epic/`` in layers (kernels/README.md), each module
importing only the layers below it.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analysis", "kernels")


def module_name(path: Path) -> str:
    """The module's name: ``analysis/`` and ``kernels/`` are installed as ``wargame_odds.analysis`` /
    ``wargame_odds.kernels`` (pyproject.toml's package-dir)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return f"wargame_odds.{name}" if parts[0] in PACKAGES else name


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(path: Path, modules: set[str], parents: bool = True) -> list[tuple[str, int]]:
    """(imported module of ``modules``, line) for each counted import statement of the file at ``path``; with
    ``parents``, the packages above each imported module too (those not the file's own)."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full if full in modules else base, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    edges = []
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")))}
    for target, line in found:
        while target and target not in modules:  # an object imported from a module: that module
            target = target.rpartition(".")[0]
        if not target or target == name:
            continue
        # importing a.b.c runs a/__init__ and a/b/__init__ first (those not already running: the module's own)
        parts = target.split(".")
        for parent in (".".join(parts[:i]) for i in range(1, len(parts)) if parents):
            if parent in modules and parent not in ancestors and parent != name:
                edges.append((parent, line))
        edges.append((target, line))
    return edges


def import_graph(packages=PACKAGES, parents: bool = True) -> dict[str, list[tuple[str, int]]]:
    """Each module of ``packages`` -> the modules it imports (:func:`imports_of`), with their lines."""
    files = {module_name(p): p for package in packages for p in (ROOT / package).rglob("*.py")}
    return {m: imports_of(p, set(files), parents) for m, p in files.items()}


def import_cycles(packages=PACKAGES, parents: bool = True) -> list[list[str]]:
    """Each cycle (a strongly connected set of more than one module, or a module importing itself), as its
    edges "module:line → module"."""
    graph = import_graph(packages, parents)
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while not component or v not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                cycles.append(sorted(f"{a}:{line} → {b}" for a in component for b, line in graph[a]
                                     if b in component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return cycles


def test_no_import_cycle_in_analysis_or_kernels():
    """Issue 38 §1: the whole tree, parent packages and function-level imports counted (the NetEA library is
    inside Epic's folder, analysis/epic/library/; the app's address constants are in app/location.py)."""
    assert import_cycles() == []


#: The core's three layers, bottom first: a module imports only its own layer and those below it.
CORE_LAYERS = ("wargame_odds.analysis.intake", "wargame_odds.analysis.output", "wargame_odds.analysis.run")


def test_the_core_layers_import_only_their_own_and_the_layers_below():
    """Issue 38 §1: intake (user input), output (results, labels, plots), run (the runner, Numba's cache), each
    importing only the layers below it and nothing of the rule systems, decisions, reports or app above them;
    parent packages and function-level imports counted."""
    graph = import_graph()
    upward = []
    for level, layer in enumerate(CORE_LAYERS):
        allowed = (*CORE_LAYERS[:level + 1], "wargame_odds.kernels")
        for module, imports in graph.items():
            if module == layer or module.startswith(layer + "."):
                upward += [f"{module}:{line} → {target}" for target, line in imports
                           if target != "wargame_odds.analysis" and target not in allowed
                           and not target.startswith(tuple(f"{a}." for a in allowed))]
    assert upward == []


def test_the_core_has_no_import_cycle_counting_parent_packages():
    cycles = import_cycles()
    assert [c for c in cycles if any(edge.startswith(CORE_LAYERS) for edge in c)] == []


def test_the_check_finds_a_cycle_through_a_function_level_import(tmp_path, monkeypatch):
    """The check itself: two modules importing each other, one of them inside a function, are a cycle; an
    import under TYPE_CHECKING is not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import g\n\ndef f():\n    from . import b\n    return b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import h\n"
                                  "def g():\n    from pkg.a import f\n    return f\n")
    (package / "c.py").write_text("from .b import g\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert import_cycles(("pkg",)) == [["pkg.a:1 → pkg.b", "pkg.a:4 → pkg.b", "pkg.b:5 → pkg.a"]]


def test_the_check_counts_the_packages_an_import_runs(tmp_path, monkeypatch):
    """Importing ``pkg.sub.leaf`` runs ``pkg/sub/__init__``: when that imports the importer back, it is a cycle
    (counted with parents only); a module's own parent package is not an import of it."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub.leaf import x\n")
    (package / "sub" / "__init__.py").write_text("from ..a import y\n")
    (package / "sub" / "leaf.py").write_text("from . import other\nx = 1\n")
    (package / "sub" / "other.py").write_text("")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert import_cycles(("pkg",), parents=False) == []
    assert import_cycles(("pkg",)) == [["pkg.a:1 → pkg.sub", "pkg.sub:1 → pkg.a"]]
