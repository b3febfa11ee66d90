"""DESCRIBE PAYLOAD's request, and how its statement is told from cqlsh's DESCRIBE.

DESCRIBE PAYLOAD (or DESC PAYLOAD) and a column is read from describe_payload's declaration
(describe/declared.py; features.calling reads it with the shell's lexer, its request builder builds
its `DescribeStatement`, the request MCP's and the API's calls build too): the options after the
column (and its WHERE) come in any order; SEED s draws the same sample again (the report prints the
seed it drew with). The WHERE is a payload query's (docs/queries.md): conditions on payload paths
and on ordinary columns; it is handed to the query parser as the WHERE of `SELECT column FROM table`
(describe.run). The reading's refusals are DescribeError, one line.

`recognizes(tokens)` tells DESCRIBE PAYLOAD from cqlsh's own DESCRIBE: `DESCRIBE PAYLOAD` followed
by a name is ours (a table named without its column is refused with the form, by describe.run,
which knows the table's columns); `DESC PAYLOAD` alone, `DESC payload.t` or `DESC payload WITH
INTERNALS` describes an object named payload, as cqlsh does. cqlsh ends a DESCRIBE at the end of
its line: so does this one.
Standard library only at import: the shell imports it at a DESCRIBE statement (describe.declared names
recognizes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Token

LABEL = "DESCRIBE PAYLOAD"
#: The words that open the statement.
WORDS = ("describe", "desc")


class DescribeError(Exception):
    """A statement refused before anything is read: one line."""


@dataclass(frozen=True)
class DescribeStatement:
    keyspace: str | None
    table: str
    #: '' when the statement names no column (refused when resolved).
    column: str
    #: The WHERE's conditions as typed (None: no WHERE).
    where: str | None = None
    #: SAMPLE n: rows to read at random; ALL: every row; neither: chosen from the table's size.
    sample: int | None = None
    seed: int | None = None
    every_row: bool = False
    confirm: bool = False
    #: The statement's form and an example, as its declaration spells them (what a refusal names:
    #: the request's builder sets them, describe.declared).
    form: str = field(default="", compare=False)
    example: str = field(default="", compare=False)

    @property
    def reading(self) -> str:
        """The reading asked for, as the statement says it ('' when it does not)."""
        if self.every_row:
            return "ALL"
        return f"SAMPLE {self.sample}" if self.sample is not None else ""


def recognizes(tokens: list[Token]) -> bool:
    """`DESCRIBE PAYLOAD` (or DESC) followed by a name: ours; anything else cqlsh's."""
    if not (len(tokens) > 3 and tokens[0].kind == "word" and tokens[0].value.lower() in WORDS
            and tokens[1].kind == "word" and tokens[1].value.lower() == "payload"
            and tokens[2].kind in ("word", "qname")):
        return False
    # DESC payload WITH INTERNALS: cqlsh's, of an object named payload.
    return not (tokens[2].kind == "word" and tokens[2].value.upper() == "WITH"
                and tokens[3].kind == "word" and tokens[3].value.upper() == "INTERNALS")
