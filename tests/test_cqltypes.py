"""The one model of CQL types (cqlsh_ext.cql.types): type text, the driver's type classes and cqlsh's
CqlType read into one tree that says where the blobs are, checked on the types a real server made."""

from __future__ import annotations

import pytest

from cqlsh_ext.cql.types import CqlType, TypeTextError, extractor, from_cqlsh, from_driver, parse, udts_of

#: Leaves a later question asks about (varchar is read as text).
TEXT = frozenset({"text", "ascii"})


@pytest.mark.parametrize("text, model", [
    ("blob", CqlType("blob")),
    ("FROZEN< Map<TEXT ,Blob> >", CqlType("map", (CqlType("text"), CqlType("blob")))),
    ("frozen<map<text, frozen<list<blob>>>>",
     CqlType("map", (CqlType("text"), CqlType("list", (CqlType("blob"),))))),
    ("vector<float, 3>", CqlType("vector", (CqlType("float"),), size=3)),
    ("tuple<int, blob>", CqlType("tuple", (CqlType("int"), CqlType("blob")))),
    ('frozen<"MyType">', CqlType("MyType")),
    ('"My ""odd"" type"', CqlType('My "odd" type')),
    ("Addr", CqlType("addr")),  # an unquoted name is case-folded, as CQL does
    ("list<VARCHAR>", CqlType("list", (CqlType("text"),))),  # varchar is text's other name
    ("'org.apache.cassandra.db.marshal.BytesType'", CqlType("'org.apache.cassandra.db.marshal.BytesType'")),
])
def test_type_text(text, model):
    assert parse(text) == model


@pytest.mark.parametrize("text", ["", "list<", "map<text blob>", "list<int>>", "a b", "<blob>", "list<,>",
                                  "list<" * 100 + "blob" + ">" * 100])
def test_text_that_is_no_type_is_one_error(text):
    with pytest.raises(TypeTextError, match="not a CQL type"):
        parse(text)


def test_written_back_as_cql_without_frozen():
    udts = {"doc": {"body": "blob"}}
    assert [str(parse(t, udts)) for t in ("frozen<map<text,frozen<list<blob>>>>", "vector<float,3>",
                                          "frozen<doc>", 'frozen<"MyType">')] == [
        "map<text, list<blob>>", "vector<float, 3>", "doc", "MyType"]


def test_udts_are_given_their_fields_and_a_loop_stops():
    udts = {"doc": {"title": "text", "body": "blob"}, "loop": {"again": "frozen<loop>", "raw": "blob"}}
    doc = parse("frozen<list<frozen<doc>>>", udts).params[0]
    assert (doc.kind, doc.fields, doc.child("body")) == ("udt", ("title", "body"), CqlType("blob"))
    assert parse("loop", udts).places() == [("raw",)]  # `again` is left unresolved, not followed


def test_places_of_other_leaves():
    # What a later change asks of text columns: the same walk, other leaves.
    cqltype = parse("map<text, frozen<tuple<varchar, blob, ascii>>>")
    assert cqltype.places(TEXT) == [("key",), ("value", "0"), ("value", "2")]
    assert cqltype.places() == [("value", "1")]
    assert not parse("list<int>").holds() and not parse("list<int>").holds(TEXT)


# ---------------------------------------------------------------------------- from a real server

UDTS = [
    "CREATE TYPE doc (title text, body blob, parts frozen<list<blob>>)",
    'CREATE TYPE "Outer Doc" ("Inner" frozen<doc>, note text, "Raw" blob)',
]
#: column -> (its type, the places of its blobs)
COLUMNS: dict[str, tuple[str, list[tuple[str, ...]]]] = {
    "id": ("int", []),
    "note": ("text", []),
    "b": ("blob", [()]),
    "lb": ("list<blob>", [("item",)]),
    "sb": ("set<blob>", [("item",)]),
    "mb": ("map<blob, blob>", [("key",), ("value",)]),
    "mtl": ("map<text, frozen<list<blob>>>", [("value", "item")]),
    "tup": ("tuple<int, blob, frozen<map<int, blob>>>", [("1",), ("2", "value")]),
    "d": ("doc", [("body",), ("parts", "item")]),
    "fd": ("frozen<doc>", [("body",), ("parts", "item")]),
    "od": ('frozen<"Outer Doc">', [("Inner", "body"), ("Inner", "parts", "item"), ("Raw",)]),
    "ld": ("list<frozen<doc>>", [("item", "body"), ("item", "parts", "item")]),
    "mdk": ("map<frozen<doc>, int>", [("key", "body"), ("key", "parts", "item")]),
    "vb": ("vector<blob, 2>", [("item",)]),
    "vt": ("vector<frozen<tuple<int, blob>>, 2>", [("item", "1")]),
    "vf": ("vector<float, 3>", []),
}
#: One row with a distinct blob at every place: column -> CQL literal, and the values the
#: extractor must find in it: (path in the cell, path in the schema, bytes).
ROW = {
    "id": "1", "note": "'n'", "b": "0x01", "lb": "[0x02, 0x03]", "sb": "{0x04}", "mb": "{0x05: 0x06}",
    "mtl": "{'k': [0x07]}", "tup": "(1, 0x08, {2: 0x09})",
    "d": "{title: 't', body: 0x0a, parts: [0x0b]}", "fd": "{title: 't', body: 0x0c, parts: []}",
    "od": '{"Inner": {title: \'i\', body: 0x0d, parts: [0x0e]}, note: \'o\', "Raw": 0x0f}',
    "ld": "[{title: 'l', body: 0x10, parts: [0x11]}]", "mdk": "{{title: 'k', body: 0x12, parts: []}: 1}",
    "vb": "[0x13, 0x14]", "vt": "[(1, 0x15), (2, 0x16)]", "vf": "[1.0, 2.0, 3.0]",
}
FOUND = {
    "b": [("b", "b", b"\x01")],
    "lb": [("lb[0]", "lb[]", b"\x02"), ("lb[1]", "lb[]", b"\x03")],
    "sb": [("sb[0]", "sb[]", b"\x04")],
    "mb": [("mb[key b'\\x05']", "mb[key]", b"\x05"), ("mb[b'\\x05']", "mb[value]", b"\x06")],
    "mtl": [("mtl['k'][0]", "mtl[value][]", b"\x07")],
    "tup": [("tup[1]", "tup[1]", b"\x08"), ("tup[2][2]", "tup[2][value]", b"\x09")],
    "d": [("d.body", "d.body", b"\x0a"), ("d.parts[0]", "d.parts[]", b"\x0b")],
    "fd": [("fd.body", "fd.body", b"\x0c")],
    "od": [("od.Inner.body", "od.Inner.body", b"\x0d"), ("od.Inner.parts[0]", "od.Inner.parts[]", b"\x0e"),
           ("od.Raw", "od.Raw", b"\x0f")],
    "ld": [("ld[0].body", "ld[].body", b"\x10"), ("ld[0].parts[0]", "ld[].parts[]", b"\x11")],
    "vb": [("vb[0]", "vb[]", b"\x13"), ("vb[1]", "vb[]", b"\x14")],
    "vt": [("vt[0][1]", "vt[][1]", b"\x15"), ("vt[1][1]", "vt[][1]", b"\x16")],
    "mdk": [("mdk[key doc(title='k', body=b'\\x12', parts=[])].body", "mdk[key].body", b"\x12")],
}


@pytest.fixture(scope="module")
def server_types(cassandra):
    """(keyspace metadata, table metadata, the result of SELECT * with the one row)."""
    ks = cassandra.create_keyspace("types")
    session = cassandra.session(ks)
    for statement in UDTS:
        session.execute(statement)
    columns = ", ".join(f"{name} {text}" for name, (text, _) in COLUMNS.items())
    session.execute(f"CREATE TABLE t ({columns}, PRIMARY KEY (id))")
    session.execute(f"INSERT INTO t ({', '.join(ROW)}) VALUES ({', '.join(ROW.values())})")
    cassandra.cluster().refresh_schema_metadata()
    keyspace = cassandra.cluster().metadata.keyspaces[ks]
    result = session.execute(f"SELECT {', '.join(COLUMNS)} FROM t")
    yield keyspace, keyspace.tables["t"], result
    session.shutdown()


def test_blob_places_from_the_schema_text(server_types):
    keyspace, table, _ = server_types
    udts = udts_of(keyspace)
    assert {name: parse(column.cql_type, udts).places() for name, column in table.columns.items()} == {
        name: places for name, (_, places) in COLUMNS.items()}


def test_blob_places_from_the_drivers_result_types(server_types):
    _, _, result = server_types
    assert {name: from_driver(t).places() for name, t in zip(result.column_names, result.column_types,
                                                             strict=True)} == {
        name: places for name, (_, places) in COLUMNS.items()}


def test_blob_places_from_cqlshs_types(server_types):
    # Built as cqlsh builds them for a result (Shell.print_static_result).
    from cassandra.cqltypes import cql_typename
    from cqlshlib.formatting import CqlType as CqlshType

    keyspace, _, result = server_types
    nodes = {name: CqlshType(cql_typename(t), keyspace)
             for name, t in zip(result.column_names, result.column_types, strict=True)}
    assert {name: from_cqlsh(node, keyspace).places() for name, node in nodes.items()} == {
        name: places for name, (_, places) in COLUMNS.items()}
    # Each blob place leads to the cqlsh node that formats it.
    for node in nodes.values():
        for _, found in from_cqlsh(node, keyspace).nodes():
            assert found.source.type_name == "blob"


def test_the_three_readings_are_one_type(server_types):
    from cassandra.cqltypes import cql_typename
    from cqlshlib.formatting import CqlType as CqlshType

    keyspace, table, result = server_types
    udts = udts_of(keyspace)
    for name, driver_type in zip(result.column_names, result.column_types, strict=True):
        from_text = parse(table.columns[name].cql_type, udts)
        assert from_driver(driver_type) == from_text, name
        assert from_cqlsh(CqlshType(cql_typename(driver_type), keyspace), keyspace) == from_text, name


def test_the_blobs_of_a_row_as_the_driver_gives_it(server_types):
    _, _, result = server_types
    row = result.one()
    found = {}
    for i, (name, driver_type) in enumerate(zip(result.column_names, result.column_types, strict=True)):
        cqltype = from_driver(driver_type)
        if cqltype.holds():
            found[name] = list(extractor(name, cqltype)(row[i]))
    assert found == {name: FOUND.get(name, []) for name, (_, places) in COLUMNS.items() if places}
