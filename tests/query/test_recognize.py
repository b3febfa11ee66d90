"""Recognition before the parse (cqlsh_ext.query.recognize): the schema-free test that lets a
SELECT without a payload path go to cqlsh with no schema and no parse decides as the parse and
its error path would have."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.query.grammar import QueryError, parse
from cqlsh_ext.query.recognize import may_reach_payload, names_payload, table_of
from tests.query.test_grammar import SCHEMA

#: What a SELECT is made of here: the schema's columns (blob, map of blobs, UDT with a blob field,
#: text), paths and steps, literals, functions and the clauses' words.
WORDS = ["pk", "ck", "data", "m", "u", "name", '"Mixed"', "payload", "n", "a", "status", "t", "ks",
         "data.a", "data.a.b", "data[0]", "data.\"x y\"", "m['k']", "m['k'].a", "m['k'][1]", "u.payload",
         "u.payload.a", "u.n", "u.n.a", "name.a", "count(data.n)", "data LIKE", "name LIKE",
         ".", "[", "]", "'k'", "0", "1", "(", ")", ",", "*", "=", ">", "-", "LIKE", "NOT", "IN", "IS",
         "NULL", "CONTAINS", "AND", "OR", "WHERE", "FROM", "GROUP", "BY", "ORDER", "DESC", "LIMIT",
         "ALLOW", "FILTERING", "CONFIRM", "count", "min", "writetime", "DISTINCT", "JSON", "AS", ";",
         "'F%'", "token"]


def outcome(statement: Lexed) -> str:
    """What the shell did with a SELECT before recognition asked first: "ours" (run or refused in
    one line) or "cqlsh" (sent as written)."""
    try:
        plan = parse(statement, SCHEMA)
    except QueryError:
        return "ours" if names_payload(statement, SCHEMA) else "cqlsh"
    return "cqlsh" if plan is None else "ours"


def check(text: str) -> None:
    statement = Lexed(text)
    if table_of(statement) is None:
        return  # not lexed, or no table: cqlsh's before and after
    if not may_reach_payload(statement):
        assert outcome(statement) == "cqlsh", text


@pytest.mark.parametrize("text", [
    "SELECT * FROM t", "SELECT pk, data FROM t WHERE pk = 'a'", "SELECT count(*) FROM ks.t",
    "SELECT JSON pk FROM t",
    "SELECT writetime(name) FROM t", "SELECT token(pk) FROM t WHERE token(pk) > 0",
    "SELECT data FROM t WHERE data = 0x00 ALLOW FILTERING", "SELECT pk FROM ks.t WHERE pk IN ('a', 'b')",
])
def test_a_select_without_a_path_is_cqlshs_before_any_schema(text: str):
    statement = Lexed(text)
    assert table_of(statement) is not None
    assert not may_reach_payload(statement)
    assert outcome(statement) == "cqlsh"


@pytest.mark.parametrize("text", [
    "SELECT data.status FROM t", "SELECT m['k'].a FROM ks.t", "SELECT u.payload.a FROM t",
    "SELECT pk FROM t WHERE data LIKE '%x%' ALLOW FILTERING", "SELECT pk FROM t WHERE data LIKE 3",
    "SELECT data.a AS x FROM t", "SELECT count(data.n) FROM t",
])
def test_a_select_with_a_path_is_read_further(text: str):
    statement = Lexed(text)
    assert may_reach_payload(statement)
    assert outcome(statement) == "ours"


def test_the_table_after_from_is_no_path():
    assert not may_reach_payload(Lexed("SELECT pk FROM ks.t WHERE pk = 'a'"))
    assert table_of(Lexed('SELECT pk FROM "Ks"."T"')) == ("Ks", "T")


@settings(max_examples=800, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS), max_size=8), st.sampled_from(["t", "ks.t", "ks . t"]),
       st.lists(st.sampled_from(WORDS), max_size=12))
def test_a_select_recognition_sends_to_cqlsh_is_one_the_parse_would_have_sent(items, table, rest):
    check(f"SELECT {' '.join(items)} FROM {table} {' '.join(rest)}")
