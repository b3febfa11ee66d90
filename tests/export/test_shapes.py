"""The shape rule (docs/export.md): columns typed from the first row group, a later value that does
not fit widens its column and is counted on the closing line, never changed or dropped; a blob
whose records differ from its texts is JSON text; undecodable and cut values keep their bytes."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pyarrow as pa
import pytest
import zstandard

from tests.payload_select.conftest import shell

from .readback import closing_line, duckdb_rows, jsonl_rows, parquet_rows

#: Rows 0-9 (the first row group of 10): one shape. Rows 10-14: a status that is a number, an
#: amount that is a float, a new key. Row 15 looks like gzip and does not decode; row 16 is past the
#: output cap (4 MiB). The `note` blob holds records in rows 0-9 and plain text after.
FIRST = 10


def record(k: int) -> dict:
    if k < FIRST:
        return {"id": k, "status": "NEW", "amount": k}
    return {"id": k, "status": 7, "amount": k + 0.5, "extra": {"why": "later"}}


@pytest.fixture(scope="module")
def shapes(cassandra):
    ks = cassandra.create_keyspace("exshape")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE s (p int, k int, data blob, note blob, PRIMARY KEY (p, k))")
    insert = session.prepare("INSERT INTO s (p, k, data, note) VALUES (0, ?, ?, ?)")
    stored = {}
    for k in range(15):
        note = json.dumps({"author": f"a{k}", "text": "first"}) if k < FIRST else \
            f"a plain text note number {k}, written by hand"
        stored[k] = (gzip.compress(json.dumps(record(k)).encode()), note.encode())
    broken = gzip.compress(json.dumps(record(15)).encode())
    stored[15] = (broken[:20] + bytes(len(broken) - 20), None)  # a gzip header, then zeros
    big = json.dumps({"id": 16, "items": ["x" * 100] * 60_000}).encode()  # 6 MB: past the 4 MiB cap
    stored[16] = (zstandard.compress(big), None)
    for k, (data, note) in stored.items():
        session.execute(insert, (k, data, note))
    session.shutdown()
    return f"{ks}.s", stored


def test_values_that_do_not_fit_widen_their_column_and_are_counted(cassandra, shapes, home):
    table, stored = shapes
    target = home / "shapes.parquet"
    out = shell(cassandra, home, f"COPY (SELECT k, data, data.status, data.amount, note FROM {table} "
                                 f"WHERE p = 0) TO '{target}' WITH ROW_GROUP_SIZE = {FIRST}")
    assert out.returncode == 0, out.stderr
    line = closing_line(out.stdout)
    later = 15 - FIRST
    past = f"{later} values past the first row group did not fit"
    assert f"data.status: {past} string, kept as JSON text" in line
    assert f"data.amount: {past} int64, kept as double" in line
    assert f"data: {past} struct (3 fields), kept as struct (4 fields)" in line
    assert "1 undecodable" in line and "1 cut by the budget" in line

    schema, rows = parquet_rows(target)
    assert schema.field("data.status").type == pa.string()
    assert schema.field("data.amount").type == pa.float64()
    assert schema.field("data").type == pa.struct([
        ("id", pa.int64()), ("status", pa.string()), ("amount", pa.float64()),
        ("extra", pa.struct([("why", pa.string())]))])
    assert schema.field("note").type == pa.string()  # records, then texts: JSON text throughout
    got = {r["k"]: r for r in rows}
    assert sorted(got) == list(range(17))
    for k in range(15):  # every value kept, the early ones in the widened types too
        doc = record(k)
        assert json.loads(got[k]["data.status"]) == doc["status"]
        assert got[k]["data.amount"] == doc["amount"]
        data = got[k]["data"]
        assert {**data, "status": json.loads(data["status"])} == {"extra": None, **doc}
        assert got[k]["data:label"] == "gzip>json" and got[k]["data:stored"] is None
        note = json.loads(stored[k][1]) if k < FIRST else stored[k][1].decode()
        assert json.loads(got[k]["note"]) == note
    undecodable = got[15]
    assert undecodable["data"] is None and undecodable["data.status"] is None
    assert undecodable["data:label"] is None and undecodable["data:kind"] == "failed"
    assert undecodable["data:note"]
    assert undecodable["data:stored"] == stored[15][0]
    cut = got[16]
    assert cut["data"] is None and cut["data:label"] == "zstd>text"  # as JSON Lines says: a cut text
    assert cut["data:note"].startswith("cut: ") and cut["data:stored"] == stored[16][0]

    types, duck = duckdb_rows(target)
    assert types["data.amount"] == "DOUBLE" and types["data.status"] == "VARCHAR"
    assert types["data"] == 'STRUCT(id BIGINT, status VARCHAR, amount DOUBLE, extra STRUCT(why VARCHAR))'
    assert {r["k"]: r for r in duck} == got


def test_the_same_values_in_json_lines_keep_each_their_type(cassandra, shapes, home):
    table, _stored = shapes
    target = home / "shapes.jsonl"
    out = shell(cassandra, home, f"COPY (SELECT k, data.status, data.amount FROM {table} WHERE p = 0) "
                                 f"TO '{target}'")
    assert out.returncode == 0, out.stderr
    got = {r["k"]: r for r in jsonl_rows(target)}
    assert {k: (got[k]["data.status"], got[k]["data.amount"]) for k in range(15)} == \
        {k: (record(k)["status"], record(k)["amount"]) for k in range(15)}


def test_a_pickle_of_shared_parts_is_exported_cut_and_queried_without_hanging(cassandra, home):
    # 888 bytes of pickle whose memo shares each of 12 levels ten times: 70 objects, 10**12 paths.
    # Each statement below used to walk every path of it (the export's is_plain, DISTINCT's
    # repr()), and never ended.
    import pickle

    node: Any = {"leaf": 1}
    for _ in range(12):
        node = {f"k{j}": node for j in range(10)}
    ks = cassandra.create_keyspace("exshared")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (p int, k int, data blob, PRIMARY KEY (p, k))")
    insert = session.prepare("INSERT INTO t (p, k, data) VALUES (0, ?, ?)")
    session.execute(insert, (0, pickle.dumps({"a": node}, protocol=4)))
    session.execute(insert, (1, json.dumps({"a": {"x": 1}}).encode()))
    session.shutdown()
    for name in ("shared.jsonl", "shared.parquet"):
        out = shell(cassandra, home, f"COPY (SELECT k, data.a FROM {ks}.t WHERE p = 0) TO '{home / name}'")
        assert out.returncode == 0, out.stderr
        rows = jsonl_rows(home / name) if name.endswith(".jsonl") else parquet_rows(home / name)[1]
        assert [row["k"] for row in rows] == [0, 1]
        assert "cut" in json.dumps(rows[0]["data.a"]), name  # shown cut, with the reason
    out = shell(cassandra, home, f"SELECT DISTINCT data.a FROM {ks}.t WHERE p = 0")
    assert out.returncode == 0 and "(2 rows)" in out.stdout, out.stdout + out.stderr
