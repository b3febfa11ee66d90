"""One word for one thing: no two classes in cqlsh_ext share a name, and no two modules do, except
the feature packages' file convention (docs/architecture.md: command.py, parse.py, run.py, ...),
whose package says which feature it is."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cqlsh_ext"
#: The feature-file convention: each feature package has its own of these (declared.py: its
#: declarations, an entry point of the group cqlsh_ext.features).
CONVENTION = {"__init__.py", "__main__.py", "command.py", "declared.py", "parse.py", "run.py", "report.py",
              "help.py", "cli.py", "errors.py", "preview.py"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _where(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_no_two_classes_share_a_name() -> None:
    classes: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes[node.name].append(f"{_where(path)}:{node.lineno}")
    shared = {name: places for name, places in classes.items() if len(places) > 1}
    assert not shared


def test_no_two_modules_share_a_name_outside_the_feature_convention() -> None:
    modules: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        if path.name not in CONVENTION:
            modules[path.name].append(_where(path))
    shared = {name: places for name, places in modules.items() if len(places) > 1}
    assert not shared


def test_each_test_directory_with_a_conftest_is_a_package() -> None:
    """A conftest.py outside a package is imported as the bare module `conftest` and shadows
    tests/conftest.py: every later `from conftest import REPO_ROOT` fails to collect."""
    tests = Path(__file__).resolve().parent
    loose = [str(c.parent.relative_to(tests.parent)) for c in tests.glob("*/**/conftest.py")
             if not (c.parent / "__init__.py").exists()]
    assert loose == [], f"add an __init__.py to: {', '.join(loose)}"
