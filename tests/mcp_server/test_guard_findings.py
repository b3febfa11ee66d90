"""Issue 105's findings at `cqlsh-ext mcp`, driven by the SDK's client over stdio and over HTTP against
the real server: the statement whose `--` comment ends at a carriage return, which the server reads
as a SELECT of system_auth.roles, is refused by `query` and `inspect_value` as a read of that table
(cql.lexer reads it as the server does), and no password hash leaves the server; the statements the shell's
--read-only refuses as writing a file are refused here in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest
from staff_view import SALARY, staff_and_its_view

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import HttpMcpServer, write_credentials

pytestmark = pytest.mark.server

ATTACK = ("SELECT role, salted_hash FROM --\r system_auth.roles /*\n {keyspace}.blob_formats -- */\n "
          "LIMIT 2")
#: The table the server reads is the one refused (read as the server reads it, before anything runs).
UNREAD = ("refused: table system_auth.roles holds credentials or other sessions' statements: cqlsh-ext mcp "
          "never reads it")


def _calls(keyspace: str) -> list[tuple[str, dict[str, str]]]:
    attack = ATTACK.format(keyspace=keyspace)
    return [("query", {"statement": attack}), ("inspect_value", {"statement": attack})]


def test_a_comment_ended_by_a_carriage_return_hides_no_table_over_stdio(serve, demo: Demo) -> None:
    server = serve()
    for tool, arguments in _calls(demo.keyspace):
        answer = server.call(tool, **arguments)
        assert answer.is_error, (tool, answer.texts)
        assert answer.error == UNREAD, (tool, answer.error)
    assert b"$2a$" not in server.written()


def test_a_comment_ended_by_a_carriage_return_hides_no_table_over_http(demo: Demo,
                                                                       assistant_home: Path) -> None:
    home = assistant_home / "http"
    write_credentials(home, ASSISTANT, ASSISTANT_PASSWORD)
    with HttpMcpServer([*demo.conn], home) as server, server.client() as client:
        for tool, arguments in _calls(demo.keyspace):
            answer = client.call(tool, **arguments)
            assert answer.is_error, (tool, answer.texts)
            assert answer.error == UNREAD, (tool, answer.error)
            assert not any("$2a$" in text for text in answer.texts)


def test_what_writes_a_file_is_refused_in_the_shell_s_words(serve, demo: Demo) -> None:
    server = serve()
    table = f"{demo.keyspace}.table_with_compressed_json"
    said = {f"COMPRESSION ADVISE SELECT data FROM {table} LIMIT 5 save /* x */ DICTIONARY '/tmp/d'":
            "COMPRESSION ADVISE ... SAVE DICTIONARY writes a local file",
            "CAPTURE '/tmp/x'": "CAPTURE appends to a local file",
            f"COPY {table} TO '/tmp/x'":
            "COPY reads or writes a local file (TO, FROM), or writes the database (FROM)",
            "SHOW SESSION 6e1f5f30-0d8c-11ee-9a8f-5f2c3a1c1b2a":
            "SHOW SESSION reads system_traces: another session's statements"}
    for statement, why in said.items():
        answer = server.call("query", statement=statement)
        assert answer.is_error
        assert answer.error == f"refused: cqlsh-ext mcp runs reads only, and {why}", answer.error


def test_a_view_of_a_table_whose_values_are_redacted_is_refused(serve, cassandra, tmp_path: Path) -> None:
    """A materialized view holds its table's rows under its own name: the redaction of the table's
    column is the view's too, so a view of a redacted table is refused (the table answers redacted)."""
    keyspace = staff_and_its_view(cassandra, "mcp_views")
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[redact]\ncolumns = ["{keyspace}.staff.salary"]\n')
    server = serve("--policy", str(policy))
    refused = (f"refused: {keyspace}.staff_by_team is a materialized view of {keyspace}.staff, whose rows it "
               f"holds, and the policy ({policy.name}) redacts values of {keyspace}.staff")
    for tool, arguments in (("query", {"statement": f"SELECT * FROM {keyspace}.staff_by_team"}),
                            ("describe_payload", {"column": f"{keyspace}.staff_by_team.salary"})):
        answer = server.call(tool, **arguments)
        assert answer.is_error, (tool, answer.texts)
        assert answer.error == refused, (tool, answer.error)
    table = server.call("query", statement=f"SELECT * FROM {keyspace}.staff")
    assert not table.is_error and table.data["rows"] == [{"id": 1, "team": "ops", "salary": "[redacted]"}]
    assert SALARY.encode() not in server.written()
