"""The launchers in bin/ as a newcomer runs them: bin/demo's stdout is the shell's alone,
bin/setup installs only when the checkout changed, and bin/test's pytest says why the Docker tests
were skipped.

The launchers run for real in a copy of the layout they expect; the programs they start (pip in
.venv, the server, the shell) are stand-ins that record how they were called, so no port, server
or network is needed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO_ROOT


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)


def _checkout(tmp_path: Path, launcher: str) -> Path:
    root = tmp_path / "checkout"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "bin" / launcher, root / "bin" / launcher)
    (root / "tools").mkdir()
    shutil.copy2(REPO_ROOT / "tools" / "say.py", root / "tools" / "say.py")  # what the scripts say
    rule = root / "cqlsh_ext" / "common" / "text.py"  # and the one rule it says it by
    rule.parent.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "cqlsh_ext" / "common" / "text.py", rule)
    return root


def _demo_with_setup(tmp_path: Path) -> Path:
    """A checkout of bin/demo with the real bin/setup beside it, and a package for it to install."""
    root = _checkout(tmp_path, "demo")
    shutil.copy2(REPO_ROOT / "bin" / "setup", root / "bin" / "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    return subprocess.run([str(root / "bin" / args[0]), *args[1:]], cwd=root, capture_output=True,
                          text=True, env=env, timeout=60)


def _python_runs_the_real_one(root: Path) -> None:
    """.venv/bin/python in a copied checkout: the test's own interpreter (the real cqlsh_ext)."""
    _script(root / ".venv" / "bin" / "python", f'exec "{sys.executable}" "$@"\n')


def test_demo_prints_its_status_on_stderr_and_only_the_shell_on_stdout(tmp_path: Path):
    root = _checkout(tmp_path, "demo")
    _python_runs_the_real_one(root)
    _script(root / "bin" / "setup", "echo 'setup: installing cqlsh-ext'\n")
    _script(root / "bin" / "dev-cassandra",
            "mkdir -p .cache/dev-cassandra\necho 'already running (pid 4242); log .cache/x.log'\n")
    _script(root / ".venv" / "bin" / "cqlsh-ext",
            'if [ "$1" = demo ]; then echo "compression_demo: demo data already loaded"; exit 0; fi\n'
            'echo \'{"name": "gzip", "args": "\'"$*"\'"}\'\n')
    proc = _run(root, "demo", "--output-format", "json", "-e", "SELECT name FROM blob_formats")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        '{"name": "gzip", "args": "127.0.0.1 9042 --credentials .cache/dev-cassandra/credentials '
        '-k compression_demo --dictionary .cache/dev-cassandra/dictionaries/demo.zstd-dict '
        '--dictionary .cache/dev-cassandra/dictionaries/demo.zlib-dict '
        '--output-format json -e SELECT name FROM blob_formats"}']
    for status in ("setup: installing", "already running (pid 4242)", "demo data already loaded"):
        assert status in proc.stderr


def test_a_first_demo_says_on_stderr_what_it_is_doing(tmp_path: Path):
    # The real bin/setup under bin/demo: a first run installs, and says so before pip's quiet minute.
    root = _demo_with_setup(tmp_path)
    calls = root / "calls.log"
    _script(root / ".venv" / "bin" / "python", f'echo "python $*" >> "{calls}"\n')
    _script(root / "bin" / "dev-cassandra",
            "mkdir -p .cache/dev-cassandra\necho 'starting Cassandra 5.0 ...'\n")
    _script(root / ".venv" / "bin" / "cqlsh-ext",
            f'echo "cqlsh-ext $*" >> "{calls}"\n'
            'if [ "$1" = demo ]; then echo "compression_demo.nested_blobs: 1 row"; exit 0; fi\n'
            'echo "the shell"\n')
    first = _run(root, "demo")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "the shell\n"
    said = first.stderr.splitlines()
    assert said[0].startswith("bin/setup: installing cqlsh-ext and its dependencies into .venv"), said
    assert said[1:] == ["starting Cassandra 5.0 ...", "compression_demo.nested_blobs: 1 row"], said
    # The demo is loaded with the credentials file the shell is then opened with, and its
    # dictionaries written where the shell's --dictionary flags name them.
    assert ("cqlsh-ext demo load --if-missing --credentials .cache/dev-cassandra/credentials "
            "--dictionaries .cache/dev-cassandra/dictionaries 127.0.0.1 9042") in calls.read_text()
    again = _run(root, "demo")
    assert "installing" not in again.stderr  # installed: nothing to wait for, nothing said


def test_setup_installs_only_when_the_checkout_changed(tmp_path: Path):
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["cqlsh==6.2.0"]\n')
    source = root / "cqlsh_ext" / "shell.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text("X = 1\n")
    log = root / "python.log"
    # The virtualenv's python: any version check passes, every call is recorded.
    _script(root / ".venv" / "bin" / "python", f'echo "$*" >> "{log}"\n')

    def installs(*args: str) -> int:
        log.write_text("")
        proc = _run(root, "setup", *args)
        assert proc.returncode == 0, proc.stderr
        return log.read_text().count("-m uv pip install")

    assert installs("--test") == 1
    assert installs("--test") == 0  # nothing changed
    assert installs() == 0  # a test install has all a plain one needs
    source.write_text("X = 2  # edited\n")
    assert installs() == 1
    assert installs() == 0
    (root / "cqlsh_ext" / "new.py").write_text("")
    assert installs("--test") == 1
    (root / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["cqlsh==6.2.1"]\n')
    assert installs("--test") == 1
    assert installs("--test") == 0


def test_setup_spark_adds_the_extra_and_fetches_the_jars_once(tmp_path: Path):
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    log = root / "calls.log"
    _script(root / ".venv" / "bin" / "python", f'echo "python $*" >> "{log}"\n')
    _script(root / ".venv" / "bin" / "cqlsh-ext",
            f'echo "cqlsh-ext $* cache=$CQLSH_EXT_SPARK_CACHE" >> "{log}"\nmkdir -p .cache/spark\n')

    def calls(*args: str) -> list[str]:
        log.write_text("")
        proc = _run(root, "setup", *args)
        assert proc.returncode == 0, proc.stderr
        return [line for line in log.read_text().splitlines() if "pip install" in line or "spark" in line]

    # uv (its pin: tools/build-requirements.txt) installs at locks/main.txt's versions
    uv = ("python -m pip install --quiet --disable-pip-version-check --constraint "
          "tools/build-requirements.txt uv")
    locked = "python -m uv pip install --quiet --python .venv/bin/python --constraint locks/main.txt -e"
    assert calls("--test") == [uv, f"{locked} .[test]"]
    assert calls("--test", "--spark") == [
        uv, f"{locked} .[test,spark]", f"cqlsh-ext spark --fetch-jars cache={root / '.cache' / 'spark'}",
        # pyspark 4 beside .venv's 3.5, for the Spark 4 tests (tests/spark)
        "python -m pip install --quiet --disable-pip-version-check --target .cache/spark4-site "
        "pyspark==4.3.0"]
    assert calls("--test") == []  # a spark install has all a test install needs
    assert calls("--spark", "--test") == []  # installed, the jars in the cache, pyspark 4 in its site


def test_setup_parquet_adds_the_extra_unless_installed_with_it(tmp_path: Path):
    # The command the Parquet hint gives in a checkout's .venv (tests/export/test_files.py).
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    log = root / "calls.log"
    _script(root / ".venv" / "bin" / "python", f'echo "python $*" >> "{log}"\n')
    _script(root / ".venv" / "bin" / "cqlsh-ext", "mkdir -p .cache/spark\n")  # --spark's jars

    def installs(*args: str) -> list[str]:
        log.write_text("")
        proc = _run(root, "setup", *args)
        assert proc.returncode == 0, proc.stderr
        return [line.rsplit(" ", 1)[1] for line in log.read_text().splitlines()
                if "uv pip install" in line or "--target" in line]  # (--target: Spark 4's site)

    assert installs("--parquet") == [".[parquet]"]
    assert installs("--parquet") == []
    assert installs() == []  # a parquet install has all a plain one needs
    assert installs("--test") == [".[test]"]
    assert installs("--parquet") == []  # the test extra brings pyarrow
    (root / "cqlsh_ext" / "shell.py").write_text("X = 2  # edited\n")
    assert installs("--spark", "--parquet") == [".[spark,parquet]", "pyspark==4.3.0"]  # (and Spark 4's)
    assert installs("--parquet") == []  # so does the spark extra
    assert installs("--test", "--parquet") == [".[test,parquet]"]
    proc = _run(root, "setup", "--pyarrow")
    assert proc.returncode == 2 and "--parquet" in proc.stderr


def test_setup_mcp_adds_the_extra_and_the_test_extra_brings_it(tmp_path: Path):
    # The command the MCP server's hint gives in a checkout's .venv (tests/mcp_server); bin/test's
    # `bin/setup --test` installs the SDK, so the MCP tests run on a fresh machine.
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    log = root / "calls.log"
    _script(root / ".venv" / "bin" / "python", f'echo "python $*" >> "{log}"\n')
    _script(root / ".venv" / "bin" / "cqlsh-ext", "mkdir -p .cache/spark\n")  # --spark's jars

    def installs(*args: str) -> list[str]:
        log.write_text("")
        proc = _run(root, "setup", *args)
        assert proc.returncode == 0, proc.stderr
        return [line.rsplit(" ", 1)[1] for line in log.read_text().splitlines()
                if "uv pip install" in line or "--target" in line]  # (--target: Spark 4's site)

    assert installs("--mcp") == [".[mcp]"]
    assert installs("--mcp") == []
    assert installs() == []
    (root / "cqlsh_ext" / "shell.py").write_text("X = 2  # edited\n")
    assert installs("--spark") == [".[spark]", "pyspark==4.3.0"]  # (and Spark 4's)
    assert installs("--mcp") == [".[mcp]"]  # the spark extra does not bring it
    assert installs("--test") == [".[test]"]
    assert installs("--mcp") == []  # the test extra does
    assert installs("--mcp", "--parquet") == []


def test_the_checkout_s_shell_runs_from_anywhere_as_the_readme_says(tmp_path: Path):
    # README, "Two commands": after bin/demo, cqlsh-ext is not on PATH; bin/cqlsh-ext is the
    # checkout's shell in its .venv, from any directory, subcommands included.
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert "in a checkout that is `bin/cqlsh-ext`" in readme
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PATH"] = "/usr/bin:/bin"  # no .venv/bin on it
    version = subprocess.run([str(REPO_ROOT / "bin" / "cqlsh-ext"), "--version"], cwd=tmp_path,
                             capture_output=True, text=True, env=env, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("cqlsh-ext "), version.stderr
    import gzip

    value = "0x" + gzip.compress(b'{"a": 1}', mtime=0).hex()
    inspect = subprocess.run([str(REPO_ROOT / "bin" / "cqlsh-ext"), "inspect", value], cwd=tmp_path,
                             capture_output=True, text=True, env=env, timeout=120)
    assert "gzip" in inspect.stdout and '{"a": 1}' in inspect.stdout, inspect.stdout + inspect.stderr


def test_skipped_docker_tests_say_why_once(tmp_path: Path):
    # bin/test's own pytest command line, on the Docker tests, with Docker not switched on.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CQLSH_EXT_DOCKER_TESTS")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/docker"],
                          cwd=REPO_ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    said = [line for line in proc.stdout.splitlines() if "Docker tests skipped" in line]
    skipped = int(re.search(r"^(\d+) skipped in ", proc.stdout, re.MULTILINE)[1])
    assert said == [f"{skipped} Docker tests skipped: they run with CI=true or CQLSH_EXT_DOCKER_TESTS=1 "
                    "(Docker needed; README, 'Two commands')"], proc.stdout[-3000:]


def test_the_engine_table_lines_up_whatever_its_names(tmp_path: Path):
    # bin/test's pytest on tests/native closes with the native core's counts against the Python
    # engine: one column per count under its header, the names as wide as the longest.
    from cqlsh_ext.payload import native

    if not native.available():
        import pytest

        pytest.skip("the native core does not run: tests/native prints no table")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not server",
                           "tests/native/test_differential.py", "tests/native/test_describe_pages.py",
                           "-k", "floats or every_encoding"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "native core against the Python engine" in line)
    table = lines[head:head + 2] + [line for line in lines[head + 2:] if re.match(r"  \S.*  [\d,]+$", line)]
    assert re.search(r"values compared +handed back +differences$", table[0]), table
    assert len(table) >= 5 and table[-1].startswith("  total ")  # a long name among them
    assert any(len(line.split("  ")[1]) > 34 for line in table[2:]), table
    assert len({len(line) for line in table}) == 1, "\n".join(table)  # the figures end in one column


def _fake_test_tools(root: Path, failing: str) -> None:
    """bin/test's tools as stand-ins: the lints pass, the native core is built, and pytest says its
    counts, failing (exit status 1) on the pass named by `failing` ("native", "python" or "")."""
    _script(root / "bin" / "setup", "exit 0\n")
    for tool in ("ruff", "mypy", "lint-imports"):
        _script(root / ".venv" / "bin" / tool, "exit 0\n")
    (root / "locks").mkdir(exist_ok=True)
    (root / "locks" / "other-end.in").write_text("# the other end\npandas==3.1.1\npyarrow==19.0.1\n")
    (root / "locks" / "other-end.txt").write_text("")
    (root / "pyproject.toml").write_text("")
    _script(root / ".venv" / "bin" / "python",
            'if [ "$1" = -c ]; then exit 0; fi\n'  # the native core is found
            f'case "$1" in *say.py) exec "{sys.executable}" "$@" ;; esac\n'  # bin/test's messages
            # uv makes the other end's virtualenv (its python: this one), and installs into it
            'if [ "$2" = uv ]; then [ "$3" != venv ] || { eval "dir=\\${$#}"; mkdir -p "$dir/bin"; '
            'ln -s "$(cd "$(dirname "$0")" && pwd)/python" "$dir/bin/python"; }; exit 0; fi\n'
            'case "$0" in *other-end*) pass=other; counts="31 passed in 95.00s (0:01:35)" ;;\n'
            '*) if [ "${CQLSH_EXT_NATIVE:-}" = 0 ]; then\n'
            'pass=python; counts="640 passed in 61.20s (0:01:01)"\n'
            'else pass=native; counts="2017 passed, 21 skipped in 840.12s (0:14:00)"; fi ;; esac\n'
            f'if [ "$pass" = "{failing}" ]; then counts="1 failed, $counts"; fi\n'
            'echo "...................F...."\n'
            'echo "$counts"\n'
            f'[ "$pass" != "{failing}" ]\n')


def test_bin_test_help_says_what_it_runs_and_installs_nothing(tmp_path: Path):
    root = _checkout(tmp_path, "test")
    _script(root / "bin" / "setup", f'touch "{root / "installed"}"\n')
    for flag in ("--help", "-h"):
        proc = _run(root, "test", flag)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("Run the test suite") and not any(line.startswith("#") for line in lines)
        for usage in ("bin/test --fast", "bin/test --help", "Other arguments go to pytest"):
            assert usage in proc.stdout, usage
    assert not (root / "installed").exists()  # bin/setup never ran


def test_bin_test_runs_both_passes_and_closes_with_both_counts(tmp_path: Path):
    # The first pass failing does not skip the second; one last line gives both passes' counts.
    root = _checkout(tmp_path, "test")
    _fake_test_tools(root, failing="native")
    for tool in ("java", "javac", "mvn"):
        _script(root / "path" / tool, "exit 0\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CQLSH_EXT_DOCKER_TESTS")}
    env["PATH"] = f"{root / 'path'}:{env['PATH']}"
    for args in ((), ("--fast",)):
        proc = subprocess.run([str(root / "bin" / "test"), *args], cwd=root, capture_output=True, text=True,
                              env=env, timeout=60)
        assert proc.returncode == 1, proc.stderr
        every = "every fast test" if args else "every test"
        # the whole run ends with the other end's pass (locks/other-end.in's versions), --fast never
        other = "" if args else "; other end (pandas==3.1.1, pyarrow==19.0.1): 31 passed in 95.00s (0:01:35)"
        assert proc.stdout.count("...................F....") == (2 if args else 3), proc.stdout
        assert proc.stderr.splitlines()[-1] == (
            f"bin/test: native core, {every}: 1 failed, 2017 passed, 21 skipped in 840.12s (0:14:00); "
            f"Python engine, engine-sensitive tests: 640 passed in 61.20s (0:01:01){other}"), proc.stderr
    # Both green: bin/test is green; the second failing fails it too.
    _fake_test_tools(root, failing="")
    proc = subprocess.run([str(root / "bin" / "test"), "--fast"], cwd=root, capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "bin/test: native core, every fast test: 2017 passed, 21 skipped in 840.12s (0:14:00); "
        "Python engine, engine-sensitive tests: 640 passed in 61.20s (0:01:01)")
    _fake_test_tools(root, failing="python")
    proc = subprocess.run([str(root / "bin" / "test"), "--fast"], cwd=root, capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-1].endswith(
        "Python engine, engine-sensitive tests: 1 failed, 640 passed in 61.20s (0:01:01)"), proc.stderr
    # --other-end: that pass alone, its virtualenv made once, no lint run
    _script(root / ".venv" / "bin" / "ruff", f'touch "{root / "linted"}"\n')
    proc = subprocess.run([str(root / "bin" / "test"), "--other-end"], cwd=root, capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "bin/test: other end (pandas==3.1.1, pyarrow==19.0.1): 31 passed in 95.00s (0:01:35)"), proc.stderr
    assert not (root / "linted").exists() and "virtualenv" not in proc.stderr  # made by the run above


def test_under_load_runs_the_command_beside_busy_processes_and_gives_its_status(tmp_path: Path):
    # CONTRIBUTING.md's "Running under load": the burners are there while the command runs, gone after.
    probe = tmp_path / "probe.sh"
    # under_load's children while the command runs: the burners and the command itself.
    probe.write_text("#!/bin/sh\nps -o pid= --ppid \"$PPID\" | wc -l > \"$1\"\nexit 3\n")
    os.chmod(probe, 0o755)
    seen = tmp_path / "seen"
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tools" / "under_load.py"), "--burners", "2",
                             str(probe), str(seen)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert err.startswith("under_load: 2 busy processes while ")
    assert int(seen.read_text()) == 3


def _screen_words(rows: list[str]) -> list[str]:
    """The words a person reads on the screen's rows, in order."""
    return " ".join(rows).split()


def test_script_messages_wrap_between_words_at_80_columns(tmp_path: Path):
    # bin/setup's first line and the dev Cassandra's "already running" on an 80-column terminal:
    # lines wrap between words (no 'about a mi|nute', '127.0.0.1:9|042', 'pid 29|185').
    from repl.terminal import Term

    root = _checkout(tmp_path, "setup")
    shutil.copy2(REPO_ROOT / "bin" / "dev-cassandra", root / "bin" / "dev-cassandra")
    shutil.copy2(REPO_ROOT / "tools" / "devcassandra.py", root / "tools" / "devcassandra.py")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    _script(root / ".venv" / "bin" / "python",
            f'case "$1" in *.py) exec "{sys.executable}" "$@" ;; esac\nexit 0\n')  # pip: nothing to do
    setup = Term([], tmp_path, rows=24, cols=80, program=str(root / "bin" / "setup"))
    assert setup.finish() == 0, setup.tail()
    rows = [row for row in setup.display() if row]
    message = ("bin/setup: installing cqlsh-ext and its dependencies into .venv (locks/main.txt; about a "
               "minute the first time) ...")
    assert _screen_words(rows) == message.split(), rows
    assert len(rows) == 2 and rows[1].startswith("  ") and all(len(row) <= 80 for row in rows), rows

    # A server already running there (its pid file names a live process started with its config).
    instance = root / ".cache" / "dev-cassandra"
    (instance / "conf").mkdir(parents=True)
    (instance / "conf" / "cassandra.yaml").write_text("")
    (instance / "instance.json").write_text(
        '{"host": "127.0.0.1", "native_port": 9042, "storage_port": 7000, "jmx_port": 7199}\n')
    server = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()",
                               str(instance / "conf" / "cassandra.yaml")], stdin=subprocess.PIPE)
    try:
        (instance / "cassandra.pid").write_text(f"{server.pid}\n")
        start = Term(["start"], tmp_path, rows=24, cols=80, program=str(root / "bin" / "dev-cassandra"),
                     cwd=root)
        assert start.finish() == 0, start.tail()
        rows = [row for row in start.display() if row]
    finally:
        server.communicate(b"")
    said = ("bin/dev-cassandra: Cassandra 5.0 is already running in .cache/dev-cassandra "
            f"(pid {server.pid}, CQL on 127.0.0.1:9042): using it as it is; bin/dev-cassandra stop stops it. "
            "Log: .cache/dev-cassandra/cassandra.log")
    assert _screen_words(rows) == said.split(), rows
    assert all(row.startswith("  ") for row in rows[1:]), rows


def test_setup_without_cargo_says_how_to_get_the_core_in_one_line(tmp_path: Path):
    # No Rust on PATH: bin/setup installs cqlsh-ext, builds nothing, downloads no Rust, and says how
    # to get the native core.
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext").mkdir(exist_ok=True)
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    (root / "native").mkdir()
    calls = root / "calls.log"
    _script(root / ".venv" / "bin" / "python", f'echo "$*" >> "{calls}"\n')
    no_rust = "/usr/bin:/bin"
    assert shutil.which("cargo", path=no_rust) is None
    env = {k: v for k, v in os.environ.items() if k != "PYTHON" and k != "CI"} | {"PATH": no_rust}
    proc = subprocess.run([str(root / "bin" / "setup")], cwd=root, capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "bin/setup: cargo not found: the native core (native/) is not built, the Python engine runs alone "
        "(Rust 1.85 or later builds it: Debian 12's rustc-web and cargo-web; or install a prebuilt wheel of "
        "it, which bin/wheels makes: README, Install)")
    assert "maturin" not in calls.read_text() and "./native" not in calls.read_text()


def test_a_first_demo_opens_the_shell_while_the_native_core_builds_in_the_background(tmp_path: Path):
    # Issue 111: the core's first build (5 of a first bin/demo's 7 minutes on 2 cores) no longer holds
    # the shell: the demo opens on the Python engine, says so in one line, and the next start, the
    # build installed, runs on the core. The build's stand-in waits on a FIFO the test opens.
    root = _demo_with_setup(tmp_path)
    for source in ("Cargo.toml", "core/Cargo.toml", "bindings/Cargo.toml", "Cargo.lock", "pyproject.toml",
                   "mirror.manifest", ".cargo/config.toml", "core/build.rs", "core/src/lib.rs",
                   "bindings/src/lib.rs", "core/libdeflate/lib.c"):
        (root / "native" / source).parent.mkdir(parents=True, exist_ok=True)
        (root / "native" / source).write_text("// native\n")
    gate = root / "build-gate"
    os.mkfifo(gate)
    calls = root / "calls.log"
    _script(root / ".venv" / "bin" / "python",
            f'echo "python $*" >> "{calls}"\n'
            f'case "$*" in *"pip wheel"*) read go < "{gate}"; mkdir -p .cache/native-wheel;'
            ' touch .cache/native-wheel/cqlsh_ext_native-0.1.0-cp39-abi3-linux_x86_64.whl ;; esac\n')
    _script(root / "rust" / "cargo", "exit 0\n")
    _script(root / "bin" / "dev-cassandra",
            "mkdir -p .cache/dev-cassandra\necho 'starting Cassandra 5.0 ...'\n")
    _script(root / ".venv" / "bin" / "cqlsh-ext",
            'if [ "$1" = demo ]; then echo "loaded on engine ${CQLSH_EXT_NATIVE:-default}"; exit 0; fi\n'
            'echo "the shell on engine ${CQLSH_EXT_NATIVE:-default}"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "CI")}
    env["PATH"] = f"{root / 'rust'}:/usr/bin:/bin"

    def demo() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(root / "bin" / "demo")], cwd=root, capture_output=True, text=True, env=env,
                              timeout=60)

    first = demo()  # the build is held at its gate: the shell opened all the same
    assert first.returncode == 0, first.stderr
    assert first.stdout == "the shell on engine 0\n"  # CQLSH_EXT_NATIVE=0: the Python engine
    assert ("bin/setup: building the native core in the background (minutes of CPU; "
            ".cache/native-build.log): this start runs on the Python engine, the next ones on the core"
            ) in first.stderr.splitlines()
    assert "loaded on engine 0" in first.stderr
    # bin/setup run meanwhile (bin/test's) waits for that build rather than start a second one
    # writing the same wheel's folder.
    waiting = subprocess.Popen([str(root / "bin" / "setup")], cwd=root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)
    assert waiting.stderr is not None
    assert waiting.stderr.readline().startswith(
        "bin/setup: waiting for the native core's build in the background to end (pid ")
    subprocess.run(["sh", "-c", f'echo go > "{gate}"'], timeout=30, check=True)  # the build goes on
    assert waiting.wait(timeout=60) == 0
    deadline = time.monotonic() + 30
    while (root / ".cache" / "native-build.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # (waiting on the build's end, its pid file removed, not on a duration)
    assert not (root / ".cache" / "native-build.pid").exists(), "the build did not end"
    assert "--force-reinstall --no-deps .cache/native-wheel/cqlsh_ext_native-" in calls.read_text()
    second = demo()
    assert second.returncode == 0, second.stderr
    assert second.stdout == "the shell on engine default\n"  # the core installed: no longer turned off
    assert "native core" not in second.stderr
    assert calls.read_text().count("pip wheel") == 1


def test_dev_cassandra_restart_says_which_process_holds_a_port_it_needs(tmp_path: Path):
    # The server it stops ends, but another process holds its JMX port: restart says which (pid and
    # command line), at once, where it said only "port(s) in use: jmx" and left the server down.
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import devcassandra

    native, storage, jmx = devcassandra.free_ports(3)
    instance = tmp_path / "dev"
    (instance / "conf").mkdir(parents=True)
    yaml = instance / "conf" / "cassandra.yaml"
    yaml.write_text("")
    (instance / "instance.json").write_text(
        f'{{"host": "127.0.0.1", "native_port": {native}, "storage_port": {storage}, "jmx_port": {jmx}}}\n')
    # The holder's interpreter at a long path, as a clone's .venv/bin/python is in /home/alice/src/...:
    # the line names the program, not its directory, so what it runs still shows (issue 96).
    deep = tmp_path.joinpath(*(["a-directory-of-a-clone"] * 6), ".venv", "bin")
    deep.mkdir(parents=True)
    (deep / "python").symlink_to(sys.executable)
    holder = subprocess.Popen(
        [str(deep / "python"), "-c", "import socket, sys; s = socket.socket(); "
         f"s.bind(('127.0.0.1', {jmx})); s.listen(); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    server = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", str(yaml)],
                              stdin=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        (instance / "cassandra.pid").write_text(f"{server.pid}\n")
        proc = subprocess.run([str(REPO_ROOT / "bin" / "dev-cassandra"), "restart", "--dir", str(instance),
                               "--port", str(native), "--storage-port", str(storage), "--jmx-port", str(jmx)],
                              capture_output=True, text=True, timeout=120)
        assert server.wait(10) is not None  # stopped
    finally:
        server.kill()
        holder.communicate("")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == f"bin/dev-cassandra: stopping Cassandra (pid {server.pid}) ...\n"
    said = proc.stderr.strip()
    assert said.startswith(f"bin/dev-cassandra: port(s) in use on 127.0.0.1: jmx {jmx} "
                           f"(held by pid {holder.pid} ("), said
    assert f"(held by pid {holder.pid} (python -c import socket" in said and "\n" not in said
    assert "a-directory-of-a-clone" not in said


# ------------------------------------------------------------------ flags do what they say (issue 86)


def test_bin_test_refuses_an_unknown_flag_in_one_line_before_it_installs_anything(tmp_path: Path):
    # `bin/test --fsat` started installing the Spark extra, then ran the lints; it now says what it
    # does not take, with the flag meant, and does nothing else. pytest's own parser (with this
    # checkout's plugins and options) decides, so every flag pytest takes still goes through.
    root = _checkout(tmp_path, "test")
    shutil.copy2(REPO_ROOT / "tools" / "pytest_args.py", root / "tools" / "pytest_args.py")
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")  # pytest's settings
    installed = root / "installed"
    _script(root / "bin" / "setup", f'echo "setup $*" >> "{installed}"\n')
    _python_runs_the_real_one(root)
    for tool in ("ruff", "mypy", "lint-imports"):
        _script(root / ".venv" / "bin" / tool, f'echo "{tool}" >> "{installed}"\n')
    for args, said in ((["--fsat"], "bin/test: unknown flag --fsat (did you mean --fast?): "),
                       (["-k", "codecs", "--lfx"], "bin/test: unknown flag --lfx (did you mean --lf?): "),
                       (["-k"], "bin/test: argument -k: expected one argument (pytest's): ")):
        proc = _run(root, "test", *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(said) and "bin/test --help" in proc.stderr, proc.stderr
    assert not installed.exists()  # no install, no lint, no server


def test_bin_test_refuses_a_mistyped_flag_of_its_own_in_a_checkout_never_set_up(tmp_path: Path):
    # With no .venv yet, `bin/test --fsat` started bin/setup (minutes: the native core's build) before
    # pytest's parser could refuse it. A near miss of bin/test's own flags needs no parser: refused
    # at once; anything else still waits for it (the install goes on).
    root = _checkout(tmp_path, "test")
    shutil.copy2(REPO_ROOT / "tools" / "pytest_args.py", root / "tools" / "pytest_args.py")
    installed = root / "installed"
    _script(root / "bin" / "setup", f'echo "setup $*" >> "{installed}"; exit 9\n')
    proc = _run(root, "test", "--fsat")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.splitlines() == ["bin/test: unknown flag --fsat (did you mean --fast?): bin/test "
                                        "--help says what it takes; pytest's own: .venv/bin/python -m pytest "
                                        "--help"]
    assert not installed.exists()
    proc = _run(root, "test", "-k", "codecs", "--lf")  # pytest's: for its parser, after the install
    assert installed.read_text() == "setup --test\n" and proc.returncode == 9, proc.stderr


def test_bin_test_takes_fast_anywhere_and_hands_the_rest_to_pytest(tmp_path: Path):
    # `bin/test -k codecs --fast` is the fast layer with -k codecs, as `bin/test --fast -k codecs` is.
    root = _checkout(tmp_path, "test")
    shutil.copy2(REPO_ROOT / "tools" / "pytest_args.py", root / "tools" / "pytest_args.py")
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    calls = root / "calls.log"
    _script(root / "bin" / "setup", f'echo "setup $*" >> "{calls}"\n')
    for tool in ("ruff", "mypy", "lint-imports"):
        _script(root / ".venv" / "bin" / tool, "exit 0\n")
    # The real interpreter for bin/test's own tools; pytest itself a stand-in that says how it ran.
    _script(root / ".venv" / "bin" / "python",
            f'case "$1" in -c|*.py) exec "{sys.executable}" "$@" ;; esac\n'
            f'echo "pytest $* fast=${{CQLSH_EXT_FAST:-}}" >> "{calls}"\necho "1 passed in 0.01s"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHON")}
    env["PATH"] = "/usr/bin:/bin"  # no cargo: the native core is not built, one pass
    for args in (["-k", "codecs", "--fast"], ["--fast", "-k", "codecs"]):
        calls.write_text("")
        proc = subprocess.run([str(root / "bin" / "test"), *args], cwd=root, capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        ran = calls.read_text().splitlines()
        assert ran[0] == "setup --test", ran  # never the Spark extra
        [pytest] = [line for line in ran if line.startswith("pytest ")]
        assert pytest.endswith(" -k codecs fast=1") and "--fast" not in pytest, pytest


def test_bin_demo_help_prints_its_help_and_does_nothing_else(tmp_path: Path):
    # `bin/demo --help` installed, started Cassandra and loaded the data before printing help.
    root = _checkout(tmp_path, "demo")
    done = root / "done.log"
    for name in ("setup", "dev-cassandra"):
        _script(root / "bin" / name, f'echo "{name}" >> "{done}"\n')
    _script(root / ".venv" / "bin" / "cqlsh-ext", f'echo "cqlsh-ext $*" >> "{done}"\n')
    _python_runs_the_real_one(root)
    for flag in ("--help", "-h"):
        proc = _run(root, "demo", flag)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("One command from a fresh clone")
        assert not any(line.startswith("#") for line in lines)
        for said in ("bin/demo --help", "bin/cqlsh-ext --help", "bin/dev-cassandra stop"):
            assert said in proc.stdout, said
    assert not done.exists()  # nothing installed, no server, no shell
    # On an 80-column terminal (its lines were 94 wide, broken mid-word there).
    from repl.terminal import Term

    shown = Term(["--help"], tmp_path, rows=40, cols=80, program=str(root / "bin" / "demo"), cwd=root)
    assert shown.finish() == 0, shown.tail()
    rows = [row for row in shown.display() if row]
    assert rows[0].startswith("One command from a fresh clone") and all(len(row) < 80 for row in rows), rows
    # The README says what it does: its own help, not the shell's (issue 96, 8).
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert "`bin/demo --help` prints its own help" in readme


def test_bin_demo_refuses_an_option_the_shell_does_not_take_before_a_server_starts(tmp_path: Path):
    root = _checkout(tmp_path, "demo")
    done = root / "done.log"
    _script(root / "bin" / "setup", "exit 0\n")
    _script(root / "bin" / "dev-cassandra",
            f'mkdir -p .cache/dev-cassandra\necho "dev-cassandra $*" >> "{done}"\n')
    _script(root / ".venv" / "bin" / "cqlsh-ext", f'echo "cqlsh-ext $*" >> "{done}"\n')
    _python_runs_the_real_one(root)  # the real cqlsh-ext's options decide
    proc = _run(root, "demo", "--fsat", "-e", "SELECT 1")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.splitlines() == [
        "bin/demo: unknown option --fsat: cqlsh-ext --help lists them; bin/demo --help says what bin/demo "
        "takes"], proc.stderr
    assert not done.exists()  # no server started, no shell
    # The shell's own options go through.
    proc = _run(root, "demo", "--output-format", "json", "-e", "SELECT 1")
    assert proc.returncode == 0, proc.stderr
    assert "cqlsh-ext 127.0.0.1 9042" in done.read_text() and "--output-format json" in done.read_text()


def test_bin_demo_says_how_to_stop_the_server_when_the_shell_ends(tmp_path: Path):
    # The demo's server (a Java process of several hundred MB) outlives the shell: bin/demo says so
    # when the shell ends, on stderr, with the shell's exit status kept.
    root = _checkout(tmp_path, "demo")
    _python_runs_the_real_one(root)
    server = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        _script(root / "bin" / "setup", "exit 0\n")
        _script(root / "bin" / "dev-cassandra",
                f"mkdir -p .cache/dev-cassandra\necho {server.pid} > .cache/dev-cassandra/cassandra.pid\n"
                "echo 'starting Cassandra 5.0 ...'\n")
        _script(root / ".venv" / "bin" / "cqlsh-ext",
                'if [ "$1" = demo ]; then exit 0; fi\necho "the shell"\nexit 3\n')
        proc = _run(root, "demo")
        assert proc.returncode == 3 and proc.stdout == "the shell\n", proc.stderr
        last = proc.stderr.splitlines()[-1]
        assert re.fullmatch(rf"bin/demo: the demo's Cassandra is still running \(pid {server.pid}, \d+ MiB "
                            r"of memory\): bin/dev-cassandra stop stops it", last), proc.stderr
    finally:
        server.communicate(b"")
    # Stopped: nothing to say.
    proc = _run(root, "demo")
    assert "still running" not in proc.stderr, proc.stderr


def test_setup_installs_the_test_plugins_where_only_the_tests_see_them(tmp_path: Path):
    # bin/setup --test put the tests' hostile plugin into .venv, so the demo's shell, the API and the
    # MCP server listed it. It now goes to .cache/test-site (tests/conftest.py's TEST_SITE), and one
    # an earlier bin/setup put into .venv is taken out; a plain install touches neither.
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    plugin = root / "tests" / "plugins" / "acme_formats"
    shutil.copytree(REPO_ROOT / "tests" / "plugins" / "acme_formats", plugin,
                    ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    log = root / "calls.log"
    # .venv's python: every call recorded; acme-formats is installed there (an earlier bin/setup).
    _script(root / ".venv" / "bin" / "python",
            f'echo "python $* PYTHONPATH=${{PYTHONPATH:-}}" >> "{log}"\n'
            'case "$*" in *--target*) mkdir -p .cache/test-site ;; esac\n')

    def calls(*args: str) -> list[str]:
        log.write_text("")
        proc = _run(root, "setup", *args)
        assert proc.returncode == 0, proc.stderr
        return [line for line in log.read_text().splitlines() if "pip" in line or "distribution" in line]

    assert not any("acme" in line for line in calls())  # no --test: no plugin anywhere
    ran = calls("--test")
    assert any(line.startswith("python -c import importlib.metadata") and line.endswith(
        "acme-formats PYTHONPATH=") for line in ran), ran  # is it in .venv? (the test site not looked at)
    assert "python -m pip uninstall --quiet --yes acme-formats PYTHONPATH=" in ran, ran
    [install] = [line for line in ran if "--target" in line]
    assert install == ("python -m pip install --quiet --disable-pip-version-check --no-deps --target "
                       ".cache/test-site tests/plugins/acme_formats PYTHONPATH="), ran
    assert not any("-e tests/plugins" in line for line in ran), ran  # never into .venv
    assert not any("--target" in line for line in calls("--test"))  # installed: not again
    (plugin / "acme_formats" / "__init__.py").write_text("# edited\n")
    assert any("--target" in line for line in calls("--test"))  # its files changed: again


def test_test_plugins_are_found_by_the_tests_alone():
    # What bin/setup --test installed: the tests (this process, and a shell one starts) see the
    # plugin; the .venv's own shell, started as a user starts it, does not.
    from conftest import TEST_SITE

    assert (TEST_SITE / "acme_formats").is_dir(), "bin/setup --test installs the tests' plugins"
    from cqlsh_ext.cli import outside_lines

    assert "format kv1 (plugin acme-formats 1.4.2)" in outside_lines()
    shell = REPO_ROOT / ".venv" / "bin" / "cqlsh-ext"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    user = subprocess.run([str(shell), "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert user.returncode == 0 and user.stdout.startswith("cqlsh-ext "), user.stderr
    assert "acme" not in user.stdout and "plugin" not in user.stdout, user.stdout
    tests = subprocess.run([str(shell), "--version"], capture_output=True, text=True, timeout=120)
    assert "format acme_hostile (plugin acme-formats 1.4.2)" in tests.stdout, tests.stdout


def test_setup_links_the_manual_where_man_finds_it_from_the_venv(tmp_path: Path):
    # `man cqlsh-ext` failed in the checkout (an editable install leaves out the data files a wheel
    # installs): bin/setup links the checkout's page into .venv/share/man, where man looks for the
    # pages of .venv/bin on PATH (after `. .venv/bin/activate`).
    root = _checkout(tmp_path, "setup")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "cqlsh_ext" / "shell.py").write_text("X = 1\n")
    (root / "man").mkdir()
    shutil.copy2(REPO_ROOT / "man" / "cqlsh-ext.1", root / "man" / "cqlsh-ext.1")
    _script(root / ".venv" / "bin" / "python", "exit 0\n")
    proc = _run(root, "setup")
    assert proc.returncode == 0, proc.stderr
    page = root / ".venv" / "share" / "man" / "man1" / "cqlsh-ext.1"
    assert page.resolve() == (root / "man" / "cqlsh-ext.1").resolve()
    man = shutil.which("man")
    if man is None:
        return  # the link is what man reads; no man here to ask
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH",)}
    env["PATH"] = f"{root / '.venv' / 'bin'}:/usr/bin:/bin"
    found = subprocess.run([man, "-w", "cqlsh-ext"], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=60)
    assert found.returncode == 0 and Path(found.stdout.strip()).resolve() == page.resolve(), found.stderr


def test_dev_cassandra_refuses_a_file_for_its_directory_in_one_line(tmp_path: Path):
    # `stop --dir` of a file (a glob caught one): a usage error naming it, no traceback.
    plan = tmp_path / "test-cassandra-faults.plan"
    plan.write_text("delay\n")
    done = subprocess.run([str(REPO_ROOT / "bin" / "dev-cassandra"), "stop", "--dir", str(plan)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (f"bin/dev-cassandra: error: --dir {plan}: not a directory (an "
                                            "instance's directory, as `start` made it)")
    assert plan.read_text() == "delay\n"
