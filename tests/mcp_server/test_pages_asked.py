"""`query` asks the server for few pages however many rows the call may answer, by the server's own
count of the requests the assistant's connections sent (Cassandra's system_views.clients), not ours:
its first page is cqlsh's (100 rows: a time limit still answers what it read), the next holds the
rest the call may answer. A call of 900 rows asks one request more than a call of 10, where pages of
cqlsh's size would make it ten."""

from __future__ import annotations

import pytest
from cassandra.concurrent import execute_concurrent_with_args

from .conftest import ASSISTANT

pytestmark = pytest.mark.server

ROWS = 1000


def _requests(session) -> int:  # type: ignore[no-untyped-def]
    """The requests every connection logged in as the assistant has sent, as the server counts them."""
    rows = session.execute("SELECT username, request_count FROM system_views.clients")
    return sum(row.request_count for row in rows if row.username == ASSISTANT)


def test_a_call_of_900_rows_asks_for_two_pages(cassandra, serve) -> None:  # type: ignore[no-untyped-def]
    keyspace = cassandra.create_keyspace("mcp_pages")
    session = cassandra.session()
    try:
        session.execute(f"CREATE TABLE {keyspace}.t (id int PRIMARY KEY, n int)")
        insert = session.prepare(f"INSERT INTO {keyspace}.t (id, n) VALUES (?, ?)")
        execute_concurrent_with_args(session, insert, [(i, i) for i in range(ROWS)], concurrency=64)
        server = serve()
        statement = f"SELECT id FROM {keyspace}.t"
        asked: dict[int, int] = {}
        for _ in range(3):  # the fewest of three calls: a driver's heartbeat may fall inside one
            for limit in (10, 900):
                before = _requests(session)
                answer = server.call("query", statement=statement, limit=limit, max_bytes=100_000)
                spent = _requests(session) - before
                assert answer.data["count"] == limit and "cursor" in answer.data
                asked[limit] = min(asked.get(limit, spent), spent)
    finally:
        session.shutdown()
    assert asked[900] <= asked[10] + 1, f"a call of 900 rows: {asked[900]} requests, of 10: {asked[10]}"
