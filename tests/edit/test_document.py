"""The edit's statement reader and its documents, without a server: which UPDATE and DELETE are
edits, the literals, JSON text written back as it was spelt, and the refusals of a path."""

from __future__ import annotations

import pytest

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.cql.types import parse as cql_type
from cqlsh_ext.edit.document import REMOVE, EditRefused, Op, apply, json_spacing, read_json, write_json
from cqlsh_ext.edit.parse import parse, recognized
from cqlsh_ext.query.grammar import Path, Schema

COLUMNS = {name: cql_type(text, {"att": {"title": "text", "content": "blob"}}) for name, text in
           {"id": "int", "data": "blob", "doc": "text", "m": "map<text, blob>", "n": "int",
            "u": "att"}.items()}


def columns(keyspace: str | None, table: str) -> dict:
    if table != "t":
        raise QueryError(f"unknown table {table}")
    return COLUMNS


SCHEMA = Schema({"id": "int", "data": "blob", "doc": "text", "m": "map<text, blob>", "n": "int", "u": "att"},
                ["id"], {"att": {"title": "text", "content": "blob"}})


def edit(text: str):
    return parse(Lexed(text), columns, lambda: SCHEMA)


@pytest.mark.parametrize("text", [
    "UPDATE t SET n = 1 WHERE id = 1",
    "UPDATE t SET m['k'] = 0x00 WHERE id = 1",
    "DELETE m['k'] FROM t WHERE id = 1",
    "UPDATE t SET u.title = 'x' WHERE id = 1",
    "UPDATE t SET m['k'] = textAsBlob('x') WHERE id = 1",
    "DELETE FROM t WHERE id = 1",
    "UPDATE ks.t SET data = encode('text', 'x') WHERE id = 1",
    "UPDATE nope SET data.x = 1 WHERE id = 1",
    "INSERT INTO t (id) VALUES (1)",
])
def test_statements_without_a_payload_path_are_not_edits(text: str) -> None:
    assert edit(text) is None


def test_an_update_reads_paths_and_json_literals() -> None:
    found = edit("UPDATE ks.t SET data.status = 'X', data.items[0].qty = -2.5, data.\"Odd key\" = "
                 "{'a': [1, true, null], \"b\": {}}, data['k'] = $$t$$ WHERE id = 1 CONFIRM;")
    assert found is not None and found.keyspace == "ks" and found.column == "data" and found.confirm
    assert [(op.steps, op.value) for op in found.ops] == [
        (("status",), "X"), (("items", 0, "qty"), -2.5), (("Odd key",), {"a": [1, True, None], "b": {}}),
        (("k",), "t")]
    assert found.where.text == "id = 1" and found.where.ordinary == ("id = 1",) and not found.allow_filtering
    assert found.where.restricted == {"id"} and not found.where.predicates


def test_a_number_keeps_the_spelling_it_was_typed_in() -> None:
    found = edit("UPDATE t SET data.a = 2.50, data.b = -0.10, data.c = 1e3, data.d = .5, data.e = 007 "
                 "WHERE id = 1")
    assert found is not None
    assert [getattr(op.value, "spelling", None) for op in found.ops] == ["2.50", "-0.10", "1e3", "0.5", "7"]
    assert [float(op.value) for op in found.ops] == [2.5, -0.1, 1000.0, 0.5, 7.0]
    tree = read_json('{"a":1}') | {"a": found.ops[0].value}
    assert write_json(tree, json_spacing("{}", {})) == '{"a":2.50}'


def test_a_delete_reads_paths_and_its_where() -> None:
    found = edit("DELETE doc.note, doc.items[2] FROM t WHERE id = 1 AND doc.x = 'y' ALLOW FILTERING")
    assert found is not None and found.verb == "delete" and found.column == "doc"
    assert [op.steps for op in found.ops] == [("note",), ("items", 2)]
    assert all(op.value is REMOVE for op in found.ops)
    assert found.where.text == "id = 1 AND doc.x = 'y'" and found.allow_filtering and not found.confirm
    assert found.where.ordinary == ("id = 1",)
    [condition] = found.where.predicates  # read by the payload-query parser from the same tokens
    assert condition.ref == Path("doc", None, ("x",), "doc.x")
    assert (condition.op, condition.values) == ("=", ("y",))


@pytest.mark.parametrize("text, reason", [
    ("UPDATE t SET data.a = 1, n = 2 WHERE id = 1", "a column and payload paths in one statement"),
    ("UPDATE t SET data.a = 1, doc.b = 2 WHERE id = 1", "one blob's documents per edit"),
    ("UPDATE t SET data.a = 1 WHERE id = 1 IF n = 2", "IF: an edit writes each row"),
    ("UPDATE t USING TTL 5 SET data.a = 1 WHERE id = 1", "USING"),
    ("UPDATE t SET data.a = now() WHERE id = 1", "expected a value"),
    ("UPDATE t SET data.a = 1e400 WHERE id = 1", "beyond a double"),
    ("UPDATE t SET data.a = 1", "expected where"),
])
def test_malformed_edits_are_one_line(text: str, reason: str) -> None:
    assert recognized(Lexed(text))
    with pytest.raises(QueryError, match=reason.replace("(", r"\(")):
        edit(text)


@pytest.mark.parametrize("text", [
    '{"b":1.50,"a":1e3,"c":[1,2],"big":12345678901234567890}',
    '{"z": 0.10, "y": {"k": -0.0}, "x": [1.0, 2], "e": []}',
    '{\n  "id": 7,\n  "tags": [\n    "a"\n  ],\n  "o": {}\n}',
    '{"a":"\\u00e9"}',
    '[{"a":"é"}]',
])
def test_json_text_writes_back_as_it_was_spelt(text: str) -> None:
    tree = read_json(text)
    assert write_json(tree, json_spacing(text, tree)) == text


def test_irregular_json_text_is_refused() -> None:
    text = '{"a": 1,  "b":2}'
    with pytest.raises(EditRefused, match="laid out"):
        json_spacing(text, read_json(text))


def test_ops_set_add_remove_and_refuse() -> None:
    tree = read_json('{"s":"NEW","items":[{"q":1},{"q":2}],"note":"x"}')
    changes = apply(tree, [Op(("s",), "DONE", "data.s"), Op(("items", 1, "q"), 3, "data.items[1].q"),
                           Op(("note",), REMOVE, "data.note"), Op(("new",), [1], "data.new"),
                           Op(("gone",), REMOVE, "data.gone"), Op(("items", 0, "q"), 1, "data.items[0].q")])
    assert [c[0] for c in changes] == ["data.s", "data.items[1].q", "data.note", "data.new"]
    assert write_json(tree, json_spacing("{}", {})) == '{"s":"DONE","items":[{"q":1},{"q":3}],"new":[1]}'
    for op, reason in [(Op(("s", "x"), 1, "data.s.x"), "its parent is a str"),
                       (Op(("items", 5), 1, "data.items[5]"), "the list has 2 items"),
                       (Op(("nope", "x"), 1, "data.nope.x"), "no key 'nope' on the way"),
                       (Op(("items", "k"), 1, "data.items.k"), "a key into a list")]:
        with pytest.raises(EditRefused, match=reason):
            apply(tree, [op])


@pytest.mark.parametrize("text, reason", [
    ('{"a":1,"a":2}', '"a" given twice in one object'),
    ('{"a":NaN}', "NaN is not JSON"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
])
def test_json_text_that_would_not_write_back_is_refused(text: str, reason: str) -> None:
    with pytest.raises(EditRefused, match=reason):
        read_json(text)


def test_a_map_of_blobs_value_and_a_udt_blob_field_are_reached() -> None:
    found = edit("UPDATE t SET m['k'].status = 'X', m['k'].items[0] = 1 WHERE id = 1")
    assert found is not None and (found.column, found.access, found.container) == ("m", "k", "map")
    assert [op.steps for op in found.ops] == [("status",), ("items", 0)]
    assert [op.text for op in found.ops] == ["m['k'].status", "m['k'].items[0]"]
    found = edit("DELETE u.content.note FROM t WHERE id = 1")
    assert found is not None and (found.column, found.access, found.container) == ("u", "content", "udt")
    with pytest.raises(QueryError, match="one blob's documents per edit"):
        edit("UPDATE t SET m['a'].x = 1, m['b'].x = 1 WHERE id = 1")
