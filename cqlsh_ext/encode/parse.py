"""Where each encode() call of an INSERT, UPDATE or BATCH puts its value: the column, and the path
inside a collection, tuple or UDT (output.place.ValuePlace steps: "item", "key", "value", a tuple's
position, a field's name), with the CQL type found there.

Tokens come from the payload-query lexer (query.lexer). Only the parts of a statement that can hold
a value are read: the INSERT's column list and VALUES, UPDATE's assignments, WHERE and IF relations
and DELETE's WHERE; everything else is skipped to the next clause. A call found anywhere else is
left unplaced, and the caller refuses the statement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cqlsh_ext.query.lexer import Token

#: A CQL type: its name (lower case; a UDT's as the schema spells it) and its parameters.
CqlType = tuple[str, tuple["CqlType", ...]]

#: Words that end a value (a clause or a statement begins).
_CLAUSE_WORDS = frozenset({"where", "if", "using", "and", "apply", "insert", "update", "delete", "set",
                           "values"})
_STATEMENT_WORDS = frozenset({"insert", "update", "delete", "apply"})
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_RELATION_OPS = frozenset({"=", "<", ">", "<=", ">=", "!=", "in", "contains", "like"})


class Unreadable(ValueError):
    """The statement's shape is not one this reader follows; str() says where."""


@dataclass(frozen=True)
class Call:
    #: Token indexes of `encode` and of its closing parenthesis.
    first: int
    last: int
    keyspace: str | None
    table: str
    column: str
    path: tuple[str, ...]
    cql_type: CqlType | None
    #: The call's arguments: string tokens, or the blob literal's tokens (0 and x...).
    args: list[list[Token]] = field(default_factory=list)


@dataclass
class Table:
    """What the reader needs of a table: its columns' types (None: the table is unknown)."""

    keyspace: str | None
    name: str
    columns: dict[str, CqlType] | None


#: (keyspace or None, table) -> Table: the caller looks the schema up.
TableLookup = Callable[[str | None, str], Table]


def is_call(tokens: list[Token], i: int) -> bool:
    """An encode( call at token `i`; `ks.encode(` names a keyspace's own function, not ours."""
    return (tokens[i].kind == "word" and tokens[i].value.lower() == "encode"
            and tokens[i + 1].kind == "punct" and tokens[i + 1].value == "("
            and (i == 0 or tokens[i - 1].value != "."))


def parse_type(text: str) -> CqlType:
    """'map<text, frozen<list<blob>>>' -> ('map', (('text', ()), ('list', (('blob', ()),)))); frozen
    is dropped (it changes nothing about where values go)."""
    pos = 0

    def one() -> CqlType:
        nonlocal pos
        while pos < len(text) and text[pos] == " ":
            pos += 1
        start = pos
        if pos < len(text) and text[pos] == '"':
            end = text.index('"', pos + 1)
            name, pos = text[pos + 1:end], end + 1
        else:
            while pos < len(text) and text[pos] not in "<>, ":
                pos += 1
            name = text[start:pos].lower()
        args: list[CqlType] = []
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos < len(text) and text[pos] == "<":
            pos += 1
            while True:
                args.append(one())
                while pos < len(text) and text[pos] == " ":
                    pos += 1
                if pos >= len(text):
                    break
                pos += 1
                if text[pos - 1] == ">":
                    break
        if name == "frozen" and len(args) == 1:
            return args[0]
        return name, tuple(args)

    return one()


class Reader:
    """Reads one statement's tokens; `calls` lists the encode() calls it placed."""

    def __init__(self, tokens: list[Token], lookup: TableLookup, udt_fields: Callable[[Table, str],
                 dict[str, CqlType] | None]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.lookup = lookup
        self.udt_fields = udt_fields
        self.calls: list[Call] = []

    # ---------------------------------------------------------------- tokens

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        tok = self.peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return tok

    def word(self, ahead: int = 0) -> str:
        tok = self.peek(ahead)
        return tok.value.lower() if tok.kind == "word" else ""

    def expect(self, value: str) -> None:
        tok = self.take()
        if tok.value.lower() != value:
            raise Unreadable(f"expected {value!r} at char {tok.start}, found {tok.describe()}")

    def name(self) -> str:
        tok = self.take()
        if tok.kind == "word":
            return tok.value.lower()
        if tok.kind == "qname":
            return tok.value
        raise Unreadable(f"expected a name at char {tok.start}, found {tok.describe()}")

    def at_end(self) -> bool:
        tok = self.peek()
        return tok.kind == "end" or tok.value == ";"

    def skip_group(self) -> None:
        """Past a bracketed group that starts at the current token."""
        depth = 0
        while True:
            tok = self.take()
            if tok.kind == "end":
                raise Unreadable("unbalanced brackets")
            if tok.kind == "punct" and tok.value in _CLOSERS:
                depth += 1
            elif tok.kind == "punct" and tok.value in _CLOSERS.values():
                depth -= 1
                if depth == 0:
                    return

    def skip_to(self, words: frozenset[str]) -> None:
        """Past tokens until one of `words` (or ';' or the end) at depth 0."""
        while not self.at_end() and self.word() not in words:
            if self.peek().kind == "punct" and self.peek().value in _CLOSERS:
                self.skip_group()
            else:
                self.take()

    # ---------------------------------------------------------------- statements

    def statements(self) -> list[Call]:
        first = self.word()
        if first == "begin":
            self.skip_to(frozenset({"batch"}))
            self.take()
            self.skip_to(_STATEMENT_WORDS)
            while self.word() != "apply":
                if self.peek().kind == "end":
                    raise Unreadable("BATCH without APPLY BATCH")
                if self.peek().value == ";":
                    self.take()
                    continue
                self.statement()
        else:
            self.statement()
        return self.calls

    def statement(self) -> None:
        verb = self.word()
        if verb == "insert":
            self.insert()
        elif verb == "update":
            self.update()
        elif verb == "delete":
            self.delete()
        else:
            raise Unreadable(f"unexpected {self.peek().describe()} at char {self.peek().start}")
        self.skip_to(_STATEMENT_WORDS)

    def table(self) -> Table:
        first = self.name()
        if self.peek().value == ".":
            self.take()
            return self.lookup(first, self.name())
        return self.lookup(None, first)

    def insert(self) -> None:
        self.expect("insert")
        self.expect("into")
        table = self.table()
        if self.word() == "json":
            return
        self.expect("(")
        columns = [self.name()]
        while self.peek().value == ",":
            self.take()
            columns.append(self.name())
        self.expect(")")
        self.expect("values")
        self.expect("(")
        for i, column in enumerate(columns):
            if i:
                self.expect(",")
            self.value(table, column, (), self.column_type(table, column))
        self.expect(")")

    def update(self) -> None:
        self.expect("update")
        table = self.table()
        self.skip_to(frozenset({"set"}))
        self.expect("set")
        while True:
            column = self.name()
            path, cql_type = self.element(table, column, self.column_type(table, column))
            self.expect("=")
            self.value(table, column, path, cql_type)
            if self.peek().value != ",":
                break
            self.take()
        self.relations(table)

    def delete(self) -> None:
        self.skip_to(frozenset({"from"}))
        self.expect("from")
        table = self.table()
        self.relations(table)

    def relations(self, table: Table) -> None:
        """WHERE and IF clauses: `col op value`, `col IN (...)`, `col[key] = value`, `col CONTAINS
        [KEY] value`; anything else (token(), tuples of columns, IF EXISTS) is skipped."""
        while not self.at_end() and self.word() not in _STATEMENT_WORDS:
            if self.word() in ("where", "if", "and"):
                self.take()
                continue
            if self.peek().kind not in ("word", "qname") or self.peek(1).kind == "punct" and \
                    self.peek(1).value == "(":
                self.skip_to(frozenset({"and", "if"}) | _STATEMENT_WORDS)
                continue
            column = self.name()
            cql_type = self.column_type(table, column, required=False)
            path, cql_type = self.element(table, column, cql_type)
            op = self.take().value.lower()
            if op not in _RELATION_OPS:
                self.skip_to(frozenset({"and", "if"}) | _STATEMENT_WORDS)
                continue
            if op == "contains":
                if self.word() == "key":
                    self.take()
                    path, cql_type = (*path, "key"), _param(cql_type, 0)
                else:
                    step = "value" if cql_type and cql_type[0] == "map" else "item"
                    path, cql_type = (*path, step), _param(cql_type, 1 if step == "value" else 0)
            if op == "in" and self.peek().value == "(":
                self.take()
                while self.peek().value != ")":
                    self.value(table, column, path, cql_type)
                    if self.peek().value == ",":
                        self.take()
                self.take()
            else:
                self.value(table, column, path, cql_type)

    def element(self, table: Table, column: str, cql_type: CqlType | None) -> tuple[tuple[str, ...],
                                                                                    CqlType | None]:
        """`col[key]` (a map value or list item) or `col.field` on the left of `=`."""
        if self.peek().value == "[":
            self.take()
            name = cql_type[0] if cql_type else ""
            key_type = _param(cql_type, 0) if name == "map" else ("int", ())
            self.value(table, column, ("key",), key_type)
            self.expect("]")
            if name == "map":
                return ("value",), _param(cql_type, 1)
            return ("item",), _param(cql_type, 0)
        if self.peek().value == ".":
            self.take()
            field_name = self.name()
            fields = self.udt_fields(table, cql_type[0]) if cql_type else None
            return (field_name,), (fields or {}).get(field_name)
        return (), cql_type

    def column_type(self, table: Table, column: str, required: bool = True) -> CqlType | None:
        if table.columns is None:
            return None
        found = table.columns.get(column)
        if found is None and required:
            raise Unreadable(f"{table.name} has no column {column!r}")
        return found

    # ---------------------------------------------------------------- values

    def value(self, table: Table, column: str, path: tuple[str, ...], cql_type: CqlType | None) -> None:
        """One value, up to a delimiter at depth 0: its pieces (terms, operators, collection
        literals, function calls) all have the placement's type."""
        started = False
        while True:
            tok = self.peek()
            if tok.kind == "end" or (tok.kind == "punct" and tok.value in (",", ")", "]", "}", ":", ";")):
                break
            if started and tok.kind == "word" and tok.value.lower() in _CLAUSE_WORDS:
                break
            started = True
            if is_call(self.tokens, self.pos):
                self.call(table, column, path, cql_type)
            elif tok.kind == "punct" and tok.value in _CLOSERS:
                self.literal(table, column, path, cql_type)
            elif tok.kind == "word" and self.peek(1).value == "(":
                self.take()
                self.skip_group()  # another function's arguments: a call inside stays unplaced
            else:
                self.take()

    def call(self, table: Table, column: str, path: tuple[str, ...], cql_type: CqlType | None) -> None:
        first = self.pos
        self.take()
        self.expect("(")
        args: list[list[Token]] = []
        while self.peek().value != ")":
            tok = self.take()
            if tok.kind == "end":
                raise Unreadable("encode( without its closing parenthesis")
            if tok.value == ",":
                continue
            arg = [tok]
            nxt = self.peek()
            if tok.kind == "int" and tok.value == "0" and nxt.kind == "word" and nxt.start == tok.end \
                    and nxt.value[:1] in "xX":
                arg.append(self.take())
            args.append(arg)
        last = self.pos
        self.take()
        self.calls.append(Call(first, last, table.keyspace, table.name, column, path, cql_type, args))

    def literal(self, table: Table, column: str, path: tuple[str, ...], cql_type: CqlType | None) -> None:
        opener = self.take().value
        closer = _CLOSERS[opener]
        name = cql_type[0] if cql_type else ""
        fields = self.udt_fields(table, name) if cql_type and opener == "{" else None
        index = 0
        while self.peek().value != closer:
            if self.peek().kind == "end":
                raise Unreadable("unbalanced brackets")
            if opener == "{" and fields is not None:
                field_name = self.name()
                self.expect(":")
                self.value(table, column, (*path, field_name), fields.get(field_name))
            elif opener == "{" and name == "map":
                self.value(table, column, (*path, "key"), _param(cql_type, 0))
                self.expect(":")
                self.value(table, column, (*path, "value"), _param(cql_type, 1))
            elif opener == "(" and name == "tuple":
                self.value(table, column, (*path, str(index)), _param(cql_type, index))
            elif name in ("list", "set", "vector"):
                self.value(table, column, (*path, "item"), _param(cql_type, 0))
            else:
                self.value(table, column, path, None)
                if self.peek().value == ":":
                    self.take()
                    self.value(table, column, path, None)
            index += 1
            if self.peek().value == ",":
                self.take()
        self.take()


def _param(cql_type: CqlType | None, i: int) -> CqlType | None:
    if cql_type is None or i >= len(cql_type[1]):
        return None
    return cql_type[1][i]
