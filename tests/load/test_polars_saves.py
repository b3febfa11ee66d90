"""What the API hands polars and pyarrow, they save with their own writers (docs/api.md, "polars";
docs/export.md, "Types"): documents where a key is null in every document (typed JSON text) and a
place holds two sorts (JSON text too), read by `to_polars()`, `db.scan(...)`, `to_arrow()` and from
the shell's Parquet export, written by polars' `write_parquet` and `sink_parquet` and pyarrow's
`Table.from_pylist` with the answer's own schema, read back and loaded back untouched: nothing
written. JSON text is a plain string there, its field marked (arrow_types.JSON_TEXT_METADATA):
polars 2.1 panicked writing Arrow's `arrow.json` inside a struct (a Rust PanicException that
`except Exception` does not catch), could neither compare nor cast it at the top, and pyarrow's
from_pylist refused it inside a struct (ArrowNotImplementedError)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from cqlsh_ext.payload.arrow_types import is_json_text
from tests.payload_select.conftest import shell

ROWS = 8


def document(i: int) -> dict[str, Any]:
    return {"id": i, "z": None, "code": 7 if i % 2 else "A7", "n": i}


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_polars_saves")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    s.execute("CREATE TABLE docs (id int PRIMARY KEY, data blob)")
    insert = s.prepare("INSERT INTO docs (id, data) VALUES (?, ?)")
    for i in range(ROWS):
        s.execute(insert, (i, zstandard.ZstdCompressor().compress(json.dumps(document(i)).encode())))
    yield s
    s.shutdown()


def test_to_polars_writes_parquet_and_loads_back_untouched(session, db, tmp_path) -> None:
    frame = db.query("SELECT * FROM docs").to_polars()
    path = tmp_path / "docs.parquet"
    frame.write_parquet(path)
    back = pl.read_parquet(path)
    assert back.height == ROWS
    assert sorted(back["data"].struct.field("code").to_list()) == sorted(
        json.dumps(document(i)["code"]) for i in range(ROWS))  # JSON text, a string
    preview = db.write("docs", back)
    assert (preview.new, preview.overwritten, preview.unchanged, preview.refused) == (0, 0, ROWS, {}), \
        preview.text


def test_a_polars_scan_sinks_parquet(session, db, tmp_path) -> None:
    path = tmp_path / "scanned.parquet"
    db.scan("SELECT * FROM docs").sink_parquet(path)
    back = pl.read_parquet(path)
    assert sorted(back["id"].to_list()) == list(range(ROWS))
    assert back["data"].struct.field("z").to_list() == [None] * ROWS


def test_a_parquet_export_is_read_compared_and_saved_by_polars(session, db, cassandra, ks, tmp_path) -> None:
    """`COPY ... TO 'x.parquet'` read by polars' own read_parquet: the JSON-text column compares as
    a string, the frame writes Parquet again and loads back untouched."""
    path = tmp_path / "x.parquet"
    out = shell(cassandra, tmp_path, f"COPY (SELECT id, data, data.z FROM {ks}.docs) TO '{path}'")
    assert out.returncode == 0, out.stderr
    frame = pl.read_parquet(path)
    assert frame.schema["data.z"] == pl.String  # a path null in every document: JSON text
    assert frame.schema["data"].to_schema()["z"] == frame.schema["data"].to_schema()["code"] == pl.String
    assert frame.filter(pl.col("data.z") == "null").height == 0 and frame["data.z"].null_count() == ROWS
    assert frame.filter(pl.col("data").struct.field("code") == "7").height == ROWS // 2  # 7, '"A7"'
    again = tmp_path / "again.parquet"
    frame.drop("data.z", "data.z:note").write_parquet(again)
    preview = db.write("docs", pl.read_parquet(again))
    assert (preview.new, preview.overwritten, preview.unchanged, preview.refused) == (0, 0, ROWS, {}), \
        preview.text


def test_an_answers_schema_takes_its_own_rows(session, db, tmp_path) -> None:
    """`pa.Table.from_pylist(rows, schema=answer.schema)`, the rows to_arrow() gave and those of its
    Parquet file as pyarrow reads it back: the same table; JSON text marked as such in both."""
    answer = db.query("SELECT id, data, data.z FROM docs")
    table = answer.to_arrow()
    assert pa.Table.from_pylist(table.to_pylist(), schema=answer.schema).equals(table)
    pq.write_table(table, tmp_path / "t.parquet")
    back = pq.read_table(tmp_path / "t.parquet")
    assert pa.Table.from_pylist(back.to_pylist(), schema=back.schema).equals(table)
    for schema in (answer.schema, back.schema):
        assert is_json_text(schema.field("data.z")) and is_json_text(schema.field("data").type.field("code"))
        assert not is_json_text(schema.field("data").type.field("id"))
    # Loaded back through Arrow, a JSON-text field still stands for its JSON value: "B7" a string.
    edited = [{**row, "data": {**row["data"], "code": '"B7"'}} if row["id"] == 0 else row
              for row in back.select(["id", "data"]).to_pylist()]
    schema = back.select(["id", "data"]).schema
    done = db.write("docs", pa.Table.from_pylist(edited, schema=schema), encode={"data": "zstd>json"},
                    confirm=True)
    assert (done.overwritten, done.unchanged) == (1, ROWS - 1), done.text
    try:
        stored = session.execute("SELECT data FROM docs WHERE id = 0").one().data
        assert json.loads(zstandard.ZstdDecompressor().decompress(stored)) == {**document(0), "code": "B7"}
    finally:  # the module's documents as they were
        db.write("docs", back.select(["id", "data"]).filter(pa.compute.equal(back["id"], 0)),
                 encode={"data": "zstd>json"}, confirm=True)
