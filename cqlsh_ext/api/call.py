"""What every reading call of the API shares, below the modules that make them (database,
partitions, polars_source): the options of one call (`Call`), and the statement's kind by its
first word (`verb`): db.query and the readings take reads, db.execute takes writes
(`refuse_write` says so in one line)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cqlsh_ext.api.errors import Error
from cqlsh_ext.cql.first_words import SESSION, WRITES

if TYPE_CHECKING:
    from cqlsh_ext.api.query_answer import Progress
    from cqlsh_ext.cql.lexer import Lexed

__all__ = ["Call", "refuse_write", "verb"]

_FIRST_WORD = re.compile(r"\s*([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Call:
    """What a query call asks besides its statement: rows a page, seconds a request, the
    consistency level, progress."""

    page_size: int | None = None
    timeout: float | None = None
    consistency: str | int | None = None
    progress: Progress | None = None


def verb(lexed: Lexed) -> str:
    """The statement's first word, lower case ("" when it has none). A statement this lexer does
    not read (the server's CQL it does not follow, sent as written) is known by its text's first
    word: a write stays a write."""
    try:
        first = lexed.tokens[0]
    except Exception:
        found = _FIRST_WORD.match(lexed.text)
        return found.group(1).lower() if found is not None else ""
    return first.value.lower() if first.kind == "word" else ""


def refuse_write(lexed: Lexed, call: str) -> None:
    """db.query and the readings take statements that read: a write is refused, naming db.execute."""
    first = verb(lexed)
    if first in SESSION:
        raise Error(f"db.{call} reads; USE changes the connection's keyspace: connect(keyspace=...), or name "
                    "the keyspace in the statement")
    if first in WRITES:
        raise Error(f"db.{call} reads; {first.upper()} writes: db.execute(statement, params) runs it"
                    + (" (db.edit for payload paths)" if first in ("update", "delete") else ""))
