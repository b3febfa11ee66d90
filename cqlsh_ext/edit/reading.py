"""What a write to stored values reads first: the rows an edit or a COMPRESSION REWRITE finds, each
with its key, the blob as stored (and its view, decoded once), the cell's write time and TTL.

The one place these reads are made: the reading's plan is built from its parts (the key columns,
the blob's column, the WHERE the payload-query parser read from the statement's own tokens,
query.grammar.where_at), never spelt as a SELECT and parsed again (query.grammar.reading), and its
rows are read by the shell's scanner and evaluator (the one reading, reading.select.read_select, for
an edit; a token-range Scanner a page at a time for a rewrite, `PageCells`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.edit.journal import BlobTarget, expiry
from cqlsh_ext.edit.write import Mechanism, selected_text

if TYPE_CHECKING:
    from cqlsh_ext.query.grammar import Plan, Schema, Where
    from cqlsh_ext.upstream.protocol import Shell

#: The answer's columns of the cell's write time and TTL (SELECT ... AS).
WRITETIME_ALIAS = "cqlsh_ext_writetime"
TTL_ALIAS = "cqlsh_ext_ttl"


@dataclass
class CellRead:
    """One row as read for writing: its key (column -> the driver's value), the blob as the column
    holds it (bytes or text; None when null), the engine's view of it when the reading decoded it,
    the cell's write time (microseconds) and TTL (seconds left) as read, and when."""

    key: dict[str, Any]
    stored: Any
    view: Any
    writetime: int | None
    ttl: int | None
    read_at: float

    @property
    def expires(self) -> int | None:
        return expiry(self.ttl, self.read_at)


def extra_columns(blob: BlobTarget, mechanism: Mechanism) -> list[tuple[str, str]]:
    """The server's figures read with each row: the cell's TTL, and its write time for writes at
    write time + 1."""
    cell = selected_text(blob)
    out = [(f"WRITETIME({cell})", WRITETIME_ALIAS)] if mechanism.timestamped else []
    return [*out, (f"TTL({cell})", TTL_ALIAS)]


def plan_for(keyspace: str, meta: Any, schema: Schema, blob: BlobTarget, keys: Sequence[str], where: Where,
             allow_filtering: bool, confirm: bool, mechanism: Mechanism) -> Plan:
    """The reading's plan: the key columns, the blob's column, its write time and TTL, of the rows
    `where` finds (its payload conditions evaluated here). QueryError."""
    from cqlsh_ext.query.grammar import reading

    return reading(keyspace, meta.name, [*keys, blob.column], where, schema, allow_filtering, confirm,
                   extra_columns(blob, mechanism))


def inside(value: Any, blob: BlobTarget) -> Any:
    """The blob's value in the column's: a map of blobs' value by its key, a UDT's field."""
    if value is None or blob.container is None:
        return value
    if blob.container == "map":
        return value.get(blob.access)
    return getattr(value, str(blob.access), None)


def cells(rows: Sequence[Sequence[Any]], keys: Sequence[str], blob: BlobTarget, mechanism: Mechanism,
          read_at: float) -> list[CellRead]:
    """Answer rows of a reading's plan (keys, the column, [write time], TTL) as CellReads."""
    from cqlsh_ext.payload.view import BlobView

    n = len(keys)
    out = []
    for row in rows:
        value = row[n]
        view = value if isinstance(value, BlobView) else None
        stored = inside(view.stored if view is not None else value, blob)
        writetime = row[n + 1] if mechanism.timestamped else None
        ttl = row[-1]
        out.append(CellRead(dict(zip(keys, row[:n], strict=True)), stored, view, writetime, ttl, read_at))
    return out


def read_cells(shell: Shell, plan: Plan, schema: Schema, keyspace: str, meta: Any, keys: Sequence[str],
               blob: BlobTarget, mechanism: Mechanism) -> tuple[Any, Iterator[list[CellRead]]] | None:
    """The plan's rows read as a payload query reads them (the cost asked first, the whole-table
    plan, progress, Ctrl-C, retries): (the reading's summary, pages of CellReads), or None when it
    was refused or declined (said). A static column's partition is one row."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.reading.resolve import table_target
    from cqlsh_ext.reading.select import read_select

    target = table_target(shell.conn.metadata, keyspace, meta.name)
    if target is None:
        raise QueryError(f"unknown table {keyspace}.{meta.name}")
    answer = read_select(shell_context(shell), plan, target, 500, 500)
    if answer is None:
        return None
    reading, pages = answer.notes, answer.pages()

    def read() -> Iterator[list[CellRead]]:
        seen: set[tuple[Any, ...]] = set()
        static = len(keys) < len(meta.primary_key)
        for page in pages:
            found = cells(page, keys, blob, mechanism, time.time())
            if static:  # a static column: its partition's rows share it
                unseen = []
                for cell in found:
                    partition = tuple(cell.key.values())
                    if partition not in seen:
                        seen.add(partition)
                        unseen.append(cell)
                found = unseen
            yield found

    return reading, read()


class PageCells:
    """The reading's plan evaluated a page of the scanner's rows at a time (COMPRESSION REWRITE
    reads token ranges itself, to journal which are finished; Spark's executors too): the rows
    that meet the WHERE's payload conditions as CellReads. `decoding`: how the values read
    (payload.places.Decoding, plain data)."""

    def __init__(self, plan: Plan, keyspace: str, keys: Sequence[str], blob: BlobTarget, mechanism: Mechanism,
                 decoding: Any) -> None:
        from cqlsh_ext.query.answer import Answer
        from cqlsh_ext.query.evaluate import Evaluator

        self.answer = Answer(plan)
        self.evaluator = Evaluator(plan, decoding, keyspace)
        self.keys, self.blob, self.mechanism = list(keys), blob, mechanism

    def page(self, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[CellRead]:
        return cells(self.answer.add_page(self.evaluator, names, rows), self.keys, self.blob, self.mechanism,
                     time.time())
