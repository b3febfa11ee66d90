"""One road for every export of a blob column: the blob alone (`SELECT pk, ck, data`, no path: the
statement users type) and the blob beside a path read the same columns, so the files hold the same
blob values, byte for byte in JSON Lines and CSV, value for value in Parquet, and the closing lines
count the same undecodable values."""

from __future__ import annotations

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
