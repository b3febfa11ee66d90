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
  column_names): a static column after the keys.
- A decoded record's map holding the integer 1 and the text "1" keeps both at every door (the
  shell's JSON, MCP's query, the API's rows and Arrow table), each key its own JSON text; a
  MessagePack map's 1, 1.0 and true are three keys; msgpack's and cbor2's own records the oracle.
- A JSON Lines row is one line for str.splitlines() whatever its strings hold (U+2028...)."""

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


#: A record whose maps hold the integer 1 and the text "1" (MessagePack and CBOR maps may: keys
#: of any type), one map nested, one map of integer keys alone.
RECORD: dict[Any, Any] = {1: "int one", "1": "text one", "n": {2: "int two", "2": "text two"},
                          "plain": {3: "three"}}
#: Its JSON at every door: a map whose keys would be one name twice has each key as its own JSON
#: text (a text key in its quotes); a map without such keys is as it was.
RECORD_JSON = {"1": "int one", '"1"': "text one", '"n"': {"2": "int two", '"2"': "text two"},
               '"plain"': {"3": "three"}}
#: Text a line-oriented reader (str.splitlines(), JavaScript before ES2019) cuts a line at.
LINE_BREAKS = "a\u2028b\u2029c\x85d"


@pytest.fixture(scope="module")
def records(cassandra, table: str) -> str:  # type: ignore[no-untyped-def]
    """Records the producer libraries wrote, gzipped: msgpack's and cbor2's RECORD (rows 1, 2);
    LINE_BREAKS in a JSON text, a msgpack record and a text column (row 3); a msgpack map keyed
    1, 1.0, true and "1" (row 4)."""
    import cbor2
    import msgpack

    ks = table.split(".")[0]  # the module's keyspace: one table more, no keyspace made
    session = cassandra.session(ks)
    session.execute("CREATE TABLE records (k int PRIMARY KEY, data blob, doc blob, note text)")
    insert = session.prepare("INSERT INTO records (k, data, doc, note) VALUES (?, ?, ?, ?)")
    session.execute(insert, (1, gzip.compress(msgpack.packb(RECORD), mtime=0), None, None))
    session.execute(insert, (2, gzip.compress(cbor2.dumps(RECORD), mtime=0), None, None))
    # 1, 1.0 and true: three keys of a MessagePack map (msgpack's Packer writes them as given)
    alike = msgpack.Packer().pack_map_pairs([(1, "int"), (1.0, "float"), (True, "bool"), ("1", "text")])
    session.execute(insert, (4, gzip.compress(alike, mtime=0), None, None))
    text = json.dumps({"note": LINE_BREAKS}, ensure_ascii=False).encode()
    session.execute(insert, (3, gzip.compress(msgpack.packb({"note": LINE_BREAKS}), mtime=0),
                             gzip.compress(text, mtime=0), LINE_BREAKS))
    session.shutdown()
    return f"{ks}.records"


def test_a_record_s_integer_and_text_keys_alike_are_both_kept(cassandra, records: str,
                                                              tmp_path: Path) -> None:
    """The integer 1 and the text "1" of one MessagePack or CBOR map were one JSON name, written
    twice in the shell's JSON and its export (JSON keeps the last) and once in MCP's and the API's
    rows, the other value lost. Each is kept at every door, each key saying its type."""
    statement = f"SELECT k, data FROM {records} WHERE k IN (1, 2)"
    lines = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement).checked_stdout().splitlines()
    shell = {row["k"]: row["data"] for row in map(json.loads, lines)}
    assert {k: (data["label"], data["payload"]) for k, data in shell.items()} == {
        1: ("gzip>msgpack", RECORD_JSON), 2: ("gzip>cbor", RECORD_JSON)}
    target = tmp_path / "records.jsonl"
    ext(cassandra, tmp_path, "-e", f"COPY ({statement}) TO '{target}'").checked_stdout()
    exported = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert {row["k"]: row["data"]["payload"] for row in exported} == {1: RECORD_JSON, 2: RECORD_JSON}
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port)], tmp_path) as server:
        answer = server.call("query", statement=statement).data
    assert {row["k"]: row["data"]["payload"] for row in answer["rows"]} == {1: RECORD_JSON, 2: RECORD_JSON}

    import cqlsh_ext

    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password) as db:
        assert {row["k"]: row["data"] for row in db.query(statement)} == {1: RECORD_JSON, 2: RECORD_JSON}
        table = db.query(statement).to_arrow()
    assert table.column("data").to_pylist() == [RECORD_JSON, RECORD_JSON]
    # The keys read back as the producers' keys, each with its type.
    assert {json.loads(name) for name in RECORD_JSON} == set(RECORD)


def test_a_json_lines_row_is_one_line_whatever_its_text_holds(cassandra, records: str,
                                                              tmp_path: Path) -> None:
    """U+2028, U+2029 and U+0085 in a string (a text column, a JSON text, a record's string) are
    written escaped: str.splitlines() cut the row into four, a line json.loads cannot read."""
    statement = f"SELECT note, doc, data FROM {records} WHERE k = 3"
    text = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement).checked_stdout()
    (line,) = text.splitlines()
    row = json.loads(line)
    assert (row["note"], row["doc"]["payload"], row["data"]["payload"]) == (
        LINE_BREAKS, {"note": LINE_BREAKS}, {"note": LINE_BREAKS})
    target = tmp_path / "breaks.jsonl"
    ext(cassandra, tmp_path, "-e", f"COPY ({statement}) TO '{target}'").checked_stdout()
    (line,) = target.read_text(encoding="utf-8").splitlines()
    assert json.loads(line) == row


def test_a_msgpack_map_s_keys_1_and_1_0_and_true_are_three_keys(cassandra, records: str,
                                                                tmp_path: Path) -> None:
    """1 == 1.0 == True in Python: its dict held one key of the three, the last value, the others
    lost without a word. Read as the column names it (detection takes no such map for a record),
    each is a key of its own, as itself."""
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext.decode]\n{records}.data = gzip>msgpack\n")
    lines = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "--output-format", "json",
                "-e", f"SELECT data FROM {records} WHERE k = 4").checked_stdout().splitlines()
    (row,) = map(json.loads, lines)
    assert row["data"]["payload"] == {"1": "int", "1.0": "float", "true": "bool", '"1"': "text"}
