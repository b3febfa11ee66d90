"""The load's statements, parsed (docs/load.md):

    COPY [keyspace.]table [(column, ...)] FROM 'file'
        [WITH option [AND option ...]] [PACE n] [CONFIRM] [;]
    COPY RESUME 'journal' | LAST [CONFIRM] [;]

options: ENCODE column = 'chain', TTL = seconds, FORMAT = 'parquet' | 'jsonl' | 'csv' (the file
formats: common.file_formats), HEADER = true | false (CSV's). From the statement's tokens
(cql.lexer.Lexed, lexed once); a statement refused is a QueryError, one line, before anything is
read.

Which COPY ... FROM is a load (`is_load`): one of a file cqlsh's COPY does not read, JSON Lines or
Parquet (by the name's end, or FORMAT), one naming ENCODE, one ending in PACE n or CONFIRM, and
COPY RESUME. Any other COPY ... FROM (a CSV file of stored bytes, with cqlsh's options) is cqlsh's
own COPY FROM, unchanged. Standard library only at import: the shell imports it at start-up
(through load.command).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cqlsh_ext.common.file_formats import (
    by_suffix,
    file_format,
    foreign_options,
    listed,
    names,
    unknown_format,
    untold,
)
from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Cursor, Lexed, Token
    from cqlsh_ext.writing.requests import LoadRequest, ResumeRequest

#: WITH's options and what each takes.
OPTIONS = {"encode": "a blob column and its chain: ENCODE data = 'snappy>json'",
           "ttl": "seconds every cell written lives (0: none; default: the table's default_time_to_live)",
           "format": listed(f"'{name}'" for name in names()),
           "header": "true or false (a CSV file's first row names its columns; default true)"}
USAGE = ("COPY [keyspace.]table [(column, ...)] FROM 'file' [WITH ENCODE column = 'chain' [AND ...]] "
         "[PACE n] [CONFIRM], or COPY RESUME 'journal' [CONFIRM] (HELP LOAD)")


def is_load(statement: Lexed) -> bool:
    """Whether a COPY is a load (see the module doc); False for cqlsh's own COPY ... FROM and
    TO, and for a statement that does not lex."""
    try:
        tokens = statement.tokens
    except QueryError:
        return False
    words = [t.value.lower() if t.kind == "word" else "" for t in tokens]
    if len(tokens) > 2 and words[1] == "resume":
        return True
    try:
        at = words.index("from")
    except ValueError:
        return False
    if at < 2 or tokens[at + 1].kind != "string" or any(t.kind == "punct" and t.value == "(" and i == 1
                                                          for i, t in enumerate(tokens)):
        return False
    name = str(tokens[at + 1].literal).lower()
    rest = words[at + 2:]
    if "encode" in rest or "pace" in rest or "confirm" in rest:
        return True
    for i, word in enumerate(rest):
        if word == "format":
            value = tokens[at + 2 + i + 2]
            named = file_format(str(value.literal)) if value.kind == "string" else None
            if named is not None and not named.cqlsh_copy:
                return True
    fmt = by_suffix(name)
    return fmt is not None and not fmt.cqlsh_copy


def parse(statement: Lexed, keyspace: str | None) -> LoadRequest | ResumeRequest:
    """The load's request (or RESUME's); QueryError for a statement it is not, in one line. Names
    are as CQL reads them (a word lower-cased, a "quoted name" as written); the file's path is made
    absolute (a journal's request names it whatever the directory a RESUME is run in)."""
    from cqlsh_ext.cql.lexer import Cursor
    from cqlsh_ext.writing.requests import LoadRequest

    cursor = Cursor(statement.tokens)
    cursor.expect("copy")
    if cursor.take("resume"):
        return _resume(cursor)
    ks, table = _table(cursor, keyspace)
    columns = _columns(cursor)
    cursor.expect("from")
    tok = cursor.next()
    if tok.kind != "string" or not str(tok.literal):
        raise QueryError(f"expected the file's name in quotes after FROM, found {tok.describe()}")
    path = os.path.abspath(os.path.expanduser(str(tok.literal)))
    options = _with_options(cursor) if cursor.take("with") else _WithOptions()
    pace: int | None = None
    if cursor.take("pace"):
        tok = cursor.next()
        if tok.kind != "int" or int(tok.value) <= 0:
            raise QueryError(f"PACE takes write capacity units a second, a positive whole number, not "
                             f"{tok.describe()}")
        pace = int(tok.value)
    confirm = cursor.take("confirm")
    _end(cursor)
    fmt = file_format(options.fmt) if options.fmt is not None else by_suffix(path)
    if fmt is None:
        raise QueryError(untold(path))
    refused = foreign_options(options.given, fmt, "load")
    if refused is not None:
        raise QueryError(refused)
    return LoadRequest(ks, table, tuple(columns), path, fmt.name, tuple(options.encode), options.ttl,
                       options.header, pace, confirm)


def _resume(cursor: Cursor) -> ResumeRequest:
    """COPY RESUME's request, read after its words: the journal ('path', its id, or LAST), CONFIRM."""
    from cqlsh_ext.writing.requests import ResumeRequest

    tok = cursor.next()
    if tok.kind == "word" and tok.value.upper() == "LAST":
        path = "LAST"
    elif tok.kind == "string":
        path = str(tok.literal)
    else:
        raise QueryError(f"COPY RESUME takes a journal ('path', its id, or LAST), not {tok.describe()}")
    confirm = cursor.take("confirm")
    _end(cursor)
    return ResumeRequest(path, confirm)


def _table(cursor: Cursor, keyspace: str | None) -> tuple[str, str]:
    """(keyspace, table) the load writes to: a table named alone is in `keyspace`, the one in use."""
    first = cursor.name()
    if cursor.mark("."):
        cursor.next()
        return first, cursor.name()
    if keyspace is None:
        raise QueryError(f"no keyspace for {first}: name it (COPY ks.{first} ...) or USE one")
    return keyspace, first


def _columns(cursor: Cursor) -> list[str]:
    """The columns listed after the table, `(column, ...)`; none when there is no list."""
    columns: list[str] = []
    if cursor.mark("("):
        cursor.next()
        while True:
            columns.append(cursor.name())
            if cursor.mark(","):
                cursor.next()
                continue
            cursor.expect(")")
            break
    return columns


@dataclass
class _WithOptions:
    """WITH's options as given (OPTIONS): ENCODE's columns and chains, TTL, FORMAT, HEADER."""

    encode: list[tuple[str, str]] = field(default_factory=list)
    ttl: int | None = None
    fmt: str | None = None
    header: bool = True
    #: The options given (a format's own among them: common.file_formats' load_options).
    given: set[str] = field(default_factory=set)


def _with_options(cursor: Cursor) -> _WithOptions:
    """WITH's options, read after WITH: `option = value`, AND between them."""
    options = _WithOptions()
    while True:
        option = cursor.word()
        if option not in OPTIONS:
            raise QueryError(f"unknown option {cursor.peek().describe()}: a load's WITH takes "
                             + ", ".join(o.upper() for o in OPTIONS) + " (cqlsh's own options are its "
                             "COPY FROM's, for CSV files of stored bytes)")
        cursor.next()
        options.given.add(option)
        if option == "encode":
            column = cursor.name()
            cursor.expect("=")
            chain = _value(cursor, option)
            if not isinstance(chain, str) or not chain.strip():
                raise QueryError(f"ENCODE {column} takes a chain in quotes ('snappy>json'), not "
                                 f"{chain!r}")
            if any(c == column for c, _ in options.encode):
                raise QueryError(f"ENCODE names {column} twice")
            options.encode.append((column, chain.strip()))
        else:
            cursor.expect("=")
            value = _value(cursor, option)
            if option == "ttl":
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise QueryError(f"TTL takes {OPTIONS['ttl']}, not {value!r}")
                options.ttl = value
            elif option == "format":
                named = file_format(str(value))
                if named is None:
                    raise QueryError(unknown_format(value))
                options.fmt = named.name
            else:
                if not isinstance(value, bool):
                    raise QueryError(f"HEADER takes true or false, not {value!r}")
                options.header = value
        if not cursor.take("and"):
            return options


def _value(cursor: Cursor, option: str) -> object:
    tok: Token = cursor.next()
    if tok.kind == "string":
        return str(tok.literal)
    if tok.kind == "int":
        return int(tok.value)
    if tok.kind == "word" and tok.value.lower() in ("true", "false"):
        return tok.value.lower() == "true"
    raise QueryError(f"{option.upper()} takes {OPTIONS[option]}, not {tok.describe()}")


def _end(cursor: Cursor) -> None:
    if cursor.mark(";"):
        cursor.next()
    if cursor.peek().kind != "end":
        raise QueryError(f"unexpected {cursor.peek().describe()} ({USAGE})")
