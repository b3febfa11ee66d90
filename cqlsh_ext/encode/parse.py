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

from cqlsh_ext.cql.lexer import Cursor, Token
from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType

#: Words that end a value (a clause or a statement begins).
_CLAUSE_WORDS = frozenset({"where", "if", "using", "and", "apply", "insert", "update", "delete", "set",
                           "values"})
_STATEMENT_WORDS = frozenset({"insert", "update", "delete", "apply"})
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_RELATION_OPS = frozenset({"=", "<", ">", "<=", ">=", "!=", "in", "contains", "like"})


class Unreadable(ValueError):
    """The statement's shape is not one this reader follows; str() says where."""


@dataclass(frozen=True)
class EncodeCall:
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
class TableTypes:
    """What the reader needs of a table: its columns' types, UDTs with their fields (None: the
    table is unknown)."""

    keyspace: str | None
    name: str
    columns: dict[str, CqlType] | None


#: (keyspace or None, table) -> TableTypes: the caller looks the schema up.
TableLookup = Callable[[str | None, str], TableTypes]


def is_call(tokens: list[Token], i: int) -> bool:
    """An encode( call at token `i`; `ks.encode(` names a keyspace's own function, not ours."""
    return (tokens[i].kind == "word" and tokens[i].value.lower() == "encode"
            and tokens[i + 1].kind == "punct" and tokens[i + 1].value == "("
            and (i == 0 or tokens[i - 1].value != "."))


class Reader(Cursor):
    """Reads one statement's tokens; `calls` lists the encode() calls it placed."""

    def __init__(self, tokens: list[Token], lookup: TableLookup) -> None:
        super().__init__(tokens)
        self.lookup = lookup
        self.calls: list[EncodeCall] = []

    # ---------------------------------------------------------------- tokens

    def expected(self, value: str | None, found: Token) -> Unreadable:
        wanted = "a name" if value is None else repr(value)
        return Unreadable(f"expected {wanted} at char {found.start}, found {found.describe()}")

    def at_end(self) -> bool:
        return self.peek().kind == "end" or self.mark(";")

    def skip_group(self) -> None:
        """Past a bracketed group that starts at the current token."""
        depth = 0
        while True:
            tok = self.next()
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
                self.next()

    # ---------------------------------------------------------------- statements

    def statements(self) -> list[EncodeCall]:
        first = self.word()
        if first == "begin":
            self.skip_to(frozenset({"batch"}))
            self.next()
            self.skip_to(_STATEMENT_WORDS)
            while self.word() != "apply":
                if self.peek().kind == "end":
                    raise Unreadable("BATCH without APPLY BATCH")
                if self.mark(";"):
                    self.next()
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

    def table(self) -> TableTypes:
        first = self.name()
        if self.mark("."):
            self.next()
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
        while self.mark(","):
            self.next()
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
            if not self.mark(","):
                break
            self.next()
        self.relations(table)

    def delete(self) -> None:
        self.skip_to(frozenset({"from"}))
        self.expect("from")
        table = self.table()
        self.relations(table)

    def relations(self, table: TableTypes) -> None:
        """WHERE and IF clauses: `col op value`, `col IN (...)`, `col[key] = value`, `col CONTAINS
        [KEY] value`; anything else (token(), tuples of columns, IF EXISTS) is skipped."""
        while not self.at_end() and self.word() not in _STATEMENT_WORDS:
            if self.word() in ("where", "if", "and"):
                self.next()
                continue
            if self.peek().kind not in ("word", "qname") or self.peek(1).kind == "punct" and \
                    self.mark("(", 1):
                self.skip_to(frozenset({"and", "if"}) | _STATEMENT_WORDS)
                continue
            column = self.name()
            cql_type = self.column_type(table, column, required=False)
            path, cql_type = self.element(table, column, cql_type)
            op = self.next().value.lower()
            if op not in _RELATION_OPS:
                self.skip_to(frozenset({"and", "if"}) | _STATEMENT_WORDS)
                continue
            if op == "contains":
                if self.word() == "key":
                    self.next()
                    path, cql_type = (*path, "key"), _child(cql_type, "key")
                else:
                    step = "value" if cql_type is not None and cql_type.kind == "map" else "item"
                    path, cql_type = (*path, step), _child(cql_type, step)
            if op == "in" and self.mark("("):
                self.next()
                while not self.mark(")"):
                    self.value(table, column, path, cql_type)
                    if self.mark(","):
                        self.next()
                self.next()
            else:
                self.value(table, column, path, cql_type)

    def element(self, table: TableTypes, column: str, cql_type: CqlType | None) -> tuple[tuple[str, ...],
                                                                                    CqlType | None]:
        """`col[key]` (a map value or list item) or `col.field` on the left of `=`."""
        if self.mark("["):
            self.next()
            is_map = cql_type is not None and cql_type.kind == "map"
            key_type = _child(cql_type, "key") if is_map else CqlType("int")
            self.value(table, column, ("key",), key_type)
            self.expect("]")
            if is_map:
                return ("value",), _child(cql_type, "value")
            return ("item",), _child(cql_type, "item")
        if self.mark("."):
            self.next()
            field_name = self.name()
            return (field_name,), _child(cql_type, field_name) if _is_udt(cql_type) else None
        return (), cql_type

    def column_type(self, table: TableTypes, column: str, required: bool = True) -> CqlType | None:
        if table.columns is None:
            return None
        found = table.columns.get(column)
        if found is None and required:
            raise Unreadable(f"{table.name} has no column {column!r}")
        return found

    # ---------------------------------------------------------------- values

    def value(self, table: TableTypes, column: str, path: tuple[str, ...], cql_type: CqlType | None) -> None:
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
            elif tok.kind == "word" and self.mark("(", 1):
                self.next()
                self.skip_group()  # another function's arguments: a call inside stays unplaced
            else:
                self.next()

    def call(self, table: TableTypes, column: str, path: tuple[str, ...], cql_type: CqlType | None) -> None:
        first = self.pos
        self.next()
        self.expect("(")
        args: list[list[Token]] = []
        while not self.mark(")"):
            tok = self.next()
            if tok.kind == "end":
                raise Unreadable("encode( without its closing parenthesis")
            if tok.kind == "punct" and tok.value == ",":
                continue
            arg = [tok]
            nxt = self.peek()
            if tok.kind == "int" and tok.value == "0" and nxt.kind == "word" and nxt.start == tok.end \
                    and nxt.value[:1] in "xX":
                arg.append(self.next())
            args.append(arg)
        last = self.pos
        self.next()
        self.calls.append(EncodeCall(first, last, table.keyspace, table.name, column, path, cql_type, args))

    def literal(self, table: TableTypes, column: str, path: tuple[str, ...],
                cql_type: CqlType | None) -> None:
        opener = self.next().value
        closer = _CLOSERS[opener]
        kind = cql_type.kind if cql_type is not None else ""
        index = 0
        while not self.mark(closer):
            if self.peek().kind == "end":
                raise Unreadable("unbalanced brackets")
            if opener == "{" and kind == UDT:
                field_name = self.name()
                self.expect(":")
                self.value(table, column, (*path, field_name), _child(cql_type, field_name))
            elif opener == "{" and kind == "map":
                self.value(table, column, (*path, "key"), _child(cql_type, "key"))
                self.expect(":")
                self.value(table, column, (*path, "value"), _child(cql_type, "value"))
            elif opener == "(" and kind == "tuple":
                self.value(table, column, (*path, str(index)), _child(cql_type, str(index)))
            elif kind in SEQUENCES:
                self.value(table, column, (*path, "item"), _child(cql_type, "item"))
            else:
                self.value(table, column, path, None)
                if self.mark(":"):
                    self.next()
                    self.value(table, column, path, None)
            index += 1
            if self.mark(","):
                self.next()
        self.next()


def _child(cql_type: CqlType | None, step: str) -> CqlType | None:
    return None if cql_type is None else cql_type.child(step)


def _is_udt(cql_type: CqlType | None) -> bool:
    return cql_type is not None and cql_type.kind == UDT
