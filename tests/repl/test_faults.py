"""Faults on the way, in a real terminal: the server killed during a COMPRESSION STATS scan and
during a paged SELECT, the connection cut in the middle of a result, answers slower than the
request timeout. Each ends in one line (or a report that says what was read), a shell that still
works, and, once the server is back, the same shell reaching it again."""

from __future__ import annotations

import os
import random
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import cramjam
import devcassandra
import pytest
from cassandra.concurrent import execute_concurrent_with_args

from cqlsh_ext.demo.records import documents

from .conftest import write_credentials
from .proxy import SlowProxy
from .terminal import Term, printed

pytestmark = pytest.mark.server

ROWS = 600


def _fill(session, ks: str) -> None:  # type: ignore[no-untyped-def]
    """ROWS rows of snappy JSON of about 2-10 KB stored (noisy text: little to compress)."""
    session.execute(f"CREATE TABLE {ks}.t (id int PRIMARY KEY, data blob)")
    rng = random.Random(8)
    docs = [d.encode() for d in documents(40, seed=8)]
    rows = []
    for i in range(ROWS):
        noise = rng.randbytes(rng.randint(1000, 4000)).hex().encode()
        rows.append((i, bytes(cramjam.snappy.compress_raw(docs[i % len(docs)] + noise))))
    insert = session.prepare(f"INSERT INTO {ks}.t (id, data) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)


def _until_back(t: Term, statement: str, deadline_s: float = 90) -> str:
    """Run `statement` until it succeeds, as a person retrying would; its output."""
    deadline = time.monotonic() + deadline_s
    while True:
        out = t.run(statement, until=r"\(\d+ rows\)|NoHostAvailable[^\n]*\n|OperationTimedOut[^\n]*\n"
                                     r"|Error[^\n]*\n")
        if "rows)" in out:
            return out
        assert time.monotonic() < deadline, f"the shell did not get the server back: {out}"
        t.prompt()
        time.sleep(1)


# ------------------------------------------------------------------ a server of our own, killed


@pytest.fixture(scope="module")
def killable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[devcassandra.Instance, str]]:
    """A Cassandra of this module's own (with the fault handler, for slow pages): killing it must
    not disturb the shared one. Yields it and a faults_* keyspace holding table t."""
    from conftest import keyspace_filled, own_server

    directory = tmp_path_factory.mktemp("killed-cassandra") / "node"
    with own_server(directory, "cqlsh-ext fault test", timeout=180) as instance:
        ks = "faults_killed"
        keyspace_filled(instance, ks, _fill)
        yield instance, ks


def _kill(instance: devcassandra.Instance) -> None:
    pid = instance.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while instance.is_running() and time.monotonic() < deadline:
        time.sleep(0.1)


def _plan(instance: devcassandra.Instance):  # type: ignore[no-untyped-def]
    from conftest import fault_plan_file
    from fault_handler import FaultPlan

    return FaultPlan(fault_plan_file(instance.config.directory))


#: A STATS report is longer than the terminal: these tests read it whole, not through less (an empty
#: $PAGER turns paging off, as in psql; tests/repl/test_pager.py drives the pager itself).
NO_PAGER = {"PAGER": ""}


def test_server_killed_during_stats_and_during_a_paged_select(killable, tmp_path: Path):
    instance, ks = killable
    config = instance.config
    write_credentials(tmp_path, config.username or "", config.password or "")
    t = Term([config.host, str(config.native_port)], tmp_path, env=NO_PAGER)
    try:
        t.prompt()
        # 1. COMPRESSION STATS, pages slowed down so that the kill lands in the middle of the scan
        _plan(instance).set("delay", -1, 3000)
        t.type(f"COMPRESSION STATS SELECT data FROM {ks}.t;")
        t.enter()
        t.expect(r"COMPRESSION STATS [\w.]+: [1-9][\d,]* rows")  # the progress line: the first pages are in
        _kill(instance)
        t.expect(r"COMPRESSION STATS: ([\d,]+) rows in", timeout=120)
        report = t.since()
        t.prompt()
        assert "STOPPED BY AN ERROR:" in t.text[-6000:], t.text[-6000:]
        assert "retried with backoff:" in t.text[-6000:] and "connection lost" in t.text[-6000:]
        read = int(t.text[-6000:].split("COMPRESSION STATS: ")[-1].split(" rows")[0].replace(",", ""))
        assert 0 < read < ROWS, report

        # 2. back again: the same shell reaches the restarted server, and the scan completes
        _plan(instance).clear()
        instance.start(timeout=180, die_with_parent=True, move_internal_ports=True)
        _until_back(t, "SELECT cluster_name FROM system.local;")
        t.prompt()
        t.run(f"COMPRESSION STATS SELECT data FROM {ks}.t;", until=rf"COMPRESSION STATS: {ROWS:,} rows in")
        t.prompt()

        assert t.exit() == 0
    finally:
        t.close()
    # 3. a paged SELECT with cqlsh's own ---MORE--- (--classic; the prompt_toolkit front end pipes
    # long results into a pager instead): the first page shown, the server killed, the next asked for
    t = Term([config.host, str(config.native_port), "--classic"], tmp_path)
    try:
        t.prompt()
        t.run("PAGING 50;", until=r"Page size: 50")
        t.prompt()
        t.run(f"SELECT id FROM {ks}.t;", until=r"---MORE---")
        _kill(instance)
        start = len(t.text)
        # The next page is requested in the background while a page is read (paging.py): one
        # page that arrived before the kill may still be shown, then the one-line error.
        for _ in range(2):
            t.enter()
            if t.expect(r"(NoHostAvailable|Unable to complete|Connection)[^\n]*\n|---MORE---",
                        timeout=60).group(0) != "---MORE---":
                break
        else:
            raise AssertionError(f"more than one page after the kill:\n{t.text[start:]}")
        t.prompt(timeout=60)
        # What follows the last ---MORE--- (a page shown before it is not the error's output).
        lines = printed(t.text[start:].rsplit("---MORE---", 1)[-1])
        assert len(lines) == 1, t.text[start:]
        assert "Traceback" not in t.text
        instance.start(timeout=180, die_with_parent=True, move_internal_ports=True)
        _until_back(t, "SELECT count(*) FROM system.local;")
        assert t.exit() == 0
    finally:
        t.close()


# ------------------------------------------------------------------ the shared server, behind a proxy


@pytest.fixture(scope="module")
def cut_ks(cassandra) -> str:
    ks = cassandra.create_keyspace("faults_cut")  # faults_*: the test server's fault handler applies
    session = cassandra.session()
    _fill(session, ks)
    session.shutdown()
    return ks


def test_connection_cut_mid_result(cassandra, cut_ks, tmp_path: Path):
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with SlowProxy(cassandra.host, cassandra.port) as proxy:
        # The driver meets a connection closed under a request as a request timeout (cut short here)
        t = Term([cassandra.host, str(proxy.port), "--request-timeout", "5"], tmp_path, env=NO_PAGER)
        try:
            t.prompt()
            # STATS: the page that was cut is asked for again on a new connection; nothing is lost
            proxy.cut_after(200_000)
            out = t.run(f"COMPRESSION STATS SELECT data FROM {cut_ks}.t;",
                        until=r"largest row[^\n]*\n", timeout=120)
            assert proxy.cuts == 1
            assert f"COMPRESSION STATS: {ROWS:,} rows in" in out, out
            retried = next(line for line in out.splitlines() if "retried with backoff:" in line)
            assert "connection lost" in retried or "client timeout" in retried, out[-2500:]
            assert "STOPPED" not in out
            t.prompt()
            # a plain SELECT: one line, and the shell goes on
            proxy.cut_after(150_000)
            start = len(t.text)
            t.run("PAGING OFF;", until=r"PAGING set to OFF")
            t.prompt()
            t.type(f"SELECT data FROM {cut_ks}.t;")
            t.enter()
            t.expect(r"(OperationTimedOut|NoHostAvailable|Connection)[^\n]*\n", timeout=60)
            t.prompt(timeout=60)
            lines = printed(t.text[start:].split("PAGING OFF;", 1)[-1].split(f"{cut_ks}.t;", 1)[-1])
            assert len(lines) == 1, t.text[start:]
            assert "Traceback" not in t.text
            _until_back(t, f"SELECT count(*) FROM {cut_ks}.t;")
            assert t.exit() == 0
        finally:
            t.close()


def test_answers_slower_than_the_request_timeout(cassandra, cut_ks, tmp_path: Path):
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with SlowProxy(cassandra.host, cassandra.port) as proxy:
        t = Term([cassandra.host, str(proxy.port), "--request-timeout", "2"], tmp_path, env=NO_PAGER)
        try:
            t.prompt()
            proxy.hold()
            start = len(t.text)
            t.type(f"SELECT id FROM {cut_ks}.t WHERE id = 1;")
            t.enter()
            assert proxy.has_held(10)
            t.expect(r"OperationTimedOut[^\n]*\n", timeout=30)
            t.prompt()
            lines = printed(t.text[start:].split(f"{cut_ks}.t WHERE id = 1;", 1)[-1])
            assert len(lines) == 1 and "2" in lines[0], lines
            proxy.release()
            _until_back(t, f"SELECT id FROM {cut_ks}.t WHERE id = 1;")
            t.prompt()
            # STATS, on a node slow to answer (the server's fault handler holds the first page of the
            # scan 3 s, past the 2 s timeout): the page is asked for again and the scan completes
            cassandra.faults.set("delay", 1, 3000)
            try:
                out = t.run(f"COMPRESSION STATS SELECT data FROM {cut_ks}.t;", until=r"largest row[^\n]*\n",
                            timeout=120)
            finally:
                cassandra.faults.clear()
            assert f"COMPRESSION STATS: {ROWS:,} rows in" in out
            assert "retried with backoff: 1 x client timeout" in out and "STOPPED" not in out, out[-3000:]
            assert t.exit() == 0
        finally:
            t.close()


@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (140, 45)])
def test_the_progress_line_fits_the_terminal(cassandra, cut_ks, tmp_path: Path, cols, rows):
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    t = Term([cassandra.host, str(cassandra.port)], tmp_path, rows=rows, cols=cols)
    try:
        t.prompt()
        cassandra.faults.set("delay", -1, 1500)  # every page late: the scan stays under way
        t.type(f"COMPRESSION STATS SELECT data FROM {cut_ks}.t;")
        t.enter()
        t.expect(r"rows/s[^\n]*Ctrl-C", timeout=60)
        screen = t.display()
        at = next(i for i, row in enumerate(screen) if "rows/s" in row)
        line = screen[at]
        # One row, whole: the table, the figures and how to stop, nothing cut or wrapped onto the
        # next row (where the command's name does not fit beside them, the table keeps its place).
        assert re.search(rf"^(COMPRESSION STATS )?{cut_ks}\.t: [\d,]+ rows, [\d,]+ rows/s, \d+ s", line), line
        assert line.endswith(("(Ctrl-C stops and reports)", "(Ctrl-C: stop)")), line
        assert len(line) < cols and not screen[at + 1].strip(), screen[at:at + 2]
        t.ctrl("c")
        cassandra.faults.clear()
        t.expect(r"INTERRUPTED", timeout=120)
        t.prompt()
        assert t.exit() == 0
    finally:
        cassandra.faults.clear()
        t.close()
