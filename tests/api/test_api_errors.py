"""Every failure of the driver or the server reaches a program as one cqlsh_ext.Error line that
names the host and port or the cause, never the driver's repr of its dicts: a host nobody listens
on, a read timeout and an Unavailable (the test server's fault plan, tests/fault_handler.py), a
client-side timeout."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import devcassandra
import pytest

import cqlsh_ext

pytestmark = pytest.mark.server

#: Rows of the faults_* table: several pages of PAGE rows.
ROWS = 300
PAGE = 50


def _driver_repr(text: str) -> bool:
    """Whether a line holds the driver's repr of its dicts (`{'127.0.0.1:9': ...}`, `info={...}`,
    `errors={...}`, `<Host: ...>`)."""
    return "{" in text or "<Host" in text or "errors=" in text or "last_host=" in text


def _fill(session: Any, ks: str) -> set[tuple[int, int]]:
    session.execute(f"CREATE TABLE {ks}.t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare(f"INSERT INTO {ks}.t (pk, ck, data) VALUES (?, ?, ?)")
    keys = {(k % 5, k) for k in range(ROWS)}
    for pk, ck in keys:
        session.execute(insert, (pk, ck, b'{"status": "PAID", "n": %d}' % ck))
    return keys


@pytest.fixture(scope="module")
def faulty(cassandra) -> tuple[str, set[tuple[int, int]]]:
    """A faults_* keyspace (the fault plan's) holding table t, and its rows' keys."""
    ks = cassandra.create_keyspace("faults_api")
    session = cassandra.session()
    try:
        return ks, _fill(session, ks)
    finally:
        session.shutdown()


@pytest.fixture
def plan(cassandra) -> Iterator[Any]:
    try:
        yield cassandra.faults
    finally:
        cassandra.faults.clear()


def test_a_host_nobody_listens_on_is_named(cqlshrc: str):
    (port,) = devcassandra.free_ports(1)  # nobody listens there
    with pytest.raises(cqlsh_ext.Error) as refused:
        cqlsh_ext.connect("127.0.0.1", port, cqlshrc=cqlshrc)
    text = str(refused.value)
    assert text.startswith(f"Connection error: nothing listens on 127.0.0.1:{port}: check the host and port")
    assert "\n" not in text and not _driver_repr(text), text


def test_server_errors_are_one_line_naming_the_cause(db, faulty, plan):
    ks, keys = faulty
    statement = f"SELECT pk, ck FROM {ks}.t"
    plan.set("read_timeout", -1)
    with pytest.raises(cqlsh_ext.Error) as timed_out:
        db.query(statement)
    text = str(timed_out.value)
    assert text.startswith("ReadTimeout: Error from server: code=1200 [Coordinator node timed out waiting "
                           "for replica nodes' responses] message=\"Operation timed out - received only 0 "
                           "responses.\" (0 of 1 replica responses at "), text
    assert "\n" not in text and not _driver_repr(text), text
    plan.set("unavailable", -1)  # the driver gives it up wrapped in a NoHostAvailable: the host is named
    with pytest.raises(cqlsh_ext.Error) as unavailable:
        db.query(f"SELECT pk, ck, data.n FROM {ks}.t WHERE pk = 1")
    text = str(unavailable.value)
    assert text.startswith("Unavailable: Error from server: code=1000 [Unavailable exception] ") and \
        "(0 of 1 replicas alive at " in text and text.endswith(f"(at {db._conn.host}:{db._conn.port})"), text
    assert not _driver_repr(text), text
    plan.set("delay", -1, 3000)  # the client gives up first
    with pytest.raises(cqlsh_ext.Error) as late:
        db.query(statement, timeout=0.5)
    assert str(late.value) == (f"OperationTimedOut: {db._conn.host}:{db._conn.port} did not answer within "
                               "the client's request timeout")
    plan.clear()
    assert {(row["pk"], row["ck"]) for row in db.query(statement)} == keys  # the same Database reads on
