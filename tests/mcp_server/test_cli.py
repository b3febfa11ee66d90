"""`cqlsh-ext mcp`'s command line, without a server: the SDK missing says how to add it in one line,
options that read statements are refused, --help names its own options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from shell_runner import CQLSH_EXT, isolated_env

#: cqlsh-ext's entry point as if the mcp package were not installed.
WITHOUT_SDK = ("import sys; sys.modules['mcp'] = None\n"
               "from cqlsh_ext.cli import main\n"
               "sys.exit(main(sys.argv[1:]))")


def _run(args: list[str], home: Path, program: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(program or [CQLSH_EXT]), *args], input="", capture_output=True, text=True,
                          timeout=60, env=isolated_env(home))


def test_without_the_sdk_one_line_says_how_to_add_it(tmp_path: Path) -> None:
    proc = _run(["mcp", "127.0.0.1", "9"], tmp_path, [sys.executable, "-c", WITHOUT_SDK])
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(lines) == 1
    assert lines[0].startswith("cqlsh-ext mcp: the MCP server needs the mcp package: run ")
    assert "--mcp" in lines[0] or "[mcp]" in lines[0], lines[0]  # bin/setup --mcp, or pip with the extra


def test_options_that_read_statements_are_refused(tmp_path: Path) -> None:
    for option, flag in ((["-e", "DROP TABLE ks.t"], "-e"), (["-f", "script.cql"], "-f"),
                         (["--execute=SELECT 1"], "--execute"), (["-eSELECT 1"], "-e"),
                         (["--exec", "SELECT 1"], "--execute"), (["--tty"], "--tty")):
        proc = _run(["mcp", "127.0.0.1", "9", *option], tmp_path)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.startswith(f"cqlsh-ext mcp: {flag} is not an option here"), proc.stderr


def test_help_names_its_options_and_the_shells(tmp_path: Path) -> None:
    proc = _run(["mcp", "--help"], tmp_path)
    assert proc.returncode == 0
    for needle in ("--time-limit", "--max-bytes", "cqlsh-ext docs mcp", "connection options"):
        assert needle in proc.stdout, needle
    assert "cqlsh-ext mcp" in _run(["--help"], tmp_path).stdout


def test_the_usage_names_the_export_directory_within_80_columns(tmp_path: Path) -> None:
    # An assistant's `export` is offered only with --export-dir: the synopsis a user reads first names
    # it, and reads at 80 columns (it was one line of 150 without it).
    env = {**isolated_env(tmp_path), "COLUMNS": "80"}
    usage = subprocess.run([CQLSH_EXT, "mcp", "--help"], capture_output=True, text=True, timeout=60,
                           env=env).stdout.split("\n\n")[0]
    assert "[--export-dir DIR]" in usage, usage
    assert max(len(line) for line in usage.splitlines()) <= 80, usage


#: cqlsh-ext's entry point with the class the entry point installs for cqlsh's main() told on
#: stderr (stdout is the protocol's), and nothing run after it: its classes of ours, first to last,
#: and whether it has a loop of its own (ExtShell.server).
CLASS_TOLD = ("import json, os, sys\n"
              "from cqlsh_ext.upstream import seams\n"
              "def install(cqlshmain, cls):\n"
              "    ours = [f'{c.__module__}.{c.__name__}' for c in cls.__mro__\n"
              "            if c.__module__.startswith('cqlsh_ext')]\n"
              "    served = getattr(cls, 'server', None) is not None\n"
              "    print(json.dumps([ours, served]), file=sys.stderr, flush=True)\n"
              "    os._exit(0)\n"
              "seams.install_shell_class = install\n"
              "from cqlsh_ext.cli import main\n"
              "sys.exit(main(sys.argv[1:]))")


def test_the_served_shell_is_the_shell_s_one_class_with_a_loop_of_its_own(tmp_path: Path) -> None:
    # Issue 99 item 2: `cqlsh-ext mcp`'s shell is the shell's one class on cqlsh's (the run's class on
    # ExtShell), its loop handed to it (ExtShell.server), not a base of MCP's put on top of it.
    import json

    proc = _run(["mcp", "127.0.0.1", "9"], tmp_path, [sys.executable, "-c", CLASS_TOLD])
    assert proc.returncode == 0, proc.stderr
    told = next(line for line in proc.stderr.splitlines() if line.startswith("[["))
    ext_shell = "cqlsh_ext.shell.ext_shell.ExtShell"
    assert json.loads(told) == [[ext_shell, ext_shell], True]


def test_a_user_without_a_password_is_refused_in_one_line_before_connecting(tmp_path: Path) -> None:
    # cqlsh would ask for the password at the terminal (getpass): a server's stdin is the protocol.
    # Port 9 has nothing listening: the refusal comes before any connection is tried.
    proc = _run(["mcp", "127.0.0.1", "9", "-u", "alice"], tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1] == (
        "cqlsh-ext mcp: user 'alice' has no password: give it with -p, or in the credentials file "
        "([plain_text_auth] password = ...)"), proc.stderr
    assert "Connection error" not in proc.stderr and "Password" not in proc.stderr
