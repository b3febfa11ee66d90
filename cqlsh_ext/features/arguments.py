"""Reading a feature's name arguments (keyspace, keyspace.table, keyspace.table.column) as every
front end does: with the shell's lexer, each name spelt as the schema spells it, so that an argument
cannot carry a second statement (cql.spelling writes one back as CQL writes it)."""

from __future__ import annotations

from typing import Any

__all__ = ["Invalid", "Named", "names"]


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
        found.append(tok.value.lower() if tok.kind == "word" else tok.value)
    else:
        if tokens and len(tokens) % 2 == 1 and len(found) in parts:
            return found
    raise Invalid(f"{what} must be {_EXAMPLES[what]} (names, \"quoted\" where they need it), not {text!r}")
