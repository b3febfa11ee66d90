"""The way back (docs/load.md) against the real server and the real binary: a table written by
encode()'s writers in every container and record format they write, exported with COPY (SELECT
...) TO JSON Lines, Parquet and CSV, then loaded into an empty twin with COPY ... FROM: every stored
value decodes to the same document, byte for byte the same (every writer here is deterministic: the
same input, the same bytes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_runner import ext

from cqlsh_ext.encode.chain import encode
from cqlsh_ext.payload.engine import ValueEngine

CAP = 4 << 20
#: One document shape for every row (Parquet types a column by its values: one shape, one struct):
#: nested, unicode, a float, a boolean, a null, a list.
SHAPE = {"id": 0, "name": "Zoë 🍕 \"quoted\"", "price": 2.5, "ok": True, "note": None,
         "tags": ["a", "b"], "customer": {"tier": "gold", "since": 2019}}


def document(i: int) -> dict[str, Any]:
    return {**SHAPE, "id": i, "price": i + 0.25, "tags": ["a", "b"][: i % 3]}


def compact(doc: Any) -> str:
    """JSON text as Jackson, JSON.stringify and orjson write it: no spaces, no escapes."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


#: Auto mode reads these (a signature, or a trial that finds their structure): the label rule's.
AUTO_CHAINS = ["snappy/framed>json", "snappy/xerial>json", "snappy/hadoop>json", "lz4>json",
               "lz4/LZ4Block>json", "lz4/hadoop>json", "lz4/block>json", "zstd>json", "gzip>json",
               "zlib>json", "bzip2>json", "xz>json", "xz/lzma>json", "json",
               "zstd>msgpack", "gzip>msgpack", "lz4>cbor", "snappy/framed>cbor", "xz>bson", "zlib>bson"]
#: Written as text, read as text (not a document): Parquet holds them apart (data:stored).
TEXT_CHAINS = ["gzip>text", "xz>text", "gzip>java", "zstd>java"]
#: Bytes in no known format (the export's "0x..."): written as they are.
NOISE = bytes([0x9F, 0x00]) + bytes(range(40))
#: Chains auto mode cannot tell from noise: each column's DECODE setting names its chain.
SET_COLUMNS = {"raw": "snappy>json", "nosize": "lz4/block-nosize>json", "deflate": "deflate>json",
               "brotli": "brotli>json", "blockbe": "lz4/block-be>msgpack"}


def source_value(chain: str, i: int) -> bytes:
    if chain in TEXT_CHAINS:
        return encode(chain, f"plain words {i} é", CAP).value
    return encode(chain, compact(document(i)), CAP).value


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_rt")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


@pytest.fixture(scope="module")
def source(session) -> dict[int, bytes]:
    """`src`: a row per chain (id), written by encode()'s writers."""
    session.execute("CREATE TABLE src (id int PRIMARY KEY, data blob)")
    rows = {i: source_value(chain, i) for i, chain in enumerate(AUTO_CHAINS + TEXT_CHAINS)}
    rows[len(rows)] = NOISE
    insert = session.prepare("INSERT INTO src (id, data) VALUES (?, ?)")
    for i, value in rows.items():
        session.execute(insert, (i, value))
    return rows


def stored(session: Any, table: str, column: str = "data") -> dict[int, bytes]:
    return {r.id: getattr(r, column) for r in session.execute(f"SELECT id, {column} FROM {table}")}


def twin(session: Any, name: str, columns: str = "data blob") -> None:
    session.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, {columns})")


def shell(cassandra: Any, home: Path, ks: str, *statements: str) -> Any:
    run = ext(cassandra, home, "-e", " ".join(s.rstrip(";") + ";" for s in statements), keyspace=ks,
              timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def decoded(values: dict[int, bytes]) -> dict[int, Any]:
    """Each value as the display reads it in auto mode: its label and its text or record."""
    engine = ValueEngine(cap=CAP)
    out = {}
    for i, value in values.items():
        view = engine.view(value)
        out[i] = (view.label, view.text if view.record is None else view.record)
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_export_then_load_gives_every_value_back_byte_for_byte(cassandra, ks, session, source, tmp_path,
                                                                fmt) -> None:
    path = tmp_path / f"src.{fmt}"
    name = f"twin_{fmt}"
    twin(session, name)
    # Parquet's struct cannot tell a null from a key absent: RAW's stored bytes settle it (load.md)
    raw = " WITH RAW = true" if fmt == "parquet" else ""
    shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM src) TO '{path}'{raw}")
    preview = shell(cassandra, tmp_path, ks, f"COPY {name} FROM '{path}'").stdout
    rows = len(source)
    assert f"read {rows} rows: {rows} new, 0 overwritten" in preview, preview
    assert "Nothing written: add CONFIRM" in preview and stored(session, name) == {}
    done = shell(cassandra, tmp_path, ks, f"COPY {name} FROM '{path}' CONFIRM").stdout
    assert f"{rows} rows written ({rows} new, 0 overwritten)" in done, done
    if fmt == "jsonl":  # every value written by its label's writers but the one in no known format
        assert "data: 1 bytes as the source gives them, 1 bzip2>json" in done and "1 gzip>java" in done, done
    else:  # and the texts, which do not fit the struct Parquet types the column with: their stored bytes
        assert f"data: {len(TEXT_CHAINS) + 1} bytes as the source gives them" in done, done
    after = stored(session, name)
    assert decoded(after) == decoded(source)
    assert after == source  # every writer deterministic: the same bytes


def test_columns_whose_setting_names_the_chain_and_several_blob_columns(cassandra, ks, session,
                                                                       tmp_path) -> None:
    """Chains auto mode cannot tell (snappy raw, the size-less LZ4 block, raw deflate, brotli, LZ4
    blocks with a big-endian size), each a column of one table whose DECODE setting names it: the
    export reads them by it, the load writes them in it, five blob columns in one load."""
    columns = ", ".join(f"{c} blob" for c in SET_COLUMNS)
    session.execute(f"CREATE TABLE settled (id int PRIMARY KEY, {columns})")
    twin(session, "settled_twin", columns)
    insert = session.prepare(f"INSERT INTO settled (id, {', '.join(SET_COLUMNS)}) VALUES "
                             f"(?, {', '.join('?' for _ in SET_COLUMNS)})")
    for i in range(6):
        session.execute(insert, (i, *(encode(chain, compact(document(i)), CAP).value
                                      for chain in SET_COLUMNS.values())))
    settings = [f"DECODE '{ks}.{t}.{c}' AS '{chain}'" for t in ("settled", "settled_twin")
                for c, chain in SET_COLUMNS.items()]
    path = tmp_path / "settled.jsonl"
    out = shell(cassandra, tmp_path, ks, *settings, f"COPY (SELECT * FROM settled) TO '{path}'",
                f"COPY settled_twin FROM '{path}' CONFIRM").stdout
    assert "6 rows written (6 new, 0 overwritten)" in out, out
    for column, chain in SET_COLUMNS.items():
        assert f"  {column}: 6 {chain}\n" in out, out  # written in its setting's chain
        assert stored(session, "settled_twin", column) == stored(session, "settled", column), chain


def test_csv_with_encode_keeps_json_text_as_it_was_spelt(cassandra, ks, session, tmp_path) -> None:
    """CSV holds a JSON text as stored (its spaces too, which JSON Lines' payload object leaves out):
    with ENCODE naming the chain the load writes the same bytes; without ENCODE a COPY FROM of a
    CSV file is cqlsh's own (stored bytes as 0x...)."""
    session.execute("CREATE TABLE spaced (id int PRIMARY KEY, data blob)")
    twin(session, "spaced_twin")
    values = {i: encode("snappy", json.dumps(document(i)), CAP).value for i in range(5)}
    for i, value in values.items():
        session.execute("INSERT INTO spaced (id, data) VALUES (%s, %s)", (i, value))
    path = tmp_path / "spaced.csv"
    out = shell(cassandra, tmp_path, ks, f"COPY (SELECT * FROM spaced) TO '{path}'",
                f"COPY spaced_twin FROM '{path}' WITH ENCODE data = 'snappy>json' CONFIRM").stdout
    assert "5 rows written (5 new, 0 overwritten)" in out, out
    assert stored(session, "spaced_twin") == values
    # JSON Lines' object holds the same document minified: the same document, compact bytes.
    path = tmp_path / "spaced.jsonl"
    shell(cassandra, tmp_path, ks, "TRUNCATE spaced_twin", f"COPY (SELECT * FROM spaced) TO '{path}'",
          f"COPY spaced_twin FROM '{path}' CONFIRM")
    engine = ValueEngine(cap=CAP)
    assert {i: engine.view(v).text for i, v in stored(session, "spaced_twin").items()} == \
        {i: json.dumps(document(i), separators=(",", ":")) for i in values}
    # cqlsh's own COPY FROM reads a CSV of stored bytes as before.
    raw = tmp_path / "raw.csv"
    shell(cassandra, tmp_path, ks, f"COPY spaced TO '{raw}'", "TRUNCATE spaced_twin",
          f"COPY spaced_twin FROM '{raw}'")
    assert stored(session, "spaced_twin") == values
