"""An aggregate's NaN in JSON (docs/queries.md, "Aggregates"): JSON numbers hold no NaN, so every
JSON cqlsh-ext writes spells it "NaN", a string, as a document's own NaN is spelt (the shell's
JSON, COPY's JSON Lines, MCP on both transports); Arrow and the API's rows keep the float. The
documents are the test's: `n` NaN in one, a number in the others."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from shell_runner import ext


@pytest.fixture(scope="module")
def table(cassandra) -> str:  # type: ignore[no-untyped-def]
    ks = cassandra.create_keyspace("agg_nan")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    for key, text in enumerate(['{"n": NaN}', '{"n": 1.5}', '{"n": 2}']):
        session.execute("INSERT INTO t (id, data) VALUES (%s, %s)", (key, text.encode()))
    session.shutdown()
    return f"{ks}.t"


def test_an_aggregates_nan_is_the_string_nan_in_json_and_a_float_in_arrow(cassandra, table: str,
                                                                          tmp_path: Path) -> None:
    from tests.mcp_server.harness import HttpMcpServer, McpServer, write_credentials

    statement = f"SELECT max(data.n), sum(data.n), min(data.n) FROM {table} ALLOW FILTERING"
    want = {"max(data.n)": "NaN", "sum(data.n)": "NaN", "min(data.n)": 1.5}
    run = ext(cassandra, tmp_path, "--output-format", "json", "-e", statement)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == want
    target = tmp_path / "agg.jsonl"
    assert ext(cassandra, tmp_path, "-e", f"COPY ({statement}) TO '{target}'").returncode == 0
    assert json.loads(target.read_text()) == want
    write_credentials(tmp_path / "mcp", cassandra.username, cassandra.password)
    conn = [cassandra.host, str(cassandra.port)]
    with McpServer(conn, tmp_path / "mcp") as stdio, HttpMcpServer(conn, tmp_path / "mcp") as http, \
            http.client() as client:
        for server in (stdio, client):
            assert server.call("query", statement=statement).data["rows"] == [want]
    import cqlsh_ext

    rc = tmp_path / "cqlshrc"
    rc.write_text("")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, cqlshrc=str(rc)) as db:
        row = db.query(statement).to_arrow().to_pylist()[0]
    assert math.isnan(row["max(data.n)"]) and math.isnan(row["sum(data.n)"]) and row["min(data.n)"] == 1.5
    queries = " ".join((REPO_ROOT / "docs" / "queries.md").read_text().split())
    assert "an aggregate's NaN or infinity is the string `\"NaN\"`" in queries
