"""What `cqlsh-ext mcp` reads of a call before any parser sees it: its size, its tokens and how deep
they nest, each refused in one line when over its bound.

cqlsh's grammar (pylexotron, which cqlsh's handle_statement runs on every SELECT it passes on) takes
time and memory quadratic in the statement's tokens, and a parse in progress cannot be stopped from
another thread: a 20,000-key IN list (40,000 tokens) took 187 s and 7.8 GB. So the bounds come
first. bench/mcp_parse.py measures every reader the server runs, by shape and size, in a child
process each (docs/mcp.md, "Bounded before parsing", has the figures): the shell's lexer, the gate
and the payload parser are linear (under 0.1 s CPU and 12 MB for 16,000 tokens); cqlsh's grammar
costs about 5.4 bytes times the square of the tokens (a chain of 16,000 tokens: 6.1 s CPU, 1.37 GB)
in its worst shapes (AND chains, IN lists, long column lists). At MAX_TOKENS it takes about 0.5 s
CPU and 90 MB: the server stays within a few hundred MB and any call's time limit.

- MAX_STATEMENT_BYTES: a statement (or a `where`) as UTF-8, checked before it is lexed. Lexing is
  linear, but the bytes are held in several copies while they are read and answered; 128 KiB holds
  an IN list of as many timeuuids as MAX_TOKENS allows (38 bytes each: 2,042 keys, 78 KB).
- MAX_TOKENS: cqlsh's lexer's tokens of the statement (a string literal, a UUID, a number is one;
  comments and space none), counted before cqlsh's grammar reads them (gate.check). cqlsh's lexer is
  linear (measured with the gate).
- MAX_LEXED_TOKENS: the shell's lexer's tokens (it reads a UUID as 9), counted before cqlsh's lexer
  and before the payload parser, both linear: a looser bound on their work (32,768 tokens: about
  0.3 s and 25 MB).
- MAX_DEPTH: brackets of any kind inside one another; cqlsh's grammar recurses once or more per
  level and runs out of stack at a few hundred.
- MAX_ARGUMENT_BYTES: any other text argument (names, a decode spec), checked on arrival.
- MAX_MESSAGE_BYTES: one protocol message (stdio: a line; HTTP: a request body, the SDK's own bound).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cqlsh_ext.cql.lexer import Token

MAX_STATEMENT_BYTES = 128 << 10
MAX_TOKENS = 4096
MAX_LEXED_TOKENS = 8 * MAX_TOKENS
MAX_DEPTH = 64
MAX_ARGUMENT_BYTES = 4 << 10
MAX_MESSAGE_BYTES = 4 << 20
#: The arguments that hold a statement or a part of one (the larger bound).
STATEMENT_ARGUMENTS = ("statement", "where")
_OPEN, _CLOSE = "([{", ")]}"


class TooLarge(Exception):
    """An input over its bound; str() is the one line the caller is told."""


def check_arguments(arguments: dict[str, Any]) -> None:
    """Every text inside a call's arguments within its bound, before anything reads it; raises TooLarge.
    Nested values (a decode argument's object) count each of their texts, and their number."""
    for name, value in arguments.items():
        limit = MAX_STATEMENT_BYTES if name in STATEMENT_ARGUMENTS else MAX_ARGUMENT_BYTES
        for text in _texts(value, name):
            size = _size(text, limit)
            if size > limit:
                what = "a statement" if name == "statement" else f"the {name} argument"
                raise TooLarge(f"refused: {what} of {_amount(size)} is more than cqlsh-ext mcp reads "
                               f"({_amount(limit)}): {_advice(name)}")


def check_text(text: str, what: str) -> None:
    """One statement's text within MAX_STATEMENT_BYTES; raises TooLarge."""
    size = _size(text, MAX_STATEMENT_BYTES)
    if size > MAX_STATEMENT_BYTES:
        raise TooLarge(f"refused: {what} of {_amount(size)} is more than cqlsh-ext mcp reads "
                       f"({_amount(MAX_STATEMENT_BYTES)}): {_advice('statement')}")


def check_tokens(tokens: Sequence[Token]) -> None:
    """The shell's lexer's tokens of a statement (the end token aside) within MAX_LEXED_TOKENS and
    MAX_DEPTH; raises TooLarge. Counted before cqlsh's lexer and the payload parser read it."""
    count = sum(1 for tok in tokens if tok.kind != "end")
    if count > MAX_LEXED_TOKENS:
        commas = sum(1 for tok in tokens if tok.kind == "punct" and tok.value == ",")
        _too_many(count, commas, MAX_LEXED_TOKENS, "its readers take time and memory that grow with them")
    _depth((tok.value, tok.start) for tok in tokens if tok.kind == "punct")


def check_cqlsh_tokens(tokens: Sequence[Any]) -> None:
    """cqlsh's lexer's tokens of a statement ((kind, text, (start, end)), the end token aside) within
    MAX_TOKENS and MAX_DEPTH; raises TooLarge. Counted before cqlsh's grammar reads them."""
    count = sum(1 for tok in tokens if tok[0] != "endtoken")
    if count > MAX_TOKENS:
        _too_many(count, sum(1 for tok in tokens if tok[0] == "op" and tok[1] == ","), MAX_TOKENS,
                  "cqlsh's parser takes time and memory that grow with the square of them")
    _depth((str(tok[1]), tok[2][0]) for tok in tokens if tok[0] == "op")


def _too_many(count: int, commas: int, limit: int, why: str) -> None:
    raise TooLarge(f"refused: the statement has {count:,} tokens ({commas:,} commas), more than "
                   f"cqlsh-ext mcp reads ({limit:,}; {why}): {_advice('statement')}")


def _depth(puncts: Any) -> None:
    depth = 0
    for value, start in puncts:
        if value in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                raise TooLarge(f"refused: brackets nested more than {MAX_DEPTH} deep (at position "
                               f"{start}), deeper than cqlsh-ext mcp reads")
        elif value in _CLOSE:
            depth = max(0, depth - 1)


def _texts(value: Any, name: str, depth: int = 0) -> list[str]:
    """The texts inside an argument's value (strings, and the keys and values of objects and arrays)."""
    if isinstance(value, str):
        return [value]
    if depth > 4:
        raise TooLarge(f"refused: the {name} argument is nested deeper than any tool takes")
    if isinstance(value, dict):
        if len(value) > 64:
            raise TooLarge(f"refused: the {name} argument has {len(value):,} entries (at most 64)")
        return [text for key, item in value.items() for text in (key, *_texts(item, name, depth + 1))]
    if isinstance(value, list):
        if len(value) > 64:
            raise TooLarge(f"refused: the {name} argument has {len(value):,} items (at most 64)")
        return [text for item in value for text in _texts(item, name, depth + 1)]
    return []


def _size(text: str, limit: int) -> int:
    """The UTF-8 size of `text` (a message holds 4 MiB at most: encoding it is quick)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _amount(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.0f} KiB" if size % 1024 == 0 else f"{size:,} bytes"
    return f"{size:,} bytes"


def _advice(name: str) -> str:
    if name in STATEMENT_ARGUMENTS:
        return ("split a long IN list into several calls of a few hundred keys each, or select by a "
                "range or a payload condition instead of listing values")
    return "give a name, not a text"
