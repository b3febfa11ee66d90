"""Every exit code of cqlsh-ext's table (cqlsh_ext.common.exits), each produced by a real failure of
the real binary against the real server: cqlsh's own kept (a statement's error 2, a connection's 1),
and those cqlsh has none of: a read-only refusal (3), a statement past --timeout on a slow scan (4),
a forced internal error (70, its crash report written), Ctrl-C (130). The code is what a program
running the shell reads; each test also checks what the user reads on standard error."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from shell_runner import CQLSH_EXT, ext, isolated_env, run, said_lines
from waiting import wait_until


def test_a_statement_that_fails_exits_2_as_cqlsh_does(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "-e", f"SELECT nosuch FROM {numbered}")
    assert result.returncode == 2
    assert "Undefined column name nosuch" in result.stderr


def test_history_in_a_script_is_one_line_and_exit_2_never_a_crash(cassandra, home: Path) -> None:
    """HISTORY lists what was typed at the prompt: a script's run keeps no history. Stock cqlsh
    6.2 prints Python's AttributeError there (readline is None) and exits 2; cqlsh-ext says why in
    one line, exits 2, writes no crash report, and runs the next statement."""
    result = ext(cassandra, home, "-e", "HISTORY; SELECT release_version FROM system.local")
    assert result.returncode == 2, result.stderr
    assert said_lines(result.stderr) == [
        "HISTORY lists the statements typed at the prompt: a run of -e, -f or piped input has none"]
    assert "(1 rows)" in result.stdout
    assert not (home / ".cassandra" / "crashes").exists()


def test_no_connection_exits_1_as_cqlsh_does(home: Path) -> None:
    import socket

    with socket.socket() as closed:  # a port nobody listens on: bound, never listened
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        result = run(CQLSH_EXT, ["127.0.0.1", str(port), "--connect-timeout", "5", "-e", "SELECT 1"], home)
    assert result.returncode == 1
    assert "Connection error" in result.stderr


def test_a_write_under_read_only_is_refused_before_it_runs_exit_3(cassandra, home: Path,
                                                                  numbered: str) -> None:
    result = ext(cassandra, home, "--read-only", "-e", f"INSERT INTO {numbered} (p, n) VALUES (0, 9999)")
    assert result.returncode == 3
    lines = said_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("refused: cqlsh-ext --read-only runs reads only"), lines
    session = cassandra.session()
    try:  # nothing was written: the server never saw it
        keyspace, table = numbered.split(".")
        assert not list(session.execute(f"SELECT n FROM {keyspace}.{table} WHERE p = 0 AND n = 9999"))
    finally:
        session.shutdown()


def test_a_statement_past_its_timeout_on_a_slow_scan_exits_4(cassandra, home: Path, slow_table: str) -> None:
    # Every page of the table is late by far more than the time limit: the limit, never the
    # machine's speed, ends the statement.
    result = ext(cassandra, home, "--timeout", "1", "-e", f"SELECT n, v FROM {slow_table}")
    assert result.returncode == 4, result.stderr
    assert any(line.startswith("timed out: the statement was stopped at --timeout 1 s")
               for line in said_lines(result.stderr)), result.stderr


def test_a_payload_query_past_its_timeout_exits_4_and_says_what_it_read(cassandra, home: Path,
                                                                         slow_table: str) -> None:
    # cqlsh-ext's own reading (a path inside the blob): stopped as a first Ctrl-C stops it.
    result = ext(cassandra, home, "--timeout", "1", "-e", f"SELECT n, data.n FROM {slow_table}")
    assert result.returncode == 4, result.stderr
    assert "timed out: the statement was stopped at --timeout 1 s" in result.stderr


def test_the_run_goes_on_after_a_statement_that_timed_out(cassandra, home: Path, slow_table: str,
                                                          numbered: str) -> None:
    result = ext(cassandra, home, "--timeout", "1", "--output-format", "json", "-e",
                 f"SELECT n FROM {slow_table}; SELECT n FROM {numbered} WHERE p = 0 AND n = 7")
    assert result.returncode == 4
    assert json.loads(result.stdout.splitlines()[-1]) == {"n": 7}


def test_ctrl_c_during_a_slow_scan_exits_130(cassandra, home: Path, slow_table: str) -> None:
    child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-e", f"SELECT n, v FROM {slow_table}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=isolated_env(home))
    # Pressed once the statement waits on the server: its first page is being held back.
    wait_until(lambda: cassandra.faults.met().pages >= 1, "the scan's first page asked for", process=child)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err
    assert "Traceback" not in err


def test_a_forced_internal_error_exits_70_and_names_its_crash_report(cassandra, home: Path,
                                                                     numbered: str) -> None:
    # A bug put into the real binary from outside (a sitecustomize on PYTHONPATH): the payload
    # query's run raises a TypeError, as a bug of ours would.
    forced = home / "forced"
    forced.mkdir()
    (forced / "sitecustomize.py").write_text(
        "import cqlsh_ext.payload_select.command as command\n"
        "def run(*args, **kwargs):\n"
        "    raise TypeError('a bug the test put in')\n"
        "command.run = run\n")
    result = ext(cassandra, home, "-e", f"SELECT n, data.word FROM {numbered} LIMIT 2",
                 env={"PYTHONPATH": str(forced)})
    assert result.returncode == 70, result.stderr
    line = next(line for line in said_lines(result.stderr) if line.startswith("internal error"))
    assert "TypeError: a bug the test put in" in line
    report = Path(line.split("a crash report: ", 1)[1].split(": please report it")[0])
    assert report.parent == home / ".cassandra" / "crashes"
    assert report.stat().st_mode & 0o777 == 0o600
    text = report.read_text()
    assert "TypeError: a bug the test put in" in text and "Traceback" in text
    assert "a statement starting with SELECT" in text
    assert cassandra.password not in text  # -p on the command line: never written down


def test_a_bug_outside_any_statement_exits_70_too(home: Path) -> None:
    forced = home / "forced"
    forced.mkdir()
    (forced / "sitecustomize.py").write_text(
        "import cqlsh_ext.cli as cli\n"
        "def broken(*args, **kwargs):\n"
        "    raise AttributeError('a bug at the start')\n"
        "cli._ext_parser = broken\n")
    result = run(CQLSH_EXT, ["-e", "SELECT 1"], home, env={"PYTHONPATH": str(forced)})
    assert result.returncode == 70
    assert "internal error (AttributeError: a bug at the start); a crash report: " in result.stderr
    assert "Traceback" not in result.stderr


def test_the_exit_codes_are_in_help_and_the_man_page(home: Path) -> None:
    from cqlsh_ext.common.exits import EXITS

    shown = run(CQLSH_EXT, ["--help"], home).stdout
    page = (Path(__file__).resolve().parents[2] / "man" / "cqlsh-ext.1").read_text()
    for code in EXITS:
        assert f"  {code.code:<4} {code.name}" in shown, code
        assert f"{code.code:<4} {code.name}" in page, code
