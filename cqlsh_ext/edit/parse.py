"""UPDATE ... SET <path> = <literal> and DELETE <path> FROM ... read into what is asked (an Edit).

A statement is an edit when one of its targets is a payload path: a blob or text column followed
by `.key`, `["key"]` or `[n]` (CQL has no such thing on those columns, so nothing of cqlsh's is
taken). Anything else is cqlsh's, byte for byte: `recognized` says so without a schema, `parse`
with the table's columns. Errors are QueryError, one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Cursor, Lexed, Token
from cqlsh_ext.cql.types import CqlType
from cqlsh_ext.edit.document import REMOVE, Op, Step
from cqlsh_ext.payload.json_text import StoredFloat, StoredInt
from cqlsh_ext.query.grammar import Schema, Where

if TYPE_CHECKING:
    from cqlsh_ext.scanning.scan import Binder

_NO_IF = "IF: an edit writes each row itself, at the cell's write time + 1 or on its own condition"
_NO_USING = ("USING: an edit keeps each cell's TTL and writes at its write time + 1 (or on a condition): "
             "no TTL or timestamp of its own")
#: Column types whose values an edit reaches into: blobs, and text that holds JSON.
_TEXT_TYPES = frozenset({"text", "varchar", "ascii"})
_ENDS = ("allow", "confirm")


@dataclass(frozen=True)
class Edit:
    """One edit statement: the table, the column whose documents change, the ops in order, the
    WHERE as the payload-query parser reads it (its ordinary conditions go to the server, its payload
    conditions are evaluated here), read from the statement's own tokens."""

    verb: str
    keyspace: str | None
    table: str
    column: str
    ops: tuple[Op, ...]
    where: Where
    allow_filtering: bool
    confirm: bool
    #: The blob inside the column, for a map of blobs (`m['k']`: the key) or a UDT's blob field
    #: (`u.payload`: the field); None for a blob or text column.
    access: str | None = None
    #: "map" or "udt" with `access`.
    container: str | None = None
    #: The blob holds text (a text column or a UDT's text field): its values are str.
    holds_text: bool = False
    #: The SET values that are bind markers (parse(..., markers=True): a program's parameters),
    #: given their values by `bind_edit`; the WHERE's payload conditions' are `where.markers`.
    markers: tuple[ValueMarker, ...] = ()
    #: The server's part of the WHERE bound to a program's parameters (scanning.scan.Binder), when
    #: its conditions hold markers.
    bind: Binder | None = None


@dataclass(frozen=True)
class ValueMarker:
    """A bind marker a SET's value is (db.edit's parameter): the `index`-th `?` of the statement
    (0 first) or the `name`, and the op (an index into Edit.ops) whose value it is."""

    index: int | None
    name: str | None
    op: int

    @property
    def spelt(self) -> str:
        """How a message names it: `?` 1-based, or `:name`."""
        return f":{self.name}" if self.name is not None else f"parameter {(self.index or 0) + 1}"


def editable(cql_type: CqlType | None) -> bool:
    return cql_type is not None and (cql_type.is_blob or cql_type.name in _TEXT_TYPES)


#: A path as written: each step with how it was reached ('.' or '[').
RawSteps = tuple[tuple[str, Step], ...]


@dataclass(frozen=True)
class Reached:
    """Where a target's path starts: the blob (`access` inside a map or UDT, `container` its kind)
    and the steps into its document."""

    access: str | None
    container: str | None
    steps: tuple[Step, ...]
    holds_text: bool = False


def reach(column: str, raw: RawSteps, cql_type: CqlType | None) -> Reached | None:
    """The blob a path starts in and its steps: a blob or text column's own value, a map of blobs'
    value by its key (`m['k']....`), a UDT's blob field (`u.payload....`); None when the target is
    no payload path (CQL's own: `m['k'] = ...`, `u.title = ...`)."""
    from cqlsh_ext.cql.types import UDT
    from cqlsh_ext.query.grammar import map_of_blobs

    if cql_type is None or not raw:
        return None
    if editable(cql_type):
        return Reached(None, None, tuple(step for _, step in raw), not cql_type.is_blob)
    (via, first), rest = raw[0], tuple(step for _, step in raw[1:])
    if not rest:
        return None
    if map_of_blobs(cql_type) and via == "[" and isinstance(first, str):
        return Reached(first, "map", rest)
    field = cql_type.child(first) if cql_type.kind == UDT and isinstance(first, str) else None
    if via == "." and isinstance(first, str) and field is not None and editable(field):
        return Reached(first, "udt", rest, not field.is_blob)
    return None


def recognized(statement: Lexed) -> bool:
    """Whether the statement may be an edit, told without a schema: UPDATE or DELETE with a name
    followed by `.` or `[` among its targets (a UDT field or a collection element is that too:
    `parse` tells them apart)."""
    try:
        tokens = statement.tokens
    except QueryError:
        return False
    if not tokens or tokens[0].kind != "word" or tokens[0].value.lower() not in ("update", "delete"):
        return False
    verb = tokens[0].value.lower()
    start = 0
    if verb == "update":
        start = next((i for i, t in enumerate(tokens) if t.kind == "word" and t.value.lower() == "set"), -1)
        if start < 0:
            return False
    stop = next((i for i, t in enumerate(tokens) if i > start and t.kind == "word"
                 and t.value.lower() in ("where", "from", "if")), len(tokens))
    return any(tokens[i].kind in ("word", "qname") and tokens[i + 1].kind == "punct"
               and tokens[i + 1].value in (".", "[") for i in range(start + 1, stop - 1))


class _Reader(Cursor):
    def __init__(self, statement: Lexed, columns: Callable[[str | None, str], Mapping[str, CqlType]],
                 schema: Callable[[], Schema], markers: bool = False) -> None:
        super().__init__(statement.tokens)
        self.statement = statement
        self.text = statement.text
        self.columns = columns
        self.schema = schema
        #: Bind markers are taken as a SET's value and a payload condition's literal.
        self.markers = markers
        #: The SET values' markers read so far.
        self.found: list[ValueMarker] = []
        #: The table's column types, once looked up.
        self.types: Mapping[str, CqlType] | None = None

    def lookup(self, keyspace: str | None, table: str) -> Mapping[str, CqlType]:
        self.types = self.columns(keyspace, table)
        return self.types

    def names_path(self) -> bool:
        """Whether the statement names a payload path of the table: an editable column followed by
        `.` or `[`, or a map of blobs' `['k']` or a UDT's field followed by one."""
        from cqlsh_ext.query.grammar import map_of_blobs

        tokens, types = self.tokens, self.types or {}

        def steps_at(i: int) -> bool:
            return i < len(tokens) and tokens[i].kind == "punct" and tokens[i].value in (".", "[")

        for i, tok in enumerate(tokens[:-1]):
            if tok.kind not in ("word", "qname"):
                continue
            cql_type = types.get(tok.value.lower() if tok.kind == "word" else tok.value)
            if cql_type is None or not steps_at(i + 1):
                continue
            if editable(cql_type):
                return True
            if map_of_blobs(cql_type) and tokens[i + 1].value == "[" and steps_at(i + 4):
                return True
            if cql_type.kind == "udt" and tokens[i + 1].value == "." and steps_at(i + 3):
                return True
        return False

    def table(self) -> tuple[str | None, str]:
        first = self.name()
        if self.mark("."):
            self.next()
            return first, self.name()
        return None, first

    def edit(self) -> Edit | None:
        verb = self.next().value.lower()
        targets: list[tuple[str, RawSteps, Any]] = []
        if verb == "update":
            keyspace, table = self.table()
            self.lookup(keyspace, table)
            if self.word() == "using":
                raise QueryError(_NO_USING)
            self.expect("set")
            while True:
                column, raw = self.target()
                self.expect("=")
                targets.append((column, raw, self.value(len(targets))))
                if not self.mark(","):
                    break
                self.next()
        else:
            while True:
                column, raw = self.target()
                targets.append((column, raw, REMOVE))
                if not self.mark(","):
                    break
                self.next()
            self.expect("from")
            keyspace, table = self.table()
            self.lookup(keyspace, table)
            if self.word() == "using":
                raise QueryError(_NO_USING)
        types = self.types or {}
        reached = [(column, raw, value, reach(column, raw, types.get(column)))
                   for column, raw, value in targets]
        if not any(r is not None for *_, r in reached):
            return None  # a UDT field or a collection element: CQL's own
        for column, raw, _, found in reached:
            if column not in types:
                raise QueryError(f"unknown column {column}")
            if found is None:
                raise QueryError(f"{_spell(column, raw)}: a column and payload paths in one statement; edit "
                                 "the paths alone")
        blobs = {(column, found.access) for column, _, _, found in reached if found is not None}
        if len(blobs) > 1:
            names = " and ".join(sorted(_spell(c, (("[", a),) if a else ()) for c, a in blobs))
            raise QueryError(f"paths in {names}: one blob's documents per edit")
        where = self.where()
        allow, confirm = self.statement_end()
        ops = tuple(Op(found.steps, value, _spell(column, raw)) for column, raw, value, found in reached
                    if found is not None)
        first = next(found for *_, found in reached if found is not None)
        return Edit(verb, keyspace, table, reached[0][0], ops, where, allow, confirm, first.access,
                    first.container, first.holds_text, tuple(self.found))

    def value(self, op: int) -> Any:
        """A SET's value: a literal, or (markers taken) a bind marker, its value given later."""
        from cqlsh_ext.query.grammar import read_marker

        marker = read_marker(self) if self.markers else None
        if marker is None:
            return self.literal()
        self.found.append(ValueMarker(*marker, op))
        return None  # bound later (bind_edit): its value is a parameter's

    def target(self) -> tuple[str, RawSteps]:
        column = self.name()
        steps: list[tuple[str, Step]] = []
        while self.mark(".") or self.mark("["):
            if self.next().value == ".":
                tok = self.next()
                if tok.kind not in ("word", "qname"):
                    raise QueryError(f"bad path after {column}: a key is a name or \"quoted\", not "
                                     f"{tok.describe()}")
                steps.append((".", tok.value))  # keys as written, case sensitive
            else:
                tok = self.next()
                if tok.kind == "int":
                    steps.append(("[", int(tok.value)))
                elif tok.kind == "string":
                    steps.append(("[", tok.value))
                else:
                    raise QueryError(f"bad path after {column}: [n] or ['key'], not {tok.describe()}")
                self.expect("]")
        return column, tuple(steps)

    def literal(self) -> Any:
        """A JSON value written as CQL literals: 'string', numbers, true, false, null, {...}, [...]."""
        tok = self.next()
        if tok.kind == "string":
            return tok.literal
        if tok.kind in ("int", "decimal") or (tok.kind == "punct" and tok.value == "-"
                                               and self.peek().kind in ("int", "decimal")):
            negative = tok.kind == "punct"
            return _number(self.next() if negative else tok, negative)
        if tok.kind == "word" and tok.value.lower() in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[tok.value.lower()]
        if tok.kind == "punct" and tok.value == "{":
            record: dict[str, Any] = {}
            while not self.mark("}"):
                key = self.next()
                if key.kind not in ("string", "qname"):
                    raise QueryError(f"an object's key is a 'string', not {key.describe()}")
                self.expect(":")
                record[key.value] = self.literal()
                if not self.mark(","):
                    break
                self.next()
            self.expect("}")
            return record
        if tok.kind == "punct" and tok.value == "[":
            items: list[Any] = []
            while not self.mark("]"):
                items.append(self.literal())
                if not self.mark(","):
                    break
                self.next()
            self.expect("]")
            return items
        raise QueryError(f"expected a value ('text', a number, true, false, null, {{...}}, [...]) at "
                         f"{tok.describe()}")

    def where(self) -> Where:
        """The WHERE read by the payload-query parser from these tokens (nothing spelt again)."""
        from cqlsh_ext.query.grammar import where_at

        if self.word() == "if":
            raise QueryError(_NO_IF)
        self.expect("where")
        found, self.pos = where_at(self.statement, self.pos, self.schema(), (*_ENDS, "if"), self.markers)
        if self.word() == "if":
            raise QueryError(_NO_IF)
        return found


def read_path(text: str) -> str:
    """A column and a path inside it, read as the edit statements read a target (`data.items[0].qty`,
    `data["a key"]`, `m['k'].status`), spelt again from what was read: nothing else may follow it
    (a second assignment, a WHERE, a comment). QueryError, one line."""
    from cqlsh_ext.cql.spelling import spell

    try:
        reader = _Reader(Lexed(text), _no_columns, _no_schema)
        column, raw = reader.target()
    except QueryError as err:
        raise QueryError(f"path: {err}") from None
    if reader.peek().kind != "end":
        raise QueryError(f"path: a column and a path inside it, nothing after it: {reader.peek().describe()} "
                         f"follows {_spell(column, raw)}")
    if not raw:
        raise QueryError(f"path: {column} is a column alone: name a path inside it ({column}.status)")
    return _spell(spell(column), raw)


def _no_columns(keyspace: str | None, table: str) -> Mapping[str, CqlType]:
    raise QueryError("a path names no table")


def _no_schema() -> Schema:
    raise QueryError("a path names no table")


def _spell(column: str, raw: RawSteps) -> str:
    """The target as the statement wrote it: `data.items[0]`, `m['k'].status`."""
    from cqlsh_ext.query.grammar import spell_key

    out = [column]
    for via, step in raw:
        if isinstance(step, int):
            out.append(f"[{step}]")
        elif via == "[":
            out.append("['" + step.replace("'", "''") + "']")
        else:
            out.append("." + spell_key(step))
    return "".join(out)


#: A number as JSON spells it: the literal's spelling is kept when it is one (`2.50` stays `2.50`).
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _number(tok: Token, negative: bool = False) -> int | float:
    """The literal as a number that keeps its spelling (payload.json_text.StoredFloat, StoredInt), as
    the stored document's untouched numbers do; one JSON cannot spell (`.5`, `1.`) is spelt as JSON would."""
    value = tok.literal
    text = ("-" if negative else "") + tok.value
    if isinstance(value, Decimal):
        number = float(value)
        if abs(number) == float("inf"):
            raise QueryError(f"{tok.value} is beyond a double")
        return StoredFloat(text if _JSON_NUMBER.fullmatch(text) else repr(-number if negative else number))
    if value is None and tok.kind == "decimal":  # an exponent no decimal holds
        raise QueryError(f"{tok.value} is beyond a double")
    if value is None:  # past Python's int-string limit, which the lexer leaves unread
        from cqlsh_ext.payload.numbers import integer_of

        try:
            value = integer_of(tok.value, "an edit writes")
        except ValueError as err:
            raise QueryError(str(err)) from None
    assert isinstance(value, int)
    return StoredInt(text if _JSON_NUMBER.fullmatch(text) else str(-value if negative else value))


def spell_literal(value: Any) -> str:
    """A JSON value as the literal `literal()` reads back to it: 'text' (quotes doubled), numbers,
    true, false, null, {'key': ...}, [...]. Raises QueryError for what JSON has no value of."""
    import json

    from cqlsh_ext.common.jsonenc import float_name

    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if float_name(value) is not None:  # NaN, Infinity: named, not numbers
            raise QueryError(f"{value!r} is no JSON number")
        return json.dumps(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise QueryError(f"{value} is no JSON number")
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{spell_literal(str(k))}: {spell_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(spell_literal(v) for v in value) + "]"
    raise QueryError(f"no literal for a {type(value).__name__}")


class TableColumns:
    """The table's column types from the driver's schema (`cluster`'s; `current`: the keyspace in
    use, where a table named alone is); QueryError for an unknown table. The edit parser's lookup."""

    def __init__(self, cluster: Any, current: str | None) -> None:
        self.cluster = cluster
        self.current = current
        self.keyspace: str | None = None
        self.meta: Any = None
        self._schema: Schema | None = None

    def __call__(self, keyspace: str | None, table: str) -> dict[str, Any]:
        from cqlsh_ext.reading.resolve import find_table

        ks = keyspace or self.current
        # A table made by another client a moment ago is asked of the server (refresh); unknown to
        # the server too, the statement is cqlsh's, which says so.
        found = find_table(self.cluster, self.current, keyspace, table, refresh=True)
        if found is None or ks is None:
            raise QueryError(f"unknown table {table}")
        self.keyspace, self.meta = ks, found.meta
        self._schema = schema = fresh_schema(self.cluster, found.meta)
        return {name: schema.type_of(name) for name in schema.columns}

    def schema(self) -> Schema:
        """The table looked up last, as the payload-query parser reads it (its WHERE)."""
        assert self._schema is not None, "looked up first"
        return self._schema


def fresh_schema(cluster: Any, meta: Any) -> Schema:
    """The table of the driver's metadata `meta` as the payload-query parser reads it; a UDT made a
    moment ago by another client is asked of the server first."""
    from cqlsh_ext.reading.resolve import table_target

    def schema_of() -> Schema:
        found = table_target(cluster.metadata, meta.keyspace_name, meta.name)
        assert found is not None, "found a moment ago"
        return found.schema

    schema = schema_of()
    unknown = {t.name for t in map(schema.type_of, schema.columns) if t is not None and t.kind == "other"}
    for name in unknown:
        try:
            cluster.refresh_user_type_metadata(meta.keyspace_name, name)
        except Exception:
            pass  # a custom type, not a UDT: nothing to learn
    return schema_of() if unknown else schema


def parse(statement: Lexed, columns: Callable[[str | None, str], Mapping[str, CqlType]],
          schema: Callable[[], Schema], markers: bool = False) -> Edit | None:
    """The edit the statement asks for, None when it is not one (cqlsh's); QueryError when it is
    one but malformed. `columns(keyspace, table)` gives the table's column types (QueryError when
    the table is unknown), then `schema()` the same table as the payload-query parser reads it.
    `markers`: a SET's value and a payload condition's literal may be a bind marker, `?` or
    `:name` (Edit.markers, Where.markers; `bind_edit` gives their values); the ordinary
    conditions' markers stay in the server's part as written (Edit.bind binds them)."""
    if not recognized(statement):
        return None
    reader = _Reader(statement, columns, schema, markers)
    try:
        return reader.edit()
    except QueryError:
        if not reader.names_path():
            return None  # CQL this reader does not follow, and no payload path in it: cqlsh's
        raise


#: What a SET's parameter may be: a JSON value.
VALUE_TYPES = "a str, an int, a float, a Decimal, a bool, None, a dict or a list (a JSON value)"


def bind_edit(edit: Edit, values: Mapping[Any, object]) -> Edit:
    """The edit with its markers given their values (`values`: each of edit.markers' and
    edit.where.markers' value): a SET's value read as the literal that spells it would be (so a
    parameter writes what the same value written in the statement writes), a payload condition's
    as db.query binds it (query.grammar.bind_where). QueryError naming the marker."""
    from dataclasses import replace

    from cqlsh_ext.query.grammar import bind_where

    ops = list(edit.ops)
    for marker in edit.markers:
        op = ops[marker.op]
        try:
            ops[marker.op] = replace(op, value=_value_of(values[marker]))
        except QueryError as err:
            raise QueryError(f"{marker.spelt} ({op.text} =): {err}") from None
    return replace(edit, ops=tuple(ops), where=bind_where(edit.where, values), markers=())


def _value_of(value: object) -> Any:
    """A parameter's value as the literal spelling it reads (`literal()`: numbers keep the spelling
    they print with). QueryError for what is no JSON value."""
    if not _json_value(value):
        raise QueryError(f"an edit's value is {VALUE_TYPES}, not {type(value).__name__}")
    reader = _Reader(Lexed(spell_literal(value)), _no_table, _no_table)
    read = reader.literal()
    assert reader.peek().kind == "end", "spell_literal spells one literal"
    return read


def _json_value(value: object) -> bool:
    """Whether `value` is a JSON value as a program gives one (an object's keys strings)."""
    if value is None or isinstance(value, (str, bool, int, float, Decimal)):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


def _no_table(*_args: object) -> Any:
    raise QueryError("a value names no table")
