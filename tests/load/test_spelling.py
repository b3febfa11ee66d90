"""A one-field fix through a frame changes that field only, spelling included (docs/load.md, "What is
written"): documents stored as JSON text whose numbers and strings are spelt as no float or str
repr spells them (`7.0700000000000000001`, `0.10`, `1E5`, `-0`, `"caf\\u00e9"`), exported to
Arrow, pandas and polars, one field edited there and written back: each stored text (decompressed
by zstandard, the producer's library) is the original text but that field, byte for byte. They were
respelt from the frame's values before (`7.07`, `0.1`, `100000.0`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import zstandard

ROWS = 6


def text_of(i: int) -> str:
    """Row i's stored JSON text, compact, its values spelt as a hand (or another language) wrote them."""
    status = "Failed" if i % 2 else "NEW"
    name = "caf\\u00e9" if i % 3 == 0 else "cafe"  # (a text with an escape, and texts without)
    return (f'{{"id":{i},"price":7.0700000000000000001,"rate":0.10,"n":1E5,"qty":-0,"name":"{name}",'
            f'"items":[{{"p":2.50,"w":1e-3}}],"status":"{status}"}}')


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_spell")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def stored_texts(session: Any, table: str) -> dict[int, str]:
    out = {}
    for row in session.execute(f"SELECT id, data FROM {table}"):
        out[row.id] = zstandard.ZstdDecompressor().decompressobj().decompress(row.data).decode()
    return out


def fixed_arrow(table: pa.Table) -> pa.Table:
    data = table.column("data").combine_chunks()
    status = data.field("status")
    fixed = pc.if_else(pc.equal(status, "Failed"), pa.scalar("FAILED"), status)
    arrays = [fixed if data.type.field(k).name == "status" else data.field(k)
              for k in range(data.type.num_fields)]
    struct = pa.StructArray.from_arrays(arrays, fields=list(data.type), mask=data.is_null())
    return table.set_column(table.schema.get_field_index("data"), "data", struct)


def fixed_polars(frame: pl.DataFrame) -> pl.DataFrame:
    status = pl.col("data").struct.field("status")
    return frame.with_columns(pl.col("data").struct.with_fields(
        pl.when(status == "Failed").then(pl.lit("FAILED")).otherwise(status).alias("status")))


def fixed_pandas(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["data"] = [{**d, "status": "FAILED"} if d.get("status") == "Failed" else d for d in frame["data"]]
    return frame


@pytest.mark.parametrize("door", ["arrow", "pandas", "polars"])
def test_a_one_field_fix_through_a_frame_keeps_every_other_stored_spelling(session, db, door) -> None:
    table = f"spelt_{door}"
    session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob)")
    insert = session.prepare(f"INSERT INTO {table} (id, data) VALUES (?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i, zstandard.ZstdCompressor().compress(text_of(i).encode())))
    before = {r.id: r.data for r in session.execute(f"SELECT id, data FROM {table}")}
    answer = db.query(f"SELECT * FROM {table}")
    frame = {"arrow": answer.to_arrow, "pandas": answer.to_pandas, "polars": answer.to_polars}[door]()
    fixed = {"arrow": fixed_arrow, "pandas": fixed_pandas, "polars": fixed_polars}[door](frame)
    result = db.write(table, fixed, confirm=True)
    to_fix = ROWS // 2
    assert (result.written, result.unchanged) == (to_fix, ROWS - to_fix), result.text
    texts = stored_texts(session, table)
    assert texts == {i: text_of(i).replace('"status":"Failed"', '"status":"FAILED"') for i in range(ROWS)}
    after = {r.id: r.data for r in session.execute(f"SELECT id, data FROM {table}")}
    assert all(after[i] == before[i] for i in range(0, ROWS, 2))  # the rows not fixed: not a byte written
