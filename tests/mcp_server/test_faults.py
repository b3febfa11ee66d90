"""`cqlsh-ext mcp` when things go wrong: a call the client cancels stops the scan it runs, a call
that reaches its time limit stops and answers what it read, and a server killed in the middle of a
call gives an error answer while the MCP server lives on and reaches the server again once it is
back. Slow pages come from the test server's fault handler (keyspaces named faults_*)."""

from __future__ import annotations

import os
import random
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import cramjam
import devcassandra
import pytest
from cassandra.concurrent import execute_concurrent_with_args
from waiting import wait_until

from cqlsh_ext.demo.records import documents

from .harness import McpServer, write_credentials

pytestmark = pytest.mark.server

ROWS = 600
#: A whole-table payload scan (token ranges, several at once): pages of every range are slowed.
SCAN = "SELECT id FROM {ks}.t WHERE data.status = 'NO SUCH STATUS' ALLOW FILTERING"


def _fill(session, ks: str) -> None:  # type: ignore[no-untyped-def]
    """ROWS rows of snappy JSON of 2-10 KB stored."""
    session.execute(f"CREATE TABLE {ks}.t (id int PRIMARY KEY, data blob)")
    rng = random.Random(8)
    docs = [d.encode() for d in documents(40, seed=8)]
    rows = []
    for i in range(ROWS):
        noise = rng.randbytes(rng.randint(1000, 4000)).hex().encode()
        rows.append((i, bytes(cramjam.snappy.compress_raw(docs[i % len(docs)] + noise))))
    insert = session.prepare(f"INSERT INTO {ks}.t (id, data) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)


def _rows_read(text: str) -> int:
    found = re.search(r"payload query: ([\d,]+) rows read", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def slow_ks(cassandra) -> Iterator[str]:
    ks = cassandra.create_keyspace("faults_mcp")
    session = cassandra.session()
    _fill(session, ks)
    session.shutdown()
    yield ks
    cassandra.faults.clear()


def test_a_cancelled_call_stops_its_scan_at_once_and_the_next_call_is_served(cassandra, slow_ks,
                                                                             tmp_path: Path):
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port)], tmp_path) as server:
        assert server.call("list_keyspaces").data["count"] > 0
        # Every page 10 s late: the scan is cancelled while its first pages are in flight.
        cassandra.faults.set("delay", -1, 10_000)
        try:
            call = server.start("query", statement=SCAN.format(ks=slow_ks))
            wait_until(lambda: cassandra.faults.met().pages >= 1, "a page of the scan at the server")
            assert not call.done()
            call.cancel()  # the client cancels: notifications/cancelled
            wait_until(lambda: "cancelled by the client" in server.logged(), "the call's stop in the log",
                       every=0.2)
            # The pages are still late: the next call is answered while they are.
            after = server.call("list_tables", keyspace=slow_ks)
        finally:
            cassandra.faults.clear()
        assert after.data["rows"] == [{"table_name": "t"}]
        stopped = next(line for line in server.logged().splitlines() if "cancelled by the client" in line)
        # The scan was running (the stop reached it) and ended before its first page came: it did
        # not wait for the pages in flight.
        assert "(query) stopped after" in stopped and "stopped before its end" in stopped, stopped
        assert _rows_read(stopped) == 0


def test_a_call_at_its_time_limit_stops_and_answers_what_it_read(cassandra, slow_ks, tmp_path: Path):
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port), "--time-limit", "4"], tmp_path) as server:
        cassandra.faults.set("delay", -1, 3000)
        try:
            answer = server.call("query", statement=SCAN.format(ks=slow_ks)).data
        finally:
            cassandra.faults.clear()
        stopped = answer["stopped"]
        assert stopped["why"] == "the time limit (4 s)" and stopped["says"].startswith("the answer covers")
        assert answer["rows"] == [] and stopped["rows_read"] == answer["reading"]["rows_read"] < ROWS
        assert "stopped before its end" in answer["notes"][0]
        assert _rows_read(answer["notes"][0]) == stopped["rows_read"] and answer["reading"]["exact"] is False
        assert "(query) stopped after" in server.logged()
        # The cut goes on (read as one stream, so that it can): its cursor reads the rest, no row twice.
        assert answer["reading"]["read"] == "single stream" and answer["cursor"]
        rest = server.call("query", statement=SCAN.format(ks=slow_ks), cursor=answer["cursor"]).data
        assert "cursor" not in rest and stopped["rows_read"] + rest["reading"]["rows_read"] == ROWS
        count = server.call("query", statement=f"SELECT count(*) FROM {slow_ks}.t").data
        assert count["rows"] == [{"count": ROWS}]


def test_what_was_read_is_answered_when_the_time_limit_stops_a_call(cassandra, slow_ks, tmp_path: Path):
    """Plain rows, DESCRIBE PAYLOAD, GROUP BY and COMPRESSION STATS stopped by the time limit keep
    their rows and figures, marked stopped with how far they got; plain rows go on with the cursor."""
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    # Every page 3 s late. Readings of one stream first, on a server whose limit (5 s) comes after
    # their first page and before their second (the test server serves 16 requests at once: the
    # pages left in flight by readings of token ranges would hold its threads).
    cassandra.faults.set("delay", -1, 3000)
    try:
        with McpServer([cassandra.host, str(cassandra.port), "--time-limit", "5", "--max-bytes", "32768"],
                       tmp_path) as server:
            plain = server.call("query", statement=f"SELECT id FROM {slow_ks}.t", limit=10_000).data
            named = f"id IN ({', '.join(map(str, range(ROWS)))})"  # the rows a WHERE names
            described = server.call("describe_payload", column=f"{slow_ks}.t.data", where=named).data
            cassandra.faults.clear()
            rest = server.call("query", statement=f"SELECT id FROM {slow_ks}.t", limit=10_000,
                               cursor=plain["cursor"]).data
        cassandra.faults.set("delay", -1, 3000)
        write_credentials(tmp_path / "8", cassandra.username, cassandra.password)
        with McpServer([cassandra.host, str(cassandra.port), "--time-limit", "8", "--max-bytes", "32768"],
                       tmp_path / "8") as server:
            grouped = server.call("query", statement=f"SELECT data.status, count(*) FROM {slow_ks}.t "
                                                     "GROUP BY data.status ALLOW FILTERING").data
            stats = server.call("compression_stats", table=f"{slow_ks}.t").data
    finally:
        cassandra.faults.clear()
    # Plain rows: those of the pages read, and a cursor that goes on from the next page.
    assert plain["stopped"]["why"] == "the time limit (5 s)" and 0 < plain["count"] < ROWS
    assert plain["stopped"]["rows_read"] == plain["count"] == plain["reading"]["rows_read"]
    ids = [row["id"] for row in plain["rows"]]
    assert rest["cut"] is None and "stopped" not in rest and rest["rows_before"] == len(ids)
    ids += [row["id"] for row in rest["rows"]]
    assert sorted(ids) == list(range(ROWS))
    # DESCRIBE PAYLOAD: the figures of the rows read.
    assert described["stopped"]["why"] == "the time limit (5 s)" and described["interrupted"] is True
    assert 0 < described["rows_read"] == described["stopped"]["rows_read"] < ROWS
    assert described["places"][0]["values"] == described["rows_read"]
    # The groups read before the limit are the answer, marked stopped, with how far it got.
    assert grouped["stopped"]["why"] == "the time limit (8 s)"
    read = grouped["reading"]["rows_read"]
    assert 0 < read < ROWS and sum(row["count"] for row in grouped["rows"]) == read
    assert grouped["stopped"]["rows_read"] == read and grouped["reading"]["stopped"] == "cancelled"
    assert grouped["reading"]["exact"] is False  # the counts are of the rows read, and say so
    assert grouped["stopped"]["ranges_read"] < grouped["stopped"]["ranges"]
    assert _rows_read(grouped["notes"][0]) == read and "cursor" not in grouped
    # COMPRESSION STATS: its figures so far, marked stopped.
    assert stats["stopped"]["why"] == "the time limit (8 s)" and stats["interrupted"] is True
    assert 0 < stats["rows"] == stats["stopped"]["rows_read"] < ROWS


# ------------------------------------------------------------------ a server of our own, killed


@pytest.fixture(scope="module")
def killable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[devcassandra.Instance, str]]:
    """A Cassandra of this module's own (with the fault handler): killing it must not disturb the
    shared one. Yields it and a faults_* keyspace holding table t."""
    from conftest import keyspace_filled, own_server

    directory = tmp_path_factory.mktemp("mcp-killed-cassandra") / "node"
    with own_server(directory, "cqlsh-ext mcp fault test", timeout=180) as instance:
        ks = "faults_mcp_killed"
        keyspace_filled(instance, ks, _fill)
        yield instance, ks


def _plan(instance: devcassandra.Instance):  # type: ignore[no-untyped-def]
    from conftest import fault_plan_file
    from fault_handler import FaultPlan

    return FaultPlan(fault_plan_file(instance.config.directory))


def _kill(instance: devcassandra.Instance) -> None:
    pid = instance.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not instance.is_running(), "the server's end", 30, every=0.2)


def test_the_server_killed_mid_call_then_back(killable, tmp_path: Path):
    instance, ks = killable
    config = instance.config
    write_credentials(tmp_path, config.username or "", config.password or "")
    with McpServer([config.host, str(config.native_port)], tmp_path) as server:
        assert server.call("list_tables", keyspace=ks).data["rows"] == [{"table_name": "t"}]
        _plan(instance).set("delay", -1, 3000)
        call = server.start("query", statement=SCAN.format(ks=ks))
        wait_until(lambda: _plan(instance).met().pages >= 1, "a page of the scan at the server")
        _kill(instance)
        answer = call.result(180)
        # An answer that says the reading failed: an error line, or the rows read with the error.
        said = answer.error if answer.is_error else answer.data.get("error") or " ".join(answer.data["notes"])
        failure = r"(?i)stopped by an error|connection|NoHostAvailable|unavailable|timed? ?out"
        assert re.search(failure, said), said
        # The MCP server lives on: calls while the server is away are error answers of one line.
        while_away = server.call("list_keyspaces")
        assert while_away.is_error and "\n" not in while_away.error, while_away.texts
        assert [tool.name for tool in server.tools()][0] == "list_keyspaces"
        # Back again: the same MCP server reaches it (the driver reconnects), and reads the table whole.
        _plan(instance).clear()
        instance.start(timeout=180, die_with_parent=True, move_internal_ports=True)
        wait_until(lambda: not server.call("list_keyspaces").is_error, "the server reached again", 120,
                   every=0.2)
        count = server.call("query", statement=f"SELECT count(*) FROM {ks}.t").data
        assert count["rows"] == [{"count": ROWS}]
        assert "Traceback" not in server.logged()
