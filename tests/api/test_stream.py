"""The answer as Arrow against the real server, on both engines (bin/test runs this module again
with CQLSH_EXT_NATIVE=0): typed before the first row from the leading sample, never retyped by a
later value (a 40-digit integer, a mixed list, an undecodable value past the sample: the schema is
the one of the answer without them), GROUP BY keys of their path's type whether or not the group
of undecodable values is there, an empty answer, and batches that arrive while the reading runs."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
import snappy
from cassandra.concurrent import execute_concurrent_with_args

from cqlsh_ext.payload.columns import SAMPLE_ROWS

pytestmark = pytest.mark.server

pa = pytest.importorskip("pyarrow")

#: Rows of the partition 'one': the leading sample and a few past it; the late ones, which do not fit
#: the types the sample gives: a 40-digit n, a mixed list of tags, bytes in no known format.
ROWS = SAMPLE_ROWS + 100
BIG, MIXED, RANDOM = SAMPLE_ROWS + 10, SAMPLE_ROWS + 20, SAMPLE_ROWS + 30
STATUSES = ["NEW", "PAID", "FAILED"]


def document(ck: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"status": STATUSES[ck % 3], "n": ck, "tags": ["a", "b"][: ck % 3]}
    if ck == BIG:
        doc["n"] = 10**39
    if ck == MIXED:
        doc["tags"] = [1, 2.5, None, True]
    return doc


def stored(ck: int) -> bytes:
    if ck == RANDOM:
        return bytes([0x9F, 0x00]) + random.Random(ck).randbytes(40)
    return snappy.compress(json.dumps(document(ck)).encode())


@pytest.fixture(scope="module")
def table(cassandra) -> str:
    ks = cassandra.create_keyspace("apistream")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
    rows = [("one", ck, stored(ck)) for ck in range(ROWS)]
    # 'hot': groups with the undecodable values' group; 'cold': the same statuses, none undecodable
    rows += [("hot", ck, stored(ck) if ck % 4 else stored(RANDOM)) for ck in range(40)]
    rows += [("cold", ck, stored(ck)) for ck in range(40)]
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.t"


SELECT = "SELECT ck, data.n, data.tags, data FROM {table} WHERE pk = 'one'"


def test_a_late_misfit_changes_no_type(db, table: str) -> None:
    whole = db.query(SELECT.format(table=table))
    early = db.query(SELECT.format(table=table) + f" AND ck < {SAMPLE_ROWS}")
    assert whole.schema == early.schema  # before any row is given
    assert whole.schema.field("data.n").type == pa.int64()
    assert whole.schema.field("data.tags").type == pa.list_(pa.string())
    got = {row["ck"]: row for row in whole.to_arrow().to_pylist()}
    assert whole.to_arrow().schema == early.schema
    assert len(got) == ROWS
    assert got[BIG]["data.n"] is None and got[BIG]["data.n:note"] == f"did not fit int64: {10**39}"
    # a list's items that do not fit are null, the others kept (the null among them fits)
    assert got[MIXED]["data.tags"] == [None, None, None, None]
    assert got[MIXED]["data.tags:note"] == \
        "did not fit list of string at [0] (string), [1] (string), [3] (string): [1,2.5,null,true]"
    # a record's field that does not fit is null, the rest of the record kept; its bytes beside it
    assert got[BIG]["data"] == {"status": "NEW", "n": None, "tags": []}
    assert got[BIG]["data:note"] == "did not fit struct (3 fields) at n (int64): the value is in data:stored"
    assert got[BIG]["data:stored"] == stored(BIG)
    assert got[MIXED]["data"] == {"status": "PAID", "n": MIXED, "tags": [None, None, None, None]}
    assert got[RANDOM]["data"] is None and got[RANDOM]["data:kind"] == "unknown"
    assert got[RANDOM]["data:stored"] == stored(RANDOM)
    assert got[7]["data.n"] == 7 and got[7]["data"] == {"status": "PAID", "n": 7, "tags": ["a"]}
    notes = whole.notes
    assert notes["misfits"] == {"data.n": 1, "data.tags": 1, "data": 2}
    assert notes["undecodable"] == 1


def test_group_by_keys_are_their_path_s_values_with_or_without_the_undecodable_group(db, table: str) -> None:
    def groups(pk: str) -> tuple[Any, dict[Any, tuple[int, str | None]]]:
        answer = db.query(f"SELECT data.status, count(*) FROM {table} WHERE pk = '{pk}' GROUP BY data.status")
        arrow = answer.to_arrow()
        rows = arrow.to_pylist()
        return arrow.schema, {r["data.status"]: (r["count"], r["data.status:note"]) for r in rows}

    hot_schema, hot = groups("hot")
    cold_schema, cold = groups("cold")
    assert hot_schema == cold_schema
    assert hot_schema.field("data.status").type == pa.string()
    assert set(cold) == set(STATUSES)  # the keys as they are: 'NEW', never '"NEW"'
    assert set(hot) == {*STATUSES, None}
    assert hot[None] == (10, "undecodable: the group of the values no reading could read")
    assert all(note is None for key, (_n, note) in hot.items() if key is not None)


def test_an_empty_answer_iterates_streams_and_collects_to_nothing(db, table: str) -> None:
    select = f"SELECT ck, data.n, data FROM {table} WHERE pk = 'none'"
    assert list(db.query(select)) == []
    streamed = db.query(select)
    schema = streamed.schema
    assert schema.names == ["ck", "data.n", "data.n:note", "data", "data:label", "data:kind", "data:note",
                            "data:stored", "data:confidence"]
    assert list(streamed.to_reader()) == []
    table_ = db.query(select).to_arrow()
    assert table_.num_rows == 0 and table_.schema == schema


def test_batches_arrive_while_the_reading_runs(db, table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of 500 rows: the reader's batches are given while rows are still to be read (the
    rows read when each arrives are counted, not timed), a batch per page (the first page's blobs
    are read in two parts, its first rows telling how large the values are: the first part is the
    stream's first batch, in hand before the page is converted, the second the rest of the page)."""
    from cqlsh_ext.api import database

    monkeypatch.setattr(database, "FETCH_SIZE", 500)
    monkeypatch.setattr(database, "PAGE_SIZE", 500)
    answer = db.query(SELECT.format(table=table))
    seen: list[int] = []
    for batch in answer.to_reader():
        seen.append(answer.notes["rows_read"])
        assert batch.num_rows <= 500
    assert sum(1 for read in seen if read < ROWS) >= SAMPLE_ROWS // 500
    assert seen[-1] == ROWS and len(seen) == -(-ROWS // 500) + 1


def test_the_stream_is_read_by_duckdb_and_polars_as_a_stream(db, table: str) -> None:
    import duckdb
    import polars

    answer = db.query(SELECT.format(table=table))
    counted = duckdb.sql('SELECT count(*), max("data.n") FROM answer').fetchall()  # (DuckDB finds it by name)
    del answer
    assert counted == [(ROWS, ROWS - 1)]
    frame = polars.from_arrow(db.query(SELECT.format(table=table)).to_reader())
    assert frame.height == ROWS
