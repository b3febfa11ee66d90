"""UPDATE ... SET <path> = <literal> and DELETE <path> FROM ... read into what is asked (an Edit).

A statement is an edit when one of its targets is a payload path: a blob or text column followed
by `.key`, `["key"]` or `[n]` (CQL has no such thing on those columns, so nothing of cqlsh's is
taken). Anything else is cqlsh's, byte for byte: `recognized` says so without a schema, `parse`
with the table's columns. Errors are QueryError, one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Cursor, Lexed, Token
from cqlsh_ext.cql.types import CqlType
from cqlsh_ext.edit.document import REMOVE, Op, Step, spell_path

#: Column types whose values an edit reaches into: blobs, and text that holds JSON.
_TEXT_TYPES = frozenset({"text", "varchar", "ascii"})
_ENDS = ("allow", "confirm")


@dataclass(frozen=True)
class Edit:
    """One edit statement: the table, the column whose documents change, the ops in order, the
    WHERE as written (sent to the server, with its payload conditions evaluated here)."""

    verb: str
    keyspace: str | None
    table: str
    column: str
    ops: tuple[Op, ...]
    where: str
    allow_filtering: bool
    confirm: bool


def editable(cql_type: CqlType | None) -> bool:
    return cql_type is not None and (cql_type.is_blob or cql_type.name in _TEXT_TYPES)


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
    def __init__(self, statement: Lexed, columns: Callable[[str | None, str], Mapping[str, CqlType]]) -> None:
        super().__init__(statement.tokens)
        self.text = statement.text
        self.columns = columns
        #: The table's column types, once looked up.
        self.types: Mapping[str, CqlType] | None = None

    def lookup(self, keyspace: str | None, table: str) -> Mapping[str, CqlType]:
        self.types = self.columns(keyspace, table)
        return self.types

    def names_path(self) -> bool:
        """Whether an editable column of the table is followed by `.` or `[` in the statement."""
        tokens, types = self.tokens, self.types or {}
        return any(t.kind in ("word", "qname") and editable(types.get(t.value.lower() if t.kind == "word"
                                                                       else t.value))
                   and tokens[i + 1].kind == "punct" and tokens[i + 1].value in (".", "[")
                   for i, t in enumerate(tokens[:-1]))

    def table(self) -> tuple[str | None, str]:
        first = self.name()
        if self.mark("."):
            self.next()
            return first, self.name()
        return None, first

    def edit(self) -> Edit | None:
        verb = self.next().value.lower()
        targets: list[tuple[str, tuple[Step, ...], str, Any]] = []
        if verb == "update":
            keyspace, table = self.table()
            self.lookup(keyspace, table)
            if self.word() == "using":
                raise QueryError("USING: an edit writes with a condition, and keeps no TTL or timestamp "
                                 "of its own")
            self.expect("set")
            while True:
                column, steps, text = self.target()
                self.expect("=")
                targets.append((column, steps, text, self.literal()))
                if not self.mark(","):
                    break
                self.next()
        else:
            while True:
                column, steps, text = self.target()
                targets.append((column, steps, text, REMOVE))
                if not self.mark(","):
                    break
                self.next()
            self.expect("from")
            keyspace, table = self.table()
            self.lookup(keyspace, table)
            if self.word() == "using":
                raise QueryError("USING: an edit writes with a condition, and keeps no timestamp of its own")
        types = self.types or {}
        paths = [t for t in targets if t[1]]
        if not paths or not editable(types.get(paths[0][0])):
            return None  # a UDT field or a collection element: CQL's own
        for column, steps, text, _ in targets:
            if column not in types:
                raise QueryError(f"unknown column {column}")
            if not steps:
                raise QueryError(f"{text}: a column and payload paths in one statement; edit the paths "
                                 "alone")
            if not editable(types[column]):
                raise QueryError(f"{column} is {types[column]}: no payload path to edit")
        columns = {t[0] for t in targets}
        if len(columns) > 1:
            raise QueryError(f"paths in {' and '.join(sorted(columns))}: one column's documents per edit")
        where = self.where()
        allow = False
        if self.take("allow"):
            self.expect("filtering")
            allow = True
        confirm = self.take("confirm")
        if self.mark(";"):
            self.next()
        if self.peek().kind != "end":
            raise QueryError(f"unexpected {self.peek().describe()}")
        ops = tuple(Op(steps, value, text) for _, steps, text, value in targets)
        return Edit(verb, keyspace, table, targets[0][0], ops, where, allow, confirm)

    def target(self) -> tuple[str, tuple[Step, ...], str]:
        column = self.name()
        steps: list[Step] = []
        while self.mark(".") or self.mark("["):
            if self.next().value == ".":
                tok = self.next()
                if tok.kind not in ("word", "qname"):
                    raise QueryError(f"bad path after {column}: a key is a name or \"quoted\", not "
                                     f"{tok.describe()}")
                steps.append(tok.value)  # keys as written, case sensitive
            else:
                tok = self.next()
                if tok.kind == "int":
                    steps.append(int(tok.value))
                elif tok.kind == "string":
                    steps.append(tok.value)
                else:
                    raise QueryError(f"bad path after {column}: [n] or ['key'], not {tok.describe()}")
                self.expect("]")
        return column, tuple(steps), spell_path(column, steps)

    def literal(self) -> Any:
        """A JSON value written as CQL literals: 'string', numbers, true, false, null, {...}, [...]."""
        tok = self.next()
        if tok.kind == "string":
            return tok.literal
        if tok.kind in ("int", "decimal") or (tok.kind == "punct" and tok.value == "-"
                                               and self.peek().kind in ("int", "decimal")):
            number = tok if tok.kind != "punct" else self.next()
            value = _number(number)
            return -value if tok.kind == "punct" else value
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

    def where(self) -> str:
        if self.word() == "if":
            raise QueryError("IF: an edit writes each row on the condition that it is what was read")
        self.expect("where")
        start = self.peek()
        last: Token | None = None
        depth = 0
        while not (self.peek().kind == "end" or self.mark(";")
                   or (depth == 0 and self.word() in (*_ENDS, "if"))):
            tok = self.next()
            depth += tok.kind == "punct" and tok.value == "("
            depth -= tok.kind == "punct" and tok.value == ")"
            last = tok
        if self.word() == "if":
            raise QueryError("IF: an edit writes each row on the condition that it is what was read")
        if last is None:
            raise QueryError(f"expected a condition at {start.describe()}")
        return self.text[start.start:last.end]


def _number(tok: Token) -> int | float:
    value = tok.literal
    if isinstance(value, Decimal):
        number = float(value)
        if abs(number) == float("inf"):
            raise QueryError(f"{tok.value} is beyond a double")
        return number
    assert isinstance(value, int)
    return value


def parse(statement: Lexed, columns: Callable[[str | None, str], Mapping[str, CqlType]]) -> Edit | None:
    """The edit the statement asks for, None when it is not one (cqlsh's); QueryError when it is
    one but malformed. `columns(keyspace, table)` gives the table's column types (QueryError when
    the table is unknown)."""
    if not recognized(statement):
        return None
    reader = _Reader(statement, columns)
    try:
        return reader.edit()
    except QueryError:
        if not reader.names_path():
            return None  # CQL this reader does not follow, and no payload path in it: cqlsh's
        raise
