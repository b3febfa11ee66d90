"""DESCRIBE PAYLOAD's statement, read with the query layer's lexer (cql.lexer):

    DESCRIBE PAYLOAD [keyspace.]table.column [WHERE conditions] [SAMPLE n [SEED s] | ALL [CONFIRM]]
                     [JSON] [;]
    DESC PAYLOAD ...

The options after the column (and its WHERE) come in any order; SEED s draws the same sample
again (the report prints the seed it drew with). The WHERE is a payload query's
(docs/queries.md): conditions on payload paths and on ordinary columns; it is handed to the query
parser as the WHERE of `SELECT column FROM table` (describe.run). Errors are DescribeError, one line,
before anything is read.

`recognizes(tokens)` tells DESCRIBE PAYLOAD from cqlsh's own DESCRIBE: `DESCRIBE PAYLOAD` followed
by a name is ours (a table named without its column is refused with the form, by describe.run,
which knows the table's columns); `DESC PAYLOAD` alone, `DESC payload.t` or `DESC payload WITH
INTERNALS` describes an object named payload, as cqlsh does. cqlsh ends a DESCRIBE at the end of
its line: so does this one.
Standard library only at import: the shell imports it at start-up (through describe.command).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Token

LABEL = "DESCRIBE PAYLOAD"
#: The statement's form, and the usage a refusal names.
FORM = ("DESCRIBE PAYLOAD [keyspace.]table.column [WHERE conditions] [SAMPLE n [SEED s] | ALL [CONFIRM]] "
        "[JSON]")
USAGE = f"{FORM}, e.g. DESCRIBE PAYLOAD shop.orders.data WHERE data.status = 'PAID' SAMPLE 5000"
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
    json: bool = False

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


def _name(tok: Token) -> str:
    """A name as the schema spells it: quoted as written, else in lower case (CQL)."""
    return tok.value if tok.kind == "qname" else tok.value.lower()


def parse(text: str, tokens: list[Token]) -> DescribeStatement:
    """The statement `tokens` (of `text`) says; recognizes(tokens) must hold."""
    names: list[str] = [_name(tokens[2])]
    i = 3
    while tokens[i].kind == "punct" and tokens[i].value == ".":
        if tokens[i + 1].kind not in ("word", "qname"):
            raise DescribeError(f"expected a name after '.', found {tokens[i + 1].describe()}: {USAGE}")
        names.append(_name(tokens[i + 1]))
        i += 2
    if len(names) > 3:
        raise DescribeError(f"{'.'.join(names)}: name one column, as keyspace.table.column; a map's keys "
                            "and a UDT's fields are described as places of their column")
    keyspace = names[0] if len(names) == 3 else None
    # One name: a table without its column (column ''), refused by describe.run with its columns.
    table, column = (names[-2], names[-1]) if len(names) > 1 else (names[0], "")
    end = len(tokens) - 1  # the end token
    if end > i and tokens[end - 1].kind == "punct" and tokens[end - 1].value == ";":
        end -= 1
    options: dict[str, object] = {}
    while end > i:
        last = tokens[end - 1]
        word = last.value.upper() if last.kind == "word" else ""
        before = tokens[end - 2].value.upper() if end - 2 >= i and tokens[end - 2].kind == "word" else ""
        if word in ("JSON", "ALL", "CONFIRM") and word not in options:
            options[word] = True
            end -= 1
        elif last.kind == "int" and before in ("SAMPLE", "SEED") and before not in options:
            options[before] = last.literal
            end -= 2
        else:
            break
    where = None
    if end > i and tokens[end - 1].kind == "word" and tokens[end - 1].value.upper() in ("SAMPLE", "SEED"):
        raise DescribeError(f"{tokens[end - 1].value.upper()} takes a number, e.g. SAMPLE 5000 SEED 7")
    if end > i:
        first = tokens[i]
        if not (first.kind == "word" and first.value.upper() == "WHERE"):
            raise DescribeError(f"unexpected {first.describe()} after {'.'.join(names)}: {USAGE}")
        if end == i + 1:
            raise DescribeError("WHERE needs a condition, e.g. WHERE data.status = 'PAID'")
        last = tokens[end - 1]
        if last.kind == "word" and last.value.upper() == "FILTERING":
            raise DescribeError("no ALLOW FILTERING here: DESCRIBE PAYLOAD reads what it describes "
                                "(SAMPLE n or ALL say how much)")
        where = text[tokens[i + 1].start:last.end].strip()
    sample = options.get("SAMPLE")
    if sample is not None and options.get("ALL"):
        raise DescribeError("SAMPLE n and ALL are two readings: give one (or neither: the table's size "
                            "decides)")
    if isinstance(sample, int) and sample <= 0:
        raise DescribeError("SAMPLE takes a positive number of rows")
    if "SEED" in options and sample is None:
        raise DescribeError("SEED goes with SAMPLE n (it draws the same sample again)")
    if options.get("CONFIRM") and not options.get("ALL"):
        raise DescribeError("CONFIRM goes with ALL (it accepts the cost of reading every row from a script)")
    seed = options.get("SEED")
    return DescribeStatement(keyspace, table, column, where, sample if isinstance(sample, int) else None,
                             seed if isinstance(seed, int) else None, bool(options.get("ALL")),
                             bool(options.get("CONFIRM")), bool(options.get("JSON")))
