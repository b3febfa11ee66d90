"""Payload paths on a text column holding JSON, as on a blob's: filters (CONTAINS among them),
GROUP BY and the export, through the real binary on the real server; an operator payload queries
do not have is refused by the shell in one line naming those they have, never sent to the server."""

from __future__ import annotations

import json

import pytest
from shell_runner import said_lines

from .conftest import shell

ROWS = 60


def document(i: int) -> dict:
    return {"status": ["NEW", "PAID", "SHIPPED"][i % 3], "items": ["x"] if i % 4 == 0 else ["y", "z"], "n": i}


@pytest.fixture(scope="module")
def text_table(cassandra) -> str:
    ks = cassandra.create_keyspace("pqtext")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int, ck int, data text, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO docs (pk, ck, data) VALUES (?, ?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i % 6, i, json.dumps(document(i))))
    session.shutdown()
    return f"{ks}.docs"


def test_paths_on_a_text_column_filter_group_and_export(cassandra, text_table, home):
    count = shell(cassandra, home, f"SELECT count(*) FROM {text_table} WHERE data.items CONTAINS 'x' "
                                   "ALLOW FILTERING", "--output-format", "json")
    assert count.returncode == 0 and "SyntaxException" not in count.stderr, count.stderr
    assert json.loads(count.stdout.splitlines()[0]) == {"count": sum(1 for i in range(ROWS) if i % 4 == 0)}
    groups = shell(cassandra, home, f"SELECT data.status, count(*) FROM {text_table} GROUP BY data.status "
                                    "ALLOW FILTERING", "--output-format", "json")
    assert groups.returncode == 0, groups.stderr
    got = {d["data.status"]: d["count"] for d in map(json.loads, groups.stdout.splitlines())}
    assert got == {"NEW": 20, "PAID": 20, "SHIPPED": 20}
    out = home / "paid.jsonl"
    export = shell(cassandra, home, f"COPY (SELECT ck, data.n FROM {text_table} WHERE pk = 1 AND "
                                    f"data.status = 'PAID') TO '{out}'")
    assert export.returncode == 0, export.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(d["ck"] for d in written) == [i for i in range(ROWS) if i % 6 == 1 and i % 3 == 1]
    assert all(d["data.n"] == d["ck"] for d in written)


def test_an_operator_payload_queries_lack_is_refused_in_one_line(cassandra, text_table, home):
    refused = shell(cassandra, home, f"SELECT count(*) FROM {text_table} WHERE data.items CONTAINS KEY 'x' "
                                     "ALLOW FILTERING")
    # (cqlsh's own two lines about -p on the command line aside)
    lines = said_lines(refused.stderr)
    assert len(lines) == 1, refused.stderr
    assert lines[0].endswith("CONTAINS KEY is not an operator of payload queries: a path takes =, !=, <, <=, "
                             ">, >=, IN (...), LIKE, CONTAINS, IS [NOT] NULL (HELP QUERIES)"), lines
    assert "SyntaxException" not in refused.stderr and not refused.stdout.strip()
