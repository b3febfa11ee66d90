"""What each result printed, and --max-rows: every result's rows pass here on their way out (the
result pipeline's stock results, a typed answer's batches), are counted, and are cut at the run's
--max-rows on purpose; a result cut so keeps where it goes on from (`Printed.resume`, a Position:
the paging state its page was asked with, and how many rows of that page were printed before),
which a later run hands back (`RowLimit.start`) to go on exactly from the next row. A result
stopped between two rows (--timeout) goes on from the row after the last one shown
(`Printed.stopped_at`), from the Positions of the rows it gave out.

A stock result's page knows the paging state it was asked with from output.paging, which keeps it
as each page is fetched (`page_state`); a typed answer's rows carry their Positions
(reading.typed.AnswerBatch.positions), where its reading can go on from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.common.interrupt import CtrlC

#: A row's place in a reading: (the paging state its page was asked with, its index in the page).
Position = tuple["bytes | None", int]
#: Why a result ended before its last row, as --stats names it.
MAX_ROWS = "max_rows"
#: Why a result's rows may be wrong: a path no value read had.
PATH_NOT_FOUND = "path_not_found"


class Printed:
    """One result as it was printed: its rows taken to be printed (`rows`: --max-rows' room), those
    written out (`shown`: a Ctrl-C or --timeout may stop it between the two), whether --max-rows cut
    it (`cut`), and where it goes on from (`resume`: None when it was not cut, or the reading cannot
    go on from its rows). (A plain class: the module is imported at every start-up, where a
    dataclass costs its making.)"""

    __slots__ = ("cut", "doubt", "marks", "resume", "rows", "shown", "start", "why_not")

    def __init__(self, start: Position = (None, 0)) -> None:
        self.rows = 0
        self.shown = 0
        self.cut: str | None = None
        self.resume: Position | None = None
        #: Why its rows may be wrong though none was cut (PATH_NOT_FOUND: a path no value read had,
        #: a typo's column of nulls), else None: the run's answer is then not exact (--stats).
        self.doubt: str | None = None
        #: Why a cut result cannot be gone on with (its reading's words), when `resume` is None.
        self.why_not: str | None = None
        #: Where its reading started (a resumed SELECT's token's Position, else the first row's).
        self.start = start
        #: The batches of a typed answer given out and not yet all shown, with the first row shown
        #: after: (its index in the result, its rows' Positions, the first of them given out, how
        #: many): where a stop between two rows goes on from (stopped_at); None: its reading has none.
        self.marks: list[tuple[int, Any, int, int]] | None = []

    def gave(self, positions: Any, first: int, count: int) -> None:
        """`count` rows of a batch whose Positions are `positions` (None: none), from its `first`
        on, given out to be printed after the result's `rows` so far."""
        marks = self.marks
        if marks is None:
            return
        if positions is None:
            self.marks = None
            return
        while marks and marks[0][0] + marks[0][3] < self.shown:  # before the last row shown
            del marks[0]
        marks.append((self.rows, positions, first, count))

    def stopped_at(self) -> Position | None:
        """Where its reading goes on from when it was stopped after the rows shown (--timeout): the
        row after the last one shown (read again from its page, that page's rows up to it left
        out), or where it started when none was; None when its reading has no positions."""
        shown, marks = self.shown, self.marks
        if marks is None:
            return None
        if not shown:
            return self.start
        for at, positions, first, count in marks:
            if at <= shown - 1 < at + count:
                state, index = positions[first + shown - 1 - at]
                return state, index + 1
        return None


class RowLimit:
    """The run's --max-rows (`most`: None, every row) and what each result printed (`printed`)."""

    def __init__(self, most: int | None = None) -> None:
        self.most = most
        self.printed: list[Printed] = []
        #: Where the next result starts (a resumed SELECT's): the paging state its first page is
        #: asked with and the rows of that page printed before, which are left out; and the rows
        #: printed before it in all (a payload query's LIMIT counts them).
        self.start: Position | None = None
        self.before = 0

    def reading_start(self) -> tuple[bytes | None, int]:
        """Where a reading of the next result starts (reading.select's paging_state, and `given`:
        the rows given out before its first page), without taking it (the result takes it)."""
        if self.start is None:
            return None, 0
        state, skip = self.start
        return state, max(0, self.before - skip)

    def _begin(self) -> tuple[Printed, Position]:
        start, self.start = self.start or (None, 0), None
        printed = Printed(start)
        self.printed.append(printed)
        return printed, start

    def shown(self, count: int) -> None:
        """`count` rows of the result being printed were written out (the writers, each table page)."""
        if self.printed:
            self.printed[-1].shown += count

    def counted(self, rows: Iterable[Any], stop: CtrlC) -> Iterator[Any]:
        """`rows` as a writer writes them, each one counted shown once the writer asks for the next
        (it was written) or for none (the last); none after `stop` (a CtrlC) was pressed."""
        taken = 0
        for row in rows:
            if taken:
                self.shown(1)
                taken = 0
            if stop.pressed:
                return
            taken = 1
            yield row
        self.shown(taken)

    def _room(self, printed: Printed) -> int | None:
        return None if self.most is None else max(0, self.most - printed.rows)

    def stock(self, result: Any) -> Any:
        """A stock result (a driver ResultSet) walked in pages (output.paging.paged), each page
        counted and the last one cut at --max-rows; returns it."""
        from cqlsh_ext.output.paging import PAGE_STATE, paged, settle

        printed, (state, skip) = self._begin()
        setattr(result, PAGE_STATE, state)  # what its first page was asked with
        result = paged(result)
        fetch = result.fetch_next_page
        leave_out = [skip]

        def take() -> None:
            rows = list(result.current_rows)
            offset, leave_out[0] = leave_out[0], 0
            rows = rows[offset:]
            room = self._room(printed)
            state = getattr(result, PAGE_STATE, None)
            if room is not None and len(rows) > room:
                printed.cut, printed.resume = MAX_ROWS, (state, offset + room)
                rows = rows[:room]
                settle(result)
                result.response_future = _Ended(result.response_future)
            result._current_rows = rows
            printed.gave(_PagePlaces(state, offset), 0, len(rows))
            printed.rows += len(rows)

        def fetch_next_page() -> None:
            fetch()
            take()

        take()
        result.fetch_next_page = fetch_next_page
        return result

    def answer(self, answer: Any) -> Iterator[list[Any]]:
        """A typed answer's batches (reading.typed.TypedAnswer) as lists of rows, counted, the last
        cut at --max-rows (its notes then say the output was closed there). Its values are counted
        as its reading counts them (VALUES.reading), not as they are written."""
        VALUES.held = True
        try:
            yield from self._answer_rows(answer)
        finally:
            VALUES.held = False
            VALUES.reading(answer.notes)
            if self.printed and answer.notes is not None and answer.notes.paths_never_found_count:
                self.printed[-1].doubt = PATH_NOT_FOUND

    def _answer_rows(self, answer: Any) -> Iterator[list[Any]]:
        printed, (_, skip) = self._begin()
        for batch in answer:
            rows, positions = batch.rows, batch.positions
            first = 0
            if skip:
                first = min(skip, len(rows))
                skip -= first
            room = self._room(printed)
            if room is not None and len(rows) - first > room:
                printed.cut = MAX_ROWS
                printed.resume = positions[first + room] if positions is not None else None
                printed.gave(positions, first, room)
                printed.rows += room
                notes = answer.notes
                if notes is not None:
                    notes.output_closed = True
                    notes.closed_by = f"at --max-rows {self.most:,}"
                if room:
                    yield list(rows[first:first + room])
                return
            printed.gave(positions, first, len(rows) - first)
            printed.rows += len(rows) - first
            yield list(rows[first:]) if first else rows


class ValueCounts:
    """The blob values written out (a cell of every output format, shown or written to a file)
    that decoded, and those that did not (in no known format, or failing to decode)."""

    def __init__(self) -> None:
        self.decoded = 0
        self.undecodable = 0
        #: A typed answer is being written: its reading counts its values (reading()), not its writer.
        self.held = False

    def reading(self, notes: Any) -> None:
        """What a typed answer's reading (reading.typed.ReadNotes) decoded of the values it read:
        its rows' blobs (a payload query's every row read, a path found in it or not), those that
        did not decode."""
        if notes is None:
            return
        undecodable = int(notes.undecodable)
        self.undecodable += undecodable
        self.decoded += max(0, int(notes.rows_read) - undecodable)

    @cached_property
    def _undecoded(self) -> frozenset[str]:
        """payload.view's kinds of a value that did not decode, read at the first value counted: a
        statement with no blob never loads payload.view, and no value pays for an import."""
        from cqlsh_ext.payload.view import FAILED, UNKNOWN

        return frozenset((FAILED, UNKNOWN))

    def count(self, kind: str) -> None:
        """One value of view kind `kind` (payload.view: UNKNOWN and FAILED did not decode)."""
        if self.held:
            return
        if kind in self._undecoded:
            self.undecodable += 1
        else:
            self.decoded += 1


#: The process's count (--stats reads it): the writers and the display count each value they write.
VALUES = ValueCounts()


class _PagePlaces:
    """The Positions of a stock result's page's rows, from its `first` on (without a tuple made
    per row: one is made when a stop asks where it goes on from)."""

    __slots__ = ("first", "state")

    def __init__(self, state: bytes | None, first: int) -> None:
        self.state, self.first = state, first

    def __getitem__(self, i: int) -> Position:
        return self.state, self.first + i


class _Ended:
    """A ResultSet's future once --max-rows cut it: no more pages; everything else the real one's."""

    def __init__(self, future: Any) -> None:
        self._future = future

    has_more_pages = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._future, name)
