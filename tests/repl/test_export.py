"""COPY (SELECT ...) TO in the interactive shell, read on the rendered screen at a small and a large
terminal: the closing line after the statement, a refusal in one line, and the file on disk."""

from __future__ import annotations

import json

import pytest
from orders import rows, write_table

from .test_payload_queries import SIZES, menu

COUNT = 60


@pytest.fixture(scope="module")
def export_ks(cassandra) -> str:
    ks = cassandra.create_keyspace("exrepl")
    session = cassandra.session(ks)
    write_table(session, rows(COUNT))
    session.shutdown()
    return ks


@pytest.mark.parametrize(("cols", "lines"), SIZES)
def test_export_in_the_interactive_shell(term, export_ks, home, cols, lines):
    target = home / f"p1_{cols}.jsonl"
    t = term("-k", export_ks, env={"PAGER": ""}, rows=lines, cols=cols)
    t.prompt()
    statement = f"COPY (SELECT ck, data.status FROM orders WHERE pk = 'p1') TO '{target}';"
    t.run(statement, until=r"rows written")
    t.prompt()
    screen = menu(t)
    assert "COPY (SELECT ...): " in screen and "Traceback" not in screen
    expected = {row["ck"]: (doc or {}).get("status") for row, doc in rows(COUNT) if row["pk"] == "p1"}
    got = {r["ck"]: r["data.status"] for r in map(json.loads, target.read_text().splitlines())}
    assert got == expected
    # again: the file is there, and one line says how to replace it
    t.run(statement, until=r"add\s+WITH\s+OVERWRITE\s+=\s+true")  # wrapped at words on a narrow screen
    t.prompt()
    assert "exists: add WITH OVERWRITE = true to replace it" in " ".join(menu(t).split())  # at words
    t.exit()
