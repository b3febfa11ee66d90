"""A payload query's scan under throttling, a server error that does not go away, and Ctrl-C:
retried where retrying helps, and otherwise the rows found so far are kept and the closing line
says how far the scan got."""

from __future__ import annotations

import json
import re
import signal

import pexpect
import pytest
from orders import rows, write_table
from shell_runner import CQLSH_EXT, isolated_env, said_text

from .conftest import shell

COUNT = 400


@pytest.fixture(scope="module")
def faults_orders(cassandra):
    ks = cassandra.create_keyspace("faults_pq")  # faults_*: the server's fault handler applies
    session = cassandra.session(ks)
    data = rows(COUNT, partitions=COUNT)
    write_table(session, data)
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
    [closing] = [line for line in said_text(out.stderr) if line.startswith("payload query:")]
    assert f"{COUNT:,} rows read" in closing and "stopped" not in closing, out.stderr


def test_an_error_that_stays_ends_the_scan_with_the_rows_found(cassandra, faults_orders, home):
    table, data = faults_orders
    cassandra.faults.set("overloaded", -1, after=2)  # two pages, then overloaded for good
    try:
        out = shell(cassandra, home, f"SELECT ck FROM {table} WHERE data.status = 'PAID' ALLOW FILTERING",
                    "--output-format", "json")
    finally:
        cassandra.faults.clear()
    closing = [line for line in said_text(out.stderr) if line.startswith("payload query:")]
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


def _through_proxy(cassandra, proxy, home, statement: str) -> pexpect.spawn:
    args = [cassandra.host, str(proxy.port), "-u", cassandra.username, "-p", cassandra.password,
            "--request-timeout", "3", "-e", statement]
    return pexpect.spawn(CQLSH_EXT, args, env=isolated_env(home), encoding="utf-8", timeout=180,
                         dimensions=(40, 160))


def test_a_connection_cut_mid_scan_is_retried_and_a_dead_server_ends_it(cassandra, faults_orders, home):
    from tests.repl.proxy import SlowProxy

    table, data = faults_orders
    statement = f"SELECT ck FROM {table} WHERE data.status = 'PAID' ALLOW FILTERING"
    paid = len(_truth(data, "PAID"))
    cassandra.faults.set("delay", -1, 300)  # slow pages: the scan is still running when it is cut
    try:
        with SlowProxy(cassandra.host, cassandra.port) as proxy:
            child = _through_proxy(cassandra, proxy, home, statement)
            child.expect(r"[1-9][0-9,]* rows, ")  # the progress line: the scan is under way
            proxy.cut_after(1)  # the connection carrying the next answer drops; new ones are served
            child.expect(pexpect.EOF)
            out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before)
            assert proxy.cuts == 1
            closing = next(line for line in out.splitlines() if line.startswith("payload query:"))
            assert f"{COUNT:,} rows read, {paid:,} matched" in closing and "stopped" not in closing, out
            child = _through_proxy(cassandra, proxy, home, statement)
            child.expect(r"[1-9][0-9,]* rows, ")
            proxy.close()  # the server is gone for good
            child.expect(pexpect.EOF)
            out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before)
    finally:
        cassandra.faults.clear()
    closing = next(line for line in out.splitlines() if line.startswith("payload query:"))
    assert "stopped by an error" in closing, out[-2000:]
    assert "Traceback" not in out
    read = int(closing.split(": ", 1)[1].split(" rows read")[0].replace(",", ""))
    assert 0 < read < COUNT
