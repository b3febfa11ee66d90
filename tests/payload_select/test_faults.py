"""A payload query's scan under throttling, a server error that does not go away, and Ctrl-C:
retried where retrying helps, and otherwise the rows found so far are kept and the closing line
says how far the scan got."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pexpect
import pytest
from orders import SCHEMA_CQL, rows
from shell_runner import CQLSH_EXT, isolated_env

from .conftest import shell

COUNT = 400


@pytest.fixture(scope="module")
def faults_orders(cassandra):
    ks = cassandra.create_keyspace("faults_pq")  # faults_*: the server's fault handler applies
    session = cassandra.session(ks)
    session.execute(f"CREATE TABLE orders {SCHEMA_CQL}")
    insert = session.prepare("INSERT INTO orders (pk, ck, data) VALUES (?, ?, ?)")
    data = rows(COUNT, partitions=COUNT)
    for row, _doc in data:
        session.execute(insert, (row["pk"], row["ck"], row["data"]))
    session.shutdown()
    cassandra.faults.clear()
    yield f"{ks}.orders", data
    cassandra.faults.clear()


def _truth(data, status: str) -> set[int]:
    return {row["ck"] for row, doc in data if doc is not None and doc.get("status") == status}


def test_throttling_is_retried_and_nothing_is_lost(cassandra, faults_orders, home):
    table, data = faults_orders
    cassandra.faults.set("throttled", 3)
    try:
        out = shell(cassandra, home, f"SELECT ck FROM {table} WHERE data.status = 'PAID' ALLOW FILTERING",
                    "--output-format", "json")
    finally:
        cassandra.faults.clear()
    assert out.returncode == 0, out.stderr
    assert {json.loads(line)["ck"] for line in out.stdout.splitlines()} == _truth(data, "PAID")
    assert f"{COUNT:,} rows read" in out.stderr and "stopped" not in out.stderr


def test_an_error_that_stays_ends_the_scan_with_the_rows_found(cassandra, faults_orders, home):
    table, data = faults_orders
    cassandra.faults.set("overloaded", -1, after=2)  # two pages, then overloaded for good
    try:
        out = shell(cassandra, home, f"SELECT ck FROM {table} WHERE data.status = 'PAID' ALLOW FILTERING",
                    "--output-format", "json")
    finally:
        cassandra.faults.clear()
    closing = [line for line in out.stderr.splitlines() if line.startswith("payload query:")]
    assert len(closing) == 1 and "stopped by an error: OverloadedErrorMessage" in closing[0], out.stderr
    read = int(closing[0].split(": ", 1)[1].split(" rows read")[0].replace(",", ""))
    found = {json.loads(line)["ck"] for line in out.stdout.splitlines()}
    assert 0 < read < COUNT and found <= _truth(data, "PAID")  # what was found is kept, and true


def test_ctrl_c_keeps_the_rows_printed_and_says_how_far(cassandra, faults_orders, home):
    table, data = faults_orders
    cassandra.faults.set("delay", -1, 300)  # every page late: the scan takes seconds
    try:
        child = pexpect.spawn(CQLSH_EXT, [*cassandra.cqlsh_args, "-e",
                                          f"SELECT ck, data.status FROM {table} WHERE data.status IN "
                                          f"('PAID', 'NEW') ALLOW FILTERING"],
                              env=isolated_env(home), encoding="utf-8", timeout=120, dimensions=(40, 160))
        child.expect(r"[1-9][0-9,]* rows, ")  # the progress line on the terminal: rows are coming
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF)
        out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before)  # colours
        child.close()
    finally:
        cassandra.faults.clear()
    assert "interrupted (Ctrl-C)" in out, out[-2000:]
    assert "Traceback" not in out
    closing = next(line for line in out.splitlines() if line.startswith("payload query:"))
    read = int(closing.split(": ", 1)[1].split(" rows read")[0].replace(",", ""))
    matched = int(closing.split(" rows read, ", 1)[1].split(" matched")[0].replace(",", ""))
    assert 0 < read < COUNT
    # every row found before Ctrl-C was printed as it was found, and stays on the screen
    shown = re.findall(r"^\s*(\d+) \|\s+(?:PAID|NEW)\s*$", out, re.MULTILINE)
    assert len(shown) == matched, repr(out[-3000:])
    assert {int(ck) for ck in shown} <= _truth(data, "PAID") | _truth(data, "NEW")


def test_a_connection_cut_mid_scan_is_retried_and_a_dead_server_ends_it(cassandra, faults_orders, home):
    from tests.repl.proxy import SlowProxy

    table, data = faults_orders
    statement = f"SELECT ck FROM {table} WHERE data.status = 'PAID' ALLOW FILTERING"
    with SlowProxy(cassandra.host, cassandra.port) as proxy:
        args = [cassandra.host, str(proxy.port), "-u", cassandra.username, "-p", cassandra.password,
                "--request-timeout", "3", "--output-format", "json", "-e", statement]
        proxy.cut_after(40_000)  # a dropped connection in the middle of the scan: a new one serves
        out = subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, timeout=180,
                             env=isolated_env(home))
        assert proxy.cuts == 1
        assert {json.loads(line)["ck"] for line in out.stdout.splitlines()} == _truth(data, "PAID")
        assert "stopped" not in out.stderr and f"{COUNT:,} rows read" in out.stderr, out.stderr
        cassandra.faults.set("delay", -1, 300)  # slow pages: the server dies while the scan runs
        try:
            proc = subprocess.Popen([CQLSH_EXT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=isolated_env(home))
            proxy.cut_after(40_000)  # the event that says the scan is under way
            deadline = time.monotonic() + 60
            while proxy.cuts < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            proxy.close()  # nothing answers any more
            stdout, stderr = proc.communicate(timeout=180)
        finally:
            cassandra.faults.clear()
    closing = [line for line in stderr.splitlines() if line.startswith("payload query:")]
    assert len(closing) == 1 and "stopped by an error" in closing[0], stderr
    assert "Traceback" not in stderr
    assert {json.loads(line)["ck"] for line in stdout.splitlines()} <= _truth(data, "PAID")
