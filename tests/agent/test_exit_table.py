"""docs/agents.md's table of exit codes, checked case by case: each row read from the page, each
code produced for real by the real binary against the real server (a refusal, a slow scan past
--timeout, a bug put in from outside, Ctrl-C while connecting and while rows are written, a
standard output closed), its --stats naming the same exit where the run writes them. A code the
page lists with no case here, or a case whose run exits otherwise, fails the test."""

from __future__ import annotations

import array
import base64
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import termios
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, ext, isolated_env, run, said_lines
from waiting import wait_until

AGENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
#: A row of the wide table holds this many characters: a page of it is far more than a pipe holds.
WIDE = 2000
WIDE_ROWS = 300


def documented_exits() -> list[tuple[int, str]]:
    """The (code, name) rows of docs/agents.md's "Exit codes" table."""
    section = AGENTS_DOC.read_text().split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return [(int(code), name) for code, name in re.findall(r"^\| (\d+) \| (\w+) \|", section, re.MULTILINE)]


def stats_of(stderr: str) -> dict[str, object]:
    """The --stats object: standard error's last line."""
    stats = json.loads(said_lines(stderr)[-1])
    assert stats["type"] == "stats", stderr
    return stats


@pytest.fixture(scope="module")
def wide(cassandra) -> str:  # type: ignore[no-untyped-def]
    """keyspace.table of WIDE_ROWS rows of WIDE characters each, in n's order."""
    ks = cassandra.create_keyspace("exit_table")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE wide (p int, n int, v text, PRIMARY KEY (p, n))")
    insert = session.prepare("INSERT INTO wide (p, n, v) VALUES (0, ?, ?)")
    for n in range(WIDE_ROWS):
        session.execute(insert, (n, "x" * WIDE))
    session.shutdown()
    return f"{ks}.wide"


class Silent:
    """A server that takes connections and never answers: a client connecting to it waits."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            while True:
                conn, _ = self.sock.accept()
                self._held.append(conn)
                self.accepted.set()
        except OSError:  # closed
            return

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    try:
        yield server
    finally:
        server.close()


def _pending(pipe: int) -> int:
    """The bytes a pipe holds, not yet read."""
    held = array.array("i", [0])
    fcntl.ioctl(pipe, termios.FIONREAD, held)
    return held[0]


def test_every_exit_code_of_the_table_for_real(cassandra, home: Path, numbered: str, slow_table: str,
                                               wide: str, silent: Silent) -> None:
    def ok() -> tuple[int, dict[str, object] | None]:
        result = ext(cassandra, home, "--stats", "-e", f"SELECT n FROM {numbered} WHERE p = 0 AND n = 1")
        return result.returncode, stats_of(result.stderr)

    def connection() -> tuple[int, dict[str, object] | None]:
        with socket.socket() as closed:  # bound, never listened: nobody answers
            closed.bind(("127.0.0.1", 0))
            result = run(CQLSH_EXT, ["127.0.0.1", str(closed.getsockname()[1]), "--connect-timeout", "5",
                                     "--stats", "-e", "SELECT 1"], home)
        assert "Connection error" in result.stderr
        return result.returncode, stats_of(result.stderr)

    def statement() -> tuple[int, dict[str, object] | None]:
        result = ext(cassandra, home, "--stats", "-e", f"SELECT nosuch FROM {numbered}")
        assert "Undefined column name nosuch" in result.stderr
        # A --resume token nested past Python's depth is a usage error (one JSON line), no crash.
        nested = base64.urlsafe_b64encode(b"[" * 20_000).decode()
        usage = run(CQLSH_EXT, ["--output-format", "json", "--resume", nested, "-e", "SELECT 1"], home)
        assert usage.returncode == 2, usage.stderr
        (said,) = said_lines(usage.stderr)
        assert json.loads(said)["kind"] == "usage" and "--resume: not a token" in said
        return result.returncode, stats_of(result.stderr)

    def refused() -> tuple[int, dict[str, object] | None]:
        result = ext(cassandra, home, "--read-only", "--stats", "-e",
                     f"INSERT INTO {numbered} (p, n) VALUES (0, 9999)")
        return result.returncode, stats_of(result.stderr)

    def timed_out() -> tuple[int, dict[str, object] | None]:
        result = ext(cassandra, home, "--timeout", "1", "--stats", "-e", f"SELECT n, v FROM {slow_table}")
        stopped = [line for line in said_lines(result.stderr) if line.startswith("timed out")]
        # Every page is late: no row was printed, and the line does not say one was.
        assert stopped == ["timed out: the statement was stopped at --timeout 1 s; no row of its answer "
                           "was printed"], result.stderr
        return result.returncode, stats_of(result.stderr)

    def internal() -> tuple[int, dict[str, object] | None]:
        forced = home / "forced"
        forced.mkdir(exist_ok=True)
        (forced / "sitecustomize.py").write_text(
            "import cqlsh_ext.payload_select.command as command\n"
            "def run(*args, **kwargs):\n"
            "    raise TypeError('a bug the test put in')\n"
            "command.run = run\n")
        result = ext(cassandra, home, "--stats", "-e", f"SELECT n, data.word FROM {numbered} LIMIT 2",
                     env={"PYTHONPATH": str(forced)})
        assert any(line.startswith("internal error") for line in said_lines(result.stderr)), result.stderr
        return result.returncode, stats_of(result.stderr)

    def interrupted() -> tuple[int, dict[str, object] | None]:
        # Ctrl-C while connecting: the server took the connection and never answers.
        child = subprocess.Popen([CQLSH_EXT, "127.0.0.1", str(silent.port), "--connect-timeout", "60",
                                  "--stats", "--output-format", "json", "-e", "SELECT 1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=isolated_env(home))
        wait_until(silent.accepted.is_set, "the connection taken", process=child)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 130, err
        said = [json.loads(line) for line in said_lines(err)]
        assert said[0]["kind"] == "interrupted" and said[-1]["exit"] == {"code": 130, "name": "interrupted"}
        # Ctrl-C while rows are written to a reader that has not read them: --stats counts exactly
        # the rows that reached it (a page read is not a page printed).
        child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "--stats", "--output-format", "json",
                                  "-e", f"SELECT n, v FROM {wide}"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=isolated_env(home))
        assert child.stdout is not None
        room = fcntl.fcntl(child.stdout.fileno(), fcntl.F_GETPIPE_SZ)
        wait_until(lambda: _pending(child.stdout.fileno()) >= room - 8192, "the pipe full", process=child)
        child.send_signal(signal.SIGINT)
        out, err_bytes = child.communicate(timeout=120)
        printed = [json.loads(line) for line in out.decode().splitlines()]
        assert 0 < len(printed) < WIDE_ROWS and [row["n"] for row in printed] == list(range(len(printed)))
        stats = stats_of(err_bytes.decode())
        assert stats["rows"] == len(printed), (stats, len(printed))
        return child.returncode, stats

    def output_closed() -> tuple[int, dict[str, object] | None]:
        # The reader gone after a line (`| head -1`), and an output closed from the start (`>&-`).
        child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "--output-format", "json", "-e",
                                  f"SELECT n, v FROM {wide}"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=isolated_env(home))
        assert child.stdout is not None and child.stderr is not None
        child.stdout.readline()
        child.stdout.close()
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) == 141, err
        assert "Traceback" not in err
        closed = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-e", f"SELECT n FROM {numbered} LIMIT 1"],
                                stderr=subprocess.PIPE, text=True, env=isolated_env(home),
                                preexec_fn=lambda: os.close(1), timeout=120)
        assert "Traceback" not in closed.stderr and "internal error" not in closed.stderr, closed.stderr
        assert said_lines(closed.stderr) == [], closed.stderr
        return closed.returncode, None

    cases: dict[str, Callable[[], tuple[int, dict[str, object] | None]]] = {
        "ok": ok, "connection": connection, "statement": statement, "refused": refused,
        "timed_out": timed_out, "internal": internal, "interrupted": interrupted,
        "output_closed": output_closed}
    table = documented_exits()
    assert {name for _, name in table} == set(cases), "a code of docs/agents.md's table without a case here"
    for code, name in table:
        exited, stats = cases[name]()
        assert exited == code, f"{name}: exit {exited}, the table says {code}"
        if stats is not None:
            assert stats["exit"] == {"code": code, "name": name}, (name, stats)


def test_a_payload_group_by_past_its_timeout_says_it_timed_out(cassandra, home: Path, slow_rows: str) -> None:
    # Its first page comes, the others late by far more than the limit: the limit ends the reading.
    cassandra.faults.set("delay", -1, 3000, after=1, table="rows_slow")
    try:
        result = ext(cassandra, home, "--timeout", "2", "--stats", "-e",
                     f"SELECT data.n, count(*) FROM {slow_rows} GROUP BY data.n ALLOW FILTERING")
    finally:
        cassandra.faults.clear()
    assert result.returncode == 4, result.stderr
    said = said_lines(result.stderr)
    assert not any("Ctrl-C" in line for line in said), said
    closing = next(line for line in said if line.startswith("payload query:"))
    assert closing.endswith("timed out (--timeout 2 s): the answer covers the rows read"), closing
    printed = stats_of(result.stderr)["rows"]
    assert printed == len([line for line in result.stdout.splitlines() if line.strip().split("|")[0].strip()
                           .isdigit()]), result.stdout
    stopped = next(line for line in said if line.startswith("timed out:"))
    assert stopped.endswith("what it read before is printed above" if printed else
                            "no row of its answer was printed"), (stopped, result.stdout)
