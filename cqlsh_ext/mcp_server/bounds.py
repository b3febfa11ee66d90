"""What `cqlsh-ext mcp` reads of a call before any parser sees it: its size, its tokens and how deep
they nest, each refused in one line when over its bound. The bounds on a statement before cqlsh's
grammar, and the measures of one, are the shell's too (cql/grammar_bounds.py, where the figures are); the
server's are tighter on size, since its calls queue behind one another on one shell:

- MAX_STATEMENT_BYTES: a statement (or a `where`) as UTF-8, checked before it is lexed. Lexing is
  linear, but the bytes are held in several copies while they are read and answered; 128 KiB holds
  an IN list of as many timeuuids as MAX_TOKENS allows (38 bytes each: 2,042 keys, 78 KB).
- MAX_TOKENS: the statement's tokens as cqlsh's lexer counts them (cql.grammar_bounds.PARSED_TOKENS,
  the bound of cqlsh's grammar, quadratic in them; check_counted_tokens).
- MAX_LEXED_TOKENS: the shell's lexer's tokens (it reads a UUID as 9), counted before the payload
  parser, linear: a looser bound on its work (32,768 tokens: about 0.3 s and 25 MB).
- MAX_DEPTH: brackets of any kind inside one another (cql.grammar_bounds.DEPTH).
- MAX_ARGUMENT_BYTES: any other text argument (names, a decode spec), checked on arrival.
- MAX_MESSAGE_BYTES: one protocol message (stdio: a line; HTTP: a request body, the SDK's own bound).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from cqlsh_ext.cql import grammar_bounds
from cqlsh_ext.cql.grammar_bounds import TooLarge, amount
from cqlsh_ext.cql.lexer import Token

MAX_STATEMENT_BYTES = 128 << 10
MAX_TOKENS = grammar_bounds.PARSED_TOKENS
MAX_LEXED_TOKENS = 8 * MAX_TOKENS
MAX_DEPTH = grammar_bounds.DEPTH
MAX_ARGUMENT_BYTES = 4 << 10
MAX_MESSAGE_BYTES = 4 << 20
#: The arguments that hold a statement or a part of one (the larger bound).
STATEMENT_ARGUMENTS = ("statement", "where")


def check_arguments(arguments: dict[str, Any]) -> None:
    """Every text inside a call's arguments within its bound, before anything reads it; raises TooLarge.
    Nested values (a decode argument's object) count each of their texts, and their number."""
    for name, value in arguments.items():
        limit = MAX_STATEMENT_BYTES if name in STATEMENT_ARGUMENTS else MAX_ARGUMENT_BYTES
        for text in _texts(value, name):
            size = grammar_bounds.size(text)
            if size > limit:
                what = "a statement" if name == "statement" else f"the {name} argument"
                raise TooLarge(f"refused: {what} of {amount(size)} is more than cqlsh-ext mcp reads "
                               f"({amount(limit)}): {_advice(name)}")


def check_text(text: str, what: str) -> None:
    """One statement's text within MAX_STATEMENT_BYTES; raises TooLarge."""
    size = grammar_bounds.size(text)
    if size > MAX_STATEMENT_BYTES:
        raise TooLarge(f"refused: {what} of {amount(size)} is more than cqlsh-ext mcp reads "
                       f"({amount(MAX_STATEMENT_BYTES)}): {_advice('statement')}")


def check_tokens(tokens: Sequence[Token]) -> None:
    """The shell's lexer's tokens of a statement (the end token aside) within MAX_LEXED_TOKENS and
    MAX_DEPTH; raises TooLarge. Counted before the payload parser reads it."""
    count = sum(1 for tok in tokens if tok.kind != "end")
    if count > MAX_LEXED_TOKENS:
        commas = sum(1 for tok in tokens if tok.kind == "punct" and tok.value == ",")
        _too_many(count, commas, MAX_LEXED_TOKENS, "its readers take time and memory that grow with them")
    _depth(grammar_bounds.lexed_brackets(tokens))


#: A UUID as text: cqlsh's lexer reads it as one token, the shell's as up to nine.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def check_counted_tokens(text: str, tokens: Sequence[Token]) -> None:
    """The shell's lexer's tokens of a statement (`text`'s; the end token aside) counted as cqlsh's
    lexer counts them (a UUID, a blob literal 0x... one token), within MAX_TOKENS, though cqlsh's lexer
    never reads it; raises TooLarge."""
    count = commas = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        count += 1
        commas += tok.kind == "punct" and tok.value == ","
        i += 1
        if tok.kind in ("int", "word", "decimal"):
            found = _UUID.match(text, tok.start)
            if found is not None:  # the tokens of its text, when they end where it ends
                j = i
                while j < len(tokens) and tokens[j].end <= found.end():
                    j += 1
                if tokens[j - 1].end == found.end():
                    i = j
            elif tok.kind == "int" and tok.value == "0" and i < len(tokens) and tokens[i].start == tok.end \
                    and tokens[i].kind == "word" and tokens[i].value[:1] in "xX":
                i += 1  # 0x...: an int and a word to the shell's lexer
    if count > MAX_TOKENS:
        _too_many(count, commas, MAX_TOKENS,
                  "cqlsh's parser takes time and memory that grow with the square of them")


def _too_many(count: int, commas: int, limit: int, why: str) -> None:
    raise TooLarge(f"refused: the statement has {count:,} tokens ({commas:,} commas), more than "
                   f"cqlsh-ext mcp reads ({limit:,}; {why}): {_advice('statement')}")


def _depth(brackets: Iterable[tuple[str, int]]) -> None:
    at = grammar_bounds.too_deep(brackets, MAX_DEPTH)
    if at is not None:
        raise TooLarge(f"refused: brackets nested more than {MAX_DEPTH} deep (at position {at}), deeper "
                       "than cqlsh-ext mcp reads")


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




def _advice(name: str) -> str:
    if name in STATEMENT_ARGUMENTS:
        return ("split a long IN list into several calls of a few hundred keys each, or select by a "
                "range or a payload condition instead of listing values")
    return "give a name, not a text"
