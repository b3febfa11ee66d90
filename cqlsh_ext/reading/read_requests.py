"""The typed requests of the reports: what COMPRESSION STATS, ADVISE, SETTINGS and INSPECT read,
built once by whoever receives the request (a table report's by its feature's declared builder,
insight/report_requests.py, for the shell, `cqlsh-ext mcp` and the Python API alike; INSPECT's
by the shell from cqlsh's parse and by the others from their statement, a SELECT's target by
select_target) and taken
by the services with the reading's context: `stats_answer(ctx, StatsRequest(...))`.

DESCRIBE PAYLOAD's request is describe.parse.DescribeStatement (a frozen dataclass already); a
payload SELECT's is its plan (query.grammar.Plan, from reading.select.payload_plan).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.reading.resolve import TableTarget

__all__ = ["AdviseRequest", "InspectRequest", "ReportTarget", "SampleSpec", "SettingsRequest", "StatsRequest",
           "select_target"]


@dataclass(frozen=True)
class ReportTarget:
    """What a report reads: the table (names as the schema spells them; keyspace None: the
    context's), and either the SELECT a person wrote (`select`, as written) or the table's
    `columns` (names as the schema spells them: whole rows of the table); neither: the table's
    payload columns, the whole table. Only a statement typed as a statement travels as text: the
    front ends that name a table and a column build typed parts (insight.report_requests), and the
    reading writes their SELECT (cql.spelling.columns_select)."""

    keyspace: str | None
    table: str | None
    select: str | None = None
    #: The SELECT reads whole rows of the table (plain columns, no WHERE, LIMIT, ...): it may be
    #: split into token ranges.
    whole_table: bool = False
    #: The SELECT's LIMIT.
    limit: int | None = None
    #: The table as the reading finds it, when whoever built the request resolved it already (the
    #: reading takes it rather than resolving it again; None: the reading resolves the names).
    found: TableTarget | None = field(default=None, compare=False)
    #: The columns read of the table (None: its payload columns, or the SELECT's).
    columns: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.select is not None and self.columns is not None:
            raise ValueError("a report reads a SELECT or a table's columns, not both")


#: Words (and the bracket) after which a SELECT no longer reads whole rows of its table.
_NOT_WHOLE = {"WHERE", "LIMIT", "GROUP", "ORDER", "PER", "ALLOW", "DISTINCT", "JSON", "("}


def select_target(keyspace: str | None, table: str | None, select: str, lexed: Lexed | None = None,
                  found: TableTarget | None = None) -> ReportTarget:
    """The target of a report of `select` (one SELECT of keyspace.table, without its `;`), as the
    shell's reading of the same statement gives it (insight/report_requests.py): whole rows of
    the table when it names plain columns or * and nothing else, its LIMIT. `lexed`: the SELECT's
    tokens, lexed already (taken as they are); `found`: its table, resolved already. Raises
    QueryError when our lexer refuses the text."""
    from cqlsh_ext.cql.lexer import Lexed

    tokens = [t for t in (lexed if lexed is not None else Lexed(select)).tokens if t.kind != "end"]
    words = [t.value.upper() if t.kind == "word" else t.value if t.kind == "punct" else "" for t in tokens]
    limit = None
    for i, word in enumerate(words[:-1]):
        if word == "LIMIT" and (i == 0 or words[i - 1] != "PARTITION") and tokens[i + 1].kind == "int":
            limit = int(tokens[i + 1].value)
    return ReportTarget(keyspace, table, select, whole_table=not (set(words) & _NOT_WHOLE), limit=limit,
                        found=found)


@dataclass(frozen=True)
class SampleSpec:
    """A SAMPLE clause: rows, a percentage or a precision (none: the sampling policy's own), for
    at most `seconds`, from `seed`."""

    rows: int | None = None
    percent: float | None = None
    #: The wanted precision, a fraction (0.05: 5%).
    precision: float | None = None
    seconds: float | None = None
    seed: int | None = None


@dataclass(frozen=True)
class StatsRequest:
    """COMPRESSION STATS [SAMPLE ...] [CONFIRM] [PARALLEL n] [DECODE ALL]."""

    target: ReportTarget
    sample: SampleSpec | None = None
    confirm: bool = False
    parallel: int | None = None
    #: Read each value's container headers for its sizes (False: DECODE ALL decodes every value).
    from_headers: bool = True


@dataclass(frozen=True)
class AdviseRequest:
    """COMPRESSION ADVISE [SAMPLE n] [SAVE DICTIONARY 'file']: `sample` values measured (None: the
    default)."""

    target: ReportTarget
    sample: int | None = None
    #: SAVE DICTIONARY's file (the shell's alone: MCP and the API never write a file a caller names).
    dictionaries_to: str | None = None


@dataclass(frozen=True)
class SettingsRequest:
    """COMPRESSION SETTINGS ks.t [SAMPLE n]: `sample` rows read (None: the default)."""

    keyspace: str | None
    table: str | None
    sample: int | None = None
    #: The table as the reading finds it, resolved already (ReportTarget.found).
    found: TableTarget | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InspectRequest:
    """INSPECT SELECT ...: each blob value of the SELECT's rows."""

    target: ReportTarget
