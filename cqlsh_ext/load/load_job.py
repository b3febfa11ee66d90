"""A load's work (docs/load.md), made from its request (writing.requests.LoadRequest: the shell's
COPY ... FROM, db.write's, or a journal's sealed head for RESUME): the table, its columns
(load.encoded_values.Columns) and the rows (load.source); and the pass over the rows that both the preview
and the run make, a window at a time: each row's key and values (its blobs encoded and verified,
or the row refused), the cells it writes read by key (writing.row_loads), the row counted new,
overwritten or already as loaded; with CONFIRM, each window's rows journaled (one fsync) before
they are sent, a partition's rows a request, as the pace allows (writing.pace), and each row's
outcome journaled as it comes.
"""

from __future__ import annotations

import hashlib
import os
import queue
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import visible
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.load.encoded_values import (
    AS_GIVEN,
    Columns,
    Pending,
    PreparedRow,
    RowRefused,
    assumed_utc,
    known_columns,
)
from cqlsh_ext.writing.blob_target import BlobTarget, key_text

if TYPE_CHECKING:
    from cqlsh_ext.load.source import SourceRow
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.mechanism import Mechanism
    from cqlsh_ext.writing.pace import Pace
    from cqlsh_ext.writing.requests import LoadRequest
    from cqlsh_ext.writing.row_loads import OldRow, RowLoads
    from cqlsh_ext.writing.write_context import WriteContext

LABEL = "COPY FROM"
#: Requests a load keeps in flight at most (a partition's rows a request).
IN_FLIGHT = 32
#: Refused rows named one by one (the rest counted by reason).
NAMED_REFUSALS = 20
#: Rows to write whose changes a preview shows, field by field (as an edit's preview does).
SHOWN_ROWS = 3
#: Why a row whose key an earlier row of the source has is not written.
TWICE = "its key is loaded twice (an earlier row of the source has it): the first is written"


@dataclass
class LoadFigures:
    """What a load found (the preview) and did (CONFIRM): the source's rows, those refused by
    reason (and the first named: "key: reason"), new, overwritten, already as loaded (not
    written); the loaded columns' stored bytes of the rows overwritten before, of the rows written
    after; write units in Amazon Keyspaces' terms (1 per started KB of a row's key and values) and
    the read units of reading the rows first; the chain each blob value is written in, by column.
    After CONFIRM: the rows written, those not sent when it stopped, why it stopped (''), whether a
    failure stopped it, the journal."""

    rows: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    named: list[str] = field(default_factory=list)
    new: int = 0
    overwritten: int = 0
    unchanged: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    units: int = 0
    read_units: int = 0
    chains: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Rows new to the table whose source cannot say what a document holds, by what (the preview
    #: says so, and RAW: encoded_values.UNSAID_NULLS, UNSAID_NAMES).
    unsaid: dict[str, int] = field(default_factory=dict)
    #: Rows whose timestamp key the source gave without a time zone (taken as UTC).
    assumed_utc: int = 0
    written: int = 0
    #: Of the rows written, those that were new and those overwritten.
    written_new: int = 0
    written_overwritten: int = 0
    not_sent: int = 0
    #: Rows whose write failed (whether it applied is unknown: UNDO and RESUME look at them).
    unknown: int = 0
    stop: str = ""
    failed: bool = False
    journal: str | None = None
    interrupted: bool = False
    #: Rows RESUME found journaled before (done, or looked up: in flight at the kill).
    done_before: int = 0

    @property
    def to_write(self) -> int:
        return self.new + self.overwritten

    def refuse(self, text: str, reason: str, group: str | None = None) -> None:
        """A row refused: counted under `group` (else its reason, cut where long), named with its
        reason among the first."""
        short = group if group is not None else reason.split(" (", 1)[0] if len(reason) > 120 else reason
        self.refused[short] = self.refused.get(short, 0) + 1
        if len(self.named) < NAMED_REFUSALS:
            self.named.append(f"{text}: {reason}")


@dataclass(frozen=True)
class LoadJob:
    """A load: its request, the table's columns as the request names them, how rows are written."""

    request: LoadRequest
    columns: Columns
    mechanism: Mechanism
    default_ttl: int
    meta: Any

    @property
    def name(self) -> str:
        return f"{self.request.keyspace}.{self.meta.name}"

    @property
    def head_blob(self) -> BlobTarget:
        """The journal's column: the first written (a load's lines name each cell's)."""
        first = self.columns.written[0]
        return BlobTarget(first.name, holds_text=not first.blob)


def job_for(ctx: WriteContext, request: LoadRequest) -> LoadJob:
    """The load `request` asks for; QueryError or WriteRefused for what is refused before anything
    is read."""
    from cqlsh_ext.rewrite.job import table_meta
    from cqlsh_ext.writing.blob_target import refuse_system
    from cqlsh_ext.writing.cell_reads import write_decoding
    from cqlsh_ext.writing.mechanism import choose
    from cqlsh_ext.writing.refused import WriteRefused

    refuse_system(request.keyspace)
    meta = table_meta(ctx, request.keyspace, request.table)
    if meta is None:
        raise QueryError(f"unknown table {request.keyspace}.{request.table}")
    decoding = write_decoding(ctx.settings)
    columns = Columns(request.keyspace, meta, request.columns, request.encode, decoding, decoding.cap,
                      python=request.format == "data")
    keys = [c.name for c in columns.keys]
    first = columns.written[0]
    mechanism = choose(ctx, request.keyspace, meta.name, BlobTarget(first.name), keys)
    if not mechanism.timestamped:
        raise WriteRefused(f"a load writes at timestamps, and {mechanism.why}")
    default_ttl = int((getattr(meta, "options", None) or {}).get("default_time_to_live", 0) or 0)
    return LoadJob(request, columns, mechanism, default_ttl, meta)


def row_loads(ctx: WriteContext, job: LoadJob) -> RowLoads:
    from cqlsh_ext.writing.row_loads import RowLoads

    columns = job.columns
    return RowLoads(ctx.session, job.request.keyspace, job.meta.name, columns.partition_key,
                    columns.clustering, [c.name for c in columns.written], ctx.consistency, job.request.ttl)


@dataclass
class _Batch:
    """A request in flight: its rows (PreparedRow), their journal lines' numbers, what it costs,
    how many of its rows are new."""

    rows: list[PreparedRow]
    numbers: list[int]
    units: int
    request: Any
    attempts: int = 0
    retried: bool = False
    new: int = 0


@dataclass
class _Item:
    """A row to send: its journal lines' numbers, its write units, its bound statement, whether
    it is new."""

    prepared: PreparedRow
    numbers: list[int]
    units: int
    bound: Any
    new: bool


def _chunks(items: list[_Item], partition_columns: int) -> list[list[_Item]]:
    """The rows a request each: a partition's rows together, at most BATCH_ROWS and BATCH_BYTES."""
    from cqlsh_ext.writing.row_loads import BATCH_BYTES, BATCH_ROWS

    groups: dict[tuple[bytes, ...], list[_Item]] = {}
    for item in items:
        groups.setdefault(item.prepared.serialized[:partition_columns], []).append(item)
    chunks: list[list[_Item]] = []
    for members in groups.values():
        chunk: list[_Item] = []
        size = 0
        for item in members:
            row_size = sum(len(v) for v in item.prepared.values if isinstance(v, bytes | str))
            if chunk and (len(chunk) >= BATCH_ROWS or size + row_size > BATCH_BYTES):
                chunks.append(chunk)
                chunk, size = [], 0
            chunk.append(item)
            size += row_size
        if chunk:
            chunks.append(chunk)
    return chunks


class Pass:
    """One pass over the source's rows (see the module doc): the preview's (`journal` None) or the
    run's. `skip`: source positions journaled before (RESUME)."""

    def __init__(self, ctx: WriteContext, job: LoadJob, loads: RowLoads, journal: Journal | None = None,
                 pace: Pace | None = None, skip: frozenset[int] = frozenset(), out: Any = None) -> None:
        self.ctx, self.job, self.loads, self.journal, self.pace = ctx, job, loads, journal, pace
        self.skip = skip
        self.out = out if out is not None else ctx.out
        self.figures = LoadFigures()
        self._seen: set[bytes] = set()
        #: Each row to write (by id of its PreparedRow): its stored bytes before and after, and its
        #: cells before (None: a new row).
        self._sizes: dict[int, tuple[int, int, list[bytes | None] | None]] = {}
        self._outcomes: queue.Queue[tuple[_Batch, BaseException | None]] = queue.Queue()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.failure = ""
        self.stopping = False
        self.hard_stop = False
        #: The journal's next line number.
        self.number = journal.rows if journal is not None else 0
        ttl = job.request.ttl if job.request.ttl is not None else (job.default_ttl or None)
        #: Each cell written expires this many seconds after its write, or never (None).
        self.cell_ttl = ttl
        #: Where the source's file stood after the window being written (journaled with its rows).
        self.read: tuple[int, str] | None = None
        #: The source's file as the load opened it, its size and digest (journaled with each window).
        self.whole: tuple[int, str] | None = None
        #: The preview's first rows to write: each key and what its write changes (Columns.changes).
        self.shown: list[tuple[dict[str, Any], list[tuple[str, Any, Any]]]] = []
        source = job.request.source
        #: How a refusal names the source's row: the file's name before its line.
        self.file = "" if source is None else visible(os.path.basename(source), 60) + " "

    # ------------------------------------------------------------------ the rows
    def run(self, windows: Iterator[list[SourceRow]], stop: Callable[[], bool],
            tick: Callable[[], None] | None = None) -> LoadFigures:
        from cqlsh_ext.load.files import SourceError

        figures = self.figures
        try:
            try:
                for window in windows:
                    if stop() or self.failure:
                        self.stopping = True
                        break
                    figures.rows += len(window)
                    self.read = getattr(window, "read", None)
                    self.whole = getattr(window, "whole", None)
                    ready = self._ready(window)
                    if ready:
                        self._window(ready, stop, tick)
                    self._drain()
                    if tick is not None:
                        tick()
            except SourceError as err:
                if not figures.rows and not figures.done_before:
                    raise  # before the first row: nothing read, nothing written
                self.failure = self.failure or f"the source cannot be read on: {err}"
                figures.failed = True
            self._finish(tick)
        except KeyboardInterrupt:
            self.hard_stop = True
            figures.failed = True
        return figures

    def _ready(self, window: list[SourceRow]) -> list[PreparedRow]:
        """The window's rows prepared (keys, values encoded and verified, cells as stored bytes);
        those refused counted and named (the file's line or the row, the key, the column, why)."""
        columns, figures = self.job.columns, self.figures
        ready: list[PreparedRow] = []
        for row in window:
            if row.position in self.skip:
                figures.rows -= 1
                figures.done_before += 1
                continue
            where = self.file + row.where
            if row.refused is not None:
                figures.refuse(where, row.refused)
                continue
            try:
                key = columns.key_of(row)
            except RowRefused as err:
                figures.refuse(where, str(err), err.group)
                continue
            if assumed_utc(key):
                figures.assumed_utc += 1
            text = f"{where}, {key_text(dict(zip((c.name for c in columns.keys), key, strict=True)))}"
            try:
                serialized = tuple(self._serialized(key))
            except RowRefused as err:
                figures.refuse(text, str(err), err.group)
                continue
            digest = hashlib.blake2b(b"\0".join(len(s).to_bytes(4, "big") + s for s in serialized),
                                     digest_size=16).digest()
            if digest in self._seen:
                figures.refuse(text, TWICE)
                continue
            try:
                values, chains = columns.values_of(row)
                # (a document the stored one settles has its cell once settled: _window)
                cells = [None if isinstance(v, Pending) else self._cell(j, v) for j, v in enumerate(values)]
            except RowRefused as err:
                figures.refuse(text, str(err))
                continue
            self._seen.add(digest)
            ready.append(PreparedRow(row, key, serialized, values, chains, cells))
        return ready

    def _count(self, rows: list[PreparedRow]) -> None:
        """The stored bytes and chains of `rows` counted (the preview's rows to write, the run's
        written)."""
        figures, columns = self.figures, self.job.columns
        for prepared in rows:
            before, after, _cells = self._sizes.pop(id(prepared))
            figures.bytes_before += before
            figures.bytes_after += after
            for plan, chain in zip(columns.written, prepared.chains, strict=True):
                if plan.blob and chain:
                    counts = figures.chains.setdefault(plan.name, {})
                    counts[chain] = counts.get(chain, 0) + 1

    def _serialized(self, key: list[Any]) -> list[bytes]:
        """The key's values as the driver serializes them; RowRefused naming the column whose value
        its type does not take (an int past 32 bits, a text that UTF-8 cannot hold)."""
        loads = self.loads
        out = []
        for plan, kind, value in zip(self.job.columns.keys, loads.key_types, key, strict=True):
            try:
                out.append(loads.serialized_one(kind, value))
            except UnicodeEncodeError as err:
                raise RowRefused(f"{plan.name}: {_unencodable(err)}") from None
            except (TypeError, ValueError, OverflowError, struct.error):
                bounds = f"out of range for {_article(plan.cql_type)}{_RANGES.get(plan.cql_type, '')}"
                raise RowRefused(f"{plan.name}: {_brief(value)} is {bounds}",
                                 f"{plan.name}: {bounds}") from None
        return out

    def _cell(self, index: int, value: Any) -> bytes | None:
        """A written column's value as stored bytes; RowRefused for a text UTF-8 cannot hold."""
        try:
            return self.loads.cell_bytes(index, value)
        except UnicodeEncodeError as err:
            raise RowRefused(f"{self.job.columns.written[index].name}: {_unencodable(err)}") from None

    def _window(self, ready: list[PreparedRow], stop: Callable[[], bool],
                tick: Callable[[], None] | None) -> None:
        """The window's rows read, counted, and with a journal written."""
        from cqlsh_ext.scanning.capacity import rcu, wcu

        figures, loads, columns = self.figures, self.loads, self.job.columns
        sent_at = time.time()  # before the reads: a write made after them is later
        olds = loads.read([p.key for p in ready], [p.serialized for p in ready])
        # the stored documents the rows' are settled by, read a column at a time (not a value a call)
        views = columns.stored_views(ready, [None if old is None else old.values for old in olds])
        todo: list[tuple[PreparedRow, OldRow | None, int]] = []
        for prepared, old, stored_views in zip(ready, olds, views, strict=True):
            try:  # its documents against the stored ones (load.documents)
                columns.settle(prepared, None if old is None else old.values, stored_views)
            except RowRefused as err:
                key = key_text(dict(zip((c.name for c in columns.keys), prepared.key, strict=True)))
                figures.refuse(f"{self.file}{prepared.row.where}, {key}", str(err))
                continue
            for j, plan in enumerate(columns.written):  # (settle changes the blob values only)
                if plan.blob:
                    prepared.cells[j] = loads.cell_bytes(j, prepared.values[j])
            key_size = sum(len(s) for s in prepared.serialized)
            after = sum(len(b) for b in prepared.cells if b is not None)
            before = None if old is None else [loads.cell_bytes(j, v) for j, v in enumerate(old.values)]
            size = 0 if before is None else sum(len(b) for b in before if b)
            figures.read_units += rcu(key_size + size)
            if before == prepared.cells:
                figures.unchanged += 1
                continue
            for said in dict.fromkeys(prepared.unsaid):
                figures.unsaid[said] = figures.unsaid.get(said, 0) + 1
            if old is None:
                figures.new += 1
            else:
                figures.overwritten += 1
            self._sizes[id(prepared)] = (size, after, before)
            if self.journal is None:  # the preview's figures; the run's are the rows written
                self._count([prepared])
                if len(self.shown) < SHOWN_ROWS:
                    names = (c.name for c in columns.keys)
                    self.shown.append((dict(zip(names, prepared.key, strict=True)),
                                       columns.changes(None if old is None else old.values, prepared)))
            figures.units += wcu(key_size + after)
            todo.append((prepared, old, loads.timestamp(old, old.sent if old is not None else sent_at)))
        if self.journal is None or not todo:
            return
        self._send(todo, stop, tick)

    # ------------------------------------------------------------------ the writes
    def _send(self, todo: list[tuple[PreparedRow, OldRow | None, int]], stop: Callable[[], bool],
              tick: Callable[[], None] | None) -> None:
        """The window's rows journaled in one append (fsync'd before any is sent), then sent a
        partition's rows a request as the pace allows."""
        from cqlsh_ext.writing.journal import JournalError

        journal, pace, loads = self.journal, self.pace, self.loads
        assert journal is not None and pace is not None
        entries, items = self._journaled(todo)
        if entries and self.read is not None:
            entries[0]["source_read"] = list(self.read)
        if entries and self.whole is not None:
            entries[0]["source_whole"] = list(self.whole)  # RESUME checks the file by it
        try:
            journal.append(entries)
        except JournalError as err:
            self.failure = str(err)
            self.figures.not_sent += len(todo)
            return
        journal.rows = self.number
        chunks = _chunks(items, len(self.job.columns.partition_key))

        def stopping() -> bool:
            if stop():
                self.stopping = True
            return self.stopping or bool(self.failure)

        for n, chunk in enumerate(chunks):
            units = sum(item.units for item in chunk)
            if pace.acquire(units, stopping, tick) is None:
                rest = [item for later in chunks[n:] for item in later]
                self._not_sent([x for item in rest for x in item.numbers], len(rest))
                return
            batch = _Batch([item.prepared for item in chunk], [x for item in chunk for x in item.numbers],
                           units, loads.batch([item.bound for item in chunk]),
                           new=sum(1 for item in chunk if item.new))
            with self._lock:
                self.in_flight += 1
            self._fire(batch)

    def _journaled(self, todo: list[tuple[PreparedRow, OldRow | None, int]]
                   ) -> tuple[list[dict[str, Any]], list[_Item]]:
        """The journal's lines of the window's rows (a line a cell), and each row's request."""
        from cqlsh_ext.scanning.capacity import wcu
        from cqlsh_ext.writing.journal import row_entry

        loads, columns = self.loads, self.job.columns
        keys = [c.name for c in columns.keys]
        names = [c.name for c in columns.written]
        entries: list[dict[str, Any]] = []
        items: list[_Item] = []
        new_expires = None if self.cell_ttl is None else round(time.time() + self.cell_ttl, 6)
        for prepared, old, at in todo:
            key_map = dict(zip(keys, prepared.serialized, strict=True))
            numbers = []
            befores = self._sizes[id(prepared)][2] or [None] * len(names)
            for j, name in enumerate(names):
                ttl = None if old is None else old.ttls[j]
                entry = row_entry(self.number, key_map, befores[j], prepared.cells[j], ttl,
                                  None if ttl is None or old is None else old.sent + ttl,
                                  None if old is None else old.writetimes[j], at)
                entry["column"] = name
                entry["new_expires"] = new_expires
                entry["source_row"] = prepared.row.position
                entries.append(entry)
                numbers.append(self.number)
                self.number += 1
            size = sum(len(s) for s in prepared.serialized) + sum(len(b) for b in prepared.cells if b)
            bound = loads.statement(prepared.key, prepared.values, at)
            items.append(_Item(prepared, numbers, wcu(size), bound, old is None))
        return entries, items

    def _not_sent(self, numbers: list[int], rows: int) -> None:
        """Rows journaled and never sent (a stop before their turn): journaled so (UNDO leaves them,
        RESUME loads them), counted."""
        from cqlsh_ext.writing.journal import JournalError

        self.figures.not_sent += rows
        assert self.journal is not None
        try:
            self.journal.append([{"row": n, "applied": False, "again": True} for n in numbers])
        except JournalError as err:
            self.failure = self.failure or str(err)

    def _fire(self, batch: _Batch) -> None:
        future = self.loads.send(batch.request)
        future.add_callbacks(lambda _rows: self._done(batch, None), lambda err: self._done(batch, err))

    def _done(self, batch: _Batch, err: BaseException | None) -> None:
        """A request's answer, on the driver's thread: a retry scheduled, or the outcome queued for
        the journal (the pace's place released)."""
        from cqlsh_ext.common import retry
        from cqlsh_ext.writing.cell_writer import retry_reason

        if err is not None and retry_reason(err) is not None and not retry.exhausted(batch.attempts) \
                and not self.hard_stop:
            batch.attempts += 1
            batch.retried = True
            # The same rows at the same timestamps: sending them again is harmless.
            timer = threading.Timer(retry.delay(batch.attempts), self._fire, (batch,))
            timer.daemon = True
            timer.start()
            return
        assert self.pace is not None
        self.pace.release(batch.retried)
        self._outcomes.put((batch, err))

    def _drain(self, wait: float = 0.0) -> None:
        """The outcomes come since, journaled in one append."""
        from cqlsh_ext.writing.journal import JournalError

        done: list[tuple[_Batch, BaseException | None]] = []
        try:
            done.append(self._outcomes.get(timeout=wait) if wait else self._outcomes.get_nowait())
            while True:
                done.append(self._outcomes.get_nowait())
        except queue.Empty:
            pass
        if not done:
            return
        entries: list[dict[str, Any]] = []
        for batch, err in done:
            with self._lock:
                self.in_flight -= 1
            if err is not None:
                from cqlsh_ext.scanning.scan import error_text

                first = batch.rows[0]
                text = key_text(dict(zip((c.name for c in self.job.columns.keys), first.key, strict=True)))
                self.failure = self.failure or (f"{text} (its write failed, whether it applied is unknown: "
                                                f"{error_text(err)})")
                self.figures.failed = True
                self.figures.unknown += len(batch.rows)
                continue
            self.figures.written += len(batch.rows)
            self.figures.written_new += batch.new
            self.figures.written_overwritten += len(batch.rows) - batch.new
            self._count(batch.rows)
            entries.extend({"row": n, "applied": True} for n in batch.numbers)
        if entries and self.journal is not None:
            try:
                self.journal.append(entries)
            except JournalError as err:
                self.failure = self.failure or str(err)
                self.figures.failed = True

    def _finish(self, tick: Callable[[], None] | None) -> None:
        """Every request in flight answered (a second Ctrl-C leaves them)."""
        while True:
            with self._lock:
                if self.in_flight <= 0:
                    break
            self._drain(0.1)
            if tick is not None:
                tick()
        self._drain()


#: The values a key column of these types takes, said when one is out of range.
_RANGES = {"int": " (-2147483648 to 2147483647)", "bigint": " (-9223372036854775808 to 9223372036854775807)",
           "smallint": " (-32768 to 32767)", "tinyint": " (-128 to 127)"}


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _unencodable(err: UnicodeEncodeError) -> str:
    """Why a text cannot be written, in a user's words: the lone surrogate UTF-8 cannot hold."""
    char = err.object[err.start:err.start + 1]
    return (f"its text holds a lone surrogate ({char.encode('unicode_escape').decode('ascii')} at character "
            f"{err.start + 1:,}), which UTF-8 cannot hold: not written")


def _brief(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------------------- sources

def source_rows(job: LoadJob, data: Any = None,
                skip: int = 0) -> tuple[Iterator[list[SourceRow]], int | None]:
    """The request's rows a window at a time, and how many when known (a Parquet file's, data's)."""
    from cqlsh_ext.load import source
    from cqlsh_ext.load.files import line_budget

    request, blobs = job.request, job.columns.blobs
    columns = request.columns
    if request.format == "data":
        if data is None:
            raise QueryError("the data of a db.write is not kept: a load of data in memory is resumed by "
                             "calling db.write again with the same data and resume=its journal")
        _names, rows, total = source.data_rows(data, columns, blobs, skip)
        return rows, total
    reading = source.FileReading(line_budget(job.columns.cap), job.columns.cap, request.header,
                                 known_columns(job.meta))
    return source.file_rows(request.format, str(request.source), columns, blobs, reading, skip)


#: What the preview says of how rows are written.
PROMISE = ("Each row is written as UPDATE writes cells, at the moment its read was sent (or its cells' "
           "latest write time + 1): a write anyone makes after the read wins.")


def chain_words(chain: str) -> str:
    return "bytes as the source gives them" if chain == AS_GIVEN else chain
