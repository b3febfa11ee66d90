"""`cqlsh-ext mcp` against the real Cassandra, driven by the MCP SDK's own client over stdio: each
tool's answer is the shell's JSON for the same question (`cqlsh-ext ... --output-format json -e`),
writes in tricky spellings are refused and leave the table as it was, answers keep to their cap
(measured on the message the client received) and say so, a hostile value is cut inside the
answer, calls made at once each get their own answer, and no byte the server writes holds the
password it logged in with."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_runner import CQLSH_EXT, load_demo
from shell_runner import run as run_binary

from cqlsh_ext.features import read_features
from cqlsh_ext.mcp_server import answers, hints, sizing
from cqlsh_ext.mcp_server.tools import TOOLS

from .harness import McpServer, shell_json, shell_text, write_credentials
from .writes import WRITES

#: The login of these tests: a role of their own, with a password no output may contain.
ROLE, PASSWORD = "mcp_reader", "Mcp-Test-Pa55word-7319!"
#: Keys whose values change from one reading to the next (timings, a sample's estimate).
VOLATILE = {"elapsed_s", "rows_per_s", "seconds", "why", "partitions_estimate", "slices_read", "seed"}
#: An answer's cap large enough for the whole of what the shell prints (the default is 32 KiB).
WHOLE = 1 << 20


def _steady(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _steady(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [_steady(v) for v in doc]
    return doc


@pytest.fixture(scope="module")
def login(cassandra) -> tuple[str, str]:
    session = cassandra.session()
    session.execute(f"CREATE ROLE IF NOT EXISTS {ROLE} WITH PASSWORD = '{PASSWORD}' AND LOGIN = true")
    session.shutdown()
    return ROLE, PASSWORD


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, login: tuple[str, str]) -> Path:
    home = tmp_path_factory.mktemp("mcp-home")
    write_credentials(home, *login)
    return home


@pytest.fixture(scope="module")
def demo(cassandra, home: Path) -> str:
    """The demo keyspace (cqlsh-ext demo load), 200 documents per JSON table."""
    keyspace = f"mcp_demo_{os.getpid()}"
    load_demo(cassandra, keyspace, 200, home)
    return keyspace


@pytest.fixture(scope="module")
def conn(cassandra) -> list[str]:
    """The connection arguments the shell and the server are both given (the login: ~/.cassandra)."""
    return [cassandra.host, str(cassandra.port)]


@pytest.fixture(scope="module")
def server(conn: list[str], home: Path, demo: str) -> Iterator[McpServer]:
    write_credentials(home / "server", ROLE, PASSWORD)
    with McpServer(conn, home / "server") as server:
        yield server


@pytest.fixture(scope="module")
def shell_home(home: Path) -> Path:
    """The shell's own HOME, with the same credentials."""
    shell = home / "shell"
    write_credentials(shell, ROLE, PASSWORD)
    return shell


# ------------------------------------------------------------------ the tools, as the shell answers


def test_the_tools_are_listed_read_only_with_their_arguments(server: McpServer) -> None:
    tools = {tool.name: tool for tool in server.tools()}
    # Every declared read feature, in the registry's order (its entry points' names), a package's
    # (the tests' plugins) after cqlsh-ext's own: a new report is listed with no word here. A tool
    # that writes a file (export) is served with an export directory (--export-dir) only.
    assert list(tools) == [name for name in read_features() if not TOOLS[name].files]
    assert {"list_keyspaces", "query", "compression_stats", "propose_edit"} <= set(tools)
    assert "export" not in tools and TOOLS["export"].files
    for name, tool in tools.items():
        assert tool.annotations.read_only_hint is True and tool.annotations.open_world_hint is False
        assert tool.input_schema["required"] == list(TOOLS[name].required)
    assert set(tools["query"].input_schema["properties"]) == {"statement", "limit", "decode", "cursor",
                                                              "max_bytes"}
    assert set(tools["describe_payload"].input_schema["properties"]) == {
        "column", "sample", "where", "decode", "json_schema", "every_row", "confirm", "max_bytes"}
    for tool in tools.values():  # every tool: its cap stated, an argument, a schema of its answer
        assert "10 KB" in (tool.description or "") and "max_bytes" in tool.input_schema["properties"]
        assert tool.output_schema == TOOLS[tool.name].output_schema and tool.output_schema["type"] == "object"
        assert "properties" in tool.output_schema or "anyOf" in tool.output_schema


def test_keyspaces_and_tables_as_the_shell_lists_them(server: McpServer, conn, shell_home, demo) -> None:
    # Every answer, each cut one's cursor followed: a server reused by many runs holds more keyspaces
    # than one answer's rows.
    answers = [server.call("list_keyspaces").data]
    while "cursor" in answers[-1]:
        assert len(answers) < 100
        answers.append(server.call("list_keyspaces", cursor=answers[-1]["cursor"]).data)
    expected, _ = shell_json(conn, "SELECT keyspace_name FROM system_schema.keyspaces", shell_home)
    # The keyspaces of credentials and of other sessions' statements are never read, nor listed, nor
    # the system keyspaces none of whose tables is read.
    hidden = {"system_auth", "system_traces", "system_distributed"}
    assert hidden <= {row["keyspace_name"] for row in expected}
    assert [row for answer in answers for row in answer["rows"]] == \
        [row for row in expected if row["keyspace_name"] not in hidden]
    assert {"keyspace_name": demo} in expected
    for keyspaces in answers:
        assert not [note for note in keyspaces["notes"] if "not listed" in note]  # the hidden not counted
        # A cut answer read the row that did not fit (the next answer's first); the last, what it answers.
        assert keyspaces["reading"]["rows_read"] == len(keyspaces["rows"]) + ("cursor" in keyspaces), \
            [(a["reading"]["rows_read"], len(a["rows"]), "cursor" in a) for a in answers]
    tables = server.call("list_tables", keyspace=demo).data
    statement = f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{demo}'"
    expected, _ = shell_json(conn, statement, shell_home)
    assert tables["rows"] == expected
    assert [row["table_name"] for row in expected] == [
        "blob_formats", "nested_blobs", "table_with_compressed_json", "table_with_uncompressed_json"]
    assert tables["cut"] is None and tables["count"] == 4


def test_describe_table_gives_the_schema_and_where_the_payloads_are(server, conn, shell_home, demo) -> None:
    for table, holds in (("table_with_compressed_json", {"id": None, "data": "blob"}),
                         ("table_with_uncompressed_json", {"id": None, "data": "JSON text"}),
                         ("blob_formats", {"name": None, "producer": "text", "data": "blob"}),
                         ("nested_blobs", {"id": None, "attached": "blobs inside", "pair": "blobs inside",
                                           "by_codec": "blobs inside", "history": "blobs inside"})):
        answer = server.call("describe_table", table=f"{demo}.{table}").data
        # (the shell's DESCRIBE as text: under --output-format json it answers an object)
        described = run_binary(CQLSH_EXT, [*conn, "-e", f"DESCRIBE TABLE {demo}.{table}"], shell_home)
        assert answer["cql"] == described.stdout.strip(), described.stderr
        assert {c["name"]: c["holds"] for c in answer["columns"]} == holds, answer["columns"]
    texts = server.call("describe_table", table=f"{demo}.table_with_uncompressed_json").data["columns"]
    assert texts[1]["sample"] == {"values_read": 20, "json": 20}
    assert server.call("describe_table", table=f"{demo}.no_such_table").is_error


QUERIES = [
    "SELECT name, producer, data FROM {ks}.blob_formats",
    "SELECT * FROM {ks}.nested_blobs",
    "SELECT data.status, data.customer.name, data.items[0].sku FROM {ks}.table_with_compressed_json LIMIT 7",
    "SELECT id, data.orderId FROM {ks}.table_with_compressed_json WHERE data.status = 'PAID' "
    "AND data.payment.captured = true ALLOW FILTERING",
    "SELECT data.status, count(*), avg(data.items[0].unitPrice) FROM {ks}.table_with_compressed_json "
    "GROUP BY data.status ALLOW FILTERING",
    "SELECT id, data FROM {ks}.table_with_uncompressed_json LIMIT 3",
    "SELECT name FROM {ks}.blob_formats WHERE data IS UNDECODABLE ALLOW FILTERING",
]


@pytest.mark.parametrize("statement", QUERIES)
def test_query_answers_the_rows_the_shell_prints(server, conn, shell_home, demo, statement: str) -> None:
    text = statement.format(ks=demo)
    answer = server.call("query", statement=text, limit=1000, max_bytes=WHOLE).data
    rows, said = shell_json(conn, text, shell_home)
    # A long value (a text column's JSON of a few KB) is cut inside the answer, the cut said.
    rows, cuts = sizing.cut_value(rows, path="rows")
    assert answer.get("values_cut", []) == cuts
    # count(*) is named `count`, in the shell as by the MCP server, its columns as its rows: as
    # Cassandra names it for a plain SELECT.
    if "count(*)" in text:
        assert all("count" in row and "count(*)" not in row for row in rows + answer["rows"])
        assert "count" in [column["name"] for column in answer["columns"]]
    if "ALLOW FILTERING" in text and "GROUP BY" not in text:
        # A whole table: the shell reads it by token ranges at once, the query tool as one stream in
        # the server's order (so that a cut answer's cursor goes on): the same rows, in another
        # order, and the closing line says how each read it.
        assert sorted(map(json.dumps, answer["rows"])) == sorted(map(json.dumps, rows))
        said = [re.sub(r", \d+ parallel streams\b", ", single stream", line) for line in said]
    else:
        assert answer["rows"] == rows
    assert answer["count"] == len(rows) > 0 and answer["cut"] is None
    assert answer["notes"] == said  # a payload query's closing line, as the shell says it
    assert answer["statement"] == sizing.prefix(text) and "cursor" not in answer


def _script_line(line: str) -> str:
    """A message of `-e` without the script position cqlsh puts before it ('<stdin>:1:')."""
    return line.removeprefix("<stdin>:1:")


def test_query_says_what_a_statement_needs_as_the_shell_does(server, conn, shell_home, demo) -> None:
    text = f"SELECT id FROM {demo}.table_with_compressed_json WHERE data.status = 'PAID'"
    answer = server.call("query", statement=text)
    _, said = shell_json(conn, text, shell_home)
    assert answer.error == _script_line(said[0]) and "ALLOW FILTERING" in answer.error
    # The server's own refusal, and an unknown table: the shell's one line each, the server lives on.
    text = f"SELECT v FROM {demo}.table_with_compressed_json WHERE v = 1"
    _, said = shell_json(conn, text, shell_home)
    assert server.call("query", statement=text).error == _script_line(said[0])
    assert "no_such" in server.call("query", statement=f"SELECT * FROM {demo}.no_such").error
    assert server.call("list_tables", keyspace=demo).data["count"] == 4


def test_a_column_name_said_twice_is_refused_not_one_value_dropped(server, demo) -> None:
    """Rows are objects, one value a name: SELECT id AS v, data AS v answered {"v": ...} with the
    id dropped. Refused in one line that says how; the same columns under two names answer both."""
    table = f"{demo}.table_with_compressed_json"
    answer = server.call("query", statement=f"SELECT id AS v, data AS v FROM {table} LIMIT 1")
    assert answer.error is not None and "'v' twice" in answer.error and "\n" not in answer.error
    rows = server.call("query", statement=f"SELECT id AS v, id AS w FROM {table} LIMIT 2").data["rows"]
    assert len(rows) == 2 and all(set(row) == {"v", "w"} and row["v"] == row["w"] for row in rows)


def test_rows_stop_at_the_limit_and_at_the_byte_cap_and_say_so(server, conn, shell_home, demo) -> None:
    text = f"SELECT id, data FROM {demo}.table_with_compressed_json"
    rows, _ = shell_json(conn, text, shell_home)
    assert len(rows) == 200
    first = server.call("query", statement=text, limit=10, max_bytes=WHOLE).data
    assert first["rows"] == rows[:10] and first["count"] == 10
    assert first["cut"].startswith("at the limit of 10 rows") and first["cursor"]
    # The default cap: 10,000 bytes of the message the client received, the rows before it whole.
    capped = server.call("query", statement=text, limit=10_000)
    received = _received(server)
    data = capped.data
    assert 0 < data["count"] < 200 and data["rows"] == rows[:data["count"]]
    # Kept to as received, and filled: the next row would not have fitted beside what is kept free
    # for the answer's closing figures.
    spelt = json.dumps(rows[data["count"]], ensure_ascii=False, separators=(",", ":"))
    following = sizing.row_cost(spelt.encode())
    assert len(received) <= sizing.DEFAULT_ANSWER_BYTES < len(received) + following + answers.TAIL_BYTES
    assert data["cut"].startswith(f"at {sizing.DEFAULT_ANSWER_BYTES:,} bytes, the answer's cap")
    assert data["cursor"]
    # max_bytes: larger than the default, kept to as sent too.
    large = server.call("query", statement=text, max_bytes=24_000).data
    assert len(_received(server)) <= 24_000 and data["count"] < large["count"]
    assert large["rows"] == rows[:large["count"]] and "values_cut" not in large
    # A first row larger than so small an answer (its text carries its summary, with the cursor,
    # twice: a few hundred bytes): answered with its values cut inside, the cuts said, the cursor
    # past it (tests/mcp_server/test_rows_over_the_cap.py walks such rows to the end).
    small = server.call("query", statement=text, max_bytes=2560).data
    assert len(_received(server)) <= 2560 and small["count"] == 1 and small["cursor"]
    assert small["values_cut"] and "value_size" in small["truncated"]
    assert server.call("query", statement=text, max_bytes=100).error.startswith(
        "max_bytes must be a whole number")


def _received(server: McpServer) -> bytes:
    """The last answer's message as the client received it (the wire's last line, its newline apart)."""
    line = server.wire.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    assert b'"result"' in line
    return line


def test_a_hostile_value_is_cut_inside_the_answer(server, conn, home, shell_home, cassandra) -> None:
    import zstandard

    keyspace = cassandra.create_keyspace("mcp_hostile")
    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    bomb = zstandard.ZstdCompressor().compress(b'{"a": "' + b"x" * (64 << 20) + b'"}')  # 64 MB from 2 KB
    session.execute("INSERT INTO t (id, data) VALUES (1, %s)", (bomb,))
    session.execute("INSERT INTO t (id, data) VALUES (2, %s)", (b"small and plain",))
    session.shutdown()
    text = f"SELECT id, data FROM {keyspace}.t"
    # The shell's cap (4 MiB a value) cuts the bomb as it decodes; the answer cuts it again, inside.
    rows, _ = shell_json(conn, text, shell_home)
    shell_bomb = next(row["data"] for row in rows if row["id"] == 1)
    assert shell_bomb["cut"].startswith("first 4.0 MiB of 64.0 MiB")
    answer = server.call("query", statement=text).data
    assert len(_received(server)) <= sizing.DEFAULT_ANSWER_BYTES and answer["count"] == 2
    bomb_row = next(row["data"] for row in answer["rows"] if row["id"] == 1)
    assert bomb_row["payload"] == shell_bomb["payload"][:2000] + "…"
    assert bomb_row["cut"] == shell_bomb["cut"] and bomb_row["size"] == (64 << 20) + 9
    at = answer["rows"].index(next(row for row in answer["rows"] if row["id"] == 1))
    whole = len(shell_bomb["payload"])
    assert answer["values_cut"] == [f"rows[{at}].data.payload: 2,000 of {whole:,} characters"]
    assert server.call("query", statement=f"{text} WHERE id = 2").data["rows"] == [
        {"id": 2, "data": {"label": "text", "kind": "text", "confidence": "guessed",
                            "payload": "small and plain"}}]
    # A first row too large whole even so: its values cut harder until it fits, the cuts said (the
    # answer's text carries its summary twice, a few hundred bytes of the cap).
    tight = server.call("query", statement=f"{text} WHERE id = 1", max_bytes=3072).data
    assert len(_received(server)) <= 3072 and tight["count"] == 1
    assert tight["values_cut"][0].startswith("rows[0].data.payload: ")
    assert len(tight["rows"][0]["data"]["payload"]) < 600


def test_reports_are_the_shells_json(server, conn, shell_home, demo) -> None:
    for tool, arguments, statement in (
            ("describe_payload", {"column": f"{demo}.table_with_compressed_json.data"},
             f"DESCRIBE PAYLOAD {demo}.table_with_compressed_json.data"),
            ("describe_payload", {"column": f"{demo}.table_with_compressed_json.data",
                                  "where": "data.status = 'PAID'"},
             f"DESCRIBE PAYLOAD {demo}.table_with_compressed_json.data WHERE data.status = 'PAID'"),
            ("compression_stats", {"table": f"{demo}.blob_formats"},
             f"COMPRESSION STATS {demo}.blob_formats"),
            ("compression_stats", {"table": f"{demo}.table_with_compressed_json", "column": "data"},
             f"COMPRESSION STATS SELECT data FROM {demo}.table_with_compressed_json"),
            ("compression_settings", {"table": f"{demo}.blob_formats"},
             f"COMPRESSION SETTINGS {demo}.blob_formats")):
        answer = server.call(tool, max_bytes=WHOLE, **arguments).data
        assert answer.pop("truncated") is False  # no cap cut it: said in every answer
        # The shell's report, its hints said in the tools' terms (no COMPRESSION TRIAL, no DECODE).
        report = hints.report(json.loads(shell_text(conn, statement, shell_home)))
        assert _steady(answer) == _steady(report), (tool, arguments)
    paid = server.call("describe_payload", column=f"{demo}.table_with_compressed_json.data",
                       where="data.status = 'PAID'").data
    assert 0 < paid["rows_read"] <= 200 and paid["places"][0]["encodings"][0]["label"].endswith(">json")


def test_inspect_value_is_the_shells_inspect(server, conn, shell_home, demo) -> None:
    statement = f"SELECT data FROM {demo}.blob_formats WHERE name = 'zstd'"
    answer = server.call("inspect_value", statement=statement, max_bytes=WHOLE).data
    values, _ = shell_json(conn, f"INSPECT {statement}", shell_home)
    assert answer["values"] == values and len(values) == 1 and values[0]["chain"] == ["zstd"]
    # The tool's request built from the SELECT (a whole-table read, its LIMIT) reads what the shell's does.
    for statement in (f"SELECT name, data FROM {demo}.blob_formats LIMIT 3",
                      f"SELECT data FROM {demo}.blob_formats PER PARTITION LIMIT 1 LIMIT 2"):
        answer = server.call("inspect_value", statement=statement, max_bytes=WHOLE).data
        values, _ = shell_json(conn, f"INSPECT {statement}", shell_home)
        assert answer["values"] == values and len(values) == int(statement[-1]), statement
    assert server.call("inspect_value", statement=f"DESCRIBE TABLE {demo}.blob_formats").error.startswith(
        "refused: this tool takes one SELECT")


# ------------------------------------------------------------------ read-only, and no way around it


def test_write_attempts_are_refused_and_nothing_changes(server, cassandra, demo, tmp_path: Path) -> None:
    session = cassandra.session()
    table = f"{demo}.blob_formats"

    def state() -> Any:
        def rows(statement: str) -> list[Any]:
            return sorted(tuple(row) for row in session.execute(statement))

        return (rows(f"SELECT * FROM {table}"),
                rows(f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{demo}'"),
                rows("SELECT keyspace_name FROM system_schema.keyspaces"),
                rows("SELECT role, salted_hash FROM system_auth.roles"))

    (tmp_path / "rows.csv").write_text("999,0x00\n")
    (tmp_path / "script.cql").write_text(f"TRUNCATE {table};\n")
    before = state()
    fields = {"t": table, "ks": demo, "dir": tmp_path}
    attempts = [(tool, {"statement": attempt.format(**fields)}) for attempt in WRITES
                for tool in ("query", "inspect_value")]
    attempts += [  # the other tools' arguments, as a way in
        ("list_tables", {"keyspace": f"{demo}'; DROP TABLE {table}; --"}),
        ("list_tables", {"keyspace": f"{demo}\nDROP TABLE {table}"}),
        ("describe_table", {"table": f"{table}; DROP TABLE {table}"}),
        ("describe_payload", {"column": f"{table}.data", "where": f"data.x = 1\nDROP TABLE {table}"}),
        ("describe_payload", {"column": f"{table}.data", "where": f"data.x = 1; TRUNCATE {table}"}),
        ("describe_payload", {"column": f"{table}.data; DROP TABLE {table}"}),
        ("compression_stats", {"table": table, "column": f"data FROM {table}; DROP TABLE {table}; --"}),
        ("compression_settings", {"table": f"{table}\nTRUNCATE {table}"}),
    ]
    for tool, arguments in attempts:
        answer = server.call(tool, **arguments)
        assert answer.is_error, (tool, arguments, answer.texts)
        assert "\n" not in answer.error, answer.error
    assert state() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "script.cql"]  # no file written
    session.shutdown()
    assert server.call("query", statement=f"SELECT count(*) FROM {table}").data["rows"] == [{"count": 20}]


# ------------------------------------------------------------------ calls at once, errors, secrets


def test_calls_made_at_once_each_get_their_own_answer(server, demo) -> None:
    names = ["zstd", "gzip", "lz4/frame", "snappy/framed", "brotli", "bzip2", "xz", "deflate"]
    every = server.call("query", statement=f"SELECT name FROM {demo}.blob_formats").data["rows"]
    present = {row["name"] for row in every}
    names = [name for name in names if name in present] or sorted(present)[:8]
    futures = {name: server.start("query", statement=f"SELECT name, data FROM {demo}.blob_formats "
                                                      f"WHERE name = '{name}'") for name in names}
    futures["tables"] = server.start("list_tables", keyspace=demo)
    for name, future in futures.items():
        answer = future.result(180).data
        if name == "tables":
            assert answer["count"] == 4
        else:
            assert [row["name"] for row in answer["rows"]] == [name]


def test_no_byte_the_server_wrote_holds_the_password(server, conn, home: Path) -> None:
    # Errors of every kind first: a refused write, a server error, a bad argument, a missing table.
    server.call("query", statement=f"SELECT * FROM x WHERE password = '{PASSWORD[:3]}'")
    server.call("query", statement="INSERT INTO t (a) VALUES (1)")
    server.call("describe_table", table="no.such")
    server.call("query", statement="SELECT", limit=0)
    written = server.written()
    assert written and PASSWORD.encode() not in written
    for path in home.rglob("*"):
        if path.is_file() and path.name != "credentials":
            assert PASSWORD.encode() not in path.read_bytes(), path
    # -p on the command line: the same, and a login that fails says so in one line, without it.
    with McpServer([*conn, "-u", ROLE, "-p", PASSWORD], home / "with-p") as given:
        assert given.call("list_keyspaces").data["count"] > 0
    assert PASSWORD.encode() not in given.written()
    wrong = PASSWORD[:-1] + "?"
    proc = subprocess.run([CQLSH_EXT, "mcp", *conn, "-u", ROLE, "-p", wrong], input="", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and wrong not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(
        ("Warning: Using a password on the command line", "Recommendation: use the credentials file"))]
    assert len(lines) == 1 and lines[0].startswith("Connection error: "), proc.stderr
