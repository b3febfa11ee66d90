"""Types given, on the real server and both engines: db.query's `sample_rows` (the leading rows
the types of values are read from) and `schema` (types given to columns and payload paths, by
name or as a pyarrow.Schema), honoured by every Arrow form of the answer and by COPY's files
(Parquet, and JSON Lines and CSV then holding the same typed columns); a value that does not fit
a type given is null with its note, never an error for the answer; a schema the answer does not
take is one line before anything is read. The oracle: the documents as written (their JSON text
read by Python's json with its own Decimal), not the code under test."""

from __future__ import annotations

import csv
import decimal
import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from shell_runner import said_lines

import cqlsh_ext
from tests.export.readback import closing_line, parquet_rows
from tests.payload_select.conftest import shell

pytestmark = pytest.mark.server

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

ROWS, FIRST = 60, 10
#: The totals as written in the documents, a number each (none of more than 15 significant digits:
#: its shortest float spelling is its text as written).
TOTALS = ["737.26", "9.99", "0.1", "12", "1e3", "737.260", "-0.5", "2.675", "1.005", "1e19", "123456.78"]


def text_of(k: int) -> str:
    """Row k's document as written: `n` an integer in the first FIRST rows, a float after."""
    n = str(k) if k < FIRST else f"{k}.5"
    return f'{{"total": {TOTALS[k % len(TOTALS)]}, "n": {n}, "name": "n{k}"}}'


def document(k: int) -> dict[str, Any]:
    """The oracle: row k's document read by Python's json, numbers as their own Decimal text."""
    return json.loads(text_of(k), parse_float=Decimal, parse_int=int)


def total_in(k: int) -> Decimal | None:
    """What decimal128(20, 2) holds of row k's total: the value where it has no more than 2
    places and 18 digits before the point, else nothing."""
    total = Decimal(document(k)["total"])
    with decimal.localcontext() as context:
        context.prec = 100
        held = total.quantize(Decimal("0.01"))
    return held if held == total and abs(total) < 10**18 else None


@pytest.fixture(scope="module")
def table(cassandra) -> str:
    ks = cassandra.create_keyspace("apigiven")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (p int, k int, data blob, PRIMARY KEY (p, k))")
    insert = session.prepare("INSERT INTO t (p, k, data) VALUES (0, ?, ?)")
    for k in range(ROWS):
        session.execute(insert, (k, gzip.compress(text_of(k).encode(), mtime=0)))
    session.shutdown()
    return f"{ks}.t"


def test_sample_rows_says_which_rows_the_types_are_read_from(db, table: str) -> None:
    select = f"SELECT k, data.n FROM {table} WHERE p = 0"
    few = db.query(select, sample_rows=FIRST)
    assert few.schema.field("data.n").type == pa.int64()  # the first FIRST rows: integers
    rows = few.to_arrow().to_pylist()
    for row in rows:
        n = document(row["k"])["n"]
        if row["k"] < FIRST:
            assert row["data.n"] == n and row["data.n:note"] is None
        else:
            assert row["data.n"] is None and row["data.n:note"] == f"did not fit int64: {n}"
    assert few.notes["misfits"] == {"data.n": ROWS - FIRST}
    every = db.query(select)  # the default sample holds every row: floats and integers
    assert every.schema.field("data.n").type == pa.float64()
    assert {r["k"]: r["data.n"] for r in every.to_arrow().to_pylist()} == \
        {k: float(document(k)["n"]) for k in range(ROWS)}
    assert "misfits" not in every.notes


SCHEMA = {"data.total": "decimal128(20,2)", "data.n": "int64", "k": pa.int64()}
SELECT = "SELECT k, data.total, data.n, data FROM {table} WHERE p = 0"


def assert_given_rows(rows: list[dict[str, Any]]) -> None:
    """The rows of the answer typed by SCHEMA hold each value in the type given, or null with
    its note where it does not fit (the same in the column and inside the record)."""
    assert sorted(r["k"] for r in rows) == list(range(ROWS))
    for row in rows:
        k, doc = row["k"], document(row["k"])
        total = total_in(k)
        n = doc["n"] if isinstance(doc["n"], int) else None
        assert row["data.total"] == total and row["data"]["total"] == total, (k, row)
        assert row["data.n"] == n and row["data"]["n"] == n and row["data"]["name"] == doc["name"]
        assert (row["data.total:note"] is None) == (total is not None)
        if total is None:
            head, text = row["data.total:note"].split(": ", 1)
            assert head == "did not fit decimal128(20, 2)" and Decimal(text) == doc["total"]
        if n is None:
            head, text = row["data.n:note"].split(": ", 1)
            assert head == "did not fit int64" and Decimal(text) == doc["n"]
        unfit = [f"{name} ({kind})" for name, kind, held in (("total", "decimal128(20, 2)", total),
                                                              ("n", "int64", n)) if held is None]
        if unfit:
            assert row["data:note"] == (f"did not fit struct (3 fields) at {', '.join(unfit)}: "
                                        "the value is in data:stored")
        else:
            assert row["data:note"] is None
        assert row["k:note"] is None


def test_a_schema_types_columns_and_the_paths_inside_them(db, table: str) -> None:
    answer = db.query(SELECT.format(table=table), schema=SCHEMA)
    schema = answer.schema  # before any row
    assert schema.field("k").type == pa.int64() and schema.field("data.n").type == pa.int64()
    assert schema.field("data.total").type == pa.decimal128(20, 2)
    assert schema.field("data").type == pa.struct([("total", pa.decimal128(20, 2)), ("n", pa.int64()),
                                                   ("name", pa.string())])
    table_ = answer.to_arrow()
    assert table_.schema == schema
    assert_given_rows(table_.to_pylist())
    totals_out = {k for k in range(ROWS) if total_in(k) is None}
    assert answer.notes["misfits"] == {"data.total": len(totals_out), "data.n": ROWS - FIRST,
                                       "data": len(totals_out | set(range(FIRST, ROWS)))}

    # the stream, pandas and polars: the same types and values
    streamed = db.query(SELECT.format(table=table), schema=SCHEMA)
    batches = list(streamed.to_reader())
    assert pa.Table.from_batches(batches, schema=schema).to_pylist() == table_.to_pylist()
    frame = db.query(SELECT.format(table=table), schema=SCHEMA).to_polars()
    assert frame.schema["data.total"] == pl.Decimal(20, 2) and frame.schema["k"] == pl.Int64
    assert frame.sort("k")["data.total"].to_list() == [total_in(k) for k in range(ROWS)]
    pandas = db.query(SELECT.format(table=table), schema=SCHEMA).to_pandas()
    assert str(pandas["data.total"].dtype) == "decimal128(20, 2)[pyarrow]"
    assert sorted(pandas["k"].tolist()) == list(range(ROWS))

    # an answer's own schema given again: the same answer
    again = db.query(SELECT.format(table=table), schema=schema)
    assert again.schema == schema and again.to_arrow().to_pylist() == table_.to_pylist()


def test_copy_takes_the_same_options_in_every_file(cassandra, db, table: str, tmp_path: Path) -> None:
    expected = db.query(SELECT.format(table=table), sample_rows=FIRST, schema=SCHEMA).to_arrow()
    options = ("WITH SCHEMA = 'data.total=decimal128(20,2), data.n=int64, k=int64' "
               f"AND SAMPLE_ROWS = {FIRST}")
    files = {fmt: tmp_path / f"given.{fmt}" for fmt in ("parquet", "jsonl", "csv")}
    for fmt, target in files.items():
        out = shell(cassandra, tmp_path, f"COPY ({SELECT.format(table=table)}) TO '{target}' {options}")
        assert out.returncode == 0, out.stderr
        line = closing_line(out.stdout)
        assert f"data.n: {ROWS - FIRST} values did not fit the column's type" in line, line
        if fmt != "parquet":
            assert "the Parquet file's typed columns" in line
    schema, rows = parquet_rows(files["parquet"])
    assert schema.equals(expected.schema)  # (the file's metadata besides)
    assert rows == expected.to_pylist()
    assert_given_rows(rows)

    # JSON Lines: the same columns, each value as JSON spells it (a decimal digit for digit)
    lines = [json.loads(line, parse_float=Decimal) for line in files["jsonl"].read_text().splitlines()]
    assert [list(line) for line in lines] == [expected.schema.names] * ROWS
    assert lines == [_as_json(row) for row in expected.to_pylist()]
    # CSV: a header of the same columns, each value's text
    with open(files["csv"], newline="", encoding="utf-8") as f:
        fields = list(csv.reader(f))
    assert fields[0] == expected.schema.names
    by_k = {int(row[0]): dict(zip(fields[0], row, strict=True)) for row in fields[1:]}
    for row in expected.to_pylist():
        got = by_k[row["k"]]
        total = row["data.total"]
        assert got["data.total"] == ("" if total is None else str(total))
        assert got["data.n:note"] == (row["data.n:note"] or "")
        assert json.loads(got["data"], parse_float=Decimal) == _as_json(row["data"])
        assert got["data:stored"] == ("" if row["data:stored"] is None else "0x" + row["data:stored"].hex())


def _as_json(value: Any) -> Any:
    """An Arrow value as JSON holds it: bytes their 0x text, records and lists item by item."""
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, bytes):
        return "0x" + value.hex()
    return value


def test_a_value_that_does_not_fit_a_type_given_is_null_never_an_error(db, table: str) -> None:
    answer = db.query(f"SELECT k, data.name FROM {table} WHERE p = 0", schema={"data.name": "int8"})
    rows = answer.to_arrow().to_pylist()
    assert len(rows) == ROWS and answer.notes["stopped"] is None
    for row in rows:
        assert row["data.name"] is None and row["data.name:note"] == f'did not fit int8: "n{row["k"]}"'


@pytest.mark.parametrize(("schema", "says"), [
    ({"data.nope": "int64"}, None),  # a field the records do not have: added (its values null)
    ({"nope": "int64"},
     "schema: nope is no column of this answer, nor a path inside one (its columns: k, data)"),
    ({"data.total": "decimal128(40,2)"}, "a decimal128 takes a precision of 1 to 38"),
    ({"data.total": "money"}, "schema: data.total: unknown type 'money'"),
    ({"k": "timestamp[ms]"}, "schema: k: timestamp[ms] is no type given here"),
    ({"data:note": "int64"}, "schema: data:note is a companion of data: its type is fixed"),
    ([("k", "int64")], "schema takes a pyarrow.Schema or a dict"),
])
def test_a_schema_the_answer_does_not_take_is_one_line(db, table: str, schema: Any, says: str | None) -> None:
    select = f"SELECT k, data FROM {table} WHERE p = 0"
    if says is None:
        answer = db.query(select, schema=schema)
        assert answer.schema.field("data").type.field("nope").type == pa.int64()
        assert all(r["data"]["nope"] is None for r in answer.to_arrow().to_pylist())
        return
    with pytest.raises(cqlsh_ext.Error) as refused:
        db.query(select, schema=schema)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(cqlsh_ext.Error, match="sample_rows takes a positive whole number of rows, not 0"):
        db.query(select, sample_rows=0)


@pytest.mark.parametrize(("options", "says"), [
    ("WITH SCHEMA = 'nope=int64'", "schema: nope is no column of this answer"),
    ("WITH SCHEMA = 'data.total'", "SCHEMA: expected name=type, found 'data.total'"),
    ("WITH SCHEMA = 'k=int64, k=int32'", "SCHEMA names k twice"),
    ("WITH SAMPLE_ROWS = 0", "SAMPLE_ROWS takes a positive number of rows, not 0"),
])
def test_copy_says_a_schema_it_does_not_take_in_one_line(cassandra, table: str, tmp_path: Path, options: str,
                                                         says: str) -> None:
    target = tmp_path / "refused.parquet"
    statement = f"COPY (SELECT k, data FROM {table} WHERE p = 0) TO '{target}' {options}"
    out = shell(cassandra, tmp_path, statement)
    lines = said_lines(out.stderr)
    assert len(lines) == 1 and lines[0].startswith("COPY (SELECT ...): ") and says in lines[0], out.stderr
    assert not target.exists() and [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []
