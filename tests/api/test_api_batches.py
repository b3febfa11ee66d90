"""The batches a payload filter's whole-table reading hands a program (to_reader(), and so the
Arrow C stream DuckDB and polars read): each token range's page keeps a few dozen matches, and
they come joined into batches of at least the call's page size where more match, the last one
what is left; every match once, the batches in one schema."""

from __future__ import annotations

import gzip
import json

import pytest

pytestmark = pytest.mark.server

#: Rows of the table: small partitions, so each token range's page holds a few dozen matches.
ROWS = 3000
PARTITION = 20


def _paid(n: int) -> bool:
    return n * 7919 % 100 < 65


@pytest.fixture(scope="module")
def table(cassandra) -> tuple[str, set[tuple[int, int]]]:
    """ks.t of ROWS gzip'd documents, about 65 % of them PAID; and the (pk, ck) of those."""
    from cassandra.concurrent import execute_concurrent_with_args

    ks = cassandra.create_keyspace("apibatches")
    session = cassandra.session(ks)
    try:
        session.execute("CREATE TABLE t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
        insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
        rows = [(n // PARTITION, n, gzip.compress(json.dumps({"status": "PAID" if _paid(n) else "NEW",
                                                                "n": n}).encode(), mtime=0))
                for n in range(ROWS)]
        execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)
    finally:
        session.shutdown()
    return f"{ks}.t", {(n // PARTITION, n) for n in range(ROWS) if _paid(n)}


@pytest.mark.parametrize("page_size", [None, 400])
def test_a_payload_filter_s_batches_are_joined_to_the_page_size(db, table, page_size: int | None):
    name, paid = table
    statement = f"SELECT pk, ck, data.n FROM {name} WHERE data.status = 'PAID' ALLOW FILTERING"
    answer = db.query(statement, page_size=page_size)
    reader = answer.to_reader()
    batches = list(reader)
    sizes = [batch.num_rows for batch in batches]
    at_least = page_size or 5000  # the page size the call gives, else the API's (docs/api.md)
    assert sum(sizes) == len(paid) and answer.notes["matched"] == len(paid)
    # the first batch as the reading gave it (in hand before a page size's worth is converted), then
    # the rest of that worth, then the others joined to the page size but the last
    firsts = [sizes[0] + sizes[1]] if len(sizes) > 2 else []
    assert all(size >= at_least for size in firsts + sizes[2:-1]) and all(size > 0 for size in sizes), sizes
    if len(paid) >= at_least:  # one batch's worth more than a page keeps: no batch holds two batches' worth
        assert len(sizes) <= len(paid) // at_least + 2, sizes
    assert all(batch.schema == reader.schema for batch in batches)
    got = [(pk, ck) for batch in batches
           for pk, ck in zip(batch.column("pk").to_pylist(), batch.column("ck").to_pylist(), strict=True)]
    assert len(got) == len(set(got)) and set(got) == paid
    ns = {n for batch in batches for n in batch.column("data.n").to_pylist()}
    assert ns == {ck for _, ck in paid}
