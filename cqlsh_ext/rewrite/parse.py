"""COMPRESSION REWRITE's statement read into what is asked (errors one line, QueryError):

    COMPRESSION REWRITE [ks.]table.column AS 'SPEC' [WHERE ...] [ALLOW FILTERING] [PACE n] [ALL]
                        [CONFIRM]
    COMPRESSION REWRITE RESUME 'journal' | LAST [CONFIRM]

The column is a blob column, a map of blobs' value (`ks.t.m['k']`) or a UDT's blob field
(`ks.t.u.payload`), as edits reach them. The WHERE is read by the payload-query parser from the
statement's own tokens (query.grammar.where_at): ordinary conditions go to the server, conditions
on payload paths are evaluated here. This is the statement's one reader (rewrite.command hands it
the statement the shell lexed once); cqlsh's grammar for it (insight/command.py) completes it and
never parses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Cursor, Lexed
from cqlsh_ext.query.grammar import Schema, Where
from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.requests import ResumeRequest, RewriteRequest

#: The statement's form after its words (the rewrite feature's Statement.usage), and with them.
FORM = ("[keyspace.]table.column AS 'SPEC' [WHERE ...] [ALLOW FILTERING] [PACE n] [ALL] [CONFIRM]  |  "
        "COMPRESSION REWRITE RESUME 'journal'|LAST [CONFIRM]")
USAGE = f"COMPRESSION REWRITE {FORM}"
_TAIL = ("allow", "pace", "all", "confirm")


@dataclass(frozen=True)
class RewriteAsked:
    """A rewrite as read from its statement: the request (writing.requests.RewriteRequest: what
    its journal keeps, RESUME's source) and its WHERE as the payload-query parser read it (None:
    the whole table)."""

    request: RewriteRequest
    where: Where | None


#: The table a statement names: (keyspace or None, table) -> the driver's metadata, None if unknown.
Tables = Callable[[str | None, str], Any]
#: The table as the payload-query parser reads it.
Schemas = Callable[[Any], Schema]


class _RewriteReader(Cursor):
    def __init__(self, statement: Lexed, tables: Tables, schemas: Schemas, current: str | None) -> None:
        super().__init__(statement.tokens)
        self.statement = statement
        self.tables = tables
        self.schemas = schemas
        self.current = current

    def read(self) -> RewriteAsked | ResumeRequest:
        if self.word() != "compression" or self.word(1) != "rewrite":
            raise QueryError(f"expected {USAGE}")
        self.pos += 2
        if self.take("resume"):
            from cqlsh_ext.writing.journal_names import LAST

            tok = self.next()
            if tok.kind != "string" and not (tok.kind == "word" and str(tok.value).upper() == LAST):
                raise QueryError(f"RESUME takes the journal's path or id in quotes, or LAST, not "
                                 f"{tok.describe()}")
            resumed = self.take("confirm")
            self._end()
            return ResumeRequest(LAST if tok.kind == "word" else str(tok.value), resumed)
        keyspace, meta, blob = self.target()
        self.expect("as")
        spec = self.next()
        if spec.kind != "string":
            raise QueryError(f"AS takes the target chain in quotes ('zstd', 'zstd:dict=ID', 'none'), not "
                             f"{spec.describe()}")
        where = None
        if self.take("where"):
            from cqlsh_ext.query.grammar import where_at

            where, self.pos = where_at(self.statement, self.pos, self.schemas(meta), _TAIL)
        allow: bool | None = None
        every: bool | None = None
        confirm: bool | None = None
        pace: int | None = None
        while self.peek().kind != "end" and not self.mark(";"):
            word = self.word()
            if word == "allow" and allow is None:
                self.next()
                self.expect("filtering")
                allow = True
            elif word == "pace" and pace is None:
                self.next()
                tok = self.next()
                if tok.kind != "int" or int(tok.value) <= 0:
                    raise QueryError(f"PACE takes write capacity units a second, a positive whole number, "
                                     f"not {tok.describe()}")
                pace = int(tok.value)
            elif word == "all" and every is None:
                self.next()
                every = True
            elif word == "confirm" and confirm is None:
                self.next()
                confirm = True
            else:
                raise QueryError(f"unexpected {self.peek().describe()}: {USAGE}")
        self._end()
        request = RewriteRequest(keyspace, meta.name, blob, str(spec.value),
                                 None if where is None else where.text, bool(allow), pace, bool(every),
                                 bool(confirm))
        return RewriteAsked(request, where)

    def _end(self) -> None:
        if self.mark(";"):
            self.next()
        if self.peek().kind != "end":
            raise QueryError(f"unexpected {self.peek().describe()}: {USAGE}")

    def target(self) -> tuple[str, Any, BlobTarget]:
        """[ks.]table.column, then a map's ['key'] or a UDT's .field: the keyspace, the table's
        metadata and the blob."""
        names = [self.name()]
        while self.mark(".") and self.peek(1).kind in ("word", "qname"):
            self.next()
            names.append(self.name())
        access: str | None = None
        if self.mark("["):
            self.next()
            key = self.next()
            if key.kind != "string":
                raise QueryError(f"a map's key is a quoted string, not {key.describe()}")
            self.expect("]")
            access = str(key.value)
        if len(names) < 2:
            raise QueryError(f"name the column as [keyspace.]table.column, not {names[0]}: {USAGE}")
        for split in ((names[0], names[1], names[2:]), (None, names[0], names[1:])):
            keyspace, table, rest = split
            if keyspace is None and len(names) > 3:
                continue
            meta = self.tables(keyspace, table) if rest else None
            if meta is not None:
                return self._blob(keyspace or meta.keyspace_name, meta, rest, access)
        raise QueryError(f"unknown table in {'.'.join(names)}")

    def _blob(self, keyspace: str, meta: Any, rest: list[str],
              access: str | None) -> tuple[str, Any, BlobTarget]:
        from cqlsh_ext.query.grammar import map_of_blobs

        column = rest[0]
        if column not in meta.columns:
            raise QueryError(f"{keyspace}.{meta.name} has no column {column}")
        schema = self.schemas(meta)
        cql_type = schema.type_of(column)
        assert cql_type is not None
        if len(rest) > 2 or (len(rest) == 2 and access is not None):
            raise QueryError("name one blob: a column, a map of blobs' m['key'] or a UDT's u.field")
        if cql_type.is_blob and len(rest) == 1 and access is None:
            return keyspace, meta, BlobTarget(column)
        if access is not None and map_of_blobs(cql_type):
            return keyspace, meta, BlobTarget(column, access, "map")
        if len(rest) == 2 and cql_type.kind == "udt":
            field = cql_type.child(rest[1])
            if field is not None and field.is_blob:
                return keyspace, meta, BlobTarget(column, rest[1], "udt")
        if cql_type.is_text:
            raise QueryError(f"{column} is {schema.columns[column]}: a rewrite writes compressed bytes, "
                             "which a text column cannot hold")
        raise QueryError(f"{column} is {schema.columns[column]}: a rewrite reaches a blob column, a map of "
                         "blobs' value (m['key']) or a UDT's blob field (u.field)")


def parse(statement: Lexed, tables: Tables, schemas: Schemas,
          current: str | None) -> RewriteAsked | ResumeRequest:
    """What the statement asks (QueryError, one line). `tables(keyspace, table)` finds a table's
    metadata (keyspace None: the session's), `schemas(meta)` reads it as the payload-query parser
    does."""
    return _RewriteReader(statement, tables, schemas, current).read()


def blob_of(text: str, tables: Tables, schemas: Schemas,
            current: str | None) -> tuple[str, Any, BlobTarget]:
    """`[keyspace.]table.column` (a map's `m['key']`, a UDT's `u.field`) read as the statement's
    target is: the keyspace, the table's metadata and the blob (QueryError, one line)."""
    reader = _RewriteReader(Lexed(text), tables, schemas, current)
    found = reader.target()
    reader._end()
    return found


def where_of(request: RewriteRequest, schema: Schema) -> Where | None:
    """The request's WHERE read again by the payload-query parser (RESUME: from the journal's sealed
    request, conditions only, against the table's schema now). QueryError."""
    if request.where is None:
        return None
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.grammar import where_at

    lexed = Lexed(request.where)
    where, end = where_at(lexed, 0, schema, _TAIL)
    if lexed.tokens[end].kind != "end":
        raise QueryError(f"the journal's WHERE is not conditions alone: {request.where}")
    return where
