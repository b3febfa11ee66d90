"""The name meant, added to an error that names one that is not there: a table or a keyspace the
server (or the MCP server's guard: "no table ks.t") says does not exist (from the schema the shell
already holds: the driver's metadata, no query), a word a syntax error stops at that is a typo
of one of the grammar's (CONFRIM). One `(did you mean X?)` at the name, as common.text.nearest
finds it; the error is otherwise as said."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from cqlsh_ext.common.text import nearest

__all__ = ["with_meant"]

#: The server's words for a table or a keyspace it has not (Cassandra 4 and 5, Amazon Keyspaces).
_NO_TABLE = re.compile(r"(?:unconfigured table |table )(?:(?P<ks>\w+)\.)?(?P<table>\w+)\b")
_NO_KEYSPACE = re.compile(r"[Kk]eyspace '?(?P<ks>\w+)'? does not exist"
                          r"|'(?P<named>\w+)' not found in keyspaces\b")
_NOT_IN_KEYSPACE = re.compile(r"'(?P<name>\w+)' not found in keyspace '(?P<ks>\w+)'")
#: cqlsh-ext's own words for them (the MCP server's: mcp_server.guard).
_ABSENT = re.compile(r"no (?:keyspace (?!for\b)(?P<ks>\w+)|table (?P<in>\w+)\.(?P<table>\w+))\b")
#: The server's words for a column a table has not (Cassandra 4 and 5).
_NO_COLUMN = re.compile(r"Undefined column name (?P<column>\w+) in table (?P<ks>\w+)\.(?P<table>\w+)")
#: cqlsh's and the server's syntax errors, at the word they stop at.
_SYNTAX_AT = re.compile(r"(?:no viable alternative at input|mismatched input|extraneous input) "
                        r"'(?P<word>\w+)'")
_EXPECTING = re.compile(r"expecting K_([A-Z]+)\b")


def with_meant(text: str, tables: Callable[[str], Iterable[str]], keyspaces: Iterable[str],
               current: str | None, words: Callable[[], Iterable[str]], statement: str | None = None,
               columns: Callable[[str, str], Iterable[str]] | None = None) -> str:
    """`text` with the name it names meant added, when one is near: `tables(ks)` the tables of a
    keyspace, `keyspaces` every keyspace, `current` the keyspace in use, `words()` the grammar's
    words; `statement`, the one the error is of: where the server names a table without its
    keyspace (Cassandra 5: "table t does not exist"), the keyspace the statement names it in;
    `columns(ks, table)` a table's columns."""
    if "did you mean" in text:
        return text
    absent = _ABSENT.match(text)
    if absent:
        near = nearest(absent["ks"], keyspaces) if absent["ks"] else \
            nearest(absent["table"], tables(absent["in"]))
        return _added(text, absent.end(), near)
    missing_ks = _NO_KEYSPACE.search(text)
    if missing_ks:
        return _added(text, missing_ks.end(), nearest(missing_ks["ks"] or missing_ks["named"], keyspaces))
    missing_in = _NOT_IN_KEYSPACE.search(text)  # the client-side DESCRIBE's words (keyspaces.describe)
    if missing_in:
        return _added(text, missing_in.end(), nearest(missing_in["name"], tables(missing_in["ks"])))
    missing_column = _NO_COLUMN.search(text)
    if missing_column and columns is not None:
        near = nearest(missing_column["column"], columns(missing_column["ks"], missing_column["table"]))
        return _added(text, missing_column.end(), near)
    if "does not exist" in text or "unconfigured table" in text:
        missing = _NO_TABLE.search(text)
        keyspace = (missing["ks"] or _named_in(statement, missing["table"]) or current) if missing else None
        if missing and keyspace:
            return _added(text, missing.end(), nearest(missing["table"], tables(keyspace)))
    syntax = _SYNTAX_AT.search(text)
    if syntax and syntax["word"].upper() not in (known := set(words())):
        expected = _EXPECTING.search(text)  # the server's parser names the one word it expected
        near = nearest(syntax["word"].upper(), [expected[1]] if expected else known)
        return _added(text, syntax.end(), near)
    return text


def _named_in(statement: str | None, table: str) -> str | None:
    """The keyspace `statement` names `table` in (`ks.table`), or None."""
    found = re.search(r'(\w+)"?\s*\.\s*"?' + re.escape(table) + r"\b", statement or "")
    return found[1] if found else None


def _added(text: str, at: int, meant: str | None) -> str:
    if meant is None:
        return text
    # After the server's quoted message when the name is inside it, so its quotes stay whole.
    close = text.find('"', at)
    at = close + 1 if close >= 0 and text.count('"', 0, at) % 2 == 1 else at
    return f"{text[:at]} (did you mean {meant}?){text[at:]}"


def schema_of(metadata: object) -> tuple[Mapping[str, object], Callable[[str], list[str]]]:
    """The keyspaces the driver's `metadata` holds, and the tables (and views) of one of them."""
    keyspaces: Mapping[str, object] = getattr(metadata, "keyspaces", None) or {}

    def tables(keyspace: str) -> list[str]:
        meta = keyspaces.get(keyspace)
        return [*getattr(meta, "tables", {}), *getattr(meta, "views", {})]

    return keyspaces, tables


def columns_of(metadata: object) -> Callable[[str, str], list[str]]:
    """The columns of a table (or view) the driver's `metadata` holds."""
    keyspaces: Mapping[str, object] = getattr(metadata, "keyspaces", None) or {}

    def columns(keyspace: str, table: str) -> list[str]:
        meta = keyspaces.get(keyspace)
        found = getattr(meta, "tables", {}).get(table) or getattr(meta, "views", {}).get(table)
        return list(getattr(found, "columns", {}))

    return columns
