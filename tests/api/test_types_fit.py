"""Types that fit, on the real server and both engines (bin/test's second pass runs this module
again with CQLSH_EXT_NATIVE=0): a field whose type changes past the leading sample is null alone,
the rest of its record kept (its bytes and note as before); a CQL decimal of any scale and any
number of digits read exactly through every door (Arrow, polars, Parquet, JSON Lines, CSV, the
terminal), held to Python's own Decimal of what was written."""

from __future__ import annotations

import csv
import decimal
import gzip
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from cassandra.concurrent import execute_concurrent_with_args

from cqlsh_ext.payload.columns import SAMPLE_ROWS
from tests.export.readback import closing_line, parquet_rows
from tests.payload_select.conftest import shell

pytestmark = pytest.mark.server

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

#: 7,000 documents: `n` an integer in the leading sample's rows, a string in the last 1,000.
ROWS, LATE = 7_000, 6_000


def document(ck: int) -> dict[str, Any]:
    n: Any = ck if ck < LATE else f"x{ck}"
    return {"n": n, "s": f"s{ck}", "tags": ["a", "b"][: ck % 3]}


@pytest.fixture(scope="module")
def late(cassandra) -> str:
    ks = cassandra.create_keyspace("apilate")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES ('one', ?, ?)")
    rows = [(ck, gzip.compress(json.dumps(document(ck)).encode(), mtime=0)) for ck in range(ROWS)]
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.t"


def stored_documents(cassandra, table: str) -> dict[int, tuple[bytes, dict[str, Any]]]:
    """The oracle: each row's stored bytes as the driver reads them, and the document gzip and
    json (the producers' libraries) read from them."""
    session = cassandra.session()
    try:
        rows = session.execute(f"SELECT ck, data FROM {table} WHERE pk = 'one'")
        return {row.ck: (row.data, json.loads(gzip.decompress(row.data))) for row in rows}
    finally:
        session.shutdown()


def test_a_late_misfit_nulls_only_the_field_that_does_not_fit(cassandra, db, late: str) -> None:
    truth = stored_documents(cassandra, late)
    assert len(truth) == ROWS and SAMPLE_ROWS < LATE
    answer = db.query(f"SELECT ck, data, data.n FROM {late} WHERE pk = 'one'")
    table = answer.to_arrow()
    assert table.schema.field("data").type == pa.struct([("n", pa.int64()), ("s", pa.string()),
                                                         ("tags", pa.list_(pa.string()))])
    got = {row["ck"]: row for row in table.to_pylist()}
    assert sorted(got) == list(range(ROWS))
    for ck, (stored, doc) in truth.items():
        row = got[ck]
        assert row["data"] is not None, ck  # never the whole record for one field
        assert row["data"]["s"] == doc["s"] and row["data"]["tags"] == doc["tags"]
        assert row["data:label"] == "gzip>json"
        if isinstance(doc["n"], int):
            assert row["data"]["n"] == doc["n"] and row["data:note"] is None and row["data:stored"] is None
            assert row["data.n"] == doc["n"] and row["data.n:note"] is None
        else:  # the field alone is null; the note says which, the stored bytes hold it, as before
            assert row["data"]["n"] is None
            assert row["data:note"] == ("did not fit struct (3 fields) at n (int64): "
                                        "the value is in data:stored")
            assert row["data:stored"] == stored
            assert row["data.n"] is None and row["data.n:note"] == f'did not fit int64: "{doc["n"]}"'
    assert answer.notes["misfits"] == {"data": ROWS - LATE, "data.n": ROWS - LATE}

    # polars over the full read: the fields polars reads of the Arrow answer are the documents'
    record = pl.col("data").struct
    frame = pl.from_arrow(table).select("ck", record.field("n"), record.field("s"))
    oracle = pl.DataFrame({"ck": list(range(ROWS)),
                           "n": [doc["n"] if isinstance(doc["n"], int) else None
                                 for _stored, doc in (truth[ck] for ck in range(ROWS))],
                           "s": [truth[ck][1]["s"] for ck in range(ROWS)]},
                          schema={"ck": pl.Int32, "n": pl.Int64, "s": pl.String})
    assert frame.sort("ck").equals(oracle)
    assert frame.filter(pl.col("n").is_null()).height == ROWS - LATE
    assert frame.filter(pl.col("s").is_null()).height == 0


def test_the_parquet_file_nulls_only_the_field_too(cassandra, late: str, tmp_path: Path) -> None:
    truth = stored_documents(cassandra, late)
    target = tmp_path / "late.parquet"
    out = shell(cassandra, tmp_path, f"COPY (SELECT ck, data FROM {late} WHERE pk = 'one') TO '{target}'")
    assert out.returncode == 0, out.stderr
    assert f"data: {ROWS - LATE:,} values did not fit the column's type" in closing_line(out.stdout)
    _schema, rows = parquet_rows(target)
    for row in rows:
        stored, doc = truth[row["ck"]]
        expected = dict(doc, n=doc["n"] if isinstance(doc["n"], int) else None)
        assert row["data"] == expected, row["ck"]
        assert (row["data:stored"] == stored) == (expected["n"] is None)


# ------------------------------------------------------------------ decimals, exactly

#: Rows 0 to REGULAR - 1 (the sample db.query is asked to read: sample_rows=REGULAR): decimals of
#: 9 places at most; past them, decimals of every scale from -30 to 40 and 1 to 60 digits.
REGULAR = 40


def wild_decimals() -> list[Decimal]:
    """Decimals of scales -30..+40 and 1..60 digits, every pairing of a scale with a few sizes,
    and the one the issue names."""
    chance = random.Random(82)
    out = [Decimal("-1E-26"), Decimal(0), Decimal("0E-40"), Decimal("0E+30")]  # (no negative zero in CQL)
    for scale in range(-30, 41):
        for digits in (1, 2, 9, 19, 38, 39, 60)[chance.randrange(3):]:
            unscaled = chance.randrange(10 ** (digits - 1), 10**digits)
            out.append(Decimal(f"{'-' if chance.random() < 0.5 else ''}{unscaled}E{-scale}"))
    return out


def decimals_by_key() -> dict[int, Decimal]:
    regular = {k: Decimal(f"{k * 1_234_567}E-{k % 10}") for k in range(REGULAR)}
    return regular | {REGULAR + i: value for i, value in enumerate(wild_decimals())}


def lists_by_key(values: dict[int, Decimal]) -> dict[int, list[Decimal]]:
    """A list<decimal> per row: the row's decimal between two of the sample's kind."""
    return {k: [Decimal("1.5"), v, Decimal("-2.25")] for k, v in values.items()}


@pytest.fixture(scope="module")
def decimals(cassandra) -> str:
    ks = cassandra.create_keyspace("apidec")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE d (p int, k int, v decimal, lv frozen<list<decimal>>, PRIMARY KEY (p, k))")
    insert = session.prepare("INSERT INTO d (p, k, v, lv) VALUES (0, ?, ?, ?)")
    values = decimals_by_key()
    lists = lists_by_key(values)
    execute_concurrent_with_args(session, insert, [(k, v, lists[k]) for k, v in values.items()],
                                 concurrency=32, raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.d"


def same_decimal(got: Any, want: Decimal) -> bool:
    """Python's Decimal says they are the same number (the Arrow column's scale may add zeros)."""
    return isinstance(got, (Decimal, int)) and not isinstance(got, bool) and Decimal(got) == want


def exactly(text: str, want: Decimal) -> bool:
    """A decimal's text is the value's own: the same digits and exponent (no zero added or lost)."""
    return Decimal(text).as_tuple() == want.as_tuple()


def assert_decimal_rows(rows: list[dict[str, Any]]) -> None:
    """Arrow's rows (the API's table, the Parquet file's) hold every decimal: in the typed column,
    or where that does not hold it, its exact text in NAME:exact; never null for its scale."""
    values = decimals_by_key()
    lists = lists_by_key(values)
    assert sorted(r["k"] for r in rows) == sorted(values)
    outside = 0
    for row in rows:
        want = values[row["k"]]
        if row["v"] is not None:
            assert same_decimal(row["v"], want) and row["v:exact"] is None and row["v:note"] is None
        else:
            outside += 1
            assert exactly(row["v:exact"], want), (row, want)
            assert row["v:note"] == f"did not fit decimal128(38, 9): {row['v:exact']}"
        items = row["lv"]
        assert len(items) == 3
        assert same_decimal(items[0], Decimal("1.5")) and same_decimal(items[2], Decimal("-2.25"))
        if items[1] is not None:
            assert same_decimal(items[1], want) and row["lv:exact"] is None
        else:  # the item alone is null; the list's exact JSON text beside it
            exact = json.loads(row["lv:exact"], parse_float=Decimal, parse_int=Decimal)
            assert exact == lists[row["k"]]
            assert row["lv:note"].startswith(
                "did not fit list of decimal128(38, 9) at [1] (decimal128(38, 9)): ")
    assert outside > 100  # the wild decimals: most of them past what decimal128(38, 9) holds


def test_a_decimal_is_read_exactly_by_arrow_and_polars(db, decimals: str) -> None:
    answer = db.query(f"SELECT k, v, lv FROM {decimals} WHERE p = 0", sample_rows=REGULAR)
    assert answer.schema.names == ["k", "v", "v:note", "v:exact", "lv", "lv:note", "lv:exact"]
    assert answer.schema.field("v").type == pa.decimal128(38, 9)  # the sample's largest scale
    table = answer.to_arrow()
    assert_decimal_rows(table.to_pylist())
    frame = db.query(f"SELECT k, v FROM {decimals} WHERE p = 0", sample_rows=REGULAR).to_polars()
    assert frame.schema["v"] == pl.Decimal(38, 9)
    values = decimals_by_key()
    for k, v, exact in frame.select("k", "v", "v:exact").iter_rows():
        assert same_decimal(v, values[k]) if v is not None else exactly(exact, values[k])
    # every value the sample's type holds is there: the rest are the ones it cannot hold
    with decimal.localcontext() as context:
        context.prec = 200
        fits = [k for k, value in values.items() if value == round(value, 9) and abs(value) < 10**29]
    assert sorted(frame.filter(pl.col("v").is_not_null())["k"].to_list()) == sorted(fits)


def test_a_decimal_is_exact_in_every_file_and_on_the_terminal(cassandra, decimals: str,
                                                               tmp_path: Path) -> None:
    values = decimals_by_key()
    select = f"SELECT k, v, lv FROM {decimals} WHERE p = 0"
    parquet = tmp_path / "d.parquet"
    out = shell(cassandra, tmp_path, f"COPY ({select}) TO '{parquet}' WITH SAMPLE_ROWS = {REGULAR}")
    assert out.returncode == 0, out.stderr
    assert_decimal_rows(parquet_rows(parquet)[1])

    jsonl, csv_file = tmp_path / "d.jsonl", tmp_path / "d.csv"
    for target in (jsonl, csv_file):
        out = shell(cassandra, tmp_path, f"COPY ({select}) TO '{target}'")
        assert out.returncode == 0, out.stderr
    lines = [json.loads(line, parse_float=Decimal, parse_int=Decimal)
             for line in jsonl.read_text(encoding="utf-8").splitlines()]
    texts = {int(r["k"]): r["v"] for r in [json.loads(line, parse_float=str, parse_int=str)
                                           for line in jsonl.read_text(encoding="utf-8").splitlines()]}
    assert {int(r["k"]) for r in lines} == set(values)
    for row in lines:
        assert exactly(texts[int(row["k"])], values[int(row["k"])])
        assert row["lv"] == lists_by_key(values)[int(row["k"])]
    with open(csv_file, newline="", encoding="utf-8") as f:
        fields = list(csv.reader(f))
    assert fields[0] == ["k", "v", "lv"]
    assert {int(k): v for k, v, _lv in fields[1:]} == {k: texts[k] for k in values}

    shown = shell(cassandra, tmp_path, f"SELECT k, v FROM {decimals} WHERE p = 0;")
    assert shown.returncode == 0, shown.stderr
    cells = {}
    for line in shown.stdout.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 2 and parts[0].isdigit():
            cells[int(parts[0])] = parts[1]
    assert set(cells) == set(values)
    for k, text in cells.items():
        assert exactly(text, values[k]), (k, text)
