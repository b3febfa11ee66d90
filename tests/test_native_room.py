"""One room for the seam: of cqlsh-ext's modules (the package, bench/ and tools/), only
cqlsh_ext/payload/native.py imports the native core's module `cqlsh_ext_native`; the readers above
name the seam's types through its aliases and call the core through its functions
(docs/architecture.md, "The native core"). Every import counts: inside functions, under
TYPE_CHECKING, and a module named by its string (importlib.import_module("cqlsh_ext_native")).

tests/ is not counted: tests/native and tests/test_wheels.py drive the core's module directly, as
the reference the room is checked against.

Nor do the values the core hands back leave the room where the Python engine can read them: a
reader above it gets that engine's reading of such a value (a view, the value filled into the
page's columns, a payload query's rows read by the Python evaluator and merged into the page's
answer or columns, the Python rows of the columns the core holds spelt and put in their places),
never the core's list of them: no module above the room reads an attribute the core lists them
by, nor names one as a string (getattr, hasattr)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "cqlsh_ext_native"
ROOM = "cqlsh_ext/payload/native.py"
#: Where the count looks.
TREES = ("cqlsh_ext", "bench", "tools")


@cache
def parsed() -> dict[str, ast.Module]:
    """Every module of the trees counted, parsed once for the tests here, by its path."""
    return {path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for tree in TREES for path in sorted((ROOT / tree).rglob("*.py"))}


def imports_core(source: str | ast.Module) -> bool:
    """The source imports the core's module: an import statement of it (or of a name in it), or its
    name as a whole string (what importlib.import_module and __import__ take)."""
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Import):
            if any(alias.name.split(".")[0] == MODULE for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module is not None and node.module.split(".")[0] == MODULE:
                return True
        elif isinstance(node, ast.Constant) and node.value == MODULE:
            return True
    return False


def importers() -> set[str]:
    return {name for name, module in parsed().items() if imports_core(module)}


def test_only_the_room_imports_the_core() -> None:
    assert importers() == {ROOM}


def test_the_check_sees_every_way_of_importing() -> None:
    for source in ("import cqlsh_ext_native\n",
                   "import cqlsh_ext_native as core\n",
                   "from cqlsh_ext_native import HeldColumn\n",
                   "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import cqlsh_ext_native as t\n",
                   "def f():\n    import cqlsh_ext_native\n",
                   "from importlib import import_module\nm = import_module('cqlsh_ext_native')\n",
                   "MODULE = 'cqlsh_ext_native'\n"):
        assert imports_core(source), source
    # a docstring or comment naming it is no import
    assert not imports_core('"""The core is `cqlsh_ext_native`."""\n# cqlsh_ext_native\nimport json\n')
    assert not imports_core("from cqlsh_ext.payload.native import HeldColumn\n")



#: The core's lists of what it leaves to Python, by the attribute a reader reads them by.
LEFT_TO_PYTHON = ("handed_back", "handed_rows", "python_rows")


def readers_of_what_is_left(source: str | ast.Module) -> set[str]:
    """The names of LEFT_TO_PYTHON the source reads: as an attribute, or as a whole string
    (getattr(page, "handed_rows"), hasattr(chunk, "python_rows"))."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Attribute) and node.attr in LEFT_TO_PYTHON:
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and node.value in LEFT_TO_PYTHON:
            found.add(node.value)
    return found


def test_no_reader_above_the_room_sees_a_value_handed_back() -> None:
    found: set[tuple[str, str]] = set()
    for name, module in parsed().items():
        if name.startswith("cqlsh_ext/") and name != ROOM:
            found.update((name, attr) for attr in readers_of_what_is_left(module))
    assert found == set()
    # (the room itself reads them: the check would see it)
    assert readers_of_what_is_left(parsed()[ROOM]) == set(LEFT_TO_PYTHON)


def test_the_check_sees_a_reader_of_what_is_left() -> None:
    assert readers_of_what_is_left("for i in page.handed_back:\n    pass\n") == {"handed_back"}
    assert readers_of_what_is_left("rows = answer.handed_rows\n") == {"handed_rows"}
    assert readers_of_what_is_left("for i in chunk.python_rows():\n    pass\n") == {"python_rows"}
    assert readers_of_what_is_left("ok = hasattr(chunk, 'python_rows')\n") == {"python_rows"}
    assert readers_of_what_is_left("rows = getattr(page, 'handed_rows')\n") == {"handed_rows"}
    assert not readers_of_what_is_left("handed_back = 1\n")
    assert not readers_of_what_is_left('"""The rows a page hands back."""\n')
