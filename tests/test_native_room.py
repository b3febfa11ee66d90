"""One room for the seam: of cqlsh-ext's modules (the package, bench/ and tools/), only
cqlsh_ext/payload/native.py imports the native core's module `cqlsh_ext_native`; the readers above
name the seam's types through its aliases and call the core through its functions
(docs/architecture.md, "The native core"). Every import counts: inside functions, under
TYPE_CHECKING, and a module named by its string (importlib.import_module("cqlsh_ext_native")).

tests/ is not counted: tests/native and tests/test_wheels.py drive the core's module directly, as
the reference the room is checked against.

Above the payload layer (the package's modules outside cqlsh_ext/payload/) no module imports the
adapter either, nor names the core's request, answer or held types, nor says where the seam is:
a reader calls the value engine's page functions, which answer whichever engine runs. bench/
and tools/ may (bench/phases.py times the adapter's functions, bench/native_values.py the core's
call alone). The renderers read the one column type (payload/columns.py), not the core's columns.

Nor do the values the core hands back leave the room where the Python engine can read them: a
reader above it gets that engine's reading of such a value (a view, the value filled into the
page's columns, a payload query's rows read by the Python evaluator and merged into the page's
answer or columns, the Python rows of the columns the core holds spelt and put in their places),
never the core's list of them: no module above the room reads an attribute the core lists them
by, nor names one as a string (getattr, hasattr)."""

from __future__ import annotations

import ast
import re
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


# ------------------------------------------------------------------ the seam above the payload layer

#: The adapter's module: only modules of cqlsh_ext/payload/ import it (the value engine's page
#: functions, payload/engine.py, described.py, running.py, ..., answer the readers above whichever
#: engine runs: docs/architecture.md, "One room for the seam").
SEAM = "cqlsh_ext.payload.native"
PAYLOAD = "cqlsh_ext/payload/"



def _module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _absolute(node: ast.ImportFrom, path: str) -> str:
    """The module an ImportFrom names, a relative one resolved from the importing file's package."""
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if not path.endswith("/__init__.py"):
        package = package[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_seam(source: str | ast.Module, path: str = "cqlsh_ext/x.py") -> bool:
    """The source imports the adapter (payload/native.py), or the core's module: an import of it,
    a name from it, `native` from any payload module (a re-export), or its name as a whole
    string (importlib.import_module). TYPE_CHECKING imports count."""
    tree = ast.parse(source) if isinstance(source, str) else source
    if imports_core(tree):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name == SEAM or alias.name.startswith(SEAM + ".") for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            if module == SEAM or module.startswith(SEAM + "."):
                return True
            if (module == "cqlsh_ext.payload" or module.startswith("cqlsh_ext.payload.")) and any(
                    alias.name == "native" for alias in node.names):
                return True
        elif isinstance(node, ast.Constant) and node.value == SEAM:
            return True
    return False


def above_payload() -> dict[str, ast.Module]:
    """The package's modules outside cqlsh_ext/payload/."""
    return {name: module for name, module in parsed().items()
            if name.startswith("cqlsh_ext/") and not name.startswith(PAYLOAD)}


def test_no_module_above_the_payload_layer_imports_the_seam() -> None:
    found = {name for name, module in above_payload().items() if imports_seam(module, name)}
    assert not found, found  # 13 before the page functions, 4 renderers before the one column type
    # the payload layer's own page functions do (the check sees them)
    assert imports_seam(parsed()["cqlsh_ext/payload/engine.py"], "cqlsh_ext/payload/engine.py")


def test_the_seam_check_sees_every_way_of_importing() -> None:
    for source in ("from cqlsh_ext.payload import native\n",
                   "from cqlsh_ext.payload import budget, native as core\n",
                   "from cqlsh_ext.payload.native import module\n",
                   "import cqlsh_ext.payload.native\n",
                   "import cqlsh_ext.payload.native as seam\n",
                   "from cqlsh_ext.payload.engine import native\n",
                   "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                   "    from cqlsh_ext.payload import native\n",
                   "def f():\n    from cqlsh_ext.payload.native import Core\n",
                   "m = __import__('cqlsh_ext.payload.native')\n",
                   "import cqlsh_ext_native\n"):
        assert imports_seam(source), source
    assert imports_seam("from ..payload import native\n", "cqlsh_ext/query/evaluate.py")
    assert imports_seam("from . import native\n", "cqlsh_ext/payload/engine.py")
    assert imports_seam("from .native import module\n", "cqlsh_ext/payload/engine.py")
    assert not imports_seam("from cqlsh_ext.payload import engine, running\n")
    assert not imports_seam("from cqlsh_ext.payload.running import reads_pages_whole\n")
    assert not imports_seam('"""Read by the native core (payload.native)."""\nimport json\n')


# The core's request, answer and held types (every class the stub declares), and the adapter's
# names for the columns the core holds and how they are read: a reader above the payload layer
# names none of them, not even in a docstring (a single word, or a name that is ours too, only as
# a reference to the core's), and never says where the seam is (`payload.native`,
# `payload/native.py`, `cqlsh_ext_native`).
STUB = ROOT / "native" / "cqlsh_ext_native.pyi"
ADAPTER_NAMES = ("HeldColumn", "HeldContents", "is_held_column", "is_held_contents", "HeldFound", "HeldJson",
                 "held_json", "held_texts", "FilledPaths", "FilledContents", "QueryPageAnswer")
SEAM_WORDS = ("payload.native", "payload/native.py", MODULE)


@cache
def core_names() -> tuple[str, ...]:
    stub = ast.parse(STUB.read_text(encoding="utf-8"))
    classes = {node.name for node in stub.body if isinstance(node, ast.ClassDef)}
    return tuple(sorted(classes | set(ADAPTER_NAMES)))


@cache
def names_of_our_own() -> frozenset[str]:
    """Names some module of the package other than the adapter defines or imports for its own
    (query.grammar's Column and Literal, typing's Literal, scanning's Aggregate, query.evaluate's
    PageColumns)."""
    own: set[str] = set()
    for name, module in parsed().items():
        if not name.startswith("cqlsh_ext/") or name == ROOM:
            continue
        for node in ast.walk(module):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                own.add(node.name)
            elif isinstance(node, ast.Assign):
                own.update(target.id for target in node.targets if isinstance(target, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                own.add(node.target.id)
            elif isinstance(node, ast.ImportFrom) and not _absolute(node, name).startswith(SEAM):
                own.update(alias.asname or alias.name for alias in node.names)
    return frozenset(own)


@cache
def words_and_references() -> tuple[frozenset[str], frozenset[str]]:
    """The core's names a reader must not write at all (a compound name no module of ours uses:
    `HeldColumn`, `QueryPlace`, `is_held_column`), and those it must not reference: a single word
    (`Condition`, `Units`) or a name that is ours too (`Literal`, `PageColumns`), which a docstring
    may say of something else."""
    own = names_of_our_own()
    words = {name for name in core_names() if name not in own and not re.fullmatch(r"[A-Z][a-z]+", name)}
    return frozenset(words), frozenset(core_names()) - words


@cache
def defined_in(module: str) -> frozenset[str]:
    """The names a module of ours defines itself (a class, function or assignment at its top):
    `PathSeen` imported from payload/program.py is ours, not the core's."""
    path = module.replace(".", "/") + ".py"
    tree = parsed().get(path)
    if tree is None:
        return frozenset()
    own: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            own.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    return frozenset(own)


def names_the_seam(source: str, path: str = "cqlsh_ext/x.py") -> set[str]:
    """The core's type names (core_names) and the seam's whereabouts (SEAM_WORDS) that `source`
    names: of words_and_references' first set, as a word anywhere, docstrings and comments
    included; of its second, as an attribute of anything but a name the source imports
    (`core.Condition`, not `threading.Condition`) or as a name imported from a payload module."""
    words, references = words_and_references()
    found = {word for word in SEAM_WORDS if word in source}
    found.update(word for word in words if word in source and re.search(rf"\b{word}\b", source))
    tree = ast.parse(source)
    # (names the source imports: a module's, or ours; the core's types are reached through a
    # variable holding the core, which the seam check keeps from being imported at all)
    imported: set[str] = set()
    attributes: list[ast.Attribute] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
            module = _absolute(node, path) if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("cqlsh_ext.payload"):
                found.update(alias.name for alias in node.names
                             if alias.name in references and alias.name not in defined_in(module))
        elif isinstance(node, ast.Attribute) and node.attr in references:
            attributes.append(node)
    found.update(node.attr for node in attributes
                 if not (isinstance(node.value, ast.Name) and node.value.id in imported))
    return found


def test_no_module_above_the_payload_layer_names_the_core_types() -> None:
    found: dict[str, set[str]] = {}
    for name in above_payload():
        named = names_the_seam((ROOT / name).read_text(encoding="utf-8"), name)
        if named:
            found[name] = named
    assert not found, found


def test_the_name_check_sees_the_core_types() -> None:
    assert names_the_seam("def f(c: HeldColumn) -> None: ...\n") == {"HeldColumn"}
    assert names_the_seam('"""Its QueryPlace and RowsPage."""\n') == {"QueryPlace", "RowsPage"}
    assert names_the_seam("ok = is_held_column(x)\n") == {"is_held_column"}
    assert names_the_seam("# read by payload.native's decode_page\n") == {"payload.native"}
    # a word that is ours too: the core's only as a reference to it
    assert names_the_seam("c = core.Condition(op='=', place=0)\nl = seam.Literal.null()\n") == {"Condition",
                                                                                                "Literal"}
    assert names_the_seam("from cqlsh_ext.payload.program import Literal\n") == {"Literal"}
    assert not names_the_seam("from cqlsh_ext.payload.program import PathSeen\n")  # ours, defined there
    assert not names_the_seam("import threading\nc = threading.Condition()\n")
    assert not names_the_seam("from cqlsh_ext.query import grammar\nx = grammar.Literal\n")
    assert not names_the_seam('"""A Literal, a Condition and an Aggregate of the plan."""\n')
    assert names_the_seam("n = native_module.Needle(any=True, strings=[])\n") == {"Needle"}
    assert {"HeldColumn", "QueryPlace", "RowsPage", "is_held_column"} <= words_and_references()[0]
    assert {"Condition", "Literal", "Aggregate", "Needle", "Column"} <= words_and_references()[1]
