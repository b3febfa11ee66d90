"""What `cqlsh-ext mcp` gives an assistant besides the shell's own answers, against the real
Cassandra through the SDK's client: compression_advise (read-only), the decode argument for one
call (a schema file only among those the server was started with), the demo's dictionaries,
resources and prompts, progress notifications while a call scans, and plain errors (a syntax error
named as one, a missing keyspace or table, a comparison of the wrong type, count spelt one way,
hints naming what the assistant can do)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.mcp_server.tools import TOOLS

from .conftest import Demo

pytestmark = pytest.mark.server


def test_compression_advise_reads_and_writes_nothing(serve, demo: Demo, assistant_home: Path) -> None:
    server = serve()
    before = _files(assistant_home)
    answer = server.call("compression_advise", table=f"{demo.keyspace}.table_with_uncompressed_json",
                         sample=40)
    report = answer.data
    assert report["command"] == "COMPRESSION ADVISE" and report["rows"] == 40
    assert report["verdicts"]["data"].startswith("Verdict: ") and "COMPRESSION TRIAL" not in answer.texts[0]
    column = server.call("compression_advise", table=f"{demo.keyspace}.table_with_compressed_json",
                         column="data", sample=20).data
    assert [c["column"] for c in column["columns"]] == ["data"]
    refused = server.call("query", statement=f"COMPRESSION ADVISE {demo.keyspace}.blob_formats "
                                             f"SAVE DICTIONARY '{assistant_home}/stolen.dict'")
    assert refused.is_error
    assert _files(assistant_home) == before  # no dictionary or any other file written


def _files(home: Path) -> list[Path]:
    return sorted(p.relative_to(home) for p in home.rglob("*") if p.name != "mcp-stdout.bin")


def _raw_deflate(server: Any, demo: Demo, **extra: Any) -> Any:
    statement = f"SELECT name, data FROM {demo.keyspace}.blob_formats WHERE name = 'raw deflate'"
    return server.call("query", statement=statement, **extra)


def test_decode_reads_a_column_for_that_call_only(serve, demo: Demo, tmp_path: Path) -> None:
    schema = tmp_path / "orders.desc"
    schema.write_bytes(b"\x0a\x00")  # the file given at start; its contents do not matter here
    server = serve("--schema-file", str(schema))
    plain = _raw_deflate(server, demo).data["rows"][0]["data"]
    assert isinstance(plain, str) and plain.startswith("0x")  # raw deflate: no detection can tell it
    decoded = _raw_deflate(server, demo, decode={"data": "deflate"}).data["rows"][0]["data"]
    assert decoded["label"] == "deflate>json" and decoded["payload"]["orderId"].startswith("ORD-")
    assert _raw_deflate(server, demo).data["rows"][0]["data"] == plain  # the next call: as before
    inspected = server.call("inspect_value", decode={"data": "deflate"},
                            statement=f"SELECT data FROM {demo.keyspace}.blob_formats WHERE "
                                      "name = 'raw deflate'").data
    assert inspected["values"][0]["chain"] == ["deflate"]
    described = server.call("describe_payload", column=f"{demo.keyspace}.blob_formats.data",
                            where="name = 'raw deflate'", decode={"data": "deflate"}).data
    assert described["places"][0]["encodings"][0]["label"] == "deflate>json"
    # A schema file: only the one the server was started with; any other is refused before it is
    # looked at, the same words whether it exists or not (no probe of the host's files).
    given = _raw_deflate(server, demo, decode={"data": f"deflate>protobuf:Order@{schema}"})
    assert not given.is_error
    said = {}
    for path in ("/etc/passwd", "/no/such/file.desc"):
        answer = _raw_deflate(server, demo, decode={"data": f"deflate>protobuf:Order@{path}"})
        said[path] = answer.error.replace(path, "PATH")
        assert answer.error.startswith("refused: decode may name only the schema files cqlsh-ext mcp was "
                                       f"started with (--schema-file: {schema})")
    assert len(set(said.values())) == 1
    nonsense = _raw_deflate(server, demo, decode={"data": "nonsense"})
    assert nonsense.error.startswith("decode data: unknown step")
    # Checked against query's declaration, as the shell and the API check a call (features.calling).
    assert _raw_deflate(server, demo, decode="deflate").error == (
        'query: decode takes an object (column -> spec: {"data": "zstd>msgpack"}), not \'deflate\'')


def test_the_demo_dictionaries_given_at_start_read_its_values(serve, demo: Demo, tmp_path: Path) -> None:
    statement = f"SELECT data FROM {demo.keyspace}.blob_formats WHERE name = 'zstd dictionary'"
    without = serve().call("query", statement=statement).data["rows"][0]["data"]
    (tmp_path / "with").mkdir()
    from .conftest import ASSISTANT, ASSISTANT_PASSWORD
    from .harness import write_credentials

    write_credentials(tmp_path / "with", ASSISTANT, ASSISTANT_PASSWORD)
    with_dicts = serve(*demo.dictionary_args, home=tmp_path / "with").call("query", statement=statement)
    value = with_dicts.data["rows"][0]["data"]
    assert value["label"].startswith("zstd") and value["payload"]["orderId"].startswith("ORD-")
    assert without != value


def test_resources_and_prompts(serve, demo: Demo, cassandra, tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    from cqlsh_ext.mcp_server.resources import MAX_TABLES

    # resources/list names the first MAX_TABLES tables: on a server that many earlier tests have
    # filled, the demo's could come after them. The policy leaves only the demo's keyspace.
    session = cassandra.session()
    try:
        keyspaces = [row.keyspace_name
                     for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")]
    finally:
        session.shutdown()
    others = sorted(k for k in keyspaces if k != demo.keyspace and not k.startswith("system"))
    policy = tmp_path / "policy.toml"
    spelt = [json.dumps(f"{k}.*" if k == k.lower() else f'"{k}".*') for k in others]  # TOML strings
    policy.write_text("[tables]\ndeny = [" + ", ".join(spelt) + "]\n")
    server = serve("--policy", str(policy))
    assert MAX_TABLES >= 10  # the demo's tables all fit
    listed = server.portal.call(server.client.list_resources).resources
    uris = {str(r.uri) for r in listed}
    ks = demo.keyspace
    assert f"cqlsh-ext://schema/{ks}/table_with_compressed_json" in uris
    assert f"cqlsh-ext://payload/{ks}/table_with_compressed_json/data" in uris
    assert f"cqlsh-ext://payload/{ks}/blob_formats/name" not in uris  # a key column holds no payload
    assert not any("/system" in uri for uri in uris)
    templates = server.portal.call(server.client.list_resource_templates).resource_templates
    assert [t.uri_template for t in templates] == ["cqlsh-ext://tools/{name}",
                                                   "cqlsh-ext://schema/{keyspace}/{table}",
                                                   "cqlsh-ext://payload/{keyspace}/{table}/{column}"]
    # Each tool's full description: what tools/list leaves out, and every argument.
    assert {f"cqlsh-ext://tools/{tool.name}" for tool in server.tools()} <= uris
    described = server.portal.call(server.client.read_resource, "cqlsh-ext://tools/query").contents[0]
    assert described.mime_type == "text/markdown" and described.text == TOOLS["query"].document()
    listed_query = next(tool for tool in server.tools() if tool.name == "query")
    assert listed_query.description in described.text and "ALLOW FILTERING CONFIRM" in described.text
    assert "ALLOW FILTERING CONFIRM" not in (listed_query.description or "")
    assert "- max_bytes (integer): the answer's bytes as sent at most, 1,024 to 1,048,576" in described.text
    read = server.portal.call(server.client.read_resource, f"cqlsh-ext://schema/{ks}/blob_formats").contents[0]
    assert read.mime_type == "application/json"
    assert json.loads(read.text) == server.call("describe_table", table=f"{ks}.blob_formats").data
    payload = server.portal.call(server.client.read_resource,
                                 f"cqlsh-ext://payload/{ks}/table_with_compressed_json/data").contents[0]
    paths = {p["path"] for p in json.loads(payload.text)["places"][0]["paths"]}
    assert {"data.status", "data.customer.email"} <= paths
    for bad in (f"cqlsh-ext://schema/{ks}/no_such_table", "cqlsh-ext://nothing/here", "file:///etc/passwd",
                "cqlsh-ext://tools/no_such_tool"):
        with pytest.raises(MCPError):
            server.portal.call(server.client.read_resource, bad)
    prompts = {p.name: p for p in server.portal.call(server.client.list_prompts).prompts}
    assert set(prompts) == {"survey_keyspace_blobs", "explain_table_compression", "answer_from_payloads"}
    got = server.portal.call(server.client.get_prompt, "survey_keyspace_blobs", {"keyspace": ks})
    text = got.messages[0].content.text
    assert f'list_tables {{"keyspace": "{ks}"}}' in text and "describe_payload" in text
    with pytest.raises(MCPError, match="needs table"):
        server.portal.call(server.client.get_prompt, "explain_table_compression", {})


def test_progress_while_a_call_scans(serve, demo: Demo) -> None:
    server = serve()
    seen: list[tuple[float, float | None, str | None]] = []

    async def call() -> Any:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append((done, total, message))

        return await server.client.call_tool(
            "query", {"statement": f"SELECT count(*) FROM {demo.keyspace}.table_with_compressed_json "
                                   "WHERE data.status = 'PAID' ALLOW FILTERING"}, progress_callback=progress)

    result = server.portal.call(call)
    assert not result.is_error
    assert seen, "no progress notification"
    done, _, message = seen[-1]
    assert done == 200 and message is not None and message.endswith("done")
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)  # never backwards
    # Without a progress token: none (and the same answer).
    again = server.call("query", statement=f"SELECT count(*) FROM {demo.keyspace}.table_with_compressed_json "
                                           "WHERE data.status = 'PAID' ALLOW FILTERING")
    assert again.structured == result.structured_content


def test_plain_errors(serve, demo: Demo, cassandra) -> None:
    from cassandra.protocol import SyntaxException

    server = serve()
    ks = demo.keyspace
    typo = server.call("query", statement=f"SELEC * FROM {ks}.blob_formats")
    assert typo.error.startswith("syntax error at position 0: 'SELEC' starts no statement "
                                 "(did you mean SELECT?")
    assert "read-only" not in typo.error
    # A batch begins with BEGIN (APPLY and BATCH start none), and MOVE and PRUNE are no CQL of
    # Cassandra's: the server answers each with a syntax error, and so does MCP, never that it writes.
    session = cassandra.session()
    try:
        for statement in ("APPLY BATCH", f"BATCH INSERT INTO {ks}.blob_formats (name) VALUES ('x')",
                          f"PRUNE MATERIALIZED VIEW {ks}.blob_formats", f"MOVE {ks}.blob_formats"):
            with pytest.raises(SyntaxException):
                session.execute(statement)
            word = statement.split()[0]
            error = server.call("query", statement=statement).error
            assert error.startswith(f"syntax error at position 0: {word!r} starts no statement (this server "
                                    "runs "), error
    finally:
        session.shutdown()
    assert server.call("query", statement=f"SELECT * FROM {ks}.blob_formats WHERE name = 'open").error == (
        "syntax error: a string ('...') that does not end, at position 50".replace("50", str(len(
            f"SELECT * FROM {ks}.blob_formats WHERE name = "))))
    server_side = server.call("query", statement=f"SELECT * FORM {ks}.blob_formats")
    assert "SyntaxException" in server_side.error and "FORM" in server_side.error
    assert server.call("list_tables", keyspace="no_such_keyspace").error == (
        "no keyspace no_such_keyspace (list_keyspaces names them)")
    for tool, arguments in (("query", {"statement": f"SELECT * FROM {ks}.no_such_table"}),
                            ("describe_table", {"table": f"{ks}.no_such_table"}),
                            ("describe_payload", {"column": f"{ks}.no_such_table.data"}),
                            ("compression_stats", {"table": f"{ks}.no_such_table"})):
        assert server.call(tool, **arguments).error == (
            f"no table {ks}.no_such_table (list_tables names the tables of {ks})"), tool
    assert server.call("query", statement="SELECT * FROM no_such_keyspace.t").error.startswith(
        "no keyspace no_such_keyspace")
    orders = f"{ks}.table_with_compressed_json"
    wrong = server.call("query", statement=f"SELECT count(*) FROM {orders} WHERE data.status = 5 "
                                           "ALLOW FILTERING")
    assert wrong.error.startswith("data.status holds string values (a sample of 200 rows), and the condition "
                                  "compares it with a number (5): no value can match")
    assert wrong.error.endswith("write '5' (a string, quoted)")
    number = server.call("query", statement=f"SELECT id FROM {orders} WHERE data.items[0].quantity > '2' "
                                            "ALLOW FILTERING")
    assert "write 2 (a number, unquoted)" in number.error
    none = server.call("query", statement=f"SELECT count(*) FROM {orders} WHERE data.status = 'NO SUCH' "
                                          "ALLOW FILTERING").data
    assert none["rows"] == [{"count": 0}]  # the right type, no match: an answer of 0
    plain = server.call("query", statement=f"SELECT count(*) FROM {ks}.blob_formats").data["rows"]
    payload = server.call("query", statement=f"SELECT count(*) FROM {orders} WHERE data.status = 'PAID' "
                                             "ALLOW FILTERING").data["rows"]
    assert list(plain[0]) == list(payload[0]) == ["count"]
    hint = server.call("describe_payload", column=f"{ks}.blob_formats.data").data["places"][0]["hint"]
    assert "the decode argument {\"data\": " in hint and "DECODE '" not in hint and "--decode" not in hint


def test_a_filter_cut_at_the_call_s_limit_says_so(serve, demo: Demo) -> None:
    # The closing note of a payload filter the call's limit stopped says it is the limit (it once
    # said "stopped when the output closed"), and the byte cap likewise.
    server = serve()
    statement = (f"SELECT id, data.status FROM {demo.keyspace}.table_with_compressed_json WHERE "
                 "data.status IS NOT NULL ALLOW FILTERING")
    answer = server.call("query", statement=statement, limit=3).data
    assert answer["count"] == 3 and answer["cut"].startswith("at the limit of 3 rows")
    closing = answer["notes"][-1]
    assert closing.startswith("payload query: ") and closing.endswith("stopped at the call's limit of 3 rows")
    assert "output closed" not in closing
    # (4 KiB: an answer is sent twice, as text and as structured content, and its reading names the
    # formats from outside installed, the test plugin's among them)
    capped = server.call("query", statement=statement, limit=1000, max_bytes=4096).data
    assert capped["notes"][-1].endswith("stopped at the answer's cap of 4,096 bytes"), capped["notes"]


def test_a_filter_s_answers_read_through_their_cursors_are_one_full_read(serve, demo: Demo) -> None:
    # A payload filter over a whole table, cut by the call's limit or by the answer's byte cap: each
    # cut answer's cursor goes on from its next row, and the answers, read to the end, are one full
    # read exactly (no row twice, none missing).
    server = serve()
    statement = (f"SELECT id, data.status FROM {demo.keyspace}.table_with_compressed_json WHERE "
                 "data.status IN ('PAID', 'SHIPPED') ALLOW FILTERING")
    whole = server.call("query", statement=statement, limit=1000, max_bytes=1 << 20).data
    assert whole["truncated"] is False and "cursor" not in whole and whole["count"] > 40, whole["count"]
    full = sorted(json.dumps(row, sort_keys=True) for row in whole["rows"])
    for caps in ({"limit": 25}, {"limit": 1000, "max_bytes": 6144}):
        answers = [server.call("query", statement=statement, **caps).data]
        while "cursor" in answers[-1]:
            assert len(answers) <= whole["count"], answers[-1]["cut"]  # a cursor that moves on
            cursor = answers[-1]["cursor"]
            answers.append(server.call("query", statement=statement, cursor=cursor, **caps).data)
        assert len(answers) > 1, (caps, answers[0]["cut"])
        read = [json.dumps(row, sort_keys=True) for answer in answers for row in answer["rows"]]
        assert len(read) == len(set(read)) == len(full) and sorted(read) == full, (caps, len(read), len(full))


def test_a_misspelt_name_is_told_the_one_meant_never_one_the_policy_hides(serve, demo: Demo,
                                                                         assistant_home: Path) -> None:
    # The suggestion the shell's JSON error gives as its `hint` for the same typo, in the tool's
    # error; among the names the policy lets the assistant see: a typo of a hidden table's name is
    # answered as a name with nothing near.
    from shell_runner import CQLSH_EXT, run

    ks = demo.keyspace
    policy = assistant_home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{ks}.blob_formats"]\n')
    server = serve("--policy", str(policy))
    orders = "table_with_compressed_json"
    for statement, meant in ((f"SELECT id FROM {ks}.table_with_compresed_json", orders),
                             (f"SELECT id FROM {ks}x.{orders}", ks),
                             (f"SELECT id, data.status FORM {ks}.{orders}", "FROM"),
                             (f"SELECT dta FROM {ks}.{orders}", "data"),
                             (f"SELECT id, dta.status FROM {ks}.{orders}", "data")):
        said = server.call("query", statement=statement).error
        assert f"(did you mean {meant}?)" in said, (statement, said)
        shell = run(CQLSH_EXT, [*demo.conn, "--output-format", "json", "-e", statement], assistant_home)
        [error] = [json.loads(line) for line in shell.stderr.splitlines() if '"type": "error"' in line]
        assert error["hint"] == f"did you mean {meant}?", (statement, error)
    assert server.call("describe_table", table=f"{ks}.table_with_compresed_json").error == (
        f"no table {ks}.table_with_compresed_json (did you mean {orders}?) (list_tables names the tables "
        f"of {ks})")
    assert server.call("list_tables", keyspace=f"{ks}x").error == (
        f"no keyspace {ks}x (did you mean {ks}?) (list_keyspaces names them)")
    assert server.call("query", statement=f"SELECT name FROM {ks}.blob_formts").error == (
        f"no table {ks}.blob_formts (list_tables names the tables of {ks})")
    assert server.call("query", statement=f"SELECT name FROM {ks}.blob_formats").error.startswith(
        f"refused: table {ks}.blob_formats is denied by the policy")


