"""Where encode() values go, read from statements without a server: the placements found, and any
statement text at all gives placements or Unreadable (a fuzz test), never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import tokenize
from cqlsh_ext.cql.types import parse
from cqlsh_ext.encode.parse import Reader, TableTypes, Unreadable

COLUMNS = {"id": "int", "data": "blob", "parts": "list<blob>", "m": "map<text, blob>",
           "d": "frozen<doc>", "pair": "tuple<int, blob>", "k": "blob"}
UDTS = {"doc": {"title": "text", "content": "blob"}}


def lookup(keyspace, name):
    return TableTypes(keyspace or "ks", name, {c: parse(t, UDTS) for c, t in COLUMNS.items()})


def placements(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    calls = Reader(tokenize(text), lookup).statements()
    return [(c.column, c.path, c.cql_type.name if c.cql_type else "?") for c in calls]


@pytest.mark.parametrize("text, found", [
    ("INSERT INTO t (id, data) VALUES (1, encode('snappy', 'x'))", [("data", (), "blob")]),
    ("INSERT INTO ks.t (id, parts, m) VALUES (1, [encode('a', 'b')], {'k': encode('c', 'd')}) "
     "USING TTL 5",
     [("parts", ("item",), "blob"), ("m", ("value",), "blob")]),
    ("INSERT INTO t (id, d, pair) VALUES (1, {title: 'x', content: encode('a', 'b')}, "
     "(1, encode('c', 0x00)))",
     [("d", ("content",), "blob"), ("pair", ("1",), "blob")]),
    ("UPDATE t SET m['k'] = encode('a', 'b'), parts = parts + [encode('c', 'd')] WHERE id = 1 "
     "IF data = encode('e')",
     [("m", ("value",), "blob"), ("parts", ("item",), "blob"), ("data", (), "blob")]),
    ("BEGIN BATCH INSERT INTO t (id, data) VALUES (1, encode('a', 'b')); "
     "DELETE FROM t WHERE k IN (encode('c', 'd'), 0x01); APPLY BATCH",
     [("data", (), "blob"), ("k", (), "blob")]),
    ("INSERT INTO t (id, data) VALUES (1, textAsBlob(encode('a', 'b')))", []),  # inside another call
    ("INSERT INTO t (id, data) VALUES (1, ks.encode('a', 'b'))", []),  # a keyspace's own function
    # Strings that read like punctuation are strings.
    ("INSERT INTO t (id, parts) VALUES (1, [']', encode('a', 'b')])", [("parts", ("item",), "blob")]),
])
def test_placements(text, found):
    assert placements(text) == found


def test_string_arguments_that_read_like_punctuation():
    text = "INSERT INTO t (id, data) VALUES (1, encode(',', ')'))"
    toks = tokenize(text)
    [call] = Reader(toks, lookup).statements()
    assert [[t.value for t in arg] for arg in call.args] == [[","], [")"]]
    assert text[toks[call.first].start:toks[call.last].end] == "encode(',', ')')"


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from([
    "INSERT", "INTO", "UPDATE", "SET", "WHERE", "IF", "BEGIN", "BATCH", "APPLY", "DELETE", "FROM",
    "VALUES", "USING", "AND", "IN", "CONTAINS", "KEY", "t", "ks", ".", "id", "data", "parts", "m", "d",
    "pair", "k", "title", "content", "encode", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", "+", "-",
    "'x'", "$$y$$", "0x01", "1", "2.5", "true", "null", "now",
]), max_size=40))
def test_any_statement_is_placed_or_unreadable(words):
    try:
        toks = tokenize(" ".join(words))
    except QueryError:
        return
    try:
        Reader(toks, lookup).statements()
    except Unreadable:
        pass


def test_block_comments_are_skipped_but_not_inside_strings():
    text = "INSERT /* a\ncomment */ INTO t (id, data) VALUES (1, encode('/* kept */', $$/* kept */$$))"
    toks = tokenize(text)
    assert [t.value for t in toks[:2]] == ["INSERT", "INTO"] and toks[1].start == text.index("INTO")
    assert [t.value for t in toks if t.kind == "string"] == ["/* kept */", "/* kept */"]
    assert placements(text) == [("data", (), "blob")]
