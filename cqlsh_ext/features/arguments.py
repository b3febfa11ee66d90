"""Reading a feature's name arguments (keyspace, keyspace.table, keyspace.table.column) as every
front end does: with the shell's lexer, each name spelt as the schema spells it, so that an argument
cannot carry a second statement (cql.spelling writes one back as CQL writes it); and the arguments
several features declare alike (a cursor, how values decode, a sample)."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.features.feature import Argument

__all__ = ["CONFIRM", "JOURNAL", "Invalid", "Named", "cursor_argument", "decode_argument", "names",
           "sample_argument"]


class Invalid(Exception):
    """An argument that is not what the feature takes; str() is the one line."""


class Named(str):
    """A name argument as a statement wrote it (`"Ks".t`), read from the statement's own tokens: its
    names as the schema spells them ride with it, so that names() takes them without lexing the
    text again (the shell lexes a statement once)."""

    names: tuple[str, ...]

    def __new__(cls, text: str, names: tuple[str, ...]) -> Named:
        named = super().__new__(cls, text)
        named.names = names
        return named


_EXAMPLES = {"keyspace": "a keyspace name", "table": "keyspace.table",
             "column": "keyspace.table.column", "column name": "one column's name"}


def names(text: Any, parts: tuple[int, ...], what: str) -> list[str]:
    """`ks.table` (or the like) as the schema spells each name: "quoted" as written, else lower
    case, read with the shell's lexer; `parts` says how many names may be given."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    if not isinstance(text, str):
        raise Invalid(f"{what} must be a string such as {_EXAMPLES[what]}")
    if isinstance(text, Named) and len(text.names) in parts:
        return list(text.names)
    try:
        tokens = Lexed(text).tokens[:-1]
    except QueryError as err:
        raise Invalid(f"{what}: {err}") from None
    found: list[str] = []
    for i, tok in enumerate(tokens):
        if i % 2 == 1:
            if tok.kind != "punct" or tok.value != ".":
                break
            continue
        if tok.kind not in ("word", "qname"):
            break
        found.append(tok.name)
    else:
        if tokens and len(tokens) % 2 == 1 and len(found) in parts:
            return found
    raise Invalid(f"{what} must be {_EXAMPLES[what]} (names, \"quoted\" where they need it), not {text!r}")


# Arguments several features declare alike.

#: How a call's values decode, column by column: at most this many columns.
_DECODE_SCHEMA: dict[str, Any] = {"additionalProperties": {"type": "string"}, "maxProperties": 16}


def cursor_argument() -> Argument:
    """A cut answer's cursor, as every feature whose answer a front end cuts takes it."""
    return Argument("cursor", "string", "a cut answer's cursor: the same call with it answers what follows, "
                    "each row once", keywords={"maxLength": 4096}, listed=False)


def decode_argument() -> Argument:
    """How a call's values decode, column by column, as every reading feature takes it."""
    return Argument("decode", "object", "column -> spec: {\"data\": \"zstd>msgpack\"}",
                    keywords=_DECODE_SCHEMA)


def sample_argument(doc: str, most: int | None = None, listed: bool = True) -> Argument:
    """SAMPLE n: rows read at random, at least one (and at most `most`)."""
    bounds = {"minimum": 1, **({"maximum": most} if most is not None else {})}
    return Argument("sample", "integer", doc, keywords=bounds, listed=listed, keyword="SAMPLE")


#: What every write feature takes to write: a preview unless it is given.
CONFIRM = Argument("confirm", "boolean", "true: write (journaled); else a preview that writes nothing")
#: A journal, as UNDO and RESUME name one.
JOURNAL = Argument("journal", "string", "a journal: its path, the id its name ends with, or LAST; a "
                   "confirmed result stands for its journal", required=True)
