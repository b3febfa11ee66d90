"""Arrow at its edges (issue 95): every extension type the answer's Arrow holds (a uuid, JSON text)
converts to pandas inside a list, a set, a map, a tuple or a struct, whatever the types mapper; the
polars source reads every column to_arrow() reads; a decimal of any scale is read losslessly, in
its column or, where the column's decimal128 does not hold it, in NAME:exact; and pl.from_arrow of
an answer gives what docs/api.md says.

The oracle is what the test wrote: the UUIDs, the decimals, the documents."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest

UUIDS = [uuid.UUID(int=k) for k in range(1, 7)]
#: Decimals: 40 of at most 9 places (the sample below), then every kind of scale and length.
DECIMALS = [Decimal(f"{k}.{k:09d}") for k in range(40)] + [
    Decimal("1.00000000000000000000000001"), Decimal("12345678901234.5"), Decimal("-1E-30"),
    Decimal("1E+30"), Decimal("123456789012345678901234567890123456789.5"), Decimal("0E-40")]


@pytest.fixture(scope="module")
def table(cassandra) -> str:  # type: ignore[no-untyped-def]
    ks = cassandra.create_keyspace("arrow_edges")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, lu list<uuid>, st set<timeuuid>, "
                    "m map<uuid, text>, tu frozen<tuple<uuid, int>>, ll list<frozen<list<uuid>>>, "
                    "u uuid, data blob, d decimal)")
    insert = session.prepare("INSERT INTO t (id, lu, st, m, tu, ll, u, data, d) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    for k, number in enumerate(DECIMALS):
        first, second = UUIDS[k % 6], UUIDS[(k + 1) % 6]
        session.execute(insert, (k, [first, second], {uuid.uuid1(clock_seq=k)}, {first: "a"}, (second, k),
                                 [[first], [second]], first, f'{{"a": {k}, "j": null}}'.encode(), number))
    session.shutdown()
    return f"{ks}.t"


COLUMNS = ("lu", "st", "m", "tu", "ll", "u", "data", "data.j")


@pytest.mark.parametrize("mapper", ["ours", "none"])
def test_every_extension_type_converts_to_pandas(db, table: str, mapper: str) -> None:
    """to_pandas(), and to_pandas(types_mapper=None) (pyarrow's NumPy dtypes): a uuid inside a list,
    a set, a map, a tuple or a nested list is its 16 bytes, a uuid column its UUID, JSON text a
    string; none raises pyarrow's ArrowNotImplementedError (types_mapper=None did, for lists)."""
    options: dict[str, Any] = {} if mapper == "ours" else {"types_mapper": None}
    frame = db.query(f"SELECT id, {', '.join(COLUMNS)} FROM {table} WHERE id IN (0, 1)").to_pandas(**options)
    rows = {row["id"]: row for row in frame.to_dict("records")}
    assert [bytes(b) for b in rows[0]["lu"]] == [UUIDS[0].bytes, UUIDS[1].bytes]
    assert [[bytes(b) for b in inner] for inner in rows[1]["ll"]] == [[UUIDS[1].bytes], [UUIDS[2].bytes]]
    assert rows[0]["u"] == UUIDS[0]
    assert {bytes(k): v for k, v in rows[1]["m"]} == {UUIDS[1].bytes: "a"}
    assert len(rows[0]["st"]) == 1 and len(bytes(list(rows[0]["st"])[0])) == 16
    assert rows[0]["data.j"] is None


def test_the_polars_source_reads_every_column_to_arrow_reads(db, table: str) -> None:
    """cqlsh_ext.scan of a whole document whose JSON-text field is always null, of a list of uuids
    and the other nested uuids: the frame to_polars() gives (it raised ArrowNotImplementedError:
    extension)."""
    import cqlsh_ext

    for columns in (["data"], ["lu", "st", "m", "tu", "ll", "u"]):
        text = f"SELECT id, {', '.join(columns)} FROM {table}"
        lazy = cqlsh_ext.scan(db, text).collect().sort("id")
        whole = db.query(text).to_polars().sort("id")
        assert lazy.schema == whole.schema and lazy.equals(whole), text


def test_pl_from_arrow_of_an_answer_is_what_docs_say(db, table: str) -> None:
    """docs/api.md: pl.DataFrame(answer) is the answer's frame; polars 2's pl.from_arrow(answer)
    reads the stream as one Series of structs, one field per column."""
    import polars as pl

    text = f"SELECT id, u FROM {table} WHERE id IN (0, 1)"
    series = pl.from_arrow(db.query(text))
    assert isinstance(series, pl.Series) and series.dtype == pl.Struct
    assert [field.name for field in series.dtype.fields] == ["id", "u"]  # type: ignore[attr-defined]
    assert pl.DataFrame(db.query(text)).equals(series.struct.unnest())


def test_a_decimal_of_any_scale_is_read_losslessly(db, table: str) -> None:
    """A sample of 40 rows: a later decimal its column's type does not hold (of scale 26, of 40
    digits, of scale 40) is in NAME:exact, exactly, and where the sample held such decimals the
    column is each value's exact text: every door (to_arrow, to_pandas, to_polars, the polars
    source) gives every value back."""
    import cqlsh_ext

    text = f"SELECT id, d FROM {table}"
    want = dict(enumerate(DECIMALS))

    def recovered(rows: list[dict[str, Any]]) -> dict[int, Decimal]:
        return {r["id"]: Decimal(r["d:exact"]) if r["d:exact"] is not None else Decimal(r["d"]) for r in rows}

    assert recovered(db.query(text, sample_rows=40).to_arrow().to_pylist()) == want
    assert recovered(db.query(text, sample_rows=40).to_pandas().to_dict("records")) == want
    assert recovered(db.query(text, sample_rows=40).to_polars().to_dicts()) == want
    assert recovered(cqlsh_ext.scan(db, text).collect().to_dicts()) == want


def test_decimals_no_decimal128_holds_are_their_exact_text(db, table: str, cassandra, tmp_path) -> None:
    """Issue 106: sampled whole, the decimals need more than decimal128's 38 digits (scale 40 beside
    39 whole digits): the column is each value's exact text, no value null (a scale-26 decimal was
    null in decimal128(38, 9)) in to_arrow, to_polars and the shell's Parquet export read by
    polars; those of the first rows and the scale-26 one need 38 at most: decimal128(38, 26), each
    value exact. The oracle: the decimals the test wrote, digit for digit (Decimal.as_tuple)."""
    import polars as pl
    import pyarrow as pa

    from tests.payload_select.conftest import shell

    def exact(texts: dict[int, Any]) -> dict[int, Any]:
        return {k: None if v is None else Decimal(v).as_tuple() for k, v in texts.items()}

    want = {k: d.as_tuple() for k, d in enumerate(DECIMALS)}
    answer = db.query(f"SELECT id, d FROM {table}")
    assert answer.schema.field("d").type == pa.string()
    rows = answer.to_arrow().to_pylist()
    assert exact({r["id"]: r["d"] for r in rows}) == want
    assert {r["d:note"] for r in rows} == {r["d:exact"] for r in rows} == {None}
    frame = db.query(f"SELECT id, d FROM {table}").to_polars()
    assert exact(dict(zip(frame["id"], frame["d"], strict=True))) == want
    path = tmp_path / "d.parquet"
    out = shell(cassandra, tmp_path, f"COPY (SELECT id, d FROM {table}) TO '{path}'")
    assert out.returncode == 0, out.stderr
    frame = pl.read_parquet(path)
    assert exact(dict(zip(frame["id"], frame["d"], strict=True))) == want

    held = db.query(f"SELECT id, d FROM {table} WHERE id IN (1, 2, 40)").to_arrow()
    assert held.schema.field("d").type == pa.decimal128(38, 26)
    assert {r["id"]: r["d"] for r in held.to_pylist()} == {k: DECIMALS[k] for k in (1, 2, 40)}
    assert held["d:exact"].null_count == held.num_rows
