"""One road for every export of a blob column: the blob alone (`SELECT pk, ck, data`, no path: the
statement users type) and the blob beside a path read the same columns, so the files hold the same
blob values, byte for byte in JSON Lines and CSV, value for value in Parquet, and the closing lines
count the same undecodable values."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from tests.payload_select.conftest import shell

from .conftest import Orders
from .readback import closing_line, csv_rows, jsonl_rows, parquet_rows

pytestmark = pytest.mark.server


def _undecodable(line: str) -> str:
    found = re.search(r"[\d,]+ undecodable \([^)]*\)", line)
    assert found is not None, line
    return found.group(0)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_the_blob_alone_and_beside_a_path_write_the_same_blob(cassandra, orders: Orders, home, fmt):
    alone, beside = home / f"alone.{fmt}", home / f"beside.{fmt}"
    outs = [shell(cassandra, home, f"COPY ({select}) TO '{path}'") for select, path in (
        (f"SELECT pk, ck, data FROM {orders.name}", alone),
        (f"SELECT pk, ck, data.status, data FROM {orders.name}", beside))]
    assert all(out.returncode == 0 for out in outs), [out.stderr for out in outs]
    undecodable = sum(doc is None for _row, doc in orders.rows)
    lines = [closing_line(out.stdout) for out in outs]
    assert _undecodable(lines[0]) == _undecodable(lines[1])
    assert _undecodable(lines[0]).startswith(f"{undecodable} undecodable")
    if fmt == "jsonl":
        first = jsonl_rows(alone)
        second = [{k: v for k, v in row.items() if k != "data.status"} for row in jsonl_rows(beside)]
        assert first == second and len(first) == len(orders.rows)
        texts = [json.dumps(row["data"], sort_keys=True) for row in first]
        assert len(set(texts)) > len(orders.rows) // 2  # the blobs themselves, decoded
    elif fmt == "csv":
        first, second = csv_rows(alone), csv_rows(beside)
        at = second[0].index("data.status")
        assert first == [row[:at] + row[at + 1:] for row in second]
    else:
        (schema_a, rows_a), (schema_b, rows_b) = parquet_rows(alone), parquet_rows(beside)
        blob = ["data", "data:label", "data:kind", "data:note", "data:stored"]
        assert [schema_a.field(n).type for n in blob] == [schema_b.field(n).type for n in blob]
        assert [{n: r[n] for n in ["pk", "ck", *blob]} for r in rows_a] == \
            [{n: r[n] for n in ["pk", "ck", *blob]} for r in rows_b]


@pytest.mark.parametrize("engine", ["native", "python"])
def test_every_value_no_reading_can_read_says_why(cassandra, home, engine):
    """A value in no known format says why in data:note (too short to look at, or nothing found),
    a binary payload that it is one, an empty or null value nothing: on the native core's columns
    as on the Python engine's."""
    ks = cassandra.create_keyspace("exquiet")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (k int PRIMARY KEY, data blob)")
    values = {1: b"abc", 2: b"\xfe\xed" + bytes(range(1, 40)), 3: b"",
              4: gzip.compress(bytes(range(256)) * 4), 5: None}
    for k, value in values.items():
        session.execute("INSERT INTO t (k, data) VALUES (%s, %s)", (k, value))
    session.shutdown()
    target = home / "quiet.parquet"
    out = shell(cassandra, home, f"COPY (SELECT k, data FROM {ks}.t) TO '{target}'",
                env={"CQLSH_EXT_NATIVE": "0"} if engine == "python" else None)
    assert out.returncode == 0, out.stderr
    notes = {row["k"]: row["data:note"] for row in parquet_rows(target)[1]}
    assert notes == {1: "too short to detect", 2: "no compression detected", 3: None,
                     4: "a binary payload: neither text nor a record format", 5: None}
