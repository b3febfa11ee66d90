"""The read-only gate: which statements `cqlsh-ext mcp` runs at all. An allow-list of reads,
everything else refused in one line:

    SELECT ...                        (payload paths, conditions, GROUP BY and aggregates included)
    DESCRIBE ... / DESC ...           (DESCRIBE PAYLOAD included)
    COMPRESSION STATS | SETTINGS | ADVISE ...
    INSPECT [JSON] SELECT ...

Decided on the tokens of both lexers that read the statement, never on a pattern over its text:
the shell's (cql.lexer.Lexed: strings, $$strings$$, quoted names and comments are tokens or space,
so no quoting, comment, case or spacing hides a word) and cqlsh's own, the one that splits the text
into the statements the shell runs (a DESCRIBE or COMPRESSION ends at its line: a second line is a
second statement). Both must find one statement and the same first word; the shell then runs the
statement cqlsh's lexer found, and only that one (`AllowedStatement.tokens`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed, Token

SELECT, DESCRIBE, DESCRIBE_PAYLOAD, INSPECT = "SELECT", "DESCRIBE", "DESCRIBE PAYLOAD", "INSPECT"
#: The insight reports that only read (COMPRESSION TRIAL writes scratch tables: refused).
COMPRESSION_READS = ("STATS", "SETTINGS", "ADVISE")
#: What the gate lets through, as its refusals name it.
ALLOWED = ("SELECT, DESCRIBE (DESCRIBE PAYLOAD too), COMPRESSION STATS, SETTINGS or ADVISE, "
           "and INSPECT")


class Refused(Exception):
    """A statement the gate does not let through; str() is the one line the caller is told."""


@dataclass(frozen=True)
class AllowedStatement:
    """A statement the gate let through: its `kind` (SELECT, DESCRIBE, DESCRIBE PAYLOAD, INSPECT
    or COMPRESSION STATS/SETTINGS/ADVISE), the text the shell is handed (`source`) and cqlsh's
    tokens of the one statement in it (`tokens`: what the shell's handle_statement takes)."""

    kind: str
    source: str
    tokens: Any


def check(text: str, kinds: Collection[str] | None = None) -> AllowedStatement:
    """The one statement `text` holds, when it is a read (and one of `kinds`, when given);
    Refused otherwise."""
    if not text.strip():
        raise Refused("no statement given")
    try:
        tokens = Lexed(text).tokens[:-1]  # without the end token
    except QueryError as err:
        raise Refused(f"refused: {err}") from None
    ends = [i for i, tok in enumerate(tokens) if _punct(tok, ";")]
    statement = tokens[:ends[0]] if ends else tokens
    if not statement:
        raise Refused("no statement given")
    if ends and any(not _punct(tok, ";") for tok in tokens[ends[0]:]):
        raise Refused(_one_at_a_time())
    kind = _kind(statement)
    if kind is None:
        raise Refused(f"refused: cqlsh-ext mcp is read-only and runs {ALLOWED} only; "
                      f"{_what(statement)} is not one of them")
    if kinds is not None and kind not in kinds:
        raise Refused(f"refused: this tool takes one {' or '.join(sorted(kinds))}, not {kind}")
    return AllowedStatement(kind, *_cqlsh_statement(text, statement[0]))


def _cqlsh_statement(text: str, first: Token) -> tuple[str, Any]:
    """The text the shell runs and cqlsh's tokens of its one statement: its lexer must find one
    statement starting with the same word. The end `;` is added as -e adds it, on a line of its own
    so that a closing `--` comment cannot swallow it."""
    from cqlsh_ext.upstream import seams

    source = text + "\n;"
    try:
        statements = seams.split_statements(source)
    except ValueError as err:
        raise Refused(f"refused: {err}") from None
    if len(statements) != 1:
        raise Refused(_one_at_a_time())
    tokens = statements[0]
    if tokens[-1][0] != "endtoken":
        raise Refused("refused: the statement does not end (an unclosed quote, name or comment)")
    if str(tokens[0][1]).lower() != first.value.lower():
        raise Refused(f"refused: cqlsh reads this statement as starting with {tokens[0][1]!r}, "
                      f"not {first.value!r}")
    return source, tokens


def _kind(tokens: list[Token]) -> str | None:
    """The read `tokens` are, or None."""
    words = [tok.value.upper() if tok.kind == "word" else "" for tok in tokens[:3]]
    first = words[0]
    if first == "SELECT":
        return SELECT
    if first in ("DESCRIBE", "DESC"):
        from cqlsh_ext.describe.parse import recognizes

        return DESCRIBE_PAYLOAD if recognizes([*tokens, Token("end", "", 0, 0)]) else DESCRIBE
    if first == "COMPRESSION" and len(words) > 1 and words[1] in COMPRESSION_READS:
        return f"COMPRESSION {words[1]}"
    if first == "INSPECT":
        after = words[2] if words[1:2] == ["JSON"] and len(words) > 2 else words[1] if len(words) > 1 else ""
        return INSPECT if after == "SELECT" else None
    return None


def _what(tokens: list[Token]) -> str:
    """How a refusal names the statement: its first words."""
    words = [tok.value.upper() for tok in tokens[:2] if tok.kind == "word"]
    if not words:
        return f"no statement (it starts with {tokens[0].value!r})"
    if words[0] in ("COMPRESSION", "COPY", "BEGIN", "ALTER", "CREATE", "DROP", "LIST") and len(words) > 1:
        return " ".join(words)
    return words[0]


def _one_at_a_time() -> str:
    return "refused: one statement at a time (this text holds more than one)"


def _punct(tok: Token, value: str) -> bool:
    return tok.kind == "punct" and tok.value == value
