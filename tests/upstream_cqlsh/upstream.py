"""cqlsh's own pty-driven tests (`test_cqlsh_output.py`, `test_cqlsh_completion.py` of cqlshlib/test),
run against a program on the suite's server.

The cqlsh package the project pins (cqlsh 6.2.2) ships no tests, in its wheel or its sdist; scylla-cqlsh's
sdist on PyPI carries cqlsh's test package (pylib/cqlshlib/test), kept running against Cassandra. It is
fetched once by pip, by name, version and sha256, into .cache/upstream-cqlsh (unpacked in a temporary
sibling, renamed into place: the first to finish is kept), never copied into the repository, and its
test package is imported under a name of its own (`upstream_cqlshlib_test`), so that the installed
cqlshlib (cqlsh 6.2.2's, which the programs run) is the only `cqlshlib`.

The tests start the program as `python <cqlsh_dir>/cqlsh.py HOST PORT ...` in a pseudo-terminal
(run_cqlsh.py): `cqlsh_dir` is pointed at a directory holding a `cqlsh.py` of ours that runs the
program asked for (stock cqlsh, or `cqlsh-ext --classic`) with a HOME of its own, whose
~/.cassandra/credentials holds the server's login (no password on a command line). The server, user
and password come in as the tests read them: CQL_TEST_HOST, _PORT, _USER, _PWD, set before the
package is imported.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import traceback
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The sdist, by name, version and hash. Its version comes from setuptools-scm, which finds no git
#: history in an sdist and says 0.0.0 (pip then refuses the download as another version): the
#: version is given to it (SETUPTOOLS_SCM_PRETEND_VERSION).
REQUIREMENT = "scylla-cqlsh"
VERSION = "6.0.40"
SDIST = f"scylla_cqlsh-{VERSION}"
SDIST_SHA256 = "efd605095bf88b27216275ed82ccc8782c482eac74f97fb281a54fe457259ab8"
CACHE = REPO_ROOT / ".cache" / "upstream-cqlsh"
#: The modules run, in this order.
MODULES = ("test_cqlsh_output", "test_cqlsh_completion")
PACKAGE = "upstream_cqlshlib_test"
#: The tests stock cqlsh passes on this suite's server (tools/upstream_cqlsh_passes.py writes it).
STOCK_PASSES = Path(__file__).with_name("stock_passes.txt")


def test_dir() -> Path:
    """The sdist's cqlshlib/test directory, fetched and unpacked once."""
    unpacked = CACHE / SDIST
    tests = unpacked / "pylib" / "cqlshlib" / "test"
    if tests.is_dir():
        return tests
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE, prefix=f"{SDIST}."))
    try:
        archive = work / f"{SDIST}.tar.gz"
        requirements = work / "requirements.txt"
        requirements.write_text(f"{REQUIREMENT}=={VERSION} --hash=sha256:{SDIST_SHA256}\n")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "--no-binary", REQUIREMENT, "-r", str(requirements), "-d", str(work)],
                       check=True, timeout=600, env={**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": VERSION})
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()  # (pip checked it too)
        if digest != SDIST_SHA256:
            raise RuntimeError(f"{SDIST}: sha256 {digest}, not the pinned {SDIST_SHA256}")
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
        try:
            (work / SDIST).rename(unpacked)  # atomic: a concurrent run may have won, which is fine
        except OSError:
            if not tests.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tests


def stock_passes() -> list[str]:
    """The ids of stock_passes.txt (`module::Class::test`), its comments left out."""
    lines = STOCK_PASSES.read_text().splitlines() if STOCK_PASSES.is_file() else []
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@dataclass
class Server:
    host: str
    port: int
    username: str
    password: str


def load(server: Server) -> dict[str, ModuleType]:
    """The modules, imported once per process with the server's address and login in the variables
    cqlshlib's tests read at import (basecase.py)."""
    if PACKAGE in sys.modules:
        return {name: sys.modules[f"{PACKAGE}.{name}"] for name in MODULES}
    os.environ.update(CQL_TEST_HOST=server.host, CQL_TEST_PORT=str(server.port),
                      CQL_TEST_USER=server.username, CQL_TEST_PWD=server.password)
    directory = test_dir()
    spec = importlib.util.spec_from_file_location(PACKAGE, directory / "__init__.py",
                                                  submodule_search_locations=[str(directory)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return {name: importlib.import_module(f"{PACKAGE}.{name}") for name in MODULES}


def all_tests() -> list[str]:
    """Every test of the modules, as `module::Class::test`, in the modules' order: read from their
    source (importing them would fix the server they test, which is not known yet). Their test
    classes define their tests themselves (their bases hold none)."""
    directory = test_dir()
    ids = []
    for name in MODULES:
        tree = ast.parse((directory / f"{name}.py").read_text())
        for cls in tree.body:
            if isinstance(cls, ast.ClassDef):
                ids += [f"{name}::{cls.name}::{node.name}" for node in cls.body
                        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")]
    return ids


_SHIM = '''\
#!{python}
# cqlshlib's tests start `python cqlsh.py HOST PORT ...`: this runs {program} instead.
import os, sys
env = {{k: v for k, v in os.environ.items()
       if not k.startswith(("CQLSH_", "CQL_")) or k == "CQLSH_EXT_NATIVE"}}
env["HOME"] = {home!r}
os.execve({program!r}, [{program!r}, *{args!r}, *sys.argv[1:]], env)
'''


@dataclass
class Outcome:
    passed: bool
    skipped: str | None = None
    report: str = ""


@dataclass
class Harness:
    """The tests run against `program` (with `args` first) on `server`, from `workdir` (the shim,
    the program's HOME)."""

    server: Server
    program: str
    args: list[str]
    workdir: Path
    modules: dict[str, ModuleType] = field(default_factory=dict)
    _classes: dict[tuple[str, str], BaseException | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.modules = load(self.server)
        home = self.workdir / "home"
        credentials = home / ".cassandra" / "credentials"
        credentials.parent.mkdir(parents=True, exist_ok=True)
        credentials.write_text(f"[plain_text_auth]\nusername = {self.server.username}\n"
                               f"password = {self.server.password}\n")
        credentials.chmod(0o600)
        shim_dir = self.workdir / "bin"
        shim_dir.mkdir(exist_ok=True)
        shim = shim_dir / "cqlsh.py"
        shim.write_text(_SHIM.format(python=sys.executable, program=self.program, args=self.args,
                                     home=str(home)))
        shim.chmod(0o755)
        # run_cqlsh.CqlshRunner reads basecase.cqlsh_dir at each start.
        basecase: Any = sys.modules[f"{PACKAGE}.basecase"]
        basecase.cqlsh_dir = str(shim_dir)
        basecase.path_to_cqlsh = str(shim)

    def run(self, test_id: str) -> Outcome:
        """One test: its class set up first if it was not yet (setUpClass: its keyspace), then its
        setUp, the test and its tearDown, as unittest runs them."""
        module_name, class_name, test_name = test_id.split("::")
        cls = getattr(self.modules[module_name], class_name)
        key = (module_name, class_name)
        if key not in self._classes:
            try:
                cls.setUpClass()
                self._classes[key] = None
            except Exception as err:  # every test of the class fails with it
                self._classes[key] = err
        failed_setup = self._classes[key]
        if failed_setup is not None:
            return Outcome(False, report="setUpClass: " + "".join(traceback.format_exception(failed_setup)))
        result = unittest.TestResult()
        cls(test_name).run(result)
        if result.skipped:
            return Outcome(True, skipped=result.skipped[0][1])
        problems = result.errors + result.failures
        return Outcome(not problems, report="\n".join(text for _, text in problems))

    def close(self) -> None:
        """Each class set up, torn down (its keyspace dropped)."""
        for (module_name, class_name), failed in self._classes.items():
            if failed is None:
                getattr(self.modules[module_name], class_name).tearDownClass()
        self._classes.clear()
