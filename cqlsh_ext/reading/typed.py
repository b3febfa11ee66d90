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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.payload.columns import (
    BLOB,
    SAMPLE_ROWS,
    AnswerColumn,
    BlobReading,
    ColumnValues,
    GivenTypes,
    ValueColumn,
    column_of,
    decoded_bytes,
    fix_kinds,
    given_types,
    with_given,
)

if TYPE_CHECKING:
    from cqlsh_ext.common.text import Line
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.query.answer import Answer, Counts
    from cqlsh_ext.query.grammar import Plan

Row = tuple[Any, ...]

#: What a batch of blobs read holds decoded, at most, about: a page whose values are large (a
#: megabyte each, say) is read and given out in parts of about this much, so a stream's memory
#: stays flat whatever the values' sizes (the first part of a reading is BLOB_FIRST_ROWS rows; the
#: next parts' rows come from the decoded size a row had so far).
BATCH_BYTES = 64 << 20
BLOB_FIRST_ROWS = 64

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

    def part(self, start: int, stop: int) -> PagePositions:
        return PagePositions(self.state, self.first + start, stop - start)


#: Each row's Position in a batch.
Positions = list[Position] | PagePositions


class AnswerBatch:
    """Rows of an answer read together (a page), as columns (`columns()`, `column(i)`: the one
    currency, payload.columns.ColumnValues) and as rows (`rows`, made from the columns once when asked).
    A reading that gives rows (groups, a sort, the Python evaluator's kept rows) has them made
    into columns when they are asked for."""

    __slots__ = ("_columns", "_rows", "positions", "size")

    def __init__(self, rows: list[Row] | None = None, columns: Sequence[Any] | None = None,
                 positions: Positions | None = None) -> None:
        self._rows = rows
        self._columns = [column_of(c) for c in columns] if columns is not None else None
        self.size = len(rows) if rows is not None else len(self._columns[0]) if self._columns else 0
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
            columns = [c.values() for c in self._columns] if self._columns else []
            self._rows = list(zip(*columns, strict=True)) if columns else []
        return self._rows

    def columns(self, width: int | None = None) -> list[ColumnValues]:
        """The batch's columns (`width`: how many an answer of no row has)."""
        if self._columns is None:
            if self._rows:
                self._columns = [ValueColumn(list(c)) for c in zip(*self._rows, strict=True)]
            else:
                self._columns = [ValueColumn([]) for _ in range(width or 0)]
        return self._columns

    def column(self, i: int) -> ColumnValues:
        return self.columns(i + 1)[i]

    def head(self, size: int) -> AnswerBatch:
        """Its first `size` rows (a LIMIT reached inside it)."""
        return self.part(0, size)

    def part(self, start: int, stop: int) -> AnswerBatch:
        """Its rows from `start` to `stop`."""
        if start <= 0 and stop >= self.size:
            return self
        positions = self.positions
        if isinstance(positions, PagePositions):
            positions = positions.part(start, stop)
        elif positions is not None:
            positions = positions[start:stop]
        if self._columns is None and self._rows is not None:
            return AnswerBatch(self._rows[start:stop], positions=positions)
        return AnswerBatch(columns=[c[start:stop] for c in self.columns()], positions=positions)

    def read_blobs(self, reading: BlobReading, places: Sequence[ValuePlace | None],
                   roles: Sequence[str]) -> int:
        """Its blob columns read (payload.columns.BlobReading.read: a page per call, on the core
        where it runs), so every reader of the batch finds them read once: what they take decoded."""
        columns = self.columns(len(roles))
        held = 0
        for i, role in enumerate(roles):
            if role == BLOB:
                columns[i] = reading.read(columns[i], places[i])
                held += decoded_bytes(columns[i])
        self._rows = None
        return held


def _counts() -> Counts:
    """An empty Counts (query.answer, loaded with the first reading that counts)."""
    from cqlsh_ext.query.answer import Counts

    return Counts()


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
    #: Where a reading that stopped before its end goes on from (the Position of the first row it
    #: did not give out), when its rows have positions; None otherwise.
    resume: Position | None = None
    #: A statement read as written (no query's answer to count them): its rows, read and
    #: matched alike, its blobs that did not decode, by kind, and those cut.
    counted: Counts = field(default_factory=_counts)
    #: Values that did not fit their column's Arrow kind (null there, with a note), by column:
    #: what an Arrow reader of the answer (Parquet, the API's tables) counted.
    misfits: dict[str, int] = field(default_factory=dict)

    @property
    def plan(self) -> Plan:
        assert self.answer is not None, "a statement read as written has no plan"
        return self.answer.plan

    @property
    def counts(self) -> Counts:
        """What the reading counted: its query's answer's counts, else its own (`counted`)."""
        return self.answer.counts if self.answer is not None else self.counted

    @property
    def rows_read(self) -> int:
        return self.counts.read

    @property
    def matched(self) -> int:
        return self.counts.matched

    @property
    def undecodable(self) -> int:
        return self.counts.undecodable

    @property
    def undecodable_kinds(self) -> dict[str, int]:
        return dict(self.counts.kinds)

    @property
    def cut(self) -> int:
        return self.counts.cut

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
        """Whether the answer covers every row the statement reads, and its figures (groups,
        aggregates, counts) with it: not when the answer was cut (`stopped`: Ctrl-C, a
        cancellation or a time limit, an error, its output closed before the end: close(), a
        reader that let go of it, the pager quit, a call's limit). Its LIMIT reached is its end."""
        return self.stopped is None

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
        if self.misfits:
            out["misfits"] = dict(self.misfits)
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
        outside = _formats_from_outside()
        if outside:
            out["formats_from_outside"] = outside
        return out


def _formats_from_outside() -> list[dict[str, Any]]:
    """The plugins and commands that may read this answer's values: name, source, package, version."""
    from cqlsh_ext.payload.formats._outside import origins

    return [origin.to_json() for origin in origins()]


class TypedAnswer:
    """A statement's answer (see the module doc): `columns`, batches of rows as they are read
    (one pass: iterate once), `notes`. `close()` ends the reading early (its notes say how far it
    got); a renderer closes it when it stops taking batches. `places`: where each column's values
    sit (column settings apply to blobs by it); `reading`: how its blobs decode (the reading's
    decoding), which reads the blob columns a batch gives as stored and counts what does not decode.

    `fixed()` gives the columns with their Arrow kinds fixed (payload.columns: from the CQL types,
    and from the answer's first SAMPLE_ROWS rows for the kinds read from values): the batches it
    reads for that are held and given out first, so the answer is still read once, in order."""

    def __init__(self, columns: Sequence[AnswerColumn], batches: Iterator[list[Row] | AnswerBatch],
                 notes: ReadNotes | None, plan: Plan | None = None,
                 places: Sequence[ValuePlace | None] | None = None,
                 reading: BlobReading | None = None) -> None:
        self.columns = list(columns)
        self._batches = batches
        self.notes = notes
        self.plan = plan
        self.places: list[ValuePlace | None] = [None] * len(self.columns) if places is None else list(places)
        self.reading = reading
        #: Batches read ahead (to fix the kinds), given out first.
        self._ahead: list[AnswerBatch] = []
        self._fixed: list[AnswerColumn] | None = None
        #: The parts of a batch whose blobs are read a part at a time, still to be given out.
        self._parts: Iterator[AnswerBatch] | None = None
        #: Decoded bytes a row of blobs held so far (None: none read yet).
        self._per_row: float | None = None
        #: The rows the kinds read from values are read from, and the types given (typed_by).
        self.sample_rows = SAMPLE_ROWS
        self._given: GivenTypes = {}

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def types(self) -> list[Any]:
        """The driver types (None for a path's value or an aggregate), as cqlsh's printing takes them."""
        return [c.cql_type for c in self.columns]

    @property
    def roles(self) -> list[str]:
        return [c.role for c in self.columns]

    def _next(self) -> AnswerBatch | None:
        if self._parts is not None:
            part = next(self._parts, None)
            if part is not None:
                return part
            self._parts = None
        for batch in self._batches:
            out = batch if isinstance(batch, AnswerBatch) else AnswerBatch(batch)
            if self.reading is not None and BLOB in self.roles:
                self._parts = self._read_in_parts(out)
                return next(self._parts)
            return out
        return None

    def _read_in_parts(self, batch: AnswerBatch) -> Iterator[AnswerBatch]:
        """A batch's blobs read a part of its rows at a time, each part given out before the next
        is read, each about BATCH_BYTES decoded (the rows a part takes from the decoded size a row
        had so far: the whole batch where rows are small, a few where each is a megabyte)."""
        assert self.reading is not None
        start, size = 0, len(batch)
        if not size:
            yield batch
            return
        while start < size:
            if self._per_row is None:
                rows = BLOB_FIRST_ROWS
            else:
                rows = max(1, int(BATCH_BYTES // max(self._per_row, 1.0)))
            part = batch.part(start, min(size, start + rows))
            held = part.read_blobs(self.reading, self.places, self.roles)
            self._count_blobs()
            seen = len(part)
            self._per_row = held / seen if self._per_row is None else \
                max(held / seen, 0.75 * self._per_row + 0.25 * held / seen)
            start += seen
            yield part

    def _count_blobs(self) -> None:
        """What the reading found undecodable or cut in the blob columns it read, in the notes."""
        assert self.reading is not None
        kinds, cut = self.reading.take_counts()
        if self.notes is not None:
            counts = self.notes.counts
            counts.add_kinds(kinds)
            counts.undecodable += sum(kinds.values())
            counts.cut += cut

    def typed_by(self, sample_rows: int | None = None, schema: Any = None) -> None:
        """Its kinds read from its first `sample_rows` rows (None: SAMPLE_ROWS), and `schema`'s
        types given its columns and the paths inside them (payload.columns.given_types: a
        pyarrow.Schema, or a mapping of names or paths to types or type names); before the kinds
        are fixed. ValueError, one line, for a schema its columns do not take."""
        if sample_rows is not None:
            self.sample_rows = sample_rows
        if schema is not None:
            self._given = given_types(self.columns, schema)

    def fixed(self, reading: BlobReading | None = None) -> list[AnswerColumn]:
        """The columns with their kinds fixed (see the class doc): given (typed_by), else read
        from the first `sample_rows` rows where a kind is read from values, or fewer where their
        blobs decode to more than BATCH_BYTES. `reading`: how the sampled blobs decode (default
        the answer's own)."""
        if self._fixed is not None:
            return self._fixed
        reading = reading or self.reading or BlobReading(_default_decoding())
        columns = with_given(self.columns, self._given, whole=True)
        if any(c.kind is None and c.inferred for c in columns):
            rows = sum(len(b) for b in self._ahead)
            # (and no more than about one part's decoded blobs: a stream of megabyte values gives
            # its first batch before the whole of a small table is read, in flat memory)
            while rows < self.sample_rows and rows * (self._per_row or 0.0) < BATCH_BYTES:
                batch = self._next()
                if batch is None:
                    break
                self._ahead.append(batch)
                rows += len(batch)
            sample = [b.columns(len(self.columns)) for b in self._ahead]
            if rows > self.sample_rows:  # the sample is its first rows, whatever the batches' sizes
                sample = _first_rows(sample, self.sample_rows)
        else:
            sample = []
        self._fixed = with_given(fix_kinds(columns, sample, reading, self.places), self._given, whole=False)
        return self._fixed

    def fix(self, kinds: Sequence[Kind | None]) -> None:
        """The columns' kinds given, one a column (None: its own, where nothing is read from a
        sample), instead of read from this answer's sample: a part of an answer (a partition, a
        projection) typed as the whole was, so that every part has one schema."""
        self._fixed = [replace(c, kind=k) if k is not None else replace(c, kind=c.kind or c.seed)
                       for c, k in zip(self.columns, kinds, strict=True)]

    def __iter__(self) -> Iterator[AnswerBatch]:
        while self._ahead:
            yield self._ahead.pop(0)
        while (batch := self._next()) is not None:
            yield batch

    def pages(self) -> Iterator[list[Row]]:
        """The batches as plain lists of rows."""
        for batch in self:
            yield batch.rows

    def close(self) -> None:
        self._ahead.clear()
        self._parts = None
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


def _first_rows(batches: list[list[ColumnValues]], rows: int) -> list[list[ColumnValues]]:
    """The first `rows` rows of batches of columns."""
    out: list[list[ColumnValues]] = []
    for columns in batches:
        if rows <= 0:
            break
        size = len(columns[0]) if columns else 0
        out.append(columns if size <= rows else [c[:rows] for c in columns])
        rows -= size
    return out


def _default_decoding() -> Any:
    from cqlsh_ext.payload.places import Decoding

    return Decoding()


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
