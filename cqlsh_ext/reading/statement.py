"""A statement the server answers as it is written (a SELECT with no payload path, DESCRIBE TABLE on
Cassandra 4 and later): its typed answer, the server's pages as batches, its columns typed by the
result's metadata. What cqlsh itself runs for such a statement (perform_simple_statement), read
here as data for the front ends that have no shell's printing to go through (`cqlsh-ext mcp`).

    answer = read_statement(ctx, "SELECT keyspace_name FROM system_schema.keyspaces")
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cqlsh_ext.reading.typed import BLOB, CQL, AnswerColumn, ReadNotes, TypedAnswer

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext

Row = tuple[Any, ...]

#: Rows a page of the server's holds when the context sets none (cqlsh's own page size).
PAGE_ROWS = 100


def server_error(err: BaseException) -> str:
    """A server's refusal as cqlsh says it ('InvalidRequest: Error from server: ...'): the
    exception's class and its message."""
    message = getattr(err, "message", None)
    return f"{type(err).__name__}: {message if message is not None else err}"


def read_statement(ctx: ReadContext, text: str, fetch_size: int | None = None,
                   consistency: int | None = None) -> TypedAnswer | None:
    """The server's answer to `text`, page by page (`fetch_size`, else the context's page size);
    None when the server refuses it (ctx.error said so, as cqlsh says it). The context's stop
    ends it at a page boundary (its notes say so)."""
    from cassandra.query import SimpleStatement

    from cqlsh_ext.cql.types import from_driver
    from cqlsh_ext.scanning.scan import execute_tuples

    level = ctx.consistency if consistency is None else consistency
    statement = SimpleStatement(text, consistency_level=level,
                                serial_consistency_level=ctx.serial_consistency,
                                fetch_size=fetch_size or ctx.page_size or PAGE_ROWS)
    try:  # rows as tuples, whatever the session's own factory (cqlsh's makes ordered dicts)
        result = execute_tuples(ctx.session, statement, timeout=ctx.timeout).result()
    except Exception as err:
        ctx.error(server_error(err))
        return None
    names = list(result.column_names or [])
    types = list(result.column_types or [])
    if len(types) != len(names):
        types = [None] * len(names)
    columns = [AnswerColumn(name, BLOB if t is not None and from_driver(t).is_blob else CQL, t)
               for name, t in zip(names, types, strict=True)]
    notes = ReadNotes(None)
    return TypedAnswer(columns, _pages(ctx, result, notes), notes)


def _pages(ctx: ReadContext, result: Any, notes: ReadNotes) -> Iterator[list[Row]]:
    while True:
        rows = list(result.current_rows)
        notes.rows += len(rows)
        yield rows
        if not result.has_more_pages:
            return
        if ctx.stop.is_set():
            notes.cancelled = True
            return
        result.fetch_next_page()
