"""Every CQL type to its Arrow type (docs/export.md, "Types"): a table with one column of each,
exported to Parquet by the real binary, read back with pyarrow and DuckDB."""

from __future__ import annotations

import datetime
import gzip
import json
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
import zstandard

from tests.payload_select.conftest import shell

from .readback import closing_line, duckdb_rows, parquet_rows

#: A blob inside a collection or a UDT: the struct a top-level blob's six columns make, its payload
#: typed from the sample (here the order documents: a record of two strings).
BLOB_STRUCT = pa.struct([("payload", pa.struct([("order", pa.string()), ("status", pa.string())])),
                         ("label", pa.string()), ("kind", pa.string()), ("note", pa.string()),
                         ("stored", pa.binary()), ("confidence", pa.string())])
BLOB_DUCK = ('STRUCT(payload STRUCT("order" VARCHAR, status VARCHAR), "label" VARCHAR, kind VARCHAR, '
             'note VARCHAR, "stored" BLOB, confidence VARCHAR)')
DOC = b'{"order": "ORD-1", "status": "NEW"}'

COLUMNS = {
    "k": ("int", pa.int32(), "INTEGER"),
    "ti": ("tinyint", pa.int8(), "TINYINT"),
    "si": ("smallint", pa.int16(), "SMALLINT"),
    "bi": ("bigint", pa.int64(), "BIGINT"),
    "vi": ("varint", pa.decimal128(38, 0), "DECIMAL(38,0)"),
    "de": ("decimal", pa.decimal128(38, 3), "DECIMAL(38,3)"),
    "fl": ("float", pa.float32(), "FLOAT"),
    "db": ("double", pa.float64(), "DOUBLE"),
    "bo": ("boolean", pa.bool_(), "BOOLEAN"),
    "tx": ("text", pa.string(), "VARCHAR"),
    "asci": ("ascii", pa.string(), "VARCHAR"),
    "ts": ("timestamp", pa.timestamp("ms", tz="UTC"), "TIMESTAMP WITH TIME ZONE"),
    "dt": ("date", pa.date32(), "DATE"),
    "tm": ("time", pa.time64("ns"), "TIME_NS"),
    "du": ("duration", pa.struct([("months", pa.int32()), ("days", pa.int32()), ("nanoseconds", pa.int64())]),
           "STRUCT(\"months\" INTEGER, \"days\" INTEGER, nanoseconds BIGINT)"),
    "id": ("uuid", pa.uuid(), "UUID"),
    "tid": ("timeuuid", pa.uuid(), "UUID"),
    "ip": ("inet", pa.string(), "VARCHAR"),
    "li": ("list<int>", pa.list_(pa.int32()), "INTEGER[]"),
    "st": ("set<text>", pa.list_(pa.string()), "VARCHAR[]"),
    "mp": ("map<text, bigint>", pa.map_(pa.string(), pa.int64()), "MAP(VARCHAR, BIGINT)"),
    "tu": ("tuple<int, text>", pa.struct([("0", pa.int32()), ("1", pa.string())]),
           'STRUCT("0" INTEGER, "1" VARCHAR)'),
    "ad": ("frozen<address>", pa.struct([("street", pa.string()), ("zip", pa.int32())]),
           "STRUCT(street VARCHAR, zip INTEGER)"),
    "ve": ("vector<float, 3>", pa.list_(pa.float32(), 3), "FLOAT[]"),
    "nested": ("frozen<list<frozen<map<text, varint>>>>",
               pa.list_(pa.map_(pa.string(), pa.decimal128(38, 0))), "MAP(VARCHAR, DECIMAL(38,0))[]"),
    "lb": ("list<blob>", pa.list_(BLOB_STRUCT), BLOB_DUCK + "[]"),
    "mb": ("map<text, blob>", pa.map_(pa.string(), BLOB_STRUCT), f"MAP(VARCHAR, {BLOB_DUCK})"),
    "ub": ("frozen<packet>", pa.struct([("id", pa.int32()), ("body", BLOB_STRUCT)]),
           f"STRUCT(id INTEGER, body {BLOB_DUCK})"),
}

TS = datetime.datetime(2024, 2, 23, 2, 16, 41, 123000)
ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
TID = uuid.UUID("5e1b0a3c-7a1b-11ee-b962-0242ac120002")


@pytest.fixture(scope="module")
def typed_table(cassandra):
    from cassandra.util import Duration

    ks = cassandra.create_keyspace("extypes")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE address (street text, zip int)")
    session.execute("CREATE TYPE packet (id int, body blob)")
    columns = ", ".join(f"{name} {cql}" for name, (cql, _a, _d) in COLUMNS.items())
    session.execute(f"CREATE TABLE typed ({columns}, PRIMARY KEY (k))")
    names = list(COLUMNS)
    insert = session.prepare(f"INSERT INTO typed ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})")
    from collections import namedtuple

    address = namedtuple("address", "street zip")
    packet = namedtuple("packet", "id body")
    cluster = session.cluster
    cluster.register_user_type(ks, "address", address)
    cluster.register_user_type(ks, "packet", packet)
    full = {
        "k": 1, "ti": -7, "si": 300, "bi": -(2**62), "vi": 10**20, "de": Decimal("12.345"),
        "fl": 1.5, "db": 0.1, "bo": True, "tx": "naïve ✓", "asci": "plain", "ts": TS,
        "dt": datetime.date(1969, 7, 20), "tm": datetime.time(13, 45, 7, 250000),
        "du": Duration(1, 2, 3_000_000_007), "id": ID, "tid": TID, "ip": "10.0.0.7",
        "li": [3, 1, 2], "st": {"b", "a"}, "mp": {"x": 2**40}, "tu": (5, "five"),
        "ad": address("Main St", 12345), "ve": [1.0, 2.5, -3.0], "nested": [{"big": 10**30}],
        "lb": [gzip.compress(DOC)], "mb": {"a": zstandard.compress(DOC)}, "ub": packet(7, gzip.compress(DOC)),
    }
    empty = {"k": 2, "de": Decimal("1.5"), "vi": -5}
    session.execute(insert, [full.get(n) for n in names])
    session.execute(insert, [empty.get(n) for n in names])
    session.shutdown()
    return f"{ks}.typed", full


def test_every_cql_type_keeps_its_type(cassandra, typed_table, home):
    table, full = typed_table
    target = home / "typed.parquet"
    out = shell(cassandra, home, f"COPY (SELECT * FROM {table}) TO '{target}'")
    assert out.returncode == 0, out.stderr
    assert closing_line(out.stdout).startswith(
        f"COPY (SELECT ...): 2 rows written to {target} (Parquet, zstd")

    schema, rows = parquet_rows(target)
    for name, (_cql, arrow, _duck) in COLUMNS.items():
        assert schema.field(name).type == arrow, name
    row = next(r for r in rows if r["k"] == 1)
    assert row["vi"] == Decimal(10**20)  # past 64 bits: decimal128(38, 0), exact
    assert row["de"] == Decimal("12.345")  # the column's scale: the largest in the first row group
    assert row["ts"] == TS.replace(tzinfo=datetime.timezone.utc)
    assert row["dt"] == datetime.date(1969, 7, 20)
    assert row["tm"] == datetime.time(13, 45, 7, 250000)
    assert row["du"] == {"months": 1, "days": 2, "nanoseconds": 3_000_000_007}
    assert row["id"] == ID and row["tid"] == TID and row["ip"] == "10.0.0.7"  # arrow.uuid: UUIDs
    assert row["li"] == [3, 1, 2] and row["st"] == ["a", "b"] and row["mp"] == [("x", 2**40)]
    assert row["tu"] == {"0": 5, "1": "five"} and row["ad"] == {"street": "Main St", "zip": 12345}
    assert row["ve"] == [1.0, 2.5, -3.0] and row["nested"] == [[("big", Decimal(10**30))]]
    assert (row["ti"], row["si"], row["bi"], row["fl"], row["db"], row["bo"], row["tx"], row["asci"]) == \
        (-7, 300, -(2**62), 1.5, 0.1, True, "naïve ✓", "plain")
    # a blob inside a collection or a UDT: the six parts a top-level blob has, its payload typed
    doc = json.loads(DOC)
    assert row["lb"] == [{"payload": doc, "label": "gzip>json", "kind": "text", "note": None, "stored": None,
                          "confidence": "confident"}]
    assert row["mb"] == [("a", {"payload": doc, "label": "zstd>json", "kind": "text", "note": None,
                                "stored": None, "confidence": "confident"})]
    assert row["ub"] == {"id": 7, "body": {"payload": doc, "label": "gzip>json", "kind": "text", "note": None,
                                           "stored": None, "confidence": "confident"}}
    other = next(r for r in rows if r["k"] == 2)
    assert other["de"] == Decimal("1.5") and other["vi"] == -5
    assert all(other[n] is None for n in COLUMNS if n not in ("k", "de", "vi"))
    assert all(other[f"{n}:note"] is None for n in ("de", "vi", "nested", "lb", "mb", "ub"))

    types, duck = duckdb_rows(target, "* EXCLUDE (ts, tm), epoch_ms(ts) AS ts_ms, "
                                      "CAST(tm AS TIME) AS tm_local")
    for name, (_cql, _arrow, duck_type) in COLUMNS.items():
        assert types[name] == duck_type, name
    first = next(r for r in duck if r["k"] == 1)
    assert first["ts_ms"] == int(TS.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    assert first["vi"] == Decimal(10**20) and first["de"] == Decimal("12.345")
    assert first["mp"] == {"x": 2**40} and first["ad"] == {"street": "Main St", "zip": 12345}
    assert first["du"] == {"months": 1, "days": 2, "nanoseconds": 3_000_000_007}
    assert first["id"] == ID and first["ve"] == [1.0, 2.5, -3.0]
    assert first["lb"][0]["payload"] == {"order": "ORD-1", "status": "NEW"}


def test_a_decimal_s_scale_is_the_sample_s_and_a_varint_past_38_digits_is_null_with_its_note(
        cassandra, home):
    """A decimal column's scale is read from the leading sample (every row here: the largest, 7);
    a varint is decimal128(38, 0) by its type, and a value past 38 digits is null there with its
    digits in n:note, counted on the closing line: the column stays a number."""
    ks = cassandra.create_keyspace("exdec")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE d (k int PRIMARY KEY, v decimal, n varint)")
    values = {k: (Decimal(k) / 4, k) for k in range(1, 40)}  # scales 0 to 2
    values[40] = (Decimal("1.0000001"), 10**40)  # a scale of 7, a varint past 38 digits
    for k, (v, n) in values.items():
        session.execute("INSERT INTO d (k, v, n) VALUES (%s, %s, %s)", (k, v, n))
    session.shutdown()
    target = home / "d.parquet"
    out = shell(cassandra, home, f"COPY (SELECT k, v, n FROM {ks}.d) TO '{target}'")
    assert out.returncode == 0, out.stderr
    schema, rows = parquet_rows(target)
    got = {r["k"]: r for r in rows}
    assert {k: r["v"] for k, r in got.items()} == {k: v for k, (v, _n) in values.items()}
    assert schema.field("v").type == pa.decimal128(38, 7)
    assert schema.field("n").type == pa.decimal128(38, 0)
    assert {k: r["n"] for k, r in got.items() if k != 40} == \
        {k: n for k, (_v, n) in values.items() if k != 40}
    assert got[40]["n"] is None and got[40]["n:note"] == f"did not fit decimal128(38, 0): {10**40}"
    assert "n: 1 value did not fit the column's type (null there; n:note says what each was)" in \
        closing_line(out.stdout)


def test_a_varint_past_pythons_4300_digits_is_written_digit_for_digit_and_one_past_100000_refused(
        cassandra, home):
    """A CQL varint holds any integer: one of 5,001 digits is written exactly (a JSON number in JSON
    Lines; Parquet's n:exact and n:note), where Python's str() refuses past 4,300 by default; one of
    120,000 digits (minutes of quadratic work in decimal) is refused in one line, no file left."""
    import sys

    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # the test's own integers, written and read back whole
    try:
        _varints_exported(cassandra, home)
    finally:
        sys.set_int_max_str_digits(before)


def _varints_exported(cassandra, home) -> None:  # type: ignore[no-untyped-def]
    ks = cassandra.create_keyspace("exlong")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE d (k int PRIMARY KEY, n varint)")
    long = int("12345678901234567890" * 250 + "1")  # the oracle: 5,001 digits
    for k, n in ((1, long), (2, -long), (3, 12)):
        session.execute("INSERT INTO d (k, n) VALUES (%s, %s)", (k, n))
    lines, parquet = home / "d.jsonl", home / "d.parquet"
    for target in (lines, parquet):
        out = shell(cassandra, home, f"COPY (SELECT k, n FROM {ks}.d) TO '{target}'")
        assert out.returncode == 0 and "3 rows written" in out.stdout, out.stdout + out.stderr
    assert {row["k"]: row["n"] for row in map(json.loads, lines.read_text().splitlines())} == \
        {1: long, 2: -long, 3: 12}
    _, rows = parquet_rows(parquet)
    got = {r["k"]: r for r in rows}
    assert got[3]["n"] == 12
    for k, n in ((1, long), (2, -long)):
        assert got[k]["n"] is None and got[k]["n:exact"] == str(n), k
        assert got[k]["n:note"].startswith(f"did not fit decimal128(38, 0): {str(n)[:1000]}"), k  # (cut)

    from cassandra import WriteTimeout

    for attempt in range(3):  # a 50 KB value on a loaded test server can time out; the write is idempotent
        try:
            session.execute("INSERT INTO d (k, n) VALUES (4, %s)", (10 ** 120_000 - 1,), timeout=60)
            break
        except WriteTimeout:
            if attempt == 2:
                raise
    session.shutdown()
    for target in (home / "refused.jsonl", home / "refused.parquet"):
        out = shell(cassandra, home, f"COPY (SELECT k, n FROM {ks}.d) TO '{target}'")
        said = [line for line in out.stderr.splitlines() if line.strip() and not line.startswith(
            ("Warning: Using a password", "Recommendation: use the credentials"))]
        assert said == ["COPY (SELECT ...): a value read is an integer of about 120,000 digits, more than "
                        f"the 100,000 cqlsh-ext writes in decimal; nothing written to {target}"], out.stderr
        assert not target.exists()
