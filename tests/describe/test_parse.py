"""DESCRIBE PAYLOAD's statement: what is ours (and what stays cqlsh's DESCRIBE), what it asks for,
and the one-line refusals. It is read from describe_payload's declaration, as the shell and Spark
mode read it (features.calling.read_statement)."""

from __future__ import annotations

import pytest

from cqlsh_ext.cql.lexer import Lexed, tokenize
from cqlsh_ext.describe.parse import DescribeStatement, recognizes
from cqlsh_ext.features import declared
from cqlsh_ext.features.arguments import Invalid
from cqlsh_ext.features.calling import read_statement, spoken


def read_as(text: str) -> tuple[DescribeStatement, bool]:
    """The request, and whether the statement asked for JSON."""
    statement = Lexed(text)
    assert recognizes(statement.tokens)
    return read_statement(declared(plugins=False)["describe_payload"], statement, 2, None)


def read(text: str) -> DescribeStatement:
    return read_as(text)[0]


@pytest.mark.parametrize("text", [
    "DESC PAYLOAD", "DESC PAYLOAD;", "DESCRIBE payload", "DESC payload.orders",
    "DESCRIBE PAYLOAD WITH INTERNALS", "DESCRIBE TABLE ks.payload", "DESCRIBE KEYSPACE payload",
    "SELECT * FROM payload.t", "describe payloads ks.t.c",
])
def test_cqlsh_keeps_every_other_describe(text):
    assert not recognizes(tokenize(text))


def test_the_forms():
    assert read("DESCRIBE PAYLOAD ks.t.data") == DescribeStatement("ks", "t", "data")
    # A table named alone is ours too (cqlsh would say 'Improper DESCRIBE command.'): refused
    # with its columns when run; so is keyspace.table, read as table.column until run.
    assert read("DESCRIBE PAYLOAD blob_formats;") == DescribeStatement(None, "blob_formats", "")
    assert read("desc payload t.data;") == DescribeStatement(None, "t", "data")
    assert read('DESC PAYLOAD "Ks"."T"."Data"') == DescribeStatement("Ks", "T", "Data")
    assert read_as("DESC PAYLOAD ks.t.data SAMPLE 500 SEED 7 JSON") == \
        (DescribeStatement("ks", "t", "data", sample=500, seed=7), True)
    assert read_as("DESC PAYLOAD ks.t.data JSON ALL CONFIRM;") == \
        (DescribeStatement("ks", "t", "data", every_row=True, confirm=True), True)
    # The options in any order after the column (and its WHERE).
    assert read_as("DESC PAYLOAD ks.t.data WHERE data.a = 1 SEED 4 JSON SAMPLE 10") == \
        (DescribeStatement("ks", "t", "data", "data.a = 1", sample=10, seed=4), True)
    assert read_as("DESC PAYLOAD ks.t.json")[1] is False  # a column named json is the column
    where = read("DESCRIBE PAYLOAD ks.t.data WHERE data.status = 'PAID' AND data.\"all\" IN (1, 2) ALL\n")
    assert where.where == "data.status = 'PAID' AND data.\"all\" IN (1, 2)" and where.every_row
    # A condition ending in a word that is also an option stays a condition.
    assert read("DESC PAYLOAD ks.t.data WHERE data.json IS NOT NULL").where == "data.json IS NOT NULL"
    assert read("DESC PAYLOAD ks.t.data WHERE data.sample = 5").where == "data.sample = 5"
    assert read("DESC PAYLOAD ks.t.data WHERE data.x = 'a;b' SAMPLE 9").where == "data.x = 'a;b'"


@pytest.mark.parametrize("text, message", [
    ("DESC PAYLOAD ks.t.data.status", "name one column"),
    ("DESC PAYLOAD ks.t.", "'.' is no argument of it"),
    ("DESC PAYLOAD ks.t.data LIMIT 5", "'LIMIT' is no argument of it"),
    ("DESC PAYLOAD ks.t.data WHERE", "WHERE needs a condition"),
    ("DESC PAYLOAD ks.t.data WHERE data.x = 1 ALLOW FILTERING", "no ALLOW FILTERING"),
    ("DESC PAYLOAD ks.t.data SAMPLE 5 ALL", "two readings"),
    ("DESC PAYLOAD ks.t.data SAMPLE 0", "sample is at least 1, not 0"),
    ("DESC PAYLOAD ks.t.data SAMPLE", "SAMPLE takes a whole number"),
    ("DESC PAYLOAD ks.t.data WHERE data.x = 1 SAMPLE", "SAMPLE takes a whole number"),
    ("DESC PAYLOAD ks.t.data SEED 3", "SEED goes with SAMPLE"),
    ("DESC PAYLOAD ks.t.data CONFIRM", "CONFIRM goes with ALL"),
    ("DESC PAYLOAD ks.t.data JSON ALL JSON", "JSON is given twice"),
])
def test_refused_in_one_line(text, message):
    feature = declared(plugins=False)["describe_payload"]
    with pytest.raises(Invalid, match=message) as found:
        read(text)
    said = spoken(feature, str(found.value))
    assert said.startswith("DESCRIBE PAYLOAD: ") and "\n" not in said
