"""Telling a payload query from any other statement before the full parse, from the statement's
tokens (cql.lexer.Lexed, lexed once): the table a SELECT reads, whether it may reach into a payload
at all (no schema needed: a SELECT that cannot costs no schema and no parse), and, when it fails
to parse, whether it does (then the error is ours to say)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed, Token, lexed

if TYPE_CHECKING:
    from cqlsh_ext.query.grammar import Schema


def table_of(statement: Lexed | str) -> tuple[str | None, str] | None:
    """([keyspace], table) a SELECT reads, found without a schema (the caller fetches the
    schema for parse); None when the statement is not a SELECT ... FROM name."""
    try:
        tokens = lexed(statement).tokens
    except QueryError:
        return None
    if not tokens or tokens[0].kind != "word" or tokens[0].value.lower() != "select":
        return None
    for i, tok in enumerate(tokens):
        if tok.kind == "word" and tok.value.lower() == "from":
            names = [t for t in tokens[i + 1:i + 4]]
            if not names or names[0].kind not in ("word", "qname"):
                return None

            def name(t: Token) -> str:
                return t.value.lower() if t.kind == "word" else t.value

            if len(names) == 3 and names[1].value == "." and names[2].kind in ("word", "qname"):
                return name(names[0]), name(names[2])
            return None, name(names[0])
    return None


def may_reach_payload(statement: Lexed) -> bool:
    """Whether a SELECT may reach into a payload, told without its table's schema: a name (not
    the table after FROM) followed by `.`, `[`, LIKE or IS [NOT] UNDECODABLE. Every path and
    payload condition the parser reads (query.grammar) and every one `names_payload` finds starts
    so; a SELECT with none is cqlsh's whatever its columns are (tests/query/test_recognize.py)."""
    tokens = statement.tokens
    for i in range(len(tokens) - 1):
        tok, follows = tokens[i], tokens[i + 1]
        if tok.kind not in ("word", "qname") or (i and tokens[i - 1].kind == "word"
                                                 and tokens[i - 1].value.lower() == "from"):
            continue
        if follows.kind == "punct" and follows.value in (".", "["):
            return True
        if follows.value.lower() == "like":  # of any kind, as names_payload reads it
            return True
        if _undecodable(tokens, i + 1):
            return True
    return False


def names_payload(statement: Lexed | str, schema: Schema) -> bool:
    """Whether the statement reaches into a payload (a blob column followed by `.`, `[`, LIKE or IS
    [NOT] UNDECODABLE, a map of blobs' `['k']` or a UDT's blob field followed by a step): a
    statement that fails to parse is ours to refuse only then; any other goes to cqlsh as written."""
    from cqlsh_ext.cql.types import UDT
    from cqlsh_ext.query.grammar import map_of_blobs

    try:
        tokens = lexed(statement).tokens
    except QueryError:
        return False

    def punct(i: int, value: str) -> bool:
        return i < len(tokens) and tokens[i].kind == "punct" and tokens[i].value == value

    for i, tok in enumerate(tokens):
        if tok.kind not in ("word", "qname") or (i and tokens[i - 1].value.lower() == "from"):
            continue
        ctype = schema.type_of(tok.value.lower() if tok.kind == "word" else tok.value)
        if ctype is None:
            continue
        if ctype.is_blob and (punct(i + 1, ".") or punct(i + 1, "[") or _undecodable(tokens, i + 1) or (
                i + 1 < len(tokens) and tokens[i + 1].value.lower() == "like")):
            return True
        if ctype.is_text and (punct(i + 1, ".") or punct(i + 1, "[")):  # a path into a text column's JSON
            return True
        if map_of_blobs(ctype) and punct(i + 1, "[") and punct(i + 3, "]") and (
                punct(i + 4, ".") or punct(i + 4, "[") or _undecodable(tokens, i + 4)):
            return True
        if ctype.kind == UDT and punct(i + 1, ".") and i + 2 < len(tokens) and \
                (field_type := ctype.child(tokens[i + 2].value)) is not None and field_type.is_blob and \
                (punct(i + 3, ".") or punct(i + 3, "[") or _undecodable(tokens, i + 3)):
            return True
    return False


def _undecodable(tokens: list[Token], i: int) -> bool:
    """IS [NOT] UNDECODABLE from token i."""
    words = [t.value.lower() for t in tokens[i:i + 3] if t.kind == "word"]
    return words[:2] == ["is", "undecodable"] or words[:3] == ["is", "not", "undecodable"]
