"""The dict rows are to_arrow()'s rows (docs/api.md, "Rows"): over a table of every CQL type with
nulls, payloads of differing keys, a value that does not fit its path's type and undecodable
blobs, `records(details=True)` holds the same columns and values as `to_arrow().to_pylist()`, row
for row, and `records()` the answer's columns of them; a GROUP BY's undecodable group is null with
its note in both. The values are checked apart from the code under test too: the CQL columns
against the driver's own reading, the payloads against the documents written, the groups against
the documents counted."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from typing import Any

import pytest

from .test_api_types import COLUMNS, Address, driver_rows, normal, values

pytestmark = pytest.mark.server

#: k -> the blob written: a gzip'd and a plain JSON document (other keys), undecodable bytes, a
#: document whose `n` is text where the others' is a number, none (a null blob).
DOCUMENTS: dict[int, dict[str, Any] | None] = {
    1: {"status": "PAID", "n": 1.5, "tags": ["a", "b"]},
    3: None,
    4: {"status": "NEW", "extra": {"x": 1}},
    5: None,
    6: {"status": "PAID", "n": "many"},
}
UNDECODABLE = {3: b"\x00\x01raw", 5: bytes(range(200, 256))}
#: The CQL types whose Python values the driver and pyarrow spell differently (docs/api.md): a
#: timestamp naive or in UTC, a Duration or its parts, a tuple or its items by position, a UDT or
#: its fields. The same value either way (normal() is the one's in the other's spelling).
SPELT_APART = {"ts", "du", "tu", "ad"}
#: A GROUP BY key's note for the group of the values no reading could read.
UNDECODABLE_GROUP = "undecodable: the group of the values no reading could read"


def _blob(k: int) -> bytes | None:
    if k in UNDECODABLE:
        return UNDECODABLE[k]
    doc = DOCUMENTS.get(k)
    if doc is None:
        return None
    text = json.dumps(doc).encode()
    return gzip.compress(text, mtime=0) if k == 1 else text


@pytest.fixture(scope="module")
def table(cassandra) -> str:
    """Every CQL type (tests/api/test_api_types.py's columns) in rows 1 to 6: row 2 all null but
    its key and two columns, the others every value; the blob column `bl` as DOCUMENTS says."""
    ks = cassandra.create_keyspace("apirows")
    session = cassandra.session()
    try:
        session.execute(f"CREATE TYPE {ks}.address (street text, zip int)")
        session.execute(f"CREATE TABLE {ks}.t ({', '.join(f'{n} {t}' for n, t in COLUMNS.items())}, "
                        "PRIMARY KEY (k))")
        session.cluster.register_user_type(ks, "address", Address)
        names = list(COLUMNS)
        markers = ", ".join("?" * len(names))
        insert = session.prepare(f"INSERT INTO {ks}.t ({', '.join(names)}) VALUES ({markers})")
        for k in (1, 3, 4, 5, 6):
            row = {**values(), "k": k, "bl": _blob(k)}
            session.execute(insert, [Address(**row[n]) if n == "ad" else row[n] for n in names])
        session.execute(f"INSERT INTO {ks}.t (k, de, vi) VALUES (2, 1.5, -5)")
    finally:
        session.shutdown()
    return f"{ks}.t"


def _same_rows(db: Any, statement: str, key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """records(details=True) and to_arrow().to_pylist() of `statement` (two readings), each row
    equal, field for field (a CQL value of SPELT_APART as normal() spells it); records() the
    answer's columns of them. Both, by `key`."""
    detailed = list(db.query(statement).records(details=True))
    answer = db.query(statement)
    names = [c.name for c in answer.columns]
    plain = list(db.query(statement))
    table = answer.to_arrow().to_pylist()
    assert len(detailed) == len(plain) == len(table)
    order = sorted(range(len(table)), key=lambda i: repr(table[i][key]))
    detailed = sorted(detailed, key=lambda r: repr(r[key]))
    plain = sorted(plain, key=lambda r: repr(r[key]))
    table = [table[i] for i in order]
    for got, short, want in zip(detailed, plain, table, strict=True):
        assert list(got) == list(want) and list(short) == names, statement
        for name in want:
            value = normal(got[name], COLUMNS[name]) if name in SPELT_APART else got[name]
            assert value == want[name], (statement, name, got[name], want[name])
        assert short == {name: got[name] for name in names}
    return detailed, table


def test_records_are_to_arrow_s_rows_over_every_cql_type(cassandra, db, table: str):
    truth = driver_rows(cassandra, table)  # the driver's reading, apart from the API
    detailed, _ = _same_rows(db, f"SELECT * FROM {table}", "k")
    by_k = {row["k"]: row for row in detailed}
    assert sorted(by_k) == sorted(truth)
    for k, row in by_k.items():
        for name in COLUMNS:
            if name != "bl":
                assert row[name] == getattr(truth[k], name), (k, name)
        doc = DOCUMENTS.get(k)
        if k in UNDECODABLE:  # no payload: its bytes as stored, and why
            assert row["bl"] is None and row["bl:kind"] == "unknown" and row["bl:note"], row
            assert row["bl:stored"] == UNDECODABLE[k]
        elif doc is None:
            assert row["bl"] is None and row["bl:kind"] is None and row["bl:stored"] is None
        else:  # the document, every key the sample saw (None where it has none); `n`, a number
            # here and text there, is JSON text (docs/export.md, Types)
            assert row["bl:label"] == ("gzip>json" if k == 1 else "json"), row
            assert {key: value for key, value in row["bl"].items() if value is not None} == \
                {key: json.dumps(value) if key == "n" else value for key, value in doc.items()}
    # A payload's struct holds every key the sample saw: a key a document lacks is None there.
    keys = {key for doc in DOCUMENTS.values() if doc for key in doc}
    assert set(by_k[4]["bl"]) == keys and by_k[4]["bl"]["extra"] == {"x": 1} and by_k[4]["bl"]["tags"] is None


def test_paths_and_a_misfit_are_the_table_s(db, table: str):
    detailed, _ = _same_rows(db, f"SELECT k, bl.status, bl.n, bl.tags FROM {table}", "k")
    by_k = {row["k"]: row for row in detailed}
    for k, doc in DOCUMENTS.items():
        row = by_k[k]
        if doc is None:
            assert (row["bl.status"], row["bl.n"], row["bl.tags"]) == (None, None, None), row
            continue
        assert row["bl.status"] == doc["status"] and row["bl.tags"] == doc.get("tags")
    assert by_k[1]["bl.n"] == 1.5 and by_k[1]["bl.n:note"] is None
    # `n` is a number in the sample; a document's text there is null in the table, and in the row,
    # its note saying what it was.
    assert by_k[6]["bl.n"] is None and by_k[6]["bl.n:note"] == "did not fit double: \"many\"", by_k[6]


def test_the_undecodable_group_is_null_with_its_note(db, table: str):
    statement = f"SELECT bl.status, count(*) FROM {table} GROUP BY bl.status ALLOW FILTERING"
    detailed, _ = _same_rows(db, statement, "count")
    groups = {(row["bl.status"], row["bl.status:note"]): row["count"] for row in detailed}
    counted = Counter(doc["status"] if doc else None for k, doc in DOCUMENTS.items() if k not in UNDECODABLE)
    counted[None] += 1  # row 2: no blob
    want = {(status, None): n for status, n in counted.items()}
    want[(None, UNDECODABLE_GROUP)] = len(UNDECODABLE)
    assert groups == want
    # Without details: the undecodable group's key is null too, its count beside it.
    rows = list(db.query(statement))
    assert sorted((r["bl.status"] or "", r["count"]) for r in rows) == \
        sorted((status or "", n) for (status, _), n in want.items())


#: 10000-01-01 in milliseconds: a timestamp pyarrow's Python values (datetime) do not hold.
PAST_9999 = 253402300800000


@pytest.fixture(scope="module")
def nested(cassandra) -> str:
    """Blobs inside a map and a UDT: a document in gzip, undecodable bytes, an empty blob (row 1);
    a UDT's blob beside a timestamp past year 9999, which pyarrow has no Python value for (row 2)."""
    ks = cassandra.create_keyspace("apinested")
    session = cassandra.session(ks)
    try:
        session.execute('CREATE TYPE doc ("Field Name" text, data blob, at timestamp)')
        session.execute("CREATE TABLE t (k int PRIMARY KEY, mz map<text, blob>, ud frozen<doc>)")
        session.execute("INSERT INTO t (k, mz, ud) VALUES (1, %s, {\"Field Name\": 'x', data: %s})",
                        ({"g": _blob(1), "raw": UNDECODABLE[3], "empty": b""}, _blob(1)))
        session.execute(f"INSERT INTO t (k, ud) VALUES (2, {{data: 0x01, at: {PAST_9999}}})")
    finally:
        session.shutdown()
    return f"{ks}.t"


def test_a_blob_inside_a_map_or_a_udt_is_decoded_in_the_rows_as_in_the_table(cassandra, db, nested: str):
    """The rows are the table's rows for a CQL column holding blobs too: each blob decoded (its
    payload, label, kind, note, stored bytes where it does not decode), not the driver's bytes."""
    _same_rows(db, f"SELECT k, mz, ud FROM {nested} WHERE k = 1", "k")  # field for field, the table's
    row, past = sorted(db.query(f"SELECT k, mz, ud FROM {nested}"), key=lambda r: r["k"])
    mz, ud = dict(row["mz"]), row["ud"]
    assert mz["g"]["payload"] == DOCUMENTS[1] and mz["g"]["label"] == "gzip>json", mz
    assert ud["Field Name"] == "x" and ud["data"]["payload"] == DOCUMENTS[1], ud
    session = cassandra.session()
    try:  # the stored bytes as the driver reads them; row 2's timestamp as the server's integer
        truth = session.execute(f"SELECT mz FROM {nested} WHERE k = 1").one()
        at, data = session.execute(f"SELECT blobAsBigint(timestampAsBlob(ud.at)), ud.data FROM {nested} "
                                   "WHERE k = 2").one()
    finally:
        session.shutdown()
    assert mz["raw"]["payload"] is None and mz["raw"]["stored"] == truth.mz["raw"] == UNDECODABLE[3]
    assert mz["empty"]["stored"] == truth.mz["empty"] == b""
    # Where pyarrow has no Python value inside, the row holds the driver's, as for any CQL column.
    assert (past["ud"].at, past["ud"].data) == (at, data) == (PAST_9999, b"\x01"), past
