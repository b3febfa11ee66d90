"""CQL types, one model: where the blobs are in a column's type.

A type reaches us three ways: as text ('frozen<map<text, blob>>', 'frozen<"MyType">',
'vector<float, 3>', as the server's schema and cqlsh print it), as the driver's type classes (a
result's `column_types`) and as cqlshlib's `CqlType` nodes (what cqlsh formats by). Each is read
into one tree of `CqlType` (`parse`, `from_driver`, `from_cqlsh`), which answers where its leaves
of given types are: `places()`, the steps below the column to each blob, spelled as
`payload.places.ValuePlace` spells them ("item" in a list, set or vector, "key" and "value" in a map,
a tuple's position "0", "1", ..., a UDT field's name). `extractor` walks a driver value along the
same tree. The leaves asked for are a parameter (`BLOB` unless said otherwise), so text columns
can be asked about the same way.

Payloads (what COMPRESSION STATS and ADVISE measure): the blobs a column holds, wherever they are
in it, and a column that is itself text (text, varchar, ascii), a payload stored uncompressed.
Text inside a collection, tuple or UDT is not one: there it is a map's key, a file name, a label.
`payload_columns` finds a result's, `payload_extractor` walks a cell to them.

frozen<> is dropped: it changes nothing about where values are. Loading this module loads nothing
but the standard library (a result's types are read with the driver they came from).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The leaves asked about by default: blob columns and the blobs inside collections, tuples, UDTs.
BLOB = frozenset({"blob"})
#: The text types (varchar is read as text): a column of one is a payload stored uncompressed.
TEXT = frozenset({"text", "ascii"})

#: The types built into CQL (a name not here and not a collection is a UDT's, or a custom type).
NATIVE = frozenset({
    "ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration", "float",
    "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint",
})
#: Other names of native types, read as the name the server's schema prints.
ALIASES = {"varchar": "text"}
#: Types with one element type (a vector also has a dimension: CqlType.size).
SEQUENCES = frozenset({"list", "set", "vector"})
COLLECTIONS = SEQUENCES | {"map", "tuple"}
#: The kind of a UDT (CqlType.kind); a type that is none of these kinds is "other".
UDT = "udt"

#: Steps from a column down to one value inside it (payload.places.ValuePlace.path).
PlacePath = tuple[str, ...]


class TypeTextError(ValueError):
    """Text that is not a CQL type."""


@dataclass(frozen=True)
class CqlType:
    """One node of a CQL type: its name (lower case, varchar read as text; a UDT's as the schema
    spells it), its parameters (element types; a UDT's field types), a UDT's field names (None: not
    a UDT, or one whose fields are not known), a vector's dimension. `source` is the cqlshlib CqlType
    node it was read from (its formatter is set through it), None otherwise; it takes no part in
    equality."""

    name: str
    params: tuple[CqlType, ...] = ()
    fields: tuple[str, ...] | None = None
    size: int | None = None
    source: Any = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> str:
        """'native' (a built-in scalar), 'list', 'set', 'map', 'tuple', 'vector', 'udt', or 'other'
        (a custom type, or a UDT whose fields are not known)."""
        if self.fields is not None:
            return UDT
        if self.name in COLLECTIONS:
            return self.name
        return "native" if self.name in NATIVE else "other"

    @property
    def is_blob(self) -> bool:
        return self.is_leaf(BLOB)

    @property
    def is_text(self) -> bool:
        return self.is_leaf(TEXT)

    @property
    def holds_payload(self) -> bool:
        """As a column's type: it holds a blob somewhere, or it is text (the module docstring)."""
        return self.is_text or self.holds()

    @property
    def scalar(self) -> bool:
        """Neither a collection, a tuple nor a UDT."""
        return self.kind in ("native", "other")

    def children(self) -> list[tuple[str, CqlType]]:
        """(step, type) of what sits one step below this type."""
        kind = self.kind
        if kind in SEQUENCES:
            return [("item", self.params[0])] if self.params else []
        if kind == "map":
            return list(zip(("key", "value"), self.params, strict=False))
        if kind == "tuple":
            return [(str(i), sub) for i, sub in enumerate(self.params)]
        if kind == UDT:
            return list(zip(self.fields or (), self.params, strict=False))
        return []

    def child(self, step: str) -> CqlType | None:
        """The type one step below (a ValuePlace step), None where there is none."""
        return next((sub for name, sub in self.children() if name == step), None)

    def is_leaf(self, leaves: frozenset[str] = BLOB) -> bool:
        """Whether this node is one of the leaves asked about (a blob)."""
        return self.name in leaves and not self.params

    def nodes(self, leaves: frozenset[str] = BLOB) -> Iterator[tuple[PlacePath, CqlType]]:
        """(place, node) of every leaf of the given types, depth first."""
        if self.is_leaf(leaves):
            yield (), self
            return
        if not self.params:
            return
        for step, sub in self.children():
            for place, node in sub.nodes(leaves):
                yield (step, *place), node

    def places(self, leaves: frozenset[str] = BLOB) -> list[PlacePath]:
        """Where the leaves of the given types are: () for the column itself, ("value",) in a
        map's values, ("item", "1") in a list of tuples, ..."""
        return [place for place, _ in self.nodes(leaves)]

    def holds(self, leaves: frozenset[str] = BLOB) -> bool:
        return next(self.nodes(leaves), None) is not None

    def __str__(self) -> str:
        """As CQL writes it, without frozen<>: 'map<text, list<blob>>', 'vector<float, 3>'; a UDT
        by its name."""
        if self.kind == UDT:
            return self.name
        inner = [str(p) for p in self.params]
        if self.size is not None:
            inner.append(str(self.size))
        return f"{self.name}<{', '.join(inner)}>" if inner else self.name


# ---------------------------------------------------------------------------- type text

_TOKEN = re.compile(r"""\s*(?:
    (?P<qname>"(?:[^"]|"")*")
  | (?P<custom>'(?:[^']|'')*')
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<int>\d+)
  | (?P<mark>[<>,])
  )""", re.VERBOSE)
#: Nesting deeper than this is refused (the server's own types are far shallower).
MAX_DEPTH = 64

#: UDT name -> field name -> the field's type text, as the schema has them.
Udts = Mapping[str, Mapping[str, str]]


def parse(text: str, udts: Udts | None = None) -> CqlType:
    """The type of `text`, a CQL type as the server and cqlsh print it: names case-folded unless
    "quoted", frozen<> dropped, the UDTs named in `udts` given their fields. Raises TypeTextError."""
    return _TypeText(text, udts or {}).whole(0, frozenset())


def udts_of(keyspace: Any) -> dict[str, dict[str, str]]:
    """The UDTs of a keyspace's driver metadata, as `parse` takes them."""
    return {name: dict(zip(udt.field_names, udt.field_types, strict=True))
            for name, udt in (getattr(keyspace, "user_types", None) or {}).items()}


class _TypeText:
    """One type text read token by token; a UDT's field types are read by readers of their own."""

    def __init__(self, text: str, udts: Udts) -> None:
        self.text = text
        self.udts = udts
        self.tokens: list[tuple[str, str]] = []
        self.pos = 0
        at = 0
        while text[at:].strip():
            m = _TOKEN.match(text, at)
            if m is None:
                raise self.fail()
            at = m.end()
            kind = m.lastgroup or ""
            raw = m.group(kind)
            if kind == "qname":
                raw = raw[1:-1].replace('""', '"')
            elif kind == "word":
                raw = ALIASES.get(raw.lower(), raw.lower())
            self.tokens.append((kind, raw))

    def fail(self) -> TypeTextError:
        return TypeTextError(f"not a CQL type: {self.text!r}")

    def whole(self, depth: int, resolving: frozenset[str]) -> CqlType:
        found = self.type(depth, resolving)
        if self.pos != len(self.tokens):
            raise self.fail()
        return found

    def mark(self, value: str) -> bool:
        if self.pos < len(self.tokens) and self.tokens[self.pos] == ("mark", value):
            self.pos += 1
            return True
        return False

    def type(self, depth: int, resolving: frozenset[str]) -> CqlType:
        if depth > MAX_DEPTH or self.pos >= len(self.tokens):
            raise self.fail()
        kind, name = self.tokens[self.pos]
        if kind not in ("word", "qname", "custom"):
            raise self.fail()
        self.pos += 1
        params: list[CqlType] = []
        size = None
        if self.mark("<"):
            while True:
                if name == "vector" and params and self.pos < len(self.tokens) \
                        and self.tokens[self.pos][0] == "int":
                    size = int(self.tokens[self.pos][1])
                    self.pos += 1
                else:
                    params.append(self.type(depth + 1, resolving))
                if self.mark(">"):
                    break
                if not self.mark(","):
                    raise self.fail()
        if name == "frozen" and kind == "word" and len(params) == 1:
            return params[0]
        fields = None if params or kind == "custom" or name in resolving else self.udts.get(name)
        if fields is None:
            return CqlType(name, tuple(params), size=size)
        # A UDT cannot hold itself; `resolving` keeps a schema that says otherwise from looping.
        inner = resolving | {name}
        types = tuple(_TypeText(text, self.udts).whole(depth + 1, inner) for text in fields.values())
        return CqlType(name, types, tuple(fields))


# ---------------------------------------------------------------------------- the driver's and cqlsh's

#: cqlsh's name for a vector type read from a result (the driver's typename: the server's class).
_VECTOR_CLASS = "org.apache.cassandra.db.marshal.VectorType"
_REVERSED_CLASS = "org.apache.cassandra.db.marshal.ReversedType"


def from_driver(cls: Any) -> CqlType:
    """The type of a driver type class (`ResultSet.column_types`, `cassandra.cqltypes`)."""
    user_type, vector_type = _driver_classes()
    name = str(getattr(cls, "typename", ""))
    subs: Sequence[Any] = getattr(cls, "subtypes", ()) or ()
    if not subs and name in _NATIVE_NODES:  # most columns: one shared node per name
        return _NATIVE_NODES[name]
    if _subclass(cls, vector_type):
        return CqlType("vector", (from_driver(cls.subtype),), size=int(cls.vector_size))
    name = ALIASES.get(name, name)
    if name in ("frozen", _REVERSED_CLASS) and len(subs) == 1:
        return from_driver(subs[0])
    if name in COLLECTIONS:
        return CqlType(name, tuple(map(from_driver, subs)))
    if _subclass(cls, user_type):
        return CqlType(name, tuple(map(from_driver, subs)), tuple(cls.fieldnames))
    return CqlType(name)


_NATIVE_NODES = {**{name: CqlType(name) for name in NATIVE},
                 **{alias: CqlType(name) for alias, name in ALIASES.items()}}


@functools.cache
def _driver_classes() -> tuple[type, type]:
    """The driver's UserType and VectorType, imported once (the driver is loaded by then: a
    result's types are its classes)."""
    from cassandra.cqltypes import UserType, VectorType

    return UserType, VectorType


def _subclass(cls: Any, base: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, base)


def from_cqlsh(node: Any, keyspace: Any = None) -> CqlType:
    """The type of a cqlshlib CqlType node (built as cqlsh builds it, with `keyspace`, the
    KeyspaceMetadata that gives a UDT's field names). Each node keeps its cqlsh node as `source`."""
    name = str(node.type_name)
    name = ALIASES.get(name, name)
    subs = list(node.sub_types or ())
    udts = getattr(keyspace, "user_types", None) or {}
    if name in ("vector", _VECTOR_CLASS) and subs:
        # cqlsh repeats the element's node once per dimension; an element type with a comma in
        # it is split into [element, dimension] instead.
        if len(subs) == 2 and subs[0] is not subs[1] and str(subs[1].type_name).isdigit():
            size = int(subs[1].type_name)
        else:
            size = len(subs)
        return CqlType("vector", (from_cqlsh(subs[0], keyspace),), size=size, source=node)
    if name in COLLECTIONS:
        return CqlType(name, tuple(from_cqlsh(s, keyspace) for s in subs), source=node)
    if name in udts:
        return CqlType(name, tuple(from_cqlsh(s, keyspace) for s in subs),
                       tuple(udts[name].field_names), source=node)
    return CqlType(name, source=node)


# ---------------------------------------------------------------------------- values

#: One leaf value of a cell: its path in this cell (m['z'], l[0], a.content), its path in the
#: schema, which reports group by (m[value], l[], a.content), and the value (bytes for a blob).
Found = tuple[str, str, Any]
Extractor = Callable[[Any], Iterator[Found]]


def extractor(column: str, cqltype: CqlType, leaves: frozenset[str] = BLOB) -> Extractor:
    """A function: a cell of `column` (a value as the driver gives it) -> its leaf values."""
    return lambda cell: _leaves_in(cqltype, cell, column, column, leaves)


def _leaves_in(cqltype: CqlType, value: Any, path: str, schema: str,
               leaves: frozenset[str]) -> Iterator[Found]:
    if value is None:
        return
    if cqltype.is_leaf(leaves):
        yield path, schema, bytes(value) if cqltype.is_blob else value
        return
    kind = cqltype.kind
    if kind in SEQUENCES and cqltype.params:
        for i, item in enumerate(value):
            yield from _leaves_in(cqltype.params[0], item, f"{path}[{i}]", f"{schema}[]", leaves)
    elif kind == "map" and len(cqltype.params) == 2:
        key_type, value_type = cqltype.params
        for key, item in value.items():
            yield from _leaves_in(key_type, key, f"{path}[key {key!r}]", f"{schema}[key]", leaves)
            yield from _leaves_in(value_type, item, f"{path}[{key!r}]", f"{schema}[value]", leaves)
    elif kind == UDT:
        fields = cqltype.fields or ()
        # The driver gives a tuple in field order (a namedtuple, or a plain tuple when a name is no
        # Python identifier), or an object with the fields by name for a registered class.
        items = list(value) if isinstance(value, tuple) else [getattr(value, name, None) for name in fields]
        for name, sub, item in zip(fields, cqltype.params, items, strict=False):
            yield from _leaves_in(sub, item, f"{path}.{name}", f"{schema}.{name}", leaves)
    elif kind == "tuple":
        for i, (sub, item) in enumerate(zip(cqltype.params, value, strict=False)):
            yield from _leaves_in(sub, item, f"{path}[{i}]", f"{schema}[{i}]", leaves)


def columns_holding(names: Sequence[str], types: Sequence[Any], leaves: frozenset[str] = BLOB
            ) -> list[tuple[int, str, CqlType]]:
    """(index, name, type) of a result's columns (driver types) whose type holds a leaf."""
    return [(i, name, cqltype) for i, name, cqltype in _read(names, types) if cqltype.holds(leaves)]


def _read(names: Sequence[str], types: Sequence[Any]) -> Iterator[tuple[int, str, CqlType]]:
    for i, (name, driver_type) in enumerate(zip(names, types, strict=True)):
        yield i, name, from_driver(driver_type)


def payload_extractor(column: str, cqltype: CqlType) -> Extractor:
    """A function: a cell of `column` -> its payloads: its blobs (bytes), or its text (a str)."""
    return extractor(column, cqltype, TEXT if cqltype.is_text else BLOB)


def payload_columns(names: Sequence[str], types: Sequence[Any]) -> list[tuple[int, str, CqlType]]:
    """(index, name, type) of a result's columns (driver types) that hold payloads."""
    return [(i, name, cqltype) for i, name, cqltype in _read(names, types) if cqltype.holds_payload]


def table_payload_columns(table: Any, udts: Udts | None = None) -> list[str]:
    """A table named alone (the driver's TableMetadata): the names of its columns that hold a blob,
    and of its text columns outside the primary key (a key is how rows are found, not a payload)."""
    keys = {c.name for c in (*table.partition_key, *table.clustering_key)}
    names = []
    for name, column in table.columns.items():
        cqltype = parse(column.cql_type, udts)
        if cqltype.holds() or (cqltype.is_text and name not in keys):
            names.append(name)
    return names
