"""Every CQL type through the API on the real server: written with db.execute's bound parameters
(one `?` a column, and by `:name`), found again by a parameter of its own type, and read back by
to_pandas() with nulls, each value equal to what the driver reads; a wrong count, a wrong type and
an injection attempt through a parameter."""

from __future__ import annotations

import datetime
import uuid
from collections import namedtuple
from decimal import Decimal
from typing import Any

import pytest

import cqlsh_ext

pytestmark = pytest.mark.server

#: A column of each CQL type (every scalar, each kind of collection, a tuple, a UDT, a vector).
COLUMNS = {
    "k": "int", "ti": "tinyint", "si": "smallint", "bi": "bigint", "vi": "varint", "de": "decimal",
    "fl": "float", "db": "double", "bo": "boolean", "tx": "text", "asci": "ascii", "ts": "timestamp",
    "dt": "date", "tm": "time", "du": "duration", "id": "uuid", "tid": "timeuuid", "ip": "inet",
    "bl": "blob", "li": "list<int>", "st": "set<text>", "mp": "map<text, bigint>",
    "tu": "tuple<int, text>", "ad": "frozen<address>", "ve": "vector<float, 3>",
}

Address = namedtuple("Address", "street zip")


def values() -> dict[str, Any]:
    """A row of every type; 2**63-1 in the bigint: the value a float would round."""
    from cassandra.util import Duration

    return {
        "k": 1, "ti": -7, "si": 300, "bi": 2**63 - 1, "vi": 10**30, "de": Decimal("12.345"),
        "fl": 1.5, "db": 0.1, "bo": True, "tx": "naïve ✓ 'quoted'", "asci": "plain",
        "ts": datetime.datetime(2024, 2, 23, 2, 16, 41, 123000), "dt": datetime.date(1969, 7, 20),
        "tm": datetime.time(13, 45, 7, 250000), "du": Duration(1, 2, 3_000_000_007),
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "tid": uuid.UUID("5e1b0a3c-7a1b-11ee-b962-0242ac120002"), "ip": "10.0.0.7", "bl": b"\x00\x01raw",
        "li": [3, 1, 2], "st": {"b", "a"}, "mp": {"x": 2**40}, "tu": (5, "five"),
        "ad": {"street": "Main St", "zip": 12345}, "ve": [1.0, 2.5, -3.0],
    }


@pytest.fixture(scope="module")
def typed(cassandra, db) -> str:
    ks = cassandra.create_keyspace("apitypes")
    db.execute(f"CREATE TYPE {ks}.address (street text, zip int)")
    columns = ", ".join(f"{name} {cql}" for name, cql in COLUMNS.items())
    db.execute(f"CREATE TABLE {ks}.typed ({columns}, PRIMARY KEY (k))")
    return f"{ks}.typed"


@pytest.fixture
def rows_written(cassandra, typed: str) -> str:
    """The two rows test_parameters_of_every_cql_type_written_and_found writes through the API
    (the same values), written by the driver: a reading test stands alone, whichever runs first."""
    row = values()
    names = list(COLUMNS)
    session = cassandra.session()
    try:
        # (the type was made through the API's connection: this cluster's metadata may not have it yet)
        session.cluster.refresh_user_type_metadata(typed.split(".")[0], "address")
        session.cluster.register_user_type(typed.split(".")[0], "address", Address)
        markers = ", ".join("?" * len(names))
        insert = session.prepare(f"INSERT INTO {typed} ({', '.join(names)}) VALUES ({markers})")
        session.execute(insert, [Address(**row[n]) if n == "ad" else row[n] for n in names])
        session.execute(f"INSERT INTO {typed} (k, de, vi) VALUES (2, 1.5, -5)")
    finally:
        session.shutdown()
    return typed


def driver_rows(cassandra, table: str) -> dict[int, Any]:
    """The table as the driver reads it (the truth), by k."""
    session = cassandra.session()
    try:
        return {row.k: row for row in session.execute(f"SELECT * FROM {table}")}
    finally:
        session.shutdown()


def test_parameters_of_every_cql_type_written_and_found(cassandra, db, typed: str):
    row = values()
    names = list(COLUMNS)
    db.execute(f"TRUNCATE {typed}")  # what is found below is what this test wrote (rows_written aside)
    done = db.execute(f"INSERT INTO {typed} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                      [row[n] for n in names])
    assert isinstance(done, cqlsh_ext.Executed) and done.applied is None
    # by name, a row of nulls but its key and two columns
    db.execute(f"INSERT INTO {typed} (k, de, vi) VALUES (:k, :de, :vi)",
               {"k": 2, "de": Decimal("1.5"), "vi": -5})
    truth = driver_rows(cassandra, typed)
    stored = truth[1]
    assert stored.bi == 2**63 - 1 and stored.vi == 10**30 and stored.de == Decimal("12.345")
    assert stored.tx == row["tx"] and bytes(stored.bl) == row["bl"] and stored.ad.zip == 12345
    assert sorted(stored.st) == ["a", "b"] and dict(stored.mp) == {"x": 2**40}
    assert truth[2].de == Decimal("1.5") and truth[2].vi == -5 and truth[2].tx is None

    # Each scalar column found by a parameter of its own type (the server filters on it).
    for name in ("ti", "si", "bi", "vi", "de", "fl", "db", "bo", "tx", "asci", "ts", "dt", "tm", "id", "tid",
                 "ip", "bl"):
        found = db.query(f"SELECT k FROM {typed} WHERE {name} = ? ALLOW FILTERING", [row[name]])
        assert [r["k"] for r in found] == [1], name
    # A collection by what it contains, a tuple and a UDT by their whole value, the key by name.
    assert [r["k"] for r in db.query(f"SELECT k FROM {typed} WHERE li CONTAINS ? ALLOW FILTERING",
                                     [2])] == [1]
    assert [r["k"] for r in db.query(f"SELECT k FROM {typed} WHERE mp CONTAINS KEY ? ALLOW FILTERING",
                                     ["x"])] == [1]
    assert [r["tu"] for r in db.query(f"SELECT tu FROM {typed} WHERE k = :k", {"k": 1})] == [(5, "five")]


def test_a_wrong_count_or_type_is_one_line_and_sends_nothing(db, typed: str):
    with pytest.raises(cqlsh_ext.Error, match=r"^the statement has 1 marker \(\?\), 2 values given$"):
        db.query(f"SELECT k FROM {typed} WHERE k = ?", [1, 2])
    with pytest.raises(cqlsh_ext.Error, match=r"^the statement has 2 markers \(\?\), 0 values given$"):
        db.query(f"SELECT k FROM {typed} WHERE k = ? AND tx = ? ALLOW FILTERING")
    with pytest.raises(cqlsh_ext.Error, match=r"^no value for :k in params$"):
        db.query(f"SELECT k FROM {typed} WHERE k = :k", {})
    with pytest.raises(cqlsh_ext.Error, match=r"^no marker :kk in the statement \(its markers: :k\)$"):
        db.query(f"SELECT k FROM {typed} WHERE k = :k", {"k": 1, "kk": 2})
    with pytest.raises(cqlsh_ext.Error, match=r"^parameter 1 \(k\) is int: it takes an int, not str '1'$"):
        db.query(f"SELECT k FROM {typed} WHERE k = ?", ["1"])
    wrong = {
        "bo": (1, r"^parameter 1 \(bo\) is boolean: it takes a bool, not int 1$"),
        "bi": (True, r"^parameter 1 \(bi\) is bigint: it takes an int, not bool True$"),
        "id": ("12345678-1234-5678-1234-567812345678", r"^parameter 1 \(id\) is uuid: it takes a uuid.UUID"),
        "li": ([1, "2"], r"^parameter 1 \(li\) is list<int>: item 2: it takes an int, not str '2'$"),
        "ti": (300, r"^parameter 1 \(ti\) is tinyint: int 300 does not fit it"),
    }
    for name, (value, message) in wrong.items():
        with pytest.raises(cqlsh_ext.Error, match=message):
            db.execute(f"UPDATE {typed} SET {name} = ? WHERE k = 3", [value])
    assert list(db.query(f"SELECT k FROM {typed} WHERE k = 3")) == []  # nothing was written


def test_an_injection_through_a_parameter_stays_a_value(cassandra, db, typed: str, orders):
    attempt = "x' OR k = 1 ALLOW FILTERING; DROP TABLE typed; --"
    assert list(db.query(f"SELECT k FROM {typed} WHERE tx = ? ALLOW FILTERING", [attempt])) == []
    db.execute(f"INSERT INTO {typed} (k, tx) VALUES (?, ?)", [4, attempt])
    assert [r["tx"] for r in db.query(f"SELECT tx FROM {typed} WHERE k = ?", [4])] == [attempt]
    assert driver_rows(cassandra, typed)[4].tx == attempt  # stored as given; the table is there
    # A payload condition's parameter is a value too: compared, never parsed.
    found = db.query(f"SELECT pk, ck FROM {orders.name} WHERE pk = ? AND data.status = ? ALLOW FILTERING",
                     ["p1", "PAID' OR data.status = 'NEW"])
    assert list(found) == []


def normal(value: Any, cql: str) -> Any:
    """A driver's value as its Arrow column gives it back (to_pylist of the pandas column)."""
    if value is None:
        return None
    if cql == "timestamp":
        return value.replace(tzinfo=datetime.timezone.utc)
    if cql == "varint":
        return Decimal(value)
    if cql == "date":
        return value.date() if hasattr(value, "date") else datetime.date.fromordinal(
            datetime.date(1970, 1, 1).toordinal() + value.days_from_epoch)
    if cql == "time":
        return datetime.time(value.hour, value.minute, value.second, value.nanosecond // 1000)
    if cql == "duration":
        return {"months": value.months, "days": value.days, "nanoseconds": value.nanoseconds}
    if cql == "blob":
        return bytes(value)
    if cql.startswith("set"):
        return sorted(value)
    if cql.startswith("map"):
        return list(value.items())
    if cql.startswith("tuple"):
        return {str(i): v for i, v in enumerate(value)}
    if cql.startswith("frozen<address"):
        return {"street": value.street, "zip": value.zip}
    if cql.startswith(("list", "vector")):
        return list(value)
    return value


def test_to_pandas_keeps_every_value_of_every_type_with_nulls(cassandra, db, rows_written: str):
    import pandas as pd

    typed = rows_written
    frame = db.query(f"SELECT * FROM {typed} WHERE k IN (1, 2)").to_pandas()
    truth = driver_rows(cassandra, typed)
    uuids = {"id", "tid"}  # pandas has no dtype for Arrow's uuid: uuid.UUID objects
    assert all(isinstance(frame.dtypes[n], pd.ArrowDtype) for n in frame.columns if n not in uuids)
    assert all(str(frame.dtypes[n]) == "object" for n in uuids)
    assert str(frame.dtypes["bi"]) == "int64[pyarrow]"  # not float64: the null row does not widen it
    by_key = {int(k): i for i, k in enumerate(frame["k"].tolist())}
    for name, cql in COLUMNS.items():
        column = frame[name]  # the values the frame holds
        got = column.tolist() if name in uuids else column.array.__arrow_array__().to_pylist()
        for k in (1, 2):
            want = normal(getattr(truth[k], name), cql)
            value = got[by_key[k]]
            if name == "bl":  # a blob column: its payload here (raw bytes are no known format)
                value = frame["bl:stored"].array.__arrow_array__().to_pylist()[by_key[k]]
            if cql == "float" and value is not None:
                value = float(value)
            assert value == want, (name, k, value, want)
    assert frame["bi"].iloc[by_key[1]] == 2**63 - 1 and pd.isna(frame["bi"].iloc[by_key[2]])
    numpy = db.query(f"SELECT k, bi FROM {typed} WHERE k IN (1, 2)").to_pandas(types_mapper=None)
    assert str(numpy.dtypes["bi"]) == "float64"  # pyarrow's own default, when asked for


def test_polars_keeps_the_types(db, rows_written: str):
    import polars as pl

    typed = rows_written
    frame = db.query(f"SELECT k, bi, vi, de, ts, dt, id FROM {typed} WHERE k IN (1, 2)").to_polars()
    assert frame.schema["bi"] == pl.Int64 and frame.schema["de"] == pl.Decimal(38, 3)
    row = frame.filter(pl.col("k") == 1).row(0, named=True)
    assert row["bi"] == 2**63 - 1 and row["vi"] == Decimal(10**30) and row["de"] == Decimal("12.345")
    assert row["dt"] == datetime.date(1969, 7, 20)
