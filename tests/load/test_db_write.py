"""db.write (docs/load.md, "From Python") against the real server: the same rows from a pyarrow Table,
a RecordBatchReader, a pandas and a polars DataFrame store the same bytes; a preview writes
nothing; db.undo of the result leaves no row; an answer's Arrow (db.query(...).to_arrow(): each
blob's six columns) loads back each value in its own label, byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from cqlsh_ext.encode.chain import encode

CAP = 4 << 20
DOCS = [{"sku": f"S{i}", "qty": i, "price": i + 0.5, "tags": ["a", "b"][: i % 3], "gift": i % 2 == 0}
        for i in range(12)]


def compact(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_api")


def stored(db: Any, table: str) -> dict[int, tuple[bytes, str | None]]:
    return {r.id: (bytes(r.data), r.note) for r in db.session.execute(f"SELECT id, data, note FROM {table}")}


def frames() -> dict[str, Any]:
    ids = list(range(len(DOCS)))
    notes = [f"n{i}" if i % 4 else None for i in ids]
    table = pa.table({"id": pa.array(ids, pa.int32()), "data": DOCS, "note": notes})
    return {
        "arrow": table,
        "reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=5)),
        "pandas": pd.DataFrame({"id": ids, "data": DOCS, "note": notes}),
        "polars": pl.DataFrame({"id": ids, "data": DOCS, "note": notes}),
    }


def test_arrow_a_stream_pandas_and_polars_store_the_same_bytes(db, tmp_path) -> None:
    expected = {i: (encode("zstd>json", compact(doc), CAP).value, f"n{i}" if i % 4 else None)
                for i, doc in enumerate(DOCS)}
    for name, data in frames().items():
        db.execute(f"CREATE TABLE w_{name} (id int PRIMARY KEY, data blob, note text)")
        if name != "reader":  # a stream is read once: its preview would leave nothing to write
            preview = db.write(f"w_{name}", data, encode={"data": "zstd>json"})
            assert (preview.confirmed, preview.new) == (False, 12)
            assert preview.chains == {"data": {"zstd>json": 12}}
            assert preview.journal is None and stored(db, f"w_{name}") == {}
        result = db.write(f"w_{name}", data, encode={"data": "zstd>json"}, confirm=True)
        assert (result.confirmed, result.written, result.new) == (True, 12, 12), result.text
        assert result.refused == {}
        assert stored(db, f"w_{name}") == expected, name
    undone = db.undo(result, confirm=True)
    assert undone.written == 24 and stored(db, "w_polars") == {}  # 12 rows' two cells; no row left


def test_an_answers_arrow_loads_each_value_in_its_own_label(db) -> None:
    chains = ["snappy/framed>json", "zstd>msgpack", "gzip>json", "lz4>cbor", "json"]
    db.execute("CREATE TABLE src (id int PRIMARY KEY, data blob, note text)")
    db.execute("CREATE TABLE back (id int PRIMARY KEY, data blob, note text)")
    insert = db.session.prepare("INSERT INTO src (id, data, note) VALUES (?, ?, ?)")
    for i, doc in enumerate(DOCS):
        db.session.execute(insert, (i, encode(chains[i % len(chains)], compact(doc), CAP).value, "x"))
    answer = db.query("SELECT id, data, note FROM src").to_arrow()
    assert "data:label" in answer.column_names
    result = db.write("back", answer, confirm=True)
    assert result.written == 12 and sum(result.chains["data"].values()) == 12, result.text
    assert stored(db, "back") == stored(db, "src")


@pytest.mark.parametrize(("name", "key"), [("composite", "PRIMARY KEY ((a, b))"),
                                           ("composite_clustered", "PRIMARY KEY ((a, b), c)"),
                                           ("two_clustering", "PRIMARY KEY (a, b, c)"),
                                           ("one_clustering", "PRIMARY KEY (a, c)")])
def test_rows_are_found_by_their_key_in_every_shape_of_primary_key(db, name, key) -> None:
    """The rows a load reads first (what it overwrites, what it holds already) are found by their
    whole key: a composite partition key alone or with clustering, clustering of two columns."""
    db.execute(f"CREATE TABLE {name} (a int, b text, c int, data blob, {key})")
    rows = [{"a": i % 3, "b": f"b{i % 2}", "c": i, "data": {"v": i}} for i in range(24)]
    if key == "PRIMARY KEY ((a, b))":  # c is no key column there, and an int: not loaded
        rows = [{"a": i, "b": f"b{i % 2}", "data": {"v": i}} for i in range(24)]
    first = db.write(name, pd.DataFrame(rows), encode={"data": "zstd>json"}, confirm=True)
    assert (first.new, first.overwritten, first.unchanged) == (24, 0, 0), first.text
    again = db.write(name, pd.DataFrame(rows), encode={"data": "zstd>json"}, confirm=True)
    assert (again.new, again.overwritten, again.unchanged, again.written) == (0, 0, 24, 0), again.text
    changed = [{**row, "data": {"v": -i}} if i % 2 else row for i, row in enumerate(rows)]
    third = db.write(name, pd.DataFrame(changed), encode={"data": "zstd>json"}, confirm=True)
    assert (third.new, third.overwritten, third.unchanged) == (0, 12, 12), third.text
    db.undo(third, confirm=True)
    db.undo(first, confirm=True)
    assert list(db.session.execute(f"SELECT * FROM {name}")) == []
