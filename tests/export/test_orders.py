"""COPY (SELECT ...) TO of the order table (tools/orders.py) through the real binary on the real
server: whole, filtered and grouped, in Parquet, JSON Lines and CSV, read back with pyarrow and
DuckDB and compared with the generator's documents, value for value and type for type."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest
from orders import ENCODINGS, MISSING, take

from cqlsh_ext.payload.arrow_types import is_json_text
from tests.payload_select.conftest import shell

from .conftest import Orders
from .readback import closing_line, csv_rows, duckdb_rows, jsonl_rows, parquet_rows, rows_written

#: The data:label of each of the generator's encodings: the codec chain and the payload's kind.
LABELS = {"snappy-json": "snappy>json", "zstd-msgpack": "zstd>msgpack", "json": "json",
          "gzip-json": "gzip>json", "lz4-cbor": "lz4/frame>cbor"}


def value(doc: dict[str, Any] | None, *steps: Any) -> Any:
    found = MISSING if doc is None else take(doc, steps)
    return None if found is MISSING else found


def from_json_text(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def number_type(values: list[Any]) -> Any:
    """The column type the type rule gives numbers (docs/export.md): int64 while every integer
    fits, decimal128(38, 0) past 64 bits, float64 for floats with integers (those past 2**53 then
    do not fit it)."""
    ints = [v for v in values if isinstance(v, int)]
    if len(ints) == len(values):
        return pa.int64() if all(-2**63 <= v < 2**63 for v in ints) else pa.decimal128(38, 0)
    return pa.float64()


def as_written(column: Any, found: Any) -> Any:
    """A number as a column of `column`'s type holds it: None where it does not fit (a misfit,
    null with its note)."""
    if found is None:
        return None
    if column == pa.float64():
        return float(found) if isinstance(found, float) or abs(found) <= 2**53 else None
    if column == pa.int64():
        return found if isinstance(found, int) and -2**63 <= found < 2**63 else None
    return found


def misfit_note(column: Any, found: Any) -> str | None:
    """The note of a value that does not fit (`found`'s JSON text), None for one that does."""
    if found is None or as_written(column, found) is not None:
        return None
    return f"did not fit {'double' if column == pa.float64() else column}: {json.dumps(found)}"


def by_ck(rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    out = {row["ck"]: row for row in rows}
    assert len(out) == len(rows)
    return out


def test_the_whole_table_in_parquet_matches_the_generator(cassandra, orders: Orders, home):
    target = home / "orders.parquet"
    statement = (f"COPY (SELECT pk, ck, data, data.status, data.n, data.customer.tier, data.items "
                 f"FROM {orders.name}) TO '{target}' WITH ROW_GROUP_SIZE = 64")
    out = shell(cassandra, home, statement)
    assert out.returncode == 0, out.stderr
    assert rows_written(out.stdout) == len(orders.rows)
    undecodable = sum(doc is None for _row, doc in orders.rows)
    assert f"{undecodable} undecodable" in closing_line(out.stdout)

    schema, rows = parquet_rows(target)
    # A status is sometimes 7 among strings: a string column (most are strings), 7 null there with
    # its note; n an integer, a float or past 64 bits: float64 (numbers, most of them exact in a
    # double), those past 2**53 null with their note; inside the record, where a status or an n
    # mixes sorts, that place is JSON text; the records' other places keep their types.
    assert schema.field("pk").type == pa.string() and schema.field("ck").type == pa.int32()
    assert schema.field("data.status").type == pa.string()
    assert schema.field("data.n").type == pa.float64()
    assert schema.field("data.customer.tier").type == pa.string()
    assert schema.field("data.items").type == pa.list_(pa.struct([("sku", pa.string())]))
    assert schema.field("data").type == pa.struct([
        ("order-id", pa.string()), ("n", pa.string()), ("status", pa.string()),
        ("customer", pa.struct([("name", pa.string()), ("tier", pa.string())])),
        ("items", pa.list_(pa.struct([("sku", pa.string())]))), ("tags", pa.list_(pa.string()))])
    data = schema.field("data").type  # JSON text: a string, its field marked (arrow_types.is_json_text)
    assert [field.name for field in data if is_json_text(field)] == ["n", "status"]
    assert schema.field("data:label").type == pa.string()
    assert schema.field("data:stored").type == pa.binary()

    got = by_ck(rows)
    assert set(got) == {row["ck"] for row, _doc in orders.rows}
    misfits = 0
    for row, doc in orders.rows:
        out_row = got[row["ck"]]
        assert out_row["pk"] == row["pk"]
        status = value(doc, "status")
        if isinstance(status, str) or status is None:
            assert (out_row["data.status"], out_row["data.status:note"]) == (status, None)
        else:  # 7 in a column of strings
            assert out_row["data.status"] is None
            assert out_row["data.status:note"] == f"did not fit string: {status}"
            misfits += 1
        n = value(doc, "n")
        assert out_row["data.n"] == as_written(pa.float64(), n)
        assert out_row["data.n:note"] == misfit_note(pa.float64(), n)
        assert out_row["data.customer.tier"] == value(doc, "customer", "tier")
        assert out_row["data.items"] == value(doc, "items")
        how = ENCODINGS[row["ck"] % len(ENCODINGS)]
        if doc is None:  # not decodable: no payload, its stored bytes kept
            assert out_row["data"] is None and out_row["data:stored"] == row["data"]
            assert out_row["data:label"] is None and out_row["data:kind"] in ("unknown", "failed")
            continue
        assert out_row["data:label"] == LABELS[how]
        assert out_row["data:kind"] == ("text" if out_row["data:label"].endswith("json") else "record")
        assert out_row["data:stored"] is None  # OUTPUT RAW is off
        record = dict(out_row["data"])
        assert from_json_text(record.pop("n")) == doc["n"]
        assert from_json_text(record.pop("status")) == doc.get("status")
        assert record == {"order-id": doc["order-id"], "customer": doc.get("customer"),
                          "items": doc["items"], "tags": doc["tags"]}
    assert misfits and f"data.status: {misfits} value" in closing_line(out.stdout)

    types, duck = duckdb_rows(target)
    assert types["ck"] == "INTEGER" and types["data.n"] == "DOUBLE" and types["data:stored"] == "BLOB"
    assert types["data"].startswith('STRUCT("order-id" VARCHAR, n VARCHAR, status VARCHAR, '
                                    'customer STRUCT("name" VARCHAR, tier VARCHAR)')
    assert by_ck(duck) == got  # DuckDB reads every value as pyarrow does


def test_filtered_rows_in_every_format(cassandra, orders: Orders, home):
    condition = "data.status = 'FAILED'"
    select = (f"SELECT ck, data.status, data.n, data.customer FROM {orders.name} WHERE {condition} "
              "ALLOW FILTERING")
    statements = [f"COPY ({select}) TO '{home / name}';" for name in ("f.parquet", "f.jsonl", "f.csv")]
    out = shell(cassandra, home, "", stdin="\n".join(statements) + "\n")
    assert out.returncode == 0, out.stderr
    truth = {row["ck"]: doc for row, doc in orders.rows if value(doc, "status") == "FAILED"}
    assert out.stdout.count(f"{len(truth)} rows written") == 3, out.stdout

    schema, rows = parquet_rows(home / "f.parquet")
    assert schema.field("data.status").type == pa.string()  # only strings matched: a string column
    assert schema.field("data.customer").type == pa.struct([("name", pa.string()), ("tier", pa.string())])
    got = by_ck(rows)
    assert set(got) == set(truth)
    numbers = schema.field("data.n").type
    assert numbers == number_type([doc["n"] for doc in truth.values()])
    for ck, doc in truth.items():
        assert got[ck]["data.status"] == "FAILED"
        assert got[ck]["data.n"] == as_written(numbers, doc["n"])
        assert got[ck]["data.n:note"] == misfit_note(numbers, doc["n"])
        assert got[ck]["data.customer"] == value(doc, "customer")
    assert by_ck(duckdb_rows(home / "f.parquet")[1]) == got

    lines = by_ck(jsonl_rows(home / "f.jsonl"))  # JSON keeps each value's own type
    assert {ck: (r["data.status"], r["data.n"], r["data.customer"]) for ck, r in lines.items()} == \
        {ck: ("FAILED", doc["n"], value(doc, "customer")) for ck, doc in truth.items()}

    table = csv_rows(home / "f.csv")
    assert table[0] == ["ck", "data.status", "data.n", "data.customer"]
    assert {int(r[0]): (r[1], json.loads(r[2]), json.loads(r[3]) if r[3] else None) for r in table[1:]} == \
        {ck: ("FAILED", doc["n"], value(doc, "customer")) for ck, doc in truth.items()}


#: The GROUP BY key of the undecodable values' group (the generator's random bytes), as JSON spells
#: it; the tests compare keys in that form (a dict is no dict key).
UNDECODABLE_KEY = '{"$undecodable": true}'


def _key(status: Any) -> Any:
    return json.dumps(status) if isinstance(status, dict) else status


def _truth_groups(orders: Orders) -> dict[Any, dict[str, Any]]:
    groups: dict[Any, list[Any]] = {}
    for _row, doc in orders.rows:
        key = UNDECODABLE_KEY if doc is None else value(doc, "status")  # a group of its own
        groups.setdefault(key, []).append(value(doc, "n"))
    out = {}
    for key, ns in groups.items():
        numbers = [n for n in ns if n is not None]
        if not numbers:
            out[key] = {"count": len(ns), "max(data.n)": None, "sum(data.n)": None}
            continue
        total = sum(Fraction(n) for n in numbers)
        floats = any(isinstance(n, float) for n in numbers)
        out[key] = {"count": len(ns), "max(data.n)": max(numbers),
                    "sum(data.n)": float(total) if floats else int(total)}
    return out


def test_grouped_answer_in_every_format(cassandra, orders: Orders, home):
    select = (f"SELECT data.status, count(*), max(data.n), sum(data.n) FROM {orders.name} "
              "GROUP BY data.status ALLOW FILTERING")
    statements = [f"COPY ({select}) TO '{home / name}';" for name in ("g.parquet", "g.jsonl", "g.csv")]
    out = shell(cassandra, home, "", stdin="\n".join(statements) + "\n")
    assert out.returncode == 0, out.stderr
    truth = _truth_groups(orders)
    assert out.stdout.count(f"{len(truth)} rows written") == 3, out.stdout

    schema, rows = parquet_rows(home / "g.parquet")
    assert schema.field("count").type == pa.int64()
    assert schema.field("data.status").type == pa.string()  # the keys are mostly strings: no JSON text
    maxima = [t["max(data.n)"] for t in truth.values() if t["max(data.n)"] is not None]
    assert schema.field("max(data.n)").type == number_type(maxima)
    sums = [t["sum(data.n)"] for t in truth.values() if t["sum(data.n)"] is not None]
    assert schema.field("sum(data.n)").type == number_type(sums)
    # Each group by its key as the file holds it: a string key itself; 7, the group no value could
    # be read for and the one of the documents without a status all null, told apart by the note.
    notes = {7: "did not fit string: 7", UNDECODABLE_KEY: "undecodable: the group of the values no "
             "reading could read", None: None}
    got = {(r.pop("data.status"), r.pop("data.status:note")): r for r in rows}
    assert set(got) == {(key, None) if isinstance(key, str) and key != UNDECODABLE_KEY else (None, notes[key])
                        for key in truth}
    for key, expected in truth.items():
        row = got[(key, None) if isinstance(key, str) and key != UNDECODABLE_KEY else (None, notes[key])]
        assert row["count"] == expected["count"]
        for name in ("max(data.n)", "sum(data.n)"):
            column = schema.field(name).type
            assert row[name] == as_written(column, expected[name]), (key, name)
            assert row[f"{name}:note"] == misfit_note(column, expected[name]), (key, name)
    types, duck = duckdb_rows(home / "g.parquet")
    assert types["count"] == "BIGINT" and types["data.status"] == "VARCHAR"
    assert {(r.pop("data.status"), r.pop("data.status:note")): r for r in duck} == got

    lines = {_key(r.pop("data.status")): r for r in jsonl_rows(home / "g.jsonl")}
    assert lines == truth
    table = csv_rows(home / "g.csv")
    assert table[0] == ["data.status", "count", "max(data.n)", "sum(data.n)"]
    assert len(table) == len(truth) + 1


def test_text_files_hold_what_the_output_format_prints(cassandra, orders: Orders, home):
    select = f"SELECT pk, ck, data, data.customer FROM {orders.name} WHERE pk = 'p2'"
    for fmt, name in (("json", "p.jsonl"), ("json", "p.json"), ("csv", "p.csv")):
        printed = shell(cassandra, home, select, "--output-format", fmt)
        exported = shell(cassandra, home, f"COPY ({select}) TO '{home / name}'")
        assert printed.returncode == 0 and exported.returncode == 0, exported.stderr
        assert (home / name).read_text(encoding="utf-8") == printed.stdout
        if name.endswith(".json"):  # JSON Lines under a .json name: said, as the name does not say it
            assert "(JSON Lines: one object per line, not an array)" in closing_line(exported.stdout)


def test_raw_adds_the_stored_bytes_for_one_statement(cassandra, orders: Orders, home):
    select = f"SELECT ck, data FROM {orders.name} WHERE pk = 'p4'"
    out = shell(cassandra, home, f"COPY ({select}) TO '{home / 'raw.parquet'}' WITH RAW = true")
    assert out.returncode == 0, out.stderr
    _schema, rows = parquet_rows(home / "raw.parquet")
    stored = {row["ck"]: row["data"] for row, _doc in orders.rows if row["pk"] == "p4"}
    assert {r["ck"]: r["data:stored"] for r in rows} == stored
    out = shell(cassandra, home, f"COPY ({select}) TO '{home / 'raw.jsonl'}' WITH RAW = true")
    assert {r["ck"]: r["data"]["raw"] if isinstance(r["data"], dict) else r["data"]
            for r in jsonl_rows(home / "raw.jsonl")} == {ck: "0x" + v.hex() for ck, v in stored.items()}


@pytest.mark.parametrize("workers", ["2"])
def test_worker_processes_export_the_same_rows(cassandra, orders: Orders, home, workers):
    select = (f"SELECT ck, data.status FROM {orders.name} WHERE data.status IN ('NEW', 'PAID') "
              "ALLOW FILTERING")
    out = shell(cassandra, home, f"COPY ({select}) TO '{home / 'w.parquet'}'",
                env={"CQLSH_EXT_SCAN_WORKERS": workers})
    assert out.returncode == 0, out.stderr
    assert "2 worker processes" in closing_line(out.stdout)
    _schema, rows = parquet_rows(home / "w.parquet")
    assert {r["ck"]: r["data.status"] for r in rows} == \
        {row["ck"]: doc["status"] for row, doc in orders.rows if value(doc, "status") in ("NEW", "PAID")}



#: (statement, formats): the whole blob with paths and ordinary columns (text, list), the blob
#: alone (no path: nothing the plan decodes), filtered with paths only and with the blob, a
#: partition's read.
PAGES_IN_EXPORTS = [
    ("SELECT pk, ck, note, tags, data.status, data.n, data FROM {t}", ("parquet", "jsonl", "csv")),
    ("SELECT * FROM {t}", ("parquet",)),
    ("SELECT pk, ck, tags, data.n FROM {t} WHERE data.status = 'NEW' ALLOW FILTERING", ("parquet",)),
    ("SELECT pk, ck, data, data.n FROM {t} WHERE data.status = 'NEW' ALLOW FILTERING", ("jsonl",)),
    ("SELECT ck, note, data, data.n FROM {t} WHERE pk = 1", ("csv",)),
]


@pytest.mark.parametrize(("select", "formats"), PAGES_IN_EXPORTS)
def test_pages_in_writes_the_file_the_drivers_rows_write(cassandra, pages_table, home, select, formats):
    """Every export read with pages in (the core reads the server's pages) writes the file the
    driver's rows write (CQLSH_EXT_PAGES_IN=0), over blobs the core reads and hands back (bzip2,
    xz), null and empty blobs, texts and lists: Parquet read back with pyarrow the same table,
    JSON Lines and CSV the same bytes."""
    import pyarrow.parquet as pq

    statement = select.format(t=pages_table)
    unordered = "ALLOW FILTERING" in statement  # token ranges read at once: rows in no fixed order

    def order(items: list[Any]) -> list[Any]:
        return sorted(items, key=repr) if unordered else items

    for fmt in formats:
        files = []
        for flag in ("1", "0"):
            path = home / f"pages{flag}.{fmt}"
            out = shell(cassandra, home, f"COPY ({statement}) TO '{path}'", env={"CQLSH_EXT_PAGES_IN": flag})
            assert out.returncode == 0 and rows_written(out.stdout) > 0, out.stdout + out.stderr
            files.append(path)
        if fmt == "parquet":
            ours, drivers = (pq.read_table(path) for path in files)
            assert ours.schema == drivers.schema, statement
            assert order(ours.to_pylist()) == order(drivers.to_pylist()), statement
            if "data" in ours.column_names and "data:label" in ours.column_names:
                labels = " ".join(label for label in ours.column("data:label").to_pylist() if label)
                assert "bzip2" in labels and "xz" in labels, labels  # handed back by the core
        else:
            ours_lines, drivers_lines = (path.read_bytes().splitlines(keepends=True) for path in files)
            assert order(ours_lines) == order(drivers_lines), (statement, fmt)


def test_a_paths_export_does_not_import_pandas(cassandra, orders: Orders, home):
    """The ordinary columns (text pk, int ck) go to Arrow through the native core: no
    pyarrow.array of a list, which imports pandas where it is installed (about 50 MB and a third of
    a second). Python's import log (PYTHONPROFILEIMPORTTIME) of the real binary names no pandas."""
    import importlib.util

    from cqlsh_ext.payload import native

    if importlib.util.find_spec("pandas") is None or not native.available():
        pytest.skip("pandas is not installed, or the native core does not run: nothing to show")
    target = home / "keys.parquet"
    statement = f"COPY (SELECT pk, ck, data.status, data.n FROM {orders.name}) TO '{target}'"
    out = shell(cassandra, home, statement, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert out.returncode == 0, out.stderr
    assert rows_written(out.stdout) == len(orders.rows)
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
                if line.startswith("import time:")}
    assert "pyarrow.parquet" in imported
    assert not {name for name in imported if name.split(".")[0] == "pandas"}
