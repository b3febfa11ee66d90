"""A change made to a copy of the checkout, as a maintainer makes it, then checked there: the
recipes' tests (test_widest_values, test_write_statement_recipe, test_file_format_recipe) copy the
tree, add their files, and run the lints and the fast tests a new feature meets in the copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.shell_runner import isolated_env

ROOT = Path(__file__).resolve().parents[2]

#: The fast tests a new feature's declaration meets (those that read every declaration: the
#: registry, HELP, the man page, the statements' door and Tab, the imports at start-up), run in the
#: copy beside the feature's own test. The whole fast layer takes minutes: these take seconds.
FAST = ["tests/mcp_server/test_declarations.py", "tests/test_feature_commands.py", "tests/test_intercepts.py",
        "tests/test_man_page.py", "tests/test_function_length.py", "tests/test_imports.py",
        "tests/repl/test_feature_statement.py", "tests/test_architecture_doc.py"]


#: The maintainers' docs test a new module meets (its package's README.md names it), run in a
#: recipe's copy with the module's README line added (`add_readme_line`).
MAINTAINER_DOCS = "tests/test_maintainer_docs.py"


def add_readme_line(copy: Path, module: str, says: str) -> str:
    """The line of the new module `module` (a path in the tree) in its package's README.md, under
    its Modules, as a person adding it writes it; the README's path."""
    path = Path(module)
    readme = path.parent / "README.md"
    text = (copy / readme).read_text()
    heading = "## Modules\n\n"
    assert heading in text, readme
    (copy / readme).write_text(text.replace(heading, f"{heading}- `{path.name}`: {says}\n", 1))
    return str(readme)


def copied(copy: Path) -> dict[str, bytes]:
    """The checkout's files as they are now (tracked and new, not ignored), copied into `copy`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    files: dict[str, bytes] = {}
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = copy / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            files[name] = source.read_bytes()
    return files


def changed(copy: Path, before: dict[str, bytes]) -> list[str]:
    """The files of `copy` that are new or differ from the checkout's."""
    return sorted(str(path.relative_to(copy)) for path in copy.rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and ".mypy_cache" not in path.parts
                  and before.get(str(path.relative_to(copy))) != path.read_bytes())


def copy_env(copy: Path) -> dict[str, str]:
    """The copy's cqlsh_ext first on the path, ahead of the checkout's editable install."""
    return {"PYTHONPATH": os.pathsep.join([str(copy), *filter(None, [os.environ.get("PYTHONPATH")])])}


def in_copy(copy: Path, home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**isolated_env(home), **copy_env(copy)}
    return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=600)


def assert_checks_pass(copy: Path, home: Path, added: list[str], tests: list[str]) -> None:
    """lint-imports on the copy, ruff on the files `added`, and pytest's fast `tests` there pass."""
    bin_dir = Path(sys.executable).parent
    linted = in_copy(copy, home, str(bin_dir / "lint-imports"))
    assert linted.returncode == 0, linted.stdout + linted.stderr
    ruff = in_copy(copy, home, str(bin_dir / "ruff"), "check", *added)
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    ran = in_copy(copy, home, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "-n", "0", "-m", "not server", *tests)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout.splitlines()[-1] and "failed" not in ran.stdout.splitlines()[-1]
