"""No circle of imports (issue 99, item 7), typing imports counted.

The import-linter contract `acyclic` (pyproject.toml) holds cqlsh_ext's run-time imports out of any
circle, but it reads no `if TYPE_CHECKING:` import and no stub (.pyi): a circle made of those still
ties packages together (mypy reads both, and a module cannot be understood without the other). This
walks every module's imports itself (ast: every `import`, at any depth, typing ones and the stubs'
included; `importlib.import_module` is not an import), and finds the circles between the children
of each package (the packages of cqlsh_ext, the modules of one package), as `acyclic` does. Every
import-free walk of the source (a few seconds).

KNOWN lists the circles left (none): the list may only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cqlsh_ext"

#: Circles of typing imports still there: (the package, its children in the circle). None is left;
#: never add one: break it at its cause (a Protocol of what a module reads, below it; a shared type
#: moved below both modules: docs/architecture.md, "Layers").
KNOWN: set[tuple[str, tuple[str, ...]]] = set()


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, modules: set[str]) -> set[str]:
    """The modules of ours `path` (module `name`) imports, anywhere in it."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from a import b`: the module a.b where there is one, else a
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                         for alias in node.names)
    return {imported for imported in found if imported in modules and imported != name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    files = {module_name(path, package.parent): path for pattern in ("*.py", "*.pyi")
             for path in package.rglob(pattern) if "__pycache__" not in path.parts}
    modules = set(files)
    return {name: imports_of(path, name, modules) for name, path in files.items()}


def _strong_components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's: the groups of nodes that reach each other, of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def circles(graph: dict[str, set[str]]) -> set[tuple[str, tuple[str, ...]]]:
    """(package, its children in one circle) for every package: an import of a child's module (or
    of one inside a child package) counts as an import of that child. An import joins two children
    of one package only: the deepest package both modules are in."""
    levels: dict[str, dict[str, set[str]]] = {}
    for importer, targets in graph.items():
        for imported in targets:
            left, right = importer.split("."), imported.split(".")
            common = 0
            while common < min(len(left), len(right)) and left[common] == right[common]:
                common += 1
            if common == len(left) or common == len(right):
                continue  # a package and a module inside it: no two children
            parent = ".".join(left[:common])
            levels.setdefault(parent, {}).setdefault(left[common], set()).add(right[common])
    return {(parent, tuple(group)) for parent, edges in levels.items()
            for group in _strong_components(edges)}


def test_no_new_circle_of_imports_typing_ones_included() -> None:
    found = circles(import_graph())
    assert found - KNOWN == set(), f"circles of imports (typing and stubs counted): {sorted(found - KNOWN)}"
    assert KNOWN - found == set(), f"broken, remove from KNOWN: {sorted(KNOWN - found)}"


def test_the_walk_sees_typing_imports_stubs_and_relative_ones(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for init in (root, root / "a", root / "b"):
        (init / "__init__.py").write_text("")
    # a.one -> b.two at run time; b.two -> a.three under TYPE_CHECKING; a.three -> b (a stub)
    (root / "a" / "one.py").write_text("from pkg.b import two\n")
    (root / "b" / "two.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from ..a.three import X\n")
    (root / "a" / "three.pyi").write_text("import pkg.b\nclass X: ...\n")
    (root / "b" / "four.py").write_text("def f():\n    from . import two\n")
    graph = import_graph(root)
    assert graph["pkg.a.one"] == {"pkg.b.two"} and graph["pkg.b.two"] == {"pkg.a.three"}
    assert graph["pkg.a.three"] == {"pkg.b"} and graph["pkg.b.four"] == {"pkg.b.two"}
    assert circles(graph) == {("pkg", ("a", "b"))}
