"""Doing COMPRESSION REWRITE (docs/rewrite.md): the preview, the paced run, RESUME.

The rows are read by token ranges of the ring (the WHERE's partitions as one range when it names
them), with the key columns, the blob, its write time and TTL (edit.reading's plan, the WHERE's
payload conditions evaluated here); each value is re-encoded in the target chain (recode: the
payload kept byte for byte, verified), and written by the edits' one mechanism (edit.write: at the
cell's write time + 1 with its TTL kept, then read again; or on the condition that the row holds
the bytes read, where timestamps cannot be used). Writes run on threads, as many at once and as
many units a second as the pace allows (pace.Pace). Each row is journaled (fsync'd) before its
write; a token range whose rows are all written is journaled as finished, and RESUME reads the
others again (a row rewritten before a kill is then already in the target chain: never written
twice). UNDO (edit.run.run_undo) writes the journal's old values back.

`Job` is what rewriting some ranges needs, plain data: Spark's executors get it pickled
(spark/rewrite_job.py) and run the same `RangeRewriter` on a session of their own.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, plural, screen_width
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.edit.document import EditRefused
from cqlsh_ext.edit.journal import BlobTarget, JournalError
from cqlsh_ext.rewrite.report import RowTally, WriteTally

if TYPE_CHECKING:
    from cqlsh_ext.edit.journal import Journal
    from cqlsh_ext.edit.reading import CellRead
    from cqlsh_ext.edit.write import Mechanism
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.rewrite.pace import Pace
    from cqlsh_ext.rewrite.parse import ResumeAsked, RewriteAsked
    from cqlsh_ext.rewrite.recode import Recoded, RewriteTarget
    from cqlsh_ext.upstream.protocol import Parsed, Shell

LABEL = "COMPRESSION REWRITE"
#: A preview of a table larger than this (the server's estimate) reads a sample unless ALL; the
#: variable sets another size (tests: the estimate of a table written a moment ago is empty).
SAMPLE_FROM_BYTES = 16 << 20
SAMPLE_FROM_VARIABLE = "CQLSH_EXT_REWRITE_SAMPLE_FROM_BYTES"
#: Rows a preview's sample reads (random token-range slices, whole partitions).
SAMPLE_ROWS = 2_000
#: Token ranges a rewrite is cut into (journaled as finished one by one): about one per this many
#: partitions, within these bounds.
RANGE_PARTITIONS = 10_000
MIN_RANGES, MAX_RANGES = 16, 4096
#: Token ranges read at once (the writes, not the reads, set the pace).
READ_STREAMS = 2
#: Off a terminal, a progress line every this many seconds.
PROGRESS_SECONDS = 10.0


@dataclass(frozen=True)
class Job:
    """What rewriting token ranges of one blob needs (picklable: Spark's tasks carry it)."""

    statement: str
    keyspace: str
    table: str
    partition_key: tuple[str, ...]
    keys: tuple[str, ...]
    blob: BlobTarget
    static: bool
    mechanism: Mechanism
    target: RewriteTarget
    plan: Plan
    decoding: Any
    pace: int | None
    default_ttl: int
    #: SELECT <keys, blob, write time, TTL> FROM ks.t, before a WHERE.
    select: str
    #: Said after a range's token restriction (the WHERE's ordinary conditions, ALLOW FILTERING).
    also: str
    #: The token ranges (lo, hi] the ring is cut into; None: the WHERE names the partitions, read
    #: as one range (plan.server_statement).
    ranges: tuple[tuple[int, int], ...] | None
    consistency: Any
    serial: Any

    @property
    def name(self) -> str:
        return f"{self.keyspace}.{self.table}.{self.blob}"

    @property
    def range_count(self) -> int:
        return len(self.ranges) if self.ranges is not None else 1

    def head(self) -> dict[str, object]:
        """What the journal's first line keeps of it: RESUME reads the statement again and the same
        ranges."""
        return {"statement": self.statement, "spec": self.target.text, "where": self.plan.server_where,
                "pace": self.pace, "partition_key": list(self.partition_key),
                "ranges": [list(r) for r in self.ranges] if self.ranges is not None else None}


# ------------------------------------------------------------------------------------- the entry


def run(shell: Shell, parsed: Parsed) -> None:
    """COMPRESSION REWRITE ..., from cqlsh's parse (insight/command.py): read with our own reader."""
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.rewrite.parse import ResumeAsked, parse

    tokens = [tok for tok in parsed.matched if tok[0] != "endtoken"]
    text = parsed.extract_orig(tokens)
    try:
        asked = parse(Lexed(text), lambda ks, t: _table(shell, ks, t), lambda meta: _schema(shell, meta),
                      shell.current_keyspace)
        if isinstance(asked, ResumeAsked):
            resume(shell, asked)
        else:
            rewrite(shell, asked)
    except (QueryError, EditRefused) as err:
        shell.printerr(message(f"{LABEL}: {err}; nothing was written", screen_width(sys.stderr)))


def _table(shell: Shell, keyspace: str | None, table: str) -> Any:
    from cqlsh_ext.reading.resolve import find_table

    # refresh: a table made by another client a moment ago
    found = find_table(shell.conn, shell.current_keyspace, keyspace, table, refresh=True)
    return found.meta if found is not None else None


def _schema(shell: Shell, meta: Any) -> Any:
    """The table as the payload-query parser reads it; a UDT made a moment ago by another client is
    asked of the server first."""
    from cqlsh_ext.cql.types import parse as parse_type
    from cqlsh_ext.reading.resolve import table_target

    def schema_of() -> Any:
        found = table_target(shell.conn.metadata, meta.keyspace_name, meta.name)
        assert found is not None, "found a moment ago"
        return found.schema

    schema = schema_of()
    types = [parse_type(str(text), schema.udts) for text in schema.columns.values()]
    unknown = {t.name for t in types if t.kind == "other"}
    for name in unknown:
        try:
            shell.conn.refresh_user_type_metadata(meta.keyspace_name, name)
        except Exception:
            pass  # a custom type, not a UDT: nothing to learn
    return schema_of() if unknown else schema


def job_for(shell: Shell, asked: RewriteAsked, ranges: Sequence[Sequence[int]] | None | bool = True) -> Job:
    """The job the statement asks for; `ranges`: True to cut the ring now, else the journal's.
    QueryError for what is refused before anything is read."""
    from cqlsh_ext.edit import reading, write
    from cqlsh_ext.edit.run import edit_decoding, key_columns
    from cqlsh_ext.query.grammar import Where, selection
    from cqlsh_ext.rewrite.recode import target_of

    meta = _table(shell, asked.keyspace, asked.table)
    if meta is None:
        raise QueryError(f"unknown table {asked.keyspace}.{asked.table}")
    blob = asked.blob
    if blob.container is not None and str(meta.columns[blob.column].cql_type).startswith("frozen<"):
        raise QueryError(f"{blob.column} is frozen: it is written whole, and {blob} is not rewritten here")
    decoding = edit_decoding(shell)
    target = target_of(asked.spec, decoding.cap)
    keys = key_columns(meta, blob.column)
    pk = [c.name for c in meta.partition_key]
    where = asked.where or Where()
    names_partitions = bool(where.ordinary or where.predicates) and set(pk) <= where.restricted
    if where.predicates and not names_partitions and not asked.allow_filtering:
        raise QueryError("the WHERE's payload conditions are evaluated here on every row read: add ALLOW "
                         "FILTERING")
    mechanism = write.choose(shell, asked.keyspace, meta.name, blob, keys)
    plan = reading.plan_for(asked.keyspace, meta, _schema(shell, meta), blob, keys, where,
                            asked.allow_filtering or names_partitions or not where.ordinary, False, mechanism)
    extra = reading.extra_columns(blob, mechanism)
    select = selection(asked.keyspace, meta.name, [*keys, blob.column], extra)
    ordinary = " AND ".join(where.ordinary)
    also = (f"AND {ordinary} ALLOW FILTERING" if ordinary else "")
    cut: tuple[tuple[int, int], ...] | None
    if names_partitions:
        cut = None
    elif ranges is True:
        cut = _ring(shell, asked.keyspace, meta.name)
    elif ranges is None or ranges is False:
        cut = None
    else:
        cut = tuple((int(lo), int(hi)) for lo, hi in ranges)
    default_ttl = int((getattr(meta, "options", None) or {}).get("default_time_to_live", 0) or 0)
    static = len(keys) < len(meta.primary_key)
    return Job(asked.text, asked.keyspace, meta.name, tuple(pk), tuple(keys), blob, static, mechanism, target,
               plan, decoding, asked.pace, default_ttl, select, also, cut, shell.consistency_level,
               shell.serial_consistency_level)


def _ring(shell: Shell, keyspace: str, table: str) -> tuple[tuple[int, int], ...]:
    """The ring cut into token ranges, about RANGE_PARTITIONS partitions each (the server's estimate)."""
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.scan import table_size

    try:
        ring = ring_for(server_partitioner(shell.session))
    except RingError as err:
        raise QueryError(f"{err}: a rewrite journals finished token ranges to resume from") from None
    size = table_size(shell.session, keyspace, table, ring.span)
    parts = MIN_RANGES if size is None else size.partitions // RANGE_PARTITIONS
    return tuple(ring.split(max(MIN_RANGES, min(MAX_RANGES, parts))))


# ------------------------------------------------------------------------------------- one value


class Examiner:
    """Each row read: counted (RowTally) and, when its value is to be rewritten, re-encoded."""

    def __init__(self, job: Job, key_size: Callable[[Sequence[Any]], int]) -> None:
        from cqlsh_ext.payload.places import Engines, ValuePlace

        self.job = job
        self.key_size = key_size
        blob = job.blob
        steps = ("value",) if blob.container == "map" else (str(blob.access),) if blob.container else ()
        self.engine = Engines(job.decoding)(ValuePlace(job.keyspace, job.table, job.blob.column, steps))
        self.counts = RowTally()
        self._seen: set[tuple[Any, ...]] = set()

    def examine(self, cell: CellRead) -> tuple[Recoded, int, int] | None:
        """The new value and the row's size before and after (key and value), or None (counted)."""
        from cqlsh_ext.rewrite.recode import ALREADY, recode
        from cqlsh_ext.scanning.capacity import ROW_QUOTA, rcu, wcu

        job, counts = self.job, self.counts
        if job.static:  # a static column: its partition's rows share it
            partition = tuple(cell.key.values())
            if partition in self._seen:
                return None
            self._seen.add(partition)
        counts.found += 1
        if cell.stored is None:
            counts.refuse("null: nothing to rewrite")
            return None
        raw = bytes(cell.stored)
        view = cell.view if cell.view is not None and job.blob.container is None else self.engine.view(raw)
        key = self.key_size([cell.key[k] for k in job.keys])
        before = key + len(raw)
        counts.before += len(raw)
        counts.wcu_before += wcu(before)
        counts.rcu += rcu(before)
        counts.over_before += before > ROW_QUOTA
        try:
            done = recode(raw, view, self.engine, job.target, job.decoding.cap)
        except Exception as err:  # the boundary of one value: a writer's or a reader's surprise
            done = f"not rewritten here ({type(err).__name__}: {str(err)[:80]})"
        if isinstance(done, str):
            if done == ALREADY:
                counts.already += 1
            else:
                counts.refuse(done)
            counts.after += len(raw)
            counts.wcu_after += wcu(before)
            counts.over_after += before > ROW_QUOTA
            return None
        after = key + len(done.value)
        counts.change += 1
        counts.after += len(done.value)
        counts.wcu_after += wcu(after)
        counts.rewrite_wcu += wcu(after)
        counts.over_after += after > ROW_QUOTA
        counts.unreadable_after += not done.readable
        return done, before, after


# ------------------------------------------------------------------------------------- the preview


class _Preview:
    """A preview's Aggregate (scanning.aggregate; a sample's Totals, scanning.sample): the rows read
    examined, nothing written."""

    def __init__(self, job: Job, key_size: Callable[[Sequence[Any]], int]) -> None:
        from cqlsh_ext.edit.reading import PageCells

        self.job, self.key_size = job, key_size
        self.cells = PageCells(job.plan, job.keyspace, job.keys, job.blob, job.mechanism, job.decoding)
        self.examiner = Examiner(job, key_size)
        self.names: list[str] = []
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""

    @property
    def counts(self) -> RowTally:
        return self.examiner.counts

    @property
    def rows(self) -> int:
        return self.counts.rows

    def fresh(self) -> _Preview:
        return _Preview(self.job, self.key_size)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self.names = list(names)

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.counts.rows += len(rows)
        for cell in self.cells.page(self.names, rows):
            self.examiner.examine(cell)

    def merge(self, other: _Preview) -> None:
        self.counts.merge(other.counts)

    def snapshot(self) -> dict[tuple[str, ...], int]:
        return self.counts.snapshot()

    def figures(self) -> list[Any]:
        return []


def rewrite(shell: Shell, asked: RewriteAsked) -> None:
    job = job_for(shell, asked)
    if not asked.confirm:
        preview(shell, job, asked.every_row)
        return
    from cqlsh_ext.edit.run import open_journal

    journal = open_journal(shell, job.keyspace, job.table, job.blob, "rewrite", job.mechanism, job.head())
    execute(shell, job, journal, list(range(job.range_count)))


def _key_size(shell: Shell, job: Job) -> Callable[[Sequence[Any]], int]:
    from cqlsh_ext.edit.write import CellWriter

    writer = CellWriter(shell.session, job.keyspace, job.table, job.blob, job.keys, job.mechanism,
                        job.consistency, job.serial, job.default_ttl)
    return lambda key: sum(len(b) for b in writer.serialized(key))


def preview(shell: Shell, job: Job, every_row: bool, todo: Sequence[int] | None = None,
            heading: str = "") -> None:
    """Read (a sample of a big table unless ALL) and say what the rewrite would do; nothing written."""
    from cqlsh_ext.scanning.capacity import Pricing
    from cqlsh_ext.scanning.cost import pricing
    from cqlsh_ext.scanning.scan import Scanner, ScanSpec, error_text, progress_for, table_size

    key_size = _key_size(shell, job)
    aggregate = _Preview(job, key_size)
    label = f"{LABEL} {job.name}"
    ranges = job.ranges
    sampled = False
    reading = ""
    if ranges is not None and not every_row and todo is None:
        import os

        from cqlsh_ext.scanning.ring import ring_for, server_partitioner

        ring = ring_for(server_partitioner(shell.session))
        size = table_size(shell.session, job.keyspace, job.table, ring.span)
        forced = os.environ.get(SAMPLE_FROM_VARIABLE, "")
        threshold = int(forced) if forced.isdigit() else SAMPLE_FROM_BYTES
        if (size is not None and size.bytes > threshold) or (forced.isdigit() and threshold == 0):
            sampled = True
            reading = _sample(shell, job, aggregate, ring, label)
    if not sampled:
        if ranges is None:
            spec = ScanSpec(job.plan.server_statement)
            reading = "the rows the WHERE names"
        else:
            chosen = [ranges[i] for i in (todo if todo is not None else range(len(ranges)))]
            spec = ScanSpec(job.select, partition_key=list(job.partition_key), ranges=chosen,
                            streams=4, also=job.also)
            reading = "every row" if todo is None else \
                f"every row of the {plural(len(chosen), 'token range')} left"
        scanner = Scanner(shell.session, spec, consistency=shell.consistency_level,
                          timeout=shell.session.default_timeout, progress=progress_for(label, True))
        started = False
        for names, types, rows in scanner.pages():
            if not started:
                aggregate.set_columns(names, types)
                started = True
            aggregate.add_rows(rows)
        if scanner.error is not None:
            shell.printerr(f"{LABEL}: the reading failed ({error_text(scanner.error)}); nothing was written")
            return
        if scanner.interrupted:
            reading += ", stopped by Ctrl-C: the rows read so far"
    counts = aggregate.counts
    factor = getattr(aggregate, "factor", 1.0)
    shown = counts.scaled(factor) if sampled else counts
    if sampled:
        reading += f"; figures below are for the whole table: about {shown.rows:,} rows"
    from cqlsh_ext.reading.context import shell_context

    priced: Pricing = pricing(shell_context(shell))
    from cqlsh_ext.rewrite.report import preview_lines

    hint = (f"its display then needs DECODE {job.keyspace}.{job.table}.{job.blob} '{job.target.chain}' "
            "(the chain has no signature)")
    out = sys.stdout
    say = _sayer(out)
    say(heading or f"{LABEL} {job.name} AS '{job.target.text}' (preview: nothing is written)")
    for line in preview_lines(shown, job.target.shown, job.pace, reading, sampled, priced.keyspaces, hint):
        say(line)
    say(job.mechanism.promise())
    if shown.change:
        say(f"Nothing written: add CONFIRM at the end of the statement to rewrite "
            f"{'about ' if sampled else ''}{plural(shown.change, 'row')}.")


def _sample(shell: Shell, job: Job, aggregate: _Preview, ring: Any, label: str) -> str:
    """A sample of random token-range slices into `aggregate` (scanning.sample's policy), its
    counts to be scaled by `aggregate.factor`; what was read, in words."""
    from cqlsh_ext.scanning.sample import SAMPLE_STREAMS, SamplePlan, SliceSampler
    from cqlsh_ext.scanning.scan import Scanner, ScanSpec, progress_for

    sampler = SliceSampler(aggregate, ring, 1, SamplePlan(rows=SAMPLE_ROWS), None, "")
    sampler.count_partitions(shell.session, job.keyspace, job.table, list(job.partition_key))
    spec = ScanSpec(job.select, partition_key=list(job.partition_key), ranges=sampler.ranges(),
                    streams=SAMPLE_STREAMS, also=job.also)
    scanner = Scanner(shell.session, spec, consistency=shell.consistency_level,
                      timeout=shell.session.default_timeout, progress=progress_for(label, True))
    started = False
    for names, types, rows in scanner.pages():
        if not started:
            sampler.set_columns(names, types)
            started = True
        if not sampler.add_page(scanner.page_range, rows, scanner.range_finished):
            scanner.stop()
    joined = max(1, len(sampler.done))
    aggregate.factor = sampler.slices / joined  # type: ignore[attr-defined]
    return (f"a sample: {plural(joined, 'random token-range slice')} of {sampler.slices:,}; ALL reads every "
            "row")


def _sayer(out: Any) -> Callable[[str], None]:
    width = screen_width(out)

    def say(text: str) -> None:
        print(message(text, width), file=out)

    return say


# ------------------------------------------------------------------------------------- the run


@dataclass
class RangeState:
    """Per token range: rows sent and not yet done, whether its reading ended, whether a write of
    it failed (then it is not finished: RESUME reads it again)."""

    pending: dict[int, int] = field(default_factory=dict)
    read: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)


class RangeRewriter:
    """Rewrites the rows of some of a job's token ranges on one session (the shell's, or a Spark
    executor's), journaling each row and each finished range; the writes on threads, as the
    pace allows."""

    def __init__(self, session: Any, job: Job, journal: Journal, pace: Pace,
                 timeout: float | None = None) -> None:
        from cqlsh_ext.edit.reading import PageCells
        from cqlsh_ext.edit.write import CellWriter

        self.session, self.job, self.journal, self.pace = session, job, journal, pace
        self.timeout = timeout
        self.writer = CellWriter(session, job.keyspace, job.table, job.blob, job.keys, job.mechanism,
                                 job.consistency, job.serial, job.default_ttl)
        self.cells = PageCells(job.plan, job.keyspace, job.keys, job.blob, job.mechanism, job.decoding)
        self.examiner = Examiner(job, lambda key: sum(len(b) for b in self.writer.serialized(key)))
        self.tally = WriteTally()
        self.state = RangeState()
        self.lock = threading.Lock()
        #: Why it stopped before the end ('' while it runs on): a write that failed, the journal.
        self.failure = ""
        #: The rows sent whose outcome is not known: a second Ctrl-C left them in flight.
        self.in_flight_left = 0
        self.interrupted = False
        #: A Ctrl-C was seen: nothing more is sent, the writes in flight finish.
        self.stop_seen = False
        self.hard_stop = False
        self.read_error = ""

    @property
    def counts(self) -> RowTally:
        return self.examiner.counts

    def run(self, todo: Sequence[int], stop: Callable[[], bool],
            tick: Callable[[], None] | None = None) -> None:
        """The ranges `todo` (indexes into job.ranges; [0] when it has none) read and rewritten,
        until the end or `stop()` (Ctrl-C) or a failure."""
        from cqlsh_ext.scanning.scan import Scanner, ScanSpec, error_text

        job = self.job
        if not todo:
            return
        if job.ranges is None:
            spec = ScanSpec(job.plan.server_statement)
        else:
            spec = ScanSpec(job.select, partition_key=list(job.partition_key),
                            ranges=[job.ranges[i] for i in todo], streams=READ_STREAMS, also=job.also)
        scanner = Scanner(self.session, spec, consistency=job.consistency, timeout=self.timeout)
        pool = ThreadPoolExecutor(max_workers=self.pace.max_window, thread_name_prefix="rewrite")

        def stopping() -> bool:
            if stop() or scanner.interrupted:
                self.stop_seen = True
            return self.stop_seen or bool(self.failure)

        try:
            for names, _types, rows in scanner.pages():
                r = todo[scanner.page_range]
                self.counts.rows += len(rows)
                whole = True  # every row of the page handled: its range may be finished
                for cell in self.cells.page(names, rows):
                    found = self.examiner.examine(cell)
                    if found is None:
                        continue
                    if not self._send(pool, r, cell, *found, stopping, tick):
                        whole = False
                        break
                if whole and scanner.range_finished:
                    with self.lock:
                        self.state.read.add(r)
                        self._maybe_finished(r)
                if tick is not None:
                    tick()
                if stopping():
                    scanner.stop()
                    break
            if stopping() and tick is not None:  # a Ctrl-C the scanner took: said before the writes finish
                tick()
        except KeyboardInterrupt:
            self.hard_stop = True
            self.interrupted = True
        finally:
            if self.hard_stop:
                with self.lock:
                    self.in_flight_left = self.pace.in_flight
                pool.shutdown(wait=False, cancel_futures=True)
            else:
                pool.shutdown(wait=True)
        self.interrupted = self.interrupted or scanner.interrupted or stop()
        if scanner.error is not None:
            self.read_error = error_text(scanner.error)

    def _send(self, pool: ThreadPoolExecutor, r: int, cell: CellRead, recoded: Recoded, before: int,
              after: int, stopping: Callable[[], bool], tick: Callable[[], None] | None) -> bool:
        """The row journaled and its write started once the pace allows; False when it stops first."""
        from cqlsh_ext.scanning.capacity import wcu

        # A failed condition costs the stored row's units: the condition's writes are paced by the larger.
        units = wcu(after) if self.job.mechanism.timestamped else max(wcu(after), wcu(before))
        if not self.pace.acquire(units, stopping, tick):
            return False
        key = [cell.key[k] for k in self.job.keys]
        with self.lock:
            n = self.journal.rows
            self.journal.rows += 1
            self.state.pending[r] = self.state.pending.get(r, 0) + 1
        try:
            self.journal.before(n, dict(zip(self.job.keys, self.writer.serialized(key), strict=True)),
                                bytes(cell.stored), recoded.value, cell.ttl, cell.expires, cell.writetime,
                                self.writer.timestamp(cell.writetime), time.time())
        except JournalError as err:
            with self.lock:
                self.failure = str(err)
                self.state.failed.add(r)
            self.pace.release(False)
            return False
        pool.submit(self._write, n, r, key, cell, recoded, units)
        return True

    def _write(self, n: int, r: int, key: list[Any], cell: CellRead, recoded: Recoded, units: int) -> None:
        from cqlsh_ext.edit.write import EXPIRED, WriteFailed

        throttled = False
        try:
            written = self.writer.write(key, cell.stored, recoded.value, cell.writetime, cell.expires)
            throttled = bool(written.retried)
            self.journal.after(n, written.applied)
        except (WriteFailed, JournalError) as err:
            with self.lock:
                if not self.failure:
                    what = _key_text(dict(zip(self.job.keys, key, strict=True)))
                    self.failure = str(err) if isinstance(err, JournalError) else \
                        f"{what} (its write failed, whether it applied is unknown: {err})"
                self.state.failed.add(r)
                self.state.pending[r] -= 1
            self.pace.release(True)
            return
        except BaseException:
            self.pace.release(True)
            raise
        with self.lock:
            tally = self.tally
            tally.units += units * (1 + len(written.retried))
            tally.retried += len(written.retried)
            if written.applied:
                tally.written += 1
                tally.before += len(bytes(cell.stored))
                tally.after += len(recoded.value)
            elif written.outcome == EXPIRED:
                tally.expired += 1
            else:
                tally.changed += 1
            self.state.pending[r] -= 1
            self._maybe_finished(r)
        self.pace.release(throttled)

    def _maybe_finished(self, r: int) -> None:
        """Under the lock: a range read to the end whose rows are all done is journaled finished."""
        state = self.state
        if r in state.read and not state.pending.get(r) and r not in state.failed and r not in state.finished:
            try:
                self.journal.range_done(r)
            except JournalError as err:
                self.failure = self.failure or str(err)
                state.failed.add(r)
                return
            state.finished.add(r)


def _key_text(key: dict[str, Any]) -> str:
    return ", ".join(f"{name} = {value!r}" if isinstance(value, str) else f"{name} = {value}"
                     for name, value in key.items())


def execute(shell: Shell, job: Job, journal: Journal, todo: list[int], done_before: int = 0) -> None:
    """The paced run in the shell: progress, Ctrl-C (the first stops sending, the writes in flight
    finish; a second stops at once), the closing lines."""
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.rewrite.pace import Pace
    from cqlsh_ext.rewrite.report import closing_lines, progress_text

    pace = Pace(job.pace)
    rewriter = RangeRewriter(shell.session, job, journal, pace, shell.session.default_timeout)
    label = f"{LABEL} {job.name}"
    total = job.range_count
    progress = _progress(f"REWRITE {job.blob}")
    started = time.monotonic()
    last_line = [0.0]
    told = [False]

    def left() -> float | None:
        done = len(rewriter.state.finished)
        fraction = (done_before + done) / (done_before + len(todo)) if todo else 1.0
        elapsed = time.monotonic() - started
        return elapsed * (1 - fraction) / fraction if 0 < fraction < 1 and done else None

    def tick() -> None:
        now = time.monotonic()
        if rewriter.stop_seen and not rewriter.failure and not told[0]:
            told[0] = True
            if progress is not None:
                progress.close()
            print("Ctrl-C: stopping: the writes in flight finish (Ctrl-C again stops at once)",
                  file=sys.stderr)
        due = PROGRESS_SECONDS if progress is None else 0.125
        if now - last_line[0] < due:
            return
        last_line[0] = now
        figures = pace.figures
        span = figures.span if figures.span > 0 else 1.0
        text = progress_text(rewriter.tally, figures.rows / span if figures.rows > 1 else 0.0,
                             figures.units / span if figures.rows > 1 else 0.0, job.pace, left())
        if progress is not None:
            finished = done_before + len(rewriter.state.finished)
            progress.step(text, finished / (done_before + len(todo)) if todo else None)
        else:
            print(f"{label}: {rewriter.counts.rows:,} rows read, {text}", file=sys.stderr)

    with CtrlC() as ctrl_c:
        try:
            rewriter.run(todo, lambda: ctrl_c.pressed, tick)
        finally:
            if progress is not None:
                progress.close()
            journal.close()
    figures = pace.figures
    ranges = f" in {plural(total, 'token range')}" if job.ranges is not None else ""
    lines = closing_lines(label, rewriter.counts, rewriter.tally, job.target.shown, figures.span, job.pace,
                          figures.busiest_second, figures.slowed, ranges)
    finished = done_before + len(rewriter.state.finished)
    complete = finished == total
    stop = ""
    if rewriter.hard_stop:
        flying = plural(rewriter.in_flight_left, "write")
        stop = (f"stopped by a second Ctrl-C: {flying} in flight may or may not have applied (RESUME and "
                "UNDO look at each row)")
    elif rewriter.failure:
        stop = f"stopped: {rewriter.failure}"
    elif rewriter.read_error:
        stop = f"stopped: the reading failed ({rewriter.read_error})"
    elif rewriter.interrupted:
        stop = "stopped by Ctrl-C after the writes in flight"
    if not complete:
        lines.append(f"  {finished:,} of {total:,} token ranges finished"
                     + (f"; {stop}" if stop else ""))
        lines.append(f"Resume: {LABEL} RESUME '{journal.path}' CONFIRM")
    lines.append(f"Undo: UNDO '{journal.path}' CONFIRM")
    failed = rewriter.hard_stop or bool(rewriter.failure) or bool(rewriter.read_error)
    width = screen_width(sys.stderr if failed else sys.stdout)
    text = "\n".join(message(line, width) for line in lines)
    if failed:
        shell.printerr(text)
    else:
        print(text)
    if rewriter.hard_stop:
        raise KeyboardInterrupt


def _progress(label: str) -> Any:
    from cqlsh_ext.scanning.scan import progress_for

    progress = progress_for(label, True)
    if progress is not None:
        progress.ctrl_c = ("(Ctrl-C stops after the writes in flight)", "(Ctrl-C stops)")
    return progress


# ------------------------------------------------------------------------------------- RESUME


def resume(shell: Shell, asked: ResumeAsked) -> None:
    """Go on with a rewrite from its journal (a file, or a Spark run's directory of parts): its
    statement read again, its token ranges not finished read and rewritten, appended to the journal."""
    import os

    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.edit.journal import Journal
    from cqlsh_ext.edit.run import open_journal, read_journals
    from cqlsh_ext.rewrite.parse import RewriteAsked, parse

    parts = read_journals(asked.path)
    head = parts[0].head
    if head.get("kind") != "rewrite" or not isinstance(head.get("statement"), str):
        raise EditRefused(f"{asked.path} is not a {LABEL}'s journal (RESUME goes on with one; UNDO reads "
                          "any)")
    statement = str(head["statement"])
    shown = statement[: -len(" CONFIRM")] if statement.upper().endswith(" CONFIRM") else statement
    again = parse(Lexed(statement), lambda ks, t: _table(shell, ks, t), lambda meta: _schema(shell, meta),
                  str(head.get("keyspace")))
    assert isinstance(again, RewriteAsked)
    ranges = head.get("ranges")
    job = job_for(shell, again, ranges if isinstance(ranges, list) else None)
    done: set[int] = set()
    for part in parts:
        done |= part.ranges_done
    todo = [i for i in range(job.range_count) if i not in done]
    rows_before = sum(1 for part in parts for applied in part.outcomes.values() if applied)
    say = _sayer(sys.stdout)
    heading = (f"{LABEL} RESUME {asked.path}: {shown}\n  {len(done):,} of {job.range_count:,} token "
               f"ranges finished, {plural(rows_before, 'row')} rewritten so far")
    for part in parts:
        if part.torn is not None:
            heading += f"\n  {part.path}: {part.torn_text()}"
    if not todo:
        say(heading + "\n  nothing left to rewrite")
        return
    if not asked.confirm:
        preview(shell, job, True, todo, heading + " (preview: nothing is written)")
        return
    say(heading)
    if os.path.isdir(os.path.expanduser(asked.path)):
        journal = open_journal(shell, job.keyspace, job.table, job.blob, "rewrite", job.mechanism, job.head())
    else:
        journal = Journal.reopen(asked.path)
        print(f"Journal: {journal.path} (appended to)")
    execute(shell, replace(job), journal, todo, len(done))
