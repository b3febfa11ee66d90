"""The Shell stops at the door (issue 62, item 2): only the shell's own side takes a parameter named
`shell`. Outside the exempt set below, the functions that still take one are counted, and the count
may only fall: a ratchet. Every import-free walk of the source (ast), so it runs in milliseconds."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cqlsh_ext"

#: Packages whose every module is the shell's side: the shell itself (shell/), the REPL (the
#: prompt_toolkit front end) and the seams to cqlsh (upstream/: the Shell protocol itself).
EXEMPT_PACKAGES = {"shell", "repl", "upstream"}
#: Modules that are the shell's side by name: the entry (__main__.py), the
#: cli modules (cli.py, the top one and each feature's subcommand), each package's command module
#: (the handlers each package's declared.py names: settings/command.py's DECODE, ...).
EXEMPT_NAMES = {"__main__.py", "cli.py", "command.py"}

#: The count today. Lower it when you take `shell` out of a function (hand it a
#: reading.context.ReadContext, a typed request, or the few values it reads instead); the test says
#: when the count has fallen below it. Never raise it.
BOUND = 2
#: Issue 62's goal.
GOAL = 10


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def exempt(path: Path, package: Path = PACKAGE) -> bool:
    relative = path.relative_to(package)
    return relative.parts[0] in EXEMPT_PACKAGES or path.name in EXEMPT_NAMES


def takes_shell(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = function.args
    return "shell" in {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def shell_takers(package: Path = PACKAGE) -> list[str]:
    """`path:line function` of every function outside the exempt set taking a `shell` parameter."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        if exempt(path, package):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(package)}:{f.lineno} {f.name}" for f in _functions(tree)
                  if takes_shell(f)]
    return found


def test_the_functions_taking_the_shell_do_not_grow() -> None:
    found = shell_takers()
    listing = "\n".join(found)
    assert len(found) <= BOUND, (
        f"{len(found)} functions outside the shell's side take `shell` (at most {BOUND}): hand the new "
        f"ones a reading.context.ReadContext or what they read instead (issue 62's goal: {GOAL}).\n"
        f"{listing}")
    assert len(found) == BOUND, (
        f"{len(found)} functions take `shell` now, fewer than {BOUND}: lower BOUND in "
        f"tests/test_shell_door.py to {len(found)} so the count cannot rise again.")


def test_the_count_sees_a_shell_parameter_and_the_exempt_set(tmp_path: Path) -> None:
    (tmp_path / "insight").mkdir()
    (tmp_path / "insight" / "measure.py").write_text(
        "def counted(shell, x): ...\nclass K:\n    async def also(self, *, shell=None): ...\n"
        "def not_counted(shell_name, ctx): ...\n")
    (tmp_path / "insight" / "command.py").write_text("def entry(shell): ...\n")
    (tmp_path / "repl").mkdir()
    (tmp_path / "repl" / "app.py").write_text("def run(shell): ...\n")
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "command.py").write_text("def do_x(shell, parsed): ...\n")
    (tmp_path / "codecs.py").write_text("def helper(shell): ...\n")
    assert shell_takers(tmp_path) == ["codecs.py:1 helper", "insight/measure.py:1 counted",
                                      "insight/measure.py:3 also"]
