"""How much of a statement is read before a reader whose cost is not linear in it: the bounds the
shell (shell.py, before cqlsh's lexer and grammar) and `cqlsh-ext mcp` (mcp_server/bounds.py, before
any parser) share, and the measures they take of a statement.

cqlsh's grammar (pylexotron: what cqlsh's handle_statement runs on every statement it hands to a
`do_<command>` method, SELECT among them, and what it runs again on a SELECT's text to find the
table whose metadata formats the result) takes time and memory that grow with the square of the
statement's tokens, and a parse in progress cannot be stopped: a 20,000-key IN list (40,000 tokens)
took the shell 7 GiB and was killed, and cqlsh-ext mcp 187 s and 7.8 GB. bench/mcp_parse.py
measures each reader by shape and size (docs/mcp.md, "Bounded before parsing"): the lexers (cqlsh's
and the shell's, cql/lexer.py), the gate and the payload parser are linear; cqlsh's grammar costs
about 5.4 bytes times the square of its tokens in its worst shapes (chains of AND, IN lists, long
column lists). At PARSED_TOKENS it takes about 0.5 s of CPU and 90 MB.

- PARSED_TOKENS: cqlsh's lexer's tokens of a statement (a string literal, a UUID, a number is
  one; comments and space none) that cqlsh's grammar is given at most.
- DEPTH: brackets of any kind inside one another. cqlsh's grammar recurses once or more per level
  and runs out of stack at a few hundred, and Cassandra's parser answers StackOverflowError.

The text is measured before any lexer: `size` (UTF-8 bytes), each reader with a bound of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

PARSED_TOKENS = 4096
DEPTH = 64
_OPEN, _CLOSE = "([{", ")]}"


class TooLarge(Exception):
    """An input over its bound; str() is the one line the caller is told."""


def size(text: str) -> int:
    """The UTF-8 size of `text` (lone surrogates, which a file or a message may carry, counted too)."""
    return len(text.encode("utf-8", "surrogatepass"))


def amount(count: int) -> str:
    """A size as a bound is said: '128 KiB', '1.3 MiB', '4,000 bytes'."""
    if count >= 1 << 20:
        return f"{count / (1 << 20):.1f} MiB" if count % (1 << 20) else f"{count >> 20} MiB"
    if count >= 1 << 10:
        return f"{count / (1 << 10):.0f} KiB" if count % 1024 == 0 else f"{count:,} bytes"
    return f"{count:,} bytes"


def cqlsh_count(tokens: Sequence[Any]) -> tuple[int, int]:
    """cqlsh's lexer's tokens ((kind, text, (start, end))) of a statement, its end token aside, and
    how many of them are commas (what a long IN or column list is made of)."""
    count = sum(1 for tok in tokens if tok[0] != "endtoken")
    return count, sum(1 for tok in tokens if tok[1] == "," and tok[0] == "op")


def cqlsh_brackets(tokens: Sequence[Any]) -> Iterable[tuple[str, int]]:
    """The brackets among cqlsh's lexer's tokens, each with where it starts (cqlsh's lexer calls
    `(` an op and `[` a bracket: both nest)."""
    return ((str(tok[1]), tok[2][0]) for tok in tokens
            if len(tok) > 2 and tok[1] in ("(", ")", "[", "]", "{", "}") and tok[0] in ("op", "brackets"))


def lexed_brackets(tokens: Sequence[Any]) -> Iterable[tuple[str, int]]:
    """The brackets among the shell's lexer's tokens (cql.lexer.Token), each with where it starts."""
    return ((tok.value, tok.start) for tok in tokens if tok.kind == "punct" and tok.value in "()[]{}")


def too_deep(brackets: Iterable[tuple[str, int]], limit: int = DEPTH) -> int | None:
    """Where brackets first nest more than `limit` deep (the position of the one too many), or None."""
    depth = 0
    for value, start in brackets:
        if value in _OPEN:
            depth += 1
            if depth > limit:
                return start
        elif value in _CLOSE:
            depth = max(0, depth - 1)
    return None
