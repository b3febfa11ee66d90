"""A statement the server answers as it is written (a SELECT with no payload path, DESCRIBE TABLE on
Cassandra 4 and later): its typed answer, the server's pages as batches, its columns typed by the
result's metadata. What cqlsh itself runs for such a statement (perform_simple_statement), read
here as data for the front ends that have no shell's printing to go through (`cqlsh-ext mcp`).

    answer = read_statement(ctx, "SELECT keyspace_name FROM system_schema.keyspaces")

The server's pages (`server_pages`, also the plain road of a payload query): each waited for with
the context's stop looked at every tenth of a second, so a stop (a client's cancellation, a time
limit) ends the reading at once, not after the page in flight; each row's Position
(reading.typed) is its page's paging state and its index, and a reading given a paging state goes
on from there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from cqlsh_ext.payload.columns import BLOB, CQL, AnswerColumn, BlobReading
from cqlsh_ext.payload.server_rows import ServerRows
from cqlsh_ext.reading.typed import (
    AnswerBatch,
    PagePositions,
    ReadNotes,
    TypedAnswer,
)

if TYPE_CHECKING:
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.scanning.scan import Binder

Row = tuple[Any, ...]

#: Rows a page of the server's holds when the context sets none (cqlsh's own page size).
PAGE_ROWS = 100
#: How often a wait for a page looks at the context's stop (seconds).
STOP_POLL = 0.1


class ServerPages:
    """The pages of one statement as the server pages it, from `paging_state` (None: its start).
    `first()` waits for the first page (raises what the driver raises); iterating yields
    (the paging state the page was asked with, its rows), the first page included. A stop seen
    while waiting or between pages ends it: `stopped` is then set and `resume_state` is the
    paging state of the page not given out. `pages_in`: each page's rows as the server sent them
    (scanning.pages_in: a payload.server_rows.ServerRows, read by the native core; a sequence of
    rows too), for a payload query's reader on the core (reading.select.takes_pages), never for
    the shell's stock results."""

    def __init__(self, ctx: ReadContext, statement: Any, paging_state: bytes | None = None,
                 pages_in: bool = False) -> None:
        from cqlsh_ext.scanning.scan import execute_tuples

        self.stop = ctx.stop
        self.wanted = ctx.wanted_rows
        #: The host and port read from, as an error names them (scanning.scan.error_text).
        self.where = ctx.where
        self.state = paging_state
        self.stopped = False
        self.resume_state: bytes | None = None
        self._arrived = threading.Event()
        self._future = execute_tuples(ctx.session, statement, timeout=ctx.timeout, paging_state=paging_state,
                                      pages_in=pages_in)
        # The driver calls these again for every page the future fetches.
        arrived = self._arrived
        self._future.add_callbacks(lambda _rows: arrived.set(), errback=lambda _err: arrived.set())
        self._result: Any = None

    def first(self) -> Any | None:
        """The first page's result (its column names and types), or None when stopped first."""
        self._result = self._wait()
        return self._result

    def _wait(self) -> Any | None:
        while not self._arrived.wait(STOP_POLL):
            if self.stop.is_set():
                self.stopped, self.resume_state = True, self.state
                return None
        return self._future.result()

    def __iter__(self) -> Iterator[tuple[bytes | None, Sequence[Row]]]:
        result = self._result if self._result is not None else self.first()
        while result is not None:
            rows: Sequence[Row] = result.current_rows
            if not isinstance(rows, ServerRows):  # a page as the server sent it stays whole
                rows = list(rows)
                if rows and isinstance(rows[0], dict):  # a session whose row factory makes dicts
                    rows = [tuple(r.values()) for r in rows]
            following = result.paging_state if self._future.has_more_pages else None
            yield self.state, rows
            if following is None:
                return
            self.state = following
            if self.stop.is_set():
                self.stopped, self.resume_state = True, following
                return
            self._arrived.clear()
            if self.wanted is not None:  # the pages that follow as big as the rows seen allow
                from cqlsh_ext.scanning.scan import adapt_page_size

                self.wanted -= len(rows)
                adapt_page_size(self._future, rows, self.wanted + 1)
            self._future.start_fetching_next_page()
            result = self._wait()


def sent_statement(text: str, fetch_size: int | None, consistency: int, serial_consistency: int,
                   bind: Binder | None = None) -> Any:
    """The statement sent for `text`: as written (a SimpleStatement), or, with a program's
    parameters (`bind`: the Python API's), prepared with them bound; at the page size (None: the
    whole answer in one page) and levels."""
    if bind is None:
        from cassandra.query import SimpleStatement

        return SimpleStatement(text, consistency_level=consistency,
                               serial_consistency_level=serial_consistency, fetch_size=fetch_size)
    statement = bind(text, None)
    statement.consistency_level = consistency
    statement.serial_consistency_level = serial_consistency
    statement.fetch_size = fetch_size
    return statement


def read_statement(ctx: ReadContext, text: str, fetch_size: int | None = None,
                   consistency: int | None = None, paging_state: bytes | None = None,
                   bind: Binder | None = None,
                   table: TableTarget | None | Literal[False] = False) -> TypedAnswer | None:
    """The server's answer to `text`, page by page (`fetch_size`, else the context's page size),
    from `paging_state` when given; None when the server refuses it (ctx.error said so, as cqlsh
    says it). The context's stop ends it at once (its notes say so, and where it would go on).
    `bind`: a program's parameters, bound into `text` prepared (sent_statement). `table`: the
    table the statement reads where the caller resolved it already (None: none known), so the
    statement is not lexed again; False: found here."""
    from cqlsh_ext.cql.types import from_driver

    level = ctx.consistency if consistency is None else consistency
    statement = sent_statement(text, fetch_size or ctx.page_size or PAGE_ROWS, level, ctx.serial_consistency,
                               bind)
    notes = ReadNotes(None)
    try:
        pages = ServerPages(ctx, statement, paging_state)
        result = pages.first()
    except Exception as err:
        from cqlsh_ext.scanning.scan import error_text

        ctx.error(error_text(err, ctx.where))
        return None
    if result is None:  # stopped before the first page came
        notes.cancelled, notes.resume = True, (pages.resume_state, 0)
        return TypedAnswer([], iter(()), notes)
    names = list(result.column_names or [])
    types = list(result.column_types or [])
    if len(types) != len(names):
        types = [None] * len(names)
    columns = [AnswerColumn(name, BLOB if t is not None and from_driver(t).is_blob else CQL, t)
               for name, t in zip(names, types, strict=True)]
    if table is False:
        table = _table(ctx, text)
    return TypedAnswer(columns, _pages(pages, notes), notes, None, places_in(ctx, table, names),
                       BlobReading(ctx.decoding()))


def _table(ctx: ReadContext, text: str) -> TableTarget | None:
    """The table the statement reads, None where our lexer does not find one."""
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.reading.resolve import statement_table

    try:
        return statement_table(ctx.cluster, ctx.keyspace, Lexed(text))[1]
    except Exception:  # a statement our lexer does not read (the server answered it): no table
        return None


def places_in(ctx: ReadContext, table: TableTarget | None, names: Sequence[str]) -> list[ValuePlace]:
    """Where each answer column's values sit: in the table the statement reads (column settings
    apply to blobs by it), else in no known table of the context's keyspace."""
    from cqlsh_ext.payload.places import ValuePlace

    return [table.place(name) if table is not None else ValuePlace(ctx.keyspace, None, name)
            for name in names]


def _pages(pages: ServerPages, notes: ReadNotes) -> Iterator[AnswerBatch]:
    try:
        for state, rows in pages:
            notes.counted.read += len(rows)
            notes.counted.matched += len(rows)
            # (the driver's rows: a statement as written never takes pages in)
            yield AnswerBatch(list(rows) if not isinstance(rows, list) else rows,
                              positions=PagePositions(state, 0, len(rows)))
    except Exception as err:  # a later page refused, the server gone: the rows so far stand
        from cqlsh_ext.scanning.scan import error_text

        notes.error, notes.resume = error_text(err, pages.where), (pages.state, 0)
        return
    if pages.stopped:
        notes.cancelled, notes.resume = True, (pages.resume_state, 0)
