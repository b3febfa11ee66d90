"""What the API hands polars, polars saves with its own writers (docs/api.md, "polars"): documents
where a key is null in every document (typed JSON text) and a place holds two sorts (JSON text
too), read by `to_polars()` and `db.scan(...)`, written by polars' `write_parquet` and `sink_parquet`,
read back by polars and loaded back untouched: nothing written. polars 2.1 panicked writing a JSON
text field inside a struct before (a Rust PanicException that `except Exception` does not catch)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest
import zstandard

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
