"""What a write reads first: the rows an edit or a COMPRESSION REWRITE finds, each with its key,
the blob as stored (and its view, decoded once), the cell's write time and TTL, and its moment of
expiry counted from when its page's request was sent (writing.ttl).

The one place these reads are made: the reading's plan is built from its parts (the key columns,
the blob's column, the WHERE the payload-query parser read from the statement's own tokens,
query.grammar.where_at), never spelt as a SELECT and parsed again (query.grammar.reading), and its
rows are evaluated a page at a time (`PageCells`, the payload conditions the evaluator's): an
edit's read as a payload query reads them, by the one read plan (`read_rows`: the cost asked
first, progress, Ctrl-C, retries; in this process, where the scanner stamps each page), a
rewrite's by token ranges it reads itself, to journal which are finished (writing.ranges).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.writing.blob_target import BlobTarget, inside, selected_text
from cqlsh_ext.writing.mechanism import Mechanism
from cqlsh_ext.writing.ttl import expiry

if TYPE_CHECKING:
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.query.grammar import Plan, Schema, Where
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.scanning.plan import InProcessScan
    from cqlsh_ext.scanning.scan import Binder
    from cqlsh_ext.scanning.workers import WorkerScan
    from cqlsh_ext.settings import Settings

#: The answer's columns of the cell's write time and TTL (SELECT ... AS).
WRITETIME_ALIAS = "cqlsh_ext_writetime"
TTL_ALIAS = "cqlsh_ext_ttl"


@dataclass
class CellRead:
    """One row as read for writing: its key (column -> the driver's value), the blob as the column
    holds it (bytes or text; None when null), the engine's view of it when the reading decoded it,
    the cell's write time (microseconds) and TTL (seconds left) as read, and when its page's
    request was sent (epoch seconds)."""

    key: dict[str, Any]
    stored: Any
    view: Any
    writetime: int | None
    ttl: int | None
    sent: float

    @property
    def expires(self) -> float | None:
        return expiry(self.ttl, self.sent)


@dataclass(frozen=True)
class LeftAlone:
    """Consecutive rows of a server's page the front end left as they are without their rows
    being made (Settles): their blobs as stored (None: null) and their keys' serialized sizes (the
    keys' cells' bytes, which the driver's to_binary of its values gives back)."""

    stored: list[bytes | None]
    key_sizes: list[int]


class Settles(Protocol):
    """The front end's decision, from a page's stored values alone, of which rows are left as they
    are (True), or None where it reads every row (rewrite.job.Examiner.settle)."""

    def settle(self, stored: Sequence[bytes | None]) -> list[bool] | None: ...


def write_decoding(settings: Settings) -> Decoding:
    """How a write reads values: the display's decoding, in auto mode when the display is off."""
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.settings import NONE

    decoding = settings.display.decoding()
    return Decoding("auto", decoding.cap, decoding.settings) if decoding.mode == NONE else decoding


def extra_columns(blob: BlobTarget, mechanism: Mechanism,
                  siblings: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The server's figures read with each row: a column whose value picks the blob's chain
    (`siblings`: payload.sibling), the cell's TTL (last), and its write time (just before the TTL)
    for writes at write time + 1."""
    cell = selected_text(blob)
    out = [(f"WRITETIME({cell})", WRITETIME_ALIAS)] if mechanism.timestamped else []
    return [*((name, name) for name in siblings), *out, (f"TTL({cell})", TTL_ALIAS)]


def sibling_columns(decoding: Decoding, keyspace: str, table: str, blob: BlobTarget) -> tuple[str, ...]:
    """The column whose value picks the blob's chain row by row (a `by` setting, payload.sibling),
    read with each row; none for a blob inside a collection or a column without one."""
    from cqlsh_ext.payload.places import Engines, ValuePlace

    if blob.container is not None:
        return ()
    column = Engines(decoding).sibling(ValuePlace(keyspace, table, blob.column))
    return () if column is None else (column,)


def plan_for(keyspace: str, meta: Any, schema: Schema, blob: BlobTarget, keys: Sequence[str], where: Where,
             allow_filtering: bool, confirm: bool, mechanism: Mechanism,
             siblings: Sequence[str] = ()) -> Plan:
    """The reading's plan: the key columns, the blob's column, the column picking its chain, its
    write time and TTL, of the rows `where` finds (its payload conditions evaluated here). QueryError."""
    from cqlsh_ext.query.grammar import reading

    return reading(keyspace, meta.name, [*keys, blob.column], where, schema, allow_filtering, confirm,
                   extra_columns(blob, mechanism, siblings))


def cells(rows: Sequence[Sequence[Any]], keys: Sequence[str], blob: BlobTarget, mechanism: Mechanism,
          sent: float) -> list[CellRead]:
    """Answer rows of a reading's plan (keys, the column, [write time], TTL) as CellReads."""
    from cqlsh_ext.payload.view import BlobView

    n = len(keys)
    out = []
    for row in rows:
        value = row[n]
        view = value if isinstance(value, BlobView) else None  # (the Python engine's whole view: PageCells)
        stored = inside(view.stored if view is not None else value, blob)
        writetime = row[-2] if mechanism.timestamped else None  # (just before the TTL)
        ttl = row[-1]
        out.append(CellRead(dict(zip(keys, row[:n], strict=True)), stored, view, writetime, ttl, sent))
    return out


class PageCells:
    """The reading's plan evaluated a page of the scanner's rows at a time: the rows that meet the
    WHERE's payload conditions as CellReads (a static column's partition once: its rows share it).
    `decoding`: how the values read (payload.places.Decoding, plain data). It is the Aggregate an
    edit's reading fills (scanning.aggregate: each page's cells drained as they are found).

    The values it reads (a payload condition's, a sibling's chain) are read by the Python engine,
    the blob given as its whole view (payload.program.Given.full): the writer re-encodes a value
    from its layers and payload bytes, which the native core's held reading does not give, so the
    one reading of a value is the one the writer needs."""

    def __init__(self, plan: Plan, keyspace: str, keys: Sequence[str], blob: BlobTarget, mechanism: Mechanism,
                 decoding: Any, static: bool = False) -> None:
        from cqlsh_ext.payload.program import Given
        from cqlsh_ext.query.answer import Answer
        from cqlsh_ext.query.evaluate import Evaluator

        self.plan, self.keyspace, self.decoding = plan, keyspace, decoding
        self.answer = Answer(plan)
        self.evaluator = Evaluator(plan, decoding, keyspace, Given(full=True))
        self.keys, self.blob, self.mechanism, self.static = list(keys), blob, mechanism, static
        self._seen: set[tuple[Any, ...]] = set()
        # The Aggregate's side (scanning.aggregate).
        self.names: list[str] = []
        self.sent = 0.0
        self.pending: list[list[CellRead]] = []
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""

    @property
    def settles_pages(self) -> bool:
        """A rewrite's scan may hand this reading the server's pages whole (scanning.pages_in): the
        value engine reads pages whole (payload.running.reads_pages_whole), the blob is a bare
        column, no payload condition is evaluated and no partition is read once for its static
        column (page_in() then decides rows from their cells). Not the Aggregate's `pages_in`: an
        edit's reading makes every row it finds."""
        from cqlsh_ext.payload.running import reads_pages_whole
        from cqlsh_ext.scanning import pages_in

        return (pages_in.enabled() and reads_pages_whole() and self.blob.container is None and not self.static
                and not self.plan.predicates and not self.evaluator.places)

    def page_in(self, names: Sequence[str], rows: Sequence[Sequence[Any]], sent: float,
                front: Settles) -> Iterator[CellRead | LeftAlone]:
        """page(), where `front` may leave rows as they are from the page's cells alone: of a
        server's page (pages in, self.settles_pages), the blob's and the key's cells are split out
        of its bytes by the core, and only the rows it does not leave are made (ServerRows.make: the
        driver's row parser, the bytes stored exactly as the driver gives them) and read; in the page's
        order."""
        from cqlsh_ext.payload.server_rows import ServerRows

        wanted = [self.blob.column, *self.keys]
        if not isinstance(rows, ServerRows) or not self.settles_pages or not set(wanted) <= set(names) \
                or not rows.holds_blobs(names.index(self.blob.column)):
            yield from self.page(names, rows, sent)
            return
        blobs, *keys = rows.cells([names.index(name) for name in wanted])
        left = front.settle(blobs)
        if left is None:
            yield from self.page(names, rows, sent)
            return
        made = [k for k, alone in enumerate(left) if not alone]
        rows.make(made)
        found = iter(self.page(names, [rows[k] for k in made], sent))
        self.answer.counts.read += len(left) - len(made)  # (the rows read, those left alone too)
        run: list[int] = []
        for k, alone in enumerate(left):
            if alone:
                run.append(k)
                continue
            if run:
                yield self._left_alone(run, blobs, keys)
                run = []
            yield next(found)
        if run:
            yield self._left_alone(run, blobs, keys)

    @staticmethod
    def _left_alone(run: list[int], blobs: list[bytes | None], keys: list[list[bytes | None]]) -> LeftAlone:
        return LeftAlone([blobs[k] for k in run],
                         [sum(len(column[k] or b"") for column in keys) for k in run])

    def page(self, names: Sequence[str], rows: Sequence[Sequence[Any]], sent: float) -> list[CellRead]:
        """A page's rows that meet the conditions; `sent`: when its request was sent."""
        found = cells(self.answer.add_page(self.evaluator, names, rows), self.keys, self.blob, self.mechanism,
                      sent)
        if not self.static:
            return found
        unseen = []
        for cell in found:
            partition = tuple(cell.key.values())
            if partition not in self._seen:
                self._seen.add(partition)
                unseen.append(cell)
        return unseen

    # ---------------------------------------------------------------- the Aggregate
    @property
    def rows(self) -> int:
        return int(self.answer.counts.read)

    def fresh(self) -> PageCells:
        return PageCells(self.plan, self.keyspace, self.keys, self.blob, self.mechanism, self.decoding,
                         self.static)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self.names = list(names)

    def page_sent(self, sent: float) -> None:
        self.sent = sent

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.pending.append(self.page(self.names, rows, self.sent))

    def drain(self) -> list[list[CellRead]]:
        out, self.pending = self.pending, []
        return out

    def merge(self, other: PageCells) -> None:
        self.answer.merge(other.answer)


class RowsRead:
    """An edit's rows, read as they are taken: `pages()` gives a page of CellReads at a time; then
    `error` (one line) and `interrupted` (Ctrl-C) say how the reading ended."""

    def __init__(self, run: InProcessScan[PageCells] | WorkerScan[PageCells], cells: PageCells) -> None:
        self.run = run
        self.cells = cells

    def pages(self) -> Iterator[list[CellRead]]:
        for drained in self.run:
            yield from drained

    @property
    def error(self) -> str | None:
        return self.cells.error

    @property
    def interrupted(self) -> bool:
        return self.cells.interrupted


def read_rows(ctx: ReadContext, plan: Plan, meta: Any, keys: Sequence[str], blob: BlobTarget,
              mechanism: Mechanism, decoding: Decoding, bind: Binder | None = None) -> RowsRead | None:
    """The plan's rows read as a payload query reads them (the cost asked first, the whole-table
    plan, progress, Ctrl-C, retries), in this process: a RowsRead, or None when it was refused or
    declined (said). `bind`: a program's parameters, bound into the server's statement where its
    WHERE holds markers (db.edit's)."""
    from cqlsh_ext.reading.select import LABEL
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table
    from cqlsh_ext.scanning.scan import error_text

    try:
        ctx.session.prepare(plan.server_statement)
    except Exception as err:  # the server refuses the ordinary part: its one line
        ctx.error(error_text(err))
        return None
    static = len(keys) < len(meta.primary_key)
    found = PageCells(plan, meta.keyspace_name, keys, blob, mechanism, decoding, static)
    label = f"SELECT {meta.keyspace_name}.{meta.name}"
    if plan.reads_beyond_partitions and not plan.server_where:
        ask = FullScanQuestion(
            LABEL, "Add CONFIRM after ALLOW FILTERING to run it from a script, or name partitions in the "
            "WHERE.", "Scan the whole table? [y/N] ", plan.confirm)
        # One process: the scanner stamps each page's request (a worker's rows would come back late).
        scan = whole_table(ctx, plan.server_statement.removesuffix(" ALLOW FILTERING"), meta, ask, workers=1)
        if scan is None:
            return None
        progress = ctx.progress(label, True, scan.size.partitions if scan.size is not None else None)
    else:
        scan = ReadPlan(plan.server_statement, bind=bind)
        progress = ctx.progress(label, plan.reads_beyond_partitions, None)
    return RowsRead(scan.read(ctx, found, progress), found)
