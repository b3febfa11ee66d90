"""Run the real `cqlsh-ext` (and stock `cqlsh`) binaries the way a user does, and capture the output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIN_DIR = Path(sys.executable).parent
CQLSH_EXT = str(BIN_DIR / "cqlsh-ext")
STOCK_CQLSH = str(BIN_DIR / "cqlsh")


# Stock cqlsh warns on stdout when the server's release differs from the one it was built against
# even in the patch level; cqlsh-ext warns only for another major.minor, on stderr (cqlsh_ext.shell).
_PATCH_LEVEL_WARNING = re.compile(r"^WARNING: cqlsh was built against (\d+\.\d+)\.\d+, but this server is "
                                  r"\1\.\d+\.  All features may not work!\n", re.MULTILINE)


def without_patch_warning(stock_stdout: str) -> str:
    """Stock cqlsh's output less the one line cqlsh-ext deliberately does not print."""
    return _PATCH_LEVEL_WARNING.sub("", stock_stdout)


#: Stock cqlsh puts '<stdin>:1:' before each error of -e; cqlsh-ext does not (no file has that line).
_E_PLACE = re.compile(r"^<stdin>:\d+:", re.MULTILINE)


def without_e_place(stock_stderr: str) -> str:
    """Stock cqlsh's stderr of -e as cqlsh-ext writes it: without the script place before errors."""
    return _E_PLACE.sub("", stock_stderr)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    #: Peak resident set of the child in KiB (Linux ru_maxrss), when measured.
    max_rss_kib: int | None = None

    def __iter__(self) -> Iterator[Any]:
        """A run unpacks as what a test reads of it: `code, out, err = ext(...)`."""
        return iter((self.returncode, self.stdout, self.stderr))

    def checked_stdout(self) -> str:
        """stdout, of a run that exited 0 (else the test fails with its stderr)."""
        assert self.returncode == 0, self.stderr
        return self.stdout


#: What cqlsh says before anything when the password is given on the command line (-p), as most
#: tests give it.
PASSWORD_WARNING = ("Warning: Using a password", "Recommendation: use the credentials")


def said_lines(stderr: str) -> list[str]:
    """stderr's non-blank lines, cqlsh's warning about -p on the command line aside."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(PASSWORD_WARNING)]


def said_text(stderr: str) -> list[str]:
    """stderr's non-blank lines as a person reads them: with --output-format json each is one JSON
    object (cqlsh_ext.output.stderr_lines), read here as its message."""
    import json

    out = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            line = str(json.loads(line).get("message", line))
        if line.strip():
            out.append(line)
    return out


def isolated_env(home: Path) -> dict[str, str]:
    """A HOME of its own so no developer cqlshrc or history leaks into a test. CQLSH_EXT_NATIVE
    passes: bin/test runs the engine-sensitive tests again with the native core off."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CQLSH_", "CQL_")) or k == "CQLSH_EXT_NATIVE"}
    env["HOME"] = str(home)
    # The terminal's size is the one the test gives it (a pty's, or none), never the size the
    # environment running the tests exported: Python's shutil.get_terminal_size prefers these.
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    return env


# Measures the peak RSS of a command from a small parent: ru_maxrss of children counts the
# forked copy of the parent before exec, so measuring straight from pytest would report pytest's size.
_RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:])\n"
    "sys.stderr.write('\\nmax-rss-kib=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def as_the_user() -> list[str]:
    """The command prefix that starts a program as any other process of a user is: without
    capabilities. These tests may run as root, whose CAP_SYS_PTRACE reads any process's /proc
    entries; under `setpriv` with every capability dropped, root's processes are held to what a
    user's are held to (the kernel's ptrace access check), and what they start too."""
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.geteuid() == 0 else []


def load_demo(cassandra: Any, keyspace: str, rows: int, home: Path, *more: str) -> None:
    """`cqlsh-ext demo load` of the demo's tables into `keyspace` as a user runs it (`rows` documents
    per JSON table; `more`: its other options, e.g. --dictionaries DIR), HOME `home`."""
    proc = subprocess.run([CQLSH_EXT, "demo", "load", "-k", keyspace, "--rows", str(rows), *more,
                           cassandra.host, str(cassandra.port),
                           "-u", cassandra.username, "-p", cassandra.password],
                          capture_output=True, text=True, timeout=300, env=isolated_env(home))
    assert proc.returncode == 0, proc.stderr


def run(
    binary: str,
    args: list[str],
    home: Path,
    stdin: str | None = None,
    timeout: float = 120,
    measure_rss: bool = False,
    env: dict[str, str] | None = None,
) -> Run:
    """`binary` with `args` in HOME `home` (isolated_env, plus `env`), reading `stdin`."""
    cmd = [binary, *args]
    if measure_rss:
        cmd = [sys.executable, "-c", _RSS_WRAPPER, *cmd]
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
        env={**isolated_env(home), **(env or {})},
    )
    stderr, rss = proc.stderr, None
    if measure_rss:
        stderr, _, tail = stderr.rpartition("\nmax-rss-kib=")
        rss = int(tail)
    return Run(proc.returncode, proc.stdout, stderr, rss)


def ext(cassandra: Any, home: Path, *args: str, keyspace: str | None = None, stdin: str | None = None,
        env: dict[str, str] | None = None, login: bool = True, timeout: float = 300) -> Run:
    """cqlsh-ext as a user runs it against the test server `cassandra` (tests/conftest.py), in HOME
    `home`: its host and port and the login (-u, -p; without `login`, HOME's credentials file logs
    in), -k `keyspace`, then `args` (flags, -e STATEMENT, -f FILE), reading `stdin`; `env` adds
    variables to isolated_env(home). `.checked_stdout()` on the Run: its output, when it must succeed."""
    conn = cassandra.cqlsh_args if login else [cassandra.host, str(cassandra.port)]
    where = ["-k", keyspace] if keyspace else []
    return run(CQLSH_EXT, [*conn, *where, *args], home, stdin=stdin, timeout=timeout, env=env)


def api(cassandra: Any, home: Path, body: str, *args: str, env: dict[str, str] | None = None,
        timeout: float = 120) -> Run:
    """A user's program on the API against the test server `cassandra`: `body` (Python, indented
    as a block) runs with `db` connected as cqlsh_ext.connect connects with the server's login,
    `args` in `argv`; in HOME `home` (isolated_env, plus `env`) and started there, so that the
    checkout is not what `import cqlsh_ext` finds first (a copy of the tree on PYTHONPATH is)."""
    program = ("import sys, cqlsh_ext\n"
               "host, port, user, password, *argv = sys.argv[1:]\n"
               "with cqlsh_ext.connect(host, int(port), username=user, password=password) as db:\n"
               + "".join(f"    {line}\n" for line in body.splitlines()))
    login = [cassandra.host, str(cassandra.port), cassandra.username, cassandra.password]
    proc = subprocess.run([sys.executable, "-c", program, *login, *args], capture_output=True, text=True,
                          timeout=timeout, env={**isolated_env(home), **(env or {})}, cwd=home)
    return Run(proc.returncode, proc.stdout, proc.stderr, None)


def script(*statements: str) -> str:
    """Statements one after the other, for one -e."""
    return " ".join(statement.rstrip(";") + ";" for statement in statements)


def journal_of(output: str) -> Path:
    """The journal a write names in its output: "Journal: PATH", or "Journal: PATH (appended to)"."""
    return Path(next(line.split(": ", 1)[1].split(" (")[0] for line in output.splitlines()
                     if line.startswith("Journal: ")))


def killed_part_way(cassandra: Any, home: Path, keyspace: str, statement: str, applied: int,
                    what: str) -> Path:
    """`statement` run by cqlsh-ext (-e) until its journal holds `applied` writes applied (`what`,
    said if they never come), then killed (SIGKILL): its journal."""
    import signal

    from waiting import wait_until

    child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-k", keyspace, "-e", statement],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=isolated_env(home))
    assert child.stdout is not None
    journal = Path(journal_of(child.stdout.readline()))
    wait_until(lambda: journal.read_text().count('"applied": true') >= applied, what, process=child)
    child.send_signal(signal.SIGKILL)
    child.wait()
    return journal


def entry_reporting_at_exit(expression: str) -> str:
    """A `python -c` program: cqlsh-ext's entry point, writing the value of `expression` (a str;
    atexit, gc, sys and threading are imported) to stderr once every exit handler registered after
    it, the driver's included, has run."""
    return (
        "import atexit, gc, sys, threading\n"
        f"atexit.register(lambda: sys.stderr.write('\\n' + ({expression}) + '\\n'))\n"
        "from cqlsh_ext.cli import main\n"
        "sys.exit(main())\n"
    )


def table_rows(output: str) -> list[list[str]]:
    """Cells of a cqlsh table printout (header and separator lines excluded)."""
    lines = [line for line in output.splitlines() if " | " in line or line.startswith(" ")]
    rows = []
    for line in lines:
        if set(line.strip()) <= {"-", "+"} or not line.strip():
            continue
        rows.append([cell.strip() for cell in line.split(" | ")])
    return rows[1:] if rows else rows


@contextmanager
def in_process_shell(cassandra: Any, keyspace: str | None = None) -> Iterator[Any]:
    """The shell a user runs (its per-run class, its grammar), built in this process on the test
    server, in `keyspace` when given, its connection closed afterwards: for tests that call its
    methods (completion, handle_statement) directly."""
    from cassandra.auth import PlainTextAuthProvider
    from cqlshlib import cql3handling

    from cqlsh_ext.settings import Settings
    from cqlsh_ext.shell import ext_shell
    from cqlsh_ext.shell.completion import register_grammar
    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    register_grammar()
    if cqlshmain.cqlruleset is None:
        cqlshmain.setup_cqlruleset(cql3handling)
    sh = ext_shell.shell_class(Settings())(cassandra.host, cassandra.port, tty=False, encoding="utf-8",
                                       auth_provider=PlainTextAuthProvider(cassandra.username,
                                                                           cassandra.password))
    try:
        if keyspace is not None:
            sh.onecmd(f"USE {keyspace};")
        yield sh
    finally:
        sh.conn.shutdown()
