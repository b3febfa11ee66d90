"""The typed answer every front end reads: named, typed columns, rows in batches that also hand
out columns, and notes as data (what was read, matched, undecodable by reason, cut; the LIMIT
reached; stopped, why and how far; how the table was read). The terminal, the files (JSON Lines,
CSV, Parquet), Spark mode and `cqlsh-ext mcp` each render it (cqlsh_ext.render, the MCP's
answers.py); none reads another's printed text.

    answer = read_select(ctx, plan, target)        # reading.select: a TypedAnswer, or None
    answer.columns                                 # [AnswerColumn]: name, role, CQL type or path
    for batch in answer: batch.rows / batch.column(i)
    answer.notes                                   # ReadNotes: complete once the batches end

A report (DESCRIBE PAYLOAD, COMPRESSION STATS, SETTINGS, ADVISE) is a ReportAnswer: its figures as
data (`data()`, the JSON document), its text a renderer's (`lines()`), and how its reading ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cqlsh_ext.common.text import Line
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.grammar import Plan

Row = tuple[Any, ...]

#: What a column holds: a CQL value as the server returns it; a blob, decoded (its payload, label,
#: kind, note and stored bytes); a value found by a payload path; an aggregate computed here.
CQL, BLOB, PATH, AGGREGATE = "cql", "blob", "path", "aggregate"
#: The payload type of a path's value: JSON's (a string, number, boolean, record, list or null).
PATH_TYPE = "json"

#: The paths no value had that a reading's notes name, each with its nearest keys: the others are
#: counted (ReadNotes.paths_never_found_count).
PATHS_NAMED = 5
#: How a reading ended, when not by reaching its end (ReadNotes.stopped).
INTERRUPTED, CANCELLED, OUTPUT_CLOSED, FAILED = "interrupted", "cancelled", "output closed", "error"

#: Where a row is in the reading that gave it, so that a later reading can go on from it (a
#: cursor, `cqlsh-ext mcp`): the paging state its page was asked with (None: the statement's first
#: page) and its index among the rows that page gave the answer. Read again from that state, the
#: page gives the same rows first (the table unchanged).
Position = tuple["bytes | None", int]


class Positions(Protocol):
    """Each row's Position in a batch: a list, or PagePositions."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> Position: ...


class PagePositions:
    """The positions of `size` rows of one page, from its `first` on: (state, first), (state,
    first + 1), ... without a tuple made per row until one is asked for."""

    __slots__ = ("first", "size", "state")

    def __init__(self, state: bytes | None, first: int, size: int) -> None:
        self.state, self.first, self.size = state, first, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> Position:
        if not 0 <= i < self.size:
            raise IndexError(i)
        return self.state, self.first + i


@dataclass(frozen=True)
class AnswerColumn:
    """One column of an answer: its name; `role` (CQL, BLOB, PATH, AGGREGATE); `cql_type`, the
    driver's type of a column the server returns (None for a path's value or an aggregate);
    `source`, the path or the aggregate as written; `computed`: its numbers are computed here
    (sum, avg), not read as they are."""

    name: str
    role: str
    cql_type: Any = None
    source: str | None = None
    computed: bool = False

    @property
    def type_text(self) -> str:
        """Its type as a person reads it: the CQL type ('int', 'map<text, blob>'), `json` for a
        path's value, the aggregate's ('bigint' for count, else `json` or a number)."""
        if self.cql_type is not None:
            from cqlsh_ext.cql.types import from_driver

            return str(from_driver(self.cql_type))
        if self.role == AGGREGATE and self.source is not None and self.source.lower().startswith("count"):
            return "bigint"
        if self.role == AGGREGATE and self.computed:
            return "number"
        return PATH_TYPE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "role": self.role, "type": self.type_text}
        if self.source is not None:
            out["source"] = self.source
        return out


class AnswerBatch:
    """Rows of an answer read together (a page), as rows (`rows`) and as columns (`column(i)`,
    `columns()`): whichever the reading made, the other made once when asked. A reading that
    hands out columns (a page's path values as the value engine gave them) costs no row per row.
    A column is a list, or a sequence the native core holds (a file's reading: Evaluator.held)."""

    __slots__ = ("_columns", "_rows", "positions", "size")

    def __init__(self, rows: list[Row] | None = None, columns: list[Sequence[Any]] | None = None,
                 positions: Positions | None = None) -> None:
        self._rows = rows
        self._columns = columns
        self.size = len(rows) if rows is not None else len(columns[0]) if columns else 0
        #: Each row's Position, where the reading can go on from its rows (one stream, read in
        #: order); None where it cannot (token ranges at once, worker processes, groups, a sort).
        self.positions = positions

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    @property
    def rows(self) -> list[Row]:
        if self._rows is None:
            self._rows = list(zip(*self._columns, strict=True)) if self._columns else []
        return self._rows

    def columns(self) -> list[Sequence[Any]]:
        if self._columns is None:
            self._columns = [list(column) for column in zip(*self.rows, strict=True)]
        return self._columns

    def column(self, i: int) -> Sequence[Any]:
        if not self.size:
            return []
        return self.columns()[i]


@dataclass
class ReadNotes:
    """What a reading saw and how it ended, as data: the counts of the query's answer (rows read
    and matched, values undecodable by kind and cut, the paths no value had, aggregate inputs
    skipped), the LIMIT reached, how it was read, how it ended (`stopped`, `error`), the errors
    retried. Complete once the answer's batches are exhausted. A statement the server answers as
    written (reading.statement) has no query's answer (`answer` None): its rows are counted."""

    answer: Answer | None
    interrupted: bool = False
    #: The reading's own stop (a client's cancellation, a time limit), not Ctrl-C.
    cancelled: bool = False
    error: str | None = None
    retried: dict[str, int] = field(default_factory=dict)
    #: How the table was read ("8 parallel streams", "2 worker processes", Spark's).
    how: str = ""
    #: Rows given out (streamed answers); the LIMIT stops the reading when reached.
    emitted: int = 0
    #: The output ended before the answer did (the pager quit, a closed pipe, an answer's cap).
    output_closed: bool = False
    #: What ended it, as the closing line says it after "stopped " ("at the call's limit of 3
    #: rows"); "" when the output closed on its own (the pager quit, a closed pipe).
    closed_by: str = ""
    #: Token ranges read and all of them, when the table was read by ranges in this process.
    ranges: tuple[int, int] | None = None
    #: Rows read, without a query's answer to count them.
    rows: int = 0
    #: Where a reading that stopped before its end goes on from (the Position of the first row it
    #: did not give out), when its rows have positions; None otherwise.
    resume: Position | None = None

    @property
    def plan(self) -> Plan:
        assert self.answer is not None, "a statement read as written has no plan"
        return self.answer.plan

    @property
    def rows_read(self) -> int:
        return self.answer.counts.read if self.answer is not None else self.rows

    @property
    def matched(self) -> int:
        return self.answer.counts.matched if self.answer is not None else self.rows

    @property
    def undecodable(self) -> int:
        return self.answer.counts.undecodable if self.answer is not None else 0

    @property
    def undecodable_kinds(self) -> dict[str, int]:
        return dict(self.answer.counts.kinds) if self.answer is not None else {}

    @property
    def cut(self) -> int:
        return self.answer.counts.cut if self.answer is not None else 0

    @property
    def skipped(self) -> int:
        """Aggregate inputs that were not numbers (sum, avg) or not comparable (min, max)."""
        return self.answer.skipped() if self.answer is not None else 0

    @property
    def limit_reached(self) -> bool:
        if self.answer is None:
            return False
        limit = self.plan.limit
        return limit is not None and self.emitted >= limit and self.answer.streamed

    @property
    def paths_never_found(self) -> list[tuple[str, list[str], list[str]]]:
        """(path, the nearest keys seen where it stopped, every key seen there) per path no value had,
        the first PATHS_NAMED of them (a chain of 20,000 conditions on missing paths is said in a
        line, not in 1.6 MB: paths_never_found_count says how many)."""
        return self.answer.counts.paths.never_found(PATHS_NAMED) if self.answer is not None else []

    @property
    def paths_never_found_count(self) -> int:
        """How many paths no value had, named or not."""
        return self.answer.counts.paths.never_found_count() if self.answer is not None else 0

    @property
    def stopped(self) -> str | None:
        """How the reading ended before its end: INTERRUPTED (Ctrl-C), CANCELLED, OUTPUT_CLOSED,
        FAILED; None when it read to its end (or its LIMIT)."""
        if self.error:
            return FAILED
        if self.cancelled:
            return CANCELLED
        if self.interrupted:
            return INTERRUPTED
        if self.output_closed:
            return OUTPUT_CLOSED
        return None

    @property
    def exact(self) -> bool:
        """Whether the answer's figures (its groups, aggregates and counts) cover every row the
        statement reads: not when the reading was stopped before its end (Ctrl-C, a cancellation
        or a time limit, an error). An output that closed had what it wanted: what it got is whole."""
        return self.stopped in (None, OUTPUT_CLOSED)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows_read": self.rows_read, "matched": self.matched,
                               "undecodable": self.undecodable, "undecodable_by_kind": self.undecodable_kinds,
                               "cut": self.cut, "exact": self.exact}
        if self.skipped:
            out["aggregate_inputs_skipped"] = self.skipped
        if self.limit_reached:
            out["limit_reached"] = self.plan.limit
        if self.how:
            out["read"] = self.how
        if self.ranges is not None:
            out["ranges_read"], out["ranges"] = self.ranges
        if self.retried:
            out["retried"] = dict(self.retried)
        missing = self.paths_never_found
        if missing:
            out["paths_no_value_had"] = [{"path": path, "nearest_keys": nearest}
                                         for path, nearest, _ in missing]
            more = self.paths_never_found_count - len(missing)
            if more > 0:
                out["paths_no_value_had_more"] = more
        out["stopped"] = self.stopped
        if self.error:
            out["error"] = self.error
        return out


class TypedAnswer:
    """A statement's answer (see the module doc): `columns`, batches of rows as they are read
    (one pass: iterate once), `notes`. `close()` ends the reading early (its notes say how far it
    got); a renderer closes it when it stops taking batches."""

    def __init__(self, columns: Sequence[AnswerColumn], batches: Iterator[list[Row] | AnswerBatch],
                 notes: ReadNotes | None, plan: Plan | None = None) -> None:
        self.columns = list(columns)
        self._batches = batches
        self.notes = notes
        self.plan = plan

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def types(self) -> list[Any]:
        """The driver types (None for a path's value or an aggregate), as cqlsh's printing takes them."""
        return [c.cql_type for c in self.columns]

    def __iter__(self) -> Iterator[AnswerBatch]:
        for batch in self._batches:
            yield batch if isinstance(batch, AnswerBatch) else AnswerBatch(batch)

    def pages(self) -> Iterator[list[Row]]:
        """The batches as plain lists of rows."""
        for batch in self._batches:
            yield batch.rows if isinstance(batch, AnswerBatch) else batch

    def close(self) -> None:
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


@dataclass
class ReportAnswer:
    """A report's answer: its figures as data (`data()`: the JSON document), its text for a
    person (`text(width, blocks)`: laid out for a screen `width` wide, 0 for whole lines, its
    charts in Unicode's block characters when `blocks`), how its reading ended (`stopped`:
    INTERRUPTED, CANCELLED, FAILED or None; the figures are those of what was read before)."""

    title: str
    data: Callable[[], dict[str, Any]]
    text: Callable[[int, bool], list[str]]
    stopped: str | None = None


def fitted(lines: Callable[[], Sequence[Line]]) -> Callable[[int, bool], list[str]]:
    """ReportAnswer.text of a report made of blocks (common.text: Table, Bar, lines) that
    common.text.fit lays out."""

    def text(width: int, blocks: bool) -> list[str]:
        from cqlsh_ext.common.text import fit

        return list(fit(lines(), width, blocks))

    return text
