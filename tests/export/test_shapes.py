"""The type rule (docs/export.md, "Types"): columns typed before the first row is written, from the
CQL types and the answer's leading sample (its first SAMPLE_ROWS rows); a later value that does not
fit is null in its column, explained in NAME:note (a path's value its JSON text, a blob's bytes in
NAME:stored) and counted on the closing line, never coerced, never retyping the column: the schema
is the same with and without the late values. JSON Lines keeps every value as it is."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pyarrow as pa
import pytest
import zstandard
from cassandra.concurrent import execute_concurrent_with_args

from cqlsh_ext.payload.columns import SAMPLE_ROWS
from tests.payload_select.conftest import shell

from .readback import closing_line, duckdb_rows, jsonl_rows, parquet_rows

#: Rows 0 to FIRST - 1 (the leading sample): one shape. Rows FIRST to FIRST + 4: a status that is
#: a number, an amount that is a float, a new key. Row FIRST + 5 looks like gzip and does not
#: decode; row FIRST + 6 is past the output cap (4 MiB). The `note` blob holds records in the
#: sample's rows and plain text after.
FIRST = SAMPLE_ROWS
LATE = range(FIRST, FIRST + 5)
BROKEN, BIG = FIRST + 5, FIRST + 6


def record(k: int) -> dict:
    if k < FIRST:
        return {"id": k, "status": "NEW", "amount": k}
    return {"id": k, "status": 7, "amount": k + 0.5, "extra": {"why": "later"}}


def note_of(k: int) -> bytes:
    note = json.dumps({"author": f"a{k}", "text": "first"}) if k < FIRST else \
        f"a plain text note number {k}, written by hand"
    return note.encode()


@pytest.fixture(scope="module")
def shapes(cassandra):
    ks = cassandra.create_keyspace("exshape")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE s (p int, k int, data blob, note blob, PRIMARY KEY (p, k))")
    insert = session.prepare("INSERT INTO s (p, k, data, note) VALUES (0, ?, ?, ?)")
    stored = {k: (gzip.compress(json.dumps(record(k)).encode()), note_of(k)) for k in range(FIRST + 5)}
    broken = gzip.compress(json.dumps(record(BROKEN)).encode())
    stored[BROKEN] = (broken[:20] + bytes(len(broken) - 20), None)  # a gzip header, then zeros
    big = json.dumps({"id": BIG, "items": ["x" * 100] * 60_000}).encode()  # 6 MB: past the 4 MiB cap
    stored[BIG] = (zstandard.compress(big), None)
    execute_concurrent_with_args(session, insert, [(k, data, note) for k, (data, note) in stored.items()],
                                 concurrency=32, raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.s", stored


SELECT = "SELECT k, data, data.status, data.amount, note FROM {table} WHERE p = 0"


def test_values_past_the_sample_that_do_not_fit_are_null_with_a_note_and_counted(cassandra, shapes, home):
    table, stored = shapes
    target = home / "shapes.parquet"
    out = shell(cassandra, home, f"COPY ({SELECT.format(table=table)}) TO '{target}'")
    assert out.returncode == 0, out.stderr
    line = closing_line(out.stdout)
    for name in ("data.status", "data.amount", "data", "note"):
        assert f"{name}: 5 values did not fit the column's type (null there; {name}:note says" in line, name
    assert "1 undecodable" in line and "1 cut by the budget" in line

    schema, rows = parquet_rows(target)
    assert schema.field("data.status").type == pa.string()
    assert schema.field("data.amount").type == pa.int64()
    assert schema.field("data").type == pa.struct([("id", pa.int64()), ("status", pa.string()),
                                                   ("amount", pa.int64())])
    assert schema.field("note").type == pa.struct([("author", pa.string()), ("text", pa.string())])
    got = {r["k"]: r for r in rows}
    assert sorted(got) == list(range(FIRST + 7))
    for k in (0, 1, FIRST - 1):  # the sample's values, each in its column as it is
        assert got[k]["data"] == record(k) and got[k]["data.status"] == "NEW" and got[k]["data.amount"] == k
        assert got[k]["data:note"] is None and got[k]["data.status:note"] is None
        assert got[k]["note"] == json.loads(note_of(k)) and got[k]["data:stored"] is None
    for k in LATE:  # null where they do not fit, what each was said, nothing lost
        row = got[k]
        assert row["data.status"] is None and row["data.status:note"] == "did not fit string: 7"
        assert row["data.amount"] is None and row["data.amount:note"] == f"did not fit int64: {k + 0.5}"
        # the record: only its fields that do not fit are null (a key it has no field for is left
        # out), the note names them, the stored bytes hold the whole value
        assert row["data"] == {"id": k, "status": None, "amount": None}
        assert row["data:label"] == "gzip>json" and row["data:kind"] == "text"
        assert row["data:note"] == ("did not fit struct (3 fields) at status (string), amount (int64), "
                                    "extra (no such field): the value is in data:stored")
        assert row["data:stored"] == stored[k][0]
        assert row["note"] is None and row["note:stored"] == stored[k][1]
    undecodable = got[BROKEN]
    assert undecodable["data"] is None and undecodable["data.status"] is None
    assert undecodable["data:label"] is None and undecodable["data:kind"] == "failed"
    assert undecodable["data:note"] and undecodable["data:stored"] == stored[BROKEN][0]
    cut = got[BIG]
    assert cut["data"] is None and cut["data:label"] == "zstd>text"  # as JSON Lines says: a cut text
    assert cut["data:note"].startswith("cut: ") and cut["data:stored"] == stored[BIG][0]

    types, duck = duckdb_rows(target)
    assert types["data.amount"] == "BIGINT" and types["data.status"] == "VARCHAR"
    assert types["data"] == "STRUCT(id BIGINT, status VARCHAR, amount BIGINT)"
    assert {r["k"]: r for r in duck} == got


def test_the_schema_is_the_same_without_the_late_values(cassandra, shapes, home):
    """The types are decided before the late values are read: leaving them out changes nothing."""
    table, _stored = shapes
    files = {}
    for name, where in (("all", ""), ("early", f" AND k < {FIRST}")):
        files[name] = home / f"{name}.parquet"
        out = shell(cassandra, home, f"COPY ({SELECT.format(table=table)}{where}) TO '{files[name]}'")
        assert out.returncode == 0, out.stderr
    assert parquet_rows(files["all"])[0] == parquet_rows(files["early"])[0]


def test_the_same_values_in_json_lines_keep_each_their_type(cassandra, shapes, home):
    table, _stored = shapes
    target = home / "shapes.jsonl"
    out = shell(cassandra, home, f"COPY (SELECT k, data.status, data.amount FROM {table} WHERE p = 0) "
                                 f"TO '{target}'")
    assert out.returncode == 0, out.stderr
    got = {r["k"]: r for r in jsonl_rows(target)}
    every = [*range(0, FIRST, 997), *LATE]
    assert {k: (got[k]["data.status"], got[k]["data.amount"]) for k in every} == \
        {k: (record(k)["status"], record(k)["amount"]) for k in every}


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
