"""A frame removes a key, and keeps a null (docs/load.md, "What is written: a key removed"): a key
popped from a pandas row's dict is removed from the stored document; a columnar frame (Arrow,
polars, pandas alike) names the places to remove in its `data:absent` column; a null stays null,
and a new row's explicit None in a pandas dict is stored as null. Stored documents are read back
with zstandard and json (the producers' own libraries). Before, a popped key was kept (the row
"already as loaded"), a new row's {"a": None} stored as {}, and no frame could remove a key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from shell_runner import ext

ROWS = 6


def document(i: int) -> dict[str, Any]:
    return {"id": i, "status": "Failed" if i % 2 else "NEW", "vip": None,
            "customer": {"name": f"C{i}", "tier": "gold"}}


def removed(i: int, nested: bool) -> dict[str, Any]:
    """Row i's document once its status (and, `nested`, its customer's tier) is removed where it failed."""
    doc = document(i)
    if i % 2:
        del doc["status"]
        if nested:
            del doc["customer"]["tier"]
    return doc


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_absent")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def stored_documents(session: Any, table: str) -> dict[int, Any]:
    return {r.id: json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(r.data))
            for r in session.execute(f"SELECT id, data FROM {table}")}


def orders(session: Any, table: str) -> None:
    session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob)")
    insert = session.prepare(f"INSERT INTO {table} (id, data) VALUES (?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i, zstandard.ZstdCompressor().compress(json.dumps(document(i)).encode())))


def test_a_key_popped_from_a_pandas_rows_dict_is_removed(session, db) -> None:
    orders(session, "popped")
    frame = db.query("SELECT * FROM popped").to_pandas()
    docs = list(frame["data"])  # (an object column of the rows' dicts, as a user edits them)
    for doc in docs:
        if doc["status"] == "Failed":
            doc.pop("status")
    frame["data"] = docs
    result = db.write("popped", frame, confirm=True)
    assert (result.written, result.unchanged) == (ROWS // 2, ROWS - ROWS // 2), result.text
    assert stored_documents(session, "popped") == {i: removed(i, False) for i in range(ROWS)}


def absent_column(frame_rows: int) -> list[list[str] | None]:
    return [["status", "customer.tier"] if i % 2 else None for i in range(frame_rows)]


@pytest.mark.parametrize("door", ["arrow", "polars", "pandas", "parquet"])
def test_a_frames_absent_column_removes_the_places_it_names(cassandra, ks, session, db, tmp_path,
                                                            door) -> None:
    table = f"absent_{door}"
    orders(session, table)
    answer = db.query(f"SELECT * FROM {table}")
    if door in ("arrow", "parquet"):
        frame: Any = answer.to_arrow()
        ids = frame.column("id").to_pylist()
        absent = pa.array(absent_column(max(ids) + 1), pa.list_(pa.string())).take(pa.array(ids))
        frame = frame.append_column("data:absent", absent)
    elif door == "polars":
        frame = answer.to_polars()
        frame = frame.with_columns(pl.Series("data:absent", [absent_column(ROWS)[i] for i in frame["id"]],
                                             dtype=pl.List(pl.String)))
    else:
        frame = answer.to_pandas()
        frame["data:absent"] = [absent_column(ROWS)[i] for i in frame["id"]]
    if door == "parquet":  # written by pyarrow, loaded by the shell's COPY FROM
        path = tmp_path / "absent.parquet"
        pq.write_table(frame, path)
        run = ext(cassandra, tmp_path, "-e", f"COPY {table} FROM '{path}' CONFIRM", keyspace=ks, timeout=300)
        said = run.stdout + run.stderr
        assert f"{ROWS // 2} rows written (0 new, {ROWS // 2} overwritten)" in said, said
    else:
        result = db.write(table, frame, confirm=True)
        assert (result.written, result.unchanged) == (ROWS // 2, ROWS - ROWS // 2), result.text
    assert stored_documents(session, table) == {i: removed(i, True) for i in range(ROWS)}


def test_a_new_rows_none_in_a_pandas_dict_is_stored_as_null(session, db) -> None:
    session.execute("CREATE TABLE fresh_nulls (id int PRIMARY KEY, data blob)")
    frame = pd.DataFrame({"id": [1], "data": [{"a": None, "b": 1}]})
    result = db.write("fresh_nulls", frame, encode={"data": "zstd>json"}, confirm=True)
    assert result.written == 1, result.text
    assert stored_documents(session, "fresh_nulls") == {1: {"a": None, "b": 1}}
