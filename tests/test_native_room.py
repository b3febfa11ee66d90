"""One room for the seam: of cqlsh-ext's modules (the package, bench/ and tools/), only
cqlsh_ext/payload/native.py imports the native core's module `cqlsh_ext_native`; the readers above
name the seam's types through its aliases and call the core through its functions
(docs/architecture.md, "The native core"). Every import counts: inside functions, under
TYPE_CHECKING, and a module named by its string (importlib.import_module("cqlsh_ext_native")).

tests/ is not counted: tests/native and tests/test_wheels.py drive the core's module directly, as
the reference the room is checked against."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "cqlsh_ext_native"
ROOM = "cqlsh_ext/payload/native.py"
#: Where the count looks.
TREES = ("cqlsh_ext", "bench", "tools")


def imports_core(source: str) -> bool:
    """The source imports the core's module: an import statement of it (or of a name in it), or its
    name as a whole string (what importlib.import_module and __import__ take)."""
    for node in ast.walk(ast.parse(source)):
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
    found: set[str] = set()
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if imports_core(path.read_text(encoding="utf-8")):
                found.add(path.relative_to(ROOT).as_posix())
    return found


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


