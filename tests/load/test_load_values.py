"""What a load writes is what the user meant (docs/load.md, "What is written"), against the real
server and the real binary, on a table of order documents in six encodings written by their
producers' own libraries (Python's json, msgpack, cbor2 under zstandard, gzip, lz4 and snappy), each
holding what the exports cannot spell as they are: NaN and the infinities, a key absent beside an
explicit null (at the top, nested, in a list's records), integers beside floats in one place, a
place of mixed sorts (JSON text in Arrow), an integer past 64 bits.

The oracle is the producers' libraries: each stored value is decoded by them here, never by
cqlsh_ext's readers, and compared with the document the test wrote (NaN equal to NaN, types
strict, keys in their order).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import lz4.frame
import msgpack
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import snappy
import zstandard
from shell_runner import ext

ENCODINGS = ["zstd-json", "gzip-json", "json", "zstd-msgpack", "lz4-cbor", "snappy-json"]
ROWS = 48
NAN, INF = float("nan"), float("inf")


def document(i: int) -> dict[str, Any]:
    """Row i's order (its encoding is ENCODINGS[i % 6]; j = i // 6 varies the document within one
    encoding, so each encoding holds each case)."""
    j = i // 6
    doc: dict[str, Any] = {"order": f"ORD-{i:04d}", "n": j if j % 2 == 0 else j + 0.5,
                           "x": [1.25, NAN, INF, -INF][j % 4]}
    if j % 3 != 2:
        doc["status"] = ["NEW", "Failed"][j % 3]
    if j % 4 == 0:
        doc["vip"] = None  # an explicit null; absent from the other documents
    elif j % 4 == 1:
        doc["vip"] = True
    if j % 4 != 3:
        doc["customer"] = {"name": f"C{j}", "tier": None if j % 2 else "gold"}
    doc["items"] = [{"sku": f"S{k}", "qty": k} for k in range(j % 3)]
    if j % 5 == 4:
        doc["items"].append({"sku": "Z"})  # a record of a list without the key its others have
    doc["tags"] = ["a", "b", "c"][: j % 4]
    doc["code"] = 7 if j % 2 else "A7"  # a place of two sorts: JSON text in Arrow
    if j == 5 and ENCODINGS[i % 6] != "zstd-msgpack":
        doc["ref"] = 2 ** 64 + 1  # past 64 bits (MessagePack holds none)
    return doc


def encoded(doc: dict[str, Any], how: str) -> bytes:
    """As a Python application writes it (json.dumps' defaults: spaces, NaN bare)."""
    text = json.dumps(doc).encode()
    if how == "zstd-json":
        return zstandard.ZstdCompressor().compress(text)
    if how == "gzip-json":
        return gzip.compress(text)
    if how == "json":
        return text
    if how == "zstd-msgpack":
        return zstandard.ZstdCompressor().compress(msgpack.packb(doc))
    if how == "lz4-cbor":
        return lz4.frame.compress(cbor2.dumps(doc))
    assert how == "snappy-json"
    return snappy.compress(text)


def decoded(value: bytes, how: str) -> Any:
    """The producers' libraries' reading of a stored value (never cqlsh_ext's)."""
    if how.startswith("zstd"):
        value = zstandard.ZstdDecompressor().decompressobj().decompress(value)
    elif how.startswith("gzip"):
        value = gzip.decompress(value)
    elif how.startswith("lz4"):
        value = lz4.frame.decompress(value)
    elif how.startswith("snappy"):
        value = snappy.decompress(value)
    if how.endswith("msgpack"):
        return msgpack.unpackb(value, strict_map_key=False)
    if how.endswith("cbor"):
        return cbor2.loads(value)
    return json.loads(value)


def same(a: Any, b: Any) -> bool:
    """Equal documents: types strict (1 is not 1.0 nor True), NaN equal to NaN, keys in order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def differing(stored: dict[int, bytes], expected: dict[int, dict[str, Any]]) -> list[str]:
    """The rows whose stored document is not the one expected, each with both."""
    out = []
    for ck, doc in expected.items():
        got = decoded(stored[ck], ENCODINGS[ck % 6])
        if not same(got, doc):
            out.append(f"ck {ck} ({ENCODINGS[ck % 6]}): {got!r} != {doc!r}")
    return out


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_v")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def orders(session: Any, table: str) -> dict[int, bytes]:
    """`table` made and filled with the ROWS orders (partition p0..p3): its stored values by ck."""
    session.execute(f"CREATE TABLE {table} (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
    values = {i: encoded(document(i), ENCODINGS[i % 6]) for i in range(ROWS)}
    for i, value in values.items():
        session.execute(insert, (f"p{i % 4}", i, value))
    return values


def stored(session: Any, table: str) -> dict[int, bytes]:
    return {r.ck: r.data for r in session.execute(f"SELECT ck, data FROM {table}")}


def shell(cassandra: Any, home: Path, ks: str, *statements: str) -> str:
    run = ext(cassandra, home, "-e", " ".join(s.rstrip(";") + ";" for s in statements), keyspace=ks,
              timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


# ------------------------------------------------------------------ an export loaded back untouched

def _frame(db: Any, table: str, door: str) -> Any:
    answer = db.query(f"SELECT * FROM {table}")
    if door == "arrow":
        return answer.to_arrow()
    if door == "pandas":
        return answer.to_pandas()
    if door == "pandas-numpy":  # pyarrow's own to_pandas: lists as ndarrays, NumPy's dtypes
        return answer.to_arrow().to_pandas()
    assert door == "polars"
    return answer.to_polars()


@pytest.mark.parametrize("door", ["jsonl", "parquet", "arrow", "pandas", "pandas-numpy", "polars"])
def test_an_untouched_export_loaded_back_writes_nothing(cassandra, ks, session, db, tmp_path, door) -> None:
    table = f"same_{door.replace('-', '_')}"
    before = orders(session, table)
    if door in ("jsonl", "parquet"):
        path = tmp_path / f"orders.{door}"
        out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM {table}) TO '{path}'",
                    f"COPY {table} FROM '{path}'")
        assert f"read {ROWS} rows: 0 new, 0 overwritten, {ROWS} already as loaded (not written), 0 refused" \
            in out, out
        shell(cassandra, tmp_path, ks, f"COPY {table} FROM '{path}' CONFIRM")
    else:
        frame = _frame(db, table, door)
        preview = db.write(table, frame)
        assert (preview.new, preview.overwritten, preview.unchanged, preview.refused) == (0, 0, ROWS, {}), \
            preview.text
        done = db.write(table, frame, confirm=True)
        assert done.written == 0 and done.unchanged == ROWS, done.text
    assert stored(session, table) == before  # not a byte written


# ------------------------------------------------------------------ a one-field fix

FIXED = {i: ({**document(i), "status": "FAILED"} if document(i).get("status") == "Failed" else document(i))
         for i in range(ROWS)}
TO_FIX = sum(1 for i in range(ROWS) if document(i).get("status") == "Failed")


def _fixed_jsonl(path: Path) -> None:
    """Each line's payload status "Failed" -> "FAILED", with Python's json as a user would."""
    lines = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        payload = row["data"]["payload"]
        if isinstance(payload, dict) and payload.get("status") == "Failed":
            payload["status"] = "FAILED"
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")


def _fixed_arrow(table: pa.Table) -> pa.Table:
    data = table.column("data").combine_chunks()
    status = data.field("status")
    fixed = pc.if_else(pc.equal(status, "Failed"), pa.scalar("FAILED"), status)
    arrays = [fixed if data.type.field(k).name == "status" else data.field(k)
              for k in range(data.type.num_fields)]
    struct = pa.StructArray.from_arrays(arrays, fields=list(data.type), mask=data.is_null())
    return table.set_column(table.schema.get_field_index("data"), "data", struct)


def _fixed_polars(frame: pl.DataFrame) -> pl.DataFrame:
    status = pl.col("data").struct.field("status")
    return frame.with_columns(pl.col("data").struct.with_fields(
        pl.when(status == "Failed").then(pl.lit("FAILED")).otherwise(status).alias("status")))


def _fixed_pandas(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["data"] = [{**d, "status": "FAILED"} if isinstance(d, dict) and d.get("status") == "Failed" else d
                     for d in frame["data"]]
    return frame


@pytest.mark.parametrize("door", ["jsonl", "parquet", "arrow", "pandas", "polars"])
def test_a_one_field_fix_changes_that_field_only(cassandra, ks, session, db, tmp_path, door) -> None:
    table = f"fix_{door}"
    before = orders(session, table)
    if door == "jsonl":
        path = tmp_path / "orders.jsonl"
        shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM {table}) TO '{path}'")
        _fixed_jsonl(path)
        out = shell(cassandra, tmp_path, ks, f"COPY {table} FROM '{path}' CONFIRM")
    elif door == "parquet":  # fixed with pyarrow (polars 2.1 cannot write Arrow's JSON type back)
        path = tmp_path / "orders.parquet"
        shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM {table}) TO '{path}'")
        pq.write_table(_fixed_arrow(pq.read_table(path)), tmp_path / "fixed.parquet")
        out = shell(cassandra, tmp_path, ks, f"COPY {table} FROM '{tmp_path / 'fixed.parquet'}' CONFIRM")
    else:
        frame = _frame(db, table, door)
        fixed = {"arrow": _fixed_arrow, "pandas": _fixed_pandas, "polars": _fixed_polars}[door](frame)
        out = db.write(table, fixed, confirm=True).text
    assert f"{TO_FIX} rows written (0 new, {TO_FIX} overwritten), {ROWS - TO_FIX} already as loaded" \
        in out, out
    after = stored(session, table)
    assert differing(after, FIXED) == []
    untouched = [i for i in range(ROWS) if FIXED[i] is not None and document(i).get("status") != "Failed"]
    assert all(after[i] == before[i] for i in untouched)  # their stored bytes as they were


def test_the_demo_orders_untouched_then_fixed_in_polars(session, db) -> None:
    """tools/orders.py's documents (six encodings, random bytes among them, integers past 64 bits
    beside floats, a status that is sometimes 7, keys absent and null), 1,200 rows exported with
    types given (n an int64, status a string: the floats, the big integers and the 7s do not fit,
    null in the frame, their stored bytes beside it): untouched, nothing is written;
    `customer.tier` "silver" fixed to "SILVER" in polars, each stored document is the original but
    that field."""
    import orders as demo

    data = demo.rows(1200)
    demo.write_table(session, data, "demo_orders")
    before = stored(session, "demo_orders")
    given = {"data.n": "int64", "data.status": "string"}
    arrow = db.query("SELECT * FROM demo_orders", schema=given).to_arrow()
    notes = arrow.column("data:note").to_pylist()
    assert sum(1 for n in notes if n and n.startswith("did not fit")) > 500  # the misfits are there
    untouched = db.write("demo_orders", arrow)
    assert (untouched.unchanged, untouched.overwritten, untouched.refused) == (1200, 0, {}), untouched.text
    customer = pl.col("data").struct.field("customer")
    tier = customer.struct.field("tier")
    tier_fixed = pl.when(tier == "silver").then(pl.lit("SILVER")).otherwise(tier).alias("tier")
    fixed = pl.from_arrow(arrow).with_columns(pl.col("data").struct.with_fields(
        pl.when(customer.is_null()).then(None).otherwise(customer.struct.with_fields(tier_fixed))
        .alias("customer")))
    expected: dict[int, Any] = {}
    for row, doc in data:
        if doc is not None and (doc.get("customer") or {}).get("tier") == "silver":
            doc = {**doc, "customer": {**doc["customer"], "tier": "SILVER"}}
        expected[row["ck"]] = doc
    to_fix = sum(1 for ck, doc in expected.items() if doc is not None and doc is not data[ck][1])
    done = db.write("demo_orders", fixed, confirm=True)
    assert (done.written, done.unchanged, done.refused) == (to_fix, 1200 - to_fix, {}), done.text
    after = stored(session, "demo_orders")
    wrong = []
    for ck, doc in expected.items():
        how = demo.ENCODINGS[ck % 6]
        if doc is None:  # random bytes: no document, as they were
            ok = after[ck] == before[ck]
        else:
            ok = same(decoded(after[ck], how), doc)
            ok = ok and (after[ck] == before[ck] or doc is not data[ck][1])  # untouched rows: not written
        if not ok:
            wrong.append(ck)
    assert wrong == [], wrong[:10]


# ------------------------------------------------------------------ NaN, infinities, absent, null: every door

@pytest.mark.parametrize("door", ["jsonl", "parquet", "arrow", "pandas", "polars"])
def test_nan_infinities_absent_and_null_survive_a_copy_to_another_table(cassandra, ks, session, db, tmp_path,
                                                                      door) -> None:
    """RAW exports carry each row's stored bytes: the load settles from them what the file cannot
    spell (a record's NaN, a key absent beside a null), so every document comes back exact."""
    source = f"src_{door}"
    twin = f"twin_{door}"
    orders(session, source)
    session.execute(f"CREATE TABLE {twin} (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    if door in ("jsonl", "parquet"):
        path = tmp_path / f"orders.{door}"
        out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM {source}) TO '{path}' WITH RAW = true",
                    f"COPY {twin} FROM '{path}' CONFIRM")
        assert f"{ROWS} rows written ({ROWS} new, 0 overwritten)" in out, out
    else:
        frame = _frame_raw(cassandra, tmp_path, ks, source, door)
        done = db.write(twin, frame, confirm=True)
        assert done.written == ROWS, done.text
    assert differing(stored(session, twin), {i: document(i) for i in range(ROWS)}) == []


def _holds_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_null(v) for v in value)
    return value is None


def test_a_copy_the_source_cannot_say_exactly_is_said_in_the_preview_with_raw(cassandra, ks, session, db,
                                                                              tmp_path) -> None:
    """Into another table without RAW: Arrow's null fields (a null or a key absent?) and JSON Lines'
    "NaN" strings of a record (a string or a float?) are counted in the preview, which names RAW;
    exported WITH RAW = true, nothing is left unsaid."""
    orders(session, "said_src")
    session.execute("CREATE TABLE said_twin (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    arrow = db.query("SELECT * FROM said_src").to_arrow()
    nulls = sum(1 for doc in arrow.column("data").to_pylist() if _holds_null(doc))  # pyarrow's reading
    assert nulls > 0
    preview = db.write("said_twin", arrow).text
    assert f"  {nulls} rows new to the table hold null fields, written as keys absent" in preview, preview
    assert "export WITH RAW = true" in preview, preview
    # JSON Lines: a MessagePack or CBOR record's NaN and infinities spelt "NaN", "Infinity"
    named = sum(1 for i in range(ROWS) if ENCODINGS[i % 6] in ("zstd-msgpack", "lz4-cbor")
                and not math.isfinite(document(i)["x"]))
    path = tmp_path / "orders.jsonl"
    out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM said_src) TO '{path}'",
                f"COPY said_twin FROM '{path}'")
    assert f"  {named} rows new to the table hold NaN or Infinity spelt as strings in a record" in out, out
    raw = tmp_path / "raw.jsonl"
    out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM said_src) TO '{raw}' WITH RAW = true",
                f"COPY said_twin FROM '{raw}'")
    assert "rows new to the table hold" not in out and f"read {ROWS} rows: {ROWS} new" in out, out
    assert "rows new to the table hold" not in db.write("said_twin", _frame_raw(cassandra, tmp_path, ks,
                                                                                "said_src", "arrow")).text


def test_a_csv_export_of_records_loaded_back_writes_nothing(cassandra, ks, session, tmp_path) -> None:
    """CSV holds a record as its JSON text, NaN and the infinities by name: loaded back with ENCODE
    naming the records' chain, each is the stored document (its float NaN), nothing written."""
    session.execute("CREATE TABLE csv_records (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO csv_records (pk, ck, data) VALUES (?, ?, ?)")
    docs = {i: document(i) for i in range(ROWS) if ENCODINGS[i % 6] == "zstd-msgpack"}
    for i, doc in docs.items():
        session.execute(insert, ("p", i, encoded(doc, "zstd-msgpack")))
    before = stored(session, "csv_records")
    path = tmp_path / "records.csv"
    out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM csv_records) TO '{path}'",
                f"COPY csv_records FROM '{path}' WITH ENCODE data = 'zstd>msgpack' CONFIRM")
    assert '"NaN"' in path.read_text()  # (the export's spelling)
    assert f"0 rows written (0 new, 0 overwritten), {len(docs)} already as loaded, 0 refused" in out, out
    assert stored(session, "csv_records") == before


def _frame_raw(cassandra: Any, home: Path, ks: str, table: str, door: str) -> Any:
    """The answer's Arrow with each row's stored bytes (cqlshrc's raw_blobs, as --raw-blobs)."""
    import cqlsh_ext

    cqlshrc = home / "raw_cqlshrc"
    cqlshrc.write_text("[cqlsh_ext]\nraw_blobs = true\n")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, keyspace=ks, cqlshrc=str(cqlshrc)) as raw:
        table_arrow = raw.query(f"SELECT * FROM {table}").to_arrow()
    assert table_arrow.column("data:stored").null_count == 0
    if door == "arrow":
        return table_arrow
    if door == "pandas":
        return table_arrow.to_pandas(types_mapper=pd.ArrowDtype)
    return pl.from_arrow(table_arrow)


def test_an_exports_arrow_holds_a_records_nan_and_infinities_as_floats(session, db) -> None:
    """MessagePack's and CBOR's NaN and infinities, and a JSON text's bare NaN, are one float place
    (not JSON text holding the string "NaN")."""
    orders(session, "typed")
    answer = db.query("SELECT ck, data FROM typed").to_arrow()
    assert answer.schema.field("data").type.field("x").type == pa.float64()
    xs = answer.column("data").combine_chunks().field("x").to_pylist()
    assert all(same(x, document(ck)["x"]) for ck, x in zip(answer.column("ck").to_pylist(), xs, strict=True))


@pytest.mark.parametrize("chain", ["zstd>json", "zstd>msgpack", "lz4>cbor"])
def test_nan_and_the_infinities_from_a_file_and_a_frame_are_stored_as_floats(cassandra, ks, session, db,
                                                                           tmp_path, chain) -> None:
    """A JSON Lines file as Python writes NaN (bare) and a frame's float NaN: the stored document
    holds the float (MessagePack's, CBOR's, JSON's bare NaN as Python writes it), never "NaN"."""
    name = "nan_" + chain.replace(">", "_")
    session.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, data blob)")
    docs = {i: {"i": i, "x": [NAN, INF, -INF, 0.5][i % 4], "l": [NAN, 1.0]} for i in range(8)}
    path = tmp_path / "nan.jsonl"
    path.write_text("".join(json.dumps({"id": i, "data": d}) + "\n" for i, d in docs.items() if i < 4))
    out = shell(cassandra, tmp_path, ks, f"COPY {name} FROM '{path}' WITH ENCODE data = '{chain}' CONFIRM")
    assert "4 rows written (4 new, 0 overwritten), 0 already as loaded, 0 refused" in out, out
    frame = pd.DataFrame({"id": [i for i in docs if i >= 4], "data": [d for i, d in docs.items() if i >= 4]})
    done = db.write(name, frame, encode={"data": chain}, confirm=True)
    assert done.written == 4 and done.refused == {}, done.text
    how = {"zstd>json": "zstd-json", "zstd>msgpack": "zstd-msgpack", "lz4>cbor": "lz4-cbor"}[chain]
    got = {r.id: decoded(r.data, how) for r in session.execute(f"SELECT id, data FROM {name}")}
    assert all(same(got[i], d) for i, d in docs.items()), got


# ------------------------------------------------------------------ nothing silent

@pytest.fixture()
def regions(session) -> str:
    """An empty table with a column `region` beside the key and the blob."""
    session.execute("CREATE TABLE IF NOT EXISTS regions (id int, ck int, region text, data blob, "
                    "PRIMARY KEY (id, ck))")
    session.execute("TRUNCATE regions")
    return "regions"


def test_a_frame_column_not_the_tables_is_refused_naming_the_nearest(db, regions) -> None:
    import cqlsh_ext

    frame = pd.DataFrame({"id": [1], "ck": [1], "regin": ["eu"], "data": [{"a": 1}]})
    with pytest.raises(cqlsh_ext.Error) as err:
        db.write(regions, frame, encode={"data": "zstd>json"})
    assert "regin" in str(err.value) and "did you mean region?" in str(err.value), err.value
    frame = pd.DataFrame({"id": [1], "ck": [1], "extra": ["eu"], "data": [{"a": 1}]})
    with pytest.raises(cqlsh_ext.Error, match="extra"):
        db.write(regions, frame, encode={"data": "zstd>json"})
    assert list(db.session.execute(f"SELECT * FROM {regions}")) == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_file_column_not_the_tables_is_refused_naming_the_nearest(cassandra, ks, session, regions, tmp_path,
                                                                   fmt) -> None:
    rows = [{"id": 1, "ck": 1, "regin": "eu", "data": '{"a": 1}'}]
    path = tmp_path / f"bad.{fmt}"
    if fmt == "jsonl":
        path.write_text(json.dumps(rows[0]) + "\n")
    elif fmt == "csv":
        path.write_text("id,ck,regin,data\n1,1,eu,\"{\"\"a\"\": 1}\"\n")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    run = ext(cassandra, tmp_path, "-e",
              f"COPY {regions} FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM", keyspace=ks)
    said = run.stdout + run.stderr
    assert "regin" in said and "did you mean region?" in said, said
    assert list(session.execute(f"SELECT * FROM {regions}")) == []


def test_a_csv_header_naming_no_column_is_said_escaped_on_one_line(cassandra, ks, session, regions,
                                                                   tmp_path) -> None:
    # A header of a terminal's escapes (a title set, the screen cleared) and a line break.
    path = tmp_path / "escapes.csv"
    path.write_bytes(b'id,ck,"\x1b]0;owned\x07\x1b[2J\nx",data\n1,1,eu,"{""a"": 1}"\n')
    run = ext(cassandra, tmp_path, "-e",
              f"COPY {regions} FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM", keyspace=ks)
    said = run.stdout + run.stderr
    assert "\x1b" not in said and "\x07" not in said, said
    assert "\\x1b]0;owned\\x07\\x1b[2J\\nx is no column of" in said, said
    assert list(session.execute(f"SELECT * FROM {regions}")) == []


def test_a_later_json_lines_key_not_the_tables_refuses_its_row(cassandra, ks, session, regions,
                                                             tmp_path) -> None:
    path = tmp_path / "later.jsonl"
    path.write_text('{"id": 1, "ck": 1, "region": "eu", "data": {"a": 1}}\n'
                    '{"id": 2, "ck": 1, "regin": "us", "data": {"a": 2}}\n'
                    '{"id": 3, "ck": 1, "region": "ap", "data": {"a": 3}}\n')
    out = shell(cassandra, tmp_path, ks,
                f"COPY {regions} FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM")
    assert "2 rows written (2 new, 0 overwritten), 0 already as loaded, 1 refused" in out, out
    assert "regin is no column of" in out and "(did you mean region?)" in out, out
    assert sorted(r.id for r in session.execute(f"SELECT id FROM {regions}")) == [1, 3]


#: Key values that are not their CQL type's spelling: (the column's value in the file, what is said).
LOOSE_KEYS_CSV = ["1_000", "1e3", " 12", "+5", "1.0", "0x10", "١٢"]


def test_loose_key_spellings_are_refused_csv(cassandra, ks, session, regions, tmp_path) -> None:
    path = tmp_path / "keys.csv"
    fields = "".join(f'"{v}",1,"{{}}"\n' for v in LOOSE_KEYS_CSV)
    path.write_text('id,ck,data\n' + fields + '7,1,"{""a"": 1}"\n')
    out = shell(cassandra, tmp_path, ks, f"COPY {regions} (id, ck, data) FROM '{path}' "
                "WITH ENCODE data = 'zstd>json' CONFIRM")
    refused = len(LOOSE_KEYS_CSV)
    assert f"1 row written (1 new, 0 overwritten), 0 already as loaded, {refused} refused" in out, out
    for value in LOOSE_KEYS_CSV:
        assert f"id: {value!r} is no int" in out, (value, out)
    assert [r.id for r in session.execute(f"SELECT id FROM {regions}")] == [7]


def test_loose_key_values_are_refused_jsonl_and_frames(cassandra, ks, session, db, regions, tmp_path) -> None:
    lines = [{"id": "12", "ck": 1}, {"id": 1e3, "ck": 1}, {"id": 12.0, "ck": 1}, {"id": True, "ck": 1},
             {"id": 2, "ck": "3"}, {"id": 2, "ck": 3.0}]
    path = tmp_path / "keys.jsonl"
    path.write_text("".join(json.dumps({**line, "data": {"a": 1}}) + "\n" for line in lines)
                    + '{"id": 7, "ck": 1, "data": {"a": 1}}\n')
    out = shell(cassandra, tmp_path, ks, f"COPY {regions} (id, ck, data) FROM '{path}' "
                "WITH ENCODE data = 'zstd>json' CONFIRM")
    assert f"1 row written (1 new, 0 overwritten), 0 already as loaded, {len(lines)} refused" in out, out
    for said in ("id: '12' is no int", "id: 1000.0 is no int", "id: 12.0 is no int", "id: true is no int",
                 "ck: '3' is no int", "ck: 3.0 is no int"):
        assert said in out, (said, out)
    # a float clustering key
    frame = pd.DataFrame({"id": [8, 9], "ck": [1.0, 2.5], "data": [{"a": 1}, {"a": 2}]})
    result = db.write(regions, frame, encode={"data": "zstd>json"}, confirm=True)
    assert result.written == 0 and sum(result.refused.values()) == 2, result.text
    assert "ck: 1.0 is no int" in result.text, result.text
    frame = pd.DataFrame({"id": [8], "ck": ["1"], "data": [{"a": 1}]})  # a string one
    result = db.write(regions, frame, encode={"data": "zstd>json"}, confirm=True)
    assert result.written == 0 and "ck: '1' is no int" in result.text, result.text
    assert [r.id for r in session.execute(f"SELECT id FROM {regions}")] == [7]


def test_a_key_given_twice_in_one_json_object_is_refused(cassandra, ks, session, regions, tmp_path) -> None:
    path = tmp_path / "twice.jsonl"
    path.write_text('{"id": 1, "ck": 1, "data": {"a": 1}}\n'
                    '{"id": 2, "id": 3, "ck": 1, "data": {"a": 1}}\n'
                    '{"id": 4, "ck": 1, "data": {"a": 1, "a": 2}}\n')
    run = ext(cassandra, tmp_path, "-e", f"COPY {regions} (id, ck, data) FROM '{path}' "
              "WITH ENCODE data = 'zstd>json' CONFIRM", keyspace=ks)
    said = run.stdout + run.stderr
    assert 'line 2' in said and '"id" given twice' in said, said
    assert {r.id for r in session.execute(f"SELECT id FROM {regions}")} <= {1}  # neither 3 nor 4


def test_an_answers_pandas_with_lists_loads(db, session) -> None:
    """pyarrow's own to_pandas gives a list as a NumPy array and numbers as NumPy's scalars."""
    session.execute("CREATE TABLE lists (id int PRIMARY KEY, data blob)")
    docs = {i: {"tags": ["a", "b"][: i % 3], "n": [1.5, 2.5], "deep": [{"k": [1, 2]}]} for i in range(6)}
    insert = session.prepare("INSERT INTO lists (id, data) VALUES (?, ?)")
    for i, doc in docs.items():
        session.execute(insert, (i, zstandard.ZstdCompressor().compress(json.dumps(doc).encode())))
    session.execute("CREATE TABLE lists_twin (id int PRIMARY KEY, data blob)")
    frame = db.query("SELECT * FROM lists").to_arrow().to_pandas()
    done = db.write("lists_twin", frame, confirm=True)
    assert done.written == 6 and done.refused == {}, done.text
    got = {r.id: decoded(r.data, "zstd-json") for r in session.execute("SELECT id, data FROM lists_twin")}
    assert all(same(got[i], d) for i, d in docs.items()), got


def test_what_the_chain_rule_lacks_is_named_in_each_doors_words(cassandra, ks, session, db, regions,
                                                              tmp_path) -> None:
    frame = pd.DataFrame({"id": [1], "ck": [1], "data": [{"a": 1}], "data:label": ["zstd>json"]})
    result = db.write(regions, frame)
    said = "\n".join(result.refused_rows)
    assert "data:kind" in said and "encode={'data': '<chain>'}" in said and "ENCODE" not in said, said
    frame = pd.DataFrame({"id": [1], "ck": [1], "data": [{"a": 1}]})
    said = "\n".join(db.write(regions, frame).refused_rows)
    assert "encode={'data': '<chain>'}" in said and "ENCODE" not in said, said
    path = tmp_path / "labelled.parquet"
    labelled = [{"id": 1, "ck": 1, "data": {"a": 1}, "data:label": "zstd>json"}]
    pq.write_table(pa.Table.from_pylist(labelled), path)
    out = shell(cassandra, tmp_path, ks, f"COPY {regions} FROM '{path}'")
    assert "data:kind" in out and "ENCODE data = '<chain>'" in out and "encode=" not in out, out
