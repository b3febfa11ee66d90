"""Every failure of the driver or the server reaches a program as one cqlsh_ext.Error line that
names the host and port or the cause, never the driver's repr of its dicts: a host nobody listens
on, a read timeout and an Unavailable (the test server's fault plan, tests/fault_handler.py), a
client-side timeout, a server killed while an answer is read (a server of this module's own).
A reading that fails part-way gives the rows it read, then raises."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import devcassandra
import pytest
from waiting import wait_until

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


def test_a_reading_that_fails_part_way_gives_its_rows_then_raises(db, faulty, plan):
    """Pages after the second time out: the rows of the first two are given, then the Error; the
    notes say it failed, and the paging state goes on from the row after the last one given."""
    ks, keys = faulty
    statement = f"SELECT pk, ck FROM {ks}.t"
    plan.set("read_timeout", -1, after=2)
    answer = db.query(statement, page_size=PAGE)
    got: list[tuple[int, int]] = []
    with pytest.raises(cqlsh_ext.Error) as failed:
        for row in answer:
            got.append((row["pk"], row["ck"]))
    text = str(failed.value)
    assert text.startswith(f"the reading failed after {2 * PAGE} rows: ReadTimeout: "), text
    assert "\n" not in text and not _driver_repr(text), text
    assert len(got) == 2 * PAGE and answer.notes["stopped"] == "error" and answer.notes["exact"] is False
    plan.clear()
    rest = [(row["pk"], row["ck"])
            for row in db.query(statement, page_size=PAGE, paging_state=answer.paging_state)]
    assert len(got) + len(rest) == len(keys) and set(got) | set(rest) == keys


# ------------------------------------------------------------------ a server of this module's own


@pytest.fixture(scope="module")
def killable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[devcassandra.Instance, str, set]]:
    """A Cassandra of this module's own (with the fault handler): killing it disturbs no other
    test. Yields it, a faults_* keyspace holding table t, and its rows' keys."""
    from conftest import keyspace_filled, own_server

    directory = tmp_path_factory.mktemp("api-killed-cassandra") / "node"
    with own_server(directory, "cqlsh-ext api fault test", timeout=180) as instance:
        ks = "faults_api_killed"
        yield instance, ks, keyspace_filled(instance, ks, _fill)


def _own_plan(instance: devcassandra.Instance) -> Any:
    from conftest import fault_plan_file
    from fault_handler import FaultPlan

    return FaultPlan(fault_plan_file(instance.config.directory))


def test_a_server_killed_while_an_answer_is_read(killable, tmp_path: Path):
    instance, ks, keys = killable
    config = instance.config
    cqlshrc = tmp_path / "cqlshrc"
    cqlshrc.write_text("")
    where = f"{config.host}:{config.native_port}"
    db = cqlsh_ext.connect(config.host, config.native_port, username=config.username,
                           password=config.password, cqlshrc=str(cqlshrc))
    try:
        plan = _own_plan(instance)
        plan.set("delay", -1, 2000)  # every page late: a page is being answered when the server dies
        answer = db.query(f"SELECT pk, ck FROM {ks}.t", page_size=PAGE)
        got: list[dict[str, Any]] = []
        failures: list[BaseException] = []

        def read() -> None:
            try:
                got.extend(answer)
            except BaseException as err:  # the reader's own thread: what it raised is the test's
                failures.append(err)

        reader = threading.Thread(target=read)
        reader.start()
        wait_until(lambda: plan.met().pages >= 2, "a page after the first asked of the server")
        pid = instance.pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not instance.is_running(), "the server's end", 60, every=0.2)
        reader.join()
        assert len(failures) == 1 and isinstance(failures[0], cqlsh_ext.Error), failures
        text = str(failures[0])
        assert text.startswith("the reading failed after ") and where in text, text
        assert "\n" not in text and not _driver_repr(text), text
        assert PAGE <= len(got) < len(keys) and answer.notes["stopped"] == "error"
        # The server away: the next query, and a new connection, are one line naming it too.
        with pytest.raises(cqlsh_ext.Error) as away:
            db.query(f"SELECT pk, ck FROM {ks}.t")
        assert where in str(away.value) and not _driver_repr(str(away.value)), str(away.value)
        with pytest.raises(cqlsh_ext.Error) as refused:
            cqlsh_ext.connect(config.host, config.native_port, cqlshrc=str(cqlshrc))
        assert str(refused.value) == (f"Connection error: nothing listens on {where}: check the host and "
                                      "port (Cassandra's CQL port is 9042 unless its native_transport_port "
                                      "says otherwise)")
    finally:
        db.close()
