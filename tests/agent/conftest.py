"""Fixtures of the agent door's tests against the real Cassandra: the demo keyspace (`cqlsh-ext demo
load`, as a user loads it), a table of numbered rows whose every row an oracle knows, and a table in
a `faults_*` keyspace whose every page the test server answers late (tests/fault_handler.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_runner import load_demo

#: Rows in the numbered table: several pages at the shell's page size (100).
ROWS = 250
#: How late each page of the slow table is (ms): longer than any --timeout the tests give.
SLOW_MS = 3000


def _write(session, insert, values: tuple[object, ...]) -> None:  # type: ignore[no-untyped-def]
    """One row of a fixture's table written, again after a write timeout: the INSERT is idempotent,
    and a loaded test machine (the Docker tests' server beside these) once timed one out, which
    failed the session's fixture and every test of the slow table with it."""
    from cassandra import OperationTimedOut, WriteTimeout

    for attempt in range(5):
        try:
            session.execute(insert, values, timeout=60)
            return
        except (WriteTimeout, OperationTimedOut):
            if attempt == 4:
                raise


@pytest.fixture(scope="session")
def demo_keyspace(cassandra, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[no-untyped-def]
    """The demo keyspace, loaded by `cqlsh-ext demo load` (200 documents per JSON table, as
    docs/agents.md's session says)."""
    name = f"agent_demo_{os.getpid()}"
    load_demo(cassandra, name, 200, tmp_path_factory.mktemp("demo-home"))
    return name


@pytest.fixture(scope="session")
def numbered(cassandra) -> str:  # type: ignore[no-untyped-def]
    """keyspace.table `numbered`: one partition of ROWS rows (n int clustering, 0..ROWS-1), each a
    gzip-compressed JSON document {"n": n, "word": ...}, so the rows come in n's order."""
    import gzip
    import json

    ks = cassandra.create_keyspace("agent")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE numbered (p int, n int, data blob, PRIMARY KEY (p, n))")
    insert = session.prepare("INSERT INTO numbered (p, n, data) VALUES (0, ?, ?)")
    for n in range(ROWS):
        _write(session, insert, (n, gzip.compress(json.dumps({"n": n, "word": f"w{n}"}).encode())))
    session.shutdown()
    return f"{ks}.numbered"


@pytest.fixture(scope="session")
def slow_rows(cassandra) -> str:  # type: ignore[no-untyped-def]
    """keyspace.table of 50 rows (a text and a gzip-compressed JSON blob) in a faults_* keyspace."""
    import gzip

    ks = cassandra.create_keyspace("faults_agent")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE rows_slow (p int, n int, v text, data blob, PRIMARY KEY (p, n))")
    insert = session.prepare("INSERT INTO rows_slow (p, n, v, data) VALUES (0, ?, ?, ?)")
    for n in range(50):
        _write(session, insert, (n, f"v{n}", gzip.compress(b'{"n": %d}' % n)))
    session.shutdown()
    return f"{ks}.rows_slow"


#: Rows of the late table: more than a scan's first page (scanning.scan.FIRST_PAGE, 100).
LATE_ROWS = 160


@pytest.fixture(scope="session")
def late_rows(cassandra, slow_rows: str) -> str:  # type: ignore[no-untyped-def]
    """keyspace.table `late_rows` beside slow_rows, LATE_ROWS rows (n, a gzip-compressed JSON blob
    {"n": n}) over 4 partitions: a whole-table scan's first page does not hold them all, so the
    test server can answer its first page at once and the others late (tests/fault_handler.py)."""
    import gzip

    from cassandra.concurrent import execute_concurrent_with_args

    ks = slow_rows.split(".")[0]
    session = cassandra.session(ks)
    session.execute("CREATE TABLE late_rows (p int, n int, data blob, PRIMARY KEY (p, n))")
    insert = session.prepare("INSERT INTO late_rows (p, n, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, [(n % 4, n, gzip.compress(b'{"n": %d}' % n))
                                                   for n in range(LATE_ROWS)], concurrency=16,
                                 raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.late_rows"


@pytest.fixture
def slow_table(cassandra, slow_rows: str) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """slow_rows, every page of which the server answers SLOW_MS late while the test runs."""
    cassandra.faults.set("delay", -1, SLOW_MS, table="rows_slow")
    try:
        yield slow_rows
    finally:
        cassandra.faults.clear()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def connected_home(cassandra, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A HOME whose cqlshrc names the test server and whose credentials file logs in, so a command
    runs exactly as a skill or a page writes it (no host, port or password on it)."""
    directory = tmp_path / ".cassandra"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cqlshrc").write_text(f"[connection]\nhostname = {cassandra.host}\n"
                                       f"port = {cassandra.port}\n")
    credentials = directory / "credentials"
    credentials.write_text(f"[plain_text_auth]\nusername = {cassandra.username}\n"
                           f"password = {cassandra.password}\n")
    credentials.chmod(0o600)
    return tmp_path
