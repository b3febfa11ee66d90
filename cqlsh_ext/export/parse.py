"""The export statement, parsed (docs/export.md):

    COPY (SELECT ...) TO 'file' [WITH option = value [AND ...]] [;]

from the statement's tokens (cqlsh_ext.cql.lexer.Lexed, lexed once: the SELECT inside is a part
of them, read by the payload-query parser without lexing again); errors are CopyError, one line,
before anything is read. Standard library only at import: the shell imports it at start-up
(through cqlsh_ext.export.command).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cqlsh_ext.common.file_formats import (
    FileFormat,
    by_suffix,
    file_format,
    foreign_options,
    listed,
    named,
    names,
    unknown_format,
    untold,
)

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token

LABEL = "COPY (SELECT ...)"
#: WITH options and what each takes.
OPTIONS = {
    "format": listed(f"'{name}'" for name in names()),
    "overwrite": "true or false",
    "raw": "true or false",
    "compression": "a Parquet codec: 'zstd' (default), 'snappy', 'gzip', 'lz4', 'brotli', 'none'",
    "row_group_size": "rows per Parquet row group (default 65536)",
    "sample_rows": "the leading rows the types of values are read from (default 5000)",
    "schema": "types given, 'name=type, ...' ('data.total=decimal128(20,2), data.n=int64')",
}
STOCK_COPY_TO = re.compile(r"\s*copy\s+(?P<table>[\w.\"]+)\s*(?:\([^)]*\))?\s*to\s+'(?P<file>(?:[^']|'')*)'",
                            re.IGNORECASE)


class CopyError(Exception):
    """A statement refused before anything is read: one line."""


@dataclass
class ExportStatement:
    #: The SELECT as typed, and its tokens (a part of the COPY's).
    select: str
    query: Lexed
    path: str
    fmt: str
    overwrite: bool = False
    #: WITH RAW: the stored bytes beside every decoded blob (None: the session's OUTPUT RAW).
    raw: bool | None = None
    #: Parquet's codec and rows per row group (None: cqlsh_ext.render.parquet's defaults).
    codec: str | None = None
    row_group_size: int | None = None
    #: WITH SAMPLE_ROWS and SCHEMA: the answer's types (payload.columns: the leading rows they are
    #: read from; the types given, by column name or payload path). Either one makes a JSON Lines
    #: or CSV file hold the Parquet file's typed columns.
    sample_rows: int | None = None
    schema: dict[str, str] | None = None
    given: set[str] = field(default_factory=set)

    @property
    def typed(self) -> bool:
        """The file holds the answer's typed columns (Parquet always; JSON Lines and CSV with
        SAMPLE_ROWS or SCHEMA)."""
        return named_format(self.fmt).typed or self.sample_rows is not None or self.schema is not None


def named_format(fmt: str) -> FileFormat:
    """The statement's format, as common.file_formats declares it."""
    return named(fmt)


def parse(statement: Lexed) -> ExportStatement:
    """COPY ( SELECT ... ) TO 'file' [WITH name = value [AND ...]] [;], from the statement's tokens."""
    text, tokens = statement.text, statement.tokens
    depth, close = 0, None
    for i, tok in enumerate(tokens[1:], start=1):
        if tok.kind == "punct" and tok.value == "(":
            depth += 1
        elif tok.kind == "punct" and tok.value == ")":
            depth -= 1
            if depth == 0:
                close = i
                break
    if close is None:
        raise CopyError("the SELECT in COPY ( ... ) has no closing parenthesis")
    select = text[tokens[1].end:tokens[close].start].strip()
    first = tokens[2]
    if first.kind != "word" or first.value.lower() != "select":
        raise CopyError("COPY ( ... ) takes a SELECT: COPY (SELECT ... FROM [keyspace.]table) TO 'file'")
    if tokens[3].kind == "word" and tokens[3].value.lower() == "json":
        raise CopyError("SELECT JSON is not supported here: select the columns (TO 'file.jsonl' writes "
                        "JSON Lines); the query form takes columns, *, payload paths and count, min, max, "
                        "sum, avg (HELP EXPORT)")
    i = close + 1
    if not (tokens[i].kind == "word" and tokens[i].value.lower() == "to"):
        raise CopyError(f"expected TO 'file' after the SELECT, found {tokens[i].describe()}")
    if tokens[i + 1].kind != "string":
        raise CopyError(f"expected a quoted file name after TO, found {tokens[i + 1].describe()}")
    path = str(tokens[i + 1].literal)
    if not path:
        raise CopyError("the file name is empty")
    options = _options(tokens, i + 2)
    fmt = options.pop("format", None)
    if fmt is None:
        found = by_suffix(path)
        if found is None:
            raise CopyError(untold(path))
        fmt = found.name
    export = ExportStatement(select, statement.part(2, close), path, str(fmt), given=set(options))
    if "overwrite" in options:
        export.overwrite = _boolean("overwrite", options.pop("overwrite"))
    if "raw" in options:
        export.raw = _boolean("raw", options.pop("raw"))
    if "compression" in options:
        codec = str(options.pop("compression")).lower()
        from cqlsh_ext.render.parquet import CODECS

        if codec not in CODECS:
            raise CopyError(f"COMPRESSION takes {OPTIONS['compression'].split(': ', 1)[1]}, not {codec!r}")
        export.codec = codec
    if "row_group_size" in options:
        size = options.pop("row_group_size")
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise CopyError(f"ROW_GROUP_SIZE takes a positive number of rows, not {size!r}")
        export.row_group_size = size
    refused = foreign_options(export.given, named_format(export.fmt), "export")
    if refused is not None:
        raise CopyError(refused)
    if "sample_rows" in options:
        rows = options.pop("sample_rows")
        if not isinstance(rows, int) or isinstance(rows, bool) or rows <= 0:
            raise CopyError(f"SAMPLE_ROWS takes a positive number of rows, not {rows!r}")
        export.sample_rows = rows
    if "schema" in options:
        export.schema = schema_text(options.pop("schema"))
    return export


def schema_text(text: object) -> dict[str, str]:
    """SCHEMA's text, 'name=type, name=type' (a name a column's or a payload path, data.total; a
    type as db.query's schema= names it: int64, decimal128(20,2), list<string>), as {name: type};
    the commas inside a type's brackets are the type's. CopyError, one line, for another text."""
    if not isinstance(text, str) or not text.strip():
        raise CopyError(f"SCHEMA takes {OPTIONS['schema']}, not {text!r}")
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out: dict[str, str] = {}
    for part in parts:
        name, equals, kind = part.partition("=")
        name, kind = name.strip(), kind.strip()
        if not equals or not name or not kind:
            raise CopyError(f"SCHEMA: expected name=type, found {part.strip()!r} (SCHEMA = "
                            "'data.total=decimal128(20,2), data.n=int64')")
        if name in out:
            raise CopyError(f"SCHEMA names {name} twice")
        out[name] = kind
    return out


def _options(tokens: list[Token], i: int) -> dict[str, object]:
    options: dict[str, object] = {}
    if tokens[i].kind == "word" and tokens[i].value.lower() == "with":
        i += 1
        while True:
            name_tok = tokens[i]
            name = name_tok.value.lower()
            if name_tok.kind != "word" or name not in OPTIONS:
                raise CopyError(f"unknown option {name_tok.describe()}: WITH takes "
                                + ", ".join(n.upper() for n in OPTIONS))
            if not (tokens[i + 1].kind == "punct" and tokens[i + 1].value == "="):
                raise CopyError(f"expected = after {name.upper()}")
            value_tok = tokens[i + 2]
            if value_tok.kind == "string":
                value: object = str(value_tok.literal)
            elif value_tok.kind == "int":
                value = int(value_tok.value)
            elif value_tok.kind == "word" and value_tok.value.lower() in ("true", "false"):
                value = value_tok.value.lower() == "true"
            else:
                raise CopyError(f"{name.upper()} takes {OPTIONS[name]}, not {value_tok.describe()}")
            if name == "format":
                found = file_format(str(value))
                if found is None:
                    raise CopyError(unknown_format(value))
                value = found.name
            options[name] = value
            i += 3
            if tokens[i].kind == "word" and tokens[i].value.lower() == "and":
                i += 1
                continue
            break
    if tokens[i].kind == "punct" and tokens[i].value == ";":
        i += 1
    if tokens[i].kind != "end":
        raise CopyError(f"unexpected {tokens[i].describe()} after the file name")
    return options


def _boolean(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise CopyError(f"{name.upper()} takes true or false, not {value!r}")
