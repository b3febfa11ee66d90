"""Answers an assistant can hold, continue and check, against the real Cassandra through the SDK's
own clients (stdio; HTTP for a cursor walk): a cut answer's cursor continues exactly where it
stopped, also inside a multi-row partition, every row answered exactly once; a cursor for another
statement, or one altered, is refused; the readings a cursor cannot continue (groups) say so, and
a whole-table filter (read as one stream in the server's order) has one; every tool's structured
content validates against its declared outputSchema; describe_payload answers its structure as a
JSON Schema that every stored value validates against; a misspelt payload path's "did you mean" in
the words of the shell's JSON warning."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cramjam
import pytest
from cassandra.concurrent import execute_concurrent_with_args
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.mcp_server import sizing

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import HttpMcpServer, McpServer, write_credentials

pytestmark = pytest.mark.server

PARTITIONS, PER_PARTITION = 3, 250


@pytest.fixture(scope="module")
def events(cassandra) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """ks.events: PARTITIONS partitions of PER_PARTITION rows (pk, ck), `data` a snappy JSON
    document of about 300 bytes ({"n": ck, "even": ..., "note": ...})."""
    ks = cassandra.create_keyspace("mcp_cursor")
    session = cassandra.session()
    session.execute(f"CREATE TABLE {ks}.events (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    rng = random.Random(56)
    rows = []
    for pk in range(PARTITIONS):
        for ck in range(PER_PARTITION):
            note = "".join(rng.choice("abcdefgh ") for _ in range(250))
            doc = {"n": ck, "even": ck % 2 == 0, "note": note}
            rows.append((pk, ck, bytes(cramjam.snappy.compress_raw(json.dumps(doc).encode()))))
    insert = session.prepare(f"INSERT INTO {ks}.events (pk, ck, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)
    session.shutdown()
    yield ks


def _walk(call: Callable[..., Any], statement: str | None, tool: str = "query",
          **arguments: Any) -> list[dict[str, Any]]:
    """Every answer of `statement` (or of `tool`'s own), following each cut answer's cursor until
    one has none."""
    if statement is not None:
        arguments["statement"] = statement
    answers = [call(tool, **arguments).data]
    while "cursor" in answers[-1]:
        assert answers[-1]["cut"] is not None and len(answers) < 200
        answers.append(call(tool, cursor=answers[-1]["cursor"], **arguments).data)
    assert answers[-1]["cut"] is None
    return answers


def _keys(answers: list[dict[str, Any]], *names: str) -> list[tuple[Any, ...]]:
    return [tuple(row[name] for name in names) for answer in answers for row in answer["rows"]]


def _received(server: McpServer) -> int:
    line = server.wire.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    assert b'"result"' in line
    return len(line)


def test_a_cursor_walk_answers_every_row_exactly_once(serve, events: str) -> None:
    server = serve()
    every = {(pk, ck) for pk in range(PARTITIONS) for ck in range(PER_PARTITION)}
    # By the limit: cuts inside partitions (37 rows an answer, 250 a partition).
    walked = _walk(server.call, f"SELECT pk, ck FROM {events}.events", limit=37)
    keys = _keys(walked, "pk", "ck")
    assert Counter(keys).most_common(1)[0][1] == 1 and set(keys) == every
    assert len(walked) == -(-len(every) // 37)
    assert any(answer["rows"][0]["ck"] != 0 for answer in walked[1:])  # continued inside a partition
    assert [a.get("rows_before", 0) for a in walked] == [37 * i for i in range(len(walked))]
    # By the answer's cap (decoded documents, 32 KiB each as received), in one partition.
    sizes = []

    def call(tool: str, **arguments: Any) -> Any:
        result = server.call(tool, **arguments)
        sizes.append(_received(server))
        return result

    walked = _walk(call, f"SELECT pk, ck, data FROM {events}.events WHERE pk = 1")
    assert _keys(walked, "ck") == [(ck,) for ck in range(PER_PARTITION)]
    assert len(walked) > 2 and max(sizes) <= sizing.DEFAULT_ANSWER_BYTES
    assert all(row["data"]["payload"]["n"] == row["ck"] for answer in walked for row in answer["rows"])
    # A payload query read as the plain SELECT reads (paths projected only).
    walked = _walk(server.call, f"SELECT pk, ck, data.n FROM {events}.events", limit=100)
    assert sorted(_keys(walked, "pk", "ck")) == sorted(every)
    assert all(row["data.n"] == row["ck"] for answer in walked for row in answer["rows"])
    # A payload filter on a partition (one stream, read here): its matches each once.
    walked = _walk(server.call, f"SELECT ck, data.n FROM {events}.events WHERE pk = 2 AND data.even = true "
                                "ALLOW FILTERING", limit=9)
    assert _keys(walked, "ck") == [(ck,) for ck in range(0, PER_PARTITION, 2)]
    # The statement's own LIMIT holds across the cursors, the server's and a payload query's.
    walked = _walk(server.call, f"SELECT pk, ck FROM {events}.events LIMIT 100", limit=30)
    assert len(_keys(walked, "pk", "ck")) == 100
    walked = _walk(server.call, f"SELECT ck FROM {events}.events WHERE pk = 0 AND data.even = true "
                                "LIMIT 40 ALLOW FILTERING", limit=15)
    assert _keys(walked, "ck") == [(ck,) for ck in range(0, 80, 2)]


def test_the_lists_are_continued_too(serve, tmp_path: Path) -> None:
    # system's tables, most of them left out (system tables are read by allowing): a policy allows a
    # few more, so that the list is long enough to be answered in parts.
    policy = tmp_path / "policy.toml"
    allowed = ("compaction_history", "sstable_activity", "sstable_activity_v2", "available_ranges",
               "available_ranges_v2", "built_views", "peer_events", "peer_events_v2", "transferred_ranges",
               "transferred_ranges_v2", "view_builds_in_progress", "top_partitions", "repairs")
    policy.write_text("[system]\nallow = [" + ", ".join(f'"system.{t}"' for t in allowed) + "]\n")
    server = serve("--policy", str(policy))
    whole = server.call("list_tables", keyspace="system").data["rows"]
    assert len(whole) == 5 + len(allowed)
    # The largest cap that holds some of the rows, not all (a continued answer says more than the
    # first: its rows_before): the list is answered in parts.
    cap = next(cap for cap in range(4096, 1024, -64)
               if 0 < _rows(server.call("list_tables", keyspace="system", max_bytes=cap)) < len(whole))
    walked = _walk(server.call, None, "list_tables", keyspace="system", max_bytes=cap)
    assert len(walked) > 1 and [row for part in walked for row in part["rows"]] == whole


def _rows(answer: Any) -> int:
    return 0 if answer.is_error else int(answer.data["count"])


def test_a_cursor_is_refused_for_another_statement_or_altered(serve, events: str) -> None:
    server = serve()
    statement = f"SELECT pk, ck FROM {events}.events"
    first = server.call("query", statement=statement, limit=5).data
    cursor = first["cursor"]
    # The same statement spelt otherwise (case, spacing, a comment) is the same statement.
    same = server.call("query", statement=f"select pk,  ck from {events}.events /* again */", limit=5,
                       cursor=cursor).data
    assert same["rows_before"] == 5 and _keys([same], "pk", "ck")[0] != _keys([first], "pk", "ck")[0]
    other = server.call("query", statement=f"SELECT pk, ck FROM {events}.events WHERE pk = 1", cursor=cursor)
    assert other.error == ("refused: cursor: this cursor continues another statement: give the statement it "
                           "came with")
    tampered = cursor[:-6] + ("A" if cursor[-6] != "A" else "B") + cursor[-5:]
    assert server.call("query", statement=statement, cursor=tampered).error.startswith(
        "refused: cursor: not a cursor of this server")
    assert server.call("query", statement=statement, cursor="nonsense").error.startswith("refused: cursor: ")
    # Another server's cursor (another secret) is refused too.
    other_server = serve(home=_home(server.home / "other"))
    assert other_server.call("query", statement=statement, cursor=cursor).error.startswith(
        "refused: cursor: not a cursor of this server")


def _home(path: Path) -> Path:
    write_credentials(path, ASSISTANT, ASSISTANT_PASSWORD)
    return path


def test_the_readings_a_cursor_cannot_continue_say_so(serve, events: str) -> None:
    server = serve()
    groups = server.call("query", statement=f"SELECT data.n, count(*) FROM {events}.events GROUP BY data.n "
                                            "ALLOW FILTERING", limit=10).data
    assert groups["count"] == 10 and "cursor" not in groups
    assert "no cursor: groups and aggregates are counted over every row read" in groups["cut"]
    scan = server.call("query", statement=f"SELECT pk, ck FROM {events}.events WHERE data.even = true "
                                          "ALLOW FILTERING", limit=10).data
    # (a filter over the whole table is read as one stream in the server's order: its cursor goes on)
    assert scan["count"] == 10 and "cursor" in scan and "no cursor" not in scan["cut"], scan["cut"]


def test_a_cursor_walk_over_http(demo: Demo, assistant_home: Path, events: str) -> None:
    home = _home(assistant_home / "http")
    with HttpMcpServer([*demo.conn], home) as server, server.client() as client:
        walked = _walk(client.call, f"SELECT pk, ck FROM {events}.events WHERE pk = 0", limit=40)
    assert _keys(walked, "ck") == [(ck,) for ck in range(PER_PARTITION)] and len(walked) == 7


# ------------------------------------------------------------------------------ output schemas


def test_every_answer_validates_against_its_output_schema(serve, demo: Demo, tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    policy = tmp_path / "policy.toml"
    redacted = f"{demo.keyspace}.table_with_compressed_json.data.customer.email"
    policy.write_text(f'[redact]\ncolumns = ["{redacted}"]\n')
    server = serve("--policy", str(policy), "--export-dir", str(tmp_path / "exports"))
    declared = {tool.name: tool.output_schema for tool in server.tools()}
    ks = demo.keyspace
    orders, formats = f"{ks}.table_with_compressed_json", f"{ks}.blob_formats"
    calls = [
        ("list_keyspaces", {}), ("list_tables", {"keyspace": ks}),
        ("describe_table", {"table": orders}), ("describe_table", {"table": f"{ks}.nested_blobs"}),
        ("query", {"statement": f"SELECT name, data FROM {formats}", "max_bytes": 1 << 20}),
        ("query", {"statement": f"SELECT * FROM {ks}.nested_blobs", "limit": 3}),
        ("query", {"statement": f"SELECT id, data FROM {orders}", "max_bytes": 8192}),
        ("query", {"statement": f"SELECT data.status, count(*) FROM {formats} GROUP BY data.status "
                                "ALLOW FILTERING"}),
        ("query", {"statement": f"SELECT data.customer, data.status FROM {orders} LIMIT 3"}),
        ("describe_payload", {"column": f"{orders}.data"}),
        # (a JSON Schema is no list to cut: the whole of it is asked for, past the default cap)
        ("describe_payload", {"column": f"{orders}.data", "json_schema": True, "max_bytes": 1 << 16}),
        ("describe_payload", {"column": f"{formats}.data", "max_bytes": 4096}),
        ("compression_stats", {"table": formats}), ("compression_settings", {"table": formats}),
        ("compression_advise", {"table": orders, "sample": 20}),
        ("inspect_value", {"statement": f"SELECT data FROM {formats} WHERE name = 'zstd'"}),
        ("export", {"statement": f"SELECT name, data.status FROM {formats}", "format": "jsonl"}),
        ("propose_edit", {"table": formats, "where": "name = 'zstd'", "path": "data.status", "value": "X"}),
        ("propose_edit", {"table": formats, "path": "data", "target": "zstd"}),
    ]
    answers: dict[str, list[Any]] = {}
    for tool, arguments in calls:
        result = server.call(tool, **arguments)  # the SDK's client validates it against the schema too
        Draft202012Validator.check_schema(declared[tool])
        errors = list(Draft202012Validator(declared[tool]).iter_errors(result.data))
        assert not errors, (tool, arguments, errors[0].message, errors[0].json_path)
        answers.setdefault(tool, []).append(result.data)
    assert set(answers) == set(declared)  # every tool
    # The spellings the schemas declare: a blob decoded, a value no detection reads, the
    # undecodable group, a redacted value.
    values = [row["data"] for row in answers["query"][0]["rows"]]
    assert any(isinstance(v, dict) and v.get("label", "").endswith(">json") for v in values)
    assert any(isinstance(v, str) and v.startswith("0x") for v in values)
    groups = [row["data.status"] for row in answers["query"][3]["rows"]]
    assert {"$undecodable": True} in groups
    assert all(row["data.customer"]["email"] == "[redacted]" for row in answers["query"][4]["rows"])


def test_describe_payload_answers_a_json_schema_every_value_validates_against(serve, demo: Demo) -> None:
    from jsonschema import Draft202012Validator

    server = serve()
    orders = f"{demo.keyspace}.table_with_compressed_json"
    answer = server.call("describe_payload", column=f"{orders}.data", json_schema=True,
                         max_bytes=1 << 16).data
    schema = answer["json_schema"]["data"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema" and schema["type"] == "object"
    Draft202012Validator.check_schema(schema)
    assert {"orderId", "status", "customer", "items"} <= set(schema["required"])
    assert "PAID" in schema["properties"]["status"]["enum"]
    assert schema["properties"]["items"]["type"] == "array"
    assert schema["properties"]["items"]["items"]["properties"]["quantity"]["type"] == "integer"
    # Every stored value, decoded, is valid against it (it was described from every row).
    walked = _walk(server.call, f"SELECT data FROM {orders}", max_bytes=1 << 20)
    rows = [row["data"] for part in walked for row in part["rows"]]
    assert len(rows) == answer["rows_read"] == 200
    validator = Draft202012Validator(schema)
    documents = [value["payload"] for value in rows
                 if value["kind"] == "text" and isinstance(value["payload"], dict)]
    assert len(documents) > 150
    for document in documents:
        assert not list(validator.iter_errors(document))


def test_a_misspelt_path_says_did_you_mean_as_the_shells_json_says_it(serve, demo: Demo,
                                                                      assistant_home: Path) -> None:
    statement = f"SELECT data.stauts FROM {demo.keyspace}.table_with_compressed_json LIMIT 2"
    [missing] = serve().call("query", statement=statement).data["reading"]["paths_no_value_had"]
    shell = run(CQLSH_EXT, [*demo.conn, "--output-format", "json", "-e", statement], assistant_home)
    said = [json.loads(line) for line in shell.stderr.splitlines() if line.startswith("{")]
    [warning] = [one for one in said if one["type"] == "warning" and one.get("kind") == "path_not_found"]
    assert missing["hint"] == warning["hint"] == "did you mean data.status?", (missing, warning)
