"""The values a user reads at the data doors (the shell's JSON Lines and CSV, MCP's query) are
the values the server holds, checked against an oracle apart from the code: the cassandra-driver's
own reading of the same row, and the json and csv modules reading the doors' text back.

- No two keys of a map spell alike: two blob keys holding the same document in gzip (their
  headers' times apart) are two keys, each with its stored bytes (`raw`), none lost when JSON
  reads the object (a JSON object keeps one value a key).
- A float is a JSON float: -0.0 keeps its sign and 1.0 reads back as 1.0, as a double does
  (a float's `-0` and `1` read back as the integers 0 and 1).
- A typed export (WITH SAMPLE_ROWS: the Parquet file's columns as JSON Lines or CSV) spells a
  float so too, its own shortest text (0.1, not its double's 0.10000000149011612).
- A duration is a CQL literal of the same duration, the zero one `0s` (cqlsh prints nothing,
  which CQL reads as no duration and a CSV field as a null).
- A payload query's `*` is the columns the server's `SELECT *` gives, in its order (the driver's
  column_names): a static column after the keys."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from mcp_server.harness import McpServer, write_credentials
from shell_runner import ext

pytestmark = pytest.mark.server

DOCUMENT = json.dumps({"id": 7}).encode()
#: The same document in gzip twice, the header's time apart: two distinct keys of one map.
KEYS = (gzip.compress(DOCUMENT, mtime=0), gzip.compress(DOCUMENT, mtime=1))
#: The one row the doors read (the durations' check writes row 2).
STATEMENT = "SELECT mb, mu, f, d, v, lf, du, dn FROM {table} WHERE k = 1"


@pytest.fixture(scope="module")
def table(cassandra) -> str:  # type: ignore[no-untyped-def]
    """One row: a map of blob keys, a map of UDT keys holding such a blob, floats and doubles."""
    ks = cassandra.create_keyspace("doors")
    session = cassandra.session(ks)
    session.execute('CREATE TYPE doc ("Field Name" text, data blob)')
    session.execute("CREATE TABLE t (k int PRIMARY KEY, mb map<blob, int>, mu map<frozen<doc>, int>, "
                    "f float, d double, v vector<float, 3>, lf list<float>, du duration, dn duration)")
    a, b = (f"0x{key.hex()}" for key in KEYS)
    session.execute(f"INSERT INTO t (k, mb, mu, f, d, v, lf, du, dn) VALUES (1, {{{a}: 1, {b}: 2}}, "
                    f"{{{{\"Field Name\": 'x', data: {a}}}: 1, {{\"Field Name\": 'x', data: {b}}}: 2}}, "
                    f"-0.0, -0.0, [-0.0, 1.0, 16777216.0], [1.0, -0.0, 0.1], 0s, -1mo2d3ns)")
    session.shutdown()
    return f"{ks}.t"


@pytest.fixture(scope="module")
def oracle(cassandra, table: str) -> Any:  # type: ignore[no-untyped-def]
    """The row as the driver reads it."""
    session = cassandra.session()
    try:
        row = session.execute(f"SELECT * FROM {table} WHERE k = 1").one()
    finally:
        session.shutdown()
    assert set(row.mb) == set(KEYS) and len(row.mu) == 2  # the server holds two keys each
    return row


def exactly(numbers: list[Any]) -> list[tuple[type, float, bytes]]:
    """Numbers as a reader tells them apart: their type, their sign (-0.0 from 0.0), their value as
    a 32-bit float (the float columns' type; the double's -0.0 is one too)."""
    return [(type(n), math.copysign(1, n), struct.pack(">f", n)) for n in numbers]


def stored_keys(spelt: dict[str, Any]) -> dict[bytes, Any]:
    """A spelt map of blob keys by each key's stored bytes (its `raw`), its values."""
    return {bytes.fromhex(json.loads(key)["raw"][2:]): value for key, value in spelt.items()}


def check_row(row: dict[str, Any], oracle: Any, cassandra: Any, table: str) -> None:
    assert (len(row["mb"]), len(row["mu"])) == (len(oracle.mb), len(oracle.mu))  # no key lost
    assert stored_keys(row["mb"]) == dict(oracle.mb)
    for key in row["mb"]:
        assert json.loads(key)["payload"] == json.loads(DOCUMENT)  # decoded, as every blob is
    by_data = {bytes.fromhex(json.loads(key)["data"]["raw"][2:]): value for key, value in row["mu"].items()}
    assert by_data == {key.data: value for key, value in oracle.mu.items()}
    assert exactly([row["f"], row["d"], *row["v"], *row["lf"]]) == \
        exactly([oracle.f, oracle.d, *oracle.v, *oracle.lf])
    # Each duration, written back as CQL, is the same duration (the server reads it).
    session = cassandra.session()
    try:
        session.execute(f"INSERT INTO {table} (k, du, dn) VALUES (2, {row['du']}, {row['dn']})")
        again = session.execute(f"SELECT du, dn FROM {table} WHERE k = 2").one()
    finally:
        session.shutdown()
    assert (again.du, again.dn) == (oracle.du, oracle.dn)


def test_the_shell_s_json_and_csv_keep_every_map_key_and_every_float(cassandra, table: str, oracle,
                                                                     tmp_path: Path) -> None:
    statement = ["-e", STATEMENT.format(table=table)]
    lines = ext(cassandra, tmp_path, "--output-format", "json", *statement).checked_stdout().splitlines()
    (row,) = [json.loads(line) for line in lines]
    check_row(row, oracle, cassandra, table)
    text = ext(cassandra, tmp_path, "--output-format", "csv", *statement).checked_stdout()
    (field,) = csv.DictReader(io.StringIO(text))
    check_row({**{name: json.loads(field[name]) for name in ("mb", "mu", "v", "lf")},
               "f": float(field["f"]), "d": float(field["d"]), "du": field["du"], "dn": field["dn"]},
              oracle, cassandra, table)


def test_mcp_s_query_keeps_every_map_key_and_every_float(cassandra, table: str, oracle,
                                                        tmp_path: Path) -> None:
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port)], tmp_path) as server:
        answer = server.call("query", statement=STATEMENT.format(table=table)).data
    (row,) = answer["rows"]
    check_row(row, oracle, cassandra, table)


def test_a_typed_export_spells_a_float_as_its_shortest_text(cassandra, table: str, oracle,
                                                           tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    want = [str(np.float32(x)) for x in (oracle.f, *oracle.v, *oracle.lf)]  # numpy's shortest text
    assert want == ["-0.0", "-0.0", "1.0", "16777216.0", "1.0", "-0.0", "0.1"]
    select = f"SELECT f, v, lf FROM {table} WHERE k = 1"
    for suffix in ("jsonl", "csv"):
        target = tmp_path / f"typed.{suffix}"
        copy = f"COPY ({select}) TO '{target}' WITH SAMPLE_ROWS = 10"
        ext(cassandra, tmp_path, "-e", copy).checked_stdout()
        if suffix == "jsonl":
            (row,) = [json.loads(line, parse_float=str) for line in target.read_text().split("\n") if line]
        else:
            (field,) = csv.DictReader(io.StringIO(target.read_text()))
            row = {"f": field["f"], "v": json.loads(field["v"], parse_float=str),
                   "lf": json.loads(field["lf"], parse_float=str)}
        assert [row["f"], *row["v"], *row["lf"]] == want, suffix


def test_a_payload_query_s_star_is_the_server_s_columns_in_its_order(cassandra, tmp_path: Path) -> None:
    """`*` beside a payload condition stands for the columns the server's `SELECT *` gives, in its
    order: the keys, the static columns, then the others (a static column was put among the
    others by name, so the same table's columns came in two orders)."""
    ks = cassandra.create_keyspace("star")
    session = cassandra.session(ks)
    try:
        session.execute("CREATE TABLE t (k int, c int, zs text STATIC, a int, data blob, PRIMARY KEY (k, c))")
        session.execute("INSERT INTO t (k, c, zs, a, data) VALUES (1, 1, 'z', 5, %s)", (b'{"n": 1}',))
        oracle = list(session.execute(f"SELECT * FROM {ks}.t").column_names)
    finally:
        session.shutdown()
    assert oracle == ["k", "c", "zs", "a", "data"]
    text = ext(cassandra, tmp_path, "--output-format", "csv", "-e",
               f"SELECT * FROM {ks}.t WHERE data.n = 1 ALLOW FILTERING").checked_stdout()
    (header, row) = list(csv.reader(io.StringIO(text)))
    assert (header, row) == (oracle, ["1", "1", "z", "5", '{"n": 1}'])
